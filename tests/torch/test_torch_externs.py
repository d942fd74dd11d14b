"""Convolutions, pooling and embedding bags run by PyTorch as extern calls inside Stax
segments: values and gradients equal eager's, and the graph is not split by fallbacks."""

from __future__ import annotations

import re

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
import stax.torch  # noqa: E402

nn = torch.nn
F = nn.functional


class ConvPool(nn.Module):
    """Strided, dilated and grouped convolutions; max, average and adaptive pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.conv1(x))
        a = F.avg_pool2d(h, 2, ceil_mode=True) * 2
        b = F.adaptive_avg_pool2d(self.conv2(h), 1).flatten(1)
        m = F.max_pool2d(h, 2, stride=1)
        return a.sum((2, 3)) + b, torch.tanh(m)


def test_conv_and_pooling_training_with_input_gradient() -> None:
    x = torch.randn(2, 3, 9, 9, requires_grad=True)
    check_model(ConvPool, [x], steps=2, rtol=1e-4, atol=1e-5)
    torch.manual_seed(0)
    report = stax.torch.explain(ConvPool(), x, backward=True)
    assert report.fallbacks == ()
    for graph in report.graphs:
        assert [s.kind for s in graph.steps].count("stax") == 1, graph


def test_conv_pool_eval_float64_channels_last_and_empty_batch() -> None:
    torch.manual_seed(0)
    model = ConvPool().double().eval()
    compiled = torch.compile(model, backend="stax")
    with torch.no_grad():
        for x in (torch.randn(2, 3, 9, 9, dtype=torch.float64),
                  torch.randn(2, 3, 9, 9, dtype=torch.float64).to(
                      memory_format=torch.channels_last),
                  torch.randn(3, 9, 9, 2, dtype=torch.float64).permute(3, 0, 1, 2),
                  torch.randn(0, 3, 9, 9, dtype=torch.float64)):
            assert_close(compiled(x), model(x), rtol=1e-10, atol=1e-12)
    assert stax.torch.explain(model, x).fallbacks == ()


def test_embedding_bag_extern_in_inference_eager_in_training() -> None:
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    idx, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 9]), torch.tensor([0, 2, 2, 5])
    with torch.no_grad():
        assert_close(torch.compile(bag, backend="stax")(idx, offsets), bag(idx, offsets),
                     rtol=1e-6, atol=1e-6)
        assert stax.torch.explain(bag, idx, offsets).fallbacks == ()
    # Training reads four results of _embedding_bag: PyTorch runs it between segments.
    report = stax.torch.explain(bag, idx, offsets, backward=True)
    assert [op for _, op, _ in report.fallbacks] == ["aten._embedding_bag.default"]


def test_inference_graphs_hand_4d_tensors_in_channels_last_order() -> None:
    from stax.torch.models import SmallCNN

    torch.manual_seed(0)
    model = SmallCNN(4, 8, 3).eval()
    model.bn.running_mean.uniform_(-1, 1)
    model.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(3, 3, 8, 8)
    with torch.no_grad():
        assert_close(torch.compile(model, backend="stax")(x), model(x), rtol=1e-5, atol=1e-5)

    def extern_lines(report: object) -> set[str]:
        return {line.strip() for g in report.graphs for s in g.segments for r in s.reports
                for line in r.compilation.program.wrapper.splitlines()
                if "externs['torch:" in line}

    inference = extern_lines(stax.torch.explain(model, x))
    # the convolution only: [TORCH3] Stax pools over its channels-last result itself
    assert len(inference) == 1, inference
    assert all(re.search(r" nhwc( #\d+)?'\]\(", line) for line in inference), inference
    # the convolution's result tensor is the node's buffer (no out=, no copy)
    assert any(re.match(r"buf\d+ = externs\['torch:aten\.convolution\.default", line)
               and "out=" not in line for line in inference), inference
    training = extern_lines(stax.torch.explain(model.train(), x, backward=True))
    assert training and not any("nhwc" in line for line in training), training


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_bag_extern_calls_like_eager(mode: str, dtype: torch.dtype) -> None:
    """Inference embedding bags as extern calls equal eager's for each mode, with empty
    bags, a padding index, per-sample weights (sum), include_last_offset, and a following
    product reading the buffer."""
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(12, 5, mode=mode, padding_idx=3).to(dtype)
    lin = nn.Linear(5, 2).to(dtype)
    idx = torch.tensor([1, 2, 3, 5, 4, 3, 9, 11, 0])
    offsets = torch.tensor([0, 2, 2, 5, 9])

    def f(i: torch.Tensor, o: torch.Tensor, w: torch.Tensor | None) -> torch.Tensor:
        return lin(bag(i, o, per_sample_weights=w) * 2)

    def g(i: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        return F.embedding_bag(i, bag.weight, o, mode=mode, include_last_offset=True)

    weights = torch.rand(9, dtype=dtype) if mode == "sum" else None
    with torch.no_grad():
        for _ in range(2):  # the second call runs the compiled program as it is
            assert_close(torch.compile(f, backend="stax")(idx, offsets, weights),
                         f(idx, offsets, weights), rtol=1e-6, atol=1e-6)
            assert_close(torch.compile(g, backend="stax")(idx, offsets), g(idx, offsets),
                         rtol=1e-6, atol=1e-6)
        assert stax.torch.explain(f, idx, offsets, weights).fallbacks == ()


class _BagLinear(nn.Module):
    def __init__(self, mode: str, dtype: torch.dtype) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(12, 5, mode=mode, padding_idx=3).to(dtype)
        self.lin = nn.Linear(5, 2).to(dtype)

    def forward(self, idx: torch.Tensor, offsets: torch.Tensor,
                weights: torch.Tensor | None) -> torch.Tensor:
        return self.lin(self.bag(idx, offsets, per_sample_weights=weights))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_bag_backward_result_is_the_gradient(mode: str, dtype: torch.dtype) -> None:
    """[TORCH4] Training: the embedding bag's weight gradient (`_embedding_bag_backward`, an
    extern call) equals eager's for each mode with empty bags, repeated rows, the padding
    index and per-sample weights (sum), over three steps (the later ones through the
    straight-line runner); its result tensor is the node's buffer (no `out=` copy)."""
    idx = torch.tensor([1, 2, 3, 5, 4, 3, 9, 11, 0, 1, 1])
    offsets = torch.tensor([0, 2, 2, 5, 9])
    weights = torch.rand(11, dtype=dtype) if mode == "sum" else None
    check_model(lambda: _BagLinear(mode, dtype), [idx, offsets, weights], steps=3,
                rtol=1e-6, atol=1e-6)
    torch.manual_seed(0)
    report = stax.torch.explain(_BagLinear(mode, dtype), idx, offsets, weights, backward=True)
    lines = [line.strip() for g in report.graphs for s in g.segments for r in s.reports
             for line in r.compilation.program.wrapper.splitlines()
             if "externs['torch:aten._embedding_bag_backward" in line]
    assert lines and all(re.match(r"buf\d+ = externs", line) and "out=" not in line
                         for line in lines), lines
