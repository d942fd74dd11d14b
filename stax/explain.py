"""`stax.explain(fn, *args)`: every decision of the pipeline, printable and inspectable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stax.api import Compilation, Jitted, jit
from stax.backends import get_backend
from stax.frontend.breaks import Break, run_segmented
from stax.frontend.trace import GraphBreak
from stax.graph import Graph
from stax.ir.printer import format_program
from stax.ir.sym import ShapeEnv, Sym, env_of, is_data
from stax.ir.validate import Problem, validate
from stax.report.progress import progress
from stax.runtime.compiler import isa_level
from stax.sched.deps import SchedulerNode
from stax.sched.exact import MAX_EXACT_NODES, FBuffer, FusionProblem, fusion_cost, solve_exact
from stax.sched.fusion import can_fuse, log_lines, single
from stax.sched.scheduler import Schedule
from stax.sched.verify import verify_schedule
from stax.tiling.autofuse import KernelTiling, kernel_tiling


@dataclass(frozen=True)
class OptimalityGap:
    greedy_cost: int
    optimal_cost: int
    optimal: bool
    partition: tuple[frozenset[str], ...]

    def __str__(self) -> str:
        gap = self.greedy_cost - self.optimal_cost
        status = "optimal" if self.optimal else "best found within the time limit"
        return (f"greedy fusion moves {self.greedy_cost} bytes; the exact solver's partition "
                f"({status}) moves {self.optimal_cost} bytes; gap {gap} bytes "
                f"({'{'}{'}, {'.join('+'.join(sorted(b)) for b in self.partition)}{'}'})")


@dataclass(frozen=True)
class Report:
    compilation: Compilation
    gap: OptimalityGap | None
    verification: Any  # a poly Verdict when verify=True
    # Graph breaks (A2): what runs in NumPy; the compilation is then the last segment's.
    breaks: tuple[Break, ...] = ()
    name: str = ""  # the function's name, for the HTML page's title
    shapes: tuple[tuple[int, ...], ...] = ()  # the explained call's argument shapes
    replay: str = ""  # [BRK] with breaks: whether warm calls replay a tape (stax.frontend.replay)
    isa: str = ""  # [VEC] the ISA level the kernels were compiled for

    def to_html(self, path: str | Path | None = None) -> str:
        """The report as one self-contained HTML page (`stax.report`); written to `path` if
        given."""
        from stax.report.page import render

        page = render(self, self.name)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        """Jupyter: the page in an iframe, so its styles and script stay out of the notebook."""
        from html import escape

        return (f'<iframe srcdoc="{escape(self.to_html())}" title="stax explain" '
                'style="width: 100%; height: 820px; border: 1px solid #d8dde6"></iframe>')

    @property
    def schedule(self) -> Schedule:
        return self.compilation.schedule

    @property
    def nodes(self) -> tuple[SchedulerNode, ...]:
        return self.schedule.nodes

    @property
    def kernels(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.schedule.kernels)

    @property
    def code(self) -> str:
        prelude = get_backend(self.compilation.backend).prelude  # the runtime header
        return self.compilation.program.cpp[len(prelude):].strip()

    @property
    def wrapper(self) -> str:
        return self.compilation.program.wrapper

    @property
    def loop_ir(self) -> str:
        """The lowered program as text (`stax.ir.printer`)."""
        return format_program(self.compilation.lowered.program)

    @property
    def ir_problems(self) -> tuple[Problem, ...]:
        """What `stax.ir.validate` finds wrong with the lowered program (empty: valid)."""
        return validate(self.compilation.lowered.program)

    @property
    def vectorization(self) -> str:
        """[VEC] Each innermost loop of the generated code: asked to vectorize or not, vectorized
        or not, and why (the backend's report: g++'s remarks for the CPU backend)."""
        return get_backend(self.compilation.backend).vectorization(
            self.compilation.program.cpp, self.compilation.program.plans, self.isa)

    @property
    def fusion_log(self) -> tuple[str, ...]:
        """The fusion log's text, rendered from the scheduler's records."""
        return log_lines(self.schedule.fusion) if self.schedule.fusion else self.schedule.log

    def __str__(self) -> str:
        c = self.compilation
        sections = [("Graph breaks", "\n".join(map(str, self.breaks)) or "none")]
        if self.replay:  # [BRK]
            sections.append(("Warm calls with breaks", self.replay))
        from stax.loops.runner import describe as describe_loops  # H (issue 10): loop bodies

        sections.append(("Loops compiled once per body (stax.loops)",
                          describe_loops(c.traced.graph)))
        sections += [
            ("Masked selections (x[mask])", "\n".join(c.traced.masked) or "none"),  # [SPMASK]
            ("Error modes (np.errstate)", describe_errstate(c.traced.errstate)),  # [ERR]
            ("Sizes", describe_sizes(c.traced.graph, c.traced.env)),
            ("Graph", str(c.traced.graph)),
            ("Materialized values", "\n".join(map(str, c.lowered.decisions)) or "none"),
            ("Output layouts (NumPy's order where not C)",  # [LAYOUT]
             "\n".join(map(str, c.lowered.layouts)) or "C order"),
            ("Loop IR", self.loop_ir),
            ("IR validation", "\n".join(map(str, self.ir_problems)) or "valid"),
            ("Scheduler nodes", "\n\n".join(n.describe() for n in self.nodes)),
            ("Removed nodes", "\n".join(self.schedule.removed) or "none"),
            ("Fusion log", "\n".join(self.fusion_log)),
            ("Kernels", "\n".join(self._kernel_lines())),
            ("Tiling variants (chosen at launch by tiling_key)", self._variant_lines()),
            ("Axis groups and tiling cases (seed 003; the kernels above still use their "
             "forms)", "\n".join(map(str, self.tilings)) or "none"),
            ("Memory", self.schedule.memory.describe()),
            ("Vectorization (innermost loops)", self.vectorization),
        ]
        if self.gap is not None:
            sections.append(("Optimality gap (exact solver)", str(self.gap)))
        if self.verification is not None:
            sections.append(("Polyhedral verification of the fused order",
                             str(self.verification)))
        sections += [("Generated C++ (runtime header omitted)", self.code),
                     ("Wrapper", self.wrapper),
                     ("Compile time", f"{c.seconds * 1000:.1f} ms")]
        return "\n\n".join(f"== {title} ==\n{body}" for title, body in sections)

    @property
    def tilings(self) -> tuple[KernelTiling, ...]:
        """Seed 003's groups, merge, tiling cases and run-time solution for each kernel."""
        program = self.compilation.lowered.program
        return tuple(kernel_tiling(p.name, p.nodes, p.threads,
                                   program.buffer(p.stored_in(p.nodes[-1].out)).dtype.itemsize)
                     for p in self.compilation.program.plans)

    def _variant_lines(self) -> str:
        """[issue 11] A generic program's variants: the sizes each was planned for, what its
        kernels do differently, and the key the solver picks for the explained call."""
        program = self.compilation.program
        if len(program.variants) < 2:
            return "one variant (the kernels above)"
        lines = []
        for key, variant in enumerate(program.variants):
            sizes = ", ".join(f"{s}={n}" for s, n in variant.sizes.items())
            plans = "; ".join(f"{p.name}: {p.form}, parallel depth {p.parallel_depth}"
                              + (f", blocks of {p.outer_block}" if p.outer_block else "")
                              + (f", {p.simd_lanes}-lane vectors" if p.simd_lanes else "")
                              for p in variant.plans.values())
            lines.append(f"tiling_key={key} (planned for {sizes}): {plans}")
        env = self.compilation.traced.env
        if program.tiling_key is not None and env is not None:
            sizes = dict(env.hints)  # the traced sizes, then the explained call's
            inputs = self.compilation.traced.graph.inputs
            if len(self.shapes) == len(inputs):
                sizes.update((str(d), shape[axis])
                             for value, shape in zip(inputs, self.shapes, strict=True)
                             for axis, d in enumerate(value.shape) if str(d) in sizes)
            lines.append(f"for the explained call: tiling_key="
                         f"{program.tiling_key(*sizes.values())}; the solver plans the "
                         "actual sizes and takes the variant with the same plan (memoized per "
                         "power-of-two size class), else variant 0")
        return "\n".join(lines)

    def _kernel_lines(self) -> list[str]:
        plans = {tuple(n.name for n in p.nodes): p for p in self.compilation.program.plans}
        lines = []
        for g in self.schedule.kernels:
            lines.append(g.describe())
            plan = plans.get(tuple(m.name for m in g.members))
            if plan is None:
                lines.append("  extern call in the wrapper")
                continue
            lines.append(f"  {plan.name}: shared loops {plan.outer_ranges}")
            lines.extend(f"  {note}" for note in plan.notes)
        return lines


