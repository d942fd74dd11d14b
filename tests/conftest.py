"""Shared fixtures and helpers for the differential tests against NumPy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

# The suite is deterministic: every property test draws the same examples on every run (a CI
# run must not fail on an example no earlier run drew). Campaigns that search for new
# counterexamples draw at random: STAX_FUZZ_EXAMPLES=N (the fuzzers' example count) or
# `pytest --hypothesis-profile=random`.
settings.register_profile("default", derandomize=True)
settings.register_profile("random", derandomize=False)
settings.load_profile("random" if os.environ.get("STAX_FUZZ_EXAMPLES") else "default")

# Compiled kernels go to a private cache for this test session (set before stax is imported).
_CACHE_DIR = tempfile.mkdtemp(prefix="stax-test-cache-")
os.environ["STAX_CACHE_DIR"] = _CACHE_DIR

DTYPES = ("bool", "int32", "int64", "float32", "float64")
INT_DTYPES = ("int32", "int64")
FLOAT_DTYPES = ("float32", "float64")

# Default relative tolerances per dtype (exact for bool and integers).
RTOL = {"float32": 2e-6, "float64": 1e-12}


@pytest.fixture(scope="session", autouse=True)
def stax_cache_dir() -> Iterator[str]:
    """Every compiled kernel of the session lands in a temporary cache directory."""
    os.environ["STAX_CACHE_DIR"] = _CACHE_DIR
    yield _CACHE_DIR
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture
def always_parallel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every kernel opens a parallel region (the work crossover forced to 0), so that small
    test inputs exercise the threaded code: chunked reductions, two-pass scans, blocks."""
    from stax.tiling.threads import crossover

    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "0")
    crossover.cache_clear()
    yield
    crossover.cache_clear()


def assert_matches(got: Any, want: Any, rtol: float | None = None, atol: float = 0.0,
                   check_dtype: bool = True) -> None:
    """`got` (from stax) equals `want` (from NumPy): same structure, dtype, shape and values.

    Floats compare with `assert_allclose(equal_nan=True)` and a tolerance by dtype; bools and
    integers compare exactly. Tuples, lists and dicts are compared element by element.
    """
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), f"expected a {type(want).__name__}, got {type(got)}"
        assert len(got) == len(want), f"expected {len(want)} results, got {len(got)}"
        for g, w in zip(got, want, strict=True):
            assert_matches(g, w, rtol, atol, check_dtype)
        return
    if isinstance(want, dict):
        assert isinstance(got, dict), f"expected a dict, got {type(got)}"
        assert set(got) == set(want), f"keys differ: {sorted(got)} vs {sorted(want)}"
        for k in want:
            assert_matches(got[k], want[k], rtol, atol, check_dtype)
        return
    # a NumPy array or scalar; a Python scalar where the reference returned one of that type
    assert isinstance(got, (np.ndarray, np.generic)) or type(got) is type(want), \
        f"stax returned {type(got).__name__}, expected a NumPy array or scalar"
    want_arr = np.asarray(want)
    got_arr = np.asarray(got)
    if check_dtype:
        assert got_arr.dtype == want_arr.dtype, f"dtype {got_arr.dtype} != {want_arr.dtype}"
    assert got_arr.shape == want_arr.shape, f"shape {got_arr.shape} != {want_arr.shape}"
    if want_arr.dtype.kind in "fc":
        tol = RTOL.get(want_arr.dtype.name, 1e-12) if rtol is None else rtol
        np.testing.assert_allclose(got_arr, want_arr, rtol=tol, atol=atol, equal_nan=True)
        # NaN placement must match exactly, and so must the signs of infinities.
        np.testing.assert_array_equal(np.isnan(got_arr), np.isnan(want_arr))
        inf = np.isinf(want_arr)
        np.testing.assert_array_equal(got_arr[inf], want_arr[inf])
    else:
        np.testing.assert_array_equal(got_arr, want_arr, strict=False)


def make_array(shape: tuple[int, ...], dtype: str, seed: int = 0, low: float = -5.0,
               high: float = 5.0) -> np.ndarray:
    """A reproducible random array of `dtype` (bools half true; ints in [low, high])."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def numpy_call(fn: Any, *args: Any) -> Any:
    """Run `fn` with NumPy on copies of the array arguments (so mutation does not leak)."""
    return fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests under tests/unit need no C++ compiler: the fast tier (`pytest -m fast`)."""
    for item in items:
        if "/tests/unit/" in str(item.path):
            item.add_marker(pytest.mark.fast)


@pytest.fixture(autouse=True)
def _reset_dynamo(request: pytest.FixtureRequest) -> Iterator[None]:
    """Dynamo's caches are cleared after each torch test (each compiles its own models). Kept
    here: a conftest.py in tests/torch would be a second module named `conftest`."""
    yield
    if "/tests/torch/" in str(request.node.path):
        import torch

        torch._dynamo.reset()


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) process `pid` has used so far, from /proc/<pid>/stat.

    Interrupt tests measure their latency on this clock (the child reports `time.process_time()`
    when it catches KeyboardInterrupt): on a busy machine the child may wait seconds for a core, so
    wall time would measure the scheduler, not how long the kernel kept running after SIGINT.
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_sanitized(program: str, cache: Path, timeout: int = 600, **env: str) -> None:
    """Run `program` (Python source that prints "sanitized ok" at its end) in a subprocess
    whose kernels are built with AddressSanitizer + UBSan (STAX_SANITIZE=1); fail on any
    report. Skips where libasan is not installed with this g++."""
    libasan = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()
    if not os.path.isabs(libasan):
        pytest.skip("libasan is not installed with this g++")
    env = dict(os.environ, STAX_SANITIZE="1", STAX_CACHE_DIR=str(cache), LD_PRELOAD=libasan,
               ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               OMP_NUM_THREADS="2", **env)
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sanitized ok" in result.stdout
