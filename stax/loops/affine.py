"""Slices whose bounds are affine in loop indices: `x[i:i+k]`, `A[1:-1, t+1:t+4]`.

Inside a loop body the index is a traced scalar, so such a slice cannot be a static view. When
its bounds are affine in the indices of the open loops (found by walking the ops that compute
them: constants, the indices, +, -, * by a constant), its length is the same in every
iteration, and it stays inside the array for every index value in the loops' ranges (NumPy
would clamp otherwise), the slice is exactly a gather `x[start + step*arange(k)]` — bounds
checked, one body for all iterations. A slice whose length changes with the indices (or that
NumPy would clamp) is a masked full-length gather (`stax.loops.masked`). Assignments at the
index or into such slices are masked `where`s over the whole axis. Anything else is left to
the frontend (which then falls back to unrolling the loop).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from stax.frontend.numpy_api import to_value
from stax.frontend.trace import Builder, Tracer
from stax.graph import Value
from stax.loops.masked import (
    Mask,
    MaskedTracer,
    MaskFallback,
    SliceForm,
    form_bounds,
    gather_positions,
    length_info,
    plain,
    runtime_length,
)

Affine = tuple[int, dict[int, int]]  # constant, {index value id: coefficient}

_LINEAR = {"add", "subtract", "multiply", "negative"}


def affine_form(b: Builder, x: Any, indices: Mapping[int, range],
                scalars: Mapping[int, int]) -> Affine | None:
    """`x` (an int or a 0-d integer tracer) as c + sum(a_k * index_k), or None. `scalars`:
    the function's Python int arguments by position (the trace is then specialized on those
    it uses, as when they are used as Python values)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x), {}
    if not isinstance(x, Tracer) or x.value.shape != () or x.dtype.kind not in "iu":
        return None
    memo: dict[int, Affine | None] = {}

    def walk(vid: int) -> Affine | None:
        if vid in indices:
            return 0, {vid: 1}
        if vid in memo:
            return memo[vid]
        hit = b.producer(vid)
        op = None if hit is None else hit[1]
        result: Affine | None = None
        if op is not None and op.out.shape == ():
            if op.kind == "const" and isinstance(op.attr("value"), (int, np.integer)):
                result = int(op.attr("value")), {}
            elif op.kind == "input" and op.attr("index") in scalars:
                b.static.add(op.attr("index"))
                result = scalars[op.attr("index")], {}
            elif op.kind == "cast" and op.out.dtype.kind in "iu":
                result = walk(op.inputs[0].id)
            elif op.kind == "elementwise" and op.attr("fn") in _LINEAR:
                result = _combine(op.attr("fn"), [walk(v.id) for v in op.inputs])
        memo[vid] = result
        return result

    return walk(x.value.id)


def _combine(fn: str, args: list[Affine | None]) -> Affine | None:
    if any(a is None for a in args):
        return None
    forms: list[Affine] = args  # type: ignore[assignment]
    if fn == "negative":
        c, co = forms[0]
        return -c, {k: -v for k, v in co.items()}
    (c1, a1), (c2, a2) = forms
    if fn in ("add", "subtract"):
        sign = 1 if fn == "add" else -1
        coefs = dict(a1)
        for k, v in a2.items():
            coefs[k] = coefs.get(k, 0) + sign * v
        return c1 + sign * c2, {k: v for k, v in coefs.items() if v}
    if a1 and a2:
        return None  # index * index is not affine
    scale, (c, co) = (c1, forms[1]) if not a1 else (c2, forms[0])
    return scale * c, {k: scale * v for k, v in co.items() if scale * v}


def _symbolic(x: Any) -> bool:
    return isinstance(x, Tracer) and x.concrete is None


def known_index(index: Any) -> Any:
    """`index` with its integer scalar arguments (`N - 1` of an argument `N`: a 0-d tracer of
    known value, not a loop index) as Python ints, as NumPy's `__index__` takes them (the
    trace specializes on them): `A[1:N - 1, j] = v` is a store at the index like
    `A[1:19, j] = v`, and `v[N - 1, 1:N - 1] = 1.0` a static assignment, not an extern call."""
    if isinstance(index, tuple):
        return tuple(known_index(it) for it in index)
    if isinstance(index, slice):
        return slice(*(known_index(e) for e in (index.start, index.stop, index.step)))
    if isinstance(index, Tracer) and index.concrete is not None and index.ndim == 0 and \
            index.dtype.kind in "iu":
        return operator.index(index)
    return index


def _bound(b: Builder, x: Any, default: int, n: int, indices: Mapping[int, range],
           scalars: Mapping[int, int]) -> tuple[Affine, Any] | None:
    """A slice bound as an affine form and the value to compute with (a Python int bound is
    normalized as NumPy does: counted from the end when negative)."""
    if x is None:
        return (default, {}), default
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        k = int(x)
        k = max(k + n, 0) if k < 0 else min(k, n)
        return (k, {}), k
    form = affine_form(b, x, indices, scalars)
    return None if form is None else (form, x)


