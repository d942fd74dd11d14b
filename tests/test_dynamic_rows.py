"""[H11] Short rows of a shape-generic program (issue 11): a region whose innermost loops run
over one size symbol is also compiled for each short length of it (a C++ template on the size,
chosen at launch by a switch). Every length, short or not, must give NumPy's result."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import run_sanitized
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dynamic import layernorm, softmax

import stax
from stax.api import _symbol_values
from stax.runtime.compiler import ISA_LEVELS, isa_level
from stax.tiling.plan import SMALL_ROW


def rmsnorm(x, g):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g


def column_stats(x):
    return x.sum(0), x.var(0), x.max(0)


def row_stats(x):
    return x.sum(1), x.min(1), x.mean(1)


FUNCTIONS = {"softmax": softmax, "layernorm": layernorm, "rmsnorm": rmsnorm,
             "column_stats": column_stats, "row_stats": row_stats}
JITTED = {(name, dtype): stax.jit(fn, dynamic=True) for name, fn in FUNCTIONS.items()
          for dtype in ("float32", "float64")}  # compiled on first use (hypothesis draws)
COLS = [0, 1, 2, 3, 4, 7, 8, 9, 10, 15, 16, 17, 31, 33, 100]


def _args(name: str, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    cols = x.shape[-1]
    if name == "layernorm":
        return x, rng.standard_normal(cols).astype(x.dtype), rng.standard_normal(cols).astype(
            x.dtype)
    if name == "rmsnorm":
        return x, rng.standard_normal(cols).astype(x.dtype)
    return (x,)


def _check(got, expected, rtol: float, atol: float) -> None:
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), dtype=st.sampled_from(["float32", "float64"]),
       rows=st.integers(0, 70), cols=st.sampled_from(COLS), special=st.booleans())
def test_short_rows_give_numpys_result(name, dtype, rows, cols, special):
    rng = np.random.default_rng(rows * 1000 + cols)
    x = (rng.standard_normal((rows, cols)) * 3).astype(dtype)
    if special and x.size:  # NaN and inf somewhere in the rows
        x.flat[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
    args = _args(name, x, rng)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # means of empty rows, as NumPy warns
        try:
            expected = FUNCTIONS[name](*args)
        except ValueError:  # max/min of an empty axis: Stax raises as NumPy does
            with pytest.raises(ValueError):
                JITTED[name, dtype](*args)
            return
        got = JITTED[name, dtype](*args)
    tol = 1e-4 if dtype == "float32" else 1e-10
    _check(got, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["softmax", "layernorm", "column_stats"])
def test_one_program_planned_on_long_rows_serves_every_short_length(name):
    """Traced on long rows: the short-row variant still exists (planned for representative
    sizes), is compiled per length, and the solver sends every short length to it."""
    fn = FUNCTIONS[name]
    f = stax.jit(fn, dynamic=True)
    rng = np.random.default_rng(5)
    f(*_args(name, rng.standard_normal((40, 300)).astype(np.float32), rng))
    program = next(iter(f.cache.values())).program
    short = [k for k, v in enumerate(program.variants)
             if any(p.row_symbol for p in v.plans.values())]
    assert short, "no variant compiled per short row length"
    assert "_rows<2>" in program.cpp and "switch (stax_sizes[" in program.cpp
    for cols in [*range(2, SMALL_ROW + 2), 40, 300]:
        for rows in (1 if name == "column_stats" else 2, 3, 250):
            x = rng.standard_normal((rows, cols)).astype(np.float32)
            args = _args(name, x, rng)
            _check(f(*args), fn(*args), rtol=1e-4, atol=1e-4)
            if cols <= SMALL_ROW and rows > 1 and program.tiling_key is not None:
                key = program.tiling_key(*_symbol_values(args).values())
                lengths = {n for p in program.variants[key].plans.values()
                           for n in p.row_lengths}
                assert cols in lengths, (rows, cols, key)
    assert f.cache_info().compiles <= 2, f.not_generic  # rows of 1: a class of its own


def test_explain_records_the_short_rows_decision():
    f = stax.jit(softmax, dynamic=True)
    x = np.random.default_rng(2).standard_normal((300, 6)).astype(np.float32)
    text = str(stax.explain(f, x))
    assert "short rows: the innermost loops run over s1" in text
    assert "also compiled for s1 = 2..15" in text


def _transpose_add(x, y):
    return x.T + y


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_transposes_of_a_few_long_rows_are_tiled(dtype):
    """[GEN] x.T + y whose result has 8-15 rows (x's transpose read along its short rows) takes
    the tiled form, specialized and generic: whole and partial tiles give NumPy's result
    (exactly: one addition), a few rows more or less than a register block too."""
    generic = stax.jit(_transpose_add, dynamic=True)
    rng = np.random.default_rng(3)
    for rows, cols in [(10, 1000), (8, 300), (13, 257), (15, 40), (9, 16), (11, 3000),
                       (7, 500), (16, 33)]:
        x = (rng.standard_normal((cols, rows)) * 100).astype(dtype)
        y = (rng.standard_normal((rows, cols)) * 100).astype(dtype)
        expected = _transpose_add(x, y)
        special = stax.jit(_transpose_add, dynamic=False)
        np.testing.assert_array_equal(special(x, y), expected)
        np.testing.assert_array_equal(generic(x, y), expected)
        (plan,) = special.cache[special.key((x, y))].program.plans
        program = generic.cache[generic.key((x, y))].program
        values = _symbol_values((x, y))
        key = program.tiling_key(*(values[s] for s in generic.cache[generic.key(
            (x, y))].traced.env.hints)) if program.tiling_key else 0
        (chosen,) = program.variants[key].plans.values()
        assert (plan.form == "tiled") == (chosen.form == "tiled") == (rows >= 8), (rows, cols)
    assert generic.cache_info().compiles == 1


def _means(x):
    return x.mean(-1), x.mean(), x.mean(0, keepdims=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_means_over_run_time_sizes_divide_exactly(dtype):
    """[GEN] A mean over symbolic sizes divides by the run-time count (stax_div_size): a product
    by the exact reciprocal for a power of two, a division otherwise; both are NumPy's result
    exactly. Integer-valued data: every sum is exact whatever the order, so only the division
    rounds."""
    f = stax.jit(_means, dynamic=True)
    rng = np.random.default_rng(7)
    for rows, cols in [(3, 16), (2, 17), (5, 255), (4, 256), (3, 257), (2, 100), (2, 1024),
                       (16, 3), (7, 2)]:
        x = rng.integers(-8, 9, (rows, cols)).astype(dtype)
        for got, expected in zip(f(x), _means(x), strict=True):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
    assert "stax_div_size(" in next(iter(f.cache.values())).program.cpp
    assert f.cache_info().compiles == 1


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("rows", [1, 2, 3])
def test_long_rows_recompute_what_they_do_not_store(dtype, rows):
    """[GEN] Rows longer than STREAMED_ROW_BYTES (softmax's exp recomputed by its two
    consumers) and layernorm's x - mean (recomputed per row): NumPy's result, specialized and
    generic, with NaN and inf in some rows and a row of equal values."""
    from stax.lower import STREAMED_ROW_BYTES

    cols = STREAMED_ROW_BYTES // np.dtype(dtype).itemsize + 7
    rng = np.random.default_rng(rows)
    x = (rng.standard_normal((rows, cols)) * 3).astype(dtype)
    if rows > 1:
        x[1, [5, cols - 1]] = [np.nan, np.inf]
    x[-1] = 2.5 if rows > 2 else x[-1]
    g, b = rng.standard_normal(cols).astype(dtype), rng.standard_normal(cols).astype(dtype)
    tol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    for name, args in (("softmax", (x,)), ("layernorm", (x, g, b))):
        with np.errstate(all="ignore"):
            expected = FUNCTIONS[name](*args)
            for dynamic in (False, True):
                got = stax.jit(FUNCTIONS[name], dynamic=dynamic)(*args)
                _check(got, expected, rtol=tol, atol=tol)


def _row_reductions(x):
    positive = x > 0
    return (x.sum(-1), x.max(-1), x.min(-1), positive.any(-1), positive.all(-1),
            (x * x).sum(-1), np.abs(x).prod(-1))


RUNNABLE = ISA_LEVELS[ISA_LEVELS.index(isa_level()):]
LANE_COLS = [2, 3, 15, 16, 17, 31, 33, 99, 100, 101, 255, 256, 257, 4097, 5000]


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_lane_reductions_over_run_time_lengths(dtype, isa):
    """[GEN2] Reductions over a run-time row length accumulate whole vectors in lane arrays
    folded as a tree, then the remainder one by one (and chunks past 4096): sum, max, min,
    any, all, prod over lengths around every vector multiple, rows with NaN and inf, one
    generic program, against NumPy."""
    if isa not in RUNNABLE:
        pytest.skip(f"{isa} does not run here")
    f = stax.jit(_row_reductions, dynamic=True, isa=isa)
    rng = np.random.default_rng(7)
    tol = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-12}[dtype]
    for cols in LANE_COLS:
        x = rng.uniform(0.5, 1.5, (5, cols)).astype(dtype) * rng.choice([-1, 1], (5, cols))
        x[1, cols // 2] = np.nan
        x[2, cols - 1] = np.inf
        x[3, 0] = -np.inf
        x[4] = np.abs(x[4])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = _row_reductions(x)
            got = f(x)
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=tol, atol=0)
    assert f.cache_info().compiles == 1
    assert "stax_lanes" in next(iter(f.cache.values())).program.cpp


def _cast_sum(x):
    return x.astype(np.int32).sum(-1)


def test_lane_reductions_raise_the_cast_warning():
    """[GEN2] A lane loop whose body sets error bits (a float -> int cast of NaN) keeps them."""
    f = stax.jit(_cast_sum, dynamic=True)
    for cols in (17, 100, 257):
        x = np.arange(3 * cols, dtype=np.float32).reshape(3, cols)
        np.testing.assert_array_equal(f(x), _cast_sum(x))
        x[1, cols - 1] = np.nan  # in the remainder
        x[2, 0] = np.nan  # in the lanes
        with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
            got = f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            np.testing.assert_array_equal(got, _cast_sum(x))
    assert f.cache_info().compiles == 1


LANES_SANITIZED = """
import numpy as np, stax
def f(x):
    return x.sum(-1), x.max(-1), (x * x).sum(-1)
g = stax.jit(f, dynamic=True)
rng = np.random.default_rng(0)
for cols in (2, 15, 17, 100, 257, 4099):
    x = rng.standard_normal((3, cols)).astype(np.float32)
    for got, want in zip(g(x), f(x)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
assert g.cache_info().compiles == 1
print("sanitized ok")
"""


def test_lane_reductions_run_clean_under_sanitizers(tmp_path):
    """[GEN2] The lane loops and their remainders read only inside the rows (ASan + UBSan)."""
    run_sanitized(LANES_SANITIZED, tmp_path)


def all_any_axes(x):
    pos = x > 0
    return (np.all(pos, axis=1), np.any(pos, axis=(0, 2)), pos.all(axis=-1, keepdims=True),
            np.all(pos), np.any(np.isnan(x), axis=0), np.all(x, axis=(0, 1)))


@pytest.mark.parametrize("budget", [0, None])
def test_short_row_copies_stay_within_the_module_budget(monkeypatch, budget):
    """Short-row copies cost g++ time: a module holds at most ROW_COPIES of them (this program
    made 360 copies, 36 s of g++ at its second shape); a variant over the budget runs every
    length in its generic body, and explain says so. Results stay NumPy's at every length."""
    from stax.runtime import wrapper

    if budget is not None:
        monkeypatch.setattr(wrapper, "ROW_COPIES", budget)
    f = stax.jit(all_any_axes, dynamic=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 2))
    _check(f(x), all_any_axes(x), 0, 0)
    program = next(iter(f.cache.values())).program
    copies = [max((len(p.row_lengths) for p in v.plans.values()), default=0)
              * len(v.plans) for v in program.variants]
    assert sum(copies) <= wrapper.ROW_COPIES, copies
    if budget == 0:
        assert "_rows<" not in program.cpp
        assert "short rows not compiled per length" in str(stax.explain(f, x))
    for shape in [(2, 2, 2), (5, 3, 7), (4, 17, 3), (0, 3, 2)]:
        for v in (rng.standard_normal(shape), rng.standard_normal(shape[::-1]).T):
            v[..., 0] = np.nan
            _check(f(v), all_any_axes(v), 0, 0)
