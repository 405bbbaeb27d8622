"""Fusion of the legs into the candidate pool, on row ids: weighted RRF, then document boosts.

- several lists: weighted Reciprocal Rank Fusion, score(d) = sum of weight / (60 + rank),
  summed in list order (keyword leg first, then the vector legs as requested);
- one list keeps its own score (BM25; for a vector list Azure's cosine searchScore
  1 / (2 - cos));
- no list (no text, no vectors): every row passing the filter, score 1.0 (`search=*`);
- scoring-profile functions multiply the fused score, and the pool is re-sorted.

Every ordering is score descending with ties broken by document key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragdiag.model.request import RRF_K
from ragdiag.targets.local.ranking import order_by_score


def fuse(lists: Sequence[tuple[np.ndarray, np.ndarray, float, bool]], key_rank: np.ndarray,
         allowed: np.ndarray | None, row_of_rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pool rows and scores from `(rows, scores, weight, is_text)` lists (each best first)."""
    if not lists:
        rows = (np.flatnonzero(allowed) if allowed is not None else np.arange(key_rank.shape[0])).astype(np.int32)
        scores = np.ones(rows.shape[0], dtype=np.float64)
        order = order_by_score(scores, rows, key_rank)
        return rows[order], scores[order]
    if len(lists) == 1:
        rows, scores, _w, is_text = lists[0]
        if is_text:
            return rows, scores.astype(np.float64)
        return rows, 1.0 / (2.0 - scores.astype(np.float64))  # monotone: the list's order holds
    contrib = np.concatenate([lst[2] / (RRF_K + np.arange(1, lst[0].shape[0] + 1, dtype=np.float64))
                              for lst in lists])
    if row_of_rank is None:
        row_of_rank = np.argsort(key_rank).astype(np.int32)
    # unique over key ranks: the candidates come out in key order, so a stable sort by score
    # alone breaks ties by key
    ranks, inverse = np.unique(np.concatenate([key_rank[lst[0]] for lst in lists]), return_inverse=True)
    fused = np.bincount(inverse, weights=contrib, minlength=ranks.shape[0])  # adds in list order
    order = np.argsort(-fused, kind="stable")
    return row_of_rank[ranks[order]], fused[order]


def apply_boosts(rows: np.ndarray, scores: np.ndarray, boosts: np.ndarray,
                 key_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiply the pool's scores by the document boosts and re-sort (ties by key)."""
    boosted = scores * boosts
    order = order_by_score(boosted, rows, key_rank)
    return rows[order], boosted[order], boosts[order]
