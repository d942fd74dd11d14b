"""[VEC5] float16 in vector code (issue 9): kernels hold float16 as its bits (the runtime
header's `stax_half`) and convert with branch-free integer and float32 operations, so loops over
float16 vectorize. Results must be bit-equal to NumPy's: every one of the 65536 halves converted
to float32 and float64, float32 and float64 values at and around every rounding boundary
converted to float16 (ties to even, subnormals, overflow to inf, NaN sign and payload), and
float16 arithmetic (rounded after every op, as NumPy) over NaN, inf, subnormal and overflowing
values; at every ISA level and under AddressSanitizer + UBSan."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_sanitized

import stax
from stax.backends.cpu.vecreport import remarks_available, vector_report
from stax.runtime.compiler import ISA_LEVELS, isa_level

RUNNABLE = ISA_LEVELS[ISA_LEVELS.index(isa_level()):]


def all_halves() -> np.ndarray:
    """Every float16 bit pattern, as a (256, 256) array."""
    return np.arange(65536, dtype=np.uint16).view(np.float16).reshape(256, 256)


def around_boundaries(dtype: str) -> np.ndarray:
    """float32/float64 values at every float16 value, at the midpoints between neighbours
    (ties), one unit in the last place either side of both, the overflow threshold 65520,
    NaNs with payloads that float16 keeps or loses, and random values over the whole range."""
    h = np.arange(0, 0x7c00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = (h[:-1] + h[1:]) / 2
    wide = np.dtype(dtype).type
    near = [np.nextafter(wide(v), wide(np.inf)) for v in (mid, h)] + \
           [np.nextafter(wide(v), wide(-np.inf)) for v in (mid, h)]
    nan_bits = np.array([0x7fc00000, 0x7f800001, 0x7fe00000, 0x7f802000, 0xffc00001],
                        np.uint32) if dtype == "float32" else np.array(
        [0x7ff8000000000000, 0x7ff0000000000001, 0x7ffc000000000000, 0xfff0040000000000],
        np.uint64)
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2 ** (8 * np.dtype(dtype).itemsize), 20000, dtype=np.uint64)
    values = np.concatenate([h.astype(dtype), mid.astype(dtype), *near,
                             np.array([65504, 65519.99, 65520, 65536, 1e6, np.inf], dtype),
                             nan_bits.view(dtype), bits.astype(nan_bits.dtype).view(dtype)])
    values = np.concatenate([values, -values])
    return values[: len(values) // 64 * 64].reshape(64, -1)


def edges() -> np.ndarray:
    """float16 operands: NaN, +-inf, +-0, subnormals, the largest finite, values whose products
    and sums overflow or fall below the smallest subnormal, and random values."""
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 6e-8, -6e-8, 3e-5, 6.1e-5,
                        65504, -65504, 300, -300, 1, -1, 0.1, 1 / 3], np.float16)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((40, 73)) * 4).astype(np.float16)
    x.flat[: special.size] = special
    return x


def bit_equal(got: Any, want: Any, nan_bits: bool = True) -> None:
    """The same bytes; NaN for NaN only with `nan_bits` False (which NaN an op returns when
    both operands are NaNs depends on the operand order the C compiler picked, in NumPy's own
    loops as in Stax's)."""
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if not nan_bits and want.dtype.kind == "f":
        assert np.array_equal(np.isnan(got), np.isnan(want))
        got, want = (np.where(np.isnan(want), 0, v) for v in (got, want))
    diff = np.flatnonzero(got.view(np.uint8) != want.view(np.uint8))
    assert diff.size == 0, (got.ravel()[diff[:5] // got.itemsize],
                            want.ravel()[diff[:5] // want.itemsize])


def nan_in_each_lane(dtype: str) -> np.ndarray:
    """Rows of 32 ordinary values with one NaN (signaling or quiet, payloads, either sign) in a
    different lane each: [F16X] a vector holding a NaN is converted by the portable code (the
    F16C instructions quiet a signaling NaN; NumPy keeps it), the other vectors by F16C."""
    nans = {"float16": [0x7c01, 0x7d55, 0xfe01, 0x7e00],
            "float32": [0x7f800001, 0x7fa00000, 0xff802000, 0x7fc00001]}[dtype]
    rows = np.tile(np.linspace(-3, 3, 32, dtype=dtype), (32 * len(nans), 1))
    bits = rows.view(f"u{rows.itemsize}")
    for k, nan in enumerate(nans):
        bits[np.arange(32) + 32 * k, np.arange(32)] = nan
    return rows


CONVERSIONS: dict[str, tuple[Callable[..., Any], Callable[[], tuple[np.ndarray, ...]]]] = {
    "f16_to_f32": (lambda h: h.astype(np.float32), lambda: (all_halves(),)),
    "f16_to_f64_T": (lambda h: h.T.astype(np.float64), lambda: (all_halves(),)),
    "f32_to_f16": (lambda x: x.astype(np.float16), lambda: (around_boundaries("float32"),)),
    "f64_to_f16": (lambda x: x.astype(np.float16), lambda: (around_boundaries("float64"),)),
    "i64_to_f16": (lambda a: a.astype(np.float16),
                   lambda: (np.arange(-70000, 70000, 7, dtype=np.int64),)),
    "bool_to_f16": (lambda h: (h > 0).astype(np.float16) - h, lambda: (all_halves(),)),
    "nan_lanes_f16_to_f32": (lambda h: h.astype(np.float32),
                             lambda: (nan_in_each_lane("float16"),)),
    "nan_lanes_f16_to_f64": (lambda h: h.astype(np.float64),
                             lambda: (nan_in_each_lane("float16"),)),
    "nan_lanes_f32_to_f16": (lambda x: x.astype(np.float16),
                             lambda: (nan_in_each_lane("float32"),)),
}
ARITHMETIC: dict[str, Callable[..., Any]] = {
    "muladd": lambda x, y: x * y + x,
    "div_sub": lambda x, y: x / y - y,
    "sqrt_abs": lambda x, y: np.sqrt(np.abs(x)) * y,
    "scalars": lambda x, y: (x * 2 + 1, x * np.float16(0.1), x - 1e-7),
    "mixed_f32": lambda x, y: (x * np.float32(3)).astype(np.float16) + y,
    "where_max": lambda x, y: np.where(x > y, np.maximum(x, y), np.minimum(x, -y)),
    "compare": lambda x, y: (x < y, x == y, np.isnan(x * y)),
    "cumsum_rows": lambda x, y: np.cumsum(x * 0.5, 1),
    "transposed": lambda x, y: x.T * 2 + y.T,
    "strided_reversed": lambda x, y: x[::2, ::-3] + y[::2, ::3],
}


@pytest.mark.parametrize("isa", RUNNABLE)
@pytest.mark.parametrize("name", CONVERSIONS)
def test_conversions_bit_equal(name: str, isa: str) -> None:
    fn, make = CONVERSIONS[name]
    args = make()
    with np.errstate(all="ignore"):
        bit_equal(stax.jit(fn, isa=isa)(*args), fn(*args))


@pytest.mark.parametrize("isa", RUNNABLE)
@pytest.mark.parametrize("name", ARITHMETIC)
def test_arithmetic_bit_equal(name: str, isa: str) -> None:
    """NumPy rounds to float16 after every op: so do the kernels (float32 computes + - * /
    sqrt of two halves exactly enough for one rounding to give the correctly rounded half)."""
    fn = ARITHMETIC[name]
    x, y = edges(), edges()[::-1] * np.float16(0.75)
    with np.errstate(all="ignore"):
        got, want = stax.jit(fn, isa=isa)(x, y), fn(x, y)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,))),
                    strict=True):
        bit_equal(g, w, nan_bits=False)