def describe_errstate(modes: tuple[tuple[str, Any], ...]) -> str:
    """[ERR] Which np.errstate the kernels' error flags follow."""
    if not modes:
        return "the caller's, on each call"
    set_inside = ", ".join(f"{c}={m!r}" for c, m in modes if c != "call")
    return (f"set inside the function around every op that reports them: {set_inside} "
            "(every call runs under them); other categories: the caller's")


def describe_sizes(graph: Graph, env: ShapeEnv | None) -> str:
    """[issue 11] Which sizes are symbols, where each comes from, and the guards a later call's
    sizes must satisfy to reuse the program; [DYN16] the data-dependent sizes bound mid-call."""
    data = _describe_data_sizes(graph)
    if env is None or env.fully_specialized:
        return ("specialized: compiled for these shapes only (dynamic=False, the first shape "
                "of its class under dynamic=None, or every size was needed as a Python int)"
                + data)
    lines = ["shape-generic: one program for every shape whose guards hold"]
    for k, value in enumerate(graph.inputs):
        for axis, d in enumerate(value.shape):
            if isinstance(d, Sym) and str(d) in env.hints:
                pinned = " (pinned: needed as a Python int)" if str(d) in env.specialized else ""
                lines.append(f"  {d} = argument {k}, axis {axis} (traced as "
                             f"{env.hints[str(d)]}){pinned}")
    lines.append("  sizes 0 and 1, ranks, dtypes and C-contiguity are part of the cache key")
    lines.append("guards: " + ("; ".join(env.guard_text()) or "none"))
    return "\n".join(lines) + data


