"""Run an ATen FX graph as Stax-compiled segments and eager PyTorch ops.

Planning classifies each node: `stax` (an op of `stax.torch.ops.TABLE` on dtypes Stax has,
or an op `stax.torch.externs` runs through PyTorch inside a segment), `eager` (anything
else: a per-op fallback with its reason; eager ops keep their relative order, since random
ops share one generator), `view` (a view PyTorch makes, so that it aliases as in eager:
views the graph returns — AOTAutograd regenerates returned aliases from strides and offsets
— and views of inputs read by something other than Stax) and `python` (SymInt arithmetic,
picking from a PyTorch op's tuple, graph constants). A list scheduler groups ready `stax`
nodes into as few segments as the fallbacks allow (a segment computes for itself any
PyTorch-made view it reads, and any view only Stax reads). Each segment is one `stax.jit`
function that interprets its nodes on Stax tracers, compiled per input signature and called
directly on zero-copy NumPy views of the tensors; its outputs become tensors sharing Stax's
buffers (`torch.from_numpy`), laid out with PyTorch's strides where those are not
contiguous. After a call that ran the plan unchanged, the plan becomes one generated Python
function (`_straight_line`) that later calls run.

A node that fails while Stax traces it (an op outside what the NumPy frontend supports, a
result whose shape differs from PyTorch's) becomes an eager fallback and the plan is made
again from that point on; the values computed so far are kept, so random ops are not re-run.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.fx as fx

import stax
from stax.api import Jitted
from stax.frontend.trace import SUPPORTED_DTYPES, Tracer
from stax.torch.externs import EXTERN, PRODUCTS, bound, extern_call, matrix_product, refused
from stax.torch.ops import CREATION, EMPTY, TABLE, Out, with_bias
from stax.torch.pooling import max_pool
from stax.torch.rewrite import merge_summed_products

aten = torch.ops.aten

# PyTorch dtypes Stax computes in, and their NumPy names.
DTYPES: dict[torch.dtype, np.dtype] = {
    t: np.dtype(n) for t, n in ((torch.bool, "bool"), (torch.int32, "int32"),
                                (torch.int64, "int64"), (torch.float32, "float32"),
                                (torch.float64, "float64"))
    if np.dtype(n) in SUPPORTED_DTYPES}

VIEWS = frozenset((aten.view.default, aten._unsafe_view.default, aten.permute.default,
                   aten.t.default, aten.transpose.int, aten.expand.default,
                   aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
                   aten.squeeze.default, aten.slice.Tensor, aten.select.int,
                   aten.alias.default, aten.as_strided.default, aten.diagonal.default,
                   aten.reshape.default))

# [TORCH6] Views PyTorch makes between segments, called as the Tensor methods that dispatch to
# the same ATen ops (positional arguments alike): an OpOverload's Python call costs 2-5 us
# more per view (aten.view.default 5.3 us, Tensor.view 2.9 us; aten.unsqueeze.default 7.9 us,
# Tensor.unsqueeze 2.9 us; one thread, loaded machine), and graphs run tens of them per call.
METHODS: dict[Any, Callable[..., Any]] = {
    aten.view.default: torch.Tensor.view, aten.permute.default: torch.Tensor.permute,
    aten.t.default: torch.Tensor.t, aten.transpose.int: torch.Tensor.transpose,
    aten.expand.default: torch.Tensor.expand, aten.unsqueeze.default: torch.Tensor.unsqueeze,
    aten.squeeze.dim: torch.Tensor.squeeze, aten.squeeze.dims: torch.Tensor.squeeze,
    aten.squeeze.default: torch.Tensor.squeeze, aten.select.int: torch.Tensor.select}


# Pooling Stax computes itself when the windows tile the input (`stax.torch.pooling`; None:
# the extern call); in `channels_last` graphs over the NHWC order of the convolution's
# buffer (`nhwc`), fused with the batch norm and ReLU before it.
POOLS: dict[Any, Callable[..., Any]] = {aten.max_pool2d_with_indices.default: max_pool}


class NodeFailed(Exception):  # noqa: N818 - carries the node back to the planner
    def __init__(self, node: fx.Node, error: BaseException) -> None:
        super().__init__(f"{node.name} ({node.target}): {type(error).__name__}: {error}")
        self.node = node
        self.error = error


class SegmentFailed(Exception):  # noqa: N818 - tells the planner to run a segment eagerly
    pass


def _metas(node: fx.Node) -> list[Any]:
    val = node.meta.get("val")
    return list(val) if isinstance(val, (tuple, list)) else [val]


def _concrete(shape: Iterable[Any]) -> tuple[int, ...] | None:
    """The sizes when all are plain ints (None for symbolic ones: `int()` on a SymInt would
    give the example's value, not this call's)."""
    shape = tuple(shape)
    return shape if all(type(s) is int for s in shape) else None


def _unsupported(node: fx.Node) -> str | None:
    """Why Stax cannot compile this node (None: it can try)."""
    if node.target in EXTERN:
        why = refused(node, len(_metas(node)))
        if why is not None:
            return f"PyTorch runs it (not as an extern call in a segment): {why}"
    elif node.target not in TABLE and node.target not in CREATION | EMPTY:
        return f"no Stax translation for {node.target}"
    for arg in [*node.all_input_nodes, node]:
        for meta in _metas(arg):
            if isinstance(meta, torch.Tensor):
                if meta.device.type != "cpu":
                    return f"a tensor on {meta.device}"
                if meta.layout != torch.strided:
                    return f"a {meta.layout} tensor"
                if meta.dtype not in DTYPES:
                    return f"dtype {meta.dtype} (Stax has {', '.join(map(str, DTYPES))})"
    return None


def _view_chain_to_input(node: fx.Node, is_view: Any) -> bool:
    while is_view(node):
        node = node.all_input_nodes[0]
    return node.op == "placeholder"


def _is_tensor_node(node: fx.Node) -> bool:
    return any(isinstance(m, torch.Tensor) for m in _metas(node))


@dataclass(frozen=True)
class Step:
    """One step of the plan: a Stax segment (several nodes) or one node run by PyTorch."""

    kind: str  # "stax", "eager", "view" or "python"
    nodes: tuple[fx.Node, ...]
    inputs: tuple[fx.Node, ...] = ()  # values a segment reads from outside
    outputs: tuple[fx.Node, ...] = ()  # values a segment hands on
    copies: tuple[fx.Node, ...] = ()  # PyTorch-made views a segment computes for itself


@dataclass
class Segment:
    """A Stax segment's traced functions (one per specialization of its int inputs) and
    compiled programs (one per input signature), called directly."""

    step: Step
    layouts: tuple[tuple[int, ...] | None, ...]
    jitted: dict[tuple[Any, ...], Jitted] = field(default_factory=dict)
    calls: dict[tuple[Any, ...], Callable[[list[np.ndarray]], Any]] = field(
        default_factory=dict)
    tensors: tuple[bool, ...] = ()  # which inputs are tensors (the others are Python scalars)
    # [TORCH2] the latest compiled signature of the input arrays (shape, byte strides, dtype
    # each; run only on aligned arrays) and its program's call without input checks
    # (`_unchecked`), or None
    proven: tuple[tuple[Any, ...], Callable[..., Any]] | None = None


class GraphRunner:
    """A compiled ATen graph: call it with the graph's inputs (a list, boxed)."""

    def __init__(self, gm: fx.GraphModule, name: str, options: dict[str, Any], *,
                 channels_last: bool = False) -> None:
        # AOTAutograd's calling convention (one list, freed by the callee); an instance
        # attribute, because the wrappers PyTorch puts around it copy the instance's __dict__.
        self._boxed_call = True
        self.merged = merge_summed_products(gm)  # sums of products as one product
        self.gm = gm
        self.name = name
        self.options = options
        # Convolutions and pooling hand 4-D tensors to Stax in channels-last order
        # (`stax.torch.externs`): for inference graphs, whose results are the model's. In a
        # training step the forward's saved activations would be written in NCHW order and
        # read back into channels-last order by the backward (measured slower).
        self.channels_last = channels_last
        self.nodes = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
        self.placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.output = next(n for n in gm.graph.nodes if n.op == "output")
        self.fallbacks: dict[fx.Node, str] = {
            n: why for n in self.nodes
            if n.op == "call_function" and _is_tensor_node(n) and not self._is_view(n)
            and n.target is not operator.getitem and (why := _unsupported(n)) is not None}
        self.segments: dict[tuple[fx.Node, ...], Segment] = {}
        self.warned = False
        self.steps = self._plan(set())
        # The straight-line runner of `steps` (made after a call that ran them unchanged),
        # its source and the local variable of each node.
        self.fast: Callable[[list[Any]], list[Any]] | None = None
        self.fast_source = ""
        self.fast_names: dict[fx.Node, str] = {}

    # ------------------------------------------------------------------ planning
    def _is_view(self, node: fx.Node) -> bool:
        return node.target in VIEWS

    def _kinds(self) -> dict[fx.Node, str]:
        kinds: dict[fx.Node, str] = {}
        for n in self.nodes:
            if n.op == "get_attr":  # a constant tensor of the graph module
                kinds[n] = "view"
            elif n.target is operator.getitem:  # picking from a PyTorch op's tuple is cheap
                kinds[n] = "stax" if kinds[n.args[0]] == "stax" else "python"
            elif not _is_tensor_node(n):
                kinds[n] = "python"
            elif n in self.fallbacks:
                kinds[n] = "eager"
            else:
                kinds[n] = "stax"
        # Views that PyTorch makes: views the graph returns (and the views they are made
        # from), and views of inputs that something other than Stax reads. Views of inputs
        # read only by Stax stay in the segment, which reads the input itself.
        returned = set(self.output.all_input_nodes)
        for n in reversed(self.nodes):
            if not self._is_view(n):
                continue
            source = n.all_input_nodes[0]
            of_input = source.op == "placeholder" or kinds.get(source) == "view"
            read_elsewhere = n in returned or any(
                u.op == "output" or kinds.get(u) != "stax" for u in n.users)
            if read_elsewhere and (of_input or n in returned or any(
                    kinds.get(u) == "view" for u in n.users)):
                kinds[n] = "view"
        # A view of an input that PyTorch makes needs its source made by PyTorch as well.
        for n in reversed(self.nodes):
            if kinds[n] == "view" and self._is_view(n):
                source = n.all_input_nodes[0]
                if self._is_view(source) and kinds[source] == "stax" and _view_chain_to_input(
                        source, self._is_view):
                    kinds[source] = "view"
        return kinds

    def _plan(self, done: set[fx.Node]) -> list[Step]:
        """List scheduling: every ready Stax node joins the current segment; the other
        ready nodes run when no Stax node is ready. While eager ops remain, Stax nodes whose
        results reach no eager op make no segment of their own (an extra call, and results
        handed out through memory): they join the next segment made anyway. Views only Stax
        reads are computed by each segment reading them (a view is free inside a segment, a
        copy as a segment's output)."""
        kinds = self._kinds()
        order = {n: i for i, n in enumerate(self.nodes)}

        def torch_view(a: fx.Node) -> bool:
            return kinds.get(a) == "view" and self._is_view(a) and a not in done

        def stax_view(a: fx.Node) -> bool:
            return kinds.get(a) == "stax" and self._is_view(a) and a not in done and all(
                kinds.get(u) == "stax" for u in a.users)

        def shadowed(a: fx.Node) -> bool:
            return torch_view(a) or stax_view(a)

        def shadows(n: fx.Node) -> list[fx.Node]:
            """The views a Stax node reads that its segment computes from their sources:
            PyTorch-made ones (rather than waiting for PyTorch's, which need the segment's
            end) and those only Stax reads."""
            found: list[fx.Node] = []
            stack = [a for a in n.all_input_nodes if shadowed(a)]
            while stack:
                a = stack.pop()
                if a not in found:
                    found.append(a)
                    stack.extend(b for b in a.all_input_nodes if shadowed(b))
            return sorted(found, key=order.__getitem__)

        pending = [n for n in self.nodes if n not in done and not stax_view(n)]
        waiting = {n: {a for a in n.all_input_nodes if a in kinds and a not in done}
                   for n in pending}
        for n in pending:
            if kinds[n] == "stax":
                for v in shadows(n):
                    waiting[n].discard(v)
                    waiting[n].update(a for a in v.all_input_nodes
                                      if a in kinds and a not in done and not shadowed(a))
        feeds_eager: set[fx.Node] = set()  # nodes an eager op reads, directly or not
        for n in reversed(self.nodes):
            if any(kinds.get(u) == "eager" or u in feeds_eager for u in n.users):
                feeds_eager.add(n)
        # A tuple result leaves its segment through its getitem nodes: they stay with it.
        feeds_eager.update(n for n in self.nodes if n.target is operator.getitem
                           and n.args[0] in feeds_eager)
        # Stax nodes no eager op needs computed from the graph's inputs and constants alone:
        # while eager ops remain, they wait for the segment of their readers (`full` made in
        # one segment and read in the next was a segment output, written and read each call).
        free: set[fx.Node] = set()
        for n in pending:
            if kinds[n] == "stax" and n not in feeds_eager and all(
                    a.op in ("placeholder", "get_attr") or a in free for a in n.all_input_nodes):
                free.add(n)
        users: dict[fx.Node, list[fx.Node]] = {}
        # Eager ops keep their order among themselves: random ops draw from one generator.
        eager = [n for n in pending if kinds[n] == "eager"]
        for before, after in itertools.pairwise(eager):
            waiting[after].add(before)
        for n, deps in waiting.items():
            for d in deps:
                users.setdefault(d, []).append(n)
        ready = [n for n in pending if not waiting[n]]
        steps: list[Step] = []
        eager_left = len(eager)

        def finish(n: fx.Node) -> None:
            for u in users.get(n, ()):
                waiting[u].discard(n)
                if not waiting[u]:
                    ready.append(u)

        while ready:
            # Views and SymInt arithmetic cost nothing and have no effects: run them first.
            while cheap := sorted((n for n in ready if kinds[n] in ("view", "python")),
                                  key=order.__getitem__):
                for n in cheap:
                    ready.remove(n)
                    steps.append(Step(kinds[n], (n,)))
                    finish(n)
            segment: list[fx.Node] = []
            copies: set[fx.Node] = set()
            # The Stax nodes that could wait join a segment made anyway, or one made when no
            # eager op is left or nothing else can run.
            everything = not eager_left or all(
                kinds[n] == "stax" and n not in feeds_eager for n in ready)
            take_all = everything
            while joining := [n for n in ready if kinds[n] == "stax" and (
                    n in feeds_eager or take_all and (everything or n not in free))]:
                take_all = True
                n = min(joining, key=order.__getitem__)
                ready.remove(n)
                new = [v for v in shadows(n) if v not in copies]
                copies.update(new)
                segment += [*new, n]
                finish(n)
            if segment:
                steps.append(self._segment_step(segment, copies))
            others = sorted((n for n in ready if kinds[n] != "stax"), key=order.__getitem__)
            for n in others[:1]:  # one at a time: it may make Stax nodes ready
                ready.remove(n)
                eager_left -= kinds[n] == "eager"
                steps.append(Step(kinds[n], (n,)))
                finish(n)
        return steps

    @staticmethod
    def _segment_step(nodes: list[fx.Node], copies: set[fx.Node]) -> Step:
        """A segment of `nodes`; `copies` are views it computes for itself while PyTorch
        makes the same views for other readers (so they are not among its outputs)."""
        inside = set(nodes)
        inputs = list(dict.fromkeys(a for n in nodes for a in n.all_input_nodes
                                    if a not in inside))
        own = inside - copies

        def escapes(n: fx.Node) -> bool:
            """Read outside the segment: directly, or through a view it computes for itself
            that another step reads (that step computes the view again, from `n`)."""
            return any(u not in inside or (u in copies and escapes(u)) for u in n.users)

        # Tuple results leave a segment through their getitem nodes only.
        outputs = [n for n in nodes if n in own and escapes(n)
                   and _is_tensor_node(n) and not isinstance(n.meta.get("val"), (tuple, list))]
        return Step("stax", tuple(nodes), tuple(inputs), tuple(outputs),
                    tuple(n for n in nodes if n in copies))

    # ------------------------------------------------------------------ running
    def __call__(self, args: list[Any]) -> list[Any]:
        if self.fast is not None:
            return self.fast(args)
        env: dict[fx.Node, Any] = dict(zip(self.placeholders, args, strict=True))
        args.clear()  # boxed calling convention: inputs may be freed as soon as they are used
        return self._execute(env, self.steps, set(), replanned=False)

    def _execute(self, env: dict[fx.Node, Any], steps: list[Step], done: set[fx.Node], *,
                 replanned: bool) -> list[Any]:
        """Run `steps`; `done` holds the nodes already computed. A node that fails to trace
        or a segment that fails to compile plans the rest again (`replanned`: `steps` is not
        the graph's plan); the graph is then planned again as a whole for later calls. A call
        that ran the plan to the end unchanged makes the straight-line runner
        (`_straight_line`) that later calls use."""
        i = 0
        while i < len(steps):
            step = steps[i]
            try:
                self._run(step, env)
            except NodeFailed as e:
                self._fail({e.node: f"Stax could not trace it: {type(e.error).__name__}: "
                                    f"{e.error}"})
                steps, i, replanned = self._plan(done), 0, True
                continue
            except SegmentFailed as e:  # a compile failure: the segment runs eagerly
                self._fail({n: f"the Stax segment failed to compile: {e}"
                            for n in step.nodes if n.target is not operator.getitem})
                steps, i, replanned = self._plan(done), 0, True
                continue
            done.update(n for n in step.nodes if n not in step.copies)
            i += 1
        if replanned:
            self.steps = self._plan(set())
        else:
            self.fast = self._straight_line()
        self.warn_fallbacks()
        result = fx.node.map_arg(self.output.args[0], env.__getitem__)
        return list(result)

    def _fail(self, failures: dict[fx.Node, str]) -> None:
        self.fallbacks.update(failures)
        self.warned = False  # the warning lists the new fallbacks too
        self.fast = None  # the plan changes

    def warn_fallbacks(self) -> None:
        """The one-time warning listing the ops PyTorch runs in this graph."""
        if self.warned or not self.fallbacks:
            return
        self.warned = True
        ops = sorted({str(n.target) for n in self.fallbacks})
        warnings.warn(f"stax.torch: {self.name}: {len(self.fallbacks)} op(s) run in eager "
                      f"PyTorch (see stax.torch.explain): {', '.join(ops)}", stacklevel=5)

    def _run(self, step: Step, env: dict[fx.Node, Any]) -> None:
        if step.kind != "stax":
            node = step.nodes[0]
            if node.op == "get_attr":
                env[node] = getattr(self.gm, node.target)
                return
            args, kwargs = fx.node.map_arg((node.args, node.kwargs), env.__getitem__)
            env[node] = node.target(*args, **kwargs)
            return
        seg = self._segment(step)
        inputs = [env[n] for n in step.inputs]
        arrays = _aligned([x.numpy(force=True) for x in inputs if isinstance(x, torch.Tensor)])
        flat = self._program(seg, inputs)(arrays)
        for node, value, stride in zip(step.outputs, flat, seg.layouts, strict=False):
            env[node] = _tensor(value, stride)

    def _segment(self, step: Step) -> Segment:
        seg = self.segments.get(step.nodes)
        if seg is None:
            seg = self.segments[step.nodes] = Segment(step, self._layouts(step))
        return seg

    def _program(self, seg: Segment, inputs: list[Any]) -> Callable[[list[np.ndarray]], Any]:
        """The compiled program for these inputs (traced and compiled on a first signature;
        called directly afterwards)."""
        key: list[Any] = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                key += (x.shape, x.stride(), x.dtype)
            else:
                key.append(x)
        call = seg.calls.get(tuple(key))
        if call is not None:
            return call
        step = seg.step
        seg.tensors = tuple(isinstance(x, torch.Tensor) for x in inputs)
        scalars = tuple((n, x) for n, x in zip(step.inputs, inputs, strict=True)
                        if not isinstance(x, torch.Tensor))
        jitted = seg.jitted.get(scalars)
        if jitted is None:
            jitted = seg.jitted[scalars] = self._jit(step, dict(scalars))
        arrays = _aligned([x.numpy(force=True) for x in inputs if isinstance(x, torch.Tensor)])
        try:
            comp = jitted.compile(*arrays)
        except NodeFailed:
            raise
        except Exception as e:  # noqa: BLE001 - whatever broke, PyTorch runs these ops
            raise SegmentFailed(f"{type(e).__name__}: {e}") from e
        call = seg.calls[tuple(key)] = comp.program.call
        unchecked = _unchecked(comp, arrays, step) if all(seg.tensors) else None
        seg.proven = None if unchecked is None else (
            tuple((a.shape, a.strides, a.dtype) for a in arrays), unchecked)
        return call

    def _straight_line(self) -> Callable[[list[Any]], list[Any]]:
        """The plan as one generated Python function: each step a line or two on local
        variables (no per-step dispatch, argument mapping or bookkeeping), each segment's
        program looked up by its inputs' signature, values dropped after their last use.
        A new signature compiles (`_program`); a node failing to trace or a segment failing to
        compile hands the values computed so far to `_execute`, which plans the rest again."""
        names = {n: f"v{i}" for i, n in enumerate(self.gm.graph.nodes)}
        env: dict[str, Any] = {"from_numpy": _tensor, "aligned": _aligned,
                               "Tensor": torch.Tensor, "gm": self.gm,
                               "Resume": _Resume, "resume": self._resume}
        last_use: dict[fx.Node, int] = {}
        for k, step in enumerate(self.steps):
            for n in (step.inputs if step.kind == "stax" else step.nodes[0].all_input_nodes):
                last_use[n] = k
        keep = set(self.output.all_input_nodes)

        def render(value: Any) -> str:
            if isinstance(value, fx.Node):
                return names[value]
            if isinstance(value, (list, tuple)):
                inner = "".join(f"{render(v)}, " for v in value)
                return f"[{inner}]" if isinstance(value, list) else f"({inner})"
            if value is None or type(value) in (bool, int, str):
                return repr(value)
            name = f"c{len(env)}"
            env[name] = value
            return name

        body: list[str] = []
        for k, step in enumerate(self.steps):
            node = step.nodes[0]
            if step.kind != "stax":
                if node.op == "get_attr":
                    body.append(f"{names[node]} = getattr(gm, {node.target!r})")
                else:
                    fast = bound(node.target)  # [TORCH10] the Python binding's call
                    env[f"f{k}"] = fast if node.kwargs else METHODS.get(node.target, fast)
                    args = [render(a) for a in node.args]
                    args += [f"{key}={render(v)}" for key, v in node.kwargs.items()]
                    body.append(f"{names[node]} = f{k}({', '.join(args)})  # {node.name}")
            else:
                seg = self.segments[step.nodes]
                env[f"calls{k}"], env[f"seg{k}"] = seg.calls, seg
                ins = [names[n] for n in step.inputs]
                key = "".join(f"{v}.shape, {v}.stride(), {v}.dtype, " if t else f"{v}, "
                              for v, t in zip(ins, seg.tensors, strict=True))
                arrays = "".join(f"{v}.numpy(force=True), "
                                 for v, t in zip(ins, seg.tensors, strict=True) if t)
                targets = "".join(f"{names[n]}, " for n in step.outputs)
                body.append(f"# segment: {', '.join(n.name for n in step.nodes)}")
                keyed = [f"call = calls{k}.get(({key}))", "if call is None:",
                         f"    call = program(seg{k}, [{''.join(f'{v}, ' for v in ins)}])"]
                if seg.proven is None:
                    body += [*keyed, f"[{targets}*_] = call(aligned([{arrays}]))"]
                else:  # [TORCH2] the signature compiled last: its program without checks
                    env[f"proven{k}"] = seg.proven[1]
                    arrays = [f"a{k}_{j}" for j in range(len(ins))]
                    # [REVIEW] and aligned: the wrapper copies a misaligned array (a tensor
                    # over NumPy bytes at an odd offset); its kernels load whole elements
                    same = " and ".join(
                        f"{a}.shape == {shape!r} and {a}.strides == {strides!r} and "
                        f"{a}.dtype == {render(dtype)} and {a}.flags.aligned"
                        for a, (shape, strides, dtype) in zip(arrays, seg.proven[0],
                                                              strict=True))
                    listed = "".join(f"{a}, " for a in arrays)
                    body += [f"{listed}= {''.join(f'{v}.numpy(force=True), ' for v in ins)}",
                             f"if {same}:", f"    [{targets}*_] = proven{k}({listed})",
                             "else:",
                             *(f"    {line}" for line in keyed),
                             f"    [{targets}*_] = call(aligned([{listed}]))",
                             f"del {listed}"]  # inputs may be freed after their last use
                outs = [names[n] for n in step.outputs]
                for j, (o, stride) in enumerate(zip(outs, seg.layouts, strict=True)):
                    env[f"layout{k}_{j}"] = stride
                    body.append(f"{o} = from_numpy({o}, layout{k}_{j})")
            dead = [names[n] for n, last in last_use.items() if last == k and n not in keep]
            if dead:
                body.append(f"del {', '.join(dead)}")
            body.append(f"step = {k + 1}")
        env["program"] = self._program_or_resume
        ins = "".join(f"{names[n]}, " for n in self.placeholders)
        lines = ["def run(args):", f"    {ins} = args" if ins else "    pass",
                 "    args.clear()", "    step = 0", "    try:",
                 *(f"        {line}" for line in body),
                 "    except Resume as e:",
                 "        return resume(step, e, locals())",
                 f"    return list({render(self.output.args[0])})"]
        source = "\n".join(lines)
        exec(compile(source, f"<stax.torch {self.name}>", "exec"), env)  # noqa: S102
        self.fast_source = source
        self.fast_names = names
        return env["run"]

    def _program_or_resume(self, seg: Segment, inputs: list[Any]) -> Callable[..., Any]:
        try:
            return self._program(seg, inputs)
        except (NodeFailed, SegmentFailed) as e:
            raise _Resume(e) from e

    def _resume(self, k: int, resume: _Resume, local: dict[str, Any]) -> list[Any]:
        """The straight-line runner's `k`-th step (a segment) failed: record the failure and
        run the rest through `_execute` on the values computed so far."""
        step, e = self.steps[k], resume.error
        if isinstance(e, NodeFailed):
            self._fail({e.node: f"Stax could not trace it: {type(e.error).__name__}: "
                                f"{e.error}"})
        else:
            self._fail({n: f"the Stax segment failed to compile: {e}"
                        for n in step.nodes if n.target is not operator.getitem})
        env = {n: local[v] for n, v in self.fast_names.items() if v in local}
        done = {n for s in self.steps[:k] for n in s.nodes if n not in s.copies}
        return self._execute(env, self._plan(done), done, replanned=True)

    @staticmethod
    def _layouts(step: Step) -> tuple[tuple[int, ...] | None, ...]:
        """The strides PyTorch gives each output of a segment, where they are not
        contiguous. Stax results are contiguous; layouts matter where random ops draw in
        memory order (dropout's mask) and where AOTAutograd regenerates aliases."""
        layouts = []
        for node in step.outputs:
            meta = node.meta.get("val")
            shape = _concrete(meta.shape) if isinstance(meta, torch.Tensor) else None
            stride = _concrete(meta.stride()) if shape is not None else None
            layouts.append(None if stride is None or stride == _contiguous(shape) else stride)
        return tuple(layouts)

    def _jit(self, step: Step, scalars: dict[fx.Node, Any]) -> Jitted:
        tensor_inputs = [n for n in step.inputs if n not in scalars]

        def segment(*arrays: Any) -> tuple[Any, ...]:
            values: dict[fx.Node, Any] = dict(zip(tensor_inputs, arrays, strict=True))
            values.update(scalars)
            for node in step.nodes:
                try:
                    values[node] = interpret(node, values, self.channels_last)
                except NodeFailed:
                    raise
                except Exception as e:  # noqa: BLE001 - any failure: this op falls back
                    raise NodeFailed(node, e) from e
            return tuple(values[n] for n in step.outputs)

        segment.__name__ = f"{self.name}_segment"
        return stax.jit(segment, strict=True, **self.options)


