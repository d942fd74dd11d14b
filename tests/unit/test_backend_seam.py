"""The backend seam (stax.backends): the pipeline asks a `Backend` to plan, emit and build.

A fake backend that emits the loop-IR printer's text and builds nothing shows that scheduling,
planning and emission run through the interface without C++ or a compiler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

import stax
from stax.api import _as_array, trace
from stax.backends import (
    DEFAULT,
    Backend,
    FusionRules,
    KernelRegion,
    get_backend,
    region_params,
)
from stax.backends.cpu import CpuBackend
from stax.backends.cpu.cpp import HEADER
from stax.ir.printer import format_node
from stax.ir.program import Buffer, Node
from stax.lower import lower
from stax.ops import ELEMENTWISE
from stax.runtime.wrapper import build, emit_module
from stax.sched.scheduler import Schedule, schedule
from stax.tiling.plan import KernelPlan, plan_kernel


class LoopTextBackend(Backend):
    """Plans with the CPU planner, emits the loop IR of each region's kernels as text,
    builds nothing."""

    name = "loop-text"

    def __init__(self) -> None:
        self.planned: list[str] = []

    def fusion_rules(self) -> FusionRules:
        return FusionRules(max_nodes=4, max_buffers=8, opaque=frozenset({"extern"}))

    def plan(self, name: str, nodes: Sequence[Node], shared_depth: int, *, threads: int,
             vectorize: bool, local: Mapping[str, int], form: str | None) -> KernelPlan:
        self.planned.append(name)
        return plan_kernel(name, nodes, shared_depth, threads=threads, vectorize=vectorize,
                           local=local, form=form)

    def emit(self, regions: Sequence[KernelRegion], buffers: Mapping[str, Buffer],
             symbols: Sequence[str] = ()) -> str:
        out = []
        for region in regions:
            out.append(f"region {region.name}({', '.join(region_params(region.plans))})")
            out += [format_node(n) for plan in region.plans for n in plan.nodes]
        return "\n".join(out)

    def build(self, source: str, isa: str) -> None:
        raise AssertionError("the seam test builds nothing")


def scheduled(fn, *args) -> Schedule:
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    return schedule(lower(trace(fn, args).graph, strides).program)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_fake_backend_plans_and_emits_without_a_compiler() -> None:
    sched = scheduled(softmax, np.ones((4, 8), np.float32))
    backend = LoopTextBackend()
    module = emit_module(sched, backend, threads=1, vectorize=False)
    kernels = [g for g in sched.kernels if g.members[0].node.kind != "extern"]
    assert backend.planned == [f"kernel{k}" for k in range(len(kernels))]
    assert list(module.plan_of) == [g.name for g in kernels]
    lines = module.source.splitlines()
    assert lines[0].startswith("region region0(primals_1, ")
    # every node the scheduler kept is planned once, in kernel order (kernel-local buffers
    # indexed by the plan), and printed by the loop-IR printer
    plans = list(module.plan_of.values())
    assert [n.name for p in plans for n in p.nodes] == \
        [m.name for g in kernels for m in g.members]
    expected = [format_node(n) for p in plans for n in p.nodes]
    assert [line for line in lines if not line.startswith("region ")] == \
        [line for text in expected for line in text.splitlines()]
    assert "exp(" in module.source and "#include" not in module.source


def test_cpu_backend_emits_the_module_build_compiles() -> None:
    """The CPU backend's emit is the module the pipeline builds (the runtime header first)."""
    sched = scheduled(lambda a, b: np.sqrt(a * b).sum(0), np.ones((3, 5)), np.ones((3, 5)))
    module = emit_module(sched, get_backend("cpu"), threads=2, vectorize=True)
    assert module.source.startswith(HEADER)
    assert 'extern "C" void region0(' in module.source
    assert module.symbols == () and len(module.variants) == 1


def test_build_goes_through_the_backend() -> None:
    """`build` hands the emitted source to the backend's `build` (here: a refusal)."""
    class Refusing(LoopTextBackend):
        def build(self, source: str, isa: str) -> None:
            raise RuntimeError(f"asked to build {len(source.splitlines())} lines for {isa}")

    sched = scheduled(lambda a: a + 1.0, np.ones(4))
    with pytest.raises(RuntimeError, match="asked to build 3 lines for scalar"):
        build(sched, threads=1, isa="scalar", backend=Refusing())


def test_registry_and_the_jit_option() -> None:
    assert DEFAULT == "cpu" and isinstance(get_backend("cpu"), CpuBackend)
    assert get_backend("cpu") is get_backend("cpu")
    with pytest.raises(ValueError, match=r"unknown backend 'gpu' \(known: cpu\)"):
        get_backend("gpu")
    with pytest.raises(ValueError, match=r"unknown backend \[.cpu.\]"):
        stax.jit(lambda x: x, backend=["cpu"])
    with pytest.raises(ValueError, match="unknown backend .cuda."):
        stax.jit(lambda x: x, backend="cuda")
    assert stax.jit(lambda x: x).options["backend"] == "cpu"


def test_cpu_backend_answers_from_the_op_table_and_the_scheduler() -> None:
    cpu = get_backend("cpu")
    for op in ELEMENTWISE:
        assert cpu.recompute_cost(op.name) == op.cost
    rules = cpu.fusion_rules()  # the scheduler has no limits of its own (test_backend_costs)
    assert (rules.max_nodes, rules.max_buffers) == (128, 32)
    assert rules.opaque == {"scan", "extern"}
    with pytest.raises(KeyError):
        cpu.recompute_cost("not_an_op")


def test_region_params_first_occurrence_order() -> None:
    sched = scheduled(lambda a, b: (a + b, (a * b).sum()), np.ones(4), np.ones(4))
    module = emit_module(sched, LoopTextBackend(), threads=1, vectorize=False)
    plans = list(module.plan_of.values())
    params = region_params(plans)
    assert params == list(dict.fromkeys(p for plan in plans for p in plan.params()))
    assert {"primals_1", "primals_2"} <= set(params) and len(set(params)) == len(params)


def test_the_interface_is_abstract() -> None:
    with pytest.raises(TypeError):
        Backend()  # type: ignore[abstract]
