"""Segmented primitives on NumPy arrays against plain NumPy/Python references."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches
from hypothesis import given, settings
from hypothesis import strategies as st

import stax.nested as sn
from stax.nested import kernels

SEED_FLAGS = np.array([True, True, False, True, False, False])
SEED_VALUES = np.arange(1, 7)


def test_seed_examples() -> None:
    assert_matches(sn.segscan(np.add, 0, SEED_FLAGS, SEED_VALUES), np.array([1, 2, 5, 4, 9, 15]))
    assert_matches(sn.segreduce(np.add, 0, SEED_FLAGS, SEED_VALUES), np.array([1, 5, 15]))
    assert_matches(sn.segiota(np.array([1, 2, 3])), np.array([0, 0, 1, 0, 1, 2]))
    assert_matches(sn.repiota(np.array([1, 2, 3])), np.array([0, 1, 1, 2, 2, 2]))
    assert_matches(sn.expresum(np.array([1, 2, 3])), np.array([0, 1, 3]))
    # iota n == expresum (replicate n 1)
    assert_matches(sn.expresum(np.ones(5, dtype=np.int64)), np.arange(5))


def _segments(lengths: np.ndarray, values: np.ndarray) -> list[np.ndarray]:
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [values[bounds[j]:bounds[j + 1]] for j in range(len(lengths))]


def _big_lengths(seed: int) -> np.ndarray:
    """Above the parallel threshold: long and short segments, empty ones, one huge one."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 50, size=3000)
    lengths[::7] = 0
    lengths[100] = 60000
    return lengths


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_segreduce_and_segscan_large(dtype: str) -> None:
    lengths = _big_lengths(1)
    values = (np.random.default_rng(2).integers(-9, 10, size=lengths.sum())).astype(dtype)
    segs = _segments(lengths, values)
    want_sum = np.array([s.sum(dtype=dtype) for s in segs], dtype=dtype)
    assert_matches(sn.segreduce(np.add, 0, None, values, lengths=lengths), want_sum,
                   rtol=1e-5)
    want_max = np.array([s.max() if len(s) else -np.inf if dtype[0] == "f"
                         else np.iinfo(dtype).min for s in segs], dtype=dtype)
    low = -np.inf if dtype[0] == "f" else np.iinfo(dtype).min
    assert_matches(sn.segreduce(np.maximum, low, None, values, lengths=lengths), want_max)
    want_scan = np.concatenate([np.cumsum(s, dtype=dtype) for s in segs])
    assert_matches(sn.segscan(np.add, 0, None, values, lengths=lengths), want_scan, rtol=1e-5)
    want_ex = np.concatenate([np.cumsum(s, dtype=dtype) - s for s in segs])
    assert_matches(sn.segscan(np.add, 0, None, values, lengths=lengths, exclusive=True),
                   want_ex, rtol=1e-5)


def _affine(a: tuple, b: tuple) -> tuple:
    """Composition of affine maps x -> m*x + c: associative, not commutative."""
    return (a[0] * b[0], a[1] * b[0] + b[1])


def test_non_commutative_tuple_operator_parallel() -> None:
    lengths = _big_lengths(3)
    n = int(lengths.sum())
    rng = np.random.default_rng(4)
    m = rng.integers(-1, 2, size=n).astype(np.int64)
    c = rng.integers(-3, 4, size=n).astype(np.int64)
    got_m, got_c = sn.segreduce(_affine, (1, 0), None, (m, c), lengths=lengths)
    sm, sc = sn.segscan(_affine, (1, 0), None, (m, c), lengths=lengths)
    want_m, want_c, scan_m, scan_c = [], [], [], []
    for seg_m, seg_c in zip(_segments(lengths, m), _segments(lengths, c), strict=True):
        acc = (1, 0)
        for x in zip(seg_m.tolist(), seg_c.tolist(), strict=True):
            acc = _affine(acc, x)
            scan_m.append(acc[0])
            scan_c.append(acc[1])
        want_m.append(acc[0])
        want_c.append(acc[1])
    assert_matches(got_m, np.array(want_m, dtype=np.int64))
    assert_matches(got_c, np.array(want_c, dtype=np.int64))
    assert_matches(sm, np.array(scan_m, dtype=np.int64))
    assert_matches(sc, np.array(scan_c, dtype=np.int64))


def _first_nonzero(a: int, b: int) -> int:
    """Associative, not commutative; written with Python control flow (not traceable)."""
    return a if a != 0 else b


@pytest.mark.parametrize("op", [_first_nonzero, lambda a, b: np.where(a != 0, a, b)],
                         ids=["python-fallback", "traced"])
