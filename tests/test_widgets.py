"""The profile tuner: pure computation (fast) and the widget on the sample (slow)."""

from __future__ import annotations

import re

import pytest

from ragdiag.model import Hit, RankedList, SearchRequest, Trace, VectorQuery
from ragdiag.policy import Profile, VectorQuerySpec, load_policy
from ragdiag.tuner import (
    TunerState,
    drill_html,
    drilldown,
    pool_summary,
    profile_changes,
    score_summary,
)


def _profile(**kw) -> Profile:
    base = dict(name="definition", query_type="semantic", keyword_text="none", semantic_text="keywords",
                filter="level eq 'evidence' and confidence_score ge 0.85", vector_filter_mode="postFilter",
                vector_queries=(VectorQuerySpec(fields=("content_vector",), k=20, text="keywords"),))
    base.update(kw)
    return Profile(**base)


# ---- TunerState ----------------------------------------------------------------------
def test_state_unchanged_is_the_baseline():
    p = _profile()
    st = TunerState.from_profile(p)
    assert st.profile() is p
    assert st.ks == (20,) and st.clauses == (True, True) and st.reranker


def test_state_with_k_changes_only_k():
    p = _profile()
    tuned = TunerState.from_profile(p).with_k(50).profile()
    assert tuned.vector_queries[0].k == 50
    assert tuned.replace(vector_queries=p.vector_queries) == p
    assert profile_changes(p, tuned) == ["vector query 1: k 20 → 50"]


def test_state_drops_unchecked_clause_and_turns_reranker_off():
    p = _profile(captions="extractive")
    st = TunerState.from_profile(p).with_(clauses=(True, False), reranker=False)
    tuned = st.profile()
    assert tuned.filter == "level eq 'evidence'"
    assert tuned.query_type == "simple" and tuned.captions is None
    assert TunerState.from_profile(p).with_(clauses=(False, False)).profile().filter is None


def test_state_recall_default_stays_none():
    p = _profile(keyword_text="keywords")
    st = TunerState.from_profile(p)
    assert st.with_(max_text_recall_size=1000).profile().max_text_recall_size is None
    assert st.with_(max_text_recall_size=300).profile().max_text_recall_size == 300


def test_state_roundtrip_from_tuned_profile():
    p = _profile()
    tuned = TunerState.from_profile(p).with_k(70).with_(clauses=(False, True)).profile()
    again = TunerState.from_profile(p, tuned)
    assert again.ks == (70,) and again.clauses == (False, True)
    assert again.profile() == tuned


def test_state_invalid_combination_raises():
    from ragdiag.errors import ConfigError

    with pytest.raises(ConfigError, match="semantic_text"):
        TunerState.from_profile(_profile()).with_(semantic_text="keyword_text").profile()


# ---- summaries and drill-down ------------------------------------------------------------
def test_pool_and_score_summaries():
    s = pool_summary([0, 10, 20, 60, 100])
    assert s["median"] == 20 and s["min"] == 0 and s["share_below"] == pytest.approx(0.6)
    sc = score_summary([1.0, 3.0, None])
    assert sc["n"] == 2 and sc["missing"] == 1 and sc["share_below"] == 0.5


def _trace(reranked: bool = True) -> Trace:
    req = SearchRequest(search="host", filter="level eq 'evidence'", top=3, query_type="semantic",
                        vector_queries=(VectorQuery(fields=("content_vector",), text="host", k=5),))
    text = RankedList("text", ("a", "b", "c"), (3.0, 2.0, 1.0))
    vec = RankedList("vector[0]:content_vector", ("d", "a", "e"), (0.9, 0.8, 0.7), weight=1.0)
    pool_keys = ("a", "d", "b", "c", "e")
    pool = RankedList("fused", pool_keys, tuple(1.0 / i for i in range(1, 6)))
    final = ("d", "a", "b", "e", "c")
    hits = tuple(Hit(key=k, score=1.0, reranker_score=4.0 - i * 0.5 if reranked else None)
                 for i, k in enumerate(final))
    return Trace(request=req, hits=hits, text=text, vectors=(vec,), pool=pool,
                 rerank_window=pool_keys if reranked else (), reranked=reranked)


