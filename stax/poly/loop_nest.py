"""Time loops of stencil updates as SCoPs, tiled by the polyhedral layer (issue 10, item 3).

A rolled loop (`stax.loops`) whose body only assigns stencils of its carried arrays into slices
of them (`b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3`, `new[1:-1, 1:-1] = f(u...); u = new`)
is a static control part: one statement `S_k[t, x0, ...]` per assignment, over the time loop
`0 <= t < T` and the assigned slice's elements, its reads and its write affine maps of the
recorded slices, its expression the body's elementwise operations at one point. NumPy computes
a right-hand side before it assigns it, so the statements update the arrays in place only
where that gives the same values: an array that its own assignment reads at another element,
or that is read in its old version after it is assigned, gets two buffers, `t mod 2` and
`(t + 1) mod 2` in its accesses (both hold the elements no assignment writes).

A Gauss–Seidel-style sweep (`for t: for i in range(1, n - 1): A[i, 1:-1] = f(A[i - 1, ...],
A[i, ...], A[i + 1, ...])`: the nested row loop's masked row store, `stax.loops.masked`), with
nested column loops of element stores (`for j in ...: A[i, j] += A[i, j - 1]; A[i, j] /= 9.0`,
npbench's seidel-2d), has one statement per store, `S_k[t, i, x]` (x the column's position in
the stored slice or the column loop), all updating `A` in place in the body's order: NumPy
computes a row from the array as the previous stores left it, which is what the in-place order
gives as long as a row store reads its own row only on one side of the columns it stores
(its columns then run away from them: ascending when it reads right of them, descending when
left; both sides: rolled, a temporary row is not built). The sweep runs as one C loop nest in
its original order (`poly_sweep_nest`: measured faster than the rolled row driver, which calls
each row's store and column loop as kernels of their own drivers). Its band can be skewed as a
wavefront `(t, t + i, 2t + i + column)` (Pluto's schedule for seidel-2d) and tiled; the tiled
sweep runs only with `TILE_SWEEPS` (slower than the in-order nest where measured), else
explain shows its tree and proof and why it was not taken.

`plan_nest` builds that `Scop`, skews its space loops by the time loop (`SKEWS`, in order: the
first skew the unified check finds legal with a permutable band, as PLUTO's schedules for these
kernels), tiles the band, proves the tiled schedule legal with the check (every dependence
strictly forward) and generates its C loop nest (`stax.poly.codegen`). With more than one
thread (`thread_count`, the rolled driver's) the tile band becomes a wavefront, (tile t + tile
x0, tile t, ...) (`stax.poly.transform.wavefront`), whose second member isl proves parallel:
the tiles of one wavefront run on the threads (`omp parallel for`). The tiled nest replaces
the rolled C driver where it pays: arrays larger than the L2 cache (a rolled time step then
streams every array from memory; a tile reuses them across the time steps of a
tile). Every choice is a `NestPlan` with a rule name and reason, shown by `stax.explain`
with the schedule tree and the proof.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import islpy as isl
import numpy as np

from stax.graph import Graph, Op, Value
from stax.ops import by_name
from stax.poly._isl import PolyError, multi_union_pw_aff
from stax.poly.check import Verdict, check
from stax.poly.codegen import codegen
from stax.poly.deps import Dependences, dependences
from stax.poly.model import Scop
from stax.poly.transform import tile, wavefront
from stax.poly.tree import Band, Filter, Leaf, ScheduleTree, Sequence
from stax.tiling.plan import thread_count

C_TYPES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float"}
TILES = {2: (32, 2048), 3: (32, 64, 2048), 4: (8, 8, 16, 256)}  # by band width (time first)
SKEWS = ((1, False), (1, True), (2, False), (2, True), (3, True), (4, True))  # tried in order
MIN_BYTES: int | None = None  # arrays below this stay rolled (None: the L2 cache's size)
TILE_SWEEPS = False  # row sweeps' wavefronts: legal, measured slower than the rolled driver
PARALLEL_WIDTHS = {2}  # band widths (time first) whose parallel tiles beat the rolled driver's
# threads where measured (2 threads: jacobi-1d 1.36-1.50x; jacobi-2d 0.69-0.93x, heat-3d 0.98-1.12x)


class NotAScop(Exception):
    """Why a loop body is not a stencil SCoP (the rolled driver runs it)."""


Axis = tuple  # ("x", start, step): start + step*x_d (the d-th "x" axis) | ("i", k): row i + k
Read = tuple[int, int | None, tuple[Axis, ...]]  # array, writer statement (None: the initial
# version of the iteration), axes


@dataclass(frozen=True)
class Assignment:
    """One statement: `array[target] = expr` for every x in `shape` (and row i in `rows`)."""

    array: int  # carried value written
    target: tuple[Axis, ...]
    shape: tuple[int, ...]  # extents of x0, x1, ...
    rows: tuple[int, int] | None  # a row sweep's inner loop: start <= i < stop
    expr: str  # C for one element; R<k> stands for read k
    reads: tuple[Read, ...]
    place: tuple[int, int] = (0, 0)  # a sweep's statement: (group, position) in its row's
    # body: a row store is a group of its own, a nested loop's element stores one group
    descending: bool = False  # a row store reading its own row left of the stored columns


Inner = Callable[[Op], tuple[Graph, range] | None]  # a nested loop's body and fixed range


@dataclass(frozen=True)
class NestPlan:
    """The decision for one loop body: `rule` is `poly_time_tiling` (the tiled nest runs) or
    `rolled_driver` (it does not, `reason` says why)."""

    rule: str
    reason: str
    tree: ScheduleTree | None = None
    proof: str = ""
    source: str = ""
    expanded: tuple[bool, ...] = ()  # per carried array: two buffers (t mod 2)
    results: tuple[int, ...] = ()  # per carried value: the array holding it after the loop
    symbol: str = ""

    @property
    def runs(self) -> bool:
        """The nest runs in place of the rolled driver."""
        return self.rule in ("poly_time_tiling", "poly_sweep_nest")

    def __str__(self) -> str:
        text = f"polyhedral schedule [{self.rule}]: {self.reason}"
        if self.tree is not None:
            text += f"\nschedule tree:\n{_indent(str(self.tree))}"
        if self.proof:
            text += f"\nlegality proof:\n{_indent(self.proof)}"
        return text


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def plan_nest(graph: Graph, symbol: str, inner: Inner = lambda op: None) -> NestPlan:
    """The schedule of a loop body whose index `graph.inputs[0]` runs `T` times (see module);
    `inner`: the body and range of a nested loop the body runs (a row sweep)."""
    try:
        statements, dtype = _assignments(graph, inner)
    except (NotAScop, KeyError, TypeError, ValueError) as e:  # an op of a form not handled
        return NestPlan("rolled_driver", f"not a stencil SCoP: {e}")
    plan = _tiled(graph, symbol, statements, dtype)
    if statements[0].rows is None or plan.runs:
        return plan
    return _in_order(graph, symbol, statements, dtype, plan)


def _in_order(graph: Graph, symbol: str, statements: Seq[Assignment], dtype: np.dtype,
              tiled: NestPlan) -> NestPlan:
    """A row sweep's statements in their original order, one C loop nest (isl's AST of the
    SCoP's own schedule, which the check proves legal) in place of the rolled row driver,
    which runs each row's store and nested column loop as kernel calls of their own drivers;
    `tiled`: why the wavefront is not taken."""
    n = len(graph.outputs)
    expanded = (False,) * n  # a sweep updates its array in place
    scop = _scop(statements, graph, expanded, dtype)
    try:
        verdict = check(scop, scop.schedule, dependences(scop, "memory"))
        source = _source(scop, scop.schedule, n, expanded, graph, dtype, symbol, 1)
    except PolyError as e:
        return NestPlan("rolled_driver", f"the polyhedral layer gave up: {e}")
    if not verdict.legal:  # the in-place order is NumPy's by construction (_row_assignments)
        return NestPlan("rolled_driver", "the original order is not proven legal",
                        scop.schedule, str(verdict))
    wavefront = f"\nthe wavefront (not taken):\n{_indent(str(tiled))}" if tiled.tree else ""
    return NestPlan("poly_sweep_nest",
                    f"{len(statements)} statement(s) over (t, i, column) in their original "
                    "order, one C loop nest in place of the rolled row driver and its per-row "
                    "kernel calls (measured 10-120x faster on npbench's seidel-2d, 1.06-1.16x "
                    "on a sweep of row stores only; one thread); tiling the wavefront: "
                    f"{tiled.reason}", scop.schedule,
                    f"check of the original order: {verdict}{wavefront}", source, expanded,
                    tuple(graph.outputs.index(v) for v in graph.outputs), symbol)


def _tiled(graph: Graph, symbol: str, statements: Seq[Assignment], dtype: np.dtype
           ) -> NestPlan:
    """The time-tiled nest of `statements`, or the rolled driver and why not."""
    n = len(graph.outputs)
    expanded = _expanded(statements, n)
    nbytes = sum(v.nbytes * (2 if e else 1) for v, e in zip(graph.inputs[1:1 + n], expanded,
                                                             strict=True))
    floor = l2_bytes() if MIN_BYTES is None else MIN_BYTES
    if nbytes < floor:  # decided before any isl work: small loops keep their first call short
        return NestPlan("rolled_driver", f"the carried arrays ({nbytes:,} B) fit in L2 "
                        f"({floor:,} B): each time step already reads them from cache, so "
                        "tiling would only add loop overhead")
    threads = thread_count()
    scop = _scop(statements, graph, expanded, dtype)
    width = len(_iters(statements[0]))
    sizes = TILES.get(width, TILES[4][:1] * (width - 3) + TILES[4][1:])
    try:
        deps = dependences(scop, "memory")
        for factor, shifted in SKEWS:  # the untiled band first: one isl check per candidate
            skewed = check(scop, _skewed(scop, statements, factor, shifted), deps)
            if skewed.legal and skewed.bands[0].permutable:
                break
        else:
            return NestPlan("rolled_driver", f"no time skew of {_skews()} makes the band "
                            "permutable (the last candidate's verdict below), so no tiling of "
                            "it is legal", skewed.tree, _proof(deps, skewed))
        tiled = tile(scop, skewed.tree, (), sizes)
    except PolyError as e:
        return NestPlan("rolled_driver", f"the polyhedral layer gave up: {e}")
    proof = _proof(deps, tiled.verdict)
    if not tiled.verdict.legal:  # cannot happen for a permutable band (Irigoin-Triolet)
        return NestPlan("rolled_driver", f"tiling by {list(sizes)} is illegal", tiled.tree,
                        proof)
    if threads > 1:  # the tiles of one wavefront (sum of the first two tile coordinates)
        parallel = wavefront(scop, tiled.tree)  # are independent: its member 1 is coincident
        proof = _proof(deps, parallel.verdict)
        if not (parallel.verdict.legal and parallel.verdict.bands[0].parallel[1:2] == (True,)):
            return NestPlan("rolled_driver", f"the tiles' wavefront is not proven parallel, so "
                            f"the tiled nest would run on one thread and the rolled driver runs "
                            f"each step on {threads}", parallel.tree, proof)
        if width not in PARALLEL_WIDTHS:
            return NestPlan("rolled_driver", f"the tiles of one wavefront are proven parallel "
                            f"(below) but on {threads} threads the rolled driver (each step's "
                            "kernels on all threads) was faster for bands of this width: "
                            "jacobi-2d 0.69-0.93x, heat-3d 0.98-1.12x (benchmarks/loops.py "
                            "--threads 2; only 1-D stencils gained, 1.36-1.50x)",
                            parallel.tree, proof)
        tiled = parallel
    if statements[0].rows is not None and not TILE_SWEEPS:
        return NestPlan("rolled_driver", f"the wavefront tiled by {list(sizes)} is legal (the "
                        "proof below) but does not pay: it took 1.02-1.67x the in-order "
                        "nest's time (npbench's seidel-2d, N 50-1000, one thread; "
                        "benchmarks/loops.py --seidel): each sweep already reads rows i - 1, i, "
                        "i + 1 from cache", tiled.tree, proof)
    source = _source(scop, tiled.tree, n, expanded, graph, dtype, symbol, threads)
    skew = f"{factor}*t" + (" + k for statement k" if shifted else "")
    team = (f"; on {threads} threads: the tile band is a wavefront (tile t + tile x0, tile t, "
            "...), the tiles of one wavefront run in parallel (#pragma omp parallel for over "
            "tile t: isl proves that member carries no dependence)") if threads > 1 else ""
    return NestPlan("poly_time_tiling",
                    f"space loops skewed by {skew} (the first of {_skews()} that isl proves "
                    f"legal and permutable), tiled by {list(sizes)}: the carried arrays "
                    f"({nbytes:,} B) exceed L2 ({floor:,} B), so a tile reuses them from "
                    f"cache for up to {sizes[0]} time steps{team}", tiled.tree, proof, source,
                    expanded, tuple(graph.outputs.index(v) for v in graph.outputs), symbol)


def _skews() -> str:
    return ", ".join(f"{f}*t{' + k' if k else ''}" for f, k in SKEWS)


def _skewed(scop: Scop, statements: Seq[Assignment], factor: int, shifted: bool
            ) -> ScheduleTree:
    """S_k[t, x0, ...] -> [t, factor*t + x0 (+ k), ...], then the statements in body order; a
    row sweep S[t, i, x] -> [t, factor*t + i, 2*factor*t + i + c] (c = c0 + x the column:
    i's skew carried into the columns, whose dependences between rows i and i+1 go either
    way: a wavefront over t, i and the columns)."""
    if len({(len(st.shape), st.rows is None) for st in statements}) != 1:
        raise PolyError("the assignments have different ranks")

    def member(k: int, st: Assignment, it: str) -> str:
        shift = f" + {k}" if shifted else ""
        if it == "t":
            return "t"
        if it == "i" or st.rows is None:
            return f"{factor}*t + {it}{shift}"
        return f"{2 * factor}*t + i + {st.target[1][1]} + {it}{shift}"  # the column

    members = [[f"S{k}[{', '.join(_iters(st))}] -> [({member(k, st, _iters(st)[d])})]"
                for k, st in enumerate(statements)] for d in range(len(_iters(statements[0])))]
    band = multi_union_pw_aff("[T] -> [" + ", ".join(
        "{ " + "; ".join(m) + " }" for m in members) + "]")
    filters = tuple(Filter(isl.UnionSet.from_set(s.domain)) for s in scop.statements)
    return ScheduleTree(scop.domain, Band(band, Sequence(filters) if len(filters) > 1
                                          else Leaf()))


def _proof(deps: Dependences, verdict: Verdict) -> str:
    lines = []
    for kind in ("raw", "war", "waw"):
        m = deps.of(kind)
        if not m.is_empty():
            lines.append(f"{kind.upper()} dependences: {m.coalesce()}")
    lines.append("check (every dependence strictly lexicographically forward under the "
                 f"schedule above): {verdict}")
    return "\n".join(lines)


@cache
def l2_bytes() -> int:
    """The L2 cache's size of CPU 0 (1 MiB when the system does not say)."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "level").read_text().strip() == "2":
                text = (index / "size").read_text().strip()
                return int(text[:-1]) * {"K": 1024, "M": 1 << 20}[text[-1]]
        except (OSError, ValueError, KeyError):
            break
    return 1 << 20


