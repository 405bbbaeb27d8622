"""The model palette: requests, traces, index schemas and findings (frozen, JSON-serialisable)."""

from ragdiag.model.request import (
    DEFAULT_MAX_TEXT_RECALL_SIZE,
    QUERY_TYPES,
    RERANK_WINDOW,
    RRF_K,
    VECTOR_FILTER_MODES,
    SearchRequest,
    VectorQuery,
)
from ragdiag.model.trace import Hit, RankedList, Trace

__all__ = [
    "DEFAULT_MAX_TEXT_RECALL_SIZE",
    "QUERY_TYPES",
    "RERANK_WINDOW",
    "RRF_K",
    "VECTOR_FILTER_MODES",
    "SearchRequest",
    "VectorQuery",
    "Hit",
    "RankedList",
    "Trace",
]
