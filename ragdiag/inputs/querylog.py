"""Query logs: what production actually sent, one JSON object per line.

    {"timestamp": "2026-05-04T09:12:33Z", "user": "anna.sales", "session": "s-0012",
     "question": "...", "route": "fact", "profile": "fact", "keyword_text": "...",
     "vector_text": "...", "semantic_text": "...", "filter": "...", "top": 10, "k": 50,
     "latency_ms": 412.5, "results": 7, "attempt": 1}

Required: `timestamp`, `question`, `route`. Everything else is optional (and
may be null); keys ragdiag does not know are kept in `QueryLogEntry.extra`
because production logs vary.
"""

from __future__ import annotations

import html
import math
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.inputs import limits

REQUIRED_KEYS = ("timestamp", "question", "route")
_STR_KEYS = ("user", "session", "profile", "keyword_text", "vector_text", "semantic_text",
             "filter")
_INT_KEYS = ("top", "k", "results", "attempt")
_NUM_KEYS = ("latency_ms", "classification_ms")
KNOWN_KEYS = REQUIRED_KEYS + _STR_KEYS + _INT_KEYS + _NUM_KEYS + ("vector_fields",)
TEXT_CHANNELS = ("keyword_text", "vector_text", "semantic_text")
_q = limits.excerpt


@dataclass(frozen=True)
class QueryLogEntry:
    """One logged production query. `timestamp` is timezone-aware (naive times are taken as UTC)."""

    timestamp: datetime
    question: str
    route: str
    user: str | None = None
    session: str | None = None
    profile: str | None = None
    keyword_text: str | None = None
    vector_text: str | None = None
    semantic_text: str | None = None
    vector_fields: tuple[str, ...] | None = None
    filter: str | None = None
    top: int | None = None
    k: int | None = None
    latency_ms: float | None = None
    classification_ms: float | None = None
    results: int | None = None
    attempt: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    line: int | None = None

    def channel_texts(self) -> dict[str, str]:
        """The non-null text channels: name -> text."""
        return {name: getattr(self, name) for name in TEXT_CHANNELS
                if getattr(self, name) is not None}

    @property
    def shares_text(self) -> bool | None:
        """True when all non-null channels carry the identical string, False when they
        differ, None when fewer than two channels are present (nothing to compare)."""
        texts = list(self.channel_texts().values())
        if len(texts) < 2:
            return None
        return all(t == texts[0] for t in texts)


@dataclass(frozen=True)
class Cascade:
    """The same question from the same user re-issued with a different filter in quick succession.

    `entries` are in time order; `filters` and `attempts` are taken from them
    (attempt is None where the log has no `attempt`).
    """

    user: str
    question: str
    entries: tuple[QueryLogEntry, ...]

    @property
    def filters(self) -> tuple[str | None, ...]:
        return tuple(e.filter for e in self.entries)

    @property
    def attempts(self) -> tuple[int | None, ...]:
        return tuple(e.attempt for e in self.entries)

    @property
    def lines(self) -> tuple[int | None, ...]:
        return tuple(e.line for e in self.entries)

    @property
    def start(self) -> datetime:
        return self.entries[0].timestamp

    @property
    def duration_s(self) -> float:
        return (self.entries[-1].timestamp - self.entries[0].timestamp).total_seconds()

    def __len__(self) -> int:
        return len(self.entries)

    def to_dict(self) -> dict[str, Any]:
        return {"user": self.user, "question": self.question, "filters": list(self.filters),
                "attempts": list(self.attempts), "lines": list(self.lines),
                "start": self.start.isoformat(), "duration_s": self.duration_s}


