"""What a flattened nested program asks a backend to run: backend-neutral kernel descriptions.

The flattening (`stax.nested.flatten`) and the kernel driver (`stax.nested.kernels`) decide
*what* runs: a layout of elements into segments, element expressions (`stax.nested.expr`),
operators, stores. A backend (`Backend.segmented_kernel`; the CPU one in
`stax/backends/cpu/segmented.py`) decides *how*: it turns one of the four kernel shapes below
into code, builds it and returns a callable. Every array in a description is contiguous, 1-D,
in native byte order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stax.nested.expr import INT64, Arg, Call, Const, Expr


@dataclass(frozen=True)
class Layout:
    """How the n elements of a space split into the k segments of its parent: `bounds`
    (k+1 offsets) or, for a regular nest, a uniform `width`."""
    k: int
    n: int
    bounds: np.ndarray | None
    width: int | None

    @staticmethod
    def uniform(k: int, width: int) -> Layout:
        return Layout(k, k * width, None, width)

    @staticmethod
    def from_bounds(bounds: np.ndarray) -> Layout:
        return Layout(len(bounds) - 1, int(bounds[-1]), bounds, None)


@dataclass(frozen=True)
class Operator:
    """An associative operator on tuples of `len(dtypes)` components, with neutral element
    `ne`; `combine[j]` is component j of op(a, b) over `Arg` leaves a0.., b0.."""
    name: str
    combine: tuple[Expr, ...]
    ne: tuple[Const, ...]
    dtypes: tuple[np.dtype, ...]

    def with_count(self) -> Operator:
        """The operator with one more component: an int64 sum (a fused count, e.g. of
        failed bounds checks)."""
        m = len(self.dtypes)
        add = Call(INT64, "add", (Arg(INT64, f"a{m}"), Arg(INT64, f"b{m}")))
        return Operator(self.name, (*self.combine, add), (*self.ne, Const(INT64, 0)),
                        (*self.dtypes, INT64))


@dataclass(frozen=True)
class Store:
    """out[index] = value (index None: the element index), only where `cond` holds."""
    out: np.ndarray
    value: Expr
    index: Expr | None = None
    cond: Expr | None = None


@dataclass(frozen=True)
class Phase:
    """A deferred segmented reduction: outs[j][s] = component j of segment s's reduction."""
    op: Operator
    elems: tuple[Expr, ...]
    outs: tuple[np.ndarray, ...]
    summary: str


@dataclass(frozen=True, eq=False)
class MapKernel:
    """`stores` for every element i < n (a run-time size) of a space; `segmented`: some
    expression reads the element's segment `Seg` (then `layout` gives the segments).
    `counts`: out[0] = the int64 sum of value over the elements (failed checks), per count."""
    layout: Layout | None
    stores: tuple[Store, ...]
    segmented: bool
    counts: tuple[Store, ...] = ()


@dataclass(frozen=True, eq=False)
class SegReduceKernel:
    """outs[j][s] = component j of the reduction of segment s's elements (ne if empty); the
    last `totals` components are int64 sums wanted only in total (one element each)."""
    layout: Layout
    op: Operator
    elems: tuple[Expr, ...]
    outs: tuple[np.ndarray, ...]
    totals: int = 0


@dataclass(frozen=True, eq=False)
class SegScanKernel:
    """outs[j][i] = component j of the scan of i's segment up to i (inclusive, or exclusive
    from ne)."""
    layout: Layout
    op: Operator
    elems: tuple[Expr, ...]
    outs: tuple[np.ndarray, ...]
    exclusive: bool


@dataclass(frozen=True, eq=False)
class ChainKernel:
    """Segment-local fusion: for each segment, every phase's reduction in order (a later
    phase may read an earlier one's result for its own segment, x[s]), then the stores over
    the segment's elements."""
    layout: Layout
    phases: tuple[Phase, ...]
    stores: tuple[Store, ...]


SegmentedKernel = MapKernel | SegReduceKernel | SegScanKernel | ChainKernel
