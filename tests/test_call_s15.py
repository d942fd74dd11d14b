"""[CALL2, issue 9 item 4] Warm-call paths made cheaper in session 15, each checked against
NumPy computed here, on cold and warm calls, with the argument kinds, dtypes and layouts
changing between calls:

- keyword arguments bound by position (`f(x, y=2.0)` takes the warm path of `f(x, 2.0)`);
  what cannot be passed by position still goes through `call_general` or raises as Python;
- a tuple of results returned as the compiled wrapper builds it, and Python scalar arguments
  converted without a closure per call;
- results that are all arguments or NumPy's views of them: no kernel on a warm call."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _layouts(dtype: str) -> list[np.ndarray]:
    """The same kind of argument in other layouts and shapes (each a new signature): C,
    strided, transposed, 0-d, empty."""
    base = (np.arange(24) % 7 - 3).astype(dtype)
    return [base[:8], base[::3], base.reshape(4, 6).T, np.array(base[5]), base[:0]]


def scaled(x: np.ndarray, y: Any = 1.0, z: Any = 0) -> np.ndarray:
    return x * y + z


def test_keyword_arguments_take_the_call_by_position() -> None:
    f = stax.jit(scaled)
    for dtype in ["float64", "int32"]:
        for k, x in enumerate(_layouts(dtype)):
            calls = [((x,), {"y": 2.0}), ((), {"z": 3, "x": x}), ((x, 0.5), {"z": -1}),
                     ((x,), {"y": x, "z": x})]
            args, kwargs = calls[k % len(calls)]
            for _ in range(2):  # cold, then warm
                _same(f(*args, **kwargs), scaled(*args, **kwargs))
    x = np.arange(6.0)
    before = f.cache_info().compiles
    _same(f(x, y=2.5), scaled(x, 2.5))  # the signature compiled by position above
    _same(f(x, 2.5), scaled(x, 2.5))
    assert f.cache_info().compiles == before + 1  # one program for both spellings
    with pytest.raises(TypeError):
        f(x, x=x)  # given twice, as Python refuses it
    with pytest.raises(TypeError):
        f(y=2.0)  # missing x
    with pytest.raises(TypeError):
        f(x, w=1.0)  # no such parameter


def test_keywords_that_are_not_positional() -> None:
    def keyword_only(x: np.ndarray, *, y: float = 1.0) -> np.ndarray:
        return x - y

    def collected(x: np.ndarray, **options: Any) -> np.ndarray:
        return x * options.get("k", 1.0)

    def wrapper(fn: Any) -> Any:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:  # keywords handled otherwise than fn
            return fn(*args, **{k: -v for k, v in kwargs.items()})
        return inner

    negated = wrapper(scaled)
    x = np.linspace(-1, 1, 7)
    for fn, kwargs in [(keyword_only, {"y": 2.0}), (collected, {"k": 3.0}),
                       (negated, {"y": 2.0, "z": 1.0})]:
        f = stax.jit(fn)
        for _ in range(2):
            _same(f(x, **kwargs), fn(x, **kwargs))
    strict = stax.jit(scaled, strict=True)
    with pytest.raises(TypeError, match="strict=False"):
        strict(x, y=2.0)


def pair(x: np.ndarray, y: Any) -> tuple[np.ndarray, np.ndarray]:
    return x + y, x * y


def test_tuple_results_and_scalar_arguments() -> None:
    f = stax.jit(pair)
    scalars = [2.5, 3, True, 1 - 2j, np.float32(0.5)]
    for dtype in ["float32", "int32", "uint8", "complex64"]:
        for k, x in enumerate(_layouts(dtype)):
            for y in [x, scalars[k]]:
                try:
                    want = pair(x, y)
                except (TypeError, OverflowError) as e:  # NumPy refuses: so does Stax
                    with pytest.raises(type(e)):
                        f(x, y)
                    continue
                for _ in range(2):  # cold, then warm
                    got = f(x, y)
                    _same(got, want)
                assert got[0] is not f(x, y)[0] or x.ndim == 0  # a new array per call
    with pytest.raises(OverflowError):
        f(np.arange(3, dtype=np.uint8), 300)  # NEP 50, on a warm signature too
    f(np.arange(3, dtype=np.uint8), 3)
    with pytest.raises(OverflowError):
        f(np.arange(3, dtype=np.uint8), 300)


def test_tuple_results_with_kernel_errors_and_errstate() -> None:
    def gathered(x: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[i], x[i] * 2

    def quiet(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1 / x, np.log(x)

    g, q = stax.jit(gathered), stax.jit(quiet)
    x = np.arange(10.0)
    for _ in range(2):
        _same(g(x, np.array([1, 9, -2])), gathered(x, np.array([1, 9, -2])))
    with pytest.raises(IndexError):
        g(x, np.array([1, 10, 2]))  # the same signature: the kernel's bounds flag
    with pytest.raises(IndexError):
        gathered(x, np.array([1, 10, 2]))
    z = np.array([0.0, -1.0, 2.0])
    with np.errstate(all="raise"):
        for _ in range(2):
            _same(q(z), quiet(z))


def test_results_that_are_views_of_arguments() -> None:
    def views(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
        return x[::2], y.T, x, y[1:].reshape(-1)

    def one(x: np.ndarray) -> np.ndarray:
        return x.T[::-1]

    f, g = stax.jit(views), stax.jit(one)
    for dtype in ["float64", "int16"]:
        for x in _layouts(dtype)[:3]:
            y = np.arange(12, dtype=dtype).reshape(4, 3)[:, ::2]
            for _ in range(2):
                got, want = f(x, y), views(x, y)
                _same(got, want)
                assert got[2] is x
                for g_, w in zip(got, want, strict=True):
                    assert np.shares_memory(g_, w) == np.shares_memory(w, x) | \
                        np.shares_memory(w, y)
                    assert g_.strides == w.strides
                _same(g(x), one(x))
                assert np.shares_memory(g(x), x) or x.size == 0
    x = np.arange(8.0)
    g(x)[0] = 100.0  # the view is the argument's memory, as NumPy's
    assert x[-1] == 100.0


def test_views_only_with_a_generic_program() -> None:
    h = stax.jit(lambda x: x[1:][::2], dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)  # compiled
        for n in [5, 9, 9, 16, 16, 0, 1]:
            x = np.arange(float(n))
            got = h(x)
            _same(got, x[1:][::2])
            assert np.shares_memory(got, x) or got.size == 0
