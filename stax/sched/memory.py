"""Memory planning for a kernel schedule (seed 000 §7.5 and steps 5–6 of §7.6).

`plan_memory` is a pure function over a neutral description — kernels (`MemNode`) that read and
write named buffers (`MemBuffer`) — so it does not depend on the rest of Stax. In order it:

(a) simulates lifetimes ``[def, last]`` and the peak ``M*`` of Definition 7.5 for an order: a
    buffer is live from its producer's step through its last user's step, so the inputs and the
    outputs of a step are live together at that step;
(b) reorders for peak memory: four candidate topological orders (the original, least-peak-first
    greedy, BFS by the predecessors' positions, DFS by ascending size), each simulated in one
    linear scan; the least peak wins and ties keep the earlier candidate, the original first, so
    the result is never worse than the original;
(c) finds each buffer's last use by a reverse scan and frees it after that node;
(d) reuses freed storage through a pool keyed by (dtype, storage size), only when holding the
    storage between the free and the reuse keeps every step at or under ``M*``;
(e) writes a node's output in place over an input it reads for the last time when the caller
    proved the pair index-compatible (``MemNode.inplace_ok``), the dtype matches and the sizes
    match up to the allocator's alignment ("the same size, or slightly smaller");
(f) optionally (``pool=True``) places every intermediate in one inference pool (`stax.sched.pool`).

Buffer kinds and the choices they imply:

- ``input``: owned by the caller. It counts from step 0 until its last use, because the wrapper
  drops its references to the arguments and deletes each one after its last use (so memory the
  caller also frees can be returned early); an input no node reads is dropped at entry and has no
  lifetime. Its storage never enters the free pool and no node may write it (a mutation of an
  input must be functionalized into a new buffer first, seed §4.9). [SPARSE] The one exception:
  an input whose `becomes` names the output of its new value (a mutated argument, written back
  into the caller's array) may give that output its storage by (e).
- ``intermediate``: lives from its first writer through its last user; then its storage is free.
- ``output``: lives from its first writer to the end of the schedule; never freed, never reused.

A buffer may be written by several nodes (an in-place overwrite kept after SSA renaming). The
dependences follow the original order version by version: a reader runs after the writer of the
version it reads (RAW), a rewriter runs after the previous writer (WAW) and after every reader of
the previous version (WAR, the `WeakDep` of the scheduler), so every candidate order computes the
same values as the original.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from stax.ir.sym import hint, is_sym
from stax.sched.pool import PoolBlock, PoolLayout, plan_pool

BufferKind = Literal["input", "intermediate", "output"]

# The runtime's allocator rounds every request up to 64 bytes (the AVX-512 vector width), so an
# output whose rounded size equals the rounded size of the storage it takes over wastes nothing
# the allocator would not have wasted anyway: this is the seed's "same size, or slightly smaller".
ALIGNMENT = 64

CANDIDATES = ("original", "lpmf", "bfs", "dfs")


@dataclass(frozen=True)
class MemBuffer:
    """A buffer of `nbytes` bytes of `dtype`; see the module docstring for what `kind` implies."""

    name: str
    nbytes: int
    dtype: str
    kind: BufferKind
    # [SPARSE] an input that is a mutated argument: the output holding its new value (written
    # back into the caller's array), which may take its storage: the caller's array itself
    becomes: str | None = None


@dataclass(frozen=True)
class MemNode:
    """A kernel of the schedule.

    `inplace_ok` lists (read buffer, written buffer) pairs the caller has proven index-compatible:
    every element is read before it is overwritten, at the same index (seed Prop. 7.2).
    """

    name: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    inplace_ok: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Reuse:
    """Buffer `new` takes the storage of `old`; `str()` is the wrapper line."""

    new: str
    old: str
    reason: str
    rule: str  # `reuse_freed` or `in_place` (G: decision records)

    def __str__(self) -> str:
        return f"{self.new} = {self.old}; del {self.old}  # reuse"


@dataclass(frozen=True)
class Declined:
    """A reuse or in-place write of `old`'s storage for `new` not taken, by `rule` (G: decision
    records): `reuse_exceeds_peak`, or for in place `not_read`, `not_intermediate`,
    `used_again`, `storage_taken`, `dtype_differs`, `size_mismatch`, `exceeds_peak`."""

    new: str
    old: str
    node: str  # the kernel writing `new` in place; "" for a reuse
    rule: str
    reason: str

    def __str__(self) -> str:
        if self.node:
            return f"{self.new} in place of {self.old} in {self.node}: {self.reason}"
        return f"{self.new} reusing {self.old}: {self.reason}"


@dataclass(frozen=True)
class MemoryPlan:
    """The result of `plan_memory`; steps index `order`."""

    order: tuple[str, ...]
    candidates: Mapping[str, int]  # candidate order name -> its peak M*
    candidate_orders: Mapping[str, tuple[str, ...]]  # candidate order name -> its node names
    chosen: str
    reason: str  # why `chosen` won
    peak_bytes: int  # M* of the chosen order (Definition 7.5)
    live_bytes: tuple[int, ...]  # Definition 7.5 live bytes per step of the chosen order
    lifetimes: Mapping[str, tuple[int, int]]  # buffer -> (def step, last step)
    last_use: Mapping[str, str]  # buffer -> the last node that reads or writes it
    frees_after: Mapping[str, tuple[str, ...]]  # node -> buffers deleted after it
    reuses: tuple[Reuse, ...]  # storage taken from the free pool
    inplace: tuple[Reuse, ...]  # outputs written over an input read for the last time
    declined: tuple[Declined, ...]  # reuse and in-place opportunities not taken, with the reason
    planned_peak_bytes: int  # storage held at the worst step once reuses are applied (<= M*)
    pool: PoolLayout | None  # the inference pool of the intermediates, when asked for

    @property
    def rule(self) -> str:
        """The order decision as a rule name (G: decision records): `keep_original`, or
        `least_peak` when another candidate order has a lower peak."""
        return "keep_original" if self.chosen == "original" else "least_peak"

    def timeline(self) -> list[tuple[int, str, int]]:
        """(step, node, live bytes) for every step of the chosen order."""
        pairs = zip(self.order, self.live_bytes, strict=True)
        return [(step, node, live) for step, (node, live) in enumerate(pairs)]

    def describe(self) -> str:
        """A readable report: candidates, the timeline with the peak marked, reuses, the pool."""
        lines = [
            f"memory plan: {len(self.order)} kernels, peak M* = {self.peak_bytes:,} B",
            "candidate orders: " + ", ".join(f"{n} {p:,} B" for n, p in self.candidates.items()),
            f"chosen: {self.chosen} ({self.reason})",
            "step  live bytes  node",
        ]
        for step, node, live in self.timeline():
            mark = "  <- peak" if live == self.peak_bytes else ""
            freed = self.frees_after.get(node, ())
            dels = f"   then del {', '.join(freed)}" if freed else ""
            lines.append(f"{step:4}  {live:10,}  {node}{mark}{dels}")
        sections = (
            ("reuse", [f"{r}  ({r.reason})" for r in self.reuses]),
            ("in place", [f"{r}  ({r.reason})" for r in self.inplace]),
            ("declined", list(map(str, self.declined))),
        )
        for title, entries in sections:
            if entries:
                lines += [f"{title}:"] + [f"  {entry}" for entry in entries]
        lines.append(
            f"planned storage peak: {self.planned_peak_bytes:,} B (M* {self.peak_bytes:,} B)"
        )
        if self.pool is not None:
            lines.append(
                f"pool: {self.pool.size:,} B for {len(self.pool.offsets)} intermediates "
                f"(their live peak {self.pool.live_peak:,} B; M* {self.peak_bytes:,} B)"
            )
        return "\n".join(lines)


def plan_memory(
    nodes: Sequence[MemNode], buffers: Mapping[str, MemBuffer], *, pool: bool = False
) -> MemoryPlan:
    """Order `nodes` for least peak memory and plan frees, reuses, in-place writes and the pool."""
    if any(is_sym(b.nbytes) for b in buffers.values()):
        return _plan_symbolic(nodes, buffers, pool)
    graph = _Graph.build(nodes, buffers)
    orders = {
        "original": tuple(range(len(nodes))),
        "lpmf": _order_lpmf(graph),
        "bfs": _order_bfs(graph),
        "dfs": _order_dfs(graph),
    }
    peaks = {
        name: max(_live_bytes(graph, _lifetimes(graph, o)), default=0) for name, o in orders.items()
    }
    chosen = min(CANDIDATES, key=lambda name: peaks[name])  # min keeps the first of equals
    order = orders[chosen]
    lifetimes = _lifetimes(graph, order)
    live = _live_bytes(graph, lifetimes)
    peak = max(live, default=0)
    steps = [nodes[i] for i in order]
    frees: dict[str, list[str]] = {}
    for name, (_, last) in lifetimes.items():
        if buffers[name].kind != "output":
            frees.setdefault(steps[last].name, []).append(name)
    storage = _plan_storage(graph, order, lifetimes, live, peak)
    blocks = [
        PoolBlock(name, buffers[name].nbytes, first, last)
        for name, (first, last) in lifetimes.items()
        if buffers[name].kind == "intermediate"
    ]
    return MemoryPlan(
        order=tuple(node.name for node in steps),
        candidates=MappingProxyType(peaks),
        candidate_orders=MappingProxyType(
            {name: tuple(nodes[i].name for i in o) for name, o in orders.items()}
        ),
        chosen=chosen,
        reason=_why(chosen, peaks),
        peak_bytes=peak,
        live_bytes=tuple(live),
        lifetimes=MappingProxyType(lifetimes),
        last_use=MappingProxyType(
            {name: steps[last].name for name, last in _last_touch(graph, order).items()}
        ),
        frees_after=MappingProxyType({node: tuple(names) for node, names in frees.items()}),
        reuses=storage.reuses,
        inplace=storage.inplace,
        declined=storage.declined,
        planned_peak_bytes=storage.peak,
        pool=plan_pool(blocks) if pool else None,
    )


def _why(chosen: str, peaks: Mapping[str, int]) -> str:
    if chosen == "original":
        return "no candidate has a lower peak than the original order, which is kept"
    tied = [n for n in CANDIDATES if peaks[n] == peaks[chosen] and n != chosen]
    ties = f"; tied with {', '.join(tied)}, the first listed wins" if tied else ""
    return f"peak {peaks[chosen]:,} B < original {peaks['original']:,} B{ties}"


@dataclass(frozen=True)
class _Graph:
    """The nodes, their distinct buffers, the dependence edges and each buffer's users."""

    nodes: tuple[MemNode, ...]
    buffers: Mapping[str, MemBuffer]
    touched: tuple[tuple[str, ...], ...]  # node -> distinct buffers it reads or writes
    preds: tuple[tuple[int, ...], ...]
    succs: tuple[tuple[int, ...], ...]
    users: Mapping[str, tuple[int, ...]]  # buffer -> nodes touching it, in the original order

    @staticmethod
    def build(nodes: Sequence[MemNode], buffers: Mapping[str, MemBuffer]) -> _Graph:
        """Check the description and derive RAW, WAW and WAR edges in one pass over the nodes."""
        seen_nodes: set[str] = set()
        writer: dict[str, int] = {}  # buffer -> writer of its current version
        readers: dict[str, list[int]] = {}  # buffer -> readers of its current version
        preds: list[set[int]] = [set() for _ in nodes]
        users: dict[str, list[int]] = {}
        touched = []
        for i, node in enumerate(nodes):
            if node.name in seen_nodes:
                raise ValueError(f"two nodes are named {node.name!r}")
            seen_nodes.add(node.name)
            for name in node.reads:
                if _known(buffers, node, name).kind != "input" and name not in writer:
                    raise ValueError(f"{node.name} reads {name} before any node writes it")
                if name in writer:
                    preds[i].add(writer[name])
                readers.setdefault(name, []).append(i)
            for name in node.writes:
                if _known(buffers, node, name).kind == "input":
                    raise ValueError(
                        f"{node.name} writes input {name}; inputs belong to the caller, "
                        "functionalize the mutation into a new buffer first"
                    )
                if name in writer:
                    preds[i].add(writer[name])
                preds[i].update(readers.pop(name, ()))
                writer[name] = i
            preds[i].discard(i)
            touched.append(tuple(dict.fromkeys(node.reads + node.writes)))
            for name in touched[-1]:
                users.setdefault(name, []).append(i)
        for name, buf in buffers.items():
            if buf.kind != "input" and name not in writer:
                raise ValueError(f"{buf.kind} buffer {name} is never written")
        succs: list[list[int]] = [[] for _ in nodes]
        for i, ps in enumerate(preds):
            for p in ps:
                succs[p].append(i)
        return _Graph(
            nodes=tuple(nodes),
            buffers=buffers,
            touched=tuple(touched),
            preds=tuple(tuple(sorted(ps)) for ps in preds),
            succs=tuple(tuple(ss) for ss in succs),
            users=MappingProxyType({name: tuple(us) for name, us in users.items()}),
        )

    def nbytes(self, name: str) -> int:
        return self.buffers[name].nbytes


