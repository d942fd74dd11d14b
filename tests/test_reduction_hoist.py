"""[INVAR] Reductions whose loop-invariant values are computed once before their loops give
NumPy's results: 0-d counts and divisors, rows, nests of reduction loops, masked prefixes that
may stop at 0, empty reductions, and the warnings of an invariant conversion."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax


def _with_warnings(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args)
    return value, sorted({str(w.message) for w in caught})


def masked_sum(x: np.ndarray, s: np.ndarray, n: np.ndarray) -> Any:
    return np.where(x > 0, (x - s / n.astype(x.dtype)) ** 2, 0).sum()


def row_sums(x: np.ndarray, n: np.ndarray) -> Any:
    return (x / n.astype(x.dtype) - x.mean(-1, keepdims=True)).sum(-1)


def prefix_sum(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> Any:
    return np.where(np.arange(x.shape[0]) < k, x / n.astype(float), 0).sum()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("size", [0, 1, 100, 10_000])  # 10,000: chunked
def test_masked_sum_with_a_0d_count(dtype, size):
    x = (np.random.default_rng(size).standard_normal(size)).astype(dtype)
    if size:
        x[size // 2] = np.nan if size > 1 else x[0]
    s, n = np.asarray(3.0, dtype), np.int64(7)
    got = stax.jit(masked_sum, threads=1)(x, s, n)
    want = masked_sum(x, s, n)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert np.asarray(got).dtype == want.dtype


@pytest.mark.parametrize("shape", [(8, 100), (3, 0), (0, 5), (2, 5000)])
def test_row_sums_with_a_0d_count(shape):
    x = np.random.default_rng(1).standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # means of empty rows, as NumPy warns
        got = stax.jit(row_sums, threads=1)(x, np.int64(3))
        want = row_sums(x, np.int64(3))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_transposed_and_strided_nests():
    base = np.random.default_rng(2).standard_normal((8, 100))
    for x in (base[:, :50], base.T, base[::2, ::3]):
        got = stax.jit(lambda a, n: (a / n.astype(float)).sum(), threads=1)(x, np.int64(7))
        np.testing.assert_allclose(got, (x / 7.0).sum(), rtol=1e-12)


@pytest.mark.parametrize("k", [0, 1, 5, 100, 200])
def test_masked_prefix_that_may_stop_at_zero(k):
    x = np.random.default_rng(3).standard_normal(100)
    got = stax.jit(prefix_sum, threads=1)(x, np.int64(k), np.int64(7))
    np.testing.assert_allclose(got, prefix_sum(x, np.int64(k), np.int64(7)), rtol=1e-12,
                               atol=1e-15)


@pytest.mark.parametrize("s", [np.nan, np.inf, 2.5])
def test_invariant_conversion_warns_as_numpy(s):
    def f(x: np.ndarray, v: np.ndarray) -> Any:
        return (x * v.astype(np.int64)).sum()

    x = np.arange(10_000, dtype=np.int64)
    v = np.float64(s)
    got, got_warnings = _with_warnings(stax.jit(f, threads=1), x, v)
    want, want_warnings = _with_warnings(f, x, v)
    assert got == want
    assert got_warnings == want_warnings


def column_stats(x: np.ndarray, s: np.ndarray, n: np.ndarray) -> Any:
    c = x - s / n.astype(x.dtype)
    return (c * c).sum(0) / n.astype(x.dtype), c.max(0), np.where(x > s, x, 0).sum(0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(256, 1024), (7, 33), (1, 5), (0, 8), (300, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_column_statistics_with_0d_values(dtype, shape, threads):
    x = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    if x.size > 3:
        x.flat[3] = np.nan
    s, n = np.asarray(0.5, dtype), np.int64(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if shape[0] == 0:  # max of an empty column: NumPy's error
            with pytest.raises(ValueError):
                column_stats(x, s, n)
            return
        got = stax.jit(column_stats, threads=threads)(x, s, n)
        want = column_stats(x, s, n)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5 if dtype == np.float32 else 1e-12)
