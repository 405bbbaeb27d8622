"""reranker_scores on the eight-document world of test_checks_minimal, numbers by hand.

The key-table reranker scores d1-d4 (alpha) 3.5 and d5-d8 (beta) 0.5. Three fact
questions go to profile `healthy` (every document reachable: top-1 3.5); one definition
question goes to profile `starved`, whose filter leaves only the beta documents (top-1 0.5).
"""

from __future__ import annotations

import dataclasses

import pytest

from ragdiag.checks.figures import FigureDataError, figure
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.errors import TargetError
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from tests.test_check_prerank_filters import assert_all_german, check
from tests.test_checks_minimal import GOOD_SCORES, _world

ALPHA = tuple((f"d{i}", 1) for i in range(1, 5))
GOLD = Goldset(cases=(
    GoldCase(id="f1", question="What is alpha?", intent="fact", as_user="u", expect_sources=ALPHA),
    GoldCase(id="f2", question="Tell me about alpha", intent="fact", as_user="u", expect_sources=ALPHA),
    GoldCase(id="f3", question="alpha facts", intent="fact", as_user="u", expect_sources=ALPHA),
    GoldCase(id="d1", question="Define alpha", intent="definition", as_user="u", expect_sources=ALPHA),
), path=None)

TWO = """
[policy]
name = "two"
[routes]
fact = "healthy"
definition = "starved"
[defaults]
query_type = "semantic"
semantic_configuration = "default"
keyword_text = "keywords"
semantic_text = "verbatim"
[profiles.healthy]
  [[profiles.healthy.vector_queries]]
  fields = ["vec"]
  k = 50
[profiles.starved]
filter = "search.in(key, 'd5|d6|d7|d8', '|')"
  [[profiles.starved.vector_queries]]
  fields = ["vec"]
  k = 50
"""
BOTH_HEALTHY = TWO.replace("""filter = "search.in(key, 'd5|d6|d7|d8', '|')"\n""", "")
NOT_SEMANTIC = TWO.replace('query_type = "semantic"', 'query_type = "simple"')


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return _world(tmp_path_factory.mktemp("rerank"), GOOD_SCORES)


def context(target, policy_text, *, goldset=GOLD):
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(policy_text),
                        goldset=goldset, identities={"u": Identity("u", ("all",))})


def rr(ctx):
    return check(ctx, "reranker_scores")


# ---- miss 3: each profile is judged on its own median ---------------------------------------
def test_a_starved_profile_fails_although_the_pooled_median_is_healthy(target):
    f = rr(context(target, TWO))
    # pooled top-1 scores 3.5, 3.5, 3.5, 0.5: median 3.5 >= 2.0 and 25 % below 1.5 <= 30 %,
    # which passed before; per profile, starved has median 0.5 < 1.0
    assert f.metrics["median_top1"] == pytest.approx(3.5)
    assert f.metrics["share_top1_below_1.5"] == pytest.approx(0.25)
    assert f.metrics["median_top1[healthy]"] == pytest.approx(3.5)
    assert f.metrics["median_top1[starved]"] == pytest.approx(0.5)
    assert f.status == "fail"
    assert f.headline.startswith("starved: median top-1 reranker score 0.50 < 1.00 (1 questions)")
    assert "healthy" not in f.headline
    verdicts = {r["profile"]: r["verdict"] for r in f.evidence_table("scores_per_profile").records()}
    assert verdicts == {"healthy": "ok", "starved": "fail"}
    assert any("profiles starved: constantly low scores" in r for r in f.recommendations)


def test_two_healthy_profiles_pass_saying_what_was_measured(target):
    f = rr(context(target, BOTH_HEALTHY))
    assert f.status == "pass", f.headline
    assert f.observed == {"semantic_profiles_scored": 2, "top1_scores": 4, "elements_ablated": 2}
    assert f.headline == ("2 semantic profiles scored on 4 questions; lowest median top-1 score 3.50 "
                          "(healthy); 0% of questions below 2.00")
    assert f.metrics["roc_auc_relevant_vs_other"] == pytest.approx(1.0)


# ---- nothing to measure ----------------------------------------------------------------------
def test_no_semantic_profile_is_skipped(target):
    f = rr(context(target, NOT_SEMANTIC))
    assert f.status == "skipped"
    assert "none of the 2 profiles uses semantic ranking" in f.skipped_reason


def test_no_questions_is_skipped_with_what_to_supply(target):
    f = rr(context(target, TWO, goldset=None))
    assert f.status == "skipped" and "neither a goldset nor a query log" in f.skipped_reason


class Wrapped:
    """The local world with `search` replaced."""

    def __init__(self, inner, search):
        self.inner, self._search = inner, search

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def search(self, request):
        return self._search(self.inner, request)


def _no_scores(inner, request):
    t = inner.search(request)
    return dataclasses.replace(t, hits=tuple(dataclasses.replace(h, reranker_score=None) for h in t.hits),
                               reranked=False, partial_reason="semantic ranking skipped: capacity exceeded")


def test_semantic_asked_but_no_score_back_warns_never_passes(target):
    f = rr(context(Wrapped(target, _no_scores), BOTH_HEALTHY))
    assert f.status == "warn"
    assert f.headline.startswith("4 of 4 semantic requests came back without reranker scores")
    assert "top1_scores" not in f.observed and "semantic_profiles_scored" not in f.observed
    reasons = f.evidence_table("partial_responses").column("reason")
    assert reasons == ["semantic ranking skipped: capacity exceeded"] * 4


def _fails(inner, request):
    raise TargetError("semantic ranker quota exceeded (429)")


def test_every_request_failing_is_an_error_with_the_reason(target):
    f = rr(context(Wrapped(target, _fails), TWO))
    assert f.status == "error"
    failures = f.to_dict()["failures"]
    assert {x["profile"] for x in failures} == {"healthy", "starved"}
    assert all("semantic ranker quota exceeded (429)" in x["reason"] for x in failures)
    # every run counts: 4 questions with reranking, 4 in the fused order (no_rerank), and the
    # ablation's what-ifs of the 2 profiles' semantic ranking (2 questions each)
    assert f.incomplete["failed_requests"] == f.incomplete["requests"] == 8 + 4


# ---- figure and German -----------------------------------------------------------------------
def test_figure_reads_the_per_question_scores_by_key(target):
    f = rr(context(target, TWO))
    assert type(figure(f)).__name__ == "Figure"
    ev = f.evidence_table("top1_per_question")
    renamed = dataclasses.replace(f, evidence=tuple(dataclasses.replace(e, title="Renamed") if e is ev else e
                                                    for e in f.evidence))
    assert type(figure(renamed, "de")).__name__ == "Figure"
    keys = tuple("score" if k == "top1_score" else k for k in ev.column_keys)
    with pytest.raises(FigureDataError):
        figure(dataclasses.replace(f, evidence=(dataclasses.replace(ev, column_keys=keys),)))


def test_the_finding_renders_in_german(target):
    f = rr(context(target, TWO))
    de = assert_all_german(f, "reranker_scores")
    assert de.headline.startswith("starved: Median des Top-1-Reranker-Scores 0.50 < 1.00 (1 Fragen)")
    assert de.evidence_table("scores_per_profile").columns[:3] == ("Profil", "Anfragen", "Top-1 p10")
