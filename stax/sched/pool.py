"""The inference pool planner (seed 000 §7.5, last part of the reuse rules).

Every intermediate buffer gets a fixed offset in one storage pool. The pool is a tree:

- a *temporal split* holds children whose lifetimes are pairwise disjoint; they share one address
  range, as wide as the widest child;
- a *spatial split* puts two temporal splits side by side (left, then right);
- leaves are placed buffers or empty space left over when a narrower buffer took a wider slot.

Buffers are inserted by descending size, longer lifetime first. An insertion descends from the
root: a temporal split accepts the buffer beside its children when it overlaps none of them in
time, hands it to the single child it overlaps, and refuses when it overlaps two or more; a spatial
split tries its left side first. Only the right edge of the pool may grow; when nothing accepts the
buffer, new space is opened at the end. This is a greedy approximation of dynamic storage
allocation (NP-hard in general, [21]); the lower bound any placement must meet is the peak of the
pooled buffers' live bytes, reported beside the size.

The tree is built with mutable private nodes and then read out into the frozen `PoolLayout`.
Each subtree keeps its lifetimes as a sorted union of intervals, so a time-overlap test is a
binary search; a temporal split still scans its children, which is what the seed's rule asks.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class PoolBlock:
    """A buffer to place: its size and lifetime as closed step interval [first, last]."""

    name: str
    nbytes: int
    first: int
    last: int


@dataclass(frozen=True)
class PoolLayout:
    """Offsets of the pooled buffers, the pool size and the lower bound it is measured against."""

    offsets: Mapping[str, int]
    size: int
    live_peak: int  # max over steps of the pooled buffers' live bytes: no layout can be smaller


class _Intervals:
    """A union of closed integer intervals, kept merged and sorted."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, first: int, last: int) -> bool:
        i = bisect_right(self.starts, last) - 1
        return i >= 0 and self.ends[i] >= first

    def add(self, first: int, last: int) -> None:
        lo = bisect_left(self.ends, first)
        hi = bisect_right(self.starts, last)
        if lo < hi:
            first = min(first, self.starts[lo])
            last = max(last, self.ends[hi - 1])
        self.starts[lo:hi] = [first]
        self.ends[lo:hi] = [last]

    def update(self, other: _Intervals) -> None:
        for first, last in zip(other.starts, other.ends, strict=True):
            self.add(first, last)


class _Node:
    def __init__(self, size: int) -> None:
        self.size = size
        self.live = _Intervals()

    def allocate(self, block: PoolBlock, may_grow: bool) -> bool:
        """Try to place `block` in this subtree; leaves (placed buffers, empty space) refuse."""
        return False


class _Empty(_Node):
    """Space left over beside a narrower buffer; a later buffer may take it."""


class _Placed(_Node):
    def __init__(self, block: PoolBlock) -> None:
        super().__init__(block.nbytes)
        self.block = block
        self.live.add(block.first, block.last)


class _Temporal(_Node):
    def __init__(self, children: list[_Node]) -> None:
        super().__init__(max(child.size for child in children))
        self.children = children
        for child in children:
            self.live.update(child.live)

    def allocate(self, block: PoolBlock, may_grow: bool) -> bool:
        if block.nbytes > self.size and not may_grow:
            return False
        overlapping = [c for c in self.children if c.live.overlaps(block.first, block.last)]
        if len(overlapping) > 1:
            return False
        if overlapping:
            if not overlapping[0].allocate(block, may_grow):
                return False
        else:
            self._place_beside(block)
        self.size = max(child.size for child in self.children)
        self.live.add(block.first, block.last)
        return True

    def _place_beside(self, block: PoolBlock) -> None:
        if len(self.children) == 1 and isinstance(self.children[0], _Empty):
            self.children = []  # only empty space here: the block takes it
        if block.nbytes > self.size:  # at the right edge: widen every sibling with empty space
            extra = block.nbytes - self.size
            self.children = [_Spatial(c, _Empty(extra)) for c in self.children]
        placed = _Placed(block)
        if block.nbytes < self.size:
            self.children.append(_Spatial(placed, _Empty(self.size - block.nbytes)))
        else:
            self.children.append(placed)


class _Spatial(_Node):
    def __init__(self, left: _Node, right: _Node) -> None:
        self.left = _Temporal([left])
        self.right = _Temporal([right])
        super().__init__(self.left.size + self.right.size)
        self.live.update(self.left.live)
        self.live.update(self.right.live)

    def allocate(self, block: PoolBlock, may_grow: bool) -> bool:
        if not (self.left.allocate(block, False) or self.right.allocate(block, may_grow)):
            return False
        self.size = self.left.size + self.right.size
        self.live.add(block.first, block.last)
        return True


def plan_pool(blocks: Sequence[PoolBlock]) -> PoolLayout:
    """Place `blocks` in one pool; see the module docstring for the tree and the insertion rule."""
    ranked = sorted(blocks, key=lambda b: (-b.nbytes, -(b.last - b.first), b.first, b.name))
    root: _Temporal | None = None
    for block in ranked:
        if root is None:
            root = _Temporal([_Placed(block)])
        elif not root.allocate(block, True):
            root = _Temporal([_Spatial(root, _Placed(block))])  # open new space at the end
    offsets: dict[str, int] = {}
    if root is not None:
        _read_offsets(root, 0, offsets)
    return PoolLayout(
        offsets=MappingProxyType(offsets),
        size=root.size if root is not None else 0,
        live_peak=_live_peak(blocks),
    )


def _read_offsets(root: _Node, base: int, offsets: dict[str, int]) -> None:
    stack = [(root, base)]
    while stack:
        node, offset = stack.pop()
        if isinstance(node, _Placed):
            offsets[node.block.name] = offset
        elif isinstance(node, _Temporal):
            stack.extend((child, offset) for child in node.children)
        elif isinstance(node, _Spatial):
            stack.append((node.left, offset))
            stack.append((node.right, offset + node.left.size))


def _live_peak(blocks: Sequence[PoolBlock]) -> int:
    events = sorted(
        [(b.first, b.nbytes) for b in blocks] + [(b.last + 1, -b.nbytes) for b in blocks]
    )
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak
