"""[RAGGED] Segmented float sums with no branch on segment lengths (`_tiled_sum` in
stax/backends/cpu/segmented.py): CSR SpMV and plain row sums vs the interpreter and NumPy,
over empty rows, all-empty inputs, one row longer than a tile and than a chunk, int32/int64
indices, float32/float64 values, chunk edges inside rows, and ISA levels without AVX-512."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax.nested as sn
from nested.helpers import run_at_isa
from stax.backends.cpu.segmented import SUM_TILE
from stax.nested import kernels


def spmv(cols: sn.Ragged, vals: sn.Ragged, x: np.ndarray) -> Any:
    return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                  cols, vals)


def row_sums(r: sn.Ragged) -> Any:
    return sn.map(lambda row: sn.reduce(np.add, 0.0, row * 2.0), r)


def _bounds(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def spmv_numpy(cols: np.ndarray, vals: np.ndarray, lengths: np.ndarray,
               x: np.ndarray) -> np.ndarray:
    """Row by row in NumPy (np.add.reduceat mishandles empty rows)."""
    b = _bounds(lengths)
    return np.array([(vals[p:q] * x[cols[p:q]]).sum() for p, q in zip(b[:-1], b[1:], strict=True)],
                    dtype=np.result_type(vals, x)).reshape(len(lengths))


def _lengths(rng: np.random.Generator) -> list[np.ndarray]:
    """Random lengths with empty rows at both ends; all empty; one row longer than a tile
    between short ones; one huge row alone; no rows."""
    random = rng.integers(0, 41, size=300)
    random[:3] = random[-4:] = 0
    huge = np.array([0, 5, 3 * SUM_TILE + 7, 0, 2, 17, 16, 15, 1, 0])
    return [random, np.zeros(50, np.int64), huge, np.array([5 * SUM_TILE + 3]),
            np.zeros(0, np.int64)]


def _tolerance(dtype: np.dtype, scale: np.ndarray) -> dict[str, float]:
    """float32 sums in another order differ by a few ulps of the sum of magnitudes."""
    if dtype == np.float32:
        return {"rtol": 1e-5, "atol": 1e-5 * float(scale.max(initial=1.0))}
    return {"rtol": 1e-12, "atol": 1e-12 * float(scale.max(initial=1.0))}


@pytest.mark.parametrize(("vdtype", "idtype"), [("float64", "int64"), ("float32", "int32"),
                                                ("float64", "int32"), ("float32", "int64")])
def test_spmv_forms(monkeypatch: pytest.MonkeyPatch, vdtype: str, idtype: str) -> None:
    rng = np.random.default_rng(16)
    f = sn.jit(spmv)
    x = rng.normal(size=97).astype(vdtype)
    for chunks in (None, 1, 3, 17):  # chunk edges fall inside rows (the cut segments)
        monkeypatch.setattr(kernels, "CHUNKS", chunks)
        for lengths in _lengths(rng):
            nnz = int(lengths.sum())
            cols = rng.integers(-97, 97, size=nnz).astype(idtype)  # negative: from the end
            vals = rng.normal(size=nnz).astype(vdtype)
            rc, rv = sn.Ragged(cols, lengths), sn.Ragged(vals, lengths)
            got = f(rc, rv, x)
            want = spmv_numpy(cols, vals, lengths, x)
            magnitude = spmv_numpy(cols, np.abs(vals), lengths, np.abs(x))
            assert_matches(got, want, **_tolerance(np.dtype(vdtype), magnitude))
            assert_matches(got, sn.interpret(spmv, rc, rv, x),
                           **_tolerance(np.dtype(vdtype), magnitude))


def test_row_sums_keep_nan_and_inf_in_their_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lanes past a segment's end are masked out, so a NaN or inf next to a row stays out of
    it; the form serves any float sum, not only SpMV."""
    monkeypatch.setattr(kernels, "CHUNKS", 4)
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 30, size=200)
    values = rng.normal(size=int(lengths.sum()))
    b = _bounds(lengths)
    values[b[10]:b[11]] = np.nan
    values[b[50]] = np.inf
    values[b[51] - 1] = -np.inf
    r = sn.Ragged(values, lengths)
    with np.errstate(invalid="ignore"):  # inf + -inf in row 50
        want = np.array([(values[p:q] * 2.0).sum() for p, q in zip(b[:-1], b[1:], strict=True)])
    got = sn.jit(row_sums)(r)
    assert_matches(got, want, rtol=1e-12, atol=1e-12)
    assert_matches(got, sn.interpret(row_sums, r), rtol=1e-12, atol=1e-12)


