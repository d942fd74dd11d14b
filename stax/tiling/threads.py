"""Threads where they pay (issue 9, item 3): a kernel runs in parallel only when its estimated
serial time is well above what opening an OpenMP team costs on this machine.

Both numbers come from a one-time probe, compiled and run on first use and cached beside the
compiled kernels (`parallel.json` in the cache directory): the cost of one `omp parallel`
region with a barrier (two threads), and the serial time per byte of a streaming loop. On a
busy machine the fork/join cost measures high, so fewer kernels go parallel. Waiting threads
sleep (OMP_WAIT_POLICY below; a user's own setting wins), and a region takes only the cores
the load leaves free.
`STAX_PARALLEL_MIN_NS` fixes the crossover instead (e.g. 0 for tests of parallel code).

At launch [H9] a region planned for P threads gets a team of `launch_team`: the cores no other
thread is running on now (the kernel's count of runnable threads, /proc/loadavg, sampled at
most every SAMPLE_SECONDS), at most P, at least 1. With as many runnable threads as cores, it
runs on the calling thread alone: a team member waiting for a core would make every barrier
wait a scheduler time slice (issue 9: 20-200 ms instead of 5-50 us on a busy machine). The
count is the whole machine's (other processes, the caller's other threads; with
OMP_WAIT_POLICY=active also Stax's own workers still spinning after a region); the cores are
the process's own (its CPU affinity) [THREADS].
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from stax.ir.sym import Sym, c_expr
from stax.runtime.compiler import cache_dir, compile_source, once


def _spinning() -> bool:
    """Whether an OpenMP runtime was loaded before stax with no wait policy of the user's:
    its idle workers spin after each region."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return False
    try:
        ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
    except OSError:
        return False
    return True


# Threads that wait at a barrier sleep instead of spinning (unless the user chose a policy).
# libgomp's default spins up to ~300k iterations: on a machine with more runnable threads than
# cores the spinning thread holds the core the late thread needs, and every region waits a
# scheduler time slice. Measured here with two busy background processes on 2 cores, softmax
# at 256x1024 with 2 threads: 31 ms spinning, 0.20 ms passive (NumPy 0.26-0.5 ms). libgomp
# reads this once, when it is loaded: stax sets it at import, before any kernel is loaded.
# A library that loaded libgomp before stax was imported (`import torch` first: torch/lib's
# libgomp.so.1 is the one stax's kernels then use) fixed the policy already, and the workers
# spin: measured ~3 ms of a core after each 2-thread region (benchmarks/run.py imports torch
# through workloads.py before stax: it now sets the policy first). See /work/notes/s7_BUSY.md.
# [CLIFF3] libgomp has no call that changes the policy later, and a second copy cannot be
# linked in (libgomp.a uses TLS relocations a shared object cannot have); such a process is
# detected here and `worth_parallel`'s record says so (explain), with the remedy.
SPINNING = _spinning()
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
# The team of a region is decided at launch alone (`team` below, passed by the wrapper as the
# calling thread's OpenMP thread count; codegen's `print_region` emits
# num_threads(min(planned, omp_get_max_threads())) and opens no region for a team of one).
# libgomp's dynamic adjustment is not used: it sizes teams from the load average, which lags
# the load by minutes, and OMP_DYNAMIC=true for the process made PyTorch's oneDNN convolutions
# hang in the same process (they assume full teams).

# A region pays when the serial estimate exceeds MARGIN x the fork/join cost: the gain of P
# threads is at most (1 - 1/P) of the serial time, and imbalance and cache misses eat into it.
MARGIN = 4.0
# Arithmetic per element, in the probe's bytes: one call to a vector math function costs
# about as much as streaming this many bytes (libmvec expf: ~1 ns per element at 16 lanes).
TRANSCENDENTAL_BYTES = 16
PROBE = r"""
// [COMPILE] C headers and libgomp's clock only: <vector>, <algorithm> and <chrono> took most of
// this probe's compile time, which an empty cache's first call waits for
#include <cstdint>
#include <cstdlib>
#include <omp.h>
static double now() { return omp_get_wtime() * 1e9; }  // ns, a monotonic clock
static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
extern "C" void stax_probe(double* out) {
    // fork/join: the median over repetitions of an empty parallel region (a busy machine,
    // where threads wait for a time slice, measures high)
    // a full team, whatever the load now (OMP_DYNAMIC would measure a team of one)
    const int dynamic = omp_get_dynamic();
    omp_set_dynamic(0);
    double times[200];
    for (int rep = 0; rep < 220; rep += 1) {
        const double t0 = now();
        #pragma omp parallel num_threads(2)
        {
            #pragma omp barrier
        }
        if (rep >= 20) times[rep - 20] = now() - t0;
    }
    std::qsort(times, 200, sizeof(double), by_value);
    out[0] = times[100];
    omp_set_dynamic(dynamic);
    // streaming: y = a*x + b over 4 MiB of float, serial
    const int64_t n = 1 << 20;
    float* x = (float*)std::malloc(n * sizeof(float));
    float* y = (float*)std::malloc(n * sizeof(float));
    for (int64_t i = 0; i < n; i += 1) x[i] = 1.0f;
    double stream = 1e30;
    for (int rep = 0; rep < 8; rep += 1) {
        const double t0 = now();
        #pragma omp simd
        for (int64_t i = 0; i < n; i += 1) y[i] = 1.5f * x[i] + 0.5f;
        const double t = now() - t0;
        if (t < stream) stream = t;
        x[rep] = y[n - 1 - rep];  // keep the loop alive
    }
    std::free(x);
    std::free(y);
    out[1] = stream / (8.0 * n);  // ns per byte moved (4 read + 4 written)
}
"""


