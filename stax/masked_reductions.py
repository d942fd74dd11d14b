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
when any use is something else (returned, indexed, an `argmax`, an op that may set an error
flag on the unselected elements, such as an integer `//` or a float-to-integer cast), or when
a guard was recorded on its size (a decision of the program depends on it) other than its
being nonempty: a `max`/`min` (no identity) starts from the dtype's lowest/highest value and
checks the count, raising NumPy's ValueError for an empty selection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from stax.graph import Graph, Op, Value
from stax.ir.sym import Sym, data_atoms_in, same_size
from stax.ops import REDUCTIONS, by_name
from stax.runtime import externs

IDENTITY = {r.name: r.identity for r in REDUCTIONS if r.identity is not None}
NO_IDENTITY = {"max": "maximum", "min": "minimum"}  # start from the dtype's end; check count
REGION_KINDS = frozenset({"elementwise", "where", "cast"})  # elementwise over the selection


def _start(fn: str, dtype: np.dtype) -> Any:
    """What a reduction over the unselected elements reads: its identity, or for max/min the
    dtype's lowest/highest value (-inf/inf: a NaN selected still propagates)."""
    if fn in IDENTITY:
        return dtype.type(IDENTITY[fn]).item()
    low = fn == "max"
    if dtype.kind == "b":
        return not low
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    info = np.iinfo(dtype)
    return int(info.min if low else info.max)


def _nonempty(name: str) -> str:
    """The extern that passes a max/min through, or raises NumPy's error when nothing was
    selected (the count is its first input)."""
    def check(count: np.ndarray, value: np.ndarray, out: np.ndarray) -> None:
        if count == 0:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        np.copyto(out, value)
    return externs.register_into(f"nonempty({name})", check)


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
    if any(name in d.env.atoms_of(lhs) and not (rel in ("!=", ">") and rhs == 0 and
                                                 same_size(lhs, d))
           for rel, lhs, rhs in d.env.guards):
        return None  # a decision of the program depends on the size (but being nonempty,
    return name  # which only a max/min asks: it checks the count)


def fuse_masked_reductions(graph: Graph, n_returned: int) -> Graph:
    """`graph` with every selection that only whole reductions read rewritten (see the module
    docstring). Outputs from position `n_returned` on are kept only so that their extern call
    runs (`stax.api.trace`): a rewritten selection's is replaced by its count."""
    tried: set[str] = set()
    while True:
        name = next((n for n in map(_size_atom, graph.ops) if n is not None and n not in tried),
                    None)
        if name is None:
            return graph
        tried.add(name)
        graph = _Rewrite(graph, name, n_returned).run() or graph


