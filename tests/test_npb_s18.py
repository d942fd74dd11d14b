"""[NPB5] A Python loop with a break per iteration traced iteration by iteration (npbench's
channel_flow: `while udiff > .001`, ~1,000 iterations of ~1,500 ops on 61 x 61 arrays): past
MAX_CALL_OPS traced ops on arrays of at most CHEAP_ARRAY elements the call runs in NumPy (from
then on), with NumPy's results and NumPy's in-place writes to the arguments; a loop over larger
arrays keeps its compiled segments and replays its tape. Results vs NumPy computed here."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.frontend import breaks
from stax.frontend.breaks import GraphBreakWarning

TRACED_TOO_LONG = "ops across its breaks"


def channel(u: Any, v: Any, p: Any, dt: float, limit: int) -> Any:
    """channel_flow's pattern in small form: copies, stencils on slices with periodic
    boundaries written into the arguments in place, walls, a Python step counter and a
    convergence test on the data (a break per iteration)."""
    udiff = 1.0
    steps = 0
    while abs(udiff) > 1e-12 and steps < limit:
        un = u.copy()
        vn = v.copy()
        b = np.zeros_like(u)
        b[1:-1, 1:-1] = (un[1:-1, 2:] - un[1:-1, :-2]) ** 2 + (vn[2:, 1:-1] - vn[:-2, 1:-1]) * 0.5
        b[1:-1, -1] = (un[1:-1, 0] - un[1:-1, -2]) * 0.25
        p[1:-1, 1:-1] = (
            0.25 * (p[1:-1, 2:] + p[1:-1, :-2] + p[2:, 1:-1] + p[:-2, 1:-1]) - 0.01 * b[1:-1, 1:-1]
        )
        u[1:-1, 1:-1] = (
            un[1:-1, 1:-1]
            - dt * un[1:-1, 1:-1] * (un[1:-1, 1:-1] - un[1:-1, :-2])
            - dt * (p[1:-1, 2:] - p[1:-1, :-2])
            + dt
        )
        v[1:-1, 1:-1] = vn[1:-1, 1:-1] - dt * vn[1:-1, 1:-1] * (vn[1:-1, 1:-1] - vn[:-2, 1:-1])
        u[0, :] = 0
        u[-1, :] = 0
        udiff = (np.sum(u) - np.sum(un)) / (np.sum(u) + 1.0)
        steps += 1
    return steps, udiff


def run(fn: Any, make: Callable[[], tuple[Any, ...]], calls: int = 2) -> Any:
    """`stax.jit(fn)` called `calls` times on fresh arguments from `make` (their layouts
    kept): the result and every array argument (written in place) vs NumPy's on other fresh
    ones. Returns the jitted function."""
    jf = stax.jit(fn)
    for _ in range(calls):
        mine, theirs = make(), make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            got = jf(*mine)
        assert_matches(got, fn(*theirs))
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(m, np.ndarray):
                assert_matches(m, t)
    return jf


def found(jf: Any, args: tuple[Any, ...]) -> list[str]:
    return [str(b) for b in jf.breaks.get(jf.key(args), [])]


def grids(
    shape: tuple[int, int],
    dtype: str = "float64",
    layout: str = "c",
    bad: tuple[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u, v (small random) and p (ones) over `shape`, C-ordered, transposed (F-ordered) or
    every other column of a wider array; `bad` puts a value at one point of u or v."""
    u, v = (make_array(shape, dtype, seed=s, low=0, high=0.1) for s in (1, 2))
    if bad is not None:
        (u if bad[0] == "u" else v)[min(3, shape[0] - 1), min(4, shape[1] - 1)] = bad[1]
    out = (u, v, np.ones(shape, dtype))
    if layout == "transposed":
        return tuple(np.ascontiguousarray(a.T).T for a in out)  # type: ignore[return-value]
    if layout == "strided":
        return tuple(np.repeat(a, 2, axis=1)[:, ::2] for a in out)  # type: ignore[return-value]
    return out


