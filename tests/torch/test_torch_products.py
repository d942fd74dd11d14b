"""Matrix products on views (NumPy's matmul reading the operands' buffers through their
views), sums over merged axes, and constant tensors: values and gradients equal eager's."""

from __future__ import annotations

import pytest
from torch_helpers import assert_close, check_model

torch = pytest.importorskip("torch")
import stax.torch  # noqa: E402
from stax.torch.externs import _replay  # noqa: E402
from stax.torch.graph import _merged_groups  # noqa: E402

nn = torch.nn


class Products(nn.Module):
    """Linear layers (addmm of a transposed weight), a product with a transposed activation,
    attention-like batched products of permuted and expanded operands, and baddbmm."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 8)
        self.w = nn.Parameter(torch.randn(5, 8))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.tanh(self.lin(x))  # (b, s, 8)
        q = h.view(*h.shape[:2], 2, 4).permute(0, 2, 1, 3)  # (b, 2, s, 4)
        scores = (q @ q.transpose(-1, -2)).softmax(-1)  # (b, 2, s, s)
        mixed = scores @ q  # (b, 2, s, 4)
        flat = mixed.permute(0, 2, 1, 3).reshape(-1, 8)
        out = flat @ self.w.t() + h.reshape(-1, 8).t().sum(0, keepdim=True).t()
        b = torch.baddbmm(h[:, :, :4], h, self.w.t()[:, :4].expand(h.shape[0], 8, 4),
                          beta=0.5, alpha=-2.0)
        return out, b


def test_products_of_views_train_like_eager() -> None:
    x = torch.randn(3, 5, 6, requires_grad=True)
    check_model(Products, [x], steps=2, rtol=1e-4, atol=1e-5)


def test_products_of_views_read_buffers_not_transposed_copies() -> None:
    torch.manual_seed(0)
    report = stax.torch.explain(Products(), torch.randn(3, 5, 6), backward=True)
    assert report.fallbacks == ()
    wrappers = [r.compilation.program.wrapper for g in report.graphs for s in g.segments
                for r in s.reports]
    calls = [line for w in wrappers for line in w.splitlines() if "matmul" in line]
    # every product an extern call on the buffers, several through transposing views
    assert calls and all("externs['torch.matmul[" in line for line in calls), calls
    assert sum(".permute" in line or ".t(" in line for line in calls) >= 3, calls


def test_products_float64_strided_inputs_and_empty_batch() -> None:
    torch.manual_seed(0)
    model = Products().double().eval()
    compiled = torch.compile(model, backend="stax")
    with torch.no_grad():
        for x in (torch.randn(3, 5, 6, dtype=torch.float64),
                  torch.randn(6, 5, 3, dtype=torch.float64).permute(2, 1, 0),
                  torch.randn(3, 10, 6, dtype=torch.float64)[:, ::2],
                  torch.randn(0, 5, 6, dtype=torch.float64)):
            assert_close(compiled(x), model(x), rtol=1e-10, atol=1e-12)


def test_addmm_zero_beta_ignores_nan_bias_and_integer_products() -> None:
    def f(bias, a, b, i, j):  # noqa: ANN001, ANN202
        return (torch.addmm(bias, a, b.t(), beta=0), torch.addmm(bias, a, b.t(), alpha=3.0),
                i @ j.t())

    args = (torch.full((4,), float("nan")), torch.randn(3, 5), torch.randn(4, 5),
            torch.randint(-9, 9, (3, 5)), torch.randint(-9, 9, (4, 5)))
    assert_close(torch.compile(f, backend="stax")(*args), f(*args))


def test_sum_over_merged_axes() -> None:
    def f(x, y):  # noqa: ANN001, ANN202
        return (x.reshape(-1, x.shape[-1]).sum(0), x.reshape(x.shape[0], -1).sum(1,
                keepdim=True), y.view(4, 6).sum(0), (x * 2).reshape(6, 20).sum([0, 1]))

    for dtype in (torch.float32, torch.float64):
        x = torch.randn(2, 3, 20, dtype=dtype)
        x[0, 1, 2] = float("inf")
        y = torch.randn(6, 4, dtype=dtype)  # view (6, 4) -> (4, 6) merges no axes
        assert_close(torch.compile(f, backend="stax", dynamic=False)(x, y), f(x, y),
                     rtol=1e-5, atol=1e-5)


def test_merged_groups() -> None:
    assert _merged_groups((32, 64, 1024), (2048, 1024)) == [([0, 1], [0]), ([2], [1])]
    assert _merged_groups((24,), (2, 3, 4)) == [([0], [0, 1, 2])]
    assert _merged_groups((2, 3, 4), (6, 4)) == [([0, 1], [0]), ([2], [1])]
    assert _merged_groups((6, 4), (4, 6)) == [([0, 1], [0, 1])]  # one group: no axis kept
    assert _merged_groups((1, 6), (6,)) is None  # sizes of 1: left to the table's sum


def test_constant_tensors_in_segments() -> None:
    def f(x):  # noqa: ANN001, ANN202
        z = torch.zeros(3, 4) + x
        full = torch.full((3, 4), 7.0) * x
        ramp = torch.arange(12.0).reshape(3, 4) - x  # not one value: an array constant
        return z, full, ramp, torch.ones(0, 4) + x[:0], torch.ones(1) * x.sum()

    x = torch.randn(3, 4)
    assert_close(torch.compile(f, backend="stax")(x), f(x))


def test_slice_scatter() -> None:
    def f(a, s1, s2, s3):  # noqa: ANN001, ANN202
        scatter = torch.ops.aten.slice_scatter
        return (scatter(a, s1, 1, 2, 5), scatter(a, s2, 0, -2, None), scatter(a, s3, 1, 0, 100),
                scatter(a, s3[:, :0], 1, 3, 3))

    for dtype in (torch.float32, torch.int64):
        a, s1, s2, s3 = (torch.randn(n, m).to(dtype) for n, m in ((4, 6), (4, 3), (2, 6),
                                                                   (4, 6)))
        assert_close(torch.compile(f, backend="stax")(a, s1, s2, s3), f(a, s1, s2, s3))
    assert stax.torch.explain(f, a, s1, s2, s3).fallbacks == ()


def test_products_of_selected_sliced_and_constant_operands() -> None:
    """PyTorch's matmul on the buffers: operands reached through select and slice views
    (replayed as ATen ops on the buffers' tensors) and a constant operand."""
    def f(x, y):  # noqa: ANN001, ANN202
        ramp = torch.arange(12.0, dtype=x.dtype).reshape(4, 3)
        return (x + 1)[1] @ (y * 2)[:, 1:4], ramp @ (y - 1)[:3, ::2], x[0].t() @ ramp

    for dtype in (torch.float32, torch.float64):
        x, y = torch.randn(2, 4, 5, dtype=dtype), torch.randn(5, 6, dtype=dtype)
        assert_close(torch.compile(f, backend="stax")(x, y), f(x, y), rtol=1e-5, atol=1e-6)
        assert stax.torch.explain(f, x, y).fallbacks == ()


@pytest.mark.parametrize("seed", range(4))
def test_replayed_transpose_chains_match_pytorch(seed: int) -> None:
    """Consecutive transposes compose into one permute (`permute(permute(w))` is every
    linear layer's weight in its backward graph): the replay gives PyTorch's view."""
    gen = torch.Generator().manual_seed(seed)
    aten = torch.ops.aten
    x = torch.randn(2, 3, 4, 5, generator=gen)
    chain = []
    view = x
    for _ in range(4):
        if torch.rand((), generator=gen) < 0.5:
            order = torch.randperm(4, generator=gen).tolist()
            chain.append((aten.permute.default, (order,), {}))
            view = view.permute(order)
        else:
            d0, d1 = torch.randint(-4, 4, (2,), generator=gen).tolist()
            chain.append((aten.transpose.int, (d0, d1), {}))
            view = view.transpose(d0, d1)
    replay, shape = _replay(chain, tuple(x.shape))
    assert shape == tuple(view.shape)
    assert torch.equal(replay(x), view)


def test_linear_backward_reads_the_weight_without_a_copy() -> None:
    """The backward's `mm(dy, permute(permute(w)))` reads the weight's buffer: no kernel
    copies it (the only kernel is the bias gradient's column sum)."""
    torch.manual_seed(0)
    report = stax.torch.explain(nn.Linear(6, 5), torch.randn(4, 6, requires_grad=True),
                                backward=True)
    backward = report.graphs[-1]
    [program] = [r.compilation.program for s in backward.segments for r in s.reports]
    assert len(program.plans) == 1, program.wrapper


def test_sums_of_products_merge_into_one_product() -> None:
    """`mm(a1, b1) + mm(a2, b2).t() + ...` (plain and transposed terms) becomes one product of
    the concatenated operands where they are smaller than the result; values and gradients
    equal eager's (float32 and float64), a wide inner axis and integers stay as they are."""
    def f(a, b, c, d, e, g):  # noqa: ANN001, ANN202
        return a @ b + (d.t() @ c.t()).t() + e @ g

    for dtype in (torch.float32, torch.float64):
        args = [torch.randn(*s, dtype=dtype, requires_grad=True)
                for s in ((40, 3), (3, 30), (40, 2), (2, 30), (40, 4), (4, 30))]
        got = torch.compile(f, backend="stax")(*args)
        want = f(*[a.detach().requires_grad_() for a in args])
        assert_close(got, want, rtol=1e-5, atol=1e-5)
        grads = torch.autograd.grad(got.square().sum(), args)
        clones = [a.detach().requires_grad_() for a in args]
        assert_close(grads, torch.autograd.grad(f(*clones).square().sum(), clones),
                     rtol=1e-5, atol=1e-5)
    [graph] = stax.torch.explain(f, *args).graphs
    assert graph.code.count("aten.mm.default(") == 1 and "aten.cat.default(" in graph.code

    def transposed_sum(a, b, c, d):  # noqa: ANN001, ANN202 - the sum is column-major
        return ((b.t() @ a.t()).t() + (d.t() @ c.t()).t()).t().view(-1)

    few = [a.detach() for a in args[:4]]
    assert_close(torch.compile(transposed_sum, backend="stax")(*few), transposed_sum(*few),
                 rtol=1e-5, atol=1e-5)
    [graph] = stax.torch.explain(transposed_sum, *few).graphs
    assert "aten.cat.default(" in graph.code, graph.code
    ints = [torch.randint(-5, 5, a.shape) for a in args]
    assert torch.equal(torch.compile(f, backend="stax")(*ints), f(*ints))
    wide = [torch.randn(4, 50), torch.randn(50, 4), torch.randn(4, 50), torch.randn(50, 4)]
    [graph] = stax.torch.explain(lambda a, b, c, d: a @ b + c @ d, *wide).graphs
    assert graph.code.count("aten.mm.default(") == 2 and "aten.cat" not in graph.code
