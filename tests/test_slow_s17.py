"""Warm calls whose result holds Python scalars, constants or NumPy scalars next to arrays
(issue 9: `stax.api._result_maker`, the result built by one compiled expression): every warm
call, with new arrays of the cold call's signature, returns what NumPy returns, of the same
types at every level; the warm call's checks (narrowed int bounds, aliasing of mutated
arguments, errors) still hold."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest
from test_coverage_s16 import same  # types at every level, values, dtypes

import stax

Pair = namedtuple("Pair", "total scaled")


FUNCTIONS = {
    "array and constant": lambda x: (x * 0.5, x.dtype.itemsize),
    "constants only": lambda x: (0.0, 0.0) if x.size == 0 else (1.0, 2.0),
    "0-d outputs in a tuple": lambda x: (x.sum(), x.max(), x - 1),
    "python int of a shape": lambda x: (x.shape[0] * 2, x.ravel()[:1] + 1),
    "namedtuple": lambda x: Pair(x.sum(axis=0), x * 2),
    "dict and list": lambda x: {"m": x.mean(axis=-1), "parts": [x[:1] * 3, 7, None]},
    "one-tuple": lambda x: (np.sqrt(np.abs(x)),),
}


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("layout", ["c", "transposed", "strided", "empty", "0-d"])
def test_warm_results_as_numpy(name: str, layout: str) -> None:
    fn = FUNCTIONS[name]
    f = stax.jit(fn)

    def make(seed: int) -> np.ndarray:
        base = np.random.default_rng(seed).standard_normal((4, 6))
        if seed == 3:
            base[0, 0] = np.nan
        return {"c": base, "transposed": base.T, "strided": base[::2, ::-1],
                "empty": base[:0], "0-d": base[0, 0]}[layout]

    for seed in range(5):  # cold, then warm calls with new arrays of one signature
        x = np.asarray(make(seed))
        try:
            want = fn(x.copy())
        except Exception as e:  # noqa: BLE001 - NumPy's error on this layout: ours too
            with pytest.raises(type(e)):
                f(x)
            continue
        with np.errstate(all="ignore"):
            same(f(x), want)


def test_python_scalar_arguments_warm() -> None:
    def newton(a: float) -> tuple[float, int]:
        x, it = a, 0
        while abs(x * x - a) > 1e-12 and it < 50:
            x = x - (x * x - a) / (2 * x)
            it += 1
        return x, it

    def scaled(x: np.ndarray, k: float) -> tuple[np.ndarray, float]:
        return x * k, k * 2.0

    f, g = stax.jit(newton), stax.jit(scaled)
    for a in (2.0, 2.0, 9.0, 9.0, 0.25, 2.0):
        same(f(a), newton(a))
    x = np.arange(5.0)
    for k in (1.5, 1.5, -3.0, 0.0, float("inf")):
        with np.errstate(all="ignore"):
            same(g(x, k), scaled(x, k))


def test_warm_checks_kept() -> None:
    """Narrowed ints checked against their bounds, mutated arguments written back and checked
    for aliasing, on warm calls whose result is rebuilt."""
    def shift(img: np.ndarray, k: int) -> tuple[np.ndarray, int]:
        return img + k, 3

    f = stax.jit(shift, strict=True)
    img = np.arange(6, dtype=np.uint8)
    for k in (1, 2, 3):
        same(f(img, k), shift(img, k))
    with pytest.raises(OverflowError):
        f(img, 300)
    with pytest.raises(OverflowError):
        shift(img, 300)

    def bump(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        x += y
        return y * 2, 1.5

    g = stax.jit(bump, strict=True)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x, y = rng.standard_normal(8), rng.standard_normal(8)
        x_ref = x.copy()
        want = bump(x_ref, y)
        same(g(x, y), want)
        np.testing.assert_array_equal(x, x_ref)
    z = np.arange(9.0)
    with pytest.raises(Exception, match="share memory|alias|overlap"):
        g(z[1:], z[:-1])


@pytest.mark.parametrize("layout", ["c", "transposed", "strided", "empty"])
def test_several_views_of_arguments_warm(layout: str) -> None:
    """A warm call returning several NumPy views of its arguments (and an argument itself)
    returns views of *its own* arguments, as NumPy does."""
    def views(x: np.ndarray, y: np.ndarray) -> tuple[Any, ...]:
        return x[..., ::-1], x.T, (x[None], y), {"y": y[1:]}

    f = stax.jit(views)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        base = rng.standard_normal((4, 6))
        x = {"c": base, "transposed": base.T, "strided": base[::2, ::-1],
             "empty": base[:0]}[layout]
        y = rng.standard_normal(5)
        got, want = f(x, y), views(x, y)
        same(got, want)
        assert got[2][1] is y
        for g, w in zip((got[0], got[1], got[2][0], got[3]["y"]),
                        (want[0], want[1], want[2][0], want[3]["y"]), strict=True):
            assert np.shares_memory(g, w) or g.size == 0  # (an extent-1 axis: any stride)
            assert [s for s, n in zip(g.strides, g.shape, strict=True) if n > 1] == \
                [s for s, n in zip(w.strides, w.shape, strict=True) if n > 1]
