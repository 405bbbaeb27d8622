"""Ranking order shared by every stage of the local target: score descending, ties by key.

Each index row has a `key_rank` (its document key's position in sorted key order), so
"ties broken by document key" is one integer comparison and every stage (keyword leg,
vector legs, fusion, boosts, reranker) orders equal scores the same way, whatever order
the candidates arrived in.
"""

from __future__ import annotations

import numpy as np


def key_ranks(keys: list[str]) -> np.ndarray:
    """Position of each row's key in sorted key order (int32)."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = np.empty(len(keys), dtype=np.int32)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(keys), dtype=np.int32)
    return ranks


def order_by_score(scores: np.ndarray, rows: np.ndarray, key_rank: np.ndarray) -> np.ndarray:
    """Permutation of `rows` by score descending, ties by document key.

    float32 scores (BM25, cosines): one argsort of a 64-bit key (the score's bits made
    order-preserving, then the key rank); otherwise two argsorts (key order, then a stable
    sort by score). Both measured 2.5x faster than `np.lexsort` on 1,000 candidates."""
    if scores.dtype == np.float32:
        bits = (scores + np.float32(0.0)).view(np.uint32)  # + 0.0 turns -0.0 into 0.0
        flip = np.where(bits >> np.uint32(31), np.uint32(0xFFFFFFFF), np.uint32(0x80000000))
        desc = (np.uint32(0xFFFFFFFF) - (bits ^ flip)).astype(np.uint64)
        return np.argsort((desc << np.uint64(32)) | key_rank[rows].astype(np.uint64))
    by_key = np.argsort(key_rank[rows], kind="stable")
    return by_key[np.argsort(-scores[by_key], kind="stable")]


def top_rows(scores: np.ndarray, rows: np.ndarray, key_rank: np.ndarray,
             k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best of `rows` (with `scores`), sorted by score descending, ties by key."""
    n = rows.shape[0]
    if k <= 0 or n == 0:
        return rows[:0], scores[:0]
    if k < n:
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        keep = np.flatnonzero(scores >= kth)  # every row tied with the k-th competes by key
        rows, scores = rows[keep], scores[keep]
    order = order_by_score(scores, rows, key_rank)[:k]
    return rows[order], scores[order]
