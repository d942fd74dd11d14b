"""KernelPlan: the loop structure of one kernel, decided before printing (seed 000 §8).

A kernel is a list of scheduler nodes that share `shared_depth` outer loops (outer-loop
fusion). The plan records merged axes, the parallel depth chosen by Algorithm 8.1, the
kernel form (scalar / vectorized / tiled) and why; the printer only prints it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from stax.ir.expr import (
    Atom,
    Call,
    Expr,
    FloorDiv,
    Index,
    IndexValue,
    Indirect,
    Load,
    Mod,
    Var,
    loads,
    walk,
)
from stax.ir.prefix import Clamp, clamp_of
from stax.ir.program import Node, rvars, xvars
from stax.ir.sym import SYM_MIN, Sym, c_expr, hint, is_sym, surely
from stax.ops import ELEMENTWISE  # [A1]
from stax.tiling.threads import worth_parallel

FORMS = ("scalar", "vectorized", "tiled", "outer-reduction")
MIN_CHUNK = 512  # Algorithm 8.1's minimum iterations per thread
REDUCTION_CHUNK = 4096  # elements per partial in chunked (cascade) reductions
# 2-D tiles for transposed access (§8.2): TILE_ROWS >= cache line / element, so each line of
# the transposed operand is used whole; TILE_COLS long, so the other operands stream whole pages
# (short rows at a 4096-element stride defeat the prefetchers); the tile copy fits L1.
TILE_ROWS = 16
TILE_COLS = 256
# [GEN] fewest rows a transpose is tiled for: one 8x8 block copied transposed in registers (a
# 10-row x.T + y read x along its 10-float rows once per output row, 10 times in all: 1.78 ->
# 0.76 ms at 10x100000 one thread; fewer rows copy element by element, slower generic)
TILE_MIN_ROWS = 8
# math functions that cost far more than a load (thread decision): the op table's cost [A1]
TRANSCENDENTAL = frozenset(op.name for op in ELEMENTWISE if op.cost == "transcendental")
# [SPMASK] ops of the table that cost more than a load ("costly" or "transcendental")
COSTLY = frozenset(op.name for op in ELEMENTWISE if op.cost != "cheap")
FLAGGED = frozenset(op.name for op in ELEMENTWISE if op.flags)  # [SPMASK] on integers
# [SPMASK] elements per block of the mask-skip form (`MaskSkip`). 10^5 float64, one thread,
# Stax/NumPy at masks of 0.1 % / 1 % / 100 %, blocks of 8 / 16 / 32 / 64 (no skip: 3.89, 2.86,
# 0.94): x[m] = x[m]**1.5 1.92 0.76 0.71 0.80 / 1.63 0.96 1.24 1.68 / 1.27 1.05 1.00 0.98;
# y[m] = exp(x[m]) (none 1.31, 0.97, 0.62) 2.35 0.74 0.70 0.70 / 1.98 0.75 0.78 0.84 / 1.25
# 0.82 0.72 0.69 (8: the short loops ran scalar)
MASK_SKIP_BLOCK = 32
MAX_OUTER_BLOCK = 2048  # outputs per block in the outer-reduction form (two pages of f32)
# [PERF] longest step (elements) between adjacent outputs' loads in the outer-reduction form:
# `x[::2, 1::3].max(0)` at 256x1024 f32 walked 341 strided columns scalar (0.125 ms of
# NumPy's 0.078 for it and a row sum); a block of outputs reads each row's cache lines once
MAX_LANE_STRIDE = 8
SMALL_ROW = 16  # [H11] rows of a generic kernel up to this length: compiled per length too
ROW_TILE_BYTES = 512 * 1024  # [FORD] most bytes of a kernel's row tiles (thread-local)
# [FROWS] most bytes of the outer-reduction form's kernel-local rows (thread-local): longer
# contiguous runs per column of a block read faster (softmax of a Fortran array, one thread,
# budgets 256K/512K/1M/2M: 2048x2048 f32 13.0/9.6/6.9/6.7 ms, NumPy 10.4; 4096x4096 f64
# 1M/2M: 141/117 ms, NumPy 125; 4096x4096 f32 1M/2M: 51/38 ms, NumPy 69)
LOCAL_ROWS_BYTES = 2 * 1024 * 1024
ROW_TILE_LINES = 4  # [LAYOUT] cache lines of each column a block of rows reads / writes


@dataclass(frozen=True)
class PlanDecision:
    """One planning decision for a kernel, by `rule` (G: decision records): `kernel_local` (a
    buffer kept inside the kernel, `value` its extent), `merge_axes` (a node's loops merged),
    `parallel_depth` (`value` the depth), `form` (`value` the form), `tile` (`value` the
    tiled form's ROWSxCOLS), `outer_block` (`value` the outer-reduction form's outputs per block:
    an int, or C text evaluated at launch), `threads` (`value` the thread count: 1 when the work
    does not pay for a parallel region), `scan_chains` (`value` the rows of a row scan run in
    step), `clamp_free` ([COV] `value` the clamped gather indices read unclamped where they
    stay in range), `stored_prefix` (the first loop stopped at a loop driver's stores' count).
    `str()` is explain's text."""

    rule: str
    subject: str  # the kernel, node or buffer decided about
    value: int | str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class MaskSkip:
    """[SPMASK] The mask-skip form of a pointwise kernel: its vector loop runs in blocks of
    `MASK_SKIP_BLOCK` elements; a block where `cond` is false in every lane (`costly_if`
    False: true in every lane) computes the bodies of `cheap` instead, where every
    `where(cond, a, b)` is its cheap side (`b`; `costly_if` False: `a`), so the costly side runs
    only in blocks the mask selects an element of (issue 9: `x[m] = x[m] ** 1.5`)."""

    cond: Expr
    costly_if: bool

    def cheap(self, body: Expr) -> Expr:
        memo: dict[Expr, Expr] = {}

        def visit(e: Expr) -> Expr:
            if not isinstance(e, Call):
                return e
            if e not in memo:
                if e.fn == "where" and e.args[0] == self.cond:
                    memo[e] = visit(e.args[2 if self.costly_if else 1])
                else:
                    memo[e] = Call(e.fn, tuple(map(visit, e.args)), e.dtype)
            return memo[e]

        return visit(body)


@dataclass(frozen=True)
class RowTile:
    """[FORD] A kernel-local tile `name[block * extent]` holding, for each row of a block of the
    last shared loop, what `load` reads along the row variable `var` (range `extent`); the
    kernel's nodes read the tile instead (`tile[pitch * x<d>i + var]`, x<d>i the row in the
    block)."""

    name: str
    load: Load  # as one node reads it (its variables: the shared ones and `var`)
    var: str
    extent: int
    # [LAYOUT] an output tile: the node storing `load` (its buffer and index) writes the tile
    # instead, copied out to the buffer after each block of rows
    store: bool = False

    @property
    def pitch(self) -> int:
        """[LAYOUT] Elements from one row of the tile to the next: `extent`, a cache line more
        where rows a multiple of 4 KiB apart would map to the same cache sets."""
        line = 64 // self.load.dtype.itemsize
        return self.extent + (line if self.extent * self.load.dtype.itemsize % 4096 == 0
                              else 0)


@dataclass(frozen=True)
class KernelPlan:
    name: str
    nodes: tuple[Node, ...]
    shared_depth: int  # outer loops shared by all nodes
    parallel_depth: int  # outer loops run by OpenMP threads (Algorithm 8.1)
    threads: int
    form: str  # one of FORMS
    decisions: tuple[PlanDecision, ...]  # why: merges, parallel depth, form
    local: tuple[tuple[str, int], ...] = ()  # kernel-local buffers and their extents
    # outputs per block in the outer-reduction form; C text evaluated at launch when the
    # extent is symbolic (issue 11)
    outer_block: int | str = 0
    # A generic kernel's (bytes moved, math calls), symbolic: whether its region opens a
    # parallel team is decided at launch from them (issue 11).
    launch_work: tuple[Sym | int, Sym | int] | None = None
    # lanes of the vector loops when rows are short (0: the ISA's full width), see `simd_lanes`
    simd_lanes: int = 0
    # [H11] a generic kernel's short-row symbol and the lengths of it its region is compiled
    # for as well (`small_rows`); "" when none
    row_symbol: str = ""
    row_lengths: tuple[int, ...] = ()
    # [H9] the innermost loop's extent when it is unrolled inside the vector loop over the
    # loop above it (0: the innermost loop is the vector loop), see `unroll_short_row`
    unroll: int = 0
    # [FORD] the rows the last shared loop runs per block when operands are copied into row
    # tiles first (0: no tiles), and the tiles (see `row_tiles`)
    row_block: int = 0
    row_tiles: tuple[RowTile, ...] = ()
    # [LOOPS] a loop body's kernel whose outputs are read only by the driver's stores below
    # this position of the first loop (an int64 expression of the body's 0-d index inputs,
    # evaluated once per call): that loop stops there (`stax.loops.runner._store_stops`)
    outer_stop: Expr | None = None
    # [CLIFF3] a row scan's rows of the last shared loop scanned together as independent
    # dependence chains, [SCAN] a share of the rows apart (0: one row at a time), see
    # `scan_chains`
    scan_chains: int = 0
    mask_skip: MaskSkip | None = None  # [SPMASK] see `mask_skip`

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(map(str, self.decisions))

    def stored_in(self, name: str) -> str:
        """[LAYOUT] The buffer a node storing into `name` writes: the one an output row tile is
        copied out to, else `name`."""
        return next((t.load.buf for t in self.row_tiles if t.store and t.name == name), name)

    @property
    def outer_ranges(self) -> tuple[int, ...]:
        return self.nodes[0].ranges[: self.shared_depth]

    def params(self) -> list[str]:
        """Buffers the kernel function takes, in order (kernel-local ones excluded)."""
        local = {name for name, _ in self.local} | {t.name for t in self.row_tiles}
        names: dict[str, None] = dict.fromkeys(t.load.buf for t in self.row_tiles)
        for n in self.nodes:
            names.update(dict.fromkeys(n.read_buffers()))
            names[n.out] = None
        if self.outer_stop is not None:
            names.update(dict.fromkeys(ld.buf for ld in loads(self.outer_stop)))
        return [n for n in names if n not in local]


def thread_count() -> int:
    env = os.environ.get("OMP_NUM_THREADS")
    if env and env.split(",")[0].isdigit():
        return max(1, int(env.split(",")[0]))
    return max(1, len(os.sched_getaffinity(0)))


def parallel_depth(ranges: Sequence[int], threads: int, min_chunk: int = MIN_CHUNK,
                   total: int | None = None) -> int:
    """Algorithm 8.1: how many outer loops to run in parallel."""
    seq = total if total is not None else 1
    if total is None:
        for r in ranges:
            seq *= r
    par, depth = 1, 0
    for r in ranges:
        if par >= 2 * threads or par == threads:
            break
        if seq / threads < min_chunk:
            break
        depth += 1
        par *= r
        seq //= max(r, 1)
    return depth


# ---- axis merging -----------------------------------------------------------------------------

def _indices(node: Node) -> list[Index]:
    out = [node.out_index]
    if node.body is not None:
        for e in walk(node.body):
            if isinstance(e, (Load, IndexValue)):
                out.extend(_flatten_index(e.index))
    return out


def _flatten_index(index: Index) -> list[Index]:
    out = [index]
    for atom, _ in index.terms:
        if isinstance(atom, (FloorDiv, Mod)):
            out.extend(_flatten_index(atom.arg))
    return out


def _can_merge(indices: Sequence[Index], outer: str, inner: str, inner_range: int) -> bool:
    for idx in indices:
        if not (idx.is_linear_in(outer) and idx.is_linear_in(inner)):
            return False
        if idx.coef(outer) != idx.coef(inner) * inner_range:
            return False
    return True


def substitute_expr(expr: Expr, mapping: Mapping[str, Index], memo: dict[int, Expr]) -> Expr:
    key = id(expr)
    if key in memo:
        return memo[key]
    out: Expr
    if isinstance(expr, Load):
        out = Load(expr.buf, _subst_index(expr.index, mapping, memo), expr.dtype)
    elif isinstance(expr, IndexValue):
        out = IndexValue(_subst_index(expr.index, mapping, memo), expr.dtype)
    elif isinstance(expr, Call):
        out = Call(expr.fn, tuple(substitute_expr(a, mapping, memo) for a in expr.args),
                   expr.dtype)
    else:
        out = expr
    memo[key] = out
    return out


def _subst_index(index: Index, mapping: Mapping[str, Index], memo: dict[int, Expr]) -> Index:
    result = Index((), index.const)
    for atom, c in index.terms:
        if isinstance(atom, Var):
            result = result + mapping.get(atom.name, Index(((atom, 1),))) * c
        elif isinstance(atom, FloorDiv):
            result = result + Index(((FloorDiv(_subst_index(atom.arg, mapping, memo),
                                               atom.div), c),))
        elif isinstance(atom, Mod):
            result = result + Index(((Mod(_subst_index(atom.arg, mapping, memo), atom.div),
                                      c),))
        else:
            result = result + Index(((Indirect(substitute_expr(atom.expr, mapping, memo),
                                               atom.size), c),))
    return result


def _merge_dims(node: Node, names: tuple[str, ...], ranges: tuple[int, ...],
                fresh: str) -> tuple[dict[str, Index], tuple[int, ...]]:
    """Merge adjacent loops whose accesses are contiguous in every index: AutoFuse's rule
    `stride[k] == stride[k+1] * range[k+1]`. Returns a substitution to fresh variables
    `fresh0, fresh1, ...` and the new ranges. In a merged group only the innermost variable
    survives (renamed); the others become 0, since their contribution is now carried by it."""
    indices = _indices(node)
    groups: list[list[int]] = []
    for k in range(len(ranges)):
        if groups and _can_merge(indices, names[groups[-1][-1]], names[k], ranges[k]):
            groups[-1].append(k)
        else:
            groups.append([k])
    mapping: dict[str, Index] = {}
    new_ranges = []
    for g, members in enumerate(groups):
        new_ranges.append(_prod([ranges[k] for k in members]))
        for k in members[:-1]:
            mapping[names[k]] = Index()
        mapping[names[members[-1]]] = Index.var(f"{fresh}{g}")
    return mapping, tuple(new_ranges)


def drop_unit_dims(node: Node) -> Node:
    """Loops of extent 1 never appear in indices (lowering writes them as 0): remove them."""
    xs = [k for k, r in enumerate(node.ranges) if not surely(r, "==", 1)]
    rs = [k for k, r in enumerate(node.reduction_ranges) if not surely(r, "==", 1)]
    if len(xs) == len(node.ranges) and len(rs) == len(node.reduction_ranges):
        return node
    mapping = {f"x{k}": Index.var(f"x{j}") for j, k in enumerate(xs)} | {
        f"r{k}": Index.var(f"r{j}") for j, k in enumerate(rs)}
    memo: dict[int, Expr] = {}
    return replace(node, ranges=tuple(node.ranges[k] for k in xs),
                   reduction_ranges=tuple(node.reduction_ranges[k] for k in rs),
                   body=substitute_expr(node.body, mapping, memo) if node.body is not None
                   else None, out_index=_subst_index(node.out_index, mapping, memo))


def loop_order(node: Node) -> tuple[Node, str]:
    """[LAYOUT] A pointwise node's loops in the memory order of its output, the loop of the
    output's smallest stride innermost (an elementwise result laid out in Fortran order, as
    NumPy lays out that of Fortran-ordered operands, is written and read along its contiguous
    axis); the node unchanged and "" when they are in that order already."""
    index = node.out_index
    names = xvars(len(node.ranges))
    if node.kind != "pointwise" or node.body is None or not all(
            index.is_linear_in(v) for v in names):
        return node, ""
    strides = [abs(hint(index.coef(v))) for v in names]
    order = sorted(range(len(names)), key=lambda k: -strides[k])  # stable: ties keep C order
    if order == list(range(len(names))):
        return node, ""
    mapping = {names[k]: Index.var(f"x{j}") for j, k in enumerate(order)}
    memo: dict[int, Expr] = {}
    node = replace(node, ranges=tuple(node.ranges[k] for k in order),
                   body=substitute_expr(node.body, mapping, memo),
                   out_index=_subst_index(node.out_index, mapping, memo))
    return node, (f"{node.name}: loops {tuple(names[k] for k in order)} from outermost to "
                  f"innermost, in the order of the output's strides {tuple(strides)}")


def merge_axes(node: Node) -> tuple[Node, list[str]]:
    """Drop unit loops, then merge contiguous loops of a node (pointwise loops, and reduction
    loops separately)."""
    notes: list[str] = []
    original = node.ranges, node.reduction_ranges
    node = drop_unit_dims(node)
    xs, rs = xvars(len(node.ranges)), rvars(len(node.reduction_ranges))
    xmap, xr = _merge_dims(node, xs, node.ranges, "mx")
    rmap, rr = _merge_dims(node, rs, node.reduction_ranges, "mr") if node.kind == "reduction" \
        and node.fn not in ("argmax", "argmin") else ({}, node.reduction_ranges)
    if (xr, rr) != (node.ranges, node.reduction_ranges):
        rename = {f"mx{k}": Index.var(f"x{k}") for k in range(len(xr))} | {
            f"mr{k}": Index.var(f"r{k}") for k in range(len(rr))}
        mapping = {v: i.substitute(rename) for v, i in (xmap | rmap).items()}
        memo: dict[int, Expr] = {}
        node = replace(node, ranges=xr, reduction_ranges=rr,
                       body=substitute_expr(node.body, mapping, memo)
                       if node.body is not None else None,
                       out_index=_subst_index(node.out_index, mapping, memo))
    if original != (node.ranges, node.reduction_ranges):
        notes.append(f"{node.name}: loops {original[0]}|{original[1]} -> "
                     f"{node.ranges}|{node.reduction_ranges} (unit loops dropped, loops "
                     "contiguous in every access merged)")
    return node, notes


def localize(node: Node, local: Mapping[str, int], shared: set[str]) -> Node:
    """Address kernel-local buffers by their inner index only (see stax.sched.local)."""
    from stax.sched.fusion import split_index

    def inner(index: Index) -> Index:
        split = split_index(index, shared)
        assert split is not None
        return split[1]

    memo: dict[int, Expr] = {}

    def through(index: Index) -> Index:  # [C, issue 8] loads inside a gather's index too
        terms: list[tuple[Atom, int]] = []
        for atom, c in index.terms:
            if isinstance(atom, Indirect):
                atom = Indirect(memo[id(atom.expr)], atom.size)
            elif isinstance(atom, (FloorDiv, Mod)):
                atom = type(atom)(through(atom.arg), atom.div)
            terms.append((atom, c))
        return Index.of(terms, index.const)

    def visit(root: Expr) -> Expr:  # iterative: children before parents (walk)
        for e in walk(root):
            out: Expr = e
            if isinstance(e, Load):
                index = through(e.index)
                out = Load(e.buf, inner(index) if e.buf in local else index, e.dtype)
            elif isinstance(e, IndexValue):
                out = IndexValue(through(e.index), e.dtype)
            elif isinstance(e, Call):
                out = Call(e.fn, tuple(memo[id(a)] for a in e.args), e.dtype)
            memo[id(e)] = out
        return memo[id(root)]

    body = visit(node.body) if node.body is not None else None
    out_index = inner(node.out_index) if node.out in local else node.out_index
    return replace(node, body=body, out_index=out_index)


def plan_kernel(name: str, nodes: Sequence[Node], shared_depth: int, *, threads: int,
                vectorize: bool, local: Mapping[str, int] | None = None,
                form: str | None = None) -> KernelPlan:
    notes: list[PlanDecision] = []
    local = dict(local or {})
    if local:
        shared = set(xvars(shared_depth))
        nodes = [localize(n, local, shared) for n in nodes]
        notes += [PlanDecision("kernel_local", b, e,
                               f"{b}: kernel-local, {e} element(s) per outer iteration")
                  for b, e in local.items()]
    if len(nodes) == 1 and nodes[0].kind in ("pointwise", "reduction"):
        node, why_order = loop_order(nodes[0])  # [LAYOUT]
        if why_order:
            notes.append(PlanDecision("loop_order", node.name, node.ranges, why_order))
        node, merge_notes = merge_axes(node)
        nodes = [node]
        notes += [PlanDecision("merge_axes", node.name, len(node.ranges), text)
                  for text in merge_notes]
        shared_depth = len(node.ranges)
    # Loop structure is decided on the traced sizes (`hint`: a symbolic size's value on the
    # traced call, recording no guard): any choice is correct for every size (issue 11).
    outer = tuple(map(hint, nodes[0].ranges[:shared_depth]))
    work = _prod(outer) * max(max(hint(n.numel) // max(_prod(outer), 1) * max(hint(n.rnumel), 1)
                                  for n in nodes), 1)
    launch_work = None
    if threads > 1:
        moved, calls = kernel_work(nodes)
        pays, why_threads = worth_parallel(hint(moved), hint(calls))
        if is_sym(moved):  # a generic kernel: the same estimate, evaluated at launch
            launch_work = (moved, calls)
            pays, why_threads = True, "decided at launch: " + why_threads
        if pays and one_chain_scan(nodes):  # [SCAN]
            pays, why_threads = False, ("one long scan without a vectorized first pass "
                                        "(cummax/cummin, complex): two passes over the threads "
                                        "would run its dependence chain twice")
        if not pays:
            threads = 1
        notes.append(PlanDecision("threads", name, threads,
                                  f"{'parallel' if pays else 'serial'}: {why_threads}"))
    depth = parallel_depth(outer, threads, total=work)
    rows_cap, why_rows = local_rows(nodes, local)  # [FROWS]
    form, why = choose_form(nodes, vectorize, form,
                            fused_outer=shared_depth == len(output_space(nodes)) and (
                                all(e == 1 for e in local.values()) or rows_cap > 0))
    block = 0
    if form == "tiled":
        shared_depth = len(nodes[0].ranges) - 2
        outer = outer[:shared_depth]
        depth = parallel_depth(outer, threads, total=work)
        block = TILE_ROWS
    if form == "outer-reduction":
        shared_depth = len(output_space(nodes)) - 1
        outer = outer[:shared_depth]
        depth = parallel_depth(outer, threads, total=work)
        block = outer_block(output_space(nodes)[-1], threads)
        if rows_cap:  # [FROWS] the block's rows of kernel-local values fit the budget
            block = min(block, rows_cap)  # type: ignore[type-var]
            notes.append(PlanDecision("local_rows", name, block, why_rows))
    notes.append(PlanDecision(
        "parallel_depth", name, depth, f"parallel depth {depth} over outer loops {outer} with "
        f"P={threads} (Algorithm 8.1, {work} iterations, min chunk {MIN_CHUNK})"))
    notes.append(PlanDecision("form", name, form, f"form: {form} ({why})"))
    if form == "tiled":  # [S16] the block sizes of the form, records of their own
        notes.append(PlanDecision("tile", name, f"{TILE_ROWS}x{TILE_COLS}",
                                  f"tiles of {TILE_ROWS}x{TILE_COLS} elements"))
    if form == "outer-reduction":
        notes.append(PlanDecision("outer_block", name, block, f"blocks of {block} outputs" + (
            f" for {threads} threads (at launch, the outputs split over the team: [BUSY] a team "
            f"of one reads whole rows)" if threads > 1 else "")))
        clamps = len(block_clamps(nodes, len(output_space(nodes))))
        if clamps:  # [COV]
            notes.append(PlanDecision("clamp_free", name, clamps, (
                f"clamp_free: {clamps} clamped gather index(es) (a masked slice's positions) "
                "read unclamped, with vector loads, in the blocks where no clamp bites (both "
                "ends of the block checked at run time)")))
    lanes = unroll = 0
    if form == "vectorized":  # [H9]
        unroll, why_unroll = unroll_short_row(nodes, shared_depth)
        if unroll:
            notes.append(PlanDecision("unroll_short_row", name, unroll, why_unroll))
    if form in ("vectorized", "tiled") and not unroll:  # tiled: its compute loop
        lanes, why_lanes = simd_lanes(nodes, shared_depth)
        if lanes:
            notes.append(PlanDecision("simd_lanes", name, lanes, why_lanes))
    row = small_rows(nodes, shared_depth, form)
    if row is not None:
        notes.append(PlanDecision("small_rows", name, row[0], row[2]))
    rows, tiles = 0, ()
    if form == "vectorized" and not unroll and row is None:
        rows, tiles, nodes = row_tiles(nodes, shared_depth)
        if tiles:
            read = sorted({t.load.buf for t in tiles if not t.store})
            written = [f"{t.load.buf} (via {t.name})" for t in tiles if t.store]  # [LAYOUT]
            notes.append(PlanDecision(
                "row_tiles", name, rows,
                f"{', '.join(read) or 'no operand'} read"
                f"{' and ' + ', '.join(written) + ' written' if written else ''} along each row "
                f"with a stride, contiguous along x{shared_depth - 1}: blocks of {rows} rows "
                "copied into row tiles "
                f"({', '.join(f'{t.name}[{rows}x{t.extent}]' for t in tiles if not t.store)}) "
                "with whole cache lines, the rows computed from the tiles"
                f"{' and copied out' if written else ''}"))
    chains, why_chains = (0, "") if form in ("tiled", "outer-reduction") or rows or \
        row is not None else scan_chains(nodes, outer, depth, threads)
    if chains:
        notes.append(PlanDecision("scan_chains", name, chains, why_chains))
    skip, why_skip = mask_skip(nodes, shared_depth) if form in ("vectorized", "scalar") and not (
        unroll or rows or row is not None) else (None, "")
    if skip is not None:
        notes.append(PlanDecision("mask_skip", name, MASK_SKIP_BLOCK, why_skip))
    return KernelPlan(name, tuple(nodes), shared_depth, depth, threads, form, tuple(notes),
                      tuple(local.items()), block, launch_work, simd_lanes=lanes,
                      row_symbol=row[0] if row else "", row_lengths=row[1] if row else (),
                      unroll=unroll, row_block=rows, row_tiles=tiles,
                      scan_chains=chains, mask_skip=skip)


def _costly_calls(bodies: Iterable[Expr]) -> set[Expr]:
    return {e for b in bodies for e in walk(b) if isinstance(e, Call) and e.fn in COSTLY}


def _raising_calls(bodies: Iterable[Expr]) -> set[Expr]:
    """[SPMASK] Calls that may set an error flag (NumPy's warning): a float cast to an integer
    type, an op of the table with flags on integer operands (//, % by zero, ** -1)."""
    return {e for b in bodies for e in walk(b) if isinstance(e, Call) and (
        e.fn in FLAGGED and any(a.dtype.kind in "biu" for a in e.args) or e.fn == "cast" and
        e.dtype.kind in "iu" and e.args[0].dtype.kind in "fc")}


def mask_skip(nodes: Sequence[Node], shared_depth: int) -> tuple[MaskSkip | None, str]:
    """[SPMASK] Blocks of the vector loop that skip the costly side of a `where` (`MaskSkip`),
    and why: when every node is pointwise over all the shared loops, and a `where`'s condition
    costs no more than a load (it is computed once more per block), reads nothing the kernel
    writes, and choosing its other side drops a costly call of the op table (`COSTLY`) from
    the kernel, and drops no call that may raise (np.where(m, a // b, a) warns on a zero b
    outside m in NumPy too). A dense mask pays one more test of the condition per element; a
    sparse one skips the costly work in most blocks (`x[m] = f(x[m])`, np.where)."""
    if not nodes[0].ranges or shared_depth != len(nodes[0].ranges) or any(
            n.kind != "pointwise" or n.body is None or n.ranges != nodes[0].ranges
            for n in nodes):
        return None, ""
    bodies = [n.body for n in nodes if n.body is not None]
    written = {n.out for n in nodes}
    costly, raising = _costly_calls(bodies), _raising_calls(bodies)
    if not costly:
        return None, ""
    for e in dict.fromkeys(e for b in bodies for e in walk(b)):
        if not (isinstance(e, Call) and e.fn == "where") or _costly_calls([e.args[0]]) or any(
                ld.buf in written for ld in loads(e.args[0])):
            continue
        for costly_if in (True, False):
            skip = MaskSkip(e.args[0], costly_if)
            cheap = [skip.cheap(b) for b in bodies]
            dropped = costly - _costly_calls(cheap)
            if dropped and raising <= _raising_calls(cheap):
                names = ", ".join(sorted({c.fn for c in dropped if isinstance(c, Call)}))
                return skip, (
                    f"mask_skip: {names} computed only in blocks of {MASK_SKIP_BLOCK} elements "
                    f"where the where's condition is {'true' if costly_if else 'false'} in a "
                    f"lane; the other blocks take its other side (a sparse mask skips the "
                    f"costly work, a dense one tests the condition once more per element)")
    return None, ""


# [CLIFF3] rows of a row scan interleaved: each row's scan is one serial dependence chain (a
# float add or a NaN-aware max per element waits for the previous one); this many rows
# advanced together overlap their chains. Measured (one thread, f32): 4 rows: cumsum 256x1024
# 0.13 -> 0.087 ms, cummax 0.255 -> 0.153; 8 rows a little slower (more streams); 16 rows
# spill the running values (5x slower). [SCAN] The rows in step are a share of the rows apart
# (row x, x + Q, x + 2Q, x + 3Q for Q = ceil(rows / 4)), so each chain reads and writes one
# long contiguous stream: 4 adjacent rows of 100 float64 interleaved 8 short streams in 3.2 KB
# and ran at half the memory bandwidth (cumsum (10^5, 100), one thread: adjacent 19 ms, a share
# apart 7.8 ms, `a + 1.0` 8.8 ms).
SCAN_CHAINS = 4


def one_chain_scan(nodes: Sequence[Node]) -> bool:
    """[SCAN] A kernel of one scan along its only axis whose parallel form gains nothing: the
    first pass (each thread's slice total) of a max/min or complex scan is the same serial
    chain as the scan (no exact identity to start vector lanes from), so two threads run the
    chain twice. Measured, (10^7,) float64 cummax: one thread 28 ms, two threads 57 ms of CPU."""
    node = nodes[0]
    return len(nodes) == 1 and node.kind == "scan" and not node.ranges and (
        node.fn in ("cummax", "cummin") or node.body is not None and node.body.dtype.kind == "c")


def scan_chains(nodes: Sequence[Node], outer: tuple[int, ...], depth: int, threads: int
                ) -> tuple[int, str]:
    """[CLIFF3] A kernel of one scan along its rows (cumsum/cumprod/cummax/cummin over the
    last axis, or any axis below the shared loops) runs SCAN_CHAINS rows of the last shared
    loop at once, element by element in step: the same operations in the same order per row
    (results equal the one-row scan bit for bit), without waiting on one chain; [SCAN] the rows
    a share of the last shared loop apart (each chain one long stream). Not when the blocks
    would leave threads idle (fewer blocks than threads in the parallel loops), nor for
    integer sums."""
    node = nodes[0]
    if len(nodes) != 1 or node.kind != "scan" or not outer or len(outer) != len(node.ranges):
        return 0, ""
    if node.fn == "cumsum" and node.body is not None and node.body.dtype.kind in "biu":
        return 0, ""  # an integer add waits one cycle: no gain, more memory streams
    rows = hint(outer[-1])
    blocks = _prod(outer[:-1]) * (rows // SCAN_CHAINS) if depth == len(outer) else threads
    if rows < SCAN_CHAINS or blocks < threads:
        return 0, ""
    return SCAN_CHAINS, (f"{SCAN_CHAINS} rows of x{len(outer) - 1} ({rows}) scanned together, "
                         f"1/{SCAN_CHAINS} of the rows apart: independent dependence chains "
                         "(each row's order kept), each chain a run of consecutive rows")


def row_tiles(nodes: Sequence[Node], shared_depth: int
              ) -> tuple[int, tuple[RowTile, ...], Sequence[Node]]:
    """[FORD] Loads that walk each row of a kernel with a large stride while adjacent rows are
    adjacent in memory (a row softmax of a Fortran-ordered or transposed operand): per block of
    rows (ROW_TILE_LINES cache lines of elements), the operand is copied into a row tile (a
    thread-local array), so every line read is used whole and the row loops read contiguously
    (they vectorize); [LAYOUT] a result stored so is written into a tile and copied out
    (`_store_tiles`). Returns the rows per block, the tiles (loads' first) and the nodes
    reading and writing them; (0, (), nodes) when nothing qualifies."""
    if shared_depth == 0 or any(n.body is None or any(  # gathers: left as they are
            isinstance(e, (Load, IndexValue)) and any(isinstance(a, Indirect)
                                                      for a, _ in e.index.terms)
            for e in walk(n.body)) for n in nodes):
        return 0, (), nodes
    shared = set(xvars(shared_depth))
    last = f"x{shared_depth - 1}"
    rows_extent = nodes[0].ranges[shared_depth - 1]
    written = {n.out for n in nodes}
    found: dict[tuple[str, Index], RowTile] = {}
    tiled: dict[tuple[str, Load], RowTile] = {}  # (node, load) -> its tile
    for n in nodes:
        assert n.body is not None
        for ld in {e for e in walk(n.body) if isinstance(e, Load)}:
            own = ld.index.variables() - shared
            if ld.buf in written or ld.index.coef(last) != 1 or len(own) != 1 or \
                    not all(isinstance(a, Var) for a, _ in ld.index.terms):
                continue
            (var,) = own
            extent = n.var_ranges[var]
            if abs(ld.index.coef(var)) <= 1 or not isinstance(extent, int) or extent < 2:
                continue
            key = (ld.buf, ld.index.substitute({var: Index.var("row")}))
            tile = found.setdefault(key, RowTile(f"rowtile{len(found)}", ld, var, extent))
            tiled[(n.name, ld)] = tile
    stores = _store_tiles(nodes, shared, last, tiled)  # [LAYOUT]
    tiles = [*found.values(), *stores.values()]
    if not tiles or not isinstance(rows_extent, int) or rows_extent < 2:
        return 0, (), nodes
    itemsize = max(t.load.dtype.itemsize for t in tiles)
    row_bytes = sum(t.extent * t.load.dtype.itemsize
                    for t in {t.name: t for t in tiles}.values())  # a shared tile once
    rows = ROW_TILE_LINES * 64 // itemsize  # whole cache lines of elements
    while rows > 4 and rows * row_bytes > ROW_TILE_BYTES:
        rows //= 2
    if rows * row_bytes > ROW_TILE_BYTES:
        return 0, (), nodes
    row = Var(f"{last}i")

    def read_tile(n: Node) -> Node:
        mapping: dict[Expr, Expr] = {}
        for ld in {e for e in walk(n.body) if isinstance(e, Load)}:  # type: ignore[arg-type]
            tile = tiled.get((n.name, ld))
            if tile is not None:
                var = (ld.index.variables() - shared).pop()
                mapping[ld] = Load(tile.name, Index.of({row: tile.pitch, Var(var): 1}),
                                   ld.dtype)
        n = replace(n, body=replace_loads(n.body, mapping)) if mapping else n
        out = stores.get(n.name)
        if out is None:
            return n
        return replace(n, out=out.name, out_index=Index.of({row: out.pitch, Var(out.var): 1}))

    return rows, tuple(tiles), [read_tile(n) for n in nodes]


def _store_tiles(nodes: Sequence[Node], shared: set[str], last: str,
                 tiled: Mapping[tuple[str, Load], RowTile]) -> dict[str, RowTile]:
    """[LAYOUT] The output tiles of `row_tiles`, by node: a pointwise node storing along its row
    with a stride while adjacent rows are adjacent in memory (a row softmax's result laid out
    in Fortran order, as NumPy lays out the result of a Fortran-ordered operand), into a
    buffer no node of the kernel reads. The node writes an operand's row tile where that row is
    read no more (`_spent_tile`: the tiles stay a cache line of rows), else a tile of its own."""
    read = {e.buf for n in nodes if n.body is not None for e in walk(n.body)
            if isinstance(e, Load)}
    stores: dict[str, RowTile] = {}
    for k, n in enumerate(nodes):
        index = n.out_index
        own = index.variables() - shared
        if n.kind != "pointwise" or n.body is None or n.out in read or len(own) != 1 or \
                index.coef(last) != 1 or not all(isinstance(a, Var) for a, _ in index.terms):
            continue
        (var,) = own
        extent = n.var_ranges[var]
        if abs(index.coef(var)) > 1 and isinstance(extent, int) and extent >= 2:
            load = Load(n.out, index, n.body.dtype)
            spent = _spent_tile(nodes, k, load, var, extent, tiled, stores.values())
            stores[n.name] = RowTile(spent or f"rowout{len(stores)}", load, var, extent,
                                     store=True)
    return stores


def _spent_tile(nodes: Sequence[Node], k: int, load: Load, var: str, extent: int,
                tiled: Mapping[tuple[str, Load], RowTile], taken: Iterable[RowTile]) -> str:
    """[LAYOUT] An operand's row tile node `k` may store `load` into (its name; "" if none):
    of its dtype and extent, taken by no other store, read by no later node, and by the
    pointwise nodes up to `k` (which may share its loop) only at the stored element."""
    later = {t.name for (name, _), t in tiled.items()
             if any(m.name == name for m in nodes[k + 1:])}
    clash = later | {t.name for t in taken} | {
        t.name for (name, ld), t in tiled.items()
        if any(m.name == name and m.kind == "pointwise" for m in nodes[:k + 1])
        and ld.index.coef(var) == 0}
    return next((t.name for t in dict.fromkeys(tiled.values())
                 if t.name not in clash and t.extent == extent
                 and t.load.dtype == load.dtype), "")


def replace_loads(root: Expr | None, mapping: Mapping[Expr, Expr]) -> Expr | None:
    """`root` (without gathers) with the loads in `mapping` replaced."""
    if root is None:
        return None
    memo: dict[int, Expr] = {}
    for e in walk(root):  # children before parents
        out: Expr = mapping.get(e, e)
        if isinstance(e, Call):
            out = Call(e.fn, tuple(memo[id(a)] for a in e.args), e.dtype)
        memo[id(e)] = out
    return memo[id(root)]


SHORT_ROW = 8  # [H9] innermost loops of at most this many iterations unroll


def unroll_short_row(nodes: Sequence[Node], shared_depth: int) -> tuple[int, str]:
    """[H9] A flat pointwise nest whose innermost loop is short and constant (the channels of
    an HxWx3 image, with a per-channel operand that keeps the two loops from merging): the
    loop above it is the vector loop and the short one is unrolled inside it, so g++
    vectorizes its accesses as interleaved groups. A vector loop of 3 iterations runs
    scalar: HxWx3 uint8 -> float32 normalization, 4 MiB of pixels, 14 -> 1.35 ms. Every access
    must be contiguous or invariant along the pair (or along the outer loop alone)."""
    node = nodes[0]
    rank = len(node.ranges)
    if rank < 2 or shared_depth != rank or any(
            n.kind != "pointwise" or n.body is None or n.ranges != node.ranges for n in nodes):
        return 0, ""
    row, above = node.ranges[-1], node.ranges[-2]
    if is_sym(row) or row > SHORT_ROW or hint(above) < 2 * SHORT_ROW:
        return 0, ""
    inner, outer = f"x{rank - 1}", f"x{rank - 2}"
    indices = [n.out_index for n in nodes] + [
        e.index for n in nodes for e in walk(n.body) if isinstance(e, Load)]  # type: ignore[arg-type]
    for index in indices:
        if not (index.is_linear_in(inner) and index.is_linear_in(outer)):
            return 0, ""
        a, b = index.coef(outer), index.coef(inner)
        if not (abs(b) <= 1 and a in (0, b * row) or b == 0 and abs(a) <= 1):
            return 0, ""
    return int(row), (f"short rows: the innermost loop has {row} iterations; the loop over "
                      f"{outer} ({above}) is the vector loop, the short one unrolled inside it")


def simd_lanes(nodes: Sequence[Node], shared_depth: int) -> tuple[int, str]:
    """Short rows on narrow vectors: a vector loop whose trip count is shorter than a few
    full-width vectors spends its time in the scalar remainder (rows of 10 floats: 0 iterations
    of 16 lanes, 10 scalar ones, each a scalar `expf` in a softmax). Rows under 64 bytes run on
    16-byte vectors, under 256 bytes on 32-byte ones (`omp simd simdlen`); measured on rows of
    3-1000 floats: up to 2.5x faster there, full width from 256 bytes on. The row is the
    shortest innermost loop of the kernel, read on the traced sizes (`hint`): a generic
    program compiles a variant per width its sizes need (issue 11's tiling variants)."""
    rows = _vector_rows(nodes, shared_depth)
    if not rows:
        return 0, ""
    itemsize = _itemsize(nodes)
    row = min(hint(r) for r in rows)
    width = _vector_width(row * itemsize)
    if not width:
        return 0, ""
    lanes = max(2, width // itemsize)
    return lanes, (f"short rows: {row} element(s) of {itemsize} bytes per vector loop, run on "
                   f"{width}-byte vectors ({lanes} lanes) rather than the ISA's widest, whose "
                   "remainder would run scalar")


def _itemsize(nodes: Sequence[Node]) -> int:
    """The widest element a kernel loads or computes (at least 4 bytes)."""
    return max(4, *(e.dtype.itemsize for n in nodes for e in walk(n.body)  # type: ignore[arg-type]
                    if isinstance(e, Load)), *(n.body.dtype.itemsize for n in nodes
                                               if n.body is not None))


def _vector_width(row_bytes: int) -> int:
    """`simd_lanes`'s vector bytes for a row of `row_bytes` (0: the ISA's widest)."""
    return 16 if row_bytes < 64 else 32 if row_bytes < 256 else 0


def _vector_rows(nodes: Sequence[Node], shared_depth: int) -> list[Sym | int]:
    """The extents of a kernel's innermost vector loops (a reduction's last reduced loop, a
    pointwise node's last loop inside the shared ones)."""
    return [n.reduction_ranges[-1] if n.kind == "reduction" and n.reduction_ranges
            else n.ranges[-1] for n in nodes
            if n.kind in ("pointwise", "reduction") and n.body is not None and
            (len(n.ranges) > shared_depth or n.kind == "reduction" and n.reduction_ranges)]


def small_rows(nodes: Sequence[Node], shared_depth: int, form: str
               ) -> tuple[str, tuple[int, ...], str] | None:
    """[H11] Short rows at a known length (issue 11's guarded size classes): when every
    innermost vector loop of a generic kernel (in the outer-reduction form: its block of
    outputs) runs over one plain symbol, planned at most SMALL_ROW elements long, its region
    is also compiled for each length up to SMALL_ROW that `simd_lanes` gives the same vectors
    (a C++ template on the size, picked at launch by a switch on it): those loops get a
    constant trip count, unrolled and vectorized as in a specialized program, where a run-time
    trip count of a few elements spends its time in loop control and scalar remainders. Other
    lengths run the generic body. One thread, rows of 10 floats: layernorm 0.98 -> 0.66 ms,
    x.sum(0) 0.18 -> 0.14 ms (specialized: 0.65, 0.14). Returns the symbol, the lengths and
    why."""
    if form == "outer-reduction":
        rows = [output_space(nodes)[-1]]
    elif form == "vectorized":
        rows = _vector_rows(nodes, shared_depth)
    else:
        return None
    names = {_plain_symbol(r) for r in rows}
    if len(names) != 1 or not rows or hint(rows[0]) > SMALL_ROW:
        return None
    name = names.pop()
    if name is None:
        return None
    itemsize = _itemsize(nodes)
    width = _vector_width(hint(rows[0]) * itemsize) if form == "vectorized" else 0
    lengths = tuple(n for n in range(SYM_MIN, SMALL_ROW + 1)
                    if form != "vectorized" or _vector_width(n * itemsize) == width)
    return name, lengths, (f"short rows: the innermost loops run over {name} (planned "
                           f"{hint(rows[0])}): also compiled for {name} = {lengths[0]}.."
                           f"{lengths[-1]} (constant trip counts), chosen at launch")


def _plain_symbol(x: Sym | int) -> str | None:
    """The name of a size that is one input symbol (`s1`, not `s0*s1` or `s1 // 2`)."""
    if not is_sym(x) or len(x.terms) != 1:
        return None
    (monomial, coef), = x.terms
    return monomial[0] if coef == 1 and len(monomial) == 1 and monomial[0] in x.env.hints \
        else None


def outer_block(extent: Sym | int, threads: int | str) -> int | str:
    """Outputs per block of the outer-reduction form: wide blocks read whole pages per row
    (the longer each row's contiguous run, the better the prefetcher keeps up: 2048x2048 f32
    column sums on one thread, blocks of 512/1024/2048 outputs: 266/230/213 µs), one block per
    thread, whole vectors (multiples of 16), at most MAX_OUTER_BLOCK. A symbolic extent
    (issue 11: a split size chosen at launch) or a team known at launch only (C text: [BUSY]
    the printer's `omp_get_num_threads()`) gives the same formula as C text."""
    if is_sym(extent) or isinstance(threads, str):
        e = c_expr(extent) if is_sym(extent) else str(extent)
        per = f"{threads - 1}) / {threads}" if isinstance(threads, int) else \
            f"{threads} - 1) / {threads}"
        return (f"std::max<int64_t>(16, (std::min<int64_t>({MAX_OUTER_BLOCK}, ({e} + {per}) + 15)"
                " / 16 * 16)")
    block = max(16, min(MAX_OUTER_BLOCK, -(-int(extent) // threads)))
    return -(-block // 16) * 16


def kernel_work(nodes: Sequence[Node]) -> tuple[int, int]:
    """Bytes a kernel moves (each distinct load and the store, per iteration) and its calls to
    math functions: the inputs of the thread decision."""
    moved = calls = 0
    for n in nodes:
        iterations = n.numel * max(hint(n.rnumel), 1)
        if n.body is None:
            continue
        exprs = set(walk(n.body))
        loaded = sum(e.dtype.itemsize for e in exprs if isinstance(e, Load))
        moved += iterations * loaded + n.numel * n.body.dtype.itemsize
        calls += iterations * sum(isinstance(e, Call) and e.fn in TRANSCENDENTAL for e in exprs)
    return moved, calls


def choose_form(nodes: Sequence[Node], vectorize: bool, forced: str | None = None,
                fused_outer: bool = False) -> tuple[str, str]:
    """Seed 000 §8.3: scalar, vectorized, or a form for strided access, and why. `forced`
    (the `form=` option, for tests) takes a form wherever it applies to the kernel.
    `fused_outer`: the nodes share all their output loops and keep at most one kernel-local
    value per output, so a fused group can take the outer-reduction form too."""
    if forced is not None and forced not in FORMS:
        raise ValueError(f"stax.jit: form={forced!r} is not one of {', '.join(FORMS)}")
    if not vectorize:
        return "scalar", "vectorization disabled by the ISA level"
    if forced in ("scalar", "vectorized"):
        return forced, "forced by the form= option"
    node = nodes[0]
    if forced != "tiled" and (len(nodes) == 1 or fused_outer) and _outer_reduction(nodes):
        fused = f" ({len(nodes)} fused nodes, run per block)" if len(nodes) > 1 else ""
        return "outer-reduction", (
            f"the reduced axis is strided and output axis x{len(output_space(nodes)) - 1} is "
            f"contiguous or short-strided: reduce a block of adjacent outputs at once with "
            f"vector loads{fused}")
    if forced != "outer-reduction" and len(nodes) == 1 and node.kind == "pointwise" and \
            len(node.ranges) >= 2 and \
            node.body is not None and hint(node.ranges[-2]) >= TILE_MIN_ROWS and \
            hint(node.ranges[-1]) >= TILE_ROWS:
        inner, outer = f"x{len(node.ranges) - 1}", f"x{len(node.ranges) - 2}"
        accesses = [ld.index for ld in walk(node.body) if isinstance(ld, Load)]
        accesses.append(node.out_index)
        if any(abs(i.coef(inner)) == 1 for i in accesses) and any(
                abs(i.coef(outer)) == 1 and abs(i.coef(inner)) > 1 for i in accesses):
            return "tiled", (f"one access is contiguous along {inner}, another along {outer} "
                             f"(a transpose): {TILE_ROWS}x{TILE_COLS} tiles use whole cache "
                             "lines on both sides (§8.2)")
    return "vectorized", "innermost loops carry `omp simd`"


def local_rows(nodes: Sequence[Node], local: Mapping[str, int]) -> tuple[int, str]:
    """[FROWS] Kernel-local values of more than one element per output (a softmax's `exp` row)
    in the outer-reduction form: the most outputs per block (a multiple of 16) whose rows of
    them fit LOCAL_ROWS_BYTES, each value laid out with the block's outputs contiguous, and
    why; 0 when some local has more than one element but the form does not pay or fit: it
    does when the kernel's results are stored contiguously along the block (a row softmax of
    a Fortran-ordered operand with a Fortran-ordered result: every access contiguous)."""
    wide = {b: e for b, e in local.items() if e != 1}
    space = output_space(nodes)
    if not wide or not space or not all(isinstance(e, int) for e in wide.values()) or \
            not isinstance(space[-1], int):
        return 0, ""
    last = f"x{len(space) - 1}"
    if any(n.out not in local and n.out_index.coef(last) not in (0, 1) for n in nodes):
        return 0, ""
    itemsize = {n.out: n.body.dtype.itemsize for n in nodes if n.body is not None}
    row_bytes = sum(e * itemsize.get(b, 8) for b, e in wide.items())
    rows = LOCAL_ROWS_BYTES // row_bytes // 16 * 16
    if rows < 16:
        return 0, ""
    return rows, (f"kernel-local {', '.join(f'{b}[{e}]' for b, e in wide.items())} per output "
                  f"and results contiguous along {last}: at most {rows} outputs per block "
                  f"({rows * row_bytes} bytes of thread-local rows, every access contiguous)")


def output_space(nodes: Sequence[Node]) -> tuple[int, ...]:
    """The loops of a kernel's first reduction or scan (its first node's if it has none):
    the outputs the outer-reduction form runs in blocks."""
    return next((n.ranges for n in nodes if n.kind in ("reduction", "scan")), nodes[0].ranges)


def _outer_reduction(nodes: Sequence[Node]) -> bool:
    """Reductions (with pointwise work on their outputs), or a scan, over one output space
    whose loads are contiguous or invariant along the last output axis, at least one of them
    strided along the reduced axis: the outer-reduction form reads them a row of outputs at
    a time (a scan along axis 0 adds whole rows). Pointwise nodes may run loops of their own
    inside the output space (`x - x.mean(1, keepdims=True)` on a Fortran-ordered `x`: per
    block of rows, the row means, then the rows' elements a column of the block at a time)."""
    reductions = [n for n in nodes if n.kind in ("reduction", "scan")]
    if any(n.kind == "scan" for n in nodes) and (len(nodes) > 1 or abs(
            nodes[0].out_index.coef(f"x{len(nodes[0].ranges) - 1}")) != 1):
        return False  # a scan alone, storing along the contiguous axis
    space = output_space(nodes)
    if not reductions or not space or any(
            n.kind not in ("pointwise", "reduction", "scan") or n.body is None
            or n.ranges[:len(space)] != space or n.fn in ("argmax", "argmin")
            or n.kind != "pointwise" and n.ranges != space for n in nodes):
        return False
    if any(n.reduction_ranges != reductions[0].reduction_ranges for n in reductions):
        return False
    last_x = f"x{len(space) - 1}"
    last_r = f"r{len(reductions[0].reduction_ranges) - 1}"
    loads = [ld for n in nodes for ld in walk(n.body) if isinstance(ld, Load)]  # type: ignore[arg-type]
    clamps = block_clamps(nodes, len(space))
    strided = [ld for n in reductions for ld in walk(n.body)  # type: ignore[arg-type]
               if isinstance(ld, Load) and _across_lanes(ld.index, last_x, last_r, clamps)]
    return bool(strided) and all(lane_coef(ld.index, last_x, clamps) == 0 or _short_lane(
        lane_coef(ld.index, last_x, clamps)) for ld in loads)


def _short_lane(step: int | Sym) -> bool:
    """[PERF] A step between adjacent outputs' loads the outer-reduction form reads well."""
    return step == 1 or isinstance(step, int) and 0 < abs(step) <= MAX_LANE_STRIDE


def _across_lanes(index: Index, last_x: str, last_r: str, clamps: Mapping[Expr, Clamp]) -> bool:
    """A load the outer-reduction form pays for: along the block's outputs its step is short
    (contiguous, or [PERF] a short stride: `x[::2, 1::3].max(0)`), along the reduced axis
    longer (a column walk per output would touch a new cache line per element)."""
    lane, step = lane_coef(index, last_x, clamps), index.coef(last_r)
    if not _short_lane(lane) or step == 0 or abs(step) == 1:
        return False
    return lane == 1 or isinstance(step, int) and abs(step) > abs(lane)


def block_clamps(nodes: Sequence[Node], rank: int) -> dict[Expr, Clamp]:
    """The clamped affine gather indices (`stax.ir.prefix.clamp_of`, a masked slice's
    positions) along the last of the `rank` output axes, by their clamped expression: the
    outer-reduction form reads them unclamped in the blocks where no clamp bites."""
    names = xvars(rank)
    written = {n.out for n in nodes}
    found: dict[Expr, Clamp] = {}
    for n in nodes:
        for e in walk(n.body):  # type: ignore[arg-type]
            if isinstance(e, (Load, IndexValue)):
                for atom, _ in e.index.terms:
                    c = clamp_of(atom, names[-1], set(names[:-1]), written) \
                        if isinstance(atom, Indirect) else None
                    if c is not None:
                        found[atom.expr] = c
    return found


def lane_coef(index: Index, var: str, clamps: Mapping[Expr, Clamp]) -> int:
    """The step of `index` per step of `var`, a clamped index counted as its argument."""
    return index.coef(var) + sum(c * clamps[a.expr].coef for a, c in index.terms
                                 if isinstance(a, Indirect) and a.expr in clamps)


def _prod(xs: Sequence[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out
