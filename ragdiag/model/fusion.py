"""Reciprocal Rank Fusion, as Azure AI Search applies it to hybrid queries.

score(d) = sum over lists of weight / (RRF_K + rank(d)), ranks 1-based.
Used by the local target and by client-side fusion in the split-channel probe.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragdiag.model.request import RRF_K


def rrf(lists: Sequence[tuple[Sequence[str], float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Fuse ranked key lists with weights; ties keep first-seen order (stable)."""
    scores: dict[str, float] = {}
    for keys, weight in lists:
        for rank, key in enumerate(keys, 1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    return order
