"""The `torch.compile` backend: Dynamo's FX graph -> AOTAutograd -> core ATen -> Stax.

AOTAutograd traces forward and backward with PyTorch's core ATen decomposition table (flash
attention's pair replaced by `stax.torch.attention`'s); its
min-cut partitioner decides what the forward saves for the backward; each of the two graphs
(or the inference graph) becomes a `GraphRunner`.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import torch
import torch.fx as fx
from functorch.compile import min_cut_rematerialization_partition
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd

from stax.api import OPTIONS
from stax.torch.attention import DECOMPOSITIONS as ATTENTION
from stax.torch.graph import DTYPES, GraphRunner

_COUNTER = itertools.count()
# GraphRunners made while `stax.torch.explain` records (None: not recording).
RECORDING: list[GraphRunner] | None = None

# Options of stax.jit that make sense per graph (`strict` is the backend's own business).
JIT_OPTIONS = frozenset(OPTIONS) - {"strict"}


def unsupported_input(example_inputs: list[Any]) -> str | None:
    """Why this graph's inputs are tensors Stax does not run (None: it does)."""
    for i, t in enumerate(example_inputs):
        if not isinstance(t, torch.Tensor):
            continue
        if type(t) not in (torch.Tensor, torch.nn.Parameter) and \
                not isinstance(t, torch._subclasses.FakeTensor):
            return f"input {i} is a {type(t).__name__} (a tensor subclass)"
        if t.device.type != "cpu":
            return f"input {i} is on {t.device} (Stax compiles for the CPU)"
        if t.layout != torch.strided:
            return f"input {i} is a {t.layout} tensor (Stax needs dense strided tensors)"
        if t.is_quantized:
            return f"input {i} is quantized"
        if t.dtype not in DTYPES:
            return (f"input {i} has dtype {t.dtype}; Stax computes in "
                    f"{', '.join(map(str, DTYPES))}")
    return None


def backend(gm: fx.GraphModule, example_inputs: list[Any], options: dict[str, Any] | None = None,
            **kwargs: Any) -> Any:
    """`torch.compile(model, backend="stax")`, or `backend=stax.torch.backend` with options
    (`torch.compile(m, backend=stax.torch.backend, options={"isa": "avx2"})`) — the options
    of `stax.jit`: fuse, pool, isa, threads, form."""
    opts = {**(options or {}), **kwargs}
    unknown = set(opts) - JIT_OPTIONS
    if unknown:
        raise TypeError(f"stax.torch.backend: unknown option(s) {', '.join(sorted(unknown))} "
                        f"(known: {', '.join(sorted(JIT_OPTIONS))})")
    number = next(_COUNTER)
    why = unsupported_input(example_inputs)
    if why is not None:
        warnings.warn(f"stax.torch: graph {number} runs in eager PyTorch: {why}", stacklevel=2)
        return gm.forward

    def compiler(kind: str) -> Any:
        def compile_graph(aten_gm: fx.GraphModule, inputs: list[Any]) -> GraphRunner:
            runner = GraphRunner(aten_gm, f"graph {number} {kind}", opts,
                                 channels_last=kind == "inference")
            if RECORDING is not None:
                RECORDING.append(runner)
            return runner
        return compile_graph

    return aot_autograd(
        fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions={**core_aten_decompositions(), **ATTENTION},
        partition_fn=min_cut_rematerialization_partition)(gm, example_inputs)

