"""Slices whose length depends on the loop index, in a masked full-length form.

`L[i, :i]`, `A[i + 1:, i]`, `x[:k]` inside a loop body have a length that changes with the
index, so the body cannot have one shape for all iterations. Such a slice is traced as a
full-length gather (length `lmax`, the most it has over the loop's range) whose positions past
its actual length `n(i)` are masked: position `p` holds element `start(i) + p*step`, read at a
clamped index (never out of bounds) and valid while `p < n(i)`. Positions stay relative to the
slice's start, so two slices of equal length line up as NumPy lines them up (`x[i:] + y[:n-i]`).

A `MaskedTracer` carries the masks (one per masked axis: the length's runtime value, the key of
the length function, its least and greatest values) through what can keep them exact:
elementwise ufuncs and `np.where` (operands masked on one axis must have the same length
function), `astype`/`copy`/transposes, `np.flip` (within the valid prefix), reductions and
`dot`/`matmul`/`inner` over a masked axis (masked positions read as the neutral element: 0 for
sums and dot products, 1 for products, -inf/+inf for max/min), and assignment
(`L[i, :i] = v`, `y[:k] += ...`: a masked `where` on the destination; see
`stax.loops.affine.masked_assignment`). Anything else done with a masked value (its shape, an
index into it, an unknown function) falls back: the loop is unrolled, as before.
"""

from __future__ import annotations

import dis
import functools
import math
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from stax.frontend.trace import Tracer

Affine = tuple[int, dict[int, int]]
ENUMERATE_LIMIT = 1 << 20  # index points enumerated to find a length function's values


class MaskFallback(BaseException):  # noqa: N818 - a control-flow signal, like LoopFallback
    """A masked value used in a way that cannot stay exact: the innermost loop falls back
    (caught by `stax.loops.recognize`; a BaseException, so the frontend's handlers let it
    pass)."""


@dataclass(frozen=True)
class Mask:
    """A masked axis: positions `p >= length` (a 0-d int64 tracer) hold no element."""

    key: tuple[Any, ...]  # equal keys: equal lengths in every iteration
    length: Tracer
    lmin: int
    lmax: int


@dataclass(frozen=True)
class SliceForm:
    """`start:stop:step` on an axis of size `n`, bounds affine in the loop indices."""

    start: Affine
    stop: Affine
    step: int
    n: int
    start_value: Any  # the int or tracer the user wrote (None: 0 or n)
    stop_value: Any


