"""Exact solver for the fusion problem of Definition 7.3 (seed §7.2) on small graphs.

The greedy scheduler (Algorithm 7.1) is fast but not optimal; this module computes the true
optimum on graphs of at most :data:`MAX_EXACT_NODES` nodes, so that greedy's optimality gap can be
measured, and builds the reduction of Theorem 7.1 from 3-terminal multiway cut.

The problem is stated abstractly, independent of the scheduler's node classes:

* a :class:`FusionProblem` is a DAG of nodes whose edges go from the producer of each
  :class:`FBuffer` to each of its consumers, plus a set of *forbidden* node pairs that may not share
  a block (incompatible iteration spaces, Def. 7.2, or illegal dependence distances, Prop. 7.3);
* a *fusion partition* is a partition of the nodes into blocks (kernels) such that no block holds
  a forbidden pair and the quotient graph (each block contracted to one vertex) is acyclic;
* its cost (:func:`fusion_cost`) is the traffic between the kernels and main memory, counted
  exactly as the proof of Theorem 7.1 counts it.

:func:`solve_exact` minimises the cost as a mixed-integer program solved by HiGHS (``highspy``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import highspy
import numpy as np

__all__ = [
    "MAX_EXACT_NODES",
    "ExactResult",
    "FBuffer",
    "FusionProblem",
    "check_partition",
    "fusion_cost",
    "multiway_cut_reduction",
    "solve_exact",
]

#: Largest problem :func:`solve_exact` accepts; larger graphs are left to the greedy scheduler.
MAX_EXACT_NODES = 40

_T = TypeVar("_T", bound=Hashable)


@dataclass(frozen=True)
class FBuffer:
    """A buffer of the fusion problem.

    ``producer`` is the node that writes it, or ``None`` for an external graph input; every node in
    ``consumers`` reads it, and each such read is an edge ``producer -> consumer`` of the DAG.
    ``nbytes`` is its size in bytes; ``is_output`` marks a graph output, which must reach main
    memory whatever the partition.
    """

    name: str
    producer: str | None
    consumers: tuple[str, ...]
    nbytes: int
    is_output: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "consumers", tuple(self.consumers))
        if isinstance(self.nbytes, bool) or not isinstance(self.nbytes, int) or self.nbytes < 0:
            raise ValueError(
                f"buffer {self.name!r}: nbytes must be a non-negative int, got {self.nbytes!r}"
            )
        if len(set(self.consumers)) != len(self.consumers):
            raise ValueError(f"buffer {self.name!r}: consumers must be distinct: {self.consumers}")
        if self.producer is not None and self.producer in self.consumers:
            raise ValueError(f"buffer {self.name!r}: producer {self.producer!r} also consumes it")
        if self.producer is None and self.is_output:
            raise ValueError(f"buffer {self.name!r}: an external input cannot be a graph output")


@dataclass(frozen=True)
class FusionProblem:
    """A DAG of ``nodes`` connected through ``buffers``, with pairs of nodes that cannot fuse.

    Construction checks that names are unique, that every producer and consumer is a node, that
    the producer -> consumer graph is acyclic (naming a cycle otherwise), and that every forbidden
    entry is a pair of two distinct nodes.
    """

    nodes: tuple[str, ...]
    buffers: tuple[FBuffer, ...]
    forbidden: frozenset[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "buffers", tuple(self.buffers))
        object.__setattr__(self, "forbidden", frozenset(frozenset(p) for p in self.forbidden))
        known = set(self.nodes)
        if len(known) != len(self.nodes):
            raise ValueError(f"node names must be unique: {self.nodes}")
        names = [b.name for b in self.buffers]
        if len(set(names)) != len(names):
            raise ValueError(f"buffer names must be unique: {names}")
        for buf in self.buffers:
            for node in (buf.producer, *buf.consumers):
                if node is not None and node not in known:
                    raise ValueError(f"buffer {buf.name!r} refers to unknown node {node!r}")
        for pair in self.forbidden:
            if len(pair) != 2 or not pair <= known:
                raise ValueError(
                    f"forbidden entry {sorted(pair)} is not a pair of two distinct known nodes"
                )
        cycle = _find_cycle(self.nodes, _successors(self.nodes, self.edges()))
        if cycle is not None:
            raise ValueError(f"dependence graph is cyclic: {' -> '.join(cycle)}")

    def edges(self) -> tuple[tuple[str, str], ...]:
        """The distinct edges ``producer -> consumer``, in order of first appearance."""
        return tuple(
            dict.fromkeys(
                (buf.producer, consumer)
                for buf in self.buffers
                if buf.producer is not None
                for consumer in buf.consumers
            )
        )


@dataclass(frozen=True)
class ExactResult:
    """The outcome of :func:`solve_exact`.

    ``partition`` lists the blocks in an execution order (a topological order of the quotient
    graph) and ``cost`` is its :func:`fusion_cost`. ``optimal`` is true when HiGHS proved that no
    partition is cheaper; otherwise (time limit) ``partition`` is the best one found and
    ``lower_bound`` (the solver's dual bound, rounded up to an achievable cost) bounds the optimum
    from below. ``solver_status`` is HiGHS's model status, e.g. ``"Optimal"`` or
    ``"Time limit reached"``.
    """

    partition: tuple[frozenset[str], ...]
    cost: int
    optimal: bool
    solver_status: str
    lower_bound: int


def check_partition(problem: FusionProblem, partition: Sequence[Collection[str]]) -> None:
    """Raise ``ValueError`` unless ``partition`` is a fusion partition of ``problem`` (Def. 7.3).

    The message names the first violated condition: ``not a partition`` (a node in no block, in
    two blocks, an unknown node, an empty block), ``forbidden pair in a block``, or ``cyclic
    quotient graph`` followed by the cycle of blocks, e.g. ``{a, d} -> {b, c} -> {a, d}``.
    """
    _block_index(problem, partition)


def fusion_cost(problem: FusionProblem, partition: Sequence[Collection[str]]) -> int:
    """The main-memory traffic in bytes of a fusion partition (Def. 7.3, as in Theorem 7.1's proof).

    Each buffer ``b`` of ``nbytes`` bytes contributes, with ``B(v)`` the block of node ``v`` and
    ``R`` the set of blocks that contain a consumer of ``b``:

    * an external input (no producer) is read once by each block in ``R``:
      ``nbytes * |R|``;
    * a produced buffer is read once by each block in ``R`` other than its producer's block, and is
      written once if that set is non-empty or if ``b`` is a graph output:
      ``nbytes * ([b is output or R - {B(producer)} != {}] + |R - {B(producer)}|)``.

    A buffer consumed only inside its producer's block (and not an output) costs nothing: it stays
    in registers or cache. Raises ``ValueError`` as :func:`check_partition` if ``partition`` is not
    a fusion partition.
    """
    block_of = _block_index(problem, partition)
    return sum(_buffer_cost(buf, block_of) for buf in problem.buffers)


def solve_exact(
    problem: FusionProblem,
    *,
    time_limit: float = 10.0,
    initial: Sequence[Collection[str]] | None = None,
) -> ExactResult:
    """A minimum-cost fusion partition of ``problem``, as a mixed-integer program solved by HiGHS.

    ``time_limit`` (seconds) is passed to HiGHS; if it stops before proving optimality the best
    partition found is returned with ``optimal=False``. ``initial`` is a fusion partition used as
    the solver's starting incumbent (for example the greedy scheduler's); by default it is the
    unfused partition (one node per block), so a partition is always returned.

    The model (a clique-partitioning formulation, whose LP bound is far stronger than that of
    block-assignment variables on these problems):

    * ``z[u,v]`` binary for each node pair: ``u`` and ``v`` share a block; fixed to 0 for a
      forbidden pair. Triangle inequalities ``z[u,v] + z[v,w] - z[u,w] <= 1`` make the relation
      an equivalence, whose classes are the blocks;
    * acyclic quotient: a level ``p[v]`` in ``[0, n-1]``, equal within a block (``|p[u] - p[v]| <=
      (n-1)(1 - z[u,v])``) and with ``p[v] >= p[u] + 1 - z[u,v]`` on every edge ``u -> v``, so
      levels strictly increase along every quotient edge; conversely the topological index of each
      block is a valid level. Convexity cuts ``z[u,v] <= z[u,w]`` and ``z[u,v] <= z[w,v]`` for every
      path ``u -> ... -> w -> ... -> v`` (Prop. 7.1) are implied, and tighten the relaxation;
    * cost: ``w[b] >= 1 - z[producer,c]`` for each consumer ``c`` (written; constant for an
      output) and ``r[b,c] >= 1 - z[producer,c] - sum z[c',c]`` over the consumers ``c'`` listed
      before ``c``: ``b`` is read once by the block of each consumer that is neither with the
      producer nor with an earlier consumer (for an external input, without the producer term;
      its first consumer always reads it). The objective is ``sum nbytes * (w[b] + sum_c r[b,c])``.

    Only ``z`` is integral; at an integral ``z`` the minimisation drives ``w`` and ``r`` to the
    0/1 indicators of :func:`fusion_cost`, which recomputes the returned cost exactly.
    Raises ``ValueError`` for problems larger than :data:`MAX_EXACT_NODES` nodes.
    """
    if len(problem.nodes) > MAX_EXACT_NODES:
        raise ValueError(
            f"solve_exact handles at most {MAX_EXACT_NODES} nodes, got {len(problem.nodes)}; "
            "use the greedy scheduler for larger graphs"
        )
    if not math.isfinite(time_limit) or time_limit <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit}")
    start = tuple(frozenset(b) for b in initial) if initial is not None else _singletons(problem)
    model = _Model(problem)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    # Costs are integral in units of model.unit, so a gap below one unit proves optimality.
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.5)
    model.load(h)
    solution = highspy.HighsSolution()
    solution.col_value = model.encode(start).tolist()
    solution.value_valid = True
    h.setSolution(solution)
    h.run()
    status = h.getModelStatus()
    candidates = [start]
    if h.getInfo().primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible:
        candidates.append(model.decode(np.asarray(h.getSolution().col_value)))
    best = min(candidates, key=lambda p: fusion_cost(problem, p))
    cost = fusion_cost(problem, best)
    optimal = status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kModelEmpty)
    if optimal:
        lower_bound = cost
    else:
        bound = h.getInfo().mip_dual_bound
        scaled = math.ceil(bound - 1e-6) if math.isfinite(bound) else 0
        lower_bound = min(cost, model.offset + model.unit * max(scaled, 0))
    return ExactResult(
        partition=_execution_order(problem, best),
        cost=cost,
        optimal=optimal,
        solver_status=h.modelStatusToString(status),
        lower_bound=lower_bound,
    )


def multiway_cut_reduction(
    graph_edges: Sequence[tuple[str, str, int]], terminals: tuple[str, str, str]
) -> FusionProblem:
    """Theorem 7.1's fusion problem for a 3-terminal multiway cut instance.

    ``graph_edges`` are the undirected weighted edges ``(u, w, weight)`` of ``H`` (parallel edges
    allowed, no self-loops); its vertices are the terminals and the edges' endpoints. The result
    has, for each vertex ``v``, a sink node ``n:v`` writing a graph output ``out:v`` of 0 bytes;
    for the ``i``-th edge ``{u, w}``, a source node ``x:i`` reading the 0-byte external input
    ``in`` and writing buffer ``e:i`` of ``weight`` bytes read by ``n:u`` and ``n:w``; and the
    three forbidden pairs ``{n:s_i, n:s_j}``. Its optimal fusion cost is exactly twice the minimum
    multiway cut weight.
    """
    if len(set(terminals)) != 3:
        raise ValueError(f"need three distinct terminals, got {terminals}")
    for u, w, weight in graph_edges:
        if u == w:
            raise ValueError(f"self-loop on {u!r}: a multiway cut graph has none")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise ValueError(f"edge {u!r}-{w!r}: weight must be a non-negative int, got {weight!r}")
    vertices = tuple(dict.fromkeys([*terminals, *(v for u, w, _ in graph_edges for v in (u, w))]))
    sources = tuple(f"x:{i}" for i in range(len(graph_edges)))
    buffers = [FBuffer("in", None, sources, 0)]
    buffers += [
        FBuffer(f"e:{i}", f"x:{i}", (f"n:{u}", f"n:{w}"), weight)
        for i, (u, w, weight) in enumerate(graph_edges)
    ]
    buffers += [FBuffer(f"out:{v}", f"n:{v}", (), 0, is_output=True) for v in vertices]
    forbidden = frozenset(
        frozenset((f"n:{terminals[i]}", f"n:{terminals[j]}"))
        for i in range(3)
        for j in range(i + 1, 3)
    )
    return FusionProblem(
        nodes=sources + tuple(f"n:{v}" for v in vertices),
        buffers=tuple(buffers),
        forbidden=forbidden,
    )


class _Model:
    """The mixed-integer program of :func:`solve_exact` as HiGHS arrays, with its column layout."""

    def __init__(self, problem: FusionProblem) -> None:
        self.problem = problem
        nodes = problem.nodes
        n = len(nodes)
        costed = [b for b in problem.buffers if b.nbytes > 0 and b.consumers]
        self.unit = math.gcd(*(b.nbytes for b in costed)) or 1
        #: Traffic the partition cannot change: graph outputs are always written, and the first
        #: consumer of an external input always reads it.
        self.offset = sum(b.nbytes for b in problem.buffers if b.is_output)
        self.offset += sum(b.nbytes for b in costed if b.producer is None)
        self.costs: list[float] = []
        self.upper: list[float] = []
        self.z = {
            frozenset((u, v)): self._col(0.0, float(frozenset((u, v)) not in problem.forbidden))
            for i, u in enumerate(nodes)
            for v in nodes[i + 1 :]
        }
        self.p = {v: self._col(0.0, float(max(n - 1, 0))) for v in nodes}
        self.w = {
            b.name: self._col(b.nbytes // self.unit, 1.0)
            for b in costed
            if b.producer is not None and not b.is_output
        }
        self.r = {
            (b.name, c): self._col(b.nbytes // self.unit, 1.0)
            for b in costed
            for i, c in enumerate(b.consumers)
            if b.producer is not None or i > 0
        }
        self.rows: list[tuple[float, float, dict[int, float]]] = []
        self._constraints(costed)

    def _col(self, cost: float, upper: float) -> int:
        self.costs.append(float(cost))
        self.upper.append(upper)
        return len(self.costs) - 1

    def _row(self, lower: float, upper: float, terms: Iterable[tuple[int, float]]) -> None:
        self.rows.append((lower, upper, dict(terms)))

    def _constraints(self, costed: Sequence[FBuffer]) -> None:
        z, p, inf = self.z, self.p, highspy.kHighsInf
        nodes = self.problem.nodes
        big_m = float(max(len(nodes) - 1, 0))
        for u, v, w in itertools.combinations(nodes, 3):
            uv, uw, vw = z[frozenset((u, v))], z[frozenset((u, w))], z[frozenset((v, w))]
            for a, b, c in ((uv, vw, uw), (uv, uw, vw), (uw, vw, uv)):
                self._row(-inf, 1.0, ((a, 1.0), (b, 1.0), (c, -1.0)))
        for u, v in itertools.combinations(nodes, 2):
            same = z[frozenset((u, v))]
            self._row(-inf, big_m, ((p[u], 1.0), (p[v], -1.0), (same, big_m)))
            self._row(-inf, big_m, ((p[v], 1.0), (p[u], -1.0), (same, big_m)))
        for u, v in self.problem.edges():
            self._row(1.0, inf, ((p[v], 1.0), (p[u], -1.0), (z[frozenset((u, v))], 1.0)))
        for u, v, w in _between(self.problem):
            for inner in (frozenset((u, w)), frozenset((w, v))):
                self._row(-inf, 0.0, ((z[frozenset((u, v))], 1.0), (z[inner], -1.0)))
        for b in costed:
            home = b.producer
            if b.name in self.w:
                for c in b.consumers:
                    self._row(1.0, inf, ((self.w[b.name], 1.0), (z[frozenset((home, c))], 1.0)))
            for i, c in enumerate(b.consumers):
                if (b.name, c) in self.r:
                    others = [*b.consumers[:i], *([] if home is None else [home])]
                    terms = [(self.r[b.name, c], 1.0)]
                    terms += [(z[frozenset((o, c))], 1.0) for o in others]
                    self._row(1.0, inf, terms)

    def load(self, h: highspy.Highs) -> None:
        """Add the columns, integrality and rows to an empty HiGHS instance."""
        ncols = len(self.costs)
        h.addCols(
            ncols,
            np.asarray(self.costs, dtype=np.float64),
            np.zeros(ncols),
            np.asarray(self.upper, dtype=np.float64),
            0,
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        zs = np.asarray(sorted(self.z.values()), dtype=np.int32)
        h.changeColsIntegrality(
            len(zs), zs, np.full(len(zs), highspy.HighsVarType.kInteger, dtype=np.uint8)
        )
        starts, indices, values = [], [], []
        for _, _, coeffs in self.rows:
            starts.append(len(indices))
            indices.extend(coeffs)
            values.extend(coeffs.values())
        h.addRows(
            len(self.rows),
            np.asarray([r[0] for r in self.rows], dtype=np.float64),
            np.asarray([r[1] for r in self.rows], dtype=np.float64),
            len(indices),
            np.asarray(starts, dtype=np.int32),
            np.asarray(indices, dtype=np.int32),
            np.asarray(values, dtype=np.float64),
        )

    def encode(self, partition: Sequence[Collection[str]]) -> np.ndarray:
        """The column values of a fusion partition (validated; raises ``ValueError`` otherwise)."""
        block_of = _block_index(self.problem, partition)
        level = {b: i for i, b in enumerate(_topological_blocks(self.problem, partition, block_of))}
        x = np.zeros(len(self.costs))
        for pair, col in self.z.items():
            u, v = pair
            x[col] = float(block_of[u] == block_of[v])
        for v, col in self.p.items():
            x[col] = level[block_of[v]]
        for buf in self.problem.buffers:
            home = None if buf.producer is None else block_of[buf.producer]
            if buf.name in self.w:
                x[self.w[buf.name]] = float(any(block_of[c] != home for c in buf.consumers))
            for i, c in enumerate(buf.consumers):
                if (buf.name, c) in self.r:
                    seen = {home, *(block_of[o] for o in buf.consumers[:i])}
                    x[self.r[buf.name, c]] = float(block_of[c] not in seen)
        return x

    def decode(self, x: np.ndarray) -> tuple[frozenset[str], ...]:
        """The partition encoded by a solution: the classes of the same-block relation."""
        block_of = {v: i for i, v in enumerate(self.problem.nodes)}
        for u in self.problem.nodes:
            for v in self.problem.nodes:
                if u != v and x[self.z[frozenset((u, v))]] > 0.5:
                    block_of[v] = min(block_of[v], block_of[u])
        blocks: dict[int, set[str]] = {}
        for v, b in block_of.items():
            blocks.setdefault(b, set()).add(v)
        return tuple(frozenset(blocks[b]) for b in sorted(blocks))


def _between(problem: FusionProblem) -> list[tuple[str, str, str]]:
    """Triples ``(u, v, w)`` with paths ``u -> ... -> w -> ... -> v``: a block holding ``u`` and
    ``v`` must hold ``w`` too, or the quotient has the cycle ``{u, v} -> {w} -> {u, v}``."""
    succ = _successors(problem.nodes, problem.edges())
    reach: dict[str, set[str]] = {}
    for v in reversed(_topological_nodes(problem.nodes, succ)):
        reach[v] = set().union(*({s} | reach[s] for s in succ[v]))
    return [(u, v, w) for u in problem.nodes for w in reach[u] for v in reach[w]]


def _buffer_cost(buf: FBuffer, block_of: Mapping[str, int]) -> int:
    readers = {block_of[c] for c in buf.consumers}
    if buf.producer is None:
        return buf.nbytes * len(readers)
    readers.discard(block_of[buf.producer])
    written = buf.is_output or bool(readers)
    return buf.nbytes * (int(written) + len(readers))


def _singletons(problem: FusionProblem) -> tuple[frozenset[str], ...]:
    return tuple(frozenset((v,)) for v in problem.nodes)


def _block_index(problem: FusionProblem, partition: Sequence[Collection[str]]) -> dict[str, int]:
    """Map each node to its block's index, checking that ``partition`` is a fusion partition."""
    known = set(problem.nodes)
    block_of: dict[str, int] = {}
    for i, block in enumerate(partition):
        if not block:
            raise ValueError(f"not a partition: block {i} is empty")
        for v in block:
            if v not in known:
                raise ValueError(f"not a partition: unknown node {v!r} in block {i}")
            if v in block_of:
                raise ValueError(f"not a partition: node {v!r} is in blocks {block_of[v]} and {i}")
            block_of[v] = i
    missing = [v for v in problem.nodes if v not in block_of]
    if missing:
        raise ValueError(f"not a partition: node {missing[0]!r} is in no block")
    for pair in sorted(problem.forbidden, key=sorted):
        u, v = sorted(pair)
        if block_of[u] == block_of[v]:
            raise ValueError(
                f"forbidden pair in a block: {u!r} and {v!r} share block {block_of[u]} "
                f"{_block_name(partition[block_of[u]])}"
            )
    blocks = range(len(partition))
    quotient = [(block_of[u], block_of[v]) for u, v in problem.edges()]
    cycle = _find_cycle(blocks, _successors(blocks, ((a, b) for a, b in quotient if a != b)))
    if cycle is not None:
        names = " -> ".join(_block_name(partition[b]) for b in cycle)
        raise ValueError(f"cyclic quotient graph: {names}")
    return block_of


def _block_name(block: Collection[str]) -> str:
    return "{" + ", ".join(sorted(block)) + "}"


def _execution_order(
    problem: FusionProblem, partition: Sequence[Collection[str]]
) -> tuple[frozenset[str], ...]:
    """The blocks of a fusion partition in a topological order of its quotient graph."""
    block_of = _block_index(problem, partition)
    return tuple(frozenset(partition[b]) for b in _topological_blocks(problem, partition, block_of))


def _topological_blocks(
    problem: FusionProblem, partition: Sequence[Collection[str]], block_of: Mapping[str, int]
) -> list[int]:
    """Block indices in a topological order of the (acyclic) quotient, ties by first node."""
    position = {v: i for i, v in enumerate(problem.nodes)}
    first = {b: min(position[v] for v in block) for b, block in enumerate(partition)}
    preds: dict[int, set[int]] = {b: set() for b in first}
    for u, v in problem.edges():
        if block_of[u] != block_of[v]:
            preds[block_of[v]].add(block_of[u])
    order: list[int] = []
    done: set[int] = set()
    while len(order) < len(partition):
        ready = min((b for b in first if b not in done and preds[b] <= done), key=first.__getitem__)
        order.append(ready)
        done.add(ready)
    return order


def _successors(vertices: Iterable[_T], edges: Iterable[tuple[_T, _T]]) -> dict[_T, list[_T]]:
    succ: dict[_T, list[_T]] = {v: [] for v in vertices}
    for u, v in edges:
        succ[u].append(v)
    return succ


def _topological_nodes(nodes: Sequence[str], succ: Mapping[str, Sequence[str]]) -> list[str]:
    """The nodes of an acyclic graph in a topological order (Kahn's algorithm)."""
    indegree = dict.fromkeys(nodes, 0)
    for v in nodes:
        for s in succ[v]:
            indegree[s] += 1
    order = [v for v in nodes if indegree[v] == 0]
    for v in order:
        for s in succ[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                order.append(s)
    return order


def _find_cycle(vertices: Iterable[_T], succ: Mapping[_T, Sequence[_T]]) -> list[_T] | None:
    """A directed cycle ``[v0, v1, ..., v0]`` of the graph, or ``None`` if it is acyclic."""
    state: dict[_T, int] = {}  # 1: on the DFS stack, 2: finished
    for root in vertices:
        if root in state:
            continue
        state[root] = 1
        path = [root]
        stack = [iter(succ[root])]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(succ[nxt]))
    return None
