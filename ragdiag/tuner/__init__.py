"""The profile tuner: turn a profile's knobs and watch pool sizes, scores and goldset metrics.

    tuner = ProfileTuner(ctx, "definition")   # ctx = build_context(load_config(path))
    tuner                                      # in Jupyter: controls + live outputs

Everything is computed on the goldset questions the policy routes to the chosen
profile (by their intent), so one change re-runs a few dozen requests; on the
local target most of them are answered from its stage caches (keyword leg,
each vector leg, reranker scores per text and key), so only the stage a knob
touches is recomputed.

The computation is separate from the widgets and testable without a frontend:

- `TunerState`: the knob values; `TunerState.from_profile(p).with_k(50).profile()`
  is the tuned `Profile` (fields left at the baseline's value stay untouched);
- `evaluate_profile(ctx, profile, baseline) -> TunerResult`: pool sizes, top-1
  reranker scores and nDCG@10 / recall@10 / recall@50 / MRR against the baseline
  with paired t-tests, whose significance markers are Holm-corrected across the four
  metrics shown (`holm`, `CORRECTION`);
- `drilldown(trace, qrels) -> [DrillRow]`: where each relevant document of one
  question is (keyword leg, vector legs, fused pool, rerank window, final rank)
  and where it was lost;
- `pool_html`, `scores_html`, `metrics_html`, `drill_html`: the outputs as HTML;
  `tuner_figure` / `figure_html`: pool sizes, top-1 scores and metric deltas as a figure.

While a change is evaluated the widget shows "computing…" (`ProfileTuner.busy`).

The modules: `state` (the knobs), `evaluate` (runs, comparisons, drill-down),
`html` (the outputs) and `widget` (`ProfileTuner`, loaded on first use so that
importing `ragdiag.tuner` stays cheap).
"""

from __future__ import annotations

import importlib
from typing import Any

from ragdiag.tuner.evaluate import ALPHA as ALPHA
from ragdiag.tuner.evaluate import CORRECTION as CORRECTION
from ragdiag.tuner.evaluate import (
    METRICS,
    DrillRow,
    TunerResult,
    drilldown,
    evaluate_profile,
    pool_summary,
    profile_cases,
    run_profile,
    score_summary,
)
from ragdiag.tuner.evaluate import POOL_MIN as POOL_MIN
from ragdiag.tuner.evaluate import SCORE_OK as SCORE_OK
from ragdiag.tuner.evaluate import holm as holm
from ragdiag.tuner.evaluate import key_outside as key_outside
from ragdiag.tuner.evaluate import top1_score as top1_score
from ragdiag.tuner.html import (
    drill_html,
    figure_html,
    metrics_html,
    pool_html,
    scores_html,
    tuner_figure,
)
from ragdiag.tuner.html import pool_text as pool_text
from ragdiag.tuner.html import score_text as score_text
from ragdiag.tuner.state import TunerState, filter_clauses, profile_changes

# The widget module is imported on first use (it is the only one that needs ipywidgets).
_WIDGET_NAMES = ("ProfileTuner", "K_MAX", "RECALL_MAX", "TOP_MAX")


def __getattr__(name: str) -> Any:
    if name in _WIDGET_NAMES:
        return getattr(importlib.import_module("ragdiag.tuner.widget"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# `from ... import X as X` marks names that stay reachable as `ragdiag.tuner.X`, as before the
# split, without joining `__all__`.
__all__ = [
    "METRICS",
    "DrillRow",
    "ProfileTuner",
    "TunerResult",
    "TunerState",
    "drill_html",
    "figure_html",
    "drilldown",
    "evaluate_profile",
    "filter_clauses",
    "metrics_html",
    "pool_html",
    "pool_summary",
    "profile_cases",
    "profile_changes",
    "run_profile",
    "score_summary",
    "scores_html",
    "tuner_figure",
]
