"""Findings: what a check says, with its evidence, and the audit result that collects them.

Every check returns one `Finding`. An audit collects them in an `AuditResult`,
which renders itself in a notebook, writes JSON for scripts and CI, and turns
into an exit code.

Statuses and their order
------------------------
``pass``, ``warn``, ``fail``, ``skipped``, ``error``. "Worst of" uses this
severity order, highest first::

    fail > error > warn > skipped > pass

``fail`` is a confirmed problem. ``error`` means the check could not finish (a
crash, a failed request budget): it ranks above ``warn`` because nothing can be
concluded, but below ``fail`` because nothing was proven either. ``skipped``
(an input was missing) ranks above ``pass`` so a skipped check is never
mistaken for a clean bill of health. For exit codes ``error`` counts as
``fail`` (see `AuditResult.exit_code`).

Values are normalised when a finding is built: numpy scalars become Python
numbers, NaN and infinities become ``None`` ("not measured"), lists become
tuples. A finding is therefore JSON-safe by construction and
``Finding.from_dict(f.to_dict()) == f`` holds.

JSON schema (``AuditResult.to_dict()`` / ``to_json()``)
-------------------------------------------------------
Scripts and CI may rely on this shape; ``schema_version`` changes when it
changes incompatibly. Keys may be added without a version change.

.. code-block:: text

    {
      "schema_version": 1,
      "ragdiag_version": "0.1.0",
      "meta": {...},                      # free-form, JSON-safe: target, profiles, config, timings
      "summary": {"pass": 3, "warn": 2, "fail": 1, "skipped": 4, "error": 0},  # every status, zeros included
      "worst": "fail",                    # worst status over all findings ("pass" if there are none)
      "findings": [
        {
          "check_id": "pool_size",
          "status": "fail",               # one of pass | warn | fail | skipped | error
          "headline": "2 of 5 semantic profiles configure a pool below 50 candidates.",
          "title": "Post-filter candidate pool",       # may be ""
          "question": "Does the fused candidate pool reach ...?",  # may be ""
          "metrics": {"name": 12.5, "other": null, "label": "text"},  # number | string | bool | null
          "evidence": [
            {"title": "Profiles below the window",
             "columns": ["profile", "k", "max_text_recall_size", "pool"],
             "rows": [["definition", 20, 20, 40]],     # each row has len(columns) cells
             "note": ""}
          ],
          "recommendations": ["Set k to 50 on profile 'definition'."],
          "incomplete": {"failed_requests": 3, "requests": 120},  # {} when complete
          "skipped_reason": "",           # non-empty when status is "skipped"
          "figures": ["pool_size_histogram"], # figure names or file paths the report shows
          "effects": [                    # measured effects of a change (may be empty)
            {"metric": "ndcg@10", "before": 0.323, "after": 0.452, "delta": 0.129,
             "p": 0.0004, "n": 41, "test": "paired_ttest",
             "action": "remove 'confidence_score ge 0.85' before reranking",
             "scope": "fact questions",
             "action_msg": {"$msg": "...", "params": {}}, "scope_msg": {...}}
          ]
        }
      ]
    }

Evidence cells are numbers, strings, booleans, null, or lists/objects of
those.

Effects (``Finding.effects``)
-----------------------------
A check that *measures* what a change would do records it as an `Effect`: the
metric, its value before and after the change on the same questions, the delta
(after - before; higher is better for every retrieval metric ragdiag reports),
the p-value of the paired test and the number of paired questions. `action`
says what the change is ("remove 'confidence_score ge 0.85' before
reranking"), `scope` on which questions it was measured ("fact questions");
both are catalogue messages, re-rendered by `localized`. The report ranks its
priorities by status, then by the size of the best improving effect.
"""

from __future__ import annotations

import html
import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError, InputDataError
from ragdiag.model.messages import Catalogue, Message, render

__all__ = [
    "STATUSES",
    "SEVERITY",
    "PRIORITIES",
    "FAIL_ON",
    "SCHEMA_VERSION",
    "worst",
    "Evidence",
    "Finding",
    "RequestFailure",
    "Location",
    "Effect",
    "AuditResult",
    "EXIT_OK",
    "EXIT_FINDINGS",
    "EXIT_INPUT",
    "EXIT_INCOMPLETE",
    "EXIT_INTERNAL",
]

STATUSES: tuple[str, ...] = ("pass", "warn", "fail", "skipped", "error")
#: Severity rank per status; higher is worse. See the module docstring.
SEVERITY: Mapping[str, int] = {"pass": 0, "skipped": 1, "warn": 2, "error": 3, "fail": 4}
#: Valid values of `AuditResult.exit_code(fail_on=...)`.
FAIL_ON: tuple[str, ...] = ("warn", "fail", "never")
SCHEMA_VERSION = 2
_READABLE_VERSIONS = (1, 2)
#: Process exit codes of `ragdiag audit` (see `AuditResult.exit_code`).
EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4  # see ragdiag.errors

