"""[TORCH8] Pooling backwards written into the segment's buffer by their `grad_input` overloads
(overlapping windows, ties, padding, ceil mode, channels-last inputs): outputs and gradients
equal eager's, over several calls (the buffer is reused)."""

from __future__ import annotations

import copy
import warnings

import pytest
from torch_helpers import assert_close

torch = pytest.importorskip("torch")
from stax.torch import dynamo  # noqa: E402

nn = torch.nn
F = nn.functional


class Pools(nn.Module):
    """A convolution, then overlapping max pooling with padding and ceil mode (windows share
    inputs: their gradients add up), average pooling without the padding in the count, and a
    tiling max pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv(x))
        a = F.max_pool2d(h, 3, stride=2, padding=1, ceil_mode=True)
        b = F.avg_pool2d(h, 3, stride=2, padding=1, count_include_pad=False)
        return torch.cat([F.max_pool2d(a + b, 2).flatten(1), a.flatten(1)], 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pooling_backward_into_buffer(monkeypatch: pytest.MonkeyPatch,
                                      dtype: torch.dtype) -> None:
    recorded: list[dynamo.GraphRunner] = []
    monkeypatch.setattr(dynamo, "RECORDING", recorded)
    torch.manual_seed(0)
    eager = Pools().to(dtype)
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend="stax")
    tol = (1e-4, 1e-5) if dtype == torch.float32 else (1e-10, 1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(3):
            # ties: values rounded to a few levels (ReLU's zeros tie too); the third call's
            # input is channels-last (the gradient's layout differs from the buffer's)
            x = torch.round(torch.randn(2, 3, 9, 11, dtype=dtype) * 2) / 2
            if k == 2:
                x = x.contiguous(memory_format=torch.channels_last)
            xs = [x.clone().requires_grad_(), x.clone().requires_grad_()]
            want, got = eager(xs[0]), compiled(xs[1])
            assert_close(got, want, *tol)
            w = torch.linspace(-1, 1, want.numel(), dtype=dtype).reshape(want.shape)
            for out, m in ((want, eager), (got, model)):
                m.zero_grad()
                (out * w).sum().backward()
            assert_close([p.grad for p in model.parameters()] + [xs[1].grad],
                         [p.grad for p in eager.parameters()] + [xs[0].grad], *tol)
    assert not [str(c.message) for c in caught if "run in eager" in str(c.message)]
    backward = [n.target for r in recorded if r.name.endswith("backward")
                for n in r.gm.graph.nodes]
    assert torch.ops.aten.max_pool2d_with_indices_backward.default in backward
    assert all(not r.fallbacks for r in recorded)
