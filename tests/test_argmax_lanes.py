"""[H9, issue 9] argmax/argmin lanes (since CLIFF: vector registers, `stax_arg_block`): a NaN
sets a flag (a scalar pass then finds the first NaN), lanes start from the type's extreme and
are combined at the end. NumPy's rules:
the first position of the best value, the first NaN over everything, extremes of every dtype,
rows shorter than the lanes, tails, long rows reduced in chunks (also on threads)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def _args(x: Any) -> Any:
    return x.argmax(-1), x.argmin(-1), x[:, 3:20].argmax(-1), (x * 2).argmin(-1)


def _specials(dtype: str) -> np.ndarray:
    x = make_array((12, 75), dtype, seed=31, low=-3, high=3)  # many ties
    if dtype == "bool":
        x[0] = False
        x[1] = True
        return x
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    x[0] = info.min  # every element the lanes' starting value (argmax: lowest / -inf)
    x[1] = info.max
    x[2, 50] = info.max  # a single best past the first groups of lanes
    x[3, 74] = info.min  # in the tail
    if dtype.startswith("float"):
        x[0] = -np.inf
        x[1] = np.inf
        x[4, [60, 10]] = np.nan  # the first NaN wins, for argmax and argmin
        x[5, 74] = np.nan  # a NaN in the tail
        x[6, :] = np.nan
        x[7, 5] = -0.0  # -0.0 == 0.0: the first of them
        x[7, 6] = 0.0
        x[8, 9] = np.inf
        x[8, 11] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "int64", "bool"])
def test_lanes_keep_numpys_rules(dtype: str) -> None:
    x = _specials(dtype)
    with np.errstate(all="ignore"):
        want = _args(x)
    assert_matches(stax.jit(_args)(x), want)
    assert_matches(stax.jit(_args)(x.T.copy().T), want)  # Fortran order: strided rows


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_one_long_row_in_chunks_on_threads(dtype: str, always_parallel: Any) -> None:
    """Chunks of 4096 reduced by lanes, partials combined in order: ties across chunks go to
    the first chunk, a NaN in a later chunk still wins."""
    def fn(x: Any) -> Any:
        return x.argmax(), x.argmin(), x[:9000].argmax()

    x = make_array((20_011,), dtype, seed=32, low=-50, high=50)
    x[[100, 9000, 15000]] = 77  # tied maxima in three chunks
    assert_matches(stax.jit(fn, threads=2)(x), fn(x))
    if dtype == "float32":
        x[[12_000, 19_000]] = np.nan
        assert_matches(stax.jit(fn, threads=2)(x), fn(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64"])
def test_tree_of_four_rows_of_lanes(dtype: str) -> None:
    """[H9] Rows of several steps of 32 lanes (the form of H9; the vector-register form of
    CLIFF keeps the same rules): ties inside one lane (positions p, p + 32, p + 64, p + 96),
    across lanes and across steps go to the first position; a NaN anywhere wins; rows in
    whole steps, with a rest and a scalar tail."""
    for cols in (128, 256 + 32 + 5, 1024):
        x = make_array((10, cols), dtype, seed=33, low=0, high=4)  # many ties
        hi = np.iinfo(dtype).max if dtype.startswith(("int", "uint")) else 1e30
        x[1, [96, 64, 32, 0]] = hi  # one lane's four, tied
        x[2, [127, 97, 66]] = hi  # the later elements of a lane's four
        x[3, [cols - 1, 200 % cols]] = hi  # a step later and the tail
        x[4] = x[4, 0]  # a constant row: position 0
        if dtype.startswith("float"):
            x[5, [70, 40]] = np.nan  # the first NaN, in a later lane of an earlier tree slot
            x[6, cols - 1] = np.nan
            x[7] = -np.inf
            x[8, [3, 99]] = np.inf
        with np.errstate(all="ignore"):
            want = _args(x)
        assert_matches(stax.jit(_args)(x), want)
