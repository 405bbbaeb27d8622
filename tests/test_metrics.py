"""Hand-checkable tests of ragdiag.metrics: metrics by arithmetic, parity with pytrec_eval, compare()."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import pytrec_eval
from scipy.stats import ttest_rel, wilcoxon

from ragdiag.errors import RagdiagError
from ragdiag.metrics import (
    MRR,
    NDCG_10,
    Evaluation,
    compare,
    evaluate,
    hit_rate_at,
    judged_at,
    measure_names,
    recall_at,
    roc_auc,
    run_to_scores,
)

L2 = math.log2

# q1: three relevant keys, graded; q2: one relevant key; q3: judged but never run.
QRELS = {
    "q1": {"a": 3, "b": 1, "c": 1},
    "q2": {"x": 1},
    "q3": {"y": 2},
}
RUN = {
    "q1": ["z", "a", "b", "w"],
    "q2": ["p", "q", "x"],
    "extra": ["a", "b"],  # no qrels: ignored
}
K, RK = 2, 3


def hand_values() -> dict[str, dict[str, float]]:
    q1_dcg = 3 / L2(3) + 1 / L2(4)           # a (grade 3) at rank 2, b (grade 1) at rank 3
    q1_idcg = 3 / L2(2) + 1 / L2(3) + 1 / L2(4)
    return {
        "q1": {hit_rate_at(K): 1.0, recall_at(K): 1 / 3, recall_at(RK): 2 / 3, MRR: 1 / 2,
               NDCG_10: q1_dcg / q1_idcg, judged_at(K): 1 / 2},
        "q2": {hit_rate_at(K): 0.0, recall_at(K): 0.0, recall_at(RK): 1.0, MRR: 1 / 3,
               NDCG_10: (1 / L2(4)) / 1.0, judged_at(K): 0.0},
        "q3": dict.fromkeys(measure_names(K, RK), 0.0),
    }


def test_measure_names_and_constants():
    assert measure_names() == ("hit_rate@10", "recall@10", "recall@50", "mrr", "ndcg@10",
                               "judged@10")
    assert measure_names(10, 10) == ("hit_rate@10", "recall@10", "mrr", "ndcg@10", "judged@10")


def test_run_to_scores_strictly_descending_and_first_rank_wins():
    assert run_to_scores(["a", "b", "a", "c"]) == {"a": 4.0, "b": 3.0, "c": 1.0}


def test_evaluate_by_hand():
    ev = evaluate(RUN, QRELS, k=K, recall_k=RK)
    expected = hand_values()
    assert set(ev.per_query) == {"q1", "q2", "q3"}
    for qid, values in expected.items():
        for name, value in values.items():
            assert ev.per_query[qid][name] == pytest.approx(value), (qid, name)
    for name in ev.measures:
        mean = sum(expected[q][name] for q in expected) / 3
        assert ev.aggregate[name] == pytest.approx(mean), name
    assert ev.missing == ("q3",)


def test_ndcg_single_relevant_at_rank_2_hand_value():
    # Two relevant (grade 1) documents, one retrieved at rank 2.
    ev = evaluate({"q": ["n", "r1"]}, {"q": {"r1": 1, "r2": 1}})
    assert ev.per_query["q"][NDCG_10] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_agreement_with_pytrec_eval_directly():
    ev = evaluate(RUN, QRELS, k=K, recall_k=RK)
    evaluator = pytrec_eval.RelevanceEvaluator(
        QRELS, {"success.2", "recall.2,3", "recip_rank", "ndcg_cut.10"})
    run_scores = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in RUN.items()}
    direct = evaluator.evaluate(run_scores)
    for qid in ("q1", "q2"):
        got = ev.per_query[qid]
        assert got[hit_rate_at(K)] == pytest.approx(direct[qid]["success_2"])
        assert got[recall_at(K)] == pytest.approx(direct[qid]["recall_2"])
        assert got[recall_at(RK)] == pytest.approx(direct[qid]["recall_3"])
        assert got[MRR] == pytest.approx(direct[qid]["recip_rank"])
        assert got[NDCG_10] == pytest.approx(direct[qid]["ndcg_cut_10"])


def test_graded_relevance_changes_ndcg_not_recall():
    binary = evaluate({"q": ["b", "a"]}, {"q": {"a": 1, "b": 1}})
    graded = evaluate({"q": ["b", "a"]}, {"q": {"a": 3, "b": 1}})
    assert binary.per_query["q"][NDCG_10] == pytest.approx(1.0)
    # ideal order a, b: 3 + 1/log2(3); actual b, a: 1 + 3/log2(3)
    assert graded.per_query["q"][NDCG_10] == pytest.approx((1 + 3 / L2(3)) / (3 + 1 / L2(3)))
    assert graded.per_query["q"][recall_at(10)] == binary.per_query["q"][recall_at(10)] == 1.0


def test_rank_order_is_kept_not_resorted_by_docid():
    # With equal scores trec_eval would order b before a (docid descending); ranks must hold.
    ev = evaluate({"q": ["a", "b"]}, {"q": {"b": 1}})
    assert ev.per_query["q"][MRR] == pytest.approx(0.5)


def test_missing_and_empty_runs_count_as_zero():
    ev = evaluate({"q1": [], "q2": ["x"]}, {"q1": {"a": 1}, "q2": {"x": 1}, "q3": {"y": 1}})
    assert ev.missing == ("q1", "q3")
    for q in ("q1", "q3"):
        assert all(v == 0.0 for v in ev.per_query[q].values())
    assert ev.aggregate[MRR] == pytest.approx(1 / 3)


def test_queries_without_positive_judgments_are_ignored():
    ev = evaluate({"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 1}, "q2": {"b": 0}})
    assert set(ev.per_query) == {"q1"}


def test_judged_counts_non_relevant_judgments():
    ev = evaluate({"q": ["a", "n", "u"]}, {"q": {"a": 1, "n": 0}}, k=3)
    assert ev.per_query["q"][judged_at(3)] == pytest.approx(2 / 3)


def test_empty_qrels_gives_nan_aggregate():
    ev = evaluate({"q": ["a"]}, {})
    assert len(ev) == 0
    assert all(math.isnan(v) for v in ev.aggregate.values())


def test_subset_and_dataframe_and_repr():
    ev = evaluate(RUN, QRELS, k=K, recall_k=RK, name="fact")
    sub = ev.subset(["q1", "q3"])
    assert set(sub.per_query) == {"q1", "q3"}
    assert sub.aggregate[MRR] == pytest.approx(0.25)
    df = ev.to_dataframe()
    assert list(df.columns) == list(measure_names(K, RK))
    assert df.loc["q2", MRR] == pytest.approx(1 / 3)
    assert "fact" in repr(ev) and "<table>" in ev._repr_html_()


def _ev(values: dict[str, float], name: str) -> Evaluation:
    per_query = {q: dict.fromkeys(measure_names(), 0.0) | {NDCG_10: v} for q, v in values.items()}
    return Evaluation(per_query=per_query, aggregate={}, name=name)


def test_compare_wins_ties_losses_and_pvalues():
    a = _ev({"q1": 0.5, "q2": 0.2, "q3": 0.7, "q4": 0.4, "q5": 0.1, "qa": 0.3}, "base")
    b = _ev({"q1": 0.6, "q2": 0.2, "q3": 0.9, "q4": 0.3, "q5": 0.5, "qb": 0.9}, "route")
    c = compare(a, b)
    shared = ["q1", "q2", "q3", "q4", "q5"]
    assert c.n == 5
    assert (c.wins, c.ties, c.losses) == (3, 1, 1)
    assert c.deltas["q5"] == pytest.approx(0.4)
    assert c.mean_delta == pytest.approx((0.1 + 0 + 0.2 - 0.1 + 0.4) / 5)
    xs = [a.per_query[q][NDCG_10] for q in shared]
    ys = [b.per_query[q][NDCG_10] for q in shared]
    assert c.p_ttest == pytest.approx(ttest_rel(ys, xs).pvalue)
    assert c.p_wilcoxon == pytest.approx(wilcoxon(ys, xs).pvalue)
    assert c.significant() == (c.p_ttest < 0.05)
    assert c.significant(alpha=1.0)
    assert c.only_in_a == ("qa",) and c.only_in_b == ("qb",)
    d = c.to_dict()
    assert d["wins"] == 3 and d["a"] == "base" and d["b"] == "route"
    assert "3 wins / 1 ties / 1 losses" in repr(c)


def test_compare_all_ties():
    a = _ev({"q1": 0.5, "q2": 0.2, "q3": 0.0}, "a")
    c = compare(a, _ev({"q1": 0.5, "q2": 0.2, "q3": 0.0}, "b"))
    assert (c.wins, c.ties, c.losses) == (0, 3, 0)
    assert c.p_ttest == 1.0 and c.p_wilcoxon == 1.0
    assert not c.significant()


def test_compare_degenerate_cases_do_not_crash():
    one = compare(_ev({"q": 0.1}, "a"), _ev({"q": 0.4}, "b"))
    assert one.wins == 1 and math.isnan(one.p_ttest) and not one.significant()
    const = compare(_ev({"q1": 0.1, "q2": 0.2}, "a"), _ev({"q1": 0.3, "q2": 0.4}, "b"))
    assert const.wins == 2 and not const.significant()
    none = compare(_ev({"q1": 0.1}, "a"), _ev({"q2": 0.1}, "b"))
    assert none.n == 0 and math.isnan(none.mean_delta)


def test_compare_unknown_metric():
    with pytest.raises(RagdiagError, match="no metric"):
        compare(_ev({"q": 0.1}, "a"), _ev({"q": 0.1}, "b"), metric="map")


def test_compare_on_real_evaluations():
    good = evaluate({"q1": ["a"], "q2": ["x"]}, QRELS)
    bad = evaluate({"q1": ["z", "a"], "q2": ["x"]}, QRELS)
    c = compare(bad, good, metric=MRR)
    assert c.deltas == {"q1": pytest.approx(0.5), "q2": 0.0, "q3": 0.0}
    assert (c.wins, c.ties, c.losses) == (1, 2, 0)


def test_roc_auc_by_hand():
    # pairs: .9>.5 .9>.3 .8>.5 .8>.3 .4<.5 .4>.3 -> 5 of 6
    assert roc_auc([0.9, 0.8, 0.4], [0.5, 0.3]) == pytest.approx(5 / 6)
    assert roc_auc([1.0], [1.0]) == pytest.approx(0.5)
    assert roc_auc([0.0], [1.0]) == 0.0
    assert math.isnan(roc_auc([], [0.1])) and math.isnan(roc_auc([0.1], []))


def test_import_is_cheap():
    code = "import sys, ragdiag.metrics; print('ir_measures' in sys.modules, 'scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_judged_matches_ir_measures_on_random_runs():
    """judged@k is counted by hand (a second ir-measures pass cost 3x the evaluation):
    it must equal ir-measures' Judged@k, including runs shorter than k and repeated keys."""
    import random

    import ir_measures

    from ragdiag.metrics import _ir_measures_for, run_to_scores

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(40)]
    qrels = {f"q{i}": {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(docs, 12)} for i in range(30)}
    qrels = {q: j for q, j in qrels.items() if any(g >= 1 for g in j.values())}
    run = {q: [rng.choice(docs) for _ in range(rng.randint(1, 25))] for q in qrels}
    for k in (1, 5, 10):
        ours = evaluate(run, qrels, k=k)
        measure = _ir_measures_for(k, 50)[judged_at(k)]
        scored = {q: run_to_scores(r) for q, r in run.items()}
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, scored)}
        for q in qrels:
            assert ours.per_query[q][judged_at(k)] == pytest.approx(theirs.get(q, 0.0)), (q, k)


def test_roc_auc_equals_mann_whitney_with_ties():
    import random

    from scipy.stats import mannwhitneyu

    rng = random.Random(11)
    for _ in range(50):
        pos = [rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 3.5]) for _ in range(rng.randint(1, 30))]
        neg = [rng.choice([0.0, 0.5, 1.0, 2.5]) for _ in range(rng.randint(1, 30))]
        u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
        assert roc_auc(pos, neg) == pytest.approx(float(u) / (len(pos) * len(neg)), abs=1e-12)
