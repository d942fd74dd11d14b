"""Bad inputs and unsupported programs raise clear errors of NumPy's kind (never wrong results)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax

X = np.arange(12, dtype=np.float64).reshape(3, 4)

UNSUPPORTED: dict[str, tuple[Callable[[Any], Any], str]] = {
    "fft": (lambda x: np.fft.hfft(x), "np.fft.hfft is not supported"),  # [HUNT10] fftn compiles
    # [DYN16] np.unique, np.nonzero, np.where(c) and x[x > 2] compile (tests/test_data_dependent.py)
    "trim_zeros": (lambda x: np.trim_zeros(x.ravel()), "np.trim_zeros"),
    # [FIX16] set operations compile; asking intersect1d for indices does not
    "intersect1d": (lambda x: np.intersect1d(x, x[0], return_indices=True)[1],
                    "np.intersect1d with return_indices=True"),
    "where_x_only": (lambda x: np.where(x > 1, x, None), "np.where"),
    "bool_mask": (lambda x: x[1, x[0] > 2], "boolean mask"),  # [SEL] x[:, m] compiles
}


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_unsupported_op_names_it(name: str) -> None:
    fn, text = UNSUPPORTED[name]
    with pytest.raises(NotImplementedError, match=text.replace(".", r"\.")):
        stax.jit(fn, strict=True)(X)  # without strict: a graph break (tests/test_breaks.py)


def test_fft_message_exact() -> None:
    with pytest.raises(NotImplementedError, match=r"stax\.jit: np\.fft\.hfft is not supported"):
        stax.jit(lambda x: np.fft.hfft(x), strict=True)(X)


BAD_ARGS: dict[str, Any] = {  # complex64/128 and Python complex compile (E16)
    "object": np.array([1, "a", None], dtype=object),
    "str_array": np.array(["a", "b"]),
    "bytes_array": np.array([b"a", b"b"]),
    "python_str": "abc",
    "list": [1.0, 2.0],
    "none": None,
    "datetime": np.array(["2020-01-01"], dtype="datetime64[D]"),
}


@pytest.mark.parametrize("name", list(BAD_ARGS))
def test_bad_argument_types_raise_type_error(name: str) -> None:
    with pytest.raises(TypeError):
        stax.jit(lambda x: x + 1, strict=True)(BAD_ARGS[name])


# int8..uint64, float16 (A1) and complex64/128 (E16) compile
@pytest.mark.parametrize("dtype", ["longdouble", "clongdouble"])
def test_unsupported_dtype_not_implemented(dtype: str) -> None:
    with pytest.raises(NotImplementedError, match=np.dtype(dtype).name):
        stax.jit(lambda x: x + 1, strict=True)(np.ones(3, dtype=dtype))


SHAPE_ERRORS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "add": (lambda x, y: x + y, (np.ones((3, 4)), np.ones((3, 5)))),
    "where": (lambda x, y: np.where(x > 0, x, y), (np.ones((2, 3)), np.ones((4,)))),
    "broadcast_to": (lambda x: np.broadcast_to(x, (3, 5)), (np.ones((3, 4)),)),
    "reshape": (lambda x: x.reshape(5, 3), (np.ones((3, 4)),)),
    "concatenate": (lambda x, y: np.concatenate([x, y], axis=0), (np.ones((3, 4)),
                                                                np.ones((3, 5)))),
    "matmul": (lambda x, y: x @ y, (np.ones((3, 4)), np.ones((3, 4)))),
    "stack": (lambda x, y: np.stack([x, y]), (np.ones((3, 4)), np.ones((4, 3)))),
}


@pytest.mark.parametrize("name", list(SHAPE_ERRORS))
def test_shape_mismatch_value_error(name: str) -> None:
    fn, args = SHAPE_ERRORS[name]
    with pytest.raises(ValueError):
        fn(*args)
    with pytest.raises(ValueError):
        stax.jit(fn)(*args)


def test_broadcast_error_message_like_numpy() -> None:
    with pytest.raises(ValueError, match="could not be broadcast"):
        stax.jit(lambda x, y: x * y)(np.ones((3, 4)), np.ones((3, 5)))


def test_axis_out_of_range() -> None:
    with pytest.raises(np.exceptions.AxisError):
        stax.jit(lambda x: x.sum(axis=2))(X)


def test_basic_index_out_of_bounds() -> None:
    with pytest.raises(IndexError):
        stax.jit(lambda x: x[5])(X)


def test_gather_index_out_of_bounds_raises_index_error() -> None:
    f = stax.jit(lambda x, i: x[i])
    ok = np.array([0, 2, -3])
    np.testing.assert_array_equal(f(X, ok), X[ok])
    bad = np.array([0, 3, 1])
    with pytest.raises(IndexError):
        X[bad]  # noqa: B018
    with pytest.raises(IndexError):
        f(X, bad)
    with pytest.raises(IndexError):
        f(X, np.array([0, -4, 1]))


def test_take_along_axis_out_of_bounds() -> None:
    f = stax.jit(lambda x, i: np.take_along_axis(x, i, axis=1))
    bad = np.array([[0], [4], [1]])
    with pytest.raises(IndexError):
        np.take_along_axis(X, bad, axis=1)
    with pytest.raises(IndexError):
        f(X, bad)


def test_float_index_array_raises() -> None:
    with pytest.raises(IndexError):
        stax.jit(lambda x, i: np.take(x, i))(X, np.array([0.0, 1.0]))


def test_python_if_on_traced_value() -> None:
    def fn(x: Any) -> Any:
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="np.where"):
        stax.jit(fn, strict=True)(X)


def test_float_of_traced_value() -> None:
    with pytest.raises(TypeError, match="traced"):
        stax.jit(lambda x: float(x.sum()) * x, strict=True)(X)


def test_shape_change_recompiles_not_misreads() -> None:
    f = stax.jit(lambda x: x * 2)
    np.testing.assert_array_equal(f(X), X * 2)
    y = np.arange(20, dtype=np.float64).reshape(4, 5)
    np.testing.assert_array_equal(f(y), y * 2)
    np.testing.assert_array_equal(f(y.T), y.T * 2)


def test_unknown_option() -> None:
    with pytest.raises(TypeError):
        stax.jit(lambda x: x, bogus=1)


def test_jit_of_non_callable() -> None:
    with pytest.raises(TypeError):
        stax.jit(3)


def test_wrong_number_of_arguments() -> None:
    with pytest.raises(TypeError):
        stax.jit(lambda x, y: x + y)(X)
