"""Scalar expressions: the element-level code of flattened kernels, typed by NumPy.

An `Expr` is immutable. Leaves are constants, the element index `Idx` of the kernel's loop, the
segment index `Seg` of that element (known inside segmented kernels without a lookup), operator
arguments `Arg` (the two sides of a reduction/scan operator) and `Load`s from concrete arrays.
Result dtypes come from NumPy itself (`ufunc.resolve_dtypes`), so typing follows NumPy 2's rules,
Python scalars being weak. A backend prints them (the CPU one: `stax/backends/cpu/segmented.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from stax.ops import ELEMENTWISE

# The dtypes and ufuncs nested code supports (a backend implements each of them).
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"})
INT64 = np.dtype("int64")
BOOL = np.dtype("bool")

# Every ufunc of the op table (`stax.ops`: one definition per op, its C++ the main kernels'),
# by the name NumPy gives it (`ufunc.__name__`), by number of operands.
BINARY = frozenset(op.ufunc.__name__ for op in ELEMENTWISE if op.nin == 2)
UNARY = frozenset(op.ufunc.__name__ for op in ELEMENTWISE if op.nin == 1)


def check_dtype(dtype: np.dtype) -> None:
    """A TypeError unless nested code supports `dtype`."""
    if dtype in _NATIVE:  # (dtype.name is slow: every call of a jitted function checks)
        return
    if np.dtype(dtype).name not in DTYPES:
        raise TypeError(f"stax.nested: dtype {np.dtype(dtype)} is not supported")


_NATIVE = frozenset(np.dtype(name) for name in DTYPES)


@dataclass(frozen=True, eq=False)
class Buf:
    """A concrete contiguous 1-D array that kernels read (identity is the array object:
    two Bufs of one array are equal, so equal loads simplify, e.g. x - x)."""
    array: np.ndarray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Buf) and other.array is self.array

    def __hash__(self) -> int:
        return id(self.array)


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
    if ints and e.fn == "subtract" and x == y:
        return Const(e.dtype, 0)
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
