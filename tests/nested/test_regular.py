"""Regular nests through the main pipeline (`stax.nested.regular`): a map of a reduce over rows
of one length is compiled by stax.jit; results against sn.interpret and NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax
import stax.nested as sn
from nested.helpers import as_ragged, check

RULE = "map-of-reduce -> regular reduction (main pipeline)"


def _kinds(fn: Any, *args: Any) -> tuple[list[str], list[str]]:
    run = sn.jit(fn).run(*args)[1]
    return [k.kind for k in run.kernels], [r[0] for r in run.rules]


def _row_sum(a: Any) -> Any:
    return sn.map(lambda row: sn.reduce(np.add, 0, row), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_row_reductions_by_dtype(dtype: Any) -> None:
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(7, 5)) * 100).astype(dtype)
    got = check(_row_sum, a)
    if a.dtype.kind == "f":  # NumPy's own row sums: same dtype and (nearly) the values
        np.testing.assert_allclose(got, a.sum(axis=1), rtol=1e-5)
        assert got.dtype == a.dtype
    kinds, rules = _kinds(_row_sum, a)
    assert kinds == ["main pipeline"] and RULE in rules


OPERATORS = ((np.add, 0.0), (np.add, 10.0), (np.multiply, 1.0), (np.multiply, -2.0),
             (np.maximum, -np.inf), (np.maximum, 5.0), (np.minimum, np.inf), (np.minimum, 0.0))


@pytest.mark.parametrize("kind", ["reduce", "scan"])
def test_operators_neutral_elements_and_nan(kind: str) -> None:
    a = np.array([[1.0, np.nan, 3.0, -1.0], [4.0, -5.0, 6.0, 0.5], [-np.inf, 2.0, 0.5, 7.0]])
    nested = getattr(sn, kind)
    method = "reduce" if kind == "reduce" else "accumulate"
    for op, ne in OPERATORS:
        def f(a: Any, op: Any = op, ne: Any = ne) -> Any:
            return sn.map(lambda row: nested(op, ne, row), a)
        got = check(f, a)
        want = op(ne, getattr(op, method)(a, axis=1))  # the fold from ne, in NumPy
        np.testing.assert_array_equal(got, want)
        assert (RULE if kind == "reduce" else SCAN) in _kinds(f, a)[1]


def test_integer_reductions_and_scans_wrap() -> None:
    i = np.array([[2**31 - 1, 1, 5], [-3, 7, 0]], dtype=np.int32)  # int32 sums wrap
    np.testing.assert_array_equal(check(_row_sum, i), np.add.reduce(i, axis=1, dtype=np.int32))

    def running_max(a: Any) -> Any:
        return sn.map(lambda row: sn.scan(np.maximum, np.int32(-2**31), row), a)

    np.testing.assert_array_equal(check(lambda a: sn.map(lambda r: sn.scan(np.add, 0, r), a), i),
                                  np.add.accumulate(i, axis=1, dtype=np.int32))
    np.testing.assert_array_equal(check(running_max, i), np.maximum.accumulate(i, axis=1))


def test_expressions_strided_inputs_and_replays() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(size=(6, 9))
    w = rng.normal(size=6)

    def scaled(a: Any, w: Any) -> Any:  # a per-row value (x[s]), ufuncs, a cast, a where
        return sn.map(lambda row, s: sn.reduce(
            np.add, 0.0, np.where(row > 0, np.exp(row) * s, (row * 3).astype(np.int64))), a, w)

    want = np.where(a > 0, np.exp(a) * w[:, None], np.trunc(a * 3)).sum(axis=1)
    np.testing.assert_allclose(check(scaled, a, w), want, rtol=1e-12)
    assert _kinds(scaled, a, w)[0] == ["main pipeline"]
    f = sn.jit(scaled)
    for shape in ((6, 9), (3, 9), (0, 9), (1, 9), (40, 9), (3, 4), (1, 1)):  # replays: other sizes
        b = rng.normal(size=shape)
        v = rng.normal(size=shape[0])
        np.testing.assert_allclose(f(b, v), sn.interpret(scaled, b, v), rtol=1e-12)
    assert f.cache_info().replays >= 3
    check(_row_sum, a.T)  # a transposed (strided) argument
    check(_row_sum, a[::2, 1::3])
    check(lambda a: sn.map(lambda row: sn.reduce(np.add, 0.0, row), a), a[:1])  # one row


def test_empty_and_unrouted_reductions() -> None:
    for shape in ((0, 4), (3, 0), (0, 0)):  # no elements: a segmented kernel (ne per row)
        a = np.zeros(shape)
        got = check(lambda a: sn.map(lambda row: sn.reduce(np.add, 5.0, row), a), a)
        np.testing.assert_array_equal(got, np.full(shape[0], 5.0))
        assert "main pipeline" not in _kinds(_row_sum, a)[0]
    a = np.arange(12.0).reshape(3, 4)
    # a Python operator, or the element index as a value: segmented kernels
    check(lambda a: sn.map(lambda row: sn.reduce(lambda x, y: x + y, 0.0, row), a), a)
    iota = lambda a: sn.map(lambda row: sn.reduce(np.add, 0, row + sn.iota(4)), a)  # noqa: E731
    check(iota, a)
    assert "main pipeline" not in _kinds(iota, a)[0]


def test_gathers_over_regular_rows() -> None:
    """ELL SpMV: regular rows with a gather keep their fused bounds check (a segreduce; routed
    through the main pipeline it measured slower, see benchmarks/RESULTS.md); an out-of-range
    column is NumPy's IndexError (the interpreter's message), never a read out of bounds."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=10)
    for idx in (np.int32, np.int64):
        cols = rng.integers(-10, 10, size=(5, 4)).astype(idx)
        vals = rng.normal(size=(5, 4)).astype(np.float32)

        def spmv(c: Any, v: Any, x: Any) -> Any:
            return sn.map(lambda cr, vr: sn.reduce(
                np.add, 0.0, sn.map(lambda j, a: a * x[j], cr, vr)), c, v)

        np.testing.assert_allclose(check(spmv, cols, vals, x), (vals * x[cols]).sum(axis=1),
                                   rtol=1e-6)
        assert "segreduce" in _kinds(spmv, cols, vals, x)[0]
        f = sn.jit(spmv)
        f(cols, vals, x)
        for r, col in ((2, 10), (4, -11), (0, 2**30)):  # first calls and replays raise
            bad = cols.copy()
            bad[r, 1] = col
            for g in (f, sn.jit(spmv)):
                with pytest.raises(IndexError, match=f"index {col} is out of bounds"):
                    g(bad, vals, x)
        np.testing.assert_allclose(f(cols, vals, x), (vals * x[cols]).sum(axis=1), rtol=1e-6)
    u = rng.integers(0, 10, size=(6, 3)).astype(np.uint16)  # unsigned columns, float32 x
    xs = rng.normal(size=10).astype(np.float32)
    np.testing.assert_allclose(check(spmv, u, u * 0.5, xs), (u * 0.5 * xs[u]).sum(axis=1),
                               rtol=1e-6)
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        sn.jit(spmv)(np.where(u == u[1, 1], 10, u).astype(np.uint16), u * 0.5, xs)
    a = rng.normal(size=(4, 7))  # a gather inside each row (an in-row index: segmented)
    idx = rng.integers(-7, 7, size=(4, 5))

    def picks(a: Any, idx: Any) -> Any:
        return sn.map(lambda r, ir: sn.reduce(np.add, 0.0, sn.map(lambda j: r[j], ir)), a, idx)

    np.testing.assert_allclose(check(picks, a, idx),
                               np.take_along_axis(a, idx % 7, axis=1).sum(axis=1), rtol=1e-12)
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        sn.jit(picks)(a, np.where(idx == idx[0, 0], 7, idx))


