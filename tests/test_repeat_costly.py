"""np.repeat of a costly value (an exp, a sin) is computed once per element before the repeat:
inlined, the reshape's `x // r` index hid that it is the same along the repeated axis and the
call ran r times per element (npbench's stockham_fft: 1.6x NumPy's time). Results vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import stax


def repeat_exp(x, y):
    return np.repeat(np.exp(x), 5) * y


def repeat_axis_sin(x):
    return np.repeat(np.sin(x), 3, axis=0) + 1.0


def twiddles(n):  # stockham_fft's pattern: complex exps repeated, then a product
    w = np.exp(-2j * np.pi * np.arange(n) / n)
    return np.repeat(w, 4) * np.arange(4 * n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_repeated_costly_values_match_numpy(dtype: str) -> None:
    r = np.random.default_rng(0)
    x = r.normal(size=13).astype(dtype)
    x[3], x[7] = np.nan, np.inf
    y = r.normal(size=65).astype(dtype)
    np.testing.assert_allclose(stax.jit(repeat_exp)(x, y), repeat_exp(x, y), rtol=1e-6)
    m = r.normal(size=(7, 9)).astype(dtype).T  # transposed input
    got, want = stax.jit(repeat_axis_sin)(m), repeat_axis_sin(m)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)
    empty = np.zeros(0, dtype)
    np.testing.assert_array_equal(stax.jit(repeat_exp)(empty, empty), repeat_exp(empty, empty))


def test_repeated_complex_exps_computed_once() -> None:
    np.testing.assert_allclose(stax.jit(twiddles)(16), twiddles(16), rtol=1e-12, atol=1e-12)
    text = str(stax.explain(repeat_exp, np.ones(8), np.ones(40)))
    assert "np.repeat" in text and "exp would run once per repeated element" in text
