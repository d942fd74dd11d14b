"""[DYN16] Results whose length depends on the data, computed inside the compiled program.

`x[mask]`, `np.nonzero` / `flatnonzero` / `argwhere`, `np.compress` / `extract`, `np.unique`
(sorted values, `return_index`, `return_inverse`, `return_counts`) and `np.bincount` whose
length is not known from the dtype run as extern calls of NumPy's routine (as matmul and
`np.sort` do; `x[mask]`, `extract` and `flatnonzero`: a compiled parallel compaction [SEL],
`stax.runtime.compaction`) whose result the wrapper does not allocate: it takes the array
the routine returns and binds its length to a data-dependent symbol (`d0`,
`stax.ir.sym.ShapeEnv.data`) that sizes every later kernel, as a generic program's symbols
are bound at launch. Later ops on the result (`x[mask].sum()`, `x[mask] * 2`) compile in the
same program, with loops over `d0`.

Only plain traces do this: in a function that already runs with graph breaks the values are
at hand, and NumPy's routine runs on them as before. A result whose largest length is below 2
stays a break too. A data-dependent size may be 0 or 1 ([COMPACT]): a compiler decision that
needs more is taken on the traced stand-in and guarded, and a call whose bound size breaks a
guard runs the function in NumPy (see `stax.runtime.wrapper`). A selection read only by whole
reductions is rewritten after tracing to masked reductions, with no extern call and no size
([SEL], `stax.masked_reductions`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stax.frontend import numpy_api as api
from stax.frontend.breaks import _location
from stax.frontend.functions import _computed_alike
from stax.frontend.trace import Builder, Tracer
from stax.ir import sym
from stax.runtime import compaction, externs


def _compiles(b: Builder) -> bool:
    """Data-dependent sizes are compiled in a plain trace (not a SegmentBuilder's: breaks)."""
    return type(b) is Builder


def _sized(name: str, routine: Callable[..., Any], args: Sequence[Any],
           shape: Callable[[Any], tuple[Any, ...]], length: Any, dtype: np.dtype,
           where: str = "", **kwargs: Any) -> Tracer:
    """The extern call `routine(*args, **kwargs)`, whose result has `shape(n)`: `n` is a
    data-dependent symbol the wrapper binds from the returned array, with hint `length`
    (`length` itself when it is `Exact` or a data-dependent size already: the wrapper checks
    the result has it); `where` is the user's line. One call per routine and inputs computed
    alike (`x[x > 0] - x[x > 0].mean()` selects once: one size)."""
    b = api.find_builder(args)
    values = tuple(api.to_value(b, a if isinstance(a, Tracer) else np.asarray(a)) for a in args)
    spelled = ", ".join(f"{k}={v!r}" for k, v in sorted(kwargs.items()))
    key = externs.register_sized(f"{name}({spelled})->{np.dtype(dtype).name}",
                                 lambda *arrays: routine(*arrays, **kwargs), np.dtype(dtype))
    memo = next((m for m in b.sized if m[0] == key and len(m[1]) == len(values) and all(
        _computed_alike(b, v, w) for v, w in zip(values, m[1], strict=True))), (key, values))
    if memo not in b.sized:

        n = int(length) if isinstance(length, Exact) else length if sym.is_data(length) \
            else b.data_size(length, f"{name} at {where or _location()[0]}")
        b.sized[memo] = b.add("extern", values, shape(n), api.check_dtype(np.dtype(dtype), name),
                              fn=key)
    return api.wrap(b, b.sized[memo])


class Exact(int):
    """A result length known while tracing (a constant mask's count)."""


def _length(bound: Any) -> int | None:
    """The hint of a data-dependent length at most `bound` (a size, maybe symbolic), `Exact(0)`
    when `bound` is 0 (an empty array's selection), or None when it is 1 (left to NumPy: a
    graph break)."""
    bound = sym.traced(bound)
    return bound if bound >= 2 else Exact(0) if bound == 0 else None


def select(full: Tracer, mask: Any, where: str = "") -> Tracer | None:
    """`full[mask]` for a boolean mask over `full`'s leading axes (a Tracer or an ndarray:
    then its count is known now), or None (the caller's graph break)."""
    b = full.builder
    if not _compiles(b):
        return None
    rest = tuple(full.shape[np.ndim(mask):])
    count = Exact(np.count_nonzero(mask)) if isinstance(mask, np.ndarray) else next(
        (out.shape[0] for (key, values), out in b.sized.items()  # a mask selected by before:
         if key.startswith("x[mask]") and _computed_alike(b, values[1], mask.value)),  # its
        _length(math.prod(mask.shape)))  # size (`x[m] + y[m]`)
    if count is None:
        return None
    return _sized("x[mask]", compaction.select, (full, mask), lambda n: (n, *rest), count,
                  full.dtype, where)


def _tracer(*args: Any) -> Tracer | None:
    """The first traced argument, when its trace compiles data-dependent sizes."""
    for a in args:
        if isinstance(a, Tracer):
            return a if _compiles(a.builder) else None
    return None


def argwhere(a: Any) -> Tracer:
    t = _tracer(a)
    n = None if t is None or t.ndim == 0 else _length(t.size)
    if n is None:
        raise api.unsupported("np.argwhere of a 0-d or one-element array (its result's "
                              "length depends on the data)")  # [HUNT7] (said 0-d for (1, 1))
    return _sized("np.argwhere", np.argwhere, (t,), lambda d: (d, t.ndim), n,
                  np.dtype(np.intp))


def nonzero(a: Any) -> tuple[Tracer, ...]:
    """The columns of argwhere (NumPy's nonzero is argwhere's transpose)."""
    t = _tracer(a)
    if t is None or t.ndim == 0:  # NumPy refuses nonzero of a 0-d array
        raise api.unsupported("np.nonzero (its result's length depends on the data)")
    where = argwhere(t)
    return tuple(api.getitem(where, (slice(None), k)) for k in range(t.ndim))


def flatnonzero(a: Any) -> Tracer:
    t = _tracer(a)
    n = None if t is None else _length(t.size)
    if n is None:
        raise api.unsupported("np.flatnonzero (its result's length depends on the data)")
    return _sized("np.flatnonzero", compaction.flatnonzero, (t,), lambda d: (d,), n,
                  np.dtype(np.intp))


def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Tracer:
    t = _tracer(a, condition)
    if t is None or out is not None or isinstance(axis, Tracer):
        raise api.unsupported("np.compress with out= or a traced axis")
    b = t.builder
    x = a if isinstance(a, Tracer) else api.wrap(b, api.to_value(b, np.asarray(a)))
    x = api.ravel(x) if axis is None else x
    ax = 0 if axis is None else operator.index(axis)
    if not -x.ndim <= ax < x.ndim:
        raise np.exceptions.AxisError(ax, x.ndim)
    ax %= x.ndim
    cond = condition if isinstance(condition, Tracer) else np.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    n = _length(min(sym.traced(cond.shape[0]), sym.traced(x.shape[ax])))
    if n is None:
        raise api.unsupported("np.compress (its result's length depends on the data)")
    return _sized("np.compress", np.compress, (cond, x),
                  lambda c: tuple(c if d == ax else s for d, s in enumerate(x.shape)), n,
                  x.dtype, axis=ax)


def extract(condition: Any, arr: Any) -> Tracer:
    t = _tracer(arr, condition)
    cond = condition if isinstance(condition, Tracer) else np.asarray(condition)
    n = None if t is None else _length(cond.size)
    if n is None:
        raise api.unsupported("np.extract (its result's length depends on the data)")
    x = arr if isinstance(arr, Tracer) else np.asarray(arr)
    return _sized("np.extract", compaction.extract, (cond, x), lambda c: (c,), n, x.dtype)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           **kwargs: Any) -> Any:
    """NumPy's algorithm over the flattened array: sort (an extern call, as NumPy's), the
    positions where a sorted value differs from the one before (NaNs equal with `equal_nan`:
    NumPy >= 1.21 keeps one), compacted by `flatnonzero` (the data-dependent length), then
    the values, first indices (a stable argsort's) and counts (differences of the positions)
    are compiled gathers and differences; the inverse [SEL] scatters each sorted position's
    group number (a running count of the changes) back through the argsort."""
    t = _tracer(ar)
    n = None if t is None else _length(t.size)
    if t is not None and isinstance(t.size, int) and t.size < 2 and axis is None and \
            not kwargs and t.dtype.kind != "c":
        return _unique_of_few(t, return_index, return_inverse, return_counts)
    if n is None or axis is not None or kwargs or t.dtype.kind == "c":
        raise api.unsupported("np.unique with axis=, of complex values or of fewer than 2 "
                              "elements")
    flat = api.ravel(t)
    perm = np.argsort(flat, kind="stable") if return_index or return_inverse else None
    ordered = np.sort(flat) if perm is None else flat[perm]
    change = ordered[1:] != ordered[:-1]
    if equal_nan and t.dtype.kind == "f":
        change = change & ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    starts = flatnonzero(np.concatenate([np.ones(1, bool), change]))
    results = [ordered[starts]]
    if return_index:
        results.append(perm[starts])
    if return_inverse:
        inverse = np.zeros_like(perm)
        inverse[perm] = np.cumsum(np.concatenate([np.zeros(1, np.intp), change]))
        results.append(inverse.reshape(t.shape))
    if return_counts:
        results.append(np.diff(np.concatenate([starts, np.full(1, flat.shape[0], np.intp)])))
    return results[0] if len(results) == 1 else tuple(results)


