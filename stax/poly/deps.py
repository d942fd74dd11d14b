"""Dependences between statement instances (seed 000 Def. 7.6): RAW, WAR, WAW.

Memory-based dependences relate every pair of instances that touch the same element, at least
one writing, the source first in the original schedule. Value-based ones (the default) keep a
pair only when no write to the element comes between (isl's dataflow analysis); both give the
same legality verdicts, as the memory-based ones are in the transitive closure of the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import islpy as isl

from stax.poly._isl import PolyError, budget, maps_of, point_coordinates
from stax.poly.model import Scop

Kind = Literal["raw", "war", "waw"]
KINDS: tuple[Kind, ...] = ("raw", "war", "waw")
_MAX_DISTANCES = 256


@dataclass(frozen=True, eq=False)
class Dependences:
    """The dependences of a scop as isl union maps from source to sink instances."""

    raw: isl.UnionMap
    war: isl.UnionMap
    waw: isl.UnionMap
    schedule: isl.UnionMap  # the padded original schedule that orders source before sink
    mode: str

    @property
    def all(self) -> isl.UnionMap:
        return self.raw.union(self.war).union(self.waw)

    def of(self, kind: Kind) -> isl.UnionMap:
        return {"raw": self.raw, "war": self.war, "waw": self.waw}[kind]

    def by_level(self, kind: Kind | Literal["all"] = "all") -> dict[int, isl.UnionMap]:
        """Definition 7.6's split: level p (1-based) holds the dependences whose source and sink
        timestamps in the original schedule first differ in dimension p."""
        deps = self.all if kind == "all" else self.of(kind)
        space = isl.Space.map_from_set(maps_of(self.schedule)[0].get_space().range())
        out: dict[int, isl.UnionMap] = {}
        for p in range(1, space.dim(isl.dim_type.out) + 1):
            carried = isl.Map.lex_lt_first(space, p).subtract(isl.Map.lex_lt_first(space, p - 1))
            at_p = deps.intersect(
                self.schedule.apply_range(isl.UnionMap.from_map(carried)).apply_range(
                    self.schedule.reverse()
                )
            )
            if not at_p.is_empty():
                out[p] = at_p
        return out

    def distance_vectors(self, kind: Kind | Literal["all"] = "raw") -> list[tuple[int, ...]]:
        """Sink minus source iterators over the loops both statements have (their common
        prefix), for uniform dependences; PolyError when a distance depends on the instance."""
        deps = self.all if kind == "all" else self.of(kind)
        found: set[tuple[int, ...]] = set()
        for m in maps_of(deps):
            common = min(m.dim(isl.dim_type.in_), m.dim(isl.dim_type.out))
            m = m.project_out(isl.dim_type.in_, common, m.dim(isl.dim_type.in_) - common)
            m = m.project_out(isl.dim_type.out, common, m.dim(isl.dim_type.out) - common)
            m = m.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
            delta = m.deltas()
            delta = delta.project_out(isl.dim_type.param, 0, delta.dim(isl.dim_type.param))
            if not delta.is_bounded():
                raise PolyError(f"{kind} dependences are not uniform: distances {delta}")
            points: list[isl.Point] = []
            delta.foreach_point(points.append)
            if len(points) > _MAX_DISTANCES:
                raise PolyError(f"{kind} dependences are not uniform: distances {delta}")
            found.update(point_coordinates(p, common) for p in points)
        return sorted(found)


def dependences(
    scop: Scop, mode: Literal["value", "memory"] = "value", max_operations: int | None = None
) -> Dependences:
    """RAW, WAR and WAW dependences of `scop` under its original schedule."""
    schedule = scop.schedule.to_map()
    with budget(*(() if max_operations is None else (max_operations,)), what="dependences"):
        if mode == "memory":
            return _memory(scop, schedule)
        if mode == "value":
            return _value(scop, schedule)
    raise PolyError(f"unknown dependence mode '{mode}' (use 'value' or 'memory')")


def _memory(scop: Scop, schedule: isl.UnionMap) -> Dependences:
    before = schedule.lex_lt_union_map(schedule)

    def conflicts(src: isl.UnionMap, dst: isl.UnionMap) -> isl.UnionMap:
        return src.apply_range(dst.reverse()).intersect(before)

    r, w = scop.reads, scop.writes
    return Dependences(conflicts(w, r), conflicts(r, w), conflicts(w, w), schedule, "memory")


def _value(scop: Scop, schedule: isl.UnionMap) -> Dependences:
    reads, writes = _tagged(scop.reads, "R"), _tagged(scop.writes, "W")
    tagged_schedule = (
        reads.domain().union(writes.domain()).unwrap().domain_map().apply_range(schedule)
    )

    def flow(sink: isl.UnionMap, must: isl.UnionMap, may: isl.UnionMap | None) -> isl.UnionMap:
        info = isl.UnionAccessInfo.from_sink(sink).set_must_source(must)
        if may is not None:
            info = info.set_may_source(may)
        return info.set_schedule_map(tagged_schedule).compute_flow().get_may_dependence()

    raw = flow(reads, writes, None)
    waw = flow(writes, writes, None)
    war = flow(writes, writes, reads).intersect_domain(reads.domain())
    return Dependences(_untag(raw), _untag(war), _untag(waw), schedule, "value")


def _tagged(accesses: isl.UnionMap, tag: str) -> isl.UnionMap:
    """`S[i] -> A[..]` as `[S[i] -> R[]] -> A[..]`, so reads and writes stay apart."""
    out = isl.UnionMap.empty(accesses.get_space())
    for m in maps_of(accesses):
        tag_set = isl.Set.universe(isl.Space.set_alloc(m.get_ctx(), 0, 0)).set_tuple_name(tag)
        wrap = isl.Map.from_domain_and_range(m.domain(), tag_set).wrap()
        out = out.union(wrap.unwrap().domain_map().apply_range(m))
    return out


def _untag(deps: isl.UnionMap) -> isl.UnionMap:
    return deps.domain_factor_domain().range_factor_domain()
