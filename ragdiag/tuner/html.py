"""The tuner's outputs as HTML: pool sizes, reranker scores, goldset metrics, the drill-down table.

Plain functions of a `TunerResult` (or drill-down rows), so they are testable without a frontend.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.tuner.evaluate import ALPHA, CORRECTION, POOL_MIN, SCORE_OK, DrillRow, TunerResult

_POOL_BINS: tuple[tuple[str, int, float], ...] = (
    ("0", 0, 1), ("1-9", 1, 10), ("10-24", 10, 25), ("25-49", 25, 50), ("50-99", 50, 100),
    ("100-249", 100, 250), ("250-499", 250, 500), ("500-999", 500, 1000), ("1000+", 1000, math.inf))
_SCORE_BINS: tuple[tuple[str, float, float], ...] = tuple(
    (f"{lo:.1f}-{lo + 0.5:.1f}", lo, lo + 0.5 if lo < 3.5 else math.inf) for lo in
    (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5))


def _f(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _histogram(rows: Sequence[tuple[str, int, int]], colour: str = "#4c78a8") -> str:
    """A compact two-column HTML histogram: label | baseline bar | tuned bar."""
    peak = max([1] + [max(a, b) for _, a, b in rows])

    def bar(n: int, c: str) -> str:
        w = round(120 * n / peak)
        return (f'<span style="display:inline-block;height:9px;width:{w}px;background:{c}"></span>'
                f' <span style="font-size:85%">{n}</span>')

    body = "".join(f"<tr><td style='text-align:right;padding:0 6px'>{html.escape(lab)}</td>"
                   f"<td style='padding:0 6px'>{bar(a, '#bbbbbb')}</td><td style='padding:0 6px'>"
                   f"{bar(b, colour)}</td></tr>" for lab, a, b in rows)
    return ("<table style='border-collapse:collapse;font-size:90%;line-height:1.1'><tr><th></th>"
            "<th>baseline</th><th>tuned</th></tr>" + body + "</table>")


def _bin_counts(values: Sequence[float], bins: Sequence[tuple[str, float, float]]) -> list[int]:
    return [sum(lo <= v < hi for v in values) for _, lo, hi in bins]


def pool_text(summary: Mapping[str, Any]) -> str:
    return (f"p5 {_f(summary['p5'])}, median {_f(summary['median'])}, mean {_f(summary['mean'], 1)}, "
            f"min {_f(summary['min'])}, share < {POOL_MIN}: {_pct(summary['share_below'])}")


def pool_html(result: TunerResult) -> str:
    """Pool size after filters per question: summary line and histogram, tuned vs baseline."""
    s, b = result.pool_summary(), result.pool_summary(baseline=True)
    counts = zip(_bin_counts(result.baseline_pool_sizes, _POOL_BINS),
                 _bin_counts(result.pool_sizes, _POOL_BINS), strict=True)
    rows = [(lab, a, c) for (lab, _, _), (a, c) in zip(_POOL_BINS, counts, strict=True)]
    return (f"<div class='ragdiag-pool-summary'><b>Pool after filters</b> ({s['n']} questions): "
            f"<span class='ragdiag-pool-tuned'>{pool_text(s)}</span><br>"
            f"<span style='color:#777'>baseline: {pool_text(b)}</span></div>" + _histogram(rows))


def score_text(summary: Mapping[str, Any]) -> str:
    missing = f", {summary['missing']} without a score" if summary["missing"] else ""
    return (f"median {_f(summary['median'], 2)}, mean {_f(summary['mean'], 2)}, "
            f"share < {SCORE_OK:.1f}: {_pct(summary['share_below'])}{missing}")


def scores_html(result: TunerResult) -> str:
    """Top-1 reranker scores (0-4) per question, tuned vs baseline."""
    s, b = result.score_summary(), result.score_summary(baseline=True)
    tuned = [v for v in result.top1_scores if v is not None]
    base = [v for v in result.baseline_top1_scores if v is not None]
    rows = [(lab, a, c) for (lab, _, _), a, c in zip(
        _SCORE_BINS, _bin_counts(base, _SCORE_BINS), _bin_counts(tuned, _SCORE_BINS), strict=True)]
    return (f"<div><b>Top-1 reranker score</b>: {score_text(s)}<br>"
            f"<span style='color:#777'>baseline: {score_text(b)}</span></div>" + _histogram(rows, "#f58518"))


def metrics_html(result: TunerResult) -> str:
    """nDCG@10, recall@10, recall@50, MRR: baseline, tuned, delta (* = paired t-test p < 0.05
    after the Holm correction across the metrics shown)."""
    rows = result.metric_rows()
    if not rows:
        return "<div><b>Goldset metrics</b>: no goldset judgments for these questions</div>"
    body = []
    for r in rows:
        d = r["delta"]
        colour = "#2a7d2a" if d > 1e-9 else "#b22222" if d < -1e-9 else "#555"
        mark = "*" if r["significant"] else ""
        body.append(f"<tr><td>{html.escape(r['metric'])}</td><td>{r['baseline']:.3f}</td>"
                    f"<td>{r['tuned']:.3f}</td><td style='color:{colour}'>{d:+.3f}{mark}</td>"
                    f"<td>{r['wins']}/{r['ties']}/{r['losses']}</td><td>{_f(r['p'], 3)}</td>"
                    f"<td>{_f(r['p_holm'], 3)}</td></tr>")
    n = rows[0]["n"]
    return (f"<div class='ragdiag-metrics'><b>Goldset metrics</b> ({n} judged questions; "
            f"* paired t-test p &lt; {ALPHA} after the {CORRECTION} correction across the {len(rows)} "
            "metrics shown)<table style='font-size:90%'><tr><th>metric</th>"
            "<th>baseline</th><th>tuned</th><th>Δ</th><th>wins/ties/losses</th><th>p</th>"
            f"<th>p ({CORRECTION})</th></tr>"
            + "".join(body) + "</table></div>")


_SCORE_EDGES = tuple(i / 4 for i in range(17))  # top-1 score histogram bins (0 to 4 by 0.25)


class TunerFigure:
    """The tuner's figure, drawn once and updated in place.

    The axes, ticks, titles and reference lines are rendered once into a background; `update`
    sets the data artists (each question's pool, sorted; the top-1 score histogram; the metric
    deltas with their markers) and `png` blits only those onto the background (Agg's
    restore_region / draw_artist) before encoding the canvas. The background is re-rendered
    only when an axis range must grow (more questions, a larger pool or count, a larger delta)
    or the metric set changes, so a knob change costs the data artists, not a new figure."""

    def __init__(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        # not a pyplot figure: nothing global to close, nothing the notebook displays on its own
        self.fig = Figure(figsize=(10.5, 2.9), dpi=80)
        self.canvas = FigureCanvasAgg(self.fig)
        self.axes = self.fig.subplots(1, 3)
        pool, score, delta = self.axes
        (self._pool_base,) = pool.plot([], [], color="#888888", drawstyle="steps-mid", label="baseline",
                                       animated=True)
        (self._pool_tuned,) = pool.plot([], [], color="#f58518", drawstyle="steps-mid", label="tuned",
                                        animated=True)
        pool.set_yscale("log")
        pool.axhline(POOL_MIN, color="red", linestyle="--", linewidth=1)
        pool.set_xlabel("questions (sorted by pool)", fontsize=7)
        pool.legend(fontsize=7, loc="upper left")
        pool.set_title(f"pool after filters (window {POOL_MIN})", fontsize=9)
        width = (_SCORE_EDGES[1] - _SCORE_EDGES[0]) / 2
        lefts = _SCORE_EDGES[:-1]
        self._score_base = score.bar(list(lefts), [0] * len(lefts), width=width, align="edge",
                                     color="#bbbbbb", label="baseline")
        self._score_tuned = score.bar([x + width for x in lefts], [0] * len(lefts), width=width, align="edge",
                                      color="#f58518", label="tuned")
        for bar in (*self._score_base, *self._score_tuned):
            bar.set_animated(True)
        score.set_xlim(_SCORE_EDGES[0], _SCORE_EDGES[-1])
        score.axvline(SCORE_OK, color="black", linestyle="--", linewidth=1)
        score.legend(fontsize=7, loc="upper left")
        score.set_title("top-1 reranker score", fontsize=9)
        delta.axhline(0, color="black", linewidth=0.8)
        delta.set_title(f"Δ tuned - baseline (* {CORRECTION} p < {ALPHA})", fontsize=9)
        self._delta_bars: Any = None
        self._delta_names: list[str] = []
        self._marks: list[Any] = []
        for ax in self.axes:
            ax.tick_params(labelsize=7)
        self._limits: tuple[Any, ...] | None = None  # the axis ranges the background was drawn with
        self._background: Any = None
        self.updates = 0  # data updates (a memoised result draws nothing)
        self.backgrounds = 0  # background renders (axes, ticks, titles)

    def _artists(self) -> list[Any]:
        out = [self._pool_base, self._pool_tuned, *self._score_base, *self._score_tuned, *self._marks]
        return out + (list(self._delta_bars) if self._delta_bars is not None else [])

    def update(self, result: TunerResult) -> Any:
        """Set every data artist to `result`'s numbers (axis ranges grow when they must)."""
        import numpy as np

        pool, score, delta = self.axes
        longest, largest = 1, POOL_MIN
        for line, sizes in ((self._pool_base, result.baseline_pool_sizes), (self._pool_tuned, result.pool_sizes)):
            ys = sorted(max(int(x), 1) for x in sizes) or [1]
            line.set_data(range(1, len(ys) + 1), ys)
            longest, largest = max(longest, len(ys)), max(largest, ys[-1])
        top = 1
        for bars, values in ((self._score_base, result.baseline_top1_scores), (self._score_tuned, result.top1_scores)):
            counts, _ = np.histogram([v for v in values if v is not None], bins=_SCORE_EDGES)
            for bar, c in zip(bars, counts, strict=True):
                bar.set_height(int(c))
            top = max(top, int(counts.max()) if len(counts) else 0)
        rows = result.metric_rows()
        names = [r["metric"] for r in rows]
        deltas = [float(r["delta"]) for r in rows]
        if names != self._delta_names:  # another metric set: the bars (only) are made anew
            if self._delta_bars is not None:
                self._delta_bars.remove()
            self._delta_bars = delta.bar(names, [0.0] * len(names)) if names else None
            for bar in self._delta_bars or ():
                bar.set_animated(True)
            self._delta_names = names
            self._limits = None
        for m in self._marks:
            m.remove()
        self._marks = []
        for i, (bar, d, r) in enumerate(zip(self._delta_bars or (), deltas, rows, strict=True)):
            bar.set_height(d)
            bar.set_color("#2a7d2a" if d > 0 else "#b22222")
            if r["significant"]:
                self._marks.append(delta.annotate("*", (i, d), ha="center", va="bottom" if d >= 0 else "top",
                                                  fontsize=12, animated=True))
        span = max([abs(d) for d in deltas] + [0.0])
        old = self._limits
        # ranges only grow (in steps), so most changes keep the background
        need = (longest, largest, top, span)
        if old is None or any(n > o for n, o in zip(need, old[:4], strict=True)):
            step = (max(longest, old[0] if old else 0), _ceil_pow(largest, old[1] if old else 0),
                    max(top + 2, old[2] if old else 0), _ceil_step(span, old[3] if old else 0.0))
            pool.set_xlim(0.5, step[0] + 0.5)
            pool.set_ylim(0.8, step[1] * 1.5)
            score.set_ylim(0, step[2] * 1.1)
            delta.set_ylim(-step[3] * 1.25, step[3] * 1.25)
            self._limits = step
            self._background = None
        self.updates += 1
        return self.fig

    def _draw_background(self) -> None:
        self.fig.tight_layout()
        self.canvas.draw()  # the animated (data) artists are left out
        self._background = self.canvas.copy_from_bbox(self.fig.bbox)
        self.backgrounds += 1

    def png(self, result: TunerResult, dpi: int = 80) -> bytes:
        """`update`, then the background with the data artists blitted on, as PNG bytes."""
        import io

        from PIL import Image

        self.update(result)
        if self._background is None:
            self._draw_background()
        self.canvas.restore_region(self._background)
        for artist in self._artists():
            self.fig.draw_artist(artist)
        w, h = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (w, h), bytes(self.canvas.buffer_rgba()), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        image.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()


def _ceil_pow(x: float, old: float) -> float:
    """The next power of ten at or above x (never below `old`)."""
    import math

    return max(old, 10 ** math.ceil(math.log10(max(x, 1))))


def _ceil_step(x: float, old: float) -> float:
    """x rounded up to 0.05, at least 0.05 (never below `old`)."""
    import math

    return max(old, 0.05, math.ceil(x / 0.05) * 0.05)


def tuner_figure(result: TunerResult) -> Any:
    """The tuned profile against its baseline as a figure: pool size and top-1 reranker score per
    question, and the metric deltas with their (Holm-corrected) significance markers."""
    f = TunerFigure()
    f.update(result)
    for artist in f._artists():  # a figure drawn the ordinary way shows its data too
        artist.set_animated(False)
    f.fig.tight_layout()
    return f.fig


def figure_html(result: TunerResult, figure: TunerFigure | None = None) -> str:
    """The figure as an inline PNG: `figure` (the tuner's own, updated in place) or a new one."""
    import base64

    from ragdiag.checks.figures import png_bytes

    data = figure.png(result) if figure is not None else png_bytes(tuner_figure(result), dpi=80)
    png = base64.b64encode(data).decode("ascii")
    return (f"<img class='ragdiag-tuner-figure' style='max-width:100%;height:auto' alt='tuned against baseline' "
            f"src='data:image/png;base64,{png}'/>")


