"""Scaled dot-product attention in training graphs (`stax.torch.attention`): outputs and the
query, key, value (and mask) gradients equal eager PyTorch's, with no eager fallback, for the
CPU flash-attention path (no dropout): plain, causal, boolean and float masks, an explicit
scale, grouped-query heads, float64, a length-1 sequence, fully masked rows, and a transformer
encoder block trained without dropout (its gradients were silently wrong before)."""

from __future__ import annotations

import warnings

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
F = torch.nn.functional
models = pytest.importorskip("stax.torch.models")
explain = pytest.importorskip("stax.torch").explain


def _grads(fn, tensors: list, weight) -> tuple:
    out = fn(*tensors)
    (out * weight).sum().backward()
    return out.detach(), [t.grad for t in tensors if t.requires_grad]


def _compare(fn, shapes: list[tuple[int, ...]], dtype=torch.float32, extra: tuple = (),
             rtol: float = 1e-4, atol: float = 1e-5) -> None:
    torch.manual_seed(0)
    base = [torch.randn(s, dtype=dtype) for s in shapes]
    eager = [t.clone().requires_grad_() for t in base]
    mine = [t.clone().requires_grad_() for t in base]
    probe = fn(*base, *extra)
    weight = torch.linspace(-1, 1, probe.numel(), dtype=dtype).reshape(probe.shape)
    want, want_grads = _grads(lambda *t: fn(*t, *extra), eager, weight)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        compiled = torch.compile(lambda *t: fn(*t, *extra), backend="stax")
        got, got_grads = _grads(compiled, mine, weight)
    assert_close(got, want, rtol, atol)
    assert len(got_grads) == len(want_grads) == len(base)
    for g, w in zip(got_grads, want_grads, strict=True):
        assert_close(g, w, rtol, atol)


QKV = [(2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)]


def test_plain() -> None:
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), QKV)


def test_causal_and_scale_float64() -> None:
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                            scale=0.3),
             [(1, 2, 6, 4)] * 3, dtype=torch.float64, rtol=1e-10, atol=1e-12)


def test_boolean_mask_with_fully_masked_row() -> None:
    mask = torch.rand(5, 7) > 0.4
    mask[2] = False  # row 2 attends to nothing: zero output and zero gradients, as eager
    _compare(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), QKV,
             extra=(mask,))


def test_float_mask_gradient() -> None:
    # The additive mask is an input that needs its gradient too.
    _compare(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
             [*QKV, (2, 1, 5, 7)])


def test_grouped_query_heads() -> None:
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
             [(2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8)])


def test_length_one() -> None:
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(3, 2, 1, 4)] * 3)


def test_transformer_block_training_without_dropout() -> None:
    def make() -> torch.nn.Module:
        return models.encoder(16, 2, 32, dropout=0.0)
    for shape in ((2, 5, 16), (1, 1, 16)):
        check_model(make, [torch.randn(*shape, requires_grad=True)], steps=2)


def test_encoder_backward_has_no_fallback() -> None:
    model = models.encoder(16, 2, 32, dropout=0.0)
    report = explain(model, torch.randn(2, 5, 16, requires_grad=True), backward=True)
    assert [g.name.split()[-1] for g in report.graphs] == ["forward", "backward"]
    assert report.fallbacks == ()
