"""[FROWS] Row programs (softmax, layernorm, rmsnorm, logsumexp) of a Fortran-ordered input with
a Fortran-ordered result run in the outer-reduction form: vector lanes over a block of rows,
loops over the columns, so every load and store is contiguous; values the rows keep between
their reductions (a softmax's `exp`) live in thread-local rows of the block
(`stax.tiling.plan.local_rows`). Every result is compared with NumPy: f16/f32/f64, partial
blocks (1, 15, 17, 33 rows; 70 rows of 4096 in blocks of at most 64), NaN/inf, NumPy's strides."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array
from test_row_tiles import layernorm, logsumexp, rmsnorm, softmax

import stax

TOL = {"float16": {"rtol": 5e-3, "atol": 1e-3}, "float32": {"rtol": 2e-5, "atol": 1e-6},
       "float64": {"rtol": 1e-12, "atol": 1e-14}}


def _decisions(f: Any, *args: np.ndarray) -> dict[str, Any]:
    return {d.rule: d for p in f.compile(*args).program.plans for d in p.decisions}


def _check(f: Any, fn: Any, x: np.ndarray, dtype: str) -> None:
    with np.errstate(all="ignore"):
        got, want = f(x), fn(x)
    assert_matches(got, want, **TOL[dtype])
    assert got.strides == want.strides


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("fn", [softmax, layernorm, rmsnorm, logsumexp])
def test_rows_of_fortran_inputs_outer_form(fn: Any, dtype: str) -> None:
    f = stax.jit(fn)
    for rows in (1, 15, 17, 33):
        x = np.asfortranarray(make_array((rows, 43), dtype, seed=rows))
        _check(f, fn, x, dtype)
        if rows > 1 and dtype != "float16":
            forms = {p.form for p in f.compile(x).program.plans}
            assert "outer-reduction" in forms
            assert "row_tiles" not in _decisions(f, x)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_softmax_keeps_exp_rows_in_blocks(dtype: str) -> None:
    f = stax.jit(softmax)
    x = np.asfortranarray(make_array((33, 43), dtype, seed=5))
    _check(f, softmax, x, dtype)
    if dtype != "float16":
        assert "local_rows" in _decisions(f, x)
    # 70 rows of 4096: more rows than a block of thread-local rows holds (a partial block)
    y = np.asfortranarray(make_array((70, 4096), dtype, seed=6))
    _check(f, softmax, y, dtype)
    if dtype == "float64":
        assert 16 <= _decisions(f, y)["local_rows"].value <= 64  # 2 MiB of float64 rows


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_and_inf_rows(dtype: str) -> None:
    x = np.asfortranarray(make_array((33, 40), dtype, seed=9))
    x[2, 7] = np.nan
    x[5, 0] = np.inf
    x[6, 39] = -np.inf
    x[16, :] = -np.inf
    x[20, 3] = np.inf
    x[20, 9] = np.inf
    for fn in (softmax, layernorm, rmsnorm, logsumexp):
        _check(stax.jit(fn), fn, x, dtype)


def test_c_ordered_result_keeps_row_tiles() -> None:
    """A C-ordered result (the Fortran input added to a C-ordered one) is stored along the
    rows: the outer form would store with a stride, so the rows take row tiles."""
    def shifted(x: Any, c: Any) -> Any:
        return softmax(x) + c

    f = stax.jit(shifted)
    x = np.asfortranarray(make_array((33, 43), "float32", seed=1))
    c = make_array((33, 43), "float32", seed=2)
    assert_matches(f(x, c), shifted(x, c), **TOL["float32"])
    decisions = _decisions(f, x, c)
    assert "local_rows" not in decisions and "row_tiles" in decisions
