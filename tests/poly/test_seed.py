"""Every worked example of seed 002 and of seed 000 §7.7, with facts computed by hand there."""

from __future__ import annotations

import islpy as isl
import pytest

from stax import poly
from stax.poly import transform as T
from stax.poly import tree
from stax.poly._isl import sets_of, union_map, union_set

SEPARATED = """
for (int i = 0; i < N; ++i)
  P: tmp[i] = f(in[i]);
for (int i = 0; i < N; ++i)
  Q: out[i] = g(tmp[i]);
"""

STATE_CHAIN = """
state[0] = seed;
for (int i = 0; i < N; ++i) {
  P: tmp[i] = f(state[i], in[i]);
  Q: state[i + 1] = g(tmp[i]);
}
"""

TRANSPOSE = """
for (int i = 0; i < M; ++i)
  for (int j = 0; j < N; ++j)
    S: T[j][i] = A[i][j];
"""

STENCIL = """
for (int t = 0; t < T; ++t)
  for (int i = 1; i < N - 1; ++i)
    S: A[t + 1][i] = (A[t][i - 1] + A[t][i] + A[t][i + 1]) / 3;
"""

MATMUL = """
for (int i = 0; i < M; ++i)
  for (int j = 0; j < N; ++j)
    for (int k = 0; k < K; ++k)
      U: C[i][j] += A[i][k] * B[k][j];
"""

REDUCTION = """
int sum = 0;
for (int i = 0; i < N; ++i)
  S: sum += a[i];
"""


def distances(scop: poly.Scop, schedule: str, among: str = "") -> list[tuple[int, ...]]:
    """Distances of the dependences' images under `schedule` (between statements `among`)."""
    smap = poly.check(scop, schedule).tree.to_map()
    deps = poly.dependences(scop).all
    if among:
        keep = scop.domain.intersect(union_set(f"{{ {among} }}"))
        deps = deps.intersect_domain(keep).intersect_range(keep)
    out: set[tuple[int, ...]] = set()
    for delta in sets_of(deps.apply_domain(smap).apply_range(smap).deltas()):
        delta = delta.project_out(isl.dim_type.param, 0, delta.dim(isl.dim_type.param))
        n = delta.dim(isl.dim_type.set)
        delta.foreach_point(
            lambda p, n=n: out.add(
                tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(n))
            )
        )
    return sorted(out)


def test_basic_fusion_and_fission_back_are_legal() -> None:
    scop = poly.parse_c(SEPARATED)
    assert poly.dependences(scop).raw.is_equal(union_map("[N] -> { P[i] -> Q[i] : 0 <= i < N }"))
    assert poly.check(scop, scop.schedule).legal
    fused = poly.check(scop, "{ P[i] -> [i, 0]; Q[i] -> [i, 1] }")
    assert fused.legal
    assert distances(scop, "{ P[i] -> [i, 0]; Q[i] -> [i, 1] }") == [(0, 1)]
    assert distances(scop, "{ P[i] -> [0, i]; Q[i] -> [1, i] }") == [(1, 0)]
    tree_fused = T.fuse(scop, scop.schedule)
    assert tree_fused.verdict.legal
    back = T.distribute(scop, tree_fused.tree)
    assert back.verdict.legal
    assert back.tree.to_map().is_equal(scop.schedule.to_map())


def test_fission_of_the_state_chain_is_illegal_with_distance_minus_one_one() -> None:
    scop = poly.parse_c(STATE_CHAIN)
    fused = "{ S0[] -> [0, 0, 0]; P[i] -> [1, i, 0]; Q[i] -> [1, i, 1] }"
    assert poly.check(scop, scop.schedule).legal and poly.check(scop, fused).legal
    assert distances(scop, fused, "P[i]; Q[i]") == [(0, 0, 1), (0, 1, -1)]
    fission = "{ S0[] -> [0, 0]; P[i] -> [1, i]; Q[i] -> [2, i] }"
    assert distances(scop, fission, "P[i]; Q[i]") == [(-1, 1), (1, 0)]
    verdict = poly.check(scop, fission)
    assert not verdict.legal
    (v,) = verdict.violations
    assert (v.kind, v.source, v.sink) == ("raw", "Q", "P")
    assert v.sink_instance[0] == v.source_instance[0] + 1  # Q(i) -> P(i + 1)
    assert (v.sink_time[0] - v.source_time[0], v.sink_time[1] - v.source_time[1]) == (-1, 1)
    # the same through the tree transformation: distribute the loop band (after S0)
    assert not poly.distribute(scop, scop.schedule, (1, 0)).verdict.legal


def test_transpose_interchange_is_vacuously_legal() -> None:
    scop = poly.parse_c(TRANSPOSE)
    assert poly.dependences(scop).all.is_empty()
    assert poly.check(scop, "{ S[i, j] -> [j, i] }").legal
    assert T.interchange(scop, scop.schedule, (), 0, 1).verdict.legal


def test_interchange_of_distance_one_minus_one_is_illegal() -> None:
    scop = poly.parse_c(
        "for (i = 1; i < N; i++) for (j = 0; j < N - 1; j++) X[i][j] = X[i-1][j+1] + 1;"
    )
    assert poly.dependences(scop).distance_vectors() == [(1, -1)]
    assert poly.check(scop, scop.schedule).legal
    verdict = T.interchange(scop, scop.schedule, (), 0, 1).verdict
    assert not verdict.legal
    v = verdict.violations[0]
    assert (
        v.sink_instance[0] - v.source_instance[0],
        v.sink_instance[1] - v.source_instance[1],
    ) == (1, -1)
    # seed 000 §7.7: skew j' = i + j makes it legal, Θδ = (1, 0)
    skewed = poly.check(scop, "{ S0[i, j] -> [i, i + j] }")
    assert skewed.legal
    assert distances(scop, "{ S0[i, j] -> [i, i + j] }") == [(1, 0)]
    # and a fully permutable band, so rectangular tiling becomes legal (Thm. 7.3)
    assert not poly.check(scop, scop.schedule).permutable
    assert skewed.permutable
    assert not T.tile(scop, scop.schedule, (), [4, 4]).verdict.legal
    assert T.tile(scop, T.skew(scop, scop.schedule, (), 1, 0, 1).tree, (), [4, 4]).verdict.legal


