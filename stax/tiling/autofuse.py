"""Seed 003 (AutoFuse) schedule structure: axis groups, tiling cases, split trees, run-time tiling.

The schedule makes only structural decisions; the split sizes are solved at launch for the
actual shape ("codegen emits the shape of the code, not the tiling values"):

- every node's loops are normalized into three groups, written `(x)(y)(r)`: `x` the axes
  before a concat axis, `y` elementwise/broadcast loops, `r` reduction loops;
- the groups of all nodes of a kernel merge into one (`merge_groups`; the seed's example
  `()(z0,z1)() Merge ()(z0)(z1) => ()(z0)(z1)`: z1 moves to the reduction group so that the
  elementwise op follows the reduction's split). Two kernels whose groups do not merge cannot
  share one split strategy;
- a tiling case picks one split axis in every non-empty group (the cross product); each case
  has a split tree: ORIGINAL -> TILE_OUT/TILE_IN (`z1T`/`z1t`) -> the outer non-reduction axes
  merged (`z0z1T`) -> BLOCK_OUT/BLOCK_IN bound to cores (`z0z1TB`/`z0z1Tb`); the vectorized
  axes are `ub_in` and every axis inside it, in the output's layout order;
- `solve` picks, for actual sizes, a thread count and cache sizes, the case (`tiling_key`) and
  its sizes with a cost model (bytes moved, vector efficiency, load balance, cache capacity
  of a tile), memoized per shape.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stax.ir.program import Node
from stax.ir.sym import hint

GROUPS = ("x", "y", "r")


@dataclass(frozen=True)
class AxisGroups:
    """Seed 003's x/y/r groups of loop axes (axis names in loop order within each group)."""

    x: tuple[str, ...] = ()
    y: tuple[str, ...] = ()
    r: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "".join(f"({','.join(g)})" for g in (self.x, self.y, self.r))

    @property
    def axes(self) -> tuple[str, ...]:
        return self.x + self.y + self.r

    def group(self, name: str) -> tuple[str, ...]:
        return {"x": self.x, "y": self.y, "r": self.r}[name]


@dataclass(frozen=True)
class MergeResult:
    groups: AxisGroups | None  # None when the groups do not merge
    reason: str

    def __bool__(self) -> bool:
        return self.groups is not None


def merge_groups(a: AxisGroups, b: AxisGroups, order: Sequence[str] = ()) -> MergeResult:
    """AutoFuse's group merge. An axis reduced by either side is a reduction axis of the
    merged groups (the elementwise op follows the reduction's split); an axis before a concat
    axis on either side is an x axis; the rest are y axes. Axes keep `order` (the kernel's loop
    order; by default first appearance). The merge fails when one side reduces an axis the
    other places before a concat axis, or when the two sides order shared axes differently."""
    for g in GROUPS:
        shared_a = [z for z in a.group(g) if z in b.axes]
        shared_b = [z for z in b.group(g) if z in a.axes]
        if [z for z in shared_a if z in b.group(g)] != [z for z in shared_b if z in a.group(g)]:
            return MergeResult(None, f"axes of group {g} are ordered differently: "
                                     f"{a} vs {b}")
    clash = (set(a.r) & set(b.x)) | (set(a.x) & set(b.r))
    if clash:
        return MergeResult(None, f"axis {sorted(clash)[0]} is a reduction axis on one side "
                                 f"and a concat prefix on the other: {a} vs {b}")
    names = list(dict.fromkeys(order or (a.axes + b.axes)))
    reduced = set(a.r) | set(b.r)
    prefix = (set(a.x) | set(b.x)) - reduced
    merged = AxisGroups(tuple(z for z in names if z in prefix),
                        tuple(z for z in names if z not in prefix and z not in reduced
                              and (z in a.axes or z in b.axes)),
                        tuple(z for z in names if z in reduced))
    return MergeResult(merged, f"{a} Merge {b} => {merged}")


