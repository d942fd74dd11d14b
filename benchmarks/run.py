"""Benchmark runner: NumPy vs stax.jit vs torch.compile on the workloads of workloads.py.

    python benchmarks/run.py [--sizes 4096x4096,2048x2048,256x1024,1x1000] [--repeat N]
                             [--only softmax,...] [--threads T] [--no-torch] [--busy 2]
                             [--clock wall|cpu] [--markdown OUT.md]

``--busy 2`` runs two spinning background processes throughout (a loaded machine).
``--clock cpu`` (with ``--threads 1``) times the CPU time of the calling thread instead of the
wall clock: every implementation then runs on that thread, and preemption by other processes on
a loaded machine does not count (memory-bandwidth contention still does).

Method (per workload and size):
1. Inputs are float32 from a fixed seed. NumPy runs the workload's function: the reference.
2. Stax compiles that same function object: the first call of ``stax.jit(fn)`` is the cold
   compile (a fresh ``STAX_CACHE_DIR`` per run), the first call of a second ``stax.jit(fn)`` is
   the warm compile (disk cache hit); both are first calls, so they include one run.
   torch.compile compiles the PyTorch twin the same way (fresh ``TORCHINDUCTOR_CACHE_DIR``;
   ``torch._dynamo.reset()`` before each compile; static shapes, default inductor backend).
   One-time process start-up (imports, ISA probes) is paid by the per-call probe, which runs
   first, and is not in the workloads' compile times.
3. Each implementation's outputs are checked against NumPy's; a mismatch or an exception is
   reported and that implementation is not timed for this case.
4. numpy, stax, torch and two baselines — allocate-and-copy (``x.copy()`` of an array of half the
   workload's minimum bytes, so the copy reads and writes exactly that many bytes) and first-touch
   of a fresh output (``np.empty`` + ``fill`` of the workload's output bytes) — run round-robin
   for ``--repeat`` rounds after one warm-up round, garbage collection off; medians are reported.

Minimum bytes = every input read once + every output written once. Threads: stax gets
``OMP_NUM_THREADS=T`` and torch ``torch.set_num_threads(T)`` (T = os.cpu_count() by default);
NumPy's elementwise ops and reductions are single-threaded.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import gc
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

# [CLIFF3] workloads imports torch, whose libgomp (the one stax's kernels then use) reads
# OMP_WAIT_POLICY once, when it loads: set here what `import stax` first would set (threads
# waiting at a barrier sleep), else Stax's idle workers spin ~3 ms after each region
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
from workloads import STREAM_KERNELS, WORKLOADS, Workload, tiny_add  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
SEED = 0
DEFAULT_SIZES = "4096x4096,2048x2048,256x1024,1x1000"  # issue 9
RTOL, ATOL = 1e-4, 1e-5
IMPLS = ("numpy", "stax", "torch")
BASELINES = ("copy", "touch")
OVERHEAD_CALLS = 200  # calls per timed batch in the per-call overhead probe
TINY_SIZE = 4

Shape = tuple[int, int]


# --- results ---------------------------------------------------------------------------------


@dataclass
class Compiled:
    """A compiled implementation bound to its inputs, with its first output and compile times."""

    call: Callable[[], Any]
    output: Any
    cold_s: float | None = None
    warm_s: float | None = None


@dataclass
class CaseResult:
    """One workload at one size: median seconds per implementation, and what went wrong."""

    workload: str
    shape: Shape
    min_bytes: int
    out_bytes: int
    seconds: dict[str, float] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    compiled: dict[str, Compiled] = field(default_factory=dict)

    def ratio(self, num: str, den: str) -> float | None:
        if num in self.seconds and den in self.seconds:
            return self.seconds[num] / self.seconds[den]
        return None


@dataclass
class Peers:
    """The compilers under test; a missing one carries the reason it is missing."""

    stax: ModuleType | None
    torch: ModuleType | None
    missing: dict[str, str]


# --- timing ----------------------------------------------------------------------------------


def time_round_robin(calls: dict[str, Callable[[], Any]], repeat: int,
                     clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds of each call, the calls interleaved round-robin after one warm-up round."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, call in calls.items():
                start = clock()
                result = call()
                samples[name].append(clock() - start)
                del result
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(times) for name, times in samples.items()}


def compile_twice(make: Callable[[], Callable[..., Any]], args: Sequence[Any],
                  reset: Callable[[], None]) -> Compiled:
    """Cold compile (first call of ``make()``), then warm compile (first call of a second one)."""
    reset()
    cold_fn = make()
    start = time.perf_counter()
    output = cold_fn(*args)
    cold_s = time.perf_counter() - start
    reset()
    warm_fn = make()
    start = time.perf_counter()
    warm_fn(*args)
    warm_s = time.perf_counter() - start
    return Compiled(lambda: warm_fn(*args), output, cold_s, warm_s)


def compile_stax(stax: ModuleType, fn: Callable[..., Any], args: Sequence[Any]) -> Compiled:
    # Stax exposes no in-process cache reset: re-decorating makes a new jitted function, whose
    # first call finds the kernels in the disk cache.
    return compile_twice(lambda: stax.jit(fn), args, reset=lambda: None)


def compile_torch(torch: ModuleType, fn: Callable[..., Any], args: Sequence[Any]) -> Compiled:
    return compile_twice(lambda: torch.compile(fn, dynamic=False), args,
                         reset=torch._dynamo.reset)


# --- verification ----------------------------------------------------------------------------


def as_arrays(result: Any) -> tuple[np.ndarray, ...]:
    """A workload's result (array, tensor, or a tuple/list/dict of them) as NumPy arrays."""
    if isinstance(result, dict):
        return as_arrays(tuple(result.values()))
    if isinstance(result, tuple | list):
        return tuple(a for item in result for a in as_arrays(item))
    if hasattr(result, "detach"):  # a torch tensor
        return (result.detach().cpu().numpy(),)
    return (np.asarray(result),)


