"""Random programs through the scheduler: fused == unfused == NumPy, acyclic quotient, memory
order never worse than the original, greedy never better than the exact optimum, and the fused
order proven by the polyhedral layer."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax
from stax.explain import optimality_gap

R, C = 8, 16

UNARY = {"exp": lambda a: np.exp(a * 0.1), "neg": lambda a: -a, "sq": lambda a: a * a,
         "tanh": np.tanh}
BINARY = {"add": np.add, "mul": np.multiply, "sub": np.subtract, "max": np.maximum}
REDUCE = {"sum": lambda a: a.sum(-1, keepdims=True), "max": lambda a: a.max(-1, keepdims=True),
          "mean": lambda a: a.mean(-1, keepdims=True), "colsum": lambda a: a.sum(0)}


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[tuple[str, str, int, int]], int]:
    steps = []
    n = draw(st.integers(2, 7))
    for k in range(n):
        kind = draw(st.sampled_from(["unary", "binary", "reduce"]))
        table = {"unary": UNARY, "binary": BINARY, "reduce": REDUCE}[kind]
        name = draw(st.sampled_from(sorted(table)))
        a = draw(st.integers(0, k + 1))
        b = draw(st.integers(0, k + 1))
        steps.append((kind, name, a, b))
    n_out = draw(st.integers(1, 2))
    return steps, n_out


def build(steps: list[tuple[str, str, int, int]], n_out: int) -> Callable[..., tuple]:
    def fn(x, y):
        values = [x, y]
        for kind, name, a, b in steps:
            if kind == "unary":
                values.append(UNARY[name](values[a]))
            elif kind == "binary":
                values.append(BINARY[name](values[a], values[b]))
            else:
                values.append(REDUCE[name](values[a]))
        return tuple(values[-n_out:])
    return fn


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31 - 1))
def test_random_programs_schedule_correctly(program, seed) -> None:
    steps, n_out = program
    fn = build(steps, n_out)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((R, C))
    y = rng.standard_normal((R, C))
    try:
        want = fn(x, y)
    except Exception as e:  # an invalid random program: Stax must refuse it the same way
        with pytest.raises(type(e)):
            stax.jit(fn)(x, y)
        return
    for fuse in (True, False):
        got = stax.jit(fn, fuse=fuse)(x, y)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
    report = stax.explain(fn, x, y)
    schedule = report.schedule
    # the kernel order is a topological order of the quotient graph
    produced: set[str] = set()
    for g in schedule.kernels:
        outs = {m.node.out for m in g.members}
        for m in g.members:
            for buf in m.node.read_buffers():
                owner = {n.node.out for n in schedule.nodes}
                assert buf not in owner or buf in produced or buf in outs
        produced |= outs
    memory = schedule.memory
    assert memory.peak_bytes <= memory.candidates["original"]
    gap = optimality_gap(schedule, time_limit=5.0)
    if gap is not None and gap.optimal:
        assert gap.greedy_cost >= gap.optimal_cost
    verdict = stax.explain(fn, x, y, verify=True).verification
    assert getattr(verdict, "legal", True), str(verdict)