# -- the body as statements ----------------------------------------------------------------------
def _assignments(graph: Graph, inner: Inner) -> tuple[list[Assignment], np.dtype]:
    n = len(graph.outputs)
    users = graph.users()
    dtypes = {v.dtype for v in graph.inputs[1:1 + n]}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    if dtype not in C_TYPES:
        raise NotAScop("the carried arrays are not all float32 or all float64")
    producer = graph.producer()
    sweep = _sweep(graph, producer, inner)  # checks what the nested loop reads
    if sweep is not None:
        return _row_assignments(*sweep, dtype, inner), dtype
    live = _live_inputs(graph)
    if any(v.id in live for v in graph.inputs[1 + n:]):
        raise NotAScop("the body reads loop invariants or rows of arrays")
    if graph.inputs[0].id in live:
        raise NotAScop("the body uses the loop index")
    carried = {v.id: k for k, v in enumerate(graph.inputs[1:1 + n])}
    order = {op.out.id: p for p, op in enumerate(graph.ops)}
    writers: dict[int, Op] = {}
    for k, out in enumerate(graph.outputs):
        if graph.outputs.index(out) < k and graph.inputs[1 + k].id not in users:
            continue  # `new = u.copy(); ...; u = new`: u and new leave the body as one value
        array, writer = _version(out, producer, carried)
        if array != k:
            raise NotAScop(f"carried value {k} is not an update of its own array")
        if writer is not None:
            writers[k] = writer
    if not writers:
        raise NotAScop("the body assigns into no carried array")
    ops = sorted(writers.values(), key=lambda op: order[op.out.id])
    index_of = {op.out.id: s for s, op in enumerate(ops)}
    statements = []
    for op in ops:
        attrs = dict(op.attrs)
        if set(attrs) != {"starts", "steps"}:
            raise NotAScop(f"an assignment of another form ({op})")
        value = op.inputs[1]
        reads: list[Read] = []

        def leaf(v: Value, reads: list[Read] = reads) -> str:
            op = producer.get(v.id)
            starts, steps, base = (0,) * v.ndim, (1,) * v.ndim, v
            if op is not None and op.kind == "slice":
                starts, steps, base = op.attr("starts"), op.attr("steps"), op.inputs[0]
            array, writer = _version(base, producer, carried)
            reads.append((array, None if writer is None else index_of[writer.out.id],
                          _x_axes(starts, steps)))
            return f"R{len(reads) - 1}"

        expr = _expression(value, value.shape, producer, leaf, dtype)
        statements.append(Assignment(_version(op.out, producer, carried)[0],
                                     _x_axes(attrs["starts"], attrs["steps"]), value.shape,
                                     None, expr, tuple(reads)))
    return statements, dtype


