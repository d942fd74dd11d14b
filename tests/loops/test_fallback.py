"""Loops that cannot be compiled once fall back within a bounded amount of work (issue 10 item 2):
a loop whose body breaks with a new segment per iteration stops compiling after
MAX_SITE_SEGMENTS, a trace unrolled past MAX_TRACE_OPS (nested `np.ndindex` loops) stops
there; the function then runs in NumPy, with NumPy's results and side effects on arguments,
and the break names the line. The bounds are counted (segments compiled, ops traced)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax
from stax.frontend import breaks
from stax.frontend import trace as trace_module
from stax.frontend.breaks import GraphBreakWarning


def springs(pos: Any, force: Any) -> Any:
    """Pythran's `wave` kernel: an assert on data in every iteration (a break per iteration)."""
    for i in range(1, pos.shape[0]):
        dx, dy = pos[i] - pos[i - 1]
        dist = np.sqrt(dx**2 + dy**2)
        assert dist != 0
        f = np.array([dx / dist, dy / dist]) * -2.0
        force[i - 1] -= f
        force[i] += f
    return force.sum(axis=0) + pos[-1]


def wrap(pos: Any, offset: Any, bound: Any) -> Any:
    return (pos + offset) % bound


def local_maxima(data: Any) -> Any:
    """Pythran's `local_maxima` kernel: nested `np.ndindex` loops with tuple indices."""
    wsize = data.shape
    result = np.ones(data.shape, bool)
    for pos in np.ndindex(data.shape):
        myval = data[pos]
        for offset in np.ndindex(wsize):
            neighbor = tuple(wrap(p, o - w // 2, w)
                             for (p, o, w) in zip(pos, offset, wsize, strict=True))
            result[pos] &= (data[neighbor] <= myval)
    return result


def scale_into(x: Any, out: Any) -> Any:
    for idx in np.ndindex(x.shape):
        if idx[0] != 3:  # a Python `if` on the index: the loops unroll (np.ndindex's roll)
            out[idx] = x[idx] * 2.0 + out[idx]
    return out.sum()


class Counts:
    """Programs compiled and ops traced while counting (monkeypatched in)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.compiles = self.ops = 0
        compile_traced, add = stax.api.compile_traced, trace_module.Builder.add

        def counted_compile(*args: Any, **kwargs: Any) -> Any:
            self.compiles += 1
            return compile_traced(*args, **kwargs)

        def counted_add(builder: Any, *args: Any, **kwargs: Any) -> Any:
            self.ops += 1
            return add(builder, *args, **kwargs)

        monkeypatch.setattr(stax.api, "compile_traced", counted_compile)
        monkeypatch.setattr(trace_module.Builder, "add", counted_add)


def call_both(jf: Any, fn: Any, *args: Any) -> list[str]:
    """Call `jf` and `fn` on copies of `args`; results and mutated arguments compared. The
    breaks warned about."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", GraphBreakWarning)
        got = jf(*mine)
    assert_matches(got, fn(*theirs))
    for m, t in zip(mine, theirs, strict=True):
        assert_matches(m, t)
    return [str(w.message) for w in record]


@pytest.mark.parametrize("n", [40, 600])  # unrolled by stax.loops first, or not (> UNROLL_LIMIT)
def test_a_break_in_every_iteration_stops_compiling_after_a_few(
        monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    counts = Counts(monkeypatch)
    rng = np.random.default_rng(n)
    pos = np.cumsum(rng.uniform(0.5, 1.5, (n, 2)), axis=0)
    jf = stax.jit(springs)
    warned = call_both(jf, springs, pos, np.zeros((n, 2)))
    assert counts.compiles <= breaks.MAX_SITE_SEGMENTS
    assert counts.ops < 100 * (breaks.MAX_SITE_SEGMENTS + 2)  # a few iterations, whatever n
    assert any("test_fallback.py:" in w and "new compiled segment each time" in w
               for w in warned), warned
    counts.compiles = 0
    assert not call_both(jf, springs, pos + 1.0, np.ones((n, 2)))  # NumPy, warned once
    assert counts.compiles == 0


def test_nested_ndindex_loops_stop_tracing_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "MAX_TRACE_OPS", 3000)
    counts = Counts(monkeypatch)
    data = np.random.default_rng(0).permutation(24).reshape(4, 3, 2).astype(np.float64)
    jf = stax.jit(local_maxima)
    warned = call_both(jf, local_maxima, data)
    assert counts.compiles == 0
    # a plain trace and a segmented one, each cut at 3000, after the loops' attempts to roll
    # (np.ndindex loops roll since s11 HUNT4; here a body's `result[pos] &=` unrolls them)
    assert counts.ops <= 3 * 3000
    assert any("grew by 3000 ops without a break, at test_fallback.py:" in w for w in warned), \
        warned
    with pytest.raises(NotImplementedError, match=r"reached 3000 ops at test_fallback\.py:\d+"):
        stax.jit(local_maxima, strict=True)(data)


