"""[ROWS, issue 9] argmax/argmin by two passes per chunk of 2 KiB (`stax_arg_block`): the
chunk's best value in vector accumulators, then its first position (four vectors a test), only
when the chunk beats the result so far; a NaN in a chunk: a scalar pass from the chunk's start.
Against NumPy at every ISA level: row lengths 1..70 and around the chunks, ties inside a chunk
and across chunks, -0.0/0.0, NaN before/after/in another chunk than the best, the extremes of
every dtype, strided and transposed rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax
from stax.runtime.compiler import ISA_LEVELS, isa_level

RUNNABLE = ISA_LEVELS[ISA_LEVELS.index(isa_level()):]
DTYPES = ["float32", "float64", "int32", "int64", "uint32"]


def _args(x: Any) -> Any:
    return x.argmax(-1), x.argmin(-1)


def _rows(n: int, dtype: str, seed: int) -> np.ndarray:
    """Rows of length n with many ties (values from a small range) and special rows."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0 if dtype.startswith("u") else -3, 4, size=(10, n)).astype(dtype)
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    x[0] = info.min  # every element the lanes' starting value
    x[1] = info.max
    x[2, n // 2] = info.max  # one best in the middle (argmax); the rest ties for argmin
    x[3, n - 1] = info.min  # in the last vector or the scalar tail
    if dtype.startswith("float"):
        x[4, n // 3] = np.nan  # a NaN wins over everything
        x[5, n - 1] = np.nan
        x[5, 0] = np.inf
        x[6] = np.nan if n % 2 else -np.inf
        x[7] = 0.0
        x[7, ::2] = -0.0  # -0.0 == 0.0: the first zero of either sign
    return x


@pytest.mark.parametrize("isa", RUNNABLE)
@pytest.mark.parametrize("dtype", DTYPES)
def test_row_lengths_around_the_vectors(dtype: str, isa: str) -> None:
    fn = stax.jit(_args, isa=isa, dynamic=True)  # one kernel for every length
    for n in [*range(1, 71), 127, 129, 255, 257, 511, 513, 1000]:
        x = _rows(n, dtype, seed=n)
        with np.errstate(invalid="ignore"):
            assert_matches(fn(x), _args(x))


@pytest.mark.parametrize("isa", RUNNABLE)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_ties_and_nans_across_chunks(dtype: str, isa: str) -> None:
    """Rows of three chunks and a tail (2 KiB chunks: 512 or 256 elements)."""
    chunk = 2048 // np.dtype(dtype).itemsize
    n = 3 * chunk + 37
    x = np.zeros((12, n), dtype)
    x[:] = np.arange(n, dtype=np.int64) % 7  # ties everywhere
    x[0, [5, chunk + 5, 2 * chunk + 5]] = 9  # the same best in every chunk: the first chunk's
    x[1, [2 * chunk + 60, 2 * chunk + 61]] = 9  # the best in the last chunk, after its first test
    x[2, [chunk + 300 % chunk, chunk - 1]] = 9  # the last element of the first chunk wins
    x[3, n - 1] = 9  # in the scalar tail
    x[4, [chunk + 3, chunk + 50, chunk + 51]] = [8, 9, 9]  # later better values, tied
    if dtype.startswith("float"):
        x[5, [3, chunk + 10]] = [9, np.nan]  # NaN after the best, in another chunk
        x[6, [chunk + 10, 2 * chunk + 3]] = [np.nan, 9]  # NaN before the best
        x[7, [2 * chunk - 1, 2 * chunk]] = [np.nan, np.nan]  # NaNs at a chunk's edge
        x[8, [n - 1, 7]] = [np.nan, np.inf]
        x[9, :] = -np.inf
        x[9, [chunk + 1, 2]] = [-0.0, 0.0]
    else:
        x[9, :] = np.iinfo(dtype).min
    x[10] = np.iinfo(np.int32).max if dtype != "float32" else np.finfo(dtype).max
    x[11, ::-1] = x[0]  # mirrored: the best near the end

    def both(y: Any) -> Any:  # contiguous rows and every other element backwards
        return (*_args(y), *_args(y[:, ::-2]))

    with np.errstate(invalid="ignore"):
        want = both(x)
        assert_matches(stax.jit(both, isa=isa)(x), want)
        assert_matches(stax.jit(both, isa=isa)(np.asfortranarray(x)), want)  # strided rows
