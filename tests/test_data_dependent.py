"""[DYN16] Data-dependent result shapes compiled, sized at run time (issue 16, item 5).

`x[mask]`, `np.nonzero` / `flatnonzero` / `argwhere`, `np.compress` / `extract`, `np.unique`
and `np.bincount` without a known length compile: the wrapper binds the result's length (a
data-dependent symbol `d0`) from NumPy's routine and later ops run in the same program. Every
result is compared with NumPy's on the same arguments; no `GraphBreakWarning` may be raised.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning
from stax.ir.sym import env_of
from stax.runtime import compaction

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"]


def _check(fn: Callable[..., Any], *calls: tuple[Any, ...], **options: Any) -> stax.api.Jitted:
    """Each call's result equals NumPy's (dtype, shape, values), with no graph break."""
    jitted = stax.jit(fn, **options)
    for args in calls:
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            got = jitted(*args)
        _same(got, want)
    return jitted


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype.kind == "f":
        tol = 1e-2 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0 if np.dtype(dtype).kind == "u" else -4, 5, shape).astype(dtype)


def _compiled(jitted: stax.api.Jitted, *args: Any, nonempty: bool = False) -> None:
    """The program holds a data-dependent size, and no guard on it (a guard decided on the
    traced stand-in would send other counts to NumPy), but `d0 != 0` / `d0 > 0` when
    `nonempty` (a max of an empty selection is NumPy's error)."""
    comp = jitted.compile(*args)
    assert "# [DYN16] a data-dependent size" in comp.program.wrapper
    env = env_of(b.shape for b in comp.schedule.program.buffer_map.values())
    assert env is not None and env.data, env
    guards = {(op, str(lhs), rhs) for op, lhs, rhs in env.data_guards()}
    assert guards <= ({("!=", "d0", 0), (">", "d0", 0)} if nonempty else set()), \
        env.guard_text()


@pytest.mark.parametrize("dtype", DTYPES)
def test_mask_select_then_ops_over_dtypes(dtype: str) -> None:
    def fn(x: np.ndarray) -> Any:
        y = x[x > 0] if dtype != "bool" else x[x]
        return y, y.sum(), y * 2
    x = _data(dtype, (64,))
    j = _check(fn, (x,), (_data(dtype, (64,), 1),), (_data(dtype, (64,), 2),))
    _compiled(j, x)


def test_counts_change_between_calls_and_shapes() -> None:
    def fn(x: np.ndarray, t: float) -> Any:
        y = x[x > t]
        return y.mean(), y.max(), (y - y.min()) / 2
    rng = np.random.default_rng(3)
    calls = [(rng.standard_normal(n), t) for n in (50, 50, 300, 7, 5000) for t in (-1.0, 0.5)]
    j = _check(fn, *calls)
    _compiled(j, *calls[0], nonempty=True)
    _check(fn, *calls, dynamic=True)
    _check(fn, *calls, fuse=False)


def _misses(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The data sizes that sent a call to NumPy (programs built after this call record them)."""
    misses: list[tuple[str, int]] = []
    miss = stax.runtime.wrapper.data_size_miss

    def record(symbol: str, value: int) -> None:
        misses.append((symbol, value))
        miss(symbol, value)
    monkeypatch.setattr(stax.runtime.wrapper, "data_size_miss", record)
    return misses


def test_empty_single_and_all_true_selections_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """[COMPACT] Counts 0 and 1 run the compiled program (no decision of the compiler assumes
    a data size is at least 2 without a guard), with NumPy's results."""
    misses = _misses(monkeypatch)

    def fn(x: np.ndarray) -> Any:
        y = x[x > 0]
        return y.sum(), y * 3, y.size, np.cumsum(y), np.flatnonzero(x > 0) * 2
    calls = [(np.arange(1.0, 9.0),), (-np.ones(8),), (np.array([-1.0, 2, -3, -4]),),
             (np.zeros(8),), (np.ones(8),), (np.r_[-np.ones(40), 0.5, -np.ones(40)],),
             (-np.ones(81),)]
    j = _check(fn, *calls)
    _compiled(j, np.ones(8))
    assert misses == []
    rng = np.random.default_rng(12)
    a = rng.standard_normal((30, 4))
    _check(lambda x, t: x[x[:, 0] > t].sum(0), (a, 9.0), (a, a[:, 0].max() - 1e-9), (a.T, 0.0))
    _check(lambda x, t: (x[x > t] * 2).astype(np.int32), (a.astype(np.int64), 99), (a, 2.0))
    assert misses == []
    with pytest.raises(ValueError, match="zero-size"):  # NumPy's error for an empty max
        stax.jit(lambda x: x[x > 0].max())(-np.ones(8))


def test_empty_and_0d_inputs_give_numpys_results() -> None:
    """A result that cannot reach length 2 (an empty or 0-d input) stays a graph break."""
    cases = [(lambda x: x[x > 0] * 2, np.zeros(0)), (lambda x: np.nonzero(x), np.zeros((0, 3))),
             (lambda x: np.unique(x), np.zeros(0, np.int32)), (lambda x: x[x > 0], np.float64(2.0)),
             (lambda x: np.flatnonzero(x), np.array(3.0)), (lambda x: np.argwhere(x), np.array(0))]
    for fn, x in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            _same(stax.jit(fn)(x), fn(x))


def test_mask_over_leading_axes_strided_and_transposed() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((12, 10))
    _check(lambda x: x[x[:, 0] > 0].sum(0), (a,), (a[::-1],))
    _check(lambda x: x[x > 0.2] + 1, (a.T,), (a[::2, ::3],))
    _check(lambda x, m: x[m] * 2, (a, a > 0), (a.T.copy(), a.T > 1))  # a mask argument
    const = np.array([True, False, False] * 4)
    _check(lambda x: x[const].sum(1), (a,))  # a constant mask: its count is known


def test_nan_and_inf_selected() -> None:
    x = np.array([np.nan, 1.0, -np.inf, np.inf, 2.0, np.nan, -3.0])
    _check(lambda x: x[~np.isnan(x)].sum(), (x,))
    _check(lambda x: x[x == x] * 2, (x,))
    _check(lambda x: np.unique(x), (x,))


def test_chained_selections() -> None:
    def fn(x: np.ndarray) -> Any:
        y = x[x > 0]
        z = y[y < 1.0]
        return z.sum(), z * y.mean(), y.shape[0] > 0
    rng = np.random.default_rng(5)
    j = _check(fn, *[(rng.standard_normal(200),) for _ in range(4)])
    comp = j.compile(rng.standard_normal(200))
    call = comp.program.wrapper.split("def proven")[0]
    assert call.count("# [DYN16] a data-dependent size") == 2


def test_strided_slice_of_a_selection() -> None:
    """x[x > 0][::2]: checking a representative shape compared the guards with `in` on Syms,
    which recorded new guards while iterating them (compiling never finished)."""
    rng = np.random.default_rng(13)
    _check(lambda x: (x[x > 0][::2], x[x > 0][-1:] * 2), (np.array([1.0, 2, -1, 5]),),
           *[(rng.standard_normal(n),) for n in (9, 40)])


def test_one_size_per_mask() -> None:
    """Selections under masks computed alike share one size (one check each, no guard)."""
    def fn(x: np.ndarray, y: np.ndarray) -> Any:
        return x[x > 0] - x[x > 0].mean(), x[x > 0] + y[x > 0], np.unique(y).size
    rng = np.random.default_rng(11)
    calls = [(rng.standard_normal(n), rng.integers(0, 9, n)) for n in (40, 40, 70)]
    j = _check(fn, *calls)
    _compiled(j, *calls[0])
    call = j.compile(*calls[0]).program.wrapper.split("def proven")[0]
    assert "d0 = " in call and "d1 = " in call and "d2 = " not in call


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint8", "float32", "float64"])
def test_nonzero_flatnonzero_argwhere(dtype: str) -> None:
    def fn(x: np.ndarray) -> Any:
        return (np.nonzero(x), x.nonzero()[1] * 2, np.flatnonzero(x) + 1,
                np.argwhere(x).sum(0), np.argwhere(x > 0), np.where(x))
    x2 = _data(dtype, (6, 7))
    _check(fn, (x2,), (_data(dtype, (6, 7), 9),), (x2.T,), (x2[::2],))


def test_compress_and_extract() -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 8))
    _check(lambda x: np.compress(x[:, 0] > 0, x, axis=0).sum(), (a,), (-np.abs(a) + 1,))
    _check(lambda x: np.compress(x[0] > 0, x, axis=1) * 2, (a,))
    _check(lambda x: np.compress(x.ravel() > 0, x), (a,))
    _check(lambda x, c: x.compress(c, axis=1), (a, np.arange(8) % 3 == 0))
    _check(lambda x: np.extract(x > 0.5, x) - 1, (a,), (a.T,))
    _check(lambda x: np.extract(np.mod(np.arange(x.size), 3) == 0, x), (a,))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float16", "float64"])
