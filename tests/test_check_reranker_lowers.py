"""reranker_scores says "the reranker makes ranking worse" only when the difference is significant.

The eight-document world of test_checks_minimal: the fused order puts the alpha documents d1-d4
(the relevant ones) first. A key-table reranker that scores the beta documents above them moves
every relevant document down; questions expecting different alpha documents lose by different
amounts, so the paired test has a spread to judge. Every question is the world's one question,
whose vector the fake embedder knows: the fused order is the same on every run. The claim must follow the check's own effect:
warned exactly when the measured drop is significant, never on a drop the same page calls noise.
"""

from __future__ import annotations

import pytest

from ragdiag.inputs.goldset import GoldCase, Goldset
from tests.test_check_reranker_scores import BOTH_HEALTHY, context, rr
from tests.test_checks_minimal import Q, _world

#: the relevant documents of each question (all alpha): different sets, different losses
EXPECTED = [("d1",), ("d2",), ("d3",), ("d4",), ("d1", "d2"), ("d3", "d4"), ("d1", "d4"), ("d2", "d3"),
            ("d1", "d2", "d3"), ("d2", "d3", "d4"), ("d1", "d2", "d3", "d4"), ("d1", "d3")]


def _goldset(n: int) -> Goldset:
    return Goldset(cases=tuple(
        GoldCase(id=f"f{i}", question=Q, intent="fact", as_user="u",
                 expect_sources=tuple((k, 1) for k in EXPECTED[i % len(EXPECTED)]))
        for i in range(n)), path=None)


def _effect(finding):
    return next((e for e in finding.effects if e.metric == "ndcg@10"), None)


@pytest.mark.parametrize("scores, questions, expect_significant", [
    # beta above every alpha document: every relevant document falls behind four others
    ({**{f"d{i}": 0.5 for i in range(1, 5)}, **{f"d{i}": 3.5 for i in range(5, 9)}}, 12, True),
    # the fused order is d1 d4 d2 d3 (keyword and vector legs rank the alpha documents in opposite
    # orders); the reranker moves d3 up and d2 behind one beta document: questions expecting d2
    # lose, those expecting d3 gain, the mean drops by a spread the paired test calls noise
    ({"d1": 3.6, "d4": 3.5, "d3": 3.4, "d2": 0.3, "d5": 0.5, "d6": 0.2, "d7": 0.2, "d8": 0.2}, 12, False),
])
def test_the_claim_follows_the_measured_drop(tmp_path, scores, questions, expect_significant):
    target = _world(tmp_path, scores)
    f = rr(context(target, BOTH_HEALTHY, goldset=_goldset(questions)))
    e = _effect(f)
    # the claim: the warning (it may stand behind a fail in the headline) and its recommendation
    said = [m.id for m in (*f.headline_msgs, *f.more_msgs, *f.recommendation_msgs)]
    claimed = any(i.endswith(("rerank_lowers", "rec_reranker_worse")) for i in said)
    # both cases are drops: the reranked order is worse than the fused one on these questions
    assert f.metrics["ndcg@10_reranked"] < f.metrics["ndcg@10_fused_order"]
    assert e is not None and e.significant is expect_significant, e
    assert claimed is expect_significant, (f.status, f.headline, said)
