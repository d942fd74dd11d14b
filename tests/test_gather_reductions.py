"""[GATHER] Reductions over gathers (`(v * x[idx]).sum()`, issue 9) run as `omp simd` loops with
vector gathers: results against NumPy over dtypes, index dtypes, negative / out-of-range /
empty indices, strided operands, NaN in max/min, row gathers; each marked loop is vectorized."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, run_sanitized

import stax
from stax.backends.cpu.vecreport import remarks_available, vector_report
from stax.runtime.compiler import isa_level

RNG = np.random.default_rng(11)
N, M = 1003, 97  # not multiples of a vector width: the loops have tails


def idx(n: int = N, dtype: str = "int64", lo: int = -M, hi: int = M) -> np.ndarray:
    return RNG.integers(lo, hi, n).astype(dtype)


def table(dtype: str = "float64", m: int = M) -> np.ndarray:
    return (RNG.standard_normal(m) * 10).astype(dtype)


CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "dot_f64": (lambda v, x, i: (v * x[i]).sum(), (table("float64", N), table(), idx())),
    "sum_f32_i32idx": (lambda x, i: x[i].sum(), (table("float32"), idx(dtype="int32"))),
    "sum_i32_table": (lambda x, i: x[i].sum(), (table("int32"), idx())),
    "sum_i8_table": (lambda x, i: x[i].sum(), (table("int8"), idx(dtype="int16"))),
    "max_f64": (lambda x, i: x[i].max(), (table(), idx())),
    "min_f32_nan": (lambda x, i: x[i].min(), (np.where(np.arange(M) == 5, np.nan,
                                                        table("float32")).astype(np.float32),
                                             np.arange(N) % M)),
    "mean_strided": (lambda x, i: x[::2][i[::3]].mean(), (table(m=2 * M), idx(3 * N))),
    "rows_sum_axis1": (lambda X, i: X[i].sum(axis=1),
                       (RNG.standard_normal((M, 13)), idx(200))),
    "rows_sum_axis0": (lambda X, i: X[i].sum(axis=0),
                       (RNG.standard_normal((M, 13)), idx(200))),
    "transposed_table": (lambda X, i: X.T[i].sum(), (RNG.standard_normal((5, M)), idx())),
    "empty_idx": (lambda x, i: x[i].sum(), (table(), idx(0))),
    "uint8_idx_prod": (lambda x, i: np.prod(x[i] * 0 + 1.001), (table(), idx(dtype="uint8",
                                                                            lo=0, hi=M))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name: str) -> None:
    fn, args = CASES[name]
    assert_matches(stax.jit(fn)(*args), fn(*args))


@pytest.mark.parametrize("bad", [M, -M - 1, 10**12])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_out_of_range_raises_index_error(bad: int, dtype: str) -> None:
    if np.iinfo(dtype).max < bad:
        bad = np.iinfo(dtype).max
    x, v = table(), table("float64", N)
    i = idx(dtype=dtype)
    i[N // 2] = bad
    with pytest.raises(IndexError):
        (v * x[i]).sum()  # NumPy raises: so must Stax
    with pytest.raises(IndexError):
        stax.jit(lambda v, x, i: (v * x[i]).sum())(v, x, i)


@pytest.mark.skipif(not remarks_available() or isa_level() == "scalar",
                    reason="needs g++ remarks and a vector ISA level")
@pytest.mark.parametrize("name", ["dot_f64", "sum_i8_table", "min_f32_nan", "mean_strided",
                                  "rows_sum_axis1", "uint8_idx_prod"])
def test_gather_reduction_is_vectorized(name: str) -> None:
    """Marked where the table's items are 4 or 8 bytes (no vector gather of 1-byte items)."""
    fn, args = CASES[name]
    loops = vector_report(stax.explain(fn, *args).compilation.program.cpp, isa_level())
    assert any(lp.marked for lp in loops) == (name != "sum_i8_table"), loops
    assert all(lp.vectorized for lp in loops if lp.marked), loops


def test_runs_clean_under_sanitizers(tmp_path: Path) -> None:
    """Every case, and an out-of-range index, under AddressSanitizer + UBSan."""
    run_sanitized(f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, stax
from conftest import assert_matches
from test_gather_reductions import CASES
for fn, args in CASES.values():
    assert_matches(stax.jit(fn)(*args), fn(*args))
v, x, i = CASES["dot_f64"][1]
i = i.copy(); i[-1] = len(x)
try:
    stax.jit(lambda v, x, i: (v * x[i]).sum())(v, x, i)
except IndexError:
    print("sanitized ok")
""", tmp_path / "cache")
