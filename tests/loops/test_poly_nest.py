"""[POLY] Stencil time loops tiled by the polyhedral layer (issue 10, item 3): every tiled
kernel against the NumPy function itself, run on the same input.

Tiling normally applies only to arrays larger than L2; here `MIN_BYTES` is 0 and the tiles
are tiny (a few points, a few time steps), so small arrays cross many tile boundaries,
including partial tiles (sizes that are not multiples of the tile)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_matches, make_array, process_cpu_seconds, run_sanitized

import stax
from stax.loops import records
from stax.poly import loop_nest

from .test_loops import heat_3d, jacobi_1d, jacobi_2d

SMALL_TILES = {2: (3, 7), 3: (2, 3, 5), 4: (2, 3, 3, 4)}


@pytest.fixture
def tiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the rolled driver's thread count
    monkeypatch.setattr(loop_nest, "TILES", SMALL_TILES)
    monkeypatch.setattr(loop_nest, "TILE_SWEEPS", True)
    monkeypatch.setattr(loop_nest, "PARALLEL_WIDTHS", {2, 3, 4})  # every width, for testing


def smooth_in_place(a, steps):
    """One array read at its neighbours by its own assignment: two buffers (t mod 2)."""
    for _ in range(steps):
        a[1:-1] = (a[:-2] - a[2:]) * 0.5 + a[1:-1]
    return a


def reversed_read(a, steps):
    """Reads the array reversed: the dependence distances grow with the index, no skew makes
    the band permutable, tiling is refused and the rolled driver runs."""
    for _ in range(steps):
        a[1:] = 0.5 * (a[:-1] + a[-2::-1])
    return a


def seidel_rows(a, steps):
    """Gauss-Seidel style: row i reads row i - 1 as this sweep left it, row i + 1 as the last
    sweep did (a wavefront over t, i and the columns)."""
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 1:-1] = (a[i - 1, :-2] + a[i - 1, 1:-1] + a[i - 1, 2:] + a[i, 1:-1]
                          + a[i + 1, :-2] + a[i + 1, 1:-1] + a[i + 1, 2:]) / 7.0
    return a


def row_sweep_own_columns(a, steps):
    """Row i reads its own neighbours: NumPy reads them before the row's store, which an
    in-place element order would not: refused (rolled), still NumPy's values."""
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 1:-1] = (a[i - 1, 1:-1] + a[i, :-2] + a[i, 1:-1] + a[i, 2:]
                          + a[i + 1, 1:-1]) / 5.0
    return a