class _FakeTarget:
    capabilities = frozenset({"local_records"})
    records = [{"id": "x", "level": "summary"}, {"id": "y", "level": "evidence"}]
    row_of = {"x": 0, "y": 1}


def test_drilldown_rows_and_lost_at():
    rows = {r.key: r for r in drilldown(_trace(), {"a": 3, "e": 1, "x": 2, "y": 1, "z": 1, "n": 0},
                                        target=_FakeTarget())}
    assert set(rows) == {"a", "e", "x", "y", "z"}  # grade 0 is not relevant
    a = rows["a"]
    assert (a.keyword_rank, a.vector_ranks, a.pool_rank, a.in_window, a.final_rank, a.lost_at) == \
        (1, (("vector[0]:content_vector", 2),), 1, True, 2, "")
    # the stages of the audit's loss funnel (ragdiag.engine.funnel): the same classification
    assert rows["e"].final_rank == 4 and rows["e"].lost_at == "rerank"
    assert rows["x"].lost_at == "filter" and rows["x"].excluded_by == ("level eq 'evidence'",)
    assert rows["y"].lost_at == "retrieval"
    assert rows["z"].lost_at == "not_in_index"
    html = drill_html(list(rows.values()), top=3)
    assert "content_vector" in html and "filter: level eq" in html


def test_drilldown_without_reranker_and_window():
    rows = {r.key: r for r in drilldown(_trace(reranked=False), {"c": 1})}
    assert rows["c"].in_window is None and rows["c"].lost_at == "rank"
    t = _trace()
    far = Trace(request=t.request, hits=t.hits, text=t.text, vectors=t.vectors,
                pool=RankedList("fused", tuple(f"k{i}" for i in range(60)) + ("c",), (0.0,) * 61),
                rerank_window=tuple(f"k{i}" for i in range(50)), reranked=True)
    r = drilldown(far, {"c": 1})[0]
    assert r.pool_rank == 61 and r.in_window is False and r.lost_at == "window"


# ---- the widget on the sample ----------------------------------------------------------
def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture(scope="module")
def tuner(misconfigured_ctx):
    from ragdiag.tuner import ProfileTuner

    return ProfileTuner(misconfigured_ctx, "definition")


@pytest.mark.slow
def test_tuner_k_slider_updates_outputs(tuner, tmp_path):
    assert tuner.k_slider.value == 20
    before = tuner.result
    pool_before = tuner.pool_html.value
    metrics_before = tuner.metrics_html.value
    assert len(before.cases) > 10 and {c.intent for c in before.cases} == {"definition"}
    assert before.pool_summary()["median"] < 50  # the starved profile

    tuner.k_slider.value = 50
    after = tuner.result
    assert after is not before
    assert after.profile.vector_queries[0].k == 50
    assert after.baseline.vector_queries[0].k == 20
    assert after.pool_summary()["median"] > before.pool_summary()["median"]
    assert tuner.pool_html.value != pool_before
    tuned_text = re.search(r"ragdiag-pool-tuned'>([^<]*)<", tuner.pool_html.value).group(1)
    assert tuned_text != re.search(r"ragdiag-pool-tuned'>([^<]*)<", pool_before).group(1)
    assert tuner.metrics_html.value != metrics_before
    rows = {r["metric"]: r for r in after.metric_rows()}
    assert set(rows) == {"ndcg@10", "recall@10", "recall@50", "mrr"}
    assert rows["recall@50"]["delta"] > 0  # more neighbours: more relevant documents reach fusion
    assert "k 20 → 50" in _text(tuner.status_html.value)

    # back to the baseline: no deltas, no new requests
    tuner.k_slider.value = 20
    assert tuner.result.sent == 0
    assert all(r["delta"] == 0 for r in tuner.result.metric_rows())
    tuner.k_slider.value = 50


