"""PyTorch models compiled by Stax: `torch.compile(model, backend="stax")`.

`backend` is registered under the `torch_dynamo_backends` entry point, so the name "stax"
works without importing this package; `backend=stax.torch.backend` with
`options={"isa": ..., "threads": ..., "fuse": ...}` passes `stax.jit` options.

Pipeline: Dynamo's FX graph -> AOTAutograd (PyTorch's core ATen decompositions, the min-cut
partitioner choosing what the forward saves) -> forward and backward ATen graphs, each run
by a `GraphRunner` (`stax.torch.graph`): ATen ops of `stax.torch.ops.TABLE` become NumPy
expressions traced and compiled by `stax.jit` in as few segments as possible, on zero-copy
NumPy views of the tensors; convolutions, pooling and embedding bags run inside segments as
extern calls to PyTorch (`stax.torch.externs`; matrix products as NumPy's matmul on the
operands' buffers; max pooling over tiling windows as Stax's own,
`stax.torch.pooling`); other ops (random ops, scatters, ...) run in
eager PyTorch between segments, with a one-time warning per graph. After its first call a
graph runs through a generated straight-line function (`GraphRunner.fast_source`). The
models of the tests and benchmark are in `stax.torch.models`. Graphs whose inputs
are tensors Stax does not handle (CUDA, sparse, quantized, subclasses, dtypes other than
bool/int32/int64/float32/float64) run in eager PyTorch with a warning saying why.

`explain(model, *inputs, backward=False)` shows each graph received, its plan, fallbacks
with reasons, and each segment's fusion log and kernels.
"""

from stax.torch.dynamo import backend
from stax.torch.explain import explain

__all__ = ["backend", "explain"]
