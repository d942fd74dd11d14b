"""Slices whose bounds are affine in loop indices: `x[i:i+k]`, `A[1:-1, t+1:t+4]`.

Inside a loop body the index is a traced scalar, so such a slice cannot be a static view. When
its bounds are affine in the indices of the open loops (found by walking the ops that compute
them: constants, the indices, +, -, * by a constant), its length is the same in every
iteration, and it stays inside the array for every index value in the loops' ranges (NumPy
would clamp otherwise), the slice is exactly a gather `x[start + step*arange(k)]` — bounds
checked, one body for all iterations. Anything else is left to the frontend (which then
falls back to unrolling the loop).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from stax.frontend.trace import Builder, Tracer
from stax.graph import Op

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
    producer: dict[int, Op] = {op.out.id: op for op in b.ops}
    memo: dict[int, Affine | None] = {}

    def walk(vid: int) -> Affine | None:
        if vid in indices:
            return 0, {vid: 1}
        if vid in memo:
            return memo[vid]
        op = producer.get(vid)
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


def _extremes(form: Affine, indices: Mapping[int, range]) -> tuple[int, int]:
    c, coefs = form
    low = high = c
    for k, a in coefs.items():
        ends = (a * indices[k][0], a * indices[k][-1])
        low += min(ends)
        high += max(ends)
    return low, high


def rewrite_index(a: Tracer, index: Any, indices: Mapping[int, range],
                  scalars: Mapping[int, int]) -> list[tuple[int, Any]] | None:
    """For `a[index]` with affine symbolic slice bounds: the index with those slices made
    full (`slice(None)`) and, per such slice, (its axis in that result, the gather index)."""
    items = list(index) if isinstance(index, tuple) else [index]
    symbolic = [k for k, it in enumerate(items) if isinstance(it, slice) and any(
        isinstance(e, Tracer) and e.concrete is None for e in (it.start, it.stop))]
    if not symbolic or any(it is None or it is Ellipsis or isinstance(it, (list, np.ndarray))
                           or (isinstance(it, Tracer) and it.ndim > 0) for it in items):
        return None
    if len(items) > a.ndim:
        return None
    b = a.builder
    gathers: list[tuple[int, Any]] = []
    for k in symbolic:
        it = items[k]
        step = 1 if it.step is None else it.step
        if not isinstance(step, (int, np.integer)) or step <= 0:
            return None
        start = affine_form(b, 0 if it.start is None else it.start, indices, scalars)
        stop = affine_form(b, a.shape[k] if it.stop is None else it.stop, indices, scalars)
        if start is None or stop is None or start[1] != stop[1]:
            return None  # not affine, or a length that changes with the index
        length = math.ceil((stop[0] - start[0]) / step)
        low, high = _extremes(start, indices)
        if length <= 0 or low < 0 or high + (length - 1) * step >= a.shape[k]:
            return None  # NumPy would clamp or wrap: the shape would change
        axis = sum(1 for j in range(k) if isinstance(items[j], slice))
        first = it.start if it.start is not None else 0
        gathers.append((axis, first + np.arange(length) * int(step)))
        items[k] = slice(None)
    return [(-1, tuple(items)), *gathers]


def masked_assignment(a: Tracer, index: Any, value: Any, indices: Mapping[int, range],
                      scalars: Mapping[int, int]) -> bool:
    """`a[..., i, ...] = value` with `i` affine in the loop indices and inside the axis for
    the whole range: written as `a[static] = where(axis == i, value, a[static])`, so the body
    stays one program of kernels (it rewrites the whole region each iteration). False: not
    this form, the frontend does the assignment."""
    items = list(index) if isinstance(index, tuple) else [index]
    positions = [k for k, it in enumerate(items) if isinstance(it, Tracer) and it.ndim == 0
                 and it.concrete is None and it.dtype.kind in "iu"]
    if not positions or len(items) > a.ndim or any(
            it is None or it is Ellipsis or isinstance(it, (list, np.ndarray, bool, np.bool_))
            or (isinstance(it, Tracer) and k not in positions)
            or (isinstance(it, slice) and any(isinstance(e, Tracer)
                                              for e in (it.start, it.stop, it.step)))
            for k, it in enumerate(items)):
        return False
    b = a.builder
    for k in positions:
        form = affine_form(b, items[k], indices, scalars)
        if form is None:
            return False
        low, high = _extremes(form, indices)
        if low < 0 or high >= a.shape[k]:
            return False  # NumPy would wrap or raise: leave it to the frontend
    static = tuple(slice(None) if k in positions else it for k, it in enumerate(items))
    region = a[static]
    kept = [k for k, it in enumerate(items) if not isinstance(it, (int, np.integer))]
    kept += list(range(len(items), a.ndim))  # the axes the index leaves out
    axes = [kept.index(k) for k in positions]
    selected = tuple(n for ax, n in enumerate(region.shape) if ax not in axes)
    val = value.astype(a.dtype) if isinstance(value, Tracer) else np.asarray(value, a.dtype)
    if val.ndim > len(selected) or np.broadcast_shapes(
            (1,) * (len(selected) - val.ndim) + tuple(val.shape), selected) != selected:
        return False
    padded = [1] * (len(selected) - val.ndim) + list(val.shape)
    for ax in axes:
        padded.insert(ax, 1)
    val = val.reshape(tuple(padded))
    mask: Any = None
    for k, ax in zip(positions, axes, strict=True):
        shape = [1] * region.ndim
        shape[ax] = region.shape[ax]
        hit = np.arange(region.shape[ax]).reshape(shape) == items[k]
        mask = hit if mask is None else mask & hit
    a[static] = np.where(mask, val, region)
    return True
