"""Loops whose slices change length with the index (issue 10, masked full-length form):
PolyBench kernels as npbench writes them in NumPy, compiled once per loop body, against the
same functions run by NumPy; the masked form's rules (neutral elements, alignment, flips,
clamping, fallbacks) on small programs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array
from hypothesis import given, settings
from hypothesis import strategies as st

import stax
from stax.loops import records


def compare(fn, *args, rtol: float | None = None):
    """`fn` under stax.jit and under NumPy: results and mutated arguments equal; the jitted
    function."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jitted = stax.jit(fn, strict=True)
    got = jitted(*got_args)
    if want is not None:
        assert_matches(got, want, rtol=rtol)
    for g, w in zip(got_args, want_args, strict=True):
        if isinstance(w, np.ndarray):
            assert_matches(g, w, rtol=rtol)
    return jitted


def run(fn, *args, rtol: float | None = None, unrolled: bool = False):
    """`compare`, and every loop of two or more iterations compiled once (or, with
    `unrolled`, at least one unrolled)."""
    recs = records(compare(fn, *args, rtol=rtol))
    if unrolled:
        assert any(not r.compiled for r in recs), [str(r) for r in recs]
    else:
        assert all(r.compiled for r in recs), [str(r) for r in recs]
    return recs


def rtol_of(dtype: str) -> float:
    return 1e-4 if dtype == "float32" else 1e-10


# ---- npbench's PolyBench kernels, verbatim --------------------------------------------------

def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def ludcmp(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def spd(n: int, dtype: str) -> np.ndarray:
    m = make_array((n, n), "float64")
    return (m @ m.T + n * np.eye(n)).astype(dtype)


SIZES = [(1, "float64"), (2, "float64"), (6, "float64"), (5, "float32")]


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_cholesky(n, dtype):
    run(cholesky, spd(n, dtype), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_lu(n, dtype):
    run(lu, spd(n, dtype), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), [(0, "float64"), (1, "float64"), (6, "float64"),
                                          (5, "float32")])
def test_ludcmp(n, dtype):
    run(ludcmp, spd(n, dtype), make_array((n,), dtype, 1), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), [(0, "float64"), *SIZES])
