"""Decisions as records with a rule name (compiler-free): materialization, fusion, planning and
memory; the text `stax.explain` prints is rendered from them."""

from __future__ import annotations

import numpy as np

from stax.api import _as_array, trace
from stax.lower import STREAMED_ROW_BYTES, lower
from stax.sched.fusion import FusionDecision, FusionRound, log_lines
from stax.sched.scheduler import schedule
from stax.tiling.plan import plan_kernel


def lowered(fn, *args):
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    return lower(trace(fn, args).graph, strides)


X = np.linspace(0, 1, 64 * 128, dtype=np.float32).reshape(64, 128)


def rules(fn, *args) -> list[tuple[str, str]]:
    return [(d.rule, d.value) for d in lowered(fn, *args).decisions]


def test_materialization_rules() -> None:
    def costly(x):
        e = np.exp(x)  # two readers and costly to recompute: a buffer of its own
        return e + e.sum(-1, keepdims=True)

    got = rules(costly, X)
    assert got[0][0] == "costly_recompute" and ("reduction_result", got[1][1]) in got
    assert got[-1][0] == "graph_output"

    def long_chain(x):
        y = x
        for _ in [0] * 30:  # a list: unrolled (a range loop compiles once per body, H)
            y = y * 1.5 + 0.25  # cheap, but too many ops to inline twice
        return y + y.T

    assert "inline_op_limit" in [r for r, _ in rules(long_chain, X[:, :64])]
    kinds = {r for r, _ in rules(lambda a, b: (np.cumsum(a, 0), (a + 1) @ b), X, X.T)}
    assert {"scan_result", "extern_input", "extern_result"} <= kinds


def test_row_invariant_and_streamed_values_are_recomputed() -> None:
    """[GEN] x - mean has a division, but per row (computed once before the row's loop): it is
    inlined into both consumers, not stored. exp(x - max) over rows longer than
    STREAMED_ROW_BYTES is recomputed by both consumers (rule streamed_row_recompute); over
    rows that stay in cache it keeps its buffer (costly_recompute)."""
    def layernorm(x):
        centered = x - x.mean(-1, keepdims=True)
        return centered / np.sqrt((centered * centered).mean(-1, keepdims=True) + 1e-5)

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    assert [r for r, _ in rules(layernorm, X)] == ["reduction_result"] * 2 + ["graph_output"]
    assert "costly_recompute" in [r for r, _ in rules(softmax, X)]
    long_row = np.ones((1, STREAMED_ROW_BYTES // 4 + 1), np.float32)
    for x in (long_row, long_row.reshape(-1, 1), long_row.astype(np.float64)[:, ::2]):
        decisions = lowered(softmax, x).decisions
        assert [d.rule for d in decisions].count("streamed_row_recompute") == 1, x.shape
        assert "costly_recompute" not in [d.rule for d in decisions]
    assert "costly_recompute" in [r for r, _ in rules(softmax, long_row[:, :1000])]
    def exp_and_stats(x):
        e = np.exp(x)
        return e, e.sum(), e.max()

    # a result: its buffer is written anyway
    assert [r for r, _ in rules(exp_and_stats, long_row)][:1] == ["costly_recompute"]


def test_materialization_text_is_rendered_from_the_record() -> None:
    d = lowered(lambda x: x.sum(0) * 2, X).decisions[0]
    assert str(d) == f"{d.value} -> {d.buffer}: {d.reason}"


def test_fusion_records_render_the_log() -> None:
    def ex72(x):
        e = np.exp(x)
        return e.sum(-1), e.max(-1)

    sched = schedule(lowered(ex72, X).program)
    assert log_lines(sched.fusion) == sched.log
    refused = {(r.first, r.second): r.rule for r in sched.fusion
               if isinstance(r, FusionDecision) and not r.accepted}
    assert refused[("op0", "op1")] == refused[("op0", "op2")] == "no_shared_outer_loop"
    accepted = [r for r in sched.fusion if isinstance(r, FusionDecision) and r.accepted]
    assert [(r.first, r.second, r.rule) for r in accepted] == [("op1", "op2", "same_vars_reduce")]
    assert accepted[0].score is not None and accepted[0].score.sigma > 0
    assert [r for r in sched.fusion if isinstance(r, FusionRound)][-1].candidates == 0


def test_fusion_refusal_rules() -> None:
    def reversed_rows(x):
        s = x.sum(-1)
        return s[::-1] - s  # reads s[63 - i]: a nonzero distance on the shared loop

    sched = schedule(lowered(reversed_rows, X).program)
    assert "dependence_distance" in {r.rule for r in sched.fusion
                                     if isinstance(r, FusionDecision) and not r.accepted}

    def scan_then_map(x):
        return np.cumsum(x, 1) * 2

    sched = schedule(lowered(scan_then_map, X).program)
    assert {r.rule for r in sched.fusion if isinstance(r, FusionDecision)} == {"opaque_node"}


def test_plan_rules() -> None:
    # a transpose plus a C-ordered operand: a C-ordered result [LAYOUT], tiled
    program = lowered(lambda x, y: x.T + y, X, np.ascontiguousarray(X.T)).program
    (node,) = program.nodes
    plan = plan_kernel("kernel0", [node], len(node.ranges), threads=4, vectorize=True)
    by_rule = {d.rule: d for d in plan.decisions}
    assert by_rule["form"].value == "tiled" == plan.form
    assert by_rule["parallel_depth"].value == plan.parallel_depth
    assert plan.notes == tuple(d.text for d in plan.decisions)
    scalar = plan_kernel("kernel0", [node], len(node.ranges), threads=4, vectorize=False)
    assert {d.value for d in scalar.decisions if d.rule == "form"} == {"scalar"}


def test_memory_rules() -> None:
    def in_place(x):
        c = np.cumsum(x, 1)
        d = np.exp(c)  # a single pointwise kernel reading c for the last time
        return np.cumsum(d, 1) + np.cumsum(d, 0)

    memory = schedule(lowered(in_place, X).program).memory
    assert memory.inplace and {r.rule for r in memory.inplace} == {"in_place"}
    assert all(r.rule == "reuse_freed" for r in memory.reuses)
    assert memory.rule in ("keep_original", "least_peak")
