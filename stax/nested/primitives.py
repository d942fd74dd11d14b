"""Segmented primitives on NumPy arrays (the seed's vocabulary), run as compiled parallel
kernels: segscan, segreduce, segiota, repiota, exclusive scans, segmented gather/scatter,
partition."""

from __future__ import annotations

from typing import Any

import numpy as np

from stax.nested.expr import (
    BOOL,
    INT64,
    Buf,
    Const,
    Expr,
    Idx,
    Load,
    Seg,
    cast_to,
    ufunc_call,
    where,
)
from stax.nested.interp import segmented
from stax.nested.kernels import native, run_map, run_segreduce, run_segscan
from stax.nested.operator import UntraceableOperator, make_operator
from stax.nested.ragged import Ragged
from stax.nested.spec import Layout, Store


def _vector(x: Any, what: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"stax.nested: {what} must be 1-D, got shape {a.shape}")
    return native(a)


def _lengths(lengths: Any) -> np.ndarray:
    a = _vector(lengths, "lengths")
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"stax.nested: lengths must be integers, got {a.dtype}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    if a.size and a.min() < 0:
        raise ValueError(f"stax.nested: lengths must be >= 0, got {int(a.min())}")
    return a


def _sum_operator() -> Any:
    return make_operator(np.add, 0, [INT64])


# Below this many lengths, bounds are NumPy's cumsum: forming the parallel scan's kernel
# (~0.25 ms of Python) costs more than scanning a million lengths on one core.
BOUNDS_PARALLEL_MIN = 1 << 20


def bounds_of(lengths: np.ndarray) -> np.ndarray:
    """[0, l0, l0+l1, ..., sum]: an inclusive scan written after a leading 0."""
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    if len(lengths) < BOUNDS_PARALLEL_MIN:
        np.cumsum(lengths, out=bounds[1:])
    else:
        run_segscan(Layout.uniform(1, len(lengths)), _sum_operator(),
                    [Load(INT64, Buf(lengths), Idx())], False, "segment bounds",
                    outs=[bounds[1:]])
    return bounds


def _values(values: Any) -> tuple[list[np.ndarray], bool]:
    if isinstance(values, tuple):
        arrays = [_vector(v, "values") for v in values]
        if len({len(a) for a in arrays}) > 1:
            raise ValueError("stax.nested: the value arrays of a tuple have different lengths")
        return arrays, True
    return [_vector(values, "values")], False


def _layout(flags: Any, n: int, lengths: Any) -> Layout:
    if (flags is None) == (lengths is None):
        raise TypeError("stax.nested: give either flags or lengths=")
    if lengths is not None:
        ls = _lengths(lengths)
        layout = Layout.from_bounds(bounds_of(ls))
        if layout.n != n:
            raise ValueError(f"stax.nested: the lengths sum to {layout.n} but there are {n} "
                             f"values")
        return layout
    f = _vector(flags, "flags")
    if f.dtype != np.bool_:
        raise TypeError(f"stax.nested: flags must be booleans, got {f.dtype}")
    if len(f) != n:
        raise ValueError(f"stax.nested: {len(f)} flags for {n} values")
    starts = np.flatnonzero(f)
    if n and (len(starts) == 0 or starts[0] != 0):
        starts = np.concatenate([[0], starts])  # values before the first flag: a segment
    return Layout.from_bounds(np.concatenate([starts, [n]]).astype(np.int64))


def _elems(arrays: list[np.ndarray]) -> list[Expr]:
    return [Load(a.dtype, Buf(a), Idx()) for a in arrays]