def test_unique_values_index_counts(dtype: str) -> None:
    x = _data(dtype, (40,))
    _check(lambda x: np.unique(x), (x,), (_data(dtype, (3, 5), 1),))
    _check(lambda x: np.unique(x, return_counts=True), (x,))
    j = _check(lambda x: np.unique(x, return_index=True, return_counts=True), (x,),
               (_data(dtype, (57,), 2),), (_data(dtype, (90,), 3),))
    _compiled(j, x, nonempty=True)  # counts: the sizes end at the input's (an empty x: NumPy)


def test_unique_nan_and_later_ops() -> None:
    x = np.array([3.0, np.nan, 1.0, np.nan, 3.0, 2.0])
    _check(lambda x: np.unique(x) * 2, (x,))
    _check(lambda x: np.unique(x, equal_nan=False), (x,))
    rng = np.random.default_rng(7)
    j = _check(lambda ids: np.unique(ids).size + np.unique(ids).sum(),
               *[(rng.integers(0, k, 300),) for k in (3, 50, 1000)])
    _compiled(j, rng.integers(0, 9, 300))


def test_unique_return_inverse() -> None:
    """[SEL] return_inverse (was a graph break): the input's shape, with the other results;
    NaNs with equal_nan True/False; values rebuilt from it."""
    rng = np.random.default_rng(25)
    xs = [(rng.integers(0, 5, 30),), (rng.integers(0, 5, (4, 6)).astype(np.float32),),
          (np.array([3.0, np.nan, 1, np.nan, 3, 2]),), (np.arange(10)[::-1],),
          (np.zeros(7, np.int8),), (rng.random(20) > 0.5,), (rng.integers(0, 9, (5, 4)).T,)]
    _check(lambda x: np.unique(x, return_inverse=True), *xs)
    _check(lambda x: np.unique(x, return_index=True, return_inverse=True, return_counts=True),
           *xs)
    _check(lambda x: np.unique(x, return_inverse=True, equal_nan=False), *xs)
    _check(lambda x: (lambda u, inv: u[inv] * 2)(*np.unique(x, return_inverse=True)), *xs)


