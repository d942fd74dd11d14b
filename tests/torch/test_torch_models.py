"""Real torch.nn modules compiled by Stax: outputs, gradients and a few training steps equal
eager PyTorch's."""

from __future__ import annotations

import copy

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
nn = torch.nn
models = pytest.importorskip("stax.torch.models")


def test_mlp_training_steps() -> None:
    check_model(lambda: models.mlp(12, 32, 5, nn.Tanh), [torch.randn(7, 12)], steps=3)


def test_mlp_inference() -> None:
    model = models.mlp(12, 32, 5).eval()
    compiled = torch.compile(model, backend="stax")
    with torch.no_grad():
        for batch in (1, 9):
            x = torch.randn(batch, 12)
            assert_close(compiled(x), model(x))


def _encoder() -> nn.Module:
    return models.encoder(16, 2, 32)


def test_transformer_encoder_block_eval() -> None:
    check_model(_encoder, [torch.randn(2, 5, 16, requires_grad=True)], train=False)


def test_transformer_encoder_block_train_dropout() -> None:
    check_model(_encoder, [torch.randn(2, 5, 16, requires_grad=True)], steps=2, seed=123)


def _cnn() -> nn.Module:
    return models.SmallCNN(4, 8, 3)


def test_small_cnn_training_steps() -> None:
    check_model(_cnn, [torch.randn(2, 3, 8, 8)], steps=2)


def test_small_cnn_eval() -> None:
    check_model(_cnn, [torch.randn(2, 3, 8, 8)], train=False)


def test_rmsnorm_swiglu() -> None:
    check_model(lambda: models.RMSNormSwiGLU(16, 24), [torch.randn(3, 4, 16, requires_grad=True)],
                steps=2)


def test_embedding_bag() -> None:
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 19, 0])
    offsets = torch.tensor([0, 4, 7])
    check_model(lambda: models.Bag(20, 6, 2), [idx, offsets], steps=2)


def test_embedding_softmax() -> None:
    check_model(lambda: models.Embed(20, 6, 2), [torch.tensor([[1, 2, 19], [0, 2, 2]])], steps=2)


def test_lstm_cell() -> None:
    check_model(lambda: models.LSTMSteps(6, 8),
                [torch.randn(3, 4, 6), torch.randn(4, 8), torch.randn(4, 8)], steps=2)


def test_adamw_step_compiled() -> None:
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    twin = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    opt_eager = torch.optim.AdamW(twin.parameters(), lr=0.01, weight_decay=0.1)

    @torch.compile(backend="stax")
    def step() -> None:
        opt.step()

    x = torch.randn(5, 8)
    for _ in range(3):
        for m, o in ((model, None), (twin, None)):
            m.zero_grad()
            (m(x) ** 2).mean().backward()
            del o
        step()
        opt_eager.step()
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            assert_close(p, q, rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        assert_close(opt.state[p]["exp_avg_sq"], opt_eager.state[q]["exp_avg_sq"])