def segscan(op: Any, ne: Any, flags: Any, values: Any, *, lengths: Any = None,
            exclusive: bool = False) -> Any:
    """Inclusive (or exclusive) scan restarting at every true flag (or of each segment of
    `lengths`): segscan(np.add, 0, [T,T,F,T,F,F], [1..6]) == [1,2,5,4,9,15]."""
    arrays, tup = _values(values)
    layout = _layout(flags, len(arrays[0]), lengths)
    try:
        operator = make_operator(op, ne, [a.dtype for a in arrays])
    except UntraceableOperator:
        if exclusive:
            raise TypeError("stax.nested: exclusive scans need a traceable operator") from None
        outs = segmented("scan", op, ne, layout, arrays)
    else:
        outs = run_segscan(layout, operator, _elems(arrays), exclusive,
                           f"segscan {operator.name}")
    return tuple(outs) if tup else outs[0]


def segreduce(op: Any, ne: Any, flags: Any, values: Any, *, lengths: Any = None) -> Any:
    """One reduction per segment: segreduce(np.add, 0, [T,T,F,T,F,F], [1..6]) == [1,5,15].
    With flags, values before the first true flag form a segment; with lengths=, empty
    segments give ne."""
    arrays, tup = _values(values)
    layout = _layout(flags, len(arrays[0]), lengths)
    try:
        operator = make_operator(op, ne, [a.dtype for a in arrays])
    except UntraceableOperator:
        outs = segmented("reduce", op, ne, layout, arrays)
    else:
        outs = run_segreduce(layout, operator, _elems(arrays), f"segreduce {operator.name}")
    return tuple(outs) if tup else outs[0]


def exscan(op: Any, ne: Any, values: Any) -> Any:
    """Exclusive scan of the whole array (starting from ne)."""
    arrays, tup = _values(values)
    operator = make_operator(op, ne, [a.dtype for a in arrays])
    outs = run_segscan(Layout.uniform(1, len(arrays[0])), operator, _elems(arrays), True,
                       f"exscan {operator.name}")
    return tuple(outs) if tup else outs[0]


def expresum(values: Any) -> np.ndarray:
    """Exclusive prefix sum (`iota n == expresum(replicate n 1)`)."""
    return exscan(np.add, 0, values)


def _per_element(lengths: Any, expr: Expr, dtype: Any, what: str) -> np.ndarray:
    ls = _lengths(lengths)
    layout = Layout.from_bounds(bounds_of(ls))
    out = np.empty(layout.n, dtype=dtype)
    run_map(layout.n, layout, [Store(out, expr)], what)
    return out


def segiota(lengths: Any) -> np.ndarray:
    """The in-segment index of every element: segiota([1,2,3]) == [0,0,1,0,1,2]."""
    ls = _lengths(lengths)
    bounds = bounds_of(ls)
    layout = Layout.from_bounds(bounds)
    out = np.empty(layout.n, dtype=np.int64)
    inner = ufunc_call(np.subtract, (Idx(), Load(INT64, Buf(bounds), Seg())))
    run_map(layout.n, layout, [Store(out, inner)], "segiota")
    return out


def repiota(lengths: Any) -> np.ndarray:
    """The segment of every element: repiota([1,2,3]) == [0,1,1,2,2,2]."""
    return _per_element(lengths, Seg(), np.int64, "repiota")


def lengths_to_flags(lengths: Any) -> np.ndarray:
    """True at the first element of every non-empty segment."""
    ls = _lengths(lengths)
    bounds = bounds_of(ls)
    layout = Layout.from_bounds(bounds)
    first = ufunc_call(np.equal, (Idx(), Load(INT64, Buf(bounds), Seg())))
    out = np.empty(layout.n, dtype=bool)
    run_map(layout.n, layout, [Store(out, cast_to(first, BOOL))], "flags")
    return out


