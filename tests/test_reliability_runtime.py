"""Issue 8 items 1, 2 and 5: fork safety (os.fork, multiprocessing fork/spawn/forkserver),
re-entrant calls (from a signal handler during a call of the same function), memory kept across
calls bounded and given back (clear_cache, clear_caches), libraries unloaded."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import stax
from stax.runtime import wrapper

FORK_PROGRAM = textwrap.dedent("""
    import multiprocessing as mp, os, signal, sys
    import numpy as np, stax

    signal.alarm(240)  # a hang fails the test instead of blocking it
    f = stax.jit(lambda a: np.exp(a - a.max(-1, keepdims=True)).sum(-1), threads=2)

    def want(seed):
        x = np.random.default_rng(seed).standard_normal((256, 300))
        return x, np.exp(x - x.max(-1, keepdims=True)).sum(-1)

    def work(seed):
        x, expected = want(seed)
        return bool(np.allclose(f(x), expected, rtol=1e-12))

    if __name__ == "__main__":
        assert work(0)  # the parent's OpenMP pool now exists
        pid = os.fork()
        if pid == 0:
            os._exit(0 if work(1) and work(2) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "os.fork child failed"
        for method in sys.argv[1:]:
            with mp.get_context(method).Pool(2) as pool:
                assert all(pool.map(work, range(4))), method
        assert work(3)  # the parent still runs threaded kernels
        print("fork ok")
""")


@pytest.mark.parametrize("methods", [("fork",), ("spawn", "forkserver")])
def test_children_compute_correctly_after_fork(tmp_path: Path, methods: tuple[str, ...]) -> None:
    script = tmp_path / "forking.py"
    script.write_text(FORK_PROGRAM)
    env = dict(os.environ, STAX_PARALLEL_MIN_NS="0")  # every kernel threaded
    result = subprocess.run([sys.executable, str(script), *methods], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "fork ok" in result.stdout


def _program(a: np.ndarray) -> np.ndarray:
    b = np.sqrt(np.abs(a)) + 1.0
    c = (b @ b.T) * 0.5  # an extern between kernels: intermediates live across Python code
    return (c - c.mean(0)) / b.sum()


def test_reentrant_call_from_a_signal_handler() -> None:
    f = stax.jit(_program, fuse=False)  # every op writes an intermediate
    rng = np.random.default_rng(0)
    outer_x, inner_x = rng.standard_normal((40, 30)), rng.standard_normal((40, 30)) * 3
    outer_want, inner_want = _program(outer_x), _program(inner_x)
    inner_results: list[np.ndarray] = []

    def handler(signum: int, frame: object) -> None:
        inner_results.append(f(inner_x))

    f(outer_x)
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 1e-4, 1e-4)
    try:
        outer_results = [f(outer_x) for _ in range(300)]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert inner_results, "the timer never interrupted a call"
    wrong = sum(not np.allclose(r, outer_want, rtol=1e-12) for r in outer_results)
    assert wrong == 0, f"{wrong} of {len(outer_results)} outer results wrong"
    assert all(np.allclose(r, inner_want, rtol=1e-12) for r in inner_results)


def test_kept_memory_is_bounded_and_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    stax.clear_caches()
    base = wrapper.held_bytes()
    assert base == 0
    monkeypatch.setattr(wrapper, "KEEP_BYTES", 2**20)
    f = stax.jit(lambda a: np.sqrt(a * 2.0 + 1.0) - a, fuse=False)
    largest = 0
    for n in (40_000, 50_000, 60_000, 70_000):  # 320-560 KB per buffer
        x = np.full(n, float(n))
        np.testing.assert_allclose(f(x), np.sqrt(x * 2.0 + 1.0) - x, rtol=1e-15)
        largest = max(largest, f.cache[f.key((x,))].program.storage.bytes)
        assert wrapper.held_bytes() <= 2**20 + largest
    f.clear_cache()
    assert wrapper.held_bytes() == 0
    x = np.arange(10.0)
    np.testing.assert_allclose(f(x), np.sqrt(x * 2.0 + 1.0) - x, rtol=1e-15)  # still usable
    stax.clear_caches()
    assert wrapper.held_bytes() == 0


def _mapped(path: Path) -> bool:
    return str(path) in Path("/proc/self/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_libraries_are_unloaded_when_no_function_needs_them() -> None:
    f = stax.jit(lambda a: a * 3.0 + 0.25)
    g = stax.jit(lambda a: a * 3.0 + 0.25)  # the same program: one library, loaded twice
    x = np.ones(7)
    np.testing.assert_array_equal(f(x), x * 3.0 + 0.25)
    np.testing.assert_array_equal(g(x), x * 3.0 + 0.25)
    path = f.cache[f.key((x,))].program.library.path
    assert _mapped(path)
    f.clear_cache()
    gc.collect()
    assert _mapped(path)  # g still needs it
    np.testing.assert_array_equal(g(x), x * 3.0 + 0.25)
    del g
    gc.collect()
    assert not _mapped(path)


def test_the_compiled_entry_point_and_its_ctypes_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    from stax.runtime.fast import MAX_ARGS, fastcall

    assert fastcall() is not None  # Python headers are installed here: the C entry is used
    few = stax.jit(lambda a, b: a * b + 1)
    x, y = np.arange(6.0).reshape(2, 3), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(few(x, y), x * y + 1)
    assert "run(region0_ptr" in few.cache[few.key((x, y))].program.wrapper

    def many(*xs: np.ndarray) -> np.ndarray:
        return sum(k * v for k, v in enumerate(xs))

    # more arrays than the C entry takes as arguments: [CALL] it passes an array of their
    # addresses to the region's pointer-array entry; without the C entry, ctypes does
    args = [np.full(5, float(k)) for k in range(MAX_ARGS + 2)]
    for entry in ("run(region0_ptr", "addresses(("):
        if entry == "addresses((":
            monkeypatch.setattr(wrapper, "fastcall", lambda: None)
        f = stax.jit(many)
        np.testing.assert_array_equal(f(*args), many(*args))
        code = f.cache[f.key(tuple(args))].program.wrapper
        assert entry in code and ("run(" in code) == (entry == "run(region0_ptr")


def test_warm_calls_still_refuse_what_the_first_call_refused() -> None:
    f = stax.jit(lambda a: a.sum())
    x = np.arange(3.0)
    assert f(x) == 3.0
    with pytest.raises(TypeError, match="masked arrays"):
        f(np.ma.masked_array(x, mask=[True, False, False]))
    raw = np.zeros(3 * 8 + 1, np.uint8)[1:].view(np.float64)  # unaligned: read from a copy
    raw[:] = [1.5, 2.0, -4.0]
    assert f(raw) == raw.sum()
    g = stax.jit(lambda a: a.__setitem__(slice(None), a * 2))  # mutated in place: written back
    g(raw)
    np.testing.assert_array_equal(raw, [3.0, 4.0, -8.0])


def test_idle_programs_give_their_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # [CLIFF] outputs malloc would reuse come from np.empty: keep these 8 KB ones anyway
    monkeypatch.setattr(wrapper, "RECYCLE_MMAP_BYTES", wrapper.RECYCLE_MIN_BYTES)
    f = stax.jit(lambda a: np.sqrt(a) + a, fuse=False)
    g = stax.jit(lambda a: a * 2 - 1)
    x = np.arange(1000.0)
    np.testing.assert_allclose(f(x), np.sqrt(x) + x, rtol=1e-15)
    storage = f.cache[f.key((x,))].program.storage
    assert storage.bytes > 0
    monkeypatch.setattr(wrapper, "IDLE_SECONDS", 0.0)  # everything not in use is idle
    np.testing.assert_array_equal(g(x), x * 2 - 1)
    assert storage.bytes == 0
    np.testing.assert_allclose(f(x), np.sqrt(x) + x, rtol=1e-15)  # storage made again


UNLOAD_PROGRAM = textwrap.dedent("""
    import gc, os, time
    import numpy as np, stax

    def mapped(part):
        return any(part in line for line in open("/proc/self/maps"))

    f = stax.jit(lambda a: np.exp(a) + 1, threads=2)
    x = np.linspace(0, 1, 100_000)
    assert np.allclose(f(x), np.exp(x) + 1)
    path = str(f.cache[f.key((x,))].program.library.path)
    assert mapped(path) and mapped("libgomp")
    del f
    gc.collect()
    assert not mapped(path), "the kernel library was not unloaded"
    assert mapped("libgomp"), "the OpenMP runtime was unloaded with the last kernel library"
    time.sleep(0.2)  # its worker threads (spinning: OMP_WAIT_POLICY=active) still run its code
    g = stax.jit(lambda a: np.exp(a) * 2, threads=2)
    assert np.allclose(g(x), np.exp(x) * 2)
    print("unload ok")
""")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_the_openmp_runtime_outlives_the_last_kernel_library(tmp_path: Path) -> None:
    """Unloading the last kernel library must not unload libgomp (a dependency of every kernel
    library) while its worker threads are alive: they would run unmapped code."""
    env = dict(os.environ, STAX_PARALLEL_MIN_NS="0", OMP_WAIT_POLICY="active")
    result = subprocess.run([sys.executable, "-c", UNLOAD_PROGRAM], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "unload ok" in result.stdout