def test_non_commutative_scalar_operator(op: object) -> None:
    lengths = np.array([3, 0, 2, 40000, 1, 5])
    values = np.random.default_rng(5).integers(0, 3, size=lengths.sum()).astype(np.int64)
    values[-5:] = 0
    want = [next((x for x in s.tolist() if x != 0), 0) for s in _segments(lengths, values)]
    assert_matches(sn.segreduce(op, 0, None, values, lengths=lengths),
                   np.array(want, dtype=np.int64))
    want_scan = []
    for s in _segments(lengths, values):
        acc = 0
        for x in s.tolist():
            acc = _first_nonzero(acc, x)
            want_scan.append(acc)
    assert_matches(sn.segscan(op, 0, None, values, lengths=lengths),
                   np.array(want_scan, dtype=np.int64))


def test_flags_semantics_and_edges() -> None:
    f = np.array([False, False, True, False])
    v = np.array([1.0, 2.0, 3.0, 4.0])
    assert_matches(sn.segscan(np.add, 0, f, v), np.array([1.0, 3.0, 3.0, 7.0]))
    assert_matches(sn.segreduce(np.add, 0, f, v), np.array([3.0, 7.0]))
    empty = np.array([], dtype=np.float64)
    assert_matches(sn.segscan(np.add, 0, np.array([], bool), empty), empty)
    assert_matches(sn.segreduce(np.add, 0, np.array([], bool), empty), empty)
    assert_matches(sn.segreduce(np.multiply, 1, None, np.array([], np.int32),
                                lengths=[0, 0]), np.array([1, 1], np.int32))
    nan = np.array([1.0, np.nan, 2.0, -np.inf])
    assert_matches(sn.segreduce(np.maximum, -np.inf, None, nan, lengths=[2, 2]),
                   np.array([np.nan, 2.0]))
    assert_matches(sn.segreduce(np.minimum, np.inf, None, nan, lengths=[2, 2]),
                   np.array([np.nan, -np.inf]))
    b = np.array([True, False, False, True])
    assert_matches(sn.segreduce(np.logical_or, False, None, b, lengths=[2, 1, 1]),
                   np.array([True, False, True]))


def test_gather_scatter_partition() -> None:
    values = sn.Ragged.from_list([[10, 11, 12], [], [13, 14]])
    idx = sn.Ragged.from_list([[2, 0, -1], [], [1, 1, 0]])
    got = sn.seggather(values, idx)
    assert got.to_list() == [[12, 10, 12], [], [14, 14, 13]]
    dest = sn.Ragged.from_list([[0, 0, 0], [0], [0, 0]])
    out = sn.segscatter(dest, sn.Ragged.from_list([[2, 5, -1], [0], [1]]),
                        sn.Ragged.from_list([[7, 8, 9], [4], [3]]))
    assert out.to_list() == [[0, 0, 7], [4], [0, 3]]
    assert dest.to_list() == [[0, 0, 0], [0], [0, 0]]
    with pytest.raises(IndexError, match="index 3 is out of bounds for row 0 of size 3"):
        sn.seggather(values, sn.Ragged.from_list([[3], [], []]))
    v = np.arange(50000) * 3
    mask = (v % 7) < 3
    t, f = sn.partition(mask, v)
    assert_matches(t, v[mask])
    assert_matches(f, v[~mask])
    t, f = sn.partition(np.array([], bool), np.array([], np.float32))
    assert t.size == 0 and f.size == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=12), st.integers(0, 1000))
def test_random_segments(lengths: list[int], seed: int) -> None:
    lengths_a = np.array(lengths, dtype=np.int64)
    values = np.random.default_rng(seed).integers(-5, 6, size=lengths_a.sum())
    segs = _segments(lengths_a, values)
    assert_matches(sn.segreduce(np.add, 0, None, values, lengths=lengths_a),
                   np.array([s.sum() for s in segs], dtype=values.dtype))
    assert_matches(sn.segscan(np.add, 0, None, values, lengths=lengths_a),
                   np.concatenate([np.cumsum(s) for s in segs] + [values[:0]]))
    assert_matches(sn.segiota(lengths_a),
                   np.concatenate([np.arange(n) for n in lengths] + [np.arange(0)]))
    assert_matches(sn.repiota(lengths_a), np.repeat(np.arange(len(lengths)), lengths))


