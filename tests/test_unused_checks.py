"""A result the function never reads is still computed where NumPy would raise on it: a gather
out of bounds (`x[i]` alone on a line), np.choose's bad index, a LAPACK routine on a singular
matrix. NumPy raises there; dropping the dead value used to return a result instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax


def unused_index(x, i):
    x[i]
    return x + 1


def unused_take_times(x, i):
    np.take(x, i, axis=-1) * 2
    return x * 2


def unused_gather_sum(x, i):
    x[:, i].sum(axis=0)
    return x.T


def unused_choose(a, c0, c1):
    np.choose(a, [c0, c1])
    return a - 1


def unused_inverse(a, m):
    np.linalg.inv(m)
    return a + m.sum()


def unused_eigh_vectors(m):
    w, _ = np.linalg.eigh(m)
    return w


def same_outcome(fn: Callable[..., Any], *args: Any) -> None:
    """Stax raises the exception class NumPy raises, or returns NumPy's result."""
    theirs = [np.copy(a) for a in args]
    try:
        want = fn(*theirs)
    except Exception as e:  # noqa: BLE001 - Stax must raise the same class
        with pytest.raises(type(e)):
            stax.jit(fn)(*args)
        return
    np.testing.assert_array_equal(stax.jit(fn)(*args), want)


@pytest.mark.parametrize("dtype", ["float64", "int32", "float32"])
@pytest.mark.parametrize("index", [[0, 2, -3], [3], [-4], [1, 7, 0], []])
def test_unused_gathers_check_their_bounds(dtype: str, index: list[int]) -> None:
    x = np.arange(12, dtype=dtype).reshape(4, 3)[::-1, :]  # strided rows
    i = np.array(index, dtype=np.int64)
    same_outcome(unused_index, x[0], i)
    same_outcome(unused_take_times, x, i)
    same_outcome(unused_gather_sum, x, i)


@pytest.mark.parametrize("a", [[0, 1, 1], [0, 2, 1], [-1, 0, 0], []])
def test_unused_choose_checks_its_index(a: list[int]) -> None:
    c = np.linspace(0, 1, len(a))
    same_outcome(unused_choose, np.array(a, dtype=np.int64), c, c[::-1].copy())


def test_unused_linalg_routines_raise_as_numpy() -> None:
    a = np.arange(3.0)
    same_outcome(unused_inverse, a, np.zeros((3, 3)))  # singular: LinAlgError
    same_outcome(unused_inverse, a, np.eye(3) * 2)
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(stax.jit(unused_eigh_vectors)(m), np.linalg.eigh(m)[0])


def test_unused_gather_is_explained() -> None:
    text = str(stax.explain(unused_index, np.arange(4.0), np.array([1, 2])))
    assert "gather's indices are checked" in text