HTML_MAX_ROWS = 50

_BADGE_COLOURS = {
    "pass": "#1a7f37",
    "warn": "#9a6700",
    "fail": "#cf222e",
    "skipped": "#6e7781",
    "error": "#8250df",
}


def worst(statuses: Iterable[str]) -> str:
    """The most severe status of `statuses` (``fail > error > warn > skipped > pass``).

    An empty iterable gives ``"pass"``: nothing was found wrong.
    """
    result = "pass"
    for status in statuses:
        _check_status(status)
        if SEVERITY[status] > SEVERITY[result]:
            result = status
    return result


def _check_status(status: object) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")


# ---------------------------------------------------------------------------
# JSON-safe normalisation


def _scalar(value: Any, where: str) -> Any:
    """Normalise one scalar: numpy -> Python, NaN/inf/NA -> None; reject non-scalars."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)  # also turns numpy.str_ into str
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas.NA, pandas.NaT
        return None
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return _scalar(value.item(), where)  # numpy scalars and 0-d arrays
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    raise TypeError(f"{where}: expected a number, string, bool or None, "
                    f"got {type(value).__name__} {value!r}")


def _cell(value: Any, where: str) -> Any:
    """Normalise an evidence cell: a scalar, a sequence of cells (-> tuple) or a mapping."""
    if isinstance(value, Mapping):
        return {str(k): _cell(v, where) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return tuple(_cell(v, where) for v in items)
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas.NA, pandas.NaT
        return None
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        converted = value.tolist()  # arrays -> lists, scalars -> Python scalars
        return _cell(converted, where) if converted is not value else _scalar(value, where)
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "isoformat") and not isinstance(value, numbers.Number):  # date, datetime
        return value.isoformat()
    return _scalar(value, where)


def _jsonable(value: Any) -> Any:
    """Tuples -> lists, recursively; everything else as is (already normalised)."""
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _meta(value: Any, where: str) -> Any:
    """Normalise free-form metadata to plain JSON types (sequences become lists)."""
    if isinstance(value, Mapping):
        return {str(k): _meta(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        # a set's order is the string-hash salt's: sorted, as in `_cell`, so the JSON is the same every run
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [_meta(v, where) for v in items]
    return _jsonable(_cell(value, where))


def _text_tuple(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    out = tuple(sorted(value, key=str) if isinstance(value, set | frozenset) else value)  # a set: a stable order
    for item in out:
        if not isinstance(item, str):
            raise TypeError(f"{where}: expected strings, got {type(item).__name__} {item!r}")
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _esc(value: Any) -> str:
    return html.escape(_fmt(value))


def _badge(status: str) -> str:
    colour = _BADGE_COLOURS.get(status, "#6e7781")
    return (f'<span style="background:{colour};color:#fff;border-radius:3px;padding:1px 6px;'
            f'font-weight:bold;font-size:90%">{html.escape(status.upper())}</span>')


# ---------------------------------------------------------------------------
# Evidence


@dataclass(frozen=True)
class Evidence:
    """A small table that backs a finding: queries, documents, profiles, file:line references.

    `rows` is a tuple of rows, each with one cell per column. Cells are
    normalised like metrics (numpy -> Python, NaN -> None); list cells become
    tuples.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    note: str = ""
    #: stable id that figures, scripts and the report read a table by (never the title)
    key: str = ""
    #: stable column ids (``columns`` are the labels in the audit's language)
    column_keys: tuple[str, ...] = ()
    title_msg: Message | None = None
    note_msg: Message | None = None
    #: (row, column, message) of cells holding computed text, re-rendered by `localized`
    cell_msgs: tuple[tuple[int, int, Message], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "cell_msgs", tuple((int(r), int(c), m) for r, c, m in self.cell_msgs))
        columns = _text_tuple(self.columns, f"evidence {self.title!r} columns")
        keys = _text_tuple(self.column_keys, f"evidence {self.title!r} column keys") or columns
        if len(keys) != len(columns):
            raise ValueError(f"evidence {self.title!r}: {len(keys)} column keys for {len(columns)} columns")
        object.__setattr__(self, "column_keys", keys)
        object.__setattr__(self, "key", self.key or _slug(self.title))
        rows = []
        for i, row in enumerate(self.rows):
            if isinstance(row, str | bytes | Mapping):
                raise TypeError(f"evidence {self.title!r}: row {i} must be a sequence of cells, "
                                f"got {type(row).__name__}")
            row = tuple(row)
            if len(row) != len(columns):
                raise ValueError(f"evidence {self.title!r}: row {i} has {len(row)} cells, "
                                 f"expected {len(columns)} (columns {', '.join(columns)})")
            rows.append(tuple(_cell(v, f"evidence {self.title!r} row {i}") for v in row))
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "rows", tuple(rows))

    @classmethod
    def from_dataframe(cls, title: str, frame: Any, note: str = "") -> Evidence:
        """Build evidence from a pandas DataFrame (index dropped; reset it first to keep it)."""
        return cls(title=title, columns=tuple(str(c) for c in frame.columns),
                   rows=tuple(tuple(r) for r in frame.itertuples(index=False, name=None)), note=note)

    @classmethod
    def from_records(cls, title: str, records: Sequence[Mapping[str, Any]], *,
                     columns: Sequence[str] | None = None, note: str = "") -> Evidence:
        """Build evidence from dicts; columns default to the keys in first-seen order."""
        if columns is None:
            seen: dict[str, None] = {}
            for rec in records:
                seen.update(dict.fromkeys(rec))
            columns = list(seen)
        return cls(title=title, columns=tuple(columns),
                   rows=tuple(tuple(rec.get(c) for c in columns) for rec in records), note=note)

    def column(self, key: str) -> list[Any]:
        """The cells of one column, by its stable key (`KeyError` naming the keys if absent)."""
        try:
            i = self.column_keys.index(key)
        except ValueError:
            raise KeyError(f"evidence {self.key!r} has no column {key!r}; columns: "
                           f"{', '.join(self.column_keys)}") from None
        return [r[i] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by the stable column keys."""
        return [dict(zip(self.column_keys, r, strict=True)) for r in self.rows]

    def localized(self, lang: str, catalogue: Catalogue, labels: Mapping[str, Mapping[str, str]]) -> Evidence:
        """This table with title, note and column labels in `lang` (unchanged where no text exists)."""
        from dataclasses import replace

        params = dict(self.title_msg.params) if self.title_msg is not None else {}

        def label(key: str, current: str) -> str:
            texts = labels.get(key) or {}
            template = texts.get(lang) or texts.get("en")
            if not template:
                return current
            try:
                return template.format(**params)
            except (KeyError, ValueError, IndexError):
                return template

        cols = tuple(label(k, c) for k, c in zip(self.column_keys, self.columns, strict=True))
        rows = self.rows
        if self.cell_msgs:
            grid = [list(r) for r in rows]
            for r, c, m in self.cell_msgs:
                if r < len(grid) and c < len(grid[r]):
                    grid[r][c] = render(m, lang, catalogue)
            rows = tuple(tuple(r) for r in grid)
        return replace(self, columns=cols, rows=rows,
                       title=render(self.title_msg, lang, catalogue) if self.title_msg else self.title,
                       note=render(self.note_msg, lang, catalogue) if self.note_msg else self.note)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "title": self.title, "columns": list(self.columns),
                             "column_keys": list(self.column_keys),
                             "rows": [_jsonable(list(r)) for r in self.rows], "note": self.note}
        if self.title_msg is not None:
            d["title_msg"] = self.title_msg.to_dict()
        if self.note_msg is not None:
            d["note_msg"] = self.note_msg.to_dict()
        if self.cell_msgs:
            d["cell_msgs"] = [[r, c, m.to_dict()] for r, c, m in self.cell_msgs]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        try:
            return cls(title=data["title"], columns=tuple(data["columns"]),
                       rows=tuple(tuple(r) for r in data.get("rows", ())), note=data.get("note", ""),
                       key=data.get("key", ""), column_keys=tuple(data.get("column_keys") or ()),
                       title_msg=Message.from_dict(data["title_msg"]) if data.get("title_msg") else None,
                       note_msg=Message.from_dict(data["note_msg"]) if data.get("note_msg") else None,
                       cell_msgs=tuple((r, c, Message.from_dict(m)) for r, c, m in data.get("cell_msgs") or ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputDataError(f"invalid evidence {dict(data).get('title')!r}: {exc}; expected "
                                 "an object with 'title', 'columns', 'rows' and optional 'note'") from exc

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame([list(r) for r in self.rows], columns=list(self.columns))

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"Evidence({self.title!r}, {len(self.rows)} rows x {len(self.columns)} columns)"

    def _repr_html_(self, max_rows: int = HTML_MAX_ROWS) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in row) + "</tr>"
                       for row in self.rows[:max_rows])
        parts = [f"<div><b>{html.escape(self.title)}</b>"]
        if self.note:
            parts.append(f"<br><i>{html.escape(self.note)}</i>")
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        if len(self.rows) > max_rows:
            parts.append(f"<p>… {len(self.rows) - max_rows} more rows</p>")
        if not self.rows:
            parts.append("<p>(no rows)</p>")
        parts.append("</div>")
        return "".join(parts)


# ---------------------------------------------------------------------------
# Finding

_FINDING_KEYS = ("check_id", "status", "headline", "metrics", "evidence", "recommendations",
                 "title", "question", "incomplete", "skipped_reason", "figures", "failures",
                 "observed", "locations", "messages", "effects", "priority")
#: The report's priority classes, most urgent first (`Finding.priority`)
PRIORITIES: tuple[str, ...] = ("security", "measured", "unmeasured", "none")


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60] or "table"


@dataclass(frozen=True)
class RequestFailure:
    """A distinct reason requests failed, where (profile) and how often."""

    reason: str
    profile: str | None = None
    count: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "profile": self.profile, "count": self.count}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RequestFailure:
        return cls(str(d.get("reason", "")), d.get("profile"), int(d.get("count", 1)))


@dataclass(frozen=True)
class Location:
    """A place in the client's code a finding points at (for SARIF and editors)."""

    file: str
    line: int
    message: str = ""
    level: str = "warning"  # SARIF level: error | warning | note
    message_msg: Message | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "line": self.line, "message": self.message,
                             "level": self.level}
        if self.message_msg is not None:
            d["message_msg"] = self.message_msg.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Location:
        return cls(str(d["file"]), int(d["line"]), str(d.get("message", "")), str(d.get("level", "warning")),
                   Message.from_dict(d["message_msg"]) if d.get("message_msg") else None)


