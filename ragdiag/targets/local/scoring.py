"""Scoring-profile functions (magnitude, freshness, tag) as document boosts.

Azure does not publish its exact formula; ragdiag's documented model is:
each function yields g in [0, 1] (interpolated position in its range), and the
document boost is 1 + sum_i (boost_i - 1) * g_i with `sum` aggregation
(`average`, `minimum`, `maximum`, `firstMatching` aggregate the same terms).
The fused score is multiplied by this boost; with semantic ranking and
rankingOrder BoostedRerankerScore the reranker score is multiplied again.
Text weights are not handled here: they scale BM25 field scores before fusion.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from ragdiag.errors import InputDataError
from ragdiag.model.schema import ScoringFunction, ScoringProfile

_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def parse_duration(text: str) -> timedelta:
    """XSD dayTimeDuration (`P365D`, `PT12H`, `P1DT2H`) as a timedelta."""
    m = _DURATION.match(text or "")
    if not m or text in ("P", "PT"):
        raise InputDataError(f"boostingDuration must look like 'P365D' or 'PT12H', got {text!r}")
    d, h, mi, s = m.groups()
    return timedelta(days=int(d or 0), hours=int(h or 0), minutes=int(mi or 0), seconds=float(s or 0))


def parse_scoring_parameters(params: Sequence[str]) -> dict[str, list[str]]:
    """`["entities-ENT-A,ENT-B"]` -> {"entities": ["ENT-A", "ENT-B"]} (name, first dash, values)."""
    out: dict[str, list[str]] = {}
    for p in params:
        name, sep, values = p.partition("-")
        if not sep or not name:
            raise InputDataError(f"scoring parameter must look like 'name-value1,value2', got {p!r}")
        out[name] = [v.strip() for v in values.split(",") if v.strip()]
    return out


def _interpolate(g: float, how: str) -> float:
    if g <= 0:
        return 0.0
    if how == "constant":
        return 1.0
    if how == "quadratic":
        return 1.0 - (1.0 - g) ** 2
    if how == "logarithmic":
        return math.log1p(9.0 * g) / math.log(10.0)
    return g  # linear


def _to_datetime(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def function_value(fn: ScoringFunction, value: Any, params: Mapping[str, list[str]],
                   now: datetime) -> float:
    """g in [0, 1] for one function on one document's field value."""
    if fn.type == "magnitude":
        if value is None or not isinstance(value, int | float):
            return 0.0
        start, end = float(fn.boosting_range_start or 0), float(fn.boosting_range_end or 0)
        if start == end:
            return 0.0
        lo, hi = min(start, end), max(start, end)
        if value < lo or value > hi:
            beyond = value > end if end > start else value < end
            return 1.0 if (beyond and fn.constant_boost_beyond_range) else 0.0
        g = (value - start) / (end - start)
        return _interpolate(g, fn.interpolation)
    if fn.type == "freshness":
        when = _to_datetime(value)
        if when is None:
            return 0.0
        dur = parse_duration(fn.boosting_duration or "")
        age = now - when
        if dur.total_seconds() == 0:
            return 0.0
        if age < timedelta(0):  # future dates: boosted only by negative durations (unsupported: 0)
            return 0.0
        g = 1.0 - age / dur
        return _interpolate(max(0.0, g), fn.interpolation)
    if fn.type == "tag":
        wanted = params.get(fn.tags_parameter or "", [])
        if not wanted or value is None:
            return 0.0
        values = value if isinstance(value, list | tuple) else [value]
        return 1.0 if any(v in wanted for v in values) else 0.0
    raise InputDataError(f"scoring function type {fn.type!r} is not supported; use magnitude, freshness or tag")


def document_boost(profile: ScoringProfile, record: Mapping[str, Any],
                   params: Mapping[str, list[str]], now: datetime) -> float:
    """The multiplier a scoring profile's functions give one document (1.0 = no boost)."""
    if not profile.functions:
        return 1.0
    terms = [(fn.boost - 1.0) * function_value(fn, record.get(fn.field_name), params, now)
             for fn in profile.functions]
    agg = profile.function_aggregation
    if agg == "average":
        total = sum(terms) / len(terms)
    elif agg == "minimum":
        total = min(terms)
    elif agg == "maximum":
        total = max(terms)
    elif agg == "firstMatching":
        total = next((t for t in terms if t != 0.0), 0.0)
    else:
        total = sum(terms)
    return 1.0 + total


class DocumentBoosts:
    """`document_boost` for many rows at once, with each function's value cached per row.

    A magnitude or freshness function's value for a document depends only on the document
    (and, for freshness, the reference time), so it is computed once per row with
    `function_value` and kept; a tag function's value depends on the request's scoring
    parameters and is computed per call from the rows' field values. The aggregation
    makes the same float operations as `document_boost`, so the boosts are identical.
    """

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._records = records
        self._cache: dict[tuple[Any, ...], Any] = {}

    def _static_values(self, fn: ScoringFunction, now: datetime, rows: Any) -> Any:
        key = (fn, now)
        col = self._cache.get(key)
        if col is None:
            if len(self._cache) > 256:
                self._cache.clear()
            col = self._cache[key] = np.full(len(self._records), np.nan)
        vals = col[rows]
        missing = np.flatnonzero(np.isnan(vals))
        if missing.size:
            for j in missing.tolist():
                r = int(rows[j])
                col[r] = function_value(fn, self._records[r].get(fn.field_name), {}, now)
            vals = col[rows]
        return vals

    def boosts(self, profile: ScoringProfile, rows: Any, params: Mapping[str, list[str]],
               now: datetime) -> Any:
        """float64 boost per row of `rows` (1.0 where no function applies)."""
        n = len(rows)
        if not profile.functions:
            return np.ones(n)
        terms = []
        for fn in profile.functions:
            if fn.type == "tag":
                wanted = params.get(fn.tags_parameter or "", [])
                g = np.zeros(n)
                if wanted:
                    for j, r in enumerate(rows.tolist()):
                        g[j] = function_value(fn, self._records[r].get(fn.field_name), params, now)
            else:
                g = self._static_values(fn, now, rows)
            terms.append((fn.boost - 1.0) * g)
        agg = profile.function_aggregation
        if agg == "average":
            total = _ordered_sum(terms) / len(terms)
        elif agg == "minimum":
            total = np.minimum.reduce(terms)
        elif agg == "maximum":
            total = np.maximum.reduce(terms)
        elif agg == "firstMatching":
            total = np.zeros(n)
            done = np.zeros(n, dtype=bool)
            for t in terms:
                take = ~done & (t != 0.0)
                total[take] = t[take]
                done |= take
        else:
            total = _ordered_sum(terms)
        return 1.0 + total


def _ordered_sum(terms: Sequence[Any]) -> Any:
    """terms[0] + terms[1] + ... left to right, like Python's `sum` (0 + t0 is exact)."""
    total = terms[0].copy()
    for t in terms[1:]:
        total = total + t
    return total
