"""Fixes of session 19's random campaigns (HUNT12), each tested against NumPy run in the test."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax
from stax.frontend import breaks


def _ufunc(a: Any, b: np.ndarray) -> Any:
    np.add(a, b, out=a)
    return a


def _ufunc_tuple(a: Any, b: np.ndarray) -> Any:
    np.multiply(b, 2, out=(a,))
    return a


def _reduction(a: Any, b: np.ndarray) -> Any:
    np.sum(b, out=a)
    return a


def _reduce_method(a: Any, b: np.ndarray) -> Any:
    np.maximum.reduce(b, out=a)
    return a


def _scan(a: Any, b: np.ndarray) -> Any:
    np.cumsum(b, out=a)
    return a


def _clip(a: Any, b: np.ndarray) -> Any:
    np.clip(b, 0, 1, out=a)
    return a


def _divmod(a: Any, b: np.ndarray) -> Any:
    np.divmod(b, 3, out=(a, a))
    return a


def _into_result(a: Any, b: np.ndarray) -> Any:
    s = b.sum()  # a NumPy scalar, not an array
    np.add(b, 1, out=s)
    return s


def _raised(fn: Callable[..., Any], *args: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


@pytest.mark.parametrize(
    "fn", [_ufunc, _ufunc_tuple, _reduction, _reduce_method, _scan, _clip, _divmod, _into_result]
)
@pytest.mark.parametrize("scalar", [np.float64(1.5), np.float32(2.0), np.int32(3)])
def test_out_a_numpy_scalar_raises_as_numpy(fn: Callable[..., Any], scalar: Any) -> None:
    """[HUNT12] `out=` a NumPy scalar (an argument, a reduction's result) cannot be written to:
    NumPy raises TypeError; Stax returned the scalar with the new value (np.add, np.sum) or
    crashed the interpreter (np.cumsum: its NumPy fallback passed a 0-d array to NumPy)."""
    b = np.arange(1, dtype=scalar.dtype)
    expected = _raised(fn, scalar, b.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", breaks.GraphBreakWarning)
        got = _raised(stax.jit(fn), scalar, b.copy())
    assert type(got) is type(expected) and str(got) == str(expected)


def test_cumsum_into_a_0d_array_is_refused() -> None:
    """[HUNT12] NumPy's cumsum into a 0-d `out` crashes (NumPy 2.3: segmentation fault); Stax
    raises the error NumPy gives for any other wrong size, checked against a (2,) out."""
    b = np.arange(3.0)
    expected = _raised(_scan, np.zeros(2), b)
    got = _raised(stax.jit(_scan), np.zeros(()), b)
    assert type(got) is ValueError and str(got) == str(expected)


@pytest.mark.parametrize(
    ("fn", "out"),
    [
        (_ufunc, np.array(1.5)),
        (_ufunc, np.array([1.5])),
        (_reduction, np.array(1.5)),
        (_scan, np.array([1.5])),
    ],
)
def test_out_a_0d_or_1d_array_still_written(fn: Callable[..., Any], out: np.ndarray) -> None:
    """The fix refuses scalars only: a 0-d or (1,) array `out=` is written, as in NumPy."""
    b = np.full(out.shape if fn is _ufunc else (1,), 2.5)
    expected, got = out.copy(), out.copy()
    fn(expected, b.copy())
    stax.jit(fn)(got, b.copy())
    np.testing.assert_array_equal(got, expected)


def _loop_broadcast_gather(a: np.ndarray, n: int) -> np.ndarray:
    s = np.zeros_like(a)
    for k in range(n):
        s[k : k + 2] = s[k : k + 2] + a[k]
    return a


def _loop_broadcast_division(a: np.ndarray, d: np.ndarray, n: int) -> np.ndarray:
    s = np.zeros_like(a)
    for k in range(n):
        s[k : k + 2] = s[k : k + 2] + d[0] // d[1]
    return s


@pytest.mark.parametrize("dtype", ["bool", "int32", "float64"])
@pytest.mark.parametrize("n", [2, 3])
def test_loop_store_of_an_empty_slice_still_checks_its_gather(dtype: str, n: int) -> None:
    """[HUNT12] (fuzz_s16) `s[k:k + 2] = s[k:k + 2] + a[k]` over range(3) of a (2,) array: at
    k = 2 the slice is empty and NumPy raises IndexError for a[2]; the loop kernel's first loop
    stopped at the stores' count (0, `stored_prefix`) and skipped the gather: no error."""
    a = np.array([1, 1], dtype)
    jitted = stax.jit(_loop_broadcast_gather)
    if n == 2:
        np.testing.assert_array_equal(jitted(a.copy(), n), _loop_broadcast_gather(a.copy(), n))
        return
    expected = _raised(_loop_broadcast_gather, a.copy(), n)
    assert type(_raised(jitted, a.copy(), n)) is type(expected) is IndexError


def test_loop_store_of_an_empty_slice_keeps_its_results_with_a_flag_op() -> None:
    """The rule's other half: an invariant op that may set a flag (integer //) keeps the store
    kernel running full length; the values are NumPy's."""
    a, d = np.arange(4, dtype=np.int64), np.array([7, 2])
    got = stax.jit(_loop_broadcast_division)(a.copy(), d, 5)
    np.testing.assert_array_equal(got, _loop_broadcast_division(a.copy(), d, 5))