@dataclass(frozen=True)
class Effect:
    """A measured effect of a change: `metric` before and after it on the same questions.

    `delta` is after - before (computed when not given); `p` the p-value of the paired
    test named by `test`, `n` the number of paired questions. `action` (what the change
    is) and `scope` (where it was measured) are rendered texts; `action_msg` and
    `scope_msg` the catalogue messages they come from (re-rendered per language).
    """

    metric: str
    before: float | None
    after: float | None
    delta: float | None = None
    p: float | None = None
    n: int | None = None
    action: str = ""
    scope: str = ""
    test: str = "paired_ttest"
    action_msg: Message | None = None
    scope_msg: Message | None = None

    def __post_init__(self) -> None:
        where = f"effect {self.metric!r}"
        if not isinstance(self.metric, str) or not self.metric:
            raise ValueError(f"an effect names its metric, got {self.metric!r}")
        for name in ("before", "after", "delta", "p"):
            object.__setattr__(self, name, _scalar(getattr(self, name), f"{where} {name}"))
        if self.delta is None and self.before is not None and self.after is not None:
            object.__setattr__(self, "delta", float(self.after) - float(self.before))
        n = _scalar(self.n, f"{where} n")
        object.__setattr__(self, "n", None if n is None else int(n))

    @property
    def improves(self) -> bool:
        """True when the change raises the metric (every ragdiag retrieval metric: higher is better)."""
        return self.delta is not None and self.delta > 1e-9

    @property
    def significant(self) -> bool:
        return self.p is not None and self.p < 0.05

    def localized(self, lang: str, catalogue: Catalogue) -> Effect:
        from dataclasses import replace

        return replace(self, action=render(self.action_msg, lang, catalogue) if self.action_msg else self.action,
                       scope=render(self.scope_msg, lang, catalogue) if self.scope_msg else self.scope)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"metric": self.metric, "before": self.before, "after": self.after,
                             "delta": self.delta, "p": self.p, "n": self.n, "test": self.test,
                             "action": self.action, "scope": self.scope}
        if self.action_msg is not None:
            d["action_msg"] = self.action_msg.to_dict()
        if self.scope_msg is not None:
            d["scope_msg"] = self.scope_msg.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Effect:
        return cls(metric=str(d["metric"]), before=d.get("before"), after=d.get("after"), delta=d.get("delta"),
                   p=d.get("p"), n=d.get("n"), action=str(d.get("action", "")), scope=str(d.get("scope", "")),
                   test=str(d.get("test", "paired_ttest")),
                   action_msg=Message.from_dict(d["action_msg"]) if d.get("action_msg") else None,
                   scope_msg=Message.from_dict(d["scope_msg"]) if d.get("scope_msg") else None)


