"""complex64 / complex128 end to end (issue 16, item 3) against NumPy computed here.

Arithmetic is NumPy's (plain product, Smith's division, lexicographic order), exp/log/sqrt and
the trigonometric functions are glibc's (as NumPy's on Linux); results are compared part by
part with NaN and inf placement exact (`assert_complex_matches`). The op sweep
(tests/ops/test_op_sweep.py) covers every op of the table over both complex dtypes and mixed
signatures; this file covers promotion, parts, casts, reductions, matmul and whole programs
(Mandelbrot, a contour integral, a Stockham-style FFT step).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from numpy.exceptions import ComplexWarning

import stax

INF, NAN = np.inf, np.nan
# 8 values (the op sweep's 8x8 grid of binary edge cases): NaN, infinities in either part,
# signed zeros, ordinary values
COMPLEX_EDGES = (complex(NAN, 0.0), complex(INF, 0.0), complex(-INF, 1.0), complex(0.0, INF),
                 0j, complex(-0.0, -0.0), 1 + 1j, -0.5 + 2j)
RTOL = {"complex64": 2e-6, "complex128": 1e-13}


def assert_complex_matches(got: Any, want: Any, rtol: float | None = None) -> None:
    """Same dtype and shape; each part: NaN where NumPy has NaN, the same infinities, and
    finite parts within `rtol` times |NumPy's value| (the parts of a product or quotient may
    cancel: relative to the whole number, not to the part)."""
    want = np.asarray(want)
    assert isinstance(got, (np.ndarray, np.generic)), f"stax returned {type(got).__name__}"
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    tol = RTOL[want.dtype.name] if rtol is None else rtol
    scale = np.abs(want)
    for name, g, w in (("real", got.real, want.real), ("imag", got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"NaN in {name}")
        inf = np.isinf(w)
        np.testing.assert_array_equal(g[inf], w[inf], err_msg=f"inf in {name}")
        finite = np.isfinite(w)
        err = np.abs(g[finite] - w[finite])
        bad = err > tol * scale[finite]
        assert not bad.any(), (f"{name} parts differ: got {g[finite][bad][:5]}, "
                               f"want {w[finite][bad][:5]} (rtol {tol})")


def check(got: Any, want: Any, rtol: float | None = None) -> None:
    """assert_matches, complex results with assert_complex_matches."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w, rtol)
    elif np.asarray(want).dtype.kind == "c":
        assert_complex_matches(got, want, rtol)
    else:
        assert_matches(got, want, rtol=rtol)