class _Rewrite:
    """The rewrite of the selections of one size `name` (`x[m]`, and `y[m]` under a mask
    computed alike: one size, one count); `run` returns None when a use is not a whole
    reduction."""

    def __init__(self, graph: Graph, name: str, n_returned: int) -> None:
        self.graph, self.name, self.n_returned = graph, name, n_returned
        self.sels = [op for op in graph.ops if _size_atom(op) == name]
        self.size = self.sels[0].out.shape[0]
        self.mask = self.sels[0].inputs[1]  # the others' are computed alike: equal
        self.fresh = max([v.id for op in graph.ops for v in (*op.inputs, op.out)]
                         + [v.id for v in graph.inputs]) + 1
        self.ops: list[Op] = []
        self.full: dict[int, Value] = {}  # a value over the selection -> over its source
        self.rename: dict[int, Value] = {}  # a size of the selection -> from the count
        self.count: Value | None = None
        self.counted: set[int] = set()  # values that are the count itself (`y.shape[0]`)
        self.float_count: Value | None = None
        self.masks: dict[tuple[str, ...], Value] = {}  # the mask over each source shape
        self.reductions: list[str] = []
        env = self.size.env  # the program raises for an empty selection (a max/min without
        # initial= recorded the guard that it is nonempty, `_size_atom`)
        self.nonempty = any(name in env.atoms_of(lhs) for _, lhs, _ in env.guards)

    def add(self, kind: str, inputs: tuple[Value, ...], shape: tuple[Any, ...],
            dtype: np.dtype, out: Value | None = None, /, **attrs: Any) -> Value:
        if out is None:
            out = Value(self.fresh, shape, np.dtype(dtype))
            self.fresh += 1
        self.ops.append(Op(kind, inputs, out, tuple(sorted(attrs.items()))))
        return out

    def over_source(self, shape: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The shape over the selection's source of a value of `shape` over the selection
        (`(d0, *rest)` -> `(*mask.shape, *rest)`), or None when `shape` is not of that form."""
        if not shape or not same_size(shape[0], self.size) or \
                self.name in data_atoms_in(shape[1:]):
            return None
        return (*self.mask.shape, *shape[1:])

    def run(self) -> Graph | None:
        for op in self.graph.ops:
            inputs = tuple(self.rename.get(v.id, v) for v in op.inputs)
            if self.count is None and op is not self.sels[0] and \
                    self.name in data_atoms_in(op):
                return None  # another call binds the size first
            if op in self.sels:
                if self.count is None:
                    self.count_selected()
                self.full[op.out.id] = op.inputs[0]
            elif op.kind == "broadcast" and self.name in data_atoms_in(op.out.shape) and \
                    self.name not in data_atoms_in(op.inputs[0].shape):
                if not self.broadcast_in(op, inputs[0]):
                    return None
            elif op.kind == "cast" and op.inputs[0].id in self.counted and \
                    op.out.dtype == np.dtype(np.float64):
                self.rename[op.out.id] = self.count_as_float()
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
        selections = {op.out.id for op in self.sels}
        for k, v in enumerate(self.graph.outputs):
            if v.id in self.full and not (v.id in selections and k >= self.n_returned):
                return None  # the selection (or a value over its elements) is returned
            outputs.append(self.count if v.id in self.full else self.rename.get(v.id, v))
        if any(self.name in data_atoms_in(op) for op in self.ops):
            return None  # another use of the size (safety net: nothing may read it unbound)
        record = MaskedReduction(", ".join(str(op.out) for op in self.sels),
                                 self.size.env.data[self.name], tuple(self.reductions))
        return Graph(self.graph.inputs, tuple(self.ops), tuple(outputs),
                     (*self.graph.rewrites, record))

    def count_selected(self) -> None:
        """count = count_nonzero(mask), where the first selection was."""
        ints = self.add("cast", (self.mask,), self.mask.shape, np.dtype(np.int64),
                        dtype=np.dtype(np.int64))
        self.count = self.add("reduce", (ints,), (), np.dtype(np.int64),
                              axes=tuple(range(self.mask.ndim)), fn="sum", keepdims=False)

    def count_as_float(self) -> Value:
        """The count as a float64 reduction of its own (`mean`'s divisor): a loop reading
        an int64 count converted it for every element (13-15 ms vs 1.4 ms at 10^6)."""
        if self.float_count is None:
            f64 = np.dtype(np.float64)
            ones = self.add("cast", (self.mask,), self.mask.shape, f64, dtype=f64)
            self.float_count = self.add("reduce", (ones,), (), f64,
                                        axes=tuple(range(self.mask.ndim)), fn="sum",
                                        keepdims=False)
        return self.float_count

    def mask_over(self, shape: tuple[Any, ...]) -> Value:
        """The mask broadcast over the trailing axes of `shape` (once per shape)."""
        key = tuple(map(str, shape))
        if key not in self.masks:
            m, rest = self.mask, len(shape) - self.mask.ndim
            if rest:
                m = self.add("reshape", (m,), (*m.shape, *(1,) * rest), m.dtype,
                             shape=(*m.shape, *(1,) * rest))
                m = self.add("broadcast", (m,), shape, m.dtype, shape=shape)
            self.masks[key] = m
        return self.masks[key]

    def broadcast_in(self, op: Op, value: Value) -> bool:
        """A value from outside broadcast over the selection: over the source instead (its
        leading axes, of size 1, dropped: the selection's axis 0 is the mask's axes)."""
        shape = self.over_source(op.out.shape)
        if shape is None:
            return False
        lead = value.ndim - (op.out.ndim - 1)
        if lead > 0:
            if any(not (isinstance(s, int) and s == 1) for s in value.shape[:lead]):
                return False
            value = self.add("reshape", (value,), value.shape[lead:], value.dtype,
                             shape=value.shape[lead:])
        self.full[op.out.id] = self.add("broadcast", (value,), shape, value.dtype, shape=shape)
        return True

    def size_of(self, op: Op) -> bool:
        """A size of the selection as a value (`y.size`, `y.shape[0]`: d0, maybe times the
        trailing axes' sizes) from the count."""
        size, shape = op.attr("size"), self.sels[0].out.shape
        rest = math.prod(shape[1:])
        factor = 1 if same_size(size, self.size) else rest if same_size(
            size, self.size * rest) else None
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
        if value is self.count:
            self.counted.add(op.out.id)
        self.rename[op.out.id] = value
        return True

    def elementwise(self, op: Op) -> bool:
        """An elementwise op over the selection: over all of the source (the unselected
        elements are masked out by the reductions), unless it may set an error flag on them."""
        shape = self.over_source(op.out.shape)
        if shape is None or any(v.id not in self.full for v in op.inputs):
            return False
        if op.kind == "elementwise" and by_name(op.attr("fn")).flags:
            return False
        if op.kind == "cast" and op.inputs[0].dtype.kind in "fc" and op.out.dtype.kind in "iu":
            return False  # NaN or out of range: NumPy warns (only for the selected ones)
        inputs = tuple(self.full[v.id] for v in op.inputs)
        self.full[op.out.id] = self.add(op.kind, inputs, shape, op.out.dtype, **dict(op.attrs))
        return True

    def reduction(self, op: Op) -> bool:
        """A reduction over the selected elements (axis 0, maybe more): over the mask's axes
        of `where(mask, value, start)`; a max/min then checks the count (NumPy's error for an
        empty selection)."""
        fn, axes, (value,) = op.attr("fn"), op.attr("axes"), op.inputs
        shape = self.over_source(value.shape)
        if fn not in IDENTITY and fn not in NO_IDENTITY or 0 not in axes or shape is None:
            return False
        lead = self.mask.ndim
        start = self.add("const", (), (), value.dtype, value=_start(fn, value.dtype))
        start = self.add("broadcast", (start,), shape, value.dtype, shape=shape)
        kept = self.add("where", (self.mask_over(shape), self.full[value.id], start), shape,
                        value.dtype)
        flat = tuple(s for k, s in enumerate(value.shape) if k not in axes)
        last = op.out if not op.attr("keepdims") else None
        checked = fn in NO_IDENTITY and self.nonempty  # [LEAD18] no guard: `initial=` given
        result = self.add("reduce", (kept,), flat, op.out.dtype, None if checked else last,
                          axes=(*range(lead), *(a + lead - 1 for a in axes if a)), fn=fn,
                          keepdims=False)
        if checked:
            assert self.count is not None
            result = self.add("extern", (self.count, result), flat, op.out.dtype, last,
                              fn=_nonempty(NO_IDENTITY[fn]))
        if last is None:
            self.add("reshape", (result,), op.out.shape, op.out.dtype, op.out,
                     shape=op.out.shape)
        self.reductions.append(f"{op.out} = {fn}")
        return True

