"""The NumPy functions Stax traces. Each builds graph ops with NumPy's exact dtype rules.

Dtypes come from NumPy itself (`ufunc.resolve_dtypes`, NEP 50 weak Python scalars), so
promotion is NumPy's by construction. Shapes broadcast with `np.broadcast_shapes`.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.exceptions import AxisError, ComplexWarning

from stax import ops  # [A1]
from stax.frontend.trace import Builder, Tracer, check_dtype
from stax.graph import Value
from stax.ir.program import contiguous_strides
from stax.ir.sym import Sym, as_size, is_data, known_empty, same_size, slice_indices, surely
from stax.ir.sym import broadcast_shapes as sym_broadcast_shapes
from stax.ir.sym import traced as traced_size
from stax.runtime import externs

# ufuncs traced elementwise: every `np.` name of the op table (stax.ops). [A1]
UFUNCS = ops.ufunc_names()


def unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"stax.jit: {what} is not supported")


# ---- converting arguments -----------------------------------------------------------------

def find_builder(args: Sequence[Any]) -> Builder:
    for a in args:
        if isinstance(a, Tracer):
            return a.builder
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tracer):
                    return b.builder
    raise TypeError("stax.jit: no traced array among the arguments")


def dtype_spec(x: Any) -> np.dtype | type:
    """What `resolve_dtypes` should see: a dtype, or a Python type for weak scalars."""
    if isinstance(x, Tracer):
        if x.weak and x.dtype.kind != "b":  # a Python bool is not weak: it is np.bool
            return {"i": int, "f": float, "c": complex}[x.dtype.kind]
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return check_dtype(_sizes_pinned(x).dtype, "a constant")
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, (int, float, complex)):  # [E16] a Python complex is weak too (NEP 50)
        return type(x)
    if isinstance(x, Sym):  # a symbolic size used as a value (issue 11): a Python int
        return int
    if isinstance(x, (list, tuple)):  # [HUNT] `x + [1, 2, 3]`: NumPy's array of it (strong)
        return dtype_spec(np.asarray(x))
    raise TypeError(f"stax.jit: unsupported argument of type {type(x).__name__}")


def _sizes_pinned(arr: Any) -> Any:
    """A NumPy constant built from symbolic sizes (an object array: `np.arange(n)` in a
    library routine) becomes int64, its sizes specialized (issue 11)."""
    if isinstance(arr, np.ndarray) and arr.dtype == object and arr.size and builtins.all(
            isinstance(v, (int, Sym)) for v in arr.flat):
        return np.array([int(v) for v in arr.flat], np.int64).reshape(arr.shape)
    return arr


def to_value(b: Builder, x: Any, dtype: np.dtype | None = None) -> Value:
    """A graph value for `x`, cast to `dtype` when given."""
    if isinstance(x, Tracer):
        x.check_fresh()
        value = x.value
    elif isinstance(x, Sym):  # a symbolic size used as a value, known at launch (issue 11)
        value = b.add("size", (), (), np.dtype(np.int64), size=x)
    elif isinstance(x, (bool, int, float, complex)) and dtype is not None:
        # A weak Python scalar: converted exactly as NumPy would (OverflowError if it can't).
        return b.add("const", (), (), dtype, value=np.asarray(x, dtype=dtype).item())
    else:
        arr = _sizes_pinned(np.asarray(x))
        check_dtype(arr.dtype, "a constant")
        if arr.ndim == 0:
            value = b.add("const", (), (), arr.dtype, value=arr.item())
        else:
            value = b.add("constant_array", (), arr.shape, arr.dtype,
                          data=_Frozen(np.array(arr, order="C", copy=True)))  # A2: not the
        # caller's array, which must stay writable (and later writes must not change this)
    if dtype is not None and value.dtype != dtype:
        value = b.add("cast", (value,), value.shape, dtype, dtype=np.dtype(dtype))
    return value


def operand_value(b: Builder, x: Any, dtype: np.dtype) -> Value:
    """[FUZZ3] `to_value` of a ufunc's operand or an assigned value: a Python int known only
    at run time (a symbolic size, `x.shape[0] * 100`; a traced one, `n * 100` of a scalar
    argument or `x.sum().item()`) converted to a narrower integer dtype raises NumPy's
    OverflowError where it does not fit (NEP 50), as a literal does, and a traced Python float
    converted to an integer dtype goes through int() as NumPy's (NaN: ValueError; out of range:
    OverflowError); the cast wrapped them. A size is checked by a guard, a traced value at run
    time (a scalar int argument itself by `Traced.narrowed_ints`; a loop index, not: see
    `_of_loop_index`). np.where and np.clip convert such ints unchecked, as NumPy does."""
    if dtype.kind not in "iu":
        return to_value(b, x, dtype)
    if isinstance(x, Sym) and dtype != np.int64 and not \
            np.iinfo(dtype).min <= x <= np.iinfo(dtype).max:
        raise OverflowError(f"Python integer {traced_size(x)} out of bounds for {dtype}")
    if not isinstance(x, Tracer) or not x.weak or x.dtype.kind not in "iuf" or \
            x.dtype.kind != "f" and (dtype == np.int64 or x.value in b.inputs):
        return to_value(b, x, dtype)
    x.check_fresh()
    if _of_loop_index(b, x.value):
        return to_value(b, x, dtype)

    def check(v: np.ndarray, out: np.ndarray) -> None:
        np.asarray(v.item(), dtype=dtype)  # raises NumPy's error for a Python scalar
        np.copyto(out, v)

    key = externs.register_into(f"as_python_scalar({dtype})", check)
    checked = b.add("extern", (x.value,), (), x.dtype, fn=key)
    return b.add("cast", (checked,), (), dtype, dtype=dtype)


def _of_loop_index(b: Builder, value: Value) -> bool:
    """Is `value` computed from a Python loop's index (`k * 2`: no traced op computes `k`)?
    Its range check would run each iteration from Python (stax.loops: a body with an extern
    call is not compiled into one loop): not checked."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        hit = b.producer(v.id)
        if hit is None:
            return True
        stack += [u for u in hit[1].inputs if u.ndim == 0]
    return False


class _Frozen:
    """An immutable wrapper that lets a constant array sit in frozen op attributes."""

    def __init__(self, array: np.ndarray) -> None:
        array.setflags(write=False)
        self.array = array

    def __repr__(self) -> str:
        return f"array{self.array.shape}"


def wrap(b: Builder, value: Value) -> Tracer:
    return Tracer(b, value)


def same_shape(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """`a == b`, but a data-dependent size compares with no guard [SEL]: it may be 1 at run
    time, where both answers serve (a broadcast or slice of size 1 to itself)."""
    if builtins.any(is_data(d) for d in (*a, *b)):
        return len(a) == len(b) and builtins.all(
            same_size(p, q) for p, q in zip(a, b, strict=True))
    return tuple(a) == tuple(b)


def broadcast_value(b: Builder, value: Value, shape: tuple[int, ...]) -> Value:
    if same_shape(value.shape, shape):
        return value
    if sym_broadcast_shapes(value.shape, shape) != shape:  # raises NumPy's ValueError
        raise ValueError(f"cannot broadcast shape {value.shape} to {shape}")
    return b.add("broadcast", (value,), shape, value.dtype, shape=shape)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return sym_broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(s).replace(" ", "") for s in shapes)) from None


# ---- elementwise ---------------------------------------------------------------------------

def apply_ufunc(name: str, *args: Any, function: bool = False) -> Tracer:
    """`np.<name>(*args)`. `function`: called as a NumPy function (`np.sqrt(x)`), not through a
    Python operator: under NEP 50 its result is strong even when every argument is a Python
    scalar (NumPy returns np.float64), while operators on Python scalars stay weak. [A1]"""
    op = ops.by_name(name)
    name, ufunc = op.name, op.ufunc
    if ufunc.nin != len(args):
        raise TypeError(f"stax.jit: np.{name} takes {ufunc.nin} arguments, got {len(args)}")
    b = find_builder(args)
    specs = tuple(dtype_spec(a) for a in args)
    if name in _COMPARISONS:
        specs = _exact_int_comparison(args, specs)
    try:
        loop = ufunc.resolve_dtypes(specs + (None,))
        if {type(s) for s in specs} == {type} and "O" in {d.kind for d in loop}:
            # [C, issue 8] Python scalars only (`n == 0`): NumPy computes in int64/float64
            loop = ufunc.resolve_dtypes(tuple(np.dtype(s) for s in specs) + (None,))
    except TypeError as e:  # NumPy's own error class (UFuncTypeError), naming the op [FIX16]
        e.add_note(f"stax.jit: np.{name} does not support these dtypes")
        raise
    for dt in loop:
        check_dtype(dt, f"np.{name}'s computation")
    values = [operand_value(b, a, loop[i]) for i, a in enumerate(args)]
    shape = broadcast_shapes(*(v.shape for v in values))
    values = [broadcast_value(b, v, shape) for v in values]
    out = b.add("elementwise", tuple(values), shape, loop[-1], fn=name)
    weak = not function and builtins.all(  # [HUNT] np.float64 subclasses float: strong
        isinstance(a, Tracer) and a.weak or isinstance(a, (int, float, complex, Sym))
        and not isinstance(a, np.generic) for a in args)  # [FUZZ3] a size is a Python int
    result = Tracer(b, out, weak=weak and out.dtype.kind in "bifc",
                    concrete=_concrete_result(ufunc, args))
    if name == "power" and result.concrete is None and (function or not builtins.all(
            not isinstance(a, Tracer) or a.scalar for a in args)):  # not scalar arithmetic
        result = _half_power(args[0], args[1], result, loop[0])
    return _scalar(result)


_HALF_POWER_LOOPS = (np.dtype(np.float32), np.dtype(np.float64))


