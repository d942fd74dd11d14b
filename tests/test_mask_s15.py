"""Masked updates (issue 9, MASK): `x[m] = f(x[m])`, `y[m] = g(x[m], z[m])`, several arrays
updated under one mask inside a Python loop (npbench's mandelbrot1), `np.where(m, f(x), x)`.
Values vs NumPy computed here, over dtypes, dense/sparse/empty/all-true masks, strided and
transposed inputs, 0-d arrays; NaN/inf and division by zero in the unselected elements raise
no warning NumPy does not raise. And the mandelbrot kernel (two selects on one mask) gets a
vector hypot: g++'s jump threading used to leave it scalar (-fno-thread-jumps)."""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stax
from stax.runtime import compiler


def mandelbrot(c: Any, maxiter: int) -> tuple[Any, Any]:
    n = np.zeros(c.shape, dtype=np.int64)
    z = np.zeros(c.shape, dtype=c.dtype)
    for it in range(maxiter):
        inside = np.less(abs(z), 2.0)
        n[inside] = it
        z[inside] = z[inside] ** 2 + c[inside]
    n[n == maxiter - 1] = 0
    return z, n


def two_arrays(x: Any, y: Any, t: Any) -> tuple[Any, Any]:
    m = x < t
    y[m] = y[m] * 2 - x[m]
    x[m] = x[m] + 1
    return x, y


def shrinking(x: Any) -> Any:
    for _ in range(6):
        m = x < 40
        x[m] = x[m] * 3 + 1
    return x


def quiet(fn: Any, *args: Any) -> Any:
    """fn(*args) on copies, with every NumPy floating-point warning an error."""
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        return fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))


def check(fn: Any, *args: Any, exact: bool = True) -> None:
    want, got = quiet(fn, *args), quiet(stax.jit(fn), *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            low = w.dtype in (np.float32, np.complex64)
            np.testing.assert_allclose(g, w, rtol=1e-5 if low else 1e-12)


@pytest.mark.parametrize("dtype,maxiter", [("complex128", 30), ("complex64", 6)])
def test_mandelbrot_loop(dtype: str, maxiter: int) -> None:
    """complex64 for a few iterations only: NumPy's complex64 square and abs round otherwise
    than g++'s code in many last bits, and the iteration amplifies that (at the mask's edge
    an element escapes one iteration earlier)."""
    x = np.linspace(-1.75, 0.25, 37)
    y = np.linspace(-1.0, 1.0, 23)
    c = (x + y[:, None] * 1j).astype(dtype)
    check(mandelbrot, c, maxiter, exact=False)
    check(mandelbrot, c.T, maxiter, exact=False)  # transposed
    check(mandelbrot, c[::2, ::3], 12, exact=False)  # strided
    check(mandelbrot, c[:0], 5)  # empty


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int32",
                                   "int64"])
def test_masks_of_every_density(dtype: str) -> None:
    r = np.random.default_rng(1)
    x = (r.random((31, 17)) * 100).astype(dtype)
    y = (r.random((31, 17)) * 100 - 50).astype(dtype)
    for t in (0, 1, 50, 99, 101):  # empty, sparse, half, dense, all-true
        check(two_arrays, x, y, np.asarray(t).astype(dtype))
    check(two_arrays, x.T, y[::-1].T, np.asarray(50).astype(dtype))  # transposed, strided
    check(two_arrays, x[::3, 1::2], y[::3, 2::2], np.asarray(50).astype(dtype))


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32"])
def test_shrinking_mask_in_a_loop(dtype: str) -> None:
    x = np.random.default_rng(2).integers(-5, 60, 1000).astype(dtype)
    check(shrinking, x)
    check(shrinking, x[::7])


def test_unselected_elements_raise_nothing() -> None:
    """NumPy computes only the selected elements: zeros, NaN and inf outside the mask warn of
    nothing, in a loop or not, floats and integers."""
    def invert(x: Any) -> Any:
        m = x != 0
        x[m] = 1.0 / x[m]
        return x

    def int_div(a: Any, b: Any) -> Any:
        m = b != 0
        a[m] = a[m] // b[m] + a[m] % b[m]
        return a

    def scaled_loop(x: Any) -> Any:
        for k in range(4):
            m = np.isfinite(x) & (x > 0)
            x[m] = x[m] / (k + 1) + np.log(x[m])
        return x

    def where_log(x: Any) -> Any:  # NumPy computes every log: NaN where x <= 0, no warning
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x > 0, np.log(x), x)

    def exp_update(x: Any, y: Any) -> Any:  # exp(1e308) unselected: no overflow warning
        m = x < 700
        y[m] = np.exp(x[m]) * y[m] + np.sqrt(np.abs(x[m]))
        return y

    f = np.array([0.0, 3.0, -0.0, 5.0, 0.0, -2.0])
    check(invert, f)
    check(invert, f.astype(np.float32)[::2])
    a, b = np.arange(-6, 6), np.array([0, 3, 0, -2, 5, 0, 0, 7, -1, 0, 4, 0])
    check(int_div, a, b)
    check(int_div, a.astype(np.int32), b.astype(np.int32))
    g = np.array([np.nan, np.inf, -np.inf, -1.0, 0.0, 2.0, 7.5, 1e308])
    check(scaled_loop, g, exact=False)
    check(where_log, g, exact=False)
    check(exp_update, g, g[::-1], exact=False)


def test_zero_dimensional() -> None:
    def masked_0d(x: Any, t: Any) -> Any:
        return np.where(x < t, x * x + 1, x)

    for v in (0.5, 3.0, np.nan):
        check(masked_0d, np.asarray(v), np.asarray(1.0))
    check(masked_0d, np.asarray(2 + 1j), np.asarray(2.5))


def _vector_hypot(cpp: str, tmp: Path) -> bool:
    """Whether `cpp`, compiled with Stax's flags, calls a libmvec vector hypot."""
    src, lib = tmp / "k.cpp", tmp / "k.so"
    src.write_text(cpp)
    cxx = os.environ.get("CXX") or shutil.which("g++") or "c++"
    subprocess.run([cxx, *compiler.BASE_FLAGS, *compiler.ISA_FLAGS[compiler.isa_level()],
                    str(src), "-o", str(lib), *compiler.LINK_FLAGS],
                   check=True, capture_output=True)
    symbols = subprocess.run(["nm", "-D", str(lib)], check=True, capture_output=True,
                             text=True).stdout
    return any("_ZGV" in s and "hypot" in s for s in symbols.split())


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")
def test_two_selects_on_one_mask_keep_vector_hypot(tmp_path: Path) -> None:
    """mandelbrot1's loop body: the mask stored, then two selects on it. With jump threading
    g++ 12 made the whole loop scalar (a scalar hypot per element) though its remarks said
    vectorized; compared with one select, which always got the vector hypot."""
    def one(z: Any, c: Any) -> Any:
        return np.where(np.abs(z) < 2.0, z * z + c, z)

    def two(z: Any, c: Any, n: Any, k: Any) -> Any:
        inside = np.abs(z) < 2.0
        return inside, np.where(inside, k, n), np.where(inside, z * z + c, z)

    z = np.zeros(1000, np.complex128)
    if not _vector_hypot(stax.jit(one).compile(z, z).program.cpp, tmp_path):
        pytest.skip("no vector hypot here (ISA level, libmvec before glibc 2.35, compiler)")
    cpp = stax.jit(two).compile(z, z, np.zeros(1000, np.int64), np.int64(3)).program.cpp
    assert _vector_hypot(cpp, tmp_path)
