"""Lowering: Graph -> LoopProgram.

Each graph value becomes a *loader*: a function from an index tuple to a body expression.
Pointwise ops and views compose loaders (function composition: pointwise work is inlined into
its consumers, views are index arithmetic). A value becomes a buffer only when a
materialization rule says so (`MATERIALIZE_REASONS`): graph outputs, reduction and scan
results, extern inputs and outputs, and values with several consumers whose recomputation the
backend calls costly (`Backend.recompute_cost`, passed in as `recompute_cost`; seed 000 §7.4 Ex.
7.2: on CPU `exp` with two consumers is materialized). Each decision is recorded with its
reason.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from stax.graph import Graph, Op, Value
from stax.ir.expr import (
    Call,
    Const,
    Expr,
    FloorDiv,
    Index,
    IndexValue,
    Indirect,
    Load,
    Mod,
    Ranges,
    Var,
    drop_unit_vars,
    expr_variables,
    floordiv,
    mod,
    op_count,
    walk,
)
from stax.ir.program import (
    Buffer,
    LoopProgram,
    Node,
    contiguous_strides,
    ordered_strides,
    rvars,
    xvars,
)
from stax.ir.sym import data_atoms_in, hint, is_data, is_sym, known_empty, same_size, surely
from stax.ops import ELEMENTWISE, by_name  # [A1]
from stax.ops.table import Cost, may_set_flags
from stax.runtime import externs  # [H13] transposed operands of matmul

# The calls a backend prices (`Backend.recompute_cost`): the op table's ops. Casts, selects and
# complex parts are index or move work, never costly. [A1]
PRICED = frozenset(op.name for op in ELEMENTWISE)
# [GEN] A value with a costly op and two consumers is recomputed by both when its rows (its
# innermost extent, at the traced size) are longer than this: such a row leaves L2 between
# the consumers (softmax over 1 x 10^6 float32: 4 passes over memory -> 3).
STREAMED_ROW_BYTES = 1 << 20
# Inlined expressions larger than this are materialized when they have several consumers.
MAX_INLINE_OPS = 24
# A chain of inlined ops deeper than this is materialized [C, issue 8]: loads nest one Python
# call per op (no RecursionError at any program size) and g++ meets no giant expressions.
MAX_INLINE_DEPTH = 64

Loader = Callable[[tuple[Index, ...], Ranges], Expr]
# How costly an op of the table is to recompute (`Backend.recompute_cost`): anything but "cheap"
# with several consumers is materialized.
CostOf = Callable[[str], Cost]


@dataclass
class Lazy:
    """A value during lowering: how to compute element `idx`, or the buffer it lives in."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fn: Loader
    buffer: str | None = None
    memo: dict[tuple[Index, ...], Expr] = field(default_factory=dict)

    def load(self, idx: tuple[Index, ...], ranges: Ranges) -> Expr:
        key = idx
        if key not in self.memo:
            self.memo[key] = self.fn(idx, ranges)
        return self.memo[key]


@dataclass(frozen=True)
class Materialization:
    """Why `value` got a buffer of its own, by `rule` (G: decision records): `costly_recompute`,
    `inline_op_limit`, `inline_depth_limit`, `graph_output`, `reduction_result`, `scan_result`,
    `extern_result`, `extern_input`, `reduction_split` (a partial result, [VEC3]),
    `unused_gather`, `empty_read_gather`; without a buffer (`recomputed`, `inlined`):
    `streamed_row_recompute`, `transposed_recompute`, `unrolled_reduce` ([PERF11])."""

    value: str
    buffer: str
    reason: str
    rule: str

    def __str__(self) -> str:
        return f"{self.value} -> {self.buffer}: {self.reason}"


@dataclass(frozen=True)
class Layout:
    """[LAYOUT] Why output `buffer` is laid out with its axes in memory `order` (outermost
    first) rather than in C order, by `rule` `k_order`: NumPy's result has that layout."""

    value: str
    buffer: str
    order: tuple[int, ...]
    reason: str
    rule: str = "k_order"

    def __str__(self) -> str:
        return f"{self.value} -> {self.buffer}: axes {self.order} in memory ({self.rule}: " \
               f"{self.reason})"


@dataclass(frozen=True)
class Lowered:
    program: LoopProgram
    decisions: tuple[Materialization, ...]
    layouts: tuple[Layout, ...] = ()


def flat_index(idx: Sequence[Index], strides: Sequence[int]) -> Index:
    out = Index()
    for i, s in zip(idx, strides, strict=True):
        out = out + i * s
    return out


def loop_index(names: Sequence[str], extents: Sequence[int]) -> tuple[Index, ...]:
    return tuple(Index() if surely(e, "<=", 1) else Index.var(n)  # [COMPACT] data sizes: any
                 for n, e in zip(names, extents, strict=True))


def _repeated_values(graph: Graph, users: Mapping[int, Sequence[Op]]) -> set[int]:
    """The op results read through a broadcast that adds elements and then a reshape, with
    views and pointwise ops between them (np.repeat's copy): one pass over the ops from the
    last, each value's answer from its users' (a walk per value was exponential in a chain of
    values read twice)."""
    passes = {*VIEWS, "elementwise", "cast", "where"}
    expanded: set[int] = set()  # read through an added broadcast, then a reshape
    plain: set[int] = set()  # read so with no broadcast before it yet
    for op in reversed(graph.ops):
        v = op.out
        for user in users.get(v.id, ()):
            if user.kind == "reshape" or (user.kind in passes and user.out.id in expanded):
                expanded.add(v.id)
            if user.kind in passes and (
                    user.out.id in plain or user.out.id in expanded and user.kind == "broadcast"
                    and not same_size(user.out.size, v.size)):
                plain.add(v.id)
    return plain


