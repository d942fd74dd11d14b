"""Dependences: kinds, modes, levels (Def. 7.6), distances; and parallel loops in the code."""

from __future__ import annotations

import islpy as isl
import pytest

from stax import poly
from stax.poly._isl import union_map

STATE_CHAIN = """
for (int i = 0; i < N; ++i) {
  P: tmp[i] = f(state[i], in[i]);
  Q: state[i + 1] = g(tmp[i]);
}
"""
IN_PLACE = "for (t = 0; t < T; t++) for (i = 1; i < N - 1; i++) A[i] = (A[i-1] + A[i+1]) / 2;"


def test_levels_split_loop_carried_from_loop_independent() -> None:
    levels = poly.dependences(poly.parse_c(STATE_CHAIN)).by_level()
    # original timestamps (i, 0) for P and (i, 1) for Q
    assert set(levels) == {1, 2}
    assert levels[1].is_equal(union_map("[N] -> { Q[i] -> P[i + 1] : 0 <= i < N - 1 }"))
    assert levels[2].is_equal(union_map("[N] -> { P[i] -> Q[i] : 0 <= i < N }"))


def test_value_and_memory_modes() -> None:
    scop = poly.parse_c(IN_PLACE)
    value, memory = poly.dependences(scop), poly.dependences(scop, "memory")
    # A[i] written at (t, i) is read at (t, i + 1) and (t + 1, i - 1): the last writer only
    assert value.distance_vectors("raw") == [(0, 1), (1, -1)]
    assert value.raw.is_subset(memory.raw) and not memory.raw.is_subset(value.raw)
    with pytest.raises(poly.PolyError, match="not uniform"):
        memory.distance_vectors("raw")  # every later time step also reads the element
    assert value.waw.is_subset(memory.waw) and value.war.is_subset(memory.war)
    assert value.all.is_equal(value.raw.union(value.war).union(value.waw))


def test_schedules_from_other_isl_contexts_are_accepted() -> None:
    scop = poly.parse_c(IN_PLACE)
    assert poly.check(scop, isl.UnionMap("{ S0[t, i] -> [t, t + i] }")).legal


def test_parallel_loops_get_openmp_pragmas() -> None:
    stencil = "for (t = 0; t < T; t++) for (i = 1; i < N - 1; i++)"
    scop = poly.parse_c(stencil + " A[t + 1][i] = (A[t][i - 1] + A[t][i + 1]) / 2;")
    wave = poly.codegen(scop, "{ S0[t, i] -> [2t + i, t] }")
    lines = wave.splitlines()
    pragma = lines.index(next(x for x in lines if "#pragma omp parallel for" in x))
    assert lines[pragma + 1].lstrip().startswith("for (int c1")  # the inner loop
    assert "#pragma" not in poly.codegen(poly.parse_c(IN_PLACE))
    assert poly.validate(scop, "{ S0[t, i] -> [2t + i, t] }", {"T": 5, "N": 40}).ok
