"""Fixed-precision vectors (`ragdiag.encoders.numerics`): grid vectors give exact float32 dot products."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.encoders.numerics import (
    GRID,
    GRID_BITS,
    NUMERICS,
    on_grid,
    to_grid,
    unit_rows,
    vector_space,
)


def _orders(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> set[float]:
    """float32 dot products of `a` and `b` summed in several orders (as SIMD widths, FMA,
    BLAS blocking and thread splits do): the set of distinct results."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    prods = a32 * b32
    out = {float(np.dot(a32, b32)), float(np.einsum("i,i->", a32, b32))}
    acc = np.float32(0.0)
    for p in prods:  # strictly left to right
        acc = np.float32(acc + p)
    out.add(float(acc))
    for width in (4, 8, 16):  # lane-wise partial sums, then the lanes (SSE / AVX2 / AVX-512)
        lanes = np.zeros(width, dtype=np.float32)
        for start in range(0, len(prods), width):
            chunk = prods[start:start + width]
            lanes[:len(chunk)] = (lanes[:len(chunk)] + chunk).astype(np.float32)
        acc = np.float32(0.0)
        for x in lanes:
            acc = np.float32(acc + x)
        out.add(float(acc))
    for _ in range(20):  # random orders
        acc = np.float32(0.0)
        for p in prods[rng.permutation(len(prods))]:
            acc = np.float32(acc + p)
        out.add(float(acc))
    return out


def test_grid_vectors_have_one_dot_product_whatever_the_summation_order():
    rng = np.random.default_rng(7)
    raw = rng.normal(size=(40, 384))
    grid = to_grid(raw)
    assert grid.dtype == np.float32 and on_grid(grid)
    for i in range(0, 40, 2):
        results = _orders(grid[i], grid[i + 1], rng)
        exact = float(np.dot(grid[i].astype(np.float64), grid[i + 1].astype(np.float64)))
        assert results == {exact}  # one value, and it is the exact one
    # the same vectors unrounded: float32 sums in other orders give other last bits
    unit = unit_rows(raw).astype(np.float32)
    differing = sum(len(_orders(unit[i], unit[i + 1], rng)) > 1 for i in range(0, 40, 2))
    assert differing >= 15  # of 20 pairs


def test_to_grid_rounds_unit_rows_to_multiples_of_two_to_the_minus_eleven():
    assert GRID == 1 / 2048 and GRID_BITS == 11 and NUMERICS == "grid11"
    v = to_grid(np.array([[3.0, 4.0, 0.0]]))
    # 3/5 = 0.6 -> 1228.8 / 2048 -> 1229 / 2048; 0.8 -> 1638.4 -> 1638
    np.testing.assert_array_equal(v, np.array([[1229 / 2048, 1638 / 2048, 0.0]], dtype=np.float32))
    assert to_grid(np.zeros((1, 4))).tolist() == [[0.0] * 4]  # a zero row stays zero, no NaN
    # every component moves by at most half a grid step from the unit vector
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(50, 64))
    assert np.abs(to_grid(raw) - unit_rows(raw)).max() <= GRID / 2
    # ties to even: 0.5 / 2048 -> 0, 1.5 / 2048 -> 2 / 2048
    np.testing.assert_array_equal(to_grid(np.array([[0.5 / 2048, 1.5 / 2048]]), normalise=False),
                                  np.array([[0.0, 2 / 2048]], dtype=np.float32))
    # a one-hot row is exactly 1 (the grid's bound)
    assert to_grid(np.array([[0.0, -7.0]])).tolist() == [[0.0, -1.0]]


def test_on_grid_tells_grid_vectors_from_others():
    assert on_grid(np.array([[1 / 2048, -1.0, 0.5]], dtype=np.float32))
    assert not on_grid(np.array([[1 / 4096]], dtype=np.float32))  # finer than the grid
    assert not on_grid(np.array([[1.5]]))  # outside [-1, 1]
    assert not on_grid(unit_rows(np.array([[1.0, 2.0, 2.0001]])))


def test_to_grid_is_idempotent_and_insensitive_to_float_noise_far_from_midpoints():
    rng = np.random.default_rng(11)
    raw = rng.normal(size=(200, 384))
    grid = to_grid(raw)
    np.testing.assert_array_equal(to_grid(grid, normalise=False), grid)
    # noise of float64 results across machines (measured below 1e-15) changes no component
    # unless it sits within the noise of a rounding midpoint: here none does
    noisy = unit_rows(raw) * (1 + 1e-15 * rng.standard_normal(raw.shape))
    np.testing.assert_array_equal(to_grid(noisy, normalise=False), to_grid(unit_rows(raw), normalise=False))
    # float32 differences (measured up to 2e-7) do move components: why the model runs in float64
    noisy32 = unit_rows(raw) + 2e-7 * rng.standard_normal(raw.shape)
    assert (to_grid(noisy32, normalise=False) != to_grid(unit_rows(raw), normalise=False)).any()


@pytest.mark.parametrize("model_id,numerics,expected", [
    ("all-MiniLM-L6-v2@gt-0.1.0", "float64-grid11", "all-MiniLM-L6-v2@gt-0.1.0#float64-grid11"),
    ("fake@1", NUMERICS, "fake@1#grid11"),
])
def test_vector_space_names_model_and_numerics(model_id, numerics, expected):
    assert vector_space(model_id, numerics) == expected
