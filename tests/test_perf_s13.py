"""[PERF] Thirteenth wave, issue 9: the compiler changes behind benchmarks/cliffs.py, each
checked against NumPy over dtypes, strides, transposed inputs, NaN and tails."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def _strided_columns(x: Any) -> Any:
    """Reductions along axis 0 of views whose adjacent columns are 2, 3, -1 and 9 apart."""
    a, b, c, d = x[::2, 1::3], x[1::3, ::2], x[:, ::-1], x[:, ::9]
    return (a.max(0), a.sum(0), b.min(0), (b * 2 + 1).mean(0), b.var(0), c.max(0),
            c.prod(0), d.sum(0), (a > 0).any(0), (b > -40).all(0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_column_reductions_of_short_strided_views(dtype: str) -> None:
    """The outer-reduction form reads a block of outputs a short stride apart (one row's
    cache lines per pass); columns past a block and rows past a group of four are tails."""
    f = stax.jit(_strided_columns)
    for shape in ((37, 101), (8, 3), (2, 20)):
        x = make_array(shape, dtype, seed=sum(shape), low=-3, high=3)
        if dtype != "int32":
            x[shape[0] // 2, ::7] = np.nan
        assert_matches(f(x), _strided_columns(x), rtol=1e-5 if dtype == "float32" else 1e-12)
        xt = make_array(shape[::-1], dtype, seed=3, low=-3, high=3).T  # transposed input
        assert_matches(f(xt), _strided_columns(xt), rtol=1e-5 if dtype == "float32" else 1e-12)
    x = make_array((64, 300), dtype, seed=5, low=-3, high=3)
    plans = stax.explain(lambda v: v[::2, 1::3].max(0), x).compilation.program.plans
    assert any(p.form == "outer-reduction" for p in plans)


def _exp_normalize_axis0(x: Any) -> Any:
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0), (e * 2).sum(axis=1), np.sqrt(np.abs(x) + 1).T.sum(0)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # a column of one -inf
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_intermediates_of_transposed_inputs(dtype: str) -> None:
    """An elementwise value with two consumers of a transposed or Fortran-ordered input (the
    exp-normalize along axis 0 of cliffs.py): the results (values and layouts) are NumPy's, with
    NaN, -inf and odd sizes."""
    f = stax.jit(_exp_normalize_axis0)
    for shape in ((33, 70), (5, 1), (1, 9)):
        base = make_array(shape[::-1], dtype, seed=shape[0], low=-4, high=4)
        base[0, 0] = np.nan
        base[-1, -1] = -np.inf
        for x in (base.T, np.asfortranarray(base), base, base.T[::2]):
            got, want = f(x), _exp_normalize_axis0(x)
            assert_matches(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)
            assert got[0].flags.f_contiguous == want[0].flags.f_contiguous
