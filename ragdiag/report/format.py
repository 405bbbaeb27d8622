"""Formatting helpers of the report's HTML: escaping, cell values, dates, status badges, tables.

Shared by the section renderers and the HTML export.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.report.texts import _t

MAX_CELL_CHARS = 400
_STATUS_COLOURS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "skipped": "#6e7781",
                   "error": "#8250df"}


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)



def _fmt(value: Any, lang: str = "en") -> str:
    """A cell or metric as short text: None -> "–", floats to 4 significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return _t("yes" if value else "no", lang)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v, lang) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_fmt(v, lang)}" for k, v in value.items())
    text = str(value)
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS - 1] + "…"


def _date(iso: str | None) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM UTC' (or as given when it does not parse)."""
    if not iso:
        return "–"
    try:
        d = _dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    if d.tzinfo is not None:
        d = d.astimezone(_dt.UTC)
        return d.strftime("%Y-%m-%d %H:%M UTC")
    return d.strftime("%Y-%m-%d %H:%M")


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _badge(status: str, label: str | None = None) -> str:
    """A coloured status badge; `label` is its text (default: the status in capitals)."""
    colour = _STATUS_COLOURS.get(status, "#6e7781")
    return (f'<span class="rd-badge rd-{_e(status)}" style="background:{colour};color:#fff;'
            f'border-radius:3px;padding:1px 6px;font-weight:bold;font-size:85%;white-space:nowrap">'
            f"{_e(status.upper() if label is None else label)}</span>")


def _frame_html(frame: Any, lang: str = "en", *, note: str = "", keys: Sequence[str] | None = None) -> str:
    """A DataFrame as a report table: cells formatted by column (missing values "–", never
    "nan"), escaped; duplicate column labels are kept apart. `keys` are the columns' stable
    keys (default: the labels)."""
    from ragdiag.report.tables import Table, table_html

    cols = [str(c) for c in frame.columns]
    rows = [[None if _missing(v) else v for v in r] for r in frame.itertuples(index=False, name=None)]
    table = table_html(Table(cols, list(keys or cols), rows), lang)
    note_html = f'<p class="rd-note">{_e(note)}</p>' if note else ""
    return table + note_html


def _missing(v: Any) -> bool:
    try:
        return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")
    except (TypeError, ValueError):
        return False


def _frame(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> Any:
    import pandas as pd

    return pd.DataFrame([list(r) for r in rows], columns=list(columns))