def _describe_data_sizes(graph: Graph) -> str:
    """[DYN16] Each data-dependent size, the extern call whose result binds it, and what the
    wrapper checks once it is bound."""
    rewrites = "".join(f"\n{r}" for r in graph.rewrites)  # [SEL] selections not compacted
    env = env_of(op.out.shape for op in graph.ops if any(is_data(d) for d in op.out.shape))
    if env is None:
        return rewrites
    binder: dict[str, Any] = {}
    for op in graph.ops:
        for d in op.out.shape if op.kind == "extern" else ():
            if is_data(d):
                binder.setdefault(str(d), op)
    lines = ["", "data-dependent sizes (bound by the wrapper mid-call, from the array the "
             "extern call returns):"]
    for name, what in env.data.items():
        op = binder.get(name)
        made = f"{op.out} = {op.attr('fn')}" if op is not None else "not computed"
        lines.append(f"  {name} = the length of {what}: {made} (traced as at most "
                     f"{env.hints[name]})")
    checks = "; ".join(f"{lhs} {op} {rhs}" for op, lhs, rhs in env.data_guards())
    lines.append(f"  checked once bound: each >= 2{'; ' + checks if checks else ''} (else the "
                 "call runs in NumPy)")
    return "\n".join(lines) + rewrites


def fusion_problem(schedule: Schedule) -> FusionProblem:
    """The scheduler's nodes as Definition 7.3's problem; forbidden pairs are those `can_fuse`
    refuses for structural reasons (iteration spaces, dependence distance, node kinds)."""
    nodes = schedule.nodes
    program = schedule.program
    readers: dict[str, list[str]] = {}
    for n in nodes:
        for b in n.node.read_buffers():
            readers.setdefault(b, []).append(n.name)
    producer = {n.node.out: n.name for n in nodes}
    buffers = tuple(
        FBuffer(b.name, producer.get(b.name), tuple(readers.get(b.name, ())), b.nbytes,
                b.kind == "output")
        for b in program.buffers if b.name in producer or b.name in readers)
    forbidden = set()
    with progress("stax: fusion problem", len(nodes), when=len(nodes) >= 64) as bar:
        for i, a in enumerate(nodes):
            for b in nodes[i + 1:]:
                if not can_fuse(single(a), single(b), 1 << 62, 0, schedule.rules).ok:
                    forbidden.add(frozenset((a.name, b.name)))
            bar.advance(a.name)
    return FusionProblem(tuple(n.name for n in nodes), buffers, frozenset(forbidden))


