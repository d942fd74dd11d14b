"""[COV] Clamped affine gather indices (stax.ir.prefix.clamp_of, rule clamp_free): a masked
slice's positions `min(start + p, n - 1)` read as `start + p` where no clamp bites; which
index expressions are recognized, with their bounds, and which are not."""

from __future__ import annotations

import numpy as np
import pytest

from stax.ir.expr import Call, Const, Index, IndexValue, Indirect, Load
from stax.ir.prefix import clamp_of
from stax.tiling.plan import lane_coef

pytestmark = pytest.mark.fast

I64 = np.dtype(np.int64)
I32 = np.dtype(np.int32)
START = Load("i", Index(), I64)  # the slice's start: the loop index, a 0-d input
X0 = IndexValue(Index.var("x0"))


def call(fn: str, *args) -> Call:
    return Call(fn, args, I64)


def c(v: int) -> Const:
    return Const(v, I64)


def test_start_plus_position_clamped_to_the_axis() -> None:
    arg = call("add", START, X0)
    got = clamp_of(Indirect(call("minimum", arg, c(499)), 500), "x0", set(), set())
    assert got is not None
    assert (got.arg, got.coef, got.low, got.high) == (arg, 1, 0, 499)


def test_both_clamps_steps_and_casts() -> None:
    # max(min(2*x0 - i, 90), 3) on an axis of 50: inside [3, 49]
    arg = call("subtract", call("multiply", c(2), X0), call("cast", Load("j", Index(), I32)))
    got = clamp_of(Indirect(call("maximum", call("minimum", arg, c(90)), c(3)), 50), "x0",
                   set(), set())
    assert got is not None
    assert (got.coef, got.low, got.high) == (2, 3, 49)
    # a position counted down: negative steps are affine too
    down = call("subtract", START, X0)
    back = clamp_of(Indirect(call("maximum", down, c(0)), 8), "x0", set(), set())
    assert back is not None and back.coef == -1 and (back.low, back.high) == (0, 7)


def test_index_steps_count_the_clamped_argument() -> None:
    atom = Indirect(call("minimum", call("add", START, X0), c(499)), 500)
    index = Index(((atom, 1),)) + Index.var("r0") * 500  # data[r0, min(i + x0, 499)]
    clamp = clamp_of(atom, "x0", set(), set())
    assert clamp is not None
    assert lane_coef(index, "x0", {atom.expr: clamp}) == 1
    assert lane_coef(index, "x0", {}) == 0  # unrecognized: the plain coefficient


@pytest.mark.parametrize("expr", [
    call("add", START, X0),  # no clamp: a plain gather (wraps negative values)
    call("minimum", call("multiply", X0, X0), c(9)),  # not affine
    call("minimum", call("add", START, IndexValue(Index.var("r0"))), c(9)),  # an inner loop's
    call("minimum", call("add", Load("w", Index(), I64), X0), c(9)),  # a buffer the kernel writes
    call("minimum", call("add", START, IndexValue(Index.var("x1"))), c(9)),  # constant in x0
    call("minimum", call("multiply", X0, START), c(9)),  # a coefficient known at run time
])
def test_not_clamped_affine(expr: Call) -> None:
    assert clamp_of(Indirect(expr, 10), "x0", {"x1"}, {"w"}) is None
