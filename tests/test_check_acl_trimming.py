"""ACL trimming (check 9): leak probes with exact counts on a hand-made five-document world,
injection probes through safe and naive filter builders, unescaped filters in client code, and
the two sample setups (misconfigured: fails on the f-string filter at api.py:23; tuned: passes).
Code-only audits (no target) judge the profiles and the code and never probe.

The world: d1, d2 belong to group `all`, d3, d4 to `hr`, d5 to `finance`. Identity `u` holds
`all`, `h` holds `all` and `hr`. Every profile here is vector-only with k = 50 (exhaustive) and
top = 50, so each request returns every document its filter admits.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace

import numpy as np
import pytest

from ragdiag import odata
from ragdiag.checks import resolve, run_check
from ragdiag.checks.acl_trimming import forbidden_records, hostile_values, probe_filter
from ragdiag.checks.base import localize
from ragdiag.checks.figures import FigureDataError, figure
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.errors import TargetError
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.sample.system import sample_dir
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.evidence_helpers import column_renamed, english_left, retitled
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


def _ctx(tmp_path, policy_text, *, identities=True, goldset=True, client_code=None, target=True):
    t = _target(tmp_path) if target else None
    gs = Goldset(cases=(GoldCase(id="r1", question=REFUSED_Q, intent="fact", as_user="u", expect_refused=True),),
                 path=None) if goldset else None
    idents = {"u": Identity("u", ("all",)), "h": Identity("h", ("all", "hr"))} if identities else {}
    return AuditContext(config=None, target=t, runner=Runner(t) if t else None,
                        policy=loads_policy(policy_text) if policy_text else None,
                        goldset=gs, identities=idents, client_code=client_code)


def _app(tmp_path, files):
    root = tmp_path / "app"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


ESCAPED_APP = {"auth.py": """
    def security_filter(identity):
        groups = "|".join(g.replace("'", "''") for g in identity.groups)
        return f"group_ids/any(g: search.in(g, '{groups}', '|'))"
    """}
NO_FILTER_APP = {"search.py": """
    from azure.search.documents import SearchClient

    def search(client: SearchClient, q):
        return client.search(q, top=5)
    """}
HEADER_APP = {"search.py": """
    from azure.search.documents import SearchClient

    def search(client: SearchClient, q, user_token):
        return client.search(q, top=5, x_ms_query_source_authorization=user_token)
    """}


def _check(ctx, spec=None):
    spec = spec or load_checklist()["acl_trimming"]
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, key):
    ev = finding.evidence_table(key)
    assert ev is not None, f"no evidence table {key!r}: {[e.key for e in finding.evidence]}"
    return ev.records()


# ---- leak probes, by hand ----------------------------------------------------------------------------


@pytest.mark.parametrize("policy_text, why", [
    (NO_TRIMMING, "13 via profile 'p': no identity clause: security_trimming = false"),
    (OVERRIDE_DROPS, "13 via profile 'p': vector query 1 (vec) filter_override \"category eq 'c'\" replaces the "
                     "filter without the identity clause")])
def test_leaking_policy_is_caught_with_the_exact_count(tmp_path, policy_text, why):
    f = _check(_ctx(tmp_path, policy_text))
    # u lacks hr (d3, d4) and finance (d5): 3 document questions + 1 refused goldset question = 4
    # requests, each returning all 5 documents, 3 of them outside u's rights -> 12 leaked results;
    # h lacks finance (d5): 1 request, 5 results, d5 outside -> 1. Total 13, on 3 distinct documents.
    assert f.status == "fail"
    assert f.metrics["leaked_results"] == 13
    assert f.metrics["leaked_documents"] == 3
    assert f.metrics["leak_probe_requests"] == 5
    assert f.headline.startswith(f"leak probes returned 13 result(s) outside the identity's rights over 5 probe "
                                 f"requests ({why}; 2 identities affected)")
    summary = {r["identity"]: r for r in _rows(f, "leak_probes")}
    assert (summary["u"]["probe_questions"], summary["u"]["results"], summary["u"]["outside"]) == (4, 20, 12)
    assert (summary["h"]["probe_questions"], summary["h"]["results"], summary["h"]["outside"]) == (1, 5, 1)
    leaked = _rows(f, "leaked_results")
    assert {(r["identity"], r["leaked_key"]) for r in leaked} == {("u", "d3"), ("u", "d4"), ("u", "d5"), ("h", "d5")}
    assert all(r["its_groups"] == tuple(GROUPS[r["leaked_key"]]) for r in leaked)
    assert any(r["probe"] == "goldset r1 (refused)" and r["question"] == REFUSED_Q for r in leaked)
    assert any("security_trimming = true" in r or "override_security = true" in r for r in f.recommendations)
    assert not f.observed  # nothing verified


def test_override_leak_is_blamed_on_the_override_not_on_hostile_values(tmp_path):
    """F6: filter_override without the security clause. Escaping worked; the override leaks."""
    f = _check(_ctx(tmp_path, OVERRIDE_DROPS))
    assert ("profile 'p': vector query 1 (vec) replaces the filter with filter_override \"category eq 'c'\", "
            "which lacks the identity clause (override_security = false)") in f.headline
    assert "hostile group value" not in f.headline and f.metrics["injection_failures"] == 0
    assert f.metrics["override_drops"] == 1
    assert all(r["verdict"].startswith("restrictive") for r in _rows(f, "injection_probes"))
    # no probe search through a profile whose override drops the identity: that is the leak probes' finding
    assert all(r["search_results"] is None for r in _rows(f, "injection_probes"))
    assert "injection_failures" not in {e.key for e in f.evidence}
    assert {r["cause"] for r in _rows(f, "leaked_results")} == {
        "vector query 1 (vec) filter_override \"category eq 'c'\" replaces the filter without the identity clause"}
    clause = {r["profile"]: r for r in _rows(f, "identity_clause")}
    assert clause["p"]["dropping_overrides"] == (1,)


def test_the_same_override_with_the_identity_clause_is_no_finding(tmp_path):
    f = _check(_ctx(tmp_path, OVERRIDE_KEEPS))
    assert f.status == "pass", f.headline
    assert f.metrics["override_drops"] == 0 and f.metrics["leaked_results"] == 0
    assert "filter_override" not in f.headline
    assert _rows(f, "identity_clause")[0]["dropping_overrides"] == ()


def test_override_fault_is_named_in_a_code_only_audit_too(tmp_path):
    app = _app(tmp_path, ESCAPED_APP)
    f = _check(_ctx(tmp_path, OVERRIDE_DROPS, client_code=app, target=False))
    assert f.status == "fail"
    assert f.headline.startswith("profile 'p': vector query 1 (vec) replaces the filter with filter_override "
                                 "\"category eq 'c'\", which lacks the identity clause")
    assert "leaked_results" not in f.metrics  # no target: nothing probed
    keeps = _check(_ctx(tmp_path / "k", OVERRIDE_KEEPS, client_code=_app(tmp_path / "k", ESCAPED_APP), target=False))
    assert keeps.status == "pass", keeps.headline
    assert keeps.observed == {"escaped_code_filters": 1}


@pytest.mark.parametrize("policy_text", [SOUND, OVERRIDE_KEEPS])
def test_sound_policy_yields_zero_leaks(tmp_path, policy_text):
    f = _check(_ctx(tmp_path, policy_text))
    assert f.status == "pass", f.headline
    assert f.metrics["leaked_results"] == 0
    summary = {r["identity"]: r for r in _rows(f, "leak_probes")}
    # u sees d1, d2 only: 4 requests x 2 results; h sees d1-d4: 1 request x 4 results
    assert (summary["u"]["requests"], summary["u"]["results"]) == (4, 8)
    assert (summary["h"]["requests"], summary["h"]["results"]) == (1, 4)
    assert f.observed == {"verified_trimming_profiles": 1, "leak_probe_requests": 5}
    assert f.headline.startswith("1 profile(s) build the escaped identity clause, verified: 0 results outside the "
                                 "identity's rights over 5 leak probe requests, 11 hostile values stayed restrictive")


def test_injection_probes_stay_restrictive_through_the_profile_builder(tmp_path):
    f = _check(_ctx(tmp_path, SOUND))
    rows = _rows(f, "injection_probes")
    assert len(rows) == len(hostile_values("group_ids")) == 11
    assert all(r["verdict"].startswith("restrictive") for r in rows), rows
    assert all(r["admitted"] == 0 and r["parse_errors"] == 0 for r in rows)
    # one probe search per value, through profile p: no document carries a hostile group
    assert all(r["search_results"] == 0 and r["outside_groups"] == 0 for r in rows)
    assert f.metrics["injection_failures"] == 0


def test_degrades_without_identities(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, identities=False))
    assert f.status == "warn"
    ran, not_ran = f.headline.split("[ran: ")[1].split("; not run: ")
    assert "injection probes" in ran and "leak probes" not in ran
    assert "leak probes (no [identities])" in not_ran
    assert "leaked_results" not in f.metrics and not f.observed


def test_a_config_holding_only_a_target_passes_nothing(tmp_path):
    f = _check(_ctx(tmp_path, None, goldset=False))
    assert f.status == "skipped"
    assert "profiles" in f.skipped_reason or "client code" in f.skipped_reason


def test_code_without_policy_says_what_ran(tmp_path):
    f = _check(_ctx(tmp_path, None, client_code=_app(tmp_path, ESCAPED_APP)))
    assert "[ran: schema, client code; not run: profiles and probes (no policy)]" in f.headline
    assert f.status == "pass" and f.observed == {"escaped_code_filters": 1}


def test_retrievable_security_field_warns(tmp_path):
    ctx = _ctx(tmp_path, SOUND)
    schema = ctx.target.schema()
    fields = tuple(replace(x, retrievable=True) if x.name == "group_ids" else x for x in schema.fields)
    ctx.target._schema = replace(schema, fields=fields)
    f = _check(ctx)
    assert f.status == "warn" and "security field(s) group_ids are retrievable" in f.headline
    assert any("non-retrievable" in r for r in f.recommendations)
    off = load_checklist()["acl_trimming"].with_thresholds(warn_retrievable_security_fields=False)
    assert _check(ctx, off).status == "pass"


# ---- reading security values through declared capabilities -----------------------------------------


def test_without_the_security_values_capability_leaks_are_counted_by_filtering(tmp_path):
    ctx = _ctx(tmp_path, OVERRIDE_DROPS)
    ctx.target.capabilities = frozenset({"documents", "get_document"})  # group_ids is not retrievable
    f = _check(ctx)
    assert f.metrics["security_values_read_via"] == "filter"
    # the index's own group values cannot be read, so only the identities' groups (all, hr) are
    # probed: u lacks hr (d3, d4) -> 2 document questions + the refused one = 3 requests, each
    # returning 5 documents of which d3, d4, d5 are outside u's rights (found by filtering on the
    # key and the negated identity clause) -> 9; h lacks no known group -> no request
    assert f.metrics["leak_probe_requests"] == 3
    assert f.metrics["leaked_results"] == 9
    assert all(r["its_groups"] is None for r in _rows(f, "leaked_results"))


def test_a_target_declaring_no_capability_verifies_nothing(tmp_path):
    ctx = _ctx(tmp_path, SOUND)
    ctx.target.capabilities = frozenset()
    f = _check(ctx)
    assert f.metrics["security_values_read_via"] is None
    assert f.status == "skipped" and not f.observed
    assert f.skipped_reason == ("a security mechanism was found (1 profile(s) building the identity clause) but "
                                "could not be verified: the 'group_ids' values of returned documents can be neither "
                                "read back nor filtered by key (the target declares neither security_values nor "
                                "documents)")


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
    app = _app(tmp_path, {"api.py": """
        def acl_filter_for(request):
            return f"group_ids/any(g: g eq '{request.user_group}')"
        """})
    f = _check(_ctx(tmp_path, SOUND, client_code=app))
    assert f.status == "fail"
    assert "security filter built from request data without escaping at api.py:3" in f.headline
    code = _rows(f, "code_filters")
    assert code[0]["site"] == "api.py:3" and code[0]["verdict"].startswith("injection risk")
    assert any(r.startswith("at api.py:3 (acl_filter_for)") for r in f.recommendations)
    assert ("api.py", 3, "error") in {(loc.file, loc.line, loc.level) for loc in f.locations}
    assert f.metrics["leaked_results"] == 0  # the policy itself is sound


def test_escaped_filter_from_the_token_passes(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, client_code=_app(tmp_path, ESCAPED_APP)))
    assert f.status == "pass", f.headline
    assert _rows(f, "code_filters")[0]["verdict"] == "ok"
    assert f.observed == {"verified_trimming_profiles": 1, "leak_probe_requests": 5, "escaped_code_filters": 1}
    assert "; 1 security filter(s) in the client code build an escaped identity clause (auth.py:4)" in f.headline


def test_code_only_audit_with_no_security_mechanism_is_skipped(tmp_path):
    ctx = _ctx(tmp_path, None, client_code=_app(tmp_path, NO_FILTER_APP), target=False)
    assert not ctx.has("target")
    f = _check(ctx)
    assert f.status == "skipped" and not f.observed
    # the reason names the request path it looked at (phase 2: ACL is judged on the request path)
    assert f.skipped_reason == ("no permission trimming on the request path: none of its 1 search call site(s) "
                                "carries a security filter, the user's token or a framework filter on a security "
                                "field (1 scanned files); ragdiag cannot tell whether results need trimming")


def test_no_mechanism_on_an_index_with_security_fields_is_a_finding(tmp_path):
    f = _check(_ctx(tmp_path, None, client_code=_app(tmp_path, NO_FILTER_APP)))
    assert f.status == "warn"
    assert f.headline.startswith("index 'tiny-acl' has security field(s) (group_ids), but no security filter, "
                                 "permission header or trimming profile was found (1 scanned files)")


def test_permission_header_needs_a_native_acl_index_to_count(tmp_path):
    app = _app(tmp_path, HEADER_APP)
    code_only = _check(_ctx(tmp_path, None, client_code=app, target=False))
    assert code_only.status == "skipped"
    assert code_only.skipped_reason == ("a security mechanism was found (the permission header at search.py:5) but "
                                        "could not be verified: no target to probe (a code-only audit)")
    ctx = _ctx(tmp_path, None, client_code=app)
    plain = _check(ctx)
    assert plain.status == "warn"
    assert "index 'tiny-acl' has no native permission filtering enabled" in plain.headline
    ctx.target._schema = replace(ctx.target.schema(), permission_filter_option="enabled")
    native = _check(ctx)
    assert native.status == "pass", native.headline
    assert native.observed == {"permission_headers_verified": 1}
    assert _rows(native, "permission_headers")[0]["site"] == "search.py:5"


# ---- failures, figure, German ------------------------------------------------------------------------


def test_every_probe_request_failing_is_an_error_with_the_reason(tmp_path):
    ctx = _ctx(tmp_path, SOUND)

    def refuse(request):
        raise TargetError("index 'tiny-acl' refused the query")

    ctx.target.search = refuse
    f = _check(ctx)
    assert f.status == "error"
    failures = f.to_dict()["failures"]
    assert failures[0]["reason"] == "index 'tiny-acl' refused the query" and failures[0]["profile"] == "p"
    # 5 leak probes + 11 injection probe searches
    assert f.incomplete["failed_requests"] == f.incomplete["requests"] == 16
    assert not f.observed


def test_figure_is_drawn_from_the_evidence_keys(tmp_path):
    f = _check(_ctx(tmp_path, OVERRIDE_DROPS))
    fig = figure(f)
    assert fig is not None and type(fig).__name__ == "Figure"
    assert figure(retitled(f, "leak_probes")) is not None   # titles are not keys
    with pytest.raises(FigureDataError, match="outside"):
        figure(column_renamed(f, "leak_probes", "outside"))
    assert "Leck-Proben" in figure(f, "de").axes[0].get_title()


def test_finding_renders_in_german(tmp_path):
    f = _check(_ctx(tmp_path, OVERRIDE_DROPS, identities=True, goldset=True))
    de = localize(f, "de")
    assert de.headline.startswith("Leck-Proben lieferten 13 Ergebnis(se) ausserhalb der Rechte der Identität über 5 "
                                  "Proben-Anfragen (13 über Profil 'p': Vektor-Anfrage 1 (vec) mit filter_override")
    assert de.evidence_table("leak_probes").columns[0] == "Identität"
    assert english_left(de, "acl_trimming") == []
    assert english_left(f, "acl_trimming")  # the control


# ---- the sample ---------------------------------------------------------------------------------------------


def test_sound_sample_app_passes_a_code_only_audit():
    ctx = AuditContext(config=None, target=None, runner=None, client_code=sample_dir() / "client_app_sound")
    f = _check(ctx)
    assert f.status == "pass", f.headline
    assert f.observed == {"escaped_code_filters": 1}
    assert "muster_assistant/retrieval/profiles.py:57" in f.headline


def test_faulty_sample_app_fails_a_code_only_audit():
    ctx = AuditContext(config=None, target=None, runner=None, client_code=sample_dir() / "client_app")
    f = _check(ctx)
    assert f.status == "fail"
    assert "security filter built from request data without escaping at muster_assistant/api.py:23" in f.headline


@pytest.mark.slow
def test_misconfigured_sample_fails_on_the_fstring_filter(misconfigured_ctx, checklist):
    f = run_check(resolve(checklist["acl_trimming"]), misconfigured_ctx, checklist["acl_trimming"])
    assert f.status == "fail"
    assert "muster_assistant/api.py:23" in f.headline
    code = {r["site"]: r for r in _rows(f, "code_filters")}
    assert code["muster_assistant/api.py:23"]["from_request"] is True
    assert code["muster_assistant/api.py:23"]["verdict"].startswith("injection risk")
    assert code["web/src/searchClient.ts:27"]["verdict"].startswith("injection risk")
    missing = _rows(f, "without_identity")
    assert any("muster_assistant/agents/search_agent.py:67" in r["examples"] for r in missing)
    # the policy trims on every profile: the probes find nothing
    assert f.metrics["leaked_results"] == 0 and f.metrics["leak_probe_requests"] > 40
    assert f.metrics["injection_failures"] == 0
    assert f.metrics["security_values_read_via"] == "security_values"
    assert any("api.py:23" in r and "search.in" in r for r in f.recommendations)
    assert figure(f) is not None


@pytest.mark.slow
def test_tuned_sample_passes(tuned_ctx, checklist):
    f = run_check(resolve(checklist["acl_trimming"]), tuned_ctx, checklist["acl_trimming"])
    assert f.status in ("pass", "warn"), f.headline
    assert f.metrics["leaked_results"] == 0 and f.metrics["code_injection_risks"] == 0
    assert f.observed["verified_trimming_profiles"] == len(tuned_ctx.policy.profiles)
    assert f.observed["escaped_code_filters"] == 1
    per_identity = _rows(f, "leak_probes")
    assert {r["identity"] for r in per_identity} == set(tuned_ctx.identities)
    assert all(r["outside"] == 0 for r in per_identity)


def test_a_policy_trimming_on_a_field_the_index_lacks_warns_and_sends_no_probe(tmp_path):
    """Found on the Vaswani audit: the policy's (default) security field is not in the index, so
    every leak and injection probe was refused and the check said `error` ("9 of 11 requests
    failed"). The fault is the policy's: warn, name the field, probe nothing."""
    ctx = _ctx(tmp_path, SOUND.replace('security_field = "group_ids"', 'security_field = "acl_groups"'))
    sent = []
    search = ctx.target.search
    ctx.target.search = lambda request: (sent.append(request), search(request))[1]
    f = _check(ctx)
    assert f.status == "warn", f.headline
    assert "the policy builds the identity clause on 'acl_groups', which index 'tiny-acl' does not have" in f.headline
    assert "leak and injection probes (index 'tiny-acl' has no field 'acl_groups' to trim on)" in f.headline
    assert sent == [] and not f.incomplete
    # the index has a security field: point the policy at it
    assert any(r.startswith("set [policy] security_field to the index's security field (group_ids)")
               for r in f.recommendations), f.recommendations
    assert _check(_ctx(tmp_path / "b", SOUND)).status == "pass"  # the same policy on its field: verified


def test_an_index_without_any_security_field_gets_a_recommendation_it_can_follow(tmp_path):
    """Vaswani: no security field at all. 'Set security_field to the index's security field
    (none exists)' cannot be followed; add one to the index, or declare the corpus public."""
    from dataclasses import replace

    ctx = _ctx(tmp_path, SOUND, identities=False)
    schema = ctx.target.schema()
    bare = replace(schema, fields=tuple(f for f in schema.fields if f.name != "group_ids"))
    ctx.target.schema = lambda: bare
    f = _check(ctx)
    assert f.status == "warn"
    assert not any("security_field to the index's security field" in r for r in f.recommendations)
    assert any(r.startswith("add a filterable, non-retrievable Collection(Edm.String) field") for r in f.recommendations)
    assert any(r.startswith("if every user may read every document, say so: set security_trimming = false")
               for r in f.recommendations), f.recommendations


# ---- leaks the goldset judges (tests.leak_world) -------------------------------------------------------


def test_a_data_level_leak_fails_on_the_goldset_while_the_group_probes_see_nothing(tmp_path):
    from tests import leak_world as w

    f = _check(w.context(tmp_path, w.LEAKY_GROUPS))
    assert f.status == "fail"
    # the index says d3 may be read by `all`: no probe result lies outside u's recorded groups
    assert f.metrics["leaked_results"] == 0
    # the goldset says u must not get d3 (its authorised twin salary-hr expects it): one leak of two judged cases
    assert f.metrics["judged_leaks"] == 1 and f.metrics["judged_leak_cases"] == 2
    assert f.headline.startswith("1 of 2 goldset cases asked as an identity retrieved sources the goldset "
                                 "forbids it (1 chunk(s), 1 identities)")
    assert _rows(f, "judged_leaks") == [{"identity": "u", "case": "salary-u", "profile": "p", "leaked_key": "d3",
                                         "its_groups": ("hr", "all"), "rank": 3, "forbidden_by": ("salary-hr",)}]
    assert any("correct the groups in 'group_ids'" in r for r in f.recommendations)
    assert "verified_trimming_profiles" not in f.observed  # a judged leak refutes the probes' verification


def test_the_sound_index_passes_with_the_goldset_judgement_as_evidence(tmp_path):
    from tests import leak_world as w

    f = _check(w.context(tmp_path, w.SOUND_GROUPS))
    assert f.status == "pass", f.headline
    assert f.metrics["judged_leaks"] == 0 and f.observed["judged_leak_cases"] == 2
    assert "the goldset's 2 restricted case(s) retrieved none of the sources it forbids their identity" in f.headline


def test_without_any_trimming_the_goldset_twins_still_fail(tmp_path):
    from tests import leak_world as w

    f = _check(w.context(tmp_path, w.SOUND_GROUPS, policy=w.POLICY.replace('top = 5', 'top = 5\nsecurity_trimming = false')))
    assert f.status == "fail"
    assert f.metrics["judged_leaks"] == 2  # u gets d3 (twin) and d4 (forbidden_sources)