def quiet(fn: Any, *args: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def crandom(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)


# ---- elementwise, promotion, broadcasting, layouts -------------------------------------------

def elementwise(z: Any, w: Any, x: Any, c: Any) -> tuple[Any, ...]:
    """z, w complex (w broadcast along rows), x real, c a Python complex scalar."""
    return (z + w, z - w, z * w, z / w, -z, z * c + 1, x + z, x * 1j, z / 2.5,
            np.abs(z), np.exp(z), np.log(z), np.sqrt(z), np.conj(z), z.conj(), np.square(z),
            z ** 2, z ** 3, z ** 0.5, z == w, z != w, np.isnan(z), np.isinf(z), np.isfinite(z),
            np.where(x > 0, z, w), np.where(x > 0, z, 0), np.maximum(z, w), np.sign(z),
            np.angle(z), np.angle(z, deg=True), z.real, z.imag, np.real(z), np.imag(z))


@pytest.fixture(scope="module")
def jitted_elementwise() -> Any:
    return stax.jit(elementwise)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_elementwise(jitted_elementwise: Any, dtype: str, layout: str) -> None:
    z = crandom((5, 6), dtype)
    w = crandom((6,), dtype, seed=1)
    real_dtype = np.empty(0, dtype).real.dtype
    x = np.random.default_rng(2).uniform(-3, 3, (5, 6)).astype(real_dtype)
    z.flat[:8] = COMPLEX_EDGES
    if layout == "transposed":
        z = np.ascontiguousarray(z.T).T
    elif layout == "strided":
        z = np.repeat(z, 2, axis=1)[:, ::2]
    c = 0.5 - 1.5j
    check(quiet(jitted_elementwise, z, w, x, c), quiet(elementwise, z, w, x, c))


PROMOTION = {
    "f32_plus_py_complex": lambda a: a.astype(np.float32) + 1j,  # NEP 50: complex64
    "i16_times_py_complex": lambda a: a.astype(np.int16) * (2 + 1j),  # int16 -> complex128
    "c64_plus_f64": lambda a: a.astype(np.complex64) + a,  # complex128
    "c64_plus_py_float": lambda a: a.astype(np.complex64) + 0.1,  # stays complex64
    "c64_times_np_c128": lambda a: a.astype(np.complex64) * np.complex128(1 + 2j),  # strong
    "exp_of_py_complex": lambda a: np.exp(1j) * a.astype(np.float32),  # a function: strong
    "f16_plus_c64": lambda a: a.astype(np.float16) + a.astype(np.complex64),
}


@pytest.mark.parametrize("name", list(PROMOTION))
def test_promotion(name: str) -> None:
    """NumPy's result_type and NEP 50 (Python complex scalars are weak under operators)."""
    a = np.linspace(-2, 2, 7)
    fn = PROMOTION[name]
    check(stax.jit(fn)(a), fn(a))


def test_python_complex_argument() -> None:
    """A Python complex argument is a weak scalar (complex64 arrays stay complex64); the
    compiled program serves another value of it."""
    f = stax.jit(lambda z, c: z * c - c)
    z = crandom((9,), "complex64")
    for c in (1 + 2j, -3j, complex(INF, 0)):
        check(quiet(f, z, c), quiet(lambda z, c: z * c - c, z, c))


def test_parts_of_python_scalars_are_weak() -> None:
    """(1+2j).real is a Python float: with a float32 array the result stays float32."""
    def fn(c: Any, f: Any, x: Any) -> tuple[Any, ...]:
        return c.real * x, c.imag + x, f.imag + x, f.real - x, c.conjugate() * x
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    check(stax.jit(fn)(1 + 2j, 2.5, x), fn(1 + 2j, 2.5, x))


def test_zero_d_and_empty() -> None:
    f = stax.jit(lambda z: (z * z + 1j, np.abs(z), z.sum(), z.real))
    for z in (np.array(1 - 2j), np.zeros((0, 3), np.complex64), np.array(np.nan + 1j)):
        check(quiet(f, z), quiet(lambda z: (z * z + 1j, np.abs(z), z.sum(), z.real), z))


# ---- parts, casts ------------------------------------------------------------------------------

def test_parts_of_real_arrays() -> None:
    """.real of a real array is the array; .imag is zeros; np.angle of reals is arctan2(0, x)
    (int8: float16, as NumPy)."""
    def fn(x: Any, i: Any) -> tuple[Any, ...]:
        return x.real + 1, x.imag, np.imag(i), np.angle(x), np.angle(i), np.conj(i)
    x = np.array([-1.0, 0.0, 2.0, -0.0])
    i = np.array([-3, 0, 4, 1], np.int8)
    check(stax.jit(fn)(x, i), fn(x, i))


def test_assignment_into_parts_is_refused() -> None:
    """`z.real[...] = v` writes into z in NumPy: Stax refuses it (a graph break runs it in
    NumPy; strict mode raises), never a silently unchanged z."""
    def fn(z: Any) -> Any:
        r = z.real
        r[0] = 5.0
        return z
    with pytest.raises(NotImplementedError, match="real or .imag"):
        stax.jit(fn, strict=True)(crandom((3,), "complex128"))
    with pytest.warns(UserWarning):
        got = stax.jit(fn)(crandom((3,), "complex128"))
    check(got, fn(crandom((3,), "complex128")))


@pytest.mark.parametrize("target", ["float16", "float32", "float64", "int8", "uint16", "int64",
                                    "bool", "complex64", "complex128"])
def test_astype(target: str) -> None:
    """Complex -> real keeps the real part with NumPy's ComplexWarning (not for bool);
    real -> complex has imaginary part 0; NaN/inf real parts -> int as NumPy's casts."""
    z = np.array([1.5 - 2j, -3.7 + 0j, 0j, 300 + 1j, complex(NAN, 1), complex(INF, 0),
                  complex(0, INF), 1e10 + 1j], np.complex128)

    def fn(z: Any) -> tuple[Any, Any]:
        return z.astype(target), z.real.astype(target)
    with warnings.catch_warnings(record=True) as numpy_warned:
        warnings.simplefilter("always")
        want = quiet(fn, z)
        z.astype(target)
    with warnings.catch_warnings(record=True) as stax_warned:
        warnings.simplefilter("always")
        got = stax.jit(fn)(z)
    check(got, want)

    def complex_warnings(ws: list[Any]) -> bool:
        return any(issubclass(w.category, ComplexWarning) for w in ws)
    assert complex_warnings(stax_warned) == complex_warnings(numpy_warned)


# ---- reductions, scans, matmul -----------------------------------------------------------------

def reductions(z: Any) -> tuple[Any, ...]:
    return (z.sum(), z.sum(axis=0), np.sum(z, axis=1, keepdims=True), z.mean(), z.mean(axis=1),
            z.prod(axis=0), np.cumsum(z, axis=1), np.cumsum(z), z.var(), z.std(axis=0),
            np.abs(z).max(), z.any(), z.all(axis=1))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_reductions(dtype: str) -> None:
    z = crandom((6, 33), dtype)
    z[2, 5] = 0
    z[4, 7] = complex(NAN, 0)
    rtol = 1e-4 if dtype == "complex64" else 1e-11  # summation order differs (pairwise)
    check(stax.jit(reductions)(z), quiet(reductions, z), rtol)


def test_matmul_and_where() -> None:
    def fn(a: Any, b: Any, m: Any) -> tuple[Any, ...]:
        return a @ b, (a @ b) * 2j + 1, np.where(m, a @ b, 0j), a.T @ a.conj()
    a = crandom((4, 5), "complex128")
    b = crandom((5, 3), "complex128", seed=3)
    m = np.random.default_rng(4).random((4, 3)) < 0.5
    check(stax.jit(fn)(a, b, m), fn(a, b, m), 1e-12)


# ---- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["floor_divide", "remainder", "floor", "bitwise_and",
                                  "arctan2", "signbit"])