def interpret(node: fx.Node, values: dict[fx.Node, Any], channels_last: bool = False) -> Any:
    """One ATen node on Stax tracers; the result has PyTorch's dtype and shape
    (`channels_last`: see `GraphRunner.channels_last`)."""
    args, kwargs = fx.node.map_arg((node.args, node.kwargs), values.__getitem__)
    if node.target is operator.getitem:
        return args[0][args[1]]
    metas = _metas(node)
    pool = POOLS.get(node.target)
    if pool is not None and np.dtype(args[0].dtype).kind == "f":
        # windows that tile the input: Stax's own pooling
        pooled = pool(*args, **kwargs, nhwc=channels_last)
        if pooled is not None:
            return pooled
    if node.target in EXTERN:  # results PyTorch does not compute (None) are not used
        shapes = [None if m is None else _concrete(m.shape) for m in metas]
        if None in [s for s, m in zip(shapes, metas, strict=True) if m is not None]:
            shapes = _shapes_here(node, values)
        return extern_call(node, args, kwargs, channels_last, [
            None if m is None else (s, DTYPES[m.dtype])
            for s, m in zip(shapes, metas, strict=True)])
    out = Out(tuple(_concrete(m.shape) or () for m in metas),
              tuple(DTYPES[m.dtype] for m in metas))
    if node.target in CREATION or node.target in EMPTY:
        return _create(node, metas[0], values.values())
    rewrite = _REWRITES.get(node.target)
    result = None if rewrite is None else rewrite(node, args, kwargs, values, metas[0])
    if result is None:
        result = TABLE[node.target](out, *args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(metas):
        raise NotImplementedError(f"{len(results)} results where PyTorch has {len(metas)}")
    fixed = []
    for r, meta, dtype in zip(results, metas, out.dtypes, strict=True):
        r = r if hasattr(r, "dtype") and hasattr(r, "shape") else np.asarray(r)
        want = _concrete(meta.shape)
        if want is not None and tuple(r.shape) != want:
            raise ValueError(f"shape {tuple(r.shape)} where PyTorch has {want}")
        fixed.append(r if r.dtype == dtype else r.astype(dtype))
    return tuple(fixed) if isinstance(result, tuple) else fixed[0]


def _shapes_here(node: fx.Node, values: dict[fx.Node, Any]) -> list[tuple[int, ...] | None]:
    """[TORCH7] The shapes of `node`'s results at the segment's concrete input shapes, where
    the graph's are symbolic (Dynamo's automatic dynamic shapes: a second input shape
    recompiles the model with symbolic sizes). A segment is traced per input signature, so
    PyTorch's meta kernel on meta tensors of those shapes gives them; the extern calls
    (convolutions, pooling) had fallen back to eager ops there."""
    def meta(n: fx.Node) -> Any:
        like = _metas(n)[0]
        if not isinstance(like, torch.Tensor):
            return values[n]
        return torch.empty(tuple(values[n].shape), dtype=like.dtype, device="meta")

    args, kwargs = fx.node.map_arg((node.args, node.kwargs), meta)
    results = node.target(*args, **kwargs)
    return [tuple(r.shape) if isinstance(r, torch.Tensor) else None
            for r in (results if isinstance(results, (tuple, list)) else [results])]


def _product(node: fx.Node, args: Any, kwargs: Any, values: dict[fx.Node, Any],
             meta: Any) -> Any | None:
    """A matrix product as NumPy's matmul on the buffers its operands are views of
    (`stax.torch.externs.matrix_product`), the bias of addmm/baddbmm added by Stax; None
    where that does not apply."""
    dtype = DTYPES[meta.dtype]
    if PRODUCTS[node.target] and getattr(args[0], "dtype", None) != dtype:
        return None  # a bias of another dtype: PyTorch's error, through the table's entry
    prod = matrix_product(node, values, _concrete(meta.shape), dtype)
    if prod is None or not PRODUCTS[node.target]:
        return prod
    return with_bias(prod, args[0], **kwargs)


def _merged_groups(shape: tuple[int, ...], merged: tuple[int, ...]
                   ) -> list[tuple[list[int], list[int]]] | None:
    """How a reshape from `shape` to `merged` groups axes: (axes of `shape`, axes of
    `merged`) of equal products, or None (sizes 0 or 1 make the grouping ambiguous)."""
    if not shape or not merged or min(shape) < 2 or min(merged) < 2:
        return None
    groups, i, j = [], 0, 0
    while i < len(shape) and j < len(merged):
        gi, gj, pi, pj = [i], [j], shape[i], merged[j]
        while pi != pj:
            if pi < pj and i + 1 < len(shape):
                i += 1
                gi.append(i)
                pi *= shape[i]
            elif pj < pi and j + 1 < len(merged):
                j += 1
                gj.append(j)
                pj *= merged[j]
            else:
                return None
        groups.append((gi, gj))
        i, j = i + 1, j + 1
    return groups if i == len(shape) and j == len(merged) else None


def _sum_of_reshape(node: fx.Node, args: Any, kwargs: Any, values: dict[fx.Node, Any],
                    meta: Any) -> Any | None:
    """`sum(view(x, merged), dims)` over whole groups of x's axes as a sum over x's axes: a
    bias gradient `sum(view(dy, [b * s, n]), [0])` otherwise reduces through the reshape's
    index arithmetic (a division and a remainder per element, across rows: several times
    slower than the column sum of `dy`'s own axes). None where that does not apply."""
    source = node.args[0]
    shape = _concrete(meta.shape)
    if not isinstance(source, fx.Node) or source.target not in (
            aten.view.default, aten._unsafe_view.default, aten.reshape.default) \
            or source.args[0] not in values or kwargs.get("dtype") is not None \
            or shape is None or len(node.args) < 2 or not node.args[1]:
        return None
    x = values[source.args[0]]
    if getattr(x, "dtype", None) not in (np.float32, np.float64):
        return None
    merged = tuple(values[source].shape)
    groups = _merged_groups(tuple(x.shape), merged)
    reduced = {d % len(merged) for d in node.args[1]}
    if groups is None or any(bool(reduced & set(gj)) != reduced.issuperset(gj)
                             for _, gj in groups):
        return None
    axes = tuple(i for gi, gj in groups if reduced.issuperset(gj) for i in gi)
    return np.reshape(np.sum(x, axis=axes), shape)


def _create(node: fx.Node, meta: Any, values: Iterable[Any]) -> Any:
    """A creation op evaluated by PyTorch now; it enters the program as a constant. A tensor
    of one value (zeros, full, empty) is that value broadcast, made from any of the segment's
    tracers (no array read on every call, as `full` of the fused QKV gradient was)."""
    dtype = DTYPES[meta.dtype]
    shape = _concrete(meta.shape)
    if node.target in EMPTY:
        array = np.zeros(shape, dtype)
    else:
        # *_like and new_* ops read only their tensor argument's shape and dtype.
        args, kwargs = fx.node.map_arg((node.args, node.kwargs), lambda n: torch.zeros(
            _concrete(_metas(n)[0].shape), dtype=_metas(n)[0].dtype))
        array = np.asarray(node.target(*args, **kwargs).numpy(), dtype=dtype)
    like = next((v for v in values if isinstance(v, Tracer)), None)
    if like is None or array.size < 2 or not (array == array.flat[0]).all():
        return array
    return np.full_like(like, array.flat[0], dtype=dtype, shape=shape)


# Node-level translations tried before the table's (None: the table's applies).
_REWRITES: dict[Any, Callable[..., Any]] = {
    aten.sum.dim_IntList: _sum_of_reshape, **dict.fromkeys(PRODUCTS, _product)}


def _unchecked(comp: Any, arrays: list[np.ndarray], step: Step) -> Callable[..., Any] | None:
    """[TORCH2] The call of `comp` on arrays of the signature of `arrays` without its input
    checks (`program.proven`; a generic program's entry at these exact shapes), returning
    the outputs as a tuple; None where that would differ from `program.call`: a program
    without such an entry, one that checks values or writes arguments back, or a single 0-d
    output (`proven` returns it as a NumPy scalar)."""
    program, traced = comp.program, comp.traced
    zero_d = program.single and getattr(step.outputs[0].meta.get("val"), "ndim", 0) == 0
    if program.proven is None or traced.narrowed_ints or traced.writeback or \
            traced.returned_args or zero_d:
        return None
    proven = (program.at_shape and program.at_shape(*arrays)) or program.proven
    if program.single:
        return lambda *arrays: (proven(*arrays),)
    return proven


class _Resume(Exception):  # noqa: N818 - the straight-line runner hands over to `_execute`
    def __init__(self, error: NodeFailed | SegmentFailed) -> None:
        super().__init__(str(error))
        self.error = error


def _aligned(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """[REVIEW] `arrays` with each one at an address that is not a multiple of its element
    size (a tensor over NumPy bytes at an odd offset) replaced by an aligned copy of the same
    shape and strides (the signature its program was compiled for): kernels load whole
    elements, and programs' calls take arrays as they are."""
    for k, a in enumerate(arrays):
        if not a.flags.aligned:
            span = 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides, strict=True)) \
                // a.itemsize if a.size else 0
            arrays[k] = np.lib.stride_tricks.as_strided(np.empty(span, a.dtype), a.shape,
                                                        a.strides)
            np.copyto(arrays[k], a)
    return arrays


def _tensor(value: np.ndarray, stride: tuple[int, ...] | None) -> torch.Tensor:
    """A segment's output as a tensor sharing its memory, with PyTorch's strides (`stride`;
    None: contiguous). Stax lays out a result as NumPy would (an elementwise result of
    transposed operands is transposed), and later views in the graph were traced on
    PyTorch's strides: a result laid out otherwise is copied into them."""
    t = torch.from_numpy(value if value.flags.writeable else value.copy())
    if stride is None:
        return t if value.flags.c_contiguous or t.numel() < 2 else t.contiguous()
    if t.stride() != stride and t.numel() > 1:
        t = torch.empty_strided(t.shape, stride, dtype=t.dtype).copy_(t)
    return t


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
