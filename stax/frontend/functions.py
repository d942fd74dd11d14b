"""More NumPy functions, compiled as compositions of the graph ops `numpy_api` builds (slices,
concatenation, where, reductions, gathers, matmul). Each follows NumPy's own algorithm, so
dtypes and shapes are NumPy's; an argument outside what is implemented raises
NotImplementedError, which under `stax.jit` is a graph break (the call runs in NumPy).

`register()` adds them to `numpy_api.FUNCTIONS` (NEP 18 dispatch) and `UFUNC_METHODS`.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import functools
import math
import operator
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import CodeType, ModuleType
from typing import Any

import numpy as np

from stax import ops
from stax.frontend import numpy_api as api
from stax.frontend.trace import Builder, Tracer
from stax.graph import SUPPORTED_DTYPES, Value
from stax.ir import sym
from stax.ir.sym import Sym, as_size
from stax.runtime import externs


def unsupported(what: str) -> NotImplementedError:
    return api.unsupported(what)


def traced(x: Any, like: Sequence[Any]) -> Tracer:
    """`x` as a Tracer (constants become graph constants of the builder of `like`)."""
    if isinstance(x, Tracer):
        return x
    b = api.find_builder(like)
    return api.wrap(b, api.to_value(b, np.asarray(x)))


def _axis(axis: Any, ndim: int) -> int:
    return api.normalize_axes(operator.index(axis), ndim)[0]


def _slice_along(a: Tracer, axis: int, sl: slice) -> Tracer:
    index = [slice(None)] * a.ndim
    index[axis] = sl
    return a[tuple(index)]


# ---- differences and shifts ----

def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Tracer:
    x = traced(a, (a,))
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, x.ndim)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        e = traced(extra, (x,))
        if e.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            e = api.broadcast_to(e, tuple(shape))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        x = api.concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=ax)
    op = "not_equal" if x.dtype == np.bool_ else "subtract"
    for _ in range(n):
        x = api.apply_ufunc(op, _slice_along(x, ax, slice(1, None)),
                            _slice_along(x, ax, slice(None, -1)))
    return x


def roll(a: Any, shift: Any, axis: Any = None) -> Tracer:
    x = traced(a, (a,))
    if axis is None:
        return api.reshape(roll(api.ravel(x), shift, 0), tuple(x.shape))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    scalar = isinstance(shift, (int, np.integer)) or isinstance(shift, Tracer) and shift.ndim == 0
    shifts = (shift,) * len(axes) if scalar else tuple(shift)
    if len(shifts) == 1 and len(axes) > 1:
        shifts *= len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total: dict[int, Any] = dict.fromkeys(range(x.ndim), 0)
    for s, ax in zip(shifts, axes, strict=True):
        total[_axis(ax, x.ndim)] += _traced_int(s) if isinstance(s, Tracer) else operator.index(s)
    rolled = x
    for ax, s in total.items():
        n = x.shape[ax]
        if isinstance(s, Tracer):  # [HUNT8] a run-time shift (an int argument): a gather
            rolled = api.take(rolled, np.arange(n) - s, axis=ax, mode="wrap") if n else rolled
            continue
        if n == 0 or s % n == 0:
            continue
        k = s % n
        rolled = api.concatenate([_slice_along(rolled, ax, slice(n - k, None)),
                                  _slice_along(rolled, ax, slice(0, n - k))], axis=ax)
    return api.copy_(x) if rolled is x else rolled  # a roll by 0 is a copy, as NumPy's


def _traced_int(s: Tracer) -> Tracer:
    """A traced shift or offset as int64; NumPy's TypeError for a non-integer one."""
    if s.ndim != 0 or s.dtype.kind not in "biu":
        raise TypeError(f"'{s.dtype}' object cannot be interpreted as an integer")
    return s.astype(np.int64)


def flip(m: Any, axis: Any = None) -> Tracer:
    x = traced(m, (m,))
    axes = api.normalize_axes(axis, x.ndim)
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def fliplr(m: Any) -> Tracer:
    if np.ndim(m) < 2 if not isinstance(m, Tracer) else m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m: Any) -> Tracer:
    if np.ndim(m) < 1 if not isinstance(m, Tracer) else m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tracer:
    """NumPy's algorithm: flips and a transpose."""
    x = traced(m, (m,))
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    a0, a1 = (_axis(ax, x.ndim) for ax in axes)
    k = operator.index(k) % 4
    if k == 0:
        return x[...]
    if k == 2:
        return flip(flip(x, a0), a1)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return api.transpose(flip(x, a1), perm)
    return flip(api.transpose(x, perm), a1)


# ---- calculus ----

def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's second-order central differences with first- or ([B16]) second-order edges,
    uniform spacing (NumPy's coefficients, in its order of operations)."""
    x = traced(f, (f,))
    axes = api.normalize_axes(axis, x.ndim)
    spacing = list(varargs) or [1.0]
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if builtins.any(isinstance(d, bool) or not isinstance(d, (int, float)) and not (
            isinstance(d, Tracer) and d.ndim == 0) and (edge_order != 1 or np.ndim(d) != 1)
            for d in spacing):  # [B16] traced scalars, [HUNT] 1-d coordinates (edge_order=1)
        raise unsupported("np.gradient with spacing given as arrays")
    if len(spacing) == 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes):
        raise TypeError("invalid number of arguments")
    if x.dtype.kind in "iu":  # (a bool array stays bool: NumPy's TypeError of its subtract)
        x = api.astype(x, np.float64)
    outs = []
    for ax, dx in zip(axes, spacing, strict=True):
        n = x.shape[ax]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        u = api.apply_ufunc
        if np.ndim(dx) == 1:
            outs.append(api.astype(_gradient_at(x, ax, dx), x.dtype, copy=False))
            continue
        if edge_order == 1:
            first = u("true_divide", u("subtract", _slice_along(x, ax, slice(1, 2)),
                                       _slice_along(x, ax, slice(0, 1))), dx)
            last = u("true_divide", u("subtract", _slice_along(x, ax, slice(n - 1, n)),
                                      _slice_along(x, ax, slice(n - 2, n - 1))), dx)
        else:
            first = _edge(x, ax, (-1.5 / dx, 2.0 / dx, -0.5 / dx), 0)
            last = _edge(x, ax, (0.5 / dx, -2.0 / dx, 1.5 / dx), n - 3)
        inner = u("true_divide", u("subtract", _slice_along(x, ax, slice(2, None)),
                                   _slice_along(x, ax, slice(None, -2))), 2.0 * dx)
        outs.append(api.concatenate([first, inner, last], axis=ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_at(x: Tracer, ax: int, coordinates: Any) -> Tracer:
    """[HUNT] np.gradient along `ax` at 1-d coordinates, first-order edges: NumPy's
    non-uniform interior formula, or its uniform one where the distances are all equal (NumPy
    decides at run time: both are computed, a where chooses)."""
    u = api.apply_ufunc
    c = traced(coordinates, (x,))
    if c.shape[0] != x.shape[ax]:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if c.dtype.kind in "iu":
        c = api.astype(c, np.float64)
    d = diff(c)
    n, shape = x.shape[ax], tuple(-1 if k == ax else 1 for k in range(x.ndim))
    dx1, dx2 = d[:-1], d[1:]
    a, b, cc = (api.reshape(v, shape) for v in (
        u("true_divide", u("negative", dx2), u("multiply", dx1, u("add", dx1, dx2))),
        u("true_divide", u("subtract", dx2, dx1), u("multiply", dx1, dx2)),
        u("true_divide", dx1, u("multiply", dx2, u("add", dx1, dx2)))))
    lo, mid, hi = (_slice_along(x, ax, sl) for sl in (slice(None, -2), slice(1, -1),
                                                       slice(2, None)))
    spread = u("add", u("add", u("multiply", a, lo), u("multiply", b, mid)),
               u("multiply", cc, hi))
    even = u("true_divide", u("subtract", hi, lo), u("multiply", 2.0, d[0]))
    uniform = api.all(u("equal", d, d[0]))
    first = u("true_divide", u("subtract", _slice_along(x, ax, slice(1, 2)),
                               _slice_along(x, ax, slice(0, 1))), d[0])
    last = u("true_divide", u("subtract", _slice_along(x, ax, slice(n - 1, n)),
                              _slice_along(x, ax, slice(n - 2, n - 1))), d[-1])
    return api.concatenate([first, api.where(uniform, even, spread), last], axis=ax)


def _edge(x: Tracer, ax: int, weights: tuple[Any, Any, Any], start: int) -> Tracer:
    """[B16] np.gradient's second-order edge: a*x[start] + b*x[start+1] + c*x[start+2]."""
    u = api.apply_ufunc
    a, b, c = (u("multiply", w, _slice_along(x, ax, slice(start + k, start + k + 1)))
               for k, w in enumerate(weights))
    return u("add", u("add", a, b), c)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tracer:
    """NumPy's formula: sum(d * (y[1:] + y[:-1]) / 2.0) along the axis."""
    ys = traced(y, (y, x))
    ax = _axis(axis, ys.ndim)
    if x is None:
        d: Any = dx
    else:
        xs = traced(x, (y, x))
        if xs.ndim == 1:
            d = api.reshape(diff(xs), tuple(xs.size - 1 if i == ax else 1
                                            for i in range(ys.ndim)))
        else:
            d = diff(xs, axis=ax)
    pairs = api.apply_ufunc("add", _slice_along(ys, ax, slice(1, None)),
                            _slice_along(ys, ax, slice(None, -1)))
    return api.sum(api.apply_ufunc("true_divide", api.apply_ufunc("multiply", d, pairs), 2.0),
                   axis=ax)


# ---- diagonals ----

def derived_view(x: Tracer, derive: Callable[[Tracer], Tracer], writeable: bool,
                 numpy: Callable[[np.ndarray], np.ndarray] | None, result: Tracer | None = None
                 ) -> Tracer:
    """[HUNT3] `derive(x)` (or its `result` already made) where NumPy returns a view of `x`
    (np.diagonal, np.einsum of one operand) and Stax computes a new array: written to later,
    `x` shows through, as in NumPy (the result is derived again from it); writing into the
    result is NumPy's ValueError (read-only) or, where NumPy's view is writeable, a graph
    break. `numpy`: NumPy's own view op, returned when `x` is an argument (the same view of
    the caller's array)."""
    result = derive(x) if result is None else result
    if result is x:
        return result
    result.parent, result.view_op = x, ("derived", {"derive": derive, "writeable": writeable,
                                                    "numpy": numpy})
    result.base = x if x.base is None else x.base
    result.base_version = result.base.version
    return result


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    x = traced(a, (a,))
    if x.ndim != 2 or (_axis(axis1, 2), _axis(axis2, 2)) != (0, 1):
        raise unsupported("np.diagonal of other than the two axes of a 2-d array")
    k = operator.index(offset)
    rows = np.arange(builtins.max(0, -k), builtins.min(x.shape[0], x.shape[1] - k))

    def derive(v: Tracer) -> Tracer:
        return v[rows, rows + k] if rows.size else v[np.zeros(0, np.intp), np.zeros(0, np.intp)]
    return derived_view(x, derive, writeable=False, numpy=lambda a: np.diagonal(a, k))


def isposinf(x: Any) -> Tracer:
    """[HUNT6] NumPy's own formula: isinf(x) and not signbit(x)."""
    return _signed_inf(traced(x, (x,)), "isposinf", negative=False)


def isneginf(x: Any) -> Tracer:
    """[HUNT6] NumPy's own formula: isinf(x) and signbit(x)."""
    return _signed_inf(traced(x, (x,)), "isneginf", negative=True)


def _signed_inf(t: Tracer, name: str, negative: bool) -> Tracer:
    if t.dtype.kind == "c":
        raise TypeError("This operation is not supported for complex values because it would "
                        "be ambiguous.")
    sign = api.apply_ufunc("signbit", t)
    return api.apply_ufunc("logical_and", api.apply_ufunc("isinf", t),
                           sign if negative else api.apply_ufunc("logical_not", sign))


def diagflat(v: Any, k: int = 0) -> Tracer:
    """[HUNT3] The flattened input on the k-th diagonal."""
    return diag(api.ravel(traced(v, (v,))), k)


def sinc(x: Any) -> Tracer:
    """[HUNT3] NumPy's own formula: sin(y) / y, y = pi * x, a 0 replaced by the dtype's eps
    (1e-20 for complex) [FIX16] (1e-20 before pi, in float16 a 0: sinc(0) was NaN)."""
    t = api.apply_ufunc("multiply", np.pi, traced(x, (x,)))
    eps = np.finfo(t.dtype).eps if t.dtype.kind == "f" else 1.0e-20
    y = api.where(api.apply_ufunc("not_equal", t, 0), t, eps)
    return api.apply_ufunc("true_divide", api.apply_ufunc("sin", y), y)


def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Tracer, ...]:
    """[HUNT3] Every argument broadcast to their common shape: the arguments themselves when
    all have it (as NumPy), else broadcast views (read-only: NumPy's are writeable with a
    FutureWarning that they will not be; writing into one raises here)."""
    ts = [traced(a, args) for a in args]
    shape = api.broadcast_shapes(*(tuple(t.shape) for t in ts))
    if builtins.all(tuple(t.shape) == shape for t in ts):
        return tuple(ts)
    return tuple(api.broadcast_to(t, shape) for t in ts)


def diag(v: Any, k: int = 0) -> Tracer:
    x = traced(v, (v,))
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0] + builtins.abs(k)
    zero = np.zeros(builtins.abs(k), x.dtype)
    line = api.concatenate([zero, x] if k > 0 else [x, zero]) if k else x
    return api.where(np.eye(n, k=k, dtype=bool), api.reshape(line, (1, n)),
                     np.zeros(1, x.dtype)[0])


# ---- padding ----

def _pairs(value: Any, ndim: int, what: str) -> list[tuple[Any, Any]]:
    arr = np.asarray(value)
    if arr.ndim > 2 or arr.size == 0:
        raise ValueError(f"{what} must be a scalar, a pair or one pair per axis")
    return [tuple(p) for p in np.broadcast_to(arr, (ndim, 2)).tolist()]


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Tracer:
    """np.pad's constant, edge, reflect, symmetric, wrap, linear_ramp, maximum, minimum, mean
    and median modes, axis by axis as NumPy does (later axes fill the corners)."""
    x = traced(array, (array,))
    if isinstance(pad_width, Tracer) and pad_width.concrete is not None:
        pad_width = pad_width.python_value()  # [HUNT3] from scalar arguments (`w // 2`)
    if isinstance(pad_width, Tracer) or callable(mode):
        raise unsupported("np.pad with a traced pad_width or a callable mode")
    widths = np.round(np.asarray(pad_width)).astype(np.intp)
    if widths.size and widths.min() < 0:
        raise ValueError("index can't contain negative values")
    pairs = _pairs(widths, x.ndim, "pad_width")
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "linear_ramp": {"end_values"},  # [HUNT2]
               **{stat: set() for stat in _PAD_STATS}}  # [HUNT] (stat_length is not)
    if mode not in allowed or set(kwargs) - allowed[mode]:
        raise unsupported(f"np.pad with mode={mode!r} and {', '.join(kwargs) or 'no options'}")
    values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values") \
        if mode == "constant" else []
    if mode == "linear_ramp":  # NumPy's own pairs: NumPy or Python scalars (their dtype rule)
        if x.dtype.kind not in "iuf" or isinstance(kwargs.get("end_values"), Tracer):
            raise unsupported("np.pad with mode='linear_ramp' of a non-numeric array or "
                              "traced end_values")
        values = np.lib._arraypad_impl._as_pairs(kwargs.get("end_values", 0), x.ndim)
    for ax, (before, after) in enumerate(pairs):
        n = x.shape[ax]
        if before == after == 0:
            continue
        if mode != "constant" and n == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' "
                             "or 'empty'")
        if mode == "linear_ramp":
            x = api.concatenate([_linear_ramp(x, ax, before, values[ax][0], 0), x,
                                 _linear_ramp(x, ax, after, values[ax][1], 1)], axis=ax)
            continue
        if mode in _PAD_STATS:  # [HUNT] the statistic of the whole axis, NumPy's rounding
            stat = _PAD_STATS[mode](x, axis=ax, keepdims=True)
            if x.dtype.kind in "iu" and stat.dtype.kind == "f":
                stat = api.apply_ufunc("rint", stat)
            parts = [api.broadcast_to(api.astype(stat, x.dtype, copy=False), tuple(
                w if d == ax else s for d, s in enumerate(x.shape))) for w in (before, after)]
            x = api.concatenate([parts[0], x, parts[1]], axis=ax)
            continue
        if mode in ("reflect", "symmetric") and n > 1:
            x = _pad_reflect(x, ax, before, after, mode == "symmetric",
                           kwargs.get("reflect_type", "even") == "odd")
            continue
        if mode in ("reflect", "symmetric") or mode != "constant" and \
                builtins.max(before, after) > n:
            # [HUNT] wider than one period (or a reflection of one element, which NumPy pads
            # with the edge): NumPy's own np.pad of the positions
            order = np.pad(np.arange(n), (before, after), mode=mode)
            x = api.take(x, order, axis=ax)
            continue
        parts = []
        for width, side in ((before, 0), (after, 1)):
            if width == 0:
                part = _slice_along(x, ax, slice(0, 0))
            elif mode == "constant":
                shape = tuple(width if d == ax else s for d, s in enumerate(x.shape))
                edge: Any = values[ax][side]
                if isinstance(edge, Tracer):
                    raise unsupported("np.pad with traced constant_values")
                part = api.wrap(x.builder, api.broadcast_value(
                    x.builder, api.to_value(x.builder, np.asarray(edge).astype(x.dtype)), shape))
            elif mode == "edge":
                one = _slice_along(x, ax, slice(0, 1) if side == 0 else slice(n - 1, n))
                part = api.broadcast_to(one, tuple(width if d == ax else s
                                                   for d, s in enumerate(x.shape)))
            else:
                assert mode == "wrap"
                part = _slice_along(x, ax, slice(n - width, n) if side == 0 else slice(0, width))
            parts.append(part)
        x = api.concatenate([parts[0], x, parts[1]], axis=ax)
    return api.copy_(x) if x is array else x


def _pad_reflect(x: Tracer, ax: int, left: int, right: int, edge: bool, odd: bool) -> Tracer:
    """[FIX16] np.pad's reflect (`edge`: symmetric) modes along `ax`, as NumPy's
    `_set_reflect_both` loop: chunks of at most a whole number of periods reflected from the
    part filled so far, both sides per round; `odd`: each chunk is `2 * edge - chunk` in
    NumPy's dtypes, stored back into x's dtype (NumPy's assignment casts)."""
    period = x.shape[ax]
    while left > 0 or right > 0:
        cur = x.shape[ax]
        old = cur // period * period if edge else (cur - 1) // (period - 1) * (period - 1)
        parts = [x]
        for side, width in ((0, left), (1, right)):
            if width == 0:
                continue
            k = builtins.min(old, width)
            # the k elements next to the edge (or from it), nearest first
            part = _slice_along(x, ax, slice(k - edge, None if edge else 0, -1) if side == 0
                                else slice(cur - 1 - (not edge), cur - 1 - (not edge) - k, -1)
                                if cur - 1 - (not edge) - k >= 0 else
                                slice(cur - 1 - (not edge), None, -1))
            if odd:
                at = _slice_along(x, ax, slice(0, 1) if side == 0 else slice(cur - 1, cur))
                part = api.astype(api.apply_ufunc("subtract", api.apply_ufunc(
                    "multiply", 2, at), part), x.dtype, copy=False)
            parts.insert(0 if side == 0 else len(parts), part)
            left, right = (left - k, right) if side == 0 else (left, right - k)
        x = api.concatenate(parts, axis=ax)
    return x


def _linear_ramp(x: Tracer, ax: int, width: int, end: Any, side: int) -> Tracer:
    """[HUNT2] np.pad's linear ramp: NumPy's `np.linspace(end, edge, width, endpoint=False)`
    along `ax` (its dtype rule, its `any(step == 0)` choice between two roundings made on
    the data, floor for integers), reversed after the array."""
    n = x.shape[ax]
    edge = _slice_along(x, ax, slice(0, 1) if side == 0 else slice(n - 1, n))
    dt = np.linspace(end, np.zeros(1, x.dtype), 1, endpoint=False).dtype
    start = np.asarray(end).astype(dt)[()]
    shape = tuple(width if d == ax else 1 for d in range(x.ndim))
    i = np.arange(width, dtype=dt)[::1 if side == 0 else -1].reshape(shape)
    delta = api.astype(edge, dt) - start
    step = delta / dt.type(width)
    y = api.where(api.any(step == 0), i / dt.type(width) * delta, i * step) + start
    return api.astype(api.apply_ufunc("floor", y) if x.dtype.kind in "iu" else y, x.dtype)


_PAD_STATS: dict[str, Callable[..., Tracer]] = {
    "maximum": lambda x, **kw: api.max(x, **kw), "minimum": lambda x, **kw: api.min(x, **kw),
    "mean": lambda x, **kw: api.mean(x, **kw),
    "median": lambda x, **kw: median(x, axis=kw["axis"], keepdims=kw["keepdims"])}


# ---- triangles, tiling, repetition ----

