"""Rows of loop-invariant arrays read at the loop index (`x[t]`, `x[2*t + 1]`): the C driver
points a body input at the row instead of gathering it (issue 10, EMA over rows); results
against NumPy, including indices NumPy wraps and bodies run from Python."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.loops import records


def rows_at(x, alpha, steps):
    s = x[0] * 0.0
    for t in range(steps):
        s = alpha * x[t] + (1 - alpha) * s + x[2 * t + 1] - x[steps - t]
    return s


def wrapped(x, steps):
    s = x[0] * 0.0
    for t in range(steps):
        s = s + x[t - 2]  # x[-2], x[-1] first: NumPy counts from the end
    return s


def through_python(x, m, steps):
    s = x[0] * 0.0
    for t in range(steps):
        s = x[t + 1] @ m + 0.5 * s  # a matrix product: the body runs from Python per step
    return s


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_rows_at_affine_indices(dtype):
    x = make_array((11, 6), dtype)
    jitted = stax.jit(rows_at, strict=True)
    assert_matches(jitted(x, 0.25, 5), rows_at(x, 0.25, 5), rtol=1e-5)
    (rec,) = records(jitted)
    # x[t] and x[2t+1] are row pointers; x[steps - t] (an argument in the index) stays a gather
    assert rec.body.source.count("(char*)") == 2, rec.body.source


def test_wrapped_indices_keep_the_gather():
    x = make_array((5, 3), "float64")
    jitted = stax.jit(wrapped, strict=True)
    assert_matches(jitted(x, 6), wrapped(x, 6))


def test_rows_in_a_body_run_from_python():
    x = make_array((6, 4), "float64")
    m = make_array((4, 4), "float64", 1)
    jitted = stax.jit(through_python, strict=True)
    assert_matches(jitted(x, m, 5), through_python(x, m, 5), rtol=1e-12)
    (rec,) = records(jitted)
    assert "from Python" in rec.decision


def rows_of_slices(x, steps):
    s = x[0, :3] * 0.0
    for t in range(steps):
        s = s + x[1::2, 4:1:-1][t] * x[:, :3][t + 1] - x[2:, 1:4][t]
    return s


def triangular(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rows_of_slices_are_row_pointers(dtype):
    x = make_array((12, 6), dtype)
    jitted = stax.jit(rows_of_slices, strict=True)
    assert_matches(jitted(x, 5), rows_of_slices(x, 5), rtol=1e-5)
    (rec,) = records(jitted)
    assert rec.body.source.count("(char*)") == 3, rec.body.source


def test_row_of_a_slice_that_would_leave_the_array_keeps_the_gather():
    x = make_array((6, 6), "float64")
    jitted = stax.jit(rows_of_slices)
    assert_matches(jitted(x, 3), rows_of_slices(x, 3))
    with pytest.raises(IndexError):
        rows_of_slices(x, 4)  # x[1::2] has 3 rows
    with pytest.raises(IndexError):
        jitted(x, 4)


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_masked_rows_of_a_triangular_solve(n):
    L = np.tril(make_array((n, n), "float64")) + 3 * np.eye(n)
    b = make_array((n,), "float64", 1)
    jitted = stax.jit(triangular)
    assert_matches(jitted(L, b), triangular(L, b), rtol=1e-12)
    if n > 2:
        (rec,) = records(jitted)
        # b[i] and the row of L[i, :i] (a slice of L, read at i): pointers, no gathers
        assert rec.body.source.count("(char*)") == 2, rec.body.source