def test_explain_shows_the_rule_and_the_main_pipeline_kernel() -> None:
    a = np.ones((3, 5), dtype=np.float32)
    text = str(stax.explain(sn.jit(_row_sum), a))
    assert RULE in text and "main pipeline: np.add.reduce over S2, axis 1" in text
    assert "reduce[sum]" in text  # the main pipeline's kernel, in its C++


SCAN = "map-of-scan -> regular scan (main pipeline)"
MAP = "map over regular rows -> elementwise program (main pipeline)"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_maps_and_scans_by_dtype(dtype: Any) -> None:
    rng = np.random.default_rng(4)
    a = (rng.normal(size=(6, 7)) * 50).astype(dtype)
    w = (rng.normal(size=6) * 3).astype(dtype)

    def scaled(a: Any, w: Any) -> Any:  # a per-row value and a constant: one elementwise program
        return sn.map(lambda row, s: row * s + row, a, w)

    def cumsum(a: Any) -> Any:
        return sn.map(lambda row: sn.scan(np.add, 0, row), a)

    np.testing.assert_allclose(check(scaled, a, w), a * w[:, None] + a, rtol=1e-6)
    np.testing.assert_allclose(check(cumsum, a),  # the row's dtype (wrapping integers)
                               np.add.accumulate(a, axis=1, dtype=a.dtype), rtol=1e-5)
    assert check(scaled, a, w).dtype == a.dtype and check(cumsum, a).dtype == a.dtype
    assert _kinds(scaled, a, w)[0] == ["main pipeline"]
    assert MAP in _kinds(scaled, a, w)[1] and SCAN in _kinds(cumsum, a)[1]
    assert _kinds(cumsum, a)[0] == ["main pipeline"]


