"""Semantic reranking of the rerank window (the first 50 of the pool) and extractive captions.

Reranker scores are cached per (semantic text, configuration) and document, so a request
whose window overlaps an earlier one only scores the new documents. A score must not
depend on which documents were scored together: with the bi-encoder reranker the
cosines are computed row by row (`einsum`) and mapped with the reranker's own
`cosine_to_score`; other rerankers get the missing passages in document-key order. The
window is re-sorted by reranker score (boosted, when the semantic configuration says
BoostedRerankerScore); equal reranker scores keep their pool order (fused score, then
document key), so the order is fully determined.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ragdiag.targets.local.vector import similarities

RERANK_CACHE = 4096
_WORD = re.compile(r"\w+", re.UNICODE)


class RerankScores:
    """Reranker scores per (semantic text, configuration): sorted rows and their scores."""

    def __init__(self) -> None:
        self._cache: OrderedDict[Any, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def clear(self) -> None:
        self._cache.clear()

    def scores(self, key: Any, rows: np.ndarray, key_rank: np.ndarray,
               compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Scores of `rows` (float32), computing only those not cached under `key`."""
        known_rows, known = self._cache.get(key, (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)))
        if key in self._cache:
            self._cache.move_to_end(key)
        if known_rows.shape[0]:
            pos_c = np.minimum(np.searchsorted(known_rows, rows), known_rows.shape[0] - 1)
            have = known_rows[pos_c] == rows
        else:
            have = np.zeros(rows.shape[0], dtype=bool)
        if not have.all():
            missing = np.unique(rows[~have])
            missing = missing[np.argsort(key_rank[missing], kind="stable")]  # a fixed order
            new = np.asarray(compute(missing), dtype=np.float32)
            all_rows = np.concatenate([known_rows, missing.astype(np.int32)])
            all_sc = np.concatenate([known, new])
            order = np.argsort(all_rows, kind="stable")
            known_rows, known = all_rows[order], all_sc[order]
            self._cache[key] = (known_rows, known)
            if len(self._cache) > RERANK_CACHE:
                self._cache.popitem(last=False)
        return known[np.searchsorted(known_rows, rows)]


def bi_encoder_scores(reranker: Any, query_vec: np.ndarray, passages: np.ndarray) -> np.ndarray:
    """The bi-encoder reranker's scores, each computed from its own row (batch-invariant)."""
    return np.asarray(reranker.cosine_to_score(similarities(passages, query_vec)))


def rerank_order(window: np.ndarray, scores: np.ndarray, key_rank: np.ndarray) -> np.ndarray:
    """Permutation of the window (in pool order) by reranker score descending; equal scores
    keep their pool order, which is itself fused score descending, then document key.

    Not the document key alone: the bi-encoder's scores are clipped to 0..4, so many
    documents tie at 4.0, and ordering those by key threw the fused ranking away (sample
    baseline nDCG@10 0.348 with key ties, 0.380 with pool-order ties)."""
    return np.argsort(-scores.astype(np.float64), kind="stable")


def caption(content: str, query: str) -> str:
    """The content sentence sharing most words with the query (a cheap extractive caption)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", content) if s.strip()]
    if not sentences:
        return ""
    q = {w.lower() for w in _WORD.findall(query)}
    return max(sentences, key=lambda s: len(q & {w.lower() for w in _WORD.findall(s)}))
