"""Running flattened nested programs: which segmented kernels run, in which order, on what.

The flattening (`stax.nested.flatten`) asks for three kinds of kernels, described in
`stax.nested.spec` (backend-neutral):

- `run_map`: stores of expressions for every element of a space (segmented by its layout
  when an expression needs the element's segment);
- `run_segreduce`: a segmented reduction with any associative operator (non-commutative and
  tuple operators included), one result per segment;
- `run_segscan`: a segmented scan, inclusive or exclusive.

The element values are expressions (`stax.nested.expr`) evaluated inside the kernel, so
producers such as `iota`, replicated free variables and elementwise arithmetic are fused into
the segmented kernel instead of being materialized. Inside `sn.jit`, segmented reductions are
deferred and joined with later kernels over the same segments (segment-local fusion, below).

How a kernel runs is the backend's (`Backend.segmented_kernel`: the CPU one prints C++ with
OpenMP, `stax/backends/cpu/segmented.py`, compiled once per program structure and dtypes and
reused for any data size). Every launch, allocation and data-dependent decision is recorded
(`stax.nested.tape`) so later calls with the same signature replay them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from stax.backends import get_backend
from stax.nested import tape
from stax.nested.expr import (
    Call,
    Const,
    Expr,
    Idx,
    Load,
    Seg,
    buffers,
    check_dtype,
    direct_loads,
    uses,
)
from stax.nested.spec import (
    ChainKernel,
    Layout,
    MapKernel,
    Operator,
    Phase,
    SegmentedKernel,
    SegReduceKernel,
    SegScanKernel,
    Store,
)

BACKEND = "cpu"  # the backend that runs segmented kernels
# Below this many elements a kernel runs on one thread (OpenMP start-up costs more); the
# deferral below uses it too.
PARALLEL_MIN = 1 << 15
# Chunks of the segmented kernels; None: the backend's choice (several per thread). Tests set
# it to split small inputs into many chunks (so carries cross several chunk edges, some empty).
CHUNKS: int | None = None


def native(a: np.ndarray) -> np.ndarray:
    """`a` as a contiguous array in native byte order with a dtype kernels support."""
    check_dtype(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    a = np.ascontiguousarray(a)
    return a if a.flags.aligned else a.copy()  # [REVIEW] kernels load whole elements


@dataclass(frozen=True)
class KernelRecord:
    """A launched kernel as `sn.explain` shows it: `source` in full, `body` without the
    backend's shared prelude."""
    kind: str
    summary: str
    source: str
    body: str


_LOG: ContextVar[list[KernelRecord] | None] = ContextVar("stax_nested_kernel_log", default=None)


@contextmanager
def kernel_log() -> Iterator[list[KernelRecord]]:
    """Collect a record of every kernel launched inside the block."""
    log: list[KernelRecord] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def log_kernel(record: KernelRecord) -> None:
    """Add a launched kernel to the log of the enclosing `kernel_log` block, if any."""
    log = _LOG.get()
    if log is not None:
        log.append(record)


@dataclass(frozen=True)
class _Kernel:
    """A built kernel as a step of a recorded program: its sizes (n, k, W) come from the
    layout it runs over (or `n` for a plain loop outside a layout)."""
    entry: Callable[[int, int, int, int, Sequence[np.ndarray]], None]
    segmented: bool

    def __call__(self, layout: Layout | None, n: int | None, *arrays: np.ndarray) -> None:
        if self.segmented:
            assert layout is not None
            self.entry(layout.n, layout.k, layout.width or 0, CHUNKS or 0, arrays)
        else:
            self.entry(size_of(layout) if n is None else n, 0, 0, CHUNKS or 0, arrays)


def size_of(layout: Layout | None) -> int:
    """The number of iterations of a space with this layout (the top level has one)."""
    return 1 if layout is None else layout.n


def _launch(kind: str, summary: str, kernel: SegmentedKernel, layout: Layout | None,
            n: int | None = None, segmented: bool = True) -> None:
    """Run a kernel over `layout` (segmented: its n, k and W are the parameters; else a loop
    over n elements, None: the layout's)."""
    built = get_backend(BACKEND).segmented_kernel(kernel)
    for a in built.arrays:
        assert a.flags.c_contiguous and a.ndim == 1, "kernels take contiguous 1-D arrays"
    settle(built.arrays)
    log_kernel(KernelRecord(kind, summary, built.source, built.body))
    tape.effect(_Kernel(built.entry, segmented), layout, n, *built.arrays)


def alloc(layout: Layout | None, per: str, dtype: np.dtype) -> np.ndarray:
    """An uninitialized array of one element per element ("n") or segment ("k") of
    `layout` (recorded: sized from the layout on replay)."""
    return tape.allocation(_alloc, layout, per, dtype)


