"""The ablation of every profile element, and the owner checks whose verdicts now rest on it.

On the topic world (`tests/worlds.py`), where each cause is planted: a clause on a field no rule
names that removes most relevant documents, a boost on a non-relevance field, a starved vector
k, each neutral counterpart, and a semantic text that hides the question from the reranker.
Every behaviour both ways: the owner fails the planted element and passes the neutral one.
"""

from __future__ import annotations

import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.engine.ablation import OWNERS, Ablation, elements_of, measure_ablation
from ragdiag.inputs.checklist import load_checklist
from ragdiag.policy import loads_policy
from tests import worlds


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return worlds.topic_world(tmp_path_factory.mktemp("ablation"))


def check(ctx, check_id):
    spec = load_checklist()[check_id]
    return run_check(resolve(spec), ctx, spec)


def _result(ab, element_id):
    r = ab.get(element_id)
    assert r is not None, [x.id for x in ab.results]
    return r


# ---- the catalogue of elements ---------------------------------------------------------------------
def test_every_element_kind_has_an_owner_check():
    assert set(OWNERS.values()) == {"prerank_filters", "pool_size", "reranker_scores", "shared_query_text"}


def test_elements_of_a_profile_name_what_neutralised_means():
    text = worlds.policy_text(filter='"zq_tier eq 1 and group_ids/any(g: g eq \'x\')"', scoring_profile='"pageboost"',
                              max_text_recall_size="20", vq_k="5", vq_weight="2.0")
    prof = loads_policy(text).profiles["fact"]
    els = {e.id: e for e in elements_of(prof, worlds.world_schema(), security_field="group_ids")}
    assert els["fact:filter_clause[1]"].neutral == "dropped" and els["fact:filter_clause[1]"].apply is not None
    # the security clause is never ablated
    sec = els["fact:filter_clause[2]"]
    assert sec.status == "not_ablatable" and sec.apply is None and sec.role == "access"
    assert els["fact:k[1]"].element == "k = 5" and els["fact:k[1]"].value == "50"
    assert els["fact:weight[1]"].element == "weight 2"
    assert els["fact:max_text_recall_size"].element == "max_text_recall_size 20"
    assert els["fact:scoring_profile"].element == "pageboost"
    assert els["fact:semantic_ranking"].apply(prof).query_type == "simple"
    assert els["fact:vector_filter_mode"].status == "at_default"
    assert els["fact:keyword_text"].status == "at_default"  # verbatim already


