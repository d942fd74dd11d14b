"""The unified legality check (seed 002): Δ_Θ' ∩ B_lex = ∅, with counterexamples and band flags.

A candidate schedule is legal when every dependence goes strictly lexicographically forward
under it: equal timestamps for a dependent pair are illegal. A violation carries one concrete
violating instance pair (the smallest parameters and instances isl finds). Each band of the
schedule tree reports whether it is permutable (no negative distance component among the
dependences it sees: Def. 7.7, Thm. 7.3) and which members are parallel (zero distance).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import islpy as isl

from stax.poly._isl import (
    PolyError,
    budget,
    maps_of,
    point_coordinates,
    union_map,
    union_set,
    with_params,
)
from stax.poly.deps import KINDS, Dependences, dependences
from stax.poly.model import Scop
from stax.poly.tree import Band, Filter, Node, Path, ScheduleTree, Sequence, SetNode, children

ScheduleLike = str | isl.UnionMap | isl.Schedule | ScheduleTree


@dataclass(frozen=True)
class Violation:
    """A dependence `source` → `sink` (statement instances) that the schedule breaks."""

    kind: str
    source: str
    sink: str
    source_instance: tuple[int, ...]
    sink_instance: tuple[int, ...]
    params: tuple[tuple[str, int], ...]
    source_time: tuple[int, ...]
    sink_time: tuple[int, ...]
    reason: str

    def __str__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params)
        where = f" with {params}" if params else ""
        return (
            f"{self.kind.upper()} dependence {self.source}{_tuple(self.source_instance)} -> "
            f"{self.sink}{_tuple(self.sink_instance)}{where}: {self.reason} "
            f"(source at {_tuple(self.source_time)}, sink at {_tuple(self.sink_time)})"
        )


@dataclass(frozen=True)
class BandInfo:
    """Legality-related facts of one band of the checked schedule tree."""

    path: Path
    permutable: bool
    parallel: tuple[bool, ...]


@dataclass(frozen=True, eq=False)
class Verdict:
    """The outcome of `check`: violations (empty when legal), band flags and the checked tree,
    whose bands carry the computed permutable/coincident flags."""

    violations: tuple[Violation, ...]
    bands: tuple[BandInfo, ...]
    tree: ScheduleTree

    @property
    def legal(self) -> bool:
        return not self.violations

    @property
    def permutable(self) -> bool:
        return all(b.permutable for b in self.bands)

    def __str__(self) -> str:
        lines = ["legal" if self.legal else f"illegal: {len(self.violations)} violation(s)"]
        lines += [f"  {v}" for v in self.violations]
        for b in self.bands:
            par = "".join("p" if p else "-" for p in b.parallel)
            perm = "permutable" if b.permutable else "not permutable"
            lines.append(f"  band at {list(b.path)}: {perm}, parallel members [{par}]")
        return "\n".join(lines)


def check(scop: Scop, schedule: ScheduleLike, deps: Dependences | None = None) -> Verdict:
    """Whether `schedule` preserves every dependence of `scop`, with counterexamples.

    By default the memory-based dependences are used: they are exact, cheap to compute, and give
    the same verdict and band flags as the value-based ones (their transitive reduction)."""
    tree = as_tree(scop, schedule)
    deps = deps if deps is not None else dependences(scop, "memory")
    with budget(what="the legality check"):
        smap = tree.to_map().intersect_domain(scop.domain)
        backwards = smap.lex_ge_union_map(smap)
        violations = [
            violation(kind, m, smap, "the sink does not run strictly after the source")
            for kind in KINDS
            for m in maps_of(deps.of(kind).intersect(backwards))
        ]
        analysis = _Analysis(smap)
        root = analysis.walk(tree.root, (), scop.domain, deps.all.intersect_domain(scop.domain))
    return Verdict(
        tuple(violations) + tuple(analysis.violations),
        tuple(analysis.bands),
        ScheduleTree(tree.domain, root),
    )


def as_tree(scop: Scop, schedule: ScheduleLike) -> ScheduleTree:
    """The schedule as a tree over the scop's instances, after checking names and arities."""
    if isinstance(schedule, ScheduleTree):
        tree = schedule
    elif isinstance(schedule, isl.Schedule):  # through text: it may live in another isl context
        tree = ScheduleTree.from_yaml(schedule.to_str())
    else:
        umap = union_map(str(schedule))
        for m in maps_of(umap):
            name = m.get_tuple_name(isl.dim_type.in_)
            stmt = scop.statement(name)
            if m.dim(isl.dim_type.in_) != len(stmt.iterators):
                raise PolyError(
                    f"the schedule of {name} has {m.dim(isl.dim_type.in_)} input dimensions, "
                    f"but {name} has {len(stmt.iterators)} iterators {_tuple(stmt.iterators)}"
                )
        tree = ScheduleTree.from_map(umap, scop.domain)
    scheduled = tree.to_map().domain()
    for stmt in scop.statements:
        if not isl.UnionSet.from_set(stmt.domain).is_subset(scheduled):
            raise PolyError(f"the schedule does not cover all instances of {stmt.name}")
    return tree