def _x_axes(starts: Seq[int], steps: Seq[int]) -> tuple[Axis, ...]:
    return tuple(("x", a, b) for a, b in zip(starts, steps, strict=True))


def _live_inputs(graph: Graph) -> set[int]:
    """The ids of the values the body's outputs depend on (an input not among them is unused:
    a nested loop's bound computed from it, then fixed)."""
    live = {v.id for v in graph.outputs}
    for op in reversed(graph.ops):
        if op.out.id in live:
            live.update(v.id for v in op.inputs)
    return live


def _sweep(graph: Graph, producer: dict[int, Op], inner: Inner
           ) -> tuple[Graph, range] | None:
    """A body that is one nested loop over the carried array (`for i in range(...):
    A[i, ...] = ...`): its body and range; None for a body of another form."""
    (out,) = graph.outputs if len(graph.outputs) == 1 else (None,)
    op = producer.get(out.id) if out is not None else None
    if op is None or op.kind != "extern" or op.inputs[0] != graph.inputs[1]:
        return None
    return _nested(op, inner)


def _nested(op: Op, inner: Inner, index: Value | None = None) -> tuple[Graph, range]:
    """The body and range of the nested loop `op` calls, which carries only the array (its
    first input) and reads no invariant but the enclosing loop's `index`."""
    found = inner(op)
    if found is None:
        raise NotAScop("the body calls something other than a nested loop of fixed range")
    body, rows = found
    live = _live_inputs(body)
    if rows.step != 1 or len(body.outputs) != 1 or len(body.inputs) != 1 + len(op.inputs) or \
            any(v.id in live and given != index
                for v, given in zip(body.inputs[2:], op.inputs[1:], strict=True)):
        raise NotAScop("the nested loop steps by more than 1, carries more than the array or "
                       "reads invariants other than the enclosing loop's index")
    return body, rows