@dataclass(frozen=True)
class QueryLog:
    entries: tuple[QueryLogEntry, ...]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[QueryLogEntry]:
        return iter(self.entries)

    def routes(self) -> Counter[str]:
        return Counter(e.route for e in self.entries)

    def profiles(self) -> Counter[str | None]:
        return Counter(e.profile for e in self.entries)

    def share_by_route(self) -> dict[str, float]:
        """route -> share of entries (0..1), largest first. Empty for an empty log."""
        total = len(self.entries)
        if not total:
            return {}
        return {route: n / total for route, n in self.routes().most_common()}

    def shared_text_share(self) -> float:
        """Share of comparable entries that send one identical string to every channel.

        An entry is comparable when at least two of `keyword_text`, `vector_text`
        and `semantic_text` are non-null (null channels are ignored: a request
        without a vector leg cannot share its text with it). It counts as shared
        when all of its non-null channels are exactly equal strings (no
        normalisation). Returns shared / comparable, NaN when no entry is comparable.
        """
        flags = [e.shares_text for e in self.entries]
        comparable = [f for f in flags if f is not None]
        if not comparable:
            return math.nan
        return sum(comparable) / len(comparable)

    def latency_by_route(self, field_name: str = "latency_ms") -> dict[str, dict[str, float]]:
        """route -> {n, mean, p50, p95} of `latency_ms` or `classification_ms` (entries
        that have the field only; routes without any value are left out)."""
        import numpy as np

        values: dict[str, list[float]] = {}
        for e in self.entries:
            v = getattr(e, field_name)
            if v is not None:
                values.setdefault(e.route, []).append(float(v))
        return {route: {"n": len(vs), "mean": float(np.mean(vs)),
                        "p50": float(np.percentile(vs, 50)), "p95": float(np.percentile(vs, 95))}
                for route, vs in values.items()}

    def cascades(self, window_s: float = 30) -> list[Cascade]:
        """Re-issued questions with a changed (typically relaxed) filter.

        Entries are grouped by identity (`user`, or `session` when the user is
        null; entries with neither are skipped) and question (case-folded,
        whitespace collapsed). Within a group, time-ordered entries form a chain
        while each one follows the previous by at most `window_s` seconds. A
        chain of two or more entries whose filters are not all equal is a
        cascade. Whether the later filter is really a relaxation is not checked.
        Cascades are returned in order of their first entry.
        """
        groups: dict[tuple[str, str], list[QueryLogEntry]] = {}
        for e in self.entries:
            who = e.user if e.user is not None else e.session
            if who is None:
                continue
            groups.setdefault((who, " ".join(e.question.casefold().split())), []).append(e)
        found: list[Cascade] = []
        for (who, _), entries in groups.items():
            entries = sorted(entries, key=lambda e: (e.timestamp, e.line or 0))
            chain = [entries[0]]
            for e in entries[1:]:
                if (e.timestamp - chain[-1].timestamp).total_seconds() <= window_s:
                    chain.append(e)
                    continue
                _close_chain(chain, who, found)
                chain = [e]
            _close_chain(chain, who, found)
        found.sort(key=lambda c: (c.start, c.entries[0].line or 0))
        return found

    def to_dataframe(self):
        import pandas as pd

        columns = ["line", "timestamp", "user", "session", "question", "route", "profile",
                   "keyword_text", "vector_text", "semantic_text", "vector_fields", "filter",
                   "top", "k", "latency_ms", "classification_ms", "results", "attempt",
                   "shares_text", "extra"]
        rows = []
        for e in self.entries:
            row = {c: getattr(e, c) for c in columns if c not in ("shares_text", "extra")}
            row["shares_text"] = e.shares_text
            row["extra"] = dict(e.extra)
            rows.append(row)
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        shares = ", ".join(f"{r} {s:.0%}" for r, s in self.share_by_route().items()) or "none"
        return f"QueryLog({where}{len(self.entries)} entries; routes: {shares})"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(r)}</td><td>{n}</td><td>{n / len(self):.1%}</td></tr>"
                       for r, n in self.routes().most_common())
        return (f"<div><b>Query log</b> <code>{html.escape(self.path or '')}</code>: "
                f"{len(self.entries)} entries<table><tr><th>route</th><th>entries</th>"
                f"<th>share</th></tr>{rows}</table></div>")


def _close_chain(chain: list[QueryLogEntry], who: str, found: list[Cascade]) -> None:
    if len(chain) >= 2 and len({e.filter for e in chain}) > 1:
        found.append(Cascade(user=who, question=chain[0].question, entries=tuple(chain)))


