"""Reductions over slices whose length depends on the loop index stop at the slice's length
at run time (stax.ir.prefix, rule `masked_prefix`): triangular programs with random affine
bounds (zero-length slices at the first and last index included) against NumPy, and the
stop in the generated C."""

from __future__ import annotations

import numpy as np
from conftest import make_array
from hypothesis import given, settings
from hypothesis import strategies as st

from .test_masked import cholesky, run, spd, trmm


def sources(recs) -> str:
    return "\n".join(r.body.source for r in recs if r.body is not None)


@settings(max_examples=10, deadline=None)
@given(a=st.integers(0, 1), b=st.integers(0, 2), c=st.integers(0, 2), d=st.integers(0, 3),
       n=st.integers(0, 6), how=st.sampled_from(["dot", "sum", "prod", "matvec"]))
def test_random_triangular_reductions(a, b, c, d, n, how):
    """out[i] = a reduction over x[i, a*i+b : c*i+d] (clamped by NumPy, empty where the stop
    is at or before the start: at i = 0 when d <= b, at i = n-1 when it passes the end)."""

    def f(x, v, out):
        for i in range(x.shape[0]):
            lo, hi = a * i + b, c * i + d
            if how == "dot":
                out[i] = np.dot(x[i, lo:hi], v[lo:hi])
            elif how == "sum":
                out[i] = x[i, lo:hi].sum()
            elif how == "prod":
                out[i] = np.prod(x[i, lo:hi] * 0.5 + 0.75)
            else:
                out[i] = (x[lo:hi, lo:hi] @ v[lo:hi]).sum()
        return out

    run(f, make_array((n, n), "float64"), make_array((n,), "float64", 1), np.zeros(n),
        rtol=1e-10)


def nested(a):
    """Reductions in an inner loop over a range set by the outer index (cholesky's shape),
    with max/min over slices that are never empty."""
    for i in range(1, a.shape[0]):
        for j in range(i):
            a[i, j] = np.dot(a[i, :j], a[j, :j]) * 0.1 + a[j, : j + 1].max() - a[i, j:].min()
    return a


def test_nested_reductions_stop_at_run_time():
    for n in (1, 2, 7):
        recs = run(nested, make_array((n, n), "float64"), rtol=1e-10)
    assert "masked_prefix" in sources(recs)


def test_polybench_kernels_use_the_stop():
    recs = run(cholesky, spd(9, "float64"), rtol=1e-10)
    assert "r0 < stax_rstop_" in sources(recs)
    m = make_array((9, 9), "float64")
    recs = run(trmm, 1.5, m, np.tril(m).T.copy(), rtol=1e-10)
    assert "r0 < stax_rstop_" in sources(recs)


def test_values_past_the_slice_never_reach_the_result():
    """NaN and inf past the slice's end: read by neither the masked form nor the stopped
    loop (a product 0 * inf would be NaN)."""

    def f(x, v):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.dot(x[i, :i], v[:i]) + x[i, :i].sum()
        return out

    x = np.tril(make_array((6, 6), "float64"), -1) + np.triu(np.full((6, 6), np.inf))
    v = make_array((6,), "float64")
    recs = run(f, x, v, rtol=1e-10)
    assert "masked_prefix" in sources(recs)
