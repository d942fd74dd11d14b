"""[SEL] Selections read only by whole reductions are never compacted (issue 16, item 5).

`x[x > 0].sum()` traces as an extern call of NumPy's boolean indexing (the compaction, whose
length binds a data-dependent size `d0`, `stax.frontend.data_dependent`) and a reduction over
its result. When every use of a selection `x[mask]` is a reduction over all its selected
elements (through elementwise ops and casts: `mean`, `var`, `std`, `count_nonzero`, `any`,
`prod`, ...) or its size, no compacted array is needed: each reduction reduces
`where(mask, f(x), identity)` over `x`'s own shape (one pass, fused with the mask's producer),
and the size is `count_nonzero(mask)` (times the trailing axes' sizes). The data-dependent size
disappears from the program, so every count, 0 and 1 too, runs the same compiled code.

A pure function: Graph in, Graph out, each rewrite recorded (`MaskedReduction`, rule
`masked_reduction`, shown by `stax.explain` under "Sizes"). A selection stays an extern call
when any use is something else (returned, indexed, a `max`/`min`/`argmax` — no identity, so
an empty selection must raise NumPy's error —, an op that may set an error flag on the
unselected elements, such as an integer `//` or a float-to-integer cast), or when a guard was
recorded on its size (a decision of the program depends on it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from stax.graph import Graph, Op, Value
from stax.ir.sym import Sym, data_atoms_in, same_size
from stax.ops import REDUCTIONS, by_name

IDENTITY = {r.name: r.identity for r in REDUCTIONS if r.identity is not None}
REGION_KINDS = frozenset({"elementwise", "where", "cast"})  # elementwise over the selection


@dataclass(frozen=True)
class MaskedReduction:
    """The record of one rewrite: the selection `value` (described as `what`) was read only
    by the whole reductions `reductions` (and sizes): no compaction."""

    value: str
    what: str
    reductions: tuple[str, ...]
    rule: str = "masked_reduction"

    def __str__(self) -> str:
        used = ", ".join(self.reductions) or "its size only"
        return (f"{self.rule}: {self.value} = {self.what} is read only by reductions over all "
                f"its elements ({used}): each reduces where(mask, x, identity) over x's shape "
                "and its size is count_nonzero(mask); no compaction, no data-dependent size")


def _size_atom(op: Op) -> str | None:
    """The data-dependent size a selection `x[mask]` (mask over x's leading axes) binds."""
    if op.kind != "extern" or not op.attr("fn").startswith("x[mask]") or \
            len(op.inputs) != 2 or op.inputs[1].dtype != np.dtype(bool) or not op.out.shape:
        return None
    d = op.out.shape[0]
    if not isinstance(d, Sym) or len(d.terms) != 1 or d.terms[0][1] != 1 or \
            len(d.terms[0][0]) != 1 or d.terms[0][0][0] not in d.env.data:
        return None
    name = d.terms[0][0][0]
    if any(name in d.env.atoms_of(lhs) for _, lhs, _ in d.env.guards):
        return None  # a decision of the program depends on the size
    return name


def fuse_masked_reductions(graph: Graph, n_returned: int) -> Graph:
    """`graph` with every selection that only whole reductions read rewritten (see the module
    docstring). Outputs from position `n_returned` on are kept only so that their extern call
    runs (`stax.api.trace`): a rewritten selection's is replaced by its count."""
    tried: set[int] = set()
    while True:
        sel = next((op for op in graph.ops if op.out.id not in tried
                    and _size_atom(op) is not None), None)
        if sel is None:
            return graph
        tried.add(sel.out.id)
        graph = _Rewrite(graph, sel, n_returned).run() or graph


class _Rewrite:
    """One selection's rewrite; `run` returns None when a use is not a whole reduction."""

    def __init__(self, graph: Graph, sel: Op, n_returned: int) -> None:
        self.graph, self.sel, self.n_returned = graph, sel, n_returned
        self.name = _size_atom(sel)
        self.x, self.mask = sel.inputs
        self.fresh = max([v.id for op in graph.ops for v in (*op.inputs, op.out)]
                         + [v.id for v in graph.inputs]) + 1
        self.ops: list[Op] = []
        self.full: dict[int, Value] = {sel.out.id: self.x}  # selection-shaped -> x-shaped
        self.rename: dict[int, Value] = {}  # a size of the selection -> from the count
        self.count: Value | None = None
        self.wide_mask: Value | None = None
        self.reductions: list[str] = []

    def add(self, kind: str, inputs: tuple[Value, ...], shape: tuple[Any, ...],
            dtype: np.dtype, out: Value | None = None, /, **attrs: Any) -> Value:
        if out is None:
            out = Value(self.fresh, shape, np.dtype(dtype))
            self.fresh += 1
        self.ops.append(Op(kind, inputs, out, tuple(sorted(attrs.items()))))
        return out

    def run(self) -> Graph | None:
        for op in self.graph.ops:
            inputs = tuple(self.rename.get(v.id, v) for v in op.inputs)
            if self.count is None and op is not self.sel and self.name in data_atoms_in(op):
                return None  # another call binds the size first (`x[m] + y[m]`: one size)
            if op is self.sel:
                self.count_selected()
            elif op.kind == "broadcast" and self.name in data_atoms_in(op.out.shape) and \
                    self.name not in data_atoms_in(op.inputs[0].shape):
                if not self.broadcast_in(op, inputs[0]):
                    return None
            elif op.kind == "size" and self.name in data_atoms_in(op.attrs):
                if not self.size_of(op):
                    return None
            elif any(v.id in self.full for v in op.inputs):
                if not (self.elementwise(op) if op.kind in REGION_KINDS else
                        self.reduction(op) if op.kind == "reduce" else False):
                    return None
            else:
                self.ops.append(op if inputs == op.inputs else replace(op, inputs=inputs))
        outputs = []
        for k, v in enumerate(self.graph.outputs):
            if v.id in self.full and not (v.id == self.sel.out.id and k >= self.n_returned):
                return None  # the selection (or a value over its elements) is returned
            outputs.append(self.count if v.id in self.full else self.rename.get(v.id, v))
        if any(self.name in data_atoms_in(op) for op in self.ops):
            return None  # another use of the size (safety net: nothing may read it unbound)
        record = MaskedReduction(str(self.sel.out), self.sel.out.shape[0].env.data[self.name],
                                 tuple(self.reductions))
        return Graph(self.graph.inputs, tuple(self.ops), tuple(outputs),
                     (*self.graph.rewrites, record))

    def count_selected(self) -> None:
        """count = count_nonzero(mask), where the selection was."""
        ints = self.add("cast", (self.mask,), self.mask.shape, np.dtype(np.int64),
                        dtype=np.dtype(np.int64))
        self.count = self.add("reduce", (ints,), (), np.dtype(np.int64),
                              axes=tuple(range(self.mask.ndim)), fn="sum", keepdims=False)

    def mask_over_x(self) -> Value:
        """The mask broadcast over x's trailing axes (once)."""
        if self.wide_mask is None:
            m, rest = self.mask, self.x.ndim - self.mask.ndim
            if rest:
                m = self.add("reshape", (m,), (*m.shape, *(1,) * rest), m.dtype,
                             shape=(*m.shape, *(1,) * rest))
                m = self.add("broadcast", (m,), self.x.shape, m.dtype, shape=self.x.shape)
            self.wide_mask = m
        return self.wide_mask

    def broadcast_in(self, op: Op, value: Value) -> bool:
        """A value from outside broadcast over the selection: over x's shape instead (its
        leading axes, of size 1, dropped: the selection's axis 0 is x's mask axes)."""
        if not same_size_shapes(op.out.shape, self.sel.out.shape):
            return False
        rest = self.x.ndim - self.mask.ndim
        lead = value.ndim - rest
        if lead > 0:
            if any(not (isinstance(s, int) and s == 1) for s in value.shape[:lead]):
                return False
            value = self.add("reshape", (value,), value.shape[lead:], value.dtype,
                             shape=value.shape[lead:])
        self.full[op.out.id] = self.add("broadcast", (value,), self.x.shape, value.dtype,
                                        shape=self.x.shape)
        return True

    def size_of(self, op: Op) -> bool:
        """A size of the selection as a value (`y.size`, `y.shape[0]`: d0, maybe times the
        trailing axes' sizes) from the count."""
        d, size = self.sel.out.shape[0], op.attr("size")
        rest = math.prod(self.sel.out.shape[1:])
        factor = 1 if same_size(size, d) else rest if same_size(size, d * rest) else None
        if factor is None:
            return False
        assert self.count is not None
        value = self.count
        if not (isinstance(factor, int) and factor == 1):
            c = self.add("const", (), (), value.dtype, value=factor) if isinstance(factor, int) \
                else self.add("size", (), (), value.dtype, size=factor)
            value = self.add("elementwise", (value, c), (), value.dtype, fn="multiply")
        if op.out.dtype != value.dtype:
            value = self.add("cast", (value,), (), op.out.dtype, dtype=op.out.dtype)
        self.rename[op.out.id] = value
        return True

    def elementwise(self, op: Op) -> bool:
        """An elementwise op over the selection: over all of x (the unselected elements are
        masked out by the reductions), unless it may set an error flag on them."""
        if not same_size_shapes(op.out.shape, self.sel.out.shape) or \
                any(v.id not in self.full for v in op.inputs):
            return False
        if op.kind == "elementwise" and by_name(op.attr("fn")).flags:
            return False
        if op.kind == "cast" and op.inputs[0].dtype.kind in "fc" and op.out.dtype.kind in "iu":
            return False  # NaN or out of range: NumPy warns (only for the selected ones)
        inputs = tuple(self.full[v.id] for v in op.inputs)
        self.full[op.out.id] = self.add(op.kind, inputs, self.x.shape, op.out.dtype,
                                        **dict(op.attrs))
        return True

    def reduction(self, op: Op) -> bool:
        """A reduction over the selected elements (axis 0, maybe more): over the mask's axes
        of `where(mask, value, identity)`."""
        fn, axes, (value,) = op.attr("fn"), op.attr("axes"), op.inputs
        if fn not in IDENTITY or 0 not in axes or value.id not in self.full:
            return False
        lead = self.mask.ndim
        identity = self.add("const", (), (), value.dtype,
                            value=value.dtype.type(IDENTITY[fn]).item())
        identity = self.add("broadcast", (identity,), self.x.shape, value.dtype,
                            shape=self.x.shape)
        kept = self.add("where", (self.mask_over_x(), self.full[value.id], identity),
                        self.x.shape, value.dtype)
        flat = tuple(s for k, s in enumerate(value.shape) if k not in axes)
        out = op.out if not op.attr("keepdims") else None
        result = self.add("reduce", (kept,), flat, op.out.dtype, out,
                          axes=(*range(lead), *(a + lead - 1 for a in axes if a)), fn=fn,
                          keepdims=False)
        if out is None:
            self.add("reshape", (result,), op.out.shape, op.out.dtype, op.out,
                     shape=op.out.shape)
        self.reductions.append(f"{op.out} = {fn}")
        return True


def same_size_shapes(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal shapes for every size (no guard)."""
    return len(a) == len(b) and all(same_size(p, q) for p, q in zip(a, b, strict=True))
