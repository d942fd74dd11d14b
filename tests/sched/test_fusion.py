"""Seed 000 §7.1–§7.4 examples, exactly, and properties of greedy fusion."""

from __future__ import annotations

import numpy as np
import pytest

import stax
from stax.sched.fusion import FusionDecision, FusionRound, Score, compare, compatible
from stax.tiling.plan import parallel_depth


def ex71(x):
    return x / x.sum(-1, keepdims=True)


def ex72(x):
    e = np.exp(x)
    return e.sum(-1), e.max(-1)


X = np.random.default_rng(0).uniform(0.5, 1.5, (64, 128)).astype(np.float32)


def test_ex71_dependences_match_the_seed() -> None:
    report = stax.explain(ex71, X)
    op0, op1 = report.nodes
    assert op0.describe().splitlines()[1:] == [
        "op0.writes = [MemoryDep('buf1', c0, {c0: 64})]",
        "op0.met_dependencies = [MemoryDep('primals_1', c0, {c0: 8192})]",
        "op0.group.iteration = ((64,), (128,))",
    ]
    assert op1.describe().splitlines()[1:] == [
        "op1.writes = [MemoryDep('buf2', c0, {c0: 8192})]",
        "op1.unmet_dependencies = [MemoryDep('buf1', c0, {c0: 64})]",
        "op1.met_dependencies = [MemoryDep('primals_1', c0, {c0: 8192})]",
        "op1.group.iteration = ((64, 128), ())",
    ]


def test_ex71_fusion_log_and_score() -> None:
    report = stax.explain(ex71, X)
    log = report.fusion_log
    assert "round 1: found 1 possible fusions" in log
    fusing = [line for line in log if line.startswith("fusing")]
    assert fusing[0].startswith("fusing op0 with op1")
    # shared-data score 33024 = 32768 (primals_1, 8192 floats) + 256 (buf1, 64 floats)
    assert "σ=33024" in fusing[0]
    assert "op0_op1: OuterLoopFusedSchedulerNode(SchedulerNode,SchedulerNode)" in log
    (kernel,) = report.schedule.kernels
    assert kernel.depth == 1  # outer-loop fusion depth 1
    # x is read from memory once: one kernel, its row loop holds both inner loops
    assert report.code.count("extern \"C\" void") == 1
    assert report.code.count("for (int64_t x0 = 0; x0 < 64;") == 1
    np.testing.assert_allclose(stax.jit(ex71)(X), ex71(X), rtol=1e-6)


def test_ex72_fusion_rounds_match_the_seed() -> None:
    report = stax.explain(ex72, X)
    decisions = [(r.round, r.first, r.second, r.accepted, r.rule)
                 for r in report.schedule.fusion if isinstance(r, FusionDecision)]
    assert decisions == [(1, "op0", "op1", False, "no_shared_outer_loop"),
                         (1, "op0", "op2", False, "no_shared_outer_loop"),
                         (1, "op1", "op2", True, "same_vars_reduce"),
                         (2, "op0", "op1_op2", False, "no_shared_outer_loop")]
    rounds = [r for r in report.schedule.fusion if isinstance(r, FusionRound)]
    assert rounds == [FusionRound(1, 1), FusionRound(2, 0)]
    assert report.kernels == ("op0", "op1_op2")
    groups = [n.group for n in report.nodes]
    assert groups == [((8192,), ()), ((64,), (128,)), ((64,), (128,))]
    # the row loop keeps two accumulators in one loop of one C++ function
    kernel1 = report.code[report.code.index("kernel1"):]
    assert kernel1.count("for (int64_t r0") == 1
    assert "acc_op1 = acc_op1 +" in kernel1 and "acc_op2 = (" in kernel1
    s, m = stax.jit(ex72)(X)
    np.testing.assert_allclose(s, np.exp(X).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(m, np.exp(X).max(-1), rtol=1e-6)  # libmvec exp: 4 ulp


def test_nonzero_dependence_distance_is_not_fused() -> None:
    def shifted(x):
        s = x.sum(-1)  # 64 row sums
        return s[1:] - s[:-1]  # reads s[i+1]: distance 1 on the shared loop

    report = stax.explain(shifted, X)
    assert len(report.kernels) == 2
    # differences of two ~64-element float32 sums: absolute error relative to the sums
    np.testing.assert_allclose(stax.jit(shifted)(X), shifted(X), atol=1e-4)


def test_column_broadcast_of_a_row_reduction_is_not_outer_fused() -> None:
    """x / s[None, :] with s the row sums of a square x reads every row sum in each row."""
    def colnorm(x):
        s = x.sum(1)
        return x / s[None, :]

    sq = X[:, :64].copy()
    report = stax.explain(colnorm, sq)
    assert len(report.kernels) == 2
    np.testing.assert_allclose(stax.jit(colnorm)(sq), colnorm(sq), rtol=1e-6)


def test_definition_7_2_cases() -> None:
    from stax.ir.program import Node

    red = Node("a", "reduction", "b", (64,), (128,))
    assert compatible(red, Node("b", "reduction", "c", (64,), (128,)))
    assert not compatible(red, Node("b", "reduction", "c", (64,), (64,)))
    assert compatible(Node("p", "pointwise", "c", (8192,)), Node("q", "pointwise", "d", (64, 128)))
    assert compatible(red, Node("p", "pointwise", "c", (64,)))  # N = n
    assert compatible(red, Node("p", "pointwise", "c", (64, 128)))  # N = n r
    assert not compatible(red, Node("p", "pointwise", "c", (100,)))


def test_score_16x_rule() -> None:
    a = Score(tau=1, sigma=100, omega=1, delta=1)
    b = Score(tau=0, sigma=2000, omega=1, delta=1)  # 20x more bytes: σ alone decides
    assert compare(b, a) > 0
    c = Score(tau=0, sigma=1000, omega=3, delta=1)  # within 16x: τ decides first
    assert compare(a, c) > 0


@pytest.mark.parametrize(("ranges", "threads", "depth"), [
    ((64, 128), 4, 1),  # seed: 8192 / 4 = 2048 >= 512, par = 64 >= 2P: depth 1
    ((1024,), 4, 0),  # seed: 1024 / 4 = 256 < 512: serial
    ((2, 4096), 4, 2),
    ((4, 4096), 4, 1),  # par = P stops
])
def test_algorithm_8_1(ranges, threads, depth) -> None:
    assert parallel_depth(ranges, threads) == depth
