"""ACL trimming (check 9): leak probes with exact counts on a hand-made five-document world,
injection probes through safe and naive filter builders, unescaped filters in client code, and
the two sample setups (misconfigured: fails on the f-string filter at api.py:23; tuned: passes).

The world: d1, d2 belong to group `all`, d3, d4 to `hr`, d5 to `finance`. Identity `u` holds
`all`, `h` holds `all` and `hr`. Every profile here is vector-only with k = 50 (exhaustive) and
top = 50, so each request returns every document its filter admits.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ragdiag import odata
from ragdiag.checks import resolve, run_check
from ragdiag.checks.acl_trimming import forbidden_records, hostile_values, probe_filter
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

GROUPS = {"d1": ["all"], "d2": ["all"], "d3": ["hr"], "d4": ["hr"], "d5": ["finance"]}
REFUSED_Q = "What does Marie earn?"

HEAD = """
[policy]
name = "{name}"
security_field = "group_ids"
[routes]
default = "p"
[profiles.p]
query_type = "simple"
keyword_text = "none"
top = 50
"""
VQ = """
  [[profiles.p.vector_queries]]
  fields = ["vec"]
  k = 50
  exhaustive = true
"""
SOUND = HEAD.format(name="sound") + VQ
NO_TRIMMING = HEAD.format(name="no-trimming") + "security_trimming = false\n" + VQ
OVERRIDE_DROPS = HEAD.format(name="override-drops") + VQ + """  filter_override = "category eq 'c'"
  override_security = false
