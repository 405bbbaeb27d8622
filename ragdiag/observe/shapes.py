"""Request shapes: what a recorded search asked for, with its values abstracted.

A **shape** is everything about a request except the question and the identity: the index,
query type, semantic configuration, searched fields, each vector query's fields, kind, `k`,
`exhaustive` and weight, the filter mode, the text recall size, the filter's clauses as
templates (literals replaced by ``?``), the scoring profile, `top`, `select`, captions and
answers. A **route** is the part that says *what* is searched (index, query type, semantic
configuration, whether there is a keyword leg, the vector fields): requests of one route
searched the same thing, so where their shapes differ (another `k`, a clause on some requests
only) the route *drifts*. De facto routes are the clusters of requests by route, with their
traffic shares.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdiag.errors import RagdiagError

_STRING = re.compile(r"'(?:[^']|'')*'")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_DATE = re.compile(r"\b\d{4}-\d\d-\d\d(?:T[\d:.]+(?:Z|[+-]\d\d:\d\d)?)?\b")
#: shape parameters compared between the requests of one route (the drift table's rows)
DRIFT_PARAMS = ("top", "vector_k", "exhaustive", "max_text_recall_size", "vector_filter_mode", "filter",
                "scoring_profile", "search_fields", "select", "captions")


def template(clause: str) -> str:
    """A filter clause with its literals as ``?``: ``confidence_score ge ?``."""
    t = _STRING.sub("'?'", clause)
    t = _DATE.sub("?", t)
    return _NUMBER.sub("?", t)


def filter_clauses(text: str | None) -> list[Any]:
    """The top-level clauses of an OData filter ([] when absent or unparseable)."""
    if not text or not text.strip():
        return []
    from ragdiag import odata

    try:
        return list(odata.clauses(odata.parse(text)))
    except RagdiagError:
        return []


@dataclass(frozen=True)
class Shape:
    """The abstracted shape of one search request (hashable: requests are counted by it)."""

    index: str
    query_type: str
    semantic_configuration: str | None
    keyword_leg: bool
    search_fields: tuple[str, ...] | None
    vector_queries: tuple[tuple[tuple[str, ...], str, int, bool, float, bool], ...]
    vector_filter_mode: str
    max_text_recall_size: int | None
    filter: tuple[str, ...]
    scoring_profile: str | None
    top: int
    select: tuple[str, ...] | None
    captions: bool

    @property
    def route(self) -> tuple[Any, ...]:
        return (self.index, self.query_type, self.semantic_configuration, self.keyword_leg,
                tuple(sorted({f for vq in self.vector_queries for f in vq[0]})))

    def value(self, param: str) -> Any:
        if param == "vector_k":
            return ", ".join(f"{'+'.join(vq[0])}={vq[2]}" for vq in self.vector_queries) or None
        if param == "exhaustive":
            return any(vq[3] for vq in self.vector_queries)
        if param == "filter":
            return " and ".join(self.filter) or None
        v = getattr(self, param)
        return ", ".join(v) if isinstance(v, tuple) else v

    def summary(self) -> str:
        parts = [self.query_type]
        if self.semantic_configuration:
            parts.append(f"semantic {self.semantic_configuration}")
        if self.keyword_leg:
            parts.append("keyword")
        for vq in self.vector_queries:
            parts.append(f"{'+'.join(vq[0])} k={vq[2]}{' exhaustive' if vq[3] else ''}")
        parts.append(f"top={self.top}")
        if self.filter:
            parts.append("filter " + " and ".join(self.filter))
        return ", ".join(parts)


def shape_of(index: str | None, request: Any) -> Shape:
    vqs = tuple((tuple(vq.fields), vq.kind, int(vq.k), bool(vq.exhaustive), float(vq.weight),
                 bool(vq.filter_override)) for vq in request.vector_queries)
    return Shape(index=index or "", query_type=request.query_type, semantic_configuration=request.semantic_configuration
                 if request.is_semantic else None, keyword_leg=request.has_text_leg,
                 search_fields=tuple(sorted(request.search_fields)) if request.search_fields else None,
                 vector_queries=vqs, vector_filter_mode=request.vector_filter_mode,
                 max_text_recall_size=request.max_text_recall_size,
                 filter=tuple(sorted(template(c.text) for c in filter_clauses(request.filter))),
                 scoring_profile=request.scoring_profile, top=int(request.top),
                 select=tuple(request.select) if request.select else None, captions=bool(request.captions))


def route_label(route: tuple[Any, ...]) -> str:
    index, qtype, semconf, keyword, vfields = route
    legs = (["keyword"] if keyword else []) + list(vfields)
    return f"{index}: {qtype}{' (' + semconf + ')' if semconf else ''} over {' + '.join(legs) or 'nothing'}"


@dataclass(frozen=True)
class Route:
    """A de facto route: the requests that searched the same thing, and their shapes."""

    key: tuple[Any, ...]
    label: str
    requests: int
    share: float
    shapes: tuple[tuple[Shape, int], ...]

    def drift(self) -> list[tuple[str, tuple[tuple[Any, int], ...]]]:
        """(parameter, ((value, requests), ...)) for each parameter that differs between shapes."""
        out = []
        for param in DRIFT_PARAMS:
            values: Counter[Any] = Counter()
            for shape, n in self.shapes:
                values[shape.value(param)] += n
            if len(values) > 1:
                out.append((param, tuple(values.most_common())))
        return out


def routes(shapes: Iterable[Shape]) -> list[Route]:
    """De facto routes, largest first."""
    counts = Counter(shapes)
    total = sum(counts.values())
    by_route: dict[tuple[Any, ...], list[tuple[Shape, int]]] = {}
    for shape, n in counts.most_common():
        by_route.setdefault(shape.route, []).append((shape, n))
    out = [Route(key=k, label=route_label(k), requests=sum(n for _, n in v), share=sum(n for _, n in v) / total,
                 shapes=tuple(v)) for k, v in by_route.items()]
    return sorted(out, key=lambda r: (-r.requests, r.label))


def pool(request: Any) -> int:
    """What the request can put into fusion: text recall (1000 by default) + every vector k x fields."""
    from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE

    text = (request.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE) if request.has_text_leg else 0
    return text + sum(int(vq.k) * len(vq.fields) for vq in request.vector_queries)


def quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return float(np.quantile(np.asarray(values, dtype=float), q))


__all__ = ["DRIFT_PARAMS", "Route", "Shape", "filter_clauses", "pool", "quantile", "route_label", "routes",
           "shape_of", "template"]