class Ranges(dict[int, range]):
    """Loop index value id -> its range (for a loop over a run-time range: the hull of its
    trips). `links`: for such a loop, its bounds (start, stop forms in the enclosing indices,
    step), so the index points actually visited can be enumerated (`index_points`)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[int, tuple[Affine, Affine, int]] = {}


POINTS_LIMIT = 1 << 16  # joint index points enumerated in Python


def index_points(ids: list[int], ranges: Mapping[int, range]
                 ) -> tuple[tuple[int, ...], dict[int, np.ndarray]] | None:
    """The index tuples the loops visit, for `ids` and the enclosing indices their run-time
    ranges depend on: (all ids, in creation order), {id: values, one per point}. None: no
    run-time range among them, or too many points."""
    links = getattr(ranges, "links", {})
    closure, todo = set(), list(ids)
    while todo:
        k = todo.pop()
        if k not in closure:
            closure.add(k)
            if k in links:
                todo += [*links[k][0][1], *links[k][1][1]]
    if not closure & set(links):
        return None
    order = tuple(sorted(closure))  # value ids grow as loops open: enclosing indices first
    key = tuple((k, ranges[k], _link_key(links.get(k))) for k in order)
    if key not in _POINTS:  # a function of the key alone: shared by traces and calls
        if len(_POINTS) >= 64:
            del _POINTS[next(iter(_POINTS))]
        _POINTS[key] = _points(order, ranges, links)
    return _POINTS[key]


# index_points by the ranges and links they use (every slice of a body asks for the same
# points: enumerated once, with arrays, not once per slice with Python dicts)
_POINTS: dict[tuple[Any, ...], Any] = {}


def _link_key(link: tuple[Affine, Affine, int] | None) -> tuple[Any, ...] | None:
    return None if link is None else (_key(link[0]), _key(link[1]), link[2])


def _points(order: tuple[int, ...], ranges: Mapping[int, range],
            links: Mapping[int, tuple[Affine, Affine, int]]
            ) -> tuple[tuple[int, ...], dict[int, np.ndarray]] | None:
    """`index_points` enumerated with arrays: one column per index, a row per point."""
    cols: dict[int, np.ndarray] = {}
    count = 1

    def value(form: Affine) -> np.ndarray:
        out = np.full(count, form[0], np.int64)
        for k, a in form[1].items():
            out += a * cols[k]
        return out

    for k in order:
        if k in links:
            start, stop, step = links[k]
            first = value(start)
            lengths = np.maximum(-(-(value(stop) - first) // step), 0)  # len(range(...))
        else:
            r = ranges[k]
            first = np.full(count, r.start, np.int64)
            step, lengths = r.step, np.full(count, len(r), np.int64)
        total = int(lengths.sum())
        if total > POINTS_LIMIT:
            return None
        rows = np.repeat(np.arange(count), lengths)
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths,
                                                              lengths)
        cols = {j: c[rows] for j, c in cols.items()}
        cols[k] = first[rows] + step * within
        count = total
    return order, cols


def _key(form: Affine) -> tuple[Any, ...]:
    return form[0], tuple(sorted(form[1].items()))


def length_info(sf: SliceForm, ranges: Mapping[int, range]) -> tuple[tuple[Any, ...], int, int]:
    """The slice length's key, least and greatest value over the indices' ranges (NumPy's
    clamping included). Raises MaskFallback where a bound may be negative (NumPy would count
    it from the end: another length function)."""
    ids = sorted(set(sf.start[1]) | set(sf.stop[1]))
    joint = index_points(ids, ranges)
    if joint is not None:  # run-time ranges: the points visited, not the hulls' product
        order, points = joint

        def at(form: Affine) -> np.ndarray:
            return form[0] + sum((a * points[k] for k, a in form[1].items()),
                                 np.zeros(len(points[order[0]]), np.int64))

        start, stop = at(sf.start), at(sf.stop)
        if (start.size and start.min() < 0) or (stop.size and stop.min() < 0):
            raise MaskFallback("a slice bound is negative for some index value")
        lengths = _length(np.minimum(start, sf.n), np.minimum(stop, sf.n), sf.step)
        if lengths.size == 0:
            return ("empty",), 0, 0
        return (("points", order, lengths.tobytes()), int(lengths.min()),
                int(lengths.max()))
    if math.prod(len(ranges[k]) for k in ids) <= ENUMERATE_LIMIT:
        grids = np.meshgrid(*(np.asarray(ranges[k], np.int64) for k in ids), indexing="ij",
                            sparse=True) if ids else []

        def value(form: Affine) -> np.ndarray:
            out = np.asarray(form[0], np.int64)
            for k, g in zip(ids, grids, strict=True):
                out = out + form[1].get(k, 0) * g
            return out

        start, stop = value(sf.start), value(sf.stop)
        if (np.size(start) and start.min() < 0) or (np.size(stop) and stop.min() < 0):
            raise MaskFallback("a slice bound is negative for some index value")
        lengths = _length(np.minimum(start, sf.n), np.minimum(stop, sf.n), sf.step)
        lengths = np.broadcast_to(lengths, tuple(len(ranges[k]) for k in ids))
        if lengths.size == 0:
            return ("empty",), 0, 0
        key = ("enumerated", tuple(ids), lengths.shape, lengths.tobytes())
        return key, int(lengths.min()), int(lengths.max())
    lo_start, _ = extremes(sf.start, ranges)
    lo_stop, hi_stop = extremes(sf.stop, ranges)
    if lo_start < 0 or lo_stop < 0:
        raise MaskFallback("a slice bound is negative for some index value")
    lmax = int(_length(np.int64(min(lo_start, sf.n)), np.int64(min(hi_stop, sf.n)), sf.step))
    return ("affine", _key(sf.start), _key(sf.stop), sf.step, sf.n), 0, lmax


def _length(start: Any, stop: Any, step: int) -> Any:
    return (np.maximum(stop - start, 0) + step - 1) // step


def extremes(form: Affine, ranges: Mapping[int, range]) -> tuple[int, int]:
    c, coefs = form
    low = high = c
    for k, a in coefs.items():
        ends = (a * ranges[k][0], a * ranges[k][-1])
        low += min(ends)
        high += max(ends)
    return low, high


def form_bounds(form: Affine, ranges: Mapping[int, range]) -> tuple[int, int]:
    """The least and greatest value of `form` over the index points the loops visit (over
    the hulls' product where those are too many, or all ranges are fixed)."""
    joint = index_points(sorted(form[1]), ranges)
    if joint is None or not len(joint[1][joint[0][0]]):
        return extremes(form, ranges)
    values = form[0] + sum(a * joint[1][k] for k, a in form[1].items())
    return int(np.min(values)), int(np.max(values))


def runtime_length(sf: SliceForm) -> Any:
    """The slice's length in this iteration (a 0-d int64 tracer): NumPy's clamping."""
    start = 0 if sf.start_value is None else sf.start_value
    stop = sf.n if sf.stop_value is None else sf.stop_value
    return _length(np.minimum(start, sf.n), np.minimum(stop, sf.n), sf.step)


def gather_positions(sf: SliceForm, lmax: int) -> Any:
    """Where position p of the masked slice reads: start + p*step, clamped into the axis."""
    start = 0 if sf.start_value is None else sf.start_value
    return np.minimum(start + np.arange(lmax, dtype=np.int64) * sf.step, max(sf.n - 1, 0))


def valid(mask: Mask, axis: int, ndim: int) -> Tracer:
    """The positions holding an element along `axis`, shaped to broadcast over `ndim` axes."""
    shape = [1] * ndim
    shape[axis] = mask.lmax
    return (np.arange(mask.lmax, dtype=np.int64) < mask.length).reshape(tuple(shape))


def fill(x: MaskedTracer, axes: Any, neutral: Any) -> Tracer:
    """`x` with the masked positions of `axes` set to `neutral`."""
    out = plain(x)
    for ax in axes:
        if ax in x.masks:
            out = np.where(valid(x.masks[ax], ax, x.ndim), out, np.asarray(neutral, x.dtype))
    return out


def plain(x: Any) -> Any:
    """A masked value as the plain tracer of its full-length form."""
    return Tracer(x.builder, x.value) if isinstance(x, MaskedTracer) else x


def masked(result: Any, masks: dict[int, Mask]) -> Any:
    if not masks:
        return result
    if not isinstance(result, Tracer):
        raise MaskFallback("a masked value turned into a non-array")
    return MaskedTracer(result.builder, result.value, masks)


def _ndim(x: Any) -> int:
    return x.ndim if isinstance(x, Tracer) else np.ndim(x)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.value.shape) if isinstance(x, Tracer) else np.shape(x)


