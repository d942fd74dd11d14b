"""Known bugs found by the corpora (issue 16), each against NumPy on copies of the same inputs:
Python ints beyond a narrow or unsigned dtype (NEP 50), a Python int above int64's maximum
with a uint64 array, an empty index array gathering on any axis (a load was hoisted out of a
zero-trip loop and read the empty array), and `x.shape = ...` on an argument (NumPy sets the
caller's shape; a non-contiguous argument is refused with NumPy's AttributeError)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    """fn's result, or the class of the exception it raises."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with Stax's
        return type(e)


ADD = stax.jit(lambda x, k: x + k)  # one function for every dtype: one trace per signature


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float32"])
def test_python_int_operand_range_like_numpy(dtype: str) -> None:
    for k in (5, 127, 128, 255, 256, 300, -1, -200, 2**31, -(2**31) - 1, 2**63 - 1, 2**63,
              2**64 - 1, 2**64, -(2**63) - 1):
        x = np.array([1, 2], dtype)
        want = _outcome(lambda x, k: x + k, x, k)
        got = _outcome(ADD, x.copy(), k)
        if dtype == "float32" and not -(2**63) <= k < 2**63:
            assert got is OverflowError  # a documented refusal: the kernel reads an int64
        elif isinstance(want, np.ndarray):
            assert_matches(got, want)
        else:
            assert got is want, (dtype, k, got, want)


def test_python_int_above_int64_with_uint64_array() -> None:
    f = stax.jit(lambda x, k: (x ^ k) + k)
    x = np.array([0, 1, 2**64 - 1], np.uint64)
    for k in (2**63, 2**64 - 1, 3):
        assert_matches(f(x, k), (x ^ k) + k)


EMPTY_GATHERS: dict[str, Callable[..., Any]] = {
    "leading": lambda x, i: x[i],
    "second": lambda x, i: x[:, i],
    "last_ellipsis": lambda x, i: x[..., i],
    "take_axis1": lambda x, i: np.take(x, i, axis=1),
    "sum_after": lambda x, i: x[:, i].sum(axis=1),
    "sliced_scaled": lambda x, i: x[1:, i] * 2,
    "reversed_index": lambda x, i: x[:, i[::-1]],
    "newaxis": lambda x, i: x[:, None, i],
}


@pytest.mark.parametrize("name", sorted(EMPTY_GATHERS))
def test_empty_index_array_on_any_axis(name: str) -> None:
    fn = EMPTY_GATHERS[name]
    f = stax.jit(fn)
    for x in (np.arange(12.0).reshape(3, 4), np.arange(12, dtype=np.int32).reshape(4, 3).T):
        for i in (np.array([], np.int64), np.zeros(0, np.int32)):
            assert_matches(f(x, i), fn(x, i))
        assert_matches(f(x, np.array([0, -1])), fn(x, np.array([0, -1])))


def _set_shape(x):
    x.shape = (x.size,)
    return x * 2


def test_setting_shape_of_an_argument() -> None:
    f = stax.jit(_set_shape)
    for make in (lambda: np.arange(6.0).reshape(2, 3), lambda: np.arange(4, dtype=np.int8)[None],
                 lambda: np.zeros((0, 3))):
        mine, theirs = make(), make()
        assert_matches(f(mine), _set_shape(theirs))
        assert mine.shape == theirs.shape
        assert_matches(mine, theirs)
    with pytest.raises(AttributeError):  # NumPy refuses: not laid out in C order
        _set_shape(np.arange(6.0).reshape(2, 3).T)
    transposed = np.arange(6.0).reshape(2, 3).T
    with pytest.raises(AttributeError):
        f(transposed)
    assert transposed.shape == (3, 2)


@pytest.mark.parametrize("layout", ["transposed", "strided", "reversed"])
def test_flattening_a_non_contiguous_argument_copies(layout: str) -> None:
    def flatten_write_reshape(x):
        z = x.ravel()
        z[-1] = -100.0
        w = x.reshape(-1)
        w[0] = 7.0
        return x, z, w

    def make() -> np.ndarray:
        base = np.arange(12.0).reshape(3, 4)
        return {"transposed": base.T, "strided": base[:, ::2], "reversed": base[::-1]}[layout]

    mine, theirs = make(), make()
    assert_matches(stax.jit(flatten_write_reshape)(mine), flatten_write_reshape(theirs))
    assert_matches(mine, theirs)


LINSPACES: dict[str, Callable[..., Any]] = {
    "endpoint": lambda a, b: np.linspace(a, b, 7),
    "open_retstep": lambda a, b: np.linspace(a, b, 5, endpoint=False, retstep=True),
    "one_and_none": lambda a, b: (np.linspace(a, b, 1), np.linspace(a, b, 0)),
    "int_dtype": lambda a, b: np.linspace(a, b, 6, dtype=np.int32),
    "grid": lambda a, b: np.linspace(a, b, 4)[:, None] + 1j * np.linspace(b, a, 3),
}


@pytest.mark.parametrize("name", sorted(LINSPACES))
def test_linspace_of_traced_ends(name: str) -> None:
    """npbench mandelbrot1: np.linspace(xmin, xmax, xn) of the function's Python arguments
    (was a graph break). Exact: NumPy's own order of operations."""
    fn = LINSPACES[name]
    f = stax.jit(fn)
    for a, b in ((-2.0, 0.5), (np.float32(1), np.float32(3)), (3, 10), (1.0, 1.0)):
        got, want = f(a, b), fn(a, b)
        assert_matches(got, want, rtol=0, atol=0)


def _flatten_by_product(x, m, n):
    y = x * 2
    y.shape = m * n  # npbench mandelbrot2: a size computed from Python int arguments
    return y.reshape(m * n, 1)


def test_shape_from_traced_python_ints() -> None:
    x = np.arange(12.0).reshape(3, 4)
    assert_matches(stax.jit(_flatten_by_product)(x, 3, 4), _flatten_by_product(x, 3, 4))


def _repeat_by_power(x, r, k):
    return np.repeat(x, r**k, axis=1), x.repeat(r, axis=0)  # npbench stockham_fft


def test_repeat_count_from_traced_python_ints() -> None:
    x = np.arange(6.0).reshape(2, 3)
    f = stax.jit(_repeat_by_power)
    for r, k in ((2, 1), (3, 0), (2, 2)):
        assert_matches(f(x, r, k), _repeat_by_power(x, r, k))


def _fill_ndarray(x):
    out = np.ndarray(3)  # npbench nbody: KE[0], PE[0] = getEnergy(...) into np.ndarray
    out[0] = x.sum()
    out[1], out[2] = x.max(), x.min()
    return out * 2


def test_traced_scalar_stored_into_an_ndarray_compiles() -> None:
    """NumPy's setitem turned the graph break into 'setting an array element with a
    sequence' (a Tracer looks like a sequence); then a break; now np.ndarray(shape) is traced
    as np.empty (NPB2), so the function compiles whole, also under strict=True, equal to
    NumPy, with no warning."""
    x = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches(stax.jit(_fill_ndarray)(x), _fill_ndarray(x))
        assert_matches(stax.jit(_fill_ndarray, strict=True)(-x), _fill_ndarray(-x))
