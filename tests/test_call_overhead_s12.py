"""[CALL, issue 9 item 4] Warm calls on paths made cheaper in session 12: each checked against
NumPy computed here, on the first (cold) call and on warm calls with other values, for the
values, dtypes, views of arguments and mutated arguments.

- views of arguments returned or written through: NumPy's view ops built once per program;
- functions using a scalar argument as a Python value (static): warm calls keyed on its value;
- Python ints read as uint64 bits (`bincount(minlength=k)`) on the warm path;
- in-place NumPy writes (np.put, np.place, ufunc.at, integer-index assignment) into the
  extern call's own buffer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import stax


def _same(got: Any, want: Any, strides: bool = True) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w, strides)
        return
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.strides == want.strides or not strides
    np.testing.assert_array_equal(got, want)


def _views(x: np.ndarray) -> tuple[np.ndarray, ...]:
    y = x[::-1]
    z = y[1::2]
    z[:] = 0
    w = x.reshape(-1, 2)[:, 1]
    w += 1
    return x, y, z, x.T[1:], x.reshape(2, -1)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_returned_views_of_arguments_warm(dtype: str) -> None:
    f = stax.jit(_views)
    for k in range(3):
        x = (np.arange(12) * (k + 1)).astype(dtype)
        mine, theirs = x.copy(), x.copy()
        got, want = f(mine), _views(theirs)
        _same(got, want)
        np.testing.assert_array_equal(mine, theirs)
        for g in got:  # the caller's array, or views of it
            assert np.shares_memory(g, mine)
        assert got[0] is mine


def _transposed_parts(z: np.ndarray) -> tuple[np.ndarray, ...]:
    t = z.T
    t[0] *= 2
    return t, z.real, z[1:, ::2].imag


def test_views_of_complex_and_transposed_arguments_warm() -> None:
    f = stax.jit(_transposed_parts)
    rng = np.random.default_rng(0)
    for _ in range(3):
        z = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
        mine, theirs = z.copy(), z.copy()
        got, want = f(mine), _transposed_parts(theirs)
        _same(got, want)
        np.testing.assert_array_equal(mine, theirs)
        assert all(np.shares_memory(g, mine) for g in got)


def _generic_views(x: np.ndarray) -> tuple[np.ndarray, ...]:
    x[1:] += 1
    return x[1:], x[::2].T


def test_views_of_a_shape_generic_program() -> None:
    """A view whose slices depend on the call's sizes is computed from them on each call."""
    f = stax.jit(_generic_views, dynamic=True)
    for n in (5, 8, 8, 3, 0):
        mine, theirs = np.arange(float(n)), np.arange(float(n))
        _same(f(mine), _generic_views(theirs))
        np.testing.assert_array_equal(mine, theirs)


def _one_hot(labels: np.ndarray, k: int) -> np.ndarray:
    return (labels[:, None] == np.arange(k)).astype(np.float32)


def test_static_scalar_argument_warm_calls_use_its_value() -> None:
    f = stax.jit(_one_hot)
    labels = np.array([0, 2, 1, 3, 1])
    for k in (4, 4, 5, 4, 5, 6, 6):
        _same(f(labels, k), _one_hot(labels, k))
    assert f.fast  # warm calls keyed on the value of k
    assert f.cache_info().compiles == 3


def _pad_to(x: np.ndarray, n: int, fill: float) -> np.ndarray:
    out = np.full(n, fill)
    out[: x.size] = x
    return out


def test_static_int_and_runtime_float_warm() -> None:
    """`n` is static (a shape), `fill` a runtime value: warm calls see both change."""
    f = stax.jit(_pad_to)
    x = np.arange(3.0)
    for n, fill in ((5, 0.0), (5, -1.5), (6, 2.0), (5, np.nan), (6, -0.0)):
        _same(f(x, n, fill), _pad_to(x, n, fill))


def _signed_step(x: np.ndarray, s: float) -> np.ndarray:
    return x + (1.0 if math.copysign(1.0, s) > 0 else -1.0)  # s used as a Python value


