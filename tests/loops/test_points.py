"""`index_points`: the index tuples nested loops visit, where an inner range depends on the
enclosing indices (compiler-free), against plain Python loops."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stax.loops.masked import POINTS_LIMIT, Ranges, index_points


def visited(outer: range, start: tuple[int, int], stop: tuple[int, int], step: int,
            last: range) -> list[tuple[int, int, int]]:
    return [(i, j, k) for i in outer
            for j in range(start[0] + start[1] * i, stop[0] + stop[1] * i, step)
            for k in last]


@settings(max_examples=60, deadline=None)
@given(st.integers(-3, 5), st.integers(0, 8), st.sampled_from([1, 2, -1]),
       st.tuples(st.integers(-4, 6), st.integers(-2, 2)),
       st.tuples(st.integers(-4, 9), st.sampled_from([-2, -1, 1, 2])),
       st.sampled_from([1, 2, -1, -3]),
       st.integers(0, 3))
def test_points_are_the_ones_nested_python_loops_visit(first, count, outer_step, start, stop,
                                                         step, inner):
    outer = range(first, first + outer_step * count, outer_step)
    last = range(inner)
    ranges = Ranges()
    ranges[0], ranges[1], ranges[2] = outer, range(-20, 20), last  # 1: the hull (unused)
    ranges.links[1] = ((start[0], {0: start[1]} if start[1] else {}),
                       (stop[0], {0: stop[1]}), step)  # the stop depends on i
    got = index_points([1, 2], ranges)
    assert got is not None
    order, points = got
    assert order == (0, 1, 2)
    rows = list(zip(*(points[k].tolist() for k in order), strict=True))
    assert rows == visited(outer, start, stop, step, last)
    assert all(points[k].dtype == np.int64 for k in order)


def test_no_runtime_range_and_too_many_points():
    ranges = Ranges()
    ranges[0], ranges[1] = range(5), range(7)
    assert index_points([0, 1], ranges) is None  # fixed ranges: the hulls' product is exact
    ranges[2] = range(POINTS_LIMIT)
    ranges.links[2] = ((0, {}), (POINTS_LIMIT, {}), 1)
    assert index_points([2, 0, 1], ranges) is None
    ranges.links[2] = ((0, {0: 1}), (3, {0: 1}), 1)  # j in range(i, i + 3)
    order, points = index_points([2], ranges)  # type: ignore[misc]
    assert order == (0, 2) and points[2].tolist() == [0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5,
                                                      4, 5, 6]
