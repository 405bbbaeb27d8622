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


def test_only_the_last_runs_are_held_and_a_forgotten_run_is_rebuilt_without_searching(tmp_path):
    import gc

    from ragdiag.engine import context, probes

    ctx = _ctx(tmp_path, SOUND, GOOD_SCORES)
    ctx.goldset = Goldset(cases=(ANSWERABLE,))
    first_ranking = ctx.run_gold(ctx.policy, cases=[ANSWERABLE]).ranked()  # not held by the test
    # more other runs than the context keeps: the first one is dropped
    for k in range(context.GOLD_RUNS_KEPT + 1):
        ctx.run_gold(ctx.policy, cases=[ANSWERABLE], probe=probes.pool(10 + k))
    gc.collect()
    assert len(ctx._gold_cache) == context.GOLD_RUNS_KEPT
    assert all(ref() is None or key in ctx._gold_cache for key, (_p, ref) in ctx._gold_alive.items())
    sent = ctx.runner.stats.sent
    again = ctx.run_gold(ctx.policy, cases=[ANSWERABLE])
    assert again.ranked() == first_ranking
    assert ctx.runner.stats.sent == sent  # its traces come from the runner, nothing is searched


def test_a_run_a_check_still_holds_is_the_same_object_past_the_bound(tmp_path):
    from ragdiag.engine import context, probes

    ctx = _ctx(tmp_path, SOUND, GOOD_SCORES)
    ctx.goldset = Goldset(cases=(ANSWERABLE,))
    held = ctx.run_gold(ctx.policy, cases=[ANSWERABLE])
    for k in range(context.GOLD_RUNS_KEPT + 2):
        ctx.run_gold(ctx.policy, cases=[ANSWERABLE], probe=probes.pool(10 + k))
    assert ctx.run_gold(ctx.policy, cases=[ANSWERABLE]) is held