def _half_power(base: Any, exponent: Any, result: Tracer, dtype: np.dtype) -> Tracer:
    """[FUZZ4] NumPy's float32/float64 power loop takes sqrt for an exponent of 0.5 that is
    one value for the whole loop (a scalar, a 0-d or one-element array): (-inf) ** 0.5 is nan
    and (-0.0) ** 0.5 is -0.0 there, where C's pow gives inf and 0.0. An exponent known only
    at run time chooses between the two."""
    if dtype not in _HALF_POWER_LOOPS or not isinstance(base, Tracer) or dtype != result.dtype:
        return result
    if isinstance(exponent, Tracer):
        if exponent.dtype.kind != "f" or not builtins.all(
                isinstance(d, int) and d == 1 for d in exponent.shape):
            return result
        half = apply_ufunc("sqrt", astype(base, dtype, copy=False))
        return where(apply_ufunc("equal", exponent, 0.5), half, result)
    if isinstance(exponent, (float, np.floating)) and exponent == 0.5:
        return apply_ufunc("sqrt", astype(base, dtype, copy=False))
    return result


def _scalar(t: Tracer) -> Tracer:
    """[FUZZ] `t`, marked as a NumPy scalar when it is 0-d (the result of a ufunc or a
    reduction over every axis; not a view): in-place operators on it rebind, never write."""
    t.scalar = t.scalar or (t.ndim == 0 and t.parent is None)
    return t


_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def _exact_int_comparison(args: Sequence[Any], specs: tuple[Any, ...]) -> tuple[Any, ...]:
    """[H16] NumPy 2 compares an integer array with a Python int exactly, even one outside the
    array's dtype (`u8 > -1` is all True, `i8 == 300` all False; no OverflowError). A Python int
    whose value is not part of the trace (a scalar argument) or does not fit the other
    operands' dtypes is compared as int64 instead (NumPy's exact int64/uint64 loops for
    uint64); an in-range literal stays weak (the comparison keeps the array's width)."""
    strong = [s for s in specs if isinstance(s, np.dtype)]
    if int not in specs or not strong or not builtins.all(s.kind in "iu" for s in strong):
        return specs
    out = list(specs)
    for k, a in enumerate(args):
        if specs[k] is not int:
            continue
        if isinstance(a, Tracer) or not builtins.all(
                np.iinfo(s).min <= a <= np.iinfo(s).max for s in strong):
            out[k] = np.dtype(np.int64) if isinstance(a, Tracer) or \
                np.iinfo(np.int64).min <= a <= np.iinfo(np.int64).max else np.dtype(np.uint64)
    return tuple(out)


def _concrete_result(ufunc: np.ufunc, args: Sequence[Any]) -> tuple[frozenset[int], Any] | None:
    """Arithmetic on scalar arguments keeps a value usable as a Python value (`n // 2`)."""
    positions: frozenset[int] = frozenset()
    values = []
    for a in args:
        if isinstance(a, Tracer):
            if a.concrete is None:
                return None
            positions |= a.concrete[0]
            values.append(a.concrete[1])
        elif isinstance(a, (bool, int, float, np.generic)):
            values.append(a)
        else:
            return None
    with np.errstate(all="ignore"):
        return positions, ufunc(*values)


def power_operator(a: Tracer, b: Any) -> Tracer:
    """`a ** b`: like NumPy's operator, small scalar exponents of float arrays take the fast
    path (2 -> square, 0.5 -> sqrt, -1 -> reciprocal); a NumPy scalar's `**` does not (C's
    pow: np.float64(-inf) ** 0.5 is inf). [FUZZ4] A Python float exponent known only at run
    time takes sqrt where it is 0.5 (float16 and complex too; np.power's own rule for float32
    and float64 in apply_ufunc)."""
    fast = {2: "square", 0.5: "sqrt", -1: "reciprocal"}
    array = a.dtype.kind in "fc" and not a.weak and not a.scalar  # [E16] complex too
    if isinstance(b, (int, float)) and not isinstance(b, bool) and b in fast and array:
        return apply_ufunc(fast[b], a)
    if isinstance(b, Tracer) and b.weak and b.dtype.kind == "f" and b.ndim == 0 and array \
            and a.dtype not in _HALF_POWER_LOOPS:  # (those: apply_ufunc's rule)
        return where(apply_ufunc("equal", b, 0.5), apply_ufunc("sqrt", a),
                     apply_ufunc("power", a, b))
    if type(b) is int and b == 2 and a.dtype == np.bool_ and not a.weak:
        return apply_ufunc("square", a)  # [HUNT] NumPy's square of bools: int8, not int64
    return apply_ufunc("power", a, b)


def divmod_(a: Any, b: Any) -> tuple[Tracer, Tracer]:
    """`divmod(a, b)` / `np.divmod`: NumPy's floor quotient and remainder."""
    return apply_ufunc("floor_divide", a, b), apply_ufunc("remainder", a, b)


def modf(x: Tracer) -> tuple[Tracer, Tracer]:
    """[HUNT8] `np.modf`: (fraction, integral part), both in the dtype of NumPy's loop and with
    x's sign, as C's modf (the fraction of +-inf is +-0, of -3.0 is -0.0)."""
    t = astype(x, np.modf.resolve_dtypes((x.dtype, None, None))[0], copy=False)
    whole = apply_ufunc("trunc", t)
    frac = where(apply_ufunc("isinf", t), 0.0, apply_ufunc("subtract", t, whole))
    return apply_ufunc("copysign", frac, t), whole