def elementwise_masks(inputs: tuple[Any, ...], out_shape: tuple[int, ...]) -> dict[int, Mask]:
    """The result's masks when `inputs` broadcast to `out_shape` position by position."""
    ndim = len(out_shape)
    masks: dict[int, Mask] = {}
    for x in inputs:
        if isinstance(x, MaskedTracer):
            for ax, m in x.masks.items():
                r = ax + ndim - x.ndim
                if r in masks and masks[r].key != m.key:
                    raise MaskFallback("operands sliced to lengths that differ per iteration")
                masks[r] = m
    for r, m in masks.items():
        if out_shape[r] != m.lmax:
            raise MaskFallback("a slice of index-dependent length broadcast against more")
        for x in inputs:
            ax = r - (ndim - _ndim(x))
            if ax < 0 or (isinstance(x, MaskedTracer) and ax in x.masks):
                continue
            if _shape(x)[ax] != 1:
                raise MaskFallback("a slice of index-dependent length combined with an array "
                                   "of fixed length")
    return masks


def _normalize(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axes))


_NEUTRAL = {"sum": 0, "prod": 1, "any": False, "all": True}


def reduce(fn: str, a: MaskedTracer, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kw: Any) -> Any:
    """A reduction of a masked value: masked positions of the reduced axes are neutral."""
    if out is not None or kw:
        raise MaskFallback(f"np.{fn} of a masked slice with out=, where= or initial=")
    axes = _normalize(axis, a.ndim)
    reduced = [ax for ax in axes if ax in a.masks]
    if fn in ("max", "min"):
        if any(a.masks[ax].lmin == 0 for ax in reduced):
            raise MaskFallback(f"np.{fn} of a slice that is empty in some iteration")
        if a.dtype.kind == "f":
            neutral: Any = -np.inf if fn == "max" else np.inf
        elif a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            neutral = info.min if fn == "max" else info.max
        else:
            raise MaskFallback(f"np.{fn} of a masked {a.dtype} slice")
    elif fn in _NEUTRAL:
        neutral = _NEUTRAL[fn]
    else:
        raise MaskFallback(f"np.{fn} of a slice of index-dependent length")
    filled = fill(a, reduced, neutral)
    args: dict[str, Any] = {"axis": axes, "keepdims": keepdims}
    if dtype is not None:
        args["dtype"] = dtype
    result = getattr(np, fn)(filled, **args)
    masks: dict[int, Mask] = {}
    for ax, m in a.masks.items():
        if ax not in axes:
            masks[ax if keepdims else ax - sum(1 for r in axes if r < ax)] = m
    return masked(result, masks)


