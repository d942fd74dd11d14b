"""[FORD] Row tiles: a kernel whose row loops read an operand along its large-stride axis (a row
softmax or layernorm of a Fortran-ordered or transposed array) copies a block of rows of the
operand into a kernel-local tile first (`stax.tiling.plan.row_tiles`). Every result is compared
with NumPy: dtypes, partial blocks (1, 15, 17, 33 rows), rows not a multiple of the transposed
8x8 / 4x4 blocks, NaN/inf, Fortran, transposed and 3-d (swapped axes) inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layernorm(x: Any) -> Any:
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def rmsnorm(x: Any) -> Any:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)


def logsumexp(x: Any) -> Any:
    m = x.max(-1, keepdims=True)
    return m[..., 0] + np.log(np.exp(x - m).sum(-1))


def normalize(x: Any) -> Any:
    return x / x.sum(1, keepdims=True)


def _tol(dtype: str) -> dict[str, float]:  # sums in another order than NumPy's
    return {"rtol": 2e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12,
                                                                    "atol": 1e-14}


def _tiled(f: Any, x: np.ndarray) -> bool:
    """Row tiles, or [FROWS] the outer-reduction form a Fortran-ordered result takes (every
    access contiguous; tests/test_fortran_rows.py)."""
    return any(d.rule == "row_tiles" or p.form == "outer-reduction"
               for p in f.compile(x).program.plans for d in p.decisions)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [softmax, layernorm])
def test_rows_of_fortran_inputs(fn: Any, dtype: str) -> None:
    f = stax.jit(fn)
    for rows in (1, 15, 17, 33):
        x = np.asfortranarray(make_array((rows, 43), dtype, seed=rows))
        assert_matches(f(x), fn(x), **_tol(dtype))
        assert _tiled(f, x) == (rows > 1)  # one row is contiguous already


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_and_swapped_inputs(dtype: str) -> None:
    f = stax.jit(softmax)
    c = make_array((1024, 17), dtype, seed=3)  # x.T: rows of 1024 read with a stride of 17
    assert_matches(f(c.T), softmax(c.T), **_tol(dtype))
    assert _tiled(f, c.T)
    x3 = np.swapaxes(make_array((3, 40, 33), dtype, seed=4), 1, 2)  # 3 x 33 rows of 40
    assert_matches(f(x3), softmax(x3), **_tol(dtype))
    assert _tiled(f, x3) or any(p.form == "outer-reduction"  # (fused otherwise here)
                                for p in f.compile(x3).program.plans)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf_rows(dtype: str) -> None:
    f, g = stax.jit(softmax), stax.jit(layernorm)
    x = np.asfortranarray(make_array((33, 40), dtype, seed=9))
    x[2, 7] = np.nan
    x[5, 0] = np.inf
    x[6, 39] = -np.inf
    x[16, :] = -np.inf
    with np.errstate(all="ignore"):
        assert_matches(f(x), softmax(x), **_tol(dtype))
        assert_matches(g(x), layernorm(x), **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [rmsnorm, logsumexp, normalize])
def test_other_row_programs(fn: Any, dtype: str) -> None:
    f = stax.jit(fn)
    for x in (np.asfortranarray(make_array((33, 70), dtype, seed=1)),
              make_array((70, 17), dtype, seed=2).T):
        x = np.abs(x) + 0.5 if fn is normalize else x
        assert_matches(f(x), fn(x), **_tol(dtype))