class _Lowering:
    def __init__(self, graph: Graph, input_strides: Sequence[tuple[int, ...]],
                 recompute_cost: CostOf, numpy_layout: bool) -> None:
        self.graph = graph
        self.input_strides = input_strides
        self.recompute_cost = recompute_cost
        self.values: dict[int, Lazy] = {}
        self.buffers: dict[str, Buffer] = {}  # by name, in creation order
        self.nodes: list[Node] = []
        self.decisions: list[Materialization] = []
        self.consumers = _consumer_counts(graph)
        self.producer = graph.producer()
        self.users = graph.users()
        # values whose inlined expression gathers or sets an error flag (integer // by 0, ...)
        self.checking: set[int] = set()
        # values nothing reads and not returned: computed only where that can raise (unused)
        self.unused = {op.out.id for op in graph.ops} - set(self.users) - {
            v.id for v in graph.outputs}
        self.depth: dict[int, int] = {}  # inlined ops under each value [C]
        self.repeats = _repeated_values(graph, self.users)
        self.numpy_strides = numpy_strides(graph, input_strides)  # [LAYOUT]
        self.output_ids = {v.id for v in graph.outputs} if numpy_layout else set()
        self.layouts: list[Layout] = []

    # ---- buffers and nodes ---------------------------------------------------------------------
    def buffer_loader(self, buf: Buffer) -> Loader:
        def load(idx: tuple[Index, ...], ranges: Ranges) -> Expr:
            return Load(buf.name, drop_unit_vars(flat_index(idx, buf.strides), ranges), buf.dtype)
        return load

    def new_buffer(self, shape: tuple[int, ...], dtype: np.dtype,
                   order: tuple[int, ...] = ()) -> Buffer:
        strides = ordered_strides(shape, order) if order else contiguous_strides(shape)
        buf = Buffer(f"buf{len(self.nodes) + 1}", shape, strides, dtype, "intermediate",
                     order=order)
        self.buffers[buf.name] = buf
        return buf

    def output_order(self, value: Value) -> tuple[int, ...]:
        """[LAYOUT] The memory order of a graph output NumPy lays out otherwise than in C order
        (an elementwise result, a copy of a view: K order), recorded; () for C order."""
        if value.id not in self.output_ids:
            return ()
        strides = self.numpy_strides[value.id]
        order = memory_order(strides, value.shape)
        if order == tuple(range(len(order))):
            return ()
        self.layouts.append(Layout(str(value), f"buf{len(self.nodes) + 1}", order,
                                   f"NumPy's result has strides in the order of {strides}"))
        return order

    def add_node(self, kind: str, buf: Buffer, ranges: tuple[int, ...], body: Expr | None,
                 out_index: Index, origin: str, reduction_ranges: tuple[int, ...] = (),
                 fn: str = "", extern_inputs: tuple[str, ...] = (), raises: bool = False
                 ) -> Lazy:
        node = Node(f"op{len(self.nodes)}", kind, buf.name, ranges,  # type: ignore[arg-type]
                    reduction_ranges, body, out_index, fn, extern_inputs, origin, raises=raises)
        self.nodes.append(node)
        return Lazy(buf.shape, buf.dtype, self.buffer_loader(buf), buf.name)

    def materialize(self, value: Value, rule: str, reason: str) -> Lazy:
        lazy = self.values[value.id]
        if lazy.buffer is not None and self._plain_buffer(lazy):
            return lazy
        order = self.output_order(value)
        buf = self.new_buffer(value.shape, value.dtype, order)
        src = None if order else self.merged_source(value)
        shape, load = (src.shape, src.load) if src is not None else (value.shape, lazy.load)
        names = xvars(len(shape))
        ranges = dict(zip(names, shape, strict=True))
        idx = loop_index(names, shape)
        strides = contiguous_strides(shape) if src is not None else buf.strides
        out = self.add_node("pointwise", buf, shape, load(idx, ranges), flat_index(idx, strides),
                            self.origin(value))
        if src is not None:
            reason += (f", written in loops over its reshape's source shape {shape} (each "
                       f"merged axis indexed by its own loop, not by divisions of one)")
        self.decisions.append(Materialization(str(value), buf.name, reason, rule))
        self.values[value.id] = out
        return out

    def merged_source(self, value: Value) -> Lazy | None:
        """[LAYOUT s14] The source of `value` when `value` is a reshape merging adjacent axes of
        a value not stored (a group norm's (N, G, C) result reshaped to (N, G*C)): the
        C-ordered buffer holds the same elements at the same flat positions, so a loop nest
        over the source shape stores them contiguously with affine loads, where one over the
        merged shape reads the source through `x // C` and `x % C` (per element, not per
        group); None otherwise."""
        op = self.producer.get(value.id)
        if op is None or op.kind != "reshape":
            return None
        src = self.values[op.inputs[0].id]
        if src.buffer is not None or not _merges(src.shape, value.shape):
            return None
        return src

    def _plain_buffer(self, lazy: Lazy) -> bool:
        buf = self.buffers[lazy.buffer]  # type: ignore[index]
        return buf.shape == lazy.shape

    def origin(self, value: Value) -> str:
        op = self.producer[value.id]
        fn = f"[{op.attr('fn')}]" if op.kind in ("elementwise", "reduce", "scan") else ""
        return f"{value} = {op.kind}{fn}"

    # ---- the walk ------------------------------------------------------------------------------
    def run(self) -> Lowered:
        for op in self.graph.ops:
            for v in self.read_by_empty(op):
                self.materialize(v, "empty_read_gather", "read only into an empty result, but "
                                 "its gather's indices are checked and its error flags "
                                 "raised as NumPy's")
            self.values[op.out.id] = self.lower_op(op)
            if op.kind in ("take", "gather") or _flags(op) or any(
                    v.id in self.checking and self.values[v.id].buffer is None
                    for v in op.inputs):
                self.checking.add(op.out.id)
            decided = self.should_materialize(op) or self.too_deep(op) or self.unused_check(op)
            if decided is not None:
                self.materialize(op.out, *decided)
        outputs = []
        for v in self.graph.outputs:
            lazy = self.values[v.id]
            if lazy.buffer is None or not self._is_output_ready(lazy):
                lazy = self.materialize_fresh(v)
            outputs.append(lazy.buffer)
        final = [replace(b, kind="output") if b.name in outputs and b.kind == "intermediate"
                 else b for b in self.buffers.values()]
        inputs = tuple(f"primals_{k + 1}" for k in range(len(self.graph.inputs)))
        nodes = _after_data_binders(self.nodes, {b.name: b for b in final})
        program = LoopProgram(tuple(final), nodes, inputs, tuple(outputs),
                              tuple(v.shape for v in self.graph.outputs))
        return Lowered(program, tuple(self.decisions), tuple(self.layouts))

    def _is_output_ready(self, lazy: Lazy) -> bool:
        buf = self.buffers[lazy.buffer]  # type: ignore[index]
        return buf.kind == "intermediate" and buf.size == math.prod(lazy.shape)

    def materialize_fresh(self, v: Value) -> Lazy:
        self.values[v.id] = Lazy(v.shape, v.dtype, self.values[v.id].load)
        return self.materialize(v, "graph_output", "graph output")

    def too_deep(self, op: Op) -> tuple[str, str] | None:
        """[C, issue 8] The rule for a chain of inlined ops longer than MAX_INLINE_DEPTH."""
        depth = 1 + max((self.depth.get(v.id, 0) for v in op.inputs
                         if self.values[v.id].buffer is None), default=0)
        self.depth[op.out.id] = depth
        if depth <= MAX_INLINE_DEPTH or self.values[op.out.id].buffer is not None:
            return None
        return "inline_depth_limit", f"{depth} ops inlined in a chain"

    def unused_check(self, op: Op) -> tuple[str, str] | None:
        """A value nothing reads is computed all the same where it gathers (`x[idx]` alone on
        a line, or inlined into it): NumPy raises IndexError for an index out of bounds; so is
        one that sets an error flag (`r = a ** b` unused: NumPy raises for a negative integer
        exponent, warns for an integer division by zero) [FUZZ2]."""
        if op.out.id not in self.unused or op.out.id not in self.checking or \
                self.values[op.out.id].buffer is not None:
            return None
        return "unused_gather", "not used, but its gather's indices are checked and its " \
            "error flags (integer // by 0, ** of a negative integer) raised as NumPy's"

    def read_by_empty(self, op: Op) -> list[Value]:
        """Inputs of `op` that gather, inlined, where `op`'s result is empty and theirs not:
        no element of them would be computed (`x[idx][:0]`), and NumPy raises IndexError for
        an index out of bounds all the same."""
        if not known_empty(op.out.shape):
            return []
        return [v for v in op.inputs if v.id in self.checking and self.values[v.id].buffer
                is None and all(type(n) is int for n in v.shape) and not known_empty(v.shape)]

    def should_materialize(self, op: Op) -> tuple[str, str] | None:
        """(rule, reason) when `op`'s value gets a buffer rather than being inlined."""
        if op.kind not in ("elementwise", "cast", "where", "setitem", "concatenate", "take",
                           "gather"):
            return None
        if surely(op.out.size, "<=", 1):
            return None
        if self.consumers.get(op.out.id, 0) < 2:
            return self.repeated_costly(op.out)
        expr = self.expression(op.out)
        # [GEN] an op invariant along the innermost axis (a row's mean, a row's 1 / std) is
        # computed once per row before that loop, not per element: not a cost of recomputing
        inner = xvars(op.out.ndim)[-1] if op.out.ndim else ""
        costly = self.costly_call(expr, inner if inner in expr_variables(expr) else "")
        if costly is not None and self.streamed_row(op.out):
            self.decisions.append(Materialization(str(op.out), "recomputed", (
                f"2 consumers recompute {costly}: rows of {row_bytes(op.out)} B would be "
                f"stored to memory and read back (> {STREAMED_ROW_BYTES} B)"),
                "streamed_row_recompute"))
        elif costly is not None and self.transposed_value(op.out, expr):
            self.decisions.append(Materialization(str(op.out), "recomputed", (
                f"2 consumers recompute {costly}: its operands are laid out in axis order "
                f"{memory_order(self.numpy_strides[op.out.id], op.out.shape)}, a C-ordered "
                f"buffer would be written and read back through a transpose"),
                "transposed_recompute"))
        elif costly is not None:
            return "costly_recompute", (
                f"{self.consumers[op.out.id]} consumers and {costly} is costly to recompute on "
                f"this backend ({self.recompute_cost(costly)})")
        if op_count(expr) > MAX_INLINE_OPS:
            return "inline_op_limit", (f"{self.consumers[op.out.id]} consumers and "
                                        f"{op_count(expr)} ops inlined")
        return None

    def expression(self, value: Value) -> Expr:
        """`value`'s inlined expression over its own loop nest."""
        return self.values[value.id].load(
            loop_index(xvars(value.ndim), value.shape),
            dict(zip(xvars(value.ndim), value.shape, strict=True)))

    def costly_call(self, expr: Expr, per_row: str = "") -> str | None:
        """The first call in `expr` this backend prices as costly to recompute; with `per_row`
        (the innermost loop variable), not one invariant along it ([GEN] hoisted per row)."""
        return next((c.fn for c in walk(expr) if isinstance(c, Call) and c.fn in PRICED
                     and self.recompute_cost(c.fn) != "cheap"
                     and not (per_row and per_row not in expr_variables(c))), None)

    def repeated_costly(self, value: Value) -> tuple[str, str] | None:
        """[NPB] A value read through a broadcast and then a reshape (`np.repeat(np.exp(x), r)`:
        the reshape's `x // r` index hides that it is the same along the repeated axis) with a
        costly call: inlined, the call would run once per repeated element (npbench's
        stockham_fft made 7.5x NumPy's complex exps), so it gets a buffer before the repeat.
        The graph walk comes first: most values are not repeated, and their expression is not
        built."""
        if not self.repeated(value):
            return None
        costly = self.costly_call(self.expression(value))
        if costly is None:
            return None
        return "repeated_costly", (f"read through a broadcast and a reshape (np.repeat): "
                                   f"inlined, {costly} would run once per repeated element")

    def repeated(self, value: Value) -> bool:
        """Is `value` read through a broadcast that adds elements and then a reshape (views and
        pointwise ops between them: np.repeat's copy)?"""
        return value.id in self.repeats

    def streamed_row(self, value: Value) -> bool:
        """[GEN] Is `value` read by two consumers in rows too long to stay in cache between
        them (a softmax's exp over one long row)? Recomputing it moves less: its buffer would be
        written and read back from memory, and the recomputed op streams its inputs instead.
        Not a result: its buffer is written anyway."""
        return (self.consumers[value.id] == 2 and row_bytes(value) > STREAMED_ROW_BYTES
                and all(v.id != value.id for v in self.graph.outputs))

    def transposed_value(self, value: Value, expr: Expr) -> bool:
        """[LAYOUT s14] Is `value`, read by two consumers, computed from operands laid out in
        another order than C (an exp of a transposed input normalized along axis 0), with one
        costly call? A buffer of it is C-ordered (its consumers index it so), so writing it and
        reading it back goes through a transpose each way; recomputing it reads the operands in
        their own order instead, as Inductor's 3-pass softmax does. Not when a reduction of it
        runs along its last axis: the C-ordered buffer is what that reduction reads along memory
        (a Fortran row softmax keeps its exp rows in thread-local blocks, [FROWS] local_rows)."""
        order = memory_order(self.numpy_strides[value.id], value.shape)
        last = value.ndim - 1
        return (self.consumers[value.id] == 2 and order != tuple(range(len(order)))
                and all(v.id != value.id for v in self.graph.outputs)
                and not any(op.kind == "reduce" and last in op.attr("axes")
                            for op in self.users.get(value.id, ()))
                and sum(isinstance(c, Call) and c.fn in PRICED
                        and self.recompute_cost(c.fn) != "cheap" for c in walk(expr)) == 1)

    def lower_op(self, op: Op) -> Lazy:
        out = op.out
        ins = [self.values[v.id] for v in op.inputs]
        kind = op.kind
        if kind == "input":
            k = op.attr("index")
            buf = Buffer(f"primals_{k + 1}", out.shape, self.input_strides[k], out.dtype, "input")
            self.buffers[buf.name] = buf
            return Lazy(out.shape, out.dtype, self.buffer_loader(buf), buf.name)
        if kind == "const":
            c = Const(op.attr("value"), out.dtype)
            return Lazy(out.shape, out.dtype, lambda idx, r: c)
        if kind == "size":  # a symbolic size used as a value: known at launch (issue 11)
            size = IndexValue(Index((), op.attr("size")))
            return Lazy(out.shape, out.dtype, lambda idx, r: size)
        if kind == "constant_array":
            data = op.attr("data").array
            buf = Buffer(f"const{len(self.buffers)}", out.shape, contiguous_strides(out.shape),
                         out.dtype, "const", data)
            self.buffers[buf.name] = buf
            if _is_iota(data):  # [LOOPS] arange(n): its element at an affine index is the index
                load = self.buffer_loader(buf)
                return Lazy(out.shape, out.dtype, lambda idx, r: IndexValue(drop_unit_vars(
                    idx[0], r)) if _affine(idx[0]) else load(idx, r), buf.name)
            return Lazy(out.shape, out.dtype, self.buffer_loader(buf), buf.name)
        if kind == "elementwise":
            fn = op.attr("fn")
            return Lazy(out.shape, out.dtype, lambda idx, r: Call(
                fn, tuple(i.load(idx, r) for i in ins), out.dtype))
        if kind == "cast":
            return Lazy(out.shape, out.dtype, lambda idx, r: Call(
                "cast", (ins[0].load(idx, r),), out.dtype))
        if kind == "where":
            return Lazy(out.shape, out.dtype, lambda idx, r: Call(
                "where", tuple(i.load(idx, r) for i in ins), out.dtype))
        if kind in VIEWS:
            return Lazy(out.shape, out.dtype, VIEWS[kind](op, ins[0]))
        if kind == "reduce":
            return self.lower_reduce(op, ins[0])
        if kind == "scan":
            return self.lower_scan(op, ins[0])
        if kind == "concatenate":
            return Lazy(out.shape, out.dtype, _concat_loader(op, ins))
        if kind == "setitem":
            return Lazy(out.shape, out.dtype, _setitem_loader(op, ins[0], ins[1]))
        if kind == "take":
            return Lazy(out.shape, out.dtype, _take_loader(op, ins[0], ins[1:]))
        if kind == "gather":
            return Lazy(out.shape, out.dtype, _gather_loader(op, ins[0], ins[1]))
        if kind in ("matmul", "extern"):  # extern: a NumPy routine the wrapper runs (A2)
            return self.lower_matmul(op)
        raise NotImplementedError(f"stax.jit: lowering of {kind} is not supported")

    def lower_reduce(self, op: Op, src: Lazy) -> Lazy:
        axes = op.attr("axes")
        shape = op.inputs[0].shape
        if all(isinstance(shape[d], int) and shape[d] == 1 for d in axes):
            return _pointwise_reduce(op, src)
        if _few_reduced(op):
            count = math.prod(shape[d] for d in axes)
            self.decisions.append(Materialization(str(op.out), "inlined", (
                f"unrolled_reduce: {op.attr('fn')} over {count} elements per output (<= "
                f"{UNROLLED_REDUCE_MAX}) combined pointwise and fused into its consumers, not a "
                "reduction loop per output"), "unrolled_reduce"))
            return _pointwise_reduce(op, src)
        kept = [d for d in range(len(shape)) if d not in axes]
        ranges_x = tuple(shape[d] for d in kept)
        ranges_r = tuple(shape[d] for d in axes)
        names_x, names_r = xvars(len(kept)), rvars(len(axes))
        idx_x, idx_r = loop_index(names_x, ranges_x), loop_index(names_r, ranges_r)
        full: list[Index] = [Index()] * len(shape)
        for d, i in zip(kept, idx_x, strict=True):
            full[d] = i
        for d, i in zip(axes, idx_r, strict=True):
            full[d] = i
        ranges = dict(zip(names_x, ranges_x, strict=True)) | dict(
            zip(names_r, ranges_r, strict=True))
        body = src.load(tuple(full), ranges)
        split = split_reduction(body, kept, axes, op.attr("fn"))
        if split is not None:  # [VEC3] the contiguous reduced axes first, then the others
            src = self.reduce_inner(op, src, *split)
            axes = split[0]
            ranges_r = tuple(shape[d] for d in axes)
            names_r = rvars(len(axes))
            idx_r = loop_index(names_r, ranges_r)
            ranges = dict(zip(names_x, ranges_x, strict=True)) | dict(
                zip(names_r, ranges_r, strict=True))
            body = src.load(idx_r + idx_x, ranges)
        buf = self.new_buffer(ranges_x, op.out.dtype)
        result = self.add_node("reduction", buf, ranges_x, body,
                               flat_index(idx_x, buf.strides), self.origin(op.out),
                               reduction_ranges=ranges_r, fn=op.attr("fn"))
        self.decisions.append(Materialization(str(op.out), buf.name, "reduction result",
                                              "reduction_result"))
        if op.attr("keepdims"):
            inner = result

            def keep(idx: tuple[Index, ...], r: Ranges) -> Expr:
                return inner.load(tuple(i for d, i in enumerate(idx) if d not in axes), r)
            # Same data with unit dimensions: the buffer can still be returned as an output.
            return Lazy(op.out.shape, op.out.dtype, keep, buf.name)
        return result

    def reduce_inner(self, op: Op, src: Lazy, outer: tuple[int, ...], inner: tuple[int, ...],
                     kept: tuple[int, ...]) -> Lazy:
        """[VEC3] The first step of a split reduction: `src` reduced over its `inner` axes
        (each row read contiguously), a partial result laid out as (`outer` reduced axes,
        `kept` axes) in C order, which the reduction over `outer` then reads a row of outputs
        at a time (the outer-reduction form)."""
        shape = op.inputs[0].shape
        mid = outer + kept
        ranges_x = tuple(shape[d] for d in mid)
        ranges_r = tuple(shape[d] for d in inner)
        names_x, names_r = xvars(len(mid)), rvars(len(inner))
        full: list[Index] = [Index()] * len(shape)
        for d, i in zip(mid + inner, loop_index(names_x, ranges_x) +
                        loop_index(names_r, ranges_r), strict=True):
            full[d] = i
        ranges = dict(zip(names_x, ranges_x, strict=True)) | dict(
            zip(names_r, ranges_r, strict=True))
        buf = self.new_buffer(ranges_x, op.out.dtype)
        self.decisions.append(Materialization(
            f"{op.out} over axes {inner}", buf.name,
            f"reduction_split: partial {op.attr('fn')} over the contiguous axes {inner} first "
            f"(rows read in memory order), then over axes {outer} a row of outputs at a time",
            "reduction_split"))
        return self.add_node("reduction", buf, ranges_x, src.load(tuple(full), ranges),
                             flat_index(loop_index(names_x, ranges_x), buf.strides),
                             self.origin(op.out), reduction_ranges=ranges_r,
                             fn=op.attr("fn"))

    def lower_scan(self, op: Op, src: Lazy) -> Lazy:
        axis = op.attr("axis")
        shape = op.out.shape
        kept = [d for d in range(len(shape)) if d != axis]
        ranges_x = tuple(shape[d] for d in kept)
        names_x = xvars(len(kept))
        idx_x = loop_index(names_x, ranges_x)
        full: list[Index] = [Index()] * len(shape)
        for d, i in zip(kept, idx_x, strict=True):
            full[d] = i
        full[axis] = Index.var("r0")
        ranges = dict(zip(names_x, ranges_x, strict=True)) | {"r0": shape[axis]}
        body = src.load(tuple(full), ranges)
        buf = self.new_buffer(shape, op.out.dtype)
        self.decisions.append(Materialization(str(op.out), buf.name, "scan result", "scan_result"))
        return self.add_node("scan", buf, ranges_x, body, flat_index(full, buf.strides),
                             self.origin(op.out), reduction_ranges=(shape[axis],),
                             fn=op.attr("fn"))

    def lower_matmul(self, op: Op) -> Lazy:
        fn = "matmul" if op.kind == "matmul" else op.attr("fn")
        names = []
        perms: list[tuple[int, ...] | None] = []  # [H13] operands read through a transpose
        for v in op.inputs:
            v, perm = self._blas_operand(v) if op.kind == "matmul" else (v, None)
            lazy = self.materialize(v, "extern_input", f"input of an extern call ({fn})")
            names.append(lazy.buffer)
            perms.append(perm)
        if any(p is not None for p in perms):  # [H13]
            fn = _transposed_matmul(perms)
        # [LAYOUT] an array written in place by NumPy's routine, returned: in its own layout
        order = self.output_order(op.out) if ("writes", True) in op.attrs else ()
        buf = self.new_buffer(op.out.shape, op.out.dtype, order)
        self.decisions.append(Materialization(str(op.out), buf.name, "extern call result",
                                              "extern_result"))
        return self.add_node("extern", buf, op.out.shape, None, Index(), self.origin(op.out),
                             fn=fn, extern_inputs=tuple(n for n in names if n),
                             raises=fn in externs.EXTERNS and fn not in externs.PARTS
                             and not dict(op.attrs).get("quiet", False))  # [TOPK]

    def _blas_operand(self, v: Value) -> tuple[Value, tuple[int, ...] | None]:
        """[H13] A matrix product's operand that is a transpose (or a chain of them) of a value
        laid out with a unit stride in one of the two matrix axes: (that value, the
        permutation), since BLAS reads a transposed matrix as it is (copying it cost as much as
        the product); (v, None) otherwise."""
        lazy = self.values[v.id]
        if lazy.buffer is not None and self._plain_buffer(lazy):
            return v, None
        src, perm, op = v, None, self.producer.get(v.id)
        while op is not None and op.kind == "transpose":
            p = op.attr("perm")
            perm = p if perm is None else tuple(p[d] for d in perm)
            src = op.inputs[0]
            op = self.producer.get(src.id)
        if perm is None or len(perm) < 2:
            return v, None
        inner = self.values[src.id]
        strides = (self.buffers[inner.buffer].strides  # type: ignore[index]
                   if inner.buffer is not None and self._plain_buffer(inner)
                   else contiguous_strides(src.shape))
        if not any(type(s) is int and s == 1 for s in (strides[perm[-1]], strides[perm[-2]])):
            return v, None  # (a symbolic stride is compared to nothing: no guard recorded)
        return src, perm


