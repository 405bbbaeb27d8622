"""Probes: pure transformations of a `SearchRequest` that checks use as ablations.

A probe never executes anything; it turns one request into the request(s) to
send. Most probes give one request; `split_channels` gives several (one per
channel) that the runner fuses client-side with RRF, because Azure cannot give
each channel its own text in one request when query rewrites are on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ragdiag import odata
from ragdiag.errors import InputDataError
from ragdiag.model import SearchRequest


@dataclass(frozen=True)
class Probe:
    """A named request transformation; `params` make it hashable and printable."""

    name: str
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}(" + ", ".join(f"{k}={v!r}" for k, v in self.params) + ")"

    @property
    def key(self) -> str:
        return str(self)

    def apply(self, request: SearchRequest) -> tuple[SearchRequest, ...]:
        fn = _PROBES.get(self.name)
        if fn is None:
            raise InputDataError(f"no probe named {self.name!r}; available: {', '.join(sorted(_PROBES))}")
        out = fn(request, **dict(self.params))
        return out if isinstance(out, tuple) else (out,)


BASELINE = Probe("baseline")


def _baseline(r: SearchRequest) -> SearchRequest:
    return r


def _drop_filter_clause(r: SearchRequest, index: int) -> SearchRequest:
    """The request without the top-level filter clause `index` (also in vector filter overrides)."""
    if not r.filter:
        raise InputDataError("drop_filter_clause needs a request with a filter")
    expr = odata.parse(r.filter)
    clauses = odata.clauses(expr)
    if not 0 <= index < len(clauses):
        raise InputDataError(f"filter has {len(clauses)} clauses; no clause {index}")
    dropped = clauses[index]
    rest = odata.drop_clause(expr, index)
    vqs = []
    for vq in r.vector_queries:
        if vq.filter_override:
            oexpr = odata.parse(vq.filter_override)
            ocl = odata.clauses(oexpr)
            match = [c.index for c in ocl if c.text == dropped.text]
            if match:
                left = odata.drop_clause(oexpr, match[0])
                vq = replace(vq, filter_override=odata.render(left) if left is not None else None)
        vqs.append(vq)
    return replace(r, filter=odata.render(rest) if rest is not None else None, vector_queries=tuple(vqs))


def _text_only(r: SearchRequest) -> SearchRequest:
    """Only the keyword leg (the vector queries removed)."""
    if not r.has_text_leg:
        raise InputDataError("text_only needs a request with search text")
    return replace(r, vector_queries=())


def _vector_only(r: SearchRequest) -> SearchRequest:
    """Only the vector legs (no search text; semantic text kept for the reranker)."""
    if not r.vector_queries:
        raise InputDataError("vector_only needs a request with vector queries")
    return replace(r, search=None, semantic_query=r.effective_semantic_text)


def _no_rerank(r: SearchRequest) -> SearchRequest:
    """The same request without semantic ranking (fused order stays)."""
    return replace(r, query_type="simple", semantic_query=None, captions=None, answers=None,
                   semantic_configuration=None, query_rewrites=None)


def _with_k(r: SearchRequest, k: int) -> SearchRequest:
    """Every vector query with `k` neighbours."""
    return replace(r, vector_queries=tuple(replace(vq, k=int(k)) for vq in r.vector_queries))


def _with_top(r: SearchRequest, top: int) -> SearchRequest:
    return replace(r, top=int(top))


def _with_recall(r: SearchRequest, size: int) -> SearchRequest:
    return replace(r, max_text_recall_size=int(size))


def _pool_probe(r: SearchRequest, top: int = 50) -> SearchRequest:
    """What reaches fusion: no reranking, `top` results (the live-target pool measurement)."""
    return replace(_no_rerank(r), top=top)


def _split_channels(r: SearchRequest, keyword: str, vector: str, semantic: str,
                    verbatim: str | None = None) -> tuple[SearchRequest, ...]:
    """Separate requests per channel, fused client-side: keywords for BM25, full texts for
    vectors and the reranker, and the verbatim question kept as its own channel."""
    vqs = tuple(replace(vq, text=vector) if vq.kind == "text" else vq for vq in r.vector_queries)
    out = [
        replace(r, search=keyword, vector_queries=(), semantic_query=semantic),
        replace(r, search=None, vector_queries=vqs, semantic_query=semantic),
    ]
    if verbatim:
        vq_verbatim = tuple(replace(vq, text=verbatim) if vq.kind == "text" else vq
                            for vq in r.vector_queries)
        out.append(replace(r, search=verbatim, vector_queries=vq_verbatim, semantic_query=semantic))
    return tuple(out)


def _with_filter_mode(r: SearchRequest, mode: str) -> SearchRequest:
    """The same request with another vector filter mode (preFilter, postFilter, strictPostFilter)."""
    return replace(r, vector_filter_mode=mode)


def _vector_fields(r: SearchRequest, fields: tuple[str, ...]) -> SearchRequest:
    """Every vector query searching `fields` instead."""
    return replace(r, vector_queries=tuple(replace(vq, fields=tuple(fields)) for vq in r.vector_queries))


def _without_identity(r: SearchRequest, clause_text: str) -> SearchRequest:
    """The request with the given (security) clause removed wherever it occurs."""
    if not r.filter:
        return r
    expr = odata.parse(r.filter)
    for c in odata.clauses(expr):
        if c.text == clause_text:
            return _drop_filter_clause(r, c.index)
    return r


_PROBES = {
    "baseline": _baseline,
    "drop_filter_clause": _drop_filter_clause,
    "text_only": _text_only,
    "vector_only": _vector_only,
    "no_rerank": _no_rerank,
    "with_k": _with_k,
    "with_top": _with_top,
    "with_recall": _with_recall,
    "pool": _pool_probe,
    "split_channels": _split_channels,
    "vector_fields": _vector_fields,
    "with_filter_mode": _with_filter_mode,
    "without_clause": _without_identity,
}


def drop_filter_clause(index: int) -> Probe:
    return Probe("drop_filter_clause", (("index", index),))


def text_only() -> Probe:
    return Probe("text_only")


def vector_only() -> Probe:
    return Probe("vector_only")


def no_rerank() -> Probe:
    return Probe("no_rerank")


def with_k(k: int) -> Probe:
    return Probe("with_k", (("k", k),))


def with_top(top: int) -> Probe:
    return Probe("with_top", (("top", top),))


def pool(top: int = 50) -> Probe:
    return Probe("pool", (("top", top),))


def split_channels(keyword: str, vector: str, semantic: str, verbatim: str | None = None) -> Probe:
    return Probe("split_channels", (("keyword", keyword), ("vector", vector),
                                    ("semantic", semantic), ("verbatim", verbatim)))


def vector_fields(*fields: str) -> Probe:
    return Probe("vector_fields", (("fields", tuple(fields)),))


def with_filter_mode(mode: str) -> Probe:
    return Probe("with_filter_mode", (("mode", mode),))


def available() -> tuple[str, ...]:
    return tuple(sorted(_PROBES))


__all__ = ["Probe", "BASELINE", "drop_filter_clause", "text_only", "vector_only", "no_rerank",
           "with_k", "with_top", "pool", "split_channels", "vector_fields", "with_filter_mode",
           "available"]
