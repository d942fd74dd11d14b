"""[SEIDEL] npbench's seidel-2d as a SCoP (issue 10): its row store and the element stores of
its nested column loop are statements of one loop nest (`stax.poly.loop_nest`), run in their
original order or as the tiled wavefront; and SCoP statements with the op table's elementwise
ops. Every result is compared with the same function run by NumPy on the same input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import make_array, run_sanitized

import stax
from stax.loops import records
from stax.ops.table import TRANSCENDENTAL_TOL
from stax.poly import loop_nest

from .test_poly_nest import SMALL_TILES, nest_of, run


def seidel_2d(TSTEPS, N, A):  # noqa: N803 - npbench's seidel_2d_numpy.py, verbatim
    for t in range(0, TSTEPS - 1):  # noqa: B007
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] +
                           A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] +
                           A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def column_recurrence(a, steps):
    """A column loop reading its right neighbour (not yet stored: in place is NumPy's)."""
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                a[i, j] = 0.5 * a[i, j + 1] + 0.25 * (a[i - 1, j] + a[i + 1, j - 1])
    return a


def seidel_exact(tsteps: int, a: np.ndarray) -> np.ndarray:
    """Stax's seidel-2d on `a` (written in place) is NumPy's bit for bit; returns the loop's
    polyhedral decision."""
    want = a.copy()
    seidel_2d(tsteps, want.shape[0], want)
    jitted = stax.jit(seidel_2d, strict=True)
    jitted(tsteps, a.shape[0], a)
    np.testing.assert_array_equal(a, want)
    assert a.dtype == want.dtype
    return jitted


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("n", "tsteps"), [(3, 4), (4, 3), (7, 5), (12, 2), (13, 1), (6, 0)])
def test_seidel_2d_in_order_nest(dtype, n, tsteps):
    jitted = seidel_exact(tsteps, make_array((n, n), dtype))
    if tsteps > 2 and n > 3:  # a one-trip loop is unrolled (no loop, no SCoP)
        nest = nest_of(records(jitted))
        assert "[poly_sweep_nest]" in nest and "3 statement(s)" in nest


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_seidel_2d_non_contiguous_written_back(layout):
    base = make_array((18, 18), "float64")
    a = base.T if layout == "transposed" else base[::2, ::2]
    before = base.copy()
    jitted = seidel_exact(4, a)  # `a` is compared with NumPy's after the call
    assert "[poly_sweep_nest]" in nest_of(records(jitted))
    untouched = np.ones(base.shape, bool)
    if layout == "strided":
        untouched[::2, ::2] = False
        np.testing.assert_array_equal(base[untouched], before[untouched])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("n", "tsteps"), [(7, 4), (13, 9)])
def test_seidel_2d_tiled_wavefront(monkeypatch: pytest.MonkeyPatch, threads, n, tsteps):
    """Forced on small arrays with tiny tiles (partial tiles everywhere): NumPy's values."""
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setattr(loop_nest, "TILES", SMALL_TILES)
    monkeypatch.setattr(loop_nest, "TILE_SWEEPS", True)
    monkeypatch.setattr(loop_nest, "PARALLEL_WIDTHS", {2, 3, 4})
    monkeypatch.setenv("OMP_NUM_THREADS", str(threads))
    nest = nest_of(records(seidel_exact(tsteps, make_array((n, n), "float64"))))
    assert "[poly_time_tiling]" in nest and "(1 + 2t + i + x0)" in nest
    assert ("omp parallel for" in records(seidel_exact(tsteps, make_array((n, n), "float64"))
                                          )[-1].body.source) == (threads > 1)


def test_explain_shows_the_sweep_nest(monkeypatch: pytest.MonkeyPatch):
    """The nest's tree and the check of its order; the wavefront (tried for arrays beyond L2,
    here any) with its proof and why it is not taken."""
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    a = make_array((9, 9), "float64")
    jitted = stax.jit(seidel_2d)
    jitted(5, 9, a.copy())
    text = str(stax.explain(jitted, 5, 9, a.copy()))
    assert "polyhedral schedule [poly_sweep_nest]" in text
    for name in ("S0[t, i, x0]", "S1[t, i, x0]", "S2[t, i, x0]"):
        assert name in text
    assert "check of the original order: legal" in text
    assert "the wavefront (not taken)" in text and "band (permutable)" in text
    assert "stax.poly's loop nest" in text and "#define S2(t, i, x0)" in text


