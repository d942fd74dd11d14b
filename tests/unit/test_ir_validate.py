"""The loop IR validator: lowered programs are valid; each kind of broken program is caught."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_random_programs import programs as random_programs
from test_random_programs import run_recipe

from stax.api import _as_array, trace
from stax.ir.expr import Call, Const, Index, Load
from stax.ir.printer import format_program
from stax.ir.program import Buffer, LoopProgram, Node
from stax.ir.validate import InvalidProgram, check, validate
from stax.lower import lower

F32, I64, BOOL = np.dtype(np.float32), np.dtype(np.int64), np.dtype(bool)
X0 = Index.var("x0")


def lowered(fn, *args):
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    return lower(trace(fn, args).graph, strides).program


PROGRAMS = {
    "softmax": (lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(
        x - x.max(-1, keepdims=True)).sum(-1, keepdims=True), (np.ones((4, 8), np.float32),)),
    "transposed input": (lambda x: x + 1, (np.ones((6, 4)).T,)),
    "strided and reversed": (lambda x: x[::-2] * 2, (np.arange(9.0),)),
    "broadcast": (lambda a, b: a * b, (np.ones((3, 1), np.int32), np.ones(4, np.int64))),
    "gather": (lambda x, i: x[i], (np.arange(5.0), np.array([0, -1, 4]))),
    "concatenate": (lambda a, b: np.concatenate([a, b]), (np.ones(3), np.zeros(2))),
    "setitem": (lambda x: _setitem(x), (np.ones((4, 4)),)),
    "where": (lambda x: np.where(x > 0, x, np.nan), (np.ones(3, np.float32),)),
    "0-d": (lambda x: x * 2, (np.float64(3.0),)),
    "empty": (lambda x: x.sum(0) + 1, (np.ones((0, 3)),)),
    "argmax": (lambda x: x.argmax(-1), (np.ones((2, 5)),)),
    "cumsum": (lambda x: np.cumsum(x), (np.ones(7, np.int32),)),
    "matmul": (lambda a, b: a @ b + 1, (np.ones((2, 3)), np.ones((3, 2)))),
}


def _setitem(x):
    y = x * 1
    y[1:3, ::2] = 0
    return y


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_lowered_programs_are_valid(name: str) -> None:
    fn, args = PROGRAMS[name]
    program = lowered(fn, *args)
    assert validate(program) == ()
    assert check(program) is program


def program(nodes, buffers=None) -> LoopProgram:
    buffers = buffers or (Buffer("a", (8,), (1,), F32, "input"),
                          Buffer("b", (8,), (1,), F32, "output"))
    return LoopProgram(tuple(buffers), tuple(nodes), ("a",), ("b",), ((8,),))


def rules(p: LoopProgram) -> list[tuple[str, str]]:
    return [(x.rule, x.where) for x in validate(p)]


def test_valid_hand_written_program() -> None:
    node = Node("op0", "pointwise", "b", (8,), body=Load("a", X0, F32), out_index=X0)
    assert validate(program([node])) == ()


def test_unknown_and_undefined_buffers() -> None:
    bufs = (Buffer("a", (8,), (1,), F32, "input"), Buffer("t", (8,), (1,), F32, "intermediate"),
            Buffer("b", (8,), (1,), F32, "output"))
    reads_t = Node("op0", "pointwise", "b", (8,), body=Load("t", X0, F32), out_index=X0)
    writes_t = Node("op1", "pointwise", "t", (8,), body=Load("a", X0, F32), out_index=X0)
    assert rules(program([reads_t, writes_t], bufs)) == [("undefined_buffer", "op0")]
    assert validate(program([writes_t, reads_t], bufs)) == ()
    ghost = Node("op0", "pointwise", "b", (8,), body=Load("zz", X0, F32), out_index=X0)
    assert ("unknown_buffer", "op0") in rules(program([ghost]))


def test_writing_an_input_is_refused() -> None:
    node = Node("op0", "pointwise", "a", (8,), body=Const(1.0, F32), out_index=X0)
    assert ("bad_write", "op0") in rules(program([node]))


def test_out_of_bounds_reads_and_writes() -> None:
    over = Node("op0", "pointwise", "b", (8,), body=Load("a", X0 + 1, F32), out_index=X0)
    (problem,) = validate(program([over]))
    assert problem.rule == "out_of_bounds" and "[1, 8]" in problem.message
    under = Node("op0", "pointwise", "b", (8,), body=Load("a", X0, F32), out_index=X0 - 1)
    assert rules(program([under])) == [("out_of_bounds", "op0")]
    # a 2-d view with a negative stride spans offsets down from its base
    bufs = (Buffer("a", (2, 4), (-4, 1), F32, "input"), Buffer("b", (8,), (1,), F32, "output"))
    i = Index.var("x0") * -4 + Index.var("x1")
    ok = Node("op0", "pointwise", "b", (2, 4), body=Load("a", i, F32),
              out_index=Index.var("x0") * 4 + Index.var("x1"))
    assert validate(program([ok], bufs)) == ()


def test_loads_under_a_select_guard_are_exempt_from_bounds() -> None:
    guard = Call("less", (Load("a", X0, F32), Const(0.0, F32)), BOOL)
    body = Call("select", (guard, Load("a", X0 + 1, F32), Const(0.0, F32)), F32)
    node = Node("op0", "pointwise", "b", (8,), body=body, out_index=X0)
    assert validate(program([node])) == ()


def test_dtype_mismatches() -> None:
    wrong_load = Node("op0", "pointwise", "b", (8,),
                      body=Call("cast", (Load("a", X0, I64),), F32), out_index=X0)
    assert rules(program([wrong_load])) == [("dtype", "op0")]
    wrong_store = Node("op0", "pointwise", "b", (8,),
                       body=Call("cast", (Load("a", X0, F32),), I64), out_index=X0)
    assert rules(program([wrong_store])) == [("dtype", "op0")]
    a = Load("a", X0, F32)
    bad_where = Node("op0", "pointwise", "b", (8,),
                     body=Call("where", (a, a, Const(1, I64)), F32), out_index=X0)
    assert rules(program([bad_where])) == [("dtype", "op0"), ("dtype", "op0")]


def test_unknown_loop_variables() -> None:
    node = Node("op0", "pointwise", "b", (8,), body=Load("a", Index.var("x1"), F32),
                out_index=X0)
    assert ("unknown_variable", "op0") in rules(program([node]))


def test_check_raises_with_every_problem() -> None:
    node = Node("op0", "pointwise", "a", (8,), body=Load("zz", X0, I64), out_index=X0 + 3)
    with pytest.raises(InvalidProgram, match="a bug in Stax") as info:
        check(program([node]))
    assert {p.rule for p in info.value.problems} >= {"bad_write", "unknown_buffer"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_programs())
def test_random_programs_lower_to_valid_ir(recipe) -> None:
    """Random DAGs of elementwise ops, reductions and broadcasts (tests/test_random_programs)
    lower to programs the validator accepts, and the printer prints every node."""
    steps, n_out, inputs = recipe
    program = lowered(lambda *args: run_recipe(steps, n_out, *args), *inputs)
    assert validate(program) == ()
    text = format_program(program)
    assert all(f"{n.name} = {n.kind}" in text for n in program.nodes)


def test_the_corpus_lowers_to_valid_ir() -> None:
    """Every corpus function (tests/corpus) that traces without a graph break lowers to a
    program the validator accepts."""
    from corpus.programs import CASES

    from stax.frontend.trace import GraphBreak

    checked = 0
    for name, (fn, make_args) in CASES.items():
        args = make_args(np.random.default_rng(0))
        try:
            program = lowered(fn, *args)
        except (GraphBreak, NotImplementedError):
            continue  # runs with graph breaks; its segments are lowered separately
        assert validate(program) == (), name
        checked += 1
    assert checked >= len(CASES) // 2
