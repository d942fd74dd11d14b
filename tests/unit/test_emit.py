"""The structured C++ emitter (stax.backends.cpu.emit): code objects, one printer owns the
indentation; the kernel printers build these objects (no indentation strings in cpp.py)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import numpy as np
import pytest

from stax.api import _as_array, trace
from stax.backends import get_backend
from stax.backends.cpu import cpp
from stax.backends.cpu.emit import Block, Comment, Emitter, For, Pragma, Stmt, render
from stax.lower import lower
from stax.runtime.wrapper import emit_module
from stax.sched.scheduler import schedule


def test_render_owns_indentation() -> None:
    code = (
        Comment("kernel0"),
        For("x0", "0", "n", (Stmt("a[x0] = 0;"),
                             For("x1", "0", "8", (Stmt("b[x1] = x0;"),), ("omp simd",))),
            ("omp for schedule(static)",)),
        Block("", (Pragma("omp barrier"),), ("omp single",)),
        Block("if (n > 0)", (Stmt("f();"),), orelse=(Stmt("g();"),)),
        For("x0t", "0", "n", (), step="16"),
    )
    assert render(code, 1) == [
        "    // kernel0",
        "    #pragma omp for schedule(static)",
        "    for (int64_t x0 = 0; x0 < n; x0 += 1) {",
        "        a[x0] = 0;",
        "        #pragma omp simd",
        "        for (int64_t x1 = 0; x1 < 8; x1 += 1) {",
        "            b[x1] = x0;",
        "        }",
        "    }",
        "    #pragma omp single",
        "    {",
        "        #pragma omp barrier",
        "    }",
        "    if (n > 0) {",
        "        f();",
        "    } else {",
        "        g();",
        "    }",
        "    for (int64_t x0t = 0; x0t < n; x0t += 16) {",
        "    }",
    ]


def test_emitter_nests_in_program_order() -> None:
    e = Emitter()
    e.stmt("int s = 0;")
    with e.loop("i", 0, 4, pragmas=["omp simd reduction(+:s)"]), e.block("if (i % 2)"):
        e.stmt("s += i;")
    e.comment("done")
    assert e.code == (
        Stmt("int s = 0;"),
        For("i", "0", "4", (Block("if (i % 2)", (Stmt("s += i;"),)),),
            ("omp simd reduction(+:s)",)),
        Comment("done"),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):  # closed blocks are immutable
        e.code[1].body += (Stmt("x;"),)  # type: ignore[union-attr]


def test_an_open_block_is_not_code() -> None:
    e = Emitter()
    with e.loop("i", 0, 2):
        with pytest.raises(AssertionError, match="still open"):
            _ = e.code


def test_no_indentation_strings_in_the_kernel_printers() -> None:
    source = inspect.getsource(cpp)
    assert not re.search(r"\bindent\b", source) and '"    "' not in source


@pytest.mark.parametrize(("fn", "shape", "form"), [
    (lambda x: x.T + x, (64, 64), "tiled"),
    (lambda x: x.sum(0), (300, 40), "outer-reduction"),
    (lambda x: (np.cumsum(x), x.argmax()), (50_000,), None),
    (lambda x: np.exp(x - x.max(1, keepdims=True)), (8, 4096 * 3), None),
])
def test_emitted_modules_are_balanced(fn, shape, form) -> None:
    """Every form's C++: braces balance, every `#pragma omp simd`/`omp for` is followed by a
    loop, and every line is indented by whole levels."""
    args = (_as_array(np.ones(shape, np.float32)),)
    strides = [tuple(s // a.itemsize for s in a.strides) for a in args]
    sched = schedule(lower(trace(fn, args).graph, strides).program)
    module = emit_module(sched, get_backend("cpu"), threads=4, vectorize=True, form=form)
    lines = module.source[len(cpp.HEADER):].splitlines()
    depth = 0
    for k, line in enumerate(lines):
        text = line.lstrip(" ")
        if not text:
            continue
        depth -= text.startswith("}")
        assert len(line) - len(text) == 4 * depth, (k, line)
        depth += text.endswith("{")
        if text.startswith("#pragma omp simd") or text.startswith("#pragma omp for"):
            assert lines[k + 1].lstrip().startswith("for ("), (k, line)
    assert depth == 0
