"""Greedy fusion (seed 000 §7.2–§7.4, Algorithm 7.1).

Groups of scheduler nodes are merged pairwise in at most 10 rounds. A candidate pair shares a
buffer; `can_fuse` checks every condition of §7.3 and records why it refuses; candidates are
ordered by the score `(τ, σ, ω, −δ)` with the 16× rule on σ; each group merges at most once per
round, and never when Proposition 7.1 says the merge would close a cycle. The cycle check runs on
the quotient graph of the current groups, updated in place at each merge together with a
topological order of it, and searches only the groups ranked between the two candidates.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from stax.ir.expr import Index, Var, bounds
from stax.ir.program import Node, xvars
from stax.ir.sym import hint, same_size
from stax.sched.deps import Dep, MemoryDep, SchedulerNode

MAX_ROUNDS = 10
MIN_SHARED_BYTES = 10  # horizontal fusion needs at least this much shared data
PEAK_GROWTH_FACTOR = 32  # reject if peak could grow by more than this × the bytes saved
SCORE_RATIO = 16  # σ alone decides when two candidates differ by more than this factor
PAIR_WINDOW = 16  # a buffer's readers pair only with the next 16 of them in program order


@dataclass(frozen=True)
class FusionRules:
    """What a backend lets the scheduler put in one kernel (`Backend.fusion_rules`, issue 16):
    at most `max_nodes` nodes and `max_buffers` distinct buffers; nodes of an `opaque` kind are
    never fused. The scheduler has no limits of its own: it applies the rules it is given."""

    max_nodes: int
    max_buffers: int
    opaque: frozenset[str]


@dataclass(frozen=True)
class Group:
    """A scheduler node or a fused group of them (members in execution order)."""

    members: tuple[SchedulerNode, ...]
    depth: int  # loops shared by all members
    kind: str  # SchedulerNode | FusedSchedulerNode | OuterLoopFusedSchedulerNode
    parts: tuple[str, ...]  # kinds of the two groups merged, for the log

    @functools.cached_property
    def name(self) -> str:
        return "_".join(m.name for m in self.members)

    @functools.cached_property
    def signatures(self) -> frozenset[tuple[bool, int, int]]:
        """Distinct (is reduction, n, r) iteration groups of the members (Definition 7.2)."""
        return frozenset((m.is_reduction, m.node.numel, m.node.rnumel if m.is_reduction else 1)
                         for m in self.members)

    @property
    def ranges(self) -> tuple[int, ...]:
        return self.members[0].node.ranges[: self.depth]

    def describe(self) -> str:
        if self.kind == "SchedulerNode":
            return f"{self.name}: SchedulerNode"
        return f"{self.name}: {self.kind}({','.join(self.parts)})"

    # Summaries of the members that `can_fuse` and `score` combine pairwise (cached: a group is
    # compared with many others before it merges).

    @functools.cached_property
    def buffers(self) -> frozenset[str]:
        return frozenset(d.buffer for m in self.members for d in m.reads + m.writes)

    @functools.cached_property
    def deps(self) -> frozenset[Dep]:
        return frozenset(d for m in self.members for d in m.reads + m.writes)

    @functools.cached_property
    def read_buffers(self) -> frozenset[str]:
        return frozenset(b for m in self.members for b in m.node.read_buffers())

    @functools.cached_property
    def outputs(self) -> dict[str, Node]:
        return {m.node.out: m.node for m in self.members}

    @functools.cached_property
    def output_bytes(self) -> int:
        return sum(m.writes[0].nbytes for m in self.members if isinstance(m.writes[0], MemoryDep))

    @functools.cached_property
    def node_kinds(self) -> frozenset[str]:
        return frozenset(m.node.kind for m in self.members)

    @functools.cached_property
    def kinds(self) -> frozenset[bool]:
        """Whether members are reductions, as a set (τ needs them all alike)."""
        return frozenset(m.is_reduction for m in self.members)

    @functools.cached_property
    def shapes(self) -> frozenset[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        return frozenset((m.node.kind, m.node.ranges, m.node.reduction_ranges)
                         for m in self.members)

    @functools.cached_property
    def outer(self) -> tuple[int, ...]:
        """The longest prefix of ranges common to all members."""
        first = self.members[0].node.ranges
        return first[:_common_prefix([m.node.ranges for m in self.members])]

    @functools.cached_property
    def rank(self) -> int:
        """The most loops of any member."""
        return max(len(m.node.ranges) for m in self.members)


def single(node: SchedulerNode) -> Group:
    return Group((node,), len(node.node.ranges), "SchedulerNode", ())


class Verdict(NamedTuple):
    """`can_fuse`'s answer (verdicts and scores are named tuples: one of each is built per
    candidate pair, ~25 per node, and tuples are the cheapest to build)."""

    ok: bool
    reason: str
    depth: int = 0
    kind: str = ""
    rule: str = ""  # the rule that decided (G: decision records), see `FusionDecision`


# ---- compatibility and legality ----------------------------------------------------------------

def compatible(a: Node, b: Node) -> bool:
    """Definition 7.2 on iteration groups (n, r)."""
    return compatible_groups(
        (a.kind == "reduction", a.numel, a.rnumel if a.kind == "reduction" else 1),
        (b.kind == "reduction", b.numel, b.rnumel if b.kind == "reduction" else 1))


def compatible_groups(g1: tuple[bool, int, int], g2: tuple[bool, int, int]) -> bool:
    (red1, n1, r1), (red2, n2, r2) = g1, g2  # symbolic sizes: equal for every shape
    if red1 and red2:
        return same_size(n1, n2) and same_size(r1, r2)
    if not red1 and not red2:
        return same_size(n1, n2)
    (pn, _), (rn, rr) = ((n1, r1), (n2, r2)) if red2 else ((n2, r2), (n1, r1))
    return same_size(pn, rn) or same_size(pn, rn * rr)


def _common_prefix(xs: Sequence[tuple[int, ...]]) -> int:
    depth = 0
    for column in zip(*xs, strict=False):
        if not all(same_size(c, column[0]) for c in column):
            break
        depth += 1
    return depth


def fused_depth(a: Group, b: Group) -> tuple[int, str]:
    """The loops the fused group would share (the CPU rule by outer loops, §7.4)."""
    same = a.kind != "OuterLoopFusedSchedulerNode" and b.kind != "OuterLoopFusedSchedulerNode"
    if len(a.shapes | b.shapes) == 1 and same:
        return len(a.members[0].node.ranges), "FusedSchedulerNode"
    # the common prefix of all members' ranges is that of the two groups' common prefixes
    depth = min(_common_prefix([a.outer, b.outer]), a.depth, b.depth)
    return depth, "OuterLoopFusedSchedulerNode"


def split_index(index: Index, shared: set[str]) -> tuple[Index, Index] | None:
    """index = outer(shared vars) + inner(other vars); None when they mix inside floor/mod."""
    outer, inner = [], []
    for atom, c in index.terms:
        names = Index(((atom, 1),)).variables()
        if names and names <= shared:
            outer.append((atom, c))
        elif names & shared:
            return None
        else:
            inner.append((atom, c))
    return Index.of(outer, index.const), Index.of(inner)


def dense_extent(index: Index, ranges: dict[str, int]) -> int | None:
    """If `index` enumerates exactly [0, E) (a mixed-radix layout of plain variables), E."""
    terms = sorted(((c, a) for a, c in index.terms), key=lambda t: t[0])
    if index.const or any(not isinstance(a, Var) for _, a in terms):
        return None
    extent = 1
    for c, a in terms:
        if c != extent:
            return None
        extent *= ranges[a.name]  # type: ignore[union-attr]
    return extent


def vertical_legal(producer: Node, consumer: Node, depth: int) -> tuple[str, str]:
    """("", "") if every read by `consumer` of `producer`'s buffer, at each value of the shared
    outer loops, reads only elements the producer wrote at the same outer iteration
    (Prop. 7.2 / 7.3(2): distance zero on loops that run in parallel). Else (rule, why not)."""
    shared = set(xvars(depth))
    w = producer.out_index
    wsplit = split_index(w, shared)
    pranges = producer.var_ranges
    if wsplit is None:
        return ("index_mixes_loops",
                f"write index {w} of {producer.out} mixes shared and inner loops")
    wout, win = wsplit
    extent = dense_extent(win, pranges)
    for ld in consumer.reads():
        if ld.buf != producer.out:
            continue
        rsplit = split_index(ld.index, shared)
        if rsplit is None:
            return ("index_mixes_loops",
                    f"read index {ld.index} of {ld.buf} mixes shared and inner loops")
        rout, rin = rsplit
        if rout != wout:
            return ("dependence_distance",
                    f"{consumer.name} reads {ld.buf}[{ld.index}] but {producer.name} writes "
                    f"{ld.buf}[{w}]: nonzero dependence distance on the shared loops")
        if rin == win and all(pranges.get(v) == consumer.var_ranges.get(v)
                              for v in rin.variables()):
            continue
        lo, hi = bounds(rin, consumer.var_ranges)
        if extent is None or lo < 0 or hi >= extent:
            return ("read_outside_write",
                    f"{consumer.name} reads {ld.buf}[{ld.index}] outside what {producer.name} "
                    f"writes at the same outer iteration ({w})")
    return "", ""


def can_fuse(a: Group, b: Group, sigma: int, distance: int, rules: FusionRules) -> Verdict:
    """Whether `a` and `b` may fuse under the backend's `rules` (and §7.3's conditions)."""
    for g in (a, b):
        if not g.node_kinds.isdisjoint(rules.opaque):
            m = next(m for m in g.members if m.node.kind in rules.opaque)
            return Verdict(False, f"{m.name} is a {m.node.kind} node (the backend never fuses "
                           f"{'/'.join(sorted(rules.opaque))} nodes)", rule="opaque_node")
    for x in a.signatures:
        for y in b.signatures:
            if not compatible_groups(x, y):
                return Verdict(False, f"iteration spaces differ {a.members[0].group} vs "
                               f"{b.members[0].group} (Definition 7.2)",
                               rule="iteration_spaces_differ")
    depth, kind = fused_depth(a, b)
    if depth == 0 and max(a.rank, b.rank) > 0:
        return Verdict(False, f"outer loop fusion depth 0: iteration groups "
                       f"{a.members[0].group} and {b.members[0].group} share no outer loop",
                       rule="no_shared_outer_loop")
    if len(a.members) + len(b.members) > rules.max_nodes:
        return Verdict(False, f"more than {rules.max_nodes} nodes in one kernel (the "
                       "backend's limit)", rule="max_nodes")
    if len(a.buffers | b.buffers) > rules.max_buffers:
        return Verdict(False, f"more than {rules.max_buffers} distinct buffers in one kernel "
                       "(the backend's limit)", rule="max_buffers")
    vertical = False
    for first, second in ((a.outputs, b), (b.outputs, a)):
        if first.keys().isdisjoint(second.read_buffers):
            continue
        for m in second.members:
            for buf in m.node.read_buffers():
                if buf in first:
                    vertical = True
                    rule, why = vertical_legal(first[buf], m.node, depth)
                    if rule:
                        return Verdict(False, why, rule=rule)
    if not vertical:
        if hint(sigma) < MIN_SHARED_BYTES:  # heuristics: the traced sizes, no guard
            return Verdict(False, f"shares only {sigma} bytes (< {MIN_SHARED_BYTES})",
                           rule="too_little_shared")
        held = (a if distance > 0 else b).output_bytes
        if distance > 1 and hint(held) > PEAK_GROWTH_FACTOR * hint(sigma):
            return Verdict(False, f"fusing would hold {held} bytes across {distance} nodes, more "
                           f"than {PEAK_GROWTH_FACTOR}x the {sigma} bytes saved (peak memory)",
                           rule="peak_growth")
    reason = "vertical" if vertical else "horizontal"
    if kind == "FusedSchedulerNode" and a.kinds | b.kinds == {True}:  # all reductions
        reason = "SAME_VARS_REDUCE"
    return Verdict(True, reason, depth, kind, reason.lower())


# ---- scores ------------------------------------------------------------------------------------

class Score(NamedTuple):
    tau: int
    sigma: int
    omega: int
    delta: int

    def __str__(self) -> str:
        return f"(τ={self.tau}, σ={self.sigma}, ω={self.omega}, δ={self.delta})"


def score(a: Group, b: Group, position: dict[str, int]) -> Score:
    # a heuristic: symbolic sizes count at their traced value (no guard, issue 11)
    sigma = hint(sum(d.nbytes for d in a.deps & b.deps if isinstance(d, MemoryDep)))
    tau = 1 if len(a.kinds | b.kinds) == 1 and sigma > 0 else 0
    delta = abs(position[a.members[0].name] - position[b.members[0].name])
    # ω counts shared buffers; the buffer of every shared dependence is one of them
    return Score(tau, sigma, len(a.buffers & b.buffers), delta)


def compare(s1: Score, s2: Score) -> int:
    lo, hi = sorted((s1.sigma, s2.sigma))
    if lo > 0 and hi > SCORE_RATIO * lo or lo == 0 < hi:
        return (s1.sigma > s2.sigma) - (s1.sigma < s2.sigma)
    k1 = (s1.tau, s1.sigma, s1.omega, -s1.delta)
    k2 = (s2.tau, s2.sigma, s2.omega, -s2.delta)
    return (k1 > k2) - (k1 < k2)


def rank_by_score(candidates: list[tuple[Score, int, int, Verdict]]) -> None:
    """Sort `candidates` best score first, stably, exactly as a sort by `compare` would.

    `compare` is not transitive in general (the 16x rule), so the result of a sort by it depends
    on the sorting algorithm; that sort is kept as the general case. But `compare` differs from
    the plain lexicographic order of `(τ, σ, ω, −δ)` only on a pair where the 16x rule fires and
    τ disagrees with σ: one score has τ = 1 and σ = s > 0 (τ = 1 implies σ > 0), the other τ = 0
    and σ > 16s. When no such pair exists in the list, `compare` is the lexicographic order on
    it, a total preorder, and a stable sort by a total preorder has exactly one result, so the
    stable sort by the key (much faster: no Python call per comparison) gives the same list.
    """
    least_tau1 = min((s.sigma for s, *_ in candidates if s.tau == 1), default=None)
    most_tau0 = max((s.sigma for s, *_ in candidates if s.tau == 0), default=0)
    if least_tau1 is not None and most_tau0 > SCORE_RATIO * least_tau1:
        candidates.sort(key=functools.cmp_to_key(lambda p, q: compare(q[0], p[0])))
    else:
        candidates.sort(key=lambda c: (c[0].tau, c[0].sigma, c[0].omega, -c[0].delta),
                        reverse=True)


# ---- Algorithm 7.1 -----------------------------------------------------------------------------

@dataclass(frozen=True)
class FusionDecision:
    """A pair of groups fused or refused in a round, by `rule`: a refusal names the condition of
    `can_fuse` that failed (or `cycle`, Proposition 7.1); an acceptance names the kind of fusion
    (`vertical`, `horizontal`, `same_vars_reduce`). `str()` is the fusion log's text."""

    round: int
    first: str
    second: str
    accepted: bool
    rule: str
    reason: str
    score: Score | None = None
    fused: str = ""  # the new group's `describe()`, when accepted

    def lines(self) -> tuple[str, ...]:
        if not self.accepted:
            return (f"cannot fuse {self.first} with {self.second}: {self.reason}",)
        return (f"fusing {self.first} with {self.second} ({self.reason}, score {self.score})",
                self.fused)

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class FusionRound:
    """The end of a round's candidate search: how many pairs `can_fuse` accepted."""

    round: int
    candidates: int

    def lines(self) -> tuple[str, ...]:
        return (f"round {self.round}: found {self.candidates} possible fusions",)

    def __str__(self) -> str:
        return self.lines()[0]


