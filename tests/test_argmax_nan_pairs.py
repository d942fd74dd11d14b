"""[CLIFF, issue 9] argmax/argmin with accumulators in vector registers (`stax_arg_block`):
four (best value, step) vectors per row, a NaN test per pair of vectors, the lanes combined at
the end. Every slot of a step, the tail, ties across slots, lanes, steps and blocks, -0.0,
the extremes of every dtype, narrow dtypes (widened in a block buffer), values computed by an
expression, strided and transposed rows: all against NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array, run_sanitized

import stax
from stax.backends.cpu.cpp import ARG_BLOCK
from stax.runtime.compiler import ISA_LEVELS, isa_level

VECTOR_BYTES = 64  # the widest level's vector (narrower levels take more steps: also covered)


def _args(x: Any) -> Any:
    return x.argmax(-1), x.argmin(-1)


def _step(dtype: str) -> int:
    """Elements of one step of the vector loop: four vectors of the (widened) values."""
    return 4 * VECTOR_BYTES // max(np.dtype(dtype).itemsize, 4)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_nan_in_every_slot_of_a_step(dtype: str) -> None:
    step = _step(dtype)
    lanes = step // 4
    cols = 2 * step + 5  # two whole steps and a tail
    positions = [k * lanes + 3 for k in range(4)] + [step + 1, cols - 1]
    x = make_array((len(positions) + 3, cols), dtype, seed=40)
    for row, p in enumerate(positions):
        x[row, p] = np.nan
    x[-3, [positions[1], positions[0] + step]] = np.nan  # the first one wins
    x[-2, :] = x[-2, 0]  # ties: the first position
    x[-1, [5, 6]] = (-0.0, 0.0)
    x[-1, 7:] = -1.0
    x[-1, :5] = -2.0  # -0.0 == 0.0 is the maximum: the first of them
    assert_matches(stax.jit(_args, threads=1)(x), _args(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64", "uint64"])
def test_ties_across_slots_lanes_and_steps(dtype: str) -> None:
    step = _step(dtype)
    lanes = step // 4
    for cols in (step, 3 * step + lanes + 7, 1000):
        x = make_array((9, cols), dtype, seed=41, low=0, high=4)  # many ties
        kind = np.dtype(dtype).kind
        hi = np.iinfo(dtype).max if kind in "iu" else np.inf
        lo = np.iinfo(dtype).min if kind in "iu" else -np.inf
        x[1, [3 * lanes, 2 * lanes, lanes, 0]] = hi  # one lane, all four slots
        x[2, [step - 1, 2 * lanes + 1]] = hi  # later slots and lanes of one step
        x[3, [cols - 1, (step + 2) % cols]] = hi  # a later step and the tail
        x[4] = hi  # a constant row of the extreme argmin starts from
        x[5] = lo  # ... and argmax
        x[6, :] = 2
        x[6, cols - 1] = lo  # the least only in the tail
        assert_matches(stax.jit(_args, threads=1)(x), _args(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_infinities_before_the_finite_extremes(dtype: str) -> None:
    """[REVIEW] A lane that never beat the accumulators' start value reported it: with the
    finite extremes (finfo.min/max) as start, -inf before finfo.min gave argmax 0, not 1."""
    info, step = np.finfo(dtype), _step(dtype)
    for cols in (step, 3 * step + 5, ARG_BLOCK + 300):
        x = np.full((6, cols), info.min, dtype)
        x[:, 0] = -np.inf  # argmax: the first finfo.min, argmin: 0
        x[1, cols - 2] = info.max  # argmin over +inf then finfo.max below
        x[2] = np.where(np.arange(cols) % 3 == 0, -np.inf, info.min)
        x[3] = -np.inf  # all -inf: argmax 0
        x[4, : cols - 1] = np.inf
        x[4, cols - 1] = info.max  # argmin: the last
        x[5, : cols // 2] = -np.inf
        assert_matches(stax.jit(_args, threads=1)(x), _args(x))
        assert_matches(stax.jit(_args, threads=1)(-x), _args(-x))
        whole = stax.jit(lambda a: (a.argmax(), a.argmin()), threads=1)
        assert_matches(whole(x[5]), (x[5].argmax(), x[5].argmin()))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "float16"])
def test_narrow_values_widened_in_blocks(dtype: str) -> None:
    """Narrow values go through the block buffer: rows longer than a block, the best value
    in the second block, ties across blocks, the extremes of the dtype."""
    cols = ARG_BLOCK + 300
    x = make_array((6, cols), dtype, seed=42, low=-3, high=3)
    if dtype == "bool":
        x[0] = False
        x[1, ARG_BLOCK + 5] = True
        x[1, :ARG_BLOCK + 5] = False
    else:
        info = np.finfo(dtype) if dtype == "float16" else np.iinfo(dtype)
        x[0] = info.min
        x[1, [ARG_BLOCK + 5, ARG_BLOCK + 200]] = info.max  # the second block, tied
        x[2, [ARG_BLOCK - 1, ARG_BLOCK]] = info.min  # the last of one block, the next's first
        if dtype == "float16":
            x[3, [ARG_BLOCK + 7, 20]] = np.nan
            x[4, cols - 1] = np.nan
    assert_matches(stax.jit(_args, threads=1)(x), _args(x))


def test_values_of_an_expression_strided_and_transposed() -> None:
    """Values computed in the loop (the block buffer), strided rows and columns of a
    transposed array, a NaN made by the expression (0 * inf)."""
    def fn(x: Any, y: Any) -> Any:
        d = np.abs(x - y)
        return d.argmax(-1), (x * y).argmin(-1), x[:, ::3].argmax(-1), x.T.argmin(-1), \
            x[::2, 5:].argmax(-1)

    rng = np.random.default_rng(43)
    for shape in ((7, 1500), (300, 257)):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.standard_normal(shape).astype(np.float32)
        x[1, 100] = 0.0
        y[1, 100] = np.inf  # x * y is NaN there
        x[2, :] = 1.0
        with np.errstate(all="ignore"):
            want = fn(x, y)
            assert_matches(stax.jit(fn, threads=1)(x, y), want)
            assert_matches(stax.jit(fn, threads=1)(np.asfortranarray(x), y), want)


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
def test_every_vector_width(isa: str) -> None:
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"this CPU lacks {isa}")
    x = make_array((5, 777), "float64", seed=44)
    x[1, [700, 650]] = np.nan
    x[2, [3, 600]] = 9.0
    x[3] = -np.inf
    assert_matches(stax.jit(_args, isa=isa, threads=1)(x), _args(x))


def test_plain_rows_in_place_expressions_in_blocks() -> None:
    """A contiguous row is compared in place by the explicit vector code; an expression's
    values are first computed by an `omp simd` loop (vectorized: tests/test_vectorization.py)
    into a block, as are narrow values (widened)."""
    def kernels(fn: Any, a: np.ndarray) -> str:
        cpp = stax.jit(fn).compile(a).program.cpp
        return cpp[cpp.index('extern "C" void'):]  # not the runtime header

    x = make_array((3, 100), "float32", seed=45)
    plain = kernels(lambda a: a.argmax(-1), x)
    assert "stax_arg_block<float, true>(&" in plain and "omp simd" not in plain
    expr = kernels(lambda a: (a * a).argmin(-1), x)
    assert "stax_arg_block<float, false>(acc_" in expr and "omp simd" in expr
    b = make_array((3, 100), "int8", seed=45)
    assert "stax_arg_block<int32_t, true>(acc_" in kernels(lambda a: a.argmax(-1), b)


SANITIZED = textwrap.dedent("""
    import numpy as np, stax
    rng = np.random.default_rng(0)
    fns = [lambda a: (a.argmax(-1), a.argmin(-1)), lambda a: (a * 2).argmax(-1),
           lambda a: a[:, ::2].argmin(-1), lambda a: a.T.argmax(-1), lambda a: a.argmax()]
    for dtype in ("float32", "float64", "int8", "float16", "uint64"):
        for cols in (1, 5, 63, 64, 65, 257, 1025, 2049):
            x = (rng.standard_normal((3, cols)) * 9).astype(dtype)
            if dtype.startswith("float"):
                x[1, cols // 2] = np.nan
            for fn in fns:
                got, want = stax.jit(fn)(x), fn(x)
                assert all(np.array_equal(g, w) for g, w in zip(got, want)) if isinstance(
                    want, tuple) else np.array_equal(got, want), (dtype, cols)
    print("sanitized ok")
""")


def test_clean_under_sanitizers(tmp_path: Path) -> None:
    """Both forms under AddressSanitizer + UBSan: rows shorter than a vector, whole steps and
    tails, blocks, strided and transposed values."""
    run_sanitized(SANITIZED, tmp_path / "cache")
