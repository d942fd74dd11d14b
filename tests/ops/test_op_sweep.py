"""The op sweep: every op of the op table (stax.ops) against NumPy, over every dtype it accepts.

One compiled program per dtype signature computes every op that accepts it (op k reads row k of
the inputs), so the g++ count stays at one per signature. Inputs come from each op's test domain
plus the dtype's edge values (NaN, ±inf, ±0, integer minimum/maximum: wrap-around). A dtype
combination NumPy refuses, or one whose NumPy loop uses a dtype Stax does not support (float16),
must raise the same kind of error in Stax. Also passes under STAX_SANITIZE=1.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from test_complex import COMPLEX_EDGES, assert_complex_matches

import stax
from stax.graph import SUPPORTED_DTYPES
from stax.ops import ELEMENTWISE, REDUCTIONS, SCANS, Domain, Elementwise
from stax.ops.table import WIDE

N = 67  # not a multiple of a vector width: vector loop and tail; holds the 8x8 edge grid
DTYPES = tuple(d.name for d in SUPPORTED_DTYPES)
MIXED = (("float16", "float32"), ("int8", "float16"), ("int8", "uint8"), ("uint64", "int64"),
         ("uint8", "float32"), ("int16", "uint32"),
         ("bool", "int8"), ("uint32", "int32"), ("int64", "float64"), ("uint16", "float32"),
         # [E16] complex promotion: precision from both sides, integers widen complex64
         ("complex64", "float64"), ("int16", "complex64"), ("complex64", "complex128"),
         ("float16", "complex64"), ("uint64", "complex64"))
SIGNATURES: tuple[tuple[str, ...], ...] = tuple((d,) for d in DTYPES) + tuple(
    (d, d) for d in DTYPES) + MIXED


def loop_of(op: Elementwise, sig: tuple[str, ...]) -> tuple[np.dtype, ...] | None:
    """NumPy's dtypes for `op` on `sig`, or None when NumPy refuses them."""
    try:
        return tuple(op.ufunc.resolve_dtypes(tuple(np.dtype(d) for d in sig) + (None,)))
    except TypeError:
        return None


def accepted(op: Elementwise, sig: tuple[str, ...]) -> bool:
    loop = loop_of(op, sig)
    return loop is not None and all(d in SUPPORTED_DTYPES for d in loop)


