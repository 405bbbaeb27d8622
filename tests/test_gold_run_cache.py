"""Goldset runs are cached per case content, not per case id: a draft and a real goldset can
share ids (q1, q2, ...) and must not share rankings."""

from __future__ import annotations

from dataclasses import replace

from ragdiag.inputs.goldset import Goldset
from tests.test_check_goldset import ANSWERABLE
from tests.test_checks_minimal import GOOD_SCORES, SOUND, _ctx


def test_same_ids_other_questions_are_searched_again(tmp_path):
    ctx = _ctx(tmp_path, SOUND, GOOD_SCORES)
    ctx.goldset = Goldset(cases=(ANSWERABLE,))
    first = ctx.run_gold(ctx.policy, cases=[ANSWERABLE])
    assert ctx.run_gold(ctx.policy, cases=[ANSWERABLE]) is first  # the same cases: cached
    other = replace(ANSWERABLE, question="A different question with the same id")
    second = ctx.run_gold(ctx.policy, cases=[other])
    assert second is not first
    assert [q.case.question for q in second.queries] == [other.question]
