"""[REVIEW s10] Counterexamples found reviewing the tenth session, each against NumPy run on
the same inputs in the test: `x[n]` with `n` an integer argument (known only at run time) is
NumPy's view of `x` (a later write to `x` shows through it, a write into it reaches `x`), and
np.asarray of a scalar is a 0-d array (not weak under NEP 50; indexing by it copies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax


def later_write(n, p):  # the view is read after its base was written
    old = p[n - 1]
    p[0, :] = 5.0
    return old.sum()


def whole_write(n, p):
    old = p[n, 1:]
    p += 2.0
    return old * 3


def column_view(n, p):
    old = p[:, n]
    p[:, 0] = 5.0
    return old.T + 1


def write_into(n, p):  # a write into the view reaches p
    old = p[n]
    old += 1.0
    old[0] = -4.0
    return p


def augmented(n, p, w):  # `p[n] -= w`: NumPy's view, written in place
    p[n] -= w
    p[n - 1, 1:] *= 2
    return p


def in_a_loop(n, p, w):  # a view taken per step, the row then written by a nested loop
    acc = w[0, 0] * 0.0
    for t in range(3):
        old = p[n - 1]
        p[0, :] = 1.0 + t
        for j in range(1, n):
            p[j, :] = p[j - 1, :] * 0.5 + w[j, :]
        acc = acc + old.sum()
    return p, acc


def zero_d_index(n, p):  # a 0-d array index is advanced indexing: NumPy copies
    old = p[np.asarray(n)]
    p[:] = 3.0
    return old.sum()


def scalar_element(n, p):  # every axis indexed: a scalar (a copy)
    s = p[n, 1]
    p[:] = 3.0
    return s + 0


def _compare(fn: Callable[..., Any], *args: Any) -> None:
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = stax.jit(fn)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    for a, w in zip(args, want_args, strict=True):  # the arguments, written back
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, w, rtol=1e-6)


@pytest.mark.parametrize("fn", [later_write, whole_write, column_view, write_into,
                                zero_d_index, scalar_element])
@pytest.mark.parametrize("n", [1, 0, -1, 2])
@pytest.mark.parametrize("layout", ["C", "transposed"])
def test_a_row_at_a_run_time_index_is_a_view(fn, n, layout):
    base = np.arange(12.0).reshape(3, 4) if layout == "C" else np.arange(12.0).reshape(4, 3).T
    if fn is later_write and n == 0:
        n = 3  # p[2]
    _compare(fn, n, base.copy())


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_augmented_assignment_at_a_run_time_index(dtype):
    p = np.arange(20).reshape(4, 5).astype(dtype)
    w = np.arange(5).astype(dtype)
    for n in (1, 3, -2):
        _compare(augmented, n, p.copy(), w)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_a_view_taken_before_a_nested_loop(n):
    rng = np.random.default_rng(0)
    _compare(in_a_loop, n, rng.normal(size=(n, 4)), rng.normal(size=(n, 4)))


def test_asarray_of_a_scalar_is_not_weak():
    x = np.ones(3, np.int8)
    for conv in (np.asarray, np.array):
        def f(x, n, conv=conv):
            return x + conv(n)
        _compare(f, x, 3)
