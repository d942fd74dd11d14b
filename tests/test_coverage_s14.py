"""Coverage fixes of session 14 (HUNT7, from tests/corpus/test_corpus_wild12.py), each tested
against NumPy computed in the test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning


def test_layout_attributes_are_numpys() -> None:
    """[HUNT7] `.strides`, `.flags`, `.base` of a traced array were read from a break's C-ordered
    copy: `np.broadcast_to(x, s).strides[0]` was 8 (NumPy: 0), a transposed argument's
    `flags.c_contiguous` True. The function now runs in NumPy, as NumPy answers."""
    def fn(x):
        b = np.broadcast_to(x, (3, *x.shape))
        return (b.sum(axis=0), b.strides, x.flags.c_contiguous, x.flags.f_contiguous,
                x[::2].strides, x.T.base is None, x.sum())

    base = np.arange(12.0).reshape(3, 4)
    jitted = stax.jit(fn)
    for x in (base, base.T, base[:, ::2], np.zeros((0, 2), np.int8), np.arange(5)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            got = jitted(x)
        want = fn(x)
        for g, w in zip(got, want, strict=True):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)


def test_isinstance_sees_numpys_classes() -> None:
    """[HUNT7] `isinstance(x, np.ndarray)`, `isinstance(k, int)` of a Python scalar argument,
    `isinstance(x.sum(), float)` were all False while tracing: the function took its other
    branch (a silently wrong result)."""
    def fn(x, k):
        s = x.sum()
        kinds = (isinstance(x, np.ndarray), isinstance(k, bool), isinstance(k, int),
                 isinstance(k, float), isinstance(k, np.floating), isinstance(s, float),
                 isinstance(s, np.ndarray), isinstance(x[:1], np.ndarray),
                 isinstance(k * 2, float), isinstance(np.allclose(x, x), bool))
        if isinstance(k, bool):
            return x > 0, kinds
        if isinstance(k, int):
            return x[:k], kinds
        return x * k, kinds

    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    for x in (base, base.T, base[:, ::2], np.zeros((0, 3))):
        for k in (1, 0.5, True, np.float32(2), np.int16(1)):
            jitted = stax.jit(fn)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GraphBreakWarning)
                got = jitted(x, k)
            want = fn(x, k)
            assert got[1] == want[1]
            assert got[0].dtype == want[0].dtype
            np.testing.assert_array_equal(got[0], want[0])


def test_zero_d_views_are_arrays() -> None:
    """[HUNT7] A 0-d view NumPy returns (`np.squeeze` of one element, `x[0, ...]`,
    `x.reshape(())`) came back as a NumPy scalar, a copy: a write through it missed the
    argument. A scalar (`x[0]`, `x.sum()`, `(x * 2)[0]`) stays one."""
    def fn(x):
        return (np.squeeze(x), x[-1:], x.reshape(()), x[0, ...], x[..., 0], x[0], x.sum(),
                (x * 2)[0, ...], (x * 2)[0], x.reshape(())[()], x.reshape(())[...].T)

    for dtype in ("float64", "int8", "bool"):
        jitted = stax.jit(fn)
        for make in (lambda d=dtype: np.ones(1, d), lambda d=dtype: np.arange(3).astype(d)[1::2],
                     lambda d=dtype: np.zeros((2, 1), d)[1]):
            for _ in range(2):  # and warm
                mine, theirs = make(), make()
                got, want = jitted(mine), fn(theirs)
                for g, w in zip(got, want, strict=True):
                    assert type(g) is type(w) and np.shape(g) == np.shape(w)
                    assert g.dtype == w.dtype
                    np.testing.assert_array_equal(g, w)
                    assert np.shares_memory(g, mine) == np.shares_memory(w, theirs)
        out = jitted(np.zeros(1))
        out[0][()] = 5  # written through, as NumPy's view
        assert out[3] == 5


def test_allclose_array_equal_are_traced_python_bools() -> None:
    """[HUNT7] `return np.allclose(a, b), ...` (also np.array_equal / np.array_equiv) was a
    graph break: their value was needed at once. Now a traced Python bool, needed only where
    Python branches on it."""
    def fn(a, b):
        c = np.allclose(a, b, atol=1e-3)
        return (c, np.array_equal(a, b), np.array_equal(a, b, equal_nan=True),
                np.array_equiv(a, b[:1]), np.array_equal(a, b[:1]), c * np.float32(2), c + 1)

    def branch(a, b):
        return a if np.allclose(a, b) else b

    nan = np.array([np.nan, 1.0, 2.0])
    for a, b in ((nan, nan.copy()), (nan[::-1], nan[::-1] + 1e-4), (np.arange(3.0),
                 np.arange(3.0)), (np.zeros((2, 3)).T, np.zeros((3, 2))), (np.zeros(0),
                 np.zeros(0))):
        jitted = stax.jit(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            for _ in range(2):
                got, want = jitted(a, b), fn(a, b)
                assert [type(g) for g in got] == [type(w) for w in want] and got == want
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            np.testing.assert_array_equal(stax.jit(branch)(a, b), branch(a, b))


def test_item_is_a_traced_python_scalar() -> None:
    """[HUNT7] `x.item()` (and `x.item(k)`, `x.item(i, j)`) was a graph break: now a traced
    Python scalar (float64, int64 or bool inside: `x.item() * 1e-50` of float32 is not
    flushed to 0), returned as Python's. uint64 (Python ints above int64) stays a break;
    NumPy's errors for another size or an index out of bounds."""
    def fn(x):
        c = x[:, :1]
        return ((c.T @ c).item(), x.item(0), x.item(-1), x.item(0, 1), x[0, 0].item() * 1e-50,
                x.item(np.int64(2)) // 2, x.T.item(1))

    for x in (np.arange(1, 7.0).reshape(2, 3), np.arange(6, dtype=np.float32).reshape(3, 2).T,
              np.arange(6, dtype=np.uint16).reshape(2, 3), np.ones((2, 3), bool),
              np.arange(6, dtype=np.int8).reshape(2, 3)[:, ::-1] - 3,
              np.arange(6, dtype=np.float16).reshape(2, 3)):
        jitted = stax.jit(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            for _ in range(2):
                got, want = jitted(x), fn(x)
                assert [type(g) for g in got] == [type(w) for w in want] and got == want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        big = np.array([2 ** 64 - 1], np.uint64)
        assert stax.jit(lambda x: x.item())(big) == 2 ** 64 - 1
    for x, index, error in ((np.zeros(2), (), ValueError), (np.zeros(0), (), ValueError),
                            (np.zeros(3), (3,), IndexError), (np.zeros((2, 2)), (0, 2),
                                                                IndexError)):
        with pytest.raises(error):
            stax.jit(lambda x, index=index: x.item(*index))(x)


def test_put_compiles() -> None:
    """[HUNT7] `a.put(ind, v)` / `np.put(a, ind, v)` were graph breaks: NumPy's
    `a.flat[ind] = v` (v repeated over the indices; the last of repeated indices wins), on
    arguments too (written back), its IndexError out of bounds."""
    def fn(x):
        z = x.copy()
        z.put([0, -1], -1.0)
        np.put(z, [1, 1, 2], [5, 6])
        x.put(np.array([[0], [1]]), 3)
        np.put(x, 2, z[0])
        x.put([], 9)
        return z

    base = np.arange(12, dtype=np.int8).reshape(3, 4)
    for make in (lambda: np.arange(6.0), lambda: base.T.copy().T, lambda: base[:, ::2],
                 lambda: base.astype(np.float32).T):
        jitted = stax.jit(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            for _ in range(2):
                mine, theirs = make(), make()
                got, want = jitted(mine), fn(theirs)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(mine, theirs)
    with pytest.raises(IndexError):
        stax.jit(lambda x: x.put([3], 1.0))(np.zeros(3))


def test_tolist_of_small_arrays_is_traced() -> None:
    """[HUNT7] `x.tolist()` was a graph break: up to `TOLIST_ELEMENTS` elements, nested lists
    of traced Python scalars (`x.item`); a larger array stays a break, with NumPy's result."""
    def fn(x):
        return x.tolist(), x.T.tolist(), x[0].tolist(), x.sum().tolist(), x[:0].tolist()

    for x in (np.arange(6.0).reshape(2, 3), np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2],
              np.ones((1, 1), bool), np.arange(4, dtype=np.float32).reshape(2, 2).T):
        jitted = stax.jit(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            for _ in range(2):
                got, want = jitted(x), fn(x)
                assert got == want
                assert repr(got) == repr(want)  # Python's types, nested as NumPy's
    big = np.arange(65.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        assert stax.jit(lambda x: x.tolist())(big) == big.tolist()
