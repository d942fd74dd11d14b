"""[TORCH10] ATen ops called through PyTorch's Python bindings (`stax.torch.externs.bound`):
which ops take the binding, equal results to the overload's, and models whose convolutions
(extern calls) and eager fallbacks go through it equal eager's, outputs and gradients, over
dtypes, non-contiguous and zero-size inputs."""

from __future__ import annotations

import operator

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
from stax.torch import dynamo, externs  # noqa: E402

nn = torch.nn
aten = torch.ops.aten


def test_bound_picks_the_binding_of_single_overload_ops() -> None:
    assert externs.bound(aten.convolution.default) is torch.convolution
    assert (
        externs.bound(aten.max_pool2d_with_indices.default) is torch._C._nn.max_pool2d_with_indices
    )
    # several overloads (the binding could pick another), a non-default overload, no op
    for op in (
        aten.add.Tensor,
        aten.sum.dim_IntList,
        aten.convolution.out,
        aten.max_pool2d_with_indices_backward.default,
        operator.getitem,
    ):
        assert externs.bound(op) is op


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bound_convolution_equals_the_overload(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 9, 7, dtype=dtype).contiguous(memory_format=torch.channels_last)
    w = torch.randn(5, 3, 3, 2, dtype=dtype)
    b = torch.randn(5, dtype=dtype)
    for args in (
        (x, w, b, [1, 2], [1, 0], [1, 1], False, [0, 0], 1),
        (x[:, :, ::2], w, None, [1, 1], [0, 1], [2, 1], False, [0, 0], 1),
        (x[:0], w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    ):
        got = externs.bound(aten.convolution.default)(*args)
        want = aten.convolution.default(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=0, atol=0)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(nn.functional.max_pool2d(y, 2).flatten(1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cnn_training_and_inference(dtype: torch.dtype) -> None:
    x = torch.randn(3, 3, 8, 8, dtype=dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {}
    check_model(lambda: ConvNet().to(dtype), [x.requires_grad_()], steps=2, **tol)
    torch.manual_seed(0)
    model = ConvNet().to(dtype).eval()
    compiled = torch.compile(model, backend="stax")
    with torch.no_grad():
        for xs in (
            x.detach(),
            x.detach().transpose(2, 3),  # non-contiguous
            x.detach().contiguous(memory_format=torch.channels_last),
        ):
            assert_close(compiled(xs), model(xs), **tol)


def test_cnn_zero_batch() -> None:
    torch.manual_seed(0)
    model = ConvNet().eval()
    compiled = torch.compile(model, backend="stax", dynamic=False)
    x = torch.randn(0, 3, 8, 8)
    with torch.no_grad():
        got, want = compiled(x), model(x)
    assert got.shape == want.shape == (0, 5)


def test_eager_fallback_through_the_binding() -> None:
    """The encoder layer's inference fast path is one ATen op Stax has no translation for
    (`_transformer_encoder_layer_fwd`): the runner calls it through `torch`'s binding."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    compiled = torch.compile(layer, backend="stax")
    x = torch.randn(2, 5, 16)
    dynamo.RECORDING = []
    try:
        with torch.no_grad(), pytest.warns(UserWarning, match="_transformer_encoder_layer_fwd"):
            got = compiled(x)
            compiled(x)  # the straight-line runner's call
        (runner,) = dynamo.RECORDING
    finally:
        dynamo.RECORDING = None
    assert torch._transformer_encoder_layer_fwd in runner.fast.__globals__.values()
    with torch.no_grad():
        assert_close(got, layer(x))
        assert_close(compiled(x[:, ::2]), layer(x[:, ::2]))  # a strided input, a new shape


def test_embedding_bag_training() -> None:
    class Bag(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bag = nn.EmbeddingBag(20, 6, mode="mean")

        def forward(self, idx: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
            return self.bag(idx, offsets) * 2

    idx = torch.tensor([1, 4, 4, 19, 0, 7, 3])
    check_model(Bag, [idx, torch.tensor([0, 3, 3])], steps=2)
