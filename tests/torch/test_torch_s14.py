"""[TORCH6] Small convolutions on NCHW tensors (large ones converted to channels-last), and
views between segments called as Tensor methods: values, gradients, strides and aliasing equal
eager's."""

from __future__ import annotations

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
from stax.torch import externs  # noqa: E402

nn = torch.nn


class Convs(nn.Module):
    """Strided, dilated and grouped convolutions, batch norm, ReLU and max pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2, stride=1)
        return self.conv2(h).flatten(1)


@pytest.mark.parametrize("limit", [0, 1 << 40], ids=["channels_last", "nchw"])
def test_convolutions_either_layout_train_and_eval(monkeypatch: pytest.MonkeyPatch,
                                                   limit: int) -> None:
    monkeypatch.setattr(externs, "CHANNELS_LAST_BYTES", limit)
    check_model(Convs, [torch.randn(2, 3, 9, 9)], steps=2, rtol=1e-4, atol=1e-5)
    check_model(lambda: Convs().double(), [torch.randn(3, 3, 7, 7, dtype=torch.float64)],
                train=False, rtol=1e-10, atol=1e-12)


def _views(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    s = torch.sin(x)
    return (x.t(), y.unsqueeze(0).expand(3, 4, 5), x.transpose(0, 1).select(0, 1),
            y.view(20).unsqueeze(1).squeeze(1), y.unsqueeze(2).squeeze(), s.t() + 1,
            x.permute(1, 0).squeeze(0))


def _strides(t: torch.Tensor) -> tuple[int, ...]:
    """The strides of the axes longer than 1 (the others' are immaterial)."""
    return tuple(s for n, s in zip(t.shape, t.stride(), strict=True) if n > 1)


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def test_views_between_segments_alias_as_in_eager() -> None:
    compiled = torch.compile(_views, backend="stax")
    for _ in range(3):  # the first call runs the plan, later ones its straight-line runner
        x, y = torch.randn(1, 6), torch.randn(4, 5)
        xc, yc = x.clone(), y.clone()
        want = _views(x, y)
        got = compiled(xc, yc)
        assert_close(got, want)
        assert list(map(_strides, got)) == list(map(_strides, want))
        assert [_storage(g) in (_storage(xc), _storage(yc)) for g in got] == \
            [_storage(w) in (_storage(x), _storage(y)) for w in want] == \
            [True, True, True, True, True, False, True]
    a, b = torch.randn(1, 6), torch.randn(4, 5)
    got = compiled(a, b)
    a.mul_(2)  # in place on the inputs: the views returned see it, as eager's do
    b.add_(1)
    assert_close(got[0], a.t())
    assert_close(got[1], b.unsqueeze(0).expand(3, 4, 5))
    assert_close(got[3], b.view(20))
