"""Tests of the exact fusion solver (seed §7.2, Definition 7.3 and Theorem 7.1)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stax.sched.exact import (
    MAX_EXACT_NODES,
    FBuffer,
    FusionProblem,
    check_partition,
    fusion_cost,
    multiway_cut_reduction,
    solve_exact,
)

# --------------------------------------------------------------------------------------------
# Helpers independent of the solver


def set_partitions(items: Sequence[str]) -> Iterator[list[frozenset[str]]]:
    """Every set partition of ``items`` (Bell(n) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [frozenset({first}), *part]
        for i, block in enumerate(part):
            yield [*part[:i], block | {first}, *part[i + 1 :]]


def brute_force_optimum(problem: FusionProblem) -> int:
    best = None
    for partition in set_partitions(problem.nodes):
        try:
            cost = fusion_cost(problem, partition)
        except ValueError:
            continue
        best = cost if best is None else min(best, cost)
    assert best is not None  # the unfused partition is always feasible
    return best


def assert_fusion_partition(problem: FusionProblem, partition: Sequence[frozenset[str]]) -> None:
    """Check Def. 7.3 directly: a partition, no forbidden pair inside a block, and the blocks in
    the returned order form a topological order of the quotient graph (hence it is acyclic)."""
    assert sorted(v for block in partition for v in block) == sorted(problem.nodes)
    position = {v: i for i, block in enumerate(partition) for v in block}
    for pair in problem.forbidden:
        u, v = pair
        assert position[u] != position[v]
    for buf in problem.buffers:
        if buf.producer is not None:
            for c in buf.consumers:
                assert position[buf.producer] <= position[c]


def min_multiway_cut(edges: Sequence[tuple[str, str, int]], terminals: tuple[str, ...]) -> int:
    """Brute force over labelings V -> {0, 1, 2} with terminal i labelled i: a multiway cut's
    components can always be merged into three groups, one per terminal, without raising its
    weight, so the minimum cut is the least weight of bichromatic edges over such labelings."""
    others = sorted({v for u, w, _ in edges for v in (u, w)} - set(terminals))
    best = None
    for labels in itertools.product(range(3), repeat=len(others)):
        label = dict(zip(others, labels, strict=True)) | {t: i for i, t in enumerate(terminals)}
        weight = sum(x for u, w, x in edges if label[u] != label[w])
        best = weight if best is None else min(best, weight)
    assert best is not None
    return best


def random_problem(rng: random.Random, n: int, *, n_forbidden: int) -> FusionProblem:
    """A random DAG on nodes v0..v{n-1} (edges only go forward), with random sizes, outputs,
    external inputs and forbidden pairs."""
    nodes = tuple(f"v{i}" for i in range(n))
    sizes = (0, 4, 16, 64, 256, 1024)
    buffers = []
    for i in range(2):
        consumers = tuple(v for v in nodes if rng.random() < 0.3)
        buffers.append(FBuffer(f"in{i}", None, consumers, rng.choice(sizes)))
    for i, v in enumerate(nodes):
        for j in range(rng.choice((0, 1, 1, 1, 2))):
            consumers = tuple(c for c in nodes[i + 1 :] if rng.random() < 0.35)
            is_output = rng.random() < 0.25
            buffers.append(FBuffer(f"b{i}_{j}", v, consumers, rng.choice(sizes), is_output))
    pairs = list(itertools.combinations(nodes, 2))
    forbidden = frozenset(frozenset(p) for p in rng.sample(pairs, min(n_forbidden, len(pairs))))
    return FusionProblem(nodes, tuple(buffers), forbidden)


# --------------------------------------------------------------------------------------------
# fusion_cost on hand-computed examples


def example_7_1() -> FusionProblem:
    """Seed Ex. 7.1, k(x) = x / x.sum(-1, keepdim=True) with x of shape 64x128 float32:
    x is 8192 * 4 = 32768 bytes, the row sums buf1 are 64 * 4 = 256 bytes, the output buf2
    32768 bytes."""
    return FusionProblem(
        nodes=("op0", "op1"),  # op0: row sum, op1: divide
        buffers=(
            FBuffer("primals_1", None, ("op0", "op1"), 32768),
            FBuffer("buf1", "op0", ("op1",), 256),
            FBuffer("buf2", "op1", (), 32768, is_output=True),
        ),
        forbidden=frozenset(),
    )


def test_example_7_1_unfused_cost() -> None:
    # Two kernels: op0 reads x (32768) and writes buf1 (256); op1 reads x (32768), reads buf1
    # (256) and writes buf2 (32768): 32768 + 256 + 32768 + 256 + 32768 = 98816.
    assert fusion_cost(example_7_1(), [{"op0"}, {"op1"}]) == 98816


def test_example_7_1_fused_cost_and_optimum() -> None:
    # One kernel: x is read once (32768), buf1 never leaves the kernel, buf2 is written (32768).
    problem = example_7_1()
    assert fusion_cost(problem, [{"op0", "op1"}]) == 65536
    result = solve_exact(problem)
    assert result.partition == (frozenset({"op0", "op1"}),)
    assert (result.cost, result.optimal, result.lower_bound) == (65536, True, 65536)
    assert result.solver_status == "Optimal"


def test_example_7_1_forbidden_keeps_kernels_apart() -> None:
    problem = example_7_1()
    problem = FusionProblem(problem.nodes, problem.buffers, frozenset({frozenset({"op0", "op1"})}))
    result = solve_exact(problem)
    assert result.partition == (frozenset({"op0"}), frozenset({"op1"}))
    assert result.cost == 98816 and result.optimal


def test_cost_counts_each_reading_block_once_and_writes_once() -> None:
    # Blocks {a}, {b, c}, {d}. a writes t (100 bytes) read by b, c (one block) and d (another):
    # written once and read once per foreign block, 100 + 2 * 100. The output u of a (1 byte)
    # is read by b: written once and read once, 1 + 1. The output o of d (10 bytes) is written
    # although nothing reads it. The external input i (7 bytes) is read by the blocks of a and
    # d: 2 * 7. Total 300 + 2 + 10 + 14 = 326.
    problem = FusionProblem(
        nodes=("a", "b", "c", "d"),
        buffers=(
            FBuffer("i", None, ("a", "d"), 7),
            FBuffer("t", "a", ("b", "c", "d"), 100),
            FBuffer("u", "a", ("b",), 1, is_output=True),
            FBuffer("o", "d", (), 10, is_output=True),
        ),
    )
    assert fusion_cost(problem, [{"a"}, {"b", "c"}, {"d"}]) == 300 + 2 + 10 + 14
    # Fusing a with b and c: t is still written (d reads it) and read once by d's block, 200;
    # u is only read inside its block but, an output, still written once: 1. With o and i,
    # 200 + 1 + 10 + 14 = 225.
    assert fusion_cost(problem, [{"a", "b", "c"}, {"d"}]) == 225
    # Everything fused: only i read once and the two outputs written: 7 + 1 + 10.
    assert fusion_cost(problem, [{"a", "b", "c", "d"}]) == 18
    assert solve_exact(problem).cost == 18


def test_unused_buffer_costs_nothing() -> None:
    problem = FusionProblem(("a",), (FBuffer("dead", "a", (), 1000),))
    assert fusion_cost(problem, [{"a"}]) == 0


# --------------------------------------------------------------------------------------------
# Errors


def diamond() -> FusionProblem:
    """a -> b -> d, a -> c -> d."""
    return FusionProblem(
        nodes=("a", "b", "c", "d"),
        buffers=(
            FBuffer("ta", "a", ("b", "c"), 8),
            FBuffer("tb", "b", ("d",), 8),
            FBuffer("tc", "c", ("d",), 8),
        ),
        forbidden=frozenset({frozenset({"b", "c"})}),
    )


@pytest.mark.parametrize(
    ("partition", "message"),
    [
        ([{"a", "b"}, {"c"}], "not a partition: node 'd' is in no block"),
        ([{"a", "b"}, {"b", "c", "d"}], "not a partition: node 'b' is in blocks 0 and 1"),
        ([{"a", "b", "c", "d", "e"}], "not a partition: unknown node 'e' in block 0"),
        ([{"a", "b", "c", "d"}, set()], "not a partition: block 1 is empty"),
        (
            [{"a"}, {"b", "c"}, {"d"}],
            "forbidden pair in a block: 'b' and 'c' share block 1 {b, c}",
        ),
        ([{"a", "d"}, {"b"}, {"c"}], "cyclic quotient graph: {a, d} -> {b} -> {a, d}"),
    ],
)
def test_check_partition_names_the_violation(partition: list[set[str]], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message.replace('{', '[{]')}$"):
        check_partition(diamond(), partition)
    with pytest.raises(ValueError):
        fusion_cost(diamond(), partition)


def test_cycle_through_incomparable_nodes_is_named_and_avoided() -> None:
    # a -> b (s, 1 byte) and c -> d (t, 1 byte), with {a, b} and {c, d} forbidden, so s and t
    # always cost 2 each. The inputs i (10 bytes, read by a and d) and j (9 bytes, read by b
    # and c) reward fusing {a, d} and {b, c}: each pair is fusible (incomparable nodes), but
    # together they make the quotient cyclic; fusion_cost's formula would give 10 + 9 + 4 = 23.
    # The best acyclic choice fuses only {a, d}: 10 + 2 * 9 + 4 = 32 ({b, c} alone: 33).
    problem = FusionProblem(
        nodes=("a", "b", "c", "d"),
        buffers=(
            FBuffer("s", "a", ("b",), 1),
            FBuffer("t", "c", ("d",), 1),
            FBuffer("i", None, ("a", "d"), 10),
            FBuffer("j", None, ("b", "c"), 9),
        ),
        forbidden=frozenset({frozenset({"a", "b"}), frozenset({"c", "d"})}),
    )
    with pytest.raises(ValueError, match=r"cyclic quotient graph: {a, d} -> {b, c} -> {a, d}$"):
        check_partition(problem, [{"a", "d"}, {"b", "c"}])
    assert fusion_cost(problem, [{"a"}, {"b", "c"}, {"d"}]) == 33
    result = solve_exact(problem)
    # Blocks in execution order: c feeds d in {a, d}, which feeds b.
    assert result.partition == (frozenset({"c"}), frozenset({"a", "d"}), frozenset({"b"}))
    assert result.cost == 32 == brute_force_optimum(problem)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: FusionProblem(("a", "a"), ()), "node names must be unique"),
        (
            lambda: FusionProblem(("a",), (FBuffer("t", "a", (), 1), FBuffer("t", "a", (), 1))),
            "buffer names must be unique",
        ),
        (lambda: FusionProblem(("a",), (FBuffer("t", "z", (), 1),)), "unknown node 'z'"),
        (lambda: FusionProblem(("a",), (FBuffer("t", None, ("z",), 1),)), "unknown node 'z'"),
        (
            lambda: FusionProblem(("a",), (), frozenset({frozenset({"a"})})),
            "not a pair of two distinct known nodes",
        ),
        (
            lambda: FusionProblem(
                ("a", "b"), (FBuffer("s", "a", ("b",), 1), FBuffer("t", "b", ("a",), 1))
            ),
            "dependence graph is cyclic: a -> b -> a",
        ),
        (lambda: FBuffer("t", "a", ("a",), 1), "producer 'a' also consumes it"),
        (lambda: FBuffer("t", "a", ("b", "b"), 1), "consumers must be distinct"),
        (lambda: FBuffer("t", "a", (), -1), "nbytes must be a non-negative int"),
        (lambda: FBuffer("t", None, (), 1, is_output=True), "external input cannot be a graph"),
        (lambda: multiway_cut_reduction([], ("s", "s", "t")), "three distinct terminals"),
        (lambda: multiway_cut_reduction([("a", "a", 1)], ("s", "t", "u")), "self-loop"),
        (lambda: multiway_cut_reduction([("a", "s", -1)], ("s", "t", "u")), "non-negative int"),
    ],
)
def test_invalid_inputs_are_rejected(build: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_solve_exact_refuses_large_problems() -> None:
    nodes = tuple(f"v{i}" for i in range(MAX_EXACT_NODES + 1))
    with pytest.raises(ValueError, match="at most 40 nodes, got 41; use the greedy scheduler"):
        solve_exact(FusionProblem(nodes, ()))


@pytest.mark.parametrize("limit", [0.0, -1.0, float("nan"), float("inf")])
def test_solve_exact_rejects_bad_time_limits(limit: float) -> None:
    with pytest.raises(ValueError, match="time_limit must be a positive number"):
        solve_exact(example_7_1(), time_limit=limit)


def test_solve_exact_rejects_an_invalid_initial_partition() -> None:
    with pytest.raises(ValueError, match="forbidden pair in a block"):
        solve_exact(diamond(), initial=[{"a", "b", "c", "d"}])


# --------------------------------------------------------------------------------------------
# Solver against brute force


def test_empty_problem() -> None:
    result = solve_exact(FusionProblem((), (FBuffer("in", None, (), 5),)))
    assert (result.partition, result.cost, result.optimal) == ((), 0, True)


def test_diamond_optimum() -> None:
    # b and c cannot share a block; the best is {a, b, d} + {c} (or symmetric): tc and ta cross
    # blocks, each written once and read once: 4 * 8 = 32.
    result = solve_exact(diamond())
    assert result.cost == brute_force_optimum(diamond()) == 32
    assert_fusion_partition(diamond(), result.partition)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 7),
    n_forbidden=st.integers(0, 6),
)
def test_solve_exact_matches_brute_force(seed: int, n: int, n_forbidden: int) -> None:
    problem = random_problem(random.Random(seed), n, n_forbidden=n_forbidden)
    result = solve_exact(problem)
    assert result.optimal and result.solver_status == "Optimal"
    assert result.cost == result.lower_bound == brute_force_optimum(problem)
    assert result.cost == fusion_cost(problem, result.partition)
    assert_fusion_partition(problem, result.partition)