@dataclass(frozen=True)
class Crossover:
    fork_ns: float  # one parallel region with a barrier
    byte_ns: float  # serial streaming time per byte

    @property
    def min_ns(self) -> float:
        return MARGIN * self.fork_ns


@once  # [COMPILE] may be started in the background (CpuBackend.prepare)
def crossover() -> Crossover:
    forced = os.environ.get("STAX_PARALLEL_MIN_NS")
    if forced is not None:
        return Crossover(float(forced) / MARGIN, 0.1)
    path = cache_dir() / "parallel.json"
    try:
        data = json.loads(path.read_text())
        return Crossover(float(data["fork_ns"]), float(data["byte_ns"]))
    except (OSError, ValueError, KeyError):
        pass
    compiled = compile_source(PROBE, "scalar")
    out = (ctypes.c_double * 2)()
    compiled.library.stax_probe(out)
    result = Crossover(out[0], out[1])
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"fork_ns": result.fork_ns, "byte_ns": result.byte_ns}))
    os.replace(tmp, path)
    return result


def worth_parallel(bytes_moved: int, transcendentals: int) -> tuple[bool, str]:
    """Whether a kernel that moves `bytes_moved` bytes and makes `transcendentals` math calls
    should open a parallel region, and why."""
    c = crossover()
    estimate = c.byte_ns * (bytes_moved + TRANSCENDENTAL_BYTES * transcendentals)
    verdict = estimate >= c.min_ns
    launch = "; at launch, a team of the cores idle then (1 on a busy machine)" if verdict else ""
    if verdict and SPINNING:
        launch += ("; its idle workers spin ~3 ms after each region: libgomp was loaded before "
                   "stax with no OMP_WAIT_POLICY (set OMP_WAIT_POLICY=passive, or import stax "
                   "first)")
    return verdict, (f"estimated {estimate:.0f} ns serial ({bytes_moved} bytes, "
                     f"{transcendentals} math calls) {'>=' if verdict else '<'} "
                     f"{MARGIN:g} x {c.fork_ns:.0f} ns to open a parallel region (probed)"
                     f"{launch}")


def parallel_pays(work: tuple[Sym | int, Sym | int]) -> str:
    """`worth_parallel` as a C condition on the sizes at launch (a generic kernel, issue 11)."""
    moved, calls = work
    c = crossover()
    return (f"{c_expr(moved)} + {TRANSCENDENTAL_BYTES}LL*{c_expr(calls)} >= "
            f"{math.ceil(c.min_ns / c.byte_ns)}LL")


# --- launch time [H9] -------------------------------------------------------------------------

SAMPLE_SECONDS = 0.005  # a load sample serves the launches of the next 5 ms
# [THREADS] the cores this process may run on (its affinity: taskset, a container's cpuset), as
# libgomp's default team and `plan.thread_count`; not os.cpu_count(): pinned to 2 of 16 cores
# with two busy processes there, 16 - 3 + 1 cores looked free and every region opened a team
# whose member waited for a busy core (CORES = 16 on this 2-core machine with two busy
# processes: 2.3-7.6x NumPy's wall time, against 0.9-1.1x with 2; benchmarks/threads_load.py).
# /proc/loadavg counts the runnable threads of every core, also those outside the affinity: a
# count on other cores only makes the team smaller (never a team member without a core).
CORES = len(os.sched_getaffinity(0))


def launch_team(planned: int, runnable: int, cores: int) -> int:
    """Threads for a region planned for `planned` when `runnable` threads (the caller among
    them) are runnable on `cores` cores: one per core no other thread runs on, at most
    `planned`, at least 1 (the caller, which holds a core already)."""
    free = cores - runnable + 1 if runnable > 1 else cores  # max(), min(): see `team`
    threads = planned if planned < free else free
    return threads if threads > 1 else 1


class _Load:
    """The latest sample of runnable threads: /proc/loadavg's fourth field ("4/110": 4 runnable,
    the reader included), read with one pread on a descriptor kept open."""

    def __init__(self, path: str = "/proc/loadavg") -> None:
        try:
            self.fd: int | None = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None  # no procfs: every region gets its planned team
        self.at = -math.inf
        self.runnable = 1

    def sample(self) -> int:
        now = time.monotonic()
        if self.fd is not None and now - self.at > SAMPLE_SECONDS:
            self.at = now
            try:
                self.runnable = int(os.pread(self.fd, 128, 0).split()[3].split(b"/")[0])
            except (OSError, IndexError, ValueError):
                self.runnable = 1
        return self.runnable


_load = _Load()


def team(planned: int, now: Callable[[], float] = time.monotonic) -> int:
    """`launch_team` now (called by the wrapper before each region that may go parallel).
    [BUSY] Written to touch few Python objects: on a loaded machine each one touched after a
    kernel (which evicts the interpreter's data from the caches) can miss to memory. Through
    `_Load.sample` and the builtins max() and min() this call cost 7.5 us of CPU after a 1 MiB
    kernel, with two busy processes and load 12, against 2.5 us for an empty call; now 4.8 us."""
    load = _load
    if now() - load.at > SAMPLE_SECONDS:
        load.sample()
    return launch_team(planned, load.runnable, CORES)
