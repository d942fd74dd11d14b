"""Column stores at the loop index with bounds from an int argument (issue 10, [ADI]):
npbench's adi writes `p[1:N - 1, j] = ...` with `N` a Python int argument, a 0-d tracer of
known value. Its bounds are taken as ints (`stax.loops.affine.known_index`), so the store is
done in place by the loop driver (`stax.loops.stores`), not by a NumPy setitem per iteration
on a double-buffered copy. Every result against the same function run by NumPy; the decision
read from the loop records."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import stax
from loops.test_in_place import in_place, run


def adi(TSTEPS, N, u):  # npbench's polybench/adi/adi_numpy.py, verbatim
    v = np.empty(u.shape, dtype=u.dtype)
    p = np.empty(u.shape, dtype=u.dtype)
    q = np.empty(u.shape, dtype=u.dtype)

    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1 = 2.0
    B2 = 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)

    a = -mul1 / 2.0
    b = 1.0 + mul2
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d

    for t in range(1, TSTEPS + 1):  # noqa: B007 (verbatim)
        v[0, 1:N - 1] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = v[0, 1:N - 1]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -c / (a * p[1:N - 1, j - 1] + b)
            q[1:N - 1,
              j] = (-d * u[j, 0:N - 2] +
                    (1.0 + 2.0 * d) * u[j, 1:N - 1] - f * u[j, 2:N] -
                    a * q[1:N - 1, j - 1]) / (a * p[1:N - 1, j - 1] + b)
        v[N - 1, 1:N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1:N - 1] = p[1:N - 1, j] * v[j + 1, 1:N - 1] + q[1:N - 1, j]

        u[1:N - 1, 0] = 1.0
        p[1:N - 1, 0] = 0.0
        q[1:N - 1, 0] = u[1:N - 1, 0]
        for j in range(1, N - 1):
            p[1:N - 1, j] = -f / (d * p[1:N - 1, j - 1] + e)
            q[1:N - 1,
              j] = (-a * v[0:N - 2, j] +
                    (1.0 + 2.0 * a) * v[1:N - 1, j] - c * v[2:N, j] -
                    d * q[1:N - 1, j - 1]) / (d * p[1:N - 1, j - 1] + e)
        u[1:N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1:N - 1, j] = p[1:N - 1, j] * u[1:N - 1, j + 1] + q[1:N - 1, j]

    return u


@pytest.mark.parametrize(("steps", "n", "dtype"), [
    (1, 2, "float64"), (2, 3, "float64"), (3, 4, "float64"), (3, 12, "float64"),
    (2, 9, "float32"), (4, 16, "float32")])
def test_adi_against_numpy(steps, n, dtype):
    u = make_array((n, n), dtype, low=0.0, high=1.0)
    decisions = run(adi, steps, n, u, rtol=1e-3 if dtype == "float32" else None)
    assert all("all iterations in one C call" in d for d in decisions), decisions
    if n > 3:  # the four inner loops store p, q, v and u in place (6), and the time loop
        # runs them in its own v, p, q, u (4: [ADI2], tests/loops/test_nested_stores.py)
        assert sum(in_place([d], name) for d in decisions for name in "pqvu") == 10, decisions


@pytest.mark.parametrize("view", ["transposed", "strided"])
def test_adi_on_transposed_and_strided_inputs(view):
    big = make_array((16, 16), "float64", low=0.0, high=1.0)
    u = big[:8, :8].T if view == "transposed" else big[::2, 1::2]
    run(adi, 2, 8, u)


def sweep(N, p, q, w):  # adi's first inner loop: column recurrences bounded by N
    for j in range(1, N - 1):
        p[1:N - 1, j] = 1.0 / (2.0 + p[1:N - 1, j - 1])
        q[1:N - 1, j] = (w[j, 1:N - 1] - q[1:N - 1, j - 1]) * p[1:N - 1, j - 1]
    return p, q


@pytest.mark.parametrize(("n", "dtype"), [(2, "float64"), (3, "float64"), (7, "float64"),
                                          (10, "float32")])
def test_a_column_store_bounded_by_an_int_argument_is_in_place(n, dtype):
    args = [make_array((n, n), dtype, seed, low=0.0, high=1.0) for seed in range(3)]
    decisions = run(sweep, n, *args, rtol=1e-5 if dtype == "float32" else None)
    if n > 3:  # a loop of at least two iterations: compiled once, both arrays in place
        assert in_place(decisions, "p") and in_place(decisions, "q"), decisions
        assert "p[1:" in " ".join(decisions)


def columns(A, w, N):  # stores of slices at the index on other axes and of other ranks
    for j in range(1, A.shape[2]):
        A[0, 1:N - 1, j] = A[0, 1:N - 1, j - 1] * w[j] + A[1, 1:N - 1, j]
        A[:, :, j] += 0.5 * A[:, :, j - 1]
        A[N - 4, j - 1, :] -= w[:A.shape[2]]
    return A


@pytest.mark.parametrize(("shape", "dtype"), [((3, 5, 6), "float64"), ((4, 6, 2), "float32"),
                                              ((3, 5, 1), "float64")])
def test_slices_at_the_index_on_any_axis(shape, dtype):
    a = make_array(shape, dtype)
    w = make_array((max(shape[2], shape[1]),), dtype, 1)
    decisions = run(columns, a, w, shape[1], rtol=1e-5 if dtype == "float32" else None)
    if shape[2] > 2:
        assert in_place(decisions, "A"), decisions


def test_columns_on_a_transposed_input():
    a = make_array((6, 5, 3), "float64").transpose(2, 1, 0)
    run(columns, a, make_array((6,), "float64", 1), 5)


def test_another_bound_with_the_same_shapes_compiles_again():
    jitted = stax.jit(sweep, strict=True)
    for n in (6, 4, 6):  # the trace is specialized on N: each N gets its own stores
        args = [make_array((6, 6), "float64", seed, low=0.0, high=1.0) for seed in range(3)]
        want = sweep(n, *[a.copy() for a in args])
        got = jitted(n, *args)
        for g, w, a in zip(got, want, args[:2], strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12)
            np.testing.assert_allclose(a, w, rtol=1e-12)  # the arguments are mutated too


def planes(A, N):  # a column of each plane, at two loop indices
    for i in range(A.shape[0]):
        for j in range(1, A.shape[2]):
            A[i, 1:N - 1, j] = A[i, 1:N - 1, j - 1] * 0.5 + A[i, 2:N, j]
    return A


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_columns_at_two_loop_indices(dtype):
    decisions = run(planes, make_array((3, 5, 4), dtype), 5,
                    rtol=1e-5 if dtype == "float32" else None)
    assert in_place(decisions, "A"), decisions
