"""Common-subexpression elimination on the Graph (stax.cse), without a compiler."""

from __future__ import annotations

import numpy as np

from stax.cse import eliminate_common_subexpressions
from stax.graph import Graph, Op, Value

F32 = np.dtype(np.float32)


def v(i: int, shape: tuple[int, ...] = (4, 3), dtype: np.dtype = F32) -> Value:
    return Value(i, shape, dtype)


def graph(ops: list[Op], outputs: tuple[Value, ...]) -> Graph:
    x = ops[0].out
    return Graph((x,), tuple(ops), outputs)


def test_identical_ops_computed_once() -> None:
    x = v(0)
    ops = [Op("input", (), x), Op("elementwise", (x,), v(1), (("fn", "exp"),)),
           Op("elementwise", (x,), v(2), (("fn", "exp"),)),
           Op("elementwise", (v(1), v(2)), v(3), (("fn", "add"),))]
    out, removed = eliminate_common_subexpressions(graph(ops, (v(3),)))
    assert removed == 1
    assert [op.kind for op in out.ops] == ["input", "elementwise", "elementwise"]
    assert out.ops[-1].inputs == (v(1), v(1))


def test_keepdims_reduction_meets_plain_one() -> None:
    x = v(0)
    kept, flat = v(1, (1, 3)), v(2, (3,))
    attrs = lambda keep: (("fn", "sum"), ("axes", (0,)), ("keepdims", keep))  # noqa: E731
    ops = [Op("input", (), x), Op("reduce", (x,), kept, attrs(True)),
           Op("elementwise", (x, kept), v(3), (("fn", "subtract"),)),
           Op("reduce", (x,), flat, attrs(False)),
           Op("elementwise", (flat,), v(4, (3,)), (("fn", "negative"),))]
    out, removed = eliminate_common_subexpressions(graph(ops, (v(3), v(4, (3,)))))
    reduces = [op for op in out.ops if op.kind == "reduce"]
    assert len(reduces) == 1 and removed == 1
    assert not reduces[0].attr("keepdims")
    reshape = next(op for op in out.ops if op.kind == "reshape")
    assert reshape.out == kept and reshape.attr("shape") == (1, 3)
    assert out.ops[-1].inputs == (reduces[0].out,)


def test_outputs_are_never_merged() -> None:
    x = v(0)
    ops = [Op("input", (), x), Op("elementwise", (x,), v(1), (("fn", "sin"),)),
           Op("elementwise", (x,), v(2), (("fn", "sin"),))]
    out, removed = eliminate_common_subexpressions(graph(ops, (v(1), v(2))))
    assert removed == 0 and out.outputs == (v(1), v(2))


def test_square_reads_its_input_once() -> None:
    x = v(0)
    ops = [Op("input", (), x), Op("elementwise", (x, x), v(1), (("fn", "multiply"),))]
    out, _ = eliminate_common_subexpressions(graph(ops, (v(1),)))
    assert out.ops[1].attrs == (("fn", "square"),) and out.ops[1].inputs == (x,)
    b = v(0, dtype=np.dtype(bool))
    ops = [Op("input", (), b), Op("elementwise", (b, b), v(1, dtype=b.dtype),
                                  (("fn", "multiply"),))]
    out, _ = eliminate_common_subexpressions(graph(ops, (v(1, dtype=b.dtype),)))
    assert out.ops[1].attrs == (("fn", "multiply"),)  # bool multiply is logical and


def test_constants_compare_by_bits() -> None:
    x = v(0, ())
    consts = [Op("const", (), v(1, ()), (("value", 0.0),)),
              Op("const", (), v(2, ()), (("value", -0.0),)),
              Op("const", (), v(3, ()), (("value", float("nan")),)),
              Op("const", (), v(4, ()), (("value", float("nan")),))]
    ops = [Op("input", (), x), *consts,
           Op("elementwise", (v(1, ()), v(2, ())), v(5, ()), (("fn", "add"),)),
           Op("elementwise", (v(3, ()), v(4, ())), v(6, ()), (("fn", "add"),))]
    out, removed = eliminate_common_subexpressions(graph(ops, (v(5, ()), v(6, ()))))
    assert removed == 1  # the second NaN only; 0.0 and -0.0 differ
    assert out.ops[-1].inputs == (v(3, ()), v(3, ()))
