"""The check contract: declared needs enforced, pass only on observations, failures summed
and kept with their reasons, texts as messages that render in English and German."""

from __future__ import annotations

import pytest

from ragdiag.checks.base import Check, Verdict, catalogue_for, localize, missing_inputs
from ragdiag.checks.registry import run_check
from ragdiag.engine.runner import Failure
from ragdiag.inputs.checklist import load_checklist
from ragdiag.model import SearchRequest
from ragdiag.model.findings import AuditResult
from ragdiag.model.messages import Catalogue, Message, format_value, render


@pytest.fixture(scope="module")
def specs():
    return load_checklist()


class _Ctx:
    """Inputs by name; `lang` like the audit context."""

    def __init__(self, *present: str, lang: str = "en") -> None:
        self.present, self.lang = set(present), lang

    def has(self, name: str) -> bool:
        return name in self.present


class _Run:
    def __init__(self, profiles, results):
        self.queries = [type("Q", (), {"profile": p})() for p in profiles]
        self.results = results


def _fail(reason: str) -> Failure:
    return Failure(SearchRequest(search="x"), reason)


def test_pass_needs_an_observation(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.passed("pass_configured", profiles=2, min=50)
    f = v.finish()
    assert f.status == "skipped"  # nothing observed: never pass
    assert f.skipped_reason
    v = Verdict("pool_size", specs["pool_size"])
    v.observed("semantic_profiles_configured", 2)
    v.passed("pass_configured", profiles=2, min=50)
    f = v.finish()
    assert f.status == "pass" and f.observed == {"semantic_profiles_configured": 2}
    assert f.headline == "all 2 semantic profiles configure a pool of at least 50 candidates"


def test_nothing_observed_reason_is_the_skip_reason(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.nothing_observed("no_semantic_profile", profiles=3)
    f = v.finish()
    assert f.status == "skipped"
    assert "none of the 3 profiles uses semantic ranking" in f.skipped_reason
    assert f.headline.startswith("Skipped: none of the 3 profiles")


def test_warn_without_observation_is_a_finding(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.warn("k_above", profile="overview", k=500, max=100)
    assert v.finish().status == "warn"


def test_failures_are_summed_across_runs_with_reasons(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.observed("pools_measured", 3)
    v.requests(_Run(["a", "a", "b"], [_fail("field x missing"), object(), _fail("field x missing")]))
    v.requests(_Run(["b"], [_fail("timeout")]))
    f = v.finish()
    # 3 of 4 failed: 75 % > 2 %: error, never pass; reasons kept per profile
    assert f.status == "error"
    assert f.incomplete == {"failed_requests": 3, "requests": 4, "above_threshold": 1}
    reasons = {(r.reason, r.profile): r.count for r in f.failures}
    assert reasons == {("field x missing", "a"): 1, ("field x missing", "b"): 1, ("timeout", "b"): 1}
    assert "3 of 4 requests failed" in f.headline
    d = f.to_dict()
    assert d["failures"][0]["reason"] in ("field x missing", "timeout")
    assert AuditResult((f,)).exit_code("never") == 3


def test_confirmed_fail_stays_fail_but_incomplete(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.fail("configured_below", profile="definition", pool=20, min=50)
    v.requests(_Run(["definition"], [_fail("boom")]))
    f = v.finish()
    assert f.status == "fail" and f.above_failure_threshold
    assert AuditResult((f,)).exit_code("fail") == 3


def test_few_failures_below_threshold_keep_the_verdict(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.observed("pools_measured", 100)
    v.passed("pass_configured", profiles=1, min=50)
    v.requests(_Run(["p"] * 100, [_fail("one timeout")] + [object()] * 99))
    f = v.finish()
    assert f.status == "pass" and f.is_incomplete and not f.above_failure_threshold
    assert "1 of 100 requests failed" in f.headline
    assert AuditResult((f,)).exit_code("fail") == 0


def test_needs_are_enforced_before_the_check_runs(specs):
    ran = []

    class Probe(Check):
        id = "pool_size"
        needs = ("target", "profiles", "goldset|query_log")

        def evaluate(self, ctx, spec, v):
            ran.append(True)

    assert missing_inputs(Probe.needs, _Ctx("target", "query_log")) == ["profiles"]
    f = run_check(Probe(), _Ctx("target", "query_log"), specs["pool_size"])
    assert f.status == "skipped" and not ran
    assert "no query profiles were supplied" in f.skipped_reason
    assert any('profiles = "profiles.toml"' in r for r in f.recommendations)
    de = run_check(Probe(), _Ctx("target", lang="de"), specs["pool_size"])
    assert "keine Abfrageprofile" in de.skipped_reason and "Goldset" in de.headline
    run_check(Probe(), _Ctx("target", "profiles", "goldset"), specs["pool_size"])
    assert ran == [True]


def test_unknown_need_is_refused_at_registration():
    from ragdiag.checks.registry import Registry
    from ragdiag.errors import RagdiagError

    class Bad(Check):
        id = "bad_check"
        needs = ("indx",)

    with pytest.raises(RagdiagError, match="unknown input"):
        Registry(builtin_package=None, entry_point_group=None).register(Bad)


def test_finding_renders_in_german_from_its_messages(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.fail("configured_below", profile="definition", pool=20, min=50)
    v.recommend("rec_lower_k", profile="overview", k=100)
    v.table("configured_pool", "t_configured", ("profile", "configured_pool"), [("definition", 20)])
    f = v.finish()
    assert f.headline == "definition: configured pool 20 < 50"
    de = localize(f, "de", specs)
    assert de.headline == "definition: konfigurierter Pool 20 < 50"
    assert de.recommendations == ("Profil 'overview': k von 100 auf 50 senken; der Reranker nutzt nur 50",)
    ev = de.evidence_table("configured_pool")
    assert ev.title == "Konfigurierter Pool je Profil" and ev.columns == ("Profil", "konfigurierter Pool")
    assert ev.column("configured_pool") == [20]
    # the JSON round trip keeps the messages, so saved findings render in German too
    back = type(f).from_dict(f.to_dict())
    assert localize(back, "de", specs).headline == de.headline


def test_format_value_follows_the_language():
    assert format_value(0.114, ".0%", "en") == "11%"
    assert format_value(0.114, ".0%", "de") == "11 %"
    assert format_value(12345, ",", "de") == "12'345"
    assert format_value(None, "", "de") == "k. A."
    assert format_value(("a", "b")) == "a, b"


def test_unknown_message_shows_its_id_and_missing_params_do_not_crash():
    cat = Catalogue({"x.hello": {"en": "hello {name} and {other}"}})
    assert render(Message("x.hello", {"name": "n"}), "en", cat) == "hello n and {other}"
    assert render(Message("x.nope", {"a": 1}), "en", cat) == "[x.nope: a=1]"


def test_every_message_and_label_has_german(specs):
    cat = catalogue_for(specs.values())
    missing = [i for i in cat.ids() if "de" not in cat.templates(i)]
    assert not missing, f"messages without German: {missing[:10]}"


def test_message_cells_and_label_params_render_per_language(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.table("measured_pool", "t_measured", ("profile", "share_below", "cause"),
            [("definition", 0.9, v.msg("cause_post_filter", mode="postFilter"))], source="goldset", min=50)
    f = v.finish()
    ev = f.evidence_table("measured_pool")
    assert ev.columns[1] == "share < 50" and ev.rows[0][2].startswith("postFilter with a filter")
    de = localize(type(f).from_dict(f.to_dict()), "de", specs).evidence_table("measured_pool")
    assert de.columns[1] == "Anteil < 50"
    assert de.rows[0][2] == "postFilter mit Filter: Post-Filtering entfernt Kandidaten nach top-k"


def test_a_small_non_zero_share_never_prints_as_zero():
    # "0 % of traffic" over a table of 0.5 %: a percent or fixed spec gains decimals until non-zero
    assert format_value(0.005, ".0%") == "0.5%" and format_value(0.004, ".0%", "de") == "0.4 %"
    assert format_value(0.64, ".0%") == "64%" and format_value(0.0, ".0%") == "0%"
    assert format_value(0.0004, ".2f") == "0.0004" and format_value(-0.003, ".0%") == "-0.3%"


def test_headline_parts_behind_and_more_are_kept_in_the_finding(specs):
    v = Verdict("pool_size", specs["pool_size"])
    v.observed("semantic_profiles_configured", 5)
    for i in range(5):
        v.warn("configured_below", profile=f"p{i}", pool=10, min=50)
    f = v.finish()
    shown = [m.params.get("profile") for m in f.headline_msgs if m.id != "common.and_more"]
    assert f.headline_msgs[-1].id == "common.and_more" and f.headline_msgs[-1].params["n"] == 2
    assert shown + [m.params["profile"] for m in f.more_msgs] == [f"p{i}" for i in range(5)]
    back = type(f).from_dict(f.to_dict())
    assert back.more_msgs == f.more_msgs and len(f.to_dict()["messages"]["more"]) == 2
