"""Sparse masked updates (issue 9, SPMASK): a costly masked expression (`x[m] = x[m] ** 1.5`,
`y[m] = np.exp(x[m])`, `np.where(m, np.sqrt(x), x)`) runs its costly side only in blocks of the
vector loop where the mask selects an element (the plan's `mask_skip`). Values vs NumPy computed
here over dtypes, masks from empty to all-true, strided and transposed inputs, 0-d arrays, at
each ISA level; NaN/inf and integer division by zero outside the mask raise no warning NumPy
does not raise (and the warnings NumPy raises are raised); stax.explain shows the decisions."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import stax
from stax.runtime.compiler import ISA_LEVELS, isa_level

DENSITIES = (0.0, 0.002, 0.1, 0.5, 1.01)  # empty, sparse, ..., all-true (r < 1.01)


def updates(x: Any, y: Any, r: Any, d: Any) -> tuple[Any, Any, Any]:
    m = r < d
    x[m] = x[m] ** 1.5
    y[m] = np.exp(x[m]) * y[m]
    return x, y, np.where(r < d, np.arctan2(y, x), y)


def quiet(fn: Any, *args: Any) -> Any:
    """fn(*args) on copies, with every NumPy floating-point warning an error; with an all-true
    mask (the last argument above 1) NaN and negatives are selected: NumPy warns there, Stax
    raises no float warnings (stax.ops.FLAGS), so none are checked."""
    with warnings.catch_warnings(), np.errstate(
            all="ignore" if isinstance(args[-1], float) and args[-1] > 1 else "warn"):
        warnings.simplefilter("error")
        return fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))


def same(got: Any, want: Any) -> None:
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            low = w.dtype in (np.float32, np.complex64)
            np.testing.assert_allclose(g, w, rtol=2e-6 if low else 1e-13, equal_nan=True)


def inputs(shape: tuple[int, ...], dtype: str, seed: int = 0) -> tuple[Any, Any, Any]:
    """x, y and the mask's source r; outside small masks x holds NaN, inf and negatives (whose
    1.5th power is NaN, with a warning where NumPy computes it)."""
    rng = np.random.default_rng(seed)
    x, y, r = (rng.random(shape) + 0.5).astype(dtype), rng.random(shape).astype(dtype), \
        rng.random(shape)
    outside = r >= 0.6
    x[outside] = np.where(rng.random(shape) < 0.5, -3.0, np.nan)[outside]
    x.flat[np.flatnonzero(outside.ravel())[:3]] = np.inf
    return x, y, r


@pytest.mark.parametrize("isa", ISA_LEVELS)
def test_sparse_masks_at_each_isa(isa: str) -> None:
    """float64 contiguous (1001 elements: a ragged last block), float32 transposed and strided:
    every density, at each ISA level this CPU runs."""
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"this CPU does not run {isa}")
    f = stax.jit(updates, isa=isa)
    x, y, r = inputs((1001,), "float64")
    xt, yt, rt = inputs((40, 70), "float32", 1)
    for d in DENSITIES:
        same(quiet(f, x, y, r, d), quiet(updates, x, y, r, d))
        same(quiet(f, xt.T, yt.T, rt.T, d), quiet(updates, xt.T, yt.T, rt.T, d))
        same(quiet(f, xt[::2, ::3], yt[::2, ::3], rt[::2, ::3], d),
             quiet(updates, xt[::2, ::3], yt[::2, ::3], rt[::2, ::3], d))


def complex_and_ints(z: Any, a: Any, b: Any, r: Any, d: Any) -> tuple[Any, Any, Any]:
    m = r < d
    z[m] = z[m] / (z[m] + 2.0)  # complex division: costly, kept lazy
    a[m] = np.sqrt(b[m] * 3.0)  # float into int: cast under the mask
    return z, a, np.where(m, np.sqrt(np.abs(b)), 0.5)


def test_complex_and_integer_updates() -> None:
    rng = np.random.default_rng(2)
    n = 777
    z = (rng.random(n) + 1j * rng.random(n)).astype(np.complex128)
    z[::5] = -2.0  # a zero divisor outside most masks: inf/NaN, no warning where computed
    a = rng.integers(-50, 50, n)
    b = rng.random(n) * 10
    r = rng.random(n)
    f = stax.jit(complex_and_ints)
    for d in DENSITIES:
        m = r < d
        zd = np.where(m & (z == -2.0), 1.0 + 0j, z)  # no zero divisor inside the mask
        bd = np.where(m, b, -1.0)  # sqrt of a negative outside the mask: NaN, into an int
        same(quiet(f, zd, a, bd, r, d), quiet(complex_and_ints, zd, a, bd, r, d))
        for cast in (np.complex64, np.int32):  # other widths: other vector lanes per block
            args = (zd.astype(np.complex64), a.astype(cast), bd, r, d) if cast is np.complex64 \
                else (zd, a.astype(cast), bd.astype(np.float32), r, d)
            same(quiet(f, *args), quiet(complex_and_ints, *args))


def selected_division(a: Any, b: Any, m: Any) -> Any:
    q = a.copy()
    q[m] = q[m] // b[m]  # NumPy divides only the selection: no warning from outside
    return q


def where_division(a: Any, b: Any, m: Any) -> Any:
    return np.where(m, np.sqrt(a) + a // b, 0.0)  # NumPy divides everywhere: warns


def test_integer_division_by_zero_outside_the_mask() -> None:
    """No warning where NumPy divides only the selection; where it divides everywhere (and
    warns), the division is not skipped: Stax warns too (no mask_skip for it)."""
    a = np.arange(1, 201, dtype=np.int64)
    b = np.where(a % 3 == 0, 0, 7).astype(np.int64)
    m = b != 0
    same(quiet(stax.jit(selected_division), a, b, m), quiet(selected_division, a, b, m))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        want = where_division(a, b, m)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        got = stax.jit(where_division)(a, b, m)
    same(got, want)
    assert "mask_skip:" not in str(stax.explain(where_division, a, b, m))


def shrinking(x: Any) -> Any:
    for _ in range(5):
        m = x < 0.6
        x[m] = np.sqrt(x[m]) * 0.5 + np.log1p(x[m])
    return x


def test_inside_a_python_loop() -> None:
    x = np.random.default_rng(3).random(3000) * 0.7
    x[::7] = np.nan
    same(quiet(stax.jit(shrinking), x), quiet(shrinking, x))
    same(quiet(stax.jit(shrinking), x[:0]), quiet(shrinking, x[:0]))


def test_zero_d() -> None:
    def fn(x: Any, r: Any, d: Any) -> Any:
        return np.where(r < d, np.exp(x), x)

    f = stax.jit(fn)
    for x, r in ((np.array(2.0), np.array(0.3)), (np.array(-np.inf), np.array(0.9))):
        for d in (0.0, 0.5, 1.0):
            same(quiet(f, x, r, d), quiet(fn, x, r, d))


def test_explain_shows_the_decisions() -> None:
    """The plan's mask_skip (with the costly op and the block), the frontend's whole-array
    where and a gathered selection (complex exp: a scalar glibc function), and the kernels
    still vectorized."""
    x, y, r = inputs((1000,), "float64")
    text = str(stax.explain(updates, x, y, r, 0.01))
    assert re.search(r"mask_skip: arctan2, exp, power computed only in blocks of \d+ elements",
                     text)
    masked = text[text.index("== Masked selections"):text.index("== Error modes")]
    assert masked.count("as where(mask, f(a), a) over the whole array") == 2
    assert "marked `omp simd` and left scalar by g++: 0" in text

    def cexp(z: Any, r: Any) -> Any:
        m = r < 0.1
        z[m] = np.exp(z[m])
        return z

    text = str(stax.explain(cexp, x + 1j * y, r))
    assert "x[mask] gathered" in text and "np.exp on complex is a scalar glibc function" in text
    assert "mask_skip:" not in text

    def cheap(x: Any, r: Any) -> Any:  # a cheap masked expression stays one select
        m = r < 0.1
        x[m] = x[m] * 2.0 - 1.0
        return x

    assert "mask_skip:" not in str(stax.explain(cheap, x, r))


def test_generic_sizes_and_threads() -> None:
    """A shape-generic kernel (run-time bounds, a ragged last block) and a parallel one (the
    blocks inside each thread's chunk)."""
    x, y, r = inputs((200003,), "float64", 4)
    generic = stax.jit(updates, dynamic=True)
    for n, d in ((200003, 0.01), (1001, 0.002), (77, 0.5)):
        args = (x[:n], y[:n], r[:n], d)
        same(quiet(generic, *args), quiet(updates, *args))
    same(quiet(stax.jit(updates, threads=2), x, y, r, 0.01), quiet(updates, x, y, r, 0.01))
