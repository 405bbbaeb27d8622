"""The loss funnel: every expected source attributed to the first stage that lost it.

Two layers: `classify` on hand-made stage views (one test per stage, ranks written out), and
`measure_funnel` on the topic world of `tests/worlds.py`, where every loss is planted and the
counts per stage are known by construction (the local target's traces and, through the Azure
emulator, the probes a live index needs must agree).
"""

from __future__ import annotations

import dataclasses

import pytest

from ragdiag.engine.funnel import (
    LOST_STAGES,
    STAGE_IDS,
    Admission,
    LossFunnel,
    PostTopCut,
    StageView,
    classify,
    measure_funnel,
)
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.model import RankedList
from tests import worlds


def _list(name, *keys):
    return RankedList(name, keys, tuple(float(len(keys) - i) for i in range(len(keys))))


POOL = _list("fused", *[f"p{i}" for i in range(1, 61)])  # p1 .. p60, best first
TEXT = _list("text", "p1", "p2", "p3")
VEC = _list("vector[0]:vec", "p2", "p60")


def _view(**kw):
    base = dict(final=("p1", "p2", "p3", "p4"), pool=POOL, legs=(TEXT, VEC), reranked=True, window=50)
    base.update(kw)
    return StageView(**base)


# ---- classify: one stage each ------------------------------------------------------------------
def test_every_stage_is_one_of_the_catalogue():
    assert STAGE_IDS[0] == "not_in_index" and STAGE_IDS[-1] == "top"
    assert LOST_STAGES == STAGE_IDS[:-1]


def test_not_in_index_and_rights_come_before_any_filter():
    assert classify(_view(), "zz", Admission(exists=False, admitted=False), top=2)[0] == "not_in_index"
    stage, detail, clauses, _ = classify(_view(), "p9", Admission(
        admitted=False, failing=(("group_ids/any(g: search.in(g, 'a', '|'))", True), ("x eq 1", False))), top=2)
    # outside the identity's rights: legitimate, reported apart even if another clause also rejects it
    assert (stage, detail, clauses) == ("rights", None, ("x eq 1",))


def test_filter_names_the_first_clause_and_keeps_all_of_them():
    stage, detail, clauses, _ = classify(_view(), "p9", Admission(
        admitted=False, failing=(("zq_tier eq 1", False), ("page ge 2", False))), top=2)
    assert (stage, detail, clauses) == ("filter", "zq_tier eq 1", ("zq_tier eq 1", "page ge 2"))


def test_retrieval_when_no_leg_returned_it_with_each_legs_rank():
    stage, _d, _c, ranks = classify(_view(), "p30", Admission(), top=2)
    assert stage == "retrieval"
    assert ranks == {"text": None, "vector[0]:vec": None, "pool": 30, "final": None}


def test_window_rerank_and_top_of_a_reranked_request():
    # p60 is in the vector leg but fused at rank 60 > the window of 50
    assert classify(_view(), "p60", Admission(), top=2)[:2] == ("window", "50")
    # p3 is inside the window (pool rank 3) but reranked to 3 > top 2
    assert classify(_view(), "p3", Admission(), top=2)[:2] == ("rerank", "top 2")
    assert classify(_view(), "p2", Admission(), top=2)[0] == "top"


def test_rank_below_top_without_a_reranker():
    v = _view(reranked=False, window=None, final=POOL.keys[:10])
    assert classify(v, "p3", Admission(), top=2)[:2] == ("rank", "top 2")


def test_boost_is_the_scoring_profiles_counterfactual():
    # with the profile p3 ends 3rd (below top 2); the same request without it ranks p3 first
    v = _view(scoring_profile="pageboost", unboosted_final=("p3", "p1", "p2"))
    stage, detail, _c, ranks = classify(v, "p3", Admission(), top=2)
    assert (stage, detail, ranks["final_without_boost"]) == ("boost", "pageboost", 1)
    # without the profile p3 would not reach the top either: the reranker lost it, not the boost
    assert classify(_view(scoring_profile="pageboost", unboosted_final=("p1", "p2", "p3")), "p3",
                    Admission(), top=2)[0] == "rerank"


def test_client_threshold_and_context_budget_act_after_the_top():
    scores = {"p1": 3.0, "p2": 1.0}
    v = _view(score_of=scores.get)
    cut = PostTopCut(min_reranker_score=1.5, threshold_where="app.py:9")
    assert classify(v, "p2", Admission(), top=2, cut=cut)[:2] == ("threshold", "app.py:9")
    assert classify(v, "p1", Admission(), top=2, cut=cut)[0] == "top"
    tokens = {"p1": 700, "p2": 400}
    budget = PostTopCut(budget_tokens=1000, tokens_of=tokens.get)
    # p1 fits (700), p2 would bring the context to 1,100 > 1,000 tokens
    assert classify(v, "p1", Admission(), top=2, cut=budget, before=())[0] == "top"
    assert classify(v, "p2", Admission(), top=2, cut=budget, before=("p1",))[:2] == ("budget", "1000 tokens")


def test_no_legs_known_means_absent_from_the_pool_is_retrieval():
    v = StageView(final=("a", "b"), pool=_list("sql", "a", "b"), legs=None, retrieval_bound="LIMIT 2")
    assert classify(v, "c", Admission(), top=1)[:2] == ("retrieval", "LIMIT 2")
    assert classify(v, "b", Admission(), top=1)[0] == "rank"


# ---- the topic world: counts known by construction ------------------------------------------------
@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return worlds.topic_world(tmp_path_factory.mktemp("funnel"))


def _counts(funnel, route="fact"):
    return {(r.stage, r.detail): r.sources for r in funnel.rows(route)}


