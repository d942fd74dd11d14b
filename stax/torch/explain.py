"""`stax.torch.explain(model, *inputs)`: each graph Stax received, its segments, fusion log,
kernels and the ops that ran in eager PyTorch."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

import stax.torch.dynamo as backend_module
from stax.explain import Report
from stax.torch.graph import GraphRunner, Step


@dataclass(frozen=True)
class SegmentReport:
    step: Step
    reports: tuple[Report, ...]  # one per compiled specialization

    def __str__(self) -> str:
        names = ", ".join(n.name for n in self.step.nodes)
        head = (f"Stax segment of {len(self.step.nodes)} node(s): {names}\n"
                f"  reads {', '.join(n.name for n in self.step.inputs) or 'nothing'}; "
                f"hands on {', '.join(n.name for n in self.step.outputs) or 'nothing'}")
        body = []
        for r in self.reports:
            body.append("  fusion log:\n" + "\n".join(f"    {line}" for line in r.fusion_log))
            body.append(f"  {len(r.kernels)} kernel(s): {', '.join(r.kernels)}")
        return "\n".join([head, *body])


@dataclass(frozen=True)
class GraphReport:
    name: str
    code: str  # the ATen graph as Python
    steps: tuple[Step, ...]
    segments: tuple[SegmentReport, ...]
    fallbacks: tuple[tuple[str, str, str], ...]  # node, op, reason

    @property
    def kernels(self) -> tuple[str, ...]:
        return tuple(k for s in self.segments for r in s.reports for k in r.kernels)

    def __str__(self) -> str:
        plan = "\n".join(
            f"  {s.kind:6} {', '.join(n.name for n in s.nodes)}" for s in self.steps)
        falls = "\n".join(f"  {n} ({op}): {why}" for n, op, why in self.fallbacks) or "  none"
        return "\n".join([
            f"==== {self.name} ====", "ATen graph:", self.code.strip(), "",
            "Plan (stax: one compiled segment; eager: PyTorch op; view: PyTorch view; "
            "python: SymInt arithmetic):", plan, "",
            "Fallbacks to eager PyTorch:", falls, "",
            *map(str, self.segments)])


@dataclass(frozen=True)
class TorchReport:
    graphs: tuple[GraphReport, ...]
    eager_graphs: tuple[str, ...]  # whole graphs Stax refused (warnings), as messages

    @property
    def fallbacks(self) -> tuple[tuple[str, str, str], ...]:
        return tuple(f for g in self.graphs for f in g.fallbacks)

    def __str__(self) -> str:
        eager = [f"Graph run by eager PyTorch: {m}" for m in self.eager_graphs]
        return "\n\n".join([*eager, *map(str, self.graphs)]) or "no graphs were compiled"


def graph_report(runner: GraphRunner) -> GraphReport:
    segments = []
    for step in runner.steps:
        if step.kind != "stax":
            continue
        seg = runner.segments.get(step.nodes)
        comps = [c for j in (seg.jitted.values() if seg else ()) for c in j.cache.values()]
        segments.append(SegmentReport(step, tuple(Report(c, None, None) for c in comps)))
    return GraphReport(
        runner.name, runner.gm.code, tuple(runner.steps), tuple(segments),
        tuple((n.name, str(n.target), why) for n, why in runner.fallbacks.items()))


def explain(model: torch.nn.Module | Callable[..., Any], *inputs: Any, backward: bool = False,
            **options: Any) -> TorchReport:
    """Compile `model` with Stax, run it once on `inputs` (and, with `backward=True`, its
    backward through `torch.autograd.grad`, so no `.grad` changes) and report every graph."""
    recorded: list[GraphRunner] = []
    previous, backend_module.RECORDING = backend_module.RECORDING, recorded
    try:
        compiled = torch.compile(model, backend=functools.partial(
            backend_module.backend, **options))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if backward:
                out = compiled(*inputs)
                outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                        if isinstance(o, torch.Tensor) and o.requires_grad]
                wrt = [t for t in [*inputs, *_parameters(model)]
                       if isinstance(t, torch.Tensor) and t.requires_grad]
                if outs and wrt:
                    torch.autograd.grad(outs, wrt, [torch.ones_like(o) for o in outs],
                                        allow_unused=True)
            else:
                with torch.no_grad():
                    compiled(*inputs)
    finally:
        backend_module.RECORDING = previous
    eager = tuple(str(w.message) for w in caught if "runs in eager PyTorch" in str(w.message))
    return TorchReport(tuple(graph_report(r) for r in recorded), eager)


def _parameters(model: Any) -> list[torch.Tensor]:
    return list(model.parameters()) if isinstance(model, torch.nn.Module) else []