def merge_all(groups: Sequence[AxisGroups], order: Sequence[str] = ()) -> MergeResult:
    """Fold `merge_groups` over a kernel's nodes; the first failure is the verdict."""
    result = MergeResult(AxisGroups(), "no nodes")
    steps = []
    for g in groups:
        assert result.groups is not None
        result = merge_groups(result.groups, g, order)
        if not result:
            return result
        steps.append(result.reason)
    return MergeResult(result.groups, "; ".join(steps))


@dataclass(frozen=True)
class Split:
    """One edge of a split tree: `axis` becomes `outer` x `inner` (kind tile or block), or
    several axes merge into `outer` (kind merge)."""

    kind: str  # "tile", "merge", "block"
    axes: tuple[str, ...]
    outer: str
    inner: str = ""

    def __str__(self) -> str:
        if self.kind == "merge":
            return f"merge {{{', '.join(self.axes)}}} -> {self.outer}"
        label = ("TILE_OUT", "TILE_IN") if self.kind == "tile" else ("BLOCK_OUT", "BLOCK_IN")
        return f"{self.axes[0]} -> {self.outer} ({label[0]}) x {self.inner} ({label[1]})"


@dataclass(frozen=True)
class TilingCase:
    """One point of the split solution space: a split axis per non-empty group."""

    key: int  # the tiling_key
    split_axes: tuple[tuple[str, str], ...]  # (group, axis)
    splits: tuple[Split, ...]  # ORIGINAL -> TILE_OUT/IN -> merged outer -> BLOCK_OUT/IN
    loops: tuple[str, ...]  # the loop order after splitting, outermost first
    vector_axes: tuple[str, ...]  # ub_in and the axes inside it, in output layout order
    block_axis: str  # the merged outer axis bound to cores
    outer: tuple[str, ...]  # the loops merged into block_axis
    combine: bool = False  # CPU case: reduction tiles bound to cores, partials combined

    def __str__(self) -> str:
        head = ", ".join(f"{g}:{z}" for g, z in self.split_axes)
        extra = ", reduction tiles on cores + combine" if self.combine else ""
        return (f"case {self.key} (split {head}{extra}): " + "; ".join(map(str, self.splits)) +
                f"; loops {{{', '.join(self.loops)}}}; vectorized [{', '.join(self.vector_axes)}]")


def tiling_cases(groups: AxisGroups, layout: Sequence[str] = ()) -> tuple[TilingCase, ...]:
    """Every tiling case of merged `groups`: the cross product of one split axis per
    non-empty group, each with its split tree. `layout` is the output's axis order (default:
    the groups' order)."""
    layout = tuple(layout) or groups.axes
    present = [g for g in GROUPS if groups.group(g)]
    choices = list(itertools.product(*(groups.group(g) for g in present)))
    # On a CPU one long reduction may also be split over cores, partials combined after.
    variants = [(c, False) for c in choices] + [(c, True) for c in choices if groups.r]
    cases = []
    for key, (choice, combine) in enumerate(variants):
        split = dict(zip(present, choice, strict=True))
        loops: list[str] = []
        splits: list[Split] = []
        inner: list[str] = []  # ub_in axes and those inside them, by group
        for g in present:
            axes = groups.group(g)
            k = axes.index(split[g])
            z = split[g]
            splits.append(Split("tile", (z,), f"{z}T", f"{z}t"))
            loops += list(axes[:k]) + [f"{z}T"]
            inner += [f"{z}t"] + list(axes[k + 1:])
        # Outer loops of the non-reduction groups merge into one axis bound to cores (with the
        # reduction's outer tile loop too, in a combine case).
        outer = [z for z in loops if combine or not _in_group(z, groups.r)]
        merged = "".join(outer)
        if len(outer) > 1:
            splits.append(Split("merge", tuple(outer), merged))
        splits.append(Split("block", (merged,), f"{merged}B", f"{merged}b"))
        order = [f"{merged}B", f"{merged}b"] + [z for z in loops if z not in outer] + inner
        vector = _layout_order(inner, layout)
        cases.append(TilingCase(key, tuple(split.items()), tuple(splits), tuple(order),
                                tuple(vector), merged, tuple(outer), combine))
    return tuple(cases)