def test_bincount_without_minlength() -> None:
    rng = np.random.default_rng(8)
    calls = [(rng.integers(0, k, 100),) for k in (3, 17, 400)]
    j = _check(lambda x: np.bincount(x), *calls)
    _compiled(j, *calls[0])
    _check(lambda x: np.bincount(x) / x.size, *calls)
    _check(lambda x: np.bincount(x, minlength=5), *calls)
    _check(lambda x, w: np.bincount(x, weights=w).cumsum(),
           *[(c[0], rng.random(100)) for c in calls])
    _check(lambda x: np.bincount(x.astype(np.int32)), (np.array([0, 0, 0, 0]),))
    with pytest.raises(ValueError):  # NumPy's error for a negative value
        stax.jit(lambda x: np.bincount(x) * 2)(np.array([1, -1, 3]))


def test_count_one_runs_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """[SEL] A selection of one element broadcast against its mean/std, or its last element,
    runs the compiled program (a guard `d0 != 1` from comparing shapes sent it to NumPy); an
    empty one's y[-1] is NumPy's IndexError."""
    misses = _misses(monkeypatch)

    def fn(x: np.ndarray) -> Any:
        y = x[x > 0]
        return (y - y.mean()) / (y.std() + 1), y[-1], y[-1:] * 2
    rng = np.random.default_rng(26)
    j = _check(fn, (rng.standard_normal(40),), (np.r_[-np.ones(20), 3.0, -np.ones(5)],),
               (np.ones(9),))
    assert misses == []  # the only guards: y[-1] needs d0 >= 1
    with pytest.raises(IndexError):
        j(-np.ones(9))