def run(fn, *args):
    """The jitted function and NumPy on copies of the same arguments: results and mutated
    arguments equal; returns the loop records of the trace."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jitted = stax.jit(fn, strict=True)
    assert_matches(jitted(*got_args), want)
    for g, w in zip(got_args, want_args, strict=True):
        if isinstance(w, np.ndarray):
            assert_matches(g, w)
    return jitted, records(jitted)


def nest_of(recs) -> str:
    """The polyhedral decision of the outermost loop."""
    assert recs[-1].body is not None
    return recs[-1].body.nest


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("n", "steps"), [(5, 2), (23, 7), (40, 10)])
def test_jacobi_1d_tiled(dtype, n, steps):
    _, recs = run(jacobi_1d, make_array((n,), dtype), steps)
    assert "[poly_time_tiling]" in nest_of(recs)
    assert "stax.poly's tiled loop nest" in recs[0].decision


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("steps", [0, 1])
def test_zero_and_one_trip(steps):
    run(jacobi_1d, make_array((9,), "float64"), steps)


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("shape", "steps"), [((4, 3), 3), ((13, 11), 5)])
def test_jacobi_2d_tiled_two_buffers(dtype, shape, steps):
    _, recs = run(jacobi_2d, make_array(shape, dtype), steps)
    assert "[poly_time_tiling]" in nest_of(recs)


@pytest.mark.usefixtures("tiled")
def test_jacobi_2d_transposed_input():
    _, recs = run(jacobi_2d, make_array((11, 8), "float64").T, 6)
    assert "[poly_time_tiling]" in nest_of(recs)


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_heat_3d_tiled(dtype):
    _, recs = run(heat_3d, make_array((7, 6, 9), dtype), make_array((7, 6, 9), dtype, 1), 5)
    assert "[poly_time_tiling]" in nest_of(recs)


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("steps", [2, 9])
def test_own_neighbours_read_two_buffers(steps):
    jitted, recs = run(smooth_in_place, make_array((17,), "float64"), steps)
    assert "[poly_time_tiling]" in nest_of(recs)
    assert "mod 2" in nest_of(recs)
    for seed in (1, 2):  # warm calls: the loop runs in the caller's array (direct entry)
        a = make_array((17,), "float64", seed)
        want = smooth_in_place(a.copy(), steps)
        got = jitted(a, steps)
        assert got is a
        assert_matches(a, want)
    assert all("_direct_runner" in r.__qualname__ for r in jitted.fast.values())


@pytest.mark.usefixtures("tiled")
def test_illegal_tiling_refused_and_still_correct():
    _, recs = run(reversed_read, make_array((40,), "float64"), 9)
    nest = nest_of(recs)
    assert "[rolled_driver]" in nest
    assert "not permutable" in nest
    assert "stax_loop" in recs[0].decision  # the rolled C driver ran


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("shape", "steps"), [((4, 5), 2), ((12, 17), 5)])
def test_seidel_rows_wavefront(dtype, shape, steps):
    _, recs = run(seidel_rows, make_array(shape, dtype), steps)
    nest = nest_of(recs)
    assert "[poly_time_tiling]" in nest
    assert "2t + i + x0" in nest  # the wavefront's innermost member


def test_seidel_rows_wavefront_proven_but_not_taken(monkeypatch: pytest.MonkeyPatch):
    """[SEIDEL] The sweep runs as one nest in its original order; the wavefront's tree and
    proof are shown with why it is not taken."""
    monkeypatch.setattr(loop_nest, "MIN_BYTES", 0)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    _, recs = run(seidel_rows, make_array((12, 10), "float64"), 3)
    nest = nest_of(recs)
    assert "[poly_sweep_nest]" in nest and "check of the original order: legal" in nest
    assert "the wavefront (not taken)" in nest and "does not pay" in nest
    assert "band (permutable)" in nest and "check (every dependence" in nest


@pytest.mark.usefixtures("tiled")
def test_row_sweep_reading_its_own_columns_refused():
    _, recs = run(row_sweep_own_columns, make_array((9, 8), "float64"), 4)
    nest = nest_of(recs)
    assert "[rolled_driver]" in nest and "reads its own row at columns on both sides" in nest


@pytest.mark.usefixtures("tiled")
def test_time_loop_inside_another_loop_keeps_its_driver():
    def repeated(a, rounds, steps):
        for _ in range(rounds):
            for _ in range(steps):
                a[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        return a

    _, recs = run(repeated, make_array((30,), "float64"), 3, 5)
    assert "only outermost loops are tiled" in recs[0].body.nest
    assert "nested loop(s) run by their own C drivers" in recs[-1].decision


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(("fn", "shapes", "steps"), [
    (jacobi_1d, [(23,)], 7), (jacobi_1d, [(40,)], 11), (jacobi_2d, [(13, 11)], 9),
    (heat_3d, [(7, 6, 9), (7, 6, 9)], 5), (smooth_in_place, [(17,)], 9),
    (seidel_rows, [(12, 17)], 3)])
def test_parallel_tiles_equal_numpy(monkeypatch: pytest.MonkeyPatch, threads, fn, shapes,
                                    steps):
    """[POLY2] With 2 threads the tiles of one wavefront run in parallel: the same values as
    NumPy (partial tiles: no size is a multiple of the tile; odd trip counts)."""
    monkeypatch.setenv("OMP_NUM_THREADS", threads)
    arrays = [make_array(shape, "float64", k) for k, shape in enumerate(shapes)]
    _, recs = run(fn, *arrays, steps)
    nest = nest_of(recs)
    assert "[poly_time_tiling]" in nest
    assert ("#pragma omp parallel for" in nest) == (threads == "2")
    assert ("the tiles of one wavefront run in parallel" in nest) == (threads == "2")


@pytest.mark.usefixtures("tiled")
@pytest.mark.parametrize("runnable", [1, 5])
def test_parallel_tiles_take_the_launch_team(monkeypatch: pytest.MonkeyPatch, runnable: int):
    """[BUSY] A nest tiled for 2 threads runs on the team of the cores idle at launch (a busy
    machine: the caller alone, no thread waiting for a core at each wavefront's barrier): one
    launch decision per call, the same values as NumPy for either team."""
    from stax.tiling import threads

    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setattr(threads, "_load", threads._Load("/nonexistent"))
    monkeypatch.setattr(threads._load, "runnable", runnable)  # 5: two cores busy
    monkeypatch.setattr(threads, "CORES", 2)
    decided: list[tuple[int, int]] = []
    launch = threads.team
    monkeypatch.setattr(threads, "team", lambda p: decided.append((p, launch(p))) or launch(p))
    _, recs = run(jacobi_1d, make_array((40,), "float64", 3), 11)
    assert "the tiles of one wavefront run in parallel" in nest_of(recs)
    assert decided == [(2, 2 if runnable == 1 else 1)]


SANITIZED = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
""" + textwrap.dedent("""
    import numpy as np, stax
    from stax.loops import records
    from stax.poly import loop_nest
    from loops.test_loops import heat_3d, jacobi_1d, jacobi_2d

    loop_nest.MIN_BYTES = 0
    loop_nest.TILES = {2: (3, 7), 3: (2, 3, 5), 4: (2, 3, 3, 4)}
    loop_nest.PARALLEL_WIDTHS = {2, 3, 4}
    rng = np.random.default_rng(0)
    for fn, shapes in ((jacobi_1d, [(23,)]), (jacobi_2d, [(13, 11)]),
                       (heat_3d, [(7, 6, 9), (7, 6, 9)])):
        args = [rng.random(shape) for shape in shapes]
        jitted = stax.jit(fn)
        got = jitted(*[a.copy() for a in args], 7)
        assert "tiles of one wavefront run in parallel" in records(jitted)[-1].body.nest
        np.testing.assert_array_equal(got, fn(*[a.copy() for a in args], 7))
    print("sanitized ok")
""")


def test_parallel_tiles_run_clean_under_sanitizers(tmp_path: Path) -> None:
    """[POLY2] The tiled nests on 2 threads (partial tiles) under ASan + UBSan."""
    run_sanitized(SANITIZED, tmp_path / "cache")


@pytest.mark.usefixtures("tiled")
def test_explain_shows_the_parallel_tile_band(monkeypatch: pytest.MonkeyPatch):
    """The tile band is (tile t + tile x0, tile t, tile x1): isl's check finds its second
    member parallel, and that loop carries the pragma."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    a = make_array((13, 11), "float64")
    jitted = stax.jit(jacobi_2d)
    jitted(a.copy(), 9)
    text = str(stax.explain(jitted, a.copy(), 9))
    assert "band (permutable, coincident=010)" in text
    assert "band at []: permutable, parallel members [-p-]" in text
    assert ("#pragma omp parallel for schedule(dynamic, 1) "
            "num_threads(min(2, omp_get_max_threads()))") in text  # [BUSY] the launch team


@pytest.mark.usefixtures("tiled")
def test_parallel_tiles_kept_off_where_they_do_not_pay(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.setattr(loop_nest, "PARALLEL_WIDTHS", {2})
    _, recs = run(jacobi_2d, make_array((13, 11), "float64"), 5)
    nest = nest_of(recs)
    assert "[rolled_driver]" in nest and "the rolled driver (each step's kernels" in nest
    assert "parallel members [-p-]" in nest  # the proof is still shown


def test_small_arrays_keep_the_rolled_driver():
    _, recs = run(jacobi_1d, make_array((30,), "float64"), 6)
    nest = nest_of(recs)
    assert "[rolled_driver]" in nest and "fit in L2" in nest


@pytest.mark.usefixtures("tiled")
def test_loop_index_used_is_not_a_scop():
    def shifting(a, steps):
        for t in range(steps):
            a[1:] = a[:-1] + t
        return a

    _, recs = run(shifting, make_array((12,), "float64"), 4)
    assert "not a stencil SCoP" in nest_of(recs)


@pytest.mark.usefixtures("tiled")
def test_explain_shows_tree_and_proof():
    a = make_array((20,), "float64")
    jitted = stax.jit(jacobi_1d)
    jitted(a.copy(), 5)
    text = str(stax.explain(jitted, a.copy(), 5))
    assert "polyhedral schedule [poly_time_tiling]" in text
    assert "schedule tree:" in text and "band (permutable)" in text
    assert "RAW dependences" in text and "WAR dependences" in text
    assert "check (every dependence strictly lexicographically forward" in text
    assert "legal" in text
    assert "extern \"C\" void stax_poly" in text


CHILD = textwrap.dedent("""
    import json, signal, time
    import numpy as np, stax
    from stax.loops import records
    from stax.poly import loop_nest

    signal.alarm(120)  # a hang fails the test instead of blocking it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    loop_nest.MIN_BYTES = 0

    def jacobi_1d(a, steps):
        b = a.copy()
        for _ in range(steps):
            b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
            a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
        return a

    h = stax.jit(jacobi_1d)
    a = np.linspace(0, 1, 200_000)
    h(a.copy(), 3)
    (rec,) = records(h)
    out = {"tiled": "[poly_time_tiling]" in rec.body.nest}
    print("ready", flush=True)
    start = time.monotonic()
    try:  # the tiled nest's runner itself, for 10**6 time steps (minutes)
        rec.body.runner([a.copy(), a.copy()], range(10**6))
    except KeyboardInterrupt:
        out["caught"] = time.process_time()
        out["call"] = time.monotonic() - start
    want = jacobi_1d(a.copy(), 3)
    out["correct_after"] = bool(np.array_equal(h(a.copy(), 3), want))
    print(json.dumps(out), flush=True)
""")


def test_ctrl_c_stops_a_tiled_nest(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()[-3000:]
        time.sleep(0.3)  # the nest is running by then
        sent = process_cpu_seconds(proc.pid)
        proc.send_signal(signal.SIGINT)
        result = json.loads(proc.stdout.readline())
        assert proc.wait(timeout=60) == 0, proc.stderr.read()[-3000:]
    finally:
        proc.kill()
        proc.wait()
    assert result["tiled"]
    assert "caught" in result, "no KeyboardInterrupt"
    assert result["caught"] - sent < 0.5  # CPU seconds the nest ran after SIGINT
    assert result["call"] < 60  # 10**6 time steps take minutes: the call was cut short
    assert result["correct_after"]
