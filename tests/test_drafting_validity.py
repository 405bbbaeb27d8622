"""Validity of a draft without judgements: do the real questions behave like the drafted ones?

Constructed worlds with three profiles told apart by `top` (p10, p20, p30) and a target whose
rankings are written out per kind of question, so every figure below is checkable by hand:

- drafted lookups "lookup kN" (source kN): p10 [kN, a, b, x10], p20 [kN, b, a, x20],
  p30 [x30, a, kN, b]: p10 and p20 find kN first (nDCG 1), p30 third (1 / log2(4) = 0.5);
- real lookups "lookup k100" ...: the same lists: the real workload is what was drafted;
- real topical requests "topic tN": p10 [u1, u2, u3, u4], p20 [v1, v2, u1, u2],
  p30 [w1, v1, u1, w2]: three different first hits;
- real lookups on which the profiles' order flips, "seek kN": p10 [x10, a, kN, b],
  p20 [kN, b, a, x20], p30 [kN, a, b, x30].
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from ragdiag.drafting.agreement import expected_agreement
from ragdiag.drafting.case import DraftCase
from ragdiag.drafting.draft import Draft
from ragdiag.drafting.validity import (
    FIRST_HIT_GAP,
    LENGTH_RATIO,
    MIN_REAL_QUESTIONS,
    POOLED_TAU,
    compare_workloads,
    real_questions_of,
)
from tests.drafting_worlds import ByTopTarget, tops_policy


class _WorkloadTarget(ByTopTarget):
    def rankings(self, request):
        kind, key = request.search.split()[:2]
        return {
            "lookup": ([key, "a", "b", "x10"], [key, "b", "a", "x20"], ["x30", "a", key, "b"]),
            "topic": (["u1", "u2", "u3", "u4"], ["v1", "v2", "u1", "u2"], ["w1", "v1", "u1", "w2"]),
            "seek": (["x10", "a", key, "b"], [key, "b", "a", "x20"], [key, "a", "b", "x30"]),
        }[kind]


_policy = tops_policy


def _drafts():
    cases = [DraftCase(f"c{i}", f"lookup k{i}", "fact", "fact", "en", sources=[(f"k{i}", 1)]) for i in range(10)]
    return [Draft(list(cases), 0, 10), Draft(list(cases), 1, 10)]


def _real(kind: str, n: int = 12) -> list[str]:
    return [f"{kind} k{i + 100}" for i in range(n)]


def test_real_lookups_like_the_drafted_ones_make_a_consistent_draft_trusted():
    a = expected_agreement(_WorkloadTarget(), _policy(), _drafts(), real_questions=_real("lookup"),
                           real_source="questions of the query log")
    w = a["workload"]
    # pooled judgements: {k, a, b} (in the top 10 of all three); p10 and p20 hold them at ranks
    # 1-3 (nDCG 1), p30 at 2-4: the same order on both question sets
    assert w["drafted"]["pooled"]["p30"] == pytest.approx(
        (1 / math.log2(3) + 1 / 2 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / 2), abs=1e-4)
    assert w["drafted"]["first_hit"] == 1.0 and w["real"]["first_hit"] == 1.0
    assert w["pooled_tau"] == 1.0 and w["resembles"] is True and w["reasons"] == []
    assert a["tau"] == 1.0 and a["status"] == "trusted" and a["trusted"] is True
    assert "questions of the query log behave like the drafted ones" in a["verdict"]


def test_topical_real_questions_against_drafted_lookups_cannot_say():
    a = expected_agreement(_WorkloadTarget(), _policy(), _drafts(), real_questions=_real("topic"))
    w = a["workload"]
    # three different first hits on every real question; on the drafted ones p10 and p20 agree
    assert w["real"]["first_hit"] == 0.0 and w["drafted"]["first_hit"] == 1.0 > FIRST_HIT_GAP
    assert w["resembles"] is False and any("lookups of one record" in r for r in w["reasons"])
    # the draft agrees with itself (the same cases), and that is not enough
    assert a["tau"] == 1.0 and a["trusted"] is False and a["status"] == "cannot say"
    assert "cannot say whether real judgements would rank them so" in a["verdict"]


def test_real_lookups_that_rank_the_profiles_the_other_way_cannot_say():
    w = compare_workloads(_WorkloadTarget(), _policy().profiles, [f"lookup k{i}" for i in range(10)],
                          _real("seek"), security_field="group_ids")
    # real: p10 holds the pool {k, a, b} at ranks 2-4, p20 and p30 at 1-3: p20 = p30 > p10;
    # drafted: p10 = p20 > p30. tau-b of (1, 1, .73) vs (.73, 1, 1): one discordant pair, one
    # tie in each list: -1 / sqrt(2 * 2)
    assert w["real"]["first_hit"] == 1.0
    assert w["pooled_tau"] == pytest.approx(-0.5, abs=1e-3) and w["pooled_tau"] < POOLED_TAU
    assert w["resembles"] is False and len(w["reasons"]) == 1 and "pooled agreement order" in w["reasons"][0]


def test_real_questions_much_longer_than_the_drafted_ones_cannot_say():
    long = [f"lookup k{i} " + " ".join(f"subject{j}" for j in range(8)) for i in range(12)]
    w = compare_workloads(_WorkloadTarget(), _policy().profiles, [f"lookup k{i}" for i in range(10)], long,
                          security_field="group_ids")
    # 'lookup k1': 2 content words; the long ones 10
    assert (w["drafted"]["words"], w["real"]["words"]) == (2.0, 10.0) and 10 / 2 > LENGTH_RATIO
    assert w["resembles"] is False and any("content words" in r for r in w["reasons"])


def test_without_real_questions_a_consistent_draft_is_unmeasured_never_trusted():
    a = expected_agreement(_WorkloadTarget(), _policy(), _drafts())
    assert a["tau"] == 1.0 and a["workload"] is None
    assert a["trusted"] is False and a["status"] == "unmeasured"
    assert "consistent with itself, validity unmeasured" in a["verdict"]
    few = expected_agreement(_WorkloadTarget(), _policy(), _drafts(), real_questions=_real("lookup", 3))
    assert few["workload"]["resembles"] is None and few["status"] == "unmeasured" and few["trusted"] is False
    assert f"at least {MIN_REAL_QUESTIONS} needed" in few["verdict"]


def test_an_inconsistent_draft_is_not_trusted_whatever_the_real_questions():
    one = [DraftCase("c1", "lookup kx", "fact", "fact", "en", sources=[("kx", 1)])]
    other = [DraftCase("c1", "lookup kz", "fact", "fact", "en", sources=[("a", 1)])]
    a = expected_agreement(_WorkloadTarget(), _policy(), [Draft(one, 0, 1), Draft(other, 1, 1)],
                           real_questions=_real("lookup"))
    # seed 0 judges kx (p10 = p20 = 1 > p30 0.5), seed 1 judges a (p10 0.63 = p30 0.63 > p20 0.5)
    assert a["tau"] < 0.8 and a["status"] == "not trusted" and a["trusted"] is False
    assert a["workload"] is None  # nothing to compare once the draft disagrees with itself


def test_real_questions_come_from_the_query_log_else_the_goldset_questions(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"timestamp": "2026-05-04T09:12:33Z", "question": "Which notice period?", "route": "fact"}\n',
                   encoding="utf-8")
    gold = tmp_path / "gold.yaml"
    gold.write_text("- id: g1\n  question: What is MX-2850?\n  expect_sources: [a]\n", encoding="utf-8")
    cfg = SimpleNamespace(query_log=log, goldset=gold, goldset_topics=None)
    assert real_questions_of(cfg) == (["Which notice period?"], "questions of the query log")
    assert real_questions_of(SimpleNamespace(query_log=None, goldset=gold, goldset_topics=None)) \
        == (["What is MX-2850?"], "questions of the goldset")
    none, why = real_questions_of(SimpleNamespace(query_log=None, goldset=None, goldset_topics=None))
    assert none == [] and "no [inputs] query_log or goldset" in why
