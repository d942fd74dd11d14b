"""The tie-in to Stax's scheduler: its loop statements as a scop, and a proof of its fusions.

A `PolyStatement` is one scheduler node: loops `i0, i1, ...` over `extents`, accesses as flat
quasi-affine subscripts. `verify_fusion` checks a fused kernel order instance by instance, with
the shared outer loops of a kernel treated as parallel (seed 000 Prop. 7.3(2)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl

from stax.poly._isl import PolyError, budget, maps_of, set_, union_map
from stax.poly.check import Verdict, Violation, check, violation
from stax.poly.deps import KINDS, dependences
from stax.poly.model import Scop, Statement, identity_band, sequence_tree


@dataclass(frozen=True)
class PolyStatement:
    name: str
    extents: tuple[int, ...]
    reads: tuple[tuple[str, str], ...]
    writes: tuple[tuple[str, str], ...]

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(f"i{k}" for k in range(len(self.extents)))

    @property
    def instance(self) -> str:
        return f"{self.name}[{', '.join(self.iterators)}]"


def from_loop_program(statements: Sequence[PolyStatement]) -> Scop:
    """A scop whose original schedule runs the statements in order, each its loops in order."""
    names = [s.name for s in statements]
    if len(set(names)) != len(names):
        raise PolyError(f"statement names repeat: {names}")
    built = tuple(_statement(s) for s in statements)
    tree = sequence_tree([(s.domain, identity_band(s)) for s in built])
    return Scop(built, tree, ())


def verify_fusion(
    statements: Sequence[PolyStatement], kernels: Sequence[Sequence[tuple[str, int]]]
) -> Verdict:
    """Check kernels run in order, each running its statements inside its shared outer loops.

    The fused schedule of a statement with `d` shared loops in kernel `k` at position `p` is
    `[k, i0 .. i(d-1) (padded to the kernel's depth), p, i(d) ..]`. Besides the order, every
    dependence inside a kernel must have distance zero on the shared loops, which run parallel.
    """
    scop = from_loop_program(statements)
    listed = [name for kernel in kernels for name, _ in kernel]
    if sorted(listed) != sorted(s.name for s in statements):
        raise PolyError(
            f"the kernels list {sorted(listed)}, the program has "
            f"{sorted(s.name for s in statements)}: each statement must be in exactly one kernel"
        )
    parts, shared = [], []
    for k, kernel in enumerate(kernels):
        depth = max((d for _, d in kernel), default=0)
        for pos, (name, d) in enumerate(kernel):
            stmt = scop.statement(name)
            if not 0 <= d <= len(stmt.iterators):
                raise PolyError(f"{name} has {len(stmt.iterators)} loops, cannot share {d}")
            outer = [*stmt.iterators[:d], *["0"] * (depth - d)]
            dims = [str(k), *outer, str(pos), *stmt.iterators[d:]]
            parts.append(f"{name}[{', '.join(stmt.iterators)}] -> [{', '.join(dims)}]")
            shared.append((name, k, d))
    verdict = check(scop, union_map("{ " + "; ".join(parts) + " }"))
    extra = _parallel_violations(scop, shared, verdict.tree.to_map())
    return dataclasses.replace(verdict, violations=verdict.violations + extra)


def _parallel_violations(
    scop: Scop, shared: list[tuple[str, int, int]], smap: isl.UnionMap
) -> tuple[Violation, ...]:
    """Dependences inside one kernel carried by a shared (parallel) outer loop."""
    deps = dependences(scop)
    found: list[Violation] = []
    with budget(what="the parallel-loop check"):
        for src, k, d_src in shared:
            for dst, k2, d_dst in shared:
                depth = min(d_src, d_dst)
                if k != k2 or depth == 0:
                    continue
                same = [f"i{j} = o{j}" for j in range(depth)]
                src_stmt, dst_stmt = scop.statement(src), scop.statement(dst)
                equal = union_map(
                    f"{{ {src}[{', '.join(src_stmt.iterators)}] -> "
                    f"{dst}[{', '.join(f'o{j}' for j in range(len(dst_stmt.iterators)))}] "
                    f": {' and '.join(same)} }}"
                )
                for kind in KINDS:
                    pairs = deps.of(kind).intersect_domain(isl.UnionSet.from_set(src_stmt.domain))
                    pairs = pairs.intersect_range(isl.UnionSet.from_set(dst_stmt.domain))
                    found += [
                        violation(
                            kind,
                            m,
                            smap,
                            f"it crosses iterations of the parallel loops "
                            f"shared by kernel {k} (depth {depth})",
                        )
                        for m in maps_of(pairs.subtract(equal))
                    ]
    return tuple(found)


def _statement(s: PolyStatement) -> Statement:
    bounds = " and ".join(f"0 <= {i} < {n}" for i, n in zip(s.iterators, s.extents, strict=True))
    domain = set_(f"{{ {s.instance}{' : ' + bounds if bounds else ''} }}")

    def accesses(pairs: tuple[tuple[str, str], ...]) -> isl.UnionMap:
        text = "; ".join(f"{s.instance} -> {array}[{index}]" for array, index in pairs)
        return union_map("{ " + text + " }").intersect_domain(isl.UnionSet.from_set(domain))

    return Statement(s.name, s.iterators, domain, accesses(s.reads), accesses(s.writes))
