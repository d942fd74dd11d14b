"""[PERF10] Seventeenth wave, issue 9: the compiler changes behind the unseen workloads of
benchmarks/workloads.py, each checked against NumPy over dtypes, layouts and special values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax


def _searches(a: Any, v: Any) -> Any:
    return np.searchsorted(a, v), np.searchsorted(a, v, side="right")


def _grid(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """A sorted grid of n values with repeats (left and right differ there); a float grid
    also holds -inf, inf and NaN (NaN last: NumPy's sort order)."""
    values = np.sort(rng.integers(0 if dtype in ("uint8", "bool") else -20, 20, n).astype(dtype))
    if np.dtype(dtype).kind == "f" and n >= 4:
        values[0], values[-2], values[-1] = -np.inf, np.inf, np.nan
    return values


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "uint8", "bool"])
def test_searchsorted_binary_search_is_numpys(dtype: str) -> None:
    """np.searchsorted (both sides) is NumPy's for grids of every length (0, 1, a power of two
    and others), values on, between and beyond the grid points, NaN and +-inf, and values
    that are transposed and strided, 0-d or empty."""
    f = stax.jit(_searches)
    rng = np.random.default_rng(17)
    for n in (0, 1, 5, 8, 257):
        a = _grid(dtype, n, rng)
        v = (rng.integers(-25, 25, (6, 40)) + rng.choice([0, 0.5], (6, 40))).astype(dtype) \
            if dtype != "bool" else rng.integers(0, 2, (6, 40)).astype(bool)
        if np.dtype(dtype).kind == "f":
            v[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
        for view in (v, v.T[::3], v[2, 5], v[:0]):
            assert_matches(f(a, view), _searches(a, view))


def test_searchsorted_mixed_dtypes_and_scalars() -> None:
    """Grid and values of different dtypes compare in their common dtype, as NumPy's do (an
    int grid and float values, float32 and float64, int64 and uint64); Python scalars and
    lists as values."""
    f = stax.jit(_searches)
    rng = np.random.default_rng(5)
    grid = np.sort(rng.integers(-50, 50, 33))
    values = rng.standard_normal(64) * 40
    for a, v in ((grid, values), (grid.astype(np.float32), values),
                 (grid.astype(np.float64), values.astype(np.float32)),
                 (np.sort(np.abs(grid)).astype(np.uint64), values.astype(np.int64)),
                 (grid.astype(np.float32), 0.1), (grid, [3, -7.5, 100])):
        assert_matches(f(a, v), _searches(a, v))


def test_isin_by_search_is_numpys() -> None:
    """np.isin beyond its pairwise limit searches the sorted test elements: NumPy's result,
    NaN never matching."""
    rng = np.random.default_rng(9)
    tests = rng.integers(0, 300, 200).astype(np.float64)
    tests[:3] = np.nan
    x = rng.integers(0, 400, (30, 17)).astype(np.float64)
    x[0, 0] = np.nan

    def member(x: Any, t: Any) -> Any:
        return np.isin(x, t), np.isin(x.T, t, invert=True)

    assert_matches(stax.jit(member)(x, tests), member(x, tests))


def _clipped(x: Any, idx: Any) -> Any:
    n = x.shape[0]
    return x[np.clip(idx, 0, n - 1)], np.take(x, idx, mode="clip"), x[np.clip(idx, -n, n - 1)]


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_clipped_gather_needs_no_check(dtype: str) -> None:
    """A gather at indices clipped into the axis is NumPy's, and its kernel reads them with no
    range check; indices clipped to a range reaching below 0 keep NumPy's wrap-around."""
    rng = np.random.default_rng(2)
    x = rng.integers(-100, 100, 50).astype(dtype)
    idx = rng.integers(-80, 80, (7, 9))
    f = stax.jit(_clipped)
    for view in (idx, idx.T, idx[:, ::2]):
        assert_matches(f(x, view), _clipped(x, view))
    source = stax.explain(lambda x, i: x[np.clip(i, 0, 49)], x, idx).code
    assert "stax_wrap_index" not in source


def _along(x: Any) -> Any:
    return (np.sort(x, axis=1), np.sort(x, axis=0), np.argsort(x, axis=1, kind="stable"),
            np.argsort(x, axis=0), np.partition(x, [3, -8], axis=1), np.sort(x, axis=None))


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_axis_routines_split_over_threads(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """np.sort / np.argsort / np.partition sort into their buffer, large arrays split along
    another axis over threads (three parts here, whatever the load): NumPy's values, indices
    (the stable order of ties too) and partitions, for C, transposed and strided inputs, NaN
    included, and a small array on the calling thread."""
    monkeypatch.setattr("stax.tiling.threads.team", lambda planned: 3)
    rng = np.random.default_rng(4)
    x = rng.integers(-50, 50, (120, 700)).astype(dtype)  # repeats: ties for argsort
    if dtype == "float32":
        x[::7, ::11] = np.nan
    f = stax.jit(_along)
    for view in (x, x.T, x[::2, ::-3], x[:5, :9]):
        got, want = f(view), _along(view)
        for k in (0, 1, 2, 5):  # values and indices exactly; partitions by their sorted parts
            assert_matches(got[k], want[k])
        assert_matches(np.sort(got[4][:, :3], 1), np.sort(want[4][:, :3], 1))
        assert_matches(got[4][:, 3], want[4][:, 3])
        assert_matches(np.sort(got[4][:, -8:], 1), np.sort(want[4][:, -8:], 1))
        assert_matches(np.take_along_axis(view, got[3], 0), np.sort(view, 0))
