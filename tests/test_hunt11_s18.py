"""Fixes of session 18's coverage hunt (HUNT11, from tests/corpus/test_corpus_wild16.py), each
tested against NumPy computed in the test."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from corpus.test_corpus_wild import same

import stax
from stax.frontend import breaks


def by_layout(x: np.ndarray, n: Any) -> Any:
    """Runs whole in NumPy when `n > 2` (a stax.jit error: a datetime64 constant), compiles
    else."""
    if n > 2:
        return np.datetime64("2024-03-10") + x.astype("timedelta64[D]")
    return x * 2


def by_data(x: np.ndarray) -> Any:
    if x[0] > 2:  # a value Python sees
        return np.datetime64("2024-03-10") + x.astype("timedelta64[D]")
    return x * 2


def calls(jitted: Any, *args: Any) -> None:
    """`jitted(*args)` equals the plain function's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", breaks.GraphBreakWarning)
        got = jitted(*args)
    same(got, jitted.fn(*args))


def test_fallback_on_a_value_dependent_path_is_not_remembered() -> None:
    """[HUNT11] A call that ran whole in NumPy after Python saw a value (`if x[0] > 2`, or a
    scalar argument's `if n > 2`) sent every later call of its signature to NumPy without
    trying ([HUNT10]'s "from now on"): a call that takes the other path now compiles."""
    x = np.ones(3, np.int64)
    jitted = stax.jit(by_data)
    calls(jitted, x + 5)
    calls(jitted, x)
    ran, _, _, _, in_numpy = jitted.segment_counts[jitted.key((x,))]
    assert (ran, in_numpy) == (2, 1)  # the second call ran segmented (compiled), not in NumPy
    jitted = stax.jit(by_layout)
    for n in (5, 1, 1, 5, 1, 7):
        calls(jitted, x, n)
    assert (
        jitted.cache_info().compiles + sum(c[0] - c[4] for c in jitted.segment_counts.values()) >= 1
    )


def test_fallbacks_on_most_calls_are_remembered() -> None:
    """[HUNT11] A value-dependent fallback on most calls (MAX_FALLBACKS of them) runs the
    later calls in NumPy at once, as [HUNT10] did at the first."""
    x = np.ones(3, np.int64) + 5
    jitted = stax.jit(by_data)
    for _ in range(breaks.MAX_FALLBACKS + 2):
        calls(jitted, x)
    counts = jitted.segment_counts[jitted.key((x,))]
    assert counts[4] == breaks.MAX_FALLBACKS  # then no more segmented runs
    assert any("from now on" in str(b) for b in jitted.breaks[jitted.key((x,))])


def test_fallback_without_values_seen_is_remembered_at_once() -> None:
    """[HUNT10] unchanged: a path that saw no value runs later calls in NumPy at once (and a
    signal's limits, e.g. ndarray.strides of a traced array, whatever the path)."""

    def fn(x: np.ndarray) -> Any:
        return np.datetime64("2024-03-10") + x.astype("timedelta64[D]")

    x = np.ones(4, np.int64)
    jitted = stax.jit(fn)
    for _ in range(3):
        calls(jitted, x)
    assert jitted.segment_counts[jitted.key((x,))][0] == 1

    def layout(x: np.ndarray) -> Any:
        return x.strides[0] * x if x[0] > 2 else x * 2

    jitted = stax.jit(layout)
    for _ in range(3):
        calls(jitted, x + 5)
    assert jitted.segment_counts[jitted.key((x,))][0] == 1


@pytest.mark.parametrize("shape", [(4, 3), (1, 3), (0, 2), ()])
def test_asarray_copy_true_copies(shape: tuple[int, ...]) -> None:
    """[HUNT11] np.asarray(x, copy=True) returned x itself: a write to the copy reached the
    caller's array (and `np.asarray(x, copy=True) is not x` was False)."""

    def fn(x: np.ndarray) -> Any:
        y = np.asarray(x, copy=True)
        z = np.asarray(x.T, copy=True)
        w = np.array(x, copy=None)
        y[...] = 7
        z[...] = 8
        return x.sum(), y, z, y is not x, w is x, np.asarray(x) is x

    rng = np.random.default_rng(0)
    for _ in range(2):
        x = rng.standard_normal(shape)
        mine, theirs = x.copy(), x.copy()
        same(stax.jit(fn)(mine), fn(theirs))
        same(mine, theirs)


