"""Token-size histograms with bins of one width (a round number, 8 to about 20 bins up to a
top value, then one open bin), so the bars compare: uneven bins made a wide bin look crowded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 100_000, 10**9)


def histogram_edges(top: int) -> list[int]:
    """Bin edges 0, w, 2w, ... up to the first edge above `top` (w: the largest round width of at
    most top/8, so 8 to about 20 bins)."""
    raw = max(int(top), 1) / 8
    step = max(s for s in _STEPS if s <= max(raw, 1))
    return list(range(0, int(top // step) * step + step + 1, step))


def uniform_histogram(values: Sequence[int], top: int) -> list[dict[str, Any]]:
    """``[{"from", "to", "chunks"}]`` over `histogram_edges(top)`; the last bin is open (to None)."""
    if not values:
        return []
    edges = histogram_edges(top)
    step = edges[1] - edges[0]
    counts = [0] * len(edges)
    for v in values:
        counts[min(int(v // step), len(edges) - 1)] += 1
    return [{"from": lo, "to": lo + step if i + 1 < len(edges) else None, "chunks": c}
            for i, (lo, c) in enumerate(zip(edges, counts, strict=True))]
