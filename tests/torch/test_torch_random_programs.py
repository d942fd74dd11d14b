"""Random chains of PyTorch ops (hypothesis) compiled by Stax equal eager, forward and
gradients."""

from __future__ import annotations

import pytest
from torch_helpers import assert_close

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

UNARY = [torch.tanh, torch.sigmoid, torch.exp, torch.relu, torch.abs, torch.neg,
         lambda x: x * x, lambda x: torch.clamp(x, -0.5, 2.0), torch.nn.functional.silu,
         lambda x: torch.softmax(x, -1), lambda x: x - x.mean(-1, keepdim=True),
         lambda x: x / (x.norm(dim=-1, keepdim=True) + 1)]
BINARY = [torch.add, torch.sub, torch.mul, torch.maximum,
          lambda a, b: a * torch.sigmoid(b), lambda a, b: torch.where(a > b, a, b * 0.5)]


@hypothesis.settings(max_examples=6, deadline=None, derandomize=True)
@hypothesis.given(ops=st.lists(st.tuples(st.integers(0, len(UNARY) - 1),
                                         st.integers(0, len(BINARY) - 1)),
                               min_size=1, max_size=4),
                  transpose=st.booleans(), broadcast=st.booleans())
def test_random_elementwise_chains(ops: list[tuple[int, int]], transpose: bool,
                                   broadcast: bool) -> None:
    def f(x, y):  # noqa: ANN001, ANN202
        h = x
        for u, b in ops:
            h = BINARY[b](UNARY[u](h), y)
        return h.sum(0), h

    torch.manual_seed(len(ops))
    x = torch.randn(6, 5).t() if transpose else torch.randn(5, 6)
    y = torch.randn(6) if broadcast else torch.randn(5, 6)
    xe, ye = x.clone().requires_grad_(), y.clone().requires_grad_()
    xc, yc = x.clone().requires_grad_(), y.clone().requires_grad_()
    want = f(xe, ye)
    got = torch.compile(f, backend="stax")(xc, yc)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    (want[0].sum() + (want[1] * want[1]).mean()).backward()
    (got[0].sum() + (got[1] * got[1]).mean()).backward()
    assert_close((xc.grad, yc.grad), (xe.grad, ye.grad), rtol=1e-4, atol=1e-5)
    torch._dynamo.reset()
