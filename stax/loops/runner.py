"""Running a loop body: compiled once, all iterations in one C call where possible.

The body Graph's inputs are the index (a 0-d int64), the carried values, then the loop-invariant
values; its outputs are the carried values after one iteration. It is lowered, scheduled and
planned like any program. When its schedule has no extern call, the kernels' module gets one
more function, `stax_loop`, that runs every iteration (the backend emits it from a
`stax.loops.driver.LoopDriver`: `Backend.emit_loops`, for the CPU `stax.backends.cpu.loop_driver`):

    for (it = 0; it < n; ++it) { *index = start + it*step; region0(...); ...; stores;
                                 swap(in_k, out_k); }

A carried array whose last changes are element or slice assignments at the index is updated in
place: the body outputs only the stored values, which the driver writes into the array's buffer
after the regions (`stax.loops.stores`). Other carried values are double-buffered: iteration t
reads buffer A and writes buffer B, and the two pointers swap (the scheduler never writes an
output over an input). Where isl proves the iterations independent (no loop-carried dependence)
and every carried array is stored in place, the iterations run on OpenMP threads (`#pragma omp
parallel for`), each thread with its own pointer table and scratch. Every buffer is allocated
once per call; all pointers reach C in one array, whatever their number (from Python through
the compiled fast call and the driver's `stax_entry`, where the shared buffers are few). The C
drivers of one trace's loops are compiled together, in one C++ module, on a background thread
started when the trace ends (`compile_soon`: its g++ run overlaps the enclosing program's).
A body with extern calls (NumPy routines, a nested loop that is not in C) runs its compiled
program once per iteration from Python — still one compile, whatever the trip count.

In the outer Graph a loop is one extern call per carried value: the first runs the loop and
keeps the other results for the next calls, which depend on it (so they run after it).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import textwrap
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from stax.backends import DEFAULT, get_backend, region_params
from stax.cse import eliminate_common_subexpressions
from stax.frontend.trace import Builder
from stax.graph import Graph, Op, Value
from stax.ir.expr import (
    Call,
    Const,
    Expr,
    Index,
    IndexValue,
    Load,
    Var,
    expr_variables,
    gathers,
    may_flag,
    walk,
)
from stax.ir.program import Buffer, contiguous_strides, xvars
from stax.loops import stores as in_place
from stax.loops.affine import StoreForm
from stax.loops.driver import CarriedSlot, LoopDriver, NestedCall, RowSlot
from stax.lower import lower
from stax.runtime import externs
from stax.runtime.compiler import isa_level, quietly
from stax.runtime.fast import disjoint, fastcall, interruptible  # [A8]
from stax.runtime.wrapper import (
    ANY_FLAG,
    Region,
    _regions,
    build,
    check_flags,
    handed_over_storage,
    new_flags,
    raise_flags,
)
from stax.sched.scheduler import Schedule, schedule
from stax.tiling.plan import KernelPlan, PlanDecision, thread_count
from stax.tiling.threads import team as launch_team

_COUNTER = itertools.count()
Runner = Callable[[Sequence[np.ndarray], range], list[np.ndarray]]


@dataclass
class LoopBody:
    """One loop: its body Graph, compiled on first use; `decision` says how it runs."""

    label: str
    trip: range  # a range computed at run time: the hull of its trips
    graph: Graph
    carried: tuple[str, ...]
    # range(start, stop, step) with None for a bound given at run time (the last inputs of
    # `run`, 0-d int64 arrays); () for the fixed range `trip`
    bounds: tuple[int | None, ...] = ()
    legality: str = ""  # the loop's dependences, checked with isl (stax.poly.loop_legality)
    independent: bool = False  # no loop-carried dependence (isl)
    # per carried value: the version its last masked assignments apply to, and those
    # assignments (`stax.loops.stores` may do them in place)
    stores: tuple[tuple[int, tuple[StoreForm, ...]], ...] = ()
    # per carried value: the version made by the masked assignments to the value the
    # iteration starts with, and those assignments (early stores into a nested loop's value)
    leading: tuple[tuple[int, tuple[StoreForm, ...]], ...] = ()
    decision: str = "not compiled yet"
    runner: Runner | None = None
    source: str = ""  # the body's C++ with its driver, or its Python wrapper
    stash: threading.local = field(default_factory=threading.local)
    # the other loops of the same trace: compiled with this one, in one C++ module
    siblings: list[LoopBody] = field(default_factory=list)
    building: threading.Thread | None = None  # compiling it in the background (compile_soon)
    nest: str = ""  # [POLY] the polyhedral layer's schedule decision (stax.poly.loop_nest)
    # [VADV] names the body rebinds before reading them, read by nothing after the loop: not
    # carried (temporaries of one iteration)
    fresh: tuple[str, ...] = ()

    def compile(self) -> Runner:
        building = self.building
        if building is not None:  # joined once (a join costs microseconds per call)
            building.join()
            self.building = None
        if self.runner is None:
            compile_bodies([self, *(b for b in self.siblings if b is not self)])
        assert self.runner is not None
        return self.runner

    def prepare(self, suffix: str, inner: Lookup = lambda body: None,
                enclosed: bool = False) -> Prepared:
        """`enclosed`: the loop runs inside another loop of the trace (its C driver inside the
        enclosing one's: not tiled)."""
        from stax.poly.loop_nest import NestPlan, nest_runner, plan_nest  # [POLY] isl on use

        def nested(op: Op) -> tuple[Graph, range] | None:
            body = BODIES.get(op.attr("fn").rsplit(" result ", 1)[0])
            return None if body is None or None in body.bounds else (body.graph, body.trip)

        plan = NestPlan("rolled_driver", "the loop runs inside an enclosing loop, whose C "
                        "driver calls its driver (only outermost loops are tiled)") \
            if enclosed else plan_nest(self.graph, f"stax_poly{suffix}", nested)
        self.nest = str(plan)
        if plan.runs:  # after the backend's runtime header (precompiled; stax_interrupted)
            backend = get_backend(DEFAULT)
            library = backend.build(backend.emit([], {}) + plan.source, isa_level(None))
            what = "tiled loop nest" if plan.rule == "poly_time_tiling" else "loop nest"
            return Prepared(f"all iterations in one C call (stax.poly's {what}, "
                            f"{plan.symbol})", plan.source,
                            runner=nest_runner(plan, library.library))
        return prepare_body(self.graph, self.trip, self.carried, self.stores, self.independent,
                            suffix, inner, self.leading)

    def run(self, arrays: Sequence[np.ndarray], into: np.ndarray | None = None
            ) -> list[np.ndarray]:
        """The carried values after the loop, from their initial values, the invariants and
        the run-time bounds of its range. `into`: where the first carried value goes (the
        extern's buffer): the loop starts from a copy of its initial value there and, where
        the runner keeps it, updates it in place (one copy, not a copy in and a copy out)."""
        n_dynamic = self.bounds.count(None)
        trip = self.trip
        if n_dynamic:
            given = iter(int(a) for a in arrays[len(arrays) - n_dynamic:])
            trip = range(*(next(given) if x is None else x for x in self.bounds))
            arrays = arrays[:len(arrays) - n_dynamic]
        n = len(self.graph.outputs)  # the runners update the carried arrays: their own copies
        own = [np.array(a, order="C") for a in arrays[1:n]]
        if n:
            first = arrays[0]
            flags = None if into is None else into.flags
            if flags is not None and flags.c_contiguous and flags.writeable and \
                    into.shape == first.shape and into.dtype == first.dtype and \
                    disjoint((into, *arrays[1:]), 0):
                np.copyto(into, first)
                own.insert(0, into)
            else:
                own.insert(0, np.array(first, order="C"))
        results = (self.runner or self.compile())([*own, *arrays[n:]], trip)
        if into is not None and n and results[0] is not into:
            np.copyto(into, results[0], casting="unsafe")
        return results

    def describe(self) -> str:
        self.compile()
        fresh = f"\n  not carried (bound before read in every iteration, not read after the " \
            f"loop): {', '.join(self.fresh)}" if self.fresh else ""
        return (f"{self.label}: carried {', '.join(self.carried)}{fresh}\n  {self.decision}\n"
                f"  legality: {self.legality}\n"
                f"{textwrap.indent(self.nest, '  ')}\n"
                f"  body:\n{textwrap.indent(str(self.graph), '    ')}\n"
                f"  code:\n{textwrap.indent(self.source.strip(), '    ')}")


BODIES: dict[str, LoopBody] = {}  # by the key their extern calls start with


def loop_keys(graph: Graph) -> dict[str, None]:
    """The keys (in `BODIES`) of the loops a Graph runs, in order."""
    return dict.fromkeys(op.attr("fn").rsplit(" result ", 1)[0] for op in graph.ops
                         if op.kind == "extern" and op.attr("fn").startswith("stax.loop#"))


def describe(graph: Graph) -> str:
    """The loops a Graph runs (for `stax.explain`): how each runs, its body and code."""
    return "\n\n".join(BODIES[k].describe() for k in loop_keys(graph) if k in BODIES) or "none"


def add_loop_ops(b: Builder, body: LoopBody, initials: Sequence[Value],
                 free: Sequence[Value], bounds: Sequence[Value] = ()) -> list[Value]:
    """One extern op per carried value; each after the previous one. `bounds`: the 0-d
    values of the range's bounds given at run time."""
    key = f"stax.loop#{next(_COUNTER)} {body.label}"
    BODIES[key] = body
    outs: list[Value] = []
    for k, param in enumerate(body.graph.inputs[1:1 + len(initials)]):
        if k == 0:  # the loop runs in the extern's buffer (`LoopBody.run`'s `into`)
            def first(*arrays: np.ndarray, out: np.ndarray) -> None:
                body.stash.results = body.run(arrays, into=out)
            name = externs.register_into(f"{key} result {k}", first)
        else:
            def later(*arrays: np.ndarray, k: int = k) -> np.ndarray:
                return body.stash.results[k]  # type: ignore[no-any-return]
            name = externs.register(f"{key} result {k}", later)
        inputs = (*initials, *free, *bounds) if k == 0 else (*initials, *free, *outs[-1:])
        outs.append(b.add("extern", tuple(inputs), param.shape, param.dtype, fn=name))
    return outs


DirectLoop = Callable[[Sequence[np.ndarray]], None]


def direct_entry(graph: Graph, writeback: tuple[int, ...],
                 returned: Sequence[tuple[int, int, tuple[object, ...]]], n_results: int,
                 args: Sequence[Any]) -> tuple[DirectLoop, int] | None:
    """[LOOPS3] A warm entry for a function that is one loop over one carried array: the
    loop's initial value is an argument the function mutates and returns itself (`x[i] =
    ...; return x`: trisolv), every input of the loop is an argument, and its body runs in
    one C call. Returns `(run, i)`: `run(arrays)` (the call's arrays, scalars as 0-d arrays,
    mutated arguments checked for aliasing by the caller) leaves the loop's result in
    argument `i`; None for other functions. The loop runs in the caller's array itself when
    it is C-contiguous (the signature `args` has) and writeable: no wrapper, extern call,
    buffer or copy back; else in a copy, copied back. A call that raises (an index out of
    bounds, Ctrl-C) leaves the argument as it was, as before (the loop ran in a buffer,
    copied back after it); a body that may run Python per iteration (and could fall back to
    NumPy) is not taken."""
    ops = [op for op in graph.ops if op.kind not in ("input", "const")]
    if len(ops) != 1 or ops[0].kind != "extern":
        return None
    op = ops[0]
    key, _, k = op.attr("fn").rpartition(" result ")
    body = BODIES.get(key)
    if body is None or k != "0" or len(body.graph.outputs) != 1 or body.runner is None or \
            not body.decision.startswith("all iterations in one C call"):
        return None
    position = {v.id: j for j, v in enumerate(graph.inputs)}
    if any(v.id not in position for v in op.inputs):
        return None
    i, initial = position[op.inputs[0].id], op.inputs[0]
    if writeback != (i,) or initial.shape != op.out.shape or initial.dtype != op.out.dtype or \
            graph.outputs != (op.out,) * (n_results + 1) or \
            sorted(returned) != [(r, i, ()) for r in range(n_results)]:
        return None
    order = [position[v.id] for v in op.inputs]
    if i in order[1:]:  # the loop reads the argument's initial value too
        return None
    runner, trip, free = body.runner, body.trip, order[1:]

    def copied(arrays: Sequence[np.ndarray]) -> None:
        """The loop in a copy of the argument (`LoopBody.run`), copied back after it."""
        np.copyto(arrays[i], body.run([arrays[j] for j in order])[0])

    if None in body.bounds or not args[i].flags.c_contiguous:
        return copied, i

    def run_in(arrays: Sequence[np.ndarray]) -> None:
        # the call's signature is this one: the argument is C-contiguous, of the loop's shape
        # and dtype, and shares no memory with the others (checked by the caller)
        x = arrays[i]
        if not x.flags.writeable:
            copied(arrays)  # NumPy's ValueError, after the loop
            return
        before = x.copy()  # a call that raises leaves the argument as it was
        try:
            result = runner([x, *(arrays[j] for j in free)], trip)[0]
        except BaseException:
            np.copyto(x, before)
            raise
        if result is not x:  # double-buffered: the last iteration wrote the other buffer
            np.copyto(x, result)

    return run_in, i


@dataclass(frozen=True)
class Row:
    """A row `x[c + a*i]` of a loop-invariant array read at an index affine in the loop
    index: a body input whose pointer the driver sets each iteration (no gather)."""

    source: int  # position of `x` among the body's inputs
    const: int
    coef: int
    nbytes: int  # bytes per row


def row_inputs(graph: Graph, trip: range, n_carried: int) -> tuple[Graph, tuple[Row, ...]]:
    """`take(x, idx, axes=(0,))` with `x` loop-invariant and `idx` affine in the loop index
    and inside `x` for the whole range becomes a new body input (its rows' values): the
    driver points it at the row (a gather with its index checked per element read the row
    with vector gather instructions, three times slower than a plain load when the rows
    stream from memory)."""
    producer = graph.producer()
    position = {v.id: k for k, v in enumerate(graph.inputs)}
    index = graph.inputs[0].id

    def affine(vid: int) -> tuple[int, int] | None:
        if vid == index:
            return 0, 1
        op = producer.get(vid)
        if op is None or op.out.shape != () or op.out.dtype.kind not in "iu":
            return None
        if op.kind == "const" and isinstance(op.attr("value"), (int, np.integer)):
            return int(op.attr("value")), 0
        if op.kind == "cast":
            return affine(op.inputs[0].id)
        if op.kind == "elementwise" and op.attr("fn") in ("add", "subtract", "multiply"):
            forms = [affine(v.id) for v in op.inputs]
            if forms[0] is None or forms[1] is None:
                return None
            (c1, a1), (c2, a2) = forms
            if op.attr("fn") == "add":
                return c1 + c2, a1 + a2
            if op.attr("fn") == "subtract":
                return c1 - c2, a1 - a2
            if a1 and a2:
                return None
            return c1 * c2, a1 * c2 + a2 * c1
        return None

    rows: list[Row] = []
    row_values: list[Value] = []
    replaced: dict[int, Op | None] = {}  # take -> the slice of its row that replaces it
    fresh = itertools.count(1 + max(v.id for op in graph.ops for v in (op.out, *op.inputs)))
    for op in graph.ops:
        if op.kind != "take" or op.attr("axes") != (0,) or op.inputs[1].shape != ():
            continue
        x, form = op.inputs[0], affine(op.inputs[1].id)
        cut = producer.get(x.id)
        if cut is not None and cut.kind == "slice" and \
                position.get(cut.inputs[0].id, 0) > n_carried and form is not None:
            # `x[a:b, c:d][i]` (`L[i, :i]` has a fixed start): the row `x[a + i]`, sliced
            first, step = cut.attr("starts")[0], cut.attr("steps")[0]
            x, form = cut.inputs[0], (first + step * form[0], step * form[1])
        if form is None or position.get(x.id, 0) <= n_carried or not trip:
            continue
        ends = (form[0] + form[1] * trip[0], form[0] + form[1] * trip[-1])
        if min(ends) < 0 or max(ends) >= x.shape[0]:
            continue  # NumPy wraps or raises: the gather does
        rows.append(Row(position[x.id], form[0], form[1],
                        int(np.prod(x.shape[1:], dtype=np.int64)) * x.dtype.itemsize))
        if x is op.inputs[0]:
            row_values.append(op.out)
            replaced[op.out.id] = None
        else:
            row = Value(next(fresh), x.shape[1:], x.dtype)
            row_values.append(row)
            replaced[op.out.id] = Op("slice", (row,), op.out, (
                ("starts", cut.attr("starts")[1:]), ("steps", cut.attr("steps")[1:])))
    if not rows:
        return graph, ()
    inputs = (*graph.inputs, *row_values)
    new_inputs = tuple(Op("input", (), v, (("index", len(graph.inputs) + k),))
                       for k, v in enumerate(row_values))
    ops = [op for op in graph.ops if op.kind == "input"] + list(new_inputs) + [
        replaced.get(op.out.id) or op for op in graph.ops
        if op.kind != "input" and not (op.out.id in replaced and replaced[op.out.id] is None)]
    return Graph(inputs, tuple(ops), graph.outputs), tuple(rows)


@dataclass(frozen=True)
class Prepared:
    """A body ready to compile: its Python stepper (already built) and its wrapper's source,
    or its loop driver (names ending in a suffix; the backend emits it) and how to make the
    runner from the loaded library."""

    decision: str
    source: str = ""
    runner: Runner | None = None
    driver: LoopDriver | None = None
    finish: Callable[[Any], Runner] | None = None
    isa: str = ""
    tables: Tables | None = None  # pointer tables for an enclosing driver (NestedCall)


Lookup = Callable[["LoopBody"], Prepared | None]
Tables = Callable[[], tuple[np.ndarray, list[dict[str, Any]]]]


def compile_soon(bodies: Sequence[LoopBody]) -> None:
    """Compile a trace's loop bodies (`compile_bodies`) on a background thread while the
    enclosing program is compiled: their g++ run overlaps the program's instead of following
    it. A body's first use waits for the thread; errors are left to it (it compiles again and
    raises them)."""
    thread = threading.Thread(target=quietly, args=(lambda: compile_bodies(bodies),),
                              name="stax loop bodies", daemon=True)
    for body in bodies:
        body.building = thread
    thread.start()


def compile_bodies(bodies: Sequence[LoopBody]) -> None:
    """Compile the bodies not compiled yet: every C driver in one C++ module (one g++ run:
    most of a small module's compile time is the compiler's start and the shared header).
    The first body's errors are raised; another's are left for its own call."""
    todo = [b for b in bodies if b.runner is None]
    enclosed = {id(BODIES[k]) for b in bodies for k in loop_keys(b.graph) if k in BODIES}
    done: dict[int, Prepared | Exception] = {}
    count = itertools.count()

    def prepare(body: LoopBody) -> Prepared | Exception:
        if id(body) not in done:
            try:
                done[id(body)] = body.prepare(f"_loop{next(count)}", inner,
                                              id(body) in enclosed)
            except Exception as e:  # noqa: BLE001 - raised below, for the first body only
                done[id(body)] = e
        return done[id(body)]

    def inner(body: LoopBody) -> Prepared | None:
        """A nested loop's preparation, when it has a C driver in this module."""
        if not any(b is body for b in todo):
            return None
        p = prepare(body)
        return p if isinstance(p, Prepared) and p.driver is not None else None

    prepared: list[tuple[LoopBody, Prepared]] = []
    for body in todo:
        p = prepare(body)
        if isinstance(p, Exception):
            if not prepared and body is bodies[0]:
                raise p
            continue
        prepared.append((body, p))
    in_c = [p for _, p in prepared if p.driver is not None]
    sources: dict[int, str] = {}
    if in_c:
        backend = get_backend(DEFAULT)
        module, parts = backend.emit_loops([p.driver for p in in_c if p.driver is not None])
        library = backend.build(module, in_c[0].isa)
        sources = {id(p): part for p, part in zip(in_c, parts, strict=True)}
    for body, p in prepared:
        body.runner = p.runner if p.finish is None else p.finish(library)
        body.decision, body.source = p.decision, sources.get(id(p), p.source)


def prepare_body(graph: Graph, trip: range, names: Sequence[str],
                 stores: Sequence[tuple[int, tuple[StoreForm, ...]]], independent: bool,
                 suffix: str, inner: Lookup = lambda body: None,
                 leading: Sequence[tuple[int, tuple[StoreForm, ...]]] = ()) -> Prepared:
    n_carried = len(graph.outputs)
    backend = get_backend(DEFAULT)  # costs and fusion limits are the backend's, as in api
    for early in (True, False):  # early stores only where the C driver runs the body
        planned, carries, before = in_place.plan(
            graph, names or [f"carried {k}" for k in range(n_carried)], stores, early, leading)
        body, rows = row_inputs(planned, trip, n_carried)
        strides = [contiguous_strides(v.shape) for v in body.inputs]
        lowered = lower(eliminate_common_subexpressions(body)[0], strides,
                        backend.recompute_cost,
                        numpy_layout=False)  # [LAYOUT] carried values keep their arrays' C order
        sched = schedule(lowered.program, fuse=True, rules=backend.fusion_rules())
        nests, reason = _nested_loops(sched, inner)
        reason = reason or _driver_refusal(sched, carries, nests)
        if reason is None or not (before or any(c.before for c in carries)):
            break
    labels = [name.split(" ")[0] for name in names or
              [f"carried{k}" for k in range(n_carried)]]
    how = "; ".join(f"{name}: {c.how}" for name, c in zip(labels, carries, strict=True))
    isa = isa_level(None)
    if reason is None:
        team, why = _team(sched, carries, independent, trip)
        team, why = (1, "it runs nested loops") if nests and team > 1 else (team, why)
        threads = 1 if team > 1 else _threads(sched)
        driver, finish, tables, aliased = _c_driver(sched, isa, threads, carries, rows, team,
                                                    suffix, nests, before)
        outputs, inputs = sched.program.outputs, sched.program.inputs

        def root(buffer: str) -> str:
            while buffer in aliased:
                buffer = aliased[buffer]
            return buffer

        how = "; ".join(f"{name}: " + (
            "in place: the nested loops that make its next version run in its own buffer "
            "(no copy in, no double buffer)"
            if c.output is not None and not c.stores and root(outputs[c.output]) == inputs[1 + k]
            else c.how)
            for k, (name, c) in enumerate(zip(labels, carries, strict=True)))
        how = (f"iterations in parallel on up to {team} OpenMP threads (#pragma omp parallel "
               f"for; each thread its own scratch; at launch, the cores idle then): {why}"
               if team > 1 else
               f"iterations in order on {threads} thread(s) ({why})") + f"; {how}"
        how += "".join(f"; {plan.name}: {d}" for region in driver.regions  # [COV] explain
                       for plan in region.plans for d in plan.decisions
                       if d.rule in ("stored_prefix", "clamp_free"))
        if nests:
            how += "; nested loop(s) run by their own C drivers inside this one, " + ", ".join(
                f"{n.body.label.split(' over ')[0]} (" + "; ".join(
                    f"{name.split(' ')[0]}: " + (
                        "updated in place (nothing after the loop reads its old version)"
                        if r in aliased else "its initial value copied in") + "".join(
                        f", then {store.describe(name.split(' ')[0])} stored into it (a "
                        "fixed-position assignment that only the loop reads: no full-array "
                        "pass)"
                        for p, store in before.get(n.key, ()) if p == k)
                    for k, (name, r) in enumerate(zip(n.body.carried, n.results, strict=True)))
                + ")" for n in nests)
        return Prepared(f"all iterations in one C call (stax_loop); {how}", driver=driver,
                        finish=finish, isa=isa, tables=tables)
    program = build(sched, threads=thread_count(), isa=isa)
    n = n_carried

    def python_loop(arrays: Sequence[np.ndarray], trip: range) -> list[np.ndarray]:
        cur = list(arrays[:n])  # the loop's own (LoopBody.run)
        free = [np.asarray(a, order="C") for a in arrays[n:]]
        for t in trip:
            views = [free[r.source - 1 - n][r.const + r.coef * t, ...] for r in rows]
            inputs = [np.array(t, np.int64), *cur, *free, *views]
            outs = program.call(list(inputs))  # the call may consume its list
            for k, carry in enumerate(carries):
                if carry.output is not None:
                    cur[k] = outs[carry.output]
                if carry.stores:
                    if not cur[k].flags.writeable or any(
                            cur[k] is x for j, x in enumerate(cur) if j != k):
                        cur[k] = cur[k].copy()
                    in_place.apply(carry.stores, cur[k], outs, inputs)
        return cur

    return Prepared(f"body compiled once, run once per iteration from Python ({reason}); {how}",
                    program.wrapper, runner=python_loop)


@dataclass(frozen=True)
class Nest:
    """A nested loop whose own C driver runs inside this body's: `node` its first extern
    (the one that runs it), `results` the buffers of its carried values after it (one per
    extern), `initials`, `free` and `bounds` (an int or a 0-d int64 buffer each) its inputs."""

    node: str
    key: str
    body: LoopBody
    prepared: Prepared
    initials: tuple[str, ...]
    free: tuple[str, ...]
    results: tuple[str, ...]
    bounds: tuple[int | str, ...]


def _nested_loops(sched: Schedule, inner: Lookup) -> tuple[list[Nest], str | None]:
    """The nested loops this body's driver can run (their bodies have C drivers in the same
    module), or why an extern call stays one (the body then runs from Python)."""
    program = sched.program
    buffers = program.buffer_map
    externs_ = [m.node for g in sched.kernels for m in g.members if m.node.kind == "extern"]
    by_fn = {n.fn: n for n in externs_}
    nests: list[Nest] = []
    for node in externs_:
        key, _, k = node.fn.rpartition(" result ")
        body = BODIES.get(key) if key.startswith("stax.loop#") else None
        if body is None:
            return [], "the body has extern calls"
        if k != "0":
            continue  # a later result of a loop run by its first extern
        prepared = inner(body)
        if prepared is None or prepared.driver is None:
            return [], f"the body has extern calls (a nested loop not in C: {body.decision})"
        n_carried = len(body.graph.outputs)
        n_free = len(body.graph.inputs) - 1 - n_carried
        given = node.extern_inputs[:n_carried + n_free + sum(x is None for x in body.bounds)]
        results = tuple(by_fn[f"{key} result {j}"].out if f"{key} result {j}" in by_fn else ""
                        for j in range(n_carried))
        dynamic = iter(given[n_carried + n_free:])
        bounds = (tuple(next(dynamic) if x is None else x for x in body.bounds) if body.bounds
                  else (body.trip.start, body.trip.stop, body.trip.step))
        names = [*given, *results]
        if "" in results or isinstance(bounds[2], str) or len(given) < n_carried + n_free + sum(
                x is None for x in body.bounds):
            return [], "the body has extern calls (a nested loop whose results are not all used)"
        if any(buffers[n].strides != contiguous_strides(buffers[n].shape) for n in names) or any(
                buffers[n].shape != () or buffers[n].dtype != np.int64
                for n in bounds if isinstance(n, str)):
            return [], "the body has extern calls (a nested loop over strided buffers)"
        nests.append(Nest(node.name, key, body, prepared, tuple(given[:n_carried]),
                          tuple(given[n_carried:n_carried + n_free]), results, bounds))
    return nests, None


def _driver_refusal(sched: Schedule, carries: Sequence[in_place.Carry],
                    nests: Sequence[Nest]) -> str | None:
    """Why the C driver cannot run this body (None: it can)."""
    program = sched.program
    buffers = program.buffer_map
    if any(m.node.kind == "extern" for g in sched.kernels for m in g.members) and not nests:
        return "the body has extern calls"
    if not sched.kernels:
        return "the body has no kernel"
    outs = program.outputs
    if len(set(outs)) != len(outs):
        return "a body output repeats"
    if any(c.stores and buffers[program.inputs[1 + k]].strides != contiguous_strides(
            buffers[program.inputs[1 + k]].shape) for k, c in enumerate(carries)):
        return "an array stored into in place has a strided layout"
    for name, shape in zip(outs, program.output_shapes, strict=True):
        buf = buffers[name]
        if buf.kind != "output" or buf.strides != contiguous_strides(buf.shape) or \
                buf.size != int(np.prod(shape, dtype=np.int64)):
            return f"body output {name} is not a fresh contiguous buffer"
    for r in handed_over_storage(sched):
        if buffers[r.old].kind == "input":
            return "an intermediate takes over an input's storage"
    for buf in buffers.values():
        if buf.kind == "const" and np.asarray(buf.data).strides != tuple(
                s * buf.dtype.itemsize for s in buf.strides):
            return f"constant {buf.name} has a strided layout"
    return None


SERIAL_WORK = 1 << 16  # elements per iteration under which a body runs on one thread


def _threads(sched: Schedule) -> int:
    """One thread for small bodies: the driver opens each region's OpenMP parallel region
    once per iteration, which costs more than a small body's work (far more when the
    machine's cores are busy and the team's threads must be woken)."""
    return 1 if _work(sched) < SERIAL_WORK else thread_count()


PARALLEL_WORK = 1 << 15  # elements over all iterations under which they run in order


def _team(sched: Schedule, carries: Sequence[in_place.Carry], independent: bool,
          trip: range) -> tuple[int, str]:
    """How many threads run the iterations at once, and why."""
    if not independent:
        return 1, "the legality check found loop-carried dependences"
    if any(c.output is not None for c in carries):
        return 1, "a carried value is double-buffered: each iteration makes its next version"
    team = min(thread_count(), len(trip))
    work = _work(sched) * len(trip)
    if team < 2 or work < PARALLEL_WORK:
        return 1, (f"independent iterations, but {work} elements of work in all: less than a "
                   f"thread team costs ({PARALLEL_WORK})" if team > 1 else
                   "independent iterations, one thread available")
    return team, ("isl finds no loop-carried dependence and every carried array is stored in "
                  "place, at elements no other iteration reads or writes")


def _work(sched: Schedule) -> int:
    return sum(m.node.numel * max(m.node.rnumel, 1) for g in sched.kernels for m in g.members
               if m.node.kind != "extern")


def _span(buf: Buffer) -> int:
    """Elements from the first to the last one the layout addresses."""
    if buf.size == 0:
        return 1
    return 1 + sum((n - 1) * abs(s) for n, s in zip(buf.shape, buf.strides, strict=True))


def _c_driver(sched: Schedule, isa: str, threads: int, carries: Sequence[in_place.Carry],
              rows: Sequence[Row], team: int, suffix: str, nests: Sequence[Nest] = (),
              before: in_place.Before | None = None
              ) -> tuple[LoopDriver, Callable[[Any], Runner], Tables, dict[str, str]]:
    """The body's regions and `stax_loop` (names ending in `suffix`) as the backend's
    `emit_loops` takes them, the runner's maker from the loaded library, the maker of pointer
    tables for an enclosing driver (`NestedCall`), and the nested loops' result buffers that
    are their initial values' own storage (each mapped to that initial value). `team` > 1:
    the iterations are independent and every carried array is stored in place: they run on
    `team` OpenMP threads, each with its own pointer table (index, row pointers,
    intermediates, stored values: `bufs + t*N`)."""
    program = sched.program
    buffers = program.buffer_map
    backend = get_backend(DEFAULT)
    plan_of: dict[str, KernelPlan] = {}
    for k, group in enumerate(sched.kernels):
        local = {lb.buffer: lb.extent for lb in sched.local if lb.kernel == group.name}
        plan_of[group.name] = backend.plan(f"kernel{k}", [m.node for m in group.members],
                                           group.depth, threads=threads,
                                           vectorize=isa != "scalar", local=local, form=None)
    plan_of = _store_stops(sched, plan_of, carries)
    regions = _regions(sched, plan_of, suffix)
    n_carried = len(carries)
    carried_in = program.inputs[1:1 + n_carried]
    alias = _in_place_results(sched, carries, nests)
    # a nested loop run in its initial value's storage saves a copy per iteration; storage
    # handed over between buffers only saves memory: it gives way
    kept = set(alias) | set(alias.values())
    reused = {r.new: r.old for r in handed_over_storage(sched)
              if r.new not in kept and r.old not in kept}
    slots: dict[str, int] = {}  # buffer -> pointer slot
    for name in program.inputs:
        slots[name] = len(slots)
    nest_buffers = [n for nest in nests for n in (*nest.results, *nest.free, *nest.initials,
                                                  *(b for b in nest.bounds if isinstance(b, str)))]
    for name in [*(n for region in regions for n in region_params(region.plans)), *nest_buffers]:
        if name not in slots and name not in reused and name not in alias:
            slots[name] = len(slots)
    for new, old in reused.items():
        while old in reused:
            old = reused[old]
        slots[new] = slots[old]
    for result, initial in alias.items():
        slots[result] = slots[initial]
    for j in range(len(nests)):  # the nested drivers' pointer tables
        slots[f"<nested {j}>"] = len(set(slots.values()))
    width = max(len(set(slots.values())), 1)  # pointers per table (reused storage shares)
    first_row = len(program.inputs) - len(rows)
    driver = LoopDriver(
        suffix, tuple(regions), buffers, slots, width, slots[program.inputs[0]],
        tuple(RowSlot(slots[program.inputs[first_row + k]], slots[program.inputs[r.source]],
                      r.const, r.coef, r.nbytes) for k, r in enumerate(rows)),
        tuple(CarriedSlot(slots[src], buffers[src].dtype, buffers[src].nbytes,
                          None if c.output is None else slots[program.outputs[c.output]],
                          tuple(c.stores), [n.key for n in nests].index(c.before)
                          if c.before else None)
              for src, c in zip(carried_in, carries, strict=True)),
        tuple(slots[name] for name in program.inputs),
        tuple(slots[name] for name in program.outputs), team,
        tuple(_nested_call(nest, slots, buffers, _regions_before(sched, regions, nest.node),
                           slots[f"<nested {j}>"], (before or {}).get(nest.key, ()))
              for j, nest in enumerate(nests)))
    names = {s: n for n, s in slots.items()}
    names.update({slots[n]: n for n in program.inputs})  # storage shared with an input is its
    order = sorted(names.items())
    consts = {n: np.asarray(b.data, order="C") for n, b in buffers.items() if b.kind == "const"}
    shared = set(program.inputs[1:first_row])  # carried values and invariants: one for all
    inner = {f"<nested {j}>": nest.prepared.tables for j, nest in enumerate(nests)}
    position = {n: k for k, n in enumerate(program.inputs[1:first_row])}
    shared_slots = [(t * width + s, position[n]) for t in range(team) for s, n in order
                    if n in shared]
    scratch = threading.local()  # per Python thread: ctypes releases the GIL during the loop

    def own() -> dict[str, Any]:
        """One thread's index, row pointers, intermediates, body outputs and nested tables
        (with, under `<nested j> scratch`, the scratch their pointers point at)."""
        mine: dict[str, Any] = {}
        for _, n in order:
            if n in inner:
                mine[n], mine[f"{n} scratch"] = inner[n]()
            elif n not in shared:
                mine[n] = consts[n] if n in consts else np.zeros((), np.int64) \
                    if n == program.inputs[0] else np.empty(_span(buffers[n]), buffers[n].dtype)
        return mine

    def tables() -> tuple[np.ndarray, list[dict[str, Any]]]:
        """`team` pointer tables for an enclosing driver to fill in and call with, then the
        team size (the slots it fills hold 0 until then); and the scratch they point at."""
        kept = [own() for _ in range(team)]
        table = np.zeros(width * team + 1, np.uintp)
        for t, mine in enumerate(kept):
            for s, n in order:
                if n not in shared:
                    table[t * width + s] = mine[n].ctypes.data
        table[-1] = team
        return table, kept

    def finish(library: Any) -> Runner:
        fn = getattr(library.library, f"stax_loop{suffix}")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                       ctypes.c_void_p, ctypes.c_int32]
        fn.restype = None
        fast = fastcall() if driver.entry else None
        entry = None if fast is None else ctypes.cast(
            getattr(library.library, f"stax_entry{suffix}"), ctypes.c_void_p).value
        return functools.partial(run, fn, fast, entry)

    def run(fn: Any, fast: Any, entry: int | None, arrays: Sequence[np.ndarray], trip: range
            ) -> list[np.ndarray]:
        given = list(arrays)  # the carried values: the loop's own, C-contiguous (LoopBody.run)
        for k in range(n_carried, len(given)):
            given[k] = np.asarray(given[k], order="C")
        kept = getattr(scratch, "tables", None)
        if kept is None:  # kept across calls, with their pointers: only the shared change
            kept = scratch.tables = [own() for _ in range(team)]
            scratch.pointers = np.array(
                [0 if n in shared else table[n].ctypes.data for table in kept for _, n in order],
                np.uintp)
        for j, nest in enumerate(nests):  # the nested drivers' teams: the cores idle now
            for mine in kept:
                mine[f"<nested {j}>"][-1] = launch_team(nest.prepared.driver.team)
        pointers = scratch.pointers
        launch = (trip.start, trip.step, len(trip), launch_team(team) if team > 1 else 1)
        if fast is not None:  # stax_entry: the shared pointers set in C, no ctypes call
            values = fast.run(entry, (pointers, *given, launch), None)
            if values is not None:
                raise_flags(values)
        else:
            for k, j in shared_slots:
                pointers[k] = given[j].ctypes.data
            flags = new_flags()
            with interruptible(ctypes.addressof(flags)):  # [A8] Ctrl-C stops the loop
                fn(pointers.ctypes.data, *launch[:3], flags, launch[3])
            if flags[ANY_FLAG]:
                check_flags(flags)
        return given[:n_carried]

    return driver, finish, tables, alias