def _transposed_matmul(perms: Sequence[tuple[int, ...] | None]) -> str:
    """[H13] The extern key of NumPy's matmul on operands transposed by `perms` (None: as is),
    writing into the node's buffer."""
    def call(*arrays: np.ndarray, out: np.ndarray) -> None:
        np.matmul(*(a if p is None else a.transpose(p)
                    for a, p in zip(arrays, perms, strict=True)), out=out)
    spelled = ", ".join("x" if p is None else f"x.transpose{p}" for p in perms)
    return externs.register_into(f"np.matmul({spelled})", call)


# [LAYOUT] ops whose NumPy result NumPy lays out in K order over its operands (ufuncs,
# np.where, astype) and views, whose strides follow their source's
K_ORDER_OPS = frozenset({"elementwise", "cast", "where"})


def numpy_strides(graph: Graph, input_strides: Sequence[tuple[int, ...]]
                  ) -> dict[int, tuple[int, ...]]:
    """[LAYOUT] Each value's strides (in elements) as NumPy's would be, for the ops whose
    layout follows their operands (inputs, views, K-order results); C order for the rest."""
    strides: dict[int, tuple[int, ...]] = {}
    for op in graph.ops:
        strides[op.out.id] = tuple(input_strides[op.attr("index")]) if op.kind == "input" \
            else op_strides(op, strides)
    return strides


