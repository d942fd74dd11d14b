"""Short rows on narrow vectors (issue 11): the planner's `simd_lanes` decision, compiler-free."""

from __future__ import annotations

import numpy as np
import pytest

from stax.api import _as_array, trace
from stax.lower import lower
from stax.tiling.plan import plan_kernel


def lowered(fn, *args):
    arrays = [_as_array(a) for a in args]
    return lower(trace(fn, args).graph, [tuple(s // a.itemsize for s in a.strides)
                                         for a in arrays])


def _lanes(fn, x: np.ndarray, vectorize: bool = True) -> int:
    (node,) = lowered(fn, x).program.nodes
    plan = plan_kernel("kernel0", [node], len(node.ranges), threads=1, vectorize=vectorize)
    decided = [d.value for d in plan.decisions if d.rule == "simd_lanes"]
    assert decided == ([plan.simd_lanes] if plan.simd_lanes else [])
    return plan.simd_lanes


@pytest.mark.parametrize(("dtype", "cols", "lanes"), [
    ("float32", 5, 4), ("float32", 10, 4), ("float32", 15, 4), ("float32", 16, 8),
    ("float32", 63, 8), ("float32", 64, 0), ("float32", 1000, 0),
    ("float64", 7, 2), ("float64", 8, 4), ("float64", 31, 4), ("float64", 32, 0),
    ("int8", 10, 4), ("int16", 20, 4)])  # integer sums accumulate in int64
def test_rows_under_64_and_256_bytes_take_16_and_32_byte_vectors(dtype, cols, lanes):
    x = np.ones((100, cols), dtype)
    assert _lanes(lambda a: a.sum(-1), x) == lanes


@pytest.mark.parametrize("cols", [2, 3, 4])
def test_rows_of_up_to_4_elements_are_unrolled_not_reduced(cols):
    """[PERF11] A sum over 2..4 elements per output is pointwise (no reduction loop, no lanes
    of a row): `_few_reduced`."""
    (node,) = lowered(lambda a: a.sum(-1), np.ones((100, cols), np.float32)).program.nodes
    assert node.kind == "pointwise"


def test_no_lanes_without_vectors_or_for_flat_loops():
    x = np.ones((100, 10), np.float32)
    assert _lanes(lambda a: a.sum(-1), x, vectorize=False) == 0
    assert _lanes(lambda a: a * 2 + 1, x) == 0  # merged into one loop of 1000