def test_initial_partition_is_a_valid_start() -> None:
    problem = random_problem(random.Random(7), 7, n_forbidden=3)
    unfused = [frozenset({v}) for v in reversed(problem.nodes)]
    result = solve_exact(problem, initial=unfused)
    assert result.optimal and result.cost == brute_force_optimum(problem)


def test_time_limit_returns_a_feasible_partition() -> None:
    problem = random_problem(random.Random(1), MAX_EXACT_NODES, n_forbidden=60)
    result = solve_exact(problem, time_limit=0.05)
    assert not result.optimal and result.solver_status == "Time limit reached"
    assert_fusion_partition(problem, result.partition)
    assert result.lower_bound <= result.cost == fusion_cost(problem, result.partition)
    assert result.cost <= fusion_cost(problem, [{v} for v in problem.nodes])


# --------------------------------------------------------------------------------------------
# Theorem 7.1: optimum fusion cost = 2 x minimum 3-terminal multiway cut

MULTIWAY_CUT_GRAPHS: list[tuple[list[tuple[str, str, int]], tuple[str, str, str]]] = [
    # A triangle of terminals: every edge must be cut, weight 1 + 2 + 3.
    ([("s1", "s2", 1), ("s2", "s3", 2), ("s1", "s3", 3)], ("s1", "s2", "s3")),
    # A star: the centre joins the heaviest terminal; cut the two lighter edges, 2 + 3.
    ([("c", "s1", 5), ("c", "s2", 2), ("c", "s3", 3)], ("s1", "s2", "s3")),
    # A path s1 - a - b - s2 with s3 hanging off b, and parallel edges.
    (
        [("s1", "a", 4), ("a", "b", 1), ("a", "b", 1), ("b", "s2", 5), ("b", "s3", 3)],
        ("s1", "s2", "s3"),
    ),
    # A 3x3 grid with terminals in three corners.
    (
        [
            ("g00", "g01", 3), ("g01", "g02", 1), ("g10", "g11", 2), ("g11", "g12", 4),
            ("g20", "g21", 1), ("g21", "g22", 2), ("g00", "g10", 2), ("g10", "g20", 3),
            ("g01", "g11", 1), ("g11", "g21", 5), ("g02", "g12", 2), ("g12", "g22", 1),
        ],
        ("g00", "g02", "g20"),
    ),
]  # fmt: skip


