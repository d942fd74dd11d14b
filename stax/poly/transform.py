"""Loop transformations on schedule trees (seed 002), each returning the new tree and its verdict.

Every function takes the scop, a tree and the path of the node it rewrites (`()`: the node
below the domain), and returns `Transformed(tree, verdict)`: the new tree with the permutable
and coincident flags `check` computed, and that verdict. No transformation is assumed legal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import islpy as isl

from stax.poly._isl import CTX, PolyError
from stax.poly.check import ScheduleLike, Verdict, as_tree, check
from stax.poly.model import Scop
from stax.poly.tree import Band, Filter, Path, ScheduleTree
from stax.poly.tree import Sequence as SeqNode

Members = list[isl.UnionPwAff]


@dataclass(frozen=True, eq=False)
class Transformed:
    tree: ScheduleTree
    verdict: Verdict


def _result(scop: Scop, tree: ScheduleTree) -> Transformed:
    verdict = check(scop, tree)
    return Transformed(verdict.tree, verdict)


def fuse(scop: Scop, tree: ScheduleTree, path: Path = ()) -> Transformed:
    """Fuse the children of the sequence at `path`: their outer bands become one shared band."""
    node = tree.at(path)
    if not isinstance(node, SeqNode):
        raise PolyError(f"fusion needs a sequence node at path {path}")
    bands = [f.child for f in node.children]
    if not all(isinstance(b, Band) for b in bands):
        raise PolyError("fusion needs a band below every child of the sequence")
    widths = {b.n_member for b in bands}  # type: ignore[union-attr]
    if len(widths) != 1:
        raise PolyError(f"cannot fuse bands of different widths {sorted(widths)}")
    shared = bands[0].schedule  # type: ignore[union-attr]
    for b in bands[1:]:
        shared = shared.union_add(b.schedule)  # type: ignore[union-attr]
    inner = SeqNode(tuple(Filter(f.filter, f.child.child) for f in node.children))  # type: ignore[union-attr]
    return _result(scop, tree.replace(path, Band(shared, inner)))


def distribute(scop: Scop, tree: ScheduleTree, path: Path = ()) -> Transformed:
    """Fission: the band at `path` over a sequence becomes a sequence of per-child bands."""
    band = tree.band_at(path)
    if not isinstance(band.child, SeqNode):
        raise PolyError(f"distribution needs a sequence below the band at path {path}")
    parts = tuple(
        Filter(f.filter, Band(band.schedule.intersect_domain(f.filter), f.child))
        for f in band.child.children
    )
    return _result(scop, tree.replace(path, SeqNode(parts)))


def interchange(scop: Scop, tree: ScheduleTree, path: Path, i: int, j: int) -> Transformed:
    """Swap band members i and j."""
    return _result(scop, _interchange(tree, path, i, j))


def skew(
    scop: Scop, tree: ScheduleTree, path: Path, target: int, source: int, factor: int
) -> Transformed:
    """Member `target` += factor * member `source` (seed: (t, i) -> (t, 2t + i))."""
    return _result(scop, _skew(tree, path, target, source, factor))


def wavefront(scop: Scop, tree: ScheduleTree, path: Path = (), factor: int = 1) -> Transformed:
    """(m0, m1, ...) -> (factor*m0 + m1, m0, ...): skew then interchange (seed: (2t + i, t))."""
    return _result(scop, _interchange(_skew(tree, path, 1, 0, factor), path, 0, 1))


def reverse(scop: Scop, tree: ScheduleTree, path: Path, member: int) -> Transformed:
    return _result(scop, _members(tree, path, lambda m: _set(m, member, m[member].neg())))


def shift(
    scop: Scop, tree: ScheduleTree, path: Path, member: int, offsets: Mapping[str, int]
) -> Transformed:
    """Add a constant per statement to one band member (retiming)."""

    def apply(m: Members) -> Members:
        upa = m[member]
        for name, offset in offsets.items():
            dom = isl.UnionSet.from_set(scop.statement(name).domain)
            part = upa.intersect_domain(dom)
            moved = part.add(isl.UnionPwAff.val_on_domain(part.domain(), isl.Val(offset, CTX)))
            upa = upa.subtract_domain(dom).union_add(moved)
        return _set(m, member, upa)

    return _result(scop, _members(tree, path, apply))


def strip_mine(scop: Scop, tree: ScheduleTree, path: Path, member: int, size: int) -> Transformed:
    """Member m -> (floor(m / size), m mod size)."""
    _positive(size)

    def apply(m: Members) -> Members:
        tile, point = _split(m[member], size)
        return m[:member] + [tile, point] + m[member + 1 :]

    return _result(scop, _members(tree, path, apply))


def tile(scop: Scop, tree: ScheduleTree, path: Path, sizes: Sequence[int]) -> Transformed:
    """Rectangular tiling of the first len(sizes) members: a tile band of floor(m / size) over
    a point band of (m mod size, remaining members). Legal for a fully permutable band."""
    band = tree.band_at(path)
    if not 0 < len(sizes) <= band.n_member:
        raise PolyError(f"tile sizes {list(sizes)} do not fit a band of {band.n_member} members")
    for s in sizes:
        _positive(s)
    members = _members_of(band)
    tiles, points = zip(*(_split(m, s) for m, s in zip(members, sizes, strict=False)), strict=True)
    point_band = Band(_mupa([*points, *members[len(sizes) :]]), band.child)
    return _result(scop, tree.replace(path, Band(_mupa(list(tiles)), point_band)))


def parallelepiped_tiling_legal(scop: Scop, hyperplanes: ScheduleLike) -> bool:
    """Irigoin–Triolet: tiling along hyperplanes H is legal when Hδ ≥ 0 for every dependence."""
    tree = as_tree(scop, hyperplanes)
    verdict = check(scop, tree)
    return all(b.permutable for b in verdict.bands)


# -- band member rewriting -----------------------------------------------------------------------
def _interchange(tree: ScheduleTree, path: Path, i: int, j: int) -> ScheduleTree:
    def apply(m: Members) -> Members:
        m = list(m)
        m[i], m[j] = m[j], m[i]
        return m

    return _members(tree, path, apply, i, j)


def _skew(tree: ScheduleTree, path: Path, target: int, source: int, factor: int) -> ScheduleTree:
    def apply(m: Members) -> Members:
        return _set(m, target, m[target].add(m[source].scale_val(isl.Val(factor, CTX))))

    return _members(tree, path, apply, target, source)


def _members(
    tree: ScheduleTree, path: Path, fn: Callable[[Members], Members], *used: int
) -> ScheduleTree:
    band = tree.band_at(path)
    for k in used:
        if not 0 <= k < band.n_member:
            raise PolyError(f"the band at path {path} has no member {k} ({band.n_member} members)")
    return tree.replace(path, Band(_mupa(fn(_members_of(band))), band.child))


def _members_of(band: Band) -> Members:
    return [band.member(k) for k in range(band.n_member)]


def _mupa(members: Members) -> isl.MultiUnionPwAff:
    out = isl.MultiUnionPwAff.from_union_pw_aff(members[0])
    for upa in members[1:]:
        out = out.flat_range_product(isl.MultiUnionPwAff.from_union_pw_aff(upa))
    return out


def _set(members: Members, k: int, upa: isl.UnionPwAff) -> Members:
    return members[:k] + [upa] + members[k + 1 :]


def _split(upa: isl.UnionPwAff, size: int) -> tuple[isl.UnionPwAff, isl.UnionPwAff]:
    v = isl.Val(size, CTX)
    return upa.scale_down_val(v).floor(), upa.mod_val(v)


def _positive(size: int) -> None:
    if size < 1:
        raise PolyError(f"tile and strip sizes must be positive, got {size}")
