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

from collections.abc import Callable, Sequence

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


def fuse_head(lists: Sequence[tuple[np.ndarray, np.ndarray, float, bool]], key_rank: np.ndarray,
              allowed: np.ndarray | None, row_of_rank: np.ndarray, head: int,
              ) -> tuple[np.ndarray, np.ndarray, int, Callable[[], tuple[np.ndarray, np.ndarray]]]:
    """`fuse`, with only the first `head` entries sorted now: their rows and scores, the pool's
    size, and a function returning the whole pool (its first `head` entries are these).

    The head is every candidate scoring at least the `head`-th best score (`argpartition`), in
    key order, stably sorted by score: exactly the full stable sort's first entries."""
    if len(lists) < 2:
        rows, scores = fuse(lists, key_rank, allowed, row_of_rank)
        return rows[:head], scores[:head], int(rows.shape[0]), lambda: (rows, scores)
    contrib = np.concatenate([lst[2] / (RRF_K + np.arange(1, lst[0].shape[0] + 1, dtype=np.float64))
                              for lst in lists])
    ranks, inverse = np.unique(np.concatenate([key_rank[lst[0]] for lst in lists]), return_inverse=True)
    fused = np.bincount(inverse, weights=contrib, minlength=ranks.shape[0])  # adds in list order
    n = int(ranks.shape[0])

    def whole() -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-fused, kind="stable")
        return row_of_rank[ranks[order]], fused[order]

    head = max(1, head)
    if head >= n:
        rows, scores = whole()
        return rows, scores, n, lambda: (rows, scores)
    kth = fused[np.argpartition(-fused, head - 1)[head - 1]]
    cand = np.flatnonzero(fused >= kth)  # positions in key order; ties with the kth compete by key
    sel = cand[np.argsort(-fused[cand], kind="stable")[:head]]
    return row_of_rank[ranks[sel]], fused[sel], n, whole


def apply_boosts(rows: np.ndarray, scores: np.ndarray, boosts: np.ndarray,
                 key_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiply the pool's scores by the document boosts and re-sort (ties by key)."""
    boosted = scores * boosts
    order = order_by_score(boosted, rows, key_rank)
    return rows[order], boosted[order], boosts[order]