def test_a_clause_on_a_field_no_rule_names_is_counted_at_its_stage(target):
    ctx = worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"'))
    f = measure_funnel(ctx)
    # zq_tier is 2 on the relevant documents of topics 0-8: 9 of 12 lost at the clause
    assert _counts(f) == {("filter", "zq_tier eq 1"): 9, ("top", None): 3}
    rows = {r.stage: r for r in f.rows("fact")}
    assert rows["filter"].share == pytest.approx(9 / 12)
    assert rows["filter"].gain == 9 * 2 and rows["filter"].gain_share == pytest.approx(18 / 24)
    assert f.lost_at("q0", "rel0") == "filter" and f.lost_at("q10", "rel10") == "top"
    fate = f.for_case("q0")[0]
    assert fate.clauses == ("zq_tier eq 1",) and fate.grade == 2


def test_a_neutral_clause_loses_nothing(target):
    f = measure_funnel(worlds.context(target, worlds.policy_text(filter='"zq_tier ge 0"')))
    assert _counts(f) == {("top", None): 12}


def test_a_boost_on_a_non_relevance_field_pushes_sources_out(target):
    f = measure_funnel(worlds.context(target, worlds.policy_text(scoring_profile='"pageboost"')))
    # distractors sit on pages 20-30: every one in the pool (k = 50 brings all topics') is boosted
    # x10 above the relevant page-1 document, which the reranker ranks first without the boost
    assert _counts(f) == {("boost", "pageboost"): 12}
    lost = [x for x in f.fates if x.stage == "boost"]
    assert all(x.ranks["final_without_boost"] == 1 and x.ranks["final"] > 3 for x in lost)


def test_a_boost_that_changes_nothing_loses_nothing(target):
    f = measure_funnel(worlds.context(target, worlds.policy_text(scoring_profile='"flatboost"')))
    assert _counts(f) == {("top", None): 12}


def test_a_starved_vector_leg_loses_at_retrieval(target):
    text = worlds.policy_text(keyword_text='"none"', vq_k="1")
    f = measure_funnel(worlds.context(target, text))
    # the relevant document is the nearest neighbour only in topics 0-3
    assert _counts(f) == {("retrieval", None): 8, ("top", None): 4}
    assert {x.case for x in f.fates if x.stage == "retrieval"} == {f"q{i}" for i in range(4, 12)}
    one = f.for_case("q5")[0]
    assert one.detail == "vector[0]:vec 1" and one.ranks["vector[0]:vec"] is None


def test_ranked_below_top_without_a_reranker(target):
    text = worlds.policy_text(keyword_text='"none"', query_type='"simple"', top="1")
    f = measure_funnel(worlds.context(target, text))
    # vector order only: the relevant document is first in topics 0-3, 2nd-4th in topics 4-11
    assert _counts(f) == {("rank", None): 8, ("top", None): 4}


def test_not_in_index_and_outside_the_rights(target):
    gold = Goldset(cases=(
        GoldCase(id="g1", question=worlds.question(0), intent="fact", as_user="u",
                 expect_sources=(("ghost", 1), ("rel0", 2))),
        GoldCase(id="g2", question=worlds.question(1), intent="fact", as_user="hr",
                 expect_sources=(("rel1", 1),))), path=None)
    ctx = worlds.context(target, worlds.policy_text(), goldset=gold)
    ctx.identities["hr"] = dataclasses.replace(ctx.identities["u"], name="hr", groups=("hr",))
    f = measure_funnel(ctx)
    assert {(x.case, x.key): x.stage for x in f.fates} == {
        ("g1", "ghost"): "not_in_index", ("g1", "rel0"): "top", ("g2", "rel1"): "rights"}


def test_the_funnel_round_trips_through_json(target):
    f = measure_funnel(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"')))
    d = f.to_dict()
    assert d["status"] == "measured" and d["method"] == "trace" and d["sources_total"] == 12
    route = d["routes"][0]
    assert route["route"] == "fact" and route["sources"] == 12 and route["gain"] == 24
    again = LossFunnel.from_dict(d)
    assert again.fates == f.fates and again.rows("fact") == f.rows("fact")


def test_without_a_goldset_the_funnel_is_skipped_and_says_why(target):
    f = measure_funnel(worlds.context(target, worlds.policy_text(), goldset=None))
    assert f.status == "skipped" and "no goldset" in f.reason
    assert f.to_dict() == {"status": "skipped", "reason": f.reason}


# ---- a live index: every stage is a probe, and the counts agree with the trace ----------------------
def test_probes_through_the_azure_emulator_agree_with_the_trace(target):
    pytest.importorskip("azure.search.documents")
    from azure.core.credentials import AzureKeyCredential

    from ragdiag.targets.azure import AzureTarget
    from ragdiag.targets.emulator import Emulator

    text = worlds.policy_text(filter='"zq_tier eq 1"', scoring_profile='"pageboost"')
    local = measure_funnel(worlds.context(target, text))
    with Emulator({"topics": target}, api_key="k-funnel") as emu:
        azure = AzureTarget(emu.url, "topics", credential=AzureKeyCredential("k-funnel"), backoff_s=0.005)
        try:
            # the emulator embeds query text through its vectorizer with the local target's embedder
            live = measure_funnel(worlds.context(azure, text))
        finally:
            azure.close()
    assert live.method == "probes" and local.method == "trace"
    assert live.not_derived  # says what a live index cannot show
    assert {(x.case, x.key): x.stage for x in live.fates} == {(x.case, x.key): x.stage for x in local.fates}
    # topics 9-11 pass the clause, and all three (i % 4 = 1, 2, 3) lose their document to the boost
    assert _counts(live) == {("filter", "zq_tier eq 1"): 9, ("boost", "pageboost"): 3}