def _in_group(loop: str, group: Sequence[str]) -> bool:
    return loop in group or (loop.endswith(("T", "t")) and loop[:-1] in group)


def _base(loop: str) -> str:
    return loop[:-1] if loop.endswith(("T", "t")) else loop


def _layout_order(axes: Sequence[str], layout: Sequence[str]) -> list[str]:
    """The seed's reorder: vectorized axes produced group by group, sorted by the output
    layout (groups (a,c),(b,d) give (a_in, c, b_in, d) -> (a_in, b_in, c, d))."""
    rank = {z: i for i, z in enumerate(layout)}
    return sorted(axes, key=lambda z: rank.get(_base(z), len(rank)))


# ---- run-time tiling -------------------------------------------------------------------------

@dataclass(frozen=True)
class Machine:
    threads: int
    vector_bytes: int = 64  # AVX-512
    l2_bytes: int = 512 * 1024
    itemsize: int = 4
    region_steps: int = 50_000  # opening a parallel region, in element steps (~10 us)


@dataclass(frozen=True)
class Tiling:
    """The solver's answer for one shape: the case, its sizes, and every case's estimate."""

    key: int
    sizes: tuple[tuple[str, int], ...]  # e.g. ("z1t", 512), ("z0z1Tb", 3)
    estimates: tuple[tuple[int, float], ...]  # (key, modelled cost) for every case

    def __str__(self) -> str:
        sizes = ", ".join(f"{k}={v}" if k == "threads" else f"{k}_size={v}"
                          for k, v in self.sizes)
        est = ", ".join(f"case {k}: {c:.3g}" for k, c in self.estimates)
        return f"tiling_key={self.key} ({sizes}); model: {est}"


