"""Partial results of reductions across chunks: per block (inside a compiled Stax program) and
their combination by Dask's tree reduction.

One block task computes the partials of *several* reductions of one stage (column mean, var
and max of row chunks read each block once); each partial is a short tuple of small arrays,
kept at the block's shape with the reduced axes of extent 1:

- sum/prod/max/min/any/all: the block's reduction;
- moment (the sum of squared deviations from the mean, behind var/std): (count, mean, M2), merged
  by Chan et al.'s parallel update, so variance needs no second pass over the data;
- argmax/argmin: (value, global index), merged keeping NumPy's rules: the first NaN wins, else
  the largest (smallest) value, ties going to the smallest index (the first occurrence).

The combine and aggregate steps merge these tuples pairwise with compiled Stax programs (one
per kind, shape-generic, so a process compiles each at most twice whatever the block shapes).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

FOLDS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
         "any": np.logical_or, "all": np.logical_and}
ARG = {"argmax": "max", "argmin": "min"}
NO_INDEX = np.iinfo(np.int64).max  # the index of an empty block's arg partial: never wins


@dataclass(frozen=True)
class Partial:
    """How one reduction of a block's value is summarized: `kind` over `axes` (all axes and a
    flat index when `flat`, as `x.argmax()`), the final result cast to `dtype`."""

    kind: str  # a FOLDS key, "moment", "argmax" or "argmin"
    axes: tuple[int, ...]
    dtype: np.dtype
    flat: bool = False

    @property
    def width(self) -> int:
        return 3 if self.kind == "moment" else 2 if self.kind in ARG else 1

    def __str__(self) -> str:
        return f"{self.kind}{'(flat)' if self.flat else ''} over axes {list(self.axes)}"


def neutral(fn: str, dtype: np.dtype) -> Any:
    """The element that never wins a max (min): the smallest (largest) value of `dtype`."""
    if dtype.kind == "b":
        return fn == "min"
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if fn == "max":
        return info.min if info else -np.inf
    return info.max if info else np.inf


def block_partial(part: Partial, y: Any, starts: Any, shape: tuple[int, ...]) -> list[Any]:
    """The partial of `part` for one block `y` (traced under `stax.jit`); `starts` holds the
    block's first global index along each axis, `shape` is the global shape (arg partials)."""
    axes = part.axes
    kept = tuple(1 if i in axes else n for i, n in enumerate(y.shape))
    if part.kind in FOLDS:
        if y.size == 0 and part.kind in ("max", "min"):  # an empty stencil block: neutral
            return [np.full(kept, neutral(part.kind, y.dtype), y.dtype)]
        return [getattr(np, part.kind)(y, axis=axes, keepdims=True)]
    if part.kind == "moment":
        count = math.prod(y.shape[i] for i in axes)
        if count == 0:
            return [np.zeros(kept), np.zeros(kept), np.zeros(kept)]
        mean = y.sum(axis=axes, keepdims=True) / count
        return [np.full(kept, float(count)), mean, ((y - mean) ** 2).sum(axis=axes, keepdims=True)]
    fn = ARG[part.kind]
    if y.size == 0:
        return [np.full(kept, neutral(fn, y.dtype), y.dtype), np.full(kept, NO_INDEX)]
    value = getattr(np, fn)(y, axis=None if part.flat else axes[0], keepdims=True)
    if not part.flat:
        local = getattr(np, part.kind)(y, axis=axes[0], keepdims=True)
        return [value, local + starts[axes[0]]]
    local = np.reshape(getattr(np, part.kind)(y), kept)
    index = np.zeros(kept, np.int64)
    for i in range(y.ndim):  # the block's coordinates, shifted, raveled in the global shape
        inner, global_inner = math.prod(y.shape[i + 1:]), math.prod(shape[i + 1:])
        index = index + ((local // inner) % y.shape[i] + starts[i]) * global_inner
    return [value, index]


def _leaves(blocks: Any) -> Iterator[tuple[Any, ...]]:
    """The block partials in Dask's nested lists (one level per reduced axis of the grid)."""
    if isinstance(blocks, list):
        for b in blocks:
            yield from _leaves(b)
    else:
        yield blocks


def _merge_moment(na: Any, ma: Any, qa: Any, nb: Any, mb: Any, qb: Any) -> tuple[Any, ...]:
    """Chan et al.'s update of (count, mean, M2)."""
    n = na + nb
    share = np.where(n > 0, nb / np.where(n > 0, n, 1.0), 0.0)
    delta = mb - ma
    return n, ma + delta * share, qa + qb + delta * delta * na * share


def _merge_arg(better: Any, va: Any, ia: Any, vb: Any, ib: Any) -> tuple[Any, Any]:
    """(value, index) pairs: the first NaN wins, else `better`, ties to the first index."""
    if va.dtype.kind in "fc":
        nan_a, nan_b = np.isnan(va), np.isnan(vb)
        first = ib < ia
        take = np.where(nan_a | nan_b, nan_b & (~nan_a | first),
                        better(vb, va) | (vb == va) & first)
    else:
        take = better(vb, va) | (vb == va) & (ib < ia)
    return np.where(take, vb, va), np.where(take, ib, ia)


def _merge_argmax(va: Any, ia: Any, vb: Any, ib: Any) -> tuple[Any, Any]:
    return _merge_arg(np.greater, va, ia, vb, ib)


def _merge_argmin(va: Any, ia: Any, vb: Any, ib: Any) -> tuple[Any, Any]:
    return _merge_arg(np.less, va, ia, vb, ib)


@functools.cache
def _merger(kind: str) -> Any:
    """The merge of two partials of `kind` as a compiled Stax program (one per process and
    kind; shape-generic after its second shape, the disk cache shared by the workers)."""
    from stax.api import jit  # stax.api imports stax.dask

    if kind in FOLDS:
        return jit(FOLDS[kind])
    return jit({"moment": _merge_moment, "argmax": _merge_argmax, "argmin": _merge_argmin}[kind])


def _merge(kind: str, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    merged = _merger(kind)(*a, *b)
    return merged if isinstance(merged, tuple) else (merged,)


@dataclass(frozen=True)
class Combine:
    """Dask's combine (`final` False) or aggregate (`final` True) step of a group of partials:
    merges the blocks' tuples; the aggregate keeps one final array per partial."""

    parts: tuple[Partial, ...]
    final: bool

    def __call__(self, blocks: Any, axis: Any = None, keepdims: bool = True) -> tuple[Any, ...]:
        flat = list(_leaves(blocks))
        out: list[Any] = []
        start = 0
        for part in self.parts:
            stop = start + part.width
            dtype = np.float64 if part.kind == "moment" else None
            acc = tuple(np.asarray(a, dtype) for a in flat[0][start:stop])
            for b in flat[1:]:
                acc = _merge(part.kind, acc, tuple(np.asarray(a, dtype) for a in b[start:stop]))
            start = stop
            if not self.final:
                out.extend(acc)
            else:  # a fold's value, the moment's M2, an arg's index
                out.append(acc[-1].astype(part.dtype))
        return tuple(out)

    @property
    def __name__(self) -> str:
        return "stax-aggregate" if self.final else "stax-combine"


def passthrough(block: Any, axis: Any = None, keepdims: bool = True) -> Any:
    """Dask's chunk step: the block tasks already computed the partials."""
    return block


@dataclass(frozen=True)
class Pick:
    """The final array of one partial from the aggregate's tuple."""

    index: int

    def __call__(self, block: tuple[Any, ...]) -> Any:
        return block[self.index]
