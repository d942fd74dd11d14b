"""The loop IR printer: buffers, loop nests, stores, shared subexpressions, gathers."""

from __future__ import annotations

import numpy as np

from stax.api import _as_array, trace
from stax.ir.expr import Call, Const, Index, Load
from stax.ir.printer import format_expr, format_node, format_program
from stax.ir.program import Node
from stax.lower import lower

F32 = np.dtype(np.float32)


def lowered(fn, *args):
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    return lower(trace(fn, args).graph, strides).program


def test_softmax_program_text() -> None:
    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    text = format_program(lowered(softmax, np.ones((4, 8), np.float32)))
    lines = text.splitlines()
    assert lines[:2] == ["buffers:", "  primals_1: float32[4, 8] strides (8, 1) input"]
    assert "inputs: primals_1" in lines
    assert any(line.startswith("op0 = reduction[max] for x0 < 4 reducing r0 < 8:  # v")
               and line.endswith(" = reduce[max]") for line in lines)
    assert "  buf1[x0] = primals_1[r0 + 8*x0]" in lines
    assert "  buf2[8*x0 + x1] = exp(subtract(primals_1[8*x0 + x1], buf1[x0]))" in lines


def test_shared_subexpressions_become_temporaries() -> None:
    x = Load("a", Index.var("x0"), F32)
    e = Call("exp", (x,), F32)
    body = Call("add", (e, Call("multiply", (e, Const(2.0, F32)), F32)), F32)
    node = Node("op0", "pointwise", "b", (8,), body=body, out_index=Index.var("x0"))
    assert format_node(node).splitlines() == [
        "op0 = pointwise for x0 < 8:",
        "  t0 = exp(a[x0])",
        "  b[x0] = add(t0, multiply(t0, 2.0:float32))",
    ]
    assert format_expr(body) == "let t0 = exp(a[x0]); add(t0, multiply(t0, 2.0:float32))"


def test_gather_cast_negative_coefficients_and_zero_d() -> None:
    def f(x, i):
        return x[::-1][i].astype(np.int32), x.sum()

    text = format_program(lowered(f, np.arange(6.0), np.array([0, -1])))
    assert "cast<int32>(primals_1[-checked<6>(primals_2[x0]) + 5])" in text
    assert "[0] = primals_1[r0]" in text  # a 0-d result is stored at index 0


def test_extern_node() -> None:
    def f(a, b):
        return a @ b

    text = format_program(lowered(f, np.ones((3, 4)), np.ones((4, 5))))
    assert "= extern[matmul]" in text and "= matmul(primals_1, primals_2)" in text
