"""Dependences and scheduler nodes (seed 000 §7.1).

`MemoryDep(buffer, index, ranges)` carries a canonical index: unused loop variables dropped,
contiguous ones merged, variables renamed `c0, c1, ...` (Ex. 7.1: `primals_1`'s `128*x0 + x1`
over 64×128 is `c0` over 8192). `StarDep` is a whole-buffer access (extern calls), `WeakDep`
only orders. Each SchedulerNode records its reads and writes and its iteration group
`(ranges, reduction_ranges)` after merging contiguous loops.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from stax.ir.expr import Index, Indirect
from stax.ir.program import LoopProgram, Node, rvars, xvars
from stax.ir.sym import same_size, surely
from stax.tiling.plan import merge_axes


@dataclass(frozen=True)
class MemoryDep:
    buffer: str
    index: Index
    ranges: tuple[tuple[str, int], ...]
    itemsize: int

    @functools.cached_property
    def numel(self) -> int:
        return math.prod(r for _, r in self.ranges)

    @functools.cached_property
    def nbytes(self) -> int:
        return self.numel * self.itemsize

    def __str__(self) -> str:
        ranges = ", ".join(f"{v}: {r}" for v, r in self.ranges)
        return f"MemoryDep({self.buffer!r}, {self.index}, {{{ranges}}})"


@dataclass(frozen=True)
class StarDep:
    buffer: str
    nbytes: int

    def __str__(self) -> str:
        return f"StarDep({self.buffer!r})"


@dataclass(frozen=True)
class WeakDep:
    buffer: str
    mutating_node: str

    def __str__(self) -> str:
        return f"WeakDep({self.buffer!r}, mutating_buf={self.mutating_node!r})"


Dep = MemoryDep | StarDep | WeakDep


def canonical_dep(buffer: str, index: Index, var_ranges: Sequence[tuple[str, int]],
                  itemsize: int) -> MemoryDep:
    """Drop unused variables, merge contiguous ones, rename to c0, c1, ..."""
    used = index.variables()
    live = [(v, r) for v, r in var_ranges if v in used and not surely(r, "<=", 1)]
    merged: list[tuple[str, int]] = []
    mapping: dict[str, Index] = {}
    for v, r in live:
        if merged and index.is_linear_in(v) and index.is_linear_in(merged[-1][0]) and \
                same_size(index.coef(merged[-1][0]), index.coef(v) * r):
            prev, pr = merged[-1]
            mapping[prev] = Index()
            merged[-1] = (v, pr * r)
            continue
        merged.append((v, r))
    index = index.substitute(mapping) if mapping else index
    rename = {v: Index.var(f"c{k}") for k, (v, _) in enumerate(merged)}
    return MemoryDep(buffer, index.substitute(rename),
                     tuple((f"c{k}", r) for k, (_, r) in enumerate(merged)), itemsize)


@dataclass(frozen=True)
class SchedulerNode:
    node: Node  # the LoopProgram node, loops merged
    writes: tuple[Dep, ...]
    reads: tuple[Dep, ...]  # all reads; `unmet` ones come from other nodes
    unmet: tuple[Dep, ...]
    merge_notes: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def group(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self.node.ranges, self.node.reduction_ranges

    @property
    def is_reduction(self) -> bool:
        return self.node.kind == "reduction"

    def describe(self) -> str:
        met = [d for d in self.reads if d not in self.unmet]
        kind = "ExternKernel" if self.node.kind == "extern" else "ComputedBuffer"
        lines = [f"{self.name}: SchedulerNode({kind})  # {self.node.origin}",
                 f"{self.name}.writes = [{', '.join(map(str, self.writes))}]"]
        if self.unmet:
            lines.append(f"{self.name}.unmet_dependencies = [{', '.join(map(str, self.unmet))}]")
        if met:
            lines.append(f"{self.name}.met_dependencies = [{', '.join(map(str, met))}]")
        lines.append(f"{self.name}.group.iteration = {self.group}")
        return "\n".join(lines)


def scheduler_nodes(program: LoopProgram) -> tuple[SchedulerNode, ...]:
    """One scheduler node per LoopProgram node, with canonical dependences."""
    bufs = program.buffer_map
    produced = {n.out for n in program.nodes}
    # one object per distinct dependence, so that comparing the dependences of two nodes (the
    # fusion score intersects them) mostly finds identical objects instead of comparing fields
    interned: dict[Dep, Dep] = {}
    out = []
    for raw in program.nodes:
        node, notes = merge_axes(raw) if raw.kind in ("pointwise", "reduction") else (raw, [])
        var_ranges = list(zip(xvars(len(node.ranges)), node.ranges, strict=True)) + list(
            zip(rvars(len(node.reduction_ranges)), node.reduction_ranges, strict=True))
        reads: dict[Dep, None] = {}
        if node.kind == "extern":
            for name in node.extern_inputs:
                reads[StarDep(name, bufs[name].nbytes)] = None
            writes: tuple[Dep, ...] = (StarDep(node.out, bufs[node.out].nbytes),)
        else:
            for name in raw.after:  # [DYN16] after the calls binding its sizes
                reads[StarDep(name, bufs[name].nbytes)] = None
            for ld in node.reads():
                if any(isinstance(a, Indirect) for a, _ in ld.index.terms):
                    reads[StarDep(ld.buf, bufs[ld.buf].nbytes)] = None
                else:
                    reads[canonical_dep(ld.buf, ld.index, var_ranges,
                                        bufs[ld.buf].dtype.itemsize)] = None
            out_vars = var_ranges if node.kind == "scan" else var_ranges[:len(node.ranges)]
            writes = (canonical_dep(node.out, node.out_index, out_vars,
                                    bufs[node.out].dtype.itemsize),)
        read_deps = tuple(interned.setdefault(d, d) for d in reads)
        writes = tuple(interned.setdefault(d, d) for d in writes)
        unmet = tuple(d for d in read_deps if d.buffer in produced)
        out.append(SchedulerNode(node, writes, read_deps, unmet, tuple(notes)))
    return tuple(out)