def where(cond: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None and y is None:  # [DYN16] np.nonzero, sized at run time
        from stax.frontend.data_dependent import nonzero

        return nonzero(cond)  # type: ignore[return-value]
    if x is None or y is None:
        raise unsupported("np.where with one of x and y")
    b = find_builder((cond, x, y))
    dtype = np.result_type(*(_weak_for_result_type(a) for a in (x, y)))
    dtype = check_dtype(dtype, "np.where's result")
    c = to_value(b, cond, np.dtype(bool))
    # [H16] NumPy casts the values 'unsafe': a Python int wraps (np.where(u8 > 0, u8, -1))
    xv, yv = (to_value(b, np.asarray(v).astype(dtype) if type(v) is int else v, dtype)
              for v in (x, y))
    shape = broadcast_shapes(c.shape, xv.shape, yv.shape)
    ins = tuple(broadcast_value(b, v, shape) for v in (c, xv, yv))
    return wrap(b, b.add("where", ins, shape, dtype))


def _weak_for_result_type(a: Any) -> Any:
    spec = dtype_spec(a)
    if isinstance(spec, type):  # a weak scalar: a Python value of that type
        return spec(0)
    return spec


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Tracer:
    for name, given in (("min", a_min), ("max", a_max)):
        if name in kw and given is not None:
            raise TypeError(f"clip() got both a_{name} and {name}")
    a_min, a_max = kw.pop("min", a_min), kw.pop("max", a_max)
    if kw:
        raise unsupported("np.clip with extra arguments")
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    result = a
    dtype = a.dtype if isinstance(a, Tracer) else np.asarray(a).dtype
    if dtype.kind in "iu":  # [H16] NumPy's _clip: a Python int bound beyond the dtype is none
        info = np.iinfo(dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
        a_min, a_max = _in_range(a_min, info, False), _in_range(a_max, info, True)
    # [HUNT3] of two equal values (-0.0, 0.0) np.maximum / np.minimum return the second: the
    # bound (one bound, or array bounds, as NumPy); with two scalar bounds NumPy's clip keeps x
    keep_x = a_min is not None and a_max is not None and builtins.all(
        (b.ndim if isinstance(b, Tracer) else np.ndim(b)) == 0 for b in (a_min, a_max))
    if a_min is not None:
        result = apply_ufunc("maximum", *((a_min, result) if keep_x else (result, a_min)))
    if a_max is not None:
        result = apply_ufunc("minimum", *((a_max, result) if keep_x else (result, a_max)))
    if result is a:
        result = copy_(a)
    if out is not None:  # [H16] np.clip(x, lo, hi, out=x): written as NumPy's ufunc would
        out_array(out)
        if not isinstance(out, Tracer):
            raise unsupported("np.clip with out= that is not a traced array")
        return inplace(out, result)
    return result


def _in_range(bound: Any, info: np.iinfo, upper: bool) -> Any:
    """[FUZZ3] NumPy's _clip for a bound that is a Python int known only at run time (a
    symbolic size, a traced int): one beyond the integer dtype's range on its own side is no
    bound (here: that end of the range), one beyond the other side raises OverflowError when
    converted (`operand_value`). The cast wrapped it: clip(x, 0, 300) of int8 x clipped at 44."""
    end = int(info.max if upper else info.min)
    if isinstance(bound, Sym):
        return None if (bound >= end if upper else bound <= end) else bound
    if isinstance(bound, Tracer) and bound.weak and bound.dtype.kind in "iu":
        return apply_ufunc("minimum" if upper else "maximum", bound, end)
    return bound


def astype(a: Tracer, dtype: Any, order: str | None = "K", *, copy: bool = True,
           **kw: Any) -> Tracer:
    if kw:
        raise unsupported(f"astype with {', '.join(kw)}")
    order = check_order(order)
    dtype = check_dtype(np.dtype(dtype), "astype's target")
    b = a.builder
    if a.dtype.kind == "c" and dtype.kind not in "bc":  # [E16] NumPy's warning (at trace)
        warnings.warn("Casting complex values to real discards the imaginary part",
                      ComplexWarning, stacklevel=2)
    if dtype == a.dtype:
        return copy_(a, order) if copy or order in "CF" and not is_dense(a, order) else a
    cast = wrap(b, b.add("cast", (to_value(b, a),), a.shape, dtype, dtype=dtype))
    return cast if order == "K" else copy_(cast, order)  # [HUNT] order= as NumPy lays out


def copy_(a: Any, order: str | None = "K", **kw: Any) -> Tracer:
    """A copy is a value of its own: identity elementwise, so later mutation cannot alias.
    [HUNT] Laid out in `order` as NumPy's copy: "C" / "F" an attribute `lower.numpy_strides`
    follows, "A" Fortran order for an F-contiguous array, "K" (None) its operand's order."""
    b = find_builder((a,))
    v = to_value(b, a)
    order = check_order(order)
    if order == "A":
        order = "F" if isinstance(a, Tracer) and is_dense(a, "F") and not is_dense(a, "C") \
            else "C"
    layout = {"order": order} if order in "CF" and v.ndim > 1 else {}
    return wrap(b, b.add("elementwise", (v,), v.shape, v.dtype, fn="positive", **layout))


def check_order(order: str | None) -> str:
    """NumPy's memory order keyword ("C", "F", "A", "K", any case; None is "K"), checked."""
    if order is None:
        return "K"
    if not isinstance(order, str) or order.upper() not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return order.upper()


def is_dense(t: Tracer, order: str) -> bool:
    """[HUNT] Whether NumPy's `t` is contiguous in `order` ("C" or "F"), from the strides of
    its chain of views (`_strides`; an array of its own counts as C-contiguous)."""
    strides = _strides(t)
    if strides is None:
        return False
    shape = t.value.shape
    axes = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    expected: Any = 1
    for d in axes:
        if not (type(shape[d]) is int and shape[d] == 1):
            if not same_size(strides[d], expected):
                return False
            expected = expected * shape[d]
    return True


# ---- reductions ----------------------------------------------------------------------------

def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tracer):  # a scalar argument used as an axis
        axis = operator.index(axis)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        ax = operator.index(ax) if isinstance(ax, Tracer) else ax
        if not isinstance(ax, (int, np.integer)):
            raise TypeError(f"stax.jit: axis must be an int or tuple of ints, got {ax!r}")
        if not -ndim <= ax < ndim:
            raise AxisError(int(ax), ndim)
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def out_array(target: Any, message: str | None = None) -> None:
    """[HUNT12] `out=` a NumPy scalar (an argument `np.float64(1)`, a reduction's result):
    NumPy's TypeError, as NumPy raises it (a scalar cannot be written to)."""
    if isinstance(target, Tracer) and target.numpy_class() is not np.ndarray:
        raise TypeError(message or "return arrays must be of ArrayType")


def _into(out: Any, result: Tracer, fn: str) -> Tracer:
    """[HUNT] A reduction's or scan's `out=`: `result` written into `out` (a traced array of
    the result's own dtype and shape, as in `np.sum(x, axis=0, out=s)`), which is returned."""
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out  # (ufunc methods)
    scan = fn in SCAN_OF_UFUNC.values()
    out_array(target, "output must be an array" if scan else None)
    if scan and isinstance(target, Tracer) and tuple(target.shape) != tuple(result.shape):
        # [HUNT12] NumPy's error (its own check crashes on a 0-d out: a segmentation fault)
        raise ValueError("provided out is the wrong size for the accumulation.")
    if not isinstance(target, Tracer) or target.scalar or target.dtype != result.dtype or \
            tuple(target.shape) != tuple(result.shape):
        raise unsupported(f"np.{fn} with out= of another dtype or shape")
    inplace(target, result)
    return target


def _reduce(fn: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, _empty_ok: bool = False, **kw: Any) -> Tracer:
    if out is not None:
        return _into(out, _reduce(fn, a, axis, dtype, None, keepdims, **kw), fn)
    initial, mask = kw.pop("initial", None), kw.pop("where", True)
    if kw or initial is not None and fn not in _INITIAL or mask is not True and fn not in _FILL:
        raise unsupported(f"np.{fn} with {', '.join(kw) or 'where= or initial='}")
    b = find_builder((a,))
    if mask is not True:  # [H16] masked-out elements are the identity (or the initial value)
        fill = _FILL[fn] if _FILL[fn] is not None else initial
        if fill is None:
            raise ValueError(f"reduction operation '{_INITIAL[fn][0]}' does not have an "
                             "identity, so to use a where mask one has to specify 'initial'")
        a = where(mask, a, _initial_as(fill, to_value(b, a).dtype))
    v = to_value(b, a)
    if isinstance(axis, Tracer):  # a scalar argument used as an axis
        axis = operator.index(axis)
    if v.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        axis = None  # NumPy accepts axis 0 or -1 on a 0-d array
    axes = normalize_axes(axis, v.ndim)
    sample = np.zeros((1,) * v.ndim, dtype=v.dtype)
    kwargs: dict[str, Any] = {"axis": axes if fn not in ("argmax", "argmin") else axis}
    if dtype is not None:
        kwargs["dtype"] = check_dtype(np.dtype(dtype), f"np.{fn}'s dtype")
    res_dtype = check_dtype(np.asarray(getattr(np, fn)(sample, **kwargs)).dtype,
                            f"np.{fn}'s result")
    if v.dtype.kind == "c" and fn in ("max", "min", "argmax", "argmin"):  # [E16]
        raise unsupported(f"np.{fn} of complex values (NumPy's lexicographic order)")
    count = math.prod(v.shape[i] for i in axes)
    if initial is not None:  # [H16] the initial value (cast to the result type, as NumPy)
        init = _initial_as(initial, res_dtype)
        if not is_data(count) and count == 0:  # [LEAD18] (a selection's: no guard)
            shape = tuple(1 if i in axes else s for i, s in enumerate(v.shape)) if keepdims \
                else tuple(s for i, s in enumerate(v.shape) if i not in axes)
            return wrap(b, broadcast_value(b, to_value(b, init), shape))
        # [LEAD18] a max/min over elements that may be none (a selection) starts from the
        # dtype's end, no error: an empty one gives `initial`, as NumPy's
        result = _reduce(fn, wrap(b, v), axis, dtype, None, keepdims, _empty_ok=True)
        return apply_ufunc(_INITIAL[fn][0], result, init)
    if fn in ("max", "min", "argmax", "argmin") and not _empty_ok and count == 0:
        # [COMPACT] a guard on a data-dependent size only where it matters
        raise ValueError(f"attempt to get {fn} of an empty sequence" if fn not in _INITIAL else
                         f"zero-size array to reduction operation {_INITIAL[fn][0]} which has "
                         "no identity")  # [LEAD18] NumPy's words (maximum, not max)
    if fn in ("argmax", "argmin") and axis is None and v.ndim > 1:
        v = b.add("reshape", (v,), (v.size,), v.dtype, shape=(v.size,))
        axes = (0,)
    if fn in ("any", "all"):
        v = to_value(b, wrap(b, v), np.dtype(bool))
    elif fn in ("sum", "prod") and v.dtype != res_dtype:
        v = to_value(b, wrap(b, v), res_dtype)
    # [A1] float16 reduces in float32 (exact for max/min/argmax; NumPy's float16 sums and
    # products accumulate in float too) and rounds the result once
    acc_dtype = np.dtype(np.float32) if res_dtype == np.float16 else res_dtype
    if v.dtype == np.float16:
        v = to_value(b, wrap(b, v), np.dtype(np.float32))
    kept = tuple(1 if i in axes else s for i, s in enumerate(v.shape))
    shape = kept if keepdims else tuple(s for i, s in enumerate(v.shape) if i not in axes)
    out = b.add("reduce", (v,), shape, acc_dtype, fn=fn, axes=axes, keepdims=bool(keepdims))
    return _scalar(wrap(b, to_value(b, wrap(b, out), res_dtype)))


def _initial_as(initial: Any, dtype: np.dtype) -> np.ndarray:
    """[HUNT] A reduction's initial value in its dtype, as NumPy: a Python int that does not
    fit raises OverflowError (NEP 50), other values are cast."""
    if type(initial) is int:
        return np.asarray(initial, dtype=dtype)
    if type(initial) is float and dtype.kind in "iu":  # [FUZZ2] converted by int(): NaN
        int(initial)  # raises ValueError, inf OverflowError
    return np.asarray(initial).astype(dtype)


# [H16] reductions that take initial= and where=: their ufunc and identity (None: none)
_INITIAL: dict[str, tuple[str, Any]] = {"sum": ("add", 0), "prod": ("multiply", 1),
                                        "max": ("maximum", None), "min": ("minimum", None)}
# what `where=` fills masked-out elements with (None: the initial value); [HUNT6] np.any and
# np.all take where= but no initial=
_FILL: dict[str, Any] = {**{fn: fill for fn, (_, fill) in _INITIAL.items()}, "any": False,
                         "all": True}


def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,  # noqa: A001
        keepdims: bool = False, **kw: Any) -> Tracer:
    return _reduce("sum", a, axis, dtype, out, keepdims, **kw)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, **kw: Any) -> Tracer:
    return _reduce("prod", a, axis, dtype, out, keepdims, **kw)


def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        **kw: Any) -> Tracer:
    return _reduce("max", a, axis, None, out, keepdims, **kw)


def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        **kw: Any) -> Tracer:
    return _reduce("min", a, axis, None, out, keepdims, **kw)


def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        **kw: Any) -> Tracer:
    return _reduce("any", a, axis, None, out, keepdims, **kw)


def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        **kw: Any) -> Tracer:
    return _reduce("all", a, axis, None, out, keepdims, **kw)


def argmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    return _arg("argmin", a, axis, out, keepdims)


def _arg(fn: str, a: Any, axis: Any, out: Any, keepdims: bool) -> Tracer:
    if isinstance(axis, Tracer):  # a scalar argument used as an axis
        axis = operator.index(axis)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError(f"stax.jit: np.{fn}'s axis must be an int or None")
    result = _reduce(fn, a, axis, None, None, False)
    if keepdims:
        ndim = len(a.shape) if isinstance(a, Tracer) else np.ndim(a)
        shape = (1,) * ndim if axis is None else tuple(
            1 if i == int(axis) % ndim else s for i, s in enumerate(a.shape))
        result = reshape(result, shape)
    return _into(out, result, fn)