def test_static_float_keys_tell_signed_zeros_apart_and_nan_is_itself() -> None:
    """A static float's key is its repr: -0.0 gets its own program (0.0 == -0.0 served the
    other sign's), and a NaN argument is served warm (nan != nan compiled on every call)."""
    f, x = stax.jit(_signed_step), np.zeros(2)
    for s in (0.0, -0.0, np.nan, np.nan, -0.0, 0.0, np.nan):
        _same(f(x, s), _signed_step(x, s))
    assert f.cache_info().compiles == 3


def _counts(keys: np.ndarray, vals: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    sums = np.bincount(keys, weights=vals, minlength=k)
    counts = np.bincount(keys, minlength=k)
    return sums / np.maximum(counts, 1), counts


def test_bincount_minlength_from_a_python_int_warm() -> None:
    f = stax.jit(_counts)
    rng = np.random.default_rng(1)
    for k in (4, 4, 7, 2, 4):
        keys, vals = rng.integers(0, 5, 20), rng.normal(size=20)
        _same(f(keys, vals, k), _counts(keys, vals, k))
    with pytest.raises(ValueError):
        np.bincount(keys, minlength=-1)
    with pytest.raises(ValueError):
        f(keys, vals, -1)


def _put_wrap(a: np.ndarray, ind: np.ndarray, v: np.ndarray) -> np.ndarray:
    np.put(a, ind, v, mode="wrap")
    return a


def _scatter(a: np.ndarray, idx: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = a * 2
    np.add.at(b, idx, v)
    b[idx[:2]] = -1
    np.maximum.at(a, idx, v)
    return a, b


def _place(img: np.ndarray, m: np.ndarray) -> np.ndarray:
    np.place(img, m, [255])
    np.putmask(img, img == 3, 7)
    return img


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_in_place_writes_warm(layout: str) -> None:
    rng = np.random.default_rng(2)
    f, g, h = stax.jit(_put_wrap), stax.jit(_scatter), stax.jit(_place)

    def arrange(a: np.ndarray) -> np.ndarray:
        if layout == "F":
            return np.asfortranarray(a)
        return a[:, ::2] if layout == "strided" else a

    for _ in range(3):
        base = rng.normal(size=(3, 8))
        ind, v = rng.integers(-30, 30, 5), rng.normal(size=5)
        mine, theirs = arrange(base.copy()), arrange(base.copy())
        got = f(mine, ind, v)
        assert got is mine
        _same(got, _put_wrap(theirs, ind, v))

        idx = rng.integers(0, 3, 4)
        vals = rng.normal(size=(4, mine.shape[1]))
        mine, theirs = arrange(base.copy()), arrange(base.copy())
        # (the strides of `b`, made from an F-ordered `a` and written by index, are C order in
        # Stax, F in NumPy: a layout difference older than this file, values equal)
        _same(g(mine, idx, vals), _scatter(theirs, idx, vals), strides=layout != "F")
        np.testing.assert_array_equal(mine, theirs)

        img = rng.integers(0, 6, (3, 8)).astype(np.uint8)
        mine, theirs = arrange(img.copy()), arrange(img.copy())
        m = mine > 3
        _same(h(mine, m), _place(theirs, m))
        np.testing.assert_array_equal(mine, theirs)


def test_in_place_write_error_leaves_the_argument_unchanged() -> None:
    f = stax.jit(lambda a, ind, v: (np.put(a, ind, v), a)[1])
    a = np.arange(5.0)
    f(a.copy(), np.array([1]), np.array([9.0]))
    with pytest.raises(IndexError):
        np.put(a.copy(), np.array([7]), np.array([1.0]))
    with pytest.raises(IndexError):
        f(a, np.array([7]), np.array([1.0]))
    np.testing.assert_array_equal(a, np.arange(5.0))


def _flagged(x: np.ndarray, clip: bool, scale: bool) -> np.ndarray:
    y = np.clip(x, -1, 1) if clip else x  # `clip` used as a Python value: static
    return y * scale  # `scale` a runtime value (a bool multiplies as 0 or 1)


def test_python_bool_arguments_warm() -> None:
    """[CALL] Python bools are in the warm key (static ones by value)."""
    f = stax.jit(_flagged)
    x = np.linspace(-2.0, 2.0, 7)
    for clip, scale in ((True, True), (True, False), (False, True), (True, True),
                        (False, False), (1, True)):
        _same(f(x, clip, scale), _flagged(x, clip, scale))
    assert f.fast