def test_an_unrolled_loop_writing_an_argument_runs_once_in_numpy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "MAX_TRACE_OPS", 2000)
    counts = Counts(monkeypatch)
    x = np.arange(40 * 30, dtype=np.float32).reshape(40, 30).T  # strided
    jf = stax.jit(scale_into)
    assert call_both(jf, scale_into, x, np.full((30, 40), 0.5, np.float32))
    assert counts.compiles == 0 and counts.ops <= 2 * 2000 + 10
    assert call_both(jf, scale_into, x[:, ::-1], np.ones((30, 40), np.float32)) == []


def halve_until(u: Any, tol: float) -> Any:
    steps = 0
    while np.abs(u).max() > tol:  # a break per iteration, the same segment each time
        u = np.sqrt(u * u) * 0.5 + u * 0.0
        steps += 1
    return u, steps


def test_the_bound_counts_ops_since_the_last_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """npbench's channel_flow: a `while` on data whose body is one segment (compiled once);
    the call traces more than MAX_TRACE_OPS ops in all, never that many between breaks."""
    monkeypatch.setattr(trace_module, "MAX_TRACE_OPS", 500)
    counts = Counts(monkeypatch)
    u = np.linspace(-1.0, 1.0, 33)
    warned = call_both(stax.jit(halve_until), halve_until, u, 1e-30)
    assert counts.ops > 1000  # 100 iterations
    assert counts.compiles <= 3 and not any("whole function" in w for w in warned), warned


def test_small_unrolled_loops_still_compile() -> None:
    """Under the bound nothing changes: a short `np.ndindex` loop compiles (no break)."""
    x = np.arange(6.0).reshape(2, 3)
    jf = stax.jit(scale_into)
    assert call_both(jf, scale_into, x, np.ones((2, 3))) == []


def centered_stats(x: Any) -> Any:
    """Reductions that each need the one before: one kernel apiece (nothing fuses)."""
    a = x.sum(axis=0)
    b = (x - a).max(axis=1)
    c = (x - b[:, None]).min(axis=0)
    d = (x * c).sum(axis=1)
    return (x + d[:, None]).max(axis=0) + a


def test_a_program_of_too_many_kernels_runs_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """More kernels than MAX_KERNELS would take minutes of g++: the function runs in NumPy
    (strict=True: the error) and nothing is compiled."""
    monkeypatch.setattr(stax.runtime.wrapper, "MAX_KERNELS", 3)
    counts = Counts(monkeypatch)
    # strided; axes of more than 4 elements (reductions over 2..4 are unrolled into their
    # consumers, [PERF11], which leaves fewer kernels)
    x = np.arange(30.0).reshape(5, 6).T
    warned = call_both(stax.jit(centered_stats), centered_stats, x)
    assert any("kernels (ops that do not fuse; more than 3)" in w for w in warned), warned
    with pytest.raises(NotImplementedError, match=r"needs \d+ kernels"):
        stax.jit(centered_stats, strict=True)(x)
    monkeypatch.setattr(stax.runtime.wrapper, "MAX_KERNELS", 400)
    counts.compiles = 0
    assert call_both(stax.jit(centered_stats), centered_stats, x) == []  # under it: compiled
    assert counts.compiles == 1


def smooth_steps(u: Any, steps: int) -> Any:
    for _ in range(steps):
        u = np.sin(u) * 0.5 + np.cos(u[::-1]) * 0.25 + u.mean()
    return u


@pytest.mark.parametrize(("bound", "rolled"), [(4, False), (400, True)])
def test_a_loop_body_of_more_ops_than_kernels_allowed_is_unrolled(
        monkeypatch: pytest.MonkeyPatch, bound: int, rolled: bool) -> None:
    """A body of more ops than MAX_KERNELS could need as many kernels: it is not rolled (its
    background compile could not fall back); the unrolled trace meets the program's bounds."""
    monkeypatch.setattr(stax.loops.recognize, "MAX_KERNELS", bound)
    u = np.linspace(-1.0, 1.0, 9)
    jf = stax.jit(smooth_steps)
    assert call_both(jf, smooth_steps, u, 5) == []
    (record,) = stax.loops.records(jf)
    assert record.compiled is rolled
    assert rolled or "the body traces to 15 ops (more than 4)" in record.reason, record.reason