def _store_stop(ax: in_place.Axis, inputs: Sequence[str]) -> Expr | None:
    """The count of the positions a store writes on axis `ax` (as `store_code` computes it),
    an int64 expression of the body's 0-d index inputs; None for a step other than 1."""
    int64 = np.dtype(np.int64)

    def form(f: in_place.Form) -> Expr:
        e: Expr = Const(f[0], int64)
        for p, a in f[1]:
            e = Call("add", (e, Call("multiply", (Const(a, int64), Load(inputs[p], Index(),
                                                                      int64)), int64)), int64)
        return e

    if ax.count is not None:
        return Const(ax.count, int64)
    if ax.step != 1 or ax.stop is None:
        return None
    n = Const(ax.n, int64)
    return Call("subtract", (Call("minimum", (form(ax.stop), n), int64),
                             Call("minimum", (form(ax.start), n), int64)), int64)


def _store_stops(sched: Schedule, plan_of: dict[str, KernelPlan],
                 carries: Sequence[in_place.Carry]) -> dict[str, KernelPlan]:
    """[LOOPS] Plans whose first loop stops where the driver's stores stop reading: a kernel
    of pointwise nodes that write, in their loop order, values that only an in-place store
    reads (`y[:k] = ...`, `x[i, :i] = ...`: masked full-length values) along their first axis
    runs that axis to the store's count, not to the longest slice (`outer_stop`). [COV] Also
    reductions (`y[i:] = x[:, i] @ A[:, i:]`: a matvec's outputs), and values local to the
    kernel (one per output, read only at that output) need no store; in the outer-reduction
    form, with no shared loop, the first loop is the form's own (its blocks of outputs)."""
    program = sched.program
    buffers = program.buffer_map
    read = {b for g in sched.kernels for m in g.members for b in m.node.read_buffers()}
    stored = [s for c in carries for s in c.stores]
    outputs = [program.outputs[s.value] for s in stored]
    doubled = {program.outputs[c.output] for c in carries if c.output is not None}
    stops: dict[str, Expr] = {}
    for s, name in zip(stored, outputs, strict=True):
        axes = [ax for ax in s.axes if not ax.at]
        stop = _store_stop(axes[0], program.inputs) if axes and s.shape[0] > 1 else None
        if stop is not None and not (isinstance(stop, Const) and stop.value >= s.shape[0]) and \
                outputs.count(name) == 1 and name not in read | doubled:
            stops[name] = stop
    changed = dict(plan_of)
    for name, plan in plan_of.items():
        nodes = plan.nodes
        local = {b for b, _ in plan.local}  # [COV] values of one output, read in the kernel
        stored = [n for n in nodes if n.out not in local]
        stop = stops.get(stored[0].out) if stored else None
        if stop is None or plan.row_block or plan.unroll or (
                plan.shared_depth < 1 and plan.form != "outer-reduction") or any(
                n.kind not in ("pointwise", "reduction") or n.ranges[:1] != stored[0].ranges[:1]
                for n in nodes) or any(
                stops.get(n.out) != stop or n.ranges != buffers[n.out].shape or
                n.out_index != _in_order(n.ranges) for n in stored):
            continue
        if any(_checks_once(n.body) for n in nodes if n.body is not None):
            stop = Call("maximum", (stop, Const(1, np.dtype(np.int64))), np.dtype(np.int64))
        changed[name] = replace(plan, outer_stop=stop, decisions=(*plan.decisions, PlanDecision(
            "stored_prefix", name, 0, "stored_prefix: the first loop stops at the count of the "
            "elements the driver's stores read (a slice of index-dependent length)")))
    return changed