EMPTY_MEAN = "Mean of empty slice."
NO_FREEDOM = "Degrees of freedom <= 0 for slice"


def counted(result: Tracer, count: Any, limit: Any, message: str) -> Tracer:
    """[FIX16] `result`, a reduction over `count` elements (an int, a size symbol or a traced
    count per slice), with NumPy's RuntimeWarning `message` at each call where some count is
    <= `limit` (an empty mean: 0; a variance: ddof). Where the count is surely above it,
    `result` itself; else `result` passes through an extern call that decides at run time (a
    selection's count is known only then), after the kernels that compute both."""
    if isinstance(limit, Tracer):  # a traced ddof: the run-time check compares count - ddof
        count, limit = apply_ufunc("subtract", count, limit), 0
    if not isinstance(count, Tracer) and surely(count, ">", limit):
        return result

    def check(n: np.ndarray, value: np.ndarray, out: np.ndarray) -> None:
        if np.any(n <= limit):
            warnings.warn(message, RuntimeWarning, stacklevel=4)
        np.copyto(out, value)

    b = find_builder((result, count))
    key = externs.register_into(f"counted({limit}, {message!r})", check)
    return _scalar(wrap(b, b.add("extern", (to_value(b, count), result.value), result.shape,
                                 result.dtype, fn=key)))


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, **kw: Any) -> Tracer:
    return _mean(a, axis, dtype, out, keepdims, EMPTY_MEAN, **kw)


def _mean(a: Any, axis: Any, dtype: Any, out: Any, keepdims: bool, empty: str | None,
          **kw: Any) -> Tracer:
    """`mean`; `empty`: its warning for an empty slice (None: var's mean, which has its own)."""
    count, sum_dtype = _mean_count_dtype(a, axis, dtype)
    # [FUZZ] NumPy's float16 mean sums and divides in float32 and rounds once (the float16 sum
    # divided gave 50.03 for NumPy's 50.0)
    half = dtype is None and sum_dtype == np.float16
    total = _reduce("sum", a, axis, np.float32 if half else sum_dtype, None, keepdims, **kw)
    mask = kw.get("where", True)
    if mask is not True:  # [H16] NumPy divides by the number of selected elements, in place
        b = find_builder((a, mask))
        shape = a.shape if isinstance(a, Tracer) else np.shape(a)
        selected = wrap(b, broadcast_value(b, to_value(b, mask, np.dtype(bool)), tuple(shape)))
        count = _reduce("sum", selected, axis, np.intp, None, keepdims)
        result = astype(apply_ufunc("true_divide", total, count), total.dtype, copy=False)
    else:
        result = apply_ufunc("true_divide", total, count)
    if empty is not None:
        result = counted(result, count, 0, empty)
    if half:
        return _into(out, _scalar(astype(result, np.float16, copy=False)), "mean")
    return _into(out, astype(result, dtype, copy=False) if dtype is not None else result, "mean")


def _mean_count_dtype(a: Any, axis: Any, dtype: Any) -> tuple[int, np.dtype]:
    v = a.value if isinstance(a, Tracer) else np.asarray(a)
    axes = normalize_axes(axis, len(v.shape))
    count = math.prod(v.shape[i] for i in axes)
    if dtype is not None:
        return count, np.dtype(dtype)
    return count, np.dtype(np.float64) if v.dtype.kind in "biu" else v.dtype


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, **kw: Any) -> Tracer:
    mask = kw.pop("where", True)
    if out is not None or kw:
        raise unsupported("np.var/np.std with out= or mean=")
    if mask is not True:
        return _masked_var(a, axis, dtype, ddof, keepdims, mask)
    if dtype is not None and np.dtype(dtype).kind in "biu":
        # [FUZZ] NumPy truncates the mean, the squares' sum and the quotient to that integer
        # type (and std's sqrt refuses to cast back into an array): not reproduced
        raise unsupported("np.var/np.std with an integer dtype=")
    count, _ = _mean_count_dtype(a, axis, dtype)
    centered = apply_ufunc("subtract", a, _mean(a, axis, dtype, None, True, None))
    squared = apply_ufunc("multiply", centered, centered)
    if centered.dtype.kind == "c":  # [E16] NumPy: (x * conj(x)).real, a real variance
        squared = real(apply_ufunc("multiply", centered, apply_ufunc("conjugate", centered)))
    total = _reduce("sum", squared, axis, dtype, None, keepdims)
    return counted(apply_ufunc("true_divide", total, builtins.max(count - ddof, 0)), count, ddof,
                   NO_FREEDOM)


def _masked_var(a: Any, axis: Any, dtype: Any, ddof: int, keepdims: bool, mask: Any
                ) -> Tracer:
    """[HUNT] np.var(where=mask) as NumPy's _var: the masked sum over the mask's count (cast
    back to the sum's dtype), the masked sum of squared deviations over max(count - ddof, 0)."""
    b = find_builder((a, mask))
    x = wrap(b, to_value(b, a))
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.float64
    if (np.dtype(dtype) if dtype is not None else x.dtype) == np.float16:
        raise unsupported("np.var/np.std of float16 with where=")
    m = wrap(b, broadcast_value(b, to_value(b, mask, np.dtype(bool)), tuple(x.shape)))

    def masked_sum(v: Tracer, keep: bool) -> Tracer:
        return _reduce("sum", v, axis, dtype, None, keep, where=m)

    def count(keep: bool) -> Tracer:
        return _reduce("sum", m, axis, np.intp, None, keep)

    total = masked_sum(x, True)
    centered = apply_ufunc("subtract", x, astype(
        apply_ufunc("true_divide", total, count(True)), total.dtype, copy=False))
    squared = real(apply_ufunc("multiply", centered, apply_ufunc("conjugate", centered))) \
        if centered.dtype.kind == "c" else apply_ufunc("multiply", centered, centered)
    ret = masked_sum(squared, keepdims)
    n = count(keepdims)
    rcount = apply_ufunc("maximum", apply_ufunc("subtract", n, ddof), 0)
    return counted(astype(apply_ufunc("true_divide", ret, rcount), ret.dtype, copy=False), n,
                   ddof, NO_FREEDOM)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, **kw: Any) -> Tracer:
    return apply_ufunc("sqrt", var(a, axis, dtype, out, ddof, keepdims, **kw))


# ---- scans ---------------------------------------------------------------------------------

# [CLIFF] the scans of `ufunc.accumulate` (max/min: NaN-propagating, as np.maximum/minimum)
SCAN_OF_UFUNC = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
                 "minimum": "cummin"}


def _scan(fn: str, a: Any, axis: Any, dtype: Any, out: Any) -> Tracer:
    if out is not None:
        return _into(out, _scan(fn, a, axis, dtype, None), fn)
    b = find_builder((a,))
    v = to_value(b, a)
    if axis is None or v.ndim == 0:  # NumPy scans a 0-d array as one element, axis 0 or -1
        v = b.add("reshape", (v,), (v.size,), v.dtype, shape=(v.size,))
        axis = 0 if axis is None else axis
    (ax,) = normalize_axes(axis, v.ndim)
    kwargs = {"dtype": np.dtype(dtype)} if dtype is not None else {}
    ufunc = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
             "cummin": np.minimum}[fn]
    res = check_dtype(ufunc.accumulate(np.zeros(1, v.dtype), **kwargs).dtype, f"np.{fn}")
    v = to_value(b, wrap(b, v), res)
    return wrap(b, b.add("scan", (v,), v.shape, res, fn=fn, axis=ax))


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    return _scan("cumsum", a, axis, dtype, out)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    return _scan("cumprod", a, axis, dtype, out)


# ---- views ---------------------------------------------------------------------------------

def _view(a: Any, kind: str, shape: tuple[int, ...], /, **attrs: Any) -> Tracer:
    b = find_builder((a,))
    v = to_value(b, a)
    out = b.add(kind, (v,), shape, v.dtype, **attrs)
    if not isinstance(a, Tracer):
        return Tracer(b, out)
    return Tracer(b, out, parent=a, view=(kind, attrs))


def transpose(a: Any, axes: Any = None) -> Tracer:
    ndim = len(a.shape)
    perm = tuple(reversed(range(ndim))) if axes is None else tuple(
        int(x) % ndim for x in (axes if not isinstance(axes, int) else (axes,)))
    if sorted(perm) != list(range(ndim)):
        raise ValueError("axes don't match array")
    return _view(a, "transpose", tuple(a.shape[p] for p in perm), perm=perm)


def transpose_method(self: Tracer, *axes: Any) -> Tracer:
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return transpose(self, axes if axes else None)


def swapaxes(a: Any, axis1: int, axis2: int) -> Tracer:
    perm = list(range(a.ndim))
    i, j = normalize_axes(axis1, a.ndim)[0], normalize_axes(axis2, a.ndim)[0]
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Tracer:
    src = normalize_axes(source, a.ndim) if isinstance(source, int) else tuple(
        normalize_axes(s, a.ndim)[0] for s in source)
    dst = normalize_axes(destination, a.ndim) if isinstance(destination, int) else tuple(
        normalize_axes(d, a.ndim)[0] for d in destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(a, order)


def rollaxis(a: Any, axis: int, start: int = 0) -> Tracer:
    """[HUNT4] NumPy's rollaxis: `axis` moved before position `start` (a view)."""
    n = a.ndim
    ax = normalize_axes(axis, n)[0]
    at = operator.index(start) + (n if start < 0 else 0)
    if not 0 <= at < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but "
                                      f"{start} was passed in")
    order = [d for d in range(n) if d != ax]
    order.insert(at - (ax < at), ax)
    return transpose(a, order)


