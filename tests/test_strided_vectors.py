"""[TORCH2] Loops reading every 2nd or 3rd element (`x[:, ::2]`, the windows of a max pooling
in NCHW) are vector loops: `simd_ok` lets loads of stride 2..4 into a forced `omp simd` loop
(g++ de-interleaves them with permutes) and NumPy's maximum/minimum are selects, not branches
(g++ left the batch norm + ReLU + pooling loop scalar). Values against NumPy: strides 2 and 3,
odd lengths, float16/32/64 and integers, NaN in the windows, -0.0 against 0.0."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax
from stax.backends.cpu.vecreport import vector_report
from stax.runtime.compiler import isa_level

DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "uint16")


def _array(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(-4, 4, shape).astype(dtype)
        x.flat[::7] = 0.0  # signed zeros and NaNs where windows compare them
        x.flat[3::7] = -0.0
        x.flat[5::11] = np.nan
        return x
    return rng.integers(-9, 10, shape).astype(dtype)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NumPy has NaN, and the sign of every zero."""
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


def pool(x: Any, k: int) -> Any:
    """Non-overlapping k x k max pooling over the last two axes (NCHW), as `stax.torch.pooling`
    writes it: the later value wins when larger or NaN."""
    best = x[:, :, ::k, ::k]
    for i in range(k):
        for j in range(k):
            if i or j:
                v = x[:, :, i::k, j::k]
                best = np.where((v > best) | np.isnan(v), v, best)
    return best


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("step", [2, 3])
def test_strided_reads(dtype: str, step: int) -> None:
    """Every `step`th element, from two offsets, over odd lengths (vector tails), of a C and
    a transposed input; maximum/minimum of the pairs keep NumPy's NaN and -0.0 choice."""
    def f(x: Any) -> Any:
        a, b = x[:, 0:step * 35:step], x[:, 1:step * 35:step]
        return a * 3 - b, np.maximum(a, b), np.minimum(b, a)

    x = _array((37, step * 35 + 2), dtype, seed=step)
    g = stax.jit(f)
    with np.errstate(all="ignore"):
        for arg in (x, np.ascontiguousarray(x.T).T):
            (got, *pairs), (want, *wants) = g(arg), f(arg)
            # a product and a difference: g++ may contract them into one rounding (FMA)
            assert_matches(got, want, rtol={"float16": 2e-3}.get(dtype),
                           atol=1e-2 if dtype == "float16" else 1e-6)
            for p, w in zip(pairs, wants, strict=True):
                _same(p, w)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("k", [2, 3])
def test_max_pool_windows(dtype: str, k: int) -> None:
    """Batch norm + ReLU + k x k max pooling fused (the CNN's kernel): NaN in windows,
    zeros of both signs (ReLU of negatives), 7 output columns (a vector tail)."""
    def f(x: Any, scale: Any, shift: Any) -> Any:
        return pool(np.maximum(x * scale + shift, 0), k)

    x = _array((2, 3, 5 * k, 7 * k), dtype, seed=k)
    scale = np.array([1.0, -0.5, 2.0], dtype).reshape(3, 1, 1)
    shift = np.array([0.0, 0.25, -1.0], dtype).reshape(3, 1, 1)
    _same(stax.jit(f)(x, scale, shift), f(x, scale, shift))
    _same(stax.jit(lambda x: pool(x, k))(x), pool(x, k))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64"])
@pytest.mark.parametrize("step", [2, 3, 4])
def test_strided_reductions(dtype: str, step: int) -> None:
    """Reductions along strided rows (now forced vector loops too): argmax/argmin keep
    NumPy's first position and first NaN, max propagates NaN (a row of NaN), sums match."""
    x = _array((9, 4 * 301 + 3), dtype, seed=step)
    if x.dtype.kind == "f":
        x[4, ::step] = np.nan
    for f in (lambda x: x[:, ::step].argmax(1), lambda x: x[:, 1::step].argmin(1),
              lambda x: x[:, ::step].max(1), lambda x: x[:, 2::step].min(1)):
        _same(stax.jit(f)(x), f(x))
    for f in (lambda x: x[:, ::step].sum(1), lambda x: x[::step].sum(0)):
        assert_matches(stax.jit(f)(x), f(x), rtol=1e-5 if dtype == "float32" else None)


def test_strided_loops_are_vectorized() -> None:
    """The pooling kernel and a stride-3 read are marked `omp simd` and g++ vectorizes them."""
    if isa_level() == "scalar":
        pytest.skip("this machine runs only the scalar ISA level")
    x = _array((4, 8, 16, 16), "float32", seed=1)
    y = _array((37, 105), "float64", seed=2)
    for f, arg in ((lambda x: pool(np.maximum(x * 0.5 - 0.1, 0), 2), x),
                   (lambda y: y[:, ::3] + y[:, 2::3], y)):
        loops = vector_report(stax.jit(f).compile(arg).program.cpp, isa_level())
        assert loops and all(loop.marked and loop.vectorized for loop in loops), \
            [(loop.code, loop.reason) for loop in loops]


@pytest.mark.parametrize("isa", [None, "scalar"])  # [REVIEW] std::fmax's ties at -O1/scalar
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_ties_and_nans_of_every_pair(dtype: str, isa: str | None) -> None:
    """[FUZZ] maximum/minimum/fmax/fmin of every pair of -0.0, 0.0, NaN, +-inf and 1, alone and
    read at stride 2: of two equal values NumPy's float16 loops keep the first, its float32/64
    loops the second."""
    def f(x: Any) -> Any:
        a, b = x[::2], x[1::2]
        return np.maximum(a, b), np.minimum(a, b), np.fmax(a, b), np.fmin(a, b)

    specials = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.0], dtype)
    pairs = np.stack([np.repeat(specials, 6), np.tile(specials, 6)], 1).ravel()
    for got, want in zip(stax.jit(f, isa=isa)(pairs), f(pairs), strict=True):
        _same(got, want)