@pytest.mark.parametrize("block", [3, 64, 1 << 16])
def test_compiled_compaction_blocks(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """[SEL] stax.runtime.compaction against NumPy's boolean indexing, extract and flatnonzero:
    blocks with none/one/all selected, lengths around the block size, elements of 1/2/4/8
    bytes and rows of 8 bytes; other layouts are NumPy's."""
    monkeypatch.setattr(compaction, "BLOCK", block)
    monkeypatch.setattr(compaction, "MIN_ELEMENTS", 0)  # the compiled passes at every size
    rng = np.random.default_rng(27)
    for n in (0, 1, 2, block - 1, block, block + 1, 3 * block + 7):
        for mask in (rng.random(n) > 0.5, np.zeros(n, bool), np.ones(n, bool),
                     np.arange(n) == n - 1, rng.random(n) > 0.97):
            np.testing.assert_array_equal(compaction.flatnonzero(mask), np.flatnonzero(mask))
            for dtype in ("bool", "int8", "float16", "uint16", "float32", "int64",
                          "complex64", "complex128"):
                x = rng.standard_normal(n).astype(dtype)
                got = compaction.select(x, mask)
                assert got.dtype == x.dtype and got.flags.c_contiguous
                np.testing.assert_array_equal(got, x[mask])
                np.testing.assert_array_equal(compaction.extract(mask, x), np.extract(mask, x))
            rows = rng.standard_normal((n, 2)).astype(np.float32)
            np.testing.assert_array_equal(compaction.select(rows, mask), rows[mask])
            np.testing.assert_array_equal(compaction.select(rows.T.copy().T, mask), rows[mask])


COMPACTION = textwrap.dedent("""
    import numpy as np
    from stax.runtime import compaction
    compaction.MIN_ELEMENTS = 0  # the compiled passes at every size
    rng = np.random.default_rng(28)
    for n in (0, 1, 63, 64, 65, 200, 70000):
        for mask in (rng.random(n) > 0.5, np.zeros(n, bool), np.ones(n, bool)):
            assert np.array_equal(compaction.flatnonzero(mask), np.flatnonzero(mask))
            for dtype in ("int8", "float16", "float32", "int64"):
                x = rng.standard_normal(n).astype(dtype)
                assert np.array_equal(compaction.select(x, mask), x[mask])
    print("compaction ok")
""")


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_compiled_compaction_without_avx512(isa: str, tmp_path: Path) -> None:
    """[SEL] The branch-free scalar loops (no AVX-512 compress-store) give NumPy's results."""
    env = dict(os.environ, STAX_ISA=isa, STAX_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", COMPACTION], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "compaction ok" in result.stdout


def test_explain_names_the_data_dependent_size() -> None:
    def fn(x: np.ndarray) -> Any:
        return x[x > 0] * 2
    text = str(stax.explain(fn, np.arange(-4.0, 6.0)))
    assert "d0" in text and "x[mask]" in text
    text = str(stax.explain(lambda x: x[x > 0].sum(), np.arange(-4.0, 6.0)))  # [SEL]
    assert "masked_reduction: v4 = x[mask]" in text and "d0" not in text


# ---- [SEL] selections read only by whole reductions: no compaction -------------------------

def _masked(jitted: stax.api.Jitted, *args: Any, rewrites: int = 1) -> None:
    """The program was rewritten (`masked_reduction`) and holds no data-dependent size."""
    comp = jitted.compile(*args)
    assert [r.rule for r in comp.traced.graph.rewrites] == ["masked_reduction"] * rewrites
    assert "data-dependent size" not in comp.program.wrapper
    assert all(not str(d).startswith("d") for op in comp.traced.graph.ops
               for d in op.out.shape)


def _counts(dtype: str, n: int, seed: int) -> list[np.ndarray]:
    """Inputs whose `x > 0` selects none, one, a few, all."""
    x = _data(dtype, (n,), seed)
    one = np.zeros(n, dtype)
    one[n // 2] = 1
    return [x, np.zeros(n, dtype), one, np.ones(n, dtype)]


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint64", "float16", "float32",
                                   "float64"])
def test_masked_reductions_over_dtypes_and_counts(dtype: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """sum/mean/prod/any/all/count_nonzero/var/std and sizes of `x[x > 0]` reduce
    where(mask, x, identity): NumPy's values and dtypes for counts 0, 1, some and all."""
    def fn(x: np.ndarray) -> Any:
        y = x[x > 0]
        return (y.sum(), y.prod(), y.any(), (y > 1).all(), np.count_nonzero(y - 1), y.size,
                len(y.shape), y.astype(np.float64).mean(), y.astype(np.float64).var())
    misses = _misses(monkeypatch)
    calls = [(x,) for x in _counts(dtype, 64, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of an empty slice
        j = _check(fn, *calls)
    _masked(j, *calls[0])
    assert misses == []


def test_masked_reductions_std_of_one_and_leading_axes() -> None:
    """std/var of counts 0/1 (a guard `d0 != 1` sent them to NumPy), masks over leading axes
    (x[m].sum(0), keepdims), strided and transposed inputs, NaN selected, a mask from
    another array, a Python float threshold."""
    rng = np.random.default_rng(21)
    a = rng.standard_normal((40, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        j = _check(lambda x: (x[x > 2.5].std(), x[x > 2.5].var(ddof=0)),
                   *[(a[:, k].copy(),) for k in range(6)], (a[:, 0] * 0 + 3,), (-a[:, 0] ** 2,))
        _masked(j, a[:, 0].copy())
        j = _check(lambda x, t: (x[x[:, 0] > t].sum(0), x[x[:, 0] > t].mean(0, keepdims=True)),
                   (a, 0.0), (a, 9.0), (a, a[:, 0].max() - 1e-9), (a.T.copy().T, -9.0))
        _masked(j, a, 0.0)
    _check(lambda x: x[x > 0].sum(), (a.T,), (a[::3, 1::2],))  # strided, transposed
    x = np.array([np.nan, 1.0, -np.inf, np.inf, 2.0, np.nan, -3.0])
    _check(lambda x: (x[x != 2.0].sum(), x[~np.isnan(x)].mean()), (x,))
    _check(lambda x, y: (x[y > 0.5] * 2 + 1).sum(), (a[:, 0].copy(), a[:, 1].copy()),
           (a[:, 2].copy(), -np.ones(40)))
    j = _check(lambda x: x[x > 0].sum().astype(np.float32) / 4, (a[:, 3].copy(),))
    _masked(j, a[:, 3].copy())


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32"])
def test_masked_max_min_check_the_count(dtype: str) -> None:
    """max/min (no identity) start from the dtype's end and check the count: NumPy's
    ValueError for an empty selection, NaN propagated; several selections under one mask
    (`x[m] * w[m]`) share the count."""
    def fn(x: np.ndarray, w: np.ndarray) -> Any:
        m = w > 0.25
        return x[m].max(), x[m].min(), (x[m] * 2).max(), (w[m] * w[m]).sum() / w[m].size
    rng = np.random.default_rng(23)
    x = _data(dtype, (50,), 3)
    calls = [(x, rng.random(50)), (x, np.r_[np.zeros(49), 1.0]), (x, np.ones(50))]
    j = _check(fn, *calls)
    _masked(j, *calls[0])
    for f in (lambda x, w: x[w > 0.25].max(), lambda x, w: x[w > 0.25].min()):
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            stax.jit(f)(x, np.zeros(50))
    if dtype.startswith("float"):
        nan = np.r_[x[:10], np.nan, x[11:]]
        _check(lambda x: (x[x != 0].max(), x[x != 0].min()), (nan,), (x,))
    rows = _data(dtype, (20, 3), 4)
    _check(lambda x, w: x[w > 0.5].max(0, keepdims=True), (rows, rng.random(20)),
           (rows, np.r_[1.0, np.zeros(19)]))


def test_mask_over_inner_axes() -> None:
    """[SEL] x[:, m], x[1:, m, ::2], x[..., m], x[m, 1:]: sliced, the mask's axes moved
    first, selected, moved back (were graph breaks); reduced ones are not compacted."""
    rng = np.random.default_rng(24)
    a = rng.standard_normal((4, 6, 3))
    cases = [lambda x: x[:, x[0, :, 0] > 0], lambda x: x[:, :, x[0, 0] > 0] * 2,
             lambda x: x[:, x[0] > 0].sum(0), lambda x: x[1:, x[0, :, 0] > 0, ::2],
             lambda x: x[..., x[0, 0] > 0], lambda x: x[x[:, 0, 0] > 0, 1:],
             lambda x: x[..., x[0, :, 0] > 0, :], lambda x: x[:, [True, False] * 3] + 1,
             lambda x: x[:, x[0, :, 0] > 9]]
    for fn in cases:
        _check(fn, (a,), (a[:, ::-1],), (-np.abs(a),), (a.transpose(1, 0, 2).copy().transpose(
            1, 0, 2),))
    with pytest.raises(NotImplementedError, match="boolean mask"):  # an integer apart
        stax.jit(lambda x: x[1, x[0] > 2], strict=True)(a)


def test_masked_reductions_chained_and_mixed() -> None:
    """A reduced selection of a compacted selection; a selection also used compacted keeps
    its extern call (one size), and argmax and an integer `//` (a flag on unselected
    elements) are not rewritten."""
    rng = np.random.default_rng(22)
    calls = [(rng.standard_normal(100),) for _ in range(3)] + [(-np.ones(100),)]

    def chained(x: np.ndarray) -> Any:
        y = x[x > 0]
        return y * 2, y[y < 1.0].sum(), y[y < 1.0].size
    j = _check(chained, *calls)
    comp = j.compile(*calls[0])
    assert [r.rule for r in comp.traced.graph.rewrites] == ["masked_reduction"]
    assert comp.program.wrapper.split("def proven")[0].count("a data-dependent size") == 1
    j = _check(lambda x: (x[x > 0].sum(), x[x > 0] - 1), *calls)
    assert not j.compile(*calls[0]).traced.graph.rewrites
    j = _check(lambda x: (x[x > 0].sum(), np.argmax(x[x > 0])), *calls[:3])
    assert not j.compile(*calls[0]).traced.graph.rewrites
    ints = np.arange(-20, 20)
    j = _check(lambda x: (7 // x[x != 0]).sum(), (ints,))
    assert not j.compile(ints).traced.graph.rewrites


SANITIZED = textwrap.dedent("""
    import numpy as np, stax
    rng = np.random.default_rng(0)
    cases = [
        (lambda x: (x[x > 0] * 2, x[x > 0].sum(), np.cumsum(x[x > 0]).mean(),
                    np.flatnonzero(x > 0.5), x.astype(np.int8)[x < 0]),
         [rng.standard_normal(n) for n in (9, 300)] + [-np.ones(40), np.r_[-np.ones(30), 2.0]]),
        (lambda x: np.unique(x, return_counts=True), [rng.integers(0, 9, 50)]),
        (lambda x: np.bincount(x).cumsum(), [rng.integers(0, 30, 64)]),
        (lambda x: np.nonzero(x > 0.3)[1] + 1, [rng.random((7, 9)).astype(np.float32)]),
        (lambda x: (x[x > 0].std(), x[x > 0].sum(), x.reshape(-1, 3)[x[::3] > 0].mean(0)),
         [rng.standard_normal(n) for n in (9, 300)] + [-np.ones(39), np.r_[-np.ones(30), 2.0,
                                                                         -np.ones(5)]]),
    ]
    for fn, xs in cases:
        jitted = stax.jit(fn)
        for x in xs:
            got, want = jitted(x), fn(x)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert g.dtype == w.dtype and np.allclose(g, w, equal_nan=True), (g, w)
    print("sanitized ok")
""")


def test_data_dependent_programs_run_clean_under_sanitizers(tmp_path: Path) -> None:
    libasan = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()
    if not os.path.isabs(libasan):
        pytest.skip("libasan is not installed with this g++")
    env = dict(os.environ, STAX_SANITIZE="1", STAX_CACHE_DIR=str(tmp_path / "cache"),
               LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1", OMP_NUM_THREADS="2")
    result = subprocess.run([sys.executable, "-c", SANITIZED], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sanitized ok" in result.stdout
