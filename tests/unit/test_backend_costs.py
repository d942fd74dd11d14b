"""Costs and limits come from the backend the pipeline was given (issue 16, helper S16).

Lowering asks `Backend.recompute_cost` which values with several consumers get a buffer, and
the scheduler applies `Backend.fusion_rules()`: a backend with other answers changes the
decisions, and the decision records name the rule. Compiler-free: the fake backends emit the
loop IR's text and refuse to build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pytest

from stax import api
from stax.backends import FACTORIES, Backend, FusionRules, KernelRegion, get_backend
from stax.backends.cpu.backend import CpuBackend
from stax.ir.expr import Call, walk
from stax.ir.program import Buffer
from stax.lower import Lowered, lower
from stax.ops.table import Cost
from stax.sched.fusion import FusionDecision
from stax.sched.scheduler import Schedule, schedule


class Emitted(Exception):
    """Raised by the fake backends' `build`: carries the kernels' output buffers."""


class Fake(CpuBackend):
    """The CPU backend's costs, rules and plans except where a test overrides them; emits the
    names of the buffers each kernel writes, builds nothing."""

    name = "fake"
    cheap: frozenset[str] = frozenset()
    max_nodes: int | None = None  # None: the CPU's

    def recompute_cost(self, op: str) -> Cost:
        return "cheap" if op in self.cheap else super().recompute_cost(op)

    def fusion_rules(self) -> FusionRules:
        rules = super().fusion_rules()
        return rules if self.max_nodes is None else replace(rules, max_nodes=self.max_nodes)

    def emit(self, regions: Sequence[KernelRegion], buffers: Mapping[str, Buffer],
             symbols: Sequence[str] = ()) -> str:
        return "\n".join(" ".join(n.out for n in plan.nodes)
                         for region in regions for plan in region.plans)

    def build(self, source: str, isa: str) -> None:
        raise Emitted(source)


class CheapExp(Fake):
    cheap = frozenset({"exp"})


class TwoNodes(Fake):
    max_nodes = 2


def exp_twice(x):
    e = np.exp(x)  # two consumers: materialized where exp is costly, recomputed where cheap
    return (e + 1.0) * (e - 1.0)


def normalized(x):
    s = x.sum(-1, keepdims=True)  # three nodes on one outer loop: one kernel on the CPU
    m = x.max(-1, keepdims=True)
    return (x - m) / s


X = np.linspace(0.5, 2.0, 32).reshape(4, 8)


def lowered(fn, backend: Backend) -> Lowered:
    return lower(api.trace(fn, (X,)).graph, [(8, 1)], backend.recompute_cost)


def scheduled(fn, backend: Backend) -> Schedule:
    return schedule(lowered(fn, backend).program, rules=backend.fusion_rules())


def test_a_backend_that_calls_exp_cheap_recomputes_it() -> None:
    cpu = lowered(exp_twice, get_backend("cpu"))
    assert [d.rule for d in cpu.decisions] == ["costly_recompute", "graph_output"]
    assert "exp is costly to recompute on this backend (transcendental)" in str(cpu.decisions[0])
    assert len(cpu.program.nodes) == 2  # exp's buffer, then the output reading it twice

    cheap = lowered(exp_twice, CheapExp())
    assert [d.rule for d in cheap.decisions] == ["graph_output"]
    (node,) = cheap.program.nodes
    # one kernel reads the input and evaluates exp inline (for both consumers)
    assert set(node.read_buffers()) == {"primals_1"}
    assert any(isinstance(e, Call) and e.fn == "exp" for e in walk(node.body))


def test_a_backend_with_two_nodes_per_kernel_splits_what_the_cpu_fuses() -> None:
    cpu = scheduled(normalized, get_backend("cpu"))
    assert len(cpu.nodes) == 3 and len(cpu.kernels) == 1
    assert cpu.rules == get_backend("cpu").fusion_rules()

    small = scheduled(normalized, TwoNodes())
    assert len(small.kernels) == 2 and max(len(k.members) for k in small.kernels) == 2
    refused = [r for r in small.fusion if isinstance(r, FusionDecision) and not r.accepted]
    assert {r.rule for r in refused} == {"max_nodes"}
    assert "more than 2 nodes in one kernel (the backend's limit)" in refused[0].reason
    assert small.rules.max_nodes == 2


def test_opaque_kinds_are_the_backends() -> None:
    def scan_then_add(x):
        return np.cumsum(x, axis=-1) + x

    cpu = scheduled(scan_then_add, get_backend("cpu"))
    assert any(isinstance(r, FusionDecision) and r.rule == "opaque_node" for r in cpu.fusion)

    class FusesScans(Fake):
        def fusion_rules(self) -> FusionRules:
            return replace(super().fusion_rules(), opaque=frozenset({"extern"}))

    other = scheduled(scan_then_add, FusesScans())
    assert not any(isinstance(r, FusionDecision) and r.rule == "opaque_node"
                   for r in other.fusion)


@pytest.mark.parametrize(("backend", "fn", "nodes_per_kernel"), [
    ("cpu-like", exp_twice, [2]),  # exp's buffer and the output, fused
    ("cheap-exp", exp_twice, [1]),
    ("cpu-like", normalized, [3]),
    ("two-nodes", normalized, [1, 2]),
])
def test_jit_lowers_and_schedules_with_the_chosen_backend(
        monkeypatch: pytest.MonkeyPatch, backend: str, fn, nodes_per_kernel: list[int]) -> None:
    """`stax.jit(..., backend=name)`'s pipeline (`api.compile_traced`) passes that backend's
    costs and limits to lowering and scheduling, not the CPU's."""
    factory = {"cpu-like": Fake, "cheap-exp": CheapExp, "two-nodes": TwoNodes}[backend]
    monkeypatch.setitem(FACTORIES, f"s16-{backend}", factory)
    options = dict(api.OPTIONS, backend=f"s16-{backend}", threads=1, isa="scalar")
    with pytest.raises(Emitted) as emitted:
        api.compile_traced(api.trace(fn, (X,)), [X], options)
    kernels = str(emitted.value).splitlines()
    assert sorted(len(k.split()) for k in kernels) == nodes_per_kernel
