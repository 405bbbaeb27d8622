"""Check 1's top-1 score bands, one function for the measured and the observed scores.

The spec's bands (reranker_scores.toml): a median below fail_median_top1 = 1.0 fails, below
warn_median_top1 = 2.0 warns; more than warn_share_below = 30 % of the top-1 scores below
warn_share_threshold = 1.5 warns. The worlds sit on each edge and one step beside it, and the
measured check (goldset questions through a local target) and the observed one (recorded
responses) must give the same verdict on the same scores.
"""

from __future__ import annotations

import dataclasses

import pytest

from ragdiag.checks._reranker_bands import Bands, judge
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from tests.test_check_prerank_filters import check
from tests.test_check_reranker_scores import BOTH_HEALTHY, Wrapped
from tests.test_checks_minimal import GOOD_SCORES, _world
from tests.test_checks_observed import run, search, semantic, write_traffic

BANDS = Bands.from_spec(load_checklist()["reranker_scores"])

#: ten top-1 scores each: (name, scores, verdict)
EDGES = [
    ("median on the fail edge", [1.0] * 10, "warn"),  # 1.0 is not < 1.0; still < 2.0, and all below 1.5
    ("median below the fail edge", [0.99] * 10, "fail"),
    ("median on the warn edge", [2.0] * 10, "ok"),
    ("median below the warn edge", [1.99] * 10, "warn"),
    ("share on its edge", [1.4] * 3 + [3.0] * 7, "ok"),  # 3 / 10 = 30 % is not > 30 %
    ("share above its edge", [1.4] * 4 + [3.0] * 6, "warn"),
    ("scores on the share threshold", [1.5] * 3 + [3.0] * 7, "ok"),  # 1.5 is not < 1.5
]


def test_the_spec_bands_are_the_ones_this_file_reasons_with():
    assert (BANDS.fail_median, BANDS.warn_median, BANDS.warn_share, BANDS.share_threshold) == (1.0, 2.0, 0.30, 1.5)


@pytest.mark.parametrize(("name", "scores", "verdict"), EDGES, ids=[e[0] for e in EDGES])
def test_judge_on_the_band_edges(name, scores, verdict):
    j = judge(scores, BANDS)
    assert j.verdict == verdict
    assert j.median == sorted(scores)[4] / 2 + sorted(scores)[5] / 2
    assert j.share_below_threshold == sum(s < 1.5 for s in scores) / 10


def test_judge_names_the_edge_the_median_fell_below():
    assert (judge([0.5], BANDS).median_level, judge([0.5], BANDS).median_min) == ("fail", 1.0)
    assert (judge([1.5], BANDS).median_level, judge([1.5], BANDS).median_min) == ("warn", 2.0)
    assert (judge([3.0], BANDS).median_level, judge([3.0], BANDS).median_min) == (None, None)
    with pytest.raises(ValueError):
        judge([], BANDS)


# ---- the two checks on the same scores ------------------------------------------------------------
QUESTIONS = [f"alpha question number {i}" for i in range(10)]  # all of intent fact: profile healthy


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return _world(tmp_path_factory.mktemp("bands"), GOOD_SCORES)


def _measured(target, scores: list[float]):
    top1 = dict(zip(QUESTIONS, scores, strict=True))

    def scored(inner, request):
        t = inner.search(request)
        first = top1[request.effective_semantic_text]
        return dataclasses.replace(t, hits=tuple(dataclasses.replace(h, reranker_score=first - 0.001 * i)
                                                 for i, h in enumerate(t.hits)))

    gold = Goldset(cases=tuple(GoldCase(id=f"q{i}", question=q, intent="fact", as_user="u",
                                        expect_sources=(("d1", 1),)) for i, q in enumerate(QUESTIONS)), path=None)
    ctx = AuditContext(config=None, target=Wrapped(target, scored), runner=Runner(Wrapped(target, scored)),
                       policy=loads_policy(BOTH_HEALTHY), goldset=gold, identities={"u": Identity("u", ("all",))})
    return check(ctx, "reranker_scores")


def _observed(tmp_path, scores: list[float]):
    recs = [search(semantic(), seq=i + 1, reranker=[s, s - 0.001, s - 0.002]) for i, s in enumerate(scores)]
    return run("reranker_scores", tmp_path, traffic=[write_traffic(tmp_path, recs)])


def _band_messages(finding) -> set[str]:
    """Which band messages the finding raised, named alike for both paths."""
    ids = {m.id.rsplit(".", 1)[-1] for m in finding.headline_msgs}
    return {i.removeprefix("rr_") for i in ids if i.removeprefix("rr_") in ("median_below", "share_below")}


@pytest.mark.parametrize(("name", "scores", "verdict"), EDGES, ids=[e[0] for e in EDGES])
def test_measured_and_observed_scores_get_the_same_verdict(target, tmp_path, name, scores, verdict):
    measured, observed = _measured(target, scores), _observed(tmp_path, scores)
    status = {"ok": "pass", "warn": "warn", "fail": "fail"}[verdict]
    # a trace holds scores as float32 (0.99 comes back as 0.99000001); the edges 1.0, 1.5, 2.0 are exact
    assert measured.metrics["median_top1[healthy]"] == pytest.approx(observed.metrics["observed_median_top1"], rel=1e-6)
    assert (measured.status, observed.status) == (status, status), (measured.headline, observed.headline)
    assert _band_messages(measured) == _band_messages(observed)
    table = measured.evidence_table("scores_per_profile").records()
    assert [r["verdict"] for r in table] == [verdict]
