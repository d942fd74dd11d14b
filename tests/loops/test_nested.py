"""Nested loops run by their own C drivers inside the enclosing loop's driver (issue 10):
no Python per outer iteration, the carried array updated in place where nothing else reads
its old version (else the initial values copied in). Results against NumPy: the PolyBench
kernels, run-time ranges (backwards, empty at the ends), three levels, several carried
values, reads of the old version, an inner store out of bounds."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import stax
from stax.loops import records

from .test_masked import cholesky, gramschmidt, lu, ludcmp, run, spd, trmm

NESTED = "nested loop(s) run by their own C drivers inside this one"


def outer_decisions(recs) -> list[str]:
    return [r.decision for r in recs if NESTED in r.decision]


@pytest.mark.parametrize("n", [1, 3, 7])
def test_polybench_kernels(n):
    recs = run(cholesky, spd(n, "float64"), rtol=1e-10)
    if n > 2:
        (decision,) = outer_decisions(recs)
        assert "A: updated in place" in decision
    for fn, args in ((lu, (spd(n, "float64"),)), (ludcmp, (spd(n, "float64"),
                                                          make_array((n,), "float64"))),
                     (trmm, (1.5, make_array((n, n), "float64"),
                             make_array((n, n), "float64", 1))),
                     (gramschmidt, (make_array((n, n), "float64") + np.eye(n),))):
        recs = run(fn, *args, rtol=1e-9)
        if n > 2:
            assert outer_decisions(recs), [r.decision for r in recs]


def backwards(a):
    for i in range(a.shape[0]):
        for j in range(i - 1, -1, -1):  # empty at i = 0
            a[i, j] = a[i, j + 1] * 0.5 + a[j, :j].sum()
        for j in range(i + 1, a.shape[0], 2):  # empty at the last i
            a[i, j] -= a[j, i:].sum() * 0.25
    return a


def three_levels(a):
    for i in range(a.shape[0]):
        for j in range(i):
            for k in range(j):
                a[i, j] += a[i, k] * a[j, k] * 0.1
    return a


def two_carried(a, b):
    for i in range(a.shape[0]):
        for j in range(i, a.shape[0]):
            a[i, j] = a[i, j] + b[j, i]
            b[j, i] = b[j, i] * 0.5 + a[i, :j].sum()
    return a, b


def old_version_read(a):
    for i in range(a.shape[0]):
        before = a[i] * 1.0  # the old version, read after the nested loop
        for j in range(i):
            a[i, j] += a[j, j] * 0.5
        a[i] = a[i] + before * 0.25
    return a


def fixed_inner_range(x, y):
    for i in range(x.shape[0]):
        for j in range(3):
            x[i] = x[i] * 0.5 + y[j] + j
    return x


@pytest.mark.parametrize("n", [0, 1, 2, 6])
def test_run_time_ranges_and_levels(n):
    for fn in (backwards, three_levels, old_version_read):
        recs = run(fn, make_array((n, n), "float64"), rtol=1e-10)
        if n > 2:
            assert outer_decisions(recs), [r.decision for r in recs]
    recs = run(two_carried, make_array((n, n), "float64"), make_array((n, n), "float64", 1),
               rtol=1e-10)
    recs = run(fixed_inner_range, make_array((n,), "float64"), make_array((3,), "float64"),
               rtol=1e-10)
    if n > 1:
        assert outer_decisions(recs), [r.decision for r in recs]


def from_invariant(x, out):
    for i in range(out.shape[0]):
        y = x  # the nested loop starts from an array it must not change
        for j in range(i):
            y = y * 0.5 + j
        out[i] = y.sum()
    return out


def test_initial_values_copied_in_where_they_must_survive():
    x = make_array((4,), "float64")
    recs = run(from_invariant, x, np.zeros(5), rtol=1e-10)
    (decision,) = outer_decisions(recs)
    assert "y: its initial value copied in" in decision
    recs = run(old_version_read, make_array((5, 5), "float64"), rtol=1e-10)
    assert outer_decisions(recs)


def test_strided_and_float32_inputs():
    a = spd(6, "float32")
    # float32 dot products summed in another order than NumPy's BLAS: an element of ~3e-4 left
    # by cancellation differs by 5.6e-8 (1e-9 of the matrix's scale) since -ffp-contract=off
    run(cholesky, a, rtol=1e-3)
    t = np.asfortranarray(spd(6, "float64"))
    run(cholesky, t, rtol=1e-10)
    run(three_levels, make_array((8, 8), "float64")[::2, ::2], rtol=1e-10)


def inner_out_of_bounds(a, k):
    for i in range(a.shape[0]):
        for j in range(i):
            a[i, j + k] = 1.0  # past the end for k large enough
    return a


def test_inner_store_out_of_bounds_raises_numpys_error():
    a = make_array((5, 5), "float64")
    with pytest.raises(IndexError):
        inner_out_of_bounds(a.copy(), 4)
    jitted = stax.jit(inner_out_of_bounds)
    with pytest.raises(IndexError):
        jitted(a.copy(), 4)
    got = jitted(a.copy(), 1)
    np.testing.assert_array_equal(got, inner_out_of_bounds(a.copy(), 1))
    assert outer_decisions(records(jitted))
