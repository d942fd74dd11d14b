"""Differential tests of elementwise ops against NumPy, for every dtype each op accepts."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_matches, make_array

import stax
from stax.graph import SUPPORTED_DTYPES
from stax.runtime.compiler import ISA_LEVELS, isa_level

N = 67  # not a multiple of any vector width: exercises the vector loop and its tail

FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5,
                  -2.5, 1e-8, -1e-8, 1e30, -1e30, 88.5, -100.0, 3.0, -3.7, 7.25, -7.0, 0.1]


def special_input(dtype: str, seed: int = 0) -> np.ndarray:
    """A length-N array with the edge values of `dtype` followed by random values."""
    base = make_array((N,), dtype, seed=seed)
    if dtype in FLOAT_DTYPES:
        sp = np.array(FLOAT_SPECIALS, dtype=dtype)
    elif dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        sp = np.array([0, 1, -1, 2, -2, 3, -7, 7, 100, -100, info.max, info.min, info.min + 1],
                      dtype=dtype)
    else:
        sp = np.array([True, False, True, True, False])
    out = base.copy()
    out[: len(sp)] = sp
    return out


def numpy_result(fn: Callable[..., Any], *args: Any) -> tuple[Any, Exception | None]:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 - NumPy's own rejection is the expectation
            return None, e


def stax_result(jitted: Any, *args: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jitted(*args)


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [leaf for v in obj.values() for leaf in _leaves(v)]
    if isinstance(obj, (tuple, list)):
        return [leaf for v in obj for leaf in _leaves(v)]
    return [obj]


def check_like_numpy(jitted: Any, fn: Callable[..., Any], inputs: list[tuple[Any, ...]],
                     rtol: float | None = None, atol: float = 0.0) -> None:
    """Run NumPy and stax on each argument tuple; a NumPy error must be matched by stax.

    NumPy results of a dtype stax does not support (complex, longdouble) must make stax raise
    NotImplementedError (never a silently different dtype).
    """
    for args in inputs:
        want, err = numpy_result(fn, *args)
        if err is not None:
            expected = next(t for t in (TypeError, ValueError, OverflowError, type(err))
                            if isinstance(err, t))
            with pytest.raises(expected):
                stax_result(jitted, *args)
            continue
        if any(np.asarray(w).dtype not in SUPPORTED_DTYPES for w in _leaves(want)):
            with pytest.raises((NotImplementedError, TypeError)):
                stax_result(jitted, *args)
            continue
        got = stax_result(jitted, *args)
        assert_matches(got, want, rtol=rtol, atol=atol)


# ---- unary ----------------------------------------------------------------------------------
# Every ufunc of the op table, over every dtype, is in tests/ops/test_op_sweep.py; here only
# compositions that are not one ufunc.

COMPOSED: dict[str, Callable[[Any], Any]] = {"round": lambda x: np.round(x),
                                             "rsqrt": lambda x: 1 / np.sqrt(x)}
_COMPOSED_JIT = {name: stax.jit(fn, strict=True) for name, fn in COMPOSED.items()}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(COMPOSED))
def test_composed_unary(op: str, dtype: str) -> None:
    rtol = (1e-5 if dtype in ("float32", "bool") else 1e-12) if op == "rsqrt" else None
    inputs = [(special_input(dtype, 0),), (special_input(dtype, 1),)]
    check_like_numpy(_COMPOSED_JIT[op], COMPOSED[op], inputs, rtol=rtol)


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_isa_levels(isa: str, dtype: str) -> None:
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"this CPU lacks {isa}")

    def fn(x: Any, y: Any) -> Any:
        return (np.maximum(x, y) * 2 - np.minimum(x, y) / 3, np.where(x > y, np.sqrt(np.abs(x)),
                np.floor(y)), np.fmax(x, y), np.sign(x) + np.ceil(y))

    f = stax.jit(fn, isa=isa)
    x, y = special_input(dtype, 0), special_input(dtype, 1)[::-1].copy()
    check_like_numpy(f, fn, [(x, y), (y, x)])


# ---- binary ---------------------------------------------------------------------------------
# (every binary ufunc and operator over every dtype: tests/ops/test_op_sweep.py)

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y, "floor_divide": lambda x, y: x // y, "less": lambda x, y: x < y}
_BINARY_JIT = {name: stax.jit(fn) for name, fn in BINARY.items()}


def _ufunc_forms(x: Any, y: Any) -> Any:
    return {"add": np.add(x, y), "subtract": np.subtract(x, y), "multiply": np.multiply(x, y),
            "divide": np.divide(x, y), "floor_divide": np.floor_divide(x, y),
            "mod": np.mod(x, y), "negative": np.negative(x), "abs": np.abs(y),
            "power": np.power(x, 2), "true_divide": np.true_divide(y, x)}


_UFUNC_FORMS = stax.jit(_ufunc_forms)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_ufunc_function_forms(dtype: str) -> None:
    x = make_array((N,), dtype, seed=32, low=1, high=9)
    y = make_array((N,), dtype, seed=33, low=-9, high=9)
    check_like_numpy(_UFUNC_FORMS, _ufunc_forms, [(x, y)])


MIXED = [("bool", "int32"), ("int32", "int64"), ("int32", "float32"), ("int64", "float32"),
         ("float32", "float64"), ("bool", "float32"), ("int64", "float64")]


@pytest.mark.parametrize(("dx", "dy"), MIXED)
@pytest.mark.parametrize("op", ["add", "floor_divide", "less"])
def test_binary_mixed_dtypes(op: str, dx: str, dy: str) -> None:
    x = make_array((N,), dx, seed=10)
    y = make_array((N,), dy, seed=11, low=1, high=9)
    check_like_numpy(_BINARY_JIT[op], BINARY[op], [(x, y), (y, x)] if dx != "bool" or
                     op not in ("floor_divide",) else [(x, y)])


# ---- integer division edge cases ------------------------------------------------------------

_floordiv = stax.jit(lambda x, y: x // y)
_mod = stax.jit(lambda x, y: x % y)
_divmod_pair = stax.jit(lambda x, y: (x // y, x % y))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("fn", ["floordiv", "mod", "pair"])
def test_int_division_by_zero(fn: str, dtype: str) -> None:
    x = np.array([7, -7, 0, 5, -3, 1, 2, 3], dtype=dtype)
    y = np.array([0, 0, 0, 2, 0, -1, 3, 0], dtype=dtype)
    jitted = {"floordiv": _floordiv, "mod": _mod, "pair": _divmod_pair}[fn]
    ref = {"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
           "pair": lambda a, b: (a // b, a % b)}[fn]
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        want = ref(x, y)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        got = jitted(x, y)
    assert_matches(got, want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_division_no_warning_without_zero(dtype: str) -> None:
    x = np.array([7, -7, 9, 5, -3, 1, 2, 3], dtype=dtype)
    y = np.array([2, -2, 4, 2, 5, -1, 3, 1], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches(_divmod_pair(x, y), (x // y, x % y))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_min_floordiv_minus_one(dtype: str) -> None:
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min, info.max, info.min + 1, -1, info.min], dtype=dtype)
    y = np.array([-1, 1, -1, -1, -1, 2], dtype=dtype)
    with np.errstate(all="ignore"):
        want = (x // y, x % y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _divmod_pair(x, y)
    assert_matches(got, want)


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_floor_semantics_negative_operands(dtype: str) -> None:
    vals = np.array([-7, 7, -7, 7, -1, 1, -6, 6, -9, 0], dtype=dtype)
    divs = np.array([2, -2, -2, 2, 3, -3, 3, -3, 4, -5], dtype=dtype)
    assert_matches(_divmod_pair(vals, divs), (vals // divs, vals % divs))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_division_by_zero(dtype: str) -> None:
    f = stax.jit(lambda x, y: (x / y, x // y, x % y))
    x = np.array([1.0, -1.0, 0.0, np.nan, np.inf, -2.5, 3.0, -0.0], dtype=dtype)
    y = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -0.0, -0.0, 0.0], dtype=dtype)
    with np.errstate(all="ignore"):
        want = (x / y, x // y, x % y)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = f(x, y)
    assert_matches(got, want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_negative_power_raises(dtype: str) -> None:
    f = stax.jit(lambda x, y: x ** y)
    x = np.array([2, 3, 4], dtype=dtype)
    y = np.array([1, -1, 2], dtype=dtype)
    with pytest.raises(ValueError):
        x ** y  # noqa: B018
    with pytest.raises(ValueError):
        f(x, y)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts(dtype: str) -> None:
    f = stax.jit(lambda x, y: (x << y, x >> y))
    x = np.array([1, -1, 5, -8, 123, 1, -5, 7], dtype=dtype)
    y = np.array([0, 1, 3, 2, 4, 31, 1, 5], dtype=dtype)
    assert_matches(f(x, y), (x << y, x >> y))


# ---- where, clip, astype --------------------------------------------------------------------

_where = stax.jit(lambda c, x, y: np.where(c, x, y))
_where_scalar = stax.jit(lambda x: np.where(x > 0, x, 0))
_clip = stax.jit(lambda x: np.clip(x, -2, 3))
_clip_method = stax.jit(lambda x, lo, hi: x.clip(lo, hi))
_clip_lo = stax.jit(lambda x: np.clip(x, 1, None))


@pytest.mark.parametrize("dtype", DTYPES)
def test_where(dtype: str) -> None:
    c = make_array((N,), "bool", seed=12)
    x, y = special_input(dtype, 13), make_array((N,), dtype, seed=14)
    check_like_numpy(_where, lambda c, x, y: np.where(c, x, y), [(c, x, y), (~c, y, x)])
    check_like_numpy(_where_scalar, lambda x: np.where(x > 0, x, 0), [(x,), (y,)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_broadcast_mixed(dtype: str) -> None:
    f = stax.jit(lambda c, x, y: np.where(c, x, y))
    c = make_array((3, 1, 5), "bool", seed=15)
    x = make_array((4, 1), dtype, seed=16)
    y = make_array((5,), "float32", seed=17)
    check_like_numpy(f, lambda c, x, y: np.where(c, x, y), [(c, x, y)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip(dtype: str) -> None:
    x, x2 = special_input(dtype, 18), special_input(dtype, 19)
    check_like_numpy(_clip, lambda x: np.clip(x, -2, 3), [(x,), (x2,)])
    check_like_numpy(_clip_lo, lambda x: np.clip(x, 1, None), [(x,), (x2,)])
    lo, hi = make_array((N,), dtype, seed=20), make_array((N,), dtype, seed=21)
    check_like_numpy(_clip_method, lambda x, lo, hi: x.clip(lo, hi), [(x, lo, hi)])


_ASTYPE = {d: stax.jit(lambda x, d=d: x.astype(d)) for d in DTYPES}


@pytest.mark.parametrize("target", DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_astype(dtype: str, target: str) -> None:
    x = special_input(dtype, 22)
    if dtype in FLOAT_DTYPES and target in INT_DTYPES:
        # nan/inf/out-of-range casts are platform-defined in NumPy; test in-range values
        x = np.clip(np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0), -1e9, 1e9).astype(dtype)
    check_like_numpy(_ASTYPE[target], lambda x: x.astype(target), [(x,), (x[::-1].copy(),)])


# ---- NEP 50 promotion with Python scalars ---------------------------------------------------

PROMOTION_CASES: list[tuple[str, Callable[[Any], Any], str]] = [
    ("f32*2.5", lambda x: x * 2.5, "float32"),
    ("f32+1", lambda x: x + 1, "float32"),
    ("i32+3.5", lambda x: x + 3.5, "int32"),
    ("i32+3", lambda x: x + 3, "int32"),
    ("i32*-2", lambda x: -2 * x, "int32"),
    ("i64/2", lambda x: x / 2, "int64"),
    ("i32/2", lambda x: x / 2, "int32"),
    ("b+1", lambda x: x + 1, "bool"),
    ("b+1.5", lambda x: x + 1.5, "bool"),
    ("b&True", lambda x: x & True, "bool"),
    ("f32**2", lambda x: x ** 2, "float32"),
    ("2**f32", lambda x: 2.0 ** x, "float32"),
    ("f32+np.float64", lambda x: x + np.float64(2.5), "float32"),
    ("f32+np.float32", lambda x: x + np.float32(2.5), "float32"),
    ("i32+np.int64", lambda x: x + np.int64(3), "int32"),
    ("f32>0.1", lambda x: x > 0.1, "float32"),
    ("i32<2.5", lambda x: x < 2.5, "int32"),
    ("max(f32,0)", lambda x: np.maximum(x, 0), "float32"),
    ("i32//2", lambda x: x // 2, "int32"),
    ("i32%-3", lambda x: x % -3, "int32"),
    ("f32 1/x", lambda x: 1 / x, "float32"),
]


@pytest.mark.parametrize(("name", "fn", "dtype"), PROMOTION_CASES,
                         ids=[c[0] for c in PROMOTION_CASES])
def test_nep50_constants(name: str, fn: Callable[[Any], Any], dtype: str) -> None:
    x = make_array((N,), dtype, seed=23, low=1, high=6)
    check_like_numpy(stax.jit(fn), fn, [(x,)])


SCALAR_ARG_CASES: list[tuple[str, Any, str]] = [
    ("f32*2.5", 2.5, "float32"), ("i32+3.5", 3.5, "int32"), ("i32+3", 3, "int32"),
    ("b+1", 1, "bool"), ("b+True", True, "bool"), ("f64+2", 2, "float64"),
    ("i64+0.5", 0.5, "int64"), ("f32+np.float64", np.float64(2.5), "float32"),
    ("i32+np.int64", np.int64(3), "int32"), ("f32+np.float32", np.float32(1.5), "float32"),
]


@pytest.mark.parametrize(("name", "s", "dtype"), SCALAR_ARG_CASES,
                         ids=[c[0] for c in SCALAR_ARG_CASES])
def test_nep50_scalar_arguments(name: str, s: Any, dtype: str) -> None:
    def fn(x: Any, s: Any) -> Any:
        return (x + s, x * s, s - x)

    x = make_array((N,), dtype, seed=24, low=1, high=6)
    check_like_numpy(stax.jit(fn), fn, [(x, s)])


def test_int32_plus_huge_python_int_overflows() -> None:
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(OverflowError):
        x + 2**40  # noqa: B018
    with pytest.raises(OverflowError):
        stax.jit(lambda x: x + 2**40)(x)


def test_scalar_only_arguments() -> None:
    f = stax.jit(lambda a, b: a * b + 1)
    assert_matches(f(np.float32(2.0), 3.0), np.float32(2.0) * 3.0 + 1)
    assert_matches(f(np.int32(7), np.int32(3)), np.int32(7) * np.int32(3) + 1)


# ---- broadcasting ---------------------------------------------------------------------------

BROADCAST_SHAPES = [((3, 1, 5), (4, 1)), ((5,), (1,)), ((), (3,)), ((2, 3), ()),
                    ((1, 4), (3, 1)), ((2, 1, 3, 1), (1, 5, 1, 4)), ((0, 3), (1, 3)),
                    ((3, 0), (3, 1)), ((7, 1), (7, 9))]


@pytest.mark.parametrize(("sx", "sy"), BROADCAST_SHAPES, ids=[str(s) for s in BROADCAST_SHAPES])
@pytest.mark.parametrize("dtype", ["float64"])
def test_broadcasting(sx: tuple[int, ...], sy: tuple[int, ...], dtype: str) -> None:
    def fn(x: Any, y: Any) -> Any:
        return (x * 2 + y, np.maximum(x, y) - x)

    x, y = make_array(sx, dtype, seed=25), make_array(sy, dtype, seed=26)
    check_like_numpy(stax.jit(fn), fn, [(x, y), (y, x)])


# ---- non-contiguous inputs -------------------------------------------------------------------

_nc = stax.jit(lambda x, y: np.exp(x) * 2 - y)


def _nc_ref(x: Any, y: Any) -> Any:
    return np.exp(x) * 2 - y


BASE_2D = make_array((9, 14), "float64", seed=27)
NONCONTIG = {
    "step2": lambda a: a[::2, ::3],
    "transpose": lambda a: a.T,
    "neg_step": lambda a: a[::-1, ::-2],
    "neg_rows": lambda a: a[::-1],
    "col_slice": lambda a: a[2:7, 3:11],
    "transpose_step": lambda a: a.T[::-3],
    "broadcast_stride0": lambda a: np.broadcast_to(a[:, :1], a.shape),
}


@pytest.mark.parametrize("kind", list(NONCONTIG))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_noncontiguous_inputs(kind: str, dtype: str) -> None:
    base = BASE_2D.astype(dtype)
    x = NONCONTIG[kind](base)
    y = NONCONTIG[kind](make_array((9, 14), dtype, seed=28))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    atol = 1e-5 if dtype == "float32" else 0.0  # exp(x)*2 - y may cancel
    check_like_numpy(_nc, _nc_ref, [(x, y), (x, np.ascontiguousarray(y))], rtol=rtol,
                     atol=atol)


# ---- 0-d and size-0 arrays ------------------------------------------------------------------

_zero_d = stax.jit(lambda x, y: (x + y, np.sqrt(np.abs(x)) * y, x > y))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_zero_dim_arrays(dtype: str) -> None:
    def ref(x: Any, y: Any) -> Any:
        return (x + y, np.sqrt(np.abs(x)) * y, x > y)

    x, y = np.array(-4, dtype=dtype), np.array(3, dtype=dtype)
    check_like_numpy(_zero_d, ref, [(x, y), (y, x)], rtol=1e-6)
    # numpy scalars too
    check_like_numpy(stax.jit(ref), ref, [(x[()], y[()])], rtol=1e-6)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2)])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_size_zero(shape: tuple[int, ...], dtype: str) -> None:
    def fn(x: Any, y: Any) -> Any:
        return (x + y, x == y, np.where(x > y, x, y))

    x, y = np.zeros(shape, dtype), np.ones(shape, dtype)
    check_like_numpy(stax.jit(fn), fn, [(x, y)])


# ---- NaN / inf ------------------------------------------------------------------------------

_nan_ops = stax.jit(lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y),
                                  np.fmin(x, y), x == y, x != y, x < y, np.isnan(x + y)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_inf_binary(dtype: str) -> None:
    sp = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 2.0], dtype=dtype)
    gx, gy = np.meshgrid(sp, sp)

    def ref(x: Any, y: Any) -> Any:
        return (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y), x == y,
                x != y, x < y, np.isnan(x + y))

    check_like_numpy(_nan_ops, ref, [(gx.ravel(), gy.ravel())])


def test_composite_expression_tree() -> None:
    def fn(x: Any, y: Any) -> Any:
        t = np.tanh(x) * y
        u = np.exp(-(x ** 2)) + np.log1p(np.abs(y))
        return np.where(t > u, t - u, (u + 1) / (np.abs(t) + 1))

    x, y = make_array((31, 17), "float32", seed=29), make_array((17,), "float32", seed=30)
    check_like_numpy(stax.jit(fn), fn, [(x, y)], rtol=1e-5)
    check_like_numpy(stax.jit(fn, fuse=False), fn, [(x, y)], rtol=1e-5)


def test_stax_namespace_functions() -> None:
    names = ["exp", "sqrt", "maximum", "where"]
    for name in names:
        assert hasattr(stax, name), f"stax.{name} is missing"
    f = stax.jit(lambda x: stax.where(x > 0, stax.exp(x), stax.maximum(x, -1.0)))
    x = make_array((N,), "float64", seed=31)
    assert_matches(f(x), np.where(x > 0, np.exp(x), np.maximum(x, -1.0)))
