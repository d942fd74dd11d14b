"""Real torch.nn modules compiled by Stax: outputs, gradients and a few training steps equal
eager PyTorch's."""

from __future__ import annotations

import copy

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
nn = torch.nn


def test_mlp_training_steps() -> None:
    def make() -> nn.Module:
        return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                             nn.Linear(32, 5))
    check_model(make, [torch.randn(7, 12)], steps=3)


def test_mlp_inference() -> None:
    model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 5)).eval()
    compiled = torch.compile(model, backend="stax")
    with torch.no_grad():
        for batch in (1, 9):
            x = torch.randn(batch, 12)
            assert_close(compiled(x), model(x))


def _encoder() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.1,
                                      activation="gelu", batch_first=True)


def test_transformer_encoder_block_eval() -> None:
    check_model(_encoder, [torch.randn(2, 5, 16, requires_grad=True)], train=False)


def test_transformer_encoder_block_train_dropout() -> None:
    check_model(_encoder, [torch.randn(2, 5, 16, requires_grad=True)], steps=2, seed=123)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.pool(torch.relu(self.bn(self.conv(x)))).flatten(1))


def test_small_cnn_training_steps() -> None:
    check_model(SmallCNN, [torch.randn(2, 3, 8, 8)], steps=2)


def test_small_cnn_eval() -> None:
    check_model(SmallCNN, [torch.randn(2, 3, 8, 8)], train=False)


class RMSNormSwiGLU(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 24) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.w2(nn.functional.silu(self.w1(h)) * self.w3(h))


def test_rmsnorm_swiglu() -> None:
    check_model(RMSNormSwiGLU, [torch.randn(3, 4, 16, requires_grad=True)], steps=2)


class Bag(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(20, 6, mode="mean")
        self.fc = nn.Linear(6, 2)

    def forward(self, idx: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.fc(self.bag(idx, offsets))


def test_embedding_bag() -> None:
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 19, 0])
    offsets = torch.tensor([0, 4, 7])
    check_model(Bag, [idx, offsets], steps=2)


class Embed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.fc = nn.Linear(6, 2)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.fc(self.emb(idx)).softmax(-1)


def test_embedding_softmax() -> None:
    check_model(Embed, [torch.tensor([[1, 2, 19], [0, 2, 2]])], steps=2)


class LSTMStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(6, 8)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> tuple:
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
        return h, c


def test_lstm_cell() -> None:
    check_model(LSTMStep, [torch.randn(3, 4, 6), torch.randn(4, 8), torch.randn(4, 8)],
                steps=2)


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
