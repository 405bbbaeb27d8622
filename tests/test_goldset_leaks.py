"""Leaks the goldset judges (`ragdiag.checks._goldset_leaks`), on the world of `tests.leak_world`:
a restricted document readable by the wrong group is a leak by the goldset's judgement, though
no document lies outside the identity's groups as the index records them."""

from __future__ import annotations

from ragdiag.checks._goldset_leaks import judged_leaks
from tests import leak_world as w


def _leaks(tmp_path, groups, gs=None):
    ctx = w.context(tmp_path, groups, gs)
    return judged_leaks(ctx, ctx.run_gold(ctx.policy))


def test_a_restricted_document_readable_by_the_wrong_group_is_a_judged_leak(tmp_path):
    leaks, judged = _leaks(tmp_path, w.LEAKY_GROUPS)
    # judged: the refused twin salary-u and d4-u (forbidden_sources); salary-hr and open forbid nothing
    assert judged == {"salary-u", "d4-u"}
    assert [(j.case_id, j.as_user, j.keys, j.by) for j in leaks] == [("salary-u", "u", ("d3",), ("salary-hr",))]
    # u may read d1, d2, d3 (wrongly), d5: four hits in top 5, vectors rank d1..d5 in key order -> d3 third
    assert leaks[0].ranks == (3,) and leaks[0].profile == "p"


def test_the_sound_index_leaks_nothing_the_goldset_forbids(tmp_path):
    leaks, judged = _leaks(tmp_path, w.SOUND_GROUPS)
    assert leaks == [] and judged == {"salary-u", "d4-u"}


def test_forbidden_sources_alone_judge_a_case(tmp_path):
    # d4 readable by everyone: u retrieves it, which its forbidden_sources forbid
    leaks, judged = _leaks(tmp_path, {**w.SOUND_GROUPS, "d4": ["all"]}, w.goldset(twins=False))
    assert judged == {"d4-u"}
    assert [(j.case_id, j.keys, j.by) for j in leaks] == [("d4-u", ("d4",), ("forbidden_sources",))]


def test_a_twin_asked_by_the_same_identity_forbids_nothing(tmp_path):
    from ragdiag.inputs.goldset import GoldCase, Goldset

    gs = Goldset(cases=(GoldCase(id="a", question=w.SALARY_Q, as_user="u", expect_sources=(("d3", 1),)),
                        GoldCase(id="b", question=w.SALARY_Q, as_user="u", expect_refused=True)))
    leaks, judged = _leaks(tmp_path, w.LEAKY_GROUPS, gs)
    assert leaks == [] and judged == set()  # a contradiction of the goldset, reported as a duplicate
    assert gs.duplicate_questions() == [("what does marie earn", ["a", "b"])]


def test_cited_chunks_count_too(tmp_path):
    ctx = w.context(tmp_path, w.SOUND_GROUPS)
    leaks, _ = judged_leaks(ctx, ctx.run_gold(ctx.policy), cited={"d4-u": ("d4",)})
    assert [(j.case_id, j.keys, j.ranks) for j in leaks] == [("d4-u", ("d4",), (0,))]
