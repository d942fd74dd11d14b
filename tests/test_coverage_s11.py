"""s11 HUNT4: what the ninth wild corpus (tests/corpus/test_corpus_wild9.py) found, checked
against NumPy in the test: masked updates under one mask compiled as `where` (no compaction),
`np.ndindex` loops rolled, einsum's size-1 broadcasting, values given to np.place & co. as
Python objects, np.searchsorted(sorter=), np.polyfit."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from corpus.test_corpus_wild9 import mandelbrot_masked

import stax
import stax.loops


def compare(fn: Callable[..., Any], *args: Any, strict: bool = True) -> Any:
    """Stax's result (or exception class, and RuntimeWarnings) equals NumPy's on copies."""
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as numpy_caught:
        warnings.simplefilter("always")
        try:
            want = fn(*theirs)
        except Exception as e:  # noqa: BLE001 - Stax must raise the same class
            with pytest.raises(type(e)):
                stax.jit(fn, strict=strict)(*args)
            return None
    jitted = stax.jit(fn, strict=strict)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = jitted(*args)
    assert {str(w.message) for w in caught if w.category is RuntimeWarning} == \
        {str(w.message) for w in numpy_caught if w.category is RuntimeWarning}
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    for m, t in zip(args, theirs, strict=True):
        if isinstance(t, np.ndarray):
            np.testing.assert_array_equal(m, t)
    return jitted


def _extern_names(fn: Callable[..., Any], *args: Any) -> list[str]:
    return [line for line in str(stax.explain(fn, *args)).splitlines()
            if "extern(" in line and "x[mask]" in line]


def masked_pair(a, b):
    m = b < 5
    a[m] = a[m] * b[m] - b[m]  # NaN/inf of b outside m are never cast into a
    return a


def masked_scaled(a, b):
    m = b < 5
    a[m] = b[m] * 2  # (a warning for the NaN/inf outside m before s11, on main too)
    return a


def two_masks(a, b):
    m, k = a > 0, b > 0
    a[m] = a[m] + b[k]  # another mask: compacted (NumPy raises on unequal counts)
    return a


@pytest.mark.parametrize("n", [1, 5, 16])
def test_masked_updates_under_one_mask_compile_as_where(n: int) -> None:
    args = (np.linspace(-2, 1, n), np.linspace(-1.2, 1.2, n + 1), 12)
    compare(mandelbrot_masked, *args)
    assert _extern_names(mandelbrot_masked, *args) == []  # no selection compacted in the loop


@pytest.mark.parametrize("dtype", ["int64", "int8", "float32"])
def test_masked_pair_casts_only_the_selection(dtype: str) -> None:
    b = np.array([1.0, np.inf, 2.0, np.nan, -3.0])
    for fn in (masked_pair, masked_scaled):
        compare(fn, np.arange(5).astype(dtype), b)
        with np.errstate(invalid="raise"):  # no FloatingPointError from outside the mask
            compare(fn, np.arange(5).astype(dtype), b)


@pytest.mark.parametrize("b", [np.array([1.0, -1.0, 2.0, 3.0]), np.array([1.0, 1.0, -1.0, -2.0])])
def test_different_masks_stay_numpys(b: np.ndarray) -> None:
    compare(two_masks, np.array([1.0, -2.0, 3.0, 4.0]), b, strict=False)


def nd_store(a, b):
    out = np.zeros_like(a)
    for i, j in np.ndindex(a.shape):
        out[i, j] = a[i, j] * 2 + b[j]
    return out


def nd_tuple(a):
    out = np.empty(a.shape)
    for pos in np.ndindex(*a.shape):
        out[pos] = a[pos] ** 2 - 1
    return out, len(list(np.ndindex(2, 3)))


def nd_accumulate(a):
    s = np.zeros(a.shape[-1], a.dtype)
    for i, j, k in np.ndindex(a.shape):
        s[k] += a[i, j, k] * (i + 1)
    return s


def nd_clamped(a):  # Python max/min of an index and an int: unrolled, as before
    out = np.zeros(a.shape, dtype=bool)
    for i, j in np.ndindex(*a.shape):
        out[i, j] = a[i, j] >= a[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].max()
    return out


@pytest.mark.parametrize(("fn", "shapes", "rolled"), [
    (nd_store, [(30, 40), (40,)], 2), (nd_store, [(1, 5), (5,)], 1),
    (nd_store, [(0, 5), (5,)], 0), (nd_tuple, [(20, 30)], 2), (nd_tuple, [(7,)], 1),
    (nd_accumulate, [(3, 4, 5)], 3), (nd_clamped, [(4, 5)], 0)])
def test_ndindex_loops_roll(fn: Callable[..., Any], shapes: list[tuple[int, ...]],
                            rolled: int) -> None:
    r = np.random.default_rng(0)
    jitted = compare(fn, *(r.standard_normal(s) for s in shapes))
    assert sum(rec.compiled for rec in stax.loops.records(jitted)) == rolled


def test_ndindex_of_library_code_is_numpys() -> None:
    compare(lambda a: np.apply_along_axis(np.sum, 1, a), np.ones((3, 2)), strict=False)


@pytest.mark.parametrize(("spec", "shapes"), [
    ("ij,ij->i", [(2, 3), (1, 3)]), ("ij,jk", [(2, 1), (3, 4)]), ("ij,j->i", [(2, 1), (4,)]),
    ("i,i", [(1,), (4,)]), ("...ij,jk->...ik", [(3, 1, 2), (2, 1)]),
    ("ij,kj->ik", [(1, 3), (4, 1)]), ("ij,ij->i", [(2, 3), (2, 2)]), ("ii->i", [(1, 3)]),
    ("ij,ij->i", [(0, 3), (0, 3)]), ("ij,ij->i", [(0, 3), (1, 3)]), ("ij,ij->i", [(1, 3), (0, 3)]),
    ("ij,jk", [(2, 0), (0, 4)]), ("ij,jk", [(2, 1), (0, 4)]), ("ij,jk", [(2, 0), (1, 4)])])
def test_einsum_broadcasts_size_one_subscripts(spec: str, shapes: list[tuple[int, ...]]
                                               ) -> None:
    r = np.random.default_rng(1)
    compare(lambda *xs: np.einsum(spec, *xs), *(r.standard_normal(s) for s in shapes))


WRITES: dict[str, Callable[[np.ndarray], Any]] = {
    "place list": lambda x: np.place(x, x >= 2, [255]),
    "place float": lambda x: np.place(x, x >= 2, [2.5]),
    "place too big": lambda x: np.place(x, x >= 2, [300]),
    "place array": lambda x: np.place(x, x >= 2, np.array([255])),
    "putmask float": lambda x: np.putmask(x, x >= 2, 2.5),
    "put too big": lambda x: np.put(x, [0], [300]),
    "put wrap": lambda x: np.put(x, [0, -1, 9], (7, 8, 9), mode="wrap"),
    "copyto int": lambda x: np.copyto(x, 3),
    "copyto list": lambda x: np.copyto(x, [300, 1, 2, 3]),
    "copyto where": lambda x: np.copyto(x, 5, where=x > 1),
    "fill_diagonal": lambda x: np.fill_diagonal(x.reshape(2, 2), 9),
}


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32"])
@pytest.mark.parametrize("name", sorted(WRITES))
def test_values_written_as_python_objects(name: str, dtype: str) -> None:
    def fn(x):
        WRITES[name](x)
        return x * 1

    compare(fn, np.arange(4).astype(dtype))


def sorted_ranks(a, v, o):
    return np.searchsorted(a, v, side="right", sorter=o), np.searchsorted(a, v, sorter=o)


@pytest.mark.parametrize("make", [
    lambda r: (r.standard_normal(9), r.standard_normal(5)),
    lambda r: (r.standard_normal(6).astype(np.float32), np.float32(0.25)),
    lambda r: (np.zeros(0), np.ones(3))])
def test_searchsorted_sorter(make: Callable[..., Any]) -> None:
    a, v = make(np.random.default_rng(2))
    compare(sorted_ranks, a, v, np.argsort(a))
    compare(sorted_ranks, a, v, np.argsort(a)[:1] if a.size > 1 else np.ones(1, np.intp))


def fit(t, y):
    c = np.polyfit(t, y, 2)
    return c, np.polyval(c, t) if y.ndim == 1 else c


@pytest.mark.parametrize("make", [
    lambda r: (np.linspace(0, 1, 9), r.standard_normal(9)),
    lambda r: (np.linspace(0, 1, 9, dtype=np.float32), r.standard_normal(9).astype(np.float32)),
    lambda r: (np.arange(6), np.arange(6) ** 2), lambda r: (np.linspace(0, 1, 5),
                                                          r.standard_normal((5, 3))),
    lambda r: (np.arange(4.0), np.arange(5.0)), lambda r: (np.zeros(0), np.zeros(0)),
    lambda r: (np.ones((2, 2)), np.ones(2))])
def test_polyfit(make: Callable[..., Any]) -> None:
    compare(fit, *make(np.random.default_rng(3)))


@pytest.mark.parametrize("axis", [-3, -1, 0, 1, 2, 3])
@pytest.mark.parametrize("start", [-4, -3, -1, 0, 1, 2, 3, 4])
def test_rollaxis_is_numpys_view(axis: int, start: int) -> None:
    T = np.arange(24.0).reshape(2, 3, 4)
    jitted = compare(lambda t: np.rollaxis(t, axis, start) * 1, T)
    if jitted is not None:
        assert np.shares_memory(stax.jit(lambda t: np.rollaxis(t, axis, start))(T), T)


def enumerate_weighted(a):
    total = 0.0
    for (i, j), v in np.ndenumerate(a):
        total += v * (i + 1) * (j + 1)
    return total


def enumerate_store(a):
    out = np.zeros(a.shape)
    for pos, v in np.ndenumerate(a):
        out[pos] = v * 2
    return out, len(list(np.ndindex(2, 2)))


@pytest.mark.parametrize(("fn", "make", "rolled"), [
    (enumerate_weighted, lambda r: r.standard_normal((3, 4)), 2),
    (enumerate_weighted, lambda r: r.standard_normal((4, 3)).T, 2),
    (enumerate_store, lambda r: r.standard_normal(5), 1),
    (enumerate_store, lambda r: r.standard_normal((2, 1, 3)), 2),
    (enumerate_store, lambda r: np.array(3.0), 0)])
def test_ndenumerate_loops_roll(fn: Callable[..., Any], make: Callable[..., Any],
                                rolled: int) -> None:
    jitted = compare(fn, make(np.random.default_rng(4)))
    assert sum(rec.compiled for rec in stax.loops.records(jitted)) == rolled