def _checks_once(body: Expr) -> bool:
    """[HUNT12] Does `body` gather or set an error flag at a value the first loop does not vary
    (`s[k:k + 2] + a[k]`: `a[k]` broadcast)? NumPy checks it even where the stores read no
    element: the first loop, stopped at their count, runs at least once (at a count of 0 it
    skipped the check: no IndexError)."""
    first = xvars(1)[0]
    return any(first not in expr_variables(e) and (
        isinstance(e, (Load, IndexValue)) and gathers(e) or isinstance(e, Call) and may_flag(e))
        for e in walk(body))


def _in_order(ranges: Sequence[int]) -> Index:
    """The index of a C-contiguous array of shape `ranges` at its loop variables."""
    strides = contiguous_strides(tuple(ranges))
    return Index.of({Var(x): s for x, r, s in zip(xvars(len(ranges)), ranges, strides,
                                                  strict=True) if r > 1})


def _regions_before(sched: Schedule, regions: Sequence[Region], extern: str) -> int:
    """How many of `regions` run before the extern node `extern`."""
    order = {g.name: k for k, g in enumerate(sched.kernels)}
    position = next((k for k, g in enumerate(sched.kernels)
                     if any(m.node.name == extern for m in g.members)), None)
    if position is None:
        raise AssertionError(f"extern {extern} not scheduled")
    return sum(order[r.groups[-1].name] < position for r in regions)