def matmul(a: Any, b: Any, fn: Callable[..., Any]) -> Any:
    """`dot`/`matmul`/`inner` of 1-D and 2-D operands, one or both masked."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return ufunc_call(np.multiply, a, b)
    if _ndim(a) > 2 or _ndim(b) > 2:
        raise MaskFallback("a product of masked arrays with more than two dimensions")
    inner = fn is np.inner
    ca = _ndim(a) - 1
    cb = _ndim(b) - 1 if inner or _ndim(b) == 1 else _ndim(b) - 2
    ma = a.masks.get(ca) if isinstance(a, MaskedTracer) else None
    mb = b.masks.get(cb) if isinstance(b, MaskedTracer) else None
    if (ma is None) != (mb is None) or (ma is not None and mb is not None and ma.key != mb.key):
        raise MaskFallback("a product over axes of lengths that differ per iteration")
    fa = fill(a, (ca,), 0) if isinstance(a, MaskedTracer) else a
    fb = fill(b, (cb,), 0) if isinstance(b, MaskedTracer) else b
    result = _product(fa, fb, inner)
    masks: dict[int, Mask] = {}
    if isinstance(a, MaskedTracer) and a.ndim == 2 and 0 in a.masks:
        masks[0] = a.masks[0]
    if isinstance(b, MaskedTracer) and b.ndim == 2:
        kept = 0 if inner else 1
        if kept in b.masks:
            masks[_ndim(a) - 1] = b.masks[kept]
    return masked(result, masks)


def _product(a: Any, b: Any, inner: bool) -> Any:
    """A 1-D/2-D product as a multiply and a sum over the contracted axis: kernels the loop
    body keeps in C (a BLAS call would be an extern call, run from Python per iteration)."""
    if _ndim(b) == 2 and not inner:
        b = np.swapaxes(b, 0, 1)  # (k, m) -> (m, k): contract the last axes
    if _ndim(a) == 2 and _ndim(b) == 2:
        a = np.expand_dims(a, 1)  # (n, 1, k) with (m, k)
    terms = a * b
    if terms.dtype.kind not in "iufc":
        raise MaskFallback(f"a product of masked {terms.dtype} arrays")
    return np.sum(terms, axis=-1, dtype=terms.dtype)


def ufunc_call(ufunc: np.ufunc, *inputs: Any, **kwargs: Any) -> Any:
    if kwargs:
        raise MaskFallback(f"np.{ufunc.__name__} of a masked slice with keyword arguments")
    result = ufunc(*(plain(x) for x in inputs))
    if isinstance(result, tuple):
        raise MaskFallback(f"np.{ufunc.__name__} of a masked slice (several results)")
    return masked(result, elementwise_masks(inputs, _shape(result)))


def flip(m: MaskedTracer, axis: Any = None) -> Any:
    """Reverse the valid prefix of each masked axis (element p <-> length-1-p)."""
    axes = _normalize(axis, m.ndim)
    out = np.flip(plain(m), axis=tuple(ax for ax in axes if ax not in m.masks))
    for ax in axes:
        if ax in m.masks:
            mk = m.masks[ax]
            idx = np.clip(mk.length - 1 - np.arange(mk.lmax, dtype=np.int64), 0,
                          max(mk.lmax - 1, 0))
            out = np.take(out, idx, axis=ax)
    return masked(out, dict(m.masks))


def transpose(m: MaskedTracer, axes: Any = None) -> Any:
    perm = tuple(reversed(range(m.ndim))) if axes is None else tuple(int(a) % m.ndim
                                                                      for a in axes)
    return masked(np.transpose(plain(m), perm),
                  {perm.index(ax): mk for ax, mk in m.masks.items()})


def _same(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A function that keeps every position in place (astype, copy)."""

    def run(m: MaskedTracer, *args: Any, **kwargs: Any) -> Any:
        return masked(fn(plain(m), *args, **kwargs), dict(m.masks))

    return run


