"""[RAGGED2] Segmented softmax (the fused chain kernel: max pass, exp-sum pass keeping exp,
division pass; each reduction's last partial vector one masked vector step) vs the interpreter
and NumPy row by row: empty rows at the start, in the middle and at the end, all rows empty,
one row far longer than the others, NaN/inf rows, float32/float64 values, int32/int64 row
lengths, chunk edges forced; and ISA levels without AVX-512 (the masked steps as blends, or
scalar code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax.nested as sn
from nested.helpers import as_ragged, run_at_isa
from stax.nested import kernels


def softmax(x: sn.Ragged) -> Any:
    """Softmax per row; the max as a reduce with -inf, so empty rows are allowed."""
    def row(r: Any) -> Any:
        e = np.exp(r - sn.reduce(np.maximum, -np.inf, r))
        return e / e.sum()
    return sn.map(row, x)


def softmax_max(x: sn.Ragged) -> Any:
    """The benchmark's form (benchmarks/nested.py): r.max(), which raises on an empty row."""
    def row(r: Any) -> Any:
        e = np.exp(r - r.max())
        return e / e.sum()
    return sn.map(row, x)


def softmax_numpy(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row by row in NumPy."""
    b = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = [values[p:q] for p, q in zip(b[:-1], b[1:], strict=True)]
    with np.errstate(invalid="ignore"):  # inf - inf in a row holding +inf
        out = [np.exp(r - r.max()) / np.exp(r - r.max()).sum() for r in rows if len(r)]
    return np.concatenate(out).astype(values.dtype) if out else values[:0].copy()


def cases(rng: np.random.Generator) -> list[np.ndarray]:
    """Row lengths: random (0..120, mean ~60) with empty rows at both ends and in the middle;
    all empty; no rows; one row of 20,000 among short and empty ones; rows of one element."""
    random = rng.integers(0, 121, size=400)
    random[:3] = random[-4:] = 0
    random[200:205] = 0
    huge = np.array([0, 3, 20_000, 0, 1, 7, 0])
    return [random, np.zeros(40, np.int64), np.zeros(0, np.int64), huge, np.ones(33, np.int64)]


def values_for(lengths: np.ndarray, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Values of scale 30 (exp over/underflows without the max), NaN and +-inf in some rows."""
    values = (rng.normal(size=int(lengths.sum())) * 30).astype(dtype)
    if len(values) > 50:
        values[[5, 17]] = np.nan
        values[30] = np.inf
        values[[40, 41]] = -np.inf
    return values


def tolerance(dtype: str) -> float:
    return 1e-5 if dtype == "float32" else 1e-12


@pytest.mark.parametrize(("dtype", "ldtype"), [("float64", "int64"), ("float32", "int32")])
def test_softmax_rows(monkeypatch: pytest.MonkeyPatch, dtype: str, ldtype: str) -> None:
    rng = np.random.default_rng(17)
    f = sn.jit(softmax)
    for chunks in (None, 1, 3):  # chunk edges between the rows
        monkeypatch.setattr(kernels, "CHUNKS", chunks)
        for lengths in cases(rng):
            lengths = lengths.astype(ldtype)
            values = values_for(lengths, dtype, rng)
            x = sn.Ragged(values, lengths)
            with np.errstate(invalid="ignore"):  # inf - inf in a row holding +inf
                got, interpreted = f(x), as_ragged(sn.interpret(softmax, x))
            assert got.values.dtype == np.dtype(dtype)
            assert_matches(got.lengths, x.lengths)
            assert_matches(got.values, softmax_numpy(values, lengths), rtol=tolerance(dtype),
                           atol=tolerance(dtype))
            assert_matches(got.values, interpreted.values, rtol=tolerance(dtype),
                           atol=tolerance(dtype))
    random = cases(rng)[0]
    x = sn.Ragged(values_for(random, dtype, rng), random)
    with np.errstate(invalid="ignore"):
        kinds = [k.kind for k in f.run(x)[1].kernels]
    assert kinds == ["fused segments"]  # the chain kernel is what ran on the random rows


def test_max_of_an_empty_row_raises() -> None:
    """r.max() of an empty row is NumPy's ValueError, compiled and interpreted; without empty
    rows the form gives the same values as the reduce form."""
    x = sn.Ragged(np.arange(6.0), np.array([2, 0, 4]))
    with pytest.raises(ValueError, match="zero-size array"):
        sn.jit(softmax_max)(x)
    with pytest.raises(ValueError, match="zero-size array"):
        sn.interpret(softmax_max, x)
    lengths = np.array([1, 5, 64, 9, 130, 2])
    values = np.random.default_rng(3).normal(size=int(lengths.sum()))
    y = sn.Ragged(values, lengths)
    assert_matches(sn.jit(softmax_max)(y).values, softmax_numpy(values, lengths), rtol=1e-12,
                   atol=1e-12)


ISA_SCRIPT = """
import numpy as np, stax.nested as sn
from stax.nested import kernels
from conftest import assert_matches
from nested.test_ragged_s17 import softmax, softmax_numpy, cases, values_for, tolerance
rng = np.random.default_rng(5)
f = sn.jit(softmax)
for dtype in ("float64", "float32"):
    for chunks in (None, 3):
        kernels.CHUNKS = chunks
        for lengths in cases(rng):
            values = values_for(lengths, dtype, rng)
            with np.errstate(invalid="ignore"):
                got = f(sn.Ragged(values, lengths)).values
            assert_matches(got, softmax_numpy(values, lengths), rtol=tolerance(dtype),
                           atol=tolerance(dtype))
print("softmax rows ok")
"""


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_softmax_without_avx512(isa: str, tmp_path: Path) -> None:
    """The masked last vector steps without AVX-512 (blends, or scalar code): same values."""
    assert "softmax rows ok" in run_at_isa(ISA_SCRIPT, isa, tmp_path)
