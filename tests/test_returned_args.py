"""A result that is an array argument itself (`return x`, `np.add(x, 1, out=o)`, `o += x;
return o`) is the caller's array, as in NumPy: writes through the result reach the argument.
Checked on first and warm calls, through loops, graph breaks and replayed tapes, and in
shape-generic programs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax


def ufunc_out(x: np.ndarray, o: np.ndarray) -> np.ndarray:
    return np.add(x, 1, out=o)


def in_place(x: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, Any]:
    o += x
    return o, o.sum()


def unchanged(x: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x * 2, o


def looped(x: np.ndarray, o: np.ndarray) -> np.ndarray:
    for i in range(3):
        o[i] = x[i] + o[i - 1]
    return o


def with_break(x: np.ndarray, o: np.ndarray) -> np.ndarray:
    o[:] = np.unwrap(x)  # a graph break
    o *= 2
    return o


@pytest.mark.parametrize("fn", [ufunc_out, in_place, unchanged, looped, with_break])
@pytest.mark.parametrize("dynamic", [None, True])
def test_a_returned_argument_is_the_callers_array(
    fn: Callable[..., Any], dynamic: bool | None
) -> None:
    jf = stax.jit(fn, dynamic=dynamic)
    for n in (6, 6, 9, 6):  # first, warm, another shape, warm again
        x = np.linspace(0.0, 7.0, n)
        mine, theirs = np.ones(n), np.ones(n)
        got, want = jf(x, mine), fn(x, theirs)
        got_t, want_t = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got_t, want_t, strict=True):
            np.testing.assert_allclose(g, w)
            same = [a for a in (x, theirs) if w is a]
            if same:  # NumPy returned an argument: Stax returns the matching argument
                assert g is (x if same[0] is x else mine)
        np.testing.assert_allclose(mine, theirs)
        got_t[0][...] = -1.0  # a write through the result
        want_t[0][...] = -1.0
        np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(x, np.linspace(0.0, 7.0, n))


VIEWS = [
    lambda x: x.T,
    lambda x: (x[::2], x.sum()),
    lambda x: x.reshape(-1),
    lambda x: x[1],
    lambda x: x[::-1, 1:],
    lambda x: x[:, ::-2][1:].T,
    lambda x: x.T.reshape(-1),  # NumPy copies here (not viewable): so does Stax
    lambda x: x[2, 1],  # a scalar
    lambda x: x[:0],
]


def _mutate_then_view(x: np.ndarray) -> np.ndarray:
    y = x[::2]
    x += 1
    return y


def _write_through_slice(x: np.ndarray) -> np.ndarray:  # [HUNT2] a view written, returned
    v = x[1:]
    v *= 2
    return v


def _write_through_transpose(x: np.ndarray) -> np.ndarray:
    d = x.T
    d[0, 0] = -7
    return d


def _write_through_nested(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = x[::-1]
    w = v[:, 1:]
    w += 3
    return w, v


def _write_then_write_parent(x: np.ndarray) -> np.ndarray:
    v = x[1:]
    v[0] = 5
    x[2] = 9  # the view shows the later write to x
    return v


def _write_through_reshape_of_transpose(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = x.T.reshape(-1)  # [HUNT3] a copy of a C-ordered x (written: a cycle through the copy's
    y[0] = 100  # write-back looped without end), a view of a transposed one
    z = x.ravel()
    z[-1] = -100
    return y, x


def _write_through_view_of_temporary(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = x * 2
    v = t.T
    v[0, 0] = 1
    w = t[1:].reshape(-1)
    w += 1
    return v, w


@pytest.mark.parametrize("fn", [*VIEWS, _mutate_then_view, _write_through_slice,
                                _write_through_transpose, _write_through_nested,
                                _write_then_write_parent, _write_through_reshape_of_transpose,
                                _write_through_view_of_temporary])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_returned_view_of_an_argument_views_the_callers_array(fn: Callable[..., Any],
                                                                 dtype: type) -> None:
    jf = stax.jit(fn, dynamic=False)
    for x0 in (np.arange(12).reshape(4, 3), np.arange(30).reshape(6, 5).T):  # C, transposed
        mine, theirs = x0.astype(dtype), x0.astype(dtype)
        got, want = jf(mine), fn(theirs)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(mine, theirs)
        g, w = got[0], want[0]
        assert np.shares_memory(g, mine) == np.shares_memory(w, theirs)
        if isinstance(w, np.ndarray) and w.size:
            assert g.strides == w.strides
            g[...] = -1
            w[...] = -1
            np.testing.assert_array_equal(mine, theirs)