# --------------------------------------------------------------------------- loading


def load_query_log(path: str | os.PathLike[str]) -> QueryLog:
    """Load a JSONL query log. Blank lines are skipped.

    Raises `InputDataError` with the file and line on invalid JSON, a line that
    is not an object, a missing or null `timestamp`/`question`/`route`, a
    wrong type (`top`, `k`, `results`, `attempt` int; `latency_ms`,
    `classification_ms` number; texts string or null; `vector_fields` list of
    strings or a comma-separated string) or an unparseable timestamp (ISO 8601,
    `Z` allowed, or epoch seconds; naive times are taken as UTC). Unknown keys
    go to `extra`. An empty log is an error.
    """
    spath = str(path)
    text = limits.read_text(path, what="query log")
    entries = []
    for lineno, raw_line in enumerate(text.splitlines(), start=1):
        if not raw_line.strip():
            continue
        if len(raw_line) > limits.MAX_LINE_CHARS:
            raise InputDataError(f"the line has {len(raw_line):,} characters; the limit is "
                                 f"{limits.MAX_LINE_CHARS:,} (ragdiag.inputs.limits.MAX_LINE_CHARS)",
                                 path=spath, line=lineno)
        obj = limits.loads_json(raw_line, path=spath, line=lineno)
        entries.append(parse_entry(obj, path=spath, line=lineno))
    if not entries:
        raise InputDataError("the query log contains no entries", path=spath)
    return QueryLog(entries=tuple(entries), path=spath)


def parse_entry(obj: Any, *, path: str | None = None, line: int | None = None) -> QueryLogEntry:
    """Validate one decoded log object into a `QueryLogEntry`."""
    def err(message: str) -> InputDataError:
        return InputDataError(message, path=path, line=line)

    if not isinstance(obj, dict):
        raise err(f"a query log line must be a JSON object, got {type(obj).__name__}")
    missing = [k for k in REQUIRED_KEYS if obj.get(k) is None]
    if missing:
        raise err(f"missing required key(s) {', '.join(missing)}; every entry needs "
                  f"{', '.join(REQUIRED_KEYS)}")
    values: dict[str, Any] = {"timestamp": _parse_timestamp(obj["timestamp"], err)}
    for key in ("question", "route") + _STR_KEYS:
        v = obj.get(key)
        if v is not None and not isinstance(v, str):
            raise err(f"{_q(key)} must be a string{'' if key in REQUIRED_KEYS else ' or null'}, "
                      f"got {type(v).__name__} {_q(v)}")
        values[key] = v
    for key in _INT_KEYS:
        v = obj.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise err(f"{_q(key)} must be an integer >= 0, got {type(v).__name__} {_q(v)}")
        values[key] = v
    for key in _NUM_KEYS:
        v = obj.get(key)
        if v is not None:
            if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise err(f"{_q(key)} must be a number >= 0, got {type(v).__name__} {_q(v)}")
            v = float(v)
        values[key] = v
    vf = obj.get("vector_fields")
    if vf is not None:
        if isinstance(vf, str):
            vf = [f.strip() for f in vf.split(",") if f.strip()]
        if not isinstance(vf, list) or not all(isinstance(f, str) for f in vf):
            raise err(f"'vector_fields' must be a list of field names or a comma-separated "
                      f"string, got {_q(vf)}")
        vf = tuple(vf)
    values["vector_fields"] = vf
    extra = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    return QueryLogEntry(**values, extra=extra, line=line)


def _parse_timestamp(value: Any, err) -> datetime:
    if isinstance(value, bool):
        raise err(f"unparseable timestamp {_q(value)}")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise err(f"unparseable timestamp {_q(value)} (epoch seconds out of range)") from None
    if not isinstance(value, str):
        raise err(f"unparseable timestamp {_q(value)}; expected ISO 8601 text")
    try:
        ts = datetime.fromisoformat(value.strip())
    except ValueError:
        raise err(f"unparseable timestamp {_q(value)}; expected ISO 8601 such as "
                  "2026-05-04T09:12:33Z") from None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts
