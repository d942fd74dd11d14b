"""[HUNT2, s9] NumPy scalar arguments (`np.float32(0.5)`, `np.int64(3)`, `np.bool_`) take the
warm path (`Jitted.fast`, the packed key's scalar tag) with NumPy's dtype semantics (NEP 50: a
NumPy scalar is not weak, so `float32_array * np.float64(2)` is float64); they took the cold
path on every call before (~50 us instead of ~8 us at load 7: see the note s9_HUNT2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax


def _scale(x: Any, s: Any) -> Any:
    return x * s + 1, s - x, (x > s) | (x == 0)


SCALARS = [np.float32, np.float64, np.int64, np.int8, np.uint8, np.int32, np.complex64,
           np.bool_]


@pytest.mark.parametrize("array_dtype", ["float32", "int16", "uint8"])
@pytest.mark.parametrize("scalar", SCALARS)
def test_numpy_scalars_run_warm_with_numpys_dtypes(array_dtype: str, scalar: type) -> None:
    x = np.arange(7).astype(array_dtype)
    fn = stax.jit(_scale)
    for value in (1, 0, 3, 1, 2):
        s = scalar(value)
        with np.errstate(all="ignore"):  # uint8 wrap-around, as in the kernels
            want = _scale(x, s)
        got = fn(x, s)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            np.testing.assert_array_equal(g, w)
    assert fn.cache_info().compiles == 1
    assert len(fn.fast) == 1  # every call after the first ran warm


def test_numpy_and_python_scalars_do_not_share_a_warm_runner() -> None:
    x = np.arange(5, dtype=np.float32)
    fn = stax.jit(lambda x, s: x / s)
    for s in (2.0, np.float32(2.0), np.float64(2.0), 2.0, np.float32(4.0), np.float64(3.0)):
        got, want = fn(x, s), x / s
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert len(fn.fast) == 3


def test_a_strided_array_with_a_numpy_scalar_runs_warm() -> None:
    x = np.arange(24.0).reshape(4, 6)[:, ::2].T
    fn = stax.jit(lambda x, s: np.sqrt(x) * s)
    for v in (0.5, 2.0, -1.0):
        got, want = fn(x, np.float32(v)), np.sqrt(x) * np.float32(v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert len(fn.fast) == 1