def _tri_mask(x: Tracer, k: int, lower: bool) -> Tracer:
    """Where column - row <= k (lower) or >= k: a comparison of two aranges, which lower as
    their loop indices [PERF9] (np.tri's n x m constant was a bool array read per element)."""
    n, m = x.shape[-2:]
    rows, cols = traced(np.arange(n), (x,))[:, None], traced(np.arange(m), (x,))[None, :]
    diagonal = rows + operator.index(k)
    return cols <= diagonal if lower else cols >= diagonal


def tril(m: Any, k: int = 0) -> Tracer:
    x = traced(m, (m,))
    if x.ndim < 2:
        raise unsupported("np.tril of a 1-d array")
    return api.where(_tri_mask(x, k, True), x, np.zeros(1, x.dtype)[0])


def triu(m: Any, k: int = 0) -> Tracer:
    x = traced(m, (m,))
    if x.ndim < 2:
        raise unsupported("np.triu of a 1-d array")
    return api.where(_tri_mask(x, k, False), x, np.zeros(1, x.dtype)[0])


def tile(A: Any, reps: Any) -> Tracer:
    x = traced(A, (A,))
    reps = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else \
        tuple(operator.index(r) for r in reps)
    ndim = builtins.max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    x = api.reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))
    # (r0, n0, r1, n1, ...) broadcast, then merged pairwise
    shape = tuple(x.shape)
    spread = api.reshape(x, tuple(s for n in shape for s in (1, n)))
    full = api.broadcast_to(spread, tuple(s for r, n in zip(reps, shape, strict=True)
                                          for s in (r, n)))
    return api.copy_(api.reshape(full, tuple(r * n for r, n in zip(reps, shape, strict=True))))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Tracer:
    if isinstance(repeats, (list, tuple, np.ndarray)):  # [HUNT] counts known while tracing
        return _repeat_each(a, repeats, axis)
    if not isinstance(repeats, (int, np.integer)) and not (
            isinstance(repeats, Tracer) and repeats.ndim == 0):  # [B16] a traced Python int
        raise unsupported("np.repeat with an array of repeats")
    r = operator.index(repeats)
    if r < 0:
        raise ValueError("negative dimensions are not allowed")
    x = traced(a, (a,))
    if axis is None:
        x, ax = api.ravel(x), 0
    else:
        ax = _axis(axis, x.ndim)
    shape = tuple(x.shape)
    spread = api.expand_dims(x, ax + 1)
    full = api.broadcast_to(spread, shape[:ax + 1] + (r,) + shape[ax + 1:])
    return api.copy_(api.reshape(full, shape[:ax] + (shape[ax] * r,) + shape[ax + 1:]))


def _repeat_each(a: Any, repeats: Any, axis: Any) -> Tracer:
    """np.repeat with one count per element (a list or array known while tracing): a gather
    of the positions NumPy's own np.repeat of an arange gives (so its errors and order)."""
    x = traced(a, (a,))
    if axis is None:
        x, ax = api.ravel(x), 0
    else:
        ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    if not isinstance(n, int) or builtins.any(isinstance(r, Tracer) for r in np.ravel(
            np.asarray(repeats, dtype=object))):
        raise unsupported("np.repeat with traced repeats or a symbolic length")
    return api.take(x, np.repeat(np.arange(n), repeats), axis=ax)


# ---- joining ----

def _atleast(x: Any, ndim: int, like: Sequence[Any]) -> Tracer:
    t = traced(x, like)
    if t.ndim >= ndim:
        return t
    if ndim == 3 and t.ndim == 2:
        return api.reshape(t, tuple(t.shape) + (1,))
    if ndim == 3 and t.ndim == 1:
        return api.reshape(t, (1, t.shape[0], 1))
    return api.reshape(t, (1,) * (ndim - t.ndim) + tuple(t.shape))


def atleast_1d(*arys: Any) -> Any:
    out = [_atleast(a, 1, arys) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*arys: Any) -> Any:
    out = [_atleast(a, 2, arys) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*arys: Any) -> Any:
    out = [_atleast(a, 3, arys) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def _join_kw(kw: dict[str, Any]) -> dict[str, Any]:
    if set(kw) - {"dtype", "casting"} or kw.get("casting", "same_kind") != "same_kind":
        raise unsupported("joining with casting= or out=")
    return {"dtype": kw["dtype"]} if kw.get("dtype") is not None else {}


def vstack(tup: Sequence[Any], **kw: Any) -> Tracer:
    return api.concatenate([_atleast(a, 2, tup) for a in tup], axis=0, **_join_kw(kw))


def hstack(tup: Sequence[Any], **kw: Any) -> Tracer:
    arrs = [_atleast(a, 1, tup) for a in tup]
    return api.concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, **_join_kw(kw))


def dstack(tup: Sequence[Any]) -> Tracer:
    return api.concatenate([_atleast(a, 3, tup) for a in tup], axis=2)


def column_stack(tup: Sequence[Any]) -> Tracer:
    arrs = []
    for a in tup:
        t = traced(a, tup)
        arrs.append(api.reshape(t, (t.size, 1)) if t.ndim < 2 else t)
    return api.concatenate(arrs, axis=1)


# ---- products ----

def ufunc_outer(ufunc: np.ufunc, a: Any, b: Any, **kwargs: Any) -> Tracer:
    if kwargs or ufunc.__name__ not in api.UFUNCS or ufunc.nin != 2:
        raise unsupported(f"np.{ufunc.__name__}.outer")
    x, y = traced(a, (a, b)), traced(b, (a, b))
    return api.apply_ufunc(ufunc.__name__, api.reshape(x, tuple(x.shape) + (1,) * y.ndim), y)


def outer(a: Any, b: Any, out: Any = None) -> Tracer:
    if out is not None:
        raise unsupported("np.outer with out=")
    x, y = api.ravel(traced(a, (a, b))), api.ravel(traced(b, (a, b)))
    return api.apply_ufunc("multiply", api.reshape(x, (x.size, 1)), api.reshape(y, (1, y.size)))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tracer:
    """NumPy's algorithm: move the summed axes together, reshape to 2-d, one matmul."""
    x, y = traced(a, (a, b)), traced(b, (a, b))
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        axes_a, axes_b = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        axes_a, axes_b = ([ax] if isinstance(ax, (int, np.integer)) else list(ax)
                          for ax in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [_axis(ax, x.ndim) for ax in axes_a]
    axes_b = [_axis(ax, y.ndim) for ax in axes_b]
    for i, j in zip(axes_a, axes_b, strict=True):
        if x.shape[i] != y.shape[j]:
            raise ValueError("shape-mismatch for sum")
    free_a = [d for d in range(x.ndim) if d not in axes_a]
    free_b = [d for d in range(y.ndim) if d not in axes_b]
    def size(t: Tracer, dims: list[int]) -> int:
        return int(np.prod([t.shape[d] for d in dims], dtype=np.int64))

    k = size(x, axes_a)
    xa = api.reshape(api.transpose(x, free_a + axes_a), (size(x, free_a), k))
    yb = api.reshape(api.transpose(y, axes_b + free_b), (k, size(y, free_b)))
    out_shape = tuple(x.shape[d] for d in free_a) + tuple(y.shape[d] for d in free_b)
    return api.reshape(api.dot(xa, yb), out_shape)


def einsum(*operands: Any, **kwargs: Any) -> Tracer:
    """Explicit or implicit subscripts without ellipsis: each operand is laid out over all
    letters, the product taken elementwise and the summed letters reduced (one fused loop
    nest). Repeated letters within an operand take its diagonal."""
    if set(kwargs) - {"optimize", "_derived"}:
        raise unsupported("np.einsum with out=, dtype= or casting=")
    if operands and not isinstance(operands[0], str):
        operands = _einsum_interleaved(operands)
    spec, arrays = operands[0].replace(" ", ""), operands[1:]
    if "..." in spec:
        spec = _einsum_ellipsis(spec, arrays)
    if "." in spec:
        raise ValueError("einstein sum subscripts string contains a '.' that is not part of "
                         "an ellipsis ('...')")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(arrays):
        raise ValueError("more operands provided to einstein sum function than specified "
                         "in the subscripts string" if len(arrays) > len(terms) else
                         "fewer operands provided to einstein sum function than specified "
                         "in the subscripts string")
    if "->" not in spec:
        counts = {c: inputs.count(c) for c in inputs if c != ","}
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    letters = sorted({c for t in terms for c in t} - set(output))
    order = list(output) + letters  # the combined index space
    dtype = np.result_type(*(t.dtype if isinstance(t, Tracer) else np.asarray(t).dtype
                             for t in arrays))
    sizes: dict[str, int] = {}
    laid = []
    for term, arr in zip(terms, arrays, strict=True):
        x = traced(arr, arrays)
        if len(term) != x.ndim:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {len(laid)}")
        own: dict[str, int] = {}  # [HUNT4] a letter's size-1 dimension broadcasts, as
        for c, n in zip(term, x.shape, strict=True):  # NumPy's, across operands only
            if own.setdefault(c, n) != n:
                raise ValueError(f"dimensions in single operand for collapsing index {c!r} "
                                 f"don't match ({own[c]} != {n})")
            if sizes.get(c, 1) == 1:  # unseen, or seen as 1: n (0 too) wins
                sizes[c] = n
            elif n != 1 and sizes[c] != n:
                raise ValueError(f"operands could not be broadcast together: subscript {c!r} "
                                 f"has size {sizes[c]} and {n} (operand {len(laid)})")
        x, term = _einsum_diagonal(x, term)
        perm = sorted(range(len(term)), key=lambda d: order.index(term[d]))
        x = api.transpose(x, perm)
        present = [term[d] for d in perm]
        shape = tuple(x.shape[present.index(c)] if c in present else 1 for c in order)
        laid.append(api.astype(api.reshape(x, shape), dtype, copy=False))
    product = laid[0]
    for x in laid[1:]:
        product = api.apply_ufunc("multiply", product, x)
    full = tuple(sizes[c] for c in order)
    product = api.broadcast_to(product, full) if tuple(product.shape) != full else product
    if not letters:
        if len(arrays) == 1 and isinstance(arrays[0], Tracer) and not kwargs.get("_derived"):
            return derived_view(  # [HUNT3] NumPy returns a view of the one operand
                arrays[0], lambda v: einsum(operands[0], v, _derived=True), writeable=True,
                numpy=lambda a: np.einsum(operands[0], a), result=api.copy_(product))
        return api.copy_(product)
    return api.sum(product, axis=tuple(range(len(output), len(order))), dtype=dtype)


def _einsum_interleaved(operands: Sequence[Any]) -> tuple[Any, ...]:
    """[HUNT] np.einsum(a, [0, 1], b, [1, 2], [0, 2]): the subscripts string NumPy builds
    from the sublists (0-25 as A-Z, 26-51 as a-z, Ellipsis as ...), then the operands."""
    def letters(sublist: Any) -> str:
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
                continue
            k = operator.index(s)
            if not 0 <= k < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            out.append(chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
        return "".join(out)
    arrays, subs = operands[0:-1:2] if len(operands) % 2 else operands[0::2], operands[1::2]
    spec = ",".join(letters(s) for s in subs)
    if len(operands) % 2:
        spec += "->" + letters(operands[-1])
    return (spec, *arrays)


def _einsum_ellipsis(spec: str, arrays: Sequence[Any]) -> str:
    """[H16] `...` spelled with letters the subscripts do not use: each operand's ellipsis
    covers its trailing unnamed dimensions, right-aligned as in broadcasting; without `->`
    the output is the ellipsis, then the letters used once (NumPy's implicit mode)."""
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    # (operand counts are checked by einsum itself)
    widths = {k: np.ndim(a) - len(t) + 3 for k, (t, a) in enumerate(zip(terms, arrays,
                                                                         strict=False))
              if "..." in t}
    if builtins.any(w < 0 for w in widths.values()):
        raise ValueError("einstein sum subscripts string contains too many subscripts for an "
                         "operand")
    ell = "".join(free[:builtins.max(widths.values(), default=0)])
    spelled = [t.replace("...", ell[len(ell) - widths[k]:]) if k in widths else t
               for k, t in enumerate(terms)]
    if arrow and ell and "..." not in output:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                         "but no '...' ellipsis provided to broadcast the extra dimensions.")
    if not arrow:
        joined = "".join(spelled)
        output = ell + "".join(sorted(c for c in set(joined) - set(ell)
                                      if joined.count(c) == 1))
    return ",".join(spelled) + "->" + output.replace("...", ell)


def _einsum_diagonal(x: Tracer, term: str) -> tuple[Tracer, str]:
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i, j = term.index(c), term.index(c, term.index(c) + 1)
        n = builtins.min(x.shape[i], x.shape[j])
        index: list[Any] = [slice(None)] * x.ndim
        index[i] = index[j] = np.arange(n)
        x = x[tuple(index)]  # NumPy puts the diagonal axis at i (adjacent) or first
        adjacent = j == i + 1
        rest = [term[d] for d in range(len(term)) if d not in (i, j)]
        term = "".join(rest[:i] + [c] + rest[i:]) if adjacent else c + "".join(rest)
    return x, term


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Tracer:
    """[H16] NumPy's windows as gathers, one windowed axis at a time (its window dimension
    appended last; a repeated axis windows the windows); read-only, as NumPy's view."""
    if writeable:
        raise unsupported("sliding_window_view with writeable=True")
    t = traced(x, (x,))
    windows = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if builtins.any(w < 0 for w in windows):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(windows) != t.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(windows)} window_shape elements "
                             f"and `x.ndim` is {t.ndim}.")
        axes: tuple[int, ...] = tuple(range(t.ndim))
    else:
        axes = tuple(_axis(a, t.ndim) for a in (axis if np.iterable(axis) else (axis,)))
        if len(axes) != len(windows):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(windows)} window_shape elements and {len(axes)} axes "
                             "elements.")
    def derive(v: Tracer) -> Tracer:
        for ax, w in zip(axes, windows, strict=True):
            n = v.shape[ax]
            if n < w:
                raise ValueError("window shape cannot be larger than input array shape")
            starts = np.arange(n - w + 1)[:, None] + np.arange(w)[None, :]
            v = api.moveaxis(api.take(v, starts, axis=ax), ax + 1, -1)
        return v
    return derived_view(  # [HUNT3] x written later shows through
        t, derive, writeable=False,
        numpy=lambda a: np.lib.stride_tricks.sliding_window_view(a, window_shape, axis))


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """[H16] NumPy's algorithm: views between division points along the axis."""
    t = traced(ary, (ary,))
    ax = _axis(axis, t.ndim)
    total = t.shape[ax]
    if np.ndim(indices_or_sections):  # division points (a scalar argument: sections)
        points = [0, *(operator.index(i) for i in np.asarray(indices_or_sections).tolist()),
                  total]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = [builtins.sum(sizes[:k + 1]) for k in range(len(sizes))]
    return [_slice_along(t, ax, slice(points[k], points[k + 1]))
            for k in range(len(points) - 1)]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    if not np.ndim(indices_or_sections):
        t = traced(ary, (ary,))
        sections = operator.index(indices_or_sections)
        if sections and t.shape[_axis(axis, t.ndim)] % sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def _split_along(name: str, min_ndim: int, axis: Callable[[int], int]) -> Callable[..., Any]:
    """np.hsplit / np.vsplit / np.dsplit: np.split along a fixed axis."""
    def call(ary: Any, indices_or_sections: Any) -> list[Tracer]:
        ndim = traced(ary, (ary,)).ndim
        if ndim < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        return split(ary, indices_or_sections, axis(ndim))
    return call


# ---- reductions ----

def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """[H16] NumPy's peak to peak: maximum minus minimum, in the array's dtype (wrapping)."""
    if out is not None:
        raise unsupported("np.ptp with out=")
    return api.apply_ufunc("subtract", api.max(a, axis, keepdims=keepdims),
                           api.min(a, axis, keepdims=keepdims))


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Tracer:
    x = traced(a, (a,))
    nonzero = x if x.dtype == np.bool_ else api.apply_ufunc("not_equal", x, 0)
    return api.sum(nonzero, axis=axis, dtype=np.intp, keepdims=keepdims)


def _nan_kw(name: str, kw: dict[str, Any]) -> None:
    """Only defaults are traced; any other option (out=, where=, mean=, ...) is a break."""
    for key, value in kw.items():
        default = True if key == "where" else None
        if key not in ("out", "where", "initial") or (
                value is not default and value is not np._NoValue):
            raise unsupported(f"np.{name} with {key}=")


def _nan_filled(x: Tracer, fill: float) -> Tracer:
    return api.where(api.apply_ufunc("isnan", x), fill, x)


def _nan_reduced(name: str, reduce: Callable[..., Tracer], fill: float) -> Callable[..., Tracer]:
    """np.nansum / nanprod (a reduction) and np.nancumsum / nancumprod (a scan): `reduce` of
    `a` with NaNs (of floats and [HUNT5] complex numbers, NumPy's inexact types) as `fill`."""
    def run(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **kw: Any
            ) -> Tracer:
        options = {"keepdims": kw.pop("keepdims")} if "keepdims" in kw else {}
        _nan_kw(name, {"out": out, **kw})
        x = traced(a, (a,))
        if x.dtype.kind in "fc":
            x = _nan_filled(x, fill)
        return reduce(x, axis=axis, dtype=dtype, **options)
    return run


nansum = _nan_reduced("nansum", api.sum, 0.0)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kw: Any) -> Tracer:
    _nan_kw("nanmean", {"out": out, **kw})
    x = traced(a, (a,))
    if x.dtype.kind not in "fc":  # [HUNT5] NaNs of complex numbers are skipped too
        return api.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    valid = api.apply_ufunc("logical_not", api.apply_ufunc("isnan", x))
    count = api.sum(valid, axis=axis, dtype=np.intp, keepdims=keepdims)
    total = api.sum(_nan_filled(x, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)
    # NumPy divides into the sum's own array (casting='unsafe'); all-NaN slices give NaN and
    # NumPy's warning (no period) [FIX16]
    return api.counted(api.astype(api.apply_ufunc("true_divide", total, count), total.dtype,
                                  copy=False), count, 0, "Mean of empty slice")


def _nan_extreme(fn: str, a: Any, axis: Any, out: Any, keepdims: bool, kw: dict[str, Any]
                 ) -> Tracer:
    _nan_kw(f"nan{fn}", {"out": out, **kw})
    x = traced(a, (a,))
    if x.dtype.kind != "f":
        return api._reduce(fn, x, axis, None, None, keepdims)
    fill = -np.inf if fn == "max" else np.inf
    best = api._reduce(fn, _nan_filled(x, fill), axis, None, None, keepdims)
    all_nan = api.all(api.apply_ufunc("isnan", x), axis=axis, keepdims=keepdims)
    return api.where(all_nan, np.asarray(np.nan, x.dtype)[()], best)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Tracer:
    return _nan_extreme("max", a, axis, out, keepdims, kw)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Tracer:
    return _nan_extreme("min", a, axis, out, keepdims, kw)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, **kw: Any) -> Tracer:
    _nan_kw("nanvar", {"out": out, **kw})
    x = traced(a, (a,))
    if x.dtype.kind not in "fc":  # [HUNT5] NaNs of complex numbers are skipped too
        return api.var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    valid = api.apply_ufunc("logical_not", api.apply_ufunc("isnan", x))
    count = api.sum(valid, axis=axis, dtype=np.intp, keepdims=True)
    total = api.sum(_nan_filled(x, 0.0), axis=axis, dtype=dtype, keepdims=True)
    avg = api.astype(api.apply_ufunc("true_divide", total, count), total.dtype, copy=False)
    # zero where x is NaN (NumPy's _copyto(arr, 0, mask)): a NaN the subtraction makes
    # (inf - inf) stays, as in NumPy
    dev = api.where(valid, api.apply_ufunc("subtract", x, avg), 0.0)
    squares = api.apply_ufunc("multiply", dev, api.apply_ufunc("conjugate", dev))
    if squares.dtype.kind == "c":  # NumPy's (dev * dev.conj()).real
        squares = api.real(squares)
    sq = api.sum(squares, axis=axis, dtype=dtype, keepdims=keepdims)
    dof = api.apply_ufunc("subtract", count if keepdims else api.squeeze(
        count, axis=api.normalize_axes(axis, x.ndim)), ddof)
    var = api.astype(api.apply_ufunc("true_divide", sq, dof), sq.dtype, copy=False)
    return api.counted(api.where(api.apply_ufunc("less_equal", dof, 0), np.asarray(
        np.nan, sq.dtype)[()], var), dof, 0, "Degrees of freedom <= 0 for slice.")  # [FIX16]


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, **kw: Any) -> Tracer:
    return api.apply_ufunc("sqrt", nanvar(a, axis, dtype, out, ddof, keepdims, **kw))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    x = traced(a, (a, weights))
    if weights is None:
        avg = api.mean(x, axis=axis, keepdims=keepdims)
        scl = x.size / avg.size if avg.size else 0
        return (avg, api.astype(api.full_like(avg, scl), avg.dtype)) if returned else avg
    w = traced(weights, (a, weights))
    result_dtype = np.result_type(x.dtype, w.dtype, np.float64 if x.dtype.kind in "biu"
                                  else x.dtype)
    if tuple(w.shape) != tuple(x.shape):
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = _axis(axis, x.ndim)
        if w.shape[0] != x.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = api.reshape(w, tuple(x.shape[ax] if d == ax else 1 for d in range(x.ndim)))
        w = api.broadcast_to(w, tuple(x.shape))
    scl = api.sum(w, axis=axis, dtype=result_dtype, keepdims=keepdims)
    # [HUNT] NumPy's check of the weights' sums, at run time (was a graph break)
    scl = _extern("np.average's weights", _normalizable, (scl,), tuple(scl.shape), scl.dtype)
    total = api.sum(api.apply_ufunc("multiply", x, w), axis=axis, dtype=result_dtype,
                    keepdims=keepdims)
    avg = api.apply_ufunc("true_divide", total, scl)
    return (avg, api.broadcast_to(scl, tuple(avg.shape))) if returned else avg