@pytest.mark.parametrize("part", ["real", "imag"])
def test_complex_scalar_part_is_a_numpy_scalar(part: str) -> None:
    """[HUNT11] `.real`/`.imag` of a NumPy complex scalar (a reduction's) was a 0-d ndarray,
    not np.float64 (`np.trace(A @ A.conj().T).real`); of a 0-d array it stays a 0-d array."""

    def fn(a: np.ndarray) -> Any:
        return (
            getattr(np.trace(a @ a.conj().T), part),
            getattr(a.sum(), part),
            getattr(np, part)(a[0, 0]),
            getattr(np.array(a.sum()), part),
            getattr(a.astype(np.complex64).sum(), part),
            getattr(a.sum().real, part),
        )

    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    same(stax.jit(fn)(a), fn(a))


def test_linalg_error_reaches_the_functions_except() -> None:
    """[HUNT11] `try: np.linalg.inv(A) except LinAlgError: pinv(A)` raised LinAlgError out of
    the compiled program on a singular matrix (the trace never met the error): such a call now
    runs in NumPy, whose run takes the except branch; without a try it raises NumPy's error."""

    def guarded(a: np.ndarray) -> Any:
        try:
            return np.linalg.inv(a) * 2, np.linalg.det(a), True
        except np.linalg.LinAlgError:
            return np.linalg.pinv(a), a.sum(), False

    def plain(a: np.ndarray) -> np.ndarray:
        return np.linalg.solve(a, np.ones(len(a))) + 1

    jitted, bare = stax.jit(guarded), stax.jit(plain)
    for a in (np.eye(3) * 2, np.zeros((3, 3)), np.arange(9.0).reshape(3, 3).T, np.eye(3) + 1):
        calls(jitted, a.copy())
        try:
            want = plain(a.copy())
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError), warnings.catch_warnings():
                warnings.simplefilter("ignore", breaks.GraphBreakWarning)
                bare(a.copy())
        else:
            same(bare(a.copy()), want)
    with pytest.raises(np.linalg.LinAlgError):
        stax.jit(guarded, strict=True)(np.zeros((2, 2)))


def compiles_like_numpy(fn: Any, *args: Any) -> None:
    """`fn` under stax.jit equals NumPy's on `args` with no graph break."""
    want = fn(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", breaks.GraphBreakWarning)
        got = stax.jit(fn)(*args)
    same(got, want)


@pytest.mark.parametrize(
    "x",
    [
        np.array([4]),
        np.array([[2.5]]),
        np.array(7),
        np.array([np.nan]),
        np.array([], dtype=np.int32),
        np.zeros((0, 3)),
        np.array([3, 1, 3, 0, 1]),
        np.array([[1.0, np.nan], [np.nan, 1.0]]),
    ],
    ids=repr,
)
def test_unique_of_few_elements_and_numpy2_names(x: np.ndarray) -> None:
    """[HUNT11] np.unique of 0 or 1 elements was a graph break (now known shapes), and NumPy
    2's np.unique_inverse / np.unique_all ran in NumPy (now np.unique's compiled algorithm)."""
    compiles_like_numpy(lambda a: (np.unique(a), np.unique(a, True, True, True)), x)
    compiles_like_numpy(
        lambda a: (
            tuple(np.unique_inverse(a)),
            tuple(np.unique_all(a)),
            tuple(np.unique_counts(a)),
        ),
        x,
    )
    got = stax.jit(np.unique_all)(x)
    assert type(got).__name__ == "UniqueAllResult" and got.counts.sum() == x.size


@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (0, 2), (4, 2)])
def test_linalg_array_api_names(shape: tuple[int, ...]) -> None:
    """[HUNT11] np.linalg.diagonal / trace / outer ran in NumPy (and diagonal's view of an
    argument sent the whole function there); a batch of matrices is np.diagonal's break."""
    a = np.random.default_rng(2).standard_normal(shape)
    compiles_like_numpy(
        lambda m: (
            np.linalg.diagonal(m),
            np.linalg.diagonal(m, offset=1),
            np.linalg.trace(m),
            np.linalg.trace(m, offset=-1, dtype=np.float32),
        ),
        a,
    )
    compiles_like_numpy(lambda m: np.linalg.outer(m.ravel(), m.ravel()[::-1] * 2), a)
    calls(stax.jit(lambda m: (np.linalg.diagonal(m), np.linalg.trace(m))), a[None].repeat(2, 0))
    with pytest.raises(ValueError, match="one-dimensional"):
        stax.jit(lambda m: np.linalg.outer(m, m))(a)


@pytest.mark.parametrize(
    "x", [np.random.default_rng(3).standard_normal(9), np.ones(1), np.arange(6, dtype=np.int16)]
)
def test_histogram_bin_edges(x: np.ndarray) -> None:
    """[HUNT11] np.histogram_bin_edges ran in NumPy: now np.histogram's edges."""
    compiles_like_numpy(
        lambda v: (
            np.histogram_bin_edges(v),
            np.histogram_bin_edges(v, 3, (-1, 1)),
            np.histogram_bin_edges(v, np.array([0.0, 1, 2])),
        ),
        x,
    )