def _reduction(fn: str) -> Callable[..., Any]:
    return lambda a, *args, **kwargs: reduce(fn, a, *args, **kwargs)


FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.sum: _reduction("sum"), np.prod: _reduction("prod"), np.max: _reduction("max"),
    np.amax: _reduction("max"), np.min: _reduction("min"), np.amin: _reduction("min"),
    np.any: _reduction("any"), np.all: _reduction("all"),
    np.dot: lambda a, b: matmul(a, b, np.dot), np.matmul: lambda a, b: matmul(a, b, np.matmul),
    np.inner: lambda a, b: matmul(a, b, np.inner),
    np.flip: flip, np.transpose: transpose, np.copy: _same(np.copy),
    np.where: lambda c, x, y: ufunc_call(np.where, c, x, y),  # type: ignore[arg-type]
}
METHODS: dict[str, Callable[..., Any]] = {
    "sum": _reduction("sum"), "prod": _reduction("prod"), "max": _reduction("max"),
    "min": _reduction("min"), "any": _reduction("any"), "all": _reduction("all"),
    "dot": lambda a, b: matmul(a, b, np.dot), "astype": _same(lambda x, *a, **k: x.astype(*a, **k)),
    "copy": _same(lambda x: x.copy()), "transpose": lambda m, *axes: transpose(
        m, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None),
}
_OWN = {"builder", "value", "weak", "parent", "view", "base", "base_version", "version",
        "concrete", "masks", "dtype", "ndim", "check_fresh", "__class__", "__dict__"}


def _reads_value(frame: types.FrameType) -> bool:
    """Code that may read a masked tracer's full-length value: this package, and the
    Tracer's own dtype/ndim properties. Any other reader (the frontend computing on it as if
    every position held an element) makes the loop fall back."""
    module = frame.f_globals.get("__name__", "")
    return module.startswith("stax.loops") or (
        module == "stax.frontend.trace" and frame.f_code.co_name in ("dtype", "ndim",
                                                                      "check_fresh"))


class IndexCopy(Tracer):
    """A copy standing for a NumPy view taken at the loop index (`x[:, j]`, `x[i:i+k]`): an
    in-place operator whose result is stored back by subscript (`x[:, j] -= v`) is the plain
    operator (the view's update reaches the array through the store); any other in-place
    operator mutates the copy, which `stax.loops.recognize` refuses (a view in NumPy)."""


class MaskedTracer(IndexCopy):
    """A traced slice of index-dependent length, in its masked full-length form. A subclass
    of every other tracer class a body meets, so its operators and NEP 13/18 methods are
    tried first; the frontend reading its `value` (an operation not listed here) falls
    back."""

    def __init__(self, builder: Any, value: Any, masks: dict[int, Mask]) -> None:
        super().__init__(builder, value)
        self.masks = masks

    def __getattribute__(self, name: str) -> Any:
        if name == "value" and not _reads_value(sys._getframe(1)):
            raise MaskFallback("a slice whose length depends on the loop index used by an "
                               "operation that ignores its mask")
        if name in _OWN or (name.startswith("__") and name.endswith("__")):
            return object.__getattribute__(self, name)
        if name in METHODS:
            return functools.partial(METHODS[name], self)
        if name == "T":
            return transpose(self)
        raise MaskFallback(f"`.{name}` of a slice whose length depends on the loop index")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__":
            if ufunc is np.matmul:
                return matmul(*inputs, np.matmul)
            return ufunc_call(ufunc, *inputs, **kwargs)
        names = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                 "logical_and": "all", "logical_or": "any"}
        if method == "reduce" and ufunc.__name__ in names and len(inputs) == 1:
            return reduce(names[ufunc.__name__], inputs[0], kwargs.pop("axis", 0), **kwargs)
        raise MaskFallback(f"np.{ufunc.__name__}.{method} of a masked slice")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        handler = FUNCTIONS.get(func)
        if handler is None:
            raise MaskFallback(f"np.{func.__name__} of a slice whose length depends on the "
                               "loop index")
        return handler(*args, **kwargs)

    def __getitem__(self, index: Any) -> Any:
        raise MaskFallback("an index into a slice whose length depends on the loop index")

    def __setitem__(self, index: Any, value: Any) -> None:
        raise MaskFallback("an assignment into a slice whose length depends on the loop index")

    def __len__(self) -> int:
        raise MaskFallback("len() of a slice whose length depends on the loop index")

    def __iter__(self) -> Any:
        raise MaskFallback("iterating over a slice whose length depends on the loop index")

    def __bool__(self) -> bool:
        raise MaskFallback("a slice whose length depends on the loop index used as a bool")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise MaskFallback("a slice whose length depends on the loop index made a NumPy array")


