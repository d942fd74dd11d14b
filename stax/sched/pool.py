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
    """Disjoint closed integer intervals, sorted, each tagged with an owner (a child node).

    Intervals that overlap an added one are merged into it; a temporal split only adds an interval
    where it overlaps intervals of a single child, so merged intervals keep one owner.
    """

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.owners: list[_Node | None] = []

    def owners_over(self, first: int, last: int) -> list[_Node | None]:
        """The distinct owners of the intervals meeting [first, last], at most two."""
        found: list[_Node | None] = []
        for k in range(bisect_left(self.ends, first), bisect_right(self.starts, last)):
            if self.owners[k] not in found:
                found.append(self.owners[k])
                if len(found) == 2:
                    break
        return found

    def add(self, first: int, last: int, owner: _Node | None = None) -> None:
        lo = bisect_left(self.ends, first)
        hi = bisect_right(self.starts, last)
        if lo < hi:
            first = min(first, self.starts[lo])
            last = max(last, self.ends[hi - 1])
        self.starts[lo:hi] = [first]
        self.ends[lo:hi] = [last]
        self.owners[lo:hi] = [owner]


class _Node:
    def __init__(self, size: int) -> None:
        self.size = size
        self.live = _Intervals()  # the lifetimes of every block placed below


class _Empty(_Node):
    """Space left over beside a narrower buffer; a later buffer may take it."""


class _Placed(_Node):
    def __init__(self, block: PoolBlock) -> None:
        super().__init__(block.nbytes)
        self.block = block
        self.live.add(block.first, block.last)


class _Temporal(_Node):
    """Children pairwise disjoint in time at one offset; `live` is tagged with the owning child."""

    def __init__(self, children: list[_Node]) -> None:
        super().__init__(max(child.size for child in children))
        self.children: list[_Node] = []
        self._adopt(children)

    def _adopt(self, children: list[_Node]) -> None:
        self.children = children
        self.live = _Intervals()
        for child in children:
            for first, last in zip(child.live.starts, child.live.ends, strict=True):
                self.live.add(first, last, child)

    def place_beside(self, block: PoolBlock) -> None:
        """Put `block` beside the children, none of which it overlaps in time."""
        if len(self.children) == 1 and isinstance(self.children[0], _Empty):
            self.children = []  # only empty space here: the block takes it
        if block.nbytes > self.size:  # at the right edge: widen every sibling with empty space
            extra = block.nbytes - self.size
            self._adopt([_Spatial([c, _Empty(extra)]) for c in self.children])
        placed: _Node = _Placed(block)
        if block.nbytes < self.size:
            placed = _Spatial([placed, _Empty(self.size - block.nbytes)])
        self.children.append(placed)
        self.live.add(block.first, block.last, placed)
        self.size = max(self.size, block.nbytes)


class _Spatial(_Node):
    """Temporal splits side by side, left to right; only the rightmost may grow."""

    def __init__(self, children: list[_Node]) -> None:
        self.children = [_Temporal([child]) for child in children]
        super().__init__(sum(child.size for child in self.children))
        for child in self.children:
            for first, last in zip(child.live.starts, child.live.ends, strict=True):
                self.live.add(first, last)

    def open_column(self, block: PoolBlock) -> None:
        self.children.append(_Temporal([_Placed(block)]))
        self.size += block.nbytes
        self.live.add(block.first, block.last)


def _allocate(root: _Spatial, block: PoolBlock) -> bool:
    """Place `block` in the tree by the seed's rule (module docstring); iterative, since the tree
    can be deep. Frames are (node, may grow, parent frame); a spatial split's children are tried
    left to right, a temporal split descends into the one child it overlaps or places the block
    beside its children."""
    frames: list[tuple[_Node, bool, int]] = [(root, True, -1)]
    pending = [0]
    while pending:
        f = pending.pop()
        node, may_grow, _ = frames[f]
        if isinstance(node, _Spatial):
            last = len(node.children) - 1
            for k in range(last, -1, -1):
                frames.append((node.children[k], may_grow and k == last, f))
                pending.append(len(frames) - 1)
        elif isinstance(node, _Temporal) and (block.nbytes <= node.size or may_grow):
            owners = node.live.owners_over(block.first, block.last)
            if len(owners) == 1:
                frames.append((owners[0], may_grow, f))
                pending.append(len(frames) - 1)
            elif not owners:
                _grow_path(frames, f, block)
                return True
    return False


def _grow_path(frames: list[tuple[_Node, bool, int]], f: int, block: PoolBlock) -> None:
    """Place `block` beside the children of the temporal split of frame `f`, then update the
    sizes and lifetimes of its ancestors, each from its child's growth."""
    node, _, parent = frames[f]
    assert isinstance(node, _Temporal)
    before = node.size
    node.place_beside(block)
    child, grown = node, node.size - before
    while parent != -1:
        node, _, parent = frames[parent]
        before = node.size
        if isinstance(node, _Temporal):
            node.size = max(node.size, child.size)
            node.live.add(block.first, block.last, child)
        else:
            node.size += grown
            node.live.add(block.first, block.last)
        child, grown = node, node.size - before


def plan_pool(blocks: Sequence[PoolBlock]) -> PoolLayout:
    """Place `blocks` in one pool; see the module docstring for the tree and the insertion rule."""
    ranked = sorted(blocks, key=lambda b: (-b.nbytes, -(b.last - b.first), b.first, b.name))
    root = _Spatial([])
    for block in ranked:
        if not _allocate(root, block):
            root.open_column(block)  # open new space at the end
    offsets: dict[str, int] = {}
    _read_offsets(root, offsets)
    return PoolLayout(
        offsets=MappingProxyType(offsets), size=root.size, live_peak=_live_peak(blocks)
    )


def _read_offsets(root: _Node, offsets: dict[str, int]) -> None:
    """Temporal children share their parent's offset; spatial children follow one another."""
    stack = [(root, 0)]
    while stack:
        node, offset = stack.pop()
        if isinstance(node, _Placed):
            offsets[node.block.name] = offset
        elif isinstance(node, _Temporal):
            stack.extend((child, offset) for child in node.children)
        elif isinstance(node, _Spatial):
            for child in node.children:
                stack.append((child, offset))
                offset += child.size


def _live_peak(blocks: Sequence[PoolBlock]) -> int:
    events = sorted(
        [(b.first, b.nbytes) for b in blocks] + [(b.last + 1, -b.nbytes) for b in blocks]
    )
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak
