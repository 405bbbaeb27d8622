"""Figures beside their checks: the shared matplotlib set-up and the lookup by finding.

Each check draws its own figure (`Check.draw(finding, lang)`) from the finding's evidence
tables, read by stable table key and column key, never by English title or position. A
finding loaded from JSON therefore draws the same picture, in any report language: axis
labels and titles are catalogue messages of the check's spec (``[messages.fig_*]``).

Figures are plain `matplotlib.figure.Figure` objects on their own Agg canvas, never
registered with pyplot: drawing one neither switches the notebook's backend nor shows it
twice. They display themselves in Jupyter (and under papermill) as PNG (`_repr_png_`).
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["figure", "plt", "text", "column_values", "png_bytes", "FigureDataError"]


class FigureDataError(Exception):
    """A finding's evidence lacks what its figure needs (a table or column renamed)."""


def _figure_class() -> Any:
    global _FIGURE_CLASS
    if _FIGURE_CLASS is None:
        from matplotlib.figure import Figure

        class CheckFigure(Figure):  # named "Figure" below: it is one, and displays itself
            """A check's figure: a Figure that displays as PNG in Jupyter (`display(fig)`)."""

            def _repr_png_(self) -> bytes:
                return png_bytes(self, dpi=100)

        CheckFigure.__name__ = CheckFigure.__qualname__ = "Figure"
        _FIGURE_CLASS = CheckFigure
    return _FIGURE_CLASS


_FIGURE_CLASS: Any = None


class _Figures:
    """The part of pyplot the checks' `draw` uses (`subplots`), without pyplot's global state."""

    @staticmethod
    def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] | None = None,
                 **kwargs: Any) -> tuple[Any, Any]:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = _figure_class()(figsize=figsize)
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, **kwargs)
        return fig, axes


def plt() -> Any:
    """What the checks draw with: ``plt().subplots(...)`` gives a `CheckFigure` and its axes on an
    Agg canvas (no display needed; the notebook's pyplot backend is left as it is)."""
    return _Figures()


def png_bytes(fig: Any, *, dpi: int = 150) -> bytes:
    """A figure as PNG bytes (tight bounding box)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def _catalogue() -> Any:
    from ragdiag.checks.base import catalogue_for
    from ragdiag.inputs.checklist import load_checklist

    return catalogue_for(load_checklist().values())


def text(check_id: str, name: str, lang: str = "en", **params: Any) -> str:
    """A figure text (``[messages.<name>]`` of the check's spec) in `lang`."""
    from ragdiag.model.messages import Message, render

    msg_id = name if "." in name else f"{check_id}.{name}"
    return render(Message(msg_id, params), lang, _catalogue())


def column_values(finding: Any, table: str, *columns: str) -> list[tuple[Any, ...]] | None:
    """Rows of `table` restricted to `columns` (by key); None when the finding has no such
    table (nothing to draw). A present table without a column raises `FigureDataError`:
    that is a renamed column, a bug to see, not a figure to drop silently."""
    ev = finding.evidence_table(table)
    if ev is None:
        return None
    try:
        cols = [ev.column(c) for c in columns]
    except KeyError as exc:
        raise FigureDataError(str(exc)) from None
    return list(zip(*cols, strict=True)) if cols else []


def figure(finding: Any, lang: str = "en") -> Any:
    """The figure of a finding (a matplotlib Figure), or None when it has nothing to draw.

    Skipped findings and findings without the evidence their figure reads draw nothing;
    a figure function that crashes raises (the report shows the error, it does not hide it).
    """
    if finding.status == "skipped":
        return None
    from ragdiag.checks.registry import default_registry

    try:
        check = default_registry().get(finding.check_id)
    except Exception:
        check = None
    draw = getattr(check, "draw", None)
    if not callable(draw) or not getattr(check, "figure_id", None):
        return None  # a plugin check without a figure
    return draw(finding, lang)
