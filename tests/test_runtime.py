"""The runtime: disk cache (atomic, concurrent, corrupt entries), compiler errors, the wrapper's
input checks, recycled outputs never overwriting what the caller kept, threads, the CLI."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_matches, make_array
from hypothesis import given, settings
from hypothesis import strategies as st

import stax
from stax.cli import main
from stax.runtime import wrapper
from stax.runtime.compiler import CompilerNotFound, compile_source


def test_two_processes_compiling_the_same_kernel_both_succeed(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import numpy as np, stax
        x = np.arange(4096, dtype=np.float64).reshape(64, 64)
        r = stax.jit(lambda a: np.sqrt(a) * 3 + a.sum(0))(x)
        assert np.allclose(r, np.sqrt(x) * 3 + x.sum(0))
        print("ok")
    """)
    env = dict(os.environ, STAX_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    # each entry written atomically, with its hash beside it; no build leftovers
    libraries = sorted(p.stem for p in tmp_path.glob("stax_*.so"))
    assert libraries and libraries == sorted(p.stem for p in tmp_path.glob("stax_*.sha256"))
    assert not list(tmp_path.glob("build-*"))


def test_corrupt_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        from stax.runtime.compiler import compile_source
        c = compile_source('extern "C" int stax_answer() { return 42; }\\n', "scalar")
        print(c.cache_hit, c.library.stax_answer())
    """)
    env = dict(os.environ, STAX_CACHE_DIR=str(tmp_path))

    def run() -> str:
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert run() == "False 42"
    (entry,) = tmp_path.glob("stax_*.so")
    entry.write_bytes(b"not an ELF file")  # damaged (e.g. by a full disk)
    assert run() == "False 42"  # rebuilt, not loaded broken
    assert run() == "True 42"  # and cached again


def test_missing_compiler_is_a_clear_error(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CXX", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CompilerNotFound, match="no C\\+\\+ compiler"):
        compile_source('extern "C" void f() {}\n', "scalar")


def test_wrapper_rejects_layouts_the_kernels_do_not_assume() -> None:
    f = stax.jit(lambda a: a + 1)
    x = np.ones((4, 6))
    comp = f.compile(x)
    with pytest.raises(ValueError, match="strides"):
        comp.program.call([np.ones((6, 4)).T])  # same shape, other strides
    np.testing.assert_array_equal(f(np.ones((6, 4)).T), np.ones((4, 6)) + 1)  # recompiles


def test_outputs_kept_by_the_caller_are_never_recycled(monkeypatch: pytest.MonkeyPatch) -> None:
    # [CLIFF] outputs malloc would reuse come from np.empty: recycle these 8 KB ones anyway
    monkeypatch.setattr(wrapper, "RECYCLE_MMAP_BYTES", wrapper.RECYCLE_MIN_BYTES)
    f = stax.jit(lambda a: a * 2.0)
    kept = [f(np.full(1000, float(i))) for i in range(8)]
    views = [f(np.full(1000, 100.0 + i))[10:20] for i in range(4)]
    for _ in range(4):
        f(np.full(1000, -1.0))  # results dropped at once: storage may be recycled
    for i, k in enumerate(kept):
        np.testing.assert_array_equal(k, np.full(1000, 2.0 * i))
    for i, v in enumerate(views):
        np.testing.assert_array_equal(v, np.full(10, 2.0 * (100.0 + i)))


def test_concurrent_calls_from_threads() -> None:
    f = stax.jit(lambda a: np.exp(a - a.max(-1, keepdims=True)).sum(-1))
    inputs = [np.random.default_rng(i).standard_normal((64, 300)) for i in range(8)]
    f(inputs[0])
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        for _ in range(20):
            results[i] = f(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], np.exp(x - x.max(-1, keepdims=True)).sum(-1),
                                   rtol=1e-12)


def test_python_scalar_arguments_do_not_recompile() -> None:
    calls = []

    def step(p, lr):
        calls.append(1)
        return p - lr * p

    f = stax.jit(step)
    x = np.ones(8, np.float32)
    for lr in (0.1, 0.2, 0.3):
        out = f(x, lr)
        assert out.dtype == np.float32  # NEP 50: a Python float is weak
        np.testing.assert_allclose(out, x - np.float32(lr) * x, rtol=1e-7)
    assert len(calls) == 1


def test_explain_report_fields() -> None:
    report = stax.explain(lambda a: a / a.sum(-1, keepdims=True), np.ones((64, 128), np.float32))
    assert report.kernels == ("op0_op1",)
    assert [n.name for n in report.nodes] == ["op0", "op1"]
    assert "region0" in report.code and "#pragma omp" in report.code
    text = str(report)
    for section in ("== Graph ==", "== Scheduler nodes ==", "== Fusion log ==", "== Memory ==",
                    "== Generated C++", "== Wrapper =="):
        assert section in text


def test_cli_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "prog.py"
    src.write_text("import numpy as np\n\ndef f(x):\n    return np.exp(x).sum(-1)\n")
    assert main(["explain", f"{src}:f", "--shapes", "16x32"]) == 0
    out = capsys.readouterr().out
    assert "MemoryDep('primals_1'" in out and "kernel" in out


def test_cli_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "6/6 programs match NumPy" in out
    assert "FAIL" not in out


# --- [H9, issue 9] the warm path: a signature that passed the wrapper's checks ---------------


def _fast_built() -> bool:
    """Whether the fast call (fastcall.c) is built: not with STAX_FASTCALL=0 or without Python
    headers, where calls go through ctypes and every call through the checked wrapper."""
    from stax.runtime.fast import fastcall

    return fastcall() is not None


def _warm_twice(f: stax.api.Jitted, *args: object) -> object:
    """Call `f` twice (the second call takes the warm path) and return the second result."""
    first = f(*args)
    second = f(*args)
    assert_matches(second, first)
    return second


def test_warm_path_matches_numpy_over_dtypes_layouts_and_broadcasting() -> None:
    f = stax.jit(lambda a, b: a * b - a, dynamic=False)
    x = make_array((4, 6), "float64")
    cases = [
        (make_array((8,), "float64"), make_array((8,), "float64", seed=1)),
        (make_array((3, 4), "float32"), make_array((4,), "float32", seed=1)),  # broadcast
        (make_array((3, 4), "int32"), make_array((3, 1), "int32", seed=1)),
        (x.T, x.T[::-1]),  # transposed, reversed
        (x[::2, 1::2], x[1::2, ::2]),  # strided
        (np.array(2.5), np.array(-1.5)),  # 0-d
        (np.ones((0, 5)), np.ones(5)),  # empty
        (np.array([np.nan, np.inf, -np.inf, 1.0]), np.array([1.0, 0.0, 2.0, np.nan])),
    ]
    with np.errstate(invalid="ignore"):
        for a, b in cases:
            assert_matches(_warm_twice(f, a, b), a * b - a)
    assert len(f.fast) == (len(cases) if _fast_built() else 0)  # a warm entry per signature


def test_warm_path_still_refuses_or_recompiles_other_signatures() -> None:
    f = stax.jit(lambda a: a * 2.0 + 1.0, dynamic=False)
    x = np.arange(12.0)
    _warm_twice(f, x)
    compiles = f.cache_info().compiles
    others = [
        x.astype(np.float32),  # dtype
        np.arange(13.0),  # shape
        x[::2].copy().reshape(2, 3),  # rank
        np.arange(24.0)[::2],  # same shape, other strides
        x.astype(np.int64),
    ]
    for a in others:
        assert_matches(f(a), a * 2.0 + 1.0)
    assert f.cache_info().compiles == compiles + len(others)
    raw = np.zeros(12 * 8 + 1, np.uint8)[1:].view(np.float64)  # unaligned: an aligned copy
    raw[:] = x
    assert_matches(f(raw), x * 2.0 + 1.0)
    with pytest.raises(TypeError, match="masked arrays"):  # a subclass: refused, as cold
        f(np.ma.masked_array(x))
    # the same signature after all of these still takes the warm path, correctly
    y = np.linspace(-1.0, 1.0, 12)
    assert_matches(f(y), y * 2.0 + 1.0)


def test_warm_path_scalars_statics_and_results() -> None:
    scaled = stax.jit(lambda a, s, k: a * s + k)
    x = make_array((5,), "float32")
    for s, k in [(0.5, 2), (-3.0, 7), (1e30, -1)]:
        assert_matches(scaled(x, s, k), x * np.float32(s) + np.float32(k))
    assert len(scaled.fast) == _fast_built()  # Python scalars: one signature for all values
    with pytest.raises(OverflowError, match="int64"):
        scaled(x, 0.5, 2**70)
    assert_matches(scaled(x, True, 1), x * True + np.float32(1))  # a bool is not an int
    for _ in range(2):  # NumPy scalars (np.float64 subclasses float): not in the packed key
        assert_matches(scaled(x, np.float64(0.5), np.int64(3)), x * np.float64(0.5) + 3)

    branch = stax.jit(lambda a, k: a * 2 if k > 0 else a * 3)  # k used as a Python value
    y = np.ones(3)
    for k in (1, -1, 1, -1):
        assert_matches(branch(y, k), y * 2 if k > 0 else y * 3)
    # [CALL] a static value is part of the warm key: one warm entry per value seen
    assert len(branch.fast) == 2 * _fast_built()

    total = stax.jit(lambda a: a.sum())
    got = _warm_twice(total, np.arange(4.0))
    assert type(got) is np.float64 and got == 6.0  # a 0-d result is a NumPy scalar
    pair = stax.jit(lambda a: {"lo": a.min(), "both": (a - 1, a + 1)})
    z = np.arange(3, dtype=np.int16)
    assert_matches(_warm_twice(pair, z), {"lo": z.min(), "both": (z - 1, z + 1)})


def test_warm_path_reports_kernel_flags() -> None:
    f = stax.jit(lambda a, b: a // b)
    a = np.arange(5, dtype=np.int32)
    b = np.array([1, 0, 2, 0, 1], np.int32)
    with np.errstate(divide="ignore"):
        want = a // b
    for _ in range(2):  # cold, then warm: both warn as NumPy does
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            assert_matches(f(a, b), want)
    assert bool(f.fast) == _fast_built()


def test_packed_key_separates_what_the_wrapper_checks() -> None:
    from stax.runtime.fast import fastcall

    module = fastcall()
    if module is None:
        pytest.skip("no Python headers: the fast call is not built")
    key = module.key
    x = np.arange(12.0).reshape(3, 4)
    keys = [key((x,)), key((x.T,)), key((x.astype(np.float32),)), key((x[:2],)),
            key((x.reshape(12),)), key((1.0,)), key((1,)), key((x, 1.0)),
            key((np.float64(1.0),)), key((np.float32(1.0),)), key((np.int64(1),)),
            key((np.bool_(True),)), key((True,))]  # [HUNT2] NumPy scalars by dtype, apart
    # from Python's; [CALL] a Python bool apart from an int
    assert all(isinstance(k, bytes) for k in keys)
    assert len(set(keys)) == len(keys)
    assert key((x.copy(),)) == key((x,))  # only the signature counts, not the data
    unaligned = np.zeros(12 * 8 + 1, np.uint8)[1:].view(np.float64)
    for refused in (unaligned, x.astype(">f8"), np.ma.masked_array(x), x.astype(object),
                    x.astype(np.float16), np.float16(1.0), 1j, [1.0], "a"):
        assert key((x, refused)) is None, refused
    packed = np.zeros(20, np.uint8)[4:].view(np.complex64)  # 8-aligned, itemsize 8: accepted
    assert key((packed,)) is not None
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(4, np.complex128), (3,), (8,))
    assert overlapping.flags.aligned and key((overlapping,)) is None  # stride 8, itemsize 16


def test_frameless_calls_raise_flags_and_run_externs() -> None:
    gather = stax.jit(lambda a, i: a[i] * 2.0)  # small: no frame, flags on the C stack
    a = make_array((5, 3), "float64")
    good, bad = np.array([4, 0, -5]), np.array([0, 5])
    assert ("no frame" in gather.compile(a, good).program.wrapper) == _fast_built()
    for _ in range(2):  # cold, then warm
        with pytest.raises(IndexError):
            gather(a, bad)
        assert_matches(gather(a, good), a[good] * 2.0)  # no stale flag from the failed call
    chain = stax.jit(lambda x, y: np.tanh(x @ y).sum(0) + x.max())  # kernels around BLAS
    x, y = make_array((4, 6), "float32"), make_array((6, 3), "float32", seed=1)
    for _ in range(2):
        assert_matches(chain(x, y), np.tanh(x @ y).sum(0) + x.max(), rtol=1e-5)


def test_run_sets_the_calling_threads_team_for_the_call_only() -> None:
    from stax.runtime.fast import fastcall

    module = fastcall()
    if module is None:
        pytest.skip("no Python headers: the fast call is not built")
    probe = compile_source(r"""
        #include <omp.h>
        #include <cstdint>
        extern "C" void region(int32_t* out, int32_t* flags) {
            out[0] = omp_get_max_threads();
            #pragma omp parallel
            {
                #pragma omp single
                out[1] = omp_get_num_threads();
            }
        }
        extern "C" int32_t max_threads() { return omp_get_max_threads(); }
        """, "scalar")
    fn = ctypes.cast(probe.library.region, ctypes.c_void_p).value
    before = probe.library.max_threads()
    out = np.zeros(2, np.int32)
    for size in (1, 2, 3):
        assert module.run(fn, (out,), None, size) is None
        assert list(out) == [size, size]  # a team of `size` (the region is not dynamic)
        assert probe.library.max_threads() == before  # restored after the call


def test_regions_take_the_launch_team_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """[H9] A region's team is num_threads(min(planned, omp_get_max_threads())), the launch-time
    team the call sets; libgomp's dynamic adjustment (load average) is never switched on; a team
    of one opens no region. Results are NumPy's whatever the team."""
    from stax.runtime.fast import _openmp, interruptible
    from stax.tiling import threads

    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "0")  # every kernel planned parallel
    threads.crossover.cache_clear()
    try:
        fn = stax.jit(lambda a: np.exp(a - a.max(-1, keepdims=True)).sum(-1), threads=2)
        x = make_array((64, 300), "float64", seed=3)
        cpp = fn.compile(x).program.cpp
        assert "omp_set_dynamic" not in cpp
        assert "const int stax_team = std::min(2, omp_get_max_threads());" in cpp
        # [BUSY] a team of one (or work too small to pay) calls the body with no OpenMP region:
        # `omp parallel if(false)` would still make a team of one, whose barriers each make a
        # futex system call; the body's buffers stay `__restrict__` parameters
        lines = [line.strip() for line in cpp.splitlines()]
        branch = next(k for k, line in enumerate(lines) if line.startswith("if (stax_team > 1"))
        assert lines[branch + 1: branch + 4] == [
            "#pragma omp parallel num_threads(stax_team)", "{", "stax_body(primals_1, buf2);"]
        assert lines[branch + 5: branch + 7] == [
            "} else {", "stax_body(primals_1, buf2);  // the calling thread alone"]
        assert "const auto stax_body = [&](const double* __restrict__ primals_1, " in cpp
        for runnable in (1, 2, 5):  # an idle machine (team 2), then busy ones (team 1)
            monkeypatch.setattr(threads, "_load", threads._Load("/nonexistent"))
            monkeypatch.setattr(threads._load, "runnable", runnable)
            monkeypatch.setattr(threads, "CORES", 2)
            for _ in range(2):  # cold, then warm (proven) call
                assert_matches(fn(x), np.exp(x - x.max(-1, keepdims=True)).sum(-1), rtol=1e-12)
    finally:
        threads.crossover.cache_clear()
    gomp = _openmp()  # loaded by the kernels above
    assert gomp is not None
    before = gomp.omp_get_max_threads()
    flags = np.zeros(8, np.int32)
    with interruptible(flags.ctypes.data, 1):  # the ctypes path's team (> 16 arguments)
        assert gomp.omp_get_max_threads() == 1
    assert gomp.omp_get_max_threads() == before



