"""Scalar expressions: the element-level code of flattened kernels, typed by NumPy, printed as C++.

An `Expr` is immutable. Leaves are constants, the element index `Idx` of the kernel's loop, the
segment index `Seg` of that element (known inside segmented kernels without a lookup), operator
arguments `Arg` (the two sides of a reduction/scan operator) and `Load`s from concrete arrays.
Result dtypes come from NumPy itself (`ufunc.resolve_dtypes`), so typing follows NumPy 2's rules,
Python scalars being weak.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

CPP_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float32": "float", "float64": "double",
}
INT64 = np.dtype("int64")
BOOL = np.dtype("bool")

BINARY = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
    "divide": "({0} / {1})", "floor_divide": "stax_floordiv({0}, {1})",
    "remainder": "stax_mod({0}, {1})", "power": "stax_pow({0}, {1})",
    "maximum": "stax_max({0}, {1})", "minimum": "stax_min({0}, {1})",
    "fmax": "stax_fmax({0}, {1})", "fmin": "stax_fmin({0}, {1})",
    "equal": "({0} == {1})", "not_equal": "({0} != {1})", "less": "({0} < {1})",
    "less_equal": "({0} <= {1})", "greater": "({0} > {1})", "greater_equal": "({0} >= {1})",
    "logical_and": "({0} && {1})", "logical_or": "({0} || {1})",
    "logical_xor": "(bool({0}) != bool({1}))", "bitwise_and": "({0} & {1})",
    "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "arctan2": "std::atan2({0}, {1})", "hypot": "std::hypot({0}, {1})",
}
UNARY = {
    "negative": "(-{0})", "positive": "({0})", "absolute": "stax_abs({0})",
    "sqrt": "std::sqrt({0})", "exp": "std::exp({0})", "log": "std::log({0})",
    "log1p": "std::log1p({0})", "expm1": "std::expm1({0})", "sin": "std::sin({0})",
    "cos": "std::cos({0})", "tan": "std::tan({0})", "tanh": "std::tanh({0})",
    "floor": "std::floor({0})", "ceil": "std::ceil({0})", "rint": "std::nearbyint({0})",
    "square": "({0} * {0})", "logical_not": "(!{0})", "invert": "stax_invert({0})",
    "isnan": "stax_isnan({0})", "isinf": "stax_isinf({0})", "isfinite": "stax_isfinite({0})",
    "sign": "stax_sign({0})",
}
# OpenMP reduction identifiers for operators that are associative and commutative on
# every dtype they accept (max/min only on integers: the float versions propagate NaN).
OMP_REDUCTIONS = {"add": "+", "multiply": "*", "bitwise_and": "&", "bitwise_or": "|",
                  "bitwise_xor": "^", "logical_and": "&&", "logical_or": "||"}
OMP_INT_REDUCTIONS = {"maximum": "max", "minimum": "min"}

PRELUDE = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>
#include <omp.h>
// glibc's libmvec vector variants (as in stax/backends/cpu/runtime_header.h): with these
// declarations `omp simd` loops calling them are vectorized; libmvec is accurate to 4 ulp.
#define STAX_NESTED_SIMD_MATH(name) \
    __attribute__((simd("notinbranch"))) float name##f(float) noexcept; \
    __attribute__((simd("notinbranch"))) double name(double) noexcept;
extern "C" {
STAX_NESTED_SIMD_MATH(exp) STAX_NESTED_SIMD_MATH(expm1) STAX_NESTED_SIMD_MATH(log)
STAX_NESTED_SIMD_MATH(log1p) STAX_NESTED_SIMD_MATH(sin) STAX_NESTED_SIMD_MATH(cos)
STAX_NESTED_SIMD_MATH(tan) STAX_NESTED_SIMD_MATH(tanh)
}
template <class T> static inline T stax_floordiv(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { return std::floor(a / b); }
  else { if (b == 0) return 0;
         if constexpr (std::is_signed_v<T>) { if (b == -1) return T(0) - a;
           T q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) --q; return q; }
         else return a / b; }
}
template <class T> static inline T stax_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return std::fmod(a, b); T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b; else if (r == 0) r = std::copysign(T(0), b);
    return r; }
  else { if (b == 0) return 0; if constexpr (std::is_signed_v<T>) { if (b == -1) return 0;
         T r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; } else return a % b; }
}
template <class T> static inline T stax_pow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) { return std::pow(a, b); }
  else { if (b < 0) return 0; T r = 1; while (b) { if (b & 1) r = r * a; a = a * a; b >>= 1; }
         return r; }
}
template <class T> static inline bool stax_isnan(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(a); else return false; }
template <class T> static inline bool stax_isinf(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::isinf(a); else return false; }
template <class T> static inline bool stax_isfinite(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(a); else return true; }
template <class T> static inline T stax_max(T a, T b) {
  return stax_isnan(a) ? a : (stax_isnan(b) ? b : (a < b ? b : a)); }
template <class T> static inline T stax_min(T a, T b) {
  return stax_isnan(a) ? a : (stax_isnan(b) ? b : (b < a ? b : a)); }
template <class T> static inline T stax_fmax(T a, T b) {
  return stax_isnan(b) ? a : (stax_isnan(a) ? b : (a < b ? b : a)); }
template <class T> static inline T stax_fmin(T a, T b) {
  return stax_isnan(b) ? a : (stax_isnan(a) ? b : (b < a ? b : a)); }
template <class T> static inline T stax_abs(T a) {
  if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return a;
  else return a < 0 ? T(0) - a : a; }
template <class T> static inline T stax_invert(T a) {
  if constexpr (std::is_same_v<T, bool>) return !a; else return ~a; }
template <class T> static inline T stax_sign(T a) {
  if (stax_isnan(a)) return a; return T((a > 0) - (a < 0)); }
template <class To, class From> static inline To stax_cast(From x) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>
                && !std::is_same_v<To, bool>) {
    if (!(x >= From(std::numeric_limits<To>::min())
          && x < From(std::numeric_limits<To>::max()) + From(1)))
      return std::is_signed_v<To> ? std::numeric_limits<To>::min() : To(0);
    return To(x); }
  else if constexpr (std::is_same_v<To, bool>) { return x != From(0); }
  else return To(x);
}
"""


