"""[INVAR] Loop-invariant values of a reduction (a 0-d count converted to double, a divisor) are
computed once before its loops, not per element; never before a loop that may run zero times.
Checks the emitted C++ (no compiler)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax
from stax.backends.cpu import CpuBackend

CAST = "stax_cast<double, int64_t>"


class Emitted(Exception):
    def __init__(self, cpp: str) -> None:
        self.cpp = cpp


def _emitted(monkeypatch: pytest.MonkeyPatch, fn: Callable[..., Any], *args: Any,
             **options: Any) -> str:
    """The generated C++ of fn(*args) without compiling it, after the runtime header."""
    def capture(self: CpuBackend, source: str, isa: str) -> None:
        raise Emitted(source)

    monkeypatch.setattr(CpuBackend, "build", capture)
    monkeypatch.setattr(stax.api, "isa_level", lambda forced=None: "avx2")
    with pytest.raises(Emitted) as caught:
        stax.jit(fn, threads=1, **options)(*args)
    cpp = caught.value.cpp
    return cpp[cpp.index('extern "C" void region0'):]


def _depths(cpp: str, text: str) -> list[list[str]]:
    """For each line containing `text`, the headers of the `for` loops enclosing it."""
    out, stack = [], []
    for line in cpp.splitlines():
        s = line.strip()
        if text in s:
            out.append([h for h in stack if h])
        for _ in range(s.count("{")):
            stack.append(s if s.startswith("for ") else "")
        for _ in range(s.count("}")):
            stack.pop()
    return out


def masked_sum(x: np.ndarray, s: np.ndarray, n: np.ndarray) -> Any:
    return np.where(x > 0, (x - s / n.astype(float)) ** 2, 0).sum()


def row_sums(x: np.ndarray, n: np.ndarray) -> Any:
    return (x / n.astype(float)).sum(1)


def test_chunked_sum_converts_the_count_once_per_chunk(monkeypatch):
    x = np.ones(100_000)
    cpp = _emitted(monkeypatch, masked_sum, x, np.float64(3.0), np.int64(7))
    (loops,) = _depths(cpp, CAST)  # printed once, inside the chunk loop, outside r0's
    assert [h.split("=")[0] for h in loops] == ["for (int64_t chunk "]


def test_row_sums_convert_the_count_once_per_row(monkeypatch):
    x = np.ones((8, 100))
    cpp = _emitted(monkeypatch, row_sums, x, np.int64(7))
    (loops,) = _depths(cpp, CAST)
    assert not any(h.startswith("for (int64_t r0 ") for h in loops)


def test_two_reduction_loops_share_one_conversion(monkeypatch):
    x = np.ones((8, 100))[:, :50]  # rows 100 apart: a nest of two reduction loops
    cpp = _emitted(monkeypatch, lambda a, n: (a / n.astype(float)).sum(), x, np.int64(7))
    (loops,) = _depths(cpp, CAST)
    assert not any(h.startswith(("for (int64_t r0 ", "for (int64_t r1 ")) for h in loops)
    assert "for (int64_t r1 " in cpp


def prefix_sum(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> Any:
    return np.where(np.arange(x.shape[0]) < k, x / n.astype(float), 0).sum()


def test_nothing_hoisted_before_a_loop_that_may_run_zero_times(monkeypatch):
    # the masked prefix stops the loop at k, which may be 0: its values stay inside it
    cpp = _emitted(monkeypatch, prefix_sum, np.ones(100), np.int64(5), np.int64(7))
    assert "stax_rstop_" in cpp
    (loops,) = _depths(cpp, CAST)
    assert any(h.startswith("for (int64_t r0 ") for h in loops)


def test_column_sums_convert_the_count_once_per_block(monkeypatch):
    x = np.ones((256, 1024))  # the outer-reduction form: blocks of columns, rows in passes
    cpp = _emitted(monkeypatch, lambda a, n: (a / n.astype(float)).sum(0), x, np.int64(7))
    assert "for (int64_t block " in cpp
    (loops,) = _depths(cpp, CAST)
    assert [h.split("=")[0] for h in loops] == ["for (int64_t block "]