def _zero(a: np.ndarray) -> np.ndarray:
    a.fill(0)
    return a


def _alloc(layout: Layout | None, per: str, dtype: np.dtype) -> tuple[tuple[int], np.dtype]:
    return (size_of(layout) if per == "n" else layout.k,), np.dtype(dtype)


def empty_layout(layout: Layout | None, per: str) -> bool:
    """Whether `layout` has no elements ("n") or no segments ("k"): a guarded decision."""
    return tape.guard(_is_empty, layout, per)


def _is_empty(layout: Layout | None, per: str) -> bool:
    return (size_of(layout) if per == "n" else layout.k) == 0


def _check_loads(exprs: Sequence[Expr], n: int, k: int) -> None:
    """Loads at the element (segment) index read every lane of the loop, even under a `where`
    (vectorized): their arrays must hold n (k) elements."""
    for e in exprs:
        for load in direct_loads(e):
            index = load.index
            need = n if isinstance(index, Idx) else k if isinstance(index, Seg) \
                else int(index.value) + 1
            if load.buf.array.size < need or (isinstance(index, Const) and index.value < 0):
                raise AssertionError(f"stax.nested: a kernel reads {need} elements of an "
                                     f"array of {load.buf.array.size}")


def run_map(n: int, layout: Layout | None, stores: Sequence[Store], summary: str,
            counts: Sequence[Store] = ()) -> None:
    """Evaluate `stores` for every element i < n of a space (segmented by `layout`), and
    `counts`: out[0] = the sum of value over those elements (int64, one-element outs)."""
    own = n == size_of(layout)  # a space's own loop: n is the layout's on replay too
    if not stores or (empty_layout(layout, "n") if own else n == 0):
        for c in counts:
            tape.effect(_zero, c.out)
        return
    if not counts and _pending_map(n, layout, stores, summary):
        return
    exprs = [e for st in (*stores, *counts) for e in (st.value, st.index, st.cond)
             if e is not None]
    _check_loads(exprs, n, layout.k if layout is not None else 0)
    segmented = any(uses(e, Seg) for e in exprs)
    _launch("map", summary, MapKernel(layout, tuple(stores), segmented, tuple(counts)), layout,
            None if own else n, segmented)


def run_segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
                  summary: str, outs: Sequence[np.ndarray] | None = None,
                  totals: int = 0) -> list[np.ndarray]:
    """Reduce each segment of `layout` into `outs` (or new arrays): one result per segment
    and component (ne if empty). The last `totals` components are int64 sums wanted only
    in total (counts of failed checks): one element each, summed over all segments."""
    m = len(op.dtypes)
    if outs is None:
        outs = [alloc(layout, "k", t) for t in op.dtypes[:m - totals]] \
            + [alloc(None, "n", t) for t in op.dtypes[m - totals:]]
    outs = list(outs)
    kept = m - totals  # components with one result per segment
    if empty_layout(layout, "k"):
        for o in outs[kept:]:
            tape.effect(_zero, o)
        return outs
    _check_loads(elems, layout.n, layout.k)
    _launch("segreduce", summary, SegReduceKernel(layout, op, tuple(elems), tuple(outs), totals),
            layout)
    return outs