def _row_assignments(body: Graph, rows: range, dtype: np.dtype, inner: Inner
                     ) -> list[Assignment]:
    """The statements of a row sweep's body, in order: masked row stores `A[i, c:c+w] =
    f(A[i + k, c':c'+w], ...)` (stax.loops.masked) and the element stores `A[i, j] = f(A[i + k,
    j + d], ...)` of a nested loop over the columns j, each reading the array as the statements
    before it left it (all update it in place)."""
    index, array = body.inputs[:2]
    producer = body.producer()
    groups: list[list[Assignment]] = []
    v = body.outputs[0]
    while v != array:
        op = producer.get(v.id)
        if op is not None and op.kind == "setitem":
            groups.insert(0, [_row_store(op, producer, index, rows, dtype)])
        elif op is not None and op.kind == "extern":
            columns, span = _nested(op, inner, index)
            i = next((w for w, given in zip(columns.inputs[2:], op.inputs[1:], strict=True)
                      if given == index), None)
            groups.insert(0, _element_stores(columns, span, i, rows, dtype))
        else:
            raise NotAScop(f"{v} is neither a row store nor a nested loop over the columns")
        v = op.inputs[0]
    return [dataclasses.replace(st, place=(g, k)) for g, group in enumerate(groups)
            for k, st in enumerate(group)]