def _unique_of_few(t: Tracer, return_index: bool, return_inverse: bool,
                   return_counts: bool) -> Any:
    """[HUNT11] np.unique of 0 or 1 elements (a graph break before: `_length` leaves a
    data-dependent length of at most 1 to NumPy), whose results' shapes are known: the
    elements, indices 0, inverse 0 (in `t`'s shape), counts 1."""
    results = [np.ravel(t).copy()]
    if return_index:
        results.append(np.zeros(t.size, np.intp))
    if return_inverse:
        results.append(np.zeros(t.shape, np.intp))
    if return_counts:
        results.append(np.ones(t.size, np.intp))
    return results[0] if len(results) == 1 else tuple(results)


# [FIX16] set operations, written as NumPy writes them (its _arraysetops_impl): unique values
# (sorted, data-dependent sizes), sorts, masks compacted; each result equals NumPy's.

def union1d(ar1: Any, ar2: Any) -> Any:
    return np.unique(np.concatenate((np.ravel(ar1), np.ravel(ar2))))


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Any:
    if return_indices:
        raise api.unsupported("np.intersect1d with return_indices=True")
    ar1, ar2 = (np.ravel(a) if assume_unique else np.unique(a) for a in (ar1, ar2))
    aux = np.sort(np.concatenate((ar1, ar2)))
    return aux[:-1][aux[1:] == aux[:-1]]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    ar1, ar2 = (np.ravel(a) if assume_unique else np.unique(a) for a in (ar1, ar2))
    aux = np.sort(np.concatenate((ar1, ar2)))
    if isinstance(aux.size, int) and aux.size == 0:
        return aux
    edge = np.ones(1, bool)
    flag = np.concatenate((edge, aux[1:] != aux[:-1], edge))
    return aux[flag[1:] & flag[:-1]]


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    ar1 = np.ravel(ar1) if assume_unique else np.unique(ar1)
    return ar1[np.isin(ar1, ar2 if assume_unique else np.unique(ar2), assume_unique=True,
                       invert=True)]


