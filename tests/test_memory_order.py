"""Memory order keywords as NumPy applies them [HUNT, s9]: np.ascontiguousarray / asfortranarray
/ asarray(order=) / array(order=, ndmin=), ndarray.copy (C order by default, np.copy K),
copy(order=), astype(order=). A result is the argument itself (a view of the caller's array)
exactly when NumPy returns it so, else a copy laid out in the order asked; before, a transposed
argument came back as a view (writes through it reached the caller's array) and every order
was ignored. Also np.ix_ and np.diag_indices_from, which were graph breaks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax


def _layout(a: np.ndarray) -> tuple[bool, bool]:
    return a.flags.c_contiguous, a.flags.f_contiguous


def _check(fn: Any, *args: np.ndarray, dynamic: bool | None = None) -> None:
    """Results, mutated arguments, layouts and memory shared with the arguments as NumPy's."""
    mine = [a.copy(order="K") for a in args]
    theirs = [a.copy(order="K") for a in args]
    got, want = stax.jit(fn, strict=True, dynamic=dynamic)(*mine), fn(*theirs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        assert _layout(g) == _layout(w), (g.strides, w.strides)
        for m, t in zip(mine, theirs, strict=True):
            assert np.shares_memory(g, m) == np.shares_memory(w, t)
    for m, t in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(m, t)


def _conversions(x: Any) -> Any:
    return (np.ascontiguousarray(x.T), np.ascontiguousarray(x), np.asfortranarray(x),
            np.asfortranarray(x.T), np.asarray(x.T, order="C"), np.asarray(x, order="F"),
            np.array(x, order="F"), np.array(x, copy=True, order="A"), np.asarray(x[:, ::2],
                                                                                 order="C"),
            np.ascontiguousarray(x[0, 0]), np.array(x[0], ndmin=3), np.asfortranarray(x[:, 1:]),
            np.asarray([x[0], x[1]], order="F"), np.ascontiguousarray(x, dtype=np.float32))


def _copies(x: Any) -> Any:
    return (x.copy(), x.T.copy(), np.copy(x.T), x.T.copy(order="K"), x.copy(order="F"),
            x.T.copy("A"), x.copy("a"), x.flatten("F"), x.T.astype(np.float32, order="C"),
            x.astype(np.int64, "F"), x.T.astype(np.int32), x.astype(x.dtype, copy=False,
                                                                    order="F"))


def _created(x: Any) -> Any:  # [HUNT2] creation in an order
    return (np.zeros((3, 4), order="F") + 0 * x[:3, :1].sum(),
            np.ones(x.shape, np.int32, order="F"), np.zeros(x.shape, int, "F"),
            np.full(x.shape, 2, np.int16, "F"),
            np.full(x.shape, x[0, 0], order="F"), np.zeros(x.shape, order="C"),
            x + np.full((x.shape[0], 1), 2.0, order="F"))


@pytest.mark.parametrize("fn", [_conversions, _copies, _created])
@pytest.mark.parametrize("dynamic", [None, True])
def test_orders_match_numpy(fn: Any, dynamic: bool | None) -> None:
    for x in (np.arange(12.0).reshape(3, 4), np.arange(20.0).reshape(4, 5),
              np.arange(12.0).reshape(4, 3).T, np.arange(24, dtype=np.int16).reshape(4, 6)[::2]):
        _check(fn, x, dynamic=dynamic)


def _written(b: Any) -> Any:
    a = np.ascontiguousarray(b.T)  # a copy of a C-ordered b: b unchanged; a view of an F one
    a[0] = 5.0
    c = np.asarray(b, order="F")
    c[1] += 1.0
    d = np.asfortranarray(b.T)
    d[0, 0] = -1.0
    return a.sum(0), c.sum(0), d.sum(1)


def test_writes_through_conversions_reach_the_caller_as_in_numpy() -> None:
    for b in (np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(4, 3).T,
              np.arange(4.0).reshape(2, 2)[:, ::-1]):
        _check(_written, b)


def _temporaries_written(x: Any, y: Any) -> Any:
    t = x * 2  # [HUNT3] NumPy lays a ufunc's result out as its operands (K order): of
    w = t.reshape(-1)  # F-ordered x, t is F-ordered and its reshape a copy (was a view:
    w += 1  # the write reached t)
    u = np.sin(x) + y  # operands in two orders: NumPy's iterator decides
    r = u.ravel()
    r[:2] = 7
    v = (x - 1)[1:].reshape(-1)
    v[...] = 0
    c = np.ascontiguousarray(t)  # t itself when it is C-ordered, else a copy
    c[0] = -3
    return t, w, u, r, v, c


def test_arrays_made_in_the_function_are_laid_out_as_numpys() -> None:
    for x, y in ((np.arange(12.0).reshape(3, 4), np.ones((3, 4))),
                 (np.arange(12.0).reshape(4, 3).T, np.ones((3, 4))),
                 (np.arange(12.0).reshape(4, 3).T, np.ones((4, 3)).T),
                 (np.arange(24, dtype=np.int32).reshape(6, 4)[::2].T, np.ones((4, 1))),
                 (np.arange(24.0).reshape(4, 6)[:, ::2], np.ones(3, np.float32)),
                 (np.zeros((0, 3)).T, np.zeros((3, 1)))):
        _check(_temporaries_written, x, y)


def test_bad_order_is_numpys_value_error() -> None:
    for fn in (lambda x: x.copy(order="Q"), lambda x: np.asarray(x, order="X"),
               lambda x: x.astype(np.float32, order="c!")):
        with pytest.raises(ValueError, match="order must be one of"):
            fn(np.ones((2, 2)))
        with pytest.raises(ValueError, match="order must be one of"):
            stax.jit(fn)(np.ones((2, 2)))
    for creation in (lambda x: np.zeros(x.shape, order="K"),  # [HUNT2]
                     lambda x: np.full(x.shape, 1.0, None, "A") + x):
        with pytest.raises(ValueError, match="only 'C' or 'F' order is permitted"):
            creation(np.ones((2, 2)))
        with pytest.raises(ValueError, match="only 'C' or 'F' order is permitted"):
            stax.jit(creation)(np.ones((2, 2)))


def _open_mesh(x: Any, rows: Any, cols: Any, mask: Any) -> Any:
    r, c = np.ix_(rows, cols)
    y = x.copy()
    y[np.ix_(rows, cols)] = -1
    return (x[np.ix_(rows, cols)], y, r, c, x[np.ix_(mask, [0, -1])], x[np.ix_([], cols)],
            x[np.diag_indices_from(x[:3, :3])], np.diag_indices_from(x[:2, :2])[0])


def test_ix_and_diag_indices_from_compile() -> None:
    f = stax.jit(_open_mesh, strict=True)
    x = np.arange(30.0).reshape(5, 6)
    for args in ((x, np.array([0, 3, -1]), np.array([1, 5]), np.array([1, 0, 1, 1, 0], bool)),
                 (x.T.copy().T, np.array([2], np.int32), np.array([0, 0, -6]),
                  np.zeros(5, bool))):
        for g, w in zip(f(*args), _open_mesh(*args), strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="Cross index must be 1 dimensional"):
        stax.jit(lambda v: v[np.ix_(v, v)])(np.ones((2, 2), int))
    with pytest.raises(ValueError):  # NumPy's: not square
        stax.jit(lambda v: v[np.diag_indices_from(v)])(np.ones((2, 3)))


# [LAYOUT, s12] an array written in place keeps its layout: slice and item assignment, and
# NumPy's routines writing into it (setitem with index arrays, ufunc.at, put, fill_diagonal)
def _written_in_place(a: Any, idx: Any) -> tuple[Any, ...]:
    b, c, d = a * 2, a + 1, a - 1
    b[1:3] = 0
    b[0, 1] = 5
    c[idx] = -1
    np.add.at(d, idx, 1)
    e = a * 3
    np.put(e, idx, 7)
    f = a / 2
    np.fill_diagonal(f, 0)
    return b, c, d, e, f


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided"])
def test_arrays_written_in_place_keep_their_layout(layout: str, dynamic: bool) -> None:
    a = np.arange(20.0).reshape(4, 5)
    a = {"C": a, "F": np.asfortranarray(a), "transposed": np.arange(20.0).reshape(5, 4).T,
         "strided": np.arange(40.0).reshape(4, 10)[:, ::2]}[layout]
    for _ in range(2):  # cold and warm
        _check(_written_in_place, a, np.array([0, 2]), dynamic=dynamic)