def _binary(ufunc: np.ufunc, reflected: bool) -> Callable[..., Any]:
    if reflected:
        return lambda a, b: ufunc_call(ufunc, b, a)
    return lambda a, b: ufunc_call(ufunc, a, b)


_STORE_NEXT = {"SWAP", "COPY", "ROT_TWO", "ROT_THREE", "DUP_TOP_TWO", "CACHE"}


@functools.lru_cache(maxsize=256)
def _stores_after(code: types.CodeType) -> frozenset[int]:
    """Offsets of the in-place operators whose result is stored by subscript next
    (`y[:k] += v`: the result goes back where it was read)."""
    instrs = list(dis.get_instructions(code))
    found = set()
    for k, ins in enumerate(instrs):
        if ins.opname.startswith(("BINARY_OP", "INPLACE_")):
            rest = [i for i in instrs[k + 1:] if i.opname not in _STORE_NEXT]
            if rest and rest[0].opname == "STORE_SUBSCR":
                found.add(ins.offset)
    return frozenset(found)


def _inplace(ufunc: np.ufunc) -> Callable[..., Any]:
    def run(a: MaskedTracer, b: Any) -> Any:
        frame = sys._getframe(1)
        if frame.f_lasti not in _stores_after(frame.f_code):
            raise MaskFallback("an in-place operator on a slice whose length depends on the "
                               "loop index (a view in NumPy)")
        result = ufunc_call(ufunc, a, b)
        if result.dtype != a.dtype:
            if not np.can_cast(result.dtype, a.dtype, casting="same_kind"):
                raise MaskFallback("an in-place operator that NumPy refuses (casting)")
            result = METHODS["astype"](result, a.dtype)
        return result

    return run


def _copy_inplace(py: str) -> Callable[..., Any]:
    def run(a: IndexCopy, b: Any) -> Any:
        frame = sys._getframe(1)
        if frame.f_lasti not in _stores_after(frame.f_code):
            return getattr(Tracer, f"__i{py}__")(a, b)
        result = getattr(Tracer, f"__{py}__")(a, b)
        if result.dtype != a.dtype:
            if not np.can_cast(result.dtype, a.dtype, casting="same_kind"):
                return getattr(Tracer, f"__i{py}__")(a, b)  # NumPy's casting error
            result = result.astype(a.dtype)
        return result

    return run


for _py, _fn in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                 "truediv": np.true_divide, "floordiv": np.floor_divide, "mod": np.remainder,
                 "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or,
                 "xor": np.bitwise_xor}.items():
    setattr(MaskedTracer, f"__{_py}__", _binary(_fn, False))
    setattr(MaskedTracer, f"__r{_py}__", _binary(_fn, True))
    setattr(MaskedTracer, f"__i{_py}__", _inplace(_fn))
    setattr(IndexCopy, f"__i{_py}__", _copy_inplace(_py))
for _py, _fn in {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                 "eq": np.equal, "ne": np.not_equal}.items():
    setattr(MaskedTracer, f"__{_py}__", _binary(_fn, False))
for _py, _fn in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                 "invert": np.invert}.items():
    setattr(MaskedTracer, f"__{_py}__", lambda a, f=_fn: ufunc_call(f, a))
MaskedTracer.__matmul__ = lambda a, b: matmul(a, b, np.matmul)  # type: ignore[method-assign]
MaskedTracer.__rmatmul__ = lambda a, b: matmul(b, a, np.matmul)  # type: ignore[attr-defined]
MaskedTracer.__hash__ = None  # type: ignore[assignment]