def _row_store(store: Op, producer: dict[int, Op], index: Value, rows: range,
               dtype: np.dtype) -> Assignment:
    """`A[i, c:c+w] = f(A[i + k, c':c'+w], ...)` as a masked store of a row (stax.loops)."""
    prev = store.inputs[0]
    where = producer.get(store.inputs[1].id)
    if where is None or where.kind != "where" or prev.ndim != 2:
        raise NotAScop("the nested loop's body is not one row store into a 2-d array")
    starts, steps = store.attr("starts"), store.attr("steps")
    kept = producer.get(where.inputs[2].id)
    if tuple(steps) != (1, 1) or starts[0] != 0 or kept is None or kept.kind != "slice" or \
            kept.inputs[0] != prev or kept.attr("starts") != starts:
        raise NotAScop("the row store is not a contiguous slice of row i")
    if _selected(where.inputs[0], producer) != {0: index}:
        raise NotAScop("the row store is not at the loop index")
    value = _unbroadcast(where.inputs[1], producer, 1)
    reads: list[Read] = []
    target = (("i", 0), ("x", starts[1], 1))

    def leaf(v: Value) -> str:
        op = producer.get(v.id)
        sliced = producer.get(op.inputs[0].id) if op is not None and op.kind == "take" else None
        if sliced is None or sliced.kind != "slice" or sliced.inputs[0] != prev or \
                op.attr("axes") != (0,) or tuple(sliced.attr("steps")) != (1, 1):
            raise NotAScop(f"{v} is not a slice of a row of the array")
        axes = (("i", _offset(op.inputs[1], producer, index)), ("x", sliced.attr("starts")[1], 1))
        reads.append((0, None, axes))
        return f"R{len(reads) - 1}"

    expr = _expression(value, value.shape, producer, leaf, dtype)
    # NumPy reads the row before it stores it: in place, the columns run away from the ones
    # the row reads (a read right of a column is stored after it in ascending order)
    shifts = {axes[1][1] - starts[1] for _, _, axes in reads if axes[0] == ("i", 0)}
    if min(shifts, default=0) < 0 < max(shifts, default=0):
        raise NotAScop("the row's update reads its own row at columns on both sides of the ones "
                       "it stores (NumPy reads them before the store; no in-place column order "
                       "does: a temporary row is not built)")
    return Assignment(0, target, value.shape, (rows.start, rows.stop), expr, tuple(reads),
                      descending=min(shifts, default=0) < 0)


def _element_stores(body: Graph, columns: range, i: Value | None, rows: range,
                    dtype: np.dtype) -> list[Assignment]:
    """A nested loop's masked element stores `A[i, j] = f(A[i + k, j + d], ...)` (i the
    enclosing row loop's index, `i` here), in order."""
    j, array = body.inputs[:2]
    producer = body.producer()
    out: list[Assignment] = []
    v = body.outputs[0]
    while v != array:
        store = producer.get(v.id)
        where = producer.get(store.inputs[1].id) if store is not None and \
            store.kind == "setitem" else None
        if where is None or where.kind != "where" or where.inputs[2] != store.inputs[0] or \
                tuple(store.attr("starts")) != (0, 0) or tuple(store.attr("steps")) != (1, 1) \
                or store.inputs[0].ndim != 2 or i is None or \
                _selected(where.inputs[0], producer) != {0: i, 1: j}:
            raise NotAScop("the nested loop's body is not element stores at [i, j]")
        prev = store.inputs[0]
        reads: list[Read] = []

        def leaf(v: Value, prev: Value = prev, reads: list[Read] = reads) -> str:
            op = producer.get(v.id)
            if op is None or op.kind != "take" or op.inputs[0] != prev or \
                    op.attr("axes") != (0, 1):
                raise NotAScop(f"{v} is not an element of the array")
            reads.append((0, None, (("i", _offset(op.inputs[1], producer, i)),
                                    ("x", columns.start + _offset(op.inputs[2], producer, j),
                                     1))))
            return f"R{len(reads) - 1}"

        value = _unbroadcast(where.inputs[1], producer, 0)
        expr = _expression(value, (), producer, leaf, dtype)
        out.insert(0, Assignment(0, (("i", 0), ("x", columns.start, 1)), (len(columns),),
                                 (rows.start, rows.stop), expr, tuple(reads)))
        v = prev
    return out


