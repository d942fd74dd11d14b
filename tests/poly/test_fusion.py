"""verify_fusion: Stax's fused kernels checked instance by instance (seed 000 Prop. 7.3)."""

from __future__ import annotations

import pytest

from stax import poly
from stax.poly import PolyStatement

R, C = 4, 8


def normalize() -> list[PolyStatement]:
    """x / x.sum(-1): a row sum (reduction over i1) then a division by it."""
    return [
        PolyStatement("rowsum", (R, C), (("x", f"{C}*i0 + i1"), ("s", "i0")), (("s", "i0"),)),
        PolyStatement(
            "div", (R, C), (("x", f"{C}*i0 + i1"), ("s", "i0")), (("y", f"{C}*i0 + i1"),)
        ),
    ]


def shifted(offset: str) -> list[PolyStatement]:
    return [
        PolyStatement("p", (8,), (("a", "i0"),), (("t", "i0"),)),
        PolyStatement("c", (7,), (("t", f"i0 {offset}"),), (("u", "i0"),)),
    ]


def test_row_sum_then_divide_fused_at_depth_one_is_legal() -> None:
    verdict = poly.verify_fusion(normalize(), [[("rowsum", 1), ("div", 1)]])
    assert verdict.legal


def test_divide_before_the_sum_is_complete_is_illegal() -> None:
    verdict = poly.verify_fusion(normalize(), [[("rowsum", 2), ("div", 2)]])
    assert not verdict.legal
    v = verdict.violations[0]
    assert (v.source, v.sink) == ("rowsum", "div")
    assert v.source_instance[0] == v.sink_instance[0]  # same row, a later column of the sum


def test_consumer_reading_the_next_element_fused_is_illegal() -> None:
    verdict = poly.verify_fusion(shifted("+ 1"), [[("p", 1), ("c", 1)]])
    assert not verdict.legal
    v = verdict.violations[0]
    assert (v.kind, v.source, v.sink) == ("raw", "p", "c")
    assert v.source_instance[0] == v.sink_instance[0] + 1  # c(i) reads t[i + 1] from p(i + 1)
    assert v.source_time > v.sink_time


def test_backward_distance_is_legal_sequentially_but_not_in_a_parallel_loop() -> None:
    statements = shifted("- 1")
    scop = poly.from_loop_program(statements)
    assert poly.check(scop, "{ p[i0] -> [i0, 0]; c[i0] -> [i0 + 1, 1] }").legal
    assert poly.check(scop, "{ p[i0] -> [i0, 0]; c[i0] -> [i0, 1] }").legal
    verdict = poly.verify_fusion(statements, [[("p", 1), ("c", 1)]])
    assert not verdict.legal
    (v,) = verdict.violations
    assert "parallel" in v.reason and v.sink_instance[0] == v.source_instance[0] + 1


def test_unfused_kernels_in_the_wrong_order_are_illegal() -> None:
    statements = shifted("+ 1")
    assert poly.verify_fusion(statements, [[("p", 0)], [("c", 0)]]).legal
    verdict = poly.verify_fusion(statements, [[("c", 0)], [("p", 0)]])
    assert not verdict.legal
    assert verdict.violations[0].source == "p"


def test_from_loop_program_order_and_errors() -> None:
    scop = poly.from_loop_program(normalize())
    deps = poly.dependences(scop)
    assert not deps.raw.is_empty()
    assert poly.check(scop, scop.schedule).legal
    with pytest.raises(poly.PolyError, match="exactly one kernel"):
        poly.verify_fusion(normalize(), [[("rowsum", 1)]])
    with pytest.raises(poly.PolyError, match="cannot share 3"):
        poly.verify_fusion(normalize(), [[("rowsum", 3), ("div", 1)]])