def slice_form(b: Builder, it: slice, n: Any, indices: Mapping[int, range],
               scalars: Mapping[int, int]) -> SliceForm | None:
    """`it` (bounds affine in the loop indices, a positive constant step) on an axis of size
    `n`; None: another kind of slice (the frontend's)."""
    step = 1 if it.step is None else it.step
    if not isinstance(n, (int, np.integer)) or not isinstance(step, (int, np.integer)) \
            or isinstance(step, (bool, np.bool_)) or step <= 0:
        return None
    start = _bound(b, it.start, 0, int(n), indices, scalars)
    stop = _bound(b, it.stop, int(n), int(n), indices, scalars)
    if start is None or stop is None:
        return None
    return SliceForm(start[0], stop[0], int(step), int(n), start[1], stop[1])


def rewrite_index(a: Tracer, index: Any, indices: Mapping[int, range],
                  scalars: Mapping[int, int]
                  ) -> tuple[tuple[Any, ...], list[tuple[int, Any]], dict[int, Mask]] | None:
    """For `a[index]` with symbolic slice bounds affine in the loop indices: the index with
    those slices made full (`slice(None)`), per such slice (its axis in that result, the gather
    positions), and the masks of the slices whose length depends on the indices (or that NumPy
    would clamp): see `stax.loops.masked`. `np.newaxis` items stay in the index (each adds
    an axis to the result, before which a slice's axis is counted)."""
    items = list(index) if isinstance(index, tuple) else [index]
    symbolic = [k for k, it in enumerate(items) if isinstance(it, slice) and any(
        _symbolic(e) for e in (it.start, it.stop))]
    if not symbolic or any(it is Ellipsis or isinstance(it, (list, np.ndarray))
                           or (isinstance(it, Tracer) and it.ndim > 0) for it in items):
        return None
    if sum(it is not None for it in items) > a.ndim:
        return None
    b = a.builder
    gathers: list[tuple[int, Any]] = []
    masks: dict[int, Mask] = {}
    for k in symbolic:
        dim = k - sum(it is None for it in items[:k])  # the axis of `a` it slices
        sf = slice_form(b, items[k], a.shape[dim], indices, scalars)
        if sf is None:
            return None
        axis = sum(1 for j in range(k) if items[j] is None or isinstance(items[j], slice))
        length = math.ceil((sf.stop[0] - sf.start[0]) / sf.step)
        low, high = form_bounds(sf.start, indices)
        if sf.start[1] == sf.stop[1] and length > 0 and low >= 0 and \
                high + (length - 1) * sf.step < sf.n:  # one length, inside the axis
            gathers.append((axis, sf.start_value + np.arange(length) * sf.step))
        else:
            key, lmin, lmax = length_info(sf, indices)
            masks[axis] = Mask(key, runtime_length(sf), lmin, lmax)
            if not sf.start[1] and 0 < lmax and sf.start[0] + (lmax - 1) * sf.step < sf.n:
                # a fixed start (`x[:i]`, `A[:j, j]`): the longest slice is a view (strided
                # loads, no per-element index), its positions past the length masked
                items[k] = slice(sf.start[0], sf.start[0] + lmax * sf.step, sf.step)
                continue
            gathers.append((axis, gather_positions(sf, lmax)))
        items[k] = slice(None)
    return tuple(items), gathers, masks


@dataclass(frozen=True)
class StoreAxis:
    """One axis of a store `a[...] = v`: the positions `start + p*step` for `p < count`.
    `count` None: NumPy's clamped length of `start:stop:step` (bounds never negative)."""

    start: Affine
    step: int
    count: int | None
    stop: Affine | None = None
    at: bool = False  # an index (the axis has no axis in the value)


@dataclass(frozen=True)
class StoreForm:
    """What a masked assignment stores: per axis of the array its positions, and the value
    (before realignment: one axis per axis that is not `at`, of size 1 where it broadcasts,
    else at least the positions' count). `stax.loops.runner` writes it in place."""

    axes: tuple[StoreAxis, ...]
    value: Value


