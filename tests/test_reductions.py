"""Differential tests of reductions against NumPy: axes, keepdims, dtypes, NaN, empty, accuracy."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import DTYPES, FLOAT_DTYPES, assert_matches, make_array

import stax

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any",
              "all")
SHAPE = (6, 7, 5)


def variants(fn: str) -> Callable[[Any], dict[str, Any]]:
    """One function computing `fn` over many axis/keepdims choices (one compile per dtype)."""
    def run(x: Any) -> dict[str, Any]:
        m = getattr(x, fn)
        f = getattr(np, fn)
        out = {"axis0": m(axis=0), "axis-1": m(axis=-1), "axis1": f(x, axis=1),
               "all": m(), "keep1": m(axis=1, keepdims=True)}
        if fn not in ("argmax", "argmin"):
            out |= {"axes02": m(axis=(0, 2)), "axes-1-2": f(x, axis=(-1, -2)),
                    "all_keep": m(axis=None, keepdims=True), "axes01_keep": m(axis=(0, 1),
                                                                              keepdims=True)}
        else:
            out |= {"all_keep": m(axis=None, keepdims=True)}
        return out
    return run


_JITS = {fn: stax.jit(variants(fn)) for fn in REDUCTIONS}


def _rtol(fn: str, dtype: str) -> float | None:
    if dtype == "float32":
        return 1e-5
    if fn in ("var", "std", "mean", "sum", "prod") and dtype == "float64":
        return 1e-11
    return None


def _inputs(dtype: str, fn: str) -> list[np.ndarray]:
    if fn == "prod":
        # keep products small and exact-ish: values near 1 (ints in {-1, 1, 2})
        if dtype in ("int32", "int64"):
            a = make_array(SHAPE, dtype, seed=1, low=-1, high=2)
            return [np.where(a == 0, 1, a).astype(dtype)]
        if dtype in FLOAT_DTYPES:
            return [make_array(SHAPE, dtype, seed=1, low=0.5, high=1.5)]
    a = make_array(SHAPE, dtype, seed=2)
    b = make_array(SHAPE, dtype, seed=3, low=-100, high=100)
    return [a, b]


def _check_dict(got: dict[str, Any], want: dict[str, Any], rtol: float | None,
                atol: float = 1e-12) -> None:
    assert set(got) == set(want)
    errors = []
    for k in want:
        try:
            assert_matches(got[k], want[k], rtol=rtol, atol=atol)
        except AssertionError as e:
            errors.append(f"[{k}] {e}")
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", REDUCTIONS)
def test_reduction(fn: str, dtype: str) -> None:
    ref = variants(fn)
    for x in _inputs(dtype, fn):
        try:
            want = ref(x)
        except TypeError:
            with pytest.raises(TypeError):
                _JITS[fn](x)
            continue
        # float32 sums of mixed-sign values cancel: allow float32 rounding of sum(|x|)
        atol = 1e-6 * float(np.abs(x).sum()) if dtype == "float32" else 1e-12
        _check_dict(_JITS[fn](x), want, _rtol(fn, dtype), atol)


@pytest.mark.parametrize("fn", ["sum", "max", "argmin", "mean"])
def test_reduction_noncontiguous_input(fn: str) -> None:
    base = make_array((7, 6, 5), "float64", seed=4)
    x = base.transpose(1, 0, 2)[:, ::-1]  # shape (6, 7, 5), permuted and reversed
    _check_dict(_JITS[fn](x), variants(fn)(x), 1e-12)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_propagation(dtype: str) -> None:
    def fn(x: Any) -> Any:
        return (x.max(axis=1), x.min(axis=1), x.argmax(axis=1), x.argmin(axis=1), x.sum(axis=1),
                x.max(), np.argmax(x), x.mean(axis=1))

    x = make_array((5, 40), dtype, seed=5)
    x[1, 3] = np.nan
    x[2, 0] = np.nan
    x[2, 39] = np.nan
    x[3, 39] = np.nan
    x[4, 10] = np.inf
    x[0, 5] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(stax.jit(fn)(x), fn(x), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_argmax_ties_first_index(dtype: str) -> None:
    def fn(x: Any) -> Any:
        return (x.argmax(axis=0), x.argmin(axis=1), x.argmax())

    x = np.array([[1, 3, 3, 0], [3, 1, 0, 0], [3, 3, 0, 1]], dtype=dtype)
    assert_matches(stax.jit(fn)(x), fn(x))


@pytest.mark.parametrize("n", [5_000_000, 4097])
def test_large_float32_sum_accuracy(n: int) -> None:
    rng = np.random.default_rng(6)
    x = rng.uniform(0.0, 1.0, n).astype(np.float32)
    f = stax.jit(lambda x: (x.sum(), x.mean()))
    total, mean = f(x)
    exact = x.astype(np.float64).sum()
    assert np.asarray(total).dtype == np.float32
    np.testing.assert_allclose(float(total), exact, rtol=1e-5)
    np.testing.assert_allclose(float(mean), exact / n, rtol=1e-5)
    # and as NumPy, within float32 rounding of its pairwise sum
    np.testing.assert_allclose(float(total), float(x.sum()), rtol=1e-5)


def test_large_float32_row_sums_accuracy() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(0.0, 1.0, (4, 1_000_000)).astype(np.float32)
    got = stax.jit(lambda x: x.sum(axis=1))(x)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_empty_reductions(dtype: str) -> None:
    def fn(x: Any) -> Any:
        return (x.sum(), x.prod(), x.any(), x.all(), x.sum(axis=0), x.sum(axis=1),
                x.max(axis=0), x.prod(axis=1, keepdims=True))

    x = np.zeros((3, 0), dtype=dtype)
    assert_matches(stax.jit(fn)(x), fn(x))


@pytest.mark.parametrize("fn", ["max", "min", "argmax", "argmin"])
def test_empty_max_raises_value_error(fn: str) -> None:
    x = np.zeros((3, 0), dtype=np.float64)
    with pytest.raises(ValueError):
        getattr(x, fn)()
    with pytest.raises(ValueError):
        stax.jit(lambda x: getattr(x, fn)())(x)
    with pytest.raises(ValueError):
        stax.jit(lambda x: getattr(x, fn)(axis=1))(x)


def test_empty_mean_is_nan_with_warning() -> None:
    x = np.zeros((0,), dtype=np.float64)
    with pytest.warns(RuntimeWarning):
        want = x.mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = stax.jit(lambda x: x.mean())(x)
    assert_matches(got, want)


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_ddof(ddof: int) -> None:
    def fn(x: Any) -> Any:
        return (x.var(axis=0, ddof=ddof), np.std(x, axis=1, ddof=ddof, keepdims=True),
                x.var(ddof=ddof))

    x = make_array((9, 4), "float64", seed=8)
    assert_matches(stax.jit(fn)(x), fn(x))
    xi = make_array((9, 4), "int32", seed=9)
    assert_matches(stax.jit(fn)(xi), fn(xi))


def test_reduction_dtype_argument() -> None:
    def fn(x: Any) -> Any:
        return (x.sum(dtype=np.float64), x.sum(axis=0, dtype=np.int64), x.mean(dtype=np.float32),
                np.prod(x, axis=1, dtype=np.float64))

    x = make_array((5, 6), "int32", seed=10)
    assert_matches(stax.jit(fn)(x), fn(x), rtol=1e-6)


def test_ufunc_reduce_methods() -> None:
    def fn(x: Any) -> Any:
        return (np.add.reduce(x, axis=1), np.maximum.reduce(x), np.multiply.reduce(x, axis=0),
                np.add.accumulate(x, axis=1))

    x = make_array((4, 5), "float64", seed=11)
    assert_matches(stax.jit(fn)(x), fn(x))


def test_reduction_of_expression_fused_and_unfused() -> None:
    def fn(x: Any) -> Any:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True), (e.sum(-1), e.max(-1))

    x = make_array((64, 128), "float32", seed=12)
    assert_matches(stax.jit(fn)(x), fn(x), rtol=1e-5)
    assert_matches(stax.jit(fn, fuse=False)(x), fn(x), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_sum_wraps_and_promotes(dtype: str) -> None:
    def fn(x: Any) -> Any:
        return (x.sum(), x.sum(axis=0), x.prod(axis=0))

    info = np.iinfo(dtype)
    x = np.array([[info.max, 2], [info.max, 3], [5, info.max]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(stax.jit(fn)(x), fn(x))


def test_bool_sum_is_int64() -> None:
    def fn(x: Any) -> Any:
        return (x.sum(), x.sum(axis=1), x.mean(axis=0), x.astype(np.int32).sum())

    x = make_array((7, 9), "bool", seed=13)
    assert_matches(stax.jit(fn)(x), fn(x))


# ---- issue 9: reductions in every position (B) -----------------------------------------------

def _scans(x: Any) -> Any:
    return (np.cumsum(x, 0), np.cumsum(x, -1), np.cumprod(x * 0.01 + 1, 0), np.cumsum(x.T, 0))


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_scans_along_each_axis(dtype: str, isa: str, always_parallel: Any) -> None:
    x = make_array((37, 70), dtype, seed=21)
    if dtype.startswith("float"):
        x[4, 9] = np.nan
    assert_matches(stax.jit(_scans, isa=isa, threads=2)(x), _scans(x), rtol=_rtol("sum", dtype))


@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_one_long_scan_in_two_passes(dtype: str, always_parallel: Any) -> None:
    def fn(x: Any) -> Any:
        return np.cumsum(x), np.cumprod(x[:9000] * 0 + 1.0001), np.cumsum(x[::-2])

    x = make_array((20_011,), dtype, seed=22)
    jitted = stax.jit(fn, threads=2)
    assert "two passes over the threads" in stax.explain(jitted, x).code
    got, want = jitted(x), fn(x)
    if dtype != "int64":  # sums grouped by slice: rounding differs, bounded by the magnitude
        eps = float(np.finfo(dtype).eps) * 50
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=eps, atol=eps * float(np.abs(w).max()))
    else:
        assert_matches(got, want)


def _column_stats(x: Any) -> Any:
    centered = x - x.mean(0)
    return (x.var(0), x.mean(0), x.std(0, ddof=1), (centered * centered).sum(0),
            x.max(0) - x.min(0), (x > 0).sum(0), x.sum(0, keepdims=True) / x.shape[0])


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_fused_column_reductions(dtype: str, isa: str, always_parallel: Any) -> None:
    x = make_array((53, 41), dtype, seed=23, low=-50, high=50)
    if dtype.startswith("float"):
        x[7, 3] = np.nan  # NaN in one column: its statistics are NaN, the others are not
        x[:, 5] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _column_stats(x)
        got = stax.jit(_column_stats, isa=isa, threads=2)(x)
    assert_matches(got, want, rtol=1e-4 if dtype == "float32" else 1e-11)
    if isa != "scalar":
        plans = stax.explain(_column_stats, x, threads=2).compilation.program.plans
        assert any(p.form == "outer-reduction" and len(p.nodes) > 1 for p in plans)


def test_column_variance_is_accurate() -> None:
    """A large common offset: a one-pass sum-of-squares formula would lose every digit."""
    rng = np.random.default_rng(24)
    x = (1e4 + rng.standard_normal((2000, 33))).astype(np.float32)
    got = stax.jit(lambda a: a.var(0))(x)
    exact = x.astype(np.float64).var(0)
    assert np.max(np.abs(got - exact) / exact) < 1e-2
    assert np.max(np.abs(got - exact)) <= 2 * np.max(np.abs(x.var(0) - exact)) + 1e-3


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_argmax_lanes_ties_nan_and_tails(dtype: str) -> None:
    def fn(x: Any) -> Any:
        return x.argmax(-1), x.argmin(-1), x[:, :17].argmax(-1), x.argmax()

    x = make_array((9, 75), dtype, seed=25, low=-2, high=2)  # many ties
    if dtype == "float32":
        x[2, [40, 70]] = np.nan  # first NaN wins
        x[3, 74] = np.nan  # a NaN in the tail (past the last full group of lanes)
        x[4, :] = -np.inf
    assert_matches(stax.jit(fn)(x), fn(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.bool_])
def test_reductions_over_unit_axes_are_the_element(dtype):
    """A reduction over axes of extent 1 is lowered as its one element (no reduction loop):
    NumPy's values and dtypes, NaN kept, argmax 0, with and without keepdims."""
    def f(x):
        return (x.sum(1), x.max(1, keepdims=True), x.argmax(1), x.any(1), x.prod(axis=(1, 2)),
                x.min(axis=(1, 2), keepdims=True), x.mean(1), np.cumsum(x.sum(2), axis=0))

    x = np.array([[[3]], [[0]], [[1]], [[2]]]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[1, 0, 0] = np.nan
    for arr in (x, x[::-1], x[:0]):
        assert_matches(stax.jit(f)(arr), f(arr))


def _column_folds(x: Any) -> Any:
    return (x.sum(0), (x * 0.01 + 1).prod(0), x.max(0), x.min(0), (x > 0).any(0),
            (x > -40).all(0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_folds_read_rows_four_at_a_time(dtype: str) -> None:
    """The outer-reduction form reads rows four per pass over a block (then the remainder):
    every row count around a multiple of four, NaN in a jammed row and in a remainder row."""
    f = stax.jit(_column_folds, dynamic=True)
    for rows in (1, 2, 3, 4, 5, 7, 8, 11):
        x = make_array((rows, 37), dtype, seed=rows, low=-50, high=50)
        x[rows // 2, 3] = np.nan
        x[rows - 1, 9] = np.nan
        assert_matches(f(x), _column_folds(x), rtol=1e-5 if dtype == "float32" else 1e-12)
    assert f.cache_info().compiles <= 2
    plans = stax.explain(_column_folds, x).compilation.program.plans
    assert any(p.form == "outer-reduction" for p in plans)
