"""PolyBench-style kernels: hand-derived distances, known-legal schedules, the auto-scheduler."""

from __future__ import annotations

from pathlib import Path

import pytest

from stax import poly

KERNELS = Path(__file__).parent / "kernels"
PARAMS = {
    "gemm": {"ni": 7, "nj": 6, "nk": 5},
    "jacobi-1d": {"tsteps": 4, "n": 12},
    "jacobi-2d": {"tsteps": 3, "n": 9},
    "seidel-2d": {"tsteps": 3, "n": 9},
    "lu": {"n": 8},
    "fdtd-2d": {"tmax": 3, "nx": 7, "ny": 6},
}


def kernel(name: str) -> poly.Scop:
    return poly.parse_c((KERNELS / f"{name}.c").read_text())


def test_jacobi_1d_distances_and_skewed_schedule() -> None:
    scop = kernel("jacobi-1d")
    # S0 (B from A) feeds S1 at i-1, i, i+1 in the same t; S1 (A from B) feeds S0 at t+1
    expected = [(0, -1), (0, 0), (0, 1), (1, -1), (1, 0), (1, 1)]
    assert poly.dependences(scop).distance_vectors("raw") == expected
    skewed = "{ S0[t, i] -> [t, 2t + i, 0]; S1[t, i] -> [t, 2t + i + 1, 1] }"
    assert poly.check(scop, skewed).legal
    # the two outer dimensions satisfy Hδ >= 0, so they can be tiled; unskewed they cannot
    hyperplanes = "{ S0[t, i] -> [t, 2t + i]; S1[t, i] -> [t, 2t + i + 1] }"
    assert poly.parallelepiped_tiling_legal(scop, hyperplanes)
    assert not poly.parallelepiped_tiling_legal(scop, "{ S0[t, i] -> [t, i]; S1[t, i] -> [t, i] }")
    assert not poly.check(scop, "{ S0[t, i] -> [t, i, 0]; S1[t, i] -> [t, i, 1] }").legal
    assert poly.validate(scop, skewed, PARAMS["jacobi-1d"], tile=[2, 4]).ok


def test_seidel_2d_distances_and_pluto_schedule() -> None:
    scop = kernel("seidel-2d")
    # in place: (i-1, *) and (i, j-1) from this t; (i, j), (i, j+1), (i+1, *) from t-1
    expected = sorted(
        [(0, 1, -1), (0, 1, 0), (0, 1, 1), (0, 0, 1)]
        + [(1, 0, 0), (1, 0, -1), (1, -1, -1), (1, -1, 0), (1, -1, 1)]
    )
    assert poly.dependences(scop).distance_vectors("raw") == expected
    pluto = "{ S0[t, i, j] -> [t, t + i, 2t + i + j] }"
    verdict = poly.check(scop, pluto)
    assert verdict.legal and verdict.permutable
    assert not poly.check(scop, "{ S0[t, i, j] -> [t, j, i] }").legal
    assert poly.validate(scop, pluto, PARAMS["seidel-2d"], tile=[2, 2, 2]).ok


def test_gemm_initialisation_after_update_is_illegal() -> None:
    scop = kernel("gemm")
    assert poly.check(scop, "{ S0[i, j] -> [i, 0, j, 0]; S1[i, k, j] -> [i, 1, k, j] }").legal
    late_init = poly.check(scop, "{ S0[i, j] -> [i, 1, j, 0]; S1[i, k, j] -> [i, 0, k, j] }")
    assert not late_init.legal
    assert {(v.source, v.sink) for v in late_init.violations} >= {("S0", "S1")}
    # the update alone carries only its k loop: distance (0, 1, 0) in (i, k, j)
    update = "for (i = 0; i < ni; i++) for (k = 0; k < nk; k++) for (j = 0; j < nj; j++)"
    update += " C[i][j] += alpha * A[i][k] * B[k][j];"
    assert poly.dependences(poly.parse_c(update)).distance_vectors("all") == [(0, 1, 0)]


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_auto_schedule_is_legal_tileable_and_validated(name: str) -> None:
    scop = kernel(name)
    tree = poly.auto_schedule(scop)
    verdict = poly.check(scop, tree)
    assert verdict.legal
    bands = tree.bands()
    outer_path, outer = bands[0]
    assert verdict.bands[0].permutable and outer.permutable
    assert poly.validate(scop, tree, PARAMS[name]).ok
    sizes = [2] * outer.n_member
    assert poly.tile(scop, tree, outer_path, sizes).verdict.legal
    assert poly.validate(scop, tree, PARAMS[name], tile=sizes).ok


def test_auto_schedule_budget_is_a_clear_error() -> None:
    with pytest.raises(poly.BudgetExceeded, match="budget exceeded"):
        poly.auto_schedule(kernel("jacobi-2d"), max_operations=1000)
