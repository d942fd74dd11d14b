"""Run-time stops of reductions over masked prefixes (issue 10).

Inside a loop body, a slice whose length depends on the loop index (`L[i, :j]`) is a masked
full-length value (`stax.loops.masked`): a sum over it reads `where(p < n(j), x[p], 0)` for every
position `p` of its longest extent. Every position at or past `n(j)` holds the reduction's
identity, so the reduction loop can stop there: O(n(j)) work per iteration instead of
O(longest). `prefix_stop` proves that from the node's body and returns the stop (an int64
expression in the outer variables, read once before the loop); the mask stays in the body,
so the result never depends on the stop being used.

The proof, rule `masked_prefix`: the body is `where(r0 < S, x, identity)` with `S` free of `r0`
(`r0` itself, an `IndexValue` of it, or a constant `arange` read at it), or a cast of such a
body, or — for a sum — a product with such a factor (a zero factor makes the term zero).

The same slices gather from their array at clamped positions, `min(start + p, n - 1)` (never out
of bounds). `clamp_of` reads such an index as `A` clamped, with `A` affine in the loop variable
`p`: where `A` stays inside the clamp over a range of `p` (checked at run time at the range's
two ends), the index is `A` itself, contiguous along `p` (rule `clamp_free`, the
outer-reduction form of `stax.tiling.plan`).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

import numpy as np

from stax.ir.expr import (
    Call,
    Const,
    Expr,
    Index,
    IndexValue,
    Indirect,
    Load,
    expr_variables,
    loads,
)
from stax.ir.program import Buffer, Node

VAR = "r0"


def _identity(fn: str, dtype: np.dtype) -> object | None:
    """The value `fn` folds without changing its result (None: not one handled here)."""
    if fn == "sum":
        return 0
    if fn == "prod":
        return 1
    if fn in ("max", "min") and dtype.kind == "f":
        return -np.inf if fn == "max" else np.inf
    if fn in ("max", "min") and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if fn == "max" else info.max
    return None


def _is_var(e: Expr, buffers: Mapping[str, Buffer]) -> bool:
    """`e` is the value of `r0`: the index itself or a constant `arange` read at it."""
    var = Index.var(VAR)
    if isinstance(e, IndexValue):
        return e.index == var
    if isinstance(e, Load) and e.index == var and e.dtype.kind in "iu":
        buf = buffers.get(e.buf)
        if buf is None or buf.kind != "const" or len(buf.shape) != 1:
            return False
        data = np.asarray(buf.data)
        return bool(np.array_equal(data, np.arange(data.shape[0])))
    return isinstance(e, Call) and e.fn == "cast" and e.dtype.kind in "iu" and \
        e.args[0].dtype.kind in "iu" and _is_var(e.args[0], buffers)


def _stop_of(cond: Expr, buffers: Mapping[str, Buffer]) -> Expr | None:
    """`S` when `cond` is false for every `r0 >= S`."""
    if not isinstance(cond, Call):
        return None
    if cond.fn == "less" and _is_var(cond.args[0], buffers) and \
            cond.args[1].dtype.kind in "iu" and VAR not in expr_variables(cond.args[1]):
        return cond.args[1]
    if cond.fn == "logical_and":
        return _stop_of(cond.args[0], buffers) or _stop_of(cond.args[1], buffers)
    return None


def _stop(e: Expr, identity: object, fn: str, buffers: Mapping[str, Buffer]) -> Expr | None:
    if not isinstance(e, Call):
        return None
    if e.fn == "where":
        cond, _, other = e.args
        if isinstance(other, Const) and other.value == identity and not (
                isinstance(identity, (int, float)) and identity == 0 and
                np.signbit(other.value)):
            return _stop_of(cond, buffers)
        return None
    if e.fn == "cast" and e.args[0].dtype.kind in "iuf" and e.dtype.kind in "iuf" and \
            identity in (0, 1):  # 0 and 1 cast to 0 and 1
        return _stop(e.args[0], identity, fn, buffers)
    if e.fn == "multiply" and fn == "sum":
        return _stop(e.args[0], 0, fn, buffers) or _stop(e.args[1], 0, fn, buffers)
    return None


def prefix_stop(node: Node, buffers: Mapping[str, Buffer]) -> Expr | None:
    """The run-time stop of `node`'s reduction loop (rule `masked_prefix`), or None."""
    if node.kind != "reduction" or len(node.reduction_ranges) != 1 or node.body is None:
        return None
    identity = _identity(node.fn, node.body.dtype)
    if identity is None or node.body.dtype.kind not in "iuf":
        return None
    return _stop(node.body, identity, node.fn, buffers)


INT64 = np.dtype(np.int64)


@dataclass(frozen=True)
class Clamp:
    """A gather index `wrap(clamp(arg, lo, hi))` (`Indirect`) with `arg` affine in a loop
    variable (`coef` per step): equal to `arg` wherever `low <= arg <= high`."""

    arg: Expr
    coef: int
    low: int
    high: int | str  # the axis' last position: a size known at launch is C text


def _coef(e: Expr, var: str) -> int | None:
    """`a` when the int64 value `e` is `a*var` plus terms free of `var`; None: not known."""
    if var not in expr_variables(e):
        return 0 if e.dtype.kind in "iu" else None
    if isinstance(e, IndexValue):
        return e.index.coef(var) if e.index.is_linear_in(var) else None
    if not isinstance(e, Call) or e.dtype != INT64:
        return None
    coefs = [_coef(a, var) for a in e.args]
    if None in coefs:
        return None
    if e.fn == "add":
        return coefs[0] + coefs[1]  # type: ignore[operator]
    if e.fn == "subtract":
        return coefs[0] - coefs[1]  # type: ignore[operator]
    if e.fn == "negative":
        return -coefs[0]  # type: ignore[operator]
    if e.fn == "multiply":
        k = next((a.value for a in e.args if isinstance(a, Const)), None)
        return None if k is None else int(k) * sum(coefs)  # type: ignore[arg-type]
    if e.fn == "cast" and e.args[0].dtype.kind == "i":  # a signed integer widened: exact
        return coefs[0]
    return None


def clamp_of(atom: Indirect, var: str, outer: Set[str], written: Set[str]) -> Clamp | None:
    """`atom` as a clamped affine index in `var` (rule `clamp_free`), its unclamped argument
    reading only the variables `outer` and `var` and no buffer in `written`; None: not one."""
    e, low, high = atom.expr, 0, None
    while isinstance(e, Call) and e.fn in ("minimum", "maximum") and e.dtype == INT64 and \
            any(isinstance(a, Const) for a in e.args):
        bound = next(int(a.value) for a in e.args if isinstance(a, Const))
        if e.fn == "minimum":
            high = bound if high is None else min(high, bound)
        else:
            low = max(low, bound)
        e = next(a for a in e.args if not isinstance(a, Const))
    last: int | str = atom.size - 1 if isinstance(atom.size, int) else f"({atom.size}) - 1"
    if e is atom.expr or not expr_variables(e) <= {var, *outer} or \
            any(ld.buf in written for ld in loads(e)):
        return None
    coef = _coef(e, var)
    if not coef:
        return None
    if high is not None:
        last = min(high, last) if isinstance(last, int) else f"std::min<int64_t>({high}, {last})"
    return Clamp(e, coef, low, last)
