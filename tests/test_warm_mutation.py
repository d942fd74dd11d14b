"""[LOOPS] The warm path (stax.api's `fast`, issue 10) for programs that mutate an argument or
return one: the mutated argument is written back and checked for aliasing as on the first call,
a returned argument is the caller's array (or the same view of it), as in NumPy; and the fast
call's `disjoint`, the bounds test it checks aliasing with, against np.may_share_memory."""

from __future__ import annotations

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning
from stax.runtime.fast import disjoint, fastcall


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def trisolv_numpy(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _system(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return np.tril(rng.random((n, n))) + n * np.eye(n), rng.random(n)


def test_loop_that_mutates_and_returns_an_argument_is_warm_and_equals_numpy() -> None:
    f = stax.jit(trisolv)
    L, b = _system(9)
    for k in range(3):  # cold, then warm twice
        x, want = np.full(9, float(k)), np.full(9, float(k))
        got = f(L, x, b)
        trisolv_numpy(L, want, b)
        assert got is x  # the caller's array, as NumPy returns it
        np.testing.assert_allclose(x, want, rtol=1e-12)
    assert len(f.fast) == (fastcall() is not None)


def test_warm_strided_and_empty_arguments_equal_numpy() -> None:
    f = stax.jit(trisolv)
    L, b = _system(6, seed=1)
    for _ in range(2):
        store = np.zeros(12)
        x = store[::2]  # strided: written back through the view
        got = f(L.T.copy().T, x, b)  # Fortran-ordered L
        want = trisolv_numpy(L, np.zeros(6), b)
        assert got is x
        np.testing.assert_allclose(store[::2], want, rtol=1e-12)
        assert not store[1::2].any()
    e = np.zeros(0)
    for _ in range(2):  # zero trips
        assert f(np.zeros((0, 0)), e, np.zeros(0)) is e


@pytest.mark.parametrize("strict", [False, True])
def test_warm_aliasing_handled_as_on_the_first_call(strict: bool) -> None:
    """[REVIEW] An aliased warm call runs in NumPy with a GraphBreakWarning, as a cold one does
    (it raised AliasedArguments from the warm path); strict=True raises on both paths."""
    f = stax.jit(trisolv, strict=strict)
    L, b = _system(5, seed=2)
    x = np.zeros(5)
    f(L, x, b)
    f(L, np.zeros(5), b)  # warm
    same, want = np.arange(1.0, 6.0), np.arange(1.0, 6.0)  # x is b: the warm key is the same
    store, want_store = np.eye(5) + 1.0, np.eye(5) + 1.0  # x is a row of L
    if strict:
        with pytest.raises(NotImplementedError, match="shares memory"):
            f(L, same, same)
        with pytest.raises(NotImplementedError, match="shares memory"):
            f(store, store[0], b)
        return
    with pytest.warns(GraphBreakWarning, match="shares memory"):
        assert f(L, same, same) is same
    np.testing.assert_allclose(same, trisolv_numpy(L, want, want), rtol=1e-12)
    row = store[0]
    assert f(store, row, b) is row
    trisolv_numpy(want_store, want_store[0], b)
    np.testing.assert_allclose(store, want_store, rtol=1e-12)


def test_warm_interleaved_views_that_share_no_element_run() -> None:
    f = stax.jit(lambda a, c: _add_into(a, c))
    for _ in range(3):  # bounds overlap, elements do not: allowed, as on the first call
        store = np.arange(10.0)
        a, c = store[::2], store[1::2]
        want = store.copy()
        want[::2] += want[1::2] * 2.0
        assert f(a, c) is a
        np.testing.assert_array_equal(store, want)


def _add_into(a, c):
    a += c * 2.0
    return a


def test_warm_program_without_loop_writes_back_and_returns_views() -> None:
    def g(x, y):
        x[1:] += y[:-1]
        return x.T[::-1], x.sum() * y

    f = stax.jit(g)
    for dtype in ("float64", "int32"):
        for _ in range(3):
            x = np.arange(12, dtype=dtype).reshape(3, 4)
            y = np.ones((3, 4), dtype) * 2
            want_x = x.copy()
            want_view, want_other = g(want_x, y.copy())
            view, other = f(x, y)
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(view, want_view)
            np.testing.assert_array_equal(other, want_other)
            assert view.base is x or view.base is x.base  # a view of the caller's array
            view[0, 0] = -1
            assert x[0, -1] == -1  # x.T[::-1][0, 0] is x[0, -1]
    assert len(f.fast) == 2 * (fastcall() is not None)  # one warm entry per dtype


def test_warm_read_only_argument_refused_as_numpy_does() -> None:
    f = stax.jit(_add_into)
    a = np.zeros(3)
    f(a, np.ones(3))
    f(a, np.ones(3))  # warm
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(frozen, np.ones(3))
    assert not frozen.any()


@pytest.mark.skipif(fastcall() is None, reason="no fast call (STAX_FASTCALL=0 or no headers)")
def test_disjoint_is_may_share_memory_bounds_test() -> None:
    rng = np.random.default_rng(3)
    store = np.zeros((6, 8))
    views = [store, store[::2], store[1::2], store[:, ::3], store[:, 1:2], store[::-1, ::-2],
             store[2:4, 2:], store[0], store[5], store[:0], store.T, np.zeros(3), 2.0,
             store.reshape(-1)[7:9], store[3:, :0], np.zeros((0, 4))]
    for _ in range(200):
        picked = [views[k] for k in rng.integers(0, len(views), size=3)]
        if not isinstance(picked[0], np.ndarray):
            continue
        want = not any(isinstance(o, np.ndarray) and np.may_share_memory(picked[0], o)
                       for o in picked[1:])
        assert fastcall().disjoint(tuple(picked), 0) is want
        assert disjoint(picked, 0) is want
    with pytest.raises(ValueError, match="ndarray"):
        fastcall().disjoint((1.0, store), 0)
    with pytest.raises(TypeError):
        fastcall().disjoint(store, 0)