def test_illegal_wavefront_refused(monkeypatch: pytest.MonkeyPatch):
    """Without a skew the (t, i, column) band is not permutable: isl refuses to tile it (the
    violated dependences shown) and the sweep keeps its original order."""
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setattr(loop_nest, "TILE_SWEEPS", True)
    monkeypatch.setattr(loop_nest, "SKEWS", ((0, False),))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nest = nest_of(records(seidel_exact(5, make_array((8, 8), "float64"))))
    assert "[poly_sweep_nest]" in nest
    assert "no time skew of 0*t makes the band permutable" in nest
    assert "so no tiling of it is legal" in nest and "band at []: not permutable" in nest


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_column_loop_reading_right_neighbour(dtype):
    _, recs = run(column_recurrence, make_array((7, 9), dtype), 3)
    assert "[poly_sweep_nest]" in nest_of(recs)


def ops_stencil(a, steps):
    """Statement ops beyond + - * /: sqrt, abs, exp, minimum/maximum, comparisons, where."""
    for _ in range(steps):
        a[1:-1] = np.where(a[:-2] > a[2:], np.sqrt(np.abs(a[:-2] * a[2:])),
                           np.maximum(a[1:-1], -0.5)) + np.minimum(np.exp(-np.abs(a[1:-1])),
                                                                   0.75)
    return a


def ops_sweep(a, steps):
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 1:-1] = np.where(a[i - 1, 1:-1] <= a[i + 1, 1:-1], np.tanh(a[i, 1:-1]),
                                  np.abs(a[i - 1, 2:] - 0.25))
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("fn", "shape", "rule"), [(ops_stencil, (23,), "poly_time_tiling"),
                                                   (ops_sweep, (7, 8), "poly_sweep_nest")])
def test_statement_ops_of_the_op_table(monkeypatch: pytest.MonkeyPatch, dtype, fn, shape, rule):
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setattr(loop_nest, "TILES", SMALL_TILES)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    a = make_array(shape, dtype, low=-2.0, high=2.0)
    a[1] = np.nan  # NaN through the comparisons, where, sqrt and minimum/maximum
    want = fn(a.copy(), 5)
    got = stax.jit(fn)(a.copy(), 5)
    rtol = TRANSCENDENTAL_TOL[dtype == "float64"]  # exp, tanh: within 4 ulp of NumPy's
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    jitted = stax.jit(fn)
    jitted(a.copy(), 5)
    assert f"[{rule}]" in nest_of(records(jitted))


SANITIZED = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np, stax
from stax.loops import records
from stax.poly import loop_nest
from loops.test_poly_seidel import seidel_2d
for tiled in (False, True):  # the nest in its original order, then the tiled wavefront
    loop_nest.MIN_BYTES, loop_nest.TILE_SWEEPS = 0, tiled
    loop_nest.TILES, loop_nest.PARALLEL_WIDTHS = {{2: (3, 7), 3: (2, 3, 5), 4: (2, 3, 3, 4)}}, {{3}}
    a = np.random.default_rng(0).random((11, 11))
    want = a.copy()
    seidel_2d(6, 11, want)
    jitted = stax.jit(seidel_2d)
    jitted(6, 11, a)
    rule = "poly_time_tiling" if tiled else "poly_sweep_nest"
    assert f"[{{rule}}]" in records(jitted)[-1].body.nest
    np.testing.assert_array_equal(a, want)
print("sanitized ok")
"""


def test_seidel_nests_run_clean_under_sanitizers(tmp_path: Path) -> None:
    """[SEIDEL] The sweep nest in order and the tiled wavefront (parallel tiles on 2 threads,
    partial tiles) under ASan + UBSan."""
    run_sanitized(SANITIZED.format(tests=str(Path(__file__).parents[1])), tmp_path / "cache")


def left_reads(a, steps):
    """A row store reading its own row left of the stored columns (NumPy: before the store):
    its columns run in descending order in the nest."""
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 2:] = 0.5 * (a[i, :-2] + a[i, 1:-1]) - 0.25 * a[i - 1, 2:] + a[i + 1, 1:-1]
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_row_store_reading_its_row_to_the_left(dtype):
    _, recs = run(left_reads, make_array((7, 9), dtype), 4)
    assert "[poly_sweep_nest]" in nest_of(recs) and "-x0" in nest_of(recs)
