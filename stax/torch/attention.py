"""Scaled dot-product attention for training graphs: PyTorch's CPU flash-attention pair as
core ATen ops that Stax compiles, forward and backward.

On the CPU, `scaled_dot_product_attention` without dropout calls
`_scaled_dot_product_flash_attention_for_cpu`, and autograd records its backward,
`_scaled_dot_product_flash_attention_for_cpu_backward`, which reads the forward's log-sum-exp
of the scores. PyTorch's core ATen table decomposes the forward into the math attention but
returns the attention weights in place of that log-sum-exp (a rule meant for export, "to be
excluded by inductor"), so the backward, which has no decomposition and runs eagerly, read the
weights as a log-sum-exp: the query, key and value gradients were silently wrong. Here the
forward returns the true log-sum-exp and the backward recomputes the weights from it
(`exp(scores - lse)`, as flash attention's backward does), both as ops of one Stax segment.
"""

from __future__ import annotations

import math
from typing import Any

import torch

aten = torch.ops.aten


def _scores(query: torch.Tensor, key: torch.Tensor, is_causal: bool,
            attn_mask: torch.Tensor | None, scale: float | None) -> torch.Tensor:
    """`query @ key^T * scale`, masked as `scaled_dot_product_attention` masks it (a boolean
    mask keeps where True, a float mask is added; causal keeps the lower triangle)."""
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    s = torch.matmul(query, _heads(key, query).transpose(-2, -1)) * scale
    if is_causal:
        keep = torch.ones(s.size(-2), s.size(-1), dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        s = s.masked_fill(attn_mask.logical_not(), -math.inf) if attn_mask.dtype == torch.bool \
            else s + attn_mask
    return s


def _heads(kv: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """Key or value heads repeated to the query's heads (grouped-query attention)."""
    groups = query.size(1) // kv.size(1)
    if groups == 1:
        return kv
    b, h, s, e = kv.shape
    return kv.unsqueeze(2).expand(b, h, groups, s, e).reshape(b, h * groups, s, e)


def _group_sum(grad: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
    """The gradient of `_heads`: the repeated heads' gradients summed per key/value head."""
    groups = grad.size(1) // kv.size(1)
    if groups == 1:
        return grad
    b, h, s, e = kv.shape
    return grad.reshape(b, h, groups, s, e).sum(2)


def _weights(scores: torch.Tensor, lse: torch.Tensor) -> torch.Tensor:
    """softmax(scores) from the rows' log-sum-exp; a row masked out entirely (lse -inf)
    gets zero weights, as in PyTorch's attention."""
    finite = torch.where(lse == -math.inf, torch.zeros_like(lse), lse)
    return torch.exp(scores - finite.unsqueeze(-1))


def _check(query: torch.Tensor, dropout_p: float) -> None:
    torch._check(query.dim() == 4, lambda: f"query must be 4-D, got {query.dim()}-D")
    torch._check(dropout_p == 0.0,
                 lambda: f"dropout probability must be zero, got {dropout_p}")


def flash_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                    dropout_p: float = 0.0, is_causal: bool = False, *,
                    attn_mask: torch.Tensor | None = None, scale: float | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """`_scaled_dot_product_flash_attention_for_cpu`: (output, log-sum-exp of the scores)."""
    _check(query, dropout_p)
    s = _scores(query, key, is_causal, attn_mask, scale)
    lse = torch.logsumexp(s, -1)
    out = torch.matmul(_weights(s, lse), _heads(value, query))
    # The flash kernel's layout: (batch, length, heads, dim) memory, (batch, heads, ...) shape.
    return out.transpose(1, 2).contiguous().transpose(1, 2), lse


def flash_attention_backward(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor,
                             value: torch.Tensor, out: torch.Tensor, logsumexp: torch.Tensor,
                             dropout_p: float, is_causal: bool, *,
                             attn_mask: torch.Tensor | None = None,
                             scale: float | None = None
                             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`_scaled_dot_product_flash_attention_for_cpu_backward`: gradients of query, key and
    value, with the weights recomputed from the forward's log-sum-exp."""
    _check(query, dropout_p)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    p = _weights(_scores(query, key, is_causal, attn_mask, scale), logsumexp)
    grad_v = torch.matmul(p.transpose(-2, -1), grad_out)
    grad_p = torch.matmul(grad_out, _heads(value, query).transpose(-2, -1))
    # rowsum(p * grad_p) == rowsum(out * grad_out): the softmax backward's row term.
    grad_s = p * (grad_p - (grad_out * out).sum(-1, keepdim=True)) * scale
    grad_q = torch.matmul(grad_s, _heads(key, query))
    grad_k = torch.matmul(grad_s.transpose(-2, -1), query)
    return grad_q, _group_sum(grad_k, key), _group_sum(grad_v, value)


DECOMPOSITIONS: dict[Any, Any] = {
    aten._scaled_dot_product_flash_attention_for_cpu.default: flash_attention,
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
        flash_attention_backward,
}