@pytest.mark.parametrize(("shape", "dtype", "view"), [
    ((37, 17), "float32", None), ((9, 2049), "float32", None), ((5, 4100), "float32", None),
    ((33, 100), "float64", None), ((40, 300), "int32", "stepped rows")])
def test_outer_blocks_split_over_the_launch_team(monkeypatch: pytest.MonkeyPatch,
                                                 shape: tuple[int, int], dtype: str,
                                                 view: str | None) -> None:
    """[BUSY] A column reduction planned for 4 threads splits its outputs into blocks over the
    team it gets at launch (a team of one reads whole rows): results are NumPy's for teams of 4,
    3 (blocks of no power of two) and 1 (a busy machine), with tails and several blocks."""
    from stax.tiling import threads

    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "0")  # every kernel planned parallel
    threads.crossover.cache_clear()
    x = make_array((2 * shape[0], shape[1]) if view else shape, dtype, seed=7)
    x = x[::2] if view else x
    try:
        fn = stax.jit(lambda a: (a * 2).sum(0) + a.max(0), threads=4)
        assert "omp_get_num_threads() - 1) / omp_get_num_threads()" in fn.compile(x).program.cpp
        monkeypatch.setattr(threads, "CORES", 4)
        for runnable in (1, 2, 9):  # teams of 4, 3, 1
            monkeypatch.setattr(threads, "_load", threads._Load("/nonexistent"))
            monkeypatch.setattr(threads._load, "runnable", runnable)
            assert_matches(fn(x), (x * 2).sum(0) + x.max(0), rtol=1e-5 if dtype == "float32"
                           else 1e-12)
    finally:
        threads.crossover.cache_clear()


