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

`plan_nest` builds that `Scop`, lets isl's scheduler (`auto_schedule`: Pluto's algorithm, which
skews the time loop) find a permutable band, tiles it, proves the tiled schedule legal with the
unified check (every dependence strictly forward) and generates its C loop nest
(`stax.poly.codegen`). The tiled nest replaces the rolled C driver only where it pays: arrays
larger than the L2 cache (a rolled time step then streams every array from memory; a tile
reuses them across `TIME_TILE` steps). Every choice is a `NestPlan` with a rule name and
reason, shown by `stax.explain` with the schedule tree and the proof.
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
from stax.poly._isl import PolyError, multi_union_pw_aff
from stax.poly.check import Verdict, check
from stax.poly.codegen import codegen
from stax.poly.deps import Dependences, dependences
from stax.poly.model import Scop
from stax.poly.transform import tile
from stax.poly.tree import Band, Filter, Leaf, ScheduleTree, Sequence

BINARY = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/"}
UNARY = {"negative": "-", "positive": ""}
C_TYPES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float"}
TILES = {2: (32, 2048), 3: (32, 64, 2048), 4: (8, 8, 16, 256)}  # by band width (time first)
SKEWS = ((1, False), (1, True), (2, False), (2, True), (3, True), (4, True))  # tried in order
MIN_BYTES: int | None = None  # arrays below this stay rolled (None: the L2 cache's size)


class NotAScop(Exception):
    """Why a loop body is not a stencil SCoP (the rolled driver runs it)."""


@dataclass(frozen=True)
class Assignment:
    """One statement: `array[starts + steps*x] = expr` over the slice's shape."""

    op: Op
    array: int  # carried value written
    starts: tuple[int, ...]
    steps: tuple[int, ...]
    shape: tuple[int, ...]
    expr: str  # C over (t) and (x0), (x1), ...: reads as R<k>(...) placeholders resolved later
    reads: tuple[tuple[int, int | None, tuple[int, ...], tuple[int, ...]], ...]
    # (array, writer statement or None for the iteration's initial value, starts, steps)


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
    def tiled(self) -> bool:
        return self.rule == "poly_time_tiling"

    def __str__(self) -> str:
        text = f"polyhedral schedule [{self.rule}]: {self.reason}"
        if self.tree is not None:
            text += f"\nschedule tree:\n{_indent(str(self.tree))}"
        if self.proof:
            text += f"\nlegality proof:\n{_indent(self.proof)}"
        return text


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def plan_nest(graph: Graph, symbol: str) -> NestPlan:
    """The schedule of a loop body whose index `graph.inputs[0]` runs `T` times (see module)."""
    try:
        statements, dtype = _assignments(graph)
    except (NotAScop, KeyError, TypeError, ValueError) as e:  # an op of a form not handled
        return NestPlan("rolled_driver", f"not a stencil SCoP: {e}")
    n = len(graph.outputs)
    expanded = _expanded(statements, n)
    nbytes = sum(v.nbytes * (2 if e else 1) for v, e in zip(graph.inputs[1:], expanded,
                                                             strict=True))
    floor = l2_bytes() if MIN_BYTES is None else MIN_BYTES
    if nbytes < floor:  # decided before any isl work: small loops keep their first call short
        return NestPlan("rolled_driver", f"the carried arrays ({nbytes:,} B) fit in L2 "
                        f"({floor:,} B): each time step already reads them from cache, so "
                        "tiling would only add loop overhead")
    scop = _scop(statements, graph, expanded, dtype)
    width = 1 + len(statements[0].shape)
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
    source = _source(scop, tiled.tree, n, expanded, graph, dtype, symbol)
    skew = f"{factor}*t" + (" + k for statement k" if shifted else "")
    return NestPlan("poly_time_tiling",
                    f"space loops skewed by {skew} (the first of {_skews()} that isl proves "
                    f"legal and permutable), tiled by {list(sizes)}: the carried arrays "
                    f"({nbytes:,} B) exceed L2 ({floor:,} B), so a tile reuses them from "
                    f"cache for up to {sizes[0]} time steps", tiled.tree, proof, source,
                    expanded, tuple(graph.outputs.index(v) for v in graph.outputs), symbol)


def _skews() -> str:
    return ", ".join(f"{f}*t{' + k' if k else ''}" for f, k in SKEWS)


