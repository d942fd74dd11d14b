"""Helpers for the torch.compile backend tests: compile with Stax, compare with eager."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import pytest

torch = pytest.importorskip("torch")


def clone_inputs(inputs: Sequence[Any]) -> list[Any]:
    return [x.detach().clone().requires_grad_(x.requires_grad)
            if isinstance(x, torch.Tensor) else x for x in inputs]


def assert_close(got: Any, want: Any, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_close(g, w, rtol, atol)
        return
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


def check_model(make: Callable[[], torch.nn.Module], inputs: Sequence[Any], *,
                train: bool = True, steps: int = 0, seed: int | None = None,
                rtol: float = 1e-4, atol: float = 1e-5) -> torch.nn.Module:
    """The model compiled by Stax gives eager's outputs, input and parameter gradients,
    buffers (batch norm statistics) and, with `steps`, the losses of a few SGD steps."""
    torch.manual_seed(0)
    eager = make().train(train)
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, backend="stax")
    n = max(steps, 1)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
    opt_c = torch.optim.SGD(compiled_model.parameters(), lr=0.05)
    for step in range(n):
        xs_e, xs_c = clone_inputs(inputs), clone_inputs(inputs)
        if seed is not None:
            torch.manual_seed(seed + step)
        want = eager(*xs_e)
        if seed is not None:
            torch.manual_seed(seed + step)
        got = compiled(*xs_c)
        assert_close(got, want, rtol, atol)
        if not train:
            continue
        loss_e = _loss(want)
        loss_c = _loss(got)
        opt_e.zero_grad()
        opt_c.zero_grad()
        loss_e.backward()
        loss_c.backward()
        assert_close(loss_c, loss_e, rtol, atol)
        for (name, pe), pc in zip(eager.named_parameters(), compiled_model.parameters(),
                                  strict=True):
            assert (pe.grad is None) == (pc.grad is None), name
            if pe.grad is not None:
                assert_close(pc.grad, pe.grad, rtol, atol)
        for xe, xc in zip(xs_e, xs_c, strict=True):
            if isinstance(xe, torch.Tensor) and xe.requires_grad:
                assert_close(xc.grad, xe.grad, rtol, atol)
        opt_e.step()
        opt_c.step()
    for be, bc in zip(eager.buffers(), compiled_model.buffers(), strict=True):
        assert_close(bc, be, rtol, atol)
    return compiled_model


def _loss(out: Any) -> torch.Tensor:
    """A loss that weighs every output element differently (a plain sum hides errors)."""
    outs = out if isinstance(out, (tuple, list)) else [out]
    total = torch.zeros(())
    for o in outs:
        if o.is_floating_point():
            w = torch.linspace(-1, 1, o.numel()).reshape(o.shape)
            total = total + (o * w).sum() + (o * o).mean()
    return total