FusionRecord = FusionDecision | FusionRound


def log_lines(records: Sequence[FusionRecord]) -> tuple[str, ...]:
    """The fusion log's text, rendered from its records."""
    return tuple(line for r in records for line in r.lines())


@dataclass(frozen=True)
class FusionResult:
    groups: tuple[Group, ...]
    records: tuple[FusionRecord, ...]

    @property
    def log(self) -> tuple[str, ...]:
        return log_lines(self.records)


class _Quotient:
    """The quotient graph of the current groups (an edge G -> H when a member of H reads a buffer
    a member of G produces), kept with a topological order, and the cycle check of Prop. 7.1.

    Prop. 7.1 in the quotient graph: merging groups `a` and `b` closes a cycle iff a path of
    length >= 2 joins them (through a third group). The graph stays a DAG (the check keeps it
    one), and `rank` is a topological order of it: every edge goes to a higher rank. Soundness of
    the pruning: along any path ranks strictly increase, so a path from `a` to `b` (with rank(a) <
    rank(b); none runs from `b` to `a`) visits only groups ranked strictly between them. The
    search therefore starts at `a`'s successors other than `b`, follows only groups ranked below
    `b`, and reports a cycle iff it meets a predecessor of `b`: it sees every path's interior, and
    each group it meets is reachable from `a` through a path that avoids `b`. A merge only
    reorders the groups between `a` and `b` (Pearce and Kelly's dynamic topological order), so
    no transitive closure is ever recomputed.
    """

    def __init__(self, nodes: Sequence[SchedulerNode]) -> None:
        producer = {n.node.out: n.name for n in nodes}
        self.rank = {n.name: i for i, n in enumerate(nodes)}  # nodes are topologically sorted
        self.succs: dict[str, set[str]] = {n.name: set() for n in nodes}
        self.preds: dict[str, set[str]] = {n.name: set() for n in nodes}
        for n in nodes:
            for buf in n.node.read_buffers():
                p = producer.get(buf)
                if p is not None:
                    self.succs[p].add(n.name)
                    self.preds[n.name].add(p)

    def _ends(self, a: Group, b: Group) -> tuple[str, str]:
        return (a.name, b.name) if self.rank[a.name] < self.rank[b.name] else (b.name, a.name)

    def _reach(self, start: str, edges: dict[str, set[str]], lo: int, hi: int) -> set[str]:
        """Groups reachable from `start` along `edges` through groups ranked in (lo, hi)."""
        seen: set[str] = set()
        stack = [start]
        while stack:
            for g in edges[stack.pop()]:
                if lo < self.rank[g] < hi and g not in seen:
                    seen.add(g)
                    stack.append(g)
        return seen

    def creates_cycle(self, a: Group, b: Group) -> bool:
        first, last = self._ends(a, b)
        between = self._reach(first, self.succs, self.rank[first], self.rank[last])
        return not between.isdisjoint(self.preds[last])

    def merge(self, a: Group, b: Group, new: Group) -> None:
        """Replace `a` and `b` (no path of length >= 2 joins them) by `new`. The groups ranked
        between them that `first` reaches (`after`) and those that reach `last` (`before`) are
        disjoint (no such path); their ranks with those of `first` and `last` are reassigned:
        `before` in its order, then `new`, then `after` in its order. `before` only moves down
        and `after` only up, so every edge still rises: an edge into `before` or out of `after`
        from a group between them would put that group in the same set."""
        first, last = self._ends(a, b)
        lo, hi = self.rank[first], self.rank[last]
        after = self._reach(first, self.succs, lo, hi)
        before = self._reach(last, self.preds, lo, hi)
        slots = sorted([lo, hi] + [self.rank[g] for g in before | after])
        sequence = sorted(before, key=self.rank.__getitem__) + [new.name] + sorted(
            after, key=self.rank.__getitem__)
        self.rank.update(zip(sequence, slots, strict=False))  # one slot is left over
        old = {first, last}
        self.succs[new.name] = (self.succs.pop(first) | self.succs.pop(last)) - old
        self.preds[new.name] = (self.preds.pop(first) | self.preds.pop(last)) - old
        for s in self.succs[new.name]:
            self.preds[s] = self.preds[s] - old | {new.name}
        for p in self.preds[new.name]:
            self.succs[p] = self.succs[p] - old | {new.name}
        del self.rank[first], self.rank[last]


