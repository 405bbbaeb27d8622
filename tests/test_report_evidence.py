"""Report sentences conditioned on their evidence (`ragdiag.report.evidence`): a fixed sentence of a
spec is printed only where the finding holds what it asserts, on real findings of worlds made
here (no code given, no security field, leaks in the goldset) and on findings made by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragdiag.checks.base import catalogue_for
from ragdiag.inputs.checklist import load_checklist
from ragdiag.model.findings import Finding
from ragdiag.model.messages import Message
from ragdiag.report.evidence import client_sentence_id, condition_problem, holds
from ragdiag.report.render import client_sentence

SPECS = load_checklist()
CAT = catalogue_for(SPECS.values())


def sentence(finding, lang="en"):
    return client_sentence(finding, SPECS[finding.check_id], lang, CAT)


def text(check, name, lang="en"):
    return SPECS[check].messages[name][lang]


# ---- the condition language ---------------------------------------------------------------------
def test_conditions_observed_metric_said_alternatives_and_negation():
    f = Finding("goldset", "warn", "x", metrics={"a": 0, "b": 2, "c": None}, observed={"seen": 3},
                headline_msgs=(Message("goldset.few_cases"),))
    assert holds(f, ["observed:seen", "metric:b", "said:few_cases"])
    assert not holds(f, ["observed:unseen"]) and not holds(f, ["metric:a"]) and not holds(f, ["metric:c"])
    assert holds(f, ["metric:a|metric:b"]) and holds(f, ["!said:duplicates"]) and not holds(f, ["!observed:seen"])
    assert condition_problem("observed:x|said:y") is None
    assert "is not a condition" in condition_problem("seen:x")


def test_the_first_sentence_of_the_status_whose_evidence_holds_is_chosen():
    names = ["client_fail", "client_warn", "client_pass", "client_action", "client_pass_code", "client_pass_other"]
    evidence = {"client_pass": ["observed:probes"], "client_pass_code": ["observed:code"]}
    f = Finding("acl_trimming", "pass", "x", observed={"code": 1})
    assert client_sentence_id(f, names, evidence, "pass") == "client_pass_code"
    assert client_sentence_id(Finding("acl_trimming", "pass", "x", observed={"probes": 1}), names, evidence,
                              "pass") == "client_pass"
    # no condition: a sentence that asserts nothing beyond its status always holds
    assert client_sentence_id(Finding("acl_trimming", "pass", "x"), names, evidence, "pass") == "client_pass_other"


def test_every_condition_of_every_spec_names_something_its_check_can_say_or_observe():
    sources = "\n".join(p.read_text(encoding="utf-8")
                        for p in (Path(__file__).parent.parent / "ragdiag" / "checks").glob("*.py"))
    observed = set(re.findall(r"observed\(\s*\"([a-z_0-9]+)\"", sources))
    for spec in SPECS.values():
        for name, conditions in spec.evidence.items():
            assert name.startswith("client_"), (spec.id, name)
            for c in conditions:
                for alt in c.split("|"):
                    kind, _, what = alt.lstrip("!").partition(":")
                    if kind == "said":
                        assert what in spec.messages, f"{spec.id}.{name}: no message {what!r}"
                    elif kind == "observed":
                        assert what in observed, f"{spec.id}.{name}: nothing observes {what!r}"


# ---- no sentence about code when no code was given --------------------------------------------------
def test_a_measured_context_without_code_claims_nothing_about_code(tmp_path):
    from tests.test_check_context_budgets import _check, _ctx

    f = _check(_ctx(tmp_path, budgets={"context_tokens": 800}))
    assert f.status == "pass" and "bounded_llm_calls" not in f.observed
    said = sentence(f)
    assert said == text("context_budgets", "client_pass_measured")
    assert "code" not in said and "Code" not in sentence(f, "de")


def test_a_bounded_call_in_code_is_said_and_citations_only_where_code_checks_them(tmp_path):
    from tests.test_check_context_budgets import BOUNDED_APP, _app, _check, _ctx

    f = _check(_ctx(tmp_path, client_code=_app(tmp_path, BOUNDED_APP, budget=1000), target=False))
    assert f.status == "pass" and f.observed == {"bounded_llm_calls": 1}
    expected = "client_pass" if f.metrics.get("citations_validated") else "client_pass_code"
    assert sentence(f) == text("context_budgets", expected)
    by_hand = Finding("context_budgets", "pass", "x", observed={"bounded_llm_calls": 1},
                      metrics={"citations_validated": True})
    assert sentence(by_hand) == "Every step gets a bounded context and citations are checked in code."
    unchecked = Finding("context_budgets", "pass", "x", observed={"bounded_llm_calls": 1},
                        metrics={"citations_validated": False})
    assert "citations are checked" not in sentence(unchecked)


# ---- permission filtering "works" only where something verified it -----------------------------------
@pytest.mark.parametrize("observed, works", [({}, False), ({"verified_trimming_profiles": 2}, True),
                                             ({"escaped_code_filters": 1}, True)])
def test_permission_filtering_works_only_where_it_was_verified(observed, works):
    f = Finding("acl_trimming", "warn", "x", observed=observed,
                headline_msgs=(Message("acl_trimming.no_security_field", {"index": "docs"}),))
    assert (sentence(f) == text("acl_trimming", "client_warn")) is works
    assert ("Permission filtering works" in sentence(f)) is works


def test_a_pass_by_code_alone_does_not_claim_probes():
    f = Finding("acl_trimming", "pass", "x", observed={"escaped_code_filters": 1})
    assert "verified by probes" not in sentence(f) and sentence(f) == text("acl_trimming", "client_pass_code")
    probed = Finding("acl_trimming", "pass", "x", observed={"leak_probe_requests": 12, "verified_trimming_profiles": 1})
    assert sentence(probed) == text("acl_trimming", "client_pass")


# ---- the goldset check: a failing goldset is not "no goldset" ----------------------------------------
def test_a_goldset_failing_on_leaks_is_not_said_to_be_missing(tmp_path):
    from ragdiag.checks import resolve, run_check
    from tests import leak_world as w

    spec = SPECS["goldset"]
    f = run_check(resolve(spec), w.context(tmp_path, w.LEAKY_GROUPS), spec)
    assert f.status == "fail"
    assert sentence(f) == text("goldset", "client_fail_leaks")
    missing = Finding("goldset", "fail", "x", headline_msgs=(Message("goldset.no_goldset_no_code"),))
    assert sentence(missing) == text("goldset", "client_fail")


def test_without_any_sentence_whose_evidence_holds_the_headline_is_printed():
    f = Finding("reranker_scores", "pass", "computed headline")  # observed nothing a sentence asserts
    assert sentence(f) == "computed headline"


# ---- the front page: a measured but insignificant effect is no priority, and says so ------------------
def test_an_insignificant_effect_is_no_priority_but_is_shown_as_measured():
    from ragdiag.model.findings import AuditResult, Effect
    from ragdiag.report.render import render_title

    weak = Effect("ndcg@10", 0.40, 0.42, p=0.4, n=12, action="switch it", scope="12 questions")
    with_effect = Finding("prerank_filters", "warn", "a filter before ranking", effects=(weak,))
    without = Finding("route_counts", "warn", "a route without traffic")
    html = render_title(AuditResult(findings=(with_effect, without), meta={}), "en", specs=SPECS)
    assert "switch it" not in html  # not a priority: p = 0.4
    assert "Nothing needs fixing" not in html  # two checks warned: never "nothing"
    assert "measured, not significant: nDCG@10 +0.020" in html
    assert html.count("not significant") == 1  # route_counts measured nothing: no effect claimed
    strong = Effect("ndcg@10", 0.40, 0.52, p=0.001, n=40, action="switch it", scope="40 questions")
    html = render_title(AuditResult(findings=(Finding("prerank_filters", "warn", "x", effects=(strong,)),),
                                    meta={}), "en", specs=SPECS)
    assert "switch it" in html and "0.400 → 0.520" in html