def reshape(a: Any, *shape: Any, order: str = "C", **kw: Any) -> Tracer:
    if order not in ("C", "F"):
        raise unsupported(f"reshape with order={order!r}")
    if "newshape" in kw:
        shape = (kw.pop("newshape"),)
    if "shape" in kw:
        shape = (kw.pop("shape"),)
    if kw:
        raise unsupported(f"reshape with {', '.join(kw)}")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and not (
            isinstance(shape[0], Tracer) and shape[0].ndim == 0):  # [B16] a traced Python int
        shape = tuple(shape[0])
    size = a.size if isinstance(a, Tracer) else np.size(a)
    new = _resolve_shape(tuple(as_size(s) for s in shape), size, a.shape)
    if order == "F":  # [H16] NumPy's column-major order: the reversed axes reshaped in C order
        return transpose(reshape(transpose(a), tuple(reversed(new))))
    if new == tuple(a.shape):
        return a if isinstance(a, Tracer) else _view(a, "reshape", new, shape=new)
    if isinstance(a, Tracer) and (strides := _strides(a)) is not None and \
            _reshaped_strides(a.value.shape, strides, new) is None:
        a = copy_(a)  # [H16] NumPy copies here: writes to the result must not reach `a`
    return _view(a, "reshape", new, shape=new)


def _strides(t: Tracer) -> tuple[Any, ...] | None:
    """[H16] `t`'s element strides in the array it views (an array of its own is laid out as
    NumPy lays out the op that made it), following its chain of views as NumPy lays them
    out; None where unknown."""
    if t.parent is None or t.view_op is None:  # [B16] an argument as the caller laid it out
        return t.layout if t.layout is not None else \
            t.builder.numpy_strides(t.value if t.born is None else t.born)
    kind, attrs = t.view_op
    outer = _strides(t.parent)
    if outer is None:
        return None
    if kind == "slice":
        return tuple(s * step for s, step in zip(outer, attrs["steps"], strict=True))
    if kind == "transpose":
        return tuple(outer[k] for k in attrs["perm"])
    if kind == "reshape":
        return _reshaped_strides(t.parent.value.shape, outer, attrs["shape"])
    if kind == "broadcast":
        shape, old = attrs["shape"], t.parent.value.shape
        padded = (0,) * (len(shape) - len(old)) + outer
        lead = len(shape) - len(old)
        return tuple(0 if d < lead or (old[d - lead] == 1 and n != 1) else padded[d]
                     for d, n in enumerate(shape))
    return outer if kind == "elementwise" else None  # .real / .imag: the same layout


def _reshaped_strides(old_shape: tuple[Any, ...], old_strides: tuple[Any, ...],
                      new_shape: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """[H16] NumPy's _attempt_nocopy_reshape (C order): the strides of `new_shape` viewing the
    same elements, or None when NumPy must copy. Empty arrays are always views."""
    if math.prod(old_shape) == 0:
        return contiguous_strides(new_shape)
    dims = [(n, s) for n, s in zip(old_shape, old_strides, strict=True) if n != 1]
    olddims, oldstrides = [n for n, _ in dims], [s for _, s in dims]
    newstrides: list[Any] = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(olddims):
        np_, op = new_shape[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ = np_ * new_shape[nj]
                nj += 1
            else:
                op = op * olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return None
        newstrides[nj - 1] = oldstrides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newstrides[nk - 1] = newstrides[nk] * new_shape[nk]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new_shape)):
        newstrides[nk] = last
    return tuple(newstrides)


def _resolve_shape(shape: tuple[int, ...], size: int, old: tuple[int, ...]) -> tuple[int, ...]:
    if builtins.sum(map(_unknown, shape)) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = math.prod(s for s in shape if not _unknown(s))
    if builtins.any(map(_unknown, shape)):
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if _unknown(s) else s for s in shape)
    if math.prod(shape) != size or builtins.any(s < 0 for s in shape):
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _unknown(s: Any) -> bool:
    return isinstance(s, int) and s == -1


def ravel(a: Any, order: str = "C") -> Tracer:
    flat = reshape(a, (-1,), order=order)
    if isinstance(flat, Tracer) and flat.size > 1 and _strides(flat) not in (None, (1,)):
        return copy_(flat)  # [B16] NumPy's ravel is a view only of a contiguous array
    return flat


def broadcast_to(a: Any, shape: Any, subok: bool = False) -> Tracer:
    shape = (as_size(shape),) if isinstance(shape, (int, np.integer, Sym)) else tuple(shape)
    b = find_builder((a,))
    v = to_value(b, a)
    if len(shape) < v.ndim or broadcast_shapes(v.shape, shape) != shape:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {v.shape} and requested shape {shape}")
    return _view(a, "broadcast", shape, shape=shape)


def expand_dims(a: Any, axis: Any) -> Tracer:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = a.ndim + len(axes)
    axes = normalize_axes(axes, ndim)
    it = iter(a.shape)
    shape = tuple(1 if i in axes else next(it) for i in range(ndim))
    return reshape(a, shape)


def squeeze(a: Any, axis: Any = None) -> Tracer:
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = normalize_axes(axis, a.ndim)
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
    return reshape(a, tuple(s for i, s in enumerate(a.shape) if i not in axes))


# ---- indexing ------------------------------------------------------------------------------

def _expand_index(index: Any, ndim: int) -> list[Any]:
    items = list(index) if isinstance(index, tuple) else [index]
    n_ell = builtins.sum(1 for i in items if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {used} were indexed")
    if n_ell:
        pos = next(k for k, i in enumerate(items) if i is Ellipsis)
        items[pos:pos + 1] = [slice(None)] * (ndim - used)
    else:
        items += [slice(None)] * (ndim - used)
    return items


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_array_index(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, list))


def _basic_index(a: Tracer, items: list[Any]) -> tuple[Tracer, list[int]]:
    """Apply ints, slices and None; return the view and where array indices now sit."""
    starts, steps, sizes, final, array_dims = [], [], [], [], []
    dim = 0
    for it in items:
        if it is None:
            final.append(1)
            continue
        n = a.shape[dim]
        if _is_int(it):
            k = int(it)
            _check_int_index(k, n, dim)
            starts.append(k + n if k < 0 else k)
            steps.append(1)
            sizes.append(1)
        elif isinstance(it, slice):
            start, _, step, count = slice_indices(it, n)
            starts.append(start if count else 0)
            steps.append(step)
            sizes.append(count)
            final.append(count)
        elif _is_array_index(it):
            array_dims.append(len(final))
            starts.append(0)
            steps.append(1)
            sizes.append(n)
            final.append(n)
        else:
            raise IndexError(f"stax.jit: unsupported index {it!r} (only integers, slices "
                             "(`:`), ellipsis (`...`), None and integer arrays are valid)")
        dim += 1
    view = a
    if not same_shape(tuple(sizes), tuple(a.shape)) or builtins.any(s != 0 for s in starts) or \
            builtins.any(s != 1 for s in steps):
        view = _view(a, "slice", tuple(sizes), starts=tuple(starts), steps=tuple(steps))
    if tuple(final) != tuple(view.shape):
        view = reshape(view, tuple(final))
    return view, array_dims


def _constant_masks(index: Any, shape: tuple[Any, ...]) -> Any:
    """[HUNT] A boolean index known while tracing (a list or array of bools, not traced) is
    NumPy's nonzero() of it: one integer array per axis it covers, whose sizes it must match
    (NumPy's IndexError)."""
    items = list(index) if isinstance(index, tuple) else [index]

    def known(it: Any) -> bool:
        return isinstance(it, np.ndarray) or isinstance(it, list) and builtins.all(
            known(v) if isinstance(v, list) else not isinstance(v, Tracer) for v in it)
    masks = {k for k, it in enumerate(items) if isinstance(it, (np.ndarray, list)) and known(it)
             and np.ndim(it) > 0 and np.asarray(it).dtype == bool}
    if not masks:
        return index
    width = [np.ndim(it) if k in masks else int(it is not None and it is not Ellipsis)
             for k, it in enumerate(items)]
    if builtins.sum(width) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {builtins.sum(width)} were indexed")
    ellipsis = next((k for k, it in enumerate(items) if it is Ellipsis), len(items))
    out: list[Any] = []
    for k, it in enumerate(items):
        if k not in masks:
            out.append(it)
            continue
        m = np.asarray(it)
        first = builtins.sum(width[:k]) if k < ellipsis else len(shape) - builtins.sum(width[k:])
        for d, n in enumerate(m.shape):
            if shape[first + d] != n and n:  # (NumPy lets an empty axis of the mask pass)
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{first + d}; size of axis is {shape[first + d]} but size "
                                 f"of corresponding boolean axis is {n}")
        out.extend(np.nonzero(m))
    return tuple(out)