def test_a_long_loop_of_small_iterations_runs_in_numpy_past_the_op_budget() -> None:
    """At the real MAX_CALL_OPS: ~55 ops per iteration, 2,000 iterations; the call switches
    to NumPy (restarting: the arguments are written once, as NumPy writes them)."""

    def make() -> tuple[Any, ...]:
        return (*grids((12, 10)), 1e-3, 2000)

    jf = run(channel, make)
    assert any(TRACED_TOO_LONG in b and "runs in NumPy from now on" in b for b in found(jf, make()))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_the_switch_keeps_numpys_results_over_dtypes_and_layouts(
    monkeypatch: pytest.MonkeyPatch, dtype: str, layout: str
) -> None:
    monkeypatch.setattr(breaks, "MAX_CALL_OPS", 500)

    def make() -> tuple[Any, ...]:
        return (*grids((9, 11), dtype, layout), 2e-3, 40)

    jf = run(channel, make)
    assert any(TRACED_TOO_LONG in b for b in found(jf, make()))


@pytest.mark.parametrize("bad", [("u", np.nan), ("u", np.inf), ("v", np.nan), ("v", -np.inf)])
def test_nan_and_inf_in_the_data(monkeypatch: pytest.MonkeyPatch, bad: tuple[str, float]) -> None:
    """NaN in u makes the convergence test False at once; in v it spreads through v's
    stencil while the loop runs on."""
    monkeypatch.setattr(breaks, "MAX_CALL_OPS", 500)
    with np.errstate(all="ignore"):
        run(channel, lambda: (*grids((8, 8), bad=bad), 1e-3, 40))


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (2, 5)])
def test_tiny_grids(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, int]) -> None:
    monkeypatch.setattr(breaks, "MAX_CALL_OPS", 500)
    run(channel, lambda: (*grids(shape), 1e-3, 40))


@pytest.mark.parametrize("shape", [(3, 0), (0, 4)])
def test_empty_grids_raise_numpys_index_error(shape: tuple[int, int]) -> None:
    """An empty grid has no column 0 (`un[1:-1, 0]`) or row 0 (`u[0, :] = 0`): NumPy's
    IndexError, from the jitted function too."""
    with pytest.raises(IndexError):
        channel(*grids(shape), 1e-3, 40)
    with pytest.raises(IndexError), warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        stax.jit(channel)(*grids(shape), 1e-3, 40)


def test_a_loop_over_larger_arrays_keeps_its_segments_and_replays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above CHEAP_ARRAY elements the budget does not apply: compiled segments, a replayed
    warm call, NumPy's results."""
    monkeypatch.setattr(breaks, "MAX_CALL_OPS", 200)

    def relax(x: Any, y: Any) -> Any:
        k = 0
        while np.abs(x).sum() > 1e-3 * x.size and k < 6:
            x = 0.5 * x + 0.25 * np.roll(x, 1) - 0.1 * y
            y[::2] = y[::2] * 0.5
            k += 1
        return x, k

    n = breaks.CHEAP_ARRAY + 1

    def make() -> tuple[Any, ...]:
        return make_array((n,), "float64", seed=3), make_array((n,), "float64", seed=4)

    jf = run(relax, make)
    assert not any(TRACED_TOO_LONG in b for b in found(jf, make()))
    assert jf.replay_info().replayed >= 1


def test_a_short_loop_keeps_replaying() -> None:
    """Under the budget the loop's segments compile once and warm calls replay the tape."""

    def make() -> tuple[Any, ...]:
        return (*grids((10, 10)), 1e-3, 5)

    jf = run(channel, make, calls=3)
    assert not any(TRACED_TOO_LONG in b for b in found(jf, make()))
    assert jf.replay_info().replayed >= 1


def test_the_budget_is_checked_at_breaks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ops traced after the last break past the budget: the call ends compiled (restarting in
    NumPy at its end would have traced for nothing)."""
    monkeypatch.setattr(breaks, "MAX_CALL_OPS", 40)

    def steps(x: Any) -> Any:
        if x.sum() > 0:  # one break, early
            x = -x
        for _ in range(30):
            x = np.sin(x) * 0.5 + 0.25
        return x

    def make() -> tuple[Any, ...]:
        return (make_array((5, 7), "float64", seed=8),)

    jf = run(steps, make)
    assert not any(TRACED_TOO_LONG in b for b in found(jf, make()))
