"""Seed 003's worked examples and the run-time tiling solver (no C++ compiler needed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stax.api import trace
from stax.lower import lower
from stax.tiling.autofuse import (
    AxisGroups,
    Machine,
    kernel_tiling,
    merge_groups,
    node_groups,
    solve,
    tiling_cases,
)
from stax.tiling.plan import merge_axes


def _nodes(fn: Any, *shapes: tuple[int, ...]) -> Any:
    arrays = [np.zeros(s, np.float32) for s in shapes]
    graph = trace(fn, tuple(arrays)).graph
    strides = [tuple(st // a.itemsize for st in a.strides) for a in arrays]
    return lower(graph, strides).program.nodes


def test_loop_merge_of_an_elementwise_add() -> None:
    """`C[i][j] = A[i][j] + B[i][j]`: {z0,z1} over {N,M} with strides {M,1} -> {z0z1}."""
    (node,) = _nodes(lambda a, b: a + b, (6, 5), (6, 5))
    merged, _ = merge_axes(node)
    assert node.ranges == (6, 5) and merged.ranges == (30,)


def test_load_abs_max_groups() -> None:
    """Load -> Abs -> Max over (s0, s1), Max reducing z1: the node's groups are ()(z0)(z1)."""
    (node,) = _nodes(lambda x: np.abs(x).max(1), (48, 40))
    groups, extents = node_groups(node)
    assert str(groups) == "()(z0)(z1)" and extents == {"z0": 48, "z1": 40}


def test_group_merge_moves_the_reduced_axis() -> None:
    result = merge_groups(AxisGroups(y=("z0", "z1")), AxisGroups(y=("z0",), r=("z1",)))
    assert result and result.reason == "()(z0,z1)() Merge ()(z0)(z1) => ()(z0)(z1)"


def test_groups_that_do_not_merge() -> None:
    assert not merge_groups(AxisGroups(y=("z0", "z1")), AxisGroups(y=("z1", "z0")))
    clash = merge_groups(AxisGroups(x=("z0",), y=("z1",)), AxisGroups(y=("z1",), r=("z0",)))
    assert not clash and "reduction axis on one side" in clash.reason


def test_split_on_z1_and_bind_core_merge() -> None:
    """{z0,z1,z2} split on z1: z1T/z1t; z0 and z1T merge into z0z1T, split over cores into
    z0z1TB and z0z1Tb; z1t and z2 are the vectorized axes."""
    (case,) = [c for c in tiling_cases(AxisGroups(y=("z0", "z1", "z2")))
               if c.split_axes == (("y", "z1"),)]
    assert [str(s) for s in case.splits] == [
        "z1 -> z1T (TILE_OUT) x z1t (TILE_IN)",
        "merge {z0, z1T} -> z0z1T",
        "z0z1T -> z0z1TB (BLOCK_OUT) x z0z1Tb (BLOCK_IN)"]
    assert case.loops == ("z0z1TB", "z0z1Tb", "z1t", "z2")
    assert case.vector_axes == ("z1t", "z2")


def test_vectorized_axes_follow_the_output_layout() -> None:
    """Groups (a,c),(b,d): vectorized (a_in, c, b_in, d) reordered to (a_in, b_in, c, d)."""
    cases = tiling_cases(AxisGroups(x=("a", "c"), y=("b", "d")), layout=("a", "b", "c", "d"))
    first = next(c for c in cases if c.split_axes == (("x", "a"), ("y", "b")))
    assert first.vector_axes == ("at", "bt", "c", "d")


@pytest.mark.parametrize("groups,count", [
    (AxisGroups(y=("z0", "z1", "z2")), 3),
    (AxisGroups(x=("a", "c"), y=("b", "d")), 4),
    (AxisGroups(y=("z0", "z1"), r=("z2", "z3")), 4 + 4),  # + the CPU combine variants
])
def test_cases_are_the_cross_product_of_split_axes(groups: AxisGroups, count: int) -> None:
    cases = tiling_cases(groups)
    assert len(cases) == count and [c.key for c in cases] == list(range(count))


def test_solver_uses_threads_only_where_they_pay() -> None:
    rows = AxisGroups(y=("z0",), r=("z1",))
    tiny = solve(rows, (("z0", 1), ("z1", 1000)), Machine(threads=2))
    assert dict(tiny.sizes)["threads"] == 1
    many_rows = solve(rows, (("z0", 1 << 20), ("z1", 8)), Machine(threads=2))
    assert many_rows.key == 0 and dict(many_rows.sizes)["threads"] == 2
    one_long = solve(rows, (("z0", 1), ("z1", 1 << 22)), Machine(threads=2))
    case = tiling_cases(rows)[one_long.key]
    assert case.combine and dict(one_long.sizes)["threads"] == 2
    assert solve(rows, (("z0", 1), ("z1", 1 << 22)), Machine(threads=2)) is one_long  # memo


def test_tiles_fit_the_cache_and_are_whole_vectors() -> None:
    m = Machine(threads=2)
    tiling = solve(AxisGroups(y=("z0", "z1")), (("z0", 2048), ("z1", 2048)), m)
    sizes = dict(tiling.sizes)
    tile = [v for k, v in sizes.items() if k.endswith("t")]
    assert all(t % (m.vector_bytes // m.itemsize) == 0 for t in tile)
    case = tiling_cases(AxisGroups(y=("z0", "z1")))[tiling.key]
    inner = 2048 if case.split_axes == (("y", "z0"),) else 1
    assert tile[0] * inner * m.itemsize <= m.l2_bytes // 2


def test_softmax_kernel_groups_merge() -> None:
    nodes = _nodes(lambda x: np.exp(x - x.max(-1, keepdims=True)).sum(-1), (4, 4096))
    report = kernel_tiling("kernel0", nodes, threads=2)
    assert report.merged and str(report.merged.groups) == "()(z0)(z1)"
    assert "tiling_key=" in str(report)