def seggather(values: Ragged, indices: Ragged) -> Ragged:
    """Row s of the result is values[s][indices[s]] (NumPy's negative indices; out of bounds
    is an IndexError)."""
    if len(values) != len(indices):
        raise ValueError(f"stax.nested: seggather: {len(values)} rows of values but "
                         f"{len(indices)} rows of indices")
    if values.values.ndim != 1 or indices.values.ndim != 1:
        raise NotImplementedError("stax.nested: seggather works on rows of scalars")
    idx = np.ascontiguousarray(indices.values)
    if idx.size and idx.dtype.kind not in "iu":
        raise IndexError(f"stax.nested: indices must be integers, got {idx.dtype}")
    layout = Layout.from_bounds(indices.bounds)
    row_of = repiota(indices.lengths)  # the row of every index
    n_of = values.lengths[row_of]
    bad = (idx < -n_of) | (idx >= n_of)
    if bad.any():
        j = int(np.argmax(bad))
        raise IndexError(f"index {idx[j]} is out of bounds for row {row_of[j]} of size "
                         f"{n_of[j]}")
    i = cast_to(Load(idx.dtype, Buf(idx), Idx()), INT64)
    size = Load(INT64, Buf(values.lengths), Seg())
    pos = ufunc_call(np.add, (Load(INT64, Buf(values.bounds), Seg()), i))
    pos = where(ufunc_call(np.less, (i, Const(INT64, 0))), ufunc_call(np.add, (pos, size)), pos)
    out = np.empty(len(idx), dtype=values.dtype)
    run_map(layout.n, layout, [Store(out, Load(values.dtype, Buf(values.values), pos))],
            "seggather")
    return Ragged.trusted(out, indices.lengths, indices.bounds)


def segscatter(dest: Ragged, indices: Ragged, vals: Ragged) -> Ragged:
    """Row s of the result is dest[s] with dest[s][indices[s][j]] = vals[s][j]; indices out of
    range are ignored (as Futhark's scatter); duplicates leave one of the values."""
    if not (len(dest) == len(indices) == len(vals)):
        raise ValueError("stax.nested: segscatter: different numbers of rows")
    if not np.array_equal(indices.lengths, vals.lengths):
        raise ValueError("stax.nested: segscatter: indices and values rows differ in length")
    idx = np.ascontiguousarray(indices.values)
    out = dest.values.copy()
    layout = Layout.from_bounds(indices.bounds)
    i = cast_to(Load(idx.dtype, Buf(idx), Idx()), INT64)
    size = Load(INT64, Buf(dest.lengths), Seg())
    ok = ufunc_call(np.logical_and, (ufunc_call(np.greater_equal, (i, Const(INT64, 0))),
                                     ufunc_call(np.less, (i, size))))
    target = ufunc_call(np.add, (Load(INT64, Buf(dest.bounds), Seg()), i))
    value = cast_to(Load(vals.dtype, Buf(np.ascontiguousarray(vals.values)), Idx()), out.dtype)
    run_map(layout.n, layout, [Store(out, value, target, ok)], "segscatter")
    return Ragged.trusted(out, dest.lengths, dest.bounds)


def partition(mask: Any, values: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values[mask], values[~mask]), each in the original order: an exclusive scan of the
    mask gives every element its place, then one scatter."""
    m = _vector(mask, "mask")
    v = _vector(values, "values")
    if m.dtype != np.bool_:
        raise TypeError(f"stax.nested: partition needs a boolean mask, got {m.dtype}")
    if len(m) != len(v):
        raise ValueError(f"stax.nested: partition: {len(m)} mask entries for {len(v)} values")
    n = len(v)
    ones = cast_to(Load(BOOL, Buf(m), Idx()), INT64)
    pos = run_segscan(Layout.uniform(1, n), _sum_operator(), [ones], True,
                      "partition positions")[0]
    count = int(pos[-1] + m[-1]) if n else 0
    out = np.empty(n, dtype=v.dtype)
    i = Idx()
    p = Load(INT64, Buf(pos), i)
    target = where(Load(BOOL, Buf(m), i), p,
                   ufunc_call(np.add, (Const(INT64, count), ufunc_call(np.subtract, (i, p)))))
    run_map(n, None, [Store(out, Load(v.dtype, Buf(v), i), target)], "partition scatter")
    return out[:count], out[count:]