def _normalizable(scl: np.ndarray) -> np.ndarray:
    """The weights' sums, or NumPy's ZeroDivisionError where one is 0."""
    if np.any(scl == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return scl


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Tracer:
    x = traced(m, (m, y))
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    res = np.dtype(dtype) if dtype is not None else np.result_type(
        x.dtype, np.float64, *(() if y is None else (np.asarray(y).dtype if not isinstance(
            y, Tracer) else y.dtype,)))

    def rows(v: Tracer, transpose: bool) -> Tracer:  # NumPy: ndmin=2, one variable per row
        v = api.astype(api.reshape(v, (1, -1)) if v.ndim < 2 else v, res, copy=False)
        return api.transpose(v) if transpose else v

    # [HUNT3] NumPy transposes m unless it is 1-d (a (1, n) m with rowvar=False is n
    # variables), y unless it has one row
    x = rows(x, not rowvar and x.ndim != 1)
    if y is not None:  # [H16] the variables of y follow those of m
        ty = traced(y, (m, y))
        if ty.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        x = api.concatenate([x, rows(ty, not rowvar and ty.ndim == 2 and ty.shape[0] != 1)],
                            axis=0)
    if x.shape[0] == 0:
        raise unsupported("np.cov of no variables")
    ddof = (0 if bias else 1) if ddof is None else operator.index(ddof)
    fw, aw = (None if v is None else _cov_weights(v, name, x, (m, y, fweights, aweights))
              for v, name in ((fweights, "fweights"), (aweights, "aweights")))
    w = fw if aw is None else aw if fw is None else api.apply_ufunc("multiply", fw, aw)
    if w is None:
        avg, fact = api.mean(x, axis=1, keepdims=True), x.shape[1] - ddof
    else:  # [FIX16] NumPy's weighted mean and normalization (its Python sum: in order)
        avg, scl = average(x, axis=1, weights=w, returned=True)
        avg, w_sum = api.reshape(avg, (-1, 1)), scl[0]
        fact = w_sum if ddof == 0 else api.apply_ufunc("subtract", w_sum, ddof) if aw is None \
            else w_sum - ddof * api.cumsum(api.apply_ufunc("multiply", w, aw))[-1] / w_sum
    # NumPy subtracts in place (X's dtype) [HUNT] X @ X.T.conj(), as NumPy (the conjugate was
    # missing: complex covariances wrong)
    centered = api.astype(api.apply_ufunc("subtract", x, avg), x.dtype, copy=False)
    other = centered if w is None else api.apply_ufunc("multiply", centered, w)
    other = api.apply_ufunc("conjugate", other) if other.dtype.kind == "c" else other
    c = api.matmul(centered, api.transpose(other))
    # [FIX16] where the freedom is <= 0, NumPy's RuntimeWarning and a factor of 1 / 0.0
    scale = (1 / fact if fact > 0 else np.inf) if isinstance(fact, int) else api.apply_ufunc(
        "true_divide", 1, api.where(api.apply_ufunc("less_equal", fact, 0), 0.0, fact))
    c = api.astype(api.apply_ufunc("multiply", c, scale), c.dtype, copy=False)
    return api.counted(api.squeeze(c), fact, 0, api.NO_FREEDOM)


def _cov_weights(v: Any, name: str, x: Tracer, like: Sequence[Any]) -> Tracer:
    """[FIX16] np.cov's weights as float64, with NumPy's checks: shapes now, values (integral
    frequencies, no negative weight) at run time."""
    t = api.astype(traced(v, like), np.float64, copy=False)
    if t.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if t.shape[0] != x.shape[1]:
        raise RuntimeError(f"incompatible numbers of samples and {name}")

    def valid(w: np.ndarray) -> np.ndarray:
        if name == "fweights" and not np.all(w == np.around(w)):
            raise TypeError("fweights must be integer")
        if np.any(w < 0):
            raise ValueError(f"{name} cannot be negative")
        return w
    return _extern(f"np.cov's {name}", valid, (t,), tuple(t.shape), t.dtype)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tracer:
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return api.apply_ufunc("true_divide", c, c)
    n = c.shape[0]
    stddev = api.apply_ufunc("sqrt", c[np.arange(n), np.arange(n)])
    c = api.apply_ufunc("true_divide", c, api.reshape(stddev, (n, 1)))
    c = api.apply_ufunc("true_divide", c, api.reshape(stddev, (1, n)))
    return api.clip(c, -1, 1)


# ---- comparisons and selection ----

def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tracer:
    """NumPy's formula: (|x - y| <= atol + rtol * |y|) & isfinite(y) | (x == y), y as float."""
    x, y = traced(a, (a, b)), traced(b, (a, b))
    y = api.astype(y, np.result_type(y.dtype, 1.0), copy=False)
    u = api.apply_ufunc
    close = u("less_equal", u("absolute", u("subtract", x, y)),
              u("add", atol, u("multiply", rtol, u("absolute", y))))
    result = u("logical_or", u("logical_and", close, u("isfinite", y)), u("equal", x, y))
    if equal_nan:
        both = api.apply_ufunc("logical_and", api.apply_ufunc("isnan", x),
                               api.apply_ufunc("isnan", y))
        result = api.apply_ufunc("logical_or", result, both)
    return result


def _python_bool(t: Tracer) -> Tracer:
    """[HUNT7] NumPy's Python bool of the 0-d `t`, traced: a weak bool (returned as a Python
    bool, `isinstance(., bool)`); its value is needed only where Python branches on it (a graph
    break there). It was needed at once: `return np.allclose(a, b), ...` broke the graph."""
    return Tracer(t.builder, t.value, weak=True)


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Tracer:
    """A Python bool, as in NumPy (`_python_bool`)."""
    return _python_bool(api.all(isclose(a, b, rtol, atol, equal_nan)))


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi
           ) -> Tracer:
    """[FIX16] NumPy's np.unwrap step by step: differences folded into [-period/2,
    period/2) (NumPy's integer and boundary rules), corrections where |dd| >= discont,
    accumulated along `axis` and added after the first element, in `result_type(dd, period)`.
    `discont` and `period` are Python or NumPy scalars (known while tracing)."""
    x = traced(p, (p,))
    if isinstance(discont, Tracer) or isinstance(period, Tracer):
        raise unsupported("np.unwrap with a traced discont or period")
    dd = diff(x, axis=axis)  # (NumPy's errors: first the diff's)
    ax = _axis(axis, x.ndim)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(api._weak_for_result_type(dd), period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    interval_low = -interval_high
    ddmod = (dd - interval_low) % period + interval_low
    if boundary_ambiguous:  # NumPy's copyto(ddmod, interval_high, where=...)
        ddmod = api.where((ddmod == interval_low) & (dd > 0),
                          api.astype(traced(interval_high, (x,)), ddmod.dtype), ddmod)
    correction = ddmod - dd
    correction = api.where(api.apply_ufunc("absolute", dd) < discont,
                           api.zeros_like(correction), correction)
    first = _slice_along(x, ax, slice(0, 1))
    rest = _slice_along(x, ax, slice(1, None)) + api.cumsum(correction, axis=ax)
    return api.concatenate([api.astype(first, dtype), api.astype(rest, dtype)], axis=ax)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any
              ) -> Tracer:
    """[FIX16] NumPy's np.piecewise as NumPy writes it: zeros like x; each condition's
    elements set to its constant, or to its function of x[cond] (a data-dependent selection,
    compiled; the function is traced) when any is selected (a guard on the selection's size:
    a call where it differs runs in NumPy); one function more than conditions: the others'
    complement."""
    t = traced(x, (x, condlist))
    if np.isscalar(condlist) or isinstance(condlist, Tracer) and not condlist.is_array or (
            isinstance(condlist, (Tracer, np.ndarray)) and condlist.ndim == 1 and t.ndim != 0
            or isinstance(condlist, (list, tuple)) and not isinstance(
                condlist[0], (list, np.ndarray, Tracer)) and t.ndim != 0):
        condlist = [condlist]
    conds = [api.astype(traced(c, (x, condlist)), np.bool_, copy=False) for c in condlist]
    n, n2 = len(conds), len(funclist)
    if n == n2 - 1:
        conds.append(api.apply_ufunc("logical_not", api.any(api.stack(conds), axis=0)))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    if t.ndim == 0:  # [HUNT9] NumPy's x[cond] of a 0-d x is 1-d: the same on one element
        one = piecewise(api.reshape(t, (1,)), [api.reshape(c, (1,)) for c in conds], funclist,
                        *args, **kw)
        return _array0(api.reshape(one, ()))
    y = api.zeros_like(t)
    for cond, func in zip(conds, funclist, strict=True):
        if not callable(func):
            y[cond] = func
        else:
            vals = t[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


def iscomplexobj(x: Any) -> bool:
    """[HUNT9] NumPy's: whether `x`'s dtype is complex, a Python bool known while tracing (was a
    graph break)."""
    return issubclass(traced(x, (x,)).dtype.type, np.complexfloating)


def isrealobj(x: Any) -> bool:
    """[HUNT9] NumPy's: not iscomplexobj."""
    return not iscomplexobj(x)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool | Tracer:
    """[FIX16] A Python bool, as `allclose`: False for other shapes (known now), else all
    elements equal (NaN equal to NaN with `equal_nan`: NumPy's positions of NaN must agree
    and the other elements be equal, the same as `a == b | isnan(a) & isnan(b)`)."""
    x, y = traced(a1, (a1, a2)), traced(a2, (a1, a2))
    if tuple(x.shape) != tuple(y.shape):
        return False
    u = api.apply_ufunc
    same = u("equal", x, y)
    if equal_nan:
        same = u("logical_or", same, u("logical_and", u("isnan", x), u("isnan", y)))
    return _python_bool(api.all(same))


def array_equiv(a1: Any, a2: Any) -> bool | Tracer:
    """[FIX16] A Python bool: False for shapes that do not broadcast, else all equal."""
    x, y = traced(a1, (a1, a2)), traced(a2, (a1, a2))
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        return False
    return _python_bool(api.all(api.apply_ufunc("equal", x, y)))


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """[HUNT7] `a.put(ind, v)` / `np.put`: NumPy's `a.flat[ind] = v` (`v` repeated over the
    indices), its IndexError for an index out of bounds; indices known while tracing."""
    if not isinstance(a, Tracer) or mode != "raise" or isinstance(ind, Tracer):
        raise unsupported("np.put of a traced index or with mode=")
    index = np.asarray(ind).ravel()
    if not index.size:
        return
    if index.dtype.kind not in "iu":
        raise TypeError(f"Cannot cast array data from {index.dtype} to int64")
    if not -a.size <= index.min() <= index.max() < a.size:
        bad = index[(index < -a.size) | (index >= a.size)][0]
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {a.size}")
    _Flat(a)[index] = v


def _common_dtype(values: Sequence[Any]) -> np.dtype:
    """[H16] NumPy's result type of select's / choose's values: Python scalars weak (NEP 50),
    arrays by dtype."""
    return np.result_type(*(api._weak_for_result_type(c) if isinstance(c, Tracer) else
                            c if type(c) in (int, float, complex) else np.asarray(c).dtype
                            for c in values))


def _stored(c: Any, dtype: np.dtype, like: Sequence[Any], casting: str) -> Tracer:
    """`c` as an array of `dtype`, as NumPy's copyto of a choice (a Python scalar converted
    'unsafe': an int wraps into the dtype)."""
    source = c.dtype if isinstance(c, Tracer) else np.asarray(c).dtype
    if not np.can_cast(source, dtype, casting):
        raise TypeError(f"Cannot cast array data from {source!r} to {dtype!r} according "
                        f"to the rule '{casting}'")
    if type(c) in (bool, int, float, complex):
        c = np.asarray(c).astype(dtype)
    return api.astype(traced(c, like), dtype, copy=False)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tracer:
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    every = [*condlist, *choicelist]
    dtype = _common_dtype([*choicelist, default])
    for c in condlist:
        if (c.dtype if isinstance(c, Tracer) else np.asarray(c).dtype) != np.bool_:
            raise TypeError("invalid entry in condlist: should be boolean ndarray")
    result = _stored(default, dtype, every, "unsafe")  # np.full
    for cond, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        result = api.where(cond, _stored(choice, dtype, every, "same_kind"), result)
    return result


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Tracer:
    """[CHOOSE] NumPy's choose as select's chain of wheres on `a == k`, the choices broadcast
    with `a`. mode "wrap": `a` modulo n; "clip": clamped; "raise": `a` checked by an extern
    routine, NumPy's ValueError at run time (the kernels' error flags are all taken)."""
    if out is not None:
        raise unsupported("np.choose with out=")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    options = ([choices[k] for k in range(choices.shape[0])] if isinstance(choices, Tracer)
               else list(choices))
    if not options:
        raise ValueError("0-length sequence.")
    every = [a, *options]
    index = traced(a, every)
    if not np.can_cast(index.dtype, np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {index.dtype!r} to "
                        f"{np.dtype(np.intp)!r} according to the rule 'safe'")
    n = len(options)
    if mode == "raise":
        index = _extern("np.choose[check]", _choice_index, (index,), tuple(index.shape),
                        np.dtype(np.intp), n=n)
    else:
        index = api.astype(index, np.intp)
        index = (api.apply_ufunc("remainder", index, n) if mode == "wrap" else
                 api.clip(index, 0, n - 1))
    dtype = _common_dtype(options)
    stored = [_stored(c, dtype, every, "same_kind") for c in options]
    result = stored[-1]
    for k in reversed(range(n - 1)):
        result = api.where(api.apply_ufunc("equal", index, k), stored[k], result)
    if n == 1:  # a where of the one choice alone: shaped by `a`, and `a` checked
        result = api.where(api.apply_ufunc("equal", index, 0), result, result)
    return result


def _choice_index(a: np.ndarray, n: int) -> np.ndarray:
    """np.choose's mode="raise" check of the index array (a copy of it as intp)."""
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError("invalid entry in choice array")
    return a.astype(np.intp)


def polyval(p: Any, x: Any) -> Tracer:
    """NumPy's Horner loop: y = zeros_like(x); y = y * x + p[i]."""
    coeffs = traced(p, (p, x))
    if coeffs.ndim != 1:
        raise unsupported("np.polyval with multi-dimensional coefficients")
    xs = traced(x, (p, x))
    y = api.zeros_like(xs)
    for i in range(coeffs.shape[0]):
        y = api.apply_ufunc("add", api.apply_ufunc("multiply", y, xs), coeffs[i])
    return y


def polyder(p: Any, m: Any = 1) -> Tracer:
    """[HUNT8] np.polyder of 1-d coefficients: NumPy's m steps of p[:-1] * [n-1, ..., 1]."""
    y = traced(p, (p,))
    if y.ndim != 1:
        raise unsupported("np.polyder of multi-dimensional coefficients")
    if operator.index(m) < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in range(operator.index(m)):
        y = y[:-1] * np.arange(y.shape[0] - 1, 0, -1)
    return y


def polyint(p: Any, m: Any = 1, k: Any = None) -> Tracer:
    """[HUNT8] np.polyint of 1-d coefficients with a constant k (None: 0): NumPy's m steps of
    [p / [n, ..., 1], k]."""
    y = traced(p, (p,))
    if y.ndim != 1 or isinstance(k, Tracer) or np.ndim(k) > 0:
        raise unsupported("np.polyint of multi-dimensional coefficients or with k as an array")
    if operator.index(m) < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    for _ in range(operator.index(m)):
        y = api.concatenate([y / np.arange(y.shape[0], 0, -1), np.array([k or 0.0], float)])
    return y


def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Tracer:
    """[HUNT4] NumPy's least-squares fit as an extern call (its errors at run time)."""
    if full or cov or w is not None or rcond is not None:
        raise unsupported("np.polyfit with rcond=, full=, w= or cov=")
    xs, ys = traced(x, (x, y)), traced(y, (x, y))
    order = operator.index(deg) + 1
    if order < 1:
        raise ValueError("expected deg >= 0")
    if xs.ndim != 1 or ys.ndim not in (1, 2):
        raise TypeError("expected 1D vector for x" if xs.ndim != 1 else
                        "expected 1D or 2D array for y")
    with warnings.catch_warnings():  # (a RankWarning for a fit of too few points)
        warnings.simplefilter("ignore")
        dtype = np.polyfit(np.arange(order + 1, dtype=xs.dtype),
                           np.ones(order + 1, ys.dtype), order - 1).dtype
    return _extern("np.polyfit", np.polyfit, (xs, ys), (order, *ys.shape[1:]), dtype,
                   deg=order - 1)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Tracer:
    if out is not None:
        raise unsupported("np.trace with out=")
    x = traced(a, (a,))
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    res = np.trace(np.zeros((1,) * x.ndim, x.dtype), dtype=dtype).dtype
    a1, a2 = _axis(axis1, x.ndim), _axis(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    k = operator.index(offset)  # [H16] a[i, i + k] along (axis1, axis2), as NumPy
    start = builtins.max(0, -k)
    rows = np.arange(start, builtins.max(start, builtins.min(x.shape[a1], x.shape[a2] - k)))
    index: list[Any] = [slice(None)] * x.ndim
    index[a1], index[a2] = rows, rows + k
    diagonal = x[tuple(index)]  # the diagonal's axis: at the first index if adjacent, else 0
    return api.sum(diagonal, axis=builtins.min(a1, a2) if abs(a1 - a2) == 1 else 0,
                   dtype=res)


# ---- elementwise compositions ----

def fix(x: Any, out: Any = None) -> Tracer:
    """[H16] NumPy's algorithm: ceil, and floor where x >= 0 (so fix(-0.5) is -0.0)."""
    if out is not None:
        raise unsupported("np.fix with out=")
    t = traced(x, (x,))
    return api.where(api.apply_ufunc("greater_equal", t, 0), api.apply_ufunc("floor", t),
                     api.apply_ufunc("ceil", t))


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Tracer:
    """[H16] NaN and infinities replaced (by default 0 and the dtype's extremes); integers and
    booleans are returned as they are."""
    t = traced(x, (x,))
    if t.dtype.kind == "c":
        raise unsupported("np.nan_to_num of complex values")
    if t.dtype.kind != "f":
        return api.copy_(t)
    info = np.finfo(t.dtype)
    big = float(info.max) if posinf is None else posinf
    small = float(info.min) if neginf is None else neginf
    out = api.where(api.apply_ufunc("isnan", t), nan, t)
    out = api.where(api.apply_ufunc("equal", t, np.inf), big, out)
    return api.astype(api.where(api.apply_ufunc("equal", t, -np.inf), small, out), t.dtype,
                      copy=False)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> Tracer:
    """[H16] Each element compared with every test element (NumPy's result, NaN never
    matching); [FIX16] beyond ISIN_MAX test elements (or a data-dependent number), a binary
    search in the sorted test elements (NumPy sorts too; membership is `==` either way): an
    element is in them where the first sorted test element not below it equals it."""
    tests = traced(test_elements, (element, test_elements))
    e = traced(element, (element, test_elements))
    if isinstance(tests.size, int) and tests.size <= ISIN_MAX:
        pairs = api.apply_ufunc("equal", api.expand_dims(e, -1), api.ravel(tests))
        found = api.any(pairs, axis=-1)
    else:
        ordered = sort(tests, axis=None)
        n = ordered.shape[0]
        at = searchsorted(ordered, e)  # in [0, n]; one element more, so n is a position
        padded = api.concatenate([ordered, traced(np.zeros(1, ordered.dtype), (e,))])
        found = api.apply_ufunc("logical_and", api.apply_ufunc("less", at, n),
                                api.apply_ufunc("equal", padded[at], e))
    return api.apply_ufunc("logical_not", found) if invert else found


ISIN_MAX = 64


def in1d(ar1: Any, ar2: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: Any = None) -> Tracer:
    """[FIX16] NumPy's deprecated in1d: `isin` of the flattened array, with its warning."""
    warnings.warn("`in1d` is deprecated. Use `np.isin` instead.", DeprecationWarning,
                  stacklevel=3)
    return isin(api.ravel(traced(ar1, (ar1, ar2))), ar2, assume_unique, invert)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Tracer:
    """[H16] NumPy's np.cross: 2- or 3-vectors along `axisa`/`axisb` (or `axis`), broadcast,
    in the operands' promoted dtype, NumPy's formula term by term (a missing third component
    is 0: `0 - a2 * b1` is `negative(a2 * b1)`, as NumPy writes it); the result's vector axis
    at `axisc`; two 2-vectors give the z component only [FIX16]."""
    ta, tb = traced(a, (a, b)), traced(b, (a, b))
    if axis is not None:
        axisa = axisb = axisc = axis
    if ta.ndim == 0 or tb.ndim == 0:
        raise ValueError("At least one array has zero dimension")
    ta = api.moveaxis(ta, np.lib.array_utils.normalize_axis_index(axisa, ta.ndim, "axisa"), -1)
    tb = api.moveaxis(tb, np.lib.array_utils.normalize_axis_index(axisb, tb.ndim, "axisb"), -1)
    na, nb = ta.shape[-1], tb.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=3)
    dtype = np.promote_types(ta.dtype, tb.dtype)
    ta, tb = api.astype(ta, dtype, copy=False), api.astype(tb, dtype, copy=False)
    u = api.apply_ufunc
    x = [ta[..., k] for k in range(na)]
    y = [tb[..., k] for k in range(nb)]

    def term(i: int, j: int, k: int, m: int) -> Tracer:  # x[i] y[j] - x[k] y[m]
        left = u("multiply", x[i], y[j]) if i < na and j < nb else None
        right = u("multiply", x[k], y[m]) if k < na and m < nb else None
        if left is None:
            return u("negative", right)
        return left if right is None else u("subtract", left, right)

    if na == nb == 2:
        return term(0, 1, 1, 0)
    parts = [term(1, 2, 2, 1), term(2, 0, 0, 2), term(0, 1, 1, 0)]
    ndim = builtins.max(ta.ndim, tb.ndim)
    return api.stack(parts, axis=np.lib.array_utils.normalize_axis_index(axisc, ndim, "axisc"))


# ---- linear algebra ----

def _squares(t: Tracer) -> Tracer:
    """|t|**2 as NumPy's norms compute it: t * t, or (t.conj() * t).real = re*re + im*im for
    complex t [HUNT] (t * t of complex values gave a complex 'norm')."""
    if t.dtype.kind != "c":
        return api.apply_ufunc("multiply", t, t)
    re, im = t.real, t.imag
    return api.apply_ufunc("add", api.apply_ufunc("multiply", re, re),
                           api.apply_ufunc("multiply", im, im))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tracer:
    t = traced(x, (x,))
    if t.dtype.kind in "biu":
        t = api.astype(t, np.float64)
    if axis is None and ord is None:
        return api.apply_ufunc("sqrt", api.sum(_squares(t), keepdims=keepdims))
    if axis is None and t.ndim == 1 or isinstance(axis, (int, np.integer)) or \
            (isinstance(axis, tuple) and len(axis) == 1):
        ax = 0 if axis is None else axis
        mag = api.apply_ufunc("absolute", t)
        if ord is None or ord == 2:
            return api.apply_ufunc("sqrt", api.sum(_squares(t), axis=ax, keepdims=keepdims))
        if ord == 1:
            return api.sum(mag, axis=ax, keepdims=keepdims)
        if ord == np.inf:
            return api.max(mag, axis=ax, keepdims=keepdims)
        if ord == -np.inf:
            return api.min(mag, axis=ax, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        if ord == 0:  # [HUNT] the count of nonzero entries, as NumPy
            return api.sum(api.astype(api.apply_ufunc("not_equal", t, 0), mag.dtype),
                           axis=ax, keepdims=keepdims)
        # [HUNT] any other order: NumPy's (sum |x| ** ord) ** (1 / ord), in |x|'s dtype
        total = api.sum(api.apply_ufunc("power", mag, float(ord)), axis=ax, keepdims=keepdims)
        return api.apply_ufunc("power", total, np.reciprocal(float(ord), dtype=total.dtype))
    if ord in (None, "fro") and (axis is None or len(axis) == 2):
        ax = tuple(range(t.ndim)) if axis is None else axis
        return api.apply_ufunc("sqrt", api.sum(_squares(t), axis=ax, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf) and not keepdims and (
            axis is None and t.ndim == 2 or isinstance(axis, tuple) and len(axis) == 2):
        # [H16] NumPy's matrix norms: the extreme absolute column (1) or row (inf) sum
        row, col = api.normalize_axes(0 if axis is None else axis[0], t.ndim)[0], \
            api.normalize_axes(1 if axis is None else axis[1], t.ndim)[0]
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        other -= other > summed
        extreme = api.max if ord in (1, np.inf) else api.min
        return extreme(api.sum(api.apply_ufunc("absolute", t), axis=summed), axis=other)
    if ord in (2, -2, "nuc") and not keepdims and (
            axis is None and t.ndim == 2 or isinstance(axis, tuple) and len(axis) == 2):
        # [HUNT] NumPy's _multi_svd_norm: the singular values of the two axes moved last
        pair = (0, 1) if axis is None else tuple(axis)
        s = _linalg("svd", api.moveaxis(t, pair, (-2, -1)), compute_uv=False)
        reduce_ = {2: api.max, -2: api.min, "nuc": api.sum}[ord]
        return reduce_(s, axis=-1)
    raise unsupported(f"np.linalg.norm with ord={ord!r}, axis={axis!r}")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2
                ) -> Tracer:
    """[HUNT] np.linalg.vector_norm (NumPy 2): norm of the flattened array, or along one
    axis."""
    t = traced(x, (x,))
    if axis is None:
        r = norm(api.ravel(t), ord=ord, axis=0)
        return api.reshape(r, (1,) * t.ndim) if keepdims else r
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise unsupported("np.linalg.vector_norm over several axes")
        axis = axis[0]
    return norm(t, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Tracer:
    """[HUNT] np.linalg.matrix_norm (NumPy 2): the norm over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x: Any, /) -> Tracer:
    """[HUNT] np.matrix_transpose / np.linalg.matrix_transpose: the last two axes swapped."""
    t = traced(x, (x,))
    if t.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return api.swapaxes(t, -1, -2)


def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Tracer:
    """[HUNT11] np.linalg.diagonal: np.diagonal over the last two axes (NumPy's definition)."""
    return np.diagonal(x, offset, axis1=-2, axis2=-1)


def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tracer:
    """[HUNT11] np.linalg.trace: np.trace over the last two axes (NumPy's definition)."""
    return np.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def linalg_outer(x1: Any, x2: Any, /) -> Tracer:
    """[HUNT11] np.linalg.outer: np.outer of two 1-d arrays (NumPy's check and definition)."""
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}.")
    return np.outer(x1, x2)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Tracer:
    """[HUNT11] np.histogram_bin_edges: np.histogram's edges (NumPy computes both alike)."""
    return np.histogram(a, bins, range, weights=weights)[1]


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tracer:
    """[HUNT] np.vecdot / np.linalg.vecdot: sum(conj(x1) * x2) along `axis`, broadcast."""
    a, b = traced(x1, (x1, x2)), traced(x2, (x1, x2))
    return api.sum(api.apply_ufunc("multiply", api.apply_ufunc("conjugate", a), b), axis=axis)


def matvec(x1: Any, x2: Any, /) -> Tracer:
    """[HUNT] np.matvec: (..., m, n) times (..., n) -> (..., m)."""
    a, v = traced(x1, (x1, x2)), traced(x2, (x1, x2))
    return api.squeeze(api.matmul(a, api.expand_dims(v, -1)), -1)


def vecmat(x1: Any, x2: Any, /) -> Tracer:
    """[HUNT] np.vecmat: conj((..., n)) times (..., n, m) -> (..., m)."""
    v, a = traced(x1, (x1, x2)), traced(x2, (x1, x2))
    return api.squeeze(api.matmul(api.expand_dims(api.apply_ufunc("conjugate", v), -2), a), -2)


_GUFUNCS: dict[Any, Callable[..., Any]] = {np.vecdot: vecdot, np.matvec: matvec,
                                           np.vecmat: vecmat}


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ts = [api.ravel(traced(x, xi)) for x in xi]
    nd = len(ts)
    out = []
    for i, t in enumerate(ts):
        shape = [1] * nd
        shape[i] = t.size
        if indexing == "xy" and nd > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(api.reshape(t, tuple(shape)))
    if not sparse:
        full = api.broadcast_shapes(*(tuple(o.shape) for o in out))
        out = [api.copy_(api.broadcast_to(o, full)) if copy else api.broadcast_to(o, full)
               for o in out]
    elif copy:  # [HUNT3] sparse grids are copies too unless copy=False (they viewed xi)
        out = [api.copy_(o) for o in out]
    return tuple(out)


def ix_(*args: Any) -> tuple[Any, ...]:
    """np.ix_, NumPy's algorithm: each 1-D sequence reshaped to run along its own axis of an
    open mesh (a view of it); an empty one is intp, a boolean one its nonzero indices."""
    out = []
    for k, a in enumerate(args):
        t = traced(a, args)
        if t.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if t.size == 0 and not isinstance(a, Tracer):
            t = api.astype(t, np.intp)
        if t.dtype == np.bool_:
            t = np.nonzero(t)[0]
        out.append(api.reshape(t, (1,) * k + (-1,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


# ---- NumPy routines as extern calls ----
# Sorting, selection and LAPACK are NumPy's own code, called by the compiled program's wrapper
# on its buffers (`stax.runtime.externs`), as matmul calls BLAS. Result shapes follow NumPy's
# rules from the shapes alone; dtypes come from a call on a 1-element (or 2x2) probe.

def _extern(name: str, routine: Callable[..., Any], args: Sequence[Any],
            shape: tuple[int, ...], dtype: np.dtype, output: int | None = None, /,
            **kwargs: Any) -> Tracer:
    key = externs.register(_spelled(name, kwargs) + ("" if output is None else f"[{output}]"),
                           lambda *arrays: routine(*arrays, **kwargs), output)
    return _extern_node(name, key, args, shape, dtype)


def _spelled(name: str, kwargs: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in sorted(kwargs.items()))})"


def _extern_node(name: str, key: str, args: Sequence[Any], shape: tuple[int, ...],
                 dtype: np.dtype, **attrs: Any) -> Tracer:
    """The extern node calling the routine registered under `key` on `args`."""
    b = api.find_builder(args)
    values = tuple(api.to_value(b, traced(a, args)) for a in args)
    dtype = api.check_dtype(np.dtype(dtype), f"{name}'s result")
    return api.wrap(b, b.add("extern", values, tuple(shape), dtype, fn=key, **attrs))


def _probe(x: Tracer, square: bool = False) -> np.ndarray:
    """A tiny array of `x`'s dtype and ndim (a 2x2 identity stack for LAPACK routines)."""
    if square:
        return np.broadcast_to(np.eye(2, dtype=x.dtype), (1,) * (x.ndim - 2) + (2, 2)).copy()
    return np.ones((1,) * x.ndim, x.dtype)


def _flattened(a: Any, axis: Any, arg: bool = False) -> tuple[Tracer, int]:
    """`a` and its axis (raveled for None); `arg`: argsort/argpartition, which take a 0-d
    array as 1-d (NumPy's `np.argsort(np.array(3.0), axis=0)` is [0]) [FIX16]."""
    x = traced(a, (a,))
    if axis is None:
        return api.ravel(x), 0
    if arg and x.ndim == 0:
        x = api.ravel(x)
    return x, _axis(axis, x.ndim)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Tracer:
    if order is not None:
        raise unsupported("np.sort with order=")
    x, ax = _flattened(a, axis)
    from stax.frontend.topk import selected_slice  # [TOPK] (it imports this module)

    if axis is not None and (top := selected_slice(x, ax, "np.partition")) is not None:
        return top

    def into(x: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, x)
        out.sort(axis=ax, kind=kind, stable=stable)

    try:  # [TOPK] quiet: NumPy's sort raises only for its arguments (`kind="bogus"`)
        np.sort(_probe(x), kind=kind, stable=stable)
        quiet = True
    except (ValueError, TypeError):
        quiet = False
    return _along("np.sort", into, x, ax, x.dtype, quiet=quiet, kind=kind, stable=stable)


def _along(name: str, routine: Callable[[np.ndarray, np.ndarray], None], x: Tracer, ax: int,
           dtype: np.dtype, kths: tuple[int, ...] = (), quiet: bool = False,
           **kwargs: Any) -> Tracer:
    """[PERF10] The extern node of an axis routine writing into its buffer, split over idle
    cores (`externs.register_along`). It records `along` (the routine, its axis and the kth
    positions it puts in place) for the top-k forms [TOPK] (`stax.frontend.topk`), and
    `quiet`: the routine raises nothing on these arguments, so it is not run when its result
    is unused (a sort or partition whose top-k slice became a top-k call)."""
    key = externs.register_along(_spelled(name, {"axis": ax, **kwargs}), routine, ax)
    return _extern_node(name, key, (x,), tuple(x.shape), dtype, along=(name, ax, kths),
                        quiet=quiet)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> Tracer:
    if order is not None:
        raise unsupported("np.argsort with order=")
    x, ax = _flattened(a, axis, arg=True)

    def into(x: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, np.argsort(x, axis=ax, kind=kind, stable=stable))

    return _along("np.argsort", into, x, ax, np.dtype(np.intp), kind=kind, stable=stable)


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Tracer:
    if order is not None or isinstance(kth, Tracer) and kth.concrete is None:
        raise unsupported("np.partition with order= or a kth computed from the data")
    x, ax = _flattened(a, axis)
    kth = np.asarray(kth).tolist()

    def into(x: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, x)
        out.partition(kth, axis=ax, kind=kind)

    n = x.shape[ax]
    kths = tuple(j + n if j < 0 else j for j in np.atleast_1d(kth).tolist()) \
        if type(n) is int else ()
    # else NumPy's ValueError (the only kind is introselect)
    quiet = bool(kths) and all(0 <= j < n for j in kths) and kind == "introselect"
    return _along("np.partition", into, x, ax, x.dtype, kths if quiet else (), quiet,
                  kth=kth, kind=kind)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> Tracer:
    """[H16] NumPy's own argpartition (an extern call, as np.partition)."""
    if order is not None or isinstance(kth, Tracer) and kth.concrete is None:
        raise unsupported("np.argpartition with order= or a kth computed from the data")
    x, ax = _flattened(a, axis, arg=True)
    return _extern("np.argpartition", np.argpartition, (x,), tuple(x.shape),
                   np.dtype(np.intp), kth=np.asarray(kth).tolist(), axis=ax, kind=kind)


def lexsort(keys: Any, axis: int = -1) -> Tracer:
    """[H16] NumPy's own lexsort of keys of one shape (an extern call)."""
    rows = list(keys) if isinstance(keys, (list, tuple)) else \
        [keys[k] for k in range(len(keys))]
    ts = [traced(k, rows) for k in rows]
    if not ts or len({tuple(t.shape) for t in ts}) != 1 or ts[0].ndim == 0:
        raise unsupported("np.lexsort of keys of different shapes")
    ax = _axis(axis, ts[0].ndim)
    return _extern("np.lexsort", lambda *ks, axis: np.lexsort(ks, axis=axis), ts,
                   tuple(ts[0].shape), np.dtype(np.intp), axis=ax)


def _nan_arg(name: str) -> Callable[..., Tracer]:
    """[H16] np.nanargmax / np.nanargmin: NumPy's own (an extern call; an all-NaN slice
    raises NumPy's ValueError)."""
    routine = getattr(np, name)

    def call(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
        if out is not None or isinstance(axis, Tracer):
            raise unsupported(f"np.{name} with out= or a traced axis")
        x = traced(a, (a,))
        shape = _reduced_shape(x, axis, keepdims) if axis is not None else \
            (1,) * x.ndim if keepdims else ()
        return _extern(f"np.{name}", routine, (x,), shape, np.dtype(np.intp), axis=axis,
                       keepdims=keepdims)
    return call


def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Tracer:
    """[H16] NumPy's bincount (an extern call) when its length is known from the values'
    bound: bool or unsigned values with `minlength` beyond the dtype's maximum (a uint8
    histogram with minlength=256), or [HUNT] labels from an argmin/argmax over k values with
    minlength >= k (k-means' cluster sizes); otherwise the length depends on the data: a size
    bound at run time [DYN16]."""
    t = traced(x, (x, weights))
    n = operator.index(minlength)  # (a traced scalar: specialized on its value)
    if not isinstance(x, Tracer):  # [HUNT10] constant labels (from np.mgrid) weighted by
        n = len(np.bincount(np.asarray(x), minlength=n))  # traced values: a known length
    elif t.ndim != 1 or t.dtype.kind not in "biu" or n < _values_below(t):
        from stax.frontend import data_dependent  # [DYN16] sized at run time

        return data_dependent.bincount(t, weights, n)
    args = (t,) if weights is None else (t, traced(weights, (x, weights)))
    return _extern("np.bincount", np.bincount, args, (n,),
                   np.dtype(np.intp if weights is None else np.float64), minlength=n)


def _values_below(t: Tracer) -> float:
    """A bound every value of the integer (or bool) array `t` lies below, known from how it was
    computed: an argmin/argmax's reduced size, else its dtype's maximum + 1 (unsigned and bool;
    infinite for signed values: negative ones are NumPy's error)."""
    op = next((op for op in reversed(t.builder.ops) if op.out == t.value), None)
    if op is not None and op.kind == "reduce" and op.attr("fn") in ("argmin", "argmax"):
        size = math.prod(op.inputs[0].shape[a] for a in op.attr("axes"))
        if isinstance(size, int):
            return size
    if t.dtype.kind == "b":
        return 2
    return np.iinfo(t.dtype).max + 1 if t.dtype.kind == "u" else math.inf


def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> Tracer:
    """[H16] NumPy's unpackbits (an extern call): 8 bits per uint8 along the axis."""
    t = traced(a, (a,))
    x, ax = _flattened(t, axis)
    if t.dtype != np.uint8 or count is not None and not isinstance(x.shape[ax], int):
        raise unsupported("np.unpackbits of a dtype other than uint8, or with count= of a "
                          "symbolic length")
    n = x.shape[ax] * 8
    if count is not None:  # [HUNT] the length NumPy gives (zeros padded, bits trimmed), and
        count = operator.index(count)  # its errors
        n = np.unpackbits(np.zeros(x.shape[ax], np.uint8), count=count).shape[0]
    shape = tuple(n if d == ax else s for d, s in enumerate(x.shape))
    return _extern("np.unpackbits", np.unpackbits, (x,), shape, np.dtype(np.uint8), axis=ax,
                   count=count, bitorder=bitorder)


def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> Tracer:
    """[H16] NumPy's packbits (an extern call): 8 values per uint8 along the axis."""
    t = traced(a, (a,))
    if t.dtype.kind not in "biu":
        raise unsupported("np.packbits of a non-integer dtype")
    x, ax = _flattened(t, axis)
    shape = tuple(-(-n // 8) if d == ax else n for d, n in enumerate(x.shape))
    return _extern("np.packbits", np.packbits, (x,), shape, np.dtype(np.uint8), axis=ax,
                   bitorder=bitorder)


def _reduced_shape(x: Tracer, axis: Any, keepdims: bool) -> tuple[int, ...]:
    axes = api.normalize_axes(axis, x.ndim)
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    return tuple(n for d, n in enumerate(x.shape) if d not in axes)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tracer:
    return _median("median", a, axis, out, keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tracer:
    return _median("nanmedian", a, axis, out, keepdims)


def _median(name: str, a: Any, axis: Any, out: Any, keepdims: bool) -> Tracer:
    """np.median / np.nanmedian: NumPy's own (an extern call)."""
    if out is not None:
        raise unsupported(f"np.{name} with out=")
    x = traced(a, (a,))
    routine = getattr(np, name)
    axis = axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)
    dtype = routine(_probe(x), axis=axis, keepdims=keepdims).dtype
    return _extern(f"np.{name}", routine, (x,), _reduced_shape(x, axis, keepdims), dtype,
                   axis=axis, keepdims=keepdims)


def _quantile(name: str, a: Any, q: Any, axis: Any, out: Any, overwrite_input: bool,
              method: str, keepdims: bool, weights: Any, interpolation: Any) -> Tracer:
    if isinstance(q, Tracer) and q.concrete is not None:
        q = q.python_value()  # [HUNT] from scalar arguments (`100 * (1 - level)`)
    if out is not None or weights is not None or interpolation is not None or \
            isinstance(q, Tracer):
        raise unsupported(f"np.{name} with out=, weights=, interpolation= or a traced q")
    x = traced(a, (a,))
    routine = getattr(np, name)
    q_list = np.asarray(q).tolist()
    axis = axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)
    dtype = routine(_probe(x), q_list, axis=axis, method=method, keepdims=keepdims).dtype
    shape = np.shape(q) + _reduced_shape(x, axis, keepdims)
    return _extern(f"np.{name}", routine, (x,), shape, dtype, q=q_list, axis=axis,
                   method=method, keepdims=keepdims)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Tracer:
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     interpolation)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Tracer:
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     interpolation)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Tracer:
    return _quantile("nanpercentile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, interpolation)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Tracer:
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, interpolation)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tracer:
    x, vals = traced(a, (a, v)), traced(v, (a, v))
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if sorter is not None:  # [HUNT4] the order as a third array (NumPy checks its size)
        return _extern("np.searchsorted[sorter]", _searchsorted_by, (x, vals, sorter),
                       tuple(vals.shape), np.dtype(np.intp), side=side)
    if side in ("left", "right") and isinstance(x.size, int) and x.dtype.kind in "biuf" \
            and vals.dtype.kind in "biuf":
        return _search_steps(x, vals, side == "left")
    return _extern("np.searchsorted", np.searchsorted, (x, vals), tuple(vals.shape),
                   np.dtype(np.intp), side=side)


def _search_steps(a: Tracer, v: Tracer, left: bool) -> Tracer:
    """[PERF10] np.searchsorted as a branchless binary search over `a`'s static length n: from
    the largest power of two <= n down to 1, a position moves up by the step where the element
    below the new position still sorts before v (`left`; not after v for side='right'). Each
    step is a gather from `a`, a compare and a select, so the whole search is one pointwise
    loop over v (NumPy's routine branches per element; 55 ns an element at n=256). Both are
    compared in their common dtype, in NumPy's sort order (NaN after every number)."""
    dtype = np.promote_types(a.dtype, v.dtype)
    a, v = api.astype(a, dtype, copy=False), api.astype(v, dtype, copy=False)
    n = a.shape[0]
    pos = api.zeros_like(v, dtype=np.intp)
    step = 1 << (n.bit_length() - 1) if n else 0
    while step:
        moved = pos + step
        below = api.take(a, moved - 1, mode="clip")
        before = _sorts_before(below, v) if left else ~_sorts_before(v, below)
        pos = api.where((moved <= n) & before, moved, pos)
        step >>= 1
    return pos


def _sorts_before(x: Tracer, y: Tracer) -> Tracer:
    """x < y in NumPy's sort order, where NaN sorts after every number."""
    if x.dtype.kind != "f":
        return x < y
    return (x < y) | ((y != y) & (x == x))


def _searchsorted_by(a: np.ndarray, v: np.ndarray, sorter: np.ndarray, side: str
                     ) -> np.ndarray:
    return np.searchsorted(a, v, side=side, sorter=sorter)


def digitize(x: Any, bins: Any, right: bool = False) -> Tracer:
    xs, edges = traced(x, (x, bins)), traced(bins, (x, bins))
    if edges.ndim != 1:
        raise ValueError("object too deep for desired array")
    return _extern("np.digitize", np.digitize, (xs, edges), tuple(xs.shape),
                   np.dtype(np.intp), right=right)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Tracer:
    if builtins.any(isinstance(v, Tracer) for v in (left, right, period)):
        raise unsupported("np.interp with traced left=, right= or period=")
    args = (x, xp, fp)
    xs = traced(x, args)
    dtype = np.interp(np.zeros(1), np.zeros(1), np.zeros(1, traced(fp, args).dtype)).dtype
    return _extern("np.interp", np.interp, args, tuple(xs.shape), dtype, left=left,
                   right=right, period=period)


def _convolution(name: str, a: Any, v: Any, mode: str) -> Tracer:
    x, w = traced(a, (a, v)), traced(v, (a, v))
    n, m = x.size, w.size
    if n == 0 or m == 0:
        raise ValueError(f"{'v' if m == 0 else 'a'} cannot be empty")
    sizes = {"full": n + m - 1, "same": builtins.max(n, m),
             "valid": builtins.max(n, m) - builtins.min(n, m) + 1}
    if mode not in sizes:
        raise unsupported(f"np.{name} with mode={mode!r}")
    dtype = getattr(np, name)(np.ones(1, x.dtype), np.ones(1, w.dtype)).dtype
    return _extern(f"np.{name}", getattr(np, name), (api.ravel(x), api.ravel(w)),
                   (sizes[mode],), dtype, mode=mode)


def convolve(a: Any, v: Any, mode: str = "full") -> Tracer:
    return _convolution("convolve", a, v, mode)


def correlate(a: Any, v: Any, mode: str = "valid") -> Tracer:
    return _convolution("correlate", a, v, mode)


def _fft(name: str) -> Callable[..., Tracer]:
    """[HUNT8] np.fft.fft / ifft / rfft / irfft along one axis: NumPy's own transform as an
    extern call; the result's shape and dtype (complex64 of float32, as NumPy 2) and NumPy's
    errors from the transform of a probe holding only the transformed axis."""
    fn = getattr(np.fft, name)

    def transform(a: Any, n: Any = None, axis: int = -1, norm: Any = None,
                  out: Any = None) -> Tracer:
        if isinstance(n, Tracer) and n.ndim == 0 and n.dtype.kind in "iu":
            n = operator.index(n)  # a Python int argument: the trace specializes on it
        x = traced(a, (a,))
        if out is not None or isinstance(n, Tracer) or not isinstance(norm, (str, type(None))):
            raise unsupported(f"np.fft.{name} with out= or a traced n= / norm=")
        if x.ndim == 0:
            return fn(np.zeros(()), n, axis, norm)  # NumPy's error
        ax = _axis(axis, x.ndim)
        if not isinstance(x.shape[ax], int):
            raise unsupported(f"np.fft.{name} along an axis of symbolic size")
        probe = fn(np.zeros(x.shape[ax], x.dtype), n, -1, norm)
        shape = tuple(probe.size if d == ax else size for d, size in enumerate(x.shape))
        return _extern(f"np.fft.{name}", fn, (x,), shape, probe.dtype, n=n, axis=ax,
                       norm=norm)
    return transform


def _fftn(name: str) -> Callable[..., Tracer]:
    """[HUNT10] np.fft.fft2 / ifft2 / rfft2 / irfft2 / fftn / ifftn / rfftn / irfftn: NumPy's
    own transform as one extern call; the result's shape and dtype and NumPy's errors from the
    transform of a probe holding only the transformed axes (the others of size 1)."""
    fn = getattr(np.fft, name)
    default = (-2, -1) if name.endswith("2") else None

    def transform(a: Any, s: Any = None, axes: Any = default, norm: Any = None,
                  out: Any = None) -> Tracer:
        x = traced(a, (a,))
        if out is not None or _has_tracer(s) or _has_tracer(axes) or isinstance(
                s, Tracer) or isinstance(axes, Tracer) or not isinstance(norm, (str, type(None))):
            raise unsupported(f"np.fft.{name} with out= or a traced s= / axes= / norm=")
        if x.ndim == 0:
            return fn(np.zeros(()), s, axes, norm)  # NumPy's error
        s = None if s is None else tuple(map(operator.index, s))
        axes = None if axes is None else tuple(_axis(k, x.ndim) for k in axes)
        done = set(range(x.ndim - len(s), x.ndim) if axes is None and s is not None else
                   range(x.ndim) if axes is None else axes)
        if not builtins.all(isinstance(x.shape[d], int) for d in done):
            raise unsupported(f"np.fft.{name} along an axis of symbolic size")
        probe = fn(np.zeros(tuple(x.shape[d] if d in done else 1 for d in range(x.ndim)),
                            x.dtype), s, axes, norm)
        shape = tuple(probe.shape[d] if d in done else size for d, size in enumerate(x.shape))
        return _extern(f"np.fft.{name}", fn, (x,), shape, probe.dtype, s=s, axes=axes,
                       norm=norm)
    return transform


def multi_dot(arrays: Any, *, out: Any = None) -> Tracer:
    """[HUNT10] np.linalg.multi_dot as matmuls from the left (NumPy may choose another order
    for speed: equal up to rounding); a 1-d first/last operand is a row/column vector, two
    arrays are np.dot's, fewer are NumPy's ValueError, as NumPy's."""
    if out is not None:
        raise unsupported("np.linalg.multi_dot with out=")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return np.dot(*arrays)
    ts = [traced(a, arrays) for a in arrays]
    if builtins.any(t.ndim != 2 for t in ts[1:-1]) or not 1 <= ts[0].ndim <= 2 or \
            not 1 <= ts[-1].ndim <= 2:
        raise np.linalg.LinAlgError("multi_dot: the first and last arrays must be 1-d or 2-d, "
                                    "the others 2-d")
    result = ts[0]
    for t in ts[1:]:
        result = api.matmul(result, t)
    return result


def _fftshift(sign: int) -> Callable[..., Tracer]:
    """[HUNT8] np.fft.fftshift (sign 1) / ifftshift (-1): a roll by half of each axis."""
    def shift(x: Any, axes: Any = None) -> Tracer:
        t = traced(x, (x,))
        axes = tuple(range(t.ndim)) if axes is None else axes
        each = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
        return roll(t, tuple(sign * (t.shape[_axis(a, t.ndim)] // 2) for a in each), each)
    return shift


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,  # noqa: A002
              weights: Any = None) -> tuple[Tracer, Tracer]:
    if isinstance(bins, Tracer) and bins.ndim == 0 and bins.dtype.kind in "iu":
        bins = operator.index(bins)  # a Python int argument: the trace specializes on it
    if isinstance(bins, str) or isinstance(range, Tracer) or (
            range is not None and builtins.any(isinstance(r, Tracer) for r in range)):
        raise unsupported("np.histogram with bins given by name or a traced range")
    x = traced(a, (a,))
    if _uniform_range(x, bins, range) and density is None and weights is None:
        return _uniform_histogram(x, operator.index(bins), range)
    arrays = [api.ravel(x)]
    if not isinstance(bins, (int, np.integer)):
        arrays.append(traced(bins, (a,)))
        n_edges = arrays[-1].size
        bins_kw: Any = None
    else:
        n_edges, bins_kw = operator.index(bins) + 1, operator.index(bins)
    if weights is not None:
        arrays.append(api.ravel(traced(weights, (a,))))
    has_edges, has_weights = bins_kw is None, weights is not None

    def routine(values: np.ndarray, *rest: np.ndarray, **spec: Any
                ) -> tuple[np.ndarray, np.ndarray]:  # `spec` only spells out the key
        edges = rest[0] if has_edges else bins_kw
        w = rest[-1] if has_weights else None
        return np.histogram(values, edges, range, density, w)

    probe_w = np.ones(2, arrays[-1].dtype) if has_weights else None
    probe_edges = np.arange(2.0).astype(arrays[1].dtype) if has_edges else 1
    counts, edges = np.histogram(np.ones(2, x.dtype), probe_edges, range, density, probe_w)
    spec = dict(range=range, density=density, bins=bins_kw, edges=has_edges,
                weights=has_weights)
    return (_extern("np.histogram", routine, arrays, (n_edges - 1,), counts.dtype, 0, **spec),
            _extern("np.histogram", routine, arrays, (n_edges,), edges.dtype, 1, **spec))


def _uniform_range(x: Tracer, bins: Any, range: Any) -> bool:  # noqa: A002
    """[PERF11] Whether np.histogram(x, bins, range) is compiled (`_uniform_histogram`): float32
    or float64 values, a count of bins and a finite, ordered range of two floats or Python ints
    (NumPy's edges then have the values' dtype, or float64 for a float64 bound)."""
    if x.dtype not in (np.float32, np.float64) or not isinstance(bins, (int, np.integer)) \
            or range is None or len(range) != 2:
        return False
    lo, hi = range
    return builtins.all(
        isinstance(e, (float, np.floating)) and np.isfinite(e)
        or type(e) is int and abs(e) < 2**53 for e in range) \
        and lo <= hi and operator.index(bins) > 0


def _uniform_histogram(x: Tracer, n: int, range: tuple[Any, Any]  # noqa: A002
                       ) -> tuple[Tracer, Tracer]:
    """[PERF11] np.histogram with `n` equal bins over a given range, compiled: NumPy's own
    arithmetic for the bin of each value (its dtypes, its rounding and its corrections against
    the edges), fused in one pass, then a count of known length n + 1 (the last bin collects
    what NumPy drops: values outside the range and NaN). NumPy's extern was a copy of the
    values and then several passes per block of 65536 (a sixth slower than NumPy itself)."""
    lo, hi = range
    if lo == hi:  # NumPy widens an empty range
        lo, hi = lo - 0.5, hi + 0.5
    bin_type = np.result_type(lo, hi, x.dtype)
    edges = np.linspace(lo, hi, n + 1, endpoint=True, dtype=bin_type)
    # NumPy's hi - lo: a float64 scalar (a uint64 one for int bounds: the same quotient)
    denom = np.subtract(hi, lo, dtype=np.result_type(hi, lo, 0.0))
    values = api.ravel(x)
    keep = (values >= lo) & (values <= hi)
    safe = api.where(keep, values, lo).astype(bin_type)
    # the clips change no value (lo <= safe <= hi: 0 <= index <= n, and n goes to n - 1 as in
    # NumPy); they bound the float-to-int cast and the edge gathers, which then check nothing
    index = api.clip(api.clip((safe - lo) / denom * n, 0, n).astype(np.intp), 0, n - 1)
    edge = traced(edges, (x,))
    index = index - (safe < edge[index])
    index = index + ((safe >= edge[api.clip(index + 1, 0, n)]) & (index != n - 1))
    counts = _extern("np.bincount", np.bincount, (api.where(keep, index, n),), (n + 1,),
                     np.dtype(np.intp), minlength=n + 1)
    return counts[:n], edge


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                density: Any = None, weights: Any = None) -> tuple[Tracer, ...]:
    """[HUNT8] np.histogram2d with bins an int or a pair of ints (a Python int argument: the
    trace specializes on it) and a constant range: NumPy's own as an extern call."""
    pair = bins if isinstance(bins, (list, tuple)) else (bins, bins)
    counts = tuple(operator.index(b) if isinstance(b, (Tracer, int, np.integer)) else b
                   for b in pair)
    if len(counts) != 2 or not builtins.all(isinstance(n, int) for n in counts) or \
            _has_tracer(range) or isinstance(range, Tracer):
        raise unsupported("np.histogram2d with bin edges or a traced range")
    xs, ys = traced(x, (x, y)), traced(y, (x, y))
    arrays = [xs, ys] + ([traced(weights, (x, y))] if weights is not None else [])
    if builtins.any(a.ndim != 1 for a in arrays) or len({a.shape[0] for a in arrays}) != 1:
        raise unsupported("np.histogram2d of arrays that are not 1-d of one length")
    has_weights = weights is not None

    def routine(xv: np.ndarray, yv: np.ndarray, *rest: np.ndarray, **spec: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # `spec` spells out the key
        return np.histogram2d(xv, yv, counts, range, density, rest[0] if has_weights else None)

    probe = np.histogram2d(np.zeros(1, xs.dtype), np.zeros(1, ys.dtype), counts, range, density,
                           np.ones(1, arrays[-1].dtype) if has_weights else None)
    spec = dict(bins=counts, range=range, density=density, weights=has_weights)
    shapes = (counts, (counts[0] + 1,), (counts[1] + 1,))
    return tuple(_extern("np.histogram2d", routine, arrays, shape, p.dtype, k, **spec)
                 for k, (shape, p) in enumerate(zip(shapes, probe, strict=True)))


def ufunc_method(ufunc: np.ufunc, method: str, a: Any, axis: Any = 0, dtype: Any = None,
                 out: Any = None, keepdims: bool = False, **kwargs: Any) -> Tracer:
    """`ufunc.accumulate` / `ufunc.reduce` of a binary ufunc Stax has no scan/reduction for
    ([B16] `keepdims=` of reduce; `out=` a traced array, written as NumPy writes it)."""
    outs = out if isinstance(out, tuple) else (out,)
    if kwargs or isinstance(dtype, Tracer) or keepdims and method != "reduce" or \
            out is not None and (len(outs) != 1 or not isinstance(outs[0], Tracer)):
        raise unsupported(f"np.{ufunc.__name__}.{method} with other arguments")
    if out is not None:
        outs[0][...] = ufunc_method(ufunc, method, a, axis, dtype, None, keepdims)
        return outs[0]
    x = traced(a, (a,))
    routine = getattr(ufunc, method)
    if method == "accumulate":
        ax = _axis(axis, x.ndim) if x.ndim else 0
        shape = tuple(x.shape) if x.ndim else (1,)
    else:
        ax = axis if axis is None or isinstance(axis, (int, np.integer)) else tuple(axis)
        shape = _reduced_shape(x, ax, keepdims)
    res = routine(_probe(x) if x.ndim else np.ones(1, x.dtype), axis=0 if x.ndim <= 1 else ax,
                  dtype=dtype).dtype
    spec = {"keepdims": True} if keepdims else {}
    return _extern(f"np.{ufunc.__name__}.{method}", routine, (x,), shape, res, axis=ax,
                   dtype=None if dtype is None else np.dtype(dtype).name, **spec)


def ufunc_reduceat(ufunc: np.ufunc, a: Any, indices: Any, axis: Any = 0, dtype: Any = None,
                   **kwargs: Any) -> Tracer:
    """[HUNT2] `ufunc.reduceat`: NumPy's reduceat as an extern call of the array and the
    indices (traced or not: the result's length along the axis is the number of indices;
    NumPy's IndexError for an index out of range is raised when it runs)."""
    x = traced(a, (a, indices))
    at = traced(indices, (a, indices))
    if kwargs or isinstance(dtype, Tracer) or at.ndim != 1 or at.dtype.kind not in "iu" or \
            not isinstance(axis, (int, np.integer)) or x.ndim == 0:
        raise unsupported(f"np.{ufunc.__name__}.reduceat with other arguments")
    ax = _axis(axis, x.ndim)
    shape = tuple(at.shape[0] if i == ax else n for i, n in enumerate(x.shape))
    res = ufunc.reduceat(_probe(x), [0], axis=ax, dtype=dtype).dtype
    return _extern(f"np.{ufunc.__name__}.reduceat", ufunc.reduceat, (x, at), shape, res,
                   axis=ax, dtype=None if dtype is None else np.dtype(dtype).name)


def _static_dims(name: str, shape: Any) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if builtins.any(isinstance(d, (Tracer, Sym)) for d in dims):
        raise unsupported(f"np.{name} of a traced or symbolic shape")
    return tuple(int(d) for d in dims)


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Tracer, ...]:
    """[HUNT2] NumPy's unravel_index as an extern call per coordinate (its ValueError for an
    index out of range, raised when it runs); its other errors (dtype, shape, order) come
    from NumPy on an empty index while tracing."""
    dims = _static_dims("unravel_index", shape)
    x = traced(indices, (indices,))
    np.unravel_index(np.zeros(0, x.dtype), dims, order)
    return tuple(_extern("np.unravel_index", np.unravel_index, (x,), tuple(x.shape),
                         np.dtype(np.intp), k, shape=dims, order=order)
                 for k in range(len(dims)))


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C") -> Tracer:
    """[HUNT2] NumPy's ravel_multi_index as an extern call (its ValueError for an entry out
    of range with mode='raise'); its other errors from NumPy on empty coordinates."""
    shape = _static_dims("ravel_multi_index", dims)
    coords = [traced(c, tuple(multi_index)) for c in multi_index]
    np.ravel_multi_index(tuple(np.zeros(0, c.dtype) for c in coords), shape, mode, order)
    out = np.broadcast_shapes(*(tuple(c.shape) for c in coords))
    return _extern("np.ravel_multi_index", lambda *ix, **kw: np.ravel_multi_index(ix, **kw),
                   coords, out, np.dtype(np.intp), dims=shape,
                   mode=mode if isinstance(mode, str) else tuple(mode), order=order)


# ---- writes NumPy performs in place, as extern calls on a copy ----
# Integer-array assignment (`a[idx] += 1`: once per unique index, the last write wins),
# `ufunc.at` (once per occurrence), np.put, np.place, np.putmask, np.fill_diagonal, np.copyto:
# NumPy's own semantics on a copy of the target, which the target is then rebound to.

def _written(name: str, write: Callable[..., Any], target: Tracer, arrays: Sequence[Any],
             **spec: Any) -> None:
    def routine(t: np.ndarray, *rest: np.ndarray, out: np.ndarray) -> None:
        # [CALL] NumPy writes into the node's buffer holding the target's values (an extern's
        # buffer is never one of its inputs): no copy of the target made and copied again
        np.copyto(out, t)
        write(out, *rest)

    target.check_fresh()
    key = externs.register_into(_spelled(name, spec), routine)
    result = _extern_node(name, key, (target, *arrays), tuple(target.shape), target.dtype,
                          writes=True)  # [LAYOUT] the target's layout (`lower.op_strides`)
    api._rebind(target, result.value)


_SLOT = "array"  # where an index array sits in an index template


def _index_template(index: Any, arrays: list[Any]) -> Any:
    items = index if isinstance(index, tuple) else (index,)
    template = []
    for it in items:
        if isinstance(it, (Tracer, np.ndarray, list)):
            arrays.append(api.index_array(it))
            template.append(_SLOT)
        elif it is None or it is Ellipsis or isinstance(it, (slice, int, np.integer)):
            template.append(it)
        else:
            raise unsupported(f"assignment with index {it!r}")
    return tuple(template)


def scatter(a: Tracer, index: Any, value: Any) -> None:
    """`a[index] = value` with integer or boolean arrays in the index: NumPy's own setitem."""
    arrays: list[Any] = []
    template = _index_template(index, arrays)

    def write(copy: np.ndarray, v: np.ndarray, *idx: np.ndarray) -> None:
        it = iter(idx)
        copy[tuple(next(it) if t == _SLOT else t for t in template)] = v

    _written("setitem", write, a, [value, *arrays], index=template)


def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    if not isinstance(a, Tracer):
        raise unsupported(f"np.{ufunc.__name__}.at on an array that is not traced")
    arrays: list[Any] = []
    template = _index_template(indices, arrays)
    with_b, as_tuple = b is not None, isinstance(indices, tuple)

    def write(copy: np.ndarray, *rest: np.ndarray) -> None:  # (no Tracer in its closure)
        it = iter(rest[1:] if with_b else rest)
        idx = tuple(next(it) if t == _SLOT else t for t in template)
        ufunc.at(copy, idx if as_tuple else idx[0], *((rest[0],) if with_b else ()))

    _written(f"np.{ufunc.__name__}.at", write, a, ([b] if with_b else []) + arrays,
             index=template, tuple_index=as_tuple)


def _in_place(name: str, numpy_fn: Callable[..., Any], n_arrays: int
              ) -> Callable[..., None]:
    """np.put / np.place / np.putmask / np.fill_diagonal / np.copyto on a traced target."""
    def call(a: Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(a, Tracer):
            raise unsupported(f"np.{name} into an array that is not traced")
        arrays, static = list(args[:n_arrays]), args[n_arrays:]
        if arrays and _python_literal(arrays[-1]):
            # [HUNT4] values written as Python objects (`[255]`, `2.5`) go to NumPy as
            # written: it converts them to the target's dtype (np.place casts an array 'safe')
            static = (arrays.pop(), *static)
        n_given = len(arrays)
        has_where = "where" in kwargs
        if has_where:
            arrays.append(kwargs.pop("where"))
        if builtins.any(isinstance(v, Tracer) for v in (*static, *kwargs.values())):
            raise unsupported(f"np.{name} with traced options")

        def write(copy: np.ndarray, *rest: np.ndarray) -> None:
            extra = {"where": rest[-1]} if has_where else {}
            numpy_fn(copy, *rest[:n_given], *static, **kwargs, **extra)

        # `where` in the key: an extern key keeps the routine first registered under it
        _written(f"np.{name}", write, a, arrays, static=static, options=kwargs,
                 where=has_where)
    return call


def _python_literal(v: Any) -> bool:
    """A Python number, or a list or tuple of them (nested): a value NumPy converts itself."""
    if isinstance(v, (list, tuple)):
        return builtins.all(_python_literal(o) for o in v)
    return type(v) in (bool, int, float, complex)


# LAPACK: (routine, result shapes from the input shape, number of results)
def _linalg(name: str, *args: Any, **kwargs: Any) -> Any:
    routine = getattr(np.linalg, name)
    xs = [traced(a, args) for a in args]
    x = xs[0]
    if x.ndim < 2:
        raise np.linalg.LinAlgError(f"{x.ndim}-dimensional array given. Array must be at "
                                    "least two-dimensional")
    probes = [_probe(t, square=True) if t.ndim >= 2 else np.ones(2, t.dtype) for t in xs]
    sample = routine(*probes, **kwargs)
    batch, (m, n) = tuple(x.shape[:-2]), tuple(x.shape[-2:])
    k = builtins.min(m, n)
    if name in ("solve",):
        b = xs[1]
        # [HUNT3] a 1-d b is one vector solved against every matrix of the stack (NumPy 2)
        shapes: Any = batch + tuple(b.shape) if b.ndim == 1 else \
            api.broadcast_shapes(batch, tuple(b.shape[:-2])) + tuple(b.shape[-2:])
    elif name in ("inv", "cholesky", "pinv"):
        shapes = batch + (n, m) if name == "pinv" else tuple(x.shape)
    elif name == "det":
        shapes = batch
    elif name in ("eigvalsh",):
        shapes = batch + (n,)
    elif name == "eigh":
        shapes = [batch + (n,), tuple(x.shape)]
    elif name == "slogdet":
        shapes = [batch, batch]
    elif name == "qr":
        mode = kwargs.get("mode", "reduced")
        if mode == "r":
            shapes = batch + (k, n)
        elif mode == "complete":
            shapes = [batch + (m, m), batch + (m, n)]
        elif mode == "reduced":
            shapes = [batch + (m, k), batch + (k, n)]
        else:
            raise unsupported(f"np.linalg.qr with mode={mode!r}")
    elif name == "svd":
        full = kwargs.get("full_matrices", True)
        if not kwargs.get("compute_uv", True):
            shapes = batch + (k,)
        else:
            shapes = [batch + (m, m if full else k), batch + (k,),
                      batch + (n if full else k, n)]
    else:
        raise unsupported(f"np.linalg.{name}")
    spelled = f"np.linalg.{name}"
    if isinstance(shapes, list):
        outs = [_extern(spelled, routine, xs, shape, np.asarray(part).dtype, i, **kwargs)
                for i, (shape, part) in enumerate(zip(shapes, sample, strict=True))]
        return type(sample)(*outs)
    return _extern(spelled, routine, xs, shapes, np.asarray(sample).dtype, **kwargs)


def linalg_function(name: str) -> Callable[..., Any]:
    arrays = 2 if name == "solve" else 1

    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) != arrays or (name not in ("qr", "svd") and builtins.any(
                k not in ("UPLO", "upper") for k in kwargs)):
            raise unsupported(f"np.linalg.{name} with these arguments")
        return _linalg(name, *args, **kwargs)
    return call


def matrix_power(a: Any, n: Any) -> Tracer:
    """[HUNT] np.linalg.matrix_power by NumPy's binary decomposition of `n` into matmuls
    (the inverse first for n < 0, the identity for n == 0)."""
    t = traced(a, (a,))
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    if t.ndim < 2:
        raise np.linalg.LinAlgError(f"{t.ndim}-dimensional array given. Array must be at "
                                    "least two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:
        eye = np.eye(t.shape[-1], dtype=t.dtype)
        return api.copy_(api.broadcast_to(traced(eye, (t,)), tuple(t.shape)))
    if n < 0:
        t, n = _linalg("inv", t), -n
    result: Tracer | None = None
    power = t
    while True:  # NumPy's order: squarings of t, multiplied in as the bits of n are set
        if n & 1:
            result = power if result is None else api.matmul(result, power)
        n >>= 1
        if not n:
            break
        power = api.matmul(power, power)
    assert result is not None
    return result  # n == 1: `a` itself, as NumPy returns it


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None
                ) -> Tracer:
    """[HUNT8] np.linalg.matrix_rank of a matrix or a stack with NumPy's default tolerance:
    the singular values above S.max() * max(M, N) * eps, counted."""
    t = traced(A, (A,))
    if tol is not None or rtol is not None or hermitian or t.ndim < 2:
        raise unsupported("np.linalg.matrix_rank with tol=, rtol=, hermitian= or of fewer "
                          "than 2 dimensions")
    s = _linalg("svd", t, compute_uv=False)
    eps = np.finfo(s.dtype).eps * builtins.max(t.shape[-2:])
    return count_nonzero(s > api.max(s, axis=-1, keepdims=True) * eps, axis=-1)


def cond(x: Any, p: Any = None) -> Tracer:
    """[HUNT] np.linalg.cond for p None/2/-2: the ratio of extreme singular values (inf
    where it is NaN and x has no NaN, as NumPy)."""
    if p not in (None, 2, -2):
        raise unsupported(f"np.linalg.cond with p={p!r}")
    t = traced(x, (x,))
    s = _linalg("svd", t, compute_uv=False)
    first, last = s[..., 0], s[..., -1]
    r = api.apply_ufunc("true_divide", *((last, first) if p == -2 else (first, last)))
    nan = api.apply_ufunc("logical_and", api.apply_ufunc("isnan", r), api.apply_ufunc(
        "logical_not", api.any(api.apply_ufunc("isnan", t), axis=(-2, -1))))
    return api.where(nan, np.inf, r)


def block(arrays: Any) -> Tracer:
    """[HUNT] np.block of nested lists of uniform depth d: the leaves brought to
    max(d, their ndim) dimensions (leading 1s), the innermost lists joined along the last
    axis, each outer level along the axis before. Other forms are NumPy's."""
    def depth(obj: Any) -> int:
        if not isinstance(obj, list):
            return 0
        depths = {depth(o) for o in obj}
        if len(depths) != 1 or not obj:
            raise unsupported("np.block of nested lists of different depths or empty ones")
        return 1 + depths.pop()
    def leaves(obj: Any) -> Iterator[Any]:
        yield from (leaf for o in obj for leaf in leaves(o)) if isinstance(obj, list) else (obj,)
    d = depth(arrays)
    found = list(leaves(arrays))
    nd = builtins.max(d, *(np.ndim(v) if not isinstance(v, Tracer) else v.ndim for v in found))
    def join(obj: Any, level: int) -> Tracer:
        if not isinstance(obj, list):
            t = traced(obj, found)
            return api.reshape(t, (1,) * (nd - t.ndim) + tuple(t.shape))
        return api.concatenate([join(o, level + 1) for o in obj], axis=level - d)
    return join(arrays, 0) if d else api.copy_(traced(arrays, (arrays,)))


def inner(a: Any, b: Any) -> Tracer:
    """[B16] Sum over the last axes (a product with a scalar where one is 0-d)."""
    x, y = traced(a, (a, b)), traced(b, (a, b))
    if x.ndim == 0 or y.ndim == 0:
        return api.apply_ufunc("multiply", x, y)
    return tensordot(x, y, axes=(-1, -1))


def vdot(a: Any, b: Any) -> Tracer:
    """[B16] The conjugated first operand, both flattened, summed products."""
    x, y = traced(a, (a, b)), traced(b, (a, b))
    if x.size != y.size:
        raise ValueError("cannot reshape array: vdot needs arrays of the same size")
    x = api.apply_ufunc("conjugate", x) if x.dtype.kind == "c" else x  # (bool stays bool)
    products = api.apply_ufunc("multiply", api.ravel(x), api.ravel(y))
    return api.sum(products, dtype=products.dtype)  # [FIX16] NumPy's dot: in that dtype


def kron(a: Any, b: Any) -> Tracer:
    """[B16] Block products: a's axes interleaved with b's (the shorter shape padded with
    leading 1s), then each pair of axes merged."""
    x, y = traced(a, (a, b)), traced(b, (a, b))
    nd = builtins.max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + tuple(x.shape)
    ys = (1,) * (nd - y.ndim) + tuple(y.shape)
    xr = api.reshape(x, tuple(d for n in xs for d in (n, 1)))
    yr = api.reshape(y, tuple(d for n in ys for d in (1, n)))
    return api.reshape(api.apply_ufunc("multiply", xr, yr),
                       tuple(m * n for m, n in zip(xs, ys, strict=True)))


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    """[B16] Differences of the flattened array, with the ends cast to its dtype as NumPy
    does (refusing casts that are not same_kind)."""
    x = api.ravel(traced(ary, (ary,)))
    parts = [api.apply_ufunc("subtract", x[1:], x[:-1])]  # [FIX16] (bool: NumPy's TypeError)
    for end, front in ((to_begin, True), (to_end, False)):
        if end is None:
            continue
        e = traced(end, (ary,))
        if not np.can_cast(e.dtype, x.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{'to_begin' if front else 'to_end'}` must be "
                            "compatible with input `ary` under the `same_kind` rule.")
        e = api.ravel(api.astype(e, x.dtype))
        parts.insert(0 if front else len(parts), e)
    return api.concatenate(parts) if len(parts) > 1 else parts[0]


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, **kw: Any) -> Any:
    """[B16] np.linspace of traced scalar ends (a count known while tracing): NumPy's own
    steps — arange * step (or / div * delta where the step is 0) + start, the last = stop."""
    if kw or axis != 0 or builtins.any(np.ndim(v) for v in (start, stop)):
        raise unsupported("np.linspace of array ends, with axis= or other arguments")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = result_type(start, stop, 1.0)
    ends = [api.astype(v, dt) if isinstance(v, Tracer) else np.asarray(v, dt)
            for v in (start, stop)]
    delta = np.subtract(ends[1], ends[0])  # NumPy's subtract(stop, start, dtype=dt)
    y: Any = np.arange(0, num, dtype=dt)
    if div > 0:
        step = np.true_divide(delta, div)
        y = np.where(step == 0, y / div * delta, y * step)
    else:
        step, y = np.nan, y * delta
    y = traced(np.add(y, start), (start, stop))
    if endpoint and num > 1:
        y[-1] = stop
    if dtype is not None and np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    y = y if dtype is None else api.astype(y, dtype)
    return (y, step) if retstep else y


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """[B16] Known while tracing: a traced array stands for its dtype, a traced Python scalar
    argument for a Python scalar of its kind (weak under NEP 50)."""
    def stand_in(a: Any) -> Any:
        if not isinstance(a, Tracer):
            return a
        return {"b": False, "i": 0, "f": 0.0, "c": 0j}[a.dtype.kind] if a.weak else a.dtype
    return np.result_type(*map(stand_in, arrays_and_dtypes))



# ---- [HUNT] editing along an axis (static positions), NumPy 2 names ----

def _strong(x: Any, like: Sequence[Any]) -> Tracer:
    """`np.asarray(x)`: a traced Python scalar becomes a strong 0-d array (NEP 50)."""
    t = traced(x, like)
    return api.wrap(t.builder, api.to_value(t.builder, t)) if t.weak else t


def _static_positions(obj: Any, what: str) -> Any:
    """Positions known while tracing (ints, slices, lists); traced ones are a break."""
    if isinstance(obj, Tracer):
        if obj.concrete is None:
            raise unsupported(f"{what} at positions computed from the data")
        return obj.python_value()
    return obj


def _flat_or(arr: Tracer, axis: Any) -> tuple[Tracer, int]:
    return (api.ravel(arr), 0) if axis is None else (arr, _axis(axis, arr.ndim))


def append(arr: Any, values: Any, axis: Any = None) -> Tracer:
    """np.append: both flattened (axis=None) or joined along `axis`; values are NumPy's
    array of them (a Python scalar is strong)."""
    x, v = _strong(arr, (arr, values)), _strong(values, (arr, values))
    if axis is None:
        return api.concatenate([api.ravel(x), api.ravel(v)])
    return api.concatenate([x, v], axis=axis)


def delete(arr: Any, obj: Any, axis: Any = None) -> Tracer:
    """np.delete at positions known while tracing: the kept positions (NumPy's own on an
    arange, with its errors) taken along the axis."""
    x, ax = _flat_or(traced(arr, (arr,)), axis)
    keep = np.delete(np.arange(x.shape[ax]), _static_positions(obj, "np.delete"))
    return api.take(x, keep, axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tracer:
    """np.insert at positions known while tracing: `values` shaped as NumPy does (a block at
    one position, or one slice per position), cast to arr's dtype, appended along the axis,
    then put in place by a gather whose order is NumPy's own np.insert of an arange."""
    x, ax = _flat_or(traced(arr, (arr, values)), axis)
    where = _static_positions(obj, "np.insert")
    v = traced(values, (arr, values))
    n = x.shape[ax]
    if np.ndim(where) == 0 and not isinstance(where, slice):
        v = api.reshape(v, (1,) * (x.ndim - v.ndim) + tuple(v.shape)) if v.ndim < x.ndim else v
        v = api.moveaxis(v, 0, ax)
        count = v.shape[ax]
    else:
        count = len(np.arange(n)[where]) if isinstance(where, slice) else len(where)
    shape = tuple(count if d == ax else s for d, s in enumerate(x.shape))
    v = api.broadcast_to(api.astype(v, x.dtype, copy=False), shape)
    order = np.insert(np.arange(n), where, n + np.arange(count))
    return api.take(api.concatenate([x, v], axis=ax), order, axis=ax)


APPLY_SLICES = 64  # [HUNT5] np.apply_along_axis traces func1d once per slice, up to this many


def apply_along_axis(func1d: Callable[..., Any], axis: Any, arr: Any, *args: Any,
                     **kwargs: Any) -> Tracer:
    """[HUNT5] np.apply_along_axis as NumPy runs it: `func1d` (traced) on each 1-d slice along
    `axis` in C order, the results stacked where the axis was, in the first result's dtype
    (NumPy fills a buffer of it). Unrolled: over more than APPLY_SLICES slices, a graph break
    (NumPy's loop, not a trace growing with the data)."""
    x = traced(arr, (arr,))
    ax = _axis(axis, x.ndim)
    moved = api.moveaxis(x, ax, -1)
    outer = tuple(operator.index(d) for d in moved.shape[:-1])
    if math.prod(outer) == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    if math.prod(outer) > APPLY_SLICES:
        raise unsupported(f"np.apply_along_axis over more than {APPLY_SLICES} slices")
    breaks = getattr(x.builder, "breaks", [])  # a call with graph breaks: its breaks so far
    seen, results = len(breaks), []
    for idx in np.ndindex(*outer):
        r = func1d(moved[idx], *args, **kwargs)
        if len(breaks) > seen:  # func1d breaks (a break per slice, per call): NumPy's loop
            raise unsupported("np.apply_along_axis of a function with a graph break")
        results.append(traced(r, (x, r)))
    stacked = api.astype(api.stack(results), results[0].dtype, copy=False)
    res_ndim = results[0].ndim
    shaped = api.reshape(stacked, outer + tuple(results[0].shape))
    order = (*range(ax), *range(len(outer), len(outer) + res_ndim), *range(ax, len(outer)))
    return api.transpose(shaped, order)


def vander(x: Any, N: Any = None, increasing: bool = False) -> Tracer:  # noqa: N803 - NumPy's
    """[HUNT5] np.vander by NumPy's algorithm: a column of ones, then running products of x
    (`multiply.accumulate`: the same roundings as NumPy's), in the type of x and int."""
    v = traced(x, (x,))
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else operator.index(N)
    col = api.reshape(api.astype(v, np.promote_types(v.dtype, int)), (-1, 1))
    if n <= 1:
        return api.ones_like(col) if n == 1 else api.broadcast_to(col, (v.shape[0], 0)).copy()
    powers = api.cumprod(api.broadcast_to(col, (v.shape[0], n - 1)), axis=1)
    columns = [api.ones_like(col), powers if increasing else powers[:, ::-1]]
    return api.concatenate(columns if increasing else columns[::-1], axis=1)


def resize(a: Any, new_shape: Any) -> Tracer:
    """np.resize: the flattened array repeated to the new size (zeros when either is empty)."""
    x = api.ravel(traced(a, (a,)))
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(
        operator.index(n) for n in new_shape)
    size = int(np.prod(shape))
    if builtins.any(n < 0 for n in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    if x.size == 0 or size == 0:
        return api.zeros_like(x, shape=shape)
    reps = -(-size // x.size)
    whole = api.concatenate([x] * reps) if reps > 1 else x
    return api.reshape(whole[:size], shape)


def astype_function(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tracer:
    """np.astype (NumPy 2)."""
    if device not in (None, "cpu"):
        raise ValueError(f"Device not understood. Only \"cpu\" is allowed, but received: {device}")
    return api.astype(traced(x, (x,)), dtype, copy=copy)


def _cumulative(name: str) -> Callable[..., Tracer]:
    """np.cumulative_sum / np.cumulative_prod (NumPy 2): cumsum / cumprod along `axis`
    (required above 1-d, NumPy's checks on a stand-in of the same rank), with the identity
    first when include_initial."""
    scan, identity = (api.cumsum, 0) if name == "cumulative_sum" else (api.cumprod, 1)

    def cumulative(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Tracer:
        if out is not None:
            raise unsupported(f"np.{name} with out=")
        t = traced(x, (x,))
        stand_in = np.broadcast_to(np.zeros((), t.dtype), (1,) * t.ndim)
        res = getattr(np, name)(stand_in, axis=axis, dtype=dtype)
        ax = 0 if axis is None else _axis(axis, t.ndim)
        y = api.astype(scan(t, axis=ax, dtype=dtype), res.dtype, copy=False)
        if not include_initial:
            return y
        shape = tuple(1 if d == ax else s for d, s in enumerate(y.shape))
        first = api.wrap(t.builder, api.broadcast_value(
            t.builder, api.to_value(t.builder, np.asarray(identity, res.dtype)), shape))
        return api.concatenate([first, y], axis=ax)
    return cumulative


def _indices_from(name: str) -> Callable[..., tuple[np.ndarray, ...]]:
    """np.triu_indices_from / np.tril_indices_from / np.diag_indices_from: constants from the
    shape alone (NumPy's own function on a stand-in of that shape, its errors included)."""
    def indices_from(arr: Any, *args: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        shape = tuple(traced(arr, (arr,)).shape)
        return getattr(np, name)(np.broadcast_to(np.zeros((), bool), shape), *args, **kwargs)
    return indices_from

# ---- registration ----

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.diff: diff, np.roll: roll, np.flip: flip, np.fliplr: fliplr, np.flipud: flipud,
    np.rot90: rot90, np.pad: pad, np.gradient: gradient, np.trapezoid: trapezoid,
    np.result_type: result_type, np.linspace: linspace, np.inner: inner,  # [B16]
    np.vdot: vdot, np.kron: kron, np.ediff1d: ediff1d,
    np.diagonal: diagonal, np.diag: diag, np.diagflat: diagflat, np.sinc: sinc,  # [HUNT3]
    np.isposinf: isposinf, np.isneginf: isneginf,  # [HUNT6]
    np.broadcast_arrays: broadcast_arrays, np.tril: tril, np.triu: triu, np.tile: tile,
    np.repeat: repeat,
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d,
    np.vstack: vstack, np.hstack: hstack, np.dstack: dstack, np.column_stack: column_stack,
    np.outer: outer, np.tensordot: tensordot, np.einsum: einsum,
    np.lib.stride_tricks.sliding_window_view: sliding_window_view,
    np.array_split: array_split, np.split: split,
    np.hsplit: _split_along("hsplit", 1, lambda ndim: 1 if ndim > 1 else 0),
    np.vsplit: _split_along("vsplit", 2, lambda ndim: 0),
    np.dsplit: _split_along("dsplit", 3, lambda ndim: 2),
    np.count_nonzero: count_nonzero, np.ptp: ptp, np.fix: fix, np.nan_to_num: nan_to_num,
    np.isin: isin, np.cross: cross, np.nansum: nansum, np.nanmean: nanmean,
    np.nanprod: _nan_reduced("nanprod", api.prod, 1.0),
    np.nancumsum: _nan_reduced("nancumsum", api.cumsum, 0.0),
    np.nancumprod: _nan_reduced("nancumprod", api.cumprod, 1.0),
    np.nanmax: nanmax, np.nanmin: nanmin, np.nanvar: nanvar, np.nanstd: nanstd,
    np.average: average, np.cov: cov, np.corrcoef: corrcoef, np.isclose: isclose,
    np.allclose: allclose, np.array_equal: array_equal, np.unwrap: unwrap, np.put: put,
    np.piecewise: piecewise, np.iscomplexobj: iscomplexobj, np.isrealobj: isrealobj,
    np.array_equiv: array_equiv, np.select: select, np.choose: choose, np.polyval: polyval,
    np.polyfit: polyfit, np.polyder: polyder, np.polyint: polyint,
    np.trace: trace,
    np.linalg.norm: norm, np.meshgrid: meshgrid, np.ix_: ix_, np.sort: sort, np.argsort: argsort,
    np.partition: partition, np.median: median, np.percentile: percentile,
    np.quantile: quantile, np.bincount: bincount, np.unpackbits: unpackbits,
    np.packbits: packbits, np.argpartition: argpartition, np.lexsort: lexsort,
    np.nanargmax: _nan_arg("nanargmax"), np.nanargmin: _nan_arg("nanargmin"),
    np.nanmedian: nanmedian, np.nanpercentile: nanpercentile, np.nanquantile: nanquantile,
    np.put_along_axis: _in_place("put_along_axis", np.put_along_axis, 2),
    np.searchsorted: searchsorted, np.digitize: digitize,
    np.unravel_index: unravel_index, np.ravel_multi_index: ravel_multi_index,  # [HUNT2]
    np.interp: interp, np.convolve: convolve, np.correlate: correlate,
    np.histogram: histogram, np.histogram2d: histogram2d, np.put: _in_place("put", np.put, 2),
    np.place: _in_place("place", np.place, 2), np.putmask: _in_place("putmask", np.putmask, 2),
    np.fill_diagonal: _in_place("fill_diagonal", np.fill_diagonal, 1),
    np.copyto: _in_place("copyto", np.copyto, 1),
    np.append: append, np.delete: delete, np.insert: insert, np.resize: resize,  # [HUNT]
    np.vander: vander, np.apply_along_axis: apply_along_axis,
    np.astype: astype_function, np.cumulative_sum: _cumulative("cumulative_sum"),
    np.cumulative_prod: _cumulative("cumulative_prod"),
    np.triu_indices_from: _indices_from("triu_indices_from"),
    np.tril_indices_from: _indices_from("tril_indices_from"),
    np.diag_indices_from: _indices_from("diag_indices_from"),
    np.linalg.vector_norm: vector_norm, np.linalg.matrix_norm: matrix_norm,
    np.linalg.matrix_transpose: matrix_transpose, np.matrix_transpose: matrix_transpose,
    np.linalg.vecdot: vecdot, np.linalg.matrix_power: matrix_power, np.linalg.cond: cond,
    np.linalg.matrix_rank: matrix_rank, np.linalg.diagonal: linalg_diagonal,
    np.linalg.trace: linalg_trace, np.linalg.outer: linalg_outer,
    np.histogram_bin_edges: histogram_bin_edges,
    **{getattr(np.fft, n): _fft(n) for n in ("fft", "ifft", "rfft", "irfft")},
    **{getattr(np.fft, n): _fftn(n) for n in ("fft2", "ifft2", "rfft2", "irfft2", "fftn",
                                              "ifftn", "rfftn", "irfftn")},
    np.linalg.multi_dot: multi_dot,
    np.fft.fftshift: _fftshift(1), np.fft.ifftshift: _fftshift(-1),
    np.block: block,
    **({np.in1d: in1d} if hasattr(np, "in1d") else {}),  # (deprecated in NumPy 2.0)
    **{getattr(np.linalg, n): linalg_function(n) for n in (
        "solve", "inv", "det", "cholesky", "eigh", "eigvalsh", "slogdet", "qr", "svd",
        "pinv")},
}


def mask_assign(a: Tracer, index: Any, value: Any) -> bool:
    """`a[mask] = scalar` as `where(mask, scalar, a)` (NumPy casts with 'unsafe'). False when
    the assignment is not of that form (a value per selected element is data-dependent)."""
    is_mask = isinstance(index, (Tracer, np.ndarray)) and index.dtype == np.bool_
    if not is_mask or tuple(index.shape) != tuple(a.shape[:index.ndim]) or index.ndim == 0:
        return False
    size = value.size if isinstance(value, (Tracer, np.ndarray)) else np.size(value)
    if size != 1 or isinstance(value, (list, tuple)):
        return False
    a.check_fresh()
    b = a.builder
    val = api.operand_value(b, _scalar_value(value), a.dtype)
    if val.ndim:
        val = b.add("reshape", (val,), (), val.dtype, shape=())
    mask = api.reshape(traced(index, (a,)), tuple(index.shape) + (1,) * (a.ndim - index.ndim))
    new = api.where(mask, api.wrap(b, val), a)
    api._rebind(a, new.value)
    return True


# ---- x[mask] (a data-dependent shape) kept lazy ----

def _scalar_like(v: Any) -> bool:
    """A value that broadcasts against any selection the same way (one element)."""
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return True
    return isinstance(v, (Tracer, np.ndarray)) and v.ndim <= 1 and \
        sym.surely(v.size, "==", 1)  # [COMPACT] no guard: a data size may be 1


class Masked(Tracer):
    """[H16] `x[mask]` for a boolean mask over x's leading axes: its shape depends on the data,
    so it stays lazy. Arithmetic with one-element values, in place or not, and assignment back
    under the same mask (`x[m] += 1`, `x[m] *= 0.5`, `x[m] = y[m] * 2 - 1`) compile as
    `where(mask, f(x), x)` over the whole array; any other use reads `value`, which
    materializes `x[mask]` (a graph break, at the values the selection was taken from).
    `full` holds f(x) for every element: only operations that cannot fail or warn on the
    elements outside the mask are kept lazy (no integer division or power *by* the selection).
    Not registered with the builder as a live array: it has no value until materialized."""

    def __init__(self, full: Tracer, mask: Any) -> None:  # no Tracer.__init__
        from stax.frontend.breaks import _location

        self.builder, self.full, self.mask = full.builder, full, mask
        self.where = _location()[0]  # the user's line, named by a break when materialized
        self.weak, self.parent, self.view_op, self.base = False, None, None, None
        self.base_version = self.version = 0
        self.concrete = None
        self.layout, self.scalar, self.array0 = None, False, False  # [FUZZ] as Tracer's
        self.born = None  # [HUNT3] made by its selection, when materialized (C order)
        self._value: Value | None = None
        # [SPMASK] why it is materialized, when it is (for stax.explain)
        self.why = "used as a value (an op or a use the whole-array form does not cover)"

    @property  # type: ignore[override]
    def value(self) -> Value:
        if self._value is None:
            from stax.frontend.data_dependent import select  # [DYN16] sized at run time

            self.builder.masked.append(
                f"{self.where}: x[mask] gathered (the selection first, sized at run time), "
                f"then scattered back if assigned: {self.why}")
            selected = select(self.full, self.mask, self.where)
            if selected is not None:
                self._value = selected.value
                return self._value
            selected = self.builder.eager(operator.getitem, (self.full, self.mask), {},
                                          NotImplementedError(
                "stax.jit: boolean mask indexing (its result shape depends on the data)"),
                                          self.where)
            self._value = selected.value
        return self._value

    @value.setter
    def value(self, new: Value) -> None:  # an assignment into the materialized selection
        self._value = new

    @property
    def dtype(self) -> np.dtype:
        return self.full.dtype

    @property
    def ndim(self) -> int:
        return self.full.ndim - np.ndim(self.mask) + 1

    def same_mask(self, mask: Any) -> bool:
        if isinstance(mask, Tracer) and isinstance(self.mask, Tracer):
            return _computed_alike(self.builder, mask.value, self.mask.value)
        return mask is self.mask

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """[MASK] `np.exp(x[m])`, `np.maximum(x[m], y[m])`: lazy too (computed over the whole
        arrays, `y[m] = np.exp(x[m]) * y[m]` a `where` in one vectorized loop) when every
        operand is lazy under this mask or has one element, and the op cannot fail on the
        elements outside it (no error flag: float and complex operands, or an op without
        flags). Cost rule: not when the op is a scalar glibc complex function (`cexp`,
        `cpow`, ...: tens of ns per element, and a sparse mask selects few); then, as for
        any other op, `x[m]` is materialized (the selection first, the op on it)."""
        op = ops.by_ufunc(ufunc)
        parts = [a for a in inputs if isinstance(a, Masked)]
        if method == "__call__" and not kwargs and op is not None and ufunc.nout == 1 and \
                builtins.all(a._value is None and self.same_mask(a.mask) for a in parts) and \
                builtins.all(isinstance(a, Masked) or _scalar_like(a) for a in inputs):
            kinds = {(a.dtype if hasattr(a, "dtype") else np.result_type(a)).kind
                     for a in inputs}
            if (not op.flags or kinds <= set("fc")) and not ("c" in kinds and
                                                              op.cpp.complex_scalar):
                return Masked(ufunc(*(api.wrap(self.builder, a.full.value)
                                      if isinstance(a, Masked) else a for a in inputs)),
                              self.mask)
            why = (f"np.{ufunc.__name__} on complex is a scalar glibc function, computed on "
                   "the selected elements only" if "c" in kinds and op.cpp.complex_scalar else
                   f"np.{ufunc.__name__} may fail or warn on the elements outside the mask "
                   "(integer operands)")
            for a in parts:
                a.why = why
        return Tracer.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)


def _computed_alike(b: Builder, v: Value, w: Value, depth: int = 4) -> bool:
    """[B16] `v` and `w` are one value, or the same ops on alike inputs (`x[x > 0] =
    x[x > 0] ** -1.5` builds its mask twice; CSE's keys, which never merge inputs or
    constant arrays)."""
    from stax.cse import _key

    if v == w:
        return True
    p, q = (None if hit is None else hit[1] for hit in (b.producer(v.id), b.producer(w.id)))
    if depth == 0 or p is None or q is None or len(p.inputs) != len(q.inputs):
        return False
    key = _key(p, ())
    return key is not None and key == _key(q, ()) and builtins.all(
        _computed_alike(b, x, y, depth - 1) for x, y in zip(p.inputs, q.inputs, strict=True))


def _masked_operator(py: str, reflected_ok: bool, kind: str) -> Callable[..., Any]:
    """`m op v` (kind ""), `v op m` ("r") or `m op= v` ("i") for a Masked `m`: lazy when `v`
    has one element (and, reflected, when the op cannot fail on the selection's values), or
    [HUNT4] when `v` is lazy under the same mask and the op cannot fail on either's values
    (`Z[m] ** 2 + C[m]`: computed over the whole arrays, assigned back under the mask)."""
    name = f"__{kind}{py}__"

    def op(self: Masked, other: Any) -> Any:
        lazy = None
        if self._value is None and isinstance(other, Masked) and other._value is None:
            if reflected_ok and self.same_mask(other.mask):  # (its size would materialize it)
                full = api.wrap(self.builder, self.full.value)
                lazy = getattr(Tracer, name)(full, other.full)
        elif self._value is None and _scalar_like(other) and (kind != "r" or reflected_ok):
            lazy = getattr(Tracer, name)(api.wrap(self.builder, self.full.value), other)
        if lazy is None:
            why = (f"`{py}` may fail or warn on the elements outside the mask" if not
                   reflected_ok and (isinstance(other, Masked) or kind == "r") else
                   "an operand is neither one element nor selected by the same mask")
            for a in (self, other):
                if isinstance(a, Masked) and a._value is None:
                    a.why = why  # [SPMASK]
            return getattr(Tracer, name)(self, other)
        if kind == "i":  # [FUZZ s15] in place: every name for the selection sees the new
            self.full = lazy  # values, as NumPy's (`n = x[m]; n += 1; return x[m]`'s n)
            return self
        return Masked(lazy, self.mask)
    return op


# Python operators kept lazy: name -> also when reflected (v op m)
_LAZY_OPS = {"add": True, "sub": True, "mul": True, "truediv": True, "floordiv": False,
             "mod": False, "pow": False, "and": True, "or": True, "xor": True}
for _py, _reflected in _LAZY_OPS.items():
    for _kind in ("", "r", "i"):
        setattr(Masked, f"__{_kind}{_py}__", _masked_operator(_py, _reflected, _kind))
Masked.__neg__ = lambda self: (  # type: ignore[method-assign]
    Masked(-self.full, self.mask) if self._value is None else Tracer.__neg__(self))


def _full_mask(a: Tracer, index: Any, k: int = 0) -> Any:
    """`index` as a boolean mask over `a`'s leading axes (a Tracer or an ndarray), or None;
    over its axes from `k` on [SEL]."""
    if isinstance(index, list) and index and builtins.all(
            isinstance(i, (bool, np.bool_)) for i in index):
        index = np.asarray(index)
    if not isinstance(index, (Tracer, np.ndarray)) or index.dtype != np.bool_ or \
            index.ndim == 0 or tuple(index.shape) != tuple(a.shape[k:k + index.ndim]):
        return None
    return index


def _inner_mask(a: Tracer, index: Any) -> tuple[tuple[Any, ...], int, Any] | None:
    """[SEL] `index` = slices (`...` too) and one boolean mask (`x[:, m]`, `x[1:, m]`,
    `x[..., m]`, `x[m, 1:]`) as (the slices, with `:` over the mask's axes; the mask's first
    axis; the mask), or None. No integers: NumPy moves the selected axis first when an
    integer is separated from the mask."""
    if not isinstance(index, tuple):
        return None
    at = [k for k, i in enumerate(index) if not isinstance(i, (slice, type(Ellipsis)))]
    dots = builtins.sum(i is Ellipsis for i in index)
    if len(at) != 1 or dots > 1:
        return None
    mask = np.asarray(index[at[0]]) if isinstance(index[at[0]], list) else index[at[0]]
    if not isinstance(mask, (Tracer, np.ndarray)) or mask.ndim == 0:
        return None
    fill = a.ndim - (len(index) - 1 - dots + mask.ndim)  # the axes `...` spans
    items: list[Any] = []
    for k, i in enumerate(index):
        if k == at[0]:
            first = len(items)
        items += [slice(None)] * (fill if i is Ellipsis else mask.ndim if k == at[0] else 0) \
            or [i]
    mask = _full_mask(a, mask, first) if fill >= 0 else None
    return None if mask is None else (tuple(items), first, mask)


def masked_assign(a: Tracer, index: Any, value: Masked) -> bool:
    """`a[mask] = value` with `value` lazy under the same mask: where(mask, value, a)."""
    mask = _full_mask(a, index)
    if mask is None or value._value is not None or not value.same_mask(mask) or \
            tuple(value.full.shape) != tuple(a.shape):
        return False
    a.check_fresh()
    m = api.reshape(traced(mask, (a,)), tuple(mask.shape) + (1,) * (a.ndim - mask.ndim))
    full = value.full
    if full.dtype.kind in "fc" and a.dtype.kind in "iu":  # [HUNT4] NumPy casts only the
        full = api.where(m, full, 0)  # selection: no invalid-cast flag for NaN/inf outside it
    new = api.where(m, api.astype(full, a.dtype, copy=False), a)
    api._rebind(a, new.value)
    from stax.frontend.breaks import _location

    a.builder.masked.append(
        f"{_location()[0]}: a[mask] = f(a[mask]) as where(mask, f(a), a) over the whole array "
        "(f cannot fail or warn outside the mask; a kernel's mask_skip computes a costly f "
        "only in blocks the mask selects an element of)")
    return True


def _scalar_value(value: Any) -> Any:
    """[H16] A value assigned into an array: Python scalars stay Python scalars (converted as
    NumPy's setitem: OverflowError out of range), anything else an array."""
    if isinstance(value, (Tracer, bool, int, float, complex)):
        return value
    return np.asarray(value)


# ---- ndarray methods ----

def _sort_method(self: Tracer, axis: Any = -1, kind: Any = None, order: Any = None, *,
                 stable: Any = None) -> None:
    """`x.sort()`: in place, as in NumPy (views write through to their base)."""
    result = sort(self, axis, kind, order, stable=stable)
    self.check_fresh()
    api._rebind(self, result.value)


def _fill_method(self: Tracer, value: Any) -> None:
    if isinstance(value, (Tracer, np.ndarray, list, tuple)) and np.size(value) != 1:
        raise unsupported("ndarray.fill with an array")
    self.check_fresh()
    b = self.builder
    v = api.to_value(b, _scalar_value(value), self.dtype)
    if v.ndim:
        v = b.add("reshape", (v,), (), v.dtype, shape=())
    api._rebind(self, api.broadcast_value(b, v, tuple(self.shape)))


# [HUNT7] the dtype holding `x.item()`'s Python scalar exactly (uint64: Python ints above int64)
_ITEM_DTYPES = {"b": np.bool_, "i": np.int64, "f": np.float64, "c": np.complex128}


def _item_method(self: Tracer, *index: Any) -> Tracer:
    """[HUNT7] `x.item()` (also `x.item(k)`, `x.item(i, j)`, static integers): NumPy's Python
    scalar, traced (`_python_bool`'s weak values: returned as a Python scalar, its value needed
    only where Python branches on it or converts it). It was a graph break at once."""
    kind = "i" if self.dtype.kind == "u" and self.dtype.itemsize < 8 else self.dtype.kind
    if kind not in _ITEM_DTYPES or builtins.any(
            isinstance(k, Tracer) or not isinstance(k, (int, np.integer)) for k in index) or \
            not builtins.all(isinstance(n, int) for n in self.shape):
        raise unsupported("ndarray.item of this dtype or index")
    if not index:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        one = api.reshape(self, ())
    elif len(index) == 1:
        if not -self.size <= index[0] < self.size:
            raise IndexError(f"index {index[0]} is out of bounds for size {self.size}")
        one = api.reshape(self, (-1,))[index[0]]
    else:
        one = self[index]
    return Tracer(self.builder, api.astype(one, _ITEM_DTYPES[kind]).value, weak=True)


TOLIST_ELEMENTS = 64  # [HUNT7] x.tolist() traced up to this size (a few ops per element)


def _tolist_method(self: Tracer) -> Any:
    """[HUNT7] `x.tolist()` of a small array: nested lists of traced Python scalars
    (`_item_method`), returned as NumPy's. A larger one stays a graph break."""
    if self.ndim == 0:
        return _item_method(self)
    if not builtins.all(isinstance(n, int) for n in self.shape) or \
            self.size > TOLIST_ELEMENTS:
        raise unsupported(f"ndarray.tolist of more than {TOLIST_ELEMENTS} elements")
    if self.ndim == 1:
        return [_item_method(self, k) for k in range(self.shape[0])]
    return [_tolist_method(self[k]) for k in range(self.shape[0])]


# name -> implementation, attached to Tracer (a NotImplementedError there is a graph break)
METHODS: dict[str, Callable[..., Any]] = {
    "argsort": argsort, "diagonal": diagonal, "trace": trace, "repeat": repeat,
    "item": _item_method, "searchsorted": searchsorted, "choose": choose, "sort": _sort_method,
    "fill": _fill_method, "put": put, "tolist": _tolist_method,
    "conj": lambda a: _conjugate_method(a), "conjugate": lambda a: _conjugate_method(a),
}


def _conjugate_method(a: Tracer) -> Tracer:
    """`x.conj()`: NumPy's method returns `x` itself for a real dtype (writes through the
    result reach `x`; np.conjugate(x), the ufunc, is a copy), a new array for complex."""
    return api.apply_ufunc("conjugate", a) if a.dtype.kind == "c" else a


class _Flat:
    """[HUNT5] `x.flat` of a traced array: a read indexes a copy of its C-order ravel (NumPy's
    flatiter gives a copy), a write sets the C-order positions selected, with the value
    flattened and repeated to their number as NumPy does, and writes the ravel back into `x`
    (`A.flat[::n + 1] = 0`; as a graph break the flatiter was a copy's: writes were lost)."""

    def __init__(self, base: Tracer) -> None:
        self.base = base

    def __getitem__(self, key: Any) -> Any:
        got = api.ravel(self.base)[key]
        return api.copy_(got) if got.ndim else got

    def __setitem__(self, key: Any, value: Any) -> None:
        x = self.base
        flat = api.copy_(api.ravel(x))
        target = flat[key]
        if np.size(value) != 1:  # NumPy's flatiter repeats the flattened value cyclically
            value = (resize if isinstance(value, Tracer) else np.resize)(value,
                                                                           tuple(target.shape))
        flat[key] = value
        x[...] = api.reshape(flat, tuple(x.shape))

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> Iterator[Any]:
        return iter(api.ravel(self.base))


def register(tracer: type[Tracer]) -> None:
    """Add the functions to the NEP 18 dispatch, and `ufunc.outer` to the NEP 13 one."""
    from stax.frontend import data_dependent  # [DYN16]

    api.FUNCTIONS.update(FUNCTIONS | data_dependent.FUNCTIONS)
    METHODS.update(data_dependent.METHODS)
    for name, method in METHODS.items():
        setattr(tracer, name, method)
    tracer.nbytes = property(lambda t: t.size * t.dtype.itemsize)  # type: ignore[attr-defined]
    tracer.itemsize = property(lambda t: t.dtype.itemsize)  # type: ignore[attr-defined]

    def set_flat(t: Tracer, value: Any) -> None:  # `x.flat = v`
        _Flat(t)[:] = value

    tracer.flat = property(_Flat, set_flat)  # type: ignore[attr-defined]
    tracer.real = property(api.real)  # type: ignore[attr-defined]  # [E16]
    tracer.imag = property(api.imag)  # type: ignore[attr-defined]
    base = tracer.__array_ufunc__  # type: ignore[attr-defined]

    def array_ufunc(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any,
                    **kwargs: Any) -> Any:
        result = ufunc_dispatch(self, ufunc, method, *inputs, **kwargs)
        if isinstance(result, Tracer) and result.ndim == 0 and "out" not in kwargs and \
                not builtins.any(result is a for a in inputs):
            result.scalar = True  # NumPy's ufuncs and their reduce return 0-d as scalars
        return result

    def ufunc_dispatch(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any,
                       **kwargs: Any) -> Any:
        if method == "outer":
            return ufunc_outer(ufunc, *inputs, **kwargs)
        if method == "at" and not kwargs:
            return ufunc_at(ufunc, *inputs)
        if method == "reduceat" and ufunc.nin == 2:
            return ufunc_reduceat(ufunc, *inputs, **kwargs)
        if method in ("accumulate", "reduce") and ufunc.nin == 2 and not (
                ufunc.__name__ in ("add", "multiply", "maximum", "minimum") or
                method == "reduce" and ufunc.__name__ in ("logical_and", "logical_or")):
            return ufunc_method(ufunc, method, *inputs, **kwargs)
        if method == "__call__" and ufunc in _GUFUNCS and set(kwargs) <= {"axis"}:
            return _GUFUNCS[ufunc](*inputs, **kwargs)  # [HUNT]
        return base(self, ufunc, method, *inputs, **kwargs)

    tracer.__array_ufunc__ = array_ufunc  # type: ignore[attr-defined]
    setitem, getitem = tracer.__setitem__, tracer.__getitem__

    def _zero_d_mask(index: Any) -> bool:
        return isinstance(index, Tracer) and index.dtype == np.bool_ and index.ndim == 0

    def get_item(self: Tracer, index: Any) -> Any:
        index = _traced_lists(self.builder, index)
        if _zero_d_mask(index):
            return self.builder.eager(  # [DYN16] x[b]: a new axis of length 0 or 1 (NumPy)
                operator.getitem, (self, index), {}, unsupported("a 0-d boolean index"))
        mask = _full_mask(self, index)
        inner = _inner_mask(self, index) if mask is None else None
        if inner is not None:  # [SEL] x[:, m]: sliced, the mask's axes first, selected, back
            slices, k, mask = inner
            moved = api.moveaxis(getitem(self, slices), tuple(range(k, k + mask.ndim)),
                                 tuple(range(mask.ndim)))
            return api.moveaxis(get_item(moved, mask), 0, k)
        if mask is None:
            return getitem(self, index)
        self.check_fresh()  # [H16] the values now, not the array (it may be assigned later)
        return Masked(api.wrap(self.builder, self.value),
                      api.wrap(self.builder, mask.value) if isinstance(mask, Tracer) else mask)

    def set_item(self: Tracer, index: Any, value: Any) -> None:
        caller = sys._getframe(1)
        while caller.f_back is not None and \
                caller.f_globals.get("__name__", "").split(".")[0] == "stax":
            caller = caller.f_back
        if _callee(caller.f_code, caller.f_lasti) == "shuffle":
            # [HUNT9] rng.shuffle(x) of a generator made in the function other than by
            # default_rng (`np.random.RandomState(seed)`; see breaks.MadeGenerator): NumPy's
            # Cython swapped rows of the Tracer as of a Python sequence, through views (rows
            # repeated, a wrong result); only the whole function in NumPy shuffles as NumPy
            self.builder.whole_function("rng.shuffle of a traced array")
        cls = self.numpy_class()
        if cls is not np.ndarray:  # [FUZZ4] a scalar's item (`r = a * 2; r[0] = 1` of a 0-d a)
            name = f"numpy.{cls.__name__}" if issubclass(cls, np.generic) else cls.__name__
            raise TypeError(f"'{name}' object does not support item assignment")
        index = _traced_lists(self.builder, index)
        if _zero_d_mask(index):  # [LEAD] x[b] = v: as x[b] reads (it raised IndexError)
            self.builder.eager(operator.setitem, (self, index, value), {},
                               unsupported("assignment to a 0-d boolean index"))
            return
        if isinstance(value, Masked) and masked_assign(self, index, value):
            return
        if mask_assign(self, index, value):
            return
        try:
            setitem(self, index, value)
        except NotImplementedError:  # array indices: NumPy's setitem as an extern call
            scatter(self, index, value)

    tracer.__setitem__ = set_item  # type: ignore[method-assign]
    tracer.__getitem__ = get_item  # type: ignore[method-assign]


# ---- arrays created inside a traced function ----------------------------------------------------
# `np.zeros(n)` inside a jitted function is a traced value, so filling it by slice or item
# assignment (`z[1:] = x[:-1]`) compiles. NumPy's creation functions do not dispatch (they are C
# functions with `like=`), so while a function is traced they are replaced by wrappers that act
# only for calls from the user's code in the tracing thread; any other call is NumPy's.

_ACTIVE = threading.local()


def _ufunc_of_sizes(ufunc: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """[issue 11] A ufunc of symbolic sizes inside a traced function: the sizes become traced
    int64 scalars, known at launch (`x / np.sqrt(x.shape[-1])` stays generic)."""
    builder = getattr(_ACTIVE, "builder", None)
    if builder is None:
        return NotImplemented
    args = [api.wrap(builder, api.to_value(builder, v)) if isinstance(v, Sym) else v
            for v in inputs]
    return ufunc(*args, **kwargs)


sym.UFUNC_HOOK = _ufunc_of_sizes
CREATION = ("zeros", "ones", "empty", "full", "asarray", "array", "asanyarray",
            "ascontiguousarray", "asfortranarray", "eye", "identity", "r_", "c_")
# [HUNT2] Reductions of a Python list of traced arrays (`np.sum([a, b], axis=0)`): NumPy does
# not dispatch on list elements (it converts the list), so these convert it as np.array does.
SEQUENCE = ("sum", "prod", "mean", "max", "min", "amax", "amin", "std", "var", "any", "all",
            "argmax", "argmin", "cumsum", "nansum", "nanmean", "nanmax", "nanmin")


def _user_call(name: str) -> Builder | None:
    """The builder when the user's code (not a library) calls NumPy's `name` while tracing."""
    builder = getattr(_ACTIVE, "builder", None)
    if builder is None:
        return None
    frame = sys._getframe(2)
    module = frame.f_globals.get("__name__", "")
    # Code Stax generates (a compiled program's wrapper, "<stax wrapper>", run at a graph
    # break while tracing) is library code too: its np.empty must allocate an array.
    library = module.split(".")[0] in ("stax", "numpy") or \
        frame.f_code.co_filename.startswith("<stax")
    if library or _callee(frame.f_code, frame.f_lasti) not in (name, None):
        return None
    return builder


def _callee(code: CodeType, offset: int) -> str | None:
    """[H16] The name the call at `offset` of `code` calls (`zeros` in `np.zeros(n)`), None
    when unknown. Extension code has no Python frame: NumPy's Cython random generators call
    np.empty from inside `rng.normal(...)`, and the frame found is the user's, calling
    `normal`; such a call must get NumPy's array (a traced one crashed the process)."""
    load = _callee_load(code, offset)
    return load.argval if load is not None and isinstance(load.argval, str) else None


@functools.lru_cache(maxsize=256)
def _callee_loads(code: CodeType) -> frozenset[int]:
    """[NPB2] The offsets of the instructions of `code` that load what a call calls."""
    calls = [i.offset for i in dis.get_instructions(code) if i.opname.startswith("CALL")]
    return frozenset(load.offset for load in (_callee_load(code, c) for c in calls)
                     if load is not None)


@functools.lru_cache(maxsize=4096)
def _callee_load(code: CodeType, offset: int) -> dis.Instruction | None:
    """The instruction that loads what the call at `offset` of `code` calls (see _callee)."""
    instructions = list(dis.get_instructions(code))
    call = next((i for i in instructions if i.offset == offset), None)
    if call is None or call.positions is None or call.positions.lineno is None:
        return None
    start = (call.positions.lineno, call.positions.col_offset)
    loads = [i for i in instructions if i.offset < offset and i.positions is not None and
             i.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME",
                          "LOAD_DEREF", "LOAD_FAST") and
             (i.positions.lineno, i.positions.col_offset) == start]
    if not loads:
        return None
    return max(loads, key=lambda i: (i.positions.end_lineno, i.positions.end_col_offset,
                                     i.offset))


def _filled(b: Builder, shape: Any, fill: Any, dtype: Any) -> Tracer | None:
    shape = (shape,) if isinstance(shape, (int, np.integer, Tracer, Sym)) else tuple(shape)
    shape = tuple(as_size(s) for s in shape)  # a symbolic size stays symbolic (issue 11)
    dtype = np.dtype(float if dtype is None else dtype)
    if dtype not in SUPPORTED_DTYPES or builtins.any(s < 0 for s in shape):
        return None  # NumPy's own (its array, or its error)
    return api.filled(b, shape, fill, dtype)


def _has_tracer(obj: Any) -> bool:
    if isinstance(obj, Tracer):
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_has_tracer(o) for o in obj)


def _from_nested(b: Builder, obj: Any) -> Tracer:
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise unsupported("np.array of an empty sequence holding traced arrays")
        return api.stack([_from_nested(b, o) for o in obj])
    return obj if isinstance(obj, Tracer) else api.wrap(b, api.to_value(b, np.asarray(obj)))


def _traced_lists(b: Builder, index: Any) -> Any:
    """[HUNT8] A list holding traced integers in an index (`B[[k, p]]` with `p = k +
    np.argmax(...)`, a pivot swap) as one traced index array, as NumPy converts the list (it
    was converted through the tracers' __array__: a graph break)."""
    def convert(it: Any) -> Any:
        return _from_nested(b, it) if isinstance(it, list) and _has_tracer(it) else it
    return tuple(map(convert, index)) if isinstance(index, tuple) else convert(index)


def _array0(t: Tracer) -> Tracer:
    """`t`, made by np.array/asarray/full/zeros/...: a 0-d one is returned as a 0-d ndarray."""
    t.array0 = t.ndim == 0 or t.array0
    return t


def _converted(b: Builder, obj: Any, dtype: Any, copy: bool, order: str | None,
               ndmin: int) -> Tracer:
    """np.array / asarray / ascontiguousarray / asfortranarray of traced values: `obj` itself
    where NumPy returns it (its dtype, and laid out in `order` already: `api.is_dense`), else a
    copy in `order` [HUNT] (a view of a transposed argument was returned, and writes through it
    reached the caller's array, where NumPy copies); with leading axes up to `ndmin`."""
    order = api.check_order(order)
    t = _from_nested(b, obj) if isinstance(obj, (list, tuple)) else obj
    own = t is not obj  # a new array already
    if t.scalar:  # [REVIEW] a scalar's array is a new 0-d array, never weak (NEP 50), and
        t, own = Tracer(b, t.value), True  # indexing by it gathers (a copy), as NumPy's
    if t.ndim < ndmin:
        t = api.reshape(t, (1,) * (ndmin - t.ndim) + tuple(t.shape))
    if dtype is not None and np.dtype(dtype) != t.dtype:
        t = api.astype(t, dtype)
        return t if order in "AK" else api.copy_(t, order)
    if order in "CF" and not api.is_dense(t, order):
        return api.copy_(t, order)
    return api.copy_(t, order) if copy and not own else t


class _RConcatenator:
    """[H16] `np.r_[...]` of traced arrays (`np.r_[0.0, np.cumsum(x)]`), NumPy's algorithm for
    its plain form: slices are aranges (complex steps linspaces), every item at least 1-d,
    one result type over the items (Python scalars weak), concatenated. Directives (strings)
    and calls without traced items are NumPy's own. [HUNT5] `np.c_[...]` (`np.c_[np.ones(n),
    X]`): every item at least 2-d, a 1-d one as a column, concatenated along the last axis."""

    def __init__(self, original: Any, name: str = "r_") -> None:
        self.original, self.name = original, name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        b = _user_call(self.name)
        if b is None or not builtins.any(isinstance(i, Tracer) for i in items) or \
                builtins.any(isinstance(i, str) for i in items):
            return self.original[key]
        objs: list[Any] = []
        for item in items:
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                item = np.linspace(start, item.stop, num=int(abs(step))) \
                    if isinstance(step, (complex, np.complexfloating)) else \
                    np.arange(start, item.stop, step)
            objs.append(item)
        kinds = [api._weak_for_result_type(o) if isinstance(o, Tracer) else o
                 if type(o) in np.ScalarType else np.asarray(o).dtype for o in objs]
        final = np.result_type(*kinds)
        if self.name == "r_":
            return api.concatenate([  # constants converted as NumPy does (OverflowError)
                (api.reshape(o, (-1,)) if o.ndim == 0 else o) if isinstance(o, Tracer)
                else np.array(o, dtype=final, ndmin=1) for o in objs], dtype=final)
        return api.concatenate([
            (api.reshape(o, (-1, 1)) if o.ndim < 2 else o) if isinstance(o, Tracer)
            else np.array(o, dtype=final, ndmin=2).T if np.ndim(o) == 1
            else np.array(o, dtype=final, ndmin=2) for o in objs], axis=-1, dtype=final)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def _in_order(made: Any, order: Any) -> Any:
    """[HUNT2] `order="F"`: laid out in Fortran order, as NumPy's (was C order)."""
    return api.copy_(made, order="F") if order == "F" else made


def _creation_wrappers(original: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    def filled(name: str, fill: int) -> Callable[..., Any]:
        def create(shape: Any, dtype: Any = float, order: Any = "C", **kwargs: Any) -> Any:
            b = _user_call(name)
            if b is not None and not kwargs and order in ("C", "F"):  # others: NumPy's error
                made = _filled(b, shape, fill, dtype)
                if made is not None:
                    return _array0(_in_order(made, order))
            return original[name](shape, dtype, order, **kwargs)
        return create

    def full(shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C",
             **kwargs: Any) -> Any:
        b = _user_call("full")
        if b is not None and not kwargs and order in ("C", "F"):
            made = _filled(b, shape, fill_value, dtype if dtype is not None else
                           fill_value.dtype if isinstance(fill_value, Tracer) else
                           np.asarray(fill_value).dtype)
            if made is not None:
                return _array0(_in_order(made, order))
        return original["full"](shape, fill_value, dtype, order, **kwargs)

    def convert(name: str, copy: bool, order: str | None = None) -> Callable[..., Any]:
        """`order`: the function's own (ascontiguousarray's "C"; its result is at least 1-d)."""
        def conv(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
            b = _user_call(name)
            if b is not None and not args and set(kwargs) <= {"order", "copy", "ndmin"} and \
                    _has_tracer(obj):
                # [HUNT11] asarray(x, copy=True) copies too (it returned x: writes to the
                # copy reached the caller's array)
                return _array0(_converted(b, obj, dtype, kwargs.get("copy", copy) is True,
                                          order or kwargs.get("order"),
                                          kwargs.get("ndmin", 1 if order else 0)))
            return original[name](obj, dtype, *args, **kwargs)
        return conv

    def constant(name: str) -> Callable[..., Any]:
        def make(*args: Any, **kwargs: Any) -> Any:  # np.eye(k)[labels] then compiles
            array = original[name](*args, **kwargs)
            b = _user_call(name)
            if b is None or array.dtype not in SUPPORTED_DTYPES:
                return array
            return api.wrap(b, api.to_value(b, array))
        return make

    def sequence(name: str) -> Callable[..., Any]:
        def reduce(a: Any, *args: Any, **kwargs: Any) -> Any:
            b = _user_call(name)
            if b is not None and isinstance(a, (list, tuple)) and _has_tracer(a):
                a = _from_nested(b, a)
            return original[name](a, *args, **kwargs)
        return reduce

    return {"r_": _RConcatenator(original["r_"]), "c_": _RConcatenator(original["c_"], "c_"),
            **{name: sequence(name) for name in SEQUENCE},
            "eye": constant("eye"), "identity": constant("identity"),
            "zeros": filled("zeros", 0), "ones": filled("ones", 1),
            "empty": filled("empty", 0), "full": full,
            "asarray": convert("asarray", False), "array": convert("array", True),
            "asanyarray": convert("asanyarray", False),
            "ascontiguousarray": convert("ascontiguousarray", False, "C"),
            "asfortranarray": convert("asfortranarray", False, "F")}


_ORIGINAL = {name: getattr(np, name) for name in CREATION + SEQUENCE}
_WRAPPERS = _creation_wrappers(_ORIGINAL)

# NumPy's global random generator draws new numbers on each call: a traced draw would be a
# constant. Drawn from user code while tracing, they are a graph break (NumPy draws each call).
# [H16] So is a generator made inside the function (`np.random.default_rng()`: fresh entropy
# on each call; made while tracing, NumPy's Cython would get traced arrays from np.zeros).
RANDOM = tuple(n for n in (
    "rand randn random random_sample ranf sample randint random_integers normal uniform "
    "standard_normal choice permutation shuffle binomial poisson exponential beta gamma "
    "laplace logistic lognormal multinomial multivariate_normal standard_exponential "
    "standard_gamma standard_t triangular vonmises wald weibull zipf geometric "
    "default_rng").split()
    if hasattr(np.random, n))
_RANDOM_ORIGINAL = {name: getattr(np.random, name) for name in RANDOM}


def _random_wrapper(name: str) -> Callable[..., Any]:
    original = _RANDOM_ORIGINAL[name]

    def draw(*args: Any, **kwargs: Any) -> Any:
        b = _user_call(name)
        if b is None:
            return original(*args, **kwargs)
        if name == "default_rng" and len(args) == 1 and not kwargs and \
                isinstance(args[0], np.random.Generator):
            return args[0]  # [REVIEW] NumPy's: a generator argument itself (its stand-in)
        drawn = b.eager(original, args, kwargs, NotImplementedError(
            f"stax.jit: np.random.{name} (new numbers on each call) is not supported"))
        if name != "default_rng":
            return drawn
        from stax.frontend.breaks import MadeGenerator  # (breaks imports this module)

        return MadeGenerator(drawn, b)
    return draw


_RANDOM_WRAPPERS = {name: _random_wrapper(name) for name in RANDOM}


def _empty_ndarray(shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                   strides: Any = None, order: Any = None) -> Any:
    """[NPB2] `np.ndarray(shape, dtype)` in a traced function: np.empty's traced array (was a
    NumPy array, each store of a traced value into it a graph break: npbench vadv, nbody)."""
    b = getattr(_ACTIVE, "builder", None)
    if b is not None and buffer is None and offset == 0 and strides is None and \
            order in (None, "C", "F"):
        made = _filled(b, shape, 0, dtype)
        if made is not None:
            return _array0(_in_order(made, order))
    return np.ndarray(shape, dtype, buffer, offset, strides, order)


class _NumPyModule(ModuleType):
    """[NPB2] numpy as a traced function's globals hold it (`creation_names`): a call of
    `np.ndarray(...)` there calls `_empty_ndarray`; any other use of `np.ndarray`
    (isinstance, `type(x) is np.ndarray`, `.view(np.ndarray)`) and every other name is
    NumPy's own."""

    def __getattr__(self, name: str) -> Any:
        if name == "ndarray":
            frame = sys._getframe(1)
            if frame.f_lasti in _callee_loads(frame.f_code):
                return _empty_ndarray
        return getattr(np, name)


_NUMPY = _NumPyModule("numpy")


def creation_names(glob: Mapping[str, Any]) -> dict[str, Any]:
    """[HUNT3] The names a module bound to NumPy's creation functions (`from numpy import
    zeros`), with the wrappers `creating` puts on the numpy module: a traced function's
    globals then make traced arrays there too (a NumPy array filled with traced values was a
    graph break); and [NPB2] to the numpy module, with `_NUMPY`."""
    wrappers = {id(_ORIGINAL[n]): w for n, w in _WRAPPERS.items()} | \
        {id(_RANDOM_ORIGINAL[n]): w for n, w in _RANDOM_WRAPPERS.items()} | {id(np): _NUMPY}
    return {name: wrappers[id(v)] for name, v in glob.items() if id(v) in wrappers}


@contextlib.contextmanager
def creating(builder: Builder) -> Iterator[None]:
    """While `fn` is traced with `builder`, NumPy's creation functions called from user code
    make traced arrays (np.empty's unspecified contents are zeros)."""
    outer = getattr(_ACTIVE, "builder", None)
    _ACTIVE.builder = builder
    with _LOCK:
        if not _ACTIVE_COUNT:
            for name, fn in _WRAPPERS.items():
                setattr(np, name, fn)
            for name, fn in _RANDOM_WRAPPERS.items():
                setattr(np.random, name, fn)
        _ACTIVE_COUNT.append(1)
    try:
        yield
    finally:
        _ACTIVE.builder = outer
        with _LOCK:
            _ACTIVE_COUNT.pop()
            if not _ACTIVE_COUNT:
                for name, fn in _ORIGINAL.items():
                    setattr(np, name, fn)
                for name, fn in _RANDOM_ORIGINAL.items():
                    setattr(np.random, name, fn)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """NumPy's own creation functions (a call running in NumPy at a graph break)."""
    outer = getattr(_ACTIVE, "builder", None)
    _ACTIVE.builder = None
    try:
        yield
    finally:
        _ACTIVE.builder = outer


_LOCK = threading.Lock()
_ACTIVE_COUNT: list[int] = []