def getitem(a: Tracer, index: Any) -> Tracer:
    a.check_fresh()
    index = _constant_masks(index, tuple(a.shape))
    items = _expand_index(index, a.ndim)
    arrays = [it for it in items if _is_array_index(it)]
    if builtins.any(isinstance(it, (bool, np.bool_)) for it in items) or builtins.any(
            np.asarray(it).dtype == bool for it in arrays if not isinstance(it, Tracer)) or \
            builtins.any(isinstance(it, Tracer) and it.dtype == bool for it in arrays):
        raise unsupported("boolean mask indexing (its result shape depends on the data)")
    if not arrays:
        view = _basic_index(a, items)[0]
        if view is not a:  # [TOPK] `np.sort(x)[..., -k:]`: a top-k of x
            from stax.frontend.topk import selected_slice

            top = selected_slice(view, None, "np.sort")
            if top is not None:
                return Tracer(a.builder, top.value, parent=a, view=view.view_op)
        # [FUZZ] integers for every axis give NumPy a scalar, a copy: `s = x[0]; s += 1` must
        # not write into x (a 0-d view did).
        raw = index if isinstance(index, tuple) else (index,)
        if len(raw) == a.ndim and builtins.all(_is_int(it) for it in raw):
            return _scalar(copy_(view))
        return view
    # Advanced indexing: once an array is present, integers are 0-d index arrays too. All
    # index arrays broadcast together; their dimensions replace the indexed axes in place when
    # the advanced indices are adjacent, and go first otherwise (NumPy's rule).
    advanced = [k for k, it in enumerate(items) if _is_array_index(it) or _is_int(it)]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    dim = 0
    for k, it in enumerate(items):
        if _is_int(it):
            _check_int_index(int(it), a.shape[dim], dim)
            items[k] = np.asarray(it, dtype=np.int64)
        dim += it is not None
    view, array_dims = _basic_index(a, items)
    b = a.builder
    indices = [_index_value(b, it) for it in items if _is_array_index(it)]
    try:
        shape = tuple(broadcast_shapes(*(v.shape for v in indices)))  # [DYN16] symbolic
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str(v.shape) for v in indices)) from None
    indices = [broadcast_value(b, v, shape) for v in indices]
    result = _take(b, view.value, indices, tuple(array_dims), array_dims[0] if adjacent else 0)
    if type(count := indices[0].size) is int and count and known_empty(result.shape):
        _check_indices(b, view.value, indices, tuple(array_dims))
    raw = index if isinstance(index, tuple) else (index,)
    if builtins.all(isinstance(it, Tracer) and it.scalar for it in arrays) and not (
            len(raw) == a.ndim and builtins.all(_is_int(it) or _is_array_index(it) for it in raw)):
        # [REVIEW] integers NumPy holds as scalars, known only at run time (`x[n]`, `x[n - 1,
        # 1:]`): NumPy's basic indexing, a view. Stax gathers it; written to later, `a` shows
        # through (derived again); written into, it is stored back at its index (`_rebind`)
        from stax.frontend.functions import derived_view

        view = derived_view(a, lambda x: getitem(x, index), True, None, result)
        view.view_op[1]["index"] = index  # type: ignore[index]
        view.view_op[1]["scalars"] = {  # type: ignore[index]  # [HUNT6] returned: a view
            k: it.value for k, it in enumerate(raw) if isinstance(it, Tracer)}
        return view
    return result


def _check_int_index(k: int, n: int, dim: int) -> None:
    if not -n <= k < n:
        raise IndexError(f"index {k} is out of bounds for axis {dim} with size {n}")


def index_array(idx: Any) -> Any:
    """An index as NumPy reads it: an empty list is an (empty) integer index. [H16]"""
    if isinstance(idx, (list, tuple)) and not np.size(idx):
        return np.asarray(idx, dtype=np.intp)
    return idx if isinstance(idx, Tracer) else np.asarray(idx)


def stored_fill(value: Any, dtype: np.dtype) -> Any:
    """A fill value as NumPy's np.full / full_like store it (copyto with casting='unsafe':
    a Python int out of range is NumPy's OverflowError). [H16]"""
    out = np.empty((), dtype)
    np.copyto(out, value, casting="unsafe")
    return out.item()


def _index_value(b: Builder, idx: Any) -> Value:
    v = to_value(b, index_array(idx))
    if v.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer type")
    return to_value(b, wrap(b, v), np.dtype(np.int64))


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Tracer:
    if out is not None or mode not in ("raise", "wrap", "clip"):
        raise unsupported("np.take with out= or mode=")
    b = find_builder((a, indices))
    v = to_value(b, a)
    if axis is None:
        v = b.add("reshape", (v,), (v.size,), v.dtype, shape=(v.size,))
        axis = 0
    (ax,) = normalize_axes(axis, v.ndim)
    index = wrap(b, _index_value(b, indices))
    n = v.shape[ax]
    if mode != "raise" and n == 0 and index.size:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode == "wrap" and n:  # [B16] NumPy's modes: indices taken modulo n, or clipped
        index = apply_ufunc("remainder", index, n)
    elif mode == "clip" and n:
        index = clip(index, 0, n - 1)
    return _take(b, v, [index.value], (ax,), ax)


def _take(b: Builder, v: Value, indices: list[Value], axes: tuple[int, ...],
          position: int) -> Tracer:
    """`v` indexed along `axes` by int64 `indices` of one shape (a gather, not a view); the
    indices' dimensions sit at `position` among the remaining axes."""
    count = indices[0].size
    for ax in axes:
        if v.shape[ax] == 0 and count:
            raise IndexError(f"cannot do a non-empty take from an empty axis {ax}")
    rest = tuple(n for d, n in enumerate(v.shape) if d not in axes)
    shape = rest[:position] + indices[0].shape + rest[position:]
    return wrap(b, b.add("take", (v, *indices), shape, v.dtype, axes=axes, position=position))


def _check_indices(b: Builder, v: Value, indices: list[Value], axes: tuple[int, ...]) -> None:
    """`x[:, j]` of x (0, n) gathers no element, but NumPy's indexing checks j all the same
    (np.take does not): an unused gather of the indices alone from a zero array of the axes'
    extents, kept for its bounds check (lower.py `unused_gather`)."""
    zero = b.add("const", (), (), np.dtype(np.int8), value=0)
    probe = broadcast_value(b, zero, tuple(v.shape[ax] for ax in axes))
    b.add("take", (probe, *indices), indices[0].shape, probe.dtype,
          axes=tuple(range(len(axes))), position=0)


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tracer:
    b = find_builder((arr, indices))
    v = to_value(b, arr)
    if axis is None:
        v = b.add("reshape", (v,), (v.size,), v.dtype, shape=(v.size,))
        axis = 0
    iv = _index_value(b, indices)
    if iv.ndim != v.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    (ax,) = normalize_axes(axis, v.ndim)
    shape = broadcast_shapes(tuple(1 if i == ax else s for i, s in enumerate(v.shape)),
                             tuple(1 if i == ax else s for i, s in enumerate(iv.shape)))
    out_shape = tuple(iv.shape[ax] if i == ax else s for i, s in enumerate(shape))
    v = broadcast_value(b, v, tuple(v.shape[ax] if i == ax else s for i, s in enumerate(shape)))
    iv = broadcast_value(b, iv, out_shape)
    if v.shape[ax] == 0 and iv.size:
        raise IndexError(f"cannot do a non-empty take from an empty axis {ax}")
    return wrap(b, b.add("gather", (v, iv), out_shape, v.dtype, axis=ax))


def setitem(a: Tracer, index: Any, value: Any) -> None:
    """`a[index] = value`, functionalized: `a` is rebound to a new value (and, for a view,
    so is every array it views, as in NumPy)."""
    a.check_fresh()
    b = a.builder
    items = _expand_index(index, a.ndim)
    if builtins.any(_is_array_index(it) for it in items):
        raise unsupported("assignment with integer-array indices")
    region, _ = _basic_index(a, items)
    val = operand_value(b, value, a.dtype)  # NumPy assigns with casting='unsafe'
    # Broadcast the right side to the selected region without its inserted/removed unit dims.
    sel_shape, starts, steps = [], [], []
    dim = 0
    for it in items:
        if it is None:
            continue
        n = a.shape[dim]
        if _is_int(it):
            starts.append(int(it) % n)
            steps.append(1)
            sel_shape.append(1)
        else:
            start, _, step, count = slice_indices(it, n)
            starts.append(start)
            steps.append(step)
            sel_shape.append(count)
        dim += 1
    # [FUZZ] NumPy drops the value's leading unit dimensions the region lacks (`x[0] = v` with
    # v of shape (1,))
    while val.ndim > len(region.shape) and val.shape[0] == 1:
        val = b.add("reshape", (val,), val.shape[1:], val.dtype, shape=val.shape[1:])
    val = broadcast_value(b, val, tuple(region.shape))
    val = b.add("reshape", (val,), tuple(sel_shape), val.dtype, shape=tuple(sel_shape)) \
        if tuple(region.shape) != tuple(sel_shape) else val
    new = b.add("setitem", (a.value, val), a.shape, a.dtype, starts=tuple(starts),
                steps=tuple(steps))
    _rebind(a, new)


def _rebind(a: Tracer, new: Value) -> None:
    """`a` now holds `new`. A view writes the new values back through its chain of views to
    the array it views (seed 000 §7.1's renaming: each write makes a new value)."""
    node, value, chain = a, new, [a]
    while node.parent is not None:
        kind, attrs = node.view_op  # type: ignore[misc]
        parent = node.parent
        b = parent.builder
        if kind == "slice":
            value = b.add("setitem", (parent.value, value), parent.value.shape,
                          parent.value.dtype, starts=attrs["starts"], steps=attrs["steps"])
        elif kind == "reshape":
            value = b.add("reshape", (value,), parent.value.shape, value.dtype,
                          shape=parent.value.shape)
        elif kind == "transpose":
            inverse = tuple(int(k) for k in np.argsort(attrs["perm"]))
            value = b.add("transpose", (value,), parent.value.shape, value.dtype, perm=inverse)
        elif kind == "elementwise":  # [E16] z.real / z.imag of a complex array
            raise unsupported("assignment into .real or .imag of a complex array")
        elif kind == "derived" and attrs.get("index") is not None:  # [REVIEW] x[n]: stored
            node.value = value  # back at its index (`x[n] += v`, `r = x[n]; r[0] = 1`)
            parent[attrs["index"]] = node
            break
        elif kind == "derived" and attrs["writeable"]:  # [HUNT3] np.einsum's view
            raise unsupported("assignment into the view np.einsum returns")
        else:  # a broadcast view: NumPy's broadcast_to returns a read-only array (so does
            # np.diagonal) [HUNT3]
            raise ValueError("assignment destination is read-only")
        parent.value = value
        node = parent
        chain.append(node)
    else:
        node.version += 1
    a.value = new
    for view in chain:  # the views written through now show the new values
        if view.base is not None:
            view.base_version = view.base.version