@pytest.mark.slow
def test_tuner_drilldown_one_question(tuner):
    case_id = tuner.drill_dropdown.options[0][1]
    rows, base = tuner.drill(case_id)
    case = tuner.result.case(case_id)
    assert {r.key for r in rows} == {k for k, g in case.expect_sources if g >= 1}
    assert len(base) == len(rows)
    for r in rows:
        assert [n for n, _ in r.vector_ranks] == ["vector[0]:content_vector"]
        assert r.keyword_rank is None  # the definition profile has no keyword leg
        if r.final_rank is not None and r.final_rank <= 10:
            assert r.lost_at == ""
        else:
            assert r.lost_at in ("filter", "rights", "retrieval", "window", "boost", "rerank", "rank",
                                 "not_in_index")
    text = _text(tuner.drill_html.value)
    assert case.question in text and "lost at" in text


@pytest.mark.slow
def test_tuner_save_writes_policy_and_profile(tuner, tmp_path):
    tuner.k_slider.value = 50
    tuner.save_path.value = str(tmp_path / "tuned.toml")
    tuner.save_button.click()
    assert "saved" in tuner.save_status.value
    policy = load_policy(tmp_path / "tuned.toml")
    assert policy.profiles["definition"].vector_queries[0].k == 50
    assert policy.profiles["fact_template"] == tuner.policy.profiles["fact_template"]
    assert policy.routes == tuner.policy.routes

    path = tuner.save(tmp_path / "profile.toml", what="profile")
    only = load_policy(path)
    assert list(only.profiles) == ["definition"]
    assert only.profiles["definition"].vector_queries[0].k == 50


@pytest.mark.slow
def test_tuner_clause_and_invalid_combination(tuner):
    tuner.k_slider.value = 50
    assert [b.description for b in tuner.clause_boxes] == ["level eq 'evidence'"]
    tuner.clause_boxes[0].value = False
    assert tuner.result.profile.filter is None
    tuner.clause_boxes[0].value = True
    # semantic text from a keyword leg that does not exist: shown, not applied
    last = tuner.result
    tuner.semantic_text.value = "keyword_text"
    assert tuner.error and "semantic_text" in tuner.status_html.value
    assert tuner.result is last
    tuner.semantic_text.value = "keywords"
    assert tuner.error is None


@pytest.mark.slow
def test_tuner_switches_profile(tuner):
    tuner.profile_dropdown.value = "fact_template"
    try:
        assert {c.intent for c in tuner.result.cases} == {"fact"}
        assert len(tuner.clause_boxes) == 2
        assert not tuner.recall_slider.disabled
    finally:
        tuner.profile_dropdown.value = "definition"
    assert tuner.k_slider.value == 50  # the tuned definition profile is kept


# ---- significance markers: Holm across the metrics shown ------------------------------------------
def test_holm_adjusts_monotone_and_skips_missing():
    from ragdiag.tuner import holm

    adj = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": None, "e": float("nan")})
    assert adj["a"] == pytest.approx(0.03)  # 3 valid tests: 3 * 0.01
    assert adj["c"] == pytest.approx(0.06)  # 2 * 0.03
    assert adj["b"] == pytest.approx(0.06)  # max(0.06, 1 * 0.04): monotone
    assert adj["d"] is None and adj["e"] is None
    assert holm({"x": 0.9, "y": 0.8})["x"] == 1.0  # capped at 1