def run_segscan(layout: Layout, op: Operator, elems: Sequence[Expr], exclusive: bool,
                summary: str, outs: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """Scan each segment of `layout` (inclusive, or exclusive starting from ne), into `outs`
    (contiguous arrays of n elements) or new arrays."""
    if outs is None:
        outs = [alloc(layout, "n", t) for t in op.dtypes]
    outs = list(outs)
    if empty_layout(layout, "n"):
        return outs
    _check_loads(elems, layout.n, layout.k)
    _launch("segscan", summary, SegScanKernel(layout, op, tuple(elems), tuple(outs), exclusive),
            layout)
    return outs


# ---------------------------------------------------------------- segment-local fusion
#
# Inside `sn.jit`, a segmented reduction is deferred: its results are read only later, often
# per segment by the next kernel over the same segments (a softmax: the maximum, then the sum
# of exp(x - max[s]), then the map dividing by sum[s]). Such a chain runs as one kernel that
# walks whole segments (chunks cut at segment bounds): each segment's elements are read from
# memory once and reused from cache by the later phases. A chain runs (`flush`) as soon as
# anything else needs its results; its parts run apart where one segment would hold so many
# elements that whole-segment chunks could not balance the threads.


@dataclass
class Chain:
    layout: Layout
    phases: list[Phase]

    def owns(self, arrays: Sequence[np.ndarray]) -> bool:
        """Whether some of `arrays` are results of this chain."""
        ours = {id(o) for p in self.phases for o in p.outs}
        return any(id(a) in ours for a in arrays)

    def reads(self, exprs: Sequence[Expr]) -> bool:
        return self.owns([b.array for b in buffers(tuple(exprs))])

    def reads_elsewhere(self, exprs: Sequence[Expr]) -> bool:
        """Whether `exprs` read a result of this chain other than as x[s] (the segment's)."""
        ours = {id(o) for p in self.phases for o in p.outs}

        def walk(e: Expr) -> bool:
            if isinstance(e, Load):
                return (id(e.buf.array) in ours and not isinstance(e.index, Seg)) \
                    or walk(e.index)
            return isinstance(e, Call) and any(walk(a) for a in e.args)

        return any(walk(e) for e in exprs)


_CHAIN: ContextVar[list[Chain] | None] = ContextVar("stax_nested_chain", default=None)


@contextmanager
def deferring() -> Iterator[None]:
    """Defer segmented reductions inside the block (`defer_segreduce`); all run by its end."""
    holder: list[Chain] = []
    token = _CHAIN.set(holder)
    try:
        yield
        flush()
    finally:
        _CHAIN.reset(token)


def _balanced(layout: Layout) -> bool:
    """Whether chunks of whole segments can balance the threads: no segment holds more than
    an eighth of the elements (or the kernel runs on one thread anyway)."""
    if layout.bounds is None:
        return False
    return layout.n < PARALLEL_MIN or int(np.diff(layout.bounds).max()) * 8 <= layout.n


def defer_segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
                    summary: str) -> list[np.ndarray]:
    """`run_segreduce`, deferred into the chain of reductions over `layout` when possible;
    the arrays returned are filled before anything reads them."""
    holder = _CHAIN.get()
    if holder is None or empty_layout(layout, "k") or empty_layout(layout, "n"):
        return run_segreduce(layout, op, elems, summary)
    chain = holder[0] if holder else None
    if chain is not None and (chain.layout is not layout or chain.reads_elsewhere(elems)):
        flush()
        chain = None
    if chain is None:
        chain = Chain(layout, [])
        holder.append(chain)
    _check_loads(elems, layout.n, layout.k)
    outs = tuple(alloc(layout, "k", t) for t in op.dtypes)
    chain.phases.append(Phase(op, tuple(elems), outs, summary))
    return list(outs)


def pending_reads(exprs: Sequence[Expr]) -> bool:
    """Whether `exprs` read results of the pending chain (not computed yet)."""
    holder = _CHAIN.get()
    return bool(holder) and holder[0].reads(exprs)


def settle(arrays: Sequence[np.ndarray]) -> None:
    """Run the pending chain first when `arrays` include its results (a step reads them)."""
    holder = _CHAIN.get()
    if holder and holder[0].owns(arrays):
        flush()


def flush() -> None:
    """Run the pending chain, if any."""
    holder = _CHAIN.get()
    if not holder:
        return
    chain = holder.pop()
    if len(chain.phases) > 1 and _fusable(chain):
        _run_chain(chain, [], "")
    else:
        _run_apart(chain)


def _fusable(chain: Chain) -> bool:
    """Whether the chain's segments can balance the threads as whole-segment chunks: asked
    only when several parts would run as one kernel (one reduction alone runs as a
    segreduce, balanced whatever its segments: no guard for replays to re-check)."""
    return tape.guard(_balanced, chain.layout)


def _run_apart(chain: Chain) -> None:
    """The chain's reductions as separate segreduces, in order."""
    for p in chain.phases:
        run_segreduce(chain.layout, p.op, p.elems, p.summary, p.outs)


def _pending_map(n: int, layout: Layout | None, stores: Sequence[Store], summary: str) -> bool:
    """Run a map as the last phase of the pending chain when it reads the chain's results
    per segment (else flush the chain first if it reads them at all). True when done."""
    holder = _CHAIN.get()
    if not holder:
        return False
    chain = holder[0]
    exprs = [e for st in stores for e in (st.value, st.index, st.cond) if e is not None]
    if not chain.reads(exprs):
        return False
    holder.pop()
    if (chain.layout is layout and not chain.reads_elsewhere(exprs)
            and all(st.index is None and st.cond is None for st in stores)):
        if not _fusable(chain):
            _run_apart(chain)
            return False
        _check_loads(exprs, n, layout.k)
        _run_chain(chain, stores, summary)
        return True
    holder.append(chain)
    flush()
    return False


def _run_chain(chain: Chain, stores: Sequence[Store], summary: str) -> None:
    """One kernel: for each segment, every phase's reduction in order, then the stores."""
    names = "; ".join([p.summary for p in chain.phases] + ([summary] if summary else []))
    _launch("fused segments", names,
            ChainKernel(chain.layout, tuple(chain.phases), tuple(stores)), chain.layout)