def _known(buffers: Mapping[str, MemBuffer], node: MemNode, name: str) -> MemBuffer:
    if name not in buffers:
        raise ValueError(f"{node.name} uses unknown buffer {name}")
    return buffers[name]


def _last_touch(graph: _Graph, order: Sequence[int]) -> dict[str, int]:
    """Buffer -> step of its last use, by a reverse scan: the first sighting is the last use."""
    last: dict[str, int] = {}
    for step in range(len(order) - 1, -1, -1):
        for name in graph.touched[order[step]]:
            last.setdefault(name, step)
    return last


def _lifetimes(graph: _Graph, order: Sequence[int]) -> dict[str, tuple[int, int]]:
    """Buffer -> [def, last] under `order` (module docstring: inputs from 0, outputs to the end)."""
    end = len(order) - 1
    first: dict[str, int] = {}
    for step, i in enumerate(order):
        for name in graph.nodes[i].writes:
            first.setdefault(name, step)
    lifetimes = {}
    for name, last in _last_touch(graph, order).items():
        kind = graph.buffers[name].kind
        lifetimes[name] = (first.get(name, 0), end if kind == "output" else last)
    return lifetimes


def _live_bytes(graph: _Graph, lifetimes: Mapping[str, tuple[int, int]]) -> list[int]:
    """Definition 7.5: the bytes of the buffers live at each step, by a difference array."""
    steps = len(graph.nodes)
    delta = [0] * (steps + 1)
    for name, (first, last) in lifetimes.items():
        delta[first] += graph.nbytes(name)
        delta[last + 1] -= graph.nbytes(name)
    live, total = [], 0
    for d in delta[:steps]:
        total += d
        live.append(total)
    return live