def _case_cost(case: TilingCase, extents: Mapping[str, int], m: Machine
               ) -> tuple[float, dict[str, int]]:
    """The sizes of a case and their modelled cost (element steps on the busiest core, over
    the vector efficiency, plus the combine of reduction partials).

    Tiles are chosen from the innermost split axis outwards: each as large as its extent and
    what is left of a budget of half of L2 allow (a multiple of the vector width when larger
    than one vector); then the outermost tile is halved while the blocks bound to cores are
    fewer than the cores (load balance)."""
    lanes = max(1, m.vector_bytes // m.itemsize)
    ext = {z: max(n, 1) for z, n in extents.items()}
    tiled = [z for _, z in case.split_axes]
    inner = math.prod(ext[_base(z)] for z in case.vector_axes if not z.endswith("t"))
    budget = max(1, m.l2_bytes // 2 // m.itemsize // inner)
    tiles: dict[str, int] = {}
    for z in sorted(tiled, key=lambda z: -case.vector_axes.index(f"{z}t")):
        t = max(1, min(ext[z], budget))
        tiles[z] = t - t % lanes if t > lanes else t
        budget = max(1, budget // tiles[z])

    def blocks() -> int:
        return math.prod(-(-ext[_base(z)] // tiles[_base(z)]) if z.endswith("T") else
                         ext[z] for z in case.outer)

    outermost = next((_base(z) for z in case.outer if z.endswith("T")), None)
    while outermost is not None and tiles[outermost] > 1 and blocks() < m.threads:
        tiles[outermost] //= 2
    work = math.prod(ext.values())
    run = tiles[tiled[-1]] * inner if tiled else inner
    efficiency = run / (-(-run // lanes) * lanes)
    options = []
    for cores in sorted({1, max(1, min(m.threads, blocks()))}):  # tiny work: one core
        per_core = -(-blocks() // cores) * (work / max(blocks(), 1))
        combine = 0.0
        if case.combine:  # every core's partial outputs are combined once
            combine = cores * math.prod(ext[z] for z in ext if not any(
                g == "r" and a == z for g, a in case.split_axes)) / lanes
        overhead = m.region_steps if cores > 1 else 0
        options.append((per_core / efficiency + combine + overhead, cores))
    cost, cores = min(options)
    sizes = {f"{z}t": n for z, n in tiles.items()} | {
        f"{case.block_axis}b": -(-blocks() // cores), "threads": cores}
    return cost, sizes


@functools.lru_cache(maxsize=4096)
def solve(groups: AxisGroups, extents: tuple[tuple[str, int], ...], machine: Machine,
          layout: tuple[str, ...] = ()) -> Tiling:
    """The tiling key and split sizes for actual extents (memoized per shape)."""
    ext = dict(extents)
    results = []
    for case in tiling_cases(groups, layout):
        cost, sizes = _case_cost(case, ext, machine)
        results.append((cost, case.key, sizes))
    cost, key, sizes = min(results, key=lambda t: (t[0], t[1]))
    return Tiling(key, tuple(sorted(sizes.items())),
                  tuple((k, c) for c, k, _ in sorted(results, key=lambda t: t[1])))


# ---- Stax kernels ------------------------------------------------------------------------------

def node_groups(node: Node) -> tuple[AxisGroups, dict[str, int]]:
    """A loop node's groups and extents. Kernel axes are named `z0, z1, ...`: the loops all
    nodes of the kernel share come first; each node's other loops follow by position,
    pointwise loops before reduction (or scan) loops, so a producer's inner loop and its
    consumer's reduction loop over the same extent are the same axis, as in the seed's
    Load -> Abs -> Max."""
    names = [f"z{i}" for i in range(len(node.ranges) + len(node.reduction_ranges))]
    extents = dict(zip(names, node.ranges + node.reduction_ranges, strict=True))
    split = len(node.ranges)
    return AxisGroups((), tuple(names[:split]), tuple(names[split:])), extents


@dataclass(frozen=True)
class KernelTiling:
    """Seed 003's view of one kernel: its nodes' groups, the merge, the cases, the solution."""

    kernel: str
    nodes: tuple[tuple[str, AxisGroups], ...]
    merged: MergeResult
    cases: tuple[TilingCase, ...]
    tiling: Tiling | None

    def __str__(self) -> str:
        lines = [f"{self.kernel}: axis groups " +
                 ", ".join(f"{n} {g}" for n, g in self.nodes)]
        if not self.merged:
            return "\n".join(lines + [f"  groups do not merge: {self.merged.reason}"])
        lines.append(f"  merged: {self.merged.groups}")
        lines += [f"  {c}" for c in self.cases]
        if self.tiling is not None:
            lines.append(f"  for these shapes: {self.tiling}")
        return "\n".join(lines)


def kernel_tiling(name: str, nodes: Sequence[Node], threads: int, itemsize: int = 4
                  ) -> KernelTiling:
    """Groups, merge, cases and the run-time solution for one planned kernel."""
    per_node = [(n.name, *node_groups(n)) for n in nodes if n.kind != "extern"]
    extents: dict[str, int] = {}
    clash = ""
    for node, _, ext in per_node:
        for z, size in ext.items():
            e = hint(size)  # a generic kernel: the sizes it was traced with (issue 11)
            if extents.setdefault(z, e) != e and not clash:
                clash = f"axis {z} has extent {extents[z]} elsewhere but {e} in {node}"
    groups = tuple((n, g) for n, g, _ in per_node)
    merged = merge_all([g for _, g in groups], sorted(extents, key=lambda z: int(z[1:])))
    if clash:
        merged = MergeResult(None, clash)
    if not merged or merged.groups is None or not merged.groups.axes:
        return KernelTiling(name, groups, merged, (), None)
    cases = tiling_cases(merged.groups)
    tiling = solve(merged.groups, tuple(sorted(extents.items())),
                   Machine(threads=threads, itemsize=itemsize))
    return KernelTiling(name, groups, merged, cases, tiling)