def _in_place_results(sched: Schedule, carries: Sequence[in_place.Carry], nests: Sequence[Nest]
                      ) -> dict[str, str]:
    """result buffer -> initial value, for the nested loops' carried values that run in their
    initial value's storage (no copy in): nothing after the nested loop reads the initial
    value, which is this body's carried array (its own copy) or an intermediate, or the result of
    such a loop in turn; the result is an intermediate, or the next version of the carried
    array it started from (or of any carried array when it started from an intermediate)."""
    program = sched.program
    buffers = program.buffer_map
    carried_in = program.inputs[1:1 + len(carries)]
    step = {m.node.name: k for k, g in enumerate(sched.kernels) for m in g.members}
    nodes = [m.node for g in sched.kernels for m in g.members]
    root: dict[str, str] = {}  # an aliased result -> the buffer whose storage it runs in
    alias: dict[str, str] = {}
    for nest in nests:
        for initial, result in zip(nest.initials, nest.results, strict=True):
            first = root.get(initial, initial)
            if nest.initials.count(initial) != 1 or \
                    initial in nest.free or initial in program.outputs or any(
                    n.fn.rpartition(" result ")[0] != nest.key for n in nodes
                    if initial in n.read_buffers() and step[n.name] > step[nest.node]):
                continue
            if first in carried_in:
                c = carries[carried_in.index(first)]
                allowed = {program.outputs[c.output]} if c.output is not None else set()
            elif buffers[first].kind == "intermediate":
                allowed = {program.outputs[c.output] for c in carries if c.output is not None}
            else:
                continue
            if result in program.outputs and result not in allowed:
                continue
            alias[result], root[result] = initial, first
    return alias


def _nested_call(nest: Nest, slots: Mapping[str, int], buffers: Mapping[str, Buffer],
                 before: int, table: int, stores: Sequence[tuple[int, in_place.Store]]
                 ) -> NestedCall:
    d = nest.prepared.driver
    assert d is not None
    n_shared = len(nest.results) + len(nest.free)
    return NestedCall(
        d.suffix, before, table, d.width, d.team,
        tuple(zip(d.inputs[1:1 + n_shared],
                  (slots[n] for n in (*nest.results, *nest.free)), strict=True)),
        tuple((slots[i], slots[r], buffers[r].nbytes)
              for i, r in zip(nest.initials, nest.results, strict=True) if slots[i] != slots[r]),
        tuple(("slot", slots[b]) if isinstance(b, str) else ("int", b) for b in nest.bounds),
        tuple((slots[nest.results[p]], buffers[nest.results[p]].dtype, store)
              for p, store in stores))
