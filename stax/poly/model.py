"""The polyhedral model of a program: statements, iteration domains, accesses, original order."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass
from functools import reduce

import islpy as isl

from stax.poly._isl import PolyError, maps_of, sets_of, union_map, union_set
from stax.poly.tree import Band, Filter, Leaf, ScheduleTree, Sequence


@dataclass(frozen=True, eq=False)
class Statement:
    """One statement: its instances, the array elements they read and write, and its C text.

    `body` is C code over the statement's iterators (each written `(i)`, so the text can be the
    body of a macro `#define S0(i, j) ...`); it is None for statements given as isl text.
    """

    name: str
    iterators: tuple[str, ...]
    domain: isl.Set
    reads: isl.UnionMap
    writes: isl.UnionMap
    body: str | None = None
    line: int | None = None


@dataclass(frozen=True, eq=False)
class Scop:
    """A static control part: statements, parameters and the original schedule tree.

    `functions` lists the called functions (name, arity) that `validate` must define.
    """

    statements: tuple[Statement, ...]
    schedule: ScheduleTree
    params: tuple[str, ...]
    functions: tuple[tuple[str, int], ...] = ()

    @property
    def domain(self) -> isl.UnionSet:
        return _union(isl.UnionSet, [isl.UnionSet.from_set(s.domain) for s in self.statements])

    @property
    def reads(self) -> isl.UnionMap:
        return _union(isl.UnionMap, [s.reads for s in self.statements])

    @property
    def writes(self) -> isl.UnionMap:
        return _union(isl.UnionMap, [s.writes for s in self.statements])

    @property
    def arrays(self) -> tuple[str, ...]:
        names = {m.get_tuple_name(isl.dim_type.out) for m in maps_of(self.reads.union(self.writes))}
        return tuple(sorted(names))

    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in self.statements)
        raise PolyError(f"unknown statement '{name}' (the program has {known})")

    @classmethod
    def from_isl(cls, domain: str, reads: str, writes: str, schedule: str | None = None) -> Scop:
        """A scop from isl text; without `schedule` the statements run in name order."""
        dom = union_set(domain)
        rd = union_map(reads).intersect_domain(dom)
        wr = union_map(writes).intersect_domain(dom)
        statements = tuple(
            Statement(
                name=s.get_tuple_name(),
                iterators=tuple(
                    s.get_dim_name(isl.dim_type.set, k) or f"i{k}"
                    for k in range(s.dim(isl.dim_type.set))
                ),
                domain=s,
                reads=rd.intersect_domain(isl.UnionSet.from_set(s)),
                writes=wr.intersect_domain(isl.UnionSet.from_set(s)),
            )
            for s in sorted(sets_of(dom), key=lambda s: s.get_tuple_name())
        )
        for m in maps_of(union_map(reads).union(union_map(writes))):
            name = m.get_tuple_name(isl.dim_type.in_)
            if not any(s.name == name for s in statements):
                raise PolyError(f"access of unknown statement '{name}'")
        params = tuple(
            dom.get_space().get_dim_name(isl.dim_type.param, k)
            for k in range(dom.get_space().dim(isl.dim_type.param))
        )
        tree = (
            ScheduleTree.from_map(union_map(schedule), dom)
            if schedule is not None
            else sequence_tree([(s.domain, identity_band(s)) for s in statements])
        )
        return cls(statements, tree, params)


def identity_band(statement: Statement) -> isl.MultiUnionPwAff | None:
    """The band `S[i, j] -> [(i), (j)]` of a statement, None for a statement without loops."""
    if not statement.iterators:
        return None
    space = statement.domain.get_space()
    maff = isl.MultiAff.identity_on_domain_space(space).reset_tuple_id(isl.dim_type.out)
    return isl.MultiUnionPwAff.from_multi_pw_aff(isl.MultiPwAff.from_multi_aff(maff))


def sequence_tree(
    parts: Seq[tuple[isl.Set, isl.MultiUnionPwAff | None]],
) -> ScheduleTree:
    """Statements one after another, each with its own band (the shape of a fissioned program)."""
    filters = tuple(
        Filter(isl.UnionSet.from_set(dom), Band(band) if band is not None else Leaf())
        for dom, band in parts
    )
    domain = _union(isl.UnionSet, [f.filter for f in filters])
    root = filters[0].child if len(filters) == 1 else Sequence(filters)
    return ScheduleTree(domain, root)


def _union(kind: type, items: Seq):  # noqa: ANN202 - returns an instance of `kind`
    if not items:
        raise PolyError("a scop needs at least one statement")
    return reduce(lambda a, b: a.union(b), items)