def op_strides(op: Op, strides: Mapping[int, tuple[int, ...]]) -> tuple[int, ...]:
    """[LAYOUT] The strides of NumPy's result of `op` (not an input), its operands' strides
    in `strides` (by value id)."""
    out, kind = op.out, op.kind
    src = strides[op.inputs[0].id] if op.inputs else ()
    if kind == "transpose":
        return tuple(src[p] for p in op.attr("perm"))
    if kind == "broadcast":
        shape = op.inputs[0].shape
        return (0,) * (out.ndim - len(shape)) + tuple(
            0 if n == 1 else st for n, st in zip(shape, src, strict=True))
    if kind == "slice":
        return tuple(st * step for st, step in zip(src, op.attr("steps"), strict=True))
    if kind == "elementwise" and ("order", "F") in op.attrs:  # [HUNT] a copy's order=
        return ordered_strides(out.shape, tuple(range(out.ndim - 1, -1, -1)))
    if kind == "elementwise" and ("order", "C") in op.attrs:
        return contiguous_strides(out.shape)
    if kind in K_ORDER_OPS:
        return ordered_strides(out.shape, ufunc_order([strides[v.id] for v in op.inputs],
                                                      out.shape))
    if kind == "setitem" or kind == "extern" and ("writes", True) in op.attrs:
        # an array written in place (`b[1:3] = 0`, `np.add.at(b, i, 1)`) keeps its layout
        return ordered_strides(out.shape, memory_order(src, out.shape))
    return contiguous_strides(out.shape)


