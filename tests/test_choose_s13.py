"""[CHOOSE] np.choose / ndarray.choose and np.nextafter compile (they were graph breaks), each
tested against NumPy computed in the test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning


def _compiled(fn):
    """`fn` jitted, any graph break an error (the point: no break)."""
    jitted = stax.jit(fn)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            return jitted(*args)
    return call


def _same(got, want) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(mode: str) -> None:
    def fn(a, x, y, t):
        return (np.choose(a, [x, y, t], mode=mode), np.choose(a, (x, 2.5), mode=mode),
                a.choose([t, y], mode=mode), np.choose(a, [True, t], mode=mode),
                np.choose(a, np.stack([x, x * 2]), mode=mode), np.choose(a, [x], mode=mode))

    jitted = _compiled(fn)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = rng.integers(-50, 50, (5,)).astype(np.int16)  # broadcast along a's rows
    t = rng.integers(0, 2, (4, 1)).astype(bool)
    high = 2 if mode == "raise" else 7  # wrap/clip: indices beyond the range and negative
    for dtype in (np.int64, np.int8, np.uint8, np.bool_):
        low = 0 if mode == "raise" or dtype in (np.uint8, np.bool_) else -6
        a = rng.integers(low, high if dtype != np.bool_ else 2, (4, 5)).astype(dtype)
        if mode == "raise":  # one choice: indices all 0
            cases = [(a, x, y, t)]
        else:
            cases = [(a, x, y, t), (a.T.copy().T[:, ::-1], x.T.copy().T, y[::-1], t),
                     (a[::2], x[::2], y, t[::2])]
        for args in cases:
            if mode == "raise":
                args = (args[0] % 1 if dtype != np.bool_ else args[0] & False, *args[1:])
            for g, w in zip(jitted(*args), fn(*args), strict=True):
                _same(g, w)


def test_choose_raise_two_choices_and_errors() -> None:
    def fn(a, x, y):
        return np.choose(a, [x, y]) * 2

    jitted = _compiled(fn)
    x, y = np.arange(6.0).reshape(2, 3), np.array([10, 20, 30], np.int32)
    for a in (np.array([[0, 1, 1], [1, 0, 0]]), np.array([[1], [0]]), np.array(1)):
        _same(jitted(a, x, y), fn(a, x, y))
        _same(jitted(a, x, y), fn(a, x, y))  # warm
    empty = np.zeros((0, 3), np.int64)
    _same(jitted(empty, x[:0], y), fn(empty, x[:0], y))
    for bad in (np.array([[0, 2, 1], [1, 0, 0]]), np.array([[0, -1, 1], [1, 0, 0]])):
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            fn(bad, x, y)
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            jitted(bad, x, y)
    _same(jitted(np.array([[0, 1, 1], [1, 0, 0]]), x, y),
          fn(np.array([[0, 1, 1], [1, 0, 0]]), x, y))  # still right after an error
    with pytest.raises(ValueError, match="invalid entry in choice array"):  # one choice
        _compiled(lambda a, x: np.choose(a, [x]))(np.array([0, 1, 0]), x[0])


def test_choose_bad_arguments_are_numpys_errors() -> None:
    x = np.arange(3.0)
    for a, choices, kw, kind in ((np.array([0.0, 1.0, 0.0]), [x, x], {}, TypeError),
                                 (np.array([0, 1, 0]), [x, x], {"mode": "nope"}, ValueError),
                                 (np.array([0, 1, 0]), [], {}, ValueError),
                                 (np.array([0, 1]), [x, x], {}, ValueError)):  # shapes
        with pytest.raises(kind):
            np.choose(a, choices, **kw)
        with pytest.raises(kind):
            stax.jit(lambda a, x, choices=choices, kw=kw: np.choose(a, [*choices], **kw))(a, x)


def test_nextafter_bit_equal_over_corners() -> None:
    def fn(x, y):
        return np.nextafter(x, y), np.nextafter(x, 0), np.nextafter(x, np.inf)

    jitted = _compiled(fn)
    corners = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.5e-45,
               6e-8, 1e308, 3.4e38, 65504.0, -3.0]
    with np.errstate(all="ignore"):
        for dtype in (np.float64, np.float32, np.float16):
            v = np.array(corners).astype(dtype)
            x, y = v[:, None], v[None, :]
            for args in ((x, y), (x.T, y.T), (v[::2], v[::-2]), (v[:0], v[:0])):
                for g, w in zip(jitted(*args), fn(*args), strict=True):
                    assert g.dtype == w.dtype and g.shape == w.shape
                    assert g.tobytes() == w.tobytes()
    ints = np.arange(-3, 4, dtype=np.int32)
    for g, w in zip(jitted(ints, ints[::-1]), fn(ints, ints[::-1]), strict=True):
        _same(g, w)
