"""Planning an ATen graph into Stax segments and PyTorch steps (no compiler involved)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from stax.torch.graph import GraphRunner  # noqa: E402


def plan(fn, *args):  # noqa: ANN001, ANN201
    gm = make_fx(fn, tracing_mode="fake")(*args)
    runner = GraphRunner(gm, "test", {})
    return runner, [(s.kind, [n.name for n in s.nodes]) for s in runner.steps]


def test_work_on_inputs_alone_waits_for_the_segment_reading_it() -> None:
    def f(x):  # noqa: ANN001, ANN202
        b = torch.special.erfinv(torch.tanh(x) * 0.1)
        c = torch.relu(x) + 1  # reads only x: computed where it is read, not handed on
        return b + c

    runner, steps = plan(f, torch.randn(3, 4))
    assert steps == [("stax", ["tanh", "mul"]), ("eager", ["erfinv"]),
                     ("stax", ["relu", "add", "add_1"])]
    assert [n.name for n in runner.steps[0].outputs] == ["mul"]
    assert {n.name: why for n, why in runner.fallbacks.items()} == {
        "erfinv": "no Stax translation for aten.erfinv.default"}


def test_returned_views_are_pytorch_views_and_input_views_stay_in_segments() -> None:
    def f(x, w):  # noqa: ANN001, ANN202
        y = torch.tanh(x @ w.t())  # w.t() is read by Stax only: computed in the segment
        return y.t(), x[1:]  # returned views alias as in eager: PyTorch makes them

    _, steps = plan(f, torch.randn(3, 4), torch.randn(5, 4))
    kinds = dict((names[0], kind) for kind, names in steps if len(names) == 1)
    assert kinds["t_1"] == "view" and kinds["slice_1"] == "view"
    segment = next(names for kind, names in steps if kind == "stax")
    assert "t" in segment and "mm" in segment and "tanh" in segment


def test_random_ops_keep_their_order() -> None:
    def f(x):  # noqa: ANN001, ANN202
        a = torch.bernoulli(torch.sigmoid(x))  # the second draw's input is ready first
        b = torch.bernoulli(torch.full_like(x, 0.5))
        return a + b

    _, steps = plan(f, torch.randn(4))
    eager = [names[0] for kind, names in steps if kind == "eager"]
    assert eager == ["bernoulli", "bernoulli_1"]


def test_unsupported_dtypes_fall_back_per_op() -> None:
    def f(x):  # noqa: ANN001, ANN202
        return (x.half() * 2).float() + x

    runner, _ = plan(f, torch.randn(4))
    reasons = {n.name: why for n, why in runner.fallbacks.items()}
    assert "dtype torch.float16" in reasons["mul"]


def test_no_segment_of_its_own_for_work_no_fallback_needs() -> None:
    def f(x, w, y):  # noqa: ANN001, ANN202
        b = torch.special.erfinv(x)  # the fallback reads only x
        return b @ w.t(), y + 1  # w.t() and y + 1 wait for the segment after it

    runner, steps = plan(f, torch.randn(3, 4), torch.randn(5, 4), torch.randn(2))
    assert steps == [("eager", ["erfinv"]), ("stax", ["t", "mm", "add"])]
    assert runner.steps[1].copies == tuple(n for n in runner.steps[1].nodes if n.name == "t")


def test_work_no_fallback_needs_joins_a_segment_made_anyway() -> None:
    def f(x, y):  # noqa: ANN001, ANN202
        t = torch.tanh(x)
        b = torch.special.erfinv(t)
        return b * 2, t.sum(), y + 1  # the sum joins tanh's segment; y + 1 the last one

    runner, steps = plan(f, torch.randn(3), torch.randn(2))
    assert steps == [("stax", ["tanh", "sum_1"]), ("eager", ["erfinv"]),
                     ("stax", ["mul", "add"])]
    assert [n.name for n in runner.steps[0].outputs] == ["tanh", "sum_1"]


def test_segment_outputs_exclude_values_only_its_own_views_read() -> None:
    def f(x):  # noqa: ANN001, ANN202
        a = torch.exp(x)
        v = a.t()  # only Stax reads it: computed by the segment, not handed on
        return torch.special.erfinv(a.sum()) + (v * 2).sum()

    runner, steps = plan(f, torch.randn(3, 4))
    segment = next(s for s in runner.steps if s.kind == "stax" and any(
        n.name == "t" for n in s.nodes))
    assert "exp" not in [n.name for n in segment.outputs]


def test_view_read_by_stax_and_by_a_fallback_is_computed_once() -> None:
    def f(x):  # noqa: ANN001, ANN202
        v = torch.exp(x).t()  # read by the fallback: the segment hands it on
        return torch.special.erfinv(v) + v

    _, steps = plan(f, torch.randn(3, 4))
    assert [k for k, _ in steps] == ["stax", "eager", "stax"]
    assert "t" in steps[0][1] and "t" not in steps[2][1]