def _offset(v: Value, producer: dict[int, Op], index: Value) -> int:
    """k for a row index `i + k` (i the loop index)."""
    if v == index:
        return 0
    op = producer.get(v.id)
    const = producer.get(op.inputs[1].id) if op is not None and op.kind == "elementwise" and \
        op.inputs[0] == index and len(op.inputs) == 2 else None
    if const is None or const.kind != "const" or op.attr("fn") not in ("add", "subtract"):
        raise NotAScop(f"row index {v} is not the loop index plus a constant")
    k = int(const.attr("value"))
    return k if op.attr("fn") == "add" else -k


def _selected(cond: Value, producer: dict[int, Op]) -> dict[int, Value]:
    """{axis: index} of a store's mask `arange(n) == i` put on its axis (reshape, broadcast),
    and-ed with the other axes' (`stax.loops.masked`)."""
    op = producer.get(cond.id)
    if op is not None and op.kind == "elementwise" and op.attr("fn") == "bitwise_and":
        first, second = (_selected(x, producer) for x in op.inputs)
        if first.keys() & second.keys():
            raise NotAScop("a store's mask selects an axis twice")
        return first | second
    axis = 0
    while op is not None and op.kind in ("broadcast", "reshape"):
        if op.kind == "reshape":
            axes = [d for d, n in enumerate(op.attr("shape")) if n != 1]
            if len(axes) != 1:
                raise NotAScop("a store's mask is not a row or column mask")
            axis = axes[0]
        op = producer.get(op.inputs[0].id)
    if op is None or op.kind != "elementwise" or op.attr("fn") != "equal":
        raise NotAScop("a store's mask is not `arange(n) == index`")
    rows, at = (producer.get(v.id) for v in op.inputs)
    if rows is None or rows.kind != "constant_array" or at is None or at.kind != "broadcast" or \
            not np.array_equal(getattr(rows.attr("data"), "array", None),
                               np.arange(op.out.shape[0])):
        raise NotAScop("a store's mask is not `arange(n) == index`")
    return {axis: at.inputs[0]}


def _unbroadcast(v: Value, producer: dict[int, Op], ndim: int) -> Value:
    """The row (`ndim` 1) or element (0) a masked store broadcasts over the array
    (`broadcast(reshape(value))`)."""
    op = producer.get(v.id)
    if op is None or op.kind != "broadcast":
        raise NotAScop("the stored value is not broadcast over the array")
    shaped = producer.get(op.inputs[0].id)
    if shaped is None or shaped.kind != "reshape" or shaped.inputs[0].ndim != ndim:
        raise NotAScop(f"the stored value is not a {ndim}-d value")
    return shaped.inputs[0]


def _version(v: Value, producer: dict[int, Op], carried: dict[int, int]
             ) -> tuple[int, Op | None]:
    """(carried array, the assignment that made this version or None: the initial one)."""
    while v.id not in carried:
        op = producer.get(v.id)
        if op is None or not (op.kind == "setitem" or op.kind == "elementwise" and
                              op.attr("fn") == "positive" and op.inputs[0].shape == v.shape):
            raise NotAScop(f"{v} is not an array the loop carries or assigns into")
        if op.kind == "setitem":
            base, writer = _version(op.inputs[0], producer, carried)
            if writer is not None:
                raise NotAScop("an array is assigned into twice in one iteration")
            return base, op
        v = op.inputs[0]
    return carried[v.id], None


