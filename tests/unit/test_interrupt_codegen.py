"""Issue 8 item 10, the emitted C++ (no compiler): every kernel polls the interrupt bit once per
iteration of its outermost work-shared loop (rows, tiles, blocks, reduction chunks); a flat
elementwise loop is strip-mined so the poll sits between chunks and the chunk stays the `omp
simd` loop; no poll is ever inside an `omp simd` loop."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax
from stax.backends.cpu import CpuBackend
from stax.tiling.threads import crossover

POLL = "if (stax_interrupted(flags)) continue;"


class Emitted(Exception):
    def __init__(self, cpp: str) -> None:
        self.cpp = cpp


def _emitted(monkeypatch: pytest.MonkeyPatch, fn: Callable[..., Any], *args: np.ndarray,
             threads: int = 2) -> str:
    """The generated C++ of fn(*args) without compiling it, after the runtime header."""
    def capture(self: CpuBackend, source: str, isa: str) -> None:
        raise Emitted(source)

    monkeypatch.setattr(CpuBackend, "build", capture)  # the backend's build step [S16]
    # the forms under test are the threaded ones: not the machine's load-measured crossover
    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "0")
    crossover.cache_clear()
    monkeypatch.setattr(stax.api, "isa_level", lambda forced=None: "avx2")
    with pytest.raises(Emitted) as caught:
        stax.jit(fn, threads=threads)(*args)
    crossover.cache_clear()
    cpp = caught.value.cpp
    return cpp[cpp.index('extern "C" void region0'):]


def _loops_around_polls(cpp: str) -> list[list[str]]:
    """For each poll, the pragmas and loop headers of the loops enclosing it (outermost first)."""
    out, stack = [], []
    for line in cpp.splitlines():
        text = line.strip()
        if text.startswith(POLL):
            out.append([s for s in stack if s])
        for _ in range(text.count("{")):
            stack.append(text if text.startswith("for ") else "")
        for _ in range(text.count("}")):
            stack.pop()
    return out


def _simd_loops_poll_free(cpp: str) -> None:
    lines = cpp.splitlines()
    for k, line in enumerate(lines):
        if "#pragma omp" in line and "simd" in line:
            depth, j = 0, k + 1
            while True:  # the loop that follows, to its closing brace
                depth += lines[j].count("{") - lines[j].count("}")
                assert POLL not in lines[j], f"a poll inside an omp simd loop:\n{cpp}"
                if depth <= 0 and "{" in "".join(lines[k + 1:j + 1]):
                    break
                j += 1


def test_flat_elementwise_is_strip_mined(monkeypatch: pytest.MonkeyPatch) -> None:
    cpp = _emitted(monkeypatch, lambda a: np.sin(a) * 2 + 1, np.ones(300_000))
    n = "300000"
    assert re.search(rf"for \(int64_t x0c = 0; x0c < {n}; x0c \+= stax_poll_step\({n}, 2\)\) "
                     rf"\{{\s*{re.escape(POLL)}.*?#pragma omp simd", cpp, re.S), cpp
    assert (_loops_around_polls(cpp)[0][-1].startswith("for (int64_t x0c")), cpp
    assert "omp for simd" not in cpp  # the simd moved to the chunk loop
    _simd_loops_poll_free(cpp)


def test_row_kernels_poll_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def softmax(a: np.ndarray) -> np.ndarray:
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    cpp = _emitted(monkeypatch, softmax, np.ones((512, 300)))
    polls = _loops_around_polls(cpp)
    assert polls and all(p[-1].startswith("for (int64_t x0 = 0; x0 < 512;") for p in polls), cpp
    _simd_loops_poll_free(cpp)


@pytest.mark.parametrize(("fn", "shape", "loop"), [
    (lambda a: np.sin(a).sum(), (300_000,), "for (int64_t chunk = 0;"),  # reduction chunks
    # transpose tiles (a C-ordered result: the operands' layouts conflict [LAYOUT])
    (lambda a: a.T * 2 + a, (400, 400), "for (int64_t x1t = 0;"),
    (lambda a: a.sum(0), (300, 400), "for (int64_t block = 0;"),  # column blocks
])
def test_other_outer_loops_poll(monkeypatch: pytest.MonkeyPatch, fn: Callable[..., Any],
                                shape: tuple[int, ...], loop: str) -> None:
    cpp = _emitted(monkeypatch, fn, np.ones(shape))
    polls = _loops_around_polls(cpp)
    assert any(p[-1].startswith(loop) for p in polls), cpp
    _simd_loops_poll_free(cpp)


def test_serial_kernels_poll_too(monkeypatch: pytest.MonkeyPatch) -> None:
    cpp = _emitted(monkeypatch, lambda a: np.exp(a - a.max(-1, keepdims=True)),
                   np.ones((64, 50)), threads=1)
    polls = _loops_around_polls(cpp)
    assert polls and polls[0][-1].startswith("for (int64_t x0 = 0; x0 < 64;"), cpp


def test_collapsed_loops_strip_mine_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few long rows: both loops are shared among threads (collapse(2)) with the row strip-mined,
    so the chunk loop is the collapsed one and polls."""
    cpp = _emitted(monkeypatch, lambda a, b: a * 2 + b[:, None], np.ones((3, 100_001)),
                   np.ones(3))
    assert re.search(r"#pragma omp for collapse\(2\) schedule\(static\)\s*"
                     r"for \(int64_t x0 = 0; x0 < 3; x0 \+= 1\) \{\s*"
                     rf"for \(int64_t x1c = 0;[^\n]*\n\s*{re.escape(POLL)}", cpp), cpp
    _simd_loops_poll_free(cpp)
