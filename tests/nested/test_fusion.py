"""Kernel-level fusions: bounds checks fused into reductions, vectorized float max/min with NaN,
selecting operators (argmax), expression folding; each against NumPy or the interpreter."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from hypothesis import given, settings
from hypothesis import strategies as st

import stax.nested as sn
from nested.helpers import check
from stax.nested import kernels
from stax.nested.expr import INT64, Const, Idx, ufunc_call

X = np.array([1.5, -2.0, 4.0, 8.0, 0.25])
COLS = sn.Ragged(np.array([0, 4, -1, 2, 3, 1, 0, -5], dtype=np.int32), np.array([3, 0, 5, 0]))


def _gather_sum(cols: sn.Ragged, x: np.ndarray) -> np.ndarray:
    return sn.map(lambda c: sn.reduce(np.add, 0.0, sn.map(lambda j: x[j] * 2.0, c)), cols)


def test_index_check_fused_into_the_reduction() -> None:
    check(_gather_sum, COLS, X)
    run = sn.jit(_gather_sum).run(COLS, X)[1]
    assert [k.kind for k in run.kernels] == ["segreduce"]  # no separate check pass
    assert "bounds check fused into segreduce" in [r for r, _ in run.rules]
    bad = sn.Ragged(np.array([0, 1, 5, 2]), np.array([1, 3]))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        sn.jit(_gather_sum)(bad, X)
    with pytest.raises(IndexError, match="index -6 is out of bounds"):
        sn.jit(_gather_sum)(sn.Ragged(np.array([-6]), np.array([1])), X)


def test_index_check_without_a_reduction_runs_before_the_result() -> None:
    def gather(cols: sn.Ragged, x: np.ndarray) -> sn.Ragged:
        return sn.map(lambda c: sn.map(lambda j: x[j], c), cols)

    check(gather, COLS, X)
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        sn.jit(gather)(sn.Ragged(np.array([0, 7]), np.array([2])), X)


def test_a_failing_index_check_reports_before_values_decide_sizes() -> None:
    sizes = np.array([2, 3, 10**12])

    def iota_sums(idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        return sn.map(lambda j: sn.reduce(np.add, 0, sn.iota(sizes[j])), idx)

    check(iota_sums, np.array([1, 0, -2]), sizes)
    # Index 3 is out of range: its clamped load would give 10**12 as a size.
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        sn.jit(iota_sums)(np.array([0, 3]), sizes)


def test_the_first_failing_index_reports_first() -> None:
    y = np.arange(7.0)

    def two(cols: sn.Ragged, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return sn.map(lambda c: sn.reduce(np.add, 0.0, sn.map(lambda j: x[j] + y[j], c)), cols)

    check(two, sn.Ragged(np.array([0, 4, 1]), np.array([1, 2])), X, y)
    with pytest.raises(IndexError, match="with size 5"):  # X's check comes first
        sn.jit(two)(sn.Ragged(np.array([0, 9]), np.array([1, 1])), X, y)
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 5"):
        sn.jit(two)(sn.Ragged(np.array([6]), np.array([1])), X, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_max_min_vectorized_with_nan_and_infinities(dtype: str) -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 40, size=400)
    lengths[5] = 20000  # a segment split across chunks
    values = rng.normal(size=int(lengths.sum())).astype(dtype)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    values[bounds[7] + 1] = np.nan  # NaN inside a segment
    values[bounds[5] + 15000] = np.nan  # NaN in the later part of a split segment
    values[bounds[9]] = np.inf
    values[bounds[11]:bounds[12]] = -np.inf
    for ufunc, ne in ((np.maximum, -np.inf), (np.minimum, np.inf), (np.maximum, 0.0)):
        got = sn.segreduce(ufunc, ne, None, values, lengths=lengths)
        want = np.array([ufunc.reduce(values[a:b], initial=ne)
                         for a, b in zip(bounds[:-1], bounds[1:], strict=True)], dtype=dtype)
        assert_matches(got, want)
    # A NaN neutral element makes every result NaN.
    got = sn.segreduce(np.maximum, np.nan, None, values, lengths=lengths)
    assert np.isnan(got).all()


def _argmax_op(a: tuple, b: tuple) -> tuple:
    take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
    return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])


def _last_nonzero(a: tuple, b: tuple) -> tuple:
    """Associative, not commutative: the last element whose first component is non-zero."""
    keep = b[0] != 0
    return np.where(keep, b[0], a[0]), np.where(keep, b[1], a[1])


@pytest.mark.parametrize("chunks", [None, 7])
def test_selecting_operators(monkeypatch: pytest.MonkeyPatch, chunks: int | None) -> None:
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    rng = np.random.default_rng(4)
    lengths = rng.integers(0, 9, size=60)
    values = rng.integers(-3, 3, size=int(lengths.sum())).astype(np.float64)  # many ties
    values[4] = np.nan
    x = sn.Ragged(values, lengths)

    def argmax(x: sn.Ragged) -> tuple:
        return sn.map(lambda r: sn.reduce(_argmax_op, (-np.inf, -1),
                                          (r, sn.iota(sn.length(r)))), x)

    def last(x: sn.Ragged) -> tuple:
        return sn.map(lambda r: sn.reduce(_last_nonzero, (0.0, -1),
                                          (r, sn.iota(sn.length(r)))), x)

    check(argmax, x)
    check(last, x)
    _, run = sn.jit(argmax).run(x)
    assert "__builtin_expect" in run.kernels[0].source


def test_folding_keeps_dtypes_and_float_semantics() -> None:
    i = Idx()
    assert ufunc_call(np.add, (i, Const(INT64, 0))) == i
    assert ufunc_call(np.multiply, (Const(INT64, 1), i)) == i
    assert ufunc_call(np.multiply, (i, Const(INT64, 0))) == Const(INT64, 0)
    assert ufunc_call(np.floor_divide, (i, Const(INT64, 1))) == i
    x = ufunc_call(np.sqrt, (i,))  # float64
    assert ufunc_call(np.multiply, (x, Const(np.dtype("float64"), 1.0))) == x
    # -0.0 + 0.0 is 0.0 and nan * 0 is nan: no folding on floats.
    assert ufunc_call(np.add, (x, Const(np.dtype("float64"), 0.0))) != x
    assert ufunc_call(np.multiply, (x, Const(np.dtype("float64"), 0.0))) != Const(
        np.dtype("float64"), 0.0)
    # An int32 value plus an int64 zero is the value cast to int64, not the int32 value.
    k = Const(np.dtype("int32"), 5)
    assert ufunc_call(np.add, (k, Const(INT64, 0))).dtype == INT64


def _softmax(x: sn.Ragged) -> sn.Ragged:
    def row(r: object) -> object:
        e = np.exp(r - r.max())
        return e / e.sum()
    return sn.map(row, x)


@pytest.mark.parametrize(("dtype", "chunks"), [("float64", None), ("float32", 5)])
def test_softmax_is_one_kernel(monkeypatch: pytest.MonkeyPatch, dtype: str,
                               chunks: int | None) -> None:
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 30, size=50)
    values = rng.normal(size=int(lengths.sum())).astype(dtype) * 30
    values[3] = np.nan
    values[40] = np.inf
    x = sn.Ragged(values, lengths)
    with np.errstate(invalid="ignore"):  # inf - inf in the row holding inf
        got = check(_softmax, x)
        want = [np.exp(r - r.max()) / np.exp(r - r.max()).sum() for r in x]
    assert_matches(got.values, np.concatenate(want), rtol=1e-5 if dtype == "float32" else 1e-12)
    run = sn.jit(_softmax).run(x)[1]
    assert [k.kind for k in run.kernels] == ["fused segments"]
    assert "segment-local fusion" in [r for r, _ in run.rules]
    body = run.kernels[0].source.split('extern "C" void')[1]
    # the sum's pass keeps exp(x - max) for the division: exp is in that pass only (its
    # whole vectors and its last, masked vector step), not in the division's loop
    sum_pass, division = body.rsplit("#pragma omp simd", 1)
    assert len(re.findall(r"\bexpf?\(", sum_pass)) == 2
    assert not re.findall(r"\bexpf?\(", division)


def test_deferred_reductions_are_computed_before_any_read() -> None:
    rng = np.random.default_rng(6)
    x = sn.Ragged(rng.normal(size=40), np.array([3, 0, 7, 10, 20]))
    y = sn.Ragged(rng.normal(size=9), np.array([1, 2, 0, 6, 0]))

    def two_phases(x: sn.Ragged) -> tuple:  # results read back: a fused kernel, no map
        return sn.map(lambda r: (r.sum(), sn.reduce(np.maximum, -1.0, r - r.sum())), x)

    def two_layouts(x: sn.Ragged, y: sn.Ragged) -> np.ndarray:  # the second flushes the first
        return sn.map(lambda r, c: (r * 2.0).sum() + c.sum(), x, y)

    def gathered(x: sn.Ragged, idx: np.ndarray) -> np.ndarray:  # read at another index
        s = sn.map(lambda r: r.sum(), x)
        return sn.map(lambda i: s[i] * 2.0, idx)

    check(two_phases, x)
    check(two_layouts, x, y)
    check(gathered, x, np.array([4, 0, 0, 2, -1]))


def test_no_fusion_when_one_segment_dominates() -> None:
    lengths = np.array([1, 40000, 3, 1, 2])
    values = np.random.default_rng(7).normal(size=int(lengths.sum()))
    x = sn.Ragged(values, lengths)
    got, run = sn.jit(_softmax).run(x)
    assert "fused segments" not in [k.kind for k in run.kernels]
    want = [np.exp(r - r.max()) / np.exp(r - r.max()).sum() for r in x]
    assert_matches(got.values, np.concatenate(want), rtol=1e-12)


def test_closed_form_sums_of_affine_elements() -> None:
    ns = np.array([0, 1, 2, 5, 1000, 7, 0, 3])
    cs = np.array([3, -2, 2**62 + 1, -(2**61), 5, 2**40, 9, -1])  # products wrap around

    def sums(ns: np.ndarray, cs: np.ndarray) -> np.ndarray:
        return sn.map(lambda n, c: sn.reduce(np.add, 0, sn.map(
            lambda i: c * (i - 3) + n * c - i, sn.iota(n))), ns, cs)

    with np.errstate(over="ignore"):  # the interpreter's int64 arithmetic wraps too
        got = check(sums, ns, cs)
        want = [np.sum(c * (np.arange(n) - 3) + n * c - np.arange(n)) for n, c in
                zip(ns, cs, strict=True)]
    assert_matches(got, np.array(want, dtype=np.int64))
    run = sn.jit(sums).run(ns, cs)[1]
    assert "segreduce" not in [k.kind for k in run.kernels]
    # Sums of iota rows, from a range with a start and a step, and with a nonzero neutral.
    check(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns), ns)
    check(lambda ns: sn.map(lambda n: sn.reduce(np.add, 7, sn.range(n, 3 * n + 5, 3)), ns), ns)
    check(lambda n: sn.reduce(np.add, 0, sn.iota(n)), 2**20)
    # Not affine (i * i), or not int64: a segmented reduction as before.
    square = sn.jit(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n) ** 2), ns))
    assert_matches(square(ns), np.array([np.sum(np.arange(n) ** 2) for n in ns]))
    assert "segreduce" in str(sn.explain(square, ns))
    check(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n).astype(np.int32)), ns),
          ns)


def _chain(x: sn.Ragged) -> tuple:
    def row(r: object) -> tuple:
        m = sn.reduce(np.maximum, -np.inf, r)
        d = r - m
        s = sn.reduce(np.add, 0.0, np.exp(d))
        t = sn.reduce(np.minimum, np.inf, d / (s + 1.0))
        return np.exp(d) / s + t, m, t
    return sn.map(row, x)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(0, 12), max_size=15), seed=st.integers(0, 2**16),
       chunks=st.sampled_from([None, 3]), nan=st.booleans())
def test_random_fused_chains(lengths: list[int], seed: int, chunks: int | None,
                             nan: bool) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=sum(lengths)) * 5
    if nan and len(values):
        values[rng.integers(len(values))] = np.nan
    x = sn.Ragged(values, np.array(lengths, dtype=np.int64))
    old, kernels.CHUNKS = kernels.CHUNKS, chunks
    try:
        with np.errstate(invalid="ignore"):
            check(_chain, x)
    finally:
        kernels.CHUNKS = old


def _argmin_op(a: tuple, b: tuple) -> tuple:
    """The first index of the minimum; the neutral index is the largest int64."""
    take_b = (b[0] < a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
    return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])


def _argmax_last(a: tuple, b: tuple) -> tuple:
    """The last index of the maximum (ties go to the larger index)."""
    take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] > a[1]))
    return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])


@pytest.mark.parametrize("chunks", [None, 5])
def test_selecting_reductions_over_long_rows(monkeypatch: pytest.MonkeyPatch,
                                             chunks: int | None) -> None:
    """Rows long enough for the blocked test (after the first 64 elements, blocks of 64 and
    a tail), many ties, NaN, increasing and decreasing runs: the tie rule of each operator
    (first or last index, a neutral index of either sign) holds, as in the interpreter."""
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    rng = np.random.default_rng(7)
    lengths = np.array([0, 1, 64, 65, 66, 129, 200, 400, 3, 0, 257])
    n = int(lengths.sum())
    values = rng.integers(-4, 5, size=n).astype(np.float64)
    values[70:190] = np.arange(120)  # a new maximum at every element for a while
    values[300:420] = -np.arange(120.0)
    values[[10, 500]] = np.nan
    x = sn.Ragged(values, lengths)
    big = np.iinfo(np.int64).max
    for op, ne in ((_argmax_op, (-np.inf, -1)), (_argmin_op, (np.inf, big)),
                   (_argmax_last, (-np.inf, -1))):
        def f(x: sn.Ragged, op: Any = op, ne: Any = ne) -> tuple:
            return sn.map(lambda r: sn.reduce(op, ne, (r, sn.iota(sn.length(r)))), x)
        check(f, x)
        check(f, sn.Ragged(-values, lengths))
        _, run = sn.jit(f).run(x)
        assert "hit |=" in run.kernels[-1].source  # the blocked test ran


@pytest.mark.parametrize("chunks", [None, 7])
def test_index_check_counts_every_chunk(monkeypatch: pytest.MonkeyPatch,
                                        chunks: int | None) -> None:
    """The fused check's count is one total over the kernel: a bad index in a segment cut by
    chunk edges, in a whole segment, or in the last element is found on every call."""
    monkeypatch.setattr(kernels, "CHUNKS", chunks)
    f = sn.jit(_gather_sum)
    lengths = np.array([1, 30, 0, 4, 2])
    good = np.arange(37) % 5
    check(_gather_sum, sn.Ragged(good, lengths), X, jitted=f)
    for at in (0, 3, 15, 30, 33, 36):
        cols = good.copy()
        cols[at] = 5 + at
        with pytest.raises(IndexError, match=f"index {5 + at} is out of bounds"):
            f(sn.Ragged(cols, lengths), X)
    check(_gather_sum, sn.Ragged(good[::-1].copy(), lengths), X, jitted=f)


def _affine_and_max(x: sn.Ragged) -> tuple:
    """Two reductions per row (a chain): the composition of the maps v -> v * 3 + x[i]
    in row order (associative, not commutative; int64, wraps) and the maximum."""
    def row(r: Any) -> tuple:
        c, m = sn.reduce(lambda a, b: (a[0] * b[1] + b[0], a[1] * b[1]), (0, 1),
                         (r, r * 0 + 3))
        return c, m, sn.reduce(np.maximum, np.iinfo(np.int64).min, r)
    return sn.map(row, x)


def test_chain_parts_run_apart_when_one_segment_dominates() -> None:
    """The balance guard is asked only when several parts would run as one kernel: a single
    reduction over skewed segments records no guard; a chain recorded over balanced segments
    and replayed over skewed ones fails its guard and runs its reductions apart, each exact
    (a non-commutative operator, int64 wrapping), with empty segments, one segment, none."""
    rng = np.random.default_rng(3)
    one = sn.jit(lambda x: sn.map(lambda r: sn.reduce(np.add, 0.0, r), x))
    skewed = sn.Ragged(rng.normal(size=40006), np.array([1, 40000, 0, 3, 2]))
    check(one.fn, skewed, jitted=one)
    (tape, _), = next(iter(one.programs.values())).tapes
    assert not any("balanced" in name for name in tape.summary())
    f = sn.jit(_affine_and_max)
    with np.errstate(over="ignore"):  # the interpreter's int64 arithmetic wraps too
        balanced = [5000] * 7 + [0, 4999, 1]  # no segment above an eighth of the elements
        for lengths, fused in ((balanced, True), ([1, 40000, 0, 3, 2], False),
                               ([40000], False), ([0, 0, 0], False), ([], False),
                               ([2, 0, 3], True)):  # (under PARALLEL_MIN: one thread)
            x = sn.Ragged(rng.integers(-2**62, 2**62, size=sum(lengths)),
                          np.array(lengths, dtype=np.int64))
            check(_affine_and_max, x, jitted=f)
            assert ("fused segments" in [k.kind for k in f.last_run.kernels]) == fused
    assert f.cache_info().replays >= 6  # each second call


def test_iota_of_row_lengths_needs_no_range_check() -> None:
    """sn.iota(sn.length(row)): the lengths are those of existing rows (>= 0), so no check
    is recorded; argmax by (value, index) with NaN, empty rows, one row, no rows. An iota
    of values read from the data is still checked on every call."""
    f = sn.jit(_argmax)
    for rows in ([[1.0, np.nan, 5.0, 5.0], [], [np.nan], [-np.inf, -1.0]], [[2.0, 1.0]],
                 [[], []], [[0.5] * 70 + [3.0] + [np.nan] * 5]):
        check(_argmax, sn.Ragged.from_list(rows), jitted=f)
    check(_argmax, sn.Ragged(np.zeros(0), np.zeros(0, dtype=np.int64)), jitted=f)
    text = str(sn.explain(f, sn.Ragged.from_list([[1.0], [2.0, 3.0]])))
    assert "iota of row lengths -> no range check" in text
    for tape, _ in (t for p in f.programs.values() for t in p.tapes):
        assert "_iota_lengths" not in tape.summary()
    g = sn.jit(lambda x, ns: sn.map(lambda r, n: sn.reduce(np.add, 0, sn.iota(n)), x, ns))
    x = sn.Ragged.from_list([[1.0], [2.0, 3.0]])
    check(g.fn, x, np.array([2, 0]), jitted=g)
    with pytest.raises(ValueError, match=r"Range 0..1..<-1 is invalid"):
        g(x, np.array([2, -1]))


def _argmax(x: sn.Ragged) -> tuple:
    def op(a: tuple, b: tuple) -> tuple:
        take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return np.where(take, b[0], a[0]), np.where(take, b[1], a[1])
    return sn.map(lambda r: sn.reduce(op, (-np.inf, -1), (r, sn.iota(sn.length(r)))), x)


def test_ranges_with_traced_steps() -> None:
    """sn.range(start, stop, step) with a traced step (was a crash: the step compared with
    1 as an array); negative steps, empty ranges; a zero step is Futhark's error."""
    def f(ns: Any, ss: Any) -> Any:
        return sn.map(lambda n, s: sn.reduce(np.add, 0, sn.range(0, n, s)), ns, ss)
    g = sn.jit(f)
    check(f, np.array([5, 7, 0, 9, 4]), np.array([1, 2, 3, 4, 5]), jitted=g)
    check(f, np.array([-5, 0, -9]), np.array([-1, -2, -4]), jitted=g)
    empty = np.zeros(0, dtype=np.int64)  # (the interpreter cannot tell the dtype of no rows)
    assert_matches(g(empty, empty), empty)
    with pytest.raises(ValueError, match=r"Range 0..0..<3 is invalid"):
        sn.interpret(f, np.array([3]), np.array([0]))
    with pytest.raises(ValueError, match=r"Range 0..0..<3 is invalid"):
        g(np.array([3]), np.array([0]))