def mismatch(reference: tuple[np.ndarray, ...], result: Any, tolerance: str) -> str | None:
    """Why ``result`` differs from NumPy's ``reference`` beyond float32 tolerance, or None."""
    got = as_arrays(result)
    if len(got) != len(reference):
        return f"{len(got)} outputs, NumPy gives {len(reference)}"
    for i, (ref, out) in enumerate(zip(reference, got, strict=True)):
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return (f"output {i} is {out.dtype}{list(out.shape)}, "
                    f"NumPy's {ref.dtype}{list(ref.shape)}")
        ref64 = ref.astype(np.float64)
        scale = np.abs(ref64)
        if tolerance == "magnitude" and ref.ndim > 0:
            scale = scale.max(axis=-1, keepdims=True)
        out64 = out.astype(np.float64)
        error = np.abs(out64 - ref64)
        if tolerance == "ulp":  # one unit in the last place of the reference's own dtype
            error = np.where(error <= np.spacing(np.abs(ref)).astype(np.float64), 0.0, error)
        both_nan = np.isnan(out64) & np.isnan(ref64)  # [CLIFF] NaN where NumPy gives NaN
        if not np.all((error <= ATOL + RTOL * scale) | both_nan):  # NaN on one side fails
            return f"output {i}: max abs error {np.nanmax(error):.3g} ({tolerance} tolerance)"
    return None