def _expression(v: Value, shape: tuple[int, ...], producer: dict[int, Op],
                leaf: Callable[[Value], str], dtype: np.dtype) -> str:
    """C for one element of `v` (a value of the assigned slice's shape, or a 0-d constant);
    `leaf` gives the C of a read of an array. Elementwise ops are spelled as the op table
    spells them for the kernels (`stax.ops`), over values of the arrays' dtype or bool
    (comparisons, `where` conditions)."""
    op = producer.get(v.id)
    if v.dtype not in (dtype, np.dtype(bool)):
        raise NotAScop(f"{v} is {v.dtype}, the arrays {dtype}")
    if op is not None and op.kind == "const" and v.shape == () and v.dtype == dtype:
        value = float(op.attr("value"))
        if not math.isfinite(value):
            raise NotAScop("a constant that is not finite")
        return f"(({C_TYPES[dtype]}){value!r})"
    if op is not None and op.kind == "broadcast" and op.inputs[0].shape == ():
        return _expression(op.inputs[0], (), producer, leaf, dtype)
    if v.shape != shape:
        raise NotAScop(f"{v} has shape {v.shape}, the assigned slice {shape}")
    args = [_expression(x, shape, producer, leaf, dtype) for x in op.inputs] \
        if op is not None and op.kind in ("elementwise", "where") else []
    if op is not None and op.kind == "where" and op.inputs[0].dtype == bool:
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if op is not None and op.kind == "elementwise":
        entry = by_name(op.attr("fn"))
        kind = op.inputs[0].dtype.kind
        template = entry.cpp.template(kind)  # a float or bool operand
        if entry.flags or "{bad}" in template:
            raise NotAScop(f"operation {entry.name} (it sets error flags)")
        return template.format(a0=args[0], a1=args[-1], t=C_TYPES.get(op.inputs[0].dtype, "bool"),
                               f="f" if kind == "f" and op.inputs[0].dtype == np.float32 else "",
                               const="")
    if v.dtype != dtype:
        raise NotAScop(f"{v} is a {v.dtype} value the SCoP statements do not compute")
    return leaf(v)


def _expanded(statements: Seq[Assignment], n: int) -> tuple[bool, ...]:
    """Per array: two buffers, where updating it in place would change what a read sees."""
    out = [False] * n
    for s, st in enumerate(statements):
        for array, writer, axes in st.reads:
            if writer is not None or st.rows is not None:  # a row sweep updates in place
                continue
            own = next((w for w, other in enumerate(statements) if other.array == array), None)
            if own is not None and (own < s or own == s and axes != st.target):
                out[array] = True
    return tuple(out)


# -- the scop and its code -----------------------------------------------------------------------
def _iters(st: Assignment) -> list[str]:
    """The statement's iterators: t, the row i of a sweep, the elements x0, x1, ..."""
    return ["t", *(["i"] if st.rows is not None else []), *(f"x{d}" for d in range(len(st.shape)))]


def _positions(axes: Seq[Axis]) -> list[tuple[str, int, int]]:
    """Per axis (iterator, offset, coefficient): the index is offset + coefficient*iterator."""
    out, d = [], 0
    for axis in axes:
        if axis[0] == "i":
            out.append(("i", axis[1], 1))
        else:
            out.append((f"x{d}", axis[1], axis[2]))
            d += 1
    return out


def _access(head: str, array: int, new: bool, axes: Seq[Axis], expanded: Seq[bool]) -> str:
    phase = ["(t + 1) mod 2" if new else "t mod 2"] if expanded[array] else []
    index = [f"{a} + {b}*{it}" for it, a, b in _positions(axes)]
    return f"{head} -> A{array}[{', '.join(phase + index)}]"


def _scop(statements: Seq[Assignment], graph: Graph, expanded: Seq[bool],
          dtype: np.dtype) -> Scop:
    domains, reads, writes, order = [], [], [], []
    for s, st in enumerate(statements):
        its = _iters(st)
        head = f"S{s}[{', '.join(its)}]"
        rows = [f"{st.rows[0]} <= i < {st.rows[1]}"] if st.rows is not None else []
        bounds = " and ".join(["0 <= t < T", *rows, *(f"0 <= x{d} < {e}" for d, e in
                                                        enumerate(st.shape))])
        domains.append(f"{head} : {bounds}")
        group, tail = (st.place[0], f", {st.place[1]}") if st.rows is not None else (s, "")
        sign = "-" if st.descending else ""
        order.append(f"{head} -> [{', '.join([*its[:len(its) - len(st.shape)], str(group)])}"
                     f"{''.join(f', {sign}x{d}' for d in range(len(st.shape)))}{tail}]")
        writes.append(_access(head, st.array, True, st.target, expanded))
        reads += [_access(head, a, w is not None, axes, expanded) for a, w, axes in st.reads]
    scop = Scop.from_isl(*(f"[T] -> {{ {'; '.join(x)} }}" for x in (domains, reads, writes,
                                                                      order)))
    bodies = {f"S{s}": _body(st, graph, expanded) for s, st in enumerate(statements)}
    return dataclasses.replace(scop, statements=tuple(
        dataclasses.replace(s, body=bodies[s.name]) for s in scop.statements))


def _element(array: int, new: bool, axes: Seq[Axis], graph: Graph, expanded: Seq[bool]
             ) -> str:
    """C for the element of carried array `array` at `axes` (macro arguments in parentheses)."""
    full = graph.inputs[1 + array].shape
    terms = [f"({a} + {b}*(int64_t)({it}))*{math.prod(full[d + 1:])}"
             for d, (it, a, b) in enumerate(_positions(axes))]
    if expanded[array]:
        terms.insert(0, f"(((t) + {int(new)}) % 2)*{math.prod(full)}")
    return f"A{array}[{' + '.join(terms) or '0'}]"