def _signature_pool() -> list[np.ndarray]:
    """Arrays of distinct signatures a warm call must never confuse: dtypes, shapes, ranks,
    strides (transposed, reversed, stepped), 0-d and empty."""
    base = make_array((4, 6), "float64", seed=5)
    return [base, base.astype(np.float32), base.T, base[::-1], base[:, ::2], base[1:3],
            base.astype(np.int32), base.reshape(24), base.reshape(24)[::3], np.array(1.5),
            np.ones((0, 6))]


_POOL = _signature_pool()
_SHARED = stax.jit(lambda a: a * 3 - 1, dynamic=False)  # one function over every example


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, len(_POOL) - 1), min_size=1, max_size=12))
def test_warm_path_never_confuses_signatures(order: list[int]) -> None:
    for k in order:
        a = _POOL[k]
        assert_matches(_SHARED(a), a * 3 - 1)


def test_run_passes_a_tuple_of_sizes_as_int64_values() -> None:
    from stax.runtime.fast import fastcall

    module = fastcall()
    if module is None:
        pytest.skip("no Python headers: the fast call is not built")
    probe = compile_source(r"""
        #include <cstdint>
        extern "C" void region(int64_t* out, const int64_t* sizes, int32_t* flags) {
            out[0] = sizes[0] * 3 + sizes[1];
        }
        """, "scalar")
    fn = ctypes.cast(probe.library.region, ctypes.c_void_p).value
    out = np.zeros(1, np.int64)
    module.run(fn, (out, (2**40, -7)), None)
    assert out[0] == 3 * 2**40 - 7
    with pytest.raises(OverflowError):
        module.run(fn, (out, (2**70, 1)), None)
    with pytest.raises(ValueError, match="one tuple"):
        module.run(fn, ((1,), (2,)), None)
    with pytest.raises(TypeError):
        module.run(fn, (out, (1.5, 2)), None)
