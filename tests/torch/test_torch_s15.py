"""[TORCH7] Extern calls (convolutions, pooling) in graphs Dynamo recompiled with symbolic
sizes after a second input shape: they stay in Stax segments, and values and gradients equal
eager's."""

from __future__ import annotations

import copy
import warnings

import pytest
from torch_helpers import assert_close

torch = pytest.importorskip("torch")
from stax.torch import dynamo  # noqa: E402

nn = torch.nn
F = nn.functional


class ConvNet(nn.Module):
    """A strided convolution, batch norm, ReLU, overlapping max pooling (an extern call), a
    grouped convolution and adaptive average pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1, groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.max_pool2d(torch.relu(self.bn(self.conv1(x))), 3, stride=1, padding=1)
        return F.adaptive_avg_pool2d(self.conv2(h), 2).flatten(1)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_extern_calls_at_symbolic_sizes_stay_in_stax(monkeypatch: pytest.MonkeyPatch,
                                                      train: bool) -> None:
    recorded: list[dynamo.GraphRunner] = []
    monkeypatch.setattr(dynamo, "RECORDING", recorded)
    torch.manual_seed(0)
    eager = ConvNet().double().train(train)
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend="stax")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for shape in [(2, 3, 9, 9), (3, 3, 7, 7), (5, 3, 8, 6)]:
            x = torch.randn(shape, dtype=torch.float64)
            want, got = eager(x), compiled(x)
            assert_close(got, want, 1e-10, 1e-12)
            w = torch.linspace(-1, 1, want.numel(), dtype=torch.float64).reshape(want.shape)
            for out, m in ((want, eager), (got, model)):
                m.zero_grad()
                (out * w).sum().backward()
            assert_close([p.grad for p in model.parameters()],
                         [p.grad for p in eager.parameters()], 1e-10, 1e-12)
    assert_close(list(model.buffers()), list(eager.buffers()), 1e-10, 1e-12)
    assert not [str(c.message) for c in caught if "run in eager" in str(c.message)]
    # the later graphs have symbolic sizes (the case this test is about) and no fallbacks
    symbolic = [r for r in recorded if any(
        not all(type(s) is int for s in n.meta["val"].shape)
        for n in r.gm.graph.nodes if n.op == "placeholder"
        and isinstance(n.meta.get("val"), torch.Tensor))]
    assert symbolic
    assert all(not r.fallbacks for r in recorded)