def test_stencil_skew_and_wavefront() -> None:
    scop = poly.parse_c(STENCIL)
    assert poly.dependences(scop).distance_vectors() == [(1, -1), (1, 0), (1, 1)]
    original = poly.check(scop, scop.schedule)
    assert original.legal and not original.permutable
    assert distances(scop, "{ S[t, i] -> [t, 2t + i] }") == [(1, 1), (1, 2), (1, 3)]
    skewed = T.skew(scop, scop.schedule, (), 1, 0, 2)
    assert skewed.verdict.legal and skewed.verdict.permutable
    wave = T.wavefront(scop, scop.schedule, (), factor=2)
    assert wave.tree.to_map().is_equal(
        poly.ScheduleTree.from_map(
            poly.check(scop, "{ S[t, i] -> [2t + i, t] }").tree.to_map(), scop.domain
        ).to_map()
    )
    assert distances(scop, "{ S[t, i] -> [2t + i, t] }") == [(1, 1), (2, 1), (3, 1)]
    assert wave.verdict.legal
    assert wave.verdict.bands[0].parallel == (False, True)  # inner dimension parallel
    # skew factor 1: the first wavefront distance of δ = -1 is 0: not fully parallel
    assert distances(scop, "{ S[t, i] -> [t + i, t] }") == [(0, 1), (1, 1), (2, 1)]
    weak = T.wavefront(scop, scop.schedule, (), factor=1)
    assert weak.verdict.legal
    assert weak.verdict.bands[0].parallel == (False, False)


def test_matmul_strip_mining_and_tiling_legal_reordering_k_illegal() -> None:
    scop = poly.parse_c(MATMUL)
    assert poly.dependences(scop).distance_vectors() == [(0, 0, 1)]
    mined = T.strip_mine(scop, scop.schedule, (), 0, 4)
    assert mined.verdict.legal
    assert distances(scop, "{ U[i, j, k] -> [floor(i/4), i mod 4, j, k] }") == [(0, 0, 0, 1)]
    tiled = T.tile(scop, scop.schedule, (), [4, 8])
    assert tiled.verdict.legal
    assert distances(scop, "{ U[i, j, k] -> [floor(i/4), floor(j/8), i mod 4, j mod 8, k] }") == [
        (0, 0, 0, 0, 1)
    ]
    reversed_k = T.reverse(scop, scop.schedule, (), 2)
    assert not reversed_k.verdict.legal
    assert not poly.check(scop, "[K] -> { U[i, j, k] -> [i, j, K - 1 - k] }").legal


def test_reduction_constant_schedule_is_illegal() -> None:
    scop = poly.parse_c(REDUCTION)
    loop = scop.statement("S")
    assert loop.iterators == ("i",)
    assert distances(scop, scop.schedule.to_map(), "S[i]") == [(0, 1)]
    verdict = poly.check(scop, "{ S0[] -> [0, 0]; S[i] -> [1, 0] }")
    assert not verdict.legal
    assert all(v.source_time == v.sink_time for v in verdict.violations if v.source == "S")
    assert poly.check(scop, "{ S0[] -> [0, 0]; S[i] -> [1, i] }").legal
    # putting the instances into a set node does not remove the dependences either
    two = poly.parse_c("for (i = 0; i < 2; i++) S: sum += a[i];")
    parts = tuple(tree.Filter(union_set(f"{{ S[{i}] }}")) for i in range(2))
    verdict = poly.check(two, poly.ScheduleTree(two.domain, tree.SetNode(parts)))
    assert not verdict.legal
    assert ((0,), (1,)) in {(v.source_instance, v.sink_instance) for v in verdict.violations}


def test_rectangular_tiling_legal_exactly_for_fully_permutable_bands() -> None:
    for source, permutable in [(STENCIL, False), (MATMUL, True)]:
        scop = poly.parse_c(source)
        assert poly.check(scop, scop.schedule).permutable is permutable
        assert T.tile(scop, scop.schedule, (), [2, 2]).verdict.legal is permutable


def test_parallelepiped_condition() -> None:
    scop = poly.parse_c(STENCIL)
    assert not poly.parallelepiped_tiling_legal(scop, "{ S[t, i] -> [t, i] }")
    assert poly.parallelepiped_tiling_legal(scop, "{ S[t, i] -> [t, t + i] }")
    # H = [[1, 1], [1, -1]]: Hδ = (0, 2), (1, 1), (2, 0) >= 0
    assert poly.parallelepiped_tiling_legal(scop, "{ S[t, i] -> [t + i, t - i] }")
    # H = [[1, 1], [0, 1]]: H(1, -1) = (0, -1)
    assert not poly.parallelepiped_tiling_legal(scop, "{ S[t, i] -> [t + i, i] }")


@pytest.mark.parametrize("source", [SEPARATED, STATE_CHAIN, MATMUL, STENCIL])
def test_yaml_round_trip(source: str) -> None:
    scop = poly.parse_c(source)
    back = poly.ScheduleTree.from_yaml(scop.schedule.to_yaml())
    assert back.to_map().is_equal(scop.schedule.to_map())
