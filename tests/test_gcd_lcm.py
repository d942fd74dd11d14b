"""np.gcd / np.lcm [VEC4]: NumPy's integer loops (absolute values, the minimum wrapping), every
integer dtype, mixed dtypes, broadcasting, strided and 0-d/empty operands; NumPy's TypeError for
float and bool operands. (tests/ops/test_op_sweep.py also runs them over its edge-value grid.)"""

from __future__ import annotations

import numpy as np
import pytest

import stax

INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def both(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.gcd(a, b), np.lcm(a, b)


def check(fn, *args) -> None:  # type: ignore[no-untyped-def]
    got, want = fn(*args), both(*args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_every_int8_and_uint8_pair() -> None:
    f = stax.jit(both)
    for dtype in ("int8", "uint8"):
        info = np.iinfo(dtype)
        values = np.arange(info.min, info.max + 1).astype(dtype)
        check(f, values[:, None], values[None, :])  # broadcast: all 65536 pairs


@pytest.mark.parametrize("dtype", INTS[2:])
def test_wide_dtypes_edges_and_random(dtype: str) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(9)
    edges = np.array([v for v in (info.min, info.min + 1, -12, -1, 0, 1, 6, 18, info.max - 1,
                                  info.max) if info.min <= v <= info.max], dtype=dtype)
    grid_a, grid_b = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    wide = rng.integers(info.min, info.max, size=200, endpoint=True, dtype=dtype)
    small = rng.integers(max(info.min, -5000), 5000, size=200, dtype=dtype)
    a = np.concatenate([grid_a, wide, small, small * 3])
    b = np.concatenate([grid_b, wide[::-1], small[::-1] * 2, small])
    check(stax.jit(both), a, b)


def test_layouts_scalars_and_shapes() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(-500, 500, size=(6, 10), dtype=np.int32)
    y = rng.integers(-500, 500, size=(10, 6), dtype=np.int32)
    f = stax.jit(both)
    check(f, x, y.T)                      # transposed
    check(f, x[:, ::3], x[::-1, ::3])  # strided, reversed
    check(f, x, np.int32(12))             # 0-d operand
    check(f, np.int32(-8), np.int32(12))  # 0-d result
    check(f, x[:0], x[:0])                # empty
    g = stax.jit(lambda a: (np.gcd(a, 84), np.lcm(a, -4)))  # Python ints: the array's dtype
    got, want = g(x), (np.gcd(x, 84), np.lcm(x, -4))
    for u, w in zip(got, want, strict=True):
        assert u.dtype == w.dtype
        np.testing.assert_array_equal(u, w)


def test_mixed_dtypes_promote() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, size=50).astype(np.int8)
    b = rng.integers(0, 256, size=50).astype(np.uint8)
    c = rng.integers(-2**31, 2**31, size=50).astype(np.int64)
    check(stax.jit(both), a, b)  # int16
    check(stax.jit(both), b, c)  # int64


@pytest.mark.parametrize("dtypes", [("float64", "int32"), ("bool", "bool"),
                                    ("uint64", "int64")])
def test_no_loop_raises_numpys_type_error(dtypes: tuple[str, str]) -> None:
    a, b = (np.ones(3, d) for d in dtypes)
    with pytest.raises(TypeError):
        np.gcd(a, b)
    with pytest.raises(TypeError):
        stax.jit(both)(a, b)