def cpp_type(dtype: np.dtype) -> str:
    try:
        return _CPP_BY_DTYPE[dtype]
    except (KeyError, TypeError):
        pass
    try:
        name = CPP_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"stax.nested: dtype {np.dtype(dtype)} is not supported") from None
    if isinstance(dtype, np.dtype) and dtype.isnative:
        _CPP_BY_DTYPE[dtype] = name  # dtype.name is slow; kernels ask for it thousands of times
    return name


_CPP_BY_DTYPE: dict[np.dtype, str] = {}


@dataclass(frozen=True, eq=False)
class Buf:
    """A concrete contiguous 1-D array that kernels read (identity is the array object)."""
    array: np.ndarray


@dataclass(frozen=True)
class Expr:
    dtype: np.dtype


@dataclass(frozen=True)
class Const(Expr):
    value: bool | int | float
    weak: bool = False  # a Python scalar: NumPy 2 lets the other operand decide the dtype


@dataclass(frozen=True)
class Idx(Expr):
    dtype: np.dtype = field(default=INT64)


@dataclass(frozen=True)
class Seg(Expr):
    dtype: np.dtype = field(default=INT64)


@dataclass(frozen=True)
class Arg(Expr):
    name: str  # the C++ local standing for an operator argument


@dataclass(frozen=True)
class Load(Expr):
    buf: Buf
    index: Expr


@dataclass(frozen=True)
class Call(Expr):
    fn: str  # a ufunc name, "where" or "cast"
    args: tuple[Expr, ...]