def random_graph(seed: int) -> tuple[list[tuple[str, str, int]], tuple[str, str, str]]:
    rng = random.Random(seed)
    vertices = [f"v{i}" for i in range(rng.randint(4, 7))]
    pairs = list(itertools.combinations(vertices, 2))
    edges = [(u, w, rng.randint(0, 6)) for u, w in rng.sample(pairs, rng.randint(4, 9))]
    terminals = rng.sample(vertices, 3)
    return edges, (terminals[0], terminals[1], terminals[2])


@pytest.mark.parametrize(
    ("edges", "terminals"),
    MULTIWAY_CUT_GRAPHS + [random_graph(seed) for seed in range(6)],
)
def test_theorem_7_1_optimum_is_twice_the_min_cut(
    edges: list[tuple[str, str, int]], terminals: tuple[str, str, str]
) -> None:
    problem = multiway_cut_reduction(edges, terminals)
    result = solve_exact(problem)
    assert result.optimal
    assert result.cost == 2 * min_multiway_cut(edges, terminals)
    assert_fusion_partition(problem, result.partition)


def test_theorem_7_1_reduction_structure() -> None:
    edges, terminals = MULTIWAY_CUT_GRAPHS[2]
    problem = multiway_cut_reduction(edges, terminals)
    assert problem.nodes == (
        *(f"x:{i}" for i in range(5)),
        *(f"n:{v}" for v in ("s1", "s2", "s3", "a", "b")),
    )
    assert problem.forbidden == {
        frozenset({"n:s1", "n:s2"}),
        frozenset({"n:s1", "n:s3"}),
        frozenset({"n:s2", "n:s3"}),
    }
    # Every edge goes from a source x_e to a sink n_v.
    assert all(u.startswith("x:") and v.startswith("n:") for u, v in problem.edges())
    assert FBuffer("e:1", "x:1", ("n:a", "n:b"), 1) in problem.buffers
    assert FBuffer("out:b", "n:b", (), 0, is_output=True) in problem.buffers


