"""Run-time stops of reductions over masked prefixes (stax.ir.prefix, issue 10): which bodies
prove every term past the stop is the reduction's identity, and which do not."""

from __future__ import annotations

import numpy as np

from stax.ir.expr import Call, Const, Index, IndexValue, Load
from stax.ir.prefix import prefix_stop
from stax.ir.program import Buffer, Node

I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)
BOOL = np.dtype(bool)
R0 = Index.var("r0")
X0 = Index.var("x0")
N = 8


def buffers(arange: np.ndarray | None = None) -> dict[str, Buffer]:
    arange = np.arange(N) if arange is None else arange
    return {
        "x": Buffer("x", (N,), (1,), F64, "input"),
        "y": Buffer("y", (N,), (1,), F64, "input"),
        "k": Buffer("k", (), (), I64, "input"),
        "ar": Buffer("ar", (N,), (1,), I64, "const", arange),
    }


LENGTH = Load("k", Index(), I64)  # the slice's length in this iteration


def masked(value, position=None, fill=0.0, length=LENGTH):
    position = IndexValue(R0) if position is None else position
    return Call("where", (Call("less", (position, length), BOOL), value, Const(fill, F64)), F64)


def node(body, fn="sum", ranges=(), r=(N,)) -> Node:
    return Node("op0", "reduction", "out", ranges, r, body, Index(), fn)


def test_sum_of_masked_values_stops_at_the_length() -> None:
    x = Load("x", R0, F64)
    assert prefix_stop(node(masked(x)), buffers()) == LENGTH
    # the position read from a constant arange, as the tracer writes it
    at = masked(x, position=Load("ar", R0, I64))
    assert prefix_stop(node(at), buffers()) == LENGTH


def test_dot_of_masked_operands_and_one_masked_factor() -> None:
    x, y = Load("x", R0, F64), Load("y", R0, F64)
    both = Call("multiply", (masked(x), masked(y)), F64)
    assert prefix_stop(node(both), buffers()) == LENGTH
    one = Call("multiply", (y, masked(x)), F64)
    assert prefix_stop(node(one), buffers()) == LENGTH
    # a product is 1 past the stop only if every factor is: not proved
    assert prefix_stop(node(both, fn="prod"), buffers()) is None


def test_identity_must_be_the_reductions() -> None:
    x = Load("x", R0, F64)
    assert prefix_stop(node(masked(x, fill=1.0), fn="prod"), buffers()) == LENGTH
    assert prefix_stop(node(masked(x, fill=1.0)), buffers()) is None  # sum of ones
    assert prefix_stop(node(masked(x, fill=-np.inf), fn="max"), buffers()) == LENGTH
    assert prefix_stop(node(masked(x, fill=-np.inf), fn="min"), buffers()) is None
    assert prefix_stop(node(masked(x, fill=np.inf), fn="min"), buffers()) == LENGTH
    assert prefix_stop(node(masked(x), fn="argmax"), buffers()) is None


def test_the_position_must_be_r0_and_the_stop_free_of_it() -> None:
    x = Load("x", R0, F64)
    assert prefix_stop(node(masked(x, position=IndexValue(R0 + 1))), buffers()) is None
    # a constant that is not arange(N)
    assert prefix_stop(node(masked(x, position=Load("ar", R0, I64))),
                       buffers(np.arange(N)[::-1].copy())) is None
    # a length that depends on r0
    moving = Load("ar", R0, I64)
    assert prefix_stop(node(masked(x, length=moving)), buffers()) is None
    # the condition turned around (r0 >= length keeps the tail)
    tail = Call("where", (Call("less", (LENGTH, IndexValue(R0)), BOOL), x, Const(0.0, F64)),
                F64)
    assert prefix_stop(node(tail), buffers()) is None


def test_only_single_reduction_axes_and_a_length_in_outer_variables() -> None:
    x = Load("x", R0, F64)
    assert prefix_stop(node(masked(x), r=(N, 2)), buffers()) is None
    assert prefix_stop(Node("op0", "pointwise", "out", (N,), (), masked(x), X0), buffers()) \
        is None
    per_row = Call("cast", (IndexValue(X0),), I64)  # a length that depends on the output x0
    assert prefix_stop(node(masked(x, length=per_row), ranges=(N,)), buffers()) == per_row