def const(value: object, dtype: np.dtype | None = None) -> Const:
    """A constant; Python scalars without an explicit dtype stay weak."""
    if dtype is not None:
        return Const(np.dtype(dtype), np.asarray(value, dtype).item())
    if isinstance(value, np.generic):
        return Const(value.dtype, value.item())
    if isinstance(value, (bool, int, float)):
        return Const(np.result_type(type(value)), value, weak=True)
    raise TypeError(f"stax.nested: {type(value).__name__} values are not supported "
                    f"(use numbers, NumPy scalars or arrays)")


def _resolve_key(e: Expr) -> np.dtype | type:
    if isinstance(e, Const) and e.weak and not isinstance(e.value, bool):
        return type(e.value)  # weak int/float; a Python bool is simply a bool
    return e.dtype


def ufunc_call(ufunc: np.ufunc, args: tuple[Expr, ...]) -> Expr:
    """`ufunc(*args)` with NumPy's dtype resolution; operands are cast to the loop's types."""
    name = ufunc.__name__
    table = BINARY if ufunc.nin == 2 else UNARY
    if name not in table or len(args) != ufunc.nin:
        raise NotImplementedError(f"stax.nested: np.{name} with {len(args)} operands is not "
                                  f"supported in nested code")
    try:
        dtypes = ufunc.resolve_dtypes((*(_resolve_key(a) for a in args), None))
    except TypeError as exc:
        raise TypeError(f"stax.nested: np.{name} does not accept "
                        f"{', '.join(str(a.dtype) for a in args)}: {exc}") from None
    cast = tuple(cast_to(a, d) for a, d in zip(args, dtypes[:-1], strict=True))
    return _fold(Call(dtypes[-1], name, cast))


def _is(e: Expr, value: int) -> bool:
    return isinstance(e, Const) and e.value == value and not isinstance(e.value, bool)


def _fold(e: Call) -> Expr:
    """Algebraic identities that are exact in the result dtype (x + 0, x * 1, x // 1 on
    integers; x * 1 on floats too), so replicated and iota expressions stay small."""
    if len(e.args) != 2 or e.dtype.kind not in "iuf":
        return e
    x, y = e.args
    ints = e.dtype.kind in "iu"
    if e.fn == "multiply":
        for p, q in ((x, y), (y, x)):
            if _is(q, 1) and p.dtype == e.dtype:
                return p
            if ints and _is(q, 0):
                return Const(e.dtype, 0)
    if ints and e.fn == "add":
        for p, q in ((x, y), (y, x)):
            if _is(q, 0) and p.dtype == e.dtype:
                return p
    right_identity = {"subtract": 0, "floor_divide": 1}
    if ints and e.fn in right_identity and _is(y, right_identity[e.fn]) and x.dtype == e.dtype:
        return x
    return e


def cast_to(e: Expr, dtype: np.dtype) -> Expr:
    dtype = np.dtype(dtype)
    if e.dtype == dtype and not (isinstance(e, Const) and e.weak):
        return e
    if isinstance(e, Const):
        return Const(dtype, np.asarray(e.value).astype(dtype).item())
    return Call(dtype, "cast", (e,))


def where(cond: Expr, a: Expr, b: Expr) -> Expr:
    dtype = np.result_type(*(e.value if isinstance(e, Const) and e.weak else e.dtype
                             for e in (a, b)))
    return Call(dtype, "where", (cast_to(cond, BOOL), cast_to(a, dtype), cast_to(b, dtype)))


def substitute(e: Expr, mapping: dict[type, Expr]) -> Expr:
    """Replace leaves of the given classes (`Idx`, `Seg`) by expressions."""
    if type(e) in mapping:
        return mapping[type(e)]
    if isinstance(e, Load):
        return Load(e.dtype, e.buf, substitute(e.index, mapping))
    if isinstance(e, Call):
        return _fold(Call(e.dtype, e.fn, tuple(substitute(a, mapping) for a in e.args)))
    return e