def test_plain_map_loops_stay_vectorized_below_the_parallel_threshold() -> None:
    """The closed-form sum of iotas is a plain map: its loop is `omp simd` whether or not it
    runs in parallel (`if(parallel: ...)`; a bare `if` also turned the simd off). Results at
    both sides of the threshold, with int64 wrapping, against Python integers."""
    def sums(ns: Any) -> Any:
        return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)
    f = sn.jit(sums)
    rng = np.random.default_rng(5)
    for k in (1, kernels.PARALLEL_MIN - 1, kernels.PARALLEL_MIN):
        ns = rng.integers(0, 2000, size=k)
        ns[0] = 2**33 + 3  # n * (n - 1) / 2 wraps in int64
        want = np.array([((n * (n - 1) // 2 + 2**63) % 2**64) - 2**63 for n in ns.tolist()])
        assert_matches(f(ns), want)
    body = sn.explain(f, ns).run.kernels[-1].body
    assert f"#pragma omp parallel for simd schedule(static) if(parallel: n >= " \
           f"{kernels.PARALLEL_MIN})" in body
    g = sn.jit(lambda v: sn.map(lambda a: np.maximum(a, 0.5) * 2.0 - np.minimum(a, -1.0), v))
    for v in (np.array([np.nan, -np.inf, np.inf, 0.25, 3.0, -0.0]), np.zeros(0),
              rng.normal(size=kernels.PARALLEL_MIN + 1)):
        with np.errstate(invalid="ignore"):
            assert_matches(g(v), np.maximum(v, 0.5) * 2.0 - np.minimum(v, -1.0))
