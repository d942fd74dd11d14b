"""Operators of reductions and scans: NumPy ufuncs, or Python functions of two values traced
into C++ expressions (tuples allowed), with their neutral elements checked against the element
types."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stax.nested.expr import Arg, Const, Expr, cast_to, const, ufunc_call
from stax.nested.spec import Operator


class UntraceableOperator(TypeError):
    """A Python operator that branches on its arguments; callers fall back to Python."""


def _name(op: Any) -> str:
    return f"np.{op.__name__}" if isinstance(op, np.ufunc) else getattr(op, "__name__", "op")


def check_binary(op: Any) -> None:
    if isinstance(op, np.ufunc):
        if op.nin != 2 or op.nout != 1:
            raise TypeError(f"stax.nested: the operator {_name(op)} is not binary (it takes "
                            f"{op.nin} argument(s) and returns {op.nout})")
        return
    if not callable(op):
        raise TypeError(f"stax.nested: the operator must be a NumPy ufunc or a function of two "
                        f"values, got {type(op).__name__}")
    try:
        inspect.signature(op).bind(0, 0)
    except TypeError:
        raise TypeError(f"stax.nested: the operator {_name(op)} is not binary (it must accept "
                        f"exactly two arguments)") from None
    except ValueError:
        pass  # builtins without a signature: calling them will tell


def neutral(ne: Any, dtypes: Sequence[np.dtype]) -> tuple[Const, ...]:
    """The neutral element as constants of the element types (a tuple for tuple operators)."""
    items = ne if isinstance(ne, tuple) else (ne,)
    if len(items) != len(dtypes):
        raise TypeError(f"stax.nested: the neutral element has {len(items)} component(s) but "
                        f"the operator works on {len(dtypes)}")
    out = []
    for v, dt in zip(items, dtypes, strict=True):
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        ok = (isinstance(v, np.generic) and np.can_cast(v.dtype, dt, "same_kind")) or (
            isinstance(v, bool) and dt.kind == "b") or (
            isinstance(v, int) and not isinstance(v, bool) and dt.kind in "iuf") or (
            isinstance(v, float) and dt.kind == "f")
        if not ok:
            raise TypeError(f"stax.nested: the neutral element {v!r} "
                            f"({type(v).__name__}) does not match the element type {dt}")
        out.append(Const(np.dtype(dt), np.asarray(v).astype(dt).item()))
    return tuple(out)


def make_operator(op: Any, ne: Any, dtypes: Sequence[np.dtype]) -> Operator:
    """The operator as C++ expressions; raises UntraceableOperator for Python functions that
    cannot be traced (they branch on values)."""
    from stax.nested.flatten import Scalar

    dtypes = tuple(np.dtype(d) for d in dtypes)
    check_binary(op)
    nes = neutral(ne, dtypes)
    m = len(dtypes)
    a = [Arg(d, f"a{j}") for j, d in enumerate(dtypes)]
    b = [Arg(d, f"b{j}") for j, d in enumerate(dtypes)]
    if isinstance(op, np.ufunc):
        if m != 1:
            raise TypeError(f"stax.nested: {_name(op)} combines single values, but the "
                            f"elements are tuples of {m}")
        results: Sequence[Any] = (ufunc_call(op, (a[0], b[0])),)
    else:
        sa = [Scalar(None, e) for e in a]
        sb = [Scalar(None, e) for e in b]
        r = op(sa[0], sb[0]) if m == 1 else op(tuple(sa), tuple(sb))
        results = r if isinstance(r, tuple) else (r,)
        if len(results) != m:
            raise TypeError(f"stax.nested: the operator {_name(op)} returns {len(results)} "
                            f"value(s) for {m}-component elements")
        results = [_expr_of(x, op) for x in results]
    combine = []
    for e, dt in zip(results, dtypes, strict=True):
        if e.dtype != dt and not (isinstance(e, Const) or np.can_cast(e.dtype, dt, "same_kind")):
            raise TypeError(f"stax.nested: the operator {_name(op)} turns {dt} elements into "
                            f"{e.dtype}; it must return the element type")
        combine.append(cast_to(e, dt))
    return Operator(_name(op), tuple(combine), nes, dtypes)


def _expr_of(x: Any, op: Callable[..., Any]) -> Expr:
    from stax.nested.flatten import Scalar
    if isinstance(x, Scalar):
        if x.space is not None:
            raise NotImplementedError(f"stax.nested: the operator {_name(op)} uses a traced "
                                      f"value from outside its arguments")
        return x.expr
    return const(x)