"""
OVERRIDE_KEEPS = HEAD.format(name="override-keeps") + VQ + """  filter_override = "category eq 'c'"
"""


def _target(tmp_path):
    recs, vecs = [], []
    for i, (key, groups) in enumerate(GROUPS.items()):
        recs.append({"key": key, "title": f"title {key}", "content": f"text of {key}", "category": "c",
                     "confidence_score": 0.9, "page": 1, "last_updated": "2026-01-01T00:00:00Z",
                     "is_table": False, "entity_keys": [], "group_ids": groups})
        vecs.append([1.0, 0.1 * i, 0.0])
    return LocalTarget.build(recs, LocalIndexSpec("tiny-acl", tiny_schema("tiny-acl"), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=FakeEmbedder(), reranker=KeyReranker({}),
                             vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)


def _ctx(tmp_path, policy_text, *, identities=True, goldset=True, client_code=None):
    target = _target(tmp_path)
    gs = Goldset(cases=(GoldCase(id="r1", question=REFUSED_Q, intent="fact", as_user="u", expect_refused=True),),
                 path=None) if goldset else None
    idents = {"u": Identity("u", ("all",)), "h": Identity("h", ("all", "hr"))} if identities else {}
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(policy_text),
                        goldset=gs, identities=idents, client_code=client_code)


def _check(ctx, spec=None):
    spec = spec or load_checklist()["acl_trimming"]
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, title_start):
    for e in finding.evidence:
        if e.title.startswith(title_start):
            return [dict(zip(e.columns, r, strict=True)) for r in e.rows]
    raise AssertionError(f"no evidence table starting with {title_start!r}: {[e.title for e in finding.evidence]}")


# ---- leak probes, by hand ----------------------------------------------------------------------------


@pytest.mark.parametrize("policy_text, why", [(NO_TRIMMING, "security_trimming = false"),
                                              (OVERRIDE_DROPS, "override_security = false")])
def test_leaking_policy_is_caught_with_the_exact_count(tmp_path, policy_text, why):
    f = _check(_ctx(tmp_path, policy_text))
    # u lacks hr (d3, d4) and finance (d5): 3 document questions + 1 refused goldset question = 4
    # requests, each returning all 5 documents, 3 of them outside u's rights -> 12 leaked results;
    # h lacks finance (d5): 1 request, 5 results, d5 outside -> 1. Total 13, on 3 distinct documents.
    assert f.status == "fail"
    assert f.metrics["leaked_results"] == 13
    assert f.metrics["leaked_documents"] == 3
    assert f.metrics["leak_probe_requests"] == 5
    assert "leak probes returned 13 result(s) outside the identity's rights (13 via profile 'p'" in f.headline
    assert why in f.headline
    summary = {r["identity"]: r for r in _rows(f, "Leak probes per identity")}
    assert (summary["u"]["probe questions"], summary["u"]["results"], summary["u"]["results outside rights"]) \
        == (4, 20, 12)
    assert (summary["h"]["probe questions"], summary["h"]["results"], summary["h"]["results outside rights"]) \
        == (1, 5, 1)
    leaked = _rows(f, "Leaked results")
    assert {(r["identity"], r["leaked key"]) for r in leaked} == {("u", "d3"), ("u", "d4"), ("u", "d5"), ("h", "d5")}
    assert all(r["its groups"] == tuple(GROUPS[r["leaked key"]]) for r in leaked)
    assert any(r["probe"] == "goldset r1 (refused)" and r["question"] == REFUSED_Q for r in leaked)
    assert any("security_trimming = true" in r or "override_security = true" in r for r in f.recommendations)


@pytest.mark.parametrize("policy_text", [SOUND, OVERRIDE_KEEPS])
def test_sound_policy_yields_zero_leaks(tmp_path, policy_text):
    f = _check(_ctx(tmp_path, policy_text))
    assert f.status == "pass", f.headline
    assert f.metrics["leaked_results"] == 0
    summary = {r["identity"]: r for r in _rows(f, "Leak probes per identity")}
    # u sees d1, d2 only: 4 requests x 2 results; h sees d1-d4: 1 request x 4 results
    assert (summary["u"]["requests"], summary["u"]["results"]) == (4, 8)
    assert (summary["h"]["requests"], summary["h"]["results"]) == (1, 4)
    assert "0 results outside the identity's rights" in f.headline


def test_injection_probes_stay_restrictive_through_the_profile_builder(tmp_path):
    f = _check(_ctx(tmp_path, SOUND))
    rows = _rows(f, "Injection probes")
    assert len(rows) == len(hostile_values("group_ids")) == 11
    assert all(r["verdict"].startswith("restrictive") for r in rows), rows
    assert all(r["admit a forbidden record"] == 0 and r["parse errors"] == 0 for r in rows)
    # one probe search per value, through profile p: no document carries a hostile group
    assert all(r["probe search results"] == 0 and r["results outside the groups"] == 0 for r in rows)
    assert f.metrics["injection_failures"] == 0


def test_degrades_without_identities(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, identities=False))
    assert f.status == "warn"
    ran, not_ran = f.headline.split("[ran: ")[1].split("; not run: ")
    assert "injection probes" in ran and "leak probes" not in ran
    assert "leak probes (no [identities])" in not_ran
    assert "leaked_results" not in f.metrics


def test_no_client_code_and_no_policy_parts_say_what_ran(tmp_path):
    ctx = _ctx(tmp_path, SOUND)
    ctx.policy = None
    f = _check(ctx)
    assert "[ran: schema" in f.headline and "profiles and probes (no policy)" in f.headline


def test_retrievable_security_field_warns(tmp_path):
    from dataclasses import replace

    ctx = _ctx(tmp_path, SOUND)
    schema = ctx.target.schema()
    fields = tuple(replace(x, retrievable=True) if x.name == "group_ids" else x for x in schema.fields)
    ctx.target._schema = replace(schema, fields=fields)
    f = _check(ctx)
    assert f.status == "warn" and "'group_ids' are retrievable" in f.headline
    assert any("non-retrievable" in r for r in f.recommendations)
    off = load_checklist()["acl_trimming"].with_thresholds(warn_retrievable_security_fields=False)
    assert _check(ctx, off).status == "pass"


# ---- injection probes on naive builders ---------------------------------------------------------------


def _naive_eq(groups):
    return " or ".join(f"group_ids/any(g: g eq '{v}')" for v in groups) or None


def _naive_search_in(groups):
    return f"group_ids/any(g: search.in(g, '{', '.join(groups)}'))"


def _flagged(res):
    return bool(res["parse_error"] or res["admitted"] or res["no_identity_clause"])


def test_naive_builders_are_flagged_and_the_escaping_builder_is_not():
    probes = dict(hostile_values("group_ids"))
    for label, groups in probes.items():
        safe = probe_filter(odata.search_in_any("group_ids", groups), None, "group_ids", groups, {})
        assert not _flagged(safe), (label, safe)
    # string-built eq: the break-out parses and admits an 'hr' record
    res = probe_filter(_naive_eq(probes["quote break-out with or"]), None, "group_ids",
                       probes["quote break-out with or"], {})
    assert ["hr"] in res["admitted"] and not res["parse_error"]
    res = probe_filter(_naive_eq(probes["or true inside the lambda"]), None, "group_ids",
                       probes["or true inside the lambda"], {})
    assert ["hr"] in res["admitted"]
    assert probe_filter(_naive_eq(probes["quote"]), None, "group_ids", probes["quote"], {})["parse_error"]
    # an empty group list: the naive builder drops the clause altogether
    assert probe_filter(_naive_eq(()), None, "group_ids", (), {})["no_identity_clause"]
    # search.in with Azure's default delimiters (space, comma) splits 'sales, hr' into two groups
    res = probe_filter(_naive_search_in(("sales, hr",)), None, "group_ids", ("sales, hr",), {})
    assert res["admitted"] == [["hr"], ["sales"]]
    assert res["control"] is False  # and the identity's own group no longer matches


def test_forbidden_records():
    assert forbidden_records(("sales, hr",)) == [["hr"], ["sales"], []]
    assert forbidden_records(("a|b",)) == [["hr"], ["a"], ["b"], []]
    assert forbidden_records(()) == [["hr"], []]
    assert forbidden_records(("x') or true or ('",)) == [["hr"], []]


def test_probe_filter_evaluates_the_whole_filter_on_a_base_record():
    with_id = "group_ids/any(g: search.in(g, 'x', '|')) and level eq 'evidence'"
    res = probe_filter(with_id, "level eq 'evidence'", "group_ids", ("x",), {"level": "evidence"})
    assert res["admitted"] == [] and res["control"] is True


# ---- client code ----------------------------------------------------------------------------------------


def test_unescaped_filter_in_client_code_fails_with_file_and_line(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "api.py").write_text(textwrap.dedent("""
        def acl_filter_for(request):
            return f"group_ids/any(g: g eq '{request.user_group}')"
        """), encoding="utf-8")
    f = _check(_ctx(tmp_path, SOUND, client_code=app))
    assert f.status == "fail"
    assert "security filter built from request data without escaping at api.py:3" in f.headline
    code = _rows(f, "Security filters in the client code")
    assert code[0]["site"] == "api.py:3" and code[0]["verdict"].startswith("injection risk")
    assert any(r.startswith("at api.py:3 (acl_filter_for)") for r in f.recommendations)
    assert f.metrics["leaked_results"] == 0  # the policy itself is sound


def test_escaped_filter_from_the_token_passes(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "auth.py").write_text(textwrap.dedent("""
        def security_filter(identity):
            groups = "|".join(g.replace("'", "''") for g in identity.groups)
            return f"group_ids/any(g: search.in(g, '{groups}', '|'))"
        """), encoding="utf-8")
    f = _check(_ctx(tmp_path, SOUND, client_code=app))
    assert f.status == "pass", f.headline
    assert _rows(f, "Security filters in the client code")[0]["verdict"] == "ok"


# ---- the sample ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_misconfigured_sample_fails_on_the_fstring_filter(misconfigured_ctx, checklist):
    f = run_check(resolve(checklist["acl_trimming"]), misconfigured_ctx, checklist["acl_trimming"])
    assert f.status == "fail"
    assert "muster_assistant/api.py:23" in f.headline
    code = {r["site"]: r for r in _rows(f, "Security filters in the client code")}
    assert code["muster_assistant/api.py:23"]["from request"] is True
    assert code["muster_assistant/api.py:23"]["verdict"].startswith("injection risk")
    assert code["web/src/searchClient.ts:27"]["verdict"].startswith("injection risk")
    missing = _rows(f, "Queries without an identity")
    assert any("muster_assistant/agents/search_agent.py:67" in r["examples"] for r in missing)
    # the policy trims on every profile: the probes find nothing
    assert f.metrics["leaked_results"] == 0 and f.metrics["leak_probe_requests"] > 40
    assert f.metrics["injection_failures"] == 0
    assert any("api.py:23" in r and "search.in" in r for r in f.recommendations)
    from ragdiag.plots import figure

    assert figure(f) is not None


@pytest.mark.slow
def test_tuned_sample_passes(tuned_ctx, checklist):
    f = run_check(resolve(checklist["acl_trimming"]), tuned_ctx, checklist["acl_trimming"])
    assert f.status in ("pass", "warn"), f.headline
    assert f.metrics["leaked_results"] == 0 and f.metrics["code_injection_risks"] == 0
    per_identity = _rows(f, "Leak probes per identity")
    assert {r["identity"] for r in per_identity} == set(tuned_ctx.identities)
    assert all(r["results outside rights"] == 0 for r in per_identity)
