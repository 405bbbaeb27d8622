"""Scattered query call sites (check 7): hand-made client code with a confidence filter that
drifts between two modules, a sound one-builder app, and both sample apps (the misconfigured one
fails on the confidence-clause drift between the knowledge base and the agent path; the sound one
passes). The check reads only the code scan, so no index is opened."""

from __future__ import annotations

import textwrap

from ragdiag.checks import resolve, run_check
from ragdiag.engine.context import AuditContext
from ragdiag.inputs.checklist import load_checklist
from ragdiag.sample.system import sample_dir

DRIFTING = {
    "kb.py": """
        from azure.search.documents import SearchClient

        def search_kb(client: SearchClient, q, acl_filter):
            return client.search(q, filter=f"{acl_filter} and confidence_score ge 0.85", top=5,
                                 query_type="semantic")
        """,
    "agent.py": """
        from azure.search.documents import SearchClient

        def agent_search(client: SearchClient, q, acl_filter):
            return client.search(q, filter=f"{acl_filter}", top=5, query_type="semantic")
        """,
}
ONE_BUILDER = {
    "retrieval.py": """
        from azure.search.documents import SearchClient

        def build(q, acl_filter):
            return {"search_text": q, "filter": f"{acl_filter} and level eq 'evidence'", "top": 10}

        def search(client: SearchClient, q, acl_filter):
            return client.search(**build(q, acl_filter))

        def search_again(client: SearchClient, q, acl_filter):
            return client.search(q, filter=f"{acl_filter} and level eq 'evidence'", top=10)
        """,
}


def _app(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _check(client_code, spec=None):
    spec = spec or load_checklist()["call_sites"]
    ctx = AuditContext(config=None, target=None, runner=None, client_code=client_code)
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, title_start):
    for e in finding.evidence:
        if e.title.startswith(title_start):
            return [dict(zip(e.columns, r, strict=True)) for r in e.rows]
    raise AssertionError(f"no evidence table starting with {title_start!r}: {[e.title for e in finding.evidence]}")


def test_confidence_filter_drift_between_two_modules_fails(tmp_path):
    f = _check(_app(tmp_path, DRIFTING))
    assert f.status == "fail"
    assert ("'confidence_score ge 0.85' (quality) is set at 1 call site(s) (kb.py:5) and absent at 1 (agent.py:5)"
            in f.headline)
    assert "2 search call site(s) and 0 vector queries in 2 module(s)" in f.headline
    assert f.metrics["builder_modules"] == 2 and f.metrics["search_call_sites"] == 2
    assert f.metrics["filter_drift"] == 1 and f.metrics["security_clause_drift"] == 0
    drift = {(r["parameter"], r["value"]): r for r in _rows(f, "Drift between call sites")}
    assert drift[("filter: confidence_score ge 0.85", "present")]["where"] == ("kb.py:5",)
    assert drift[("filter: confidence_score ge 0.85", "absent")]["where"] == ("agent.py:5",)
    builders = {r["module"]: r["call sites"] for r in _rows(f, "Request builders per module")}
    assert builders == {"agent": 1, "kb": 1}
    assert any(r.startswith("route every search through one request builder") and "(agent, kb)" in r
               for r in f.recommendations)
    assert any("decide 'confidence_score ge 0.85' once per profile" in r and "magnitude boost" in r
               for r in f.recommendations)
    from ragdiag.plots import figure

    assert figure(f) is not None


def test_drift_is_a_warning_when_the_switch_is_off(tmp_path):
    spec = load_checklist()["call_sites"].with_thresholds(fail_on_filter_drift=False)
    f = _check(_app(tmp_path, DRIFTING), spec)
    assert f.status == "warn"
    assert "2 modules build search requests (more than 1)" in f.headline


def test_one_builder_module_passes(tmp_path):
    f = _check(_app(tmp_path, ONE_BUILDER))
    assert f.status == "pass", f.headline
    assert f.metrics["builder_modules"] == 1 and f.metrics["search_call_sites"] == 2
    assert "(retrieval); no filter or security clause drifts" in f.headline


def test_skipped_without_client_code():
    f = _check(None)
    assert f.status == "skipped"
    assert "client_code" in f.recommendations[0]


def test_skipped_when_no_call_site_is_found(tmp_path):
    f = _check(_app(tmp_path, {"util.py": "def f(x):\n    return x\n"}))
    assert f.status == "skipped" and "no search call site" in f.headline


def test_misconfigured_sample_app_fails_on_the_confidence_drift():
    f = _check(sample_dir() / "client_app")
    assert f.status == "fail"
    assert "'confidence_score ge 0.85' (quality) is set at 8 call site(s)" in f.headline
    assert "muster_assistant/knowledge_base.py:40" in f.headline
    assert "muster_assistant/agents/search_agent.py:44" in f.headline
    assert "the security filter is missing at 4 of 15" in f.headline
    assert "15 search call site(s) and 6 vector queries in 7 module(s)" in f.headline
    drift = {(r["parameter"], r["value"]): r["where"] for r in _rows(f, "Drift between call sites")}
    present = drift[("filter: confidence_score ge 0.85", "present")]
    absent = drift[("filter: confidence_score ge 0.85", "absent")]
    assert {"muster_assistant/knowledge_base.py:40", "muster_assistant/knowledge_base.py:56",
            "muster_assistant/knowledge_base.py:61"} <= set(present)
    assert {"muster_assistant/agents/search_agent.py:44", "muster_assistant/agents/search_agent.py:55",
            "muster_assistant/agents/search_agent.py:67"} <= set(absent)
    assert drift[("exhaustive", "true")] == ("muster_assistant/legacy/old_templates.py:15",
                                             "muster_assistant/legacy/old_templates.py:30")
    assert set(drift[("k", "20")]) >= {"muster_assistant/knowledge_base.py:43"}
    kinds = {r["kind"]: r["sites"] for r in _rows(f, "Search call sites per kind")}
    assert kinds == {"azure_search": 12, "rest_search": 3, "azure_vector_query": 6}
    rec = next(r for r in f.recommendations if r.startswith("route every search through one request builder"))
    assert "muster_assistant.knowledge_base" in rec and "muster_assistant.agents.search_agent" in rec
    assert any("exhaustive = true at muster_assistant/legacy/old_templates.py:15" in r for r in f.recommendations)


def test_sound_sample_app_passes():
    f = _check(sample_dir() / "client_app_sound")
    assert f.status == "pass", f.headline
    assert f.metrics["builder_modules"] == 1
    assert "muster_assistant.retrieval.profiles" in f.headline
