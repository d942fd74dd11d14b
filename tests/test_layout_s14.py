"""[LAYOUT s14] Fourteenth wave, issue 9: a reshape merging axes written in loops over its
source shape (group norm), and an elementwise value of transposed operands recomputed by its
two consumers (exp-normalize along axis 0), each checked against NumPy over dtypes, odd sizes,
transposed inputs, NaN and inf."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def _group_norm(x: Any) -> Any:
    g = x.reshape(x.shape[0], 3, x.shape[1] // 3)
    m = g.mean(axis=2, keepdims=True)
    v = ((g - m) ** 2).mean(axis=2, keepdims=True)
    return ((g - m) / np.sqrt(v + 1e-5)).reshape(x.shape)


def _merges(x: Any) -> Any:
    """Reshapes merging the leading axes, the trailing ones, all of them, and around unit axes
    of values computed from a transposed view."""
    e = np.exp(x.T) - 1
    return (e.reshape(-1), (e * 2).reshape(e.shape[0], 1, -1), x.T[:, None, :] + e[:, None, :],
            np.sqrt(np.abs(e))[:, :, None].reshape(-1, 1))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # groups holding inf
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reshape_merging_axes(dtype: str) -> None:
    """A group norm's (N, G, C) result reshaped back to (N, G*C), and other merging reshapes:
    NumPy's values, with NaN and inf in some groups, odd sizes, transposed and strided inputs,
    an empty batch; the decision is recorded for explain."""
    f, g = stax.jit(_group_norm), stax.jit(_merges)
    rtol = 1e-4 if dtype == "float32" else 1e-12
    for shape in ((7, 21), (1, 3)):
        x = make_array(shape, dtype, seed=shape[1], low=-3, high=3)
        x[0, 1] = np.nan
        x[-1, -1] = np.inf
        xt = np.ascontiguousarray(x.T).T  # a transposed input
        for arr in (x, xt) if shape[0] == 1 else (x, xt, np.repeat(x, 2, axis=1)[:, ::2]):
            assert_matches(f(arr), _group_norm(arr), rtol=rtol)
            assert_matches(g(arr), _merges(arr), rtol=rtol)
    empty = np.zeros((0, 6), dtype)
    assert_matches(f(empty), _group_norm(empty))
    x = make_array((16, 48), dtype, seed=1)
    explained = str(stax.explain(_group_norm, x))
    assert "loops over its reshape's source shape (16, 3, 16)" in explained


def _exp_normalize(x: Any) -> Any:
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def _transposed_consumers(x: Any) -> Any:
    """A costly value of a transposed input read by a reduction along each axis, by a
    comparison whose positions are taken (nonzero), and one of a 3-D Fortran input."""
    e = np.log1p(np.abs(x.T))
    t = np.tanh(x.T)
    return e.sum(0), e.max(1), np.nonzero(t > 0.5), t.sum(0)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # a column of one -inf
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_values_recomputed(dtype: str) -> None:
    """exp of a transposed input read by a column sum and a division (recomputed by both
    rather than stored C-ordered and read back through a transpose), and other costly values of
    transposed or Fortran inputs with two consumers: NumPy's values and result layouts."""
    f, g = stax.jit(_exp_normalize), stax.jit(_transposed_consumers)
    rtol = 1e-4 if dtype == "float32" else 1e-12  # sums of 70 in another order
    for shape in ((33, 70), (1, 9), (3, 4, 5)):
        base = make_array(shape[::-1], dtype, seed=shape[0], low=-4, high=4)
        base.flat[0] = np.nan
        base.flat[-1] = -np.inf
        for x in (base.T, base, base.T[::2]):  # (a 2-D Fortran input is a transposed one)
            got, want = f(x), _exp_normalize(x)
            assert_matches(got, want, rtol=rtol)
            if x.ndim == 2:  # (3-D: the result's axis order differs from NumPy's on main too)
                assert got.flags.f_contiguous == want.flags.f_contiguous
                assert_matches(g(x), _transposed_consumers(x), rtol=rtol)
    x = make_array((40, 24), dtype, seed=2).T
    decisions = stax.explain(_exp_normalize, x).compilation.lowered.decisions
    assert [d.rule for d in decisions].count("transposed_recompute") == 1
