"""The `torch.nn` models of issue 13, defined once for the tests (`tests/torch`) and the
benchmark (`benchmarks/torch_models.py`), which build them at different sizes."""

from __future__ import annotations

import torch
from torch import nn


def mlp(dim: int, hidden: int, out: int, activation: type[nn.Module] = nn.GELU) -> nn.Module:
    """Linear, activation, linear, ReLU, linear."""
    return nn.Sequential(nn.Linear(dim, hidden), activation(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, out))


def encoder(dim: int, heads: int, hidden: int, dropout: float = 0.1) -> nn.Module:
    """A transformer encoder block: LayerNorm, multi-head attention with softmax, GELU,
    residuals and dropout."""
    return nn.TransformerEncoderLayer(dim, heads, hidden, dropout=dropout, activation="gelu",
                                      batch_first=True)


class SmallCNN(nn.Module):
    """Convolution, batch norm, ReLU, max-pooling and a linear layer on `size`² images of
    3 channels."""

    def __init__(self, width: int, size: int, classes: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(width * (size // 2) ** 2, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.pool(torch.relu(self.bn(self.conv(x)))).flatten(1))


class RMSNormSwiGLU(nn.Module):
    """RMSNorm and a SwiGLU feed-forward with a residual."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.w2(nn.functional.silu(self.w1(h)) * self.w3(h))


class Bag(nn.Module):
    """A mean embedding bag and a linear layer."""

    def __init__(self, rows: int, dim: int, classes: int) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(rows, dim, mode="mean")
        self.fc = nn.Linear(dim, classes)

    def forward(self, idx: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.fc(self.bag(idx, offsets))


class Embed(nn.Module):
    """An embedding, a linear layer and a softmax."""

    def __init__(self, rows: int, dim: int, classes: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(rows, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.fc(self.emb(idx)).softmax(-1)


class LSTMSteps(nn.Module):
    """An LSTM cell applied over the first axis of `x`; returns the last (h, c)."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(dim, hidden)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
        return h, c