def inplace(a: Tracer, result: Tracer, ufunc: str = "positive") -> Tracer:
    """`a op= b` / `out=a`: NumPy writes the result of `ufunc` into `a` (casting 'same_kind';
    refused with NumPy's own UFuncTypeError)."""
    if not isinstance(a, Tracer) or a.scalar:  # [FUZZ] a scalar is immutable: rebinds
        return result
    # [FUZZ] the casting rule is checked before the shape, as NumPy does
    if not np.can_cast(result.dtype, a.dtype, casting="same_kind"):
        fn = getattr(np, ufunc)  # [H16] NumPy's error, raised by NumPy on one element
        fn(*[np.ones((1, 1), result.dtype)] * fn.nin, out=np.ones((1, 1), a.dtype))
        raise TypeError(f"Cannot cast ufunc {ufunc!r} output from dtype('{result.dtype}') to "
                        f"dtype('{a.dtype}') with casting rule 'same_kind'")
    if tuple(result.shape) != tuple(a.shape):
        # [FUZZ] `out=` may be larger than the inputs' broadcast shape (NumPy iterates over
        # out's shape): np.add(v, v, out=x) with v (2,) and x (1, 2)
        try:
            fits = broadcast_shapes(tuple(result.shape), tuple(a.shape)) == tuple(a.shape)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"non-broadcastable output operand with shape {a.shape} doesn't "
                             f"match the broadcast shape {result.shape}")
        result = wrap(a.builder, broadcast_value(a.builder, to_value(a.builder, result),
                                                 tuple(a.shape)))
    a.check_fresh()
    _rebind(a, to_value(a.builder, result, a.dtype))
    return a


# ---- joining ---------------------------------------------------------------------------------

def concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, dtype: Any = None,
                **kw: Any) -> Tracer:
    if out is not None or kw:
        raise unsupported("np.concatenate with out= or casting=")
    b = find_builder(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    res = np.dtype(dtype) if dtype is not None else np.result_type(
        *(_weak_for_result_type(a) if isinstance(a, Tracer) else np.asarray(a).dtype
          for a in arrays))
    res = check_dtype(res, "np.concatenate's result")
    values = [to_value(b, a, res) for a in arrays]
    if axis is None:
        values = [b.add("reshape", (v,), (v.size,), v.dtype, shape=(v.size,)) for v in values]
        axis = 0
    ndim = values[0].ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    (ax,) = normalize_axes(axis, ndim)
    for i, v in enumerate(values):
        if v.ndim != ndim:
            raise ValueError("all the input array dimensions except for the concatenation axis "
                             f"must match exactly, but array at index {i} has {v.ndim} "
                             f"dimension(s) and array at index 0 has {ndim} dimension(s)")
        for d in range(ndim):
            if d != ax and v.shape[d] != values[0].shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{values[0].shape[d]} and the array at index {i} has size {v.shape[d]}")
    shape = list(values[0].shape)
    shape[ax] = builtins.sum(v.shape[ax] for v in values)
    return wrap(b, b.add("concatenate", tuple(values), tuple(shape), res, axis=ax))


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, **kw: Any) -> Tracer:
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {tuple(np.shape(a)) if not isinstance(a, Tracer) else tuple(a.shape)
              for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ndim = len(next(iter(shapes))) + 1
    (ax,) = normalize_axes(axis, ndim)
    b = find_builder(arrays)
    expanded = [expand_dims(a if isinstance(a, Tracer) else wrap(b, to_value(b, a)), ax)
                for a in arrays]
    return concatenate(expanded, axis=ax, out=out, **kw)


# ---- arrays of a constant --------------------------------------------------------------------

def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kw: Any) -> Tracer:
    if kw:
        raise unsupported(f"np.full_like with {', '.join(kw)}=")
    b = find_builder((a,))
    dtype = check_dtype(np.dtype(dtype) if dtype is not None else a.dtype, "np.full_like")
    shape = tuple(a.shape) if shape is None else (
        (as_size(shape),) if isinstance(shape, (int, np.integer, Sym)) else tuple(shape))
    return filled(b, shape, fill_value, dtype)


def filled(b: Builder, shape: tuple[Any, ...], fill: Any, dtype: np.dtype) -> Tracer:
    """A new array of `shape` filled with `fill` (np.full, np.full_like)."""
    if isinstance(fill, Tracer):  # [H16] a traced value, cast as NumPy's copyto does
        if fill.weak and fill.dtype.kind in "iu" and dtype.kind in "iu":
            # [FUZZ4] but a Python int beyond the dtype raises NumPy's OverflowError
            fill = wrap(b, operand_value(b, fill, dtype))
        return copy_(broadcast_to(astype(fill, dtype, copy=False), shape))
    value = b.add("const", (), (), dtype, value=stored_fill(fill, dtype))
    return wrap(b, broadcast_value(b, value, shape))


def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None) -> Tracer:
    return full_like(a, 0, dtype, order, subok, shape)


def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None) -> Tracer:
    return full_like(a, 1, dtype, order, subok, shape)


# ---- linear algebra (extern) ---------------------------------------------------------------

def matmul(a: Any, b_: Any, out: Any = None, dtype: Any = None, **kw: Any) -> Tracer:
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if isinstance(out, Tracer) and not kw:  # [HUNT8] out=: written as `a @= b` would be
        result = matmul(a, b_, dtype=dtype)
        core = builtins.min(result.ndim, 2)
        if out.ndim < result.ndim or tuple(out.shape[out.ndim - core:]) != \
                tuple(result.shape[result.ndim - core:]):
            raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimensions: "
                             f"{tuple(out.shape)} for a result of shape {tuple(result.shape)}")
        return inplace(out, result, "matmul")
    if out is not None or kw:
        raise unsupported("np.matmul with out= or extra arguments")
    b = find_builder((a, b_))
    if dtype is None:
        dtype = np.result_type(*(_weak_for_result_type(x) for x in (a, b_)))
    elif builtins.all(np.can_cast(x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype,
                                  dtype, "same_kind") for x in (a, b_)):
        dtype = np.dtype(dtype)  # [HUNT] NumPy's loop of that dtype: the operands cast to it
    else:
        raise unsupported("np.matmul with a dtype= its operands do not cast to")
    dtype = check_dtype(dtype, "matmul's result")
    va, vb = to_value(b, a, dtype), to_value(b, b_, dtype)
    if va.ndim == 0 or vb.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    shape = matmul_shape(va.shape, vb.shape)
    return _scalar(wrap(b, b.add("matmul", (va, vb), tuple(shape), dtype)))


