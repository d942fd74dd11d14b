"""[PERF9] Sixteenth wave, issue 9: the compiler changes behind the unseen workloads of
benchmarks/workloads.py, each checked against NumPy over dtypes, layouts and special values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax


def _mods(a: Any, b: Any) -> Any:
    """Run-time divisors, a constant (0.75), and constant powers of two (exact without fmod),
    one of them subnormal in float32."""
    return (np.mod(a, b), np.fmod(a, b), a // b, np.fmod(a, 0.75), np.mod(a * 3, 1.0),
            np.mod(a, -0.5), np.fmod(a, 2.0**-10), a // 4.0, np.remainder(a, 2.0**-140))


def _hard_operands(dtype: str, n: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Pairs a, b of every kind stax_fmod tells apart: small and huge quotients (around the
    2^52 limit of its fast path), a just below a multiple of b (a/b rounds up to an integer),
    exact multiples (zeros of either sign), subnormals, b = 0, +-inf and NaN."""
    rng = np.random.default_rng(16)
    t = np.dtype(dtype).type
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    quotient = 2.0 ** rng.uniform(-2, 70, n) * rng.choice([-1, 1], n)
    a = (b * quotient).astype(dtype)
    below = np.nextafter(b[: n // 4] * t(rng.integers(1, 1 << 20, n // 4)), t(0))
    a[: n // 4] = below
    a[n // 4: n // 2: 7] = b[n // 4: n // 2: 7] * t(-3)  # exact multiples
    a[1::97] = np.finfo(dtype).smallest_subnormal * 3
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5.5, -5.5, 1e30], dtype)
    a[-64:] = np.repeat(specials, 8)
    b[-64:] = np.tile(specials, 8)
    return a, b


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # x % 0, inf % x: NumPy's warnings
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_remainder_is_numpys_bit_for_bit(dtype: str) -> None:
    """np.mod, np.fmod and // of floats (stax_fmod: one fma in double where the quotient is
    below 2^52, C's fmod beyond; a - trunc(a/b)*b for a constant power of two): NumPy's values
    exactly, signs of zero included, also on transposed, strided, broadcast and 0-d operands and
    an empty array."""
    f = stax.jit(_mods)
    a, b = _hard_operands(dtype)
    cases = [(a, b), (a.reshape(40, 100).T, b.reshape(100, 40)), (a[::3], b[::3]),
             (a.reshape(40, 100), b[:100]), (a[7], b[9]), (a[:0], b[:0])]
    for x, y in cases:
        got, want = f(x, y), _mods(x, y)
        assert_matches(got, want, rtol=0)
        for g, w in zip(got, want, strict=True):
            number = ~np.isnan(np.asarray(w))  # a NaN's sign is the libm's
            assert np.array_equal(np.signbit(np.asarray(g))[number], np.signbit(w)[number])


def _triangles(x: Any) -> Any:
    return np.triu(x) * 2, np.tril(x, -1), np.triu(x, 3), np.tril(x.T, 2), np.triu(x, -100)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_triangles_compare_loop_indices(dtype: str) -> None:
    """np.triu / np.tril keep NumPy's values for every k, batch, layout and empty shape, and
    read no n x m mask: the mask is a comparison of the loop indices (it was np.tri's constant,
    one bool per element)."""
    f = stax.jit(_triangles)
    rng = np.random.default_rng(3)
    for shape in ((9, 13), (13, 9), (3, 4, 5), (1, 1), (0, 3), (4, 0)):
        x = (rng.standard_normal(shape) * 4).astype(dtype)
        for view in (x, np.asfortranarray(x), x[..., ::-1]):
            assert_matches(f(view), _triangles(view))
    x = np.ones((64, 48), dtype)
    buffers = stax.explain(lambda v: np.triu(v, 1), x).compilation.lowered.program.buffers
    assert all(b.kind != "const" or b.dtype != np.bool_ for b in buffers)