def edge_values(dtype: str) -> list[Any]:
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return list(COMPLEX_EDGES)
    if dt.kind == "f":
        return [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [v for v in (info.min, info.max, 0, 1, -1, 2, info.min + 1, info.max - 1)
                if info.min <= v <= info.max]
    return [True, False]


def operand(domain: Domain, dtype: str, position: int, seed: int, grid: bool = False
            ) -> np.ndarray:
    """N values of `dtype` from `domain`, the dtype's edge values first (not for an integer
    operand with a narrower domain: shift counts and exponents stay in their range); with
    `grid`, the edge values of both operands of a binary op in every pair."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(N) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        narrow = position == 1 and domain.int_low is not None
        lo = domain.int_low if narrow else domain.low
        hi = domain.int_high if narrow else domain.high
        lo, hi = max(int(lo), int(info.min)), min(int(hi), int(info.max))  # type: ignore[arg-type]
        values = rng.integers(lo, hi, size=N, endpoint=True).astype(dt)
        if narrow:
            return values
    elif dt.kind == "c":  # [E16] real and imaginary parts from the domain
        values = (rng.uniform(domain.low, domain.high, size=N)
                  + 1j * rng.uniform(domain.low, domain.high, size=N)).astype(dt)
    else:
        values = rng.uniform(domain.low, domain.high, size=N).astype(dt)
    if domain.specials:
        edges = np.array(edge_values(dtype), dtype=dt)
        if grid:  # every edge value against every edge value of the other operand
            edges = np.repeat(edges, len(edges)) if position == 0 else np.tile(edges, len(edges))
        values[: len(edges)] = edges
    return values


def quiet(fn: Callable[..., Any], *args: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def plan(sig: tuple[str, ...]) -> list[Elementwise]:
    return [op for op in ELEMENTWISE if op.nin == len(sig) and accepted(op, sig)]


def make_program(ops: list[Elementwise]) -> Callable[..., tuple[Any, ...]]:
    """Op k of `ops` applied to row k of the inputs (the ufunc objects themselves: dispatch)."""
    def program(*rows: Any) -> tuple[Any, ...]:
        return tuple(op.ufunc(*(r[k] for r in rows)) for k, op in enumerate(ops))
    return program


# float16: Stax computes in float32 (libmvec: 4 ulp) and rounds (one half ulp); NumPy on a CPU
# with AVX512_FP16 runs its own half-precision loops, a few ulp off (tanh(4) = 0.9985 where
# the rounded float32 value is 0.9995): 2.5e-3 is 5 ulp just below 1
HALF_RTOL = 2.5e-3


def rtol_for(op_domain: Domain, result: np.ndarray) -> float | None:
    if result.dtype.kind not in "fc":
        return None
    if result.dtype == np.float16:
        return HALF_RTOL
    single = result.dtype in (np.float32, np.complex64)
    return op_domain.rtol[0] if single else op_domain.rtol[1]


def rtol_of(sig: tuple[str, ...]) -> float:
    return HALF_RTOL if "float16" in sig else 1e-5 if (
        "float32" in sig or "complex64" in sig) else 1e-12


def match(got: Any, want: Any, rtol: float | None) -> None:
    """assert_matches; complex results part by part (NaN and inf placement exact) [E16]."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            match(g, w, rtol)
    elif np.asarray(want).dtype.kind == "c":
        assert_complex_matches(got, want, rtol)
    else:
        assert_matches(got, want, rtol=rtol)


@pytest.mark.parametrize("sig", SIGNATURES, ids=["-".join(s) for s in SIGNATURES])
def test_sweep(sig: tuple[str, ...]) -> None:
    ops = plan(sig)
    if not ops:
        pytest.skip(f"no op of the table accepts {sig} in a supported dtype")
    rows = [np.stack([operand(op.domain, d, pos, seed=7 * k + pos, grid=len(sig) == 2)
                      for k, op in enumerate(ops)]) for pos, d in enumerate(sig)]
    program = make_program(ops)
    want = quiet(program, *rows)
    got = quiet(stax.jit(program), *rows)
    assert len(got) == len(ops)
    for op, g, w in zip(ops, got, want, strict=True):
        try:
            match(g, w, rtol_for(op.domain, np.asarray(w)))
        except AssertionError as e:
            raise AssertionError(f"np.{op.name} on {sig}: {e}") from None


@pytest.mark.parametrize("sig", SIGNATURES, ids=["-".join(s) for s in SIGNATURES])
def test_refused_like_numpy(sig: tuple[str, ...]) -> None:
    """Combinations NumPy refuses raise its TypeError; those needing float16 are refused with
    NotImplementedError (never a silently different dtype). Tracing only: nothing compiles."""
    args = [np.zeros(3, d) for d in sig]
    for op in ELEMENTWISE:
        if op.nin != len(sig) or accepted(op, sig):
            continue
        expected = TypeError if loop_of(op, sig) is None else NotImplementedError
        with pytest.raises(expected):
            stax.jit(lambda *a, op=op: op.ufunc(*a), strict=True)(*args)


def operators(x: Any, y: Any) -> tuple[Any, ...]:
    """Python operators dispatch to the same ops (x ** y: the exponents stay small)."""
    out = (x == y, x != y, x < y, x <= y, x > y, x >= y, abs(x))
    if x.dtype.kind == "b" and y.dtype.kind == "b":
        return (*out, x & y, x | y, x ^ y, ~x)
    if "c" in (x.dtype.kind, y.dtype.kind):  # [E16] no //, % for complex (NumPy: TypeError)
        z = x if x.dtype.kind == "c" else y
        return (*out, +y, -y, x + y, x - y, x * y, x / y, x ** y, z ** 2, z ** 3, z ** -1,
                z ** 0.5)
    out = (*out, +y, -y, x + y, x - y, x * y, x / y, x // y, x % y, x ** (y % 3))
    if x.dtype.kind in "iu" and y.dtype.kind in "iu" and np.result_type(x, y).kind != "f":
        out = (*out, x & y, x | y, x ^ y, ~x, x << (y % 8), x >> (y % 8))
    return out


OPERATOR_SIGS = tuple((d, d) for d in DTYPES) + MIXED


@pytest.mark.parametrize("sig", OPERATOR_SIGS, ids=["-".join(s) for s in OPERATOR_SIGS])
def test_operators(sig: tuple[str, ...]) -> None:
    x = operand(WIDE, sig[0], 0, seed=1, grid=True)
    y = operand(WIDE, sig[1], 1, seed=2, grid=True)
    want = quiet(operators, x, y)
    got = quiet(stax.jit(operators), x, y)
    match(got, want, rtol_of(sig))


# [E16] complex max/min/argmax/argmin (NumPy's lexicographic order) are refused: graph breaks
COMPLEX_REFUSED = ("max", "min", "argmax", "argmin")


def reduction_program(x: Any) -> tuple[Any, ...]:
    out: list[Any] = []
    for r in REDUCTIONS:
        if x.dtype.kind == "c" and r.name in COMPLEX_REFUSED:
            continue
        out += [r.numpy(x), r.numpy(x, axis=0), r.numpy(x, axis=1)]  # type: ignore[operator]
    for s in SCANS:
        out += [s.numpy(x, axis=0), s.numpy(x, axis=1)]  # type: ignore[operator]
    return tuple(out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_and_scans(dtype: str) -> None:
    """Every reduction and scan of the table over every dtype, whole-array and per axis,
    including NaN (propagation, argmax's first NaN) and wrap-around of integer sums."""
    x = np.stack([operand(Domain(-3.0, 3.0), dtype, 0, seed=s) for s in range(5)])
    if np.dtype(dtype).kind == "f":
        x[3] = np.abs(x[3]) + 0.5  # a NaN-free row: real max/min/argmax ties and values
        x[3, 7] = x[3, 2]  # a tie: the first position wins
    want = quiet(reduction_program, x)
    got = quiet(stax.jit(reduction_program), x)
    # float16 sums: Stax accumulates in float32 and rounds once; NumPy does so along the
    # contiguous axis but rounds to float16 after each step along an outer axis (a few ulp)
    match(got, want, 1e-2 if dtype == "float16" else rtol_of((dtype,)))


@pytest.mark.parametrize("name", COMPLEX_REFUSED)
def test_complex_reductions_refused(name: str) -> None:
    """Complex max/min/argmax/argmin: refused (NotImplementedError) in strict mode, a graph
    break with NumPy's result otherwise. Tracing only: nothing compiles."""
    fn = getattr(np, name)
    z = np.array([1 + 2j, 1 + 3j, np.nan + 0j], np.complex64)
    with pytest.raises(NotImplementedError, match="complex"):
        stax.jit(fn, strict=True)(z)


def test_every_op_is_swept() -> None:
    """An op cannot exist untested: each op of the table is compiled by some sweep program."""
    swept = {op.name for sig in SIGNATURES for op in plan(sig)}
    assert swept == {op.name for op in ELEMENTWISE}
    assert {r.name for r in REDUCTIONS} | {s.name for s in SCANS} == {
        f.__name__ for f in (*(r.numpy for r in REDUCTIONS), *(s.numpy for s in SCANS))}
    every_dtype = {d for sig in SIGNATURES for d in sig}
    assert every_dtype == set(DTYPES)


# ---- integer undefined behaviour in C++ that NumPy defines -------------------------------------

INT_DTYPES = [d for d in DTYPES if np.dtype(d).kind in "iu"]


def _int_edges(x: Any, y: Any) -> tuple[Any, ...]:
    return (np.reciprocal(x), x // y, x % y, np.abs(x), -x, x << y, x >> y, x * x, x - y)


_INT_EDGES = stax.jit(_int_edges)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_edges(dtype: str) -> None:
    """reciprocal of 0 (NumPy: int minimum for int32/int64, else 0, with its two warnings),
    MIN // -1, MIN % -1, abs/negative of MIN, shifts by >= width or negative, overflow."""
    info = np.iinfo(dtype)
    signed = info.min < 0
    x = np.array([0, 1, 2, info.min, info.max, 3, 5, 7], dtype)
    y = np.array([0, -1 if signed else 1, 1, -1 if signed else 0, min(200, int(info.max)), 64,
                  -2 if signed else 2, 8 * x.itemsize], dtype)
    want = quiet(_int_edges, x, y)
    assert_matches(quiet(_INT_EDGES, x, y), want)
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in reciprocal"), \
            pytest.warns(RuntimeWarning, match="invalid value encountered in reciprocal"):
        stax.jit(lambda x: np.reciprocal(x))(np.zeros(3, dtype))


_CASTS = {d: stax.jit(lambda x, d=d: x.astype(d)) for d in INT_DTYPES}


@pytest.mark.parametrize("source", ["float16", "float32", "float64"])
@pytest.mark.parametrize("target", INT_DTYPES)
def test_float_to_int_casts(source: str, target: str) -> None:
    """Out-of-range, NaN and inf casts: NumPy's x86 values, and its warning exactly when NumPy
    warns (in range, even wrapping: 300.0 -> uint8 44, no warning)."""
    values = [300.0, -1.0, 2.5, -2.5, np.nan, np.inf, -np.inf, 3e9, -3e9, 5e9, 1e19, 2.0**63,
              1e20, -1e20, 127.0, -128.0, 65535.0]
    for v in values:
        x = np.full(20, v, dtype=source)
        with warnings.catch_warnings(record=True) as numpy_warned:
            warnings.simplefilter("always")
            want = x.astype(target)
        with warnings.catch_warnings(record=True) as stax_warned:
            warnings.simplefilter("always")
            got = _CASTS[target](x)
        assert_matches(got, want)
        assert bool(stax_warned) == bool(numpy_warned), (v, source, target)


# ---- NEP 50: NumPy functions of Python scalars are strong, operators keep them weak ----------

NEP50 = {
    "sqrt_times": lambda dt, z: np.sqrt(dt) * z,
    "exp_plus": lambda dt, z: np.exp(dt) + z,
    "add_fn": lambda dt, z: np.add(dt, 1.0) * z,
    "multiply_fn_weak_arg": lambda dt, z: np.multiply(dt, z),
    "operator": lambda dt, z: (dt * 2.0) * z,
    "power_op": lambda dt, z: dt ** 0.5 * z,
    "negative_fn": lambda dt, z: np.negative(dt) - z,
}


@pytest.mark.parametrize("name", list(NEP50))
@pytest.mark.parametrize("zdtype", ["float32", "int16", "uint8"])
def test_nep50_functions_of_python_scalars(name: str, zdtype: str) -> None:
    fn = NEP50[name]
    z = np.arange(5).astype(zdtype)
    for dt in (0.25, 3):
        want = quiet(fn, dt, z)
        got = quiet(stax.jit(fn), dt, z)
        assert_matches(got, want)