def _body(st: Assignment, graph: Graph, expanded: Seq[bool]) -> str:
    expr = st.expr
    for k in range(len(st.reads) - 1, -1, -1):  # R10 before R1
        array, writer, axes = st.reads[k]
        expr = expr.replace(f"R{k}", _element(array, writer is not None, axes, graph, expanded))
    return f"{_element(st.array, True, st.target, graph, expanded)} = {expr};"


def _source(scop: Scop, tree: ScheduleTree, n: int, expanded: Seq[bool], graph: Graph,
            dtype: np.dtype, symbol: str, threads: int) -> str:
    ctype = C_TYPES[dtype]
    pointers = "\n".join(f"    {ctype}* __restrict__ A{k} = ({ctype}*)arrays[{k}];"
                         for k in range(n))
    last = tree.bands()[-1][1]
    loops = _simd(codegen(scop, tree), bool(last.coincident) and last.coincident[-1], threads)
    return ("#include <cstdint>\n"
            "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))\n"
            "#define min(x, y) ((x) < (y) ? (x) : (y))\n"
            "#define max(x, y) ((x) > (y) ? (x) : (y))\n"
            f"// {symbol}: the schedule of stax.poly.loop_nest, one macro per statement\n"
            f'extern "C" void {symbol}(void** arrays, int64_t T, int32_t* flags) {{\n'
            f"{pointers}\n" + _indent(_indent(_polled(loops))) + "\n}\n")


def _polled(loops: str) -> str:
    """Ctrl-C [A8]: the second loop (over the tiles of one band of time steps) skips its tiles
    once the interrupt bit is set (`stax_interrupted`, the runtime header's)."""
    lines = loops.splitlines()
    heads = [k for k, line in enumerate(lines) if line.lstrip().startswith("for (")]
    k = heads[min(1, len(heads) - 1)]
    line = lines[k]
    brace = line.endswith("{")
    head = line[:-1].rstrip() if brace else line
    lines[k] = head + " if (!stax_interrupted(flags))" + (" {" if brace else "")
    return "\n".join(lines)


def _simd(loops: str, innermost_parallel: bool, threads: int) -> str:
    """With `threads` > 1 the first `omp parallel for` (codegen's, on the tile wavefront's
    parallel member) runs the wavefront's tiles on that many threads; the others (on loops
    inside a tile: a thread team per tile row) are dropped; where the innermost band's last
    member is parallel (coincident: independent iterations), each innermost loop gets `omp
    simd`."""
    pragma = "#pragma omp parallel for"
    lines = loops.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip() == pragma), None)
    # [BUSY] at most the launch team (nest_runner sets the calling thread's nthreads-var to
    # the cores idle now, stax.tiling.threads.team): on a busy machine a thread waiting for a
    # core would make each wavefront's barrier wait a scheduler time slice
    team = f"num_threads(min({threads}, omp_get_max_threads()))"
    lines = [line.replace(pragma, f"{pragma} schedule(dynamic, 1) {team}")
             if k == first and threads > 1 else line for k, line in enumerate(lines)
             if line.strip() != pragma or k == first and threads > 1]
    out = []
    for k, line in enumerate(lines):
        depth = len(line) - len(line.lstrip())
        if innermost_parallel and line.lstrip().startswith("for "):
            body = []
            for later in lines[k + 1:]:
                if len(later) - len(later.lstrip()) <= depth:
                    break
                body.append(later)
            if not any(b.lstrip().startswith("for ") for b in body):
                out.append(" " * depth + "#pragma omp simd")
        out.append(line)
    return "\n".join(out)


def nest_runner(plan: NestPlan, library: ctypes.CDLL
                ) -> Callable[[Seq[np.ndarray], range], list[np.ndarray]]:
    """The runner of a tiled nest compiled in `library`: it updates the carried arrays (the
    loop's own copies, C-contiguous) and returns them, an expanded one from the buffer of step
    T. Ctrl-C stops the nest between tiles (KeyboardInterrupt) [A8]."""
    from stax.runtime.fast import interruptible
    from stax.runtime.wrapper import ANY_FLAG, check_flags, new_flags
    from stax.tiling.threads import team

    fn = getattr(library, plan.symbol)
    fn.argtypes, fn.restype = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p), None
    n = len(plan.expanded)

    def run(arrays: Seq[np.ndarray], trip: range) -> list[np.ndarray]:
        buffers = []
        for a, twice in zip(arrays[:n], plan.expanded, strict=True):
            if twice:
                b = np.empty((2, *a.shape), a.dtype)
                b[0] = a
                b[1] = a
                a = b
            buffers.append(a)
        table = (ctypes.c_void_p * n)(*(b.ctypes.data for b in buffers))
        flags = new_flags()
        with interruptible(ctypes.addressof(flags), team(thread_count())):
            fn(table, len(trip), ctypes.addressof(flags))
        if flags[ANY_FLAG]:
            check_flags(flags)
        results = [b[len(trip) % 2] if twice else b
                   for b, twice in zip(buffers, plan.expanded, strict=True)]
        return [results[k] for k in plan.results]

    return run