def masked_assignment(a: Tracer, index: Any, value: Any, indices: Mapping[int, range],
                      scalars: Mapping[int, int]) -> StoreForm | None:
    """`a[..., i, ..., s(i):e(i), ...] = value` with `i`, `s`, `e` affine in the loop indices:
    written as `a[static] = where(hit, value realigned, a[static])` over the full axes, so the
    body stays one program of kernels (it rewrites the whole region each iteration). The
    value may be a masked slice of the same length function (`L[i, :i] = v[:i]`). Returns
    what was stored (the runner may store it in place instead); None: not this form, the
    frontend does the assignment."""
    items = list(index) if isinstance(index, tuple) else [index]
    positions = [k for k, it in enumerate(items) if _symbolic(it) and it.ndim == 0
                 and it.dtype.kind in "iu"]
    sliced = [k for k, it in enumerate(items) if isinstance(it, slice)
              and any(_symbolic(e) for e in (it.start, it.stop))]
    if not (positions or sliced) or len(items) > a.ndim or any(
            it is None or it is Ellipsis or isinstance(it, (list, np.ndarray, bool, np.bool_))
            or (isinstance(it, Tracer) and k not in positions)
            or (isinstance(it, slice) and (_symbolic(it.step) or (k not in sliced and any(
                isinstance(e, Tracer) for e in (it.start, it.stop)))))
            for k, it in enumerate(items)):
        return None
    b = a.builder
    axes: list[StoreAxis] = []
    for k, n in enumerate(a.shape):
        it = items[k] if k < len(items) else slice(None)
        if isinstance(it, slice) and k not in sliced:
            r = range(*it.indices(n))
            axes.append(StoreAxis((r.start, {}), r.step, len(r)))
        elif isinstance(it, (int, np.integer)):
            axes.append(StoreAxis((int(it) % max(n, 1), {}), 1, 1, at=True))
        elif k in positions:
            form = affine_form(b, it, indices, scalars)
            if form is None:
                return None
            low, high = form_bounds(form, indices)
            if low < 0 or high >= n:
                return None  # NumPy would wrap or raise: leave it to the frontend
            axes.append(StoreAxis(form, 1, 1, at=True))
        else:
            axes.append(StoreAxis((0, {}), 1, None))  # a symbolic slice: filled in below
    forms: dict[int, tuple[SliceForm, tuple[Any, ...], int, int]] = {}
    for k in sliced:
        sf = slice_form(b, items[k], a.shape[k], indices, scalars)
        if sf is None:
            return None
        forms[k] = (sf, *length_info(sf, indices))
        axes[k] = StoreAxis(sf.start, sf.step, None, sf.stop)
    static = tuple(slice(None) if k in positions or k in forms else it
                   for k, it in enumerate(items))
    region = a[static]
    kept = [k for k, it in enumerate(items) if not isinstance(it, (int, np.integer))]
    kept += list(range(len(items), a.ndim))  # the axes the index leaves out
    selected = [k for k in kept if k not in positions]  # the axes NumPy's selection has
    vmasks = value.masks if isinstance(value, MaskedTracer) else {}
    val = plain(value)
    val = val.astype(a.dtype) if isinstance(val, Tracer) else np.asarray(val, a.dtype)
    if val.ndim > len(selected):
        return None
    shift = len(selected) - val.ndim
    vmasks = {ax + shift: m for ax, m in vmasks.items()}
    val = val.reshape((1,) * shift + tuple(val.shape))
    stored = StoreForm(tuple(axes), val.value if isinstance(val, Tracer) else to_value(b, val))
    empty = [d for d, k in enumerate(selected) if k in forms and forms[k][3] == 0]
    if empty:  # a slice empty in every iteration: nothing is assigned
        if any(val.shape[d] > 1 for d in empty):
            raise ValueError(f"could not broadcast input array from shape {val.shape} into "
                             "a slice of length 0")
        return stored
    hits: list[tuple[int, Any]] = []
    for d, k in enumerate(selected):
        ax = kept.index(k)
        size, m = val.shape[d], vmasks.get(d)
        if k not in forms:
            if m is not None:
                raise MaskFallback("a slice of index-dependent length assigned to a slice of "
                                   "fixed length")
            if size not in (1, region.shape[ax]):
                return None  # NumPy's broadcast error: the frontend raises it
            continue
        sf, key, lmin, lmax = forms[k]
        if m is not None and not (m.key == key or m.lmin == m.lmax == lmin == lmax):
            raise MaskFallback("a value assigned to a slice of another length")
        if m is None and size != 1 and not lmin == lmax == size:
            raise MaskFallback("a value of fixed length assigned to a slice whose length "
                               "depends on the loop index")
        p = np.arange(sf.n, dtype=np.int64)
        offset = p - sf.start_value
        hit = (offset >= 0) & (p < np.minimum(sf.stop_value, sf.n))
        if sf.step != 1:
            hit = hit & (offset % sf.step == 0)
        if size != 1:  # element p comes from position (p - start) / step of the value
            val = np.take(val, np.clip(offset // sf.step, 0, size - 1), axis=d)
        hits.append((ax, hit))
    for k in positions:
        ax = kept.index(k)
        hits.append((ax, np.arange(region.shape[ax]) == items[k]))
    padded = list(val.shape)
    for k in positions:
        padded.insert(kept.index(k), 1)
    val = val.reshape(tuple(padded))
    mask: Any = None
    for ax, hit in hits:
        shape = [1] * region.ndim
        shape[ax] = region.shape[ax]
        hit = hit.reshape(tuple(shape))
        mask = hit if mask is None else mask & hit
    a[static] = np.where(mask, val, region)
    return stored
