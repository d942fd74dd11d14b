"""LoopProgram: buffers with layouts and nodes of kind pointwise, reduction, scan, extern.

A node iterates over `ranges` (pointwise loop variables `x0, x1, ...`) and, for reductions and
scans, `reduction_ranges` (variables `r0, ...`). Its body is an expression over those
variables; it stores into `out` at `out_index`. Views never appear here: they are index
arithmetic inside loads.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from stax.graph import Shaped
from stax.ir.expr import Expr, Index, Load, gathers, loads, sets_flags
from stax.ir.sym import is_sym

BufferKind = Literal["input", "const", "intermediate", "output"]
NodeKind = Literal["pointwise", "reduction", "scan", "extern"]


@dataclass(frozen=True)
class Buffer(Shaped):
    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: np.dtype
    kind: BufferKind
    data: Any = None  # the array of a `const` buffer
    # [LAYOUT] the axes from outermost to innermost in memory when they are not in C order (an
    # output laid out in NumPy's K order, `stax.lower.k_order`); () for C order
    order: tuple[int, ...] = ()


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if is_sym(n) else max(n, 1)  # [COMPACT] a data size may be 0: no guard
    return tuple(reversed(strides))


def ordered_strides(shape: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    """[LAYOUT] The strides of a dense array whose axes lie in memory in `order` (outermost
    first); `contiguous_strides` for C order."""
    inner = contiguous_strides(tuple(shape[d] for d in order))
    strides = [0] * len(shape)
    for d, s in zip(order, inner, strict=True):
        strides[d] = s
    return tuple(strides)


def xvars(n: int) -> tuple[str, ...]:
    return tuple(f"x{k}" for k in range(n))


def rvars(n: int) -> tuple[str, ...]:
    return tuple(f"r{k}" for k in range(n))


@dataclass(frozen=True)
class Node:
    name: str
    kind: NodeKind
    out: str
    ranges: tuple[int, ...]
    reduction_ranges: tuple[int, ...] = ()
    body: Expr | None = None
    out_index: Index = Index()
    fn: str = ""  # reduce/scan function, or extern routine
    extern_inputs: tuple[str, ...] = ()
    origin: str = ""  # the source ops, for comments and explain
    # [DYN16] the buffers of the extern calls that bind the data-dependent sizes this node
    # uses: read as a whole (it runs after them even where it reads none of their elements)
    after: tuple[str, ...] = ()
    # an extern routine that may raise NumPy's error on its data (a singular matrix, np.choose's
    # bad index): run even when its result is unused, as NumPy runs it
    raises: bool = False

    @property
    def var_ranges(self) -> dict[str, int]:
        return dict(zip(xvars(len(self.ranges)), self.ranges, strict=True)) | dict(
            zip(rvars(len(self.reduction_ranges)), self.reduction_ranges, strict=True))

    @functools.cached_property
    def _loads(self) -> tuple[Load, ...]:
        return tuple(loads(self.body)) if self.body is not None else ()

    def reads(self) -> tuple[Load, ...]:
        return self._loads

    @functools.cached_property
    def _read_buffers(self) -> tuple[str, ...]:
        names = dict.fromkeys(ld.buf for ld in self._loads)
        names.update(dict.fromkeys(self.extern_inputs))
        names.update(dict.fromkeys(self.after))
        return tuple(names)

    def read_buffers(self) -> tuple[str, ...]:
        return self._read_buffers

    @functools.cached_property
    def checked(self) -> bool:
        """May this node raise or warn (an extern routine, a gather's bounds check, an error
        flag: integer // by 0, ** of a negative integer)? Then it runs even when nothing reads
        its result."""
        return self.raises or self.body is not None and (gathers(self.body)
                                                         or sets_flags(self.body))

    @functools.cached_property
    def numel(self) -> int:
        return math.prod(self.ranges)

    @functools.cached_property
    def rnumel(self) -> int:
        return math.prod(self.reduction_ranges)


@dataclass(frozen=True)
class LoopProgram:
    buffers: tuple[Buffer, ...]
    nodes: tuple[Node, ...]
    inputs: tuple[str, ...]  # buffer names, in argument order
    outputs: tuple[str, ...]  # buffer names, in result order (may repeat)
    output_shapes: tuple[tuple[int, ...], ...]  # a reduction with keepdims adds unit dims

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def buffer_map(self) -> dict[str, Buffer]:
        return {b.name: b for b in self.buffers}