@pytest.mark.parametrize(("edges", "terminals"), MULTIWAY_CUT_GRAPHS)
def test_theorem_7_1_upper_bound_construction(
    edges: list[tuple[str, str, int]], terminals: tuple[str, str, str]
) -> None:
    # The (<=) half of the proof, without the solver: from the best labeling, block j holds the
    # sinks labelled j and the sources whose endpoints' smaller label is j; its cost is exactly
    # 2 * the weight of the bichromatic edges.
    others = sorted({v for u, w, _ in edges for v in (u, w)} - set(terminals))
    best_cost, best_weight = None, None
    for labels in itertools.product(range(3), repeat=len(others)):
        label = dict(zip(others, labels, strict=True)) | {t: i for i, t in enumerate(terminals)}
        blocks: list[set[str]] = [set(), set(), set()]
        for v, j in label.items():
            blocks[j].add(f"n:{v}")
        for i, (u, w, _) in enumerate(edges):
            blocks[min(label[u], label[w])].add(f"x:{i}")
        cost = fusion_cost(multiway_cut_reduction(edges, terminals), blocks)
        weight = sum(x for u, w, x in edges if label[u] != label[w])
        assert cost == 2 * weight
        best_cost = cost if best_cost is None else min(best_cost, cost)
        best_weight = weight if best_weight is None else min(best_weight, weight)
    assert best_cost == 2 * best_weight == 2 * min_multiway_cut(edges, terminals)
