"""Scattered query call sites (check 7): hand-made client code with a confidence filter that
drifts between two modules, a sound one-builder app, and both sample apps (the misconfigured one
fails on the confidence-clause drift between the knowledge base and the agent path; the sound one
passes). The check reads only the code scan, so no index is opened (a code-only audit: no
target). It sends no search request, so there is no failed-request case to test here."""

from __future__ import annotations

import textwrap

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.checks.base import localize
from ragdiag.checks.figures import FigureDataError, figure
from ragdiag.engine.context import AuditContext
from ragdiag.inputs.checklist import load_checklist
from ragdiag.sample.system import sample_dir
from tests.evidence_helpers import column_renamed, english_left, retitled

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
    assert not ctx.has("target")
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, key):
    ev = finding.evidence_table(key)
    assert ev is not None, f"no evidence table {key!r}: {[e.key for e in finding.evidence]}"
    return ev.records()


def test_confidence_filter_drift_between_two_modules_fails(tmp_path):
    f = _check(_app(tmp_path, DRIFTING))
    assert f.status == "fail"
    assert ("'confidence_score ge 0.85' (quality) is set at 1 call site(s) (kb.py:5) and absent at 1 (agent.py:5)"
            in f.headline)
    assert "2 search call site(s) and 0 vector queries in 2 module(s)" in f.headline
    assert f.metrics["builder_modules"] == 2 and f.metrics["search_call_sites"] == 2
    assert f.metrics["filter_drift"] == 1 and f.metrics["security_clause_drift"] == 0
    drift = {(r["parameter"], r["value"]): r for r in _rows(f, "drift")}
    assert drift[("filter: confidence_score ge 0.85", "present")]["where"] == ("kb.py:5",)
    assert drift[("filter: confidence_score ge 0.85", "absent")]["where"] == ("agent.py:5",)
    builders = {r["module"]: r["call_sites"] for r in _rows(f, "builders")}
    assert builders == {"agent": 1, "kb": 1}
    assert any(r.startswith("route every search through one request builder") and "(agent, kb)" in r
               for r in f.recommendations)
    assert any("decide 'confidence_score ge 0.85' once per profile" in r and "magnitude boost" in r
               for r in f.recommendations)
    # the path without the clause is a code location (SARIF)
    assert [(loc.file, loc.line) for loc in f.locations] == [("agent.py", 5)]


def test_drift_is_a_warning_when_the_switch_is_off(tmp_path):
    spec = load_checklist()["call_sites"].with_thresholds(fail_on_filter_drift=False)
    f = _check(_app(tmp_path, DRIFTING), spec)
    assert f.status == "warn"
    assert "2 modules build search requests (more than 1)" in f.headline


def test_one_builder_module_passes_on_what_it_compared(tmp_path):
    f = _check(_app(tmp_path, ONE_BUILDER))
    assert f.status == "pass", f.headline
    assert f.metrics["builder_modules"] == 1 and f.metrics["search_call_sites"] == 2
    assert f.observed == {"call_sites_compared": 2}
    assert f.headline == ("2 search call site(s) and 0 vector queries in 1 module(s) (retrieval) compared; "
                          "no filter or security clause drifts between paths")


def test_skipped_without_client_code():
    f = _check(None)
    assert f.status == "skipped"
    assert "client_code" in f.recommendations[0]


def test_no_call_site_in_the_scanned_files_is_skipped_not_passed(tmp_path):
    app = _app(tmp_path, {"util.py": "def f(x):\n    return x\n",
                          "search_words.py": "def search(words):\n    return [w for w in words if w]\n"})
    f = _check(app)
    assert f.status == "skipped" and not f.observed
    assert f.skipped_reason == "no search call site was found in 2 scanned files"
    assert any("client_code" in r for r in f.recommendations)


def test_figure_is_drawn_from_the_evidence_keys(tmp_path):
    f = _check(_app(tmp_path, DRIFTING))
    fig = figure(f)
    assert fig is not None and type(fig).__name__ == "Figure"
    assert "2 module(s)" in fig.axes[0].get_title()
    assert figure(retitled(f, "builders")) is not None   # titles are not keys
    with pytest.raises(FigureDataError, match="call_sites"):
        figure(column_renamed(f, "builders", "call_sites"))
    de = figure(f, "de")
    assert "Modul" in de.axes[0].get_title()


def test_finding_renders_in_german(tmp_path):
    f = _check(_app(tmp_path, DRIFTING))
    de = localize(f, "de")
    assert de.headline.startswith("'confidence_score ge 0.85' (Qualität) ist an 1 Aufrufstelle(n) gesetzt (kb.py:5)")
    assert de.evidence_table("drift").title == "Drift zwischen Aufrufstellen"
    assert de.evidence_table("builders").columns[0] == "Modul"
    assert english_left(de, "call_sites") == []
    assert english_left(f, "call_sites")  # the control: the English finding is caught
    skipped = localize(_check(_app(tmp_path / "empty", {"util.py": "x = 1\n"})), "de")
    assert skipped.skipped_reason == "in 1 gescannten Dateien wurde keine Suchaufrufstelle gefunden"


def test_misconfigured_sample_app_fails_on_the_confidence_drift():
    f = _check(sample_dir() / "client_app")
    assert f.status == "fail"
    assert "'confidence_score ge 0.85' (quality) is set at 8 call site(s)" in f.headline
    assert "muster_assistant/knowledge_base.py:40" in f.headline
    assert "muster_assistant/agents/search_agent.py:44" in f.headline
    assert "the security filter is missing at 4 of 15" in f.headline
    assert "15 search call site(s) and 6 vector queries in 7 module(s)" in f.headline
    drift = {(r["parameter"], r["value"]): r["where"] for r in _rows(f, "drift")}
    present = drift[("filter: confidence_score ge 0.85", "present")]
    absent = drift[("filter: confidence_score ge 0.85", "absent")]
    assert {"muster_assistant/knowledge_base.py:40", "muster_assistant/knowledge_base.py:56",
            "muster_assistant/knowledge_base.py:61"} <= set(present)
    assert {"muster_assistant/agents/search_agent.py:44", "muster_assistant/agents/search_agent.py:55",
            "muster_assistant/agents/search_agent.py:67"} <= set(absent)
    assert drift[("exhaustive", "true")] == ("muster_assistant/legacy/old_templates.py:15",
                                             "muster_assistant/legacy/old_templates.py:30")
    assert set(drift[("k", "20")]) >= {"muster_assistant/knowledge_base.py:43"}
    kinds = {r["kind"]: r["sites"] for r in _rows(f, "sites_per_kind")}
    assert kinds == {"azure_search": 12, "rest_search": 3, "azure_vector_query": 6}
    rec = next(r for r in f.recommendations if r.startswith("route every search through one request builder"))
    assert "muster_assistant.knowledge_base" in rec and "muster_assistant.agents.search_agent" in rec
    assert any("exhaustive = true at muster_assistant/legacy/old_templates.py:15" in r for r in f.recommendations)
    assert any(loc.file == "muster_assistant/agents/search_agent.py" and loc.line == 67 and loc.level == "error"
               for loc in f.locations)


def test_sound_sample_app_passes():
    f = _check(sample_dir() / "client_app_sound")
    assert f.status == "pass", f.headline
    assert f.metrics["builder_modules"] == 1
    assert f.observed == {"call_sites_compared": 3}
    assert "muster_assistant.retrieval.profiles" in f.headline