def _skewed(scop: Scop, statements: Seq[Assignment], factor: int, shifted: bool
            ) -> ScheduleTree:
    """S_k[t, x0, ...] -> [t, factor*t + x0 (+ k), ...], then the statements in body order."""
    if len({len(st.shape) for st in statements}) != 1:
        raise PolyError("the assignments have different ranks")
    members = [[f"S{k}[{', '.join(['t', *_iters(st.shape)])}] -> "
                f"[({'t' if d < 0 else f'{factor}*t + x{d}' + (f' + {k}' if shifted else '')})]"
                for k, st in enumerate(statements)] for d in range(-1, len(statements[0].shape))]
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
def _assignments(graph: Graph) -> tuple[list[Assignment], np.dtype]:
    n = len(graph.outputs)
    users = graph.users()
    if len(graph.inputs) != 1 + n:
        raise NotAScop("the body reads loop invariants or rows of arrays")
    if graph.inputs[0].id in users:
        raise NotAScop("the body uses the loop index")
    dtypes = {v.dtype for v in graph.inputs[1:]}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    if dtype not in C_TYPES:
        raise NotAScop("the carried arrays are not all float32 or all float64")
    producer = graph.producer()
    carried = {v.id: k for k, v in enumerate(graph.inputs[1:])}
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
        reads: list[tuple[int, int | None, tuple[int, ...], tuple[int, ...]]] = []
        expr = _expression(value, value.shape, producer, carried, index_of, reads, dtype)
        statements.append(Assignment(op, _version(op.out, producer, carried)[0],
                                     tuple(attrs["starts"]), tuple(attrs["steps"]),
                                     value.shape, expr, tuple(reads)))
    return statements, dtype


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
                carried: dict[int, int], index_of: dict[int, int], reads: list,
                dtype: np.dtype) -> str:
    """C for one point of `v` (a value of the assigned slice's shape, or a 0-d constant)."""
    op = producer.get(v.id)
    if v.dtype != dtype:
        raise NotAScop(f"{v} is {v.dtype}, the arrays {dtype}")
    if op is not None and op.kind == "const" and v.shape == ():
        value = float(op.attr("value"))
        if not math.isfinite(value):
            raise NotAScop("a constant that is not finite")
        return f"(({C_TYPES[dtype]}){value!r})"
    if op is not None and op.kind == "broadcast" and op.inputs[0].shape == ():
        return _expression(op.inputs[0], (), producer, carried, index_of, reads, dtype)
    if v.shape != shape:
        raise NotAScop(f"{v} has shape {v.shape}, the assigned slice {shape}")
    if op is not None and op.kind == "elementwise":
        fn = op.attr("fn")
        args = [_expression(x, shape, producer, carried, index_of, reads, dtype)
                for x in op.inputs]
        if fn in BINARY and len(args) == 2:
            return f"({args[0]} {BINARY[fn]} {args[1]})"
        if fn in UNARY and len(args) == 1:
            return f"({UNARY[fn]}{args[0]})"
        if fn != "positive":
            raise NotAScop(f"operation {fn} (the SCoP statements know + - * / only)")
    starts, steps, base = (0,) * len(shape), (1,) * len(shape), v
    if op is not None and op.kind == "slice":
        starts, steps, base = tuple(op.attr("starts")), tuple(op.attr("steps")), op.inputs[0]
    array, writer = _version(base, producer, carried)
    reads.append((array, None if writer is None else index_of[writer.out.id], starts, steps))
    return f"R{len(reads) - 1}"


def _expanded(statements: Seq[Assignment], n: int) -> tuple[bool, ...]:
    """Per array: two buffers, where updating it in place would change what a read sees."""
    out = [False] * n
    for s, st in enumerate(statements):
        for array, writer, starts, steps in st.reads:
            if writer is not None:
                continue
            own = next((w for w, other in enumerate(statements) if other.array == array), None)
            if own is not None and (own < s or own == s and (starts, steps) != (st.starts,
                                                                                  st.steps)):
                out[array] = True
    return tuple(out)


# -- the scop and its code -----------------------------------------------------------------------
def _iters(shape: tuple[int, ...]) -> list[str]:
    return [f"x{d}" for d in range(len(shape))]


def _index(starts: Seq[int], steps: Seq[int], shape: tuple[int, ...]) -> list[str]:
    return [f"{a} + {b}*x{d}" if b >= 0 else f"{a} - {-b}*x{d}"
            for d, (a, b) in enumerate(zip(starts, steps, strict=True))] or ["0"] * len(shape)


def _phase(new: bool) -> str:
    return "(t + 1) mod 2" if new else "t mod 2"


def _access(head: str, st: Assignment, array: int, new: bool, starts: Seq[int], steps: Seq[int],
            expanded: Seq[bool]) -> str:
    phase = [_phase(new)] if expanded[array] else []
    return f"{head} -> A{array}[{', '.join(phase + _index(starts, steps, st.shape))}]"


