"""The straight-line runner a GraphRunner generates after its first call: same results as
the first (interpreted) call, new input signatures compile, and a segment failing in it
hands the values computed so far back to the interpreter (random draws are not repeated)."""

from __future__ import annotations

import warnings

import pytest
from conftest import run_sanitized
from torch_helpers import assert_close

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from stax.torch.graph import GraphRunner  # noqa: E402


def _runner(fn, *args) -> GraphRunner:  # noqa: ANN001
    return GraphRunner(make_fx(fn, tracing_mode="fake")(*args), "test", {})


def test_straight_line_runner_matches_and_keeps_views_and_dead_values_out() -> None:
    def f(x, w):  # noqa: ANN001, ANN202
        y = torch.tanh(x @ w.t())
        return y.t(), torch.special.erfinv(y * 0.5) + 1, x[1:]

    x, w = torch.randn(3, 4), torch.randn(5, 4)
    runner = _runner(f, x, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # erfinv's fallback warning
        first = runner([x, w])
    assert runner.fast is not None and "def run(args):" in runner.fast_source
    for _ in range(2):
        got = runner([x, w])
        assert_close(got, list(f(x, w)), rtol=1e-6, atol=1e-6)
        assert_close(got, first, rtol=0, atol=0)
        assert got[2]._base is x or got[2].data_ptr() == x[1:].data_ptr()  # a view, as eager
    # [TORCH2] the signature compiled last runs its program without the wrapper's checks
    assert "] = proven" in runner.fast_source
    # A new input signature (other strides) compiles inside the straight-line runner; the
    # first signature still runs its own program.
    xt = torch.randn(4, 3).t()
    assert_close(runner([xt, w]), list(f(xt, w)), rtol=1e-6, atol=1e-6)
    assert_close(runner([x, w]), first, rtol=0, atol=0)
    assert_close(runner([xt, w]), list(f(xt, w)), rtol=1e-6, atol=1e-6)
    segment = next(s for s in runner.steps if s.kind == "stax")
    assert len(runner.segments[segment.nodes].calls) == 2


@pytest.mark.parametrize("shape", [(), (1,), (7,)])
def test_straight_line_single_outputs(shape: tuple[int, ...]) -> None:
    """[TORCH2] One output (0-d: returned by `proven` as a NumPy scalar, so the checked
    call runs) stays a tensor of eager's shape and value on every call."""
    def f(x):  # noqa: ANN001, ANN202
        return ((x * 2 + 1).sum(0) if shape else (x * 2 + 1).sum(),)

    x = torch.randn(5, *shape)
    runner = _runner(f, x)
    for _ in range(3):
        (got,) = runner([x])
        (want,) = f(x)
        assert isinstance(got, torch.Tensor) and got.shape == want.shape
        assert_close(got, want, rtol=1e-5, atol=1e-5)


MISALIGNED = """
import numpy as np, torch
from torch.fx.experimental.proxy_tensor import make_fx
from stax.torch.graph import GraphRunner

def f(x):
    return (torch.exp(x) * 2 + x,)

x = torch.randn(1000)
runner = GraphRunner(make_fx(f, tracing_mode="fake")(x), "t", {})
for _ in range(2):
    runner([x])
assert "] = proven" in runner.fast_source
storage = np.zeros(4001, np.uint8)  # a tensor over bytes at an odd address: same signature
a = np.ndarray((1000,), np.float32, buffer=storage, offset=1)
a[:] = np.random.default_rng(0).standard_normal(1000)
t = torch.from_numpy(a)
assert not a.flags.aligned and t.shape == x.shape and t.stride() == x.stride()
for _ in range(2):
    (got,) = runner([t])
    torch.testing.assert_close(got, f(t.clone())[0], rtol=1e-5, atol=1e-5)
print("sanitized ok")
"""


def test_straight_line_misaligned_input_takes_the_checked_call(tmp_path) -> None:  # noqa: ANN001
    """[REVIEW] An input of the proven signature (shape, strides, dtype) at an address that is
    not a multiple of its element size (a tensor over a NumPy buffer at an odd offset) runs
    the checked call, which copies it: the unchecked entry's kernels would load misaligned
    floats (UBSan: "load of misaligned address")."""
    run_sanitized(MISALIGNED, tmp_path)


def test_failure_in_straight_line_runner_resumes_without_redrawing() -> None:
    def f(x, y):  # noqa: ANN001, ANN202
        a = torch.bernoulli(torch.full_like(x, 0.5))  # drawn once, by PyTorch
        return (torch.tanh(a * y) * 2,)

    x = torch.randn(4)
    runner = _runner(f, x, torch.randn(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bernoulli's fallback warning
        runner([x, torch.randn(2, 4)])
    assert runner.fast is not None and [n.name for n in runner.fallbacks] == ["bernoulli"]
    # The graph was traced for y of shape (2, 4): with (3, 4) the segment after the random
    # draw fails to trace (PyTorch's shape differs), after bernoulli ran.
    y = torch.randn(3, 4)
    torch.manual_seed(7)
    want = f(x, y)[0]
    torch.manual_seed(7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = runner([x, y])
    assert_close(got[0], want, rtol=1e-6, atol=1e-6)
    assert len(runner.fallbacks) > 1 and runner.fast is None
    assert any("eager PyTorch" in str(w.message) for w in caught)
    torch.manual_seed(8)
    want = f(x, y)[0]
    torch.manual_seed(8)
    assert_close(runner([x, y])[0], want, rtol=1e-6, atol=1e-6)  # the new plan
    assert runner.fast is not None
    torch.manual_seed(9)
    want = f(x, y)[0]
    torch.manual_seed(9)
    assert_close(runner([x, y])[0], want, rtol=1e-6, atol=1e-6)  # its straight-line runner
