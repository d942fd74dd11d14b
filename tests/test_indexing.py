"""Indexing and assignment as people write them: boolean-mask assignment, arrays created from a
shape and filled, conversions, repeated indices with NumPy's semantics, ufunc.at, put, place."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.frontend.breaks import GraphBreakWarning


def check(fn: Callable[..., Any], *args: Any, breaks: bool = False) -> None:
    """stax equals NumPy (results and mutated arguments); `breaks` says whether graph breaks
    are expected (otherwise a break fails the test)."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", GraphBreakWarning)
        got = stax.jit(fn)(*mine)
    found = [w for w in record if issubclass(w.category, GraphBreakWarning)]
    assert bool(found) == breaks, [str(w.message) for w in found]
    assert_matches(got, fn(*theirs))
    for m, t in zip(mine, theirs, strict=True):
        if isinstance(m, np.ndarray):
            assert_matches(m, t)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_mask_assignment_of_a_scalar(dtype: str) -> None:
    def fn(x: Any, m: Any) -> Any:
        y = x.copy()
        y[m] = 1
        x[x == 0] = True if x.dtype == bool else 3
        return y

    x = make_array((3, 4), dtype, seed=1, low=-2, high=2)
    check(fn, x, make_array((3, 4), "bool", seed=2))


def test_mask_assignment_forms() -> None:
    def fn(x: Any, rows: Any, s: float) -> Any:
        x[x < 0] = 0  # relu in place on an argument
        x[rows] = s  # a mask over the first axis, a scalar argument
        t = x.T  # through a view
        t[t > 1.5] = np.float32(-1)
        x[rows] = np.array([2.0])  # a one-element array broadcasts
        return x.sum(axis=1)

    x = make_array((4, 3), "float64", seed=3)
    check(fn, x, np.array([True, False, False, True]), 0.25)


def test_mask_assignment_empty_and_strided() -> None:
    def fn(x: Any, m: Any) -> Any:
        x[m] = -1.0
        return x

    check(fn, np.zeros((0, 3)), np.zeros((0, 3), bool))
    base = make_array((6, 8), "float64", seed=4)
    check(fn, base[::2, ::3], base[::2, ::3] > 0)


def test_data_dependent_mask_updates_break_and_match() -> None:
    def fn(x: Any, v: Any) -> Any:
        x[x > 0] += 1.0
        x[x < -1] = v[: int((x < -1).sum())]
        return x[x > 2]

    check(fn, make_array((10,), "float64", seed=5), np.arange(10.0), breaks=True)


def test_arrays_created_from_a_shape_and_filled() -> None:
    def fn(x: Any) -> Any:
        n = x.shape[0]
        out = np.empty((n, 3))
        out[:, 0] = x
        out[:, 1] = x ** 2
        out[:, 2] = 1
        z = np.zeros(n, dtype=np.int64)
        z[1:] = (x[1:] > x[:-1])
        z += 1
        acc = np.ones_like(x)
        np.multiply(acc, x, out=acc)
        f = np.full((2, n), 0.5)
        f[1] = x.mean()
        g = np.full(n, x.max())
        return out, z, acc, f, g, np.zeros(()) + x.sum()

    check(fn, make_array((5,), "float64", seed=6))
    check(fn, make_array((1,), "float64"))


def test_conversions_inside_the_function() -> None:
    def fn(x: Any, y: Any) -> Any:
        a = np.asarray(x)
        b = np.array(x, dtype=np.float64)
        c = np.array([x[0], y[1], 2.0])
        d = np.asarray([[x[0], x[1]], [y[0], y[1]]])
        b[0] = 100.0  # a copy: x is unchanged
        e = np.ascontiguousarray(x.T)
        return a * 2, b, c, d, e, x.astype(np.int64), float(x[0].sum()) * y

    check(fn, make_array((3,), "float32", seed=7), make_array((3,), "float64", seed=8),
          breaks=True)  # float() of a traced value is a break


def test_creation_outside_user_code_is_numpys() -> None:
    def fn(x: Any) -> Any:
        # np.pad's stat_length= is a break; NumPy's pad calls np.empty inside
        return np.zeros(3), np.pad(x, 10, "maximum", stat_length=2)

    check(fn, make_array((5,), "float64", seed=9), breaks=True)
    assert type(np.zeros(3)) is np.ndarray  # restored after tracing


def test_repeated_indices_have_numpys_semantics() -> None:
    def fn(a: Any, idx: Any, v: Any) -> Any:
        a[idx] += 1  # once per unique index
        a[idx] = v  # last write wins
        b = np.zeros(5)
        np.add.at(b, idx, 1.0)  # once per occurrence
        np.maximum.at(b, idx, v)
        return a, b

    check(fn, np.zeros(5), np.array([0, 0, 3, 3, 3, 1]), np.arange(6.0))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_array_index_assignment_compiles(dtype: str) -> None:
    def fn(x: Any, rows: Any, cols: Any, m: Any) -> Any:
        x[rows, cols] = 7  # repeated pairs: the last write wins
        x[rows] += x[cols]  # rows of a gather, written back once per unique row
        x[:, [0, 0]] -= 1
        x[m] = np.arange(x.shape[1], dtype=x.dtype)  # a mask selecting whole rows
        y = np.zeros_like(x)
        np.subtract.at(y, (rows, cols), 1)
        np.fill_diagonal(y, 9)
        np.putmask(y, y < 0, x)
        return y

    x = make_array((4, 3), dtype, seed=11)
    check(fn, x, np.array([0, 2, 2, 0]), np.array([1, 1, 0, 1]),
          np.array([False, True, False, True]))


def test_array_index_assignment_errors_are_numpys() -> None:
    def fn(x: Any, idx: Any) -> Any:
        x[idx] = 1.0
        return x

    with pytest.raises(IndexError):
        stax.jit(fn)(np.zeros(3), np.array([0, 5]))


def test_put_place_and_constant_tables() -> None:
    def fn(x: Any, labels: Any) -> Any:
        y = x.copy()
        np.put(y, [0, 2], [-1.0, -2.0])
        np.place(y, y > 0.5, [9.0, 8.0])
        onehot = np.eye(3)[labels]
        table = np.array([10, 20, 30])
        p = np.ones((labels.size, 3))
        p[np.arange(labels.size), labels] -= 1
        return y, onehot, table[labels], p

    check(fn, make_array((6,), "float64", seed=10, low=0, high=1), np.array([2, 0, 1, 1]),
          breaks=True)


def test_setting_an_element_with_a_sequence_is_numpys_error() -> None:
    def fn(x: Any) -> Any:
        z = np.zeros(3)
        z[0] = x  # x has 3 elements
        return z

    with pytest.raises(ValueError):
        fn(np.ones(3))
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        stax.jit(fn)(np.ones(3))


def test_in_place_methods_and_attributes() -> None:
    def fn(x: Any, v: Any) -> Any:
        y = x.copy()
        y.sort()
        x.T.sort(axis=0)  # through a view: x changes
        w = np.empty(3)
        w.fill(v.sum())
        return (y, w, x.argsort(axis=0), x.diagonal(), x.trace(), x.repeat(2),
                np.sort(v).searchsorted(v[:2]), x * 0 + x.nbytes + x.itemsize, x.real * 1, x.conj())

    check(fn, make_array((3, 3), "float64", seed=12), make_array((4,), "float32", seed=13))
