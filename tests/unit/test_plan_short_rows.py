"""[H9] Plan decisions of the cliff hunt (compiler-free): a short constant innermost loop is
unrolled inside the vector loop above it (rule unroll_short_row), only where every access is
contiguous or invariant along the pair; a row reduction of a Fortran-ordered input fused
with work over its rows takes the outer-reduction form, blocks over the row axis."""

from __future__ import annotations

import numpy as np

from unit.test_plan_records import by_rule, plans

IMAGE = np.zeros((40, 50, 3), np.uint8)
CHANNEL = np.ones(3, np.float32)


def _normalize(img, m, s):
    return (img.astype(np.float32) / 255 - m) / s


def test_short_row_unrolled_inside_the_vector_loop() -> None:
    (plan,) = plans(_normalize, IMAGE, CHANNEL, CHANNEL)
    got = by_rule(plan)
    assert plan.form == "vectorized" and plan.unroll == 3 == got["unroll_short_row"]
    assert plan.simd_lanes == 0 and "simd_lanes" not in got  # the vector loop is the long one


def test_no_unroll_without_a_short_constant_row() -> None:
    (long_rows,) = plans(_normalize, np.zeros((40, 50, 9), np.uint8), np.ones(9, np.float32),
                         np.ones(9, np.float32))
    (merged,) = plans(lambda img: img.astype(np.float32) / 255, IMAGE)  # one flat loop
    (transposed,) = plans(lambda x, m: x.T - m, np.zeros((3, 50), np.float32), CHANNEL)
    for plan in (long_rows, merged, transposed):
        assert plan.unroll == 0 and "unroll_short_row" not in by_rule(plan)


def test_fortran_row_centering_takes_the_outer_reduction_form() -> None:
    x = np.asfortranarray(np.zeros((64, 48), np.float32))
    (plan,) = plans(lambda x: x - x.mean(1, keepdims=True), x)
    got = by_rule(plan)
    assert plan.form == "outer-reduction" == got["form"] and len(plan.nodes) == 2
    assert plan.shared_depth == 0 and got["outer_block"] == plan.outer_block
    (c_order,) = plans(lambda x: x - x.mean(1, keepdims=True), np.ascontiguousarray(x))
    assert c_order.form == "vectorized"
