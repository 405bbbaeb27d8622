"""route_counts on the eight-document world of test_checks_minimal: routes judged by traffic and
by goldset gain, one route is skipped, unmeasured routes never pass, failures, figure, German."""

from __future__ import annotations

from ragdiag.checks import resolve, run_check
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from tests.checkhelp import (
    FailingTarget,
    assert_failures_make_error,
    assert_figure_binding,
    assert_german,
)
from tests.test_checks_minimal import FAULTY, GOOD_SCORES, SOUND, _ctx

ID = "route_counts"
# the faulty world's profiles, the fact questions routed to the wide profile
SWAPPED = FAULTY.replace('fact = "fact"\ncomparison = "compare"', 'fact = "compare"\ncomparison = "fact"')


def _check(ctx):
    spec = load_checklist()[ID]
    return run_check(resolve(spec), ctx, spec)


def test_traffic_both_ways(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, GOOD_SCORES, goldset=False, log_routes=["fact"] * 99 + ["comparison"]))
    # comparison gets 1 of 100 requests = 1 % < 2 %
    assert bad.status == "warn"
    assert bad.headline == "route 'comparison' receives 1% of traffic (< 2%)"
    assert {r["route"]: r["share"] for r in bad.evidence_table("traffic").records()} == {"fact": 0.99,
                                                                                      "comparison": 0.01}
    good = _check(_ctx(tmp_path / "b", FAULTY, GOOD_SCORES, goldset=False, log_routes=["fact", "comparison"] * 50))
    assert good.status == "pass", good.headline
    assert good.observed == {"routes_by_traffic": 2}
    assert good.headline == "2 routed profiles earn their upkeep: 2 with at least 2% of 100 logged requests"


def test_goldset_gain_both_ways(tmp_path):
    bad = _check(_ctx(tmp_path / "a", FAULTY, GOOD_SCORES))
    # fact (vector only, k = 3, confidence >= 0.85) ranks d3, d2, d1: nDCG@10 = 2.131 / 2.562 = 0.832;
    # the wide profile 'compare' ranks d1-d4 first: 1.0. Delta -16.8 points, one question: no p-value
    assert bad.status == "warn"
    assert bad.headline == "route 'fact' (fact) is not measurably better than 'compare' (-16.8 nDCG points, p=n/a)"
    row = bad.evidence_table("route_gain").records()[0]
    assert round(row["ndcg_route"], 3) == 0.832 and row["ndcg_best"] == 1.0 and row["earns_upkeep"] is False
    good = _check(_ctx(tmp_path / "b", SWAPPED, GOOD_SCORES))
    # the fact route now uses the best single profile itself: it earns its upkeep
    assert good.status == "pass", good.headline
    assert good.observed == {"routes_by_gain": 1}
    assert "1 of 1 measurably better than 'compare'" in good.headline
    assert_german(bad)


def test_one_route_is_skipped(tmp_path):
    f = _check(_ctx(tmp_path, SOUND, GOOD_SCORES, log_routes=["fact"] * 100))
    assert f.status == "skipped"
    assert f.skipped_reason == "one route: nothing to merge (every question goes to profile 'fact')"


def test_no_query_log_and_no_goldset_is_skipped(tmp_path):
    f = _check(_ctx(tmp_path, FAULTY, GOOD_SCORES, goldset=False))
    assert f.status == "skipped" and "no query log was supplied" in f.skipped_reason


def test_unmatched_log_routes_measure_nothing(tmp_path):
    # the log names routes the policy does not have: no route is measured, nothing passes
    f = _check(_ctx(tmp_path, FAULTY, GOOD_SCORES, goldset=False, log_routes=["unknown"] * 10))
    assert f.status == "skipped", f.headline
    assert "none of the 2 routes could be measured" in f.skipped_reason
    assert not f.observed


def test_every_request_failing_is_an_error(tmp_path):
    ctx = _ctx(tmp_path, SWAPPED, GOOD_SCORES)
    failing = FailingTarget(ctx.target, "index offline (test)")
    ctx.target, ctx.runner = failing, Runner(failing)
    assert_failures_make_error(_check(ctx), "index offline (test)")


def test_figure_reads_traffic_and_gain(tmp_path):
    f = _check(_ctx(tmp_path, FAULTY, GOOD_SCORES, log_routes=["fact"] * 99 + ["comparison"]))
    assert f.evidence_table("traffic") is not None and f.evidence_table("route_gain") is not None
    assert_figure_binding(f, "traffic", "share")
    assert_figure_binding(f, "route_gain", "delta_points")
    de = assert_german(f)
    assert de.evidence_table("traffic").columns == ("Route", "Anfragen", "Anteil", "Klassifikation p50 ms")


def test_a_route_significantly_below_the_best_profile_is_called_worse(tmp_path, monkeypatch):
    """One question cannot be significant, so the comparison's p-value is set: the decision
    between "not measurably better" and "measurably worse" is what is under test."""
    from dataclasses import replace

    import ragdiag.metrics as metrics

    real = metrics.compare
    monkeypatch.setattr(metrics, "compare", lambda *a, **k: replace(real(*a, **k), p_ttest=0.003))
    worse = _check(_ctx(tmp_path / "a", FAULTY, GOOD_SCORES))
    assert worse.status == "warn"
    assert worse.headline == ("route 'fact' (fact) is measurably worse than 'compare' (-16.8 nDCG points, "
                              "p=0.003): its questions would do better without the route")
    assert_german(worse)
    monkeypatch.setattr(metrics, "compare", lambda *a, **k: replace(real(*a, **k), p_ttest=0.4))
    unclear = _check(_ctx(tmp_path / "b", FAULTY, GOOD_SCORES))
    assert unclear.headline.startswith("route 'fact' (fact) is not measurably better than 'compare'")


def test_a_low_traffic_route_that_earns_its_gain_is_not_told_to_merge(tmp_path):
    """Traffic and gain together: 'fact' gets 1 % of traffic in both worlds; where its profile is
    the best single profile (its table row says "earns upkeep: yes") no sentence tells the client
    to merge it, where it is not, the merge recommendation stands."""
    log = ["comparison"] * 99 + ["fact"]
    earns = _check(_ctx(tmp_path / "a", SWAPPED, GOOD_SCORES, log_routes=log))
    assert earns.evidence_table("route_gain").records()[0]["earns_upkeep"] is True
    assert any(m.id == "route_counts.low_traffic" for m in earns.headline_msgs)
    assert not [m for m in earns.recommendation_msgs if m.id == "route_counts.rec_merge_low_traffic"]
    loses = _check(_ctx(tmp_path / "b", FAULTY, GOOD_SCORES, log_routes=log))
    assert loses.evidence_table("route_gain").records()[0]["earns_upkeep"] is False
    assert [m.params["route"] for m in loses.recommendation_msgs
            if m.id == "route_counts.rec_merge_low_traffic"] == ["fact"]