def test_undefined_for_complex(name: str) -> None:
    """Ops NumPy has no complex loop for raise NumPy's TypeError (tracing only)."""
    ufunc = getattr(np, name)
    args = [np.ones(3, np.complex64)] * ufunc.nin
    with pytest.raises(TypeError):
        ufunc(*args)
    with pytest.raises(TypeError):
        stax.jit(lambda *a: ufunc(*a), strict=True)(*args)


def test_clongdouble_refused() -> None:
    with pytest.raises(NotImplementedError, match="clongdouble|complex256"):
        stax.jit(lambda z: z + 1, strict=True)(np.ones(3, np.clongdouble))


# ---- programs ----------------------------------------------------------------------------------

def mandelbrot(c: Any, maxiter: int, horizon: float = 2.0) -> tuple[Any, Any]:
    """npbench mandelbrot1, with masks as np.where (the loop unrolls while tracing)."""
    z = np.zeros(c.shape, dtype=np.complex128)
    n = np.zeros(c.shape, dtype=np.int64)
    for it in range(maxiter):
        inside = np.less(abs(z), horizon)
        n = np.where(inside, it, n)
        z = np.where(inside, z ** 2 + c, z)
    n = np.where(n == maxiter - 1, 0, n)
    return z, n


def test_mandelbrot() -> None:
    x = np.linspace(-2.25, 0.75, 24)
    y = np.linspace(-1.25, 1.25, 17)
    c = x + y[:, None] * 1j
    got = quiet(stax.jit(mandelbrot), c, 12)
    want = quiet(mandelbrot, c, 12)
    check(got, want, 1e-9)  # diverged points grow fast: a few ulp of rounding, amplified


def contour_integral(ham: Any, points: Any) -> tuple[Any, Any]:
    """npbench contour_integral's arithmetic with the linear solve replaced by a product
    (the contour points unroll; each is a weak Python complex)."""
    p0 = np.zeros(ham.shape[1:], np.complex128)
    p1 = np.zeros(ham.shape[1:], np.complex128)
    slabs = ham.shape[0] - 1
    for z in points:
        tz = np.zeros(ham.shape[1:], np.complex128)
        for n in range(slabs + 1):
            tz += np.power(z, slabs / 2 - n) * ham[n]
        x = tz @ tz.conj().T
        if abs(z) < 1.0:
            x = -x
        p0 += x
        p1 += z * x
    return p0, p1


def test_contour_integral() -> None:
    ham = crandom((3, 6, 6), "complex128")
    points = [complex(np.cos(t), np.sin(t)) * r for t, r in zip(np.linspace(0, 6, 5),
                                                                (0.5, 1.5, 0.9, 2.0, 1.1),
                                                                strict=True)]
    check(stax.jit(lambda h: contour_integral(h, points))(ham), contour_integral(ham, points),
          1e-12)


def stockham_step(x: Any, half: int) -> Any:
    """One radix-2 Stockham butterfly stage written with slices and twiddle factors."""
    n = x.shape[0]
    w = np.exp(-2j * np.pi * np.arange(half) / n)
    a, b = x[:half], x[half:]
    return np.concatenate([a + b, (a - b) * w])


def test_stockham_like_fft() -> None:
    """log2(n) Stockham-style stages give NumPy's FFT up to a bit reversal."""
    def fft(x: Any) -> Any:
        n = x.shape[0]
        out = x
        size = n
        while size > 1:
            half = size // 2
            out = out.reshape(n // size, size)
            out = np.concatenate([stockham_step(row, half) for row in out])
            size = half
        return out
    x = crandom((16,), "complex128")
    got = stax.jit(fft)(x)
    want = fft(x)
    check(got, want, 1e-12)
    bits = np.array([int(f"{k:04b}"[::-1], 2) for k in range(16)])
    np.testing.assert_allclose(got[bits], np.fft.fft(x), rtol=1e-12, atol=1e-12)
