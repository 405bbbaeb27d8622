"""`ProfileTuner`: the ipywidgets front end of the tuner (controls, live outputs, saving).

ipywidgets is imported when a tuner is built, not with this module.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE, VECTOR_FILTER_MODES
from ragdiag.policy import (
    KEYWORD_TEXT_MODES,
    SEMANTIC_TEXT_MODES,
    VECTOR_TEXT_MODES,
    Policy,
    Profile,
    dump_policy,
    dump_profile,
)
from ragdiag.tuner.evaluate import (
    DrillRow,
    TunerResult,
    drilldown,
    evaluate_profile,
    profile_cases,
    run_profile,
)
from ragdiag.tuner.html import (
    BUSY_HTML,
    TunerFigure,
    drill_html,
    figure_html,
    metrics_html,
    pool_html,
    scores_html,
)
from ragdiag.tuner.state import TunerState, filter_clauses

K_MAX = 200
RECALL_MAX = 2000
TOP_MAX = 100


def _memory_runner(runner: Any) -> Any:
    """A runner of its own (its own stats and budget count) over the audit runner's trace store:
    what-ifs and the audit share every stored trace. Its traces are written with the store's
    next batch, not after every slider move."""
    from ragdiag.engine.runner import Runner

    return Runner(runner.target, budget=runner.budget, concurrency=runner.concurrency, progress=False,
                  store=runner.store, flush_each_run=False)


class ProfileTuner:
    """An ipywidgets tuner for one profile of the context's policy (see the module docstring).

    `widget` is the container; the controls are attributes (`k_slider`, `recall_slider`,
    `top_slider`, `exhaustive_box`, `filter_mode`, `reranker_box`, `keyword_text`,
    `vector_text`, `semantic_text`, `vq_k_sliders`, `weight_sliders`, `clause_boxes`,
    `save_path`, `save_what`, `save_button`) and the outputs are HTML widgets
    (`status_html`, `metrics_html`, `pool_html`, `scores_html`, `drill_html`).
    `result` is the last `TunerResult`.
    """

    def __init__(self, ctx: Any, profile: str | None = None, *, policy: Policy | None = None,
                 runner: Any = None, save_path: str | Path | None = None) -> None:
        import ipywidgets as W

        self.ctx = ctx
        self.policy: Policy = policy or ctx.policy
        if self.policy is None:
            raise ConfigError("the profile tuner needs a policy: set [inputs] profiles in the audit config")
        # what-ifs run on a runner of their own sharing the audit's trace store; baselines go
        # through the context's runner
        self.runner = runner or _memory_runner(ctx.runner)
        if profile is not None and profile not in self.policy.profiles:
            raise ConfigError(f"policy '{self.policy.name}' has no profile '{profile}'; profiles: "
                              f"{', '.join(self.policy.profiles)}")
        self.tuned: dict[str, Profile] = {}  # tuned profiles by name (kept when switching)
        self.result: TunerResult | None = None
        self.error: str | None = None
        self._baseline_runs: dict[str, Any] = {}
        self._results: dict[Profile, TunerResult] = {}  # revisited settings cost nothing
        # the outputs' HTML per result: a revisited setting redraws nothing (not even the figure)
        self._views: dict[int, tuple[str, str, str, str]] = {}
        self._figure: TunerFigure | None = None  # drawn once, then updated in place
        self._cases: dict[str, list[Any]] = {}
        self._suspend = False
        self._save_path_given = save_path is not None

        slider = {"continuous_update": False, "style": {"description_width": "150px"},
                  "layout": W.Layout(width="420px")}
        drop = {"style": {"description_width": "150px"}, "layout": W.Layout(width="330px")}
        names = list(self.policy.profiles)
        self.profile_dropdown = W.Dropdown(options=names, value=profile or names[0],
                                           description="profile", **drop)
        self.k_slider = W.IntSlider(min=1, max=K_MAX, value=50, description="k (all vector queries)",
                                    **slider)
        self.k_slider.add_class("ragdiag-k")
        self.recall_slider = W.IntSlider(min=1, max=RECALL_MAX, value=DEFAULT_MAX_TEXT_RECALL_SIZE,
                                         description="max_text_recall_size", **slider)
        self.top_slider = W.IntSlider(min=1, max=TOP_MAX, value=10, description="top", **slider)
        self.exhaustive_box = W.Checkbox(description="exhaustive (all vector queries)", indent=False)
        self.reranker_box = W.Checkbox(description="semantic reranker (query_type semantic)",
                                       indent=False)
        self.filter_mode = W.Dropdown(options=list(VECTOR_FILTER_MODES), description="vector filter mode",
                                      **drop)
        self.keyword_text = W.Dropdown(options=list(KEYWORD_TEXT_MODES), description="keyword text",
                                       **drop)
        self.vector_text = W.Dropdown(options=list(VECTOR_TEXT_MODES), description="vector text (all)",
                                      **drop)
        self.semantic_text = W.Dropdown(options=list(SEMANTIC_TEXT_MODES), description="semantic text",
                                        **drop)
        self.vq_k_sliders: list[Any] = []
        self.weight_sliders: list[Any] = []
        self.clause_boxes: list[Any] = []
        self.vq_box = W.VBox()
        self.clause_box = W.VBox()
        self.reset_button = W.Button(description="Reset", icon="undo", tooltip="every knob back to the baseline")
        self.save_path = W.Text(description="save to", **drop)
        self.save_what = W.ToggleButtons(options=["policy", "profile"], value="policy",
                                         tooltips=["the whole policy with the tuned profile(s)",
                                                   "only [profiles.<name>]"])
        self.save_button = W.Button(description="Save profile", icon="save", button_style="primary")
        self.save_status = W.HTML()
        self.status_html = W.HTML()
        self.metrics_html = W.HTML()
        self.pool_html = W.HTML()
        self.pool_html.add_class("ragdiag-pool")
        self.scores_html = W.HTML()
        self.figure_html = W.HTML()
        self.figure_html.add_class("ragdiag-figure")
        self.busy = False
        self.drill_dropdown = W.Dropdown(description="question", style={"description_width": "70px"},
                                         layout=W.Layout(width="95%"))
        self.drill_html = W.HTML()
        if save_path is not None:
            self.save_path.value = str(save_path)

        def section(title: str) -> Any:
            return W.HTML(f"<b>{html.escape(title)}</b>")

        controls = W.VBox([
            self.profile_dropdown,
            section("Candidates"), self.k_slider, self.vq_box, self.exhaustive_box, self.filter_mode,
            self.recall_slider, self.top_slider, self.reranker_box,
            section("Channel texts"), self.keyword_text, self.vector_text, self.semantic_text,
            section("Filter clauses (uncheck to drop)"), self.clause_box,
            section("Save"), self.save_path, self.save_what,
            W.HBox([self.save_button, self.reset_button]), self.save_status,
        ], layout=W.Layout(width="440px", min_width="440px"))
        outputs = W.VBox([self.status_html, self.metrics_html, self.figure_html, self.pool_html, self.scores_html,
                          section("Drill-down"), self.drill_dropdown, self.drill_html],
                         layout=W.Layout(flex="1 1 auto", padding="0 0 0 12px"))
        self.widget = W.HBox([controls, outputs], layout=W.Layout(width="100%"))
        self.widget.add_class("ragdiag-tuner")

        self.profile_dropdown.observe(self._on_profile, names="value")
        self.k_slider.observe(self._on_k, names="value")
        for w in (self.recall_slider, self.top_slider, self.exhaustive_box, self.reranker_box,
                  self.filter_mode, self.keyword_text, self.vector_text, self.semantic_text):
            w.observe(self._on_change, names="value")
        self.drill_dropdown.observe(self._on_drill, names="value")
        self.save_button.on_click(lambda _b: self._save_clicked())
        self.reset_button.on_click(lambda _b: self.reset())
        self._load(self.profile_dropdown.value)

    # ---- display -------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- state ----------------------------------------------------------------------
    @property
    def profile_name(self) -> str:
        return str(self.profile_dropdown.value)

    @property
    def baseline(self) -> Profile:
        return self.policy.profiles[self.profile_name]

    def cases(self, name: str | None = None) -> list[Any]:
        name = name or self.profile_name
        if name not in self._cases:
            self._cases[name] = profile_cases(self.ctx, name, policy=self.policy)
        return self._cases[name]

    def state(self) -> TunerState:
        """The knob values as a `TunerState`."""
        b = self.baseline
        n = len(b.vector_queries)
        loaded = self._loaded
        # the "all vector queries" controls keep per-query values until they are changed
        exhaustive = loaded.exhaustive
        if n and bool(self.exhaustive_box.value) != loaded.exhaustive[0]:
            exhaustive = tuple(bool(self.exhaustive_box.value) for _ in range(n))
        texts = loaded.vector_texts
        if n and self.vector_text.value != loaded.vector_texts[0]:
            texts = tuple(self.vector_text.value for _ in range(n))
        return TunerState(
            baseline=b, ks=tuple(s.value for s in self.vq_k_sliders),
            weights=tuple(float(s.value) for s in self.weight_sliders),
            exhaustive=exhaustive, vector_texts=texts,
            vector_filter_mode=self.filter_mode.value,
            max_text_recall_size=self.recall_slider.value,
            top=self.top_slider.value, reranker=bool(self.reranker_box.value),
            keyword_text=self.keyword_text.value, semantic_text=self.semantic_text.value,
            clauses=tuple(bool(c.value) for c in self.clause_boxes))

    def tuned_profile(self) -> Profile:
        return self.state().profile()

    def tuned_policy(self) -> Policy:
        """The policy with every tuned profile swapped in."""
        policy = self.policy
        for p in self.tuned.values():
            policy = policy.with_profile(p)
        return policy

    # ---- loading a profile into the controls ---------------------------------------------
    def _load(self, name: str, current: Profile | None = None) -> None:
        import ipywidgets as W

        baseline = self.policy.profiles[name]
        st = TunerState.from_profile(baseline, current or self.tuned.get(name))
        self._loaded = st
        self._suspend = True
        try:
            for s in self.vq_k_sliders + self.weight_sliders + self.clause_boxes:
                s.unobserve_all()
                s.close()
            slider = {"continuous_update": False, "style": {"description_width": "150px"},
                      "layout": W.Layout(width="420px")}
            self.vq_k_sliders, self.weight_sliders, rows = [], [], []
            for i, vq in enumerate(baseline.vector_queries):
                label = f"{i + 1}: {'+'.join(vq.fields)}"
                ks = W.IntSlider(min=1, max=max(K_MAX, st.ks[i]), value=st.ks[i], description=f"k {label}",
                                 **slider)
                ws = W.FloatSlider(min=min(0.1, st.weights[i]), max=max(5.0, st.weights[i]), step=0.1,
                                   value=st.weights[i],
                                   description=f"weight {i + 1}", readout_format=".1f", **slider)
                ks.observe(self._on_change, names="value")
                ws.observe(self._on_change, names="value")
                self.vq_k_sliders.append(ks)
                self.weight_sliders.append(ws)
                rows += [ks, ws]
            self.vq_box.children = rows
            has_vq = bool(baseline.vector_queries)
            self.k_slider.max = max([K_MAX, *st.ks])
            self.k_slider.disabled = not has_vq
            self.k_slider.value = st.ks[0] if has_vq else 50
            self.exhaustive_box.disabled = not has_vq
            self.exhaustive_box.value = bool(st.exhaustive and st.exhaustive[0])
            self.vector_text.disabled = not has_vq
            if has_vq:
                self.vector_text.value = st.vector_texts[0]
            self.filter_mode.value = st.vector_filter_mode
            # ranges grow to fit a profile's own values, so loading never clamps (= changes) them
            self.recall_slider.max = max(RECALL_MAX, st.max_text_recall_size or 0)
            self.recall_slider.value = st.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE
            self.top_slider.max = max(TOP_MAX, st.top)
            self.top_slider.value = max(st.top, 1)
            self.reranker_box.value = st.reranker
            self.keyword_text.value = st.keyword_text
            self.recall_slider.disabled = st.keyword_text == "none"
            self.semantic_text.value = st.semantic_text
            self.clause_boxes = []
            for c, on in zip(filter_clauses(baseline.filter), st.clauses, strict=True):
                box = W.Checkbox(value=on, description=c.text, indent=False,
                                 layout=W.Layout(width="auto"))
                box.observe(self._on_change, names="value")
                self.clause_boxes.append(box)
            self.clause_box.children = self.clause_boxes or [W.HTML("<i>no filter</i>")]
            if not self._save_path_given:
                self.save_path.value = f"{self.policy.name}-{name}-tuned.toml"
            opts = [(f"{c.id}: {c.question[:70]}", c.id) for c in self.cases(name) if c.expect_sources]
            self.drill_dropdown.options = opts
            self.drill_dropdown.value = opts[0][1] if opts else None
        finally:
            self._suspend = False
        self.update()

    # ---- events ------------------------------------------------------------------------
    def _on_profile(self, change: Mapping[str, Any]) -> None:
        self._load(change["new"])

    def _on_k(self, change: Mapping[str, Any]) -> None:
        if self._suspend:
            return
        self._suspend = True
        try:
            for s in self.vq_k_sliders:
                s.value = change["new"]
        finally:
            self._suspend = False
        self.update()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if self._suspend:
            return
        self.recall_slider.disabled = self.keyword_text.value == "none"
        self.update()

    def _on_drill(self, change: Mapping[str, Any]) -> None:
        if not self._suspend:
            self._render_drill()

    def reset(self) -> None:
        """Every knob back to the baseline profile."""
        self.tuned.pop(self.profile_name, None)
        self._load(self.profile_name, self.baseline)

    # ---- computing -----------------------------------------------------------------------
    def update(self) -> TunerResult | None:
        """Recompute every output from the current knobs (called on every change)."""
        name = self.profile_name
        try:
            tuned = self.tuned_profile()
        except RagdiagError as exc:
            self.error = str(exc)
            self.status_html.value = (f"<div style='color:#b22222'>not applied: {html.escape(str(exc))}"
                                      "</div>")
            return None
        self.error = None
        if tuned == self.baseline:
            self.tuned.pop(name, None)
        else:
            self.tuned[name] = tuned
        result = self._results.get(tuned)
        if result is None:
            self._set_busy(True)
            t0 = time.perf_counter()
            sent0 = self._sent()
            base_run = self._baseline_runs.get(name)
            if base_run is None:
                base_run = self._baseline_runs[name] = run_profile(
                    self.ctx, self.baseline, self.cases(name), policy=self.policy,
                    label=f"{name} (baseline)")
            try:
                result = evaluate_profile(self.ctx, tuned, self.baseline, policy=self.policy,
                                          cases=self.cases(name), runner=self.runner, baseline_run=base_run)
            except Exception:
                self._set_busy(False)
                raise
            result.elapsed_ms = (time.perf_counter() - t0) * 1000
            result.sent = self._sent() - sent0
            if len(self._results) > 256:
                self._views.pop(id(self._results.pop(next(iter(self._results)))), None)
            self._results[tuned] = result
            view = None
        else:
            view = self._views.get(id(result))
            result = replace(result, elapsed_ms=0.0, sent=0)
        self.result = result
        if view is None:
            view = self._view(result)
            self._views[id(self._results[tuned])] = view
        self._render(result, view)
        self._set_busy(False)  # after the new numbers: "computing…" lasts until they are shown
        return result

    def _view(self, r: TunerResult) -> tuple[str, str, str, str]:
        """The metrics, figure, pool and scores HTML of a result (the figure updated in place)."""
        if self._figure is None:
            self._figure = TunerFigure()
        return metrics_html(r), figure_html(r, self._figure), pool_html(r), scores_html(r)

    def _set_busy(self, busy: bool) -> None:
        """Show "computing…" (and disable saving) while a change is evaluated; the frontend
        gets the state at once, before the requests run."""
        self.busy = busy
        self.save_button.disabled = busy
        if busy:
            self.widget.add_class("ragdiag-busy")
            self.status_html.value = BUSY_HTML
        else:
            self.widget.remove_class("ragdiag-busy")

    def _sent(self) -> int:
        runners = {id(r): r for r in (self.runner, self.ctx.runner)}
        return sum(r.stats.sent for r in runners.values())

    def _render(self, r: TunerResult, view: tuple[str, str, str, str] | None = None) -> None:
        intents = sorted({c.intent for c in r.cases})
        changes = r.changes
        failures = r.failures
        status = (f"<div class='ragdiag-status'><b>{html.escape(r.profile.name)}</b>: {len(r.cases)} "
                  f"{html.escape(self.ctx.question_source)} questions routed here "
                  f"(intents: {html.escape(', '.join(intents) or 'none')}); "
                  f"{r.sent} new requests, {r.elapsed_ms:.0f} ms"
                  + (f"; <span style='color:#b22222'>{len(failures)} failed: "
                     f"{html.escape(failures[0].reason)}</span>" if failures else "")
                  + "<br><span style='color:#555'>changes: "
                  + (html.escape("; ".join(changes)) if changes else "none (baseline)")
                  + "</span></div>")
        metrics, figure, pool, scores = view if view is not None else self._view(r)
        # the numbers first, the status last: the frontend shows "computing…" until every new
        # number has arrived (the comm messages keep their order)
        self.metrics_html.value = metrics
        self.figure_html.value = figure
        self.pool_html.value = pool
        self.scores_html.value = scores
        self._render_drill()
        self.status_html.value = status

    def drill(self, case_id: str | None = None) -> tuple[list[DrillRow], list[DrillRow]]:
        """Drill-down rows (tuned, baseline) of one question of the current result."""
        r = self.result
        case_id = case_id or self.drill_dropdown.value
        if r is None or case_id is None:
            return [], []
        case = r.case(case_id)
        qrels = dict(case.expect_sources)
        out = []
        for baseline, prof in ((False, r.profile), (True, r.baseline)):
            t = r.trace(case_id, baseline=baseline)
            out.append(drilldown(t, qrels, top=prof.top, target=self.ctx.target) if t is not None else [])
        return out[0], out[1]

    def _render_drill(self) -> None:
        r = self.result
        if r is None or self.drill_dropdown.value is None:
            self.drill_html.value = "<i>no judged questions routed to this profile</i>"
            return
        rows, base = self.drill()
        case = r.case(self.drill_dropdown.value)
        t = r.trace(case.id)
        head = (f"<div><i>{html.escape(case.question)}</i>"
                + (f" — as {html.escape(case.as_user)}" if case.as_user else "")
                + (f"; pool {t.pool_size}, reranked: {'yes' if t.reranked else 'no'}" if t else "")
                + "</div>")
        self.drill_html.value = head + drill_html(rows, baseline_rows=base, top=r.profile.top)

    # ---- saving ----------------------------------------------------------------------------
    def save(self, path: str | Path | None = None, what: str | None = None) -> Path:
        """Write the tuned policy (`what="policy"`) or only the tuned profile as TOML."""
        what = what or self.save_what.value
        path = Path(path or self.save_path.value or f"{self.profile_name}-tuned.toml").expanduser()
        if what == "profile":
            text = dump_profile(self.tuned_profile())
        elif what == "policy":
            text = dump_policy(self.tuned_policy())
        else:
            raise ConfigError(f"save what must be 'policy' or 'profile', got {what!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def _save_clicked(self) -> None:
        try:
            path = self.save()
        except (OSError, RagdiagError) as exc:
            self.save_status.value = f"<span style='color:#b22222'>not saved: {html.escape(str(exc))}</span>"
            return
        self.save_status.value = (f"saved {html.escape(self.save_what.value)} to "
                                  f"<code>{html.escape(str(path.resolve()))}</code>")