# ---- the measurement ----------------------------------------------------------------------------------
def test_a_clause_on_a_made_up_field_hurts_and_its_neutral_twin_does_not(target):
    ab = measure_ablation(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"')))
    r = _result(ab, "fact:filter_clause[1]")
    # 9 of 12 relevant documents come back when the clause is dropped: recall@50 0.25 -> 1.0
    assert r.metrics["recall@50"]["with"] == pytest.approx(3 / 12)
    assert r.metrics["recall@50"]["without"] == pytest.approx(1.0)
    assert r.metrics["recall@50"]["wins"] == 9 and r.metrics["recall@50"]["ties"] == 3
    assert r.verdict == "hurts" and r.metrics["recall@50"]["p_holm"] < 0.05
    neutral = _result(measure_ablation(worlds.context(target, worlds.policy_text(filter='"zq_tier ge 0"'))),
                      "fact:filter_clause[1]")
    assert neutral.verdict == "neutral" and neutral.metrics["recall@50"]["delta"] == 0


def test_a_test_where_no_question_changed_is_left_out_of_the_holm_family(target):
    ab = measure_ablation(worlds.context(target, worlds.policy_text(filter='"zq_tier ge 0"')))
    r = _result(ab, "fact:filter_clause[1]")
    assert r.metrics["recall@50"]["p"] == 1.0 and r.metrics["recall@50"]["p_holm"] == 1.0
    counted = sum(1 for x in ab.results for m in x.metrics.values() if m["wins"] or m["losses"])
    assert ab.family == counted


def test_holm_adjusts_within_the_profiles_family(target):
    ab = measure_ablation(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"')))
    from ragdiag.metrics import holm

    tested = {(x.id, m): v["p"] for x in ab.results for m, v in x.metrics.items() if v["wins"] or v["losses"]}
    expect = holm(tested)
    for (eid, m), p in expect.items():
        assert _result(ab, eid).metrics[m]["p_holm"] == pytest.approx(p)


def test_without_a_goldset_the_ablation_is_skipped_with_the_reason(target):
    ab = measure_ablation(worlds.context(target, worlds.policy_text(), goldset=None))
    assert ab.status == "skipped" and "no goldset" in ab.reason
    assert ab.to_dict() == {"status": "skipped", "reason": ab.reason}


def test_the_ablation_round_trips_through_json(target):
    ab = measure_ablation(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"')))
    again = Ablation.from_dict(ab.to_dict())
    assert [r.to_dict() for r in again.results] == [r.to_dict() for r in ab.results]


# ---- prerank_filters: a clause on a field no rule names ---------------------------------------------------
def test_prerank_filters_fails_a_made_up_clause_that_removes_most_relevant_documents(target):
    f = check(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"')), "prerank_filters")
    assert f.status == "fail", f.headline
    assert "'zq_tier eq 1' in the filter of profile fact removes 9 of 12 reachable relevant documents (75%)" \
        in f.headline
    assert "could not be classified" not in f.headline  # measured, not classified
    rows = {r["element"]: r for r in f.evidence_table("element_ablation").records()}
    assert rows["zq_tier eq 1"]["verdict"] == "hurts"
    assert any(e.test == "paired_ttest_holm" and e.after == pytest.approx(1.0) for e in f.effects)
    assert f.priority == "measured"


def test_prerank_filters_passes_a_made_up_clause_that_removes_nothing(target):
    f = check(worlds.context(target, worlds.policy_text(filter='"zq_tier ge 0"')), "prerank_filters")
    assert f.status == "pass", f.headline
    assert "zq_tier" not in " ".join(f.recommendations)
    assert f.observed["unclassified_clauses_measured"] == 1 and f.observed["elements_ablated"] == 1
    assert not f.effects


# ---- reranker_scores: a boost on a non-relevance field -------------------------------------------------------
def test_reranker_scores_fails_a_boost_that_reorders_by_page(target):
    f = check(worlds.context(target, worlds.policy_text(scoring_profile='"pageboost"')), "reranker_scores")
    assert f.status == "fail", f.headline
    assert "'pageboost' in profile fact costs ndcg@10: " in f.headline
    # every question gains the same when the boost goes (zero variance): Wilcoxon stands in
    abl = f.evidence_table("element_ablation").records()
    assert next(r for r in abl if r["element"] == "pageboost")["verdict"] == "hurts"
    boost = f.evidence_table("boost_losses").records()
    assert boost == [{"profile": "fact", "scoring_profile": "pageboost", "sources_pushed_out": 12,
                      "sources_pulled_in": 0, "sources_reachable": 12}]
    assert any("remove scoring profile pageboost" in r for r in f.recommendations)


def test_reranker_scores_passes_a_boost_that_changes_nothing(target):
    f = check(worlds.context(target, worlds.policy_text(scoring_profile='"flatboost"')), "reranker_scores")
    assert f.status == "pass", f.headline
    rows = {r["element"]: r["verdict"] for r in f.evidence_table("element_ablation").records()}
    assert rows["flatboost"] == "no measurable effect"
    assert f.evidence_table("boost_losses").records()[0]["sources_pushed_out"] == 0


# ---- pool_size: a starved k ------------------------------------------------------------------------------------
def test_pool_size_fails_a_k_that_loses_relevant_documents(target):
    # vector only, k = 1: the pool cannot fill the window (configured) and the k itself measurably
    # costs recall@50 (8 of 12 relevant documents come back with k = 50)
    f = check(worlds.context(target, worlds.policy_text(keyword_text='"none"', vq_k="1")), "pool_size")
    assert f.status == "fail"
    assert "'k = 1' in profile fact costs " in f.headline and "as configured, 1.000 with k = 50" in f.headline
    assert any(e.action == "profile fact: k = 50 instead of k = 1" for e in f.effects)


def test_pool_size_passes_when_no_owned_element_costs_anything(target):
    # exhaustive search finds the same neighbours on this small index: measured, neutral
    f = check(worlds.context(target, worlds.policy_text(vq_exhaustive="true")), "pool_size")
    assert f.status == "pass", f.headline
    assert f.metrics["elements_hurting"] == 0 and f.observed["elements_ablated"] >= 1


# ---- shared_query_text: the reranker given keywords instead of the question ----------------------------------------
def test_shared_query_text_fails_a_text_mode_that_costs(target):
    # the keyword string of "what about topic0?" is "topic0": the reranker (a key table) is blind
    # to text, so semantic text does not matter; the vector leg on keywords does (no table entry:
    # a hash-seeded vector), and dropping the question costs recall
    f = check(worlds.context(target, worlds.policy_text(keyword_text='"none"', vq_text='"keywords"')),
              "shared_query_text")
    assert f.status == "fail", f.headline
    assert "'text = keywords' in profile fact costs" in f.headline


def test_shared_query_text_passes_when_every_channel_gets_the_question(target):
    f = check(worlds.context(target, worlds.policy_text(keyword_text='"none"')), "shared_query_text")
    # (it warns that one text feeds the vector leg and the reranker: a rule about identical texts,
    # not a measured cost) no owned element measurably costs anything
    assert f.status != "fail" and "costs" not in f.headline
    assert f.metrics["elements_hurting"] == 0 and f.observed["elements_ablated"] >= 1


# ---- no goldset: the owners say so and judge what they can ---------------------------------------------------------
def test_without_a_goldset_the_owner_notes_that_nothing_was_ablated(target):
    f = check(worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"'), goldset=None), "prerank_filters")
    assert "no profile element was ablated (no goldset" in f.headline
    assert f.status == "warn"  # an unmeasured clause on an unknown field: never a pass


class _FailsWithoutBoost:
    """The topic world, except that every search without a scoring profile fails."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def fingerprint(self):
        return "fails-without-boost-" + self.inner.fingerprint()

    def search(self, request):
        from ragdiag.errors import TargetError

        if request.scoring_profile is None:
            raise TargetError("index unavailable (503)")
        return self.inner.search(request)


def test_a_what_if_that_could_not_run_is_not_measured_never_neutral(target):
    ctx = worlds.context(_FailsWithoutBoost(target), worlds.policy_text(scoring_profile='"pageboost"'))
    r = _result(measure_ablation(ctx), "fact:scoring_profile")
    assert r.verdict == "not_measured" and r.failed == 12 and r.reason == "index unavailable (503)"
    # its owner counts the failed requests: more than the spec tolerates is an error, not a pass
    f = check(ctx, "reranker_scores")
    assert f.status == "error" and f.incomplete["failed_requests"] >= 12