def optimality_gap(schedule: Schedule, time_limit: float = 10.0) -> OptimalityGap | None:
    if len(schedule.nodes) > MAX_EXACT_NODES:
        return None
    problem = fusion_problem(schedule)
    greedy = [frozenset(m.name for m in g.members) for g in schedule.kernels]
    with progress("stax: exact fusion solver", 1) as bar:  # HiGHS reports no progress
        bar.advance(f"solving ({len(problem.nodes)} nodes, at most {time_limit:g} s)", 0)
        exact = solve_exact(problem, time_limit=time_limit)
    return OptimalityGap(fusion_cost(problem, greedy), exact.cost, exact.optimal,
                         tuple(exact.partition))


def explain(fn: Callable[..., Any] | Jitted, *args: Any, exact: bool = False,
            verify: bool = False, **options: Any) -> Report:
    """Compile `fn` for `args` and report every decision (see `Report`)."""
    from stax.nested.api import Jitted as NestedJitted  # hook added by helper D (stax.nested)
    if isinstance(fn, NestedJitted):  # an sn.jit function: its flattening report
        from stax.nested.api import explain as explain_nested
        return explain_nested(fn, *args)  # type: ignore[return-value]
    jitted = fn if isinstance(fn, Jitted) else jit(fn, **options)
    try:
        comp = jitted.compile(*args)
        breaks: tuple[Break, ...] = ()
        replay = ""
    except GraphBreak:  # runs fn once with its breaks; reports the last compiled segment (A2)
        _, builder = run_segmented(jitted, args)
        breaks, segments = tuple(dict.fromkeys(builder.breaks)), builder.segments
        if not segments:
            raise NotImplementedError("stax.explain: nothing of this function compiles: "
                                      + "; ".join(map(str, breaks))) from None
        comp = segments[-1].compilation
        replay = describe_replay(jitted, args, builder)
    gap = optimality_gap(comp.schedule) if exact else None
    verdict = verify_schedule(comp.schedule) if verify else None
    name = getattr(jitted.fn, "__qualname__", "") or ""
    return Report(comp, gap, verdict, breaks, name, tuple(np.shape(a) for a in args),
                  replay, isa_level(jitted.options["isa"]))


def describe_replay(jitted: Jitted, args: tuple[Any, ...], builder: Any) -> str:
    """[BRK] Whether warm calls replay a tape (what it holds) or run the function again."""
    if not jitted.options["replay"]:
        return "not replayed: stax.jit(..., replay=False) runs the Python function on each call"
    if builder.tape is None:
        return ("not replayed: each call runs the Python function again ("
                f"{builder.no_replay or 'the whole function runs in NumPy'})")
    key = jitted.key(args)
    held = len(jitted.tapes.get(key, ()))
    return (f"replayed without running the Python function while the guards hold: a tape of "
            f"{builder.tape.describe()}; {held} tape(s) recorded by this signature's calls")
