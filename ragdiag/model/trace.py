"""The stage trace a search returns: ranked lists per leg, hits with every score.

`Trace` holds every stage of one executed request (keyword leg, vector legs,
fused pool, rerank window, final hits) so that probes and widgets can answer
what-ifs without searching again.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragdiag.model.request import SearchRequest, _to_dict


@dataclass(frozen=True)
class RankedList:
    """One ranked candidate list: the keyword leg, one vector field, or the fused pool."""

    name: str
    keys: tuple[str, ...]
    scores: tuple[float, ...]
    weight: float = 1.0

    def __len__(self) -> int:
        return len(self.keys)

    def rank_of(self, key: str) -> int | None:
        """1-based rank of `key`, or None when absent."""
        try:
            return self.keys.index(key) + 1
        except ValueError:
            return None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight,
                "keys": list(self.keys), "scores": [round(s, 6) for s in self.scores]}


@dataclass(frozen=True)
class Hit:
    """One result with every score the target can report."""

    key: str
    score: float  # @search.score: fused (RRF) score times the document boost
    fields: Mapping[str, Any] = field(default_factory=dict)
    reranker_score: float | None = None
    reranker_boosted_score: float | None = None
    text_score: float | None = None
    text_rank: int | None = None
    vector_similarities: Mapping[str, float] = field(default_factory=dict)
    vector_ranks: Mapping[str, int] = field(default_factory=dict)
    fused_score: float | None = None
    fused_rank: int | None = None
    document_boost: float = 1.0
    captions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True)
class Trace:
    """All stages of one executed request.

    `pool` is the fused candidate list after every filter: what reaches the
    reranker's window is its first `RERANK_WINDOW` entries.
    """

    request: SearchRequest
    hits: tuple[Hit, ...]
    text: RankedList | None = None
    vectors: tuple[RankedList, ...] = ()
    pool: RankedList | None = None
    rerank_window: tuple[str, ...] = ()
    reranked: bool = False
    count: int | None = None
    filter_matches: int | None = None
    partial_reason: str | None = None  # semantic ranking asked for but did not run
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    target: str = ""

    @property
    def pool_size(self) -> int:
        return len(self.pool) if self.pool is not None else len(self.hits)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(h.key for h in self.hits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "request": self.request.to_dict(),
            "count": self.count,
            "filter_matches": self.filter_matches,
            "pool_size": self.pool_size,
            "reranked": self.reranked,
            "partial_reason": self.partial_reason,
            "rerank_window": list(self.rerank_window),
            "text": self.text.to_dict() if self.text else None,
            "vectors": [v.to_dict() for v in self.vectors],
            "pool": self.pool.to_dict() if self.pool else None,
            "hits": [h.to_dict() for h in self.hits],
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }

    def __repr__(self) -> str:
        q = self.request.search or (self.request.vector_queries[0].text if self.request.vector_queries else "")
        return (f"Trace(query={q!r}, hits={len(self.hits)}, pool={self.pool_size}, "
                f"reranked={self.reranked}, top={list(self.keys[:3])})")

    def _repr_html_(self) -> str:
        rows = []
        for i, h in enumerate(self.hits, 1):
            rr = "" if h.reranker_score is None else f"{h.reranker_score:.2f}"
            vs = ", ".join(f"{k}: {v:.3f} (#{h.vector_ranks.get(k)})" for k, v in h.vector_similarities.items())
            tr = "" if h.text_rank is None else f"{h.text_score:.2f} (#{h.text_rank})"
            rows.append(f"<tr><td>{i}</td><td>{html.escape(h.key)}</td><td>{h.score:.5f}</td>"
                        f"<td>{rr}</td><td>{tr}</td><td>{html.escape(vs)}</td></tr>")
        return ("<table><thead><tr><th>#</th><th>key</th><th>@search.score</th><th>reranker</th>"
                "<th>BM25 (rank)</th><th>vector (rank)</th></tr></thead><tbody>"
                + "".join(rows) + f"</tbody></table><p>pool {self.pool_size}, reranked {self.reranked}</p>")