def memory_order(strides: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """[LAYOUT] The axes of an array with `strides` from the largest stride to the smallest (a
    copy of it laid out so is dense with its strides in the same order); of two equal strides,
    an axis of size 1 inside the other; undecided (symbolic) pairs keep C order."""
    def size(st: Any) -> Any:
        return abs(st) if type(st) is int else st

    def compare(a: int, b: int) -> int:
        sa, sb = size(strides[a]), size(strides[b])
        if surely(sa, ">", sb) or same_size(sa, sb) and shape[b] == 1 != shape[a]:
            return -1
        if surely(sa, "<", sb) or same_size(sa, sb) and shape[a] == 1 != shape[b]:
            return 1
        return a - b

    return tuple(sorted(range(len(shape)), key=functools.cmp_to_key(compare)))


def ufunc_order(operands: Sequence[tuple[int, ...]], shape: tuple[int, ...]
                ) -> tuple[int, ...]:
    """[LAYOUT] The memory order (outermost first) of NumPy's result of an elementwise op:
    Fortran order when every operand but the broadcast scalars is F-contiguous and not all
    are C-contiguous (NumPy's trivial loop), else `k_order` (its iterator)."""
    arrays = [s for s in operands if not all(type(st) is int and st == 0 for st in s)]

    def dense(s: tuple[int, ...], order: tuple[int, ...]) -> bool:
        want = ordered_strides(shape, order)
        return all(same_size(a, b) for n, a, b in zip(shape, s, want, strict=True)
                   if not (type(n) is int and n == 1))

    c, f = tuple(range(len(shape))), tuple(range(len(shape) - 1, -1, -1))
    if len(shape) > 1 and arrays and all(dense(s, f) for s in arrays) and not all(
            dense(s, c) for s in arrays):
        return f
    return k_order(operands, shape)


def k_order(operands: Sequence[tuple[int, ...]], shape: tuple[int, ...]) -> tuple[int, ...]:
    """[LAYOUT] NumPy's K order (`npyiter_find_best_axis_ordering`): the axes, outermost first,
    sorted by the operands' strides by a stable insertion sort from the innermost C axis, an
    axis pair compared by the first operand with nonzero strides in both (a later operand
    only confirms: on a conflict C order wins); an axis of size 1 has no stride. Strides a
    symbolic size leaves undecided count as a tie (C order)."""
    n = len(shape)

    def stride(s: tuple[int, ...], axis: int) -> Any:
        return 0 if type(shape[axis]) is int and shape[axis] == 1 else s[axis]

    def smaller(a: Any, b: Any) -> bool | None:  # |a| < |b|, None if unknown
        if type(a) is int and type(b) is int:
            return abs(a) < abs(b)
        return True if surely(a, "<", b) else False if surely(a, ">=", b) else None

    perm = list(range(n - 1, -1, -1))  # innermost first
    for i0 in range(1, n):
        a0, ipos = perm[i0], i0
        for i1 in range(i0 - 1, -1, -1):
            a1 = perm[i1]
            ambiguous, swap = True, False
            for s in operands:
                s0, s1 = stride(s, a0), stride(s, a1)
                if (type(s0) is int and s0 == 0) or (type(s1) is int and s1 == 0):
                    continue
                less = smaller(s0, s1)
                if less is None:
                    continue
                if not less:
                    swap = False
                elif ambiguous:
                    swap = True
                ambiguous = False
            if ambiguous:
                continue
            if not swap:
                break
            ipos = i1
        perm.insert(ipos, perm.pop(i0))
    return tuple(reversed(perm))


def _consumer_counts(graph: Graph) -> dict[int, int]:
    """How many non-view consumers read each value (views forward to their users)."""
    users = graph.users()
    counts: dict[int, int] = {}

    def count(vid: int) -> int:
        if vid in counts:
            return counts[vid]
        total = 0
        for op in users.get(vid, []):
            total += count(op.out.id) if op.kind in VIEWS else 1
        counts[vid] = total
        return total

    for op in reversed(graph.ops):
        count(op.out.id)
    for v in graph.outputs:
        counts[v.id] = counts.get(v.id, 0) + 1
    return counts


# ---- views: index arithmetic -------------------------------------------------------------------

def _transpose(op: Op, src: Lazy) -> Loader:
    perm = op.attr("perm")

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        inner = [Index()] * len(perm)
        for i, p in enumerate(perm):
            inner[p] = idx[i]
        return src.load(tuple(inner), r)
    return load


def _broadcast(op: Op, src: Lazy) -> Loader:
    off = len(op.out.shape) - len(src.shape)

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        return src.load(tuple(Index() if n == 1 else idx[k + off]
                              for k, n in enumerate(src.shape)), r)
    return load


def _slice(op: Op, src: Lazy) -> Loader:
    starts, steps = op.attr("starts"), op.attr("steps")

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        return src.load(tuple(i * st + s for i, s, st in zip(idx, starts, steps, strict=True)),
                        r)
    return load


def _reshape(op: Op, src: Lazy) -> Loader:
    new_strides = contiguous_strides(op.out.shape)
    old_shape = src.shape
    old_strides = contiguous_strides(old_shape)

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        flat = flat_index(idx, new_strides)
        inner = []
        for k, (n, s) in enumerate(zip(old_shape, old_strides, strict=True)):
            i = floordiv(flat, s, r)
            inner.append(i if k == 0 else mod(i, n, r) if n > 1 else Index())
        return src.load(tuple(inner), r)
    return load


def _merges(src: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Is `out` `src` with runs of adjacent axes merged into one (at least one run of two)?"""
    k = 0
    for n in out:
        if k == len(src):
            return False
        size = src[k]
        k += 1
        while not same_size(size, n) and k < len(src):
            size, k = size * src[k], k + 1
        if not same_size(size, n):
            return False
    return k == len(src) and len(src) > len(out)


VIEWS: dict[str, Callable[[Op, Lazy], Loader]] = {
    "transpose": _transpose, "broadcast": _broadcast, "slice": _slice, "reshape": _reshape,
}


def row_bytes(value: Value) -> int:
    """[GEN] Bytes of one row of `value`: its innermost axis of traced size > 1."""
    sizes = [hint(n) for n in reversed(value.shape)]
    return next((n for n in sizes if n > 1), 1) * value.dtype.itemsize


def _is_iota(data: np.ndarray) -> bool:
    """[LOOPS] `data` is `np.arange(n)` as int64 (the positions of a masked slice, stax.loops)."""
    return data.ndim == 1 and data.dtype == np.int64 and data.shape[0] > 0 and \
        data[0] == 0 and data[-1] == data.shape[0] - 1 and bool(  # ends first: no arange built
            np.array_equal(data, np.arange(data.shape[0], dtype=np.int64)))


def _affine(i: Index) -> bool:
    """[LOOPS] `i` reads no array (no `Indirect`): within its axis wherever the loops go."""
    return all(isinstance(a, Var) or (isinstance(a, (FloorDiv, Mod)) and _affine(a.arg))
               for a, _ in i.terms)


def _in_range(i: Index, lo: int, hi: int) -> Expr:
    """`lo <= i < hi` as a boolean expression."""
    v = IndexValue(i)
    return Call("logical_and", (Call("greater_equal", (v, Const(lo, v.dtype)), np.dtype(bool)),
                                Call("less", (v, Const(hi, v.dtype)), np.dtype(bool))),
                np.dtype(bool))


def _concat_loader(op: Op, ins: list[Lazy]) -> Loader:
    axis = op.attr("axis")
    dtype = op.out.dtype

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        offsets = [0]  # [DYN16] sizes along the axis may be symbolic: never pinned
        for i in ins:
            offsets.append(offsets[-1] + i.shape[axis])
        parts = [(offsets[k], i) for k, i in enumerate(ins) if i.shape[axis] > 0]
        if not parts:  # every piece is empty along the axis: a size-0 result, never loaded
            return Const(np.zeros((), dtype).item(), dtype)
        start, last = parts[-1]
        result = last.load(_shift(idx, axis, start), r)
        for start, piece in reversed(parts[:-1]):
            end = start + piece.shape[axis]
            bound = IndexValue(Index((), end)) if is_sym(end) else Const(end, np.dtype(np.int64))
            guard = Call("less", (IndexValue(idx[axis]), bound), np.dtype(bool))
            result = Call("select", (guard, piece.load(_shift(idx, axis, start), r), result),
                          dtype)
        return result
    return load


def _shift(idx: tuple[Index, ...], axis: int, start: Any) -> tuple[Index, ...]:
    return tuple(i - start if d == axis else i for d, i in enumerate(idx))


def _setitem_loader(op: Op, old: Lazy, val: Lazy) -> Loader:
    starts, steps = op.attr("starts"), op.attr("steps")
    counts = val.shape

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        guard: Expr | None = None
        inner = []
        for i, s, st, n in zip(idx, starts, steps, counts, strict=True):
            # positions s, s+st, ..., s+(n-1)*st
            lo, hi = (s, s + (n - 1) * st + 1) if st > 0 else (s + (n - 1) * st, s + 1)
            conds = [_in_range(i, lo, hi)]
            if abs(st) > 1:
                rem = IndexValue(i - s) if st > 0 else IndexValue((i * -1) + s)
                conds.append(Call("equal", (Call("remainder", (rem, Const(abs(st), rem.dtype)),
                                                 rem.dtype), Const(0, rem.dtype)),
                                  np.dtype(bool)))
            for c in conds:
                guard = c if guard is None else Call("logical_and", (guard, c), np.dtype(bool))
            pos = (i - s) if st > 0 else (i * -1 + s)
            inner.append(floordiv(pos, abs(st), r) if abs(st) > 1 else pos)
        new = val.load(tuple(inner), r)
        if guard is None:
            return new
        return Call("select", (guard, new, old.load(idx, r)), op.out.dtype)
    return load


def _gather_loader(op: Op, src: Lazy, index: Lazy) -> Loader:
    """take_along_axis: the index array has the output's shape."""
    axis = op.attr("axis")
    n = src.shape[axis]

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        position = Index.of([(Indirect(index.load(idx, r), n), 1)])
        return _keep_checks(src.load(idx[:axis] + (position,) + idx[axis + 1:], r),
                            IndexValue(position))
    return load


def _take_loader(op: Op, src: Lazy, indices: Sequence[Lazy]) -> Loader:
    """Indexing by arrays: axis `axes[j]` of `src` reads `indices[j]`, whose dimensions sit at
    `position` in the output."""
    axes, position = op.attr("axes"), op.attr("position")
    k = len(indices[0].shape)

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        at = idx[position:position + k]
        rest = iter(idx[:position] + idx[position + k:])
        inner = tuple(
            Index.of([(Indirect(indices[axes.index(d)].load(at, r), n), 1)]) if d in axes
            else next(rest) for d, n in enumerate(src.shape))
        return _keep_checks(src.load(inner, r), *(IndexValue(inner[d]) for d in axes))
    return load


def _flags(op: Op) -> bool:
    """[FUZZ2] Whether `op` may set an error flag (`stax.ops.table.may_set_flags`)."""
    fn = "cast" if op.kind == "cast" else op.attr("fn") if op.kind == "elementwise" else None
    return fn is not None and may_set_flags(fn, [v.dtype for v in op.inputs], op.out.dtype)


def _indirects(index: Index) -> set[Indirect]:
    out: set[Indirect] = set()
    for atom, _ in index.terms:
        if isinstance(atom, Indirect):
            out.add(atom)
        elif isinstance(atom, (FloorDiv, Mod)):
            out |= _indirects(atom.arg)
    return out


def _keep_checks(value: Expr, *checked: Expr) -> Expr:
    """`value` still checks the gather indices that `checked` reads where its own loads dropped
    them (a source axis of extent 1 reads element 0 whatever the index: a keepdims reduction, a
    broadcast, an argmax over one element; `x.sum(keepdims=True)[[1]]` gave x.sum() where NumPy
    raises IndexError): each evaluated in the guard of a select whose branches are both
    `value`."""
    def indirects(exprs: Sequence[Expr]) -> set[Indirect]:
        return {a for x in exprs for e in walk(x) if isinstance(e, (Load, IndexValue))
                for a in _indirects(e.index)}
    guard: Expr | None = None
    for atom in indirects(checked) - indirects((value,)):
        check = Call("greater_equal", (IndexValue(Index.of([(atom, 1)])),
                                       Const(0, np.dtype(np.int64))), np.dtype(bool))
        guard = check if guard is None else Call("logical_and", (guard, check), np.dtype(bool))
    return value if guard is None else Call("select", (guard, value, value), value.dtype)


def _after_data_binders(nodes: Sequence[Node], buffers: Mapping[str, Buffer]
                        ) -> tuple[Node, ...]:
    """[DYN16] Each node that uses data-dependent sizes (its loops, indices, a size used as a
    value) runs `after` the first extern call binding each (every later user of a size comes
    after that call in the program: no cycle), even where it reads none of its elements."""
    binds: dict[str, str] = {}
    for n in nodes:
        for d in buffers[n.out].shape if n.kind == "extern" else ():
            if is_data(d) and len(d.terms) == 1 and d.terms[0][1] == 1 and \
                    len(d.terms[0][0]) == 1:
                binds.setdefault(d.terms[0][0][0], n.out)
    if not binds:
        return tuple(nodes)
    return tuple(replace(n, after=tuple(binds[d] for d in sorted(data_atoms_in(n))
                                        if d in binds))
                 if n.kind != "extern" else n for n in nodes)


def table_cost(op: str) -> Cost:
    """The op table's recompute cost (what `Backend.recompute_cost` answers by default)."""
    return by_name(op).cost


def lower(graph: Graph, input_strides: Sequence[tuple[int, ...]],
          recompute_cost: CostOf = table_cost, numpy_layout: bool = True) -> Lowered:
    """Graph -> LoopProgram. `input_strides` are the inputs' strides in elements;
    `recompute_cost`: the backend's (`Backend.recompute_cost`), which decides which values with
    several consumers get a buffer; `numpy_layout`: outputs laid out as NumPy lays out its
    results (K order, `k_order`), else in C order."""
    return _Lowering(graph, input_strides, recompute_cost, numpy_layout).run()


# [VEC3] reductions whose partial results combine with the same function
SPLIT_FNS = frozenset({"sum", "prod", "max", "min", "any", "all"})


def split_reduction(body: Expr, kept: Sequence[int], axes: Sequence[int], fn: str
                    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """[VEC3] A reduction whose body reads some reduced axes with a smaller stride than every
    kept axis and others with a larger one (`x.sum(axis=(0, 2))` of a C-ordered 3-D array: each
    output's rows lie one plane apart) runs in two steps, as NumPy's iterator does: the
    contiguous (`inner`) axes first, then the `outer` ones over the partial results, each step
    reading memory in order. (outer, inner, kept) axes, each in memory order (largest stride
    first; the kept ones in output order), or None when the loop order is already right.
    Strides are the body's smallest per loop variable (`x{k}` kept axis k, `r{k}` reduced axis
    k), at the traced sizes (a heuristic: any order gives the same result)."""
    if fn not in SPLIT_FNS or not kept or len(axes) < 2:
        return None
    loads = [ld for ld in walk(body) if isinstance(ld, Load)]

    def stride(var: str) -> int | None:
        found = [abs(hint(ld.index.coef(var))) for ld in loads]
        return min((s for s in found if s), default=None)

    kept_strides = [s for s in map(stride, xvars(len(kept))) if s is not None]
    if not kept_strides:
        return None
    by_axis = {d: stride(v) for d, v in zip(axes, rvars(len(axes)), strict=True)}
    outer = [d for d in axes if (by_axis[d] or 0) > min(kept_strides)]
    inner = [d for d in axes if d not in outer]  # also unit and broadcast axes (no stride)
    if not outer or all(by_axis[d] is None for d in inner):
        return None

    def memory(ds: list[int]) -> tuple[int, ...]:
        return tuple(sorted(ds, key=lambda d: -(by_axis[d] or 0)))  # stable: ties keep order
    return memory(outer), memory(inner), tuple(kept)


# [PERF11] reductions over at most this many elements per output (a constant count) are
# unrolled into pointwise combinations of their elements
UNROLLED_REDUCE_MAX = 4
UNROLLED_COMBINE = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
                    "any": "logical_or", "all": "logical_and"}


def _few_reduced(op: Op) -> bool:
    """[PERF11] Is `op` a reduction over 2..UNROLLED_REDUCE_MAX elements per output (known
    sizes; not an argmax/argmin, whose tie and NaN rule stays the loop's; a result of a
    bool, integer, float32 or float64 dtype: a float16 input reduces in float32 [A1], complex
    does not)? A 2x2 mean pooling
    (`x.reshape(r, 2, c, 2).mean((1, 3))`) ran as a reduction loop of two elements per output
    into a partial result as large as half its input, then a second reduction over it (2048^2
    float32, one thread: 5.7 ms; torch.compile 3.5 ms; unrolled 2.2 ms), and a sum over 3
    coordinates as a loop of 3 per output."""
    sizes = [op.inputs[0].shape[d] for d in op.attr("axes")]
    dtype = op.out.dtype
    return op.attr("fn") in UNROLLED_COMBINE and (
        dtype.kind in "biu" or dtype in (np.float32, np.float64)) and \
        all(isinstance(n, int) for n in sizes) and 2 <= math.prod(sizes) <= UNROLLED_REDUCE_MAX


def _pointwise_reduce(op: Op, src: Lazy) -> Lazy:
    """A reduction over a few elements per output, a count known at trace time, as a pointwise
    value inlined into its consumers instead of a reduction loop per output: axes of extent 1
    (its one element; an argmax/argmin is 0; a softmax over rows of one element ran ~10x slower
    than torch.compile before), or [PERF11] 2..UNROLLED_REDUCE_MAX elements (`_few_reduced`)
    combined in the order of the reduced positions. Each element is cast to the result dtype;
    a float sum starts from 0.0, as NumPy's add.reduce starts from the identity (a sum of
    [-0.0] is 0.0) [FIX16]."""
    axes, keepdims, fn, out = op.attr("axes"), op.attr("keepdims"), op.attr("fn"), op.out
    shape = op.inputs[0].shape
    positions = list(np.ndindex(*(shape[d] for d in axes)))

    def load(idx: tuple[Index, ...], r: Ranges) -> Expr:
        acc: Expr | None = None
        for pos in positions:
            at = dict(zip(axes, pos, strict=True))
            kept = iter(idx)
            full = tuple(Index((), int(at[d])) if d in at else idx[d] if keepdims
                         else next(kept) for d in range(len(shape)))
            value = src.load(full, r)
            if fn in ("argmax", "argmin"):  # (one element: `_few_reduced` leaves the others)
                return _keep_checks(Const(0, out.dtype), value)
            value = value if value.dtype == out.dtype else Call("cast", (value,), out.dtype)
            if acc is None:
                acc = Call("add", (Const(0, out.dtype), value), out.dtype) if \
                    fn == "sum" and out.dtype.kind in "fc" else value
            else:
                acc = Call(UNROLLED_COMBINE[fn], (acc, value), out.dtype)
        assert acc is not None
        return acc
    return Lazy(out.shape, out.dtype, load)