def unique_counts(x: Any) -> Any:
    """[HUNT2] NumPy 2's `np.unique_counts`: `np.unique(x, return_counts=True,
    equal_nan=False)` in its namedtuple (sorted values, as NumPy's sort-based path; NaNs
    each counted once)."""
    return np.lib._arraysetops_impl.UniqueCountsResult(
        *unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x: Any) -> Any:
    """[HUNT11] NumPy 2's `np.unique_inverse` in its namedtuple (inverse in `x`'s shape)."""
    return np.lib._arraysetops_impl.UniqueInverseResult(
        *unique(x, return_inverse=True, equal_nan=False))


def unique_all(x: Any) -> Any:
    """[HUNT11] NumPy 2's `np.unique_all` in its namedtuple."""
    return np.lib._arraysetops_impl.UniqueAllResult(
        *unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False))


def bincount(x: Tracer, weights: Any = None, minlength: int = 0) -> Tracer:
    """The length is max(x) + 1 (at least `minlength`): NumPy's bincount, an extern call
    (a negative value raises NumPy's ValueError)."""
    if not _compiles(x.builder) or x.ndim != 1 or x.dtype.kind not in "biu":
        raise api.unsupported("np.bincount whose length depends on the data")
    args = (x,) if weights is None else (x, weights)
    return _sized("np.bincount", np.bincount, args, lambda d: (d,),
                  max(sym.traced(x.size), minlength, 2),
                  np.dtype(np.intp if weights is None else np.float64), minlength=minlength)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.argwhere: argwhere, np.nonzero: nonzero, np.flatnonzero: flatnonzero,
    np.compress: compress, np.extract: extract, np.unique: unique,
    np.unique_counts: unique_counts, np.unique_inverse: unique_inverse,
    np.unique_all: unique_all, np.union1d: union1d, np.intersect1d: intersect1d,
    np.setxor1d: setxor1d, np.setdiff1d: setdiff1d}
METHODS: dict[str, Callable[..., Any]] = {
    "nonzero": nonzero, "compress": lambda a, condition, axis=None, out=None:
    compress(condition, a, axis, out)}