@pytest.mark.parametrize("chunks", [3, 7, 64])
def test_many_chunks(chunks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs split into many chunks (more chunks than elements too): carries and
    partial segments cross chunk edges, empty segments sit on them."""
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    lengths = np.array([0, 5, 1, 0, 0, 9, 2, 0, 13, 1, 0])
    n = int(lengths.sum())
    rng = np.random.default_rng(chunks)
    m = rng.integers(-1, 2, size=n).astype(np.int64)
    c = rng.integers(-3, 4, size=n).astype(np.int64)
    segs = list(zip(_segments(lengths, m), _segments(lengths, c), strict=True))
    red, scan, ex = [], [], []
    for sm, sc in segs:
        acc = (1, 0)
        for x in zip(sm.tolist(), sc.tolist(), strict=True):
            ex.append(acc)
            acc = _affine(acc, x)
            scan.append(acc)
        red.append(acc)
    for got, want in ((sn.segreduce(_affine, (1, 0), None, (m, c), lengths=lengths), red),
                      (sn.segscan(_affine, (1, 0), None, (m, c), lengths=lengths), scan),
                      (sn.segscan(_affine, (1, 0), None, (m, c), lengths=lengths,
                                  exclusive=True), ex)):
        assert_matches(got[0], np.array([w[0] for w in want], dtype=np.int64))
        assert_matches(got[1], np.array([w[1] for w in want], dtype=np.int64))
    assert_matches(sn.segiota(lengths), np.concatenate([np.arange(x) for x in lengths]))
    assert_matches(sn.repiota(lengths), np.repeat(np.arange(len(lengths)), lengths))
    assert_matches(sn.segreduce(np.add, 0, None, m[:0], lengths=[0, 0, 0]),
                   np.zeros(3, dtype=np.int64))


def test_operator_errors() -> None:
    with pytest.raises(TypeError, match="not binary"):
        sn.segscan(np.sqrt, 0, SEED_FLAGS, SEED_VALUES)
    with pytest.raises(TypeError, match="not binary"):
        sn.segreduce(lambda a: a, 0, SEED_FLAGS, SEED_VALUES)
    with pytest.raises(TypeError, match="neutral element 0.5"):
        sn.segreduce(np.add, 0.5, SEED_FLAGS, SEED_VALUES)
    with pytest.raises(TypeError, match="2 component"):
        sn.segreduce(np.add, (0, 0), SEED_FLAGS, SEED_VALUES)
    with pytest.raises(TypeError, match="must return the element type"):
        sn.segreduce(np.divide, 0, SEED_FLAGS, SEED_VALUES)
    with pytest.raises(ValueError, match="6 flags for 5 values"):
        sn.segreduce(np.add, 0, SEED_FLAGS, SEED_VALUES[:5])
    with pytest.raises(ValueError, match=">= 0"):
        sn.segiota(np.array([1, -1]))


@pytest.mark.parametrize("op", [np.maximum, np.minimum])
def test_maximum_minimum_of_signed_zeros(op: np.ufunc) -> None:
    """[REVIEW] Of two equal values (-0.0 and 0.0) np.maximum/np.minimum give the second, a NaN
    the first NaN, against sn.interpret (elementwise; a segmented reduction still keeps the
    earlier of two equal zeros, see /work/notes/s8_REVIEW.md)."""
    a = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0, np.nan])
    b = np.array([0.0, -0.0, -0.0, 0.0, 1.0, np.nan, -np.nan])

    def pairs(a, b):  # noqa: ANN001, ANN202
        return sn.map(lambda x, y: op(x, y), a, b)

    got, want = sn.jit(pairs)(a, b), sn.interpret(pairs, a, b)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("op", [np.absolute, np.negative, np.sign, np.floor_divide,
                                np.remainder, np.power])
def test_ufuncs_of_floats_at_zeros_and_rounding_edges(op: np.ufunc) -> None:
    """The ufuncs' C++ is the op table's (the main kernels'): np.absolute(-0.0) is 0.0,
    1.0 // 0.1 is 9.0 (NumPy's divmod, not floor(1.0 / 0.1) = 10.0), as sn.interpret."""
    a = np.array([-0.0, 1.0, -1.0, 7.5, -0.0, 0.3, 2.0, np.nan, -np.inf])
    b = np.array([0.0, 0.1, 0.1, -2.5, -0.0, 0.1, -0.5, 1.0, 3.0])

    def pairs(a, b):  # noqa: ANN001, ANN202
        return sn.map(lambda x, y: op(x, y) if op.nin == 2 else op(x), a, b)

    with np.errstate(all="ignore"):  # float FP status is not reported (README)
        got, want = sn.jit(pairs)(a, b), sn.interpret(pairs, a, b)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
