"""Schedule trees (seed 002): an immutable Python mirror of isl schedule trees.

A `ScheduleTree` is its root domain plus a tree of the node kinds of seed 002 (context,
sequence, set, filter, band with permutable/coincident flags, mark, leaf). Transformations
rewrite this Python tree; `to_isl()` builds the isl schedule for maps, AST generation and YAML.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from functools import reduce

import islpy as isl

from stax.poly._isl import CTX, PolyError, maps_of


@dataclass(frozen=True, eq=False)
class Leaf:
    """Adds no order."""


@dataclass(frozen=True, eq=False)
class Band:
    """Schedule dimensions of the instances below; `schedule` has one member per dimension."""

    schedule: isl.MultiUnionPwAff
    child: Node = Leaf()
    permutable: bool = False
    coincident: tuple[bool, ...] = ()

    @property
    def n_member(self) -> int:
        return self.schedule.dim(isl.dim_type.set)

    def member(self, k: int) -> isl.UnionPwAff:
        return self.schedule.get_at(k)


@dataclass(frozen=True, eq=False)
class Filter:
    """Restricts the subtree to `filter`; orders nothing."""

    filter: isl.UnionSet
    child: Node = Leaf()


@dataclass(frozen=True, eq=False)
class Sequence:
    """Children (filters) run one after another, in this order."""

    children: tuple[Filter, ...]


@dataclass(frozen=True, eq=False)
class SetNode:
    """Children (filters) run in any order (not a proof of parallelism)."""

    children: tuple[Filter, ...]


@dataclass(frozen=True, eq=False)
class Mark:
    """Attaches `name` to the subtree (used for `parallel` loops in code generation)."""

    name: str
    child: Node = Leaf()


@dataclass(frozen=True, eq=False)
class Context:
    """Parameter constraints the AST generator may assume."""

    context: isl.Set
    child: Node = Leaf()


Node = Leaf | Band | Filter | Sequence | SetNode | Mark | Context
Path = tuple[int, ...]


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Sequence | SetNode):
        return node.children
    if isinstance(node, Leaf):
        return ()
    return (node.child,)


def with_children(node: Node, new: Seq[Node]) -> Node:
    if isinstance(node, Sequence | SetNode):
        if not all(isinstance(c, Filter) for c in new):
            raise PolyError("children of a sequence or set node must be filters")
        return dataclasses.replace(node, children=tuple(new))  # type: ignore[arg-type]
    if isinstance(node, Leaf):
        return node
    (child,) = new
    return dataclasses.replace(node, child=child)


@dataclass(frozen=True, eq=False)
class ScheduleTree:
    """A schedule tree: the instances (`domain`) and the tree below the domain node."""

    domain: isl.UnionSet
    root: Node

    # -- navigation -------------------------------------------------------------------------
    def at(self, path: Path) -> Node:
        node = self.root
        for k in path:
            kids = children(node)
            if not 0 <= k < len(kids):
                raise PolyError(f"no schedule node at path {path}")
            node = kids[k]
        return node

    def replace(self, path: Path, new: Node) -> ScheduleTree:
        def rebuild(node: Node, rest: Path) -> Node:
            if not rest:
                return new
            kids = list(children(node))
            kids[rest[0]] = rebuild(kids[rest[0]], rest[1:])
            return with_children(node, kids)

        self.at(path)  # validates the path
        return ScheduleTree(self.domain, rebuild(self.root, path))

    def band_at(self, path: Path) -> Band:
        node = self.at(path)
        if not isinstance(node, Band):
            raise PolyError(f"the node at path {path} is a {kind_name(node)}, not a band")
        return node

    def bands(self) -> list[tuple[Path, Band]]:
        """Every band with its path, outermost first."""
        out: list[tuple[Path, Band]] = []

        def walk(node: Node, path: Path) -> None:
            if isinstance(node, Band):
                out.append((path, node))
            for k, child in enumerate(children(node)):
                walk(child, (*path, k))

        walk(self.root, ())
        return out

    # -- isl ----------------------------------------------------------------------------------
    def to_isl(self) -> isl.Schedule:
        return _build(self.root, self.domain)

    @classmethod
    def from_isl(cls, schedule: isl.Schedule) -> ScheduleTree:
        root = schedule.get_root()
        if root.get_type() != isl.schedule_node_type.domain:
            raise PolyError("a schedule tree must have a domain root")
        return cls(root.domain_get_domain(), _from_node(root.child(0)))

    @classmethod
    def from_map(cls, schedule: isl.UnionMap, domain: isl.UnionSet) -> ScheduleTree:
        """One band holding the (padded) schedule map, restricted to `domain`."""
        padded = pad_schedule_map(schedule.intersect_domain(domain))
        if not padded.is_single_valued():
            raise PolyError("a schedule must map each instance to one timestamp")
        mupa = isl.MultiUnionPwAff.from_union_map(padded)
        return cls(domain, Band(mupa) if mupa.dim(isl.dim_type.set) else Leaf())

    def to_map(self) -> isl.UnionMap:
        """The schedule map, every statement padded into one schedule space (trap 1)."""
        return pad_schedule_map(self.to_isl().get_map())

    def to_yaml(self) -> str:
        return self.to_isl().to_str()

    @classmethod
    def from_yaml(cls, text: str) -> ScheduleTree:
        try:
            return cls.from_isl(isl.Schedule.read_from_str(CTX, text))
        except isl.Error as err:
            raise PolyError(f"isl cannot read the schedule tree: {text[:80]!r}") from err

    def __str__(self) -> str:
        lines = [f"domain: {self.domain}"]

        def walk(node: Node, depth: int) -> None:
            lines.append("  " * depth + "└─ " + describe(node))
            for child in children(node):
                walk(child, depth + 1)

        walk(self.root, 0)
        return "\n".join(lines)


def kind_name(node: Node) -> str:
    return {
        Leaf: "leaf",
        Band: "band",
        Filter: "filter",
        Sequence: "sequence",
        SetNode: "set",
        Mark: "mark",
        Context: "context",
    }[type(node)]


def describe(node: Node) -> str:
    if isinstance(node, Band):
        flags = ["permutable"] if node.permutable else []
        if any(node.coincident):
            flags.append("coincident=" + "".join(str(int(c)) for c in node.coincident))
        return f"band{' (' + ', '.join(flags) + ')' if flags else ''}: {node.schedule}"
    if isinstance(node, Filter):
        return f"filter: {node.filter}"
    if isinstance(node, Mark):
        return f"mark: {node.name}"
    if isinstance(node, Context):
        return f"context: {node.context}"
    return kind_name(node)


def pad_schedule_map(schedule: isl.UnionMap) -> isl.UnionMap:
    """Pad every statement's timestamps with trailing zeros into one anonymous space.

    isl's lexicographic operations silently skip pairs of maps whose ranges differ (trap 1), so
    every legality computation goes through this function, which asserts the common space.
    """
    maps = maps_of(schedule)
    width = max((m.dim(isl.dim_type.out) for m in maps), default=0)
    out = isl.UnionMap.empty(schedule.get_space())
    for m in maps:
        have = m.dim(isl.dim_type.out)
        m = m.add_dims(isl.dim_type.out, width - have)
        for k in range(have, width):
            m = m.fix_val(isl.dim_type.out, k, isl.Val.int_from_si(m.get_ctx(), 0))
        out = out.union(m.reset_tuple_id(isl.dim_type.out))
    ranges = [m.get_space().range() for m in maps_of(out)]
    assert all(r.is_equal(ranges[0]) for r in ranges), "schedule not padded into one space"
    return out


def _build(node: Node, domain: isl.UnionSet) -> isl.Schedule:
    if isinstance(node, Leaf):
        return isl.Schedule.from_domain(domain)
    if isinstance(node, Filter):
        return _build(node.child, domain.intersect(node.filter))
    if isinstance(node, Sequence | SetNode):
        parts = [_build(f.child, domain.intersect(f.filter)) for f in node.children]
        combine = isl.Schedule.sequence if isinstance(node, Sequence) else isl.Schedule.set
        return reduce(combine, parts)
    below = _build(node.child, domain)
    if isinstance(node, Band):
        band = below.insert_partial_schedule(node.schedule.intersect_domain(domain))
        top = band.get_root().child(0).band_set_permutable(int(node.permutable))
        for k, flag in enumerate(node.coincident):
            top = top.band_member_set_coincident(k, int(flag))
        return top.get_schedule()
    if isinstance(node, Mark):
        top = below.get_root().child(0).insert_mark(isl.Id(node.name, context=CTX))
        return top.get_schedule()
    return below.get_root().child(0).insert_context(node.context).get_schedule()


def _from_node(n: isl.ScheduleNode) -> Node:
    kind = n.get_type()
    t = isl.schedule_node_type
    if kind == t.leaf:
        return Leaf()
    if kind == t.band:
        return Band(
            n.band_get_partial_schedule(),
            _from_node(n.child(0)),
            bool(n.band_get_permutable()),
            tuple(bool(n.band_member_get_coincident(k)) for k in range(n.band_n_member())),
        )
    if kind in (t.sequence, t.set):
        kids = tuple(_from_node(n.child(k)) for k in range(n.n_children()))
        assert all(isinstance(k, Filter) for k in kids)
        return Sequence(kids) if kind == t.sequence else SetNode(kids)  # type: ignore[arg-type]
    if kind == t.filter:
        return Filter(n.filter_get_filter(), _from_node(n.child(0)))
    if kind == t.mark:
        return Mark(n.mark_get_id().get_name(), _from_node(n.child(0)))
    if kind == t.context:
        return Context(n.context_get_context(), _from_node(n.child(0)))
    raise PolyError(f"unsupported schedule tree node kind: {kind}")
