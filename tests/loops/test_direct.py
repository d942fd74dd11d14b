"""[LOOPS3] The warm entry of a function that is one loop run in a mutated argument it returns
(`stax.loops.runner.direct_entry`): the loop runs in the caller's array (C-contiguous and
writeable) or in a copy written back (strided, read-only), after the aliasing check of every
warm call. Results and the caller's arrays are compared with NumPy's over warm calls after the
arguments changed, aliased and overlapping arguments, strided and Fortran-ordered arguments,
zero trips, errors inside the loop and read-only arguments."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from loops.test_masked import lu  # npbench's: nested loops run by their own C drivers


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def recurrence(x, a, b):
    for i in range(1, x.shape[0]):
        x[i] = a * x[i - 1] + b[i]
    return x, x


def gather(x, idx):
    for i in range(x.shape[0]):
        x[i] = x[idx[i]] + 1.0
    return x


def _inputs(n: int, dtype: type = np.float64, seed: int = 0):
    rng = np.random.default_rng(seed)
    L = (np.tril(rng.random((n, n))) + n * np.eye(n)).astype(dtype)
    return L, rng.random(n).astype(dtype), rng.random(n).astype(dtype)


def _direct(fn) -> bool:
    return all("_direct_runner" in run.__qualname__ for run in fn.fast.values())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_warm_calls_run_in_the_argument_after_it_changed(dtype):
    fn = stax.jit(trisolv)
    L, x, b = _inputs(9, dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for seed in range(3):  # cold, then warm calls with new values in the same arrays
        L[...], x[...], b[...] = _inputs(9, dtype, seed)
        want = trisolv(L.copy(), x.copy(), b.copy())
        got = fn(L, x, b)
        assert got is x  # the caller's array, as NumPy returns it
        np.testing.assert_allclose(x, want, rtol=rtol)
        assert x.dtype == dtype
    assert _direct(fn)


def test_a_python_scalar_and_two_results():
    fn = stax.jit(recurrence)
    rng = np.random.default_rng(1)
    for a in (0.5, -1.25, 2.0):
        x, b = rng.random(7), rng.random(7)
        want = recurrence(x.copy(), a, b)
        got = fn(x, a, b)
        assert isinstance(got, tuple) and got[0] is x and got[1] is x
        np.testing.assert_allclose(x, want[0], rtol=1e-12)
    assert _direct(fn)


@pytest.mark.parametrize("view", ["same", "reversed"])
def test_aliased_arguments_run_in_numpy(view):
    fn = stax.jit(trisolv)
    L, x, b = _inputs(6)
    fn(L, x, b)  # remembered: the warm path for this signature
    fn(L, x, b[::-1])
    assert _direct(fn)
    storage = np.random.default_rng(2).random(6)
    want = storage.copy()
    other = (lambda a: a) if view == "same" else (lambda a: a[::-1])
    trisolv(L, want, other(want))  # b changes as x does
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(L, storage, other(storage))
    assert got is storage
    np.testing.assert_allclose(storage, want, rtol=1e-12)


def test_interleaved_arguments_that_share_no_element():
    fn = stax.jit(trisolv)
    L, _, b = _inputs(5)
    fn(L, np.zeros(5), b)
    storage = np.random.default_rng(3).random(10)
    want = storage.copy()
    trisolv(L, want[0::2], want[1::2])
    x, b_view = storage[0::2], storage[1::2]  # strided, bounds overlap, elements do not
    for _ in range(2):
        got = fn(L, x, b_view)
        assert got is x
    np.testing.assert_allclose(storage, want, rtol=1e-12)  # b's elements untouched
    trisolv(L, want[0::2], want[1::2])  # the second call, from the first one's result
    np.testing.assert_allclose(storage, want, rtol=1e-12)


@pytest.mark.parametrize("layout", ["fortran L", "strided x", "strided b"])
def test_strided_and_fortran_arguments(layout):
    fn = stax.jit(trisolv)
    L, x, b = _inputs(7)
    big = np.random.default_rng(4).random(21)
    if layout == "fortran L":
        L = np.asfortranarray(L)
    elif layout == "strided x":
        x = big[::3]
    else:
        b = big[::3]
    before = big.copy()
    for _ in range(2):
        want = trisolv(L, x.copy(), b)
        got = fn(L, x, b)
        assert got is x
        np.testing.assert_allclose(x, want, rtol=1e-12)
    if layout == "strided x":  # only x's elements of the storage changed
        mask = np.zeros(21, bool)
        mask[::3] = True
        np.testing.assert_array_equal(big[~mask], before[~mask])
    assert _direct(fn)


@pytest.mark.parametrize("n", [0, 1])
def test_zero_and_one_trip(n):
    fn = stax.jit(trisolv)
    for seed in range(2):
        L, x, b = _inputs(n, seed=seed)
        want = trisolv(L, x.copy(), b)
        got = fn(L, x, b)
        assert got is x and x.shape == (n,)
        np.testing.assert_allclose(x, want, rtol=1e-12)


def test_an_error_inside_the_loop_leaves_the_argument_as_it_was():
    fn = stax.jit(gather)
    x = np.arange(4.0)
    np.testing.assert_array_equal(fn(x, np.array([0, 0, 1, 2])),
                                  gather(np.arange(4.0), np.array([0, 0, 1, 2])))
    assert _direct(fn)
    x = np.arange(4.0)
    with pytest.raises(IndexError):
        gather(x.copy(), np.array([0, 9, 1, 2]))
    with pytest.raises(IndexError):
        fn(x, np.array([0, 9, 1, 2]))
    np.testing.assert_array_equal(x, np.arange(4.0))
    got = fn(x, np.array([3, 0, 1, 2]))  # the next call runs
    np.testing.assert_array_equal(got, gather(np.arange(4.0), np.array([3, 0, 1, 2])))


def test_a_read_only_argument_raises_numpys_error():
    fn = stax.jit(trisolv)
    L, x, b = _inputs(4)
    fn(L, x.copy(), b)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        trisolv(L, x, b)
    with pytest.raises(ValueError, match="read-only"):
        fn(L, x, b)
    np.testing.assert_array_equal(x, _inputs(4)[1])


def halving(x, b):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * 0.5 + b[i]


def halving_dict(x, b):
    halving(x, b)
    return {"x": x}


@pytest.mark.parametrize("fn", [halving, halving_dict])
def test_no_result_and_a_dict_result(fn):
    jitted = stax.jit(fn)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x, b = rng.random(6), rng.random(6)
        want = x.copy()
        fn(want, b)
        got = jitted(x, b)
        assert got is None if fn is halving else got["x"] is x
        np.testing.assert_allclose(x, want, rtol=1e-12)
    assert _direct(jitted)


def scaled_rows(x, b):  # independent iterations, each storing its own row
    for i in range(x.shape[0]):
        x[i] = b[i] * 2.0 + x[i]
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nested_loops_warm(dtype):
    jitted = stax.jit(lu)
    rng = np.random.default_rng(5)
    for _ in range(3):
        m = rng.random((7, 7))
        A = (m @ m.T + 7 * np.eye(7)).astype(dtype)
        want = A.copy()
        lu(want)
        assert jitted(A) is None
        np.testing.assert_allclose(A, want, rtol=1e-4 if dtype == np.float32 else 1e-10)
    assert _direct(jitted)


def test_independent_iterations_warm():
    jitted = stax.jit(scaled_rows)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x, b = rng.random((50, 40)), rng.random((50, 40))
        want = scaled_rows(x.copy(), b)
        assert jitted(x, b) is x
        np.testing.assert_allclose(x, want, rtol=1e-12)
    assert _direct(jitted)
