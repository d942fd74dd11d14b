"""Results NumPy returns as views of arguments, and the kind of 0-d results (session 16, lead):
`np.broadcast_to` of an argument is NumPy's read-only view of the caller's array (it was a
writeable copy), and `.T` / `.transpose()` of a NumPy scalar argument is that scalar (it was a
0-d array). Values, kinds, shapes, strides, memory and the writeable flag vs NumPy. And fancy
indices are checked where the result is empty, as NumPy checks them."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax

BROADCASTS: dict[str, Callable[[np.ndarray], Any]] = {
    "row": lambda x: np.broadcast_to(x, (3,) + x.shape),
    "transposed": lambda x: np.broadcast_to(x, (2,) + x.shape).T,
    "sliced": lambda x: np.broadcast_to(x, (3,) + x.shape)[1:, ::2],
    "in_tuple": lambda x: (np.broadcast_to(x, (2,) + x.shape), x.sum()),
}


def _same(result: Any, expected: Any, arg: np.ndarray) -> None:
    if isinstance(expected, tuple):
        for r, e in zip(result, expected, strict=True):
            _same(r, e, arg)
        return
    assert type(result) is type(expected)
    np.testing.assert_array_equal(result, expected)
    if isinstance(expected, np.ndarray):
        assert result.dtype == expected.dtype and result.strides == expected.strides
        assert np.shares_memory(result, arg) == np.shares_memory(expected, arg)
        assert result.flags.writeable == expected.flags.writeable


@pytest.mark.parametrize("name", sorted(BROADCASTS))
@pytest.mark.parametrize("arg", [np.arange(5.0), np.arange(12, dtype=np.int32)[::3],
                                 np.array([np.nan, np.inf, -1.0], np.float32)],
                         ids=["f64", "i32_strided", "f32_nan"])
def test_broadcast_to_of_an_argument_is_a_view(name: str, arg: np.ndarray) -> None:
    fn = BROADCASTS[name]
    expected = fn(arg)
    jitted = stax.jit(fn)
    for _ in range(2):  # cold and warm
        _same(jitted(arg), expected, arg)


def test_broadcast_to_view_sees_later_writes_and_is_read_only() -> None:
    x = np.arange(4.0)
    b = stax.jit(lambda a: np.broadcast_to(a, (2, 4)))(x)
    x[1] = 42.0
    np.testing.assert_array_equal(b, np.broadcast_to(x, (2, 4)))
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 1.0


def test_broadcast_to_with_generic_shapes() -> None:
    jitted = stax.jit(lambda a: np.broadcast_to(a, (2,) + a.shape))
    for n in (3, 5, 8):
        x = np.arange(float(n))
        _same(jitted(x), np.broadcast_to(x, (2, n)), x)


def test_broadcast_to_of_a_computed_value_and_full_stay_new_arrays() -> None:
    x = np.arange(4.0)
    for fn in (lambda a: np.broadcast_to(a * 2, (3, 4)) + 0, lambda a: np.full((3, 4), a[1]),
               lambda a: np.broadcast_to(a, (3, 4)) + 1):
        result = stax.jit(fn)(x)
        np.testing.assert_array_equal(result, fn(x))
        assert not np.shares_memory(result, x) and result.flags.writeable


SCALAR_VIEWS: dict[str, Callable[[Any], Any]] = {
    "T": lambda s: s.T,
    "transpose": lambda s: s.transpose(),
    "T_times": lambda s: s.T * 2,
    "reshape": lambda s: s.reshape(()),
    "astype": lambda s: s.astype(np.float32),
    "copy": lambda s: s.copy(),
}


@pytest.mark.parametrize("name", sorted(SCALAR_VIEWS))
@pytest.mark.parametrize("arg", [np.float64(2.5), np.int32(-3), np.complex64(1 - 2j),
                                 np.array(3.0), np.array(7, np.uint8)],
                         ids=["f64", "i32", "c64", "array0_f64", "array0_u8"])
def test_kind_of_zero_d_views(name: str, arg: Any) -> None:
    fn = SCALAR_VIEWS[name]
    mine = arg.copy() if isinstance(arg, np.ndarray) else arg
    expected, result = fn(arg), stax.jit(fn)(mine)
    assert type(result) is type(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result, expected)
    if isinstance(expected, np.ndarray):
        assert np.shares_memory(result, mine) == np.shares_memory(expected, arg)


INDEXED: dict[str, tuple[Callable[..., Any], tuple[int, ...]]] = {
    "column": (lambda x, j: x[:, j] * 2, (0, 40)),
    "rows": (lambda x, j: x[[1, j]] + 1, (5, 0)),
    "two_arrays": (lambda x, j: x[[0, 2], :, [j, 1]] - 1, (3, 0, 4)),
}


@pytest.mark.parametrize("name", sorted(INDEXED))
@pytest.mark.parametrize("j", [1, 3, -1, 50, -41])
def test_indices_checked_where_the_result_is_empty(name: str, j: int) -> None:
    """`x[:, j]` of an x with no rows gathers nothing, but NumPy's indexing still raises
    IndexError for j out of bounds (the check sat in a loop of zero trips: an empty result)."""
    fn, shape = INDEXED[name]
    x = np.zeros(shape)
    try:
        expected = fn(x, j)
    except IndexError:
        with pytest.raises(IndexError):
            stax.jit(fn)(x, j)
        return
    result = stax.jit(fn)(x, j)
    assert result.shape == expected.shape and result.dtype == expected.dtype


def test_np_take_does_not_check_where_the_result_is_empty() -> None:
    fn = lambda x, i: np.take(x, i, axis=1) + 1  # noqa: E731
    x, i = np.zeros((0, 3)), np.array([[0, 5]])
    assert stax.jit(fn)(x, i).shape == fn(x, i).shape == (0, 1, 2)
