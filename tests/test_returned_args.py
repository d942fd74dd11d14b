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
