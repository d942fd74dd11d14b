"""The reference interpreter: the nested semantics run directly in Python, one iteration at a
time, on NumPy values. Every compiled result is tested against it."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stax.nested.operator import check_binary, neutral
from stax.nested.ragged import Ragged
from stax.nested.spec import Layout


def check_range(start: np.ndarray, stop: np.ndarray, step: np.ndarray) -> None:
    """Futhark's rule: a range is valid when its step is non-zero and points from start
    towards stop (an empty range start == stop is valid)."""
    bad = (step == 0) | ((step > 0) & (stop < start)) | ((step < 0) & (stop > start))
    if np.any(bad):
        j = int(np.argmax(bad))
        a, b, s = int(start[j]), int(stop[j]), int(step[j])
        arrow = "..>" if s < 0 else "..<"
        raise ValueError(f"Range {a}..{a + s}{arrow}{b} is invalid")


def _rows(x: Any) -> list[Any]:
    if isinstance(x, Ragged):
        return list(x)
    x = np.asarray(x)
    if x.ndim == 0:
        raise TypeError("stax.nested: sn.map needs arrays, got a scalar")
    return list(x)


def _stack(results: list[Any], dummy: Any) -> Any:
    """Rows of results: an array when they are scalars or equal-shaped arrays, else Ragged."""
    if isinstance(dummy, tuple):
        return tuple(_stack([r[j] for r in results], dummy[j]) for j in builtins.range(len(dummy)))
    sample = np.asarray(dummy if not results else results[0])
    if sample.ndim == 0:
        dtype = np.result_type(*[np.asarray(r) for r in results]) if results \
            else sample.dtype
        return np.array(results, dtype=dtype).reshape(len(results))
    if not results:  # no iterations: rows of the body's shape (vacuously regular)
        return np.empty((0, *sample.shape), dtype=sample.dtype)
    arrays = [np.asarray(r) for r in results]
    dtype = np.result_type(*arrays)
    if all(a.shape == arrays[0].shape for a in arrays):
        return np.stack(arrays).astype(dtype)
    return Ragged.from_list(arrays, dtype=dtype)


def _zero_row(x: Any) -> Any:
    if isinstance(x, Ragged):
        return np.empty((0, *x.values.shape[1:]), dtype=x.dtype)
    return np.zeros(np.shape(x)[1:], dtype=np.asarray(x).dtype)[()]  # a scalar for 1-D x


def map(f: Callable[..., Any], *xs: Any) -> Any:
    if not xs:
        raise TypeError("stax.nested: sn.map needs at least one array")
    rows = [_rows(x) for x in xs]
    if len({len(r) for r in rows}) > 1:
        raise ValueError(f"stax.nested: sn.map: arrays of different lengths "
                         f"({', '.join(str(len(r)) for r in rows)})")
    results = [f(*args) for args in zip(*rows, strict=True)]
    if results:
        return _stack(results, results[0])
    try:  # no iterations: the result's type comes from the body applied to zeros
        with np.errstate(all="ignore"):
            dummy = f(*(_zero_row(x) for x in xs))
    except (IndexError, ValueError):
        dummy = np.float64(0)
    return _stack(results, dummy)


def _components(xs: Any) -> tuple[list[np.ndarray], bool]:
    if isinstance(xs, tuple):
        arrays = [np.asarray(x) for x in xs]
        if len({len(a) for a in arrays}) > 1:
            raise ValueError("stax.nested: the arrays of a tuple have different lengths")
        return arrays, True
    return [np.asarray(xs)], False


def _op(op: Any, a: tuple, b: tuple, tup: bool, dtypes: Sequence[np.dtype]) -> tuple:
    r = op(a, b) if tup else (op(a[0], b[0]),)
    r = r if isinstance(r, tuple) else (r,)
    if len(r) != len(dtypes):
        raise TypeError(f"stax.nested: the operator {getattr(op, '__name__', 'op')} returns "
                        f"{len(r)} value(s) for {len(dtypes)}-component elements")
    return tuple(np.asarray(v).astype(d)[()] for v, d in zip(r, dtypes, strict=True))


def reduce(op: Any, ne: Any, xs: Any) -> Any:
    arrays, tup = _components(xs)
    check_binary(op)
    dtypes = [a.dtype for a in arrays]
    acc = tuple(np.asarray(c.value, d)[()] for c, d in zip(neutral(ne, dtypes), dtypes,
                                                           strict=True))
    with np.errstate(all="ignore"):
        for j in builtins.range(len(arrays[0])):
            acc = _op(op, acc, tuple(a[j] for a in arrays), tup, dtypes)
    return acc if tup else acc[0]


def scan(op: Any, ne: Any, xs: Any) -> Any:
    arrays, tup = _components(xs)
    check_binary(op)
    dtypes = [a.dtype for a in arrays]
    acc = tuple(np.asarray(c.value, d)[()] for c, d in zip(neutral(ne, dtypes), dtypes,
                                                           strict=True))
    outs = [np.empty(len(a), dtype=a.dtype) for a in arrays]
    with np.errstate(all="ignore"):
        for j in builtins.range(len(arrays[0])):
            acc = _op(op, acc, tuple(a[j] for a in arrays), tup, dtypes)
            for o, v in zip(outs, acc, strict=True):
                o[j] = v
    return tuple(outs) if tup else outs[0]


def segmented(kind: str, op: Any, ne: Any, layout: Layout,
              arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """reduce or scan of every segment of `layout`, one at a time (the fallback for operators
    that cannot be traced)."""
    k, m = layout.k, len(arrays)
    bounds = (np.arange(k + 1) * layout.width if layout.width is not None else layout.bounds)
    parts = [tuple(a[bounds[j]:bounds[j + 1]] for a in arrays) for j in builtins.range(k)]
    if kind == "reduce":
        results = [reduce(op, ne, p if m > 1 else p[0]) for p in parts]
        rows = [r if m > 1 else (r,) for r in results]
        return [np.array([r[j] for r in rows], dtype=a.dtype).reshape(k)
                for j, a in enumerate(arrays)]
    scanned = [scan(op, ne, p if m > 1 else p[0]) for p in parts]
    return [np.concatenate([a[:0]] + [s[j] if m > 1 else s for s in scanned]).astype(a.dtype)
            for j, a in enumerate(arrays)]


def size(v: Any) -> int:
    """A size, bound or trip count as an int; like `range`, only integers are accepted."""
    a = np.asarray(v)
    if a.ndim == 0 and a.dtype.kind in "iu":
        return int(a)
    kind = v.dtype if isinstance(v, (np.generic, np.ndarray)) else type(v).__name__
    raise TypeError(f"stax.nested: sizes must be integers, got {kind}")


def range(start: Any, stop: Any, step: Any = 1) -> np.ndarray:
    start, stop, step = size(start), size(stop), size(step)
    a, b, s = (np.asarray([v], dtype=np.int64) for v in (start, stop, step))
    check_range(a, b, s)
    return np.arange(start, stop, step, dtype=np.int64)


def iota(n: Any) -> np.ndarray:
    return range(0, n, 1)


def replicate(n: Any, v: Any) -> np.ndarray:
    n = size(n)
    if n < 0:
        raise ValueError(f"stax.nested: sn.replicate: negative count {n}")
    v = np.asarray(v)
    return np.repeat(v[np.newaxis], n, axis=0)


def concat(a: Any, b: Any) -> np.ndarray:
    return np.concatenate([np.asarray(a), np.asarray(b)])


def scatter(dest: Any, idx: Any, vals: Any) -> np.ndarray:
    out = np.array(dest, copy=True)
    idx, vals = np.asarray(idx), np.asarray(vals)
    if len(idx) != len(vals):
        raise ValueError("stax.nested: sn.scatter (indices and values): arrays of different "
                         "lengths")
    for i, v in zip(idx.tolist(), vals, strict=True):
        if 0 <= i < len(out):
            out[i] = v
    return out


def cond(c: Any, then_fn: Callable[..., Any], else_fn: Callable[..., Any], *args: Any) -> Any:
    return then_fn(*args) if bool(c) else else_fn(*args)


def loop(n: Any, body: Callable[[Any, Any], Any], init: Any) -> Any:
    acc = init
    for r in builtins.range(size(n)):
        acc = body(r, acc)
    return acc


def length(row: Any) -> Any:
    return np.int64(len(row))
