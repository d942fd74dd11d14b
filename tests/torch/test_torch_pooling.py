"""Max pooling over windows that tile the input, computed by Stax (`stax.torch.pooling`; the
backward stays an extern call): values, indices (first maximum, last NaN) and input gradients
equal eager's, in training graphs and in inference graphs (over the channels-last order of a
convolution's result); other window shapes stay extern calls."""

from __future__ import annotations

import re

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
import stax.torch  # noqa: E402

F = torch.nn.functional


def _pool(kernel: object):
    def fn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = F.max_pool2d(x, kernel, return_indices=True)
        return torch.tanh(values), indices
    return fn


def _tricky(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Ties (small integers), windows with several NaNs, with infinities and all -inf."""
    x = torch.randint(-2, 3, shape).to(dtype)
    flat = x.view(-1)
    flat[0] = flat[1] = float("nan")  # two NaNs in the first window: the last one wins
    flat[shape[-1]] = float("nan")
    flat[4:6] = float("inf")
    x[..., -2:, -2:] = float("-inf")
    return x


def _pool_externs(fn: object, x: torch.Tensor) -> list[str]:
    report = stax.torch.explain(fn, x, backward=True)
    assert report.fallbacks == ()
    return [line for g in report.graphs for s in g.segments for r in s.reports
            for line in r.compilation.program.wrapper.splitlines() if "max_pool2d" in line]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kernel", [2, (2, 3)])
def test_tiling_max_pool_values_indices_and_gradients(kernel: object,
                                                      dtype: torch.dtype) -> None:
    fn = _pool(kernel)
    compiled = torch.compile(fn, backend="stax")
    for x in (_tricky((2, 3, 4, 6), dtype),
              _tricky((2, 4, 6, 3), dtype).permute(0, 3, 1, 2)):  # channels-last memory
        xe = x.clone().requires_grad_(True)
        xc = x.clone().requires_grad_(True)
        (ve, ie), (vc, ic) = fn(xe), compiled(xc)
        assert_close(vc, ve)
        assert torch.equal(ic, ie)
        weights = torch.linspace(-1, 1, ve.numel(), dtype=dtype).reshape(ve.shape)
        (ve * weights).nansum().backward()
        (vc * weights).nansum().backward()
        assert_close(xc.grad, xe.grad)
    lines = _pool_externs(fn, x.clone().requires_grad_(True))
    assert lines and all("max_pool2d_with_indices_backward" in line for line in lines), lines


def test_overlapping_windows_stay_extern_calls() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, 3, stride=2, padding=1)
    x = torch.randn(2, 3, 7, 7)
    compiled = torch.compile(fn, backend="stax")
    xe, xc = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    assert_close(compiled(xc), fn(xe))
    fn(xe).sum().backward()
    compiled(xc).sum().backward()
    assert_close(xc.grad, xe.grad)
    lines = _pool_externs(fn, x.clone().requires_grad_(True))
    assert any("max_pool2d_with_indices.default" in line for line in lines), lines


def test_cnn_training_with_native_pooling_matches_eager() -> None:
    from stax.torch.models import SmallCNN

    x = torch.randn(3, 3, 8, 8, requires_grad=True)
    check_model(lambda: SmallCNN(4, 8, 3), [x], steps=2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kernel", [2, (2, 3)])
def test_inference_max_pool_matches_eager(kernel: object, dtype: torch.dtype) -> None:
    """Inference graphs hand 4-D tensors in channels-last order (`GraphRunner.channels_last`);
    [TORCH3] Stax pools over that order itself (fused with what comes before): values and
    indices equal eager's (ties, NaNs, infinities), for NCHW and channels-last inputs, after a
    convolution, values alone."""
    fn = _pool(kernel)
    conv = torch.nn.Conv2d(3, 3, 3, padding=1).to(dtype)

    def after_conv(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return fn(torch.relu(conv(x)))

    def values_only(x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(torch.relu(conv(x)) + x.sum(1, keepdim=True), kernel) * 2

    with torch.no_grad():
        for f in (fn, after_conv, values_only):
            compiled = torch.compile(f, backend="stax")
            for x in (_tricky((2, 3, 4, 6), dtype),
                      _tricky((2, 4, 6, 3), dtype).permute(0, 3, 1, 2)):
                want, got = f(x), compiled(x)
                assert_close(got, want)
                if isinstance(want, tuple):
                    assert torch.equal(got[1], want[1])
        report = stax.torch.explain(values_only, x)
    assert report.fallbacks == ()
    lines = [line for g in report.graphs for s in g.segments for r in s.reports
             for line in r.compilation.program.wrapper.splitlines() if "externs[" in line]
    assert not any("max_pool2d" in line for line in lines), lines
    assert any("convolution.default" in line and re.search(r" nhwc( #\d+)?'\]\(", line)
               for line in lines), lines