BUSY_HTML = ("<div class='ragdiag-status ragdiag-busy' style='color:#9a6700'><b>computing…</b> "
             "evaluating the change on the questions routed to this profile</div>")


def drill_html(rows: Sequence[DrillRow], *, baseline_rows: Sequence[DrillRow] = (),
               top: int | None = None) -> str:
    """The drill-down table of one question."""
    if not rows:
        return "<div>no relevant documents judged for this question</div>"
    names = [n for n, _ in rows[0].vector_ranks]
    base = {r.key: r for r in baseline_rows}

    def rank(x: int | None) -> str:
        return "–" if x is None else str(x)

    head = ("<tr><th>document</th><th>grade</th><th>keyword</th>"
            + "".join(f"<th>{html.escape(n.split(':', 1)[-1])}</th>" for n in names)
            + "<th>pool</th><th>in window</th><th>final</th><th>lost at</th>"
            + ("<th>baseline final</th>" if base else "") + "</tr>")
    body = []
    for r in rows:
        window = "–" if r.in_window is None else ("yes" if r.in_window else "no")
        lost = r.lost_at or "✓"
        if r.excluded_by:
            lost += ": " + "; ".join(r.excluded_by)
        b = base.get(r.key)
        body.append(f"<tr><td style='white-space:nowrap'>{html.escape(r.key)}</td><td>{r.grade}</td><td>{rank(r.keyword_rank)}</td>"
                    + "".join(f"<td>{rank(v)}</td>" for _, v in r.vector_ranks)
                    + f"<td>{rank(r.pool_rank)}</td><td>{window}</td><td>{rank(r.final_rank)}</td>"
                    f"<td>{html.escape(lost)}</td>"
                    + (f"<td>{rank(b.final_rank) if b else '–'}</td>" if base else "") + "</tr>")
    note = f"<div style='color:#777;font-size:85%'>lost = not within the first {top} results</div>" \
        if top else ""
    return ("<table class='ragdiag-drill' style='font-size:90%;line-height:1.2'>" + head + "".join(body) + "</table>"
            + note)