def violation(kind: str, pairs: isl.Map, smap: isl.UnionMap, reason: str) -> Violation:
    """A Violation from one concrete pair of `pairs` (smallest parameters, then instances)."""
    wrapped = pairs.wrap()
    nparam = wrapped.dim(isl.dim_type.param)
    names = [wrapped.get_dim_name(isl.dim_type.param, k) for k in range(nparam)]
    flat = wrapped.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, nparam)
    try:
        point = flat.lexmin().sample_point()
    except isl.Error:  # unbounded below: any point will do
        point = flat.sample_point()
    n_in, n_out = pairs.dim(isl.dim_type.in_), pairs.dim(isl.dim_type.out)
    coords = point_coordinates(point, nparam + n_in + n_out)
    params = tuple(zip(names, coords[:nparam], strict=True))
    src, dst = coords[nparam : nparam + n_in], coords[nparam + n_in :]
    src_name = pairs.get_tuple_name(isl.dim_type.in_)
    dst_name = pairs.get_tuple_name(isl.dim_type.out)
    return Violation(
        kind,
        src_name,
        dst_name,
        src,
        dst,
        params,
        _time(smap, src_name, src, params),
        _time(smap, dst_name, dst, params),
        reason,
    )


def _time(
    smap: isl.UnionMap, name: str, inst: tuple[int, ...], params: tuple[tuple[str, int], ...]
) -> tuple[int, ...]:
    fixed = " and ".join(f"{k} = {v}" for k, v in params)
    body = f"{{ {name}[{', '.join(map(str, inst))}]{' : ' + fixed if fixed else ''} }}"
    point = union_set(with_params((k for k, _ in params), body))
    (m,) = maps_of(smap.intersect_domain(point))
    times = m.range()
    return point_coordinates(times.sample_point(), times.dim(isl.dim_type.set))


class _Analysis:
    """Walks the tree with the dependences not carried by the ancestors of each node."""

    def __init__(self, smap: isl.UnionMap) -> None:
        self.smap = smap
        self.bands: list[BandInfo] = []
        self.violations: list[Violation] = []

    def walk(self, node: Node, path: Path, domain: isl.UnionSet, local: isl.UnionMap) -> Node:
        local = local.intersect_domain(domain).intersect_range(domain)
        if isinstance(node, Band):
            return self.band(node, path, domain, local)
        if isinstance(node, Filter):
            child = self.walk(node.child, (*path, 0), domain.intersect(node.filter), local)
            return dataclasses.replace(node, child=child)
        if isinstance(node, Sequence | SetNode):
            if isinstance(node, SetNode):
                self.unordered(node, local)
            kids = tuple(
                self.walk(f, (*path, k), domain, local) for k, f in enumerate(node.children)
            )
            return dataclasses.replace(node, children=kids)
        kids = tuple(self.walk(c, (*path, 0), domain, local) for c in children(node))
        return dataclasses.replace(node, child=kids[0]) if kids else node

    def band(self, band: Band, path: Path, domain: isl.UnionSet, local: isl.UnionMap) -> Node:
        permutable, parallel, seen = True, [], local
        for k in range(band.n_member):
            member = isl.MultiUnionPwAff.from_union_pw_aff(band.member(k))
            if not seen.lex_gt_at_multi_union_pw_aff(member).is_empty():
                permutable = False
            parallel.append(local.subtract(local.eq_at_multi_union_pw_aff(member)).is_empty())
            local = local.eq_at_multi_union_pw_aff(member)
        self.bands.append(BandInfo(path, permutable, tuple(parallel)))
        child = self.walk(band.child, (*path, 0), domain, local)
        return dataclasses.replace(
            band, child=child, permutable=permutable, coincident=tuple(parallel)
        )

    def unordered(self, node: SetNode, local: isl.UnionMap) -> None:
        """Children of a set node may run in any order: no dependence may join two of them."""
        for i, a in enumerate(node.children):
            for j, b in enumerate(node.children):
                if i == j:
                    continue
                across = local.intersect_domain(a.filter).intersect_range(b.filter)
                self.violations += [
                    violation("dep", m, self.smap, "it joins two children of a set node")
                    for m in maps_of(across)
                ]


def _tuple(values: tuple) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"
