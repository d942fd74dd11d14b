"""How Python starts a loop driver: `stax_entry<suffix>` through the compiled fast call (few
shared buffers), or `stax_loop<suffix>` through ctypes (more than the fast call takes, or no
fast call); and a trace's loop bodies compiled on a background thread (`compile_soon`)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import stax
from stax.loops import runner
from stax.runtime.fast import MAX_ARGS


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def running_sum(y, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15):
    for t in range(6):
        y = y + t * (a0 - a1 + a2 - a3 + a4 - a5 + a6 - a7 + a8 - a9 + a10 - a11 + a12 - a13 +
                     a14 - a15)
    return y


def out_of_bounds(x, idx):
    for i in range(x.shape[0]):
        x[i] = x[idx[i]] + 1.0
    return x


def _body(fn) -> runner.LoopBody:
    key = next(k for k in reversed(runner.BODIES) if fn.__code__.co_filename in k and
               f":{fn.__code__.co_firstlineno + 1} " in k)
    return runner.BODIES[key]


def _trisolv_inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return np.tril(rng.random((n, n))) + n * np.eye(n), np.zeros(n), rng.random(n)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("n", [2, 5, 33])
def test_trisolv_through_either_entry(monkeypatch, fast, n):
    if not fast:  # the ctypes path: as with STAX_FASTCALL=0
        monkeypatch.setattr(runner, "fastcall", lambda: None)
    fn = stax.jit(trisolv)
    for _ in range(2):  # the first call, and a warm one with the kept pointer tables
        L, x, b = _trisolv_inputs(n)
        want = trisolv(L.copy(), x.copy(), b)
        got = fn(L, x, b)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(x, want, rtol=1e-12)  # written back to the caller's array
    source = _body(trisolv).source
    assert ("stax_entry" in source) and _body(trisolv).decision.startswith("all iterations")


def test_more_shared_buffers_than_the_fast_call_takes():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(9) for _ in range(16)]
    y = rng.standard_normal(9)
    fn = stax.jit(running_sum)
    for _ in range(2):
        np.testing.assert_allclose(fn(y, *arrays), running_sum(y, *arrays), rtol=1e-12)
    body = _body(running_sum)
    assert len(body.graph.inputs) - 1 + 2 > MAX_ARGS  # index aside: carried y + 16 invariants
    assert "all iterations in one C call" in body.decision
    assert "stax_entry" not in body.source and "stax_loop" in body.source


@pytest.mark.parametrize("fast", [True, False])
def test_an_index_error_inside_the_driver_through_either_entry(monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(runner, "fastcall", lambda: None)
    fn = stax.jit(out_of_bounds)
    x = np.arange(4.0)
    np.testing.assert_array_equal(fn(x.copy(), np.array([0, 0, 1, 2])),
                                  out_of_bounds(x.copy(), np.array([0, 0, 1, 2])))
    with pytest.raises(IndexError):
        out_of_bounds(x.copy(), np.array([0, 9, 1, 2]))
    with pytest.raises(IndexError):
        fn(x.copy(), np.array([0, 9, 1, 2]))
    # the flags were cleared: the next call runs
    np.testing.assert_array_equal(fn(x.copy(), np.array([3, 0, 1, 2])),
                                  out_of_bounds(x.copy(), np.array([3, 0, 1, 2])))


def test_bodies_compile_in_the_background_and_the_first_run_waits(monkeypatch):
    started: list[str] = []
    real = runner.compile_bodies

    def spy(bodies):
        started.append(threading.current_thread().name)
        return real(bodies)

    monkeypatch.setattr(runner, "compile_bodies", spy)
    L, x, b = _trisolv_inputs(6)
    want = trisolv(L.copy(), x.copy(), b)
    np.testing.assert_allclose(stax.jit(trisolv)(L, x, b), want, rtol=1e-12)
    body = _body(trisolv)
    assert started == ["stax loop bodies"]  # once, on the background thread
    # joined by the first run, then dropped; or finished before the run needed the runner
    # (a loaded machine: the run then takes the runner it set, without a join)
    assert body.building is None or not body.building.is_alive()
    assert body.runner is not None


def test_a_failed_background_compile_is_raised_by_the_first_run(monkeypatch):
    calls: list[str] = []
    real = runner.compile_bodies

    def failing_once(bodies):
        calls.append("compile")
        if len(calls) == 1:
            raise RuntimeError("stax test: the background compile failed")
        return real(bodies)

    monkeypatch.setattr(runner, "compile_bodies", failing_once)
    L, x, b = _trisolv_inputs(4)
    want = trisolv(L.copy(), x.copy(), b)
    # the background failure is left to the body's first run, which compiles again
    np.testing.assert_allclose(stax.jit(trisolv)(L, x, b), want, rtol=1e-12)
    assert calls == ["compile", "compile"]