def fuse_groups(a: Group, b: Group, verdict: Verdict, position: dict[str, int]) -> Group:
    members = tuple(sorted(a.members + b.members, key=lambda m: position[m.name]))
    return Group(members, verdict.depth, verdict.kind, (a.kind, b.kind))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector, restoring its state after.

    Fusion allocates ~10^5 small objects per round (scores, verdicts, candidates), and scheduler
    nodes and memory plans keep one or more per node; each batch that outlives a young
    collection counts toward a full one, which traverses the caller's whole heap (the traced and
    lowered program) again: at 5,000 nodes that was ~40% of the scheduler's time and made it grow
    faster than N log N. The scheduler creates no reference cycles (its objects are freed by
    reference counting), so every object is still freed as soon as it is unused. Nested pauses
    leave the collector off until the outermost ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def greedy_fusion(nodes: Sequence[SchedulerNode], rules: FusionRules) -> FusionResult:
    """Algorithm 7.1 over scheduler nodes in topological order, under the backend's `rules`."""
    with collector_paused():
        return _greedy_fusion(nodes, rules)


def _greedy_fusion(nodes: Sequence[SchedulerNode], rules: FusionRules) -> FusionResult:
    position = {n.name: i for i, n in enumerate(nodes)}
    quotient = _Quotient(nodes)
    groups: list[Group] = [single(n) for n in nodes]
    log: list[FusionRecord] = []
    # Groups are immutable, so a refusal holds until one of the two merges: it is logged once
    # and the pair skipped after. An accepted pair recurs in a later round only if the cycle
    # check stopped it (else one of its groups merged), which is rare: it is simply scored again.
    refused: set[tuple[str, str]] = set()
    for rnd in range(1, MAX_ROUNDS + 1):
        current = {g.name: g for g in groups}
        # Groups are disjoint, so their first members' positions are distinct: pairs of indices
        # into `groups` sort in order of position.
        groups.sort(key=lambda g: position[g.members[0].name])
        by_buffer: dict[str, list[int]] = {}
        for i, g in enumerate(groups):  # each buffer's users in order of position
            for buf in g.buffers:
                by_buffer.setdefault(buf, []).append(i)
        pairs: set[tuple[int, int]] = set()
        for users in by_buffer.values():
            for k, i in enumerate(users):
                pairs.update((i, j) for j in users[k + 1:k + 1 + PAIR_WINDOW])
        candidates: list[tuple[Score, int, int, Verdict]] = []
        for i, j in sorted(pairs):
            x, y = groups[i], groups[j]
            if (x.name, y.name) in refused:
                continue
            s = score(x, y, position)
            verdict = can_fuse(x, y, s.sigma, s.delta, rules)
            if verdict.ok:
                candidates.append((s, i, j, verdict))
            else:
                refused.add((x.name, y.name))
                log.append(FusionDecision(rnd, x.name, y.name, False, verdict.rule,
                                          verdict.reason))
        log.append(FusionRound(rnd, len(candidates)))
        rank_by_score(candidates)
        merged: set[str] = set()
        for s, i, j, verdict in candidates:
            x, y = groups[i], groups[j]
            if x.name in merged or y.name in merged:
                continue
            if quotient.creates_cycle(x, y):
                log.append(FusionDecision(rnd, x.name, y.name, False, "cycle",
                                          "fusion would create a cycle through a third node "
                                          "(Proposition 7.1)"))
                continue
            new = fuse_groups(x, y, verdict, position)
            log.append(FusionDecision(rnd, x.name, y.name, True, verdict.rule, verdict.reason,
                                      s, new.describe()))
            merged |= {x.name, y.name}
            del current[x.name], current[y.name]
            current[new.name] = new
            quotient.merge(x, y, new)
        groups = list(current.values())
        if not merged:
            break
    return FusionResult(topological_groups(groups, position), tuple(log))


def topological_groups(groups: Sequence[Group], position: dict[str, int]) -> tuple[Group, ...]:
    """Kernels in a topological order of the quotient graph (earliest original node first)."""
    owner = {m.node.out: g.name for g in groups for m in g.members}
    by_name = {g.name: g for g in groups}
    preds = {g.name: {owner[b] for m in g.members for b in m.node.read_buffers()
                      if b in owner} - {g.name} for g in groups}
    succs: dict[str, set[str]] = {g.name: set() for g in groups}
    for name, ps in preds.items():
        for p in ps:
            succs[p].add(name)
    ready = [(position[g.members[0].name], g.name) for g in groups if not preds[g.name]]
    heapq.heapify(ready)
    order: list[Group] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(by_name[name])
        for s in succs[name]:
            preds[s].discard(name)
            if not preds[s]:
                heapq.heappush(ready, (position[by_name[s].members[0].name], s))
    if len(order) != len(groups):
        raise AssertionError("fusion produced a cyclic quotient graph")
    return tuple(order)