def test_form_is_chosen_only_for_float_sums() -> None:
    """explain shows the tiled form for a float sum; an integer sum, a sum with a nonzero
    initial value and a maximum keep the per-segment loop (and stay right)."""
    lengths = np.array([3, 0, 5, 1])
    values = np.arange(9.0)
    r = sn.Ragged(values, lengths)
    assert "tiled segmented sum" in str(sn.explain(row_sums, r))
    ri = sn.Ragged(np.arange(9), lengths)
    b = _bounds(lengths)
    for fn, arg, want in [
        (lambda x: sn.map(lambda row: sn.reduce(np.add, 0, row), x), ri,
         np.array([values[p:q].sum() for p, q in zip(b[:-1], b[1:], strict=True)], dtype=np.int64)),
        (lambda x: sn.map(lambda row: sn.reduce(np.add, 1.0, row), x), r,
         np.array([1.0 + values[p:q].sum() for p, q in zip(b[:-1], b[1:], strict=True)])),
        (lambda x: sn.map(lambda row: sn.reduce(np.maximum, -np.inf, row), x), r,
         np.array([values[p:q].max(initial=-np.inf) for p, q in zip(b[:-1], b[1:], strict=True)])),
    ]:
        assert "tiled segmented sum" not in str(sn.explain(fn, arg))
        assert_matches(sn.jit(fn)(arg), want)


@pytest.mark.parametrize("chunks", [None, 5])
def test_sums_of_per_segment_elements(monkeypatch: pytest.MonkeyPatch, chunks: int | None) -> None:
    """Elements that read their segment (a per-row weight, the index in the row) are not
    computed flat (the tiled form does not know each element's segment): still right."""
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 40, size=120)
    lengths[-3:] = 0
    values, w = rng.normal(size=int(lengths.sum())), rng.uniform(0.0, 2.0, size=120)
    b = _bounds(lengths)
    r = sn.Ragged(values, lengths)

    def weighted(r: sn.Ragged, w: np.ndarray) -> Any:
        return sn.map(lambda row, s: sn.reduce(np.add, 0.0, row * s), r, w)

    def inner(ns: np.ndarray, w: np.ndarray) -> Any:
        return sn.map(lambda n, s: sn.reduce(np.add, 0.0, sn.map(
            lambda i: np.sqrt(i * s + 1.0), sn.iota(n))), ns, w)

    for fn, args, want in [
        (weighted, (r, w), np.array([values[p:q].sum() * s for p, q, s
                                     in zip(b[:-1], b[1:], w, strict=True)])),
        (inner, (lengths, w), np.array([np.sqrt(np.arange(m) * s + 1.0).sum()
                                        for m, s in zip(lengths, w, strict=True)])),
    ]:
        got = sn.jit(fn)(*args)
        assert_matches(got, want, rtol=1e-12, atol=1e-12)
        assert_matches(got, sn.interpret(fn, *args), rtol=1e-12, atol=1e-12)


def test_spmv_index_out_of_range_raises() -> None:
    """The bounds check (a count summed in the same flat loop) still reports."""
    lengths = np.array([2, 0, 3])
    cols = np.array([0, 1, 2, 7, 1])
    rc, rv = sn.Ragged(cols, lengths), sn.Ragged(np.ones(5), lengths)
    with pytest.raises(IndexError):
        sn.jit(spmv)(rc, rv, np.ones(4))


ISA_SCRIPT = """
import numpy as np, stax.nested as sn
from stax.nested import kernels
from nested.test_ragged_s16 import spmv, spmv_numpy, _lengths
rng = np.random.default_rng(5)
f = sn.jit(spmv)
for vdtype in ("float64", "float32"):
    x = rng.normal(size=50).astype(vdtype)
    for chunks in (None, 3):
        kernels.CHUNKS = chunks
        for lengths in _lengths(rng):
            cols = rng.integers(0, 50, size=int(lengths.sum()))
            vals = rng.normal(size=len(cols)).astype(vdtype)
            got = f(sn.Ragged(cols, lengths), sn.Ragged(vals, lengths), x)
            want = spmv_numpy(cols, vals, lengths, x)
            scale = spmv_numpy(cols, np.abs(vals), lengths, np.abs(x))
            tol = 1e-5 if vdtype == "float32" else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale.max(initial=1.0))
print("tiled sums ok")
"""


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_spmv_without_avx512(isa: str, tmp_path: Path) -> None:
    """The form is written with GCC vector extensions: without AVX-512 (masked loads become
    blends, or scalar code) the results are the same."""
    assert "tiled sums ok" in run_at_isa(ISA_SCRIPT, isa, tmp_path)
