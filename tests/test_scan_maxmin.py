"""[CLIFF, issue 9] `np.maximum.accumulate` / `np.minimum.accumulate` compile as scans (before:
a NumPy call between compiled parts): NaN-propagating as np.maximum / np.minimum, -0.0 and 0.0
in NumPy's order, every dtype, rows, columns (the outer-reduction block), one long scan over
threads, strided and transposed inputs, fused with the work around them; vs NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def _programs(x: Any) -> Any:
    return (np.maximum.accumulate(x, axis=1), np.minimum.accumulate(x, axis=0),
            np.maximum.accumulate(x[:, ::2] * 2, axis=-1), np.minimum.accumulate(x.T, axis=1))


def _specials(dtype: str) -> np.ndarray:
    x = make_array((23, 41), dtype, seed=50, low=-9, high=9)
    if dtype == "bool":
        return x
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    x[0] = info.min
    x[1, [3, 30]] = info.max
    if dtype.startswith("float"):
        x[2, 7] = np.nan  # the rest of the row (and of column 7) is NaN
        x[3, [0, 40]] = np.nan
        x[4, :4] = (-0.0, 0.0, -0.0, 0.0)
        x[5] = -np.inf
        x[6, 9] = np.inf
    return x


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "uint64", "bool"])
def test_rows_and_columns_keep_numpys_rules(dtype: str) -> None:
    x = _specials(dtype)
    with np.errstate(all="ignore"):
        want = _programs(x)
        got = stax.jit(_programs)(x)
    assert_matches(got, want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        if dtype.startswith("float"):
            assert np.array_equal(np.signbit(g), np.signbit(w))  # -0.0 where NumPy has it
    assert_matches(stax.jit(_programs)(np.asfortranarray(x)), want)


def test_compiled_not_called() -> None:
    f = stax.jit(lambda a: np.maximum.accumulate(a, axis=1) - a)
    x = make_array((5, 9), "float32", seed=51)
    text = str(stax.explain(f, x))
    assert "cummax" in text and "np.maximum.accumulate" not in text


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_one_long_scan_on_threads(dtype: str, always_parallel: Any) -> None:
    def fn(a: Any) -> Any:
        return np.maximum.accumulate(a), np.minimum.accumulate(a * 3)

    x = make_array((30_011,), dtype, seed=52, low=-1000, high=1000)
    assert_matches(stax.jit(fn, threads=2)(x), fn(x))
    if dtype == "float32":
        x[[17_000, 29_000]] = np.nan  # in the second thread's slice
        assert_matches(stax.jit(fn, threads=2)(x), fn(x))
    # [SCAN] serial: two passes over the threads would run the chain twice
    report = stax.explain(stax.jit(fn, threads=2), x)
    assert "two passes" not in report.code
    assert "one long scan without a vectorized first pass" in str(report)


def test_one_long_complex_scan_serial(always_parallel: Any) -> None:
    x = make_array((30_011,), "float64", seed=53)
    z = (x + 1j * x[::-1]) / 4
    fn = stax.jit(lambda a: (np.cumsum(a), np.cumprod(a[:200])), threads=2)
    got = fn(z)
    np.testing.assert_array_equal(got[0], np.cumsum(z))  # in order, as NumPy
    np.testing.assert_allclose(got[1], np.cumprod(z[:200]), rtol=1e-12)
    assert "two passes" not in stax.explain(fn, z).code
