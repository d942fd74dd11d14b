"""A constant `np.arange(n)` (int64) read at an affine position is the position itself
(`stax.lower`, `_is_iota`): no constant buffer, no load. Read through a gather it stays a
bounds-checked load. The masked slices of `stax.loops` read their positions this way."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stax
from stax.loops import runner


def views(x):
    r = np.arange(10)
    return (x + r, x[:4] * r[3:7], x[::-1] - r[::-3].sum(), np.arange(6)[None, :] + x[:3, None],
            r[::2].reshape(5, 1) * x[None, 2:7])


def gather(x, idx):
    return (np.arange(5) + x[0] * 0)[idx] + x  # the arange read at an index from data


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha
    return B


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_arange_views_equal_numpy(dtype):
    x = (np.arange(10) * 1.5 - 4).astype(dtype)
    for got, want in zip(stax.jit(views)(x), views(x), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_arange_through_a_gather_is_still_bounds_checked():
    fn = stax.jit(gather)
    x = np.ones(3)
    for idx in (np.array([0, 4, -1]), np.array([-5, 2, 3])):
        np.testing.assert_array_equal(fn(x, idx), gather(x, idx))
    with pytest.raises(IndexError):
        gather(x, np.array([0, 5, 1]))
    with pytest.raises(IndexError):
        fn(x, np.array([0, 5, 1]))


@pytest.mark.parametrize("n", [2, 3, 9])
def test_masked_positions_read_no_constant(n):
    rng = np.random.default_rng(n)
    A, B = rng.random((n, n)), rng.random((n, n))
    fn = stax.jit(trmm)
    np.testing.assert_allclose(fn(1.5, A, B.copy()), trmm(1.5, A, B.copy()), rtol=1e-12)
    where = f"{trmm.__code__.co_filename}:{trmm.__code__.co_firstlineno + 2} "  # not another
    inner = [b for k, b in runner.BODIES.items() if where in k and b.source]  # file's line
    assert inner and not any(re.search(r"\bconst\d+\b", b.source) for b in inner)