def describe_error(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    return f"{type(exc).__name__}: {message}"[:200]


# --- running ---------------------------------------------------------------------------------


def load_peers(use_torch: bool, threads: int) -> Peers:
    """Import stax and torch after the thread and cache environment is set."""
    missing: dict[str, str] = {}
    stax: ModuleType | None = None
    torch: ModuleType | None = None
    try:
        import stax as stax_module

        if hasattr(stax_module, "jit"):
            stax = stax_module
        else:
            missing["stax"] = "stax.jit is not available"
    except Exception as exc:  # a half-written package must not stop the NumPy/torch columns
        missing["stax"] = f"import stax failed: {describe_error(exc)}"
    if not use_torch:
        missing["torch"] = "torch.compile skipped (--no-torch)"
    else:
        try:
            import torch as torch_module

            torch_module.set_num_threads(threads)
            torch = torch_module
        except ImportError:
            missing["torch"] = "torch is not installed (pip install torch==2.13.0)"
    return Peers(stax, torch, missing)


def compile_peers(peers: Peers, fn_numpy: Callable[..., Any], fn_torch: Callable[..., Any],
                  inputs: tuple[np.ndarray, ...]) -> tuple[dict[str, Compiled], dict[str, str]]:
    """Compile a program with each available peer; errors are recorded, not raised."""
    compiled: dict[str, Compiled] = {}
    problems: dict[str, str] = {}
    attempts: dict[str, Callable[[], Compiled]] = {}
    if peers.stax is not None:
        stax = peers.stax
        attempts["stax"] = lambda: compile_stax(stax, fn_numpy, inputs)
    if peers.torch is not None:
        torch = peers.torch
        tensors = tuple(torch.from_numpy(a) for a in inputs)  # shares memory: no copy
        attempts["torch"] = lambda: compile_torch(torch, fn_torch, tensors)
    for name, attempt in attempts.items():
        try:
            compiled[name] = attempt()
        except Exception as exc:
            problems[name] = f"error {describe_error(exc)}"
    return compiled, problems


def run_case(peers: Peers, workload: Workload, shape: Shape, repeat: int,
             clock: Callable[[], float]) -> CaseResult:
    inputs = workload.make_inputs(np.random.default_rng(SEED), *shape)
    reference = as_arrays(workload.numpy_fn(*inputs))
    out_bytes = sum(a.nbytes for a in reference)
    result = CaseResult(workload.name, shape, sum(a.nbytes for a in inputs) + out_bytes, out_bytes)

    compiled, result.problems = compile_peers(peers, workload.numpy_fn, workload.torch_fn, inputs)
    calls: dict[str, Callable[[], Any]] = {"numpy": lambda: workload.numpy_fn(*inputs)}
    for name, impl in compiled.items():
        result.compiled[name] = impl
        try:
            why = mismatch(reference, impl.output, workload.tolerance)
        except Exception as exc:
            why = f"unreadable output: {describe_error(exc)}"
        if why is None:
            calls[name] = impl.call
        else:
            result.problems[name] = f"MISMATCH {why}"

    copy_source = np.ones(result.min_bytes // 2, dtype=np.uint8)
    calls["copy"] = copy_source.copy
    calls["touch"] = lambda: first_touch(out_bytes)
    try:
        result.seconds = time_round_robin(calls, repeat, clock)
    except Exception as exc:  # a peer that verified but then fails while timed
        result.problems["timing"] = f"error {describe_error(exc)}"
    return result


def first_touch(nbytes: int) -> np.ndarray:
    fresh = np.empty(nbytes, dtype=np.uint8)
    fresh.fill(1)
    return fresh


@dataclass
class Overhead:
    """Per-call time of ``tiny_add`` on 4 elements, and its compile times (process start-up)."""

    micros: dict[str, float]
    compiled: dict[str, Compiled]
    problems: dict[str, str]


def measure_overhead(peers: Peers, repeat: int, clock: Callable[[], float]) -> Overhead:
    x = np.arange(TINY_SIZE, dtype=np.float32)
    y = np.ones(TINY_SIZE, dtype=np.float32)
    compiled, problems = compile_peers(peers, tiny_add, tiny_add, (x, y))
    single: dict[str, Callable[[], Any]] = {"numpy": lambda: tiny_add(x, y)}
    single.update({name: impl.call for name, impl in compiled.items()})

    def batch(call: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(OVERHEAD_CALLS):
                call()
        return run

    seconds = time_round_robin({name: batch(call) for name, call in single.items()}, repeat,
                               clock)
    micros = {name: s / OVERHEAD_CALLS * 1e6 for name, s in seconds.items()}
    return Overhead(micros, compiled, problems)


def measure_stream(shape: Shape, repeat: int,
                   clock: Callable[[], float]) -> list[tuple[str, float, float]]:
    """(kernel, median ms, GB/s) of the STREAM-style kernels at ``shape``, NumPy only."""
    rng = np.random.default_rng(SEED)
    arrays = [rng.standard_normal(shape, dtype=np.float32) for _ in range(2)]
    calls = {k.name: (lambda k=k: k.fn(*arrays[:k.arity])) for k in STREAM_KERNELS}
    seconds = time_round_robin(calls, repeat, clock)
    elements = math.prod(shape)
    return [(k.name, seconds[k.name] * 1e3, k.bytes_per_element * elements / seconds[k.name] / 1e9)
            for k in STREAM_KERNELS]


# --- reporting -------------------------------------------------------------------------------


def fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def render_table(headers: Sequence[str], rows: Iterable[Sequence[str]], markdown: bool) -> str:
    rows = [list(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join
    out = [line(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths,
                                                                             strict=True)))]
    out += [line(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                               strict=True)))
            for r in rows]
    return "\n".join(out)


def size_name(shape: Shape) -> str:
    return f"{shape[0]}x{shape[1]}"


def impl_cell(case: CaseResult, impl: str) -> str:
    if impl in case.seconds:
        return f"{case.seconds[impl] * 1e3:.3f}"
    problem = case.problems.get(impl)
    if problem is None:
        return "n/a"  # the peer is missing: said once under Problems
    return "MISMATCH" if problem.startswith("MISMATCH") else "error"


def results_table(cases: Sequence[CaseResult], markdown: bool) -> str:
    headers = ["workload", "size", "numpy ms", "stax ms", "torch ms", "stax/numpy", "stax/torch",
               "stax GB/s", "% of copy", "copy ms", "copy GB/s", "touch ms"]
    rows = []
    for c in cases:
        stax_s, copy_s = c.seconds.get("stax"), c.seconds.get("copy")
        rows.append([
            c.workload, size_name(c.shape),
            *(impl_cell(c, impl) for impl in IMPLS),
            fmt(c.ratio("stax", "numpy"), ".2f"), fmt(c.ratio("stax", "torch"), ".2f"),
            fmt(c.min_bytes / stax_s / 1e9 if stax_s else None, ".1f"),
            fmt(100 * copy_s / stax_s if stax_s and copy_s else None, ".0f"),
            fmt(copy_s * 1e3 if copy_s else None, ".3f"),
            fmt(c.min_bytes / copy_s / 1e9 if copy_s else None, ".1f"),
            fmt(c.seconds["touch"] * 1e3 if "touch" in c.seconds else None, ".3f"),
        ])
    return render_table(headers, rows, markdown)


def compile_table(cases: Sequence[CaseResult], overhead: Overhead, markdown: bool) -> str:
    headers = ["workload", "size", "stax cold s", "stax warm ms", "torch cold s", "torch warm ms"]

    def cells(compiled: dict[str, Compiled]) -> list[str]:
        out = []
        for impl in ("stax", "torch"):
            done = compiled.get(impl)
            out += [fmt(done.cold_s if done else None, ".3f"),
                    fmt(done.warm_s * 1e3 if done and done.warm_s is not None else None, ".1f")]
        return out

    rows = [["tiny_add (incl. start-up)", f"{TINY_SIZE}", *cells(overhead.compiled)]]
    rows += [[c.workload, size_name(c.shape), *cells(c.compiled)] for c in cases]
    return render_table(headers, rows, markdown)


def overhead_table(overhead: Overhead, markdown: bool) -> str:
    rows = [[impl, fmt(overhead.micros.get(impl), ".2f"),
             fmt(overhead.micros[impl] - overhead.micros["numpy"]
                 if impl in overhead.micros else None, "+.2f")]
            for impl in IMPLS]
    return render_table(["impl", f"µs per call ({TINY_SIZE}-element add)", "vs numpy µs"], rows,
                        markdown)


def stream_table(stream: dict[Shape, list[tuple[str, float, float]]], markdown: bool) -> str:
    rows = [[size_name(shape), name, f"{ms:.3f}", f"{gbs:.1f}"]
            for shape, results in stream.items() for name, ms, gbs in results]
    return render_table(["size", "kernel (numpy)", "ms", "GB/s"], rows, markdown)


def geomean(values: Iterable[float]) -> float | None:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summary_lines(cases: Sequence[CaseResult]) -> list[str]:
    lines = []
    groups = {"all sizes": list(cases)}
    groups |= {size_name(s): [c for c in cases if c.shape == s] for s in dict.fromkeys(
        c.shape for c in cases)}
    for label, group in groups.items():
        for other in ("torch", "numpy"):
            ratios = [r for c in group if (r := c.ratio("stax", other)) is not None]
            lines.append(f"geomean stax/{other} ({label}): {fmt(geomean(ratios), '.3f')} "
                         f"over {len(ratios)} of {len(group)} cases")
    return lines


def problem_lines(missing: dict[str, str], cases: Sequence[CaseResult],
                  overhead: Overhead) -> list[str]:
    lines = [f"{impl}: {message}" for impl, message in missing.items()]
    labelled = [("tiny_add", overhead.problems)]
    labelled += [(f"{c.workload} {size_name(c.shape)}", c.problems) for c in cases]
    lines += [f"{label}: {impl}: {message}"
              for label, problems in labelled for impl, message in problems.items()]
    return lines


def machine_lines(threads: int) -> list[str]:
    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return ""

    lscpu = dict(line.split(":", 1) for line in run(["lscpu"]).splitlines() if ":" in line)
    lscpu = {k.strip(): v.strip() for k, v in lscpu.items()}
    try:
        cores = int(lscpu["Core(s) per socket"]) * int(lscpu["Socket(s)"])
    except (KeyError, ValueError):
        cores = None
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    mem_kb = next((int(line.split()[1]) for line in meminfo.splitlines()
                   if line.startswith("MemTotal:")), None)
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"
    commit = run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"]).strip()
    return [
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- CPU: {lscpu.get('Model name', platform.processor() or 'unknown')}, "
        f"{cores if cores is not None else '?'} cores, nproc {run(['nproc']).strip() or '?'}",
        f"- memory: {mem_kb / 2**20:.1f} GiB" if mem_kb else "- memory: unknown",
        f"- threads: {threads} (OMP_NUM_THREADS for stax, torch.set_num_threads for torch; "
        "NumPy single-threaded)",
        f"- Python {platform.python_version()}, NumPy {np.__version__}, torch {torch_version}, "
        f"stax commit {commit or 'unknown'}",
    ]


def report(missing: dict[str, str], cases: Sequence[CaseResult], overhead: Overhead,
           stream: dict[Shape, list[tuple[str, float, float]]], markdown: bool) -> str:
    heading = "### " if markdown else ""
    notes = problem_lines(missing, cases, overhead)
    sections = [
        f"{heading}Workloads (median ms; GB/s = minimum bytes / stax time; % of copy = "
        "stax GB/s vs allocate-and-copy of the same bytes; touch = np.empty + fill of the "
        "outputs' bytes)",
        results_table(cases, markdown),
        "\n".join(("- " if markdown else "") + line for line in summary_lines(cases)),
        f"{heading}Problems",
        "\n".join(("- " if markdown else "") + line for line in notes) if notes else "none",
        f"{heading}Per-call overhead",
        overhead_table(overhead, markdown),
        f"{heading}Compile times (time of the first call, so one run included; cold: empty "
        "cache; warm: a second compile in the same process, disk cache hit)",
        compile_table(cases, overhead, markdown),
        f"{heading}STREAM-style memory baselines (STREAM byte counts)",
        stream_table(stream, markdown),
    ]
    return "\n\n".join(sections) + "\n"


# --- command line ----------------------------------------------------------------------------


def parse_sizes(text: str) -> list[Shape]:
    sizes = []
    for item in text.split(","):
        rows, _, cols = item.strip().lower().partition("x")
        if not (rows.isdigit() and cols.isdigit()):
            raise argparse.ArgumentTypeError(f"size {item!r} is not ROWSxCOLS, e.g. 256x1024")
        sizes.append((int(rows), int(cols)))
    return sizes


def select_workloads(only: str | None) -> list[Workload]:
    if not only:
        return list(WORKLOADS)
    by_name = {w.name: w for w in WORKLOADS}
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in names]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                        help=f"comma-separated ROWSxCOLS (default {DEFAULT_SIZES})")
    parser.add_argument("--busy", type=int, default=0,
                        help="busy background processes (spinning Python) during the run, to "
                             "measure a loaded machine (issue 9 asks for 2)")
    parser.add_argument("--repeat", type=int, default=20, help="timed rounds (default 20)")
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for stax and torch (default os.cpu_count())")
    parser.add_argument("--no-torch", action="store_true", help="skip torch.compile")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall clock (default), or the calling thread's CPU time (needs "
                             "--threads 1): preemption on a loaded machine does not count")
    parser.add_argument("--markdown", type=Path, help="also write the report as markdown here")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.threads < 1 or args.busy < 0:
        parser.error("--repeat and --threads must be at least 1, --busy at least 0")
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu times the calling thread only: it needs --threads 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    workloads = select_workloads(args.only)
    faulthandler.enable()  # a crashing kernel at least says where
    cache_root = Path(tempfile.mkdtemp(prefix="stax-bench-"))
    # Set before stax and torch are imported: OpenMP reads its thread count once, at load.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["STAX_CACHE_DIR"] = str(cache_root / "stax")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache_root / "inductor")
    sys.path.insert(0, str(REPO_ROOT))  # benchmark this checkout's stax
    load_before = os.getloadavg()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.busy)]
    try:
        peers = load_peers(not args.no_torch, args.threads)
        log = sys.stderr
        print("per-call overhead probe (also pays one-time compiler start-up)...", file=log)
        clock = time.thread_time if args.clock == "cpu" else time.perf_counter
        overhead = measure_overhead(peers, args.repeat, clock)
        cases = []
        for shape in args.sizes:
            for workload in workloads:
                print(f"{workload.name} {size_name(shape)}...", file=log, flush=True)
                cases.append(run_case(peers, workload, shape, args.repeat, clock))
        stream = {shape: measure_stream(shape, args.repeat, clock) for shape in args.sizes}
    finally:
        load_after = os.getloadavg()
        for process in busy:
            process.kill()
            process.wait()
        shutil.rmtree(cache_root, ignore_errors=True)

    # [H9] how loaded the machine was (other users' work included): 1, 5, 15-minute averages
    load = (f"load average before the run {' '.join(f'{x:.2f}' for x in load_before)}, at its "
            f"end {' '.join(f'{x:.2f}' for x in load_after)} ({args.busy} busy processes; "
            f"{args.clock} clock)")
    print(load)
    print(report(peers.missing, cases, overhead, stream, markdown=False))
    if args.markdown:
        command = shlex.join(["python", "benchmarks/run.py", *argv])
        header = [f"## Benchmark: NumPy vs stax.jit vs torch.compile ({args.repeat} rounds)", "",
                  "Machine:", *machine_lines(args.threads),
                  f"- busy background processes during the run: {args.busy}; {load}", "",
                  f"Command: `{command}`", ""]
        args.markdown.write_text("\n".join(header) + "\n" + report(peers.missing, cases, overhead,
                                                                  stream, markdown=True))
        print(f"markdown written to {args.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
