"""[FIX16] Issue 16's last gaps, each compared with NumPy computed here: signed zeros and NaN
choice (cumsum of a leading -0.0, sums over a length-1 axis, maximum/minimum), argsort of a
0-d array, NumPy's exception classes for dtypes it refuses (a sweep over the op table),
constructs that compile instead of breaking (np.cross, array_equal/array_equiv, np.cov with
weights, np.pad reflect_type='odd', np.unwrap, np.piecewise, set operations) and NumPy's
RuntimeWarnings for empty means and variances. Several results share one compiled function
where they can (each compile costs seconds)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from test_hunt2_gaps import same  # strict jit equals NumPy or raises NumPy's class

import stax
from stax.frontend.breaks import GraphBreakWarning
from stax.ops import ELEMENTWISE, REDUCTIONS, SCANS

RNG = np.random.default_rng(16)
ALL_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
              "float64", "complex64", "complex128")


def same_bits(got: Any, want: Any) -> None:
    """Equal values, dtypes and shapes, and for floats the same sign bits (-0.0 is not 0.0,
    and of two NaNs the same one)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same_bits(g, w)
        return
    assert_matches(got, want)
    w, g = np.asarray(want), np.asarray(got)
    if w.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


# ---- 1. signed zeros, NaN choice, 0-d argsort ----

def scans_and_unit_sums(x: np.ndarray, v: np.ndarray) -> tuple[Any, ...]:
    return (np.cumsum(v), np.cumsum(x, axis=0), np.cumsum(x, axis=1), np.cumprod(v),
            x[:, :1].sum(axis=1), x[:1].sum(axis=0, keepdims=True), v[:1].sum(), x[:, :1].mean(1),
            x[:, :1].prod(axis=1), np.maximum.accumulate(v), np.add.accumulate(v))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_signed_zeros_of_scans_and_length_one_sums(dtype: str) -> None:
    x = np.array([[-0.0, 1.0, -0.0], [-0.0, -0.0, 2.0], [0.0, -0.0, -0.0]], dtype)
    v = np.array([-0.0, -0.0, 0.0, -0.0, 3.0], dtype)
    if dtype.startswith("complex"):
        x, v = x + -0.0j, v + -0.0j
    f = stax.jit(scans_and_unit_sums)
    same_bits(f(x, v), scans_and_unit_sums(x, v))
    same_bits(f(x.T.copy(order="F").T, v), scans_and_unit_sums(x, v))  # another layout


def test_long_parallel_cumsum_keeps_leading_negative_zeros() -> None:
    """The two-pass scan over threads: a slice of -0.0 only keeps its sign."""
    v = np.full(50_000, -0.0)
    v[30_000] = 1.0
    f = stax.jit(lambda a: np.cumsum(a), threads=2)
    same_bits(f(v), np.cumsum(v))
    same_bits(f(v[::-1]), np.cumsum(v[::-1]))