def matmul_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's matmul result shape, from the shapes alone (A2: no matmul runs while tracing);
    on a mismatch NumPy's own error, raised by np.matmul on zero-stride operands before any
    arithmetic."""
    a2 = (1, *sa) if len(sa) == 1 else sa
    b2 = (*sb, 1) if len(sb) == 1 else sb
    try:
        if a2[-1] != b2[-2]:
            raise ValueError
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        try:
            np.matmul(*(np.broadcast_to(np.zeros((), np.int8), s) for s in (sa, sb)))
        except ValueError as e:
            raise ValueError(f"matmul: {e}") from None
        raise
    rows = (a2[-2],) if len(sa) > 1 else ()
    cols = (b2[-1],) if len(sb) > 1 else ()
    return (*batch, *rows, *cols)


def dot(a: Any, b_: Any, out: Any = None) -> Tracer:
    if np.ndim(a) == 0 or np.ndim(b_) == 0 or \
            (isinstance(a, Tracer) and a.ndim == 0) or (isinstance(b_, Tracer) and b_.ndim == 0):
        return apply_ufunc("multiply", a, b_)
    ndim_a = a.ndim if isinstance(a, Tracer) else np.ndim(a)
    ndim_b = b_.ndim if isinstance(b_, Tracer) else np.ndim(b_)
    if ndim_a < 2 or ndim_b < 3:
        return matmul(a, b_, out)
    # N-D dot: sum over a's last axis and b's second-to-last, the other axes all kept:
    # (A, L) @ (L, J*K) with b's contracted axis moved first.
    if out is not None:
        raise unsupported("np.dot with out=")
    b = find_builder((a, b_))
    ta, tb = wrap(b, to_value(b, a)), wrap(b, to_value(b, b_))
    shape_a, shape_b = ta.shape, tb.shape
    flat_a = reshape(ta, (-1, shape_a[-1]))
    flat_b = reshape(moveaxis(tb, -2, 0), (shape_b[-2], -1))
    return reshape(matmul(flat_a, flat_b), shape_a[:-1] + shape_b[:-2] + shape_b[-1:])


# ---- dispatch (NEP 13 / NEP 18) --------------------------------------------------------------

def array_ufunc(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    name = ufunc.__name__
    if method == "reduce" and name in ("add", "multiply", "maximum", "minimum",
                                       "logical_and", "logical_or"):
        fn = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
              "logical_and": "all", "logical_or": "any"}[name]
        return _reduce(fn, inputs[0], kwargs.pop("axis", 0), kwargs.pop("dtype", None),
                       kwargs.pop("out", None), kwargs.pop("keepdims", False), **kwargs)
    if method == "accumulate" and name in SCAN_OF_UFUNC:
        return _scan(SCAN_OF_UFUNC[name], inputs[0], kwargs.get("axis", 0), kwargs.get("dtype"),
                     kwargs.get("out"))
    if method != "__call__":
        raise unsupported(f"np.{name}.{method}")
    if name == "matmul":
        return matmul(*inputs, **kwargs)
    if name == "divmod" and not kwargs:
        return divmod_(*inputs)
    if name == "modf" and not kwargs:
        return modf(*inputs)
    if name == "divmod" and set(kwargs) == {"out"} and isinstance(kwargs["out"], tuple) and \
            len(kwargs["out"]) == 2 and builtins.all(
                isinstance(t, Tracer) for t in kwargs["out"]):  # [HUNT] out=(q, r)
        for target in kwargs["out"]:
            out_array(target)
        for target, value, fn in zip(kwargs["out"], divmod_(*inputs),
                                     ("floor_divide", "remainder"), strict=True):
            inplace(target, value, fn)
        return kwargs["out"]
    op = ops.by_ufunc(ufunc)  # [A1] dispatch on the ufunc object itself
    if op is None:
        raise unsupported(f"np.{name}")
    out, mask = kwargs.pop("out", None), kwargs.pop("where", True)
    out_array(out[0] if isinstance(out, tuple) else out)
    dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
    if kwargs or casting not in ("same_kind", "unsafe") or mask is not True and out is None:
        raise unsupported(f"np.{name} with {', '.join(kwargs) or 'casting=, or where='}"
                          f"{'' if kwargs else ' without out='}")
    if dtype is not None:  # [HUNT] the inputs cast to the loop NumPy picks for that dtype
        dtype = check_dtype(np.dtype(dtype), f"np.{name}'s dtype")
        for a in inputs:
            if type(a) is int and dtype.kind in "iu":  # NumPy converts it first (NEP 50)
                np.asarray(a, dtype=dtype)
        loop = ufunc.resolve_dtypes(
            tuple(dtype_spec(a) for a in inputs) + (None,) * ufunc.nout,
            signature=(None,) * ufunc.nin + (dtype,) * ufunc.nout, casting=casting)
        b = find_builder(inputs)
        inputs = tuple(wrap(b, to_value(b, a, loop[i])) for i, a in enumerate(inputs))
    if mask is not True:  # [FUZZ2] masked-out elements are not computed in NumPy: no
        # division by zero, negative integer power or invalid value is reported from them
        inputs = tuple(where(mask, a, np.ones((), a.dtype)) if isinstance(a, Tracer) else a
                       for a in inputs)
    result = apply_ufunc(op.name, *inputs, function=True)
    if out is not None:
        target = out[0] if isinstance(out, tuple) else out
        if not isinstance(target, Tracer):
            raise unsupported(f"np.{name} with out= that is not a traced array")
        if casting == "unsafe":  # [HUNT] any cast into out
            result = astype(result, target.dtype, copy=False)
        if mask is not True:  # [HUNT] out keeps its values where the mask is False
            result = where(mask, result, target)
        inplace(target, result, op.name)
        return target
    return result


def _round(a: Any, decimals: int = 0, out: Any = None) -> Tracer:
    if out is not None:
        raise unsupported("np.round with out=")
    b = find_builder((a,))
    x = a if isinstance(a, Tracer) else wrap(b, to_value(b, a))
    integral = x.dtype.kind in "iu"
    if integral and decimals >= 0:
        return x  # NumPy returns the integer array itself
    if x.dtype.kind == "b":  # NumPy's rint to float16, or its error scaling into a bool
        np.round(np.zeros(0, x.dtype), decimals)  # array (UFuncTypeError) [FIX16]
    if decimals == 0 or x.dtype.kind == "b":
        return apply_ufunc("rint", x)
    # NumPy's algorithm: scale by a power of ten (a weak Python float), rint, scale back;
    # integers go through float64 and are cast back.
    work = astype(x, np.float64) if integral else x
    scale = 10.0 ** builtins.abs(decimals)
    there, back = ("multiply", "true_divide") if decimals > 0 else ("true_divide", "multiply")
    result = apply_ufunc(back, apply_ufunc("rint", apply_ufunc(there, work, scale)), scale)
    return astype(result, x.dtype) if integral else result


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.where: where, np.clip: clip, np.sum: sum, np.prod: prod, np.max: max, np.amax: max,
    np.min: min, np.amin: min, np.mean: mean, np.var: var, np.std: std, np.argmax: argmax,
    np.argmin: argmin, np.any: any, np.all: all, np.cumsum: cumsum, np.cumprod: cumprod,
    np.transpose: transpose, np.swapaxes: swapaxes, np.moveaxis: moveaxis, np.rollaxis: rollaxis,
    np.reshape: reshape,
    np.ravel: ravel, np.broadcast_to: broadcast_to, np.expand_dims: expand_dims,
    np.squeeze: squeeze, np.concatenate: concatenate, np.stack: stack, np.matmul: matmul,
    np.dot: dot, np.take_along_axis: take_along_axis, np.take: take, np.copy: copy_,
    np.round: _round, np.around: _round, np.full_like: full_like, np.zeros_like: zeros_like,
    np.ones_like: ones_like, np.empty_like: zeros_like,
    np.shape: lambda a: tuple(a.shape), np.ndim: lambda a: a.ndim, np.size: lambda a: a.size,
    np.real: lambda a: real(a), np.imag: lambda a: imag(a), np.angle: lambda z, deg=False:
    angle(z, deg),
}


# ---- complex parts [E16] -------------------------------------------------------------------

def real(a: Any) -> Tracer:
    """`z.real` / `np.real(z)`: for a complex array a view of the real parts (reading only:
    an assignment into it is refused); a real array is its own real part."""
    b = find_builder((a,))
    v = to_value(b, a)
    if v.dtype.kind != "c":
        return a if isinstance(a, Tracer) else wrap(b, v)
    return _complex_part("real", a, v)


def imag(a: Any) -> Tracer:
    """`z.imag` / `np.imag(z)`: the imaginary parts (zeros for a real array, as NumPy)."""
    b = find_builder((a,))
    v = to_value(b, a)
    if v.dtype.kind != "c":
        zero = b.add("const", (), (), v.dtype, value=v.dtype.type(0).item())
        weak = isinstance(a, Tracer) and a.weak  # (3.0).imag is a Python float
        return Tracer(b, broadcast_value(b, zero, v.shape), weak=weak)
    return _complex_part("imag", a, v)


def _complex_part(fn: str, a: Any, v: Value) -> Tracer:
    b = find_builder((a,))
    dtype = np.dtype(f"f{v.dtype.itemsize // 2}")
    out = b.add("elementwise", (v,), v.shape, dtype, fn=fn)
    if not isinstance(a, Tracer):
        return wrap(b, out)
    # a Python complex argument's parts are Python floats: weak (NEP 50)
    part = Tracer(b, out, weak=a.weak, parent=a, view=("elementwise", {"fn": fn}))
    part.scalar = part.scalar or a.scalar  # [HUNT11] a NumPy scalar's part is one (np.float64)
    return part


def angle(z: Any, deg: bool = False) -> Tracer:
    """`np.angle`: NumPy's arctan2(imag, real) (a real array: arctan2(0, x), 0 weak)."""
    b = find_builder((z,))
    complex_ = to_value(b, z).dtype.kind == "c"
    result = apply_ufunc("arctan2", imag(z) if complex_ else 0, real(z), function=True)
    if deg:
        result = inplace(result, apply_ufunc("multiply", result, 180 / np.pi))
    return result


def array_function(self: Tracer, func: Callable[..., Any], types: Any, args: Any,
                   kwargs: Any) -> Any:
    impl = FUNCTIONS.get(func)
    if impl is None:
        module = getattr(func, "__module__", "numpy") or "numpy"
        module = "np" + module[len("numpy"):] if module.startswith("numpy") else module
        module = module.replace("._core.fromnumeric", "").replace("._core.multiarray", "")
        raise unsupported(f"{module}.{func.__name__}")
    result = impl(*args, **kwargs)
    for r in result if isinstance(result, tuple) else (result,):  # np.average(returned=True)
        if isinstance(r, Tracer) and r.ndim == 0 and not builtins.any(
                r is a for a in (*args, *kwargs.values())):
            zero_d_kind(func.__name__, r, args[0] if args else None)
    return result


# NumPy functions whose 0-d results are 0-d arrays (np.copy(s), np.where(c, 1.0, 2.0)), and
# those that keep their argument's kind (np.squeeze(s) of a NumPy scalar is a scalar, of a 0-d
# array a 0-d array); every other function returns a NumPy scalar there (np.median, np.dot)
ARRAY_RESULTS = frozenset({
    "copy", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
    "where", "select", "broadcast_to", "full", "zeros", "ones", "empty", "full_like",
    "zeros_like", "ones_like", "empty_like", "tensordot", "cov", "corrcoef"})
KIND_KEPT = frozenset({"squeeze", "reshape", "transpose", "real", "imag", "conj", "conjugate",
                       "astype"})


def zero_d_kind(name: str, result: Tracer, source: Any) -> None:
    """Mark the 0-d `result` of NumPy function or method `name` (on `source`) a NumPy scalar
    or a 0-d array, as NumPy returns it (`stax.api` returns the one or the other)."""
    if name in KIND_KEPT:
        result.scalar = not isinstance(source, Tracer) or source.scalar
        result.array0 = isinstance(source, Tracer) and source.is_array
    elif name in ARRAY_RESULTS:
        result.array0 = True
    else:
        result.scalar = True  # also a view made inside (np.inner's tensordot): NumPy's is not


# Methods attached to Tracer (see trace.install_methods).
METHODS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
           "cumsum", "cumprod", "reshape", "ravel", "swapaxes", "squeeze", "astype", "copy",
           "clip", "dot", "take", "round", "flatten")


def flatten(a: Tracer, order: str = "C") -> Tracer:
    return copy_(ravel(a, order))


def copy(a: Tracer, order: str = "C") -> Tracer:  # ndarray.copy: C order (np.copy: K)
    return copy_(a, order)


def round(a: Tracer, decimals: int = 0, out: Any = None) -> Tracer:  # noqa: A001
    return _round(a, decimals, out)