def test_scans_keep_the_sign_of_zero_of_the_fold_from_ne() -> None:
    """A float sum from +0.0 never gives -0.0 (0.0 + -0.0 == +0.0); from -0.0 it keeps it."""
    a = np.array([[-0.0, -0.0, 1.0, -1.0], [2.0, -2.0, -0.0, -0.0], [-0.0, 3.0, -3.0, -0.0]])
    for dtype in (np.float32, np.float64):
        x = a.astype(dtype)
        for ne in (dtype(0.0), dtype(-0.0)):
            def f(x: Any, ne: Any = ne) -> Any:
                return sn.map(lambda row: sn.scan(np.add, ne, row), x)
            got, want = check(f, x), sn.interpret(f, x)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            assert np.signbit(got).any() == bool(np.signbit(ne))  # the fold, in Python
            assert SCAN in _kinds(f, x)[1]


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")
def test_maps_and_scans_of_strided_inputs_replays_and_empty_rows() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(size=(8, 9))

    def prog(a: Any) -> Any:  # a where, a cast, NaN from log of negatives
        return sn.map(lambda row: sn.scan(np.maximum, -np.inf, np.where(
            row > 0, np.log(row), (row * 3).astype(np.int64))), a)

    def want(a: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.maximum.accumulate(np.where(a > 0, np.log(a), np.trunc(a * 3)), axis=1)

    def m(a: Any) -> Any:
        return sn.map(lambda row: np.sqrt(np.abs(row)) - row[0], a)

    for x in (a, a.T, a[::2, 1::3], a[:1], a[3:3]):  # transposed, sliced, one row, no rows
        np.testing.assert_array_equal(check(prog, x), want(x))
        np.testing.assert_allclose(check(m, x), np.sqrt(np.abs(x)) - x[:, :1], rtol=1e-15)
    f, g = sn.jit(prog), sn.jit(m)
    for shape in ((8, 9), (3, 9), (0, 9), (1, 9), (40, 9), (3, 4), (1, 1), (5, 0)):  # replays
        b = rng.normal(size=shape)
        np.testing.assert_array_equal(as_ragged(f(b)).values, as_ragged(want(b)).values)
        if shape[1]:
            np.testing.assert_allclose(g(b), np.sqrt(np.abs(b)) - b[:, :1], rtol=1e-15)
    assert f.cache_info().replays >= 3
    assert "main pipeline" not in _kinds(prog, np.zeros((0, 4)))[0]  # no elements: segmented
    assert "main pipeline" not in _kinds(prog, np.zeros((3, 0)))[0]


def test_softmax_over_rows_is_three_main_pipeline_programs() -> None:
    rng = np.random.default_rng(6)
    a = rng.normal(size=(5, 11)).astype(np.float32)

    def softmax(a: Any) -> Any:
        def row(r: Any) -> Any:
            e = np.exp(r - r.max())
            return e / e.sum()
        return sn.map(row, a)

    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(check(softmax, a), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    assert _kinds(softmax, a)[0] == ["main pipeline"] * 3


def test_unrouted_maps_and_scans_stay_segmented() -> None:
    a = np.arange(12.0).reshape(3, 4)
    progs = [  # a Python operator, the in-row index as a value, a top-level (flat) map and scan
        lambda a: sn.map(lambda row: sn.scan(lambda x, y: x + y, 0.0, row), a),
        lambda a: sn.map(lambda row: row + sn.iota(4), a),
        lambda a: sn.map(lambda row: sn.scan(np.add, 0, row * sn.iota(4)), a),
        lambda v: sn.map(lambda t: t * 3, v[0]),
        lambda v: sn.scan(np.add, 0.0, v[0]),
    ]
    for f in progs:
        check(f, a)
        assert "main pipeline" not in _kinds(f, a)[0]


def test_routed_steps_read_deferred_reductions_after_they_run() -> None:
    """A tuple operator's reduction is deferred (segment-local fusion); a routed reduction or
    map reading its result per row must see it computed."""
    def argmax_op(a: tuple, b: tuple) -> tuple:
        take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])

    def prog(x: Any) -> Any:
        def row(r: Any) -> Any:
            m, i = sn.reduce(argmax_op, (-np.inf, -1), (r, sn.iota(sn.length(r))))
            return sn.reduce(np.add, 0.0, r - m), r * m + i
        return sn.map(row, x)

    x = np.random.default_rng(7).normal(size=(50, 40))
    total, scaled = check(prog, x)
    m = x.max(axis=1, keepdims=True)
    np.testing.assert_allclose(total, (x - m).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(scaled, x * m + x.argmax(axis=1)[:, None], rtol=1e-12)


def test_explain_shows_scan_and_map_rules() -> None:
    a = np.ones((3, 5))
    text = str(stax.explain(sn.jit(lambda a: sn.map(lambda r: sn.scan(np.add, 0.0, r * 2), a)),
                            a))
    assert SCAN in text and "main pipeline: np.add.accumulate over S2, axis 1" in text
    text = str(stax.explain(sn.jit(lambda a: sn.map(lambda r: r * 2, a)), a))
    assert MAP in text and "main pipeline: map over S2" in text