def test_markers_use_the_holm_corrected_p():
    from types import SimpleNamespace

    from ragdiag.tuner import TunerResult, metrics_html

    def cmp(p: float, delta: float) -> SimpleNamespace:
        return SimpleNamespace(a_mean=0.3, b_mean=0.3 + delta, mean_delta=delta, wins=5, ties=1, losses=2,
                               p_ttest=p, n=8)

    comps = {"ndcg@10": cmp(0.02, 0.05), "recall@10": cmp(0.03, 0.04), "recall@50": cmp(0.04, 0.03),
             "mrr": cmp(0.5, 0.01)}
    r = TunerResult(profile=None, baseline=None, cases=[], run=None, baseline_run=None, evaluation=None,
                    baseline_evaluation=None, comparisons=comps)
    rows = {x["metric"]: x for x in r.metric_rows()}
    assert all(rows[m]["p"] < 0.05 for m in ("ndcg@10", "recall@10", "recall@50"))  # each alone: "significant"
    assert not any(x["significant"] for x in rows.values())  # across the four: not after Holm
    assert rows["ndcg@10"]["p_holm"] == pytest.approx(0.08)  # smallest of 4: 4 * 0.02
    assert rows["recall@10"]["p_holm"] == pytest.approx(0.09)  # 3 * 0.03
    html = metrics_html(r)
    assert "Holm correction across the 4 metrics shown" in html and "*" not in re.sub(r"<b>.*?</b>|\(.*?\)", "", html)
    comps["ndcg@10"] = cmp(0.001, 0.05)
    assert {x["metric"]: x["significant"] for x in r.metric_rows()}["ndcg@10"] is True  # 4 * 0.001 < 0.05


@pytest.mark.slow
def test_tuner_shows_computing_then_the_result_with_its_figure(tuner):
    seen: list[str] = []
    busy: list[bool] = []
    tuner.status_html.observe(lambda c: (seen.append(c["new"]), busy.append(tuner.busy)), names="value")
    try:
        tuner.k_slider.value = 37  # a setting not evaluated before: requests run
    finally:
        tuner.status_html.unobserve_all()
    assert "computing…" in seen[0] and busy[0] is True  # shown before the evaluation
    assert "computing" not in tuner.status_html.value and tuner.busy is False
    assert "ragdiag-busy" not in tuner.widget._dom_classes and not tuner.save_button.disabled
    assert "data:image/png;base64," in tuner.figure_html.value
    assert "Holm" in tuner.metrics_html.value
    for row in tuner.result.metric_rows():
        assert row["p_holm"] is None or row["p_holm"] >= row["p"] - 1e-12
        assert row["significant"] == (row["p_holm"] is not None and row["p_holm"] < 0.05)
    tuner.k_slider.value = 50


@pytest.mark.slow
def test_tuner_updates_its_figure_in_place_and_a_memoised_setting_redraws_nothing(tuner):
    """One figure for the tuner's life: a new setting updates its artists (same Figure, same
    axes), a setting seen before is shown from its memoised HTML without touching the figure;
    the numbers arrive before the status that ends "computing…"."""
    tuner.k_slider.value = 41
    fig = tuner._figure
    assert fig is not None
    axes, drawn, backgrounds = list(fig.fig.axes), fig.updates, fig.backgrounds
    order: list[str] = []
    for name in ("metrics_html", "figure_html", "pool_html", "status_html"):
        getattr(tuner, name).observe(lambda c, name=name: order.append(name), names="value")
    try:
        tuner.k_slider.value = 43  # new: the same figure's artists get the new numbers
    finally:
        for name in ("metrics_html", "figure_html", "pool_html", "status_html"):
            getattr(tuner, name).unobserve_all()
    assert tuner._figure is fig and list(fig.fig.axes) == axes and fig.updates == drawn + 1
    assert fig.backgrounds - backgrounds <= 1  # axes and ticks: again only when a range grows
    assert order[0] == "status_html" and order[-1] == "status_html"  # computing…, numbers, status
    assert order.index("figure_html") < len(order) - 1 and order.index("metrics_html") < len(order) - 1
    new_png = tuner.figure_html.value
    pool = sorted(max(int(x), 1) for x in tuner.result.pool_sizes)
    assert list(fig._pool_tuned.get_ydata()) == pool  # the artist holds this result's numbers
    tuner.k_slider.value = 41  # seen before: memoised HTML, no figure update
    assert fig.updates == drawn + 1 and tuner.figure_html.value != new_png
    tuner.k_slider.value = 43
    assert fig.updates == drawn + 1 and tuner.figure_html.value == new_png
    settled = fig.backgrounds
    tuner.k_slider.value = 44  # a neighbouring setting: the data artists only, on the same background
    assert fig.updates == drawn + 2 and fig.backgrounds == settled
    tuner.k_slider.value = 50
