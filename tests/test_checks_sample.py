"""The six runtime checks on the sample system, both ways: the misconfigured production
policy is flagged with the right evidence, the tuned policy does not fail."""

from __future__ import annotations

import pytest

from ragdiag.checks import resolve, run_check

pytestmark = pytest.mark.slow


def _run(ctx, checklist, check_id):
    spec = checklist[check_id]
    return run_check(resolve(spec), ctx, spec)


def _rows(finding, title_start):
    for e in finding.evidence:
        if e.title.startswith(title_start):
            return [dict(zip(e.columns, r, strict=True)) for r in e.rows]
    raise AssertionError(f"no evidence table starting with {title_start!r}: "
                         f"{[e.title for e in finding.evidence]}")


RUNTIME = ("reranker_scores", "pool_size", "prerank_filters", "shared_query_text", "route_counts", "goldset")


@pytest.mark.parametrize("check_id", [c for c in RUNTIME if c != "reranker_scores"])
def test_tuned_policy_does_not_fail(tuned_ctx, checklist, check_id):
    f = _run(tuned_ctx, checklist, check_id)
    assert f.status in ("pass", "warn"), f"{check_id}: {f.status}: {f.headline}"


def test_tuned_policy_reranks_overview_into_a_worse_order_measured_per_profile(tuned_ctx, checklist):
    # pooled over every semantic profile reranking helps, but the ablation measures each profile
    # apart: on overview questions (document and section records expected) the offline ranker
    # puts evidence chunks first, and the fused order is far better
    f = _run(tuned_ctx, checklist, "reranker_scores")
    assert f.status == "fail"
    assert "'semantic ranking' in profile overview costs ndcg@10" in f.headline
    rows = {(r["profile"], r["kind"]): r for r in f.evidence_table("element_ablation").records()}
    overview = rows[("overview", "semantic_ranking")]
    assert overview["verdict"] == "hurts" and overview["ndcg10_without"] > overview["ndcg10_with"] + 0.1
    assert rows[("verification", "semantic_ranking")]["verdict"] == "helps"
    assert f.metrics["ndcg@10_reranked"] > f.metrics["ndcg@10_fused_order"]  # pooled: it helps


def test_pool_size_names_the_starved_definition_route(misconfigured_ctx, checklist):
    f = _run(misconfigured_ctx, checklist, "pool_size")
    assert f.status == "fail"
    assert "definition" in f.headline and "20" in f.headline
    config = {r["profile"]: r for r in _rows(f, "Configured pool per profile")}
    assert config["definition"]["configured pool"] == 20
    measured = {r["profile"]: r for r in _rows(f, "Measured pool after filters")}
    assert int(measured["definition"]["median"]) < 50
    assert "postFilter" in measured["definition"]["cause"]
    assert any("k = 50" in r and "definition" in r for r in f.recommendations)


def test_prerank_filters_names_the_confidence_clause_and_what_it_removed(misconfigured_ctx, checklist):
    f = _run(misconfigured_ctx, checklist, "prerank_filters")
    assert f.status == "fail"
    assert "confidence_score ge 0.85" in f.headline
    ablation = f.evidence_table("ablation").records()
    row = next(r for r in ablation if r["clause"] == "confidence_score ge 0.85")
    assert row["relevant_removed"] > 0
    assert row["recall50_without"] > row["recall50_with"]
    # the share is over the chunks the profile can reach: its own `level eq 'evidence'` keeps
    # every section and document key of the goldset out, whatever the confidence clause does
    assert row["share_removed"] == pytest.approx(row["relevant_removed"] / row["relevant_reachable"])
    assert row["relevant_unreachable"] > row["relevant_reachable"]
    unreachable = f.evidence_table("unreachable_documents").records()
    assert len(unreachable) == row["relevant_unreachable"]
    assert all(r["excluded_by"] == "level eq 'evidence'" for r in unreachable)
    assert "out of the profile's reach (excluded by level eq 'evidence'" in f.headline
    removed = f.evidence_table("removed_documents").records()
    assert removed and all(r["clause"] == "confidence_score ge 0.85" for r in removed)
    assert any("magnitude" in r for r in f.recommendations)
    assert f.metrics["fallback_cascades"] > 0


def test_shared_query_text_flags_one_text_for_three_channels(misconfigured_ctx, checklist):
    f = _run(misconfigured_ctx, checklist, "shared_query_text")
    assert f.status in ("warn", "fail")
    assert f.metrics["identical_share_profiles"] == pytest.approx(1.0)
    assert f.metrics["identical_share_query_log"] > 0.5
    # the measured costs lead the headline; the same-field rule still recommends fields per type
    assert "same vector field" in f.headline or any("each question type" in r for r in f.recommendations)
    assert "recall@10_split_channels" in f.metrics
    assert f.observed["profile_requests_compared"] > 100 and f.observed["logged_requests_compared"] > 100


def test_route_counts_finds_the_route_nobody_uses(misconfigured_ctx, checklist):
    f = _run(misconfigured_ctx, checklist, "route_counts")
    assert f.status == "warn"
    assert "comparison" in f.headline
    traffic = {r["route"]: r for r in f.evidence_table("traffic").records()}
    assert traffic.get("comparison", {"share": 0.0})["share"] < 0.02
    assert f.evidence_table("route_gain").records()
    assert f.observed["routes_by_traffic"] == 7 and f.observed["routes_by_gain"] > 0


def test_reranker_scores_reports_distribution_and_benefit(misconfigured_ctx, checklist):
    f = _run(misconfigured_ctx, checklist, "reranker_scores")
    assert f.metrics["queries"] > 100
    assert 0.5 < f.metrics["roc_auc_relevant_vs_other"] <= 1.0
    assert f.metrics["ndcg@10_reranked"] is not None and f.metrics["ndcg@10_fused_order"] is not None
    assert f.evidence_table("top1_per_question").records()
    # judged per profile: the starved definition route (k = 20, post-filtered) is named
    # although the median pooled over all profiles is healthy
    per_profile = {r["profile"]: r for r in f.evidence_table("scores_per_profile").records()}
    assert f.metrics["median_top1"] >= 2.0 > per_profile["definition"]["top1_median"]
    assert per_profile["definition"]["verdict"] == "warn"
    # measured: the legacy 'headings' configuration costs the definition route (an ablation fail
    # leads the headline before the score-distribution warnings)
    assert f.status == "fail" and "'headings' in profile definition costs ndcg@10" in f.headline


def test_goldset_metrics_and_comparison(misconfigured_ctx, tuned_ctx, checklist):
    bad = _run(misconfigured_ctx, checklist, "goldset")
    good = _run(tuned_ctx, checklist, "goldset")
    assert bad.metrics["cases"] >= 150
    # the tuned policy beats the misconfigured one on the sample goldset
    assert good.metrics["ndcg@10"] > bad.metrics["ndcg@10"]
    assert good.metrics["recall@50"] > bad.metrics["recall@50"]
    assert bad.metrics["compare_ndcg@10_delta"] > 0
    assert bad.evidence_table("comparison").records()
    assert bad.evidence_table("comparison").title == "Policy 'misconfigured' against 'tuned' (delta = second - first)"
    assert bad.observed["questions_evaluated"] > 200