def _scop(statements: Seq[Assignment], graph: Graph, expanded: Seq[bool],
          dtype: np.dtype) -> Scop:
    domains, reads, writes, order = [], [], [], []
    for s, st in enumerate(statements):
        xs = _iters(st.shape)
        head = f"S{s}[{', '.join(['t', *xs])}]"
        bounds = " and ".join(["0 <= t < T", *(f"0 <= {x} < {e}" for x, e in
                                               zip(xs, st.shape, strict=True))])
        domains.append(f"{head} : {bounds}")
        order.append(f"{head} -> [t, {s}, {', '.join(xs) or '0'}]")

        writes.append(_access(head, st, st.array, True, st.starts, st.steps, expanded))
        reads += [_access(head, st, a, w is not None, b, c, expanded) for a, w, b, c in st.reads]
    scop = Scop.from_isl(*(f"[T] -> {{ {'; '.join(x)} }}" for x in (domains, reads, writes,
                                                                      order)))
    bodies = {f"S{s}": _body(st, graph, expanded) for s, st in enumerate(statements)}
    return dataclasses.replace(scop, statements=tuple(
        dataclasses.replace(s, body=bodies[s.name]) for s in scop.statements))


def _element(array: int, new: bool, starts: Seq[int], steps: Seq[int],
             shape: tuple[int, ...], graph: Graph, expanded: Seq[bool]) -> str:
    """C for the element of carried array `array` at slice starts + steps*x."""
    full = graph.inputs[1 + array].shape
    strides = [math.prod(full[d + 1:]) for d in range(len(full))]
    terms = [f"({a} + {b}*(int64_t)(x{d}))*{st}" for d, (a, b, st) in
             enumerate(zip(starts, steps, strides, strict=True))]
    if expanded[array]:
        terms.insert(0, f"(((t) + {int(new)}) % 2)*{math.prod(full)}")
    return f"A{array}[{' + '.join(terms) or '0'}]"


def _body(st: Assignment, graph: Graph, expanded: Seq[bool]) -> str:
    expr = st.expr
    for k in range(len(st.reads) - 1, -1, -1):  # R10 before R1
        array, writer, starts, steps = st.reads[k]
        expr = expr.replace(f"R{k}", _element(array, writer is not None, starts, steps,
                                              st.shape, graph, expanded))
    target = _element(st.array, True, st.starts, st.steps, st.shape, graph, expanded)
    return f"{target} = {expr};"


def _source(scop: Scop, tree: ScheduleTree, n: int, expanded: Seq[bool], graph: Graph,
            dtype: np.dtype, symbol: str) -> str:
    ctype = C_TYPES[dtype]
    pointers = "\n".join(f"    {ctype}* __restrict__ A{k} = ({ctype}*)arrays[{k}];"
                         for k in range(n))
    last = tree.bands()[-1][1]
    loops = _simd(codegen(scop, tree), bool(last.coincident) and last.coincident[-1])
    return ("#include <cstdint>\n"
            "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))\n"
            "#define min(x, y) ((x) < (y) ? (x) : (y))\n"
            "#define max(x, y) ((x) > (y) ? (x) : (y))\n"
            f"// {symbol}: the tiled schedule (stax.poly.loop_nest), one macro per statement\n"
            f'extern "C" void {symbol}(void** arrays, int64_t T) {{\n{pointers}\n'
            + _indent(_indent(loops)) + "\n}\n")


def _simd(loops: str, innermost_parallel: bool) -> str:
    """One thread: codegen's `omp parallel for` (on a loop inside a tile, it would open a
    thread team per tile row) is dropped; where the innermost band's last member is parallel
    (coincident: independent iterations), each innermost loop gets `omp simd`."""
    lines = [line for line in loops.splitlines() if line.strip() != "#pragma omp parallel for"]
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


def nest_runner(plan: NestPlan, isa: str
                ) -> Callable[[Seq[np.ndarray], range], list[np.ndarray]]:
    """Compile the tiled nest; the runner updates the carried arrays (the loop's own copies,
    C-contiguous) and returns them, an expanded one from the buffer of step T."""
    from stax.runtime.compiler import compile_source

    fn = getattr(compile_source(plan.source, isa).library, plan.symbol)
    fn.argtypes, fn.restype = (ctypes.c_void_p, ctypes.c_int64), None
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
        fn(table, len(trip))
        results = [b[len(trip) % 2] if twice else b
                   for b, twice in zip(buffers, plan.expanded, strict=True)]
        return [results[k] for k in plan.results]

    return run
