"""Fixed-precision vectors: embeddings on a 2^-11 grid, so every similarity is exact.

Why: the same model on two CPUs (or with another instruction set, BLAS kernel or thread
count) computes embeddings that differ in the last bits, and every later step (HNSW graph
builds, cosines, ties, thresholds) can turn such a difference into another ranking, another
count, another verdict. Two measures make the figures independent of the machine:

1. **The model runs in float64** (`Embedder`, `CrossEncoderReranker`): across the code paths
   that can be switched on one machine (torch's ``ATEN_CPU_CAPABILITY`` default / avx2 /
   avx512, oneDNN's ``ONEDNN_MAX_CPU_ISA``, MKL's ``MKL_CBWR``, 1 or 2 threads) float64
   embeddings differed by at most 4e-16, float32 ones by up to 2e-7 (benchmarks/README.md,
   "Determinism").
2. **Vectors are rounded onto the grid** `GRID` = 2^-11 (:func:`to_grid`) before they are
   cached, indexed or compared, the query vectors too. Each component is ``n / 2048`` with
   an integer ``|n| <= 2048``: the product of two components is an integer multiple of
   2^-22, and every partial sum of a dot product of two (near-)unit grid vectors is such a
   multiple below 2^24 * 2^-22 in magnitude (Cauchy-Schwarz), which float32 holds exactly.
   So **every dot product of grid vectors is exact in float32**, whatever the order of the
   additions, FMA, SIMD width or thread count of the library computing it (numpy, BLAS,
   FAISS's HNSW builds and searches, pgvector).

What remains: a component whose float64 value lies within ~4e-16 of a rounding midpoint can
round either way on another machine, with probability about 2 * 4e-16 / 2^-11 = 1.6e-12 per
component (the sample's ~16,000 texts of 384 dimensions: about 1e-5 per build).

The cost: float64 inference measured about 2.2 times float32's time; the grid changes a
cosine by at most about 2^-12 times the sum of the other vector's absolute components
(typically 1e-4; nDCG effects in benchmarks/README.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["GRID_BITS", "GRID", "NUMERICS", "to_grid", "unit_rows", "on_grid", "vector_space"]

#: Fractional bits of the grid: 11 is the finest grid on which float32 dot products of unit
#: vectors stay exact (products need 2 * 11 = 22 bits, sums of up to norm 4 two more: 24).
GRID_BITS = 11
GRID = 2.0 ** -GRID_BITS
_SCALE = float(2 ** GRID_BITS)
#: The name of these numerics: part of every embedding-cache key and index input hash, so a
#: vector made otherwise (unrounded float32, an older grid) is never mixed with these.
NUMERICS = f"grid{GRID_BITS}"


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64 (an all-zero row stays zero)."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim == 1:
        m = m[None, :]
    # numpy's pairwise sum along a row adds in an order fixed by its source, whatever the SIMD
    # width (einsum's kernels do not: their accumulation order follows the instruction set)
    norms = np.sqrt((m * m).sum(axis=1))[:, None]
    norms[norms == 0] = 1.0
    return m / norms


def to_grid(matrix: np.ndarray, *, normalise: bool = True) -> np.ndarray:
    """Rows (unit length first, with `normalise`) rounded to the nearest multiple of `GRID`
    (ties to even), as float32: exactly representable, and exact in every dot product."""
    m = unit_rows(matrix) if normalise else np.asarray(matrix, dtype=np.float64)
    n = np.clip(np.rint(m * _SCALE), -_SCALE, _SCALE)
    return np.ascontiguousarray(n / _SCALE, dtype=np.float32)


def on_grid(matrix: np.ndarray) -> bool:
    """Whether every value is a multiple of `GRID` within [-1, 1] (what `to_grid` returns)."""
    m = np.asarray(matrix, dtype=np.float64) * _SCALE
    return bool(np.all(np.abs(m) <= _SCALE) and np.all(m == np.rint(m)))


def vector_space(model_id: str | None, numerics: str = NUMERICS) -> str:
    """The name of a space of vectors: the model and how its vectors are computed and rounded
    (e.g. ``all-MiniLM-L6-v2@gt-0.1.0#float64-grid11``)."""
    return f"{model_id}#{numerics}"