def rename_args(e: Expr, names: dict[str, Expr]) -> Expr:
    if isinstance(e, Arg):
        return names[e.name]
    if isinstance(e, Load):
        return Load(e.dtype, e.buf, rename_args(e.index, names))
    if isinstance(e, Call):
        return Call(e.dtype, e.fn, tuple(rename_args(a, names) for a in e.args))
    return e


def uses(e: Expr, kind: type) -> bool:
    if isinstance(e, kind):
        return True
    if isinstance(e, Load):
        return uses(e.index, kind)
    if isinstance(e, Call):
        return any(uses(a, kind) for a in e.args)
    return False


def guarded_load(e: Expr, guarded: bool = False) -> bool:
    """Whether a load sits in a branch of a `where` (so it must not be executed
    unconditionally: its index may be out of range when the branch is not taken)."""
    if isinstance(e, Load):
        if isinstance(e.index, (Idx, Seg, Const)):
            return False  # in range for every lane of the loop (checked: `direct_loads`)
        return guarded or guarded_load(e.index, guarded)
    if isinstance(e, Call):
        if e.fn == "where":
            return guarded_load(e.args[0], guarded) or any(guarded_load(a, True)
                                                           for a in e.args[1:])
        return any(guarded_load(a, guarded) for a in e.args)
    return False


def direct_loads(e: Expr) -> Iterator[Load]:
    """The loads at the element index, the segment index or a constant (`x[i]`, `x[s]`,
    `x[0]`: a value of the top level, which has one iteration)."""
    if isinstance(e, Load):
        if isinstance(e.index, (Idx, Seg, Const)):
            yield e
        else:
            yield from direct_loads(e.index)
    elif isinstance(e, Call):
        for a in e.args:
            yield from direct_loads(a)


def buffers(exprs: tuple[Expr, ...]) -> list[Buf]:
    """Distinct arrays read by `exprs`, in order of first appearance."""
    seen: dict[int, Buf] = {}

    def walk(e: Expr) -> None:
        if isinstance(e, Load):
            seen.setdefault(id(e.buf), e.buf)
            walk(e.index)
        elif isinstance(e, Call):
            for a in e.args:
                walk(a)

    for e in exprs:
        walk(e)
    return list(seen.values())


def _literal(c: Const) -> str:
    t = cpp_type(c.dtype)
    if c.dtype.kind == "b":
        return "true" if c.value else "false"
    if c.dtype.kind == "f":
        v = float(c.value)
        if np.isnan(v):
            return f"std::numeric_limits<{t}>::quiet_NaN()"
        if np.isinf(v):
            return f"({'-' if v < 0 else ''}std::numeric_limits<{t}>::infinity())"
        return f"{t}({v!r})"
    if c.dtype == INT64 and c.value == np.iinfo(np.int64).min:
        return "std::numeric_limits<int64_t>::min()"
    return f"{t}({int(c.value)}LL)" if c.dtype.kind == "i" else f"{t}({int(c.value)}ULL)"


def emit(e: Expr, names: dict[int, str]) -> str:
    """C++ for `e`; `names` maps id(Buf) to its pointer; Idx is `i`, Seg is `s`."""
    if isinstance(e, Const):
        return _literal(e)
    if isinstance(e, Idx):
        return "i"
    if isinstance(e, Seg):
        return "s"
    if isinstance(e, Arg):
        return e.name
    if isinstance(e, Load):
        return f"{names[id(e.buf)]}[{emit(e.index, names)}]"
    assert isinstance(e, Call)
    args = [emit(a, names) for a in e.args]
    if e.fn == "cast":
        return f"stax_cast<{cpp_type(e.dtype)}>({args[0]})"
    if e.fn == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    table = BINARY if len(args) == 2 else UNARY
    return f"{cpp_type(e.dtype)}({table[e.fn].format(*args)})"
