"""s12 HUNT5: what the tenth wild corpus (tests/corpus/test_corpus_wild10.py) found, checked
against NumPy in the test: np.positive / unary + and a roll by a multiple of the length are
new arrays (they returned the caller's array itself); writes through `x.flat` reach `x` (they
went to a graph break's copy); NaNs of complex numbers in the nan-functions; np.fabs.
`np.errstate` inside the function (wild10 float_to_int_casts) is ERR's, in test_errstate.py."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax
import stax.frontend.breaks
import stax.frontend.functions

IDENTITIES: list[Callable[[Any], Any]] = [
    lambda x: np.positive(x),
    lambda x: +x,
    lambda x: np.roll(x, 0),
    lambda x: np.roll(x, x.shape[0] if x.ndim else 0, axis=0 if x.ndim else None),
    lambda x: np.roll(x, (0, 0), axis=(0, -1)) if x.ndim > 1 else np.roll(x, -0),
]


@pytest.mark.parametrize("k", range(len(IDENTITIES)))
@pytest.mark.parametrize("make", [
    lambda: np.arange(6.0), lambda: np.arange(12, dtype=np.int32).reshape(3, 4).T,
    lambda: np.array([2.5]), lambda: np.zeros((0, 3), np.uint8), lambda: np.arange(9.0)[::2]])
def test_identity_results_are_new_arrays(k: int, make: Callable[[], np.ndarray]) -> None:
    fn = IDENTITIES[k]
    x, theirs = make(), make()
    want = fn(theirs)
    got = stax.jit(fn)(x)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.shares_memory(got, x) == np.shares_memory(want, theirs)  # False: a new array
    if got.size:
        got.flat[0] = 1
        np.testing.assert_array_equal(x, theirs)  # writing the result leaves the argument


def test_positive_of_bool_is_numpys_error() -> None:
    with pytest.raises(TypeError):
        np.positive(np.ones(2, bool))
    with pytest.raises(TypeError):
        stax.jit(lambda x: +x)(np.ones(2, bool))


NAN_FUNCTIONS: list[Callable[[np.ndarray], Any]] = [
    np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanprod, np.nancumsum, np.nancumprod,
    lambda v: np.nansum(v, axis=0, keepdims=True), lambda v: np.nanprod(v, axis=-1),
    lambda v: np.nancumsum(v, axis=0), lambda v: np.nanvar(v, axis=0, ddof=1),
    lambda v: np.nanstd(v, axis=-1, keepdims=True)]


@pytest.mark.parametrize("k", range(len(NAN_FUNCTIONS)))
@pytest.mark.parametrize("make", [
    lambda: np.array([[1 + 1j, np.nan + 0j], [2 - 1j, complex(0, np.nan)], [3j, -1 + 0j]]),
    lambda: np.array([[1.0, np.nan, 3.0], [np.nan, np.inf, 2.0]], np.float32).T,
    lambda: np.arange(6).reshape(2, 3), lambda: np.zeros((0, 2)),
    lambda: np.array([[np.nan, np.nan], [1.0, 2.0]])])
def test_nan_functions_skip_nans_of_complex_numbers(k: int, make: Callable[[], np.ndarray]
                                                      ) -> None:
    """[HUNT5] np.nansum / nanmean / nanvar / nanstd skip the NaNs of complex numbers (gave
    NaN); np.nanprod / nancumsum / nancumprod compile (were graph breaks)."""
    fn = NAN_FUNCTIONS[k]
    with warnings.catch_warnings(record=True) as numpy_caught:
        warnings.simplefilter("always")
        want = fn(make())
    jitted = stax.jit(fn, strict=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = jitted(make())
    assert {str(w.message) for w in caught} <= {str(w.message) for w in numpy_caught}
    assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _fill_diagonal_flat(A):
    A.flat[::A.shape[1] + 1] = 0
    return A


def _flat_cyclic(A):
    B = A.copy()
    B.flat[1:6] = [7, 8]
    B.T.flat[-2:] = -1
    return B


def _flat_reads_are_copies(A):
    y = A.flat[1:3]
    y[0] = 100
    return A, y, A.flat[2], [v * 2 for v in A[:2, :2].flat], len(A.flat)


def _flat_masked_and_augmented(A):
    A.T.flat[A.ravel() > 5] = A[0, 0]
    A.flat[2] += 1
    A.flat = A.ravel()[::-1].copy()
    return A


@pytest.mark.parametrize("fn", [_fill_diagonal_flat, _flat_cyclic, _flat_reads_are_copies,
                                _flat_masked_and_augmented])
@pytest.mark.parametrize("make", [
    lambda: np.arange(12.0).reshape(3, 4), lambda: np.arange(12, dtype=np.int32).reshape(4, 3).T,
    lambda: np.arange(15.0).reshape(5, 3)[::2], lambda: np.ones((3, 3), np.float32)])
def test_writes_through_flat_reach_the_array(fn: Callable[..., Any],
                                             make: Callable[[], np.ndarray]) -> None:
    theirs, mine = make(), make()
    want = fn(theirs)
    got = stax.jit(fn, strict=True)(mine)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(mine, theirs)  # the argument, written through x.flat


@pytest.mark.parametrize("x", [np.array([-1.5, -0.0, np.nan, -np.inf]), np.array([-2, 3]),
                               np.array([-1.5, 2], np.float16), np.array([True, False])])
def test_fabs(x: np.ndarray) -> None:
    got = stax.jit(np.fabs, strict=True)(x)
    want = np.fabs(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


C_CASES: list[Callable[[np.ndarray, np.ndarray], Any]] = [
    lambda A, v: np.c_[np.ones(A.shape[0]), A],  # a bias column
    lambda A, v: np.c_[A[:, 0], A[:, -1]],
    lambda A, v: np.c_[v, A, np.arange(A.shape[0])],
    lambda A, v: np.c_[v, v * 2],
    lambda A, v: np.c_[A[:1, :1], 5],
    lambda A, v: np.c_[A.T[0], A[:, -1].astype(np.float32)],
    lambda A, v: np.c_[v, 2.5],  # NumPy's ValueError: a scalar is one row
]


@pytest.mark.parametrize("k", range(len(C_CASES)))
@pytest.mark.parametrize("make", [
    lambda: (np.arange(6.0).reshape(3, 2), np.arange(3, dtype=np.int32)),
    lambda: (np.arange(8.0).reshape(2, 4).T, np.array([True, False, True, True])),
    lambda: (np.zeros((0, 2)), np.zeros(0, np.int64))])
def test_c_concatenates_columns(k: int, make: Callable[[], tuple[np.ndarray, np.ndarray]]
                                ) -> None:
    """[HUNT5] `np.c_[...]` of traced arrays compiles (was a graph break)."""
    fn = C_CASES[k]
    try:
        want = fn(*make())
    except ValueError:
        with pytest.raises(ValueError):
            stax.jit(fn, strict=True)(*make())
        return
    got = stax.jit(fn, strict=True)(*make())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kw", [{}, {"N": 4}, {"N": 1}, {"N": 0}, {"increasing": True},
                                {"N": 3, "increasing": True}])
@pytest.mark.parametrize("x", [np.array([1.5, -2.0, 0.3]), np.arange(4, dtype=np.int8),
                               np.array([True, False]), np.array([0.1, 2.0], np.float32),
                               np.zeros(0), np.arange(5.0)[::-2], np.array([1 + 1j, 2j])])
def test_vander(x: np.ndarray, kw: dict[str, Any]) -> None:
    """[HUNT5] np.vander compiles (was a graph break): NumPy's dtype and running products."""
    want = np.vander(x, **kw)
    got = stax.jit(lambda v: np.vander(v, **kw), strict=True)(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _spread(row: Any) -> Any:
    return np.array([row.max() - row.min(), np.median(row)])


APPLY: list[Callable[[np.ndarray], Any]] = [
    lambda A: np.apply_along_axis(_spread, 1, A),
    lambda A: np.apply_along_axis(np.sort, 0, A),
    lambda A: np.apply_along_axis(np.sum, -1, A),
    lambda A: np.apply_along_axis(lambda r: r.argmax(), A.ndim - 1, A),
    lambda A: np.apply_along_axis(lambda r, k: r[:k] * 2, 1, A, 2),
    lambda A: np.apply_along_axis(np.diff, 1, A.T),
    lambda A: np.apply_along_axis(lambda r: r.sum(), 0, A[:, :0]),  # NumPy's ValueError
]


@pytest.mark.parametrize("k", range(len(APPLY)))
@pytest.mark.parametrize("make", [lambda: np.arange(24.0).reshape(2, 3, 4) ** 1.5,
                                  lambda: np.arange(12, dtype=np.int32).reshape(3, 4) % 5,
                                  lambda: np.arange(15.0).reshape(5, 3)[::2]])
def test_apply_along_axis(k: int, make: Callable[[], np.ndarray]) -> None:
    """[HUNT5] np.apply_along_axis compiles (func1d traced per slice; was a graph break)."""
    fn = APPLY[k]
    try:
        want = fn(make())
    except ValueError:
        with pytest.raises(ValueError):
            stax.jit(fn, strict=True)(make())
        return
    got = stax.jit(fn, strict=True)(make())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_apply_along_axis_over_many_slices_runs_in_numpy() -> None:
    x = np.arange(2 * stax.frontend.functions.APPLY_SLICES + 2, dtype=float).reshape(-1, 2)
    fn = stax.jit(lambda a: np.apply_along_axis(np.sum, 1, a))
    with pytest.warns(stax.frontend.breaks.GraphBreakWarning, match="apply_along_axis"):
        np.testing.assert_array_equal(fn(x), np.apply_along_axis(np.sum, 1, x))


def _votes(v: np.ndarray) -> np.ndarray:
    return np.apply_along_axis(np.bincount, 1, v, minlength=4).argmax(axis=1)


def test_apply_along_axis_of_a_breaking_function_is_one_break() -> None:
    """func1d with a graph break (np.bincount's data-dependent length) runs as NumPy's
    apply_along_axis, one break, and warm calls replay it (a break per slice compiled new
    segments per call: after a few calls the whole function ran in NumPy)."""
    fn = stax.jit(_votes)
    rng = np.random.default_rng(0)
    with pytest.warns(stax.frontend.breaks.GraphBreakWarning, match="apply_along_axis"):
        fn(rng.integers(0, 4, (6, 3)))
    for _ in range(4):
        v = rng.integers(0, 4, (6, 3))
        np.testing.assert_array_equal(fn(v), _votes(v))
    assert fn.replay_info().replayed == 4


def _conj_written(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = x.conj()
    y[0] = 5
    return y, x.conjugate() * 1


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex128"])
def test_conj_method_of_a_real_array_is_the_array(dtype: str) -> None:
    """`x.conj()` of a real array is `x` itself in NumPy (a write through it reaches `x`, and
    returned it is the caller's array); of a complex one a new array."""
    mine, theirs = np.arange(4).astype(dtype), np.arange(4).astype(dtype)
    fn = stax.jit(_conj_written)
    for _ in range(2):
        got, want = fn(mine), _conj_written(theirs)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(mine, theirs)
        assert (got[0] is mine) == (want[0] is theirs)