@dataclass(frozen=True)
class Finding:
    """The result of one check: status, a one-sentence headline, metrics, evidence, fixes.

    `incomplete` counts what could not be run (e.g. ``{"failed_requests": 3,
    "requests": 120}``, plus ``"above_threshold": 1`` when more failed than the
    spec tolerates); an empty mapping means the check saw everything it asked
    for, and `failures` keeps the first distinct reasons. `observed` counts the
    positive evidence a verdict rests on (a ``pass`` needs some). `figures`
    names the figures the report shows. The ``*_msgs`` fields hold the computed
    texts as catalogue messages, so the finding renders in any language
    (`localized`).
    """

    check_id: str
    status: str
    headline: str
    metrics: Mapping[str, float | int | str | None] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    recommendations: tuple[str, ...] = ()
    title: str = ""
    question: str = ""
    incomplete: Mapping[str, int] = field(default_factory=dict)
    skipped_reason: str = ""
    figures: tuple[str, ...] = ()
    failures: tuple[RequestFailure, ...] = ()
    observed: Mapping[str, int] = field(default_factory=dict)
    locations: tuple[Location, ...] = ()
    headline_msgs: tuple[Message, ...] = ()
    recommendation_msgs: tuple[Message, ...] = ()
    skipped_msg: Message | None = None
    #: the headline's parts cut behind "(+N more)" (the headline shows the first few; the report's
    #: check section and findings.json hold them all)
    more_msgs: tuple[Message, ...] = ()
    #: measured effects of the changes the check recommends (see `Effect`)
    effects: tuple[Effect, ...] = ()
    #: what the report sorts its priorities by (`PRIORITIES`): ``security`` (a permission leak,
    #: a fail-open or unescaped security filter), ``measured`` (a significant improving effect),
    #: ``unmeasured`` (a fault whose fix no metric measured), ``none`` (nothing to do)
    priority: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.check_id, str) or not self.check_id:
            raise ValueError(f"finding check_id must be a non-empty string, got {self.check_id!r}")
        _check_status(self.status)
        where = f"finding {self.check_id!r}"
        metrics = {}
        for key, value in dict(self.metrics).items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: metric names must be strings, got {key!r}")
            metrics[key] = _scalar(value, f"{where} metric {key!r}")
        incomplete = {}
        for key, value in dict(self.incomplete).items():
            v = _scalar(value, f"{where} incomplete {key!r}")
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{where}: incomplete counts must be integers, got {key}={value!r}")
            incomplete[str(key)] = v
        evidence = tuple(self.evidence) if not isinstance(self.evidence, Evidence) else (self.evidence,)
        for ev in evidence:
            if not isinstance(ev, Evidence):
                raise TypeError(f"{where}: evidence must be Evidence objects, got {type(ev).__name__}")
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "incomplete", incomplete)
        object.__setattr__(self, "evidence", evidence)
        object.__setattr__(self, "recommendations", _text_tuple(self.recommendations, f"{where} recommendations"))
        object.__setattr__(self, "figures", _text_tuple(self.figures, f"{where} figures"))
        object.__setattr__(self, "failures", tuple(self.failures))
        object.__setattr__(self, "locations", tuple(self.locations))
        effects = tuple(self.effects) if not isinstance(self.effects, Effect) else (self.effects,)
        for e in effects:
            if not isinstance(e, Effect):
                raise TypeError(f"{where}: effects must be Effect objects, got {type(e).__name__}")
        object.__setattr__(self, "effects", effects)
        object.__setattr__(self, "headline_msgs", tuple(self.headline_msgs))
        object.__setattr__(self, "recommendation_msgs", tuple(self.recommendation_msgs))
        object.__setattr__(self, "more_msgs", tuple(self.more_msgs))
        object.__setattr__(self, "observed", {str(k): int(v) for k, v in dict(self.observed).items()})
        if self.priority not in ("", *PRIORITIES):
            raise ValueError(f"{where}: priority must be one of {', '.join(PRIORITIES)}, got {self.priority!r}")
        if not self.priority:
            object.__setattr__(self, "priority", self.derived_priority())

    def derived_priority(self) -> str:
        """The priority class when the check did not set one: a significant improving effect makes
        a ``fail``/``warn`` ``measured``, otherwise ``unmeasured``; other statuses ``none``."""
        if self.priority:
            return self.priority
        if self.status not in ("fail", "warn"):
            return "none"
        return "measured" if any(e.improves and e.significant for e in self.effects) else "unmeasured"

    @property
    def is_incomplete(self) -> bool:
        """True when some of the requests this check needed failed or were not sent."""
        return bool(self.incomplete.get("failed_requests"))

    @property
    def above_failure_threshold(self) -> bool:
        """True when more requests failed than the check's spec tolerates."""
        return bool(self.incomplete.get("above_threshold"))

    def evidence_table(self, key: str) -> Evidence | None:
        """The evidence table with stable key `key`, or None."""
        return next((ev for ev in self.evidence if ev.key == key), None)

    def localized(self, lang: str, catalogue: Catalogue,
                  labels: Mapping[str, Mapping[str, str]] | None = None) -> Finding:
        """This finding with headline, recommendations, evidence texts and skip reason in `lang`.

        Texts without a message (plugins, findings read from old JSON) stay as they are.
        """
        from dataclasses import replace

        changes: dict[str, Any] = {}
        if self.headline_msgs:
            changes["headline"] = "; ".join(render(m, lang, catalogue) for m in self.headline_msgs)
        if self.recommendation_msgs:
            changes["recommendations"] = tuple(dict.fromkeys(render(m, lang, catalogue)
                                                             for m in self.recommendation_msgs))
        if self.skipped_msg is not None:
            changes["skipped_reason"] = render(self.skipped_msg, lang, catalogue)
        changes["evidence"] = tuple(ev.localized(lang, catalogue, labels or {}) for ev in self.evidence)
        changes["locations"] = tuple(replace(loc, message=render(loc.message_msg, lang, catalogue))
                                     if loc.message_msg else loc for loc in self.locations)
        changes["effects"] = tuple(e.localized(lang, catalogue) for e in self.effects)
        return replace(self, **changes)

    # -- constructors -------------------------------------------------------

    @classmethod
    def skipped(cls, check_id: str, reason: str, *, what_to_supply: str = "", title: str = "",
                question: str = "") -> Finding:
        """A check that did not run because an input is missing; says what to supply."""
        recs = (f"To run this check, supply {what_to_supply}.",) if what_to_supply else ()
        return cls(check_id=check_id, status="skipped", headline=f"Skipped: {reason}",
                   recommendations=recs, title=title, question=question, skipped_reason=reason)

    @classmethod
    def not_implemented(cls, check_id: str, *, title: str = "", question: str = "") -> Finding:
        """The placeholder result for a check that has a spec but no implementation."""
        return cls.skipped(check_id, "not implemented yet", title=title, question=question)

    @classmethod
    def errored(cls, check_id: str, message: str, *, title: str = "", question: str = "",
                incomplete: Mapping[str, int] | None = None) -> Finding:
        """A check that could not finish: a crash or too many failed requests."""
        return cls(check_id=check_id, status="error", headline=f"Error: {message}", title=title,
                   question=question, incomplete=incomplete or {})

    # -- serialisation ------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict in the documented schema (tuples become lists)."""
        return {
            "check_id": self.check_id,
            "status": self.status,
            "headline": self.headline,
            "title": self.title,
            "question": self.question,
            "metrics": dict(self.metrics),
            "evidence": [ev.to_dict() for ev in self.evidence],
            "recommendations": list(self.recommendations),
            "incomplete": dict(self.incomplete),
            "skipped_reason": self.skipped_reason,
            "figures": list(self.figures),
            "failures": [f.to_dict() for f in self.failures],
            "observed": dict(self.observed),
            "locations": [loc.to_dict() for loc in self.locations],
            "messages": {"headline": [m.to_dict() for m in self.headline_msgs],
                         "recommendations": [m.to_dict() for m in self.recommendation_msgs],
                         "skipped": self.skipped_msg.to_dict() if self.skipped_msg else None,
                         "more": [m.to_dict() for m in self.more_msgs]},
            "effects": [e.to_dict() for e in self.effects],
            "priority": self.priority,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Inverse of `to_dict`; unknown keys are ignored (newer files stay readable)."""
        if not isinstance(data, Mapping):
            raise InputDataError(f"a finding must be a JSON object, got {type(data).__name__}")
        missing = [k for k in ("check_id", "status", "headline") if k not in data]
        if missing:
            raise InputDataError(f"finding {data.get('check_id', '?')!r} lacks {', '.join(missing)}; "
                                 f"expected keys: {', '.join(_FINDING_KEYS)}")
        msgs = data.get("messages") or {}
        try:
            return cls(
                check_id=data["check_id"], status=data["status"], headline=data["headline"],
                metrics=data.get("metrics") or {},
                evidence=tuple(Evidence.from_dict(e) for e in data.get("evidence") or ()),
                recommendations=tuple(data.get("recommendations") or ()),
                title=data.get("title", ""), question=data.get("question", ""),
                incomplete=data.get("incomplete") or {},
                skipped_reason=data.get("skipped_reason", ""),
                figures=tuple(data.get("figures") or ()),
                failures=tuple(RequestFailure.from_dict(f) for f in data.get("failures") or ()),
                observed=data.get("observed") or {},
                locations=tuple(Location.from_dict(x) for x in data.get("locations") or ()),
                headline_msgs=tuple(Message.from_dict(m) for m in msgs.get("headline") or ()),
                recommendation_msgs=tuple(Message.from_dict(m) for m in msgs.get("recommendations") or ()),
                skipped_msg=Message.from_dict(msgs["skipped"]) if msgs.get("skipped") else None,
                more_msgs=tuple(Message.from_dict(m) for m in msgs.get("more") or ()),
                effects=tuple(Effect.from_dict(e) for e in data.get("effects") or ()),
                priority=str(data.get("priority") or ""),
            )
        except (TypeError, ValueError, KeyError) as exc:
            raise InputDataError(f"invalid finding {data.get('check_id')!r}: {exc}") from exc

    def metrics_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame({"metric": list(self.metrics), "value": list(self.metrics.values())})

    # -- display ------------------------------------------------------------

    def __repr__(self) -> str:
        headline = " ".join(self.headline.split())
        return f"<Finding {self.check_id} [{self.status}] {headline}>"

    def _repr_html_(self) -> str:
        parts = ['<div class="ragdiag-finding" style="margin:0.5em 0">']
        title = self.title or self.check_id
        parts.append(f"<div>{_badge(self.status)} <b>{html.escape(title)}</b> "
                     f"<code>{html.escape(self.check_id)}</code></div>")
        if self.question:
            parts.append(f"<div><i>{html.escape(self.question)}</i></div>")
        parts.append(f"<p>{html.escape(self.headline)}</p>")
        if self.incomplete:
            counts = ", ".join(f"{html.escape(k)} = {v}" for k, v in self.incomplete.items())
            reasons = "; ".join(f"{html.escape(r.reason)} ({r.count}x"
                                + (f", profile {html.escape(r.profile)}" if r.profile else "") + ")"
                                for r in self.failures)
            parts.append(f"<p><b>Incomplete:</b> {counts}{'. ' + reasons if reasons else ''}</p>")
        if self.metrics:
            rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{_esc(v)}</td></tr>"
                           for k, v in self.metrics.items())
            parts.append("<table><thead><tr><th>metric</th><th>value</th></tr></thead>"
                         f"<tbody>{rows}</tbody></table>")
        for ev in self.evidence:
            parts.append(ev._repr_html_())
        if self.recommendations:
            items = "".join(f"<li>{html.escape(r)}</li>" for r in self.recommendations)
            parts.append(f"<div><b>Recommendations</b><ul>{items}</ul></div>")
        png = self._figure_png()
        if png:
            parts.append(f'<div><img alt="{html.escape(title)}" src="data:image/png;base64,{png}"/></div>')
        parts.append("</div>")
        return "".join(parts)

    def _figure_png(self) -> str | None:
        """The check's figure of this finding as base64 PNG (None: nothing to draw, or no
        matplotlib); a figure that fails to draw is left out of the display, not raised."""
        import base64

        try:
            from ragdiag.checks.figures import figure, png_bytes

            fig = figure(self)
            return base64.b64encode(png_bytes(fig, dpi=100)).decode("ascii") if fig is not None else None
        except Exception:  # noqa: BLE001 - a notebook display must not crash on a figure
            return None


# ---------------------------------------------------------------------------
# AuditResult


@dataclass(frozen=True)
class AuditResult:
    """All findings of one audit plus free-form metadata (target, profiles, timings)."""

    findings: tuple[Finding, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: where every expected source of the goldset went (`ragdiag.engine.funnel.LossFunnel.to_dict`)
    loss_funnel: Mapping[str, Any] | None = None
    #: every profile element neutralised on the goldset (`ragdiag.engine.ablation.Ablation.to_dict`)
    ablation: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        findings = tuple(self.findings)
        for f in findings:
            if not isinstance(f, Finding):
                raise TypeError(f"an audit result holds Finding objects, got {type(f).__name__}")
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "meta", _meta(dict(self.meta), "meta"))
        for name in ("loss_funnel", "ablation"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _meta(dict(value), name))

    def __iter__(self):
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __getitem__(self, check_id: str) -> Finding:
        for f in self.findings:
            if f.check_id == check_id:
                return f
        ids = ", ".join(f.check_id for f in self.findings) or "(none)"
        raise KeyError(f"no finding for check {check_id!r}; findings: {ids}")

    def status_counts(self) -> dict[str, int]:
        """Count per status, every status present (zeros included), in `STATUSES` order."""
        counts = dict.fromkeys(STATUSES, 0)
        for f in self.findings:
            counts[f.status] += 1
        return counts

    def worst(self) -> str:
        return worst(f.status for f in self.findings)

    @property
    def incomplete(self) -> bool:
        """True when the audit cannot vouch for every check: an ``error``, or more failed
        requests than a check's spec tolerates."""
        return any(f.status == "error" or f.above_failure_threshold for f in self.findings)

    @property
    def crashed(self) -> tuple[str, ...]:
        """Ids of the checks that crashed (an internal error of ragdiag, not of the inputs or service)."""
        return tuple(f.check_id for f in self.findings if f.status == "error" and f.incomplete.get("internal_error"))

    def exit_code(self, fail_on: str = "fail") -> int:
        """The process exit code: 4 a check crashed, 3 incomplete, 1 a check at or above
        `fail_on`, else 0.

        ``EXIT_INTERNAL`` (4) wins: a crashed check is ragdiag's bug, whatever else happened.
        Then ``EXIT_INCOMPLETE`` (3): an audit with an ``error`` finding or with
        failed requests above a spec's threshold is incomplete whatever
        `fail_on` says. Otherwise ``"warn"`` gives 1 on warn, error or fail,
        ``"fail"`` on fail or error; ``"never"`` gives 0. (2, bad input, is the
        CLI's: no result exists then.)
        """
        if fail_on not in FAIL_ON:
            raise ConfigError(f"fail_on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}",
                              key="fail_on")
        if self.crashed:
            return EXIT_INTERNAL
        if self.incomplete:
            return EXIT_INCOMPLETE
        if fail_on == "never":
            return EXIT_OK
        threshold = SEVERITY["warn"] if fail_on == "warn" else SEVERITY["error"]
        return EXIT_FINDINGS if any(SEVERITY[f.status] >= threshold for f in self.findings) else EXIT_OK

    def localized(self, lang: str, catalogue: Catalogue,
                  labels: Mapping[str, Mapping[str, str]] | None = None) -> AuditResult:
        return AuditResult(findings=tuple(f.localized(lang, catalogue, labels) for f in self.findings),
                           meta=self.meta, loss_funnel=self.loss_funnel, ablation=self.ablation)

    def to_dict(self) -> dict[str, Any]:
        from ragdiag import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "ragdiag_version": __version__,
            "meta": _jsonable(self.meta),
            "summary": self.status_counts(),
            "worst": self.worst(),
            "findings": [f.to_dict() for f in self.findings],
            **({"loss_funnel": _jsonable(self.loss_funnel)} if self.loss_funnel is not None else {}),
            **({"ablation": _jsonable(self.ablation)} if self.ablation is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditResult:
        """Read back a `to_dict` result; `summary` and `worst` are recomputed, not trusted."""
        if not isinstance(data, Mapping) or not isinstance(data.get("findings"), list):
            raise InputDataError("an audit result must be a JSON object with a 'findings' list")
        version = data.get("schema_version", SCHEMA_VERSION)
        if version not in _READABLE_VERSIONS:
            raise InputDataError(f"audit result schema_version {version!r} is not supported; "
                                 f"this ragdiag reads versions {', '.join(map(str, _READABLE_VERSIONS))}")
        findings = []
        for i, f in enumerate(data["findings"]):
            try:
                findings.append(Finding.from_dict(f))
            except InputDataError:
                raise
            except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a value of the wrong type
                from ragdiag.inputs.limits import excerpt

                raise InputDataError(f"finding {i + 1} is not a finding ({type(exc).__name__}: "
                                     f"{excerpt(str(exc), 100)}); expected an object as `ragdiag audit "
                                     "--json` writes it") from None
        meta = data.get("meta") or {}
        if not isinstance(meta, Mapping):
            raise InputDataError(f"'meta' must be an object, found {type(meta).__name__}")
        return cls(findings=tuple(findings), meta=meta, loss_funnel=data.get("loss_funnel"),
                   ablation=data.get("ablation"))

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        """The JSON text; also written to `path` (UTF-8, parent folders created) when given."""
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
        if path is not None:  # atomically: two audits writing one file never interleave
            from ragdiag.outputs import write_text

            write_text(Path(path), text, "findings")
        return text

    @classmethod
    def from_json(cls, path: str | Path) -> AuditResult:
        from ragdiag.inputs.limits import load_json

        p = Path(path)
        data = load_json(p, what="findings file")  # size, depth, encoding: errors with file and line
        try:
            return cls.from_dict(data)
        except InputDataError as exc:
            raise InputDataError(str(exc), path=str(p)) from exc

    def to_dataframe(self) -> Any:
        """One row per finding: check_id, status, title, headline."""
        import pandas as pd

        return pd.DataFrame([{"check_id": f.check_id, "status": f.status, "title": f.title,
                              "headline": f.headline} for f in self.findings],
                            columns=["check_id", "status", "title", "headline"])

    def __repr__(self) -> str:
        counts = ", ".join(f"{s} {n}" for s, n in self.status_counts().items() if n)
        return f"<AuditResult {len(self.findings)} findings ({counts or 'none'}); worst: {self.worst()}>"

    def _repr_html_(self) -> str:
        counts = " ".join(f"{_badge(s)} {n}" for s, n in self.status_counts().items() if n)
        rows = "".join(
            f"<tr><td>{_badge(f.status)}</td><td><code>{html.escape(f.check_id)}</code></td>"
            f"<td>{html.escape(f.title)}</td><td>{html.escape(f.headline)}</td></tr>"
            for f in self.findings)
        details = "".join(
            f"<details><summary>{html.escape(f.check_id)}: {html.escape(f.status)}</summary>"
            f"{f._repr_html_()}</details>" for f in self.findings)
        return (f'<div class="ragdiag-audit"><p><b>Audit:</b> {len(self.findings)} findings; '
                f"worst {_badge(self.worst())} &nbsp; {counts}</p>"
                "<table><thead><tr><th>status</th><th>check</th><th>title</th><th>headline</th>"
                f"</tr></thead><tbody>{rows}</tbody></table>{details}</div>")
