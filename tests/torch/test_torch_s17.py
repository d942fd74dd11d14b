"""[TORCH9] Extern calls' tensors over Stax's arrays: shared memory where `from_numpy` allows
it, a copy for read-only and negatively strided arrays; a model whose convolution and matrix
product read constants made in the graph equals eager's, outputs and gradients."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from torch_helpers import assert_close

torch = pytest.importorskip("torch")
from stax.torch import externs  # noqa: E402

nn = torch.nn
F = nn.functional


def test_tensor_of_array() -> None:
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 0, 1)
    t = externs._tensor(a)
    assert t.data_ptr() == a.ctypes.data and t.stride() == (1, 12, 4)  # shared, as strided
    np.testing.assert_array_equal(t.numpy(), a)
    flipped = a[::-1, :, ::-2]
    np.testing.assert_array_equal(externs._tensor(flipped).numpy(), flipped)
    frozen = np.arange(6.0)
    frozen.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # from_numpy warns on a read-only array
        t = externs._tensor(frozen)
    t += 1  # a copy: the read-only array is unchanged
    np.testing.assert_array_equal(frozen, np.arange(6.0))
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0) + 1)


class ConstantWeights(nn.Module):
    """A convolution by a learned and a constant kernel, a linear layer and a product by a
    constant matrix (the constants are made in the graph)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 30, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ones = torch.ones(4, 3, 3, 3, dtype=x.dtype) * 0.25
        h = torch.relu(self.conv(x) + F.conv2d(x, ones, padding=1)).flatten(1)
        return self.fc(h) + h @ torch.ones(4 * 30, 5, dtype=x.dtype)


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, (1e-4, 1e-4)),
                                          (torch.float64, (1e-10, 1e-12))])
def test_constant_operands(dtype: torch.dtype, tol: tuple[float, float]) -> None:
    torch.manual_seed(0)
    eager = ConstantWeights().to(dtype)
    compiled = torch.compile(model := copy.deepcopy(eager), backend="stax")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for batch in (2, 2, 3):
            x = torch.randn(batch, 3, 6, 5, dtype=dtype)
            xs = [x.clone().requires_grad_(), x.clone().requires_grad_()]
            want, got = eager(xs[0]), compiled(xs[1])
            assert_close(got, want, *tol)
            for out, m in ((want, eager), (got, model)):
                m.zero_grad()
                out.square().sum().backward()
            assert_close([p.grad for p in model.parameters()] + [xs[1].grad],
                         [p.grad for p in eager.parameters()] + [xs[0].grad], *tol)
    assert not [str(c.message) for c in caught if "run in eager" in str(c.message)]