def test_trisolv(n, dtype):
    low = np.tril(make_array((n, n), dtype)) + np.asarray(4 * np.eye(n), dtype)
    run(trisolv, low, np.zeros(n, dtype), make_array((n,), dtype, 1), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_trmm(n, dtype):
    run(trmm, 1.5, make_array((n, n), dtype), make_array((n, n + 2), dtype, 1),
        rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_durbin(n, dtype):
    run(durbin, make_array((n,), dtype) / (2 * n), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_covariance(n, dtype):
    run(covariance, n, float(n + 3), make_array((n + 3, n), dtype), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_correlation(n, dtype):
    run(correlation, n, float(n + 3), make_array((n + 3, n), dtype), rtol=rtol_of(dtype))


@pytest.mark.parametrize(("n", "dtype"), SIZES)
def test_gramschmidt(n, dtype):
    run(gramschmidt, make_array((n + 2, n), dtype) + np.asarray(np.eye(n + 2, n), dtype),
        rtol=rtol_of(dtype))


def test_transposed_input():
    run(trisolv, np.asfortranarray(np.tril(make_array((5, 5), "float64")) + 4 * np.eye(5)),
        np.zeros(5), make_array((5,), "float64", 1), rtol=1e-10)


def test_compiled_once_whatever_the_size():
    # the kernels' loops are rolled: the records name them compiled, with a run-time range
    recs = run(cholesky, spd(7, "float64"), rtol=1e-10)
    assert len(recs) == 2
    inner = next(r for r in recs if "computed at run time" in str(r))
    assert "range(0, '?', 1)" in str(inner)


# ---- the masked form's rules ------------------------------------------------------------------

def sums_of_prefixes(x, n):
    s = x[:0].sum()  # the sum's dtype (int64 for int32, as NumPy)
    for i in range(n):
        s = s + np.sum(x[:i] + 1) + x[i:].sum() * 2  # masked positions count as 0
    return s


@pytest.mark.parametrize("dtype", ["float64", "int32", "float32"])
def test_sum_uses_the_neutral_element(dtype):
    run(sums_of_prefixes, make_array((7,), dtype), 7, rtol=rtol_of(dtype))


def products_and_extrema(x, n):
    p = x[0] * 0
    for i in range(n):
        p = p + np.prod(x[:i] * 0.5 + 1) + np.max(x[: i + 1]) - x[i:].min()
    return p


def test_prod_max_min():
    run(products_and_extrema, make_array((6,), "float64"), 5, rtol=1e-10)


def prefix_max(x, first):
    m = x[0] * 0
    for i in range(first, x.shape[0]):
        m = m + np.max(x[:i])  # empty when i == 0: NumPy raises
    return m


def test_max_over_nonempty_slices_compiles():
    run(prefix_max, make_array((6,), "float64"), 1, rtol=1e-10)


def test_max_over_a_slice_that_may_be_empty_raises_numpys_error():
    x = make_array((6,), "float64")
    with pytest.raises(ValueError, match="zero-size array"):
        prefix_max(x, 0)
    with pytest.raises(ValueError, match="zero-size array"):
        stax.jit(prefix_max)(x, 0)


def aligned(x, y):
    s = np.zeros(1)
    n = x.shape[0]
    for i in range(n):
        s = s + np.sum(x[i:] * y[: n - i])  # NumPy pairs position k with position k
    return s


def test_slices_of_equal_length_line_up_from_their_starts():
    run(aligned, make_array((6,), "float64"), make_array((6,), "float64", 1), rtol=1e-10)


def mismatched(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[:i] * x[: i + 1])
    return s


def test_lengths_that_differ_raise_numpys_error():
    x = make_array((5,), "float64")
    with pytest.raises(ValueError, match="broadcast"):
        mismatched(x)
    with pytest.raises(ValueError, match="broadcast"):
        stax.jit(mismatched)(x)


def inf_beyond(x, y, n):
    s = 0.0
    for i in range(n):
        s = s + x[:i] @ y[:i] + np.sum(x[:i] * y[:i])
    return s


def test_inf_and_nan_outside_the_slice_do_not_leak():
    x = make_array((6,), "float64")
    y = make_array((6,), "float64", 1)
    x[4:] = np.inf
    y[5] = np.nan
    run(inf_beyond, x, y, 4, rtol=1e-10)
    run(inf_beyond, x, y, 6, rtol=1e-10)  # reaches them: inf and nan as NumPy


def strided_and_clamped(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i::2].sum() + x[i:i + 3].sum() + x[2 * i:].sum()
    return s


def test_steps_and_clamping():
    run(strided_and_clamped, make_array((7,), "float64"), 7, rtol=1e-10)


def wrapping(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i - 2:i].sum()  # x[-2:0] is empty in NumPy, x[-1:1] too
    return s


def test_negative_bound_falls_back():
    run(wrapping, make_array((6,), "float64"), 4, unrolled=True, rtol=1e-10)


def flips(y):
    for k in range(1, y.shape[0]):
        y[:k] += y[k] * np.flip(y[:k])
    return y


def test_flip_reverses_the_valid_part():
    run(flips, make_array((6,), "float64") / 6, rtol=1e-10)


def square_blocks(a):
    s = a[0, 0] * 0
    for i in range(a.shape[0]):
        s = s + a[:i, :i].sum() + (a[:i, i] @ a[:i, :i]).sum() + a[i, :i] @ a[:i, i]
    return s


def test_two_masked_axes_and_matrix_products():
    run(square_blocks, make_array((5, 5), "float64"), rtol=1e-10)


def writes(a, v):
    for i in range(a.shape[0]):
        a[i, :i] = v[:i] * 2  # a masked value into a slice of the same length
        a[i, i + 1:] = -1.0  # a scalar broadcast over a slice of changing length
        a[i::2, i] = 5  # a stepped slice
    return a


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_assignments_into_slices_of_changing_length(dtype):
    run(writes, make_array((5, 5), dtype), make_array((5,), dtype, 1))


def escaping(x):
    for i in range(1, x.shape[0]):
        tail = x[:i] * 2
    return tail


def test_a_slice_that_would_leave_the_loop_falls_back():
    run(escaping, make_array((5,), "float64"), unrolled=True)


def view_semantics(y):
    for k in range(1, y.shape[0]):
        v = y[:k]
        v += 1.0  # a view in NumPy: writes into y
    return y


def test_in_place_update_of_a_named_slice_falls_back():
    run(view_semantics, make_array((5,), "float64"), unrolled=True)


def shape_of_slice(x):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s = s + x[:i].shape[0]
    return s


def test_the_shape_of_a_masked_slice_falls_back():
    run(shape_of_slice, make_array((5,), "float64"), unrolled=True)


def zero_trip_inner(a):
    for i in range(a.shape[0]):
        for j in range(i, i):  # empty for every i
            a[i, j] = 1.0
        for j in range(i + 1):
            a[i, j] += j
    return a


def test_inner_ranges_depending_on_the_index():
    run(zero_trip_inner, make_array((4, 4), "float64"))


@settings(max_examples=8, deadline=None)
@given(a=st.integers(0, 2), b=st.integers(-1, 3), c=st.integers(0, 2), d=st.integers(0, 6),
       step=st.integers(1, 3), n=st.integers(0, 6))
def test_random_affine_slices(a, b, c, d, step, n):
    b = max(b, 0)  # bounds stay non-negative: NumPy's wrapping is another program

    def f(x, y):
        s = x[0] * 0
        for i in range(n):
            s = s + x[a * i + b:c * i + d:step].sum()
            y[a * i + b:c * i + d:step] = i
        return s, y

    run(f, make_array((7,), "float64"), make_array((7,), "float64", 1), rtol=1e-10)


def backwards_inner(a):
    for i in range(a.shape[0]):
        for j in range(i, -1, -1):
            a[i, j] = a[i, j] + a[j, :i].sum() + j
    return a


def offsets(x):
    for i in range(x.shape[0]):
        for j in range(2 * i, x.shape[0] + i):  # j - i >= i >= 0 on the points visited
            x[j - i] += x[: j - i].sum() * 0.5
    return x


def if_in_inner(a):
    for i in range(1, a.shape[0]):
        for j in range(i):
            if j % 2 == 0:  # a Python `if` on the index: the inner body differs
                a[i, j] += 1
            a[i, j] += a[j, :j].sum()
    return a


def test_run_time_ranges_backwards_and_over_visited_points():
    recs = run(backwards_inner, make_array((5, 5), "float64"), rtol=1e-10)
    assert any("computed at run time" in str(r) for r in recs)
    recs = run(offsets, make_array((6,), "float64"), rtol=1e-10)
    assert any("one C call" in r.decision for r in recs)


def test_inner_body_that_differs_unrolls_the_enclosing_loop():
    recs = run(if_in_inner, make_array((5, 5), "float64"), rtol=1e-10, unrolled=True)
    assert "runs over a range that depends on the enclosing index" in str(recs[0])