def _plan_symbolic(nodes: Sequence[MemNode], buffers: Mapping[str, MemBuffer], pool: bool
                   ) -> MemoryPlan:
    """[issue 11] Buffers of symbolic size: order and reuse are planned on the traced sizes
    (a heuristic, no guard), then only reuses whose sizes are equal for every shape are kept
    (the wrapper reshapes the old storage to the new buffer's shape)."""
    plan = plan_memory(nodes, {n: replace(b, nbytes=hint(b.nbytes)) for n, b in buffers.items()},
                       pool=pool)

    def same(r: Reuse) -> bool:
        a, b = buffers[r.new].nbytes, buffers[r.old].nbytes
        return a is b or (is_sym(a) and is_sym(b) and a.terms == b.terms) or (
            not is_sym(a) and not is_sym(b) and a == b)

    dropped = tuple(Declined(r.new, r.old, "", "size_mismatch",
                             "sizes differ for some shapes of a generic program")
                    for r in plan.reuses + plan.inplace if not same(r))
    return replace(plan, reuses=tuple(filter(same, plan.reuses)),
                   inplace=tuple(filter(same, plan.inplace)), declined=plan.declined + dropped)


def _order_lpmf(graph: _Graph) -> tuple[int, ...]:
    """Least peak first: among the ready nodes run the one whose step adds the fewest bytes.

    A node's increase is what it allocates (buffers it writes first) minus what is freed after it
    (non-output buffers it is the last remaining user of); ties prefer the smaller allocation, then
    the original position. A buffer credits its final user once, when that user becomes its last
    remaining one, so the heap sees each node O(1 + buffers) times (stale entries are skipped).
    """
    n = len(graph.nodes)
    alloc = [0] * n
    gain = [0] * n
    remaining = {name: len(users) for name, users in graph.users.items()}
    for name, users in graph.users.items():
        kind = graph.buffers[name].kind
        if kind != "input":
            alloc[users[0]] += graph.nbytes(name)  # the first user of a non-input is its writer
        if kind != "output" and len(users) == 1:
            gain[users[0]] += graph.nbytes(name)
    indeg = [len(ps) for ps in graph.preds]
    done = [False] * n

    def entry(i: int) -> tuple[int, int, int]:
        return (alloc[i] - gain[i], alloc[i], i)

    heap = [entry(i) for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        item = heapq.heappop(heap)
        i = item[2]
        if done[i] or item != entry(i):
            continue
        done[i] = True
        order.append(i)
        for name in graph.touched[i]:
            remaining[name] -= 1
            if remaining[name] == 1 and graph.buffers[name].kind != "output":
                last = next(u for u in graph.users[name] if not done[u])
                gain[last] += graph.nbytes(name)
                if indeg[last] == 0:
                    heapq.heappush(heap, entry(last))
        for s in graph.succs[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, entry(s))
    return tuple(order)


def _order_bfs(graph: _Graph) -> tuple[int, ...]:
    """BFS: run the ready node whose predecessors ran earliest (their sorted positions compared
    lexicographically, then the original position), so old buffers lose their readers first."""
    indeg = [len(ps) for ps in graph.preds]
    position = [0] * len(graph.nodes)
    heap: list[tuple[tuple[int, ...], int]] = [((), i) for i in range(len(indeg)) if indeg[i] == 0]
    order: list[int] = []
    while heap:
        _, i = heapq.heappop(heap)
        position[i] = len(order)
        order.append(i)
        for s in graph.succs[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (tuple(sorted(position[p] for p in graph.preds[s])), s))
    return tuple(order)


def _order_dfs(graph: _Graph) -> tuple[int, ...]:
    """DFS: visit nodes by ascending bytes of the node and its buffers (then original position),
    emitting each after its predecessors, visited in the same ascending order (iterative, so a
    5,000-node chain does not hit the recursion limit)."""
    weight = [hint(sum(graph.nbytes(b) for b in touched)) for touched in graph.touched]

    def rank(i: int) -> tuple[int, int]:
        return (weight[i], i)

    visited = [False] * len(weight)
    order: list[int] = []
    for root in sorted(range(len(weight)), key=rank):
        if visited[root]:
            continue
        visited[root] = True
        stack = [(root, iter(sorted(graph.preds[root], key=rank)))]
        while stack:
            node, pending = stack[-1]
            for p in pending:
                if not visited[p]:
                    visited[p] = True
                    stack.append((p, iter(sorted(graph.preds[p], key=rank))))
                    break
            else:
                stack.pop()
                order.append(node)
    return tuple(order)


class _RangeMax:
    """Range add and range max over steps: a lazy segment tree (iterative, O(log T) per call)."""

    def __init__(self, values: Sequence[int]) -> None:
        self._size = 1 << max(0, len(values) - 1).bit_length()
        self._height = self._size.bit_length() - 1
        self._max = [0] * (2 * self._size)  # a node's max already includes its own pending add
        self._add = [0] * self._size
        self._max[self._size : self._size + len(values)] = values
        for p in range(self._size - 1, 0, -1):
            self._max[p] = max(self._max[2 * p], self._max[2 * p + 1])

    def _apply(self, p: int, value: int) -> None:
        self._max[p] += value
        if p < self._size:
            self._add[p] += value

    def _push(self, leaf: int) -> None:
        for shift in range(self._height, 0, -1):
            p = leaf >> shift
            if self._add[p]:
                self._apply(2 * p, self._add[p])
                self._apply(2 * p + 1, self._add[p])
                self._add[p] = 0

    def _rebuild(self, p: int) -> None:
        while p > 1:
            p >>= 1
            self._max[p] = max(self._max[2 * p], self._max[2 * p + 1]) + self._add[p]

    def add(self, first: int, last: int, value: int) -> None:
        """Add `value` to steps first..last (nothing when the range is empty)."""
        lo, hi = first + self._size, last + 1 + self._size
        if lo >= hi:
            return
        self._push(lo)
        self._push(hi - 1)
        l, r = lo, hi
        while l < r:
            if l & 1:
                self._apply(l, value)
                l += 1
            if r & 1:
                r -= 1
                self._apply(r, value)
            l >>= 1
            r >>= 1
        self._rebuild(lo)
        self._rebuild(hi - 1)

    def max(self, first: int, last: int) -> int:
        """The max over steps first..last; 0 when the range is empty."""
        lo, hi = first + self._size, last + 1 + self._size
        if lo >= hi:
            return 0
        self._push(lo)
        self._push(hi - 1)
        best = 0
        while lo < hi:
            if lo & 1:
                best = max(best, self._max[lo])
                lo += 1
            if hi & 1:
                hi -= 1
                best = max(best, self._max[hi])
            lo >>= 1
            hi >>= 1
        return best


@dataclass(frozen=True)
class _Storage:
    reuses: tuple[Reuse, ...]
    inplace: tuple[Reuse, ...]
    declined: tuple[Declined, ...]
    peak: int


def _plan_storage(
    graph: _Graph,
    order: Sequence[int],
    lifetimes: Mapping[str, tuple[int, int]],
    live: Sequence[int],
    peak: int,
) -> _Storage:
    """(d) and (e): scan allocations and frees step by step, keeping the storage held per step."""
    planner = _StoragePlanner(graph, lifetimes, _RangeMax(live), peak)
    for step, i in enumerate(order):
        node = graph.nodes[i]
        for new in dict.fromkeys(node.writes):
            if lifetimes[new][0] == step:  # an overwrite of an existing buffer allocates nothing
                planner.allocate(node, new, step)
        for name in graph.touched[i]:
            if lifetimes[name][1] == step:
                planner.free(name, step)
    return _Storage(
        tuple(planner.reuses),
        tuple(planner.inplace),
        tuple(planner.declined),
        planner.held.max(0, len(order) - 1),
    )


class _StoragePlanner:
    """The mutable state of one scan of `_plan_storage`.

    `held` starts as Definition 7.5's live bytes per step. Taking freed storage from the pool also
    holds it over the gap between the free and the reuse; writing in place holds the (possibly
    larger) old storage for the new buffer's life but saves the new buffer's bytes at the shared
    step. Each is accepted only if no step then exceeds M*. Of the pooled storage with one key the
    most recently freed is tried: its gap lies inside every older one's, so if it fails all do.
    """

    def __init__(
        self,
        graph: _Graph,
        lifetimes: Mapping[str, tuple[int, int]],
        held: _RangeMax,
        peak: int,
    ) -> None:
        self.graph = graph
        self.lifetimes = lifetimes
        self.held = held
        self.peak = peak
        self.storage: dict[str, int] = {}  # buffer -> bytes of the storage it occupies
        self.pool: dict[tuple[str, int], list[tuple[int, str]]] = {}  # -> [(freed after, buf)]
        self.handed_over: set[str] = set()  # buffers whose storage an in-place write took
        self.reuses: list[Reuse] = []
        self.inplace: list[Reuse] = []
        self.declined: list[Declined] = []

    def allocate(self, node: MemNode, new: str, step: int) -> None:
        """Give `new` storage: in place over a dying input if allowed, else from the pool."""
        self.storage[new] = self.graph.nbytes(new)
        pairs = [old for old, target in node.inplace_ok if target == new]
        if not any(self._write_in_place(node, old, new, step) for old in pairs):
            self._reuse_freed(new, step)

    def free(self, name: str, step: int) -> None:
        """After its last use an intermediate's storage joins the pool, unless already taken."""
        buf = self.graph.buffers[name]
        if buf.kind == "intermediate" and name not in self.handed_over:
            self.pool.setdefault((buf.dtype, self.storage[name]), []).append((step, name))

    def _write_in_place(self, node: MemNode, old: str, new: str, step: int) -> bool:
        last = self.lifetimes[new][1]
        buf = self.graph.buffers[new]
        why_not = self._inplace_obstacle(node, old, buf, step)
        extra = self._held(old) - buf.nbytes
        if why_not is None and self.held.max(step + 1, last) + extra > self.peak:
            why_not = ("exceeds_peak", f"holding {self.storage[old]:,} B for {new} would exceed "
                       f"M* {self.peak:,} B")
        if why_not is not None:
            self.declined.append(Declined(new, old, node.name, *why_not))
            return False
        self.held.add(step, step, -buf.nbytes)
        self.held.add(step + 1, last, extra)
        self.storage[new] = self._held(old)
        self.handed_over.add(old)
        argument = " (the argument it is written back into: the caller's array itself, no " \
            "buffer, no copy back)" if self.graph.buffers[old].becomes == new else ""
        self.inplace.append(
            Reuse(
                new,
                old,
                f"in place: {node.name} reads {old} for the last time at the same index; "
                f"{buf.dtype}, {buf.nbytes:,} B into {self.storage[new]:,} B{argument}",
                "in_place",
            )
        )
        return True

    def _held(self, name: str) -> int:
        """The bytes of `name`'s storage ([SPARSE] an input's: its own size)."""
        return self.storage.get(name, self.graph.nbytes(name))

    def _inplace_obstacle(
        self, node: MemNode, old: str, new: MemBuffer, step: int
    ) -> tuple[str, str] | None:
        """(rule, why) `node` may not write `new` over `old` (seed §7.5, last paragraph), or
        None."""
        if old not in node.reads:
            return "not_read", f"{node.name} does not read {old}"
        kind = self.graph.buffers[old].kind
        if kind != "intermediate" and self.graph.buffers[old].becomes != new.name:
            return "not_intermediate", f"{old} is an {kind}, whose storage is never reused"
        if self.lifetimes[old][1] != step:
            return "used_again", f"{old} is used again until step {self.lifetimes[old][1]}"
        if old in self.handed_over:
            taken = f"another output of {node.name} already took the storage of {old}"
            return "storage_taken", taken
        if self.graph.buffers[old].dtype != new.dtype:
            differs = f"dtype {self.graph.buffers[old].dtype} differs from {new.dtype}"
            return "dtype_differs", differs
        held = self._held(old)
        if new.nbytes > held or _aligned(new.nbytes) != _aligned(held):
            return "size_mismatch", (
                f"{new.nbytes:,} B does not fit {held:,} B within the {ALIGNMENT}-byte alignment"
            )
        return None

    def _reuse_freed(self, new: str, step: int) -> None:
        buf = self.graph.buffers[new]
        free = self.pool.get((buf.dtype, buf.nbytes))
        if not free:
            return
        freed_at, old = free[-1]
        reach = self.held.max(freed_at + 1, step - 1) + buf.nbytes
        gap = f"steps {freed_at + 1}..{step - 1}"
        if reach > self.peak:
            self.declined.append(
                Declined(
                    new,
                    old,
                    "",
                    "reuse_exceeds_peak",
                    f"holding it over {gap} would reach {reach:,} B > M* {self.peak:,} B",
                )
            )
            return
        free.pop()
        self.held.add(freed_at + 1, step - 1, buf.nbytes)
        held = f"held over {gap}, at most {reach:,} B" if freed_at + 1 < step else "no gap"
        self.reuses.append(
            Reuse(
                new,
                old,
                f"same {buf.dtype} storage of {buf.nbytes:,} B; {held} <= M* {self.peak:,} B",
                "reuse_freed",
            )
        )


def _aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGNMENT) * ALIGNMENT
