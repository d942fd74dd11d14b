"""The segment loops of issue 12's irregular workloads: CSR SpMV (a gather reduced per row,
its streamed inputs prefetched) and the closed-form sum of an affine element over an iota,
compared with NumPy over rows of 0, 1, 2, 17 and 10^5 elements."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from stax.nested import kernels

LENGTHS = np.array([0, 1, 2, 17, 0, 100_000, 1, 17, 2, 0, 300], dtype=np.int64)


def spmv(cols: Any, vals: Any, x: Any) -> Any:
    return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                  cols, vals)


def spmv_numpy(cols: np.ndarray, vals: np.ndarray, lengths: np.ndarray,
               x: np.ndarray) -> np.ndarray:
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return np.array([np.sum(vals[a:b] * x[cols[a:b]])
                     for a, b in zip(starts[:-1], starts[1:], strict=True)])


@pytest.mark.parametrize("chunks", [None, 7])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_spmv_rows_of_every_length(monkeypatch: pytest.MonkeyPatch, chunks: int | None,
                                   dtype: type) -> None:
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    rng = np.random.default_rng(1)
    nnz, ncols = int(LENGTHS.sum()), 5000
    cols = rng.integers(-ncols, ncols, size=nnz)  # negative indices wrap, as in NumPy
    vals = rng.normal(size=nnz).astype(dtype)
    x = rng.normal(size=ncols).astype(dtype)
    f = sn.jit(spmv)
    want = spmv_numpy(cols, vals, LENGTHS, x)
    for _ in range(2):  # the call that flattens and the replay
        got = f(sn.Ragged(cols, LENGTHS), sn.Ragged(vals, LENGTHS), x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=1e-3 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("bad", [5000, -5001, 10**12])
def test_spmv_index_out_of_bounds(bad: int) -> None:
    rng = np.random.default_rng(2)
    nnz = int(LENGTHS.sum())
    cols = rng.integers(0, 5000, size=nnz)
    cols[nnz - 150] = bad  # inside the long row's neighbour, after many good rows
    vals, x = rng.normal(size=nnz), rng.normal(size=5000)
    with pytest.raises(IndexError):
        x[cols]
    message = f"index {bad} is out of bounds for axis 0 with size 5000"
    with pytest.raises(IndexError, match=message):
        sn.jit(spmv)(sn.Ragged(cols, LENGTHS), sn.Ragged(vals, LENGTHS), x)


def test_spmv_strided_and_empty() -> None:
    rng = np.random.default_rng(3)
    nnz = int(LENGTHS.sum())
    cols = rng.integers(0, 100, size=2 * nnz)[::2]
    vals = rng.normal(size=2 * nnz)[1::2]
    x = rng.normal(size=200)[::2]
    got = sn.jit(spmv)(sn.Ragged(cols, LENGTHS), sn.Ragged(vals, LENGTHS), x)
    np.testing.assert_allclose(got, spmv_numpy(cols, vals, LENGTHS, x), rtol=1e-10, atol=1e-9)
    none = np.zeros(0, dtype=np.int64)
    got = sn.jit(spmv)(sn.Ragged(none, none), sn.Ragged(none * 1.0, none), x)
    assert got.shape == (0,) and got.dtype == np.float64
    zeros = np.zeros(4, dtype=np.int64)
    got = sn.jit(spmv)(sn.Ragged(none, zeros), sn.Ragged(none * 1.0, zeros), x)
    np.testing.assert_array_equal(got, np.zeros(4))


AFFINE = [
    (lambda n: sn.iota(n), lambda n: np.arange(n)),
    (lambda n: sn.iota(n) * 3 + n, lambda n: np.arange(n) * 3 + n),
    (lambda n: n - 7 * sn.iota(n), lambda n: n - 7 * np.arange(n)),
    (lambda n: sn.range(2, n + 2, 3) * n, lambda n: np.arange(2, n + 2, 3) * n),
]


@pytest.mark.parametrize("case", range(len(AFFINE)))
def test_closed_form_sums(case: int) -> None:
    body, ref = AFFINE[case]

    def prog(ns: Any) -> Any:
        return sn.map(lambda n: sn.reduce(np.add, 0, body(n)), ns)

    for ns in (LENGTHS, LENGTHS[::-2], np.zeros(0, dtype=np.int64)):
        f = sn.jit(prog)
        assert "closed form" in str(sn.explain(prog, ns))
        want = np.array([ref(n).sum() for n in ns], dtype=np.int64)
        for _ in range(2):
            got = f(ns)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want)


def test_closed_form_wraps_like_int64() -> None:
    """Rows far longer than memory: never materialized; n * (n - 1) / 2 wraps as int64."""
    ns = np.array([2**33 + 3, 2**34, 5, 3 * 10**9 + 1], dtype=np.int64)
    prog = sn.jit(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns))

    def wrap(v: int) -> int:
        return (v + 2**63) % 2**64 - 2**63

    want = np.array([wrap(int(n) * (int(n) - 1) // 2) for n in ns], dtype=np.int64)
    np.testing.assert_array_equal(prog(ns), want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_floor_division_by_powers_of_two(dtype: type) -> None:
    """x // 2**k and x % 2**k are a shift and a mask (vectorized): NumPy's floor semantics
    for negative x and at the dtype's extremes; other divisors keep the division."""
    info = np.iinfo(dtype)
    x = np.concatenate([np.arange(-40, 41).astype(dtype),  # (unsigned: wrapped)
                        np.array([info.min, info.min + 1, info.max, info.max - 1], dtype)])
    divisors = sorted({1, 2, 8, 3, 2 ** (info.bits - 2), 2 ** (info.bits - 1 - (info.min < 0))})
    typed = [dtype(d) for d in divisors]

    def prog(x: Any) -> Any:
        return tuple(sn.map(lambda v, d=d: (v // d, v % d), x) for d in typed)

    got = sn.jit(prog)(x)
    for d, (q, r) in zip(divisors, got, strict=True):
        np.testing.assert_array_equal(q, x // dtype(d), err_msg=f"{x.dtype} // {d}")
        np.testing.assert_array_equal(r, x % dtype(d), err_msg=f"{x.dtype} % {d}")
        assert q.dtype == x.dtype and r.dtype == x.dtype
    text = str(sn.explain(prog, x))
    assert ">> 3)" in text and "stax_floordiv" in text  # 8 shifts, 3 divides