def test_empty_and_0d() -> None:
    e = np.zeros((0, 5), np.float16)
    bit_equal(stax.jit(lambda h: h * 2 + 1)(e), e * 2 + 1)
    s = np.float16(-3.5)
    bit_equal(stax.jit(lambda h: (h * h).astype(np.float16))(np.asarray(s)),
              np.asarray(s * s))


@pytest.mark.skipif(not remarks_available(), reason="needs g++ (-fopt-info remarks)")
@pytest.mark.skipif(isa_level() == "scalar", reason="this machine runs only the scalar level")
def test_float16_loops_vectorize() -> None:
    """Loads, per-op roundings and stores of float16, its casts both ways and a float16 max
    reduction: every innermost loop Stax marks is vectorized by g++."""
    x = edges()
    for fn in (ARITHMETIC["muladd"], lambda h: h.astype(np.float32) * 2,
               lambda h: (h.astype(np.float64) + 1).astype(np.float16),
               lambda h: np.exp(h) + h.max(1, keepdims=True)):
        cpp = stax.jit(fn).compile(x, *([x] if fn is ARITHMETIC["muladd"] else [])).program.cpp
        loops = [lp for lp in vector_report(cpp, isa_level()) if lp.marked]
        assert loops and all(lp.vectorized for lp in loops), [lp.reason for lp in loops]


SANITIZED = textwrap.dedent("""
    import numpy as np, stax
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    x = h.astype(np.float32) * np.float32(1.0009765625)
    fns = [lambda h: h.astype(np.float32) + 1, lambda h: (h * h - h).astype(np.float64),
           lambda h: h[::-3] * 2]
    with np.errstate(all="ignore"):
        for n in (1, 15, 16, 17, 65, 1000):
            for fn in fns:
                got, want = stax.jit(fn)(h[:n]), fn(h[:n])
                assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (n, fn)
            got = stax.jit(lambda x: x.astype(np.float16))(x[:n])
            assert np.array_equal(got.view(np.uint16), x[:n].astype(np.float16).view(np.uint16))
    print("sanitized ok")
""")


def test_clean_under_sanitizers(tmp_path: Path) -> None:
    """Loops shorter than a vector, whole vectors and tails, reversed strides: no ASan or
    UBSan report (the bit casts and shifts stay in range)."""
    run_sanitized(SANITIZED, tmp_path / "cache")