def maxmin(a: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
    return np.maximum(a, b), np.minimum(a, b), np.maximum(b, a), np.minimum(b, a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_maximum_minimum_ties_and_nans_as_numpy(dtype: str) -> None:
    """Of two equal values (-0.0, 0.0) NumPy returns the second, of two NaNs the first."""
    nan, neg = np.float64(np.nan), -np.float64(np.nan)
    pairs = [(-0.0, 0.0), (0.0, -0.0), (nan, neg), (neg, nan), (nan, 1.0), (2.0, neg),
             (-np.inf, -0.0), (3.0, 3.0)]
    a = np.array([p[0] for p in pairs] * 5, dtype)  # 40 elements: vector loops and tails
    b = np.array([p[1] for p in pairs] * 5, dtype)
    f = stax.jit(maxmin)
    same_bits(f(a, b), maxmin(a, b))
    same_bits(f(a[::3], b[::3]), maxmin(a[::3], b[::3]))


def test_fmax_fmin_values() -> None:
    """fmax/fmin: values and NaN handling (NumPy's own sign of a tie of -0.0 and 0.0 depends
    on its loop and the length, so only values are compared)."""
    a = np.array([-0.0, np.nan, 1.0, np.nan, 2.0, -np.inf] * 4)
    b = np.array([0.0, 1.0, np.nan, np.nan, -2.0, np.inf] * 4)
    fn = stax.jit(lambda x, y: (np.fmax(x, y), np.fmin(x, y)))
    for g, w in zip(fn(a, b), (np.fmax(a, b), np.fmin(a, b)), strict=True):
        assert_matches(g, w)


@pytest.mark.parametrize("axis", [0, -1, None, 1, -2])
def test_argsort_and_argpartition_of_0d(axis: int | None) -> None:
    x = np.array(3.5)
    same(lambda a: np.argsort(a, axis=axis), x)
    same(lambda a: np.argpartition(a, 0, axis=axis), x)
    same(lambda a: np.sort(a, axis=axis), x)


# ---- 2. NumPy's exception classes ----

def _sample(dtype: str) -> np.ndarray:
    return np.array([1, 0, 1]).astype(dtype)


def _refused() -> list[tuple[str, Callable[..., Any], str, int]]:
    """Every table op, reduction and scan over every dtype NumPy refuses for it."""
    cases = []
    with np.errstate(all="ignore"):
        return _refusals(cases)


def _refusals(cases: list[tuple[str, Callable[..., Any], str, int]]
              ) -> list[tuple[str, Callable[..., Any], str, int]]:
    for op in ELEMENTWISE:
        for dt in ALL_DTYPES:
            try:
                op.ufunc(*[_sample(dt)] * op.nin)
            except TypeError:
                cases.append((op.name, lambda *a, u=op.ufunc: u(*a), dt, op.nin))
    for r in (*REDUCTIONS, *SCANS):
        for dt in ALL_DTYPES:
            try:
                r.numpy(_sample(dt))  # type: ignore[operator]
            except TypeError:
                cases.append((r.name, lambda a, u=r.numpy: u(a), dt, 1))
    return cases


REFUSED = _refused()


def test_the_sweep_finds_refusals() -> None:
    assert {"sign", "positive", "bitwise_and", "invert", "subtract"} <= {c[0] for c in REFUSED}


@pytest.mark.parametrize("name,fn,dtype,nargs", REFUSED,
                         ids=[f"{c[0]}-{c[2]}" for c in REFUSED])
def test_refused_dtypes_raise_numpys_class(name: str, fn: Callable[..., Any], dtype: str,
                                           nargs: int) -> None:
    args = [_sample(dtype)] * nargs
    with pytest.raises(TypeError) as numpy_error:
        fn(*args)
    with pytest.raises(TypeError) as stax_error:
        stax.jit(fn, strict=True)(*args)
    assert type(stax_error.value) is type(numpy_error.value), name


@pytest.mark.parametrize("fn", [
    lambda a: np.gradient(a), lambda a: np.gradient(a, axis=0), lambda a: np.round(a, -1),
    lambda a: np.round(a, 2), lambda a: np.sign(a), lambda a: np.positive(a),
    lambda a: np.ediff1d(a), lambda a: np.cross(a, a)], ids=range(8))
def test_bool_refusals_as_numpy(fn: Callable[..., Any]) -> None:
    x = np.array([True, False, True])
    with pytest.raises(TypeError) as numpy_error:
        fn(x)
    with pytest.raises(TypeError) as stax_error:
        stax.jit(fn, strict=True)(x)
    assert type(stax_error.value) is type(numpy_error.value)


def test_round_of_bool_to_zero_decimals_and_others() -> None:
    x = np.array([True, False])
    same(lambda a: np.round(a), x)
    f16 = np.array([[0.0, 0.5, -1.25]], np.float16)
    same(lambda a: np.sinc(a), f16)  # sinc(0) is 1 in float16 too (NumPy's eps)
    same(lambda a: np.sinc(a), f16.astype(np.float64))
    for dt in ("bool", "int8", "uint8", "float16"):
        v = (np.arange(6) * 47 % 5).astype(dt)
        same(lambda a: np.vdot(a, a[::-1]), v)  # NumPy's dtype (bool, wrapping int8)


# ---- 3. constructs that compile ----

@pytest.mark.parametrize("sa,sb,kw,dtype", [
    ((2,), (2,), {}, "float64"), ((4, 2), (2,), {}, "int8"), ((3,), (2,), {}, "float32"),
    ((5, 2), (5, 3), {}, "uint8"), ((3, 4), (4, 3), {"axisa": 0}, "float64"),
    ((3, 4), (3, 4), {"axis": 0}, "int64"), ((4, 1, 3), (5, 3), {"axisc": 0}, "float32"),
    ((2, 4), (3,), {"axisa": 0, "axisc": 0}, "complex128"), ((4,), (3,), {}, "float64"),
    ((2,), (2,), {}, "bool")])
def test_cross(sa: tuple[int, ...], sb: tuple[int, ...], kw: dict[str, Any],
               dtype: str) -> None:
    a = (RNG.standard_normal(sa) * 40).astype(dtype)
    b = (RNG.standard_normal(sb) * 40).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy's, for 2-vectors
        same(lambda x, y: np.cross(x, y, **kw), a, b)


def test_cross_of_2_vectors_warns_as_numpy() -> None:
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        assert_matches(stax.jit(lambda x, y: np.cross(x, y))(a, b), np.cross(a, b))


def test_array_equal_and_equiv() -> None:
    a = np.array([1.0, np.nan, 3.0])
    fns = [lambda x, y: np.array_equal(x, y), lambda x, y: np.array_equal(x, y, equal_nan=True),
           lambda x, y: np.array_equiv(x, y), lambda x, y: np.array_equal(x, y[:2])]
    for y in (a.copy(), np.array([1.0, np.nan, 4.0]), np.array([[1.0, 2.0, 3.0]] * 2)):
        for fn in fns:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GraphBreakWarning)
                got = stax.jit(fn)(a, y)
            assert got is fn(a, y)  # a Python bool, as NumPy's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        assert stax.jit(lambda x: np.array_equiv(x, x[:1]))(np.ones((3, 2))) is True


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_cov_with_weights(dtype: str) -> None:
    x = (RNG.standard_normal((3, 9)) * 3).astype(dtype)
    fw, aw = RNG.integers(0, 4, 9), RNG.uniform(0.1, 2.0, 9)

    def covs(m: Any, f: Any, w: Any) -> tuple[Any, ...]:
        return (np.cov(m, fweights=f), np.cov(m, aweights=w, ddof=0),
                np.cov(m, fweights=f, aweights=w), np.cov(m.T, rowvar=False, aweights=w, ddof=2),
                np.cov(m[0], m[1], aweights=w), np.cov(m, fweights=[1, 2, 1, 1, 3, 1, 1, 2, 1]))
    got, want = stax.jit(covs, strict=True)(x, fw, aw), covs(x, fw, aw)
    for g, w in zip(got, want, strict=True):
        assert_matches(g, w, rtol=1e-5 if dtype == "float32" else None)


def test_cov_weight_errors_and_no_freedom() -> None:
    x = RNG.standard_normal((2, 5))
    ok = np.ones(5)
    for f, w in ((-ok, ok), (ok * 0.5, ok), (ok, -ok), (np.ones((2, 5)), ok), (np.ones(4), ok)):
        same(lambda m, a, b: np.cov(m, fweights=a, aweights=b), x, f, w)
    for fn, args in ((lambda m, a: np.cov(m, fweights=a), (x, np.array([0, 0, 1, 0, 0]))),
                     (lambda m: np.cov(m), (x[:, :1],)), (lambda m: np.cov(m, ddof=7), (x,))):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
            want = fn(*args)
        with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
            got = stax.jit(fn, strict=True)(*args)
        assert_matches(got, want)


def pads(x: np.ndarray) -> tuple[Any, ...]:
    return tuple(np.pad(x, w, mode=mode, reflect_type=rt)
                 for mode in ("reflect", "symmetric") for rt in ("even", "odd")
                 for w in (1, (2, 0), (0, 3), 9))


@pytest.mark.parametrize("shape,dtype", [((5,), "float64"), ((3, 4), "int8"), ((1, 3), "uint8"),
                                         ((2,), "float16"), ((4,), "bool")])
def test_pad_reflect_odd_and_wide(shape: tuple[int, ...], dtype: str) -> None:
    x = (RNG.standard_normal(shape) * 60).astype(dtype)
    same_bits(stax.jit(pads, strict=True)(x), pads(x))


def unwraps(p: np.ndarray, q: np.ndarray) -> tuple[Any, ...]:
    return (np.unwrap(p), np.unwrap(p, discont=4.0), np.unwrap(q, axis=0),
            np.unwrap(q.T, period=6), np.unwrap(p, period=np.float32(3.0)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_unwrap(dtype: str) -> None:
    phase = np.cumsum(RNG.uniform(-2, 2, 30))
    p = (((phase + np.pi) % (2 * np.pi) - np.pi) * (10 if dtype == "int64" else 1)).astype(dtype)
    q = np.stack([p, p[::-1]], axis=1)
    got, want = stax.jit(unwraps, strict=True)(p, q), unwraps(p, q)
    for g, w in zip(got, want, strict=True):
        assert_matches(g, w, rtol=1e-5 if dtype == "float32" else None)
    same(lambda a: np.unwrap(a), np.array([0.0, np.pi, 0.0, -np.pi, 2 * np.pi]))  # boundary
    same(lambda a: np.unwrap(a), np.array(1.0))  # NumPy's ValueError of its diff


@pytest.mark.parametrize("fn", [
    lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v ** 2]),
    lambda a: np.piecewise(a, [a < -1, a > 1], [0.5, np.sin, 7]),
    lambda a: np.piecewise(a, a > 0, [lambda v: v * 2, -1.0]),
    lambda a: np.piecewise(a, [a > 0], [1, 2, 3]),
    lambda a: np.piecewise(a.astype(np.int32), [a < 0], [lambda v: v - 1, 5]),
    lambda a: np.piecewise(a, [a < 0], [lambda v, k: v * k, 0], 3.0),
    lambda a: np.piecewise(a.reshape(13, 1)[::2], [a.reshape(13, 1)[::2] < 0],
                           [lambda v: v.sum() + v, 1])], ids=range(7))
def test_piecewise(fn: Callable[..., Any]) -> None:
    x = np.linspace(-3, 3, 13)
    same(fn, x)
    same(fn, np.abs(x) + 0.5)  # no element in the first piece: the guard's other path


def set_ops(a: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
    return (np.union1d(a, b), np.intersect1d(a, b), np.setxor1d(a, b), np.setdiff1d(a, b),
            np.isin(a, b), np.isin(a, b, invert=True), np.isin(a, np.unique(b)))


@pytest.mark.parametrize("a,b", [
    (np.array([5, 1, 3, 3, 9, 2, 7]), np.array([3, 4, 9, 9, 0, 1])),
    (RNG.integers(0, 100, 200), RNG.integers(0, 100, 150).astype(np.int32)),
    (np.array([2.5, np.nan, -0.0, 1.0, np.nan, 3.0]), np.array([0.0, np.nan, 3.0, 7.5])),
    (RNG.integers(0, 50, (6, 7)).T, RNG.integers(0, 3, 90).astype(np.uint8)),
    (np.array([1, 2, 3]), np.array([4, 5, 6]))], ids=range(5))
def test_set_operations(a: np.ndarray, b: np.ndarray) -> None:
    same_bits(stax.jit(set_ops, strict=True)(a, b), set_ops(a, b))


def test_set_operations_assuming_unique() -> None:
    a, b = np.array([1, 5, 3, 9]), np.array([9, 2, 1])
    same(lambda x, y: (np.intersect1d(x, y, assume_unique=True),
                       np.setxor1d(x, y, assume_unique=True),
                       np.setdiff1d(x, y, assume_unique=True)), a, b)


def test_intersect1d_return_indices_is_a_named_break() -> None:
    a, b = np.array([5, 1, 3, 3, 9]), np.array([3, 4, 9])
    def f(x: np.ndarray, y: np.ndarray) -> Any:
        return np.intersect1d(x * 2, y, return_indices=True)[1] + 1

    fn = stax.jit(f)
    with pytest.warns(GraphBreakWarning):
        assert_matches(fn(a, b), f(a, b))
    assert "np.intersect1d with return_indices=True" in str(stax.explain(fn, a, b))


# ---- 4. empty slices warn as NumPy ----

@pytest.mark.parametrize("fn,message", [
    (lambda x: x[x > 5].mean(), "Mean of empty slice"),
    (lambda x: np.mean(x[:0]), "Mean of empty slice"),
    (lambda x: x[x > 5].var(), "Degrees of freedom <= 0"),
    (lambda x: np.std(x[x > 2.5], ddof=1), "Degrees of freedom <= 0"),
    (lambda x: x.reshape(3, 1)[:0].mean(axis=0), "Mean of empty slice"),
    (lambda x: np.mean(x, where=x > 5), "Mean of empty slice"),
    (lambda x: np.var(x, where=x > 2.5, ddof=1), "Degrees of freedom <= 0"),
    (lambda x: (x[x > 5] * 2).mean(), "Mean of empty slice"),
    (lambda x: np.nanmean(np.where(x > -5, np.nan, x)), "Mean of empty slice"),
    (lambda x: np.nanvar(np.where(x > 2, np.nan, x)[None], axis=0), "Degrees of freedom")],
    ids=range(10))
def test_empty_mean_and_var_warn_at_each_call(fn: Callable[..., Any], message: str) -> None:
    x = np.array([1.0, 2.0, 3.0])
    with pytest.warns(RuntimeWarning, match=message):
        want = fn(x)
    jitted = stax.jit(fn, strict=True)
    for _ in range(2):  # the first call and a warm one
        with pytest.warns(RuntimeWarning, match=message):
            got = jitted(x)
        assert_matches(got, want)
    with warnings.catch_warnings():  # a call with enough elements does not warn
        warnings.simplefilter("error", RuntimeWarning)
        y = np.array([9.0, 8.0, 7.0])
        try:
            want = fn(y)
        except RuntimeWarning:
            return  # NumPy warns for this input too (an always-empty slice)
        assert_matches(jitted(y), want)


def test_var_with_a_ddof_argument_warns_at_the_calls_numpy_does() -> None:
    """A ddof passed as an argument (traced once calls differ, as in the wild3 corpus): the
    degrees-of-freedom check compares count - ddof at run time."""
    def fn(x: np.ndarray, ddof: int) -> tuple[Any, Any]:
        return np.var(x, axis=0, ddof=ddof), np.std(x, ddof=ddof)

    x = np.arange(6.0).reshape(3, 2)
    jitted = stax.jit(fn)
    for ddof in (0, 1, 2, 3, 1, 6):
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = fn(x, ddof)
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = jitted(x, ddof)
        for g, w in zip(got, want, strict=True):
            assert_matches(g, w)
        freedom = ["Degrees of freedom" in str(w.message) for w in want_w]
        assert any(freedom) == any("Degrees of freedom" in str(w.message) for w in got_w), ddof
