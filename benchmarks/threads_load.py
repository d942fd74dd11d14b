"""Threads on a loaded machine (issue 9, item 3; fourteenth wave): Stax with T threads against
single-threaded NumPy while `--busy` spinning processes hold the cores.

    python benchmarks/threads_load.py [--only rowdot_einsum,...] [--sizes 2048x2048]
                                      [--busy 2] [--threads 2] [--rounds 40]

A median of wall times on a loaded machine mostly says which calls the scheduler preempted:
with more runnable threads than cores the calling thread waits for a core every few
milliseconds, for 5-30 ms, whatever it runs (the thirteenth wave's 5-round medians put the same
kernels at 0.04x and 15x NumPy in consecutive runs). So each call is split, from the calling
thread's own accounting (`/proc/thread-self/schedstat`, `time.thread_time`), into
- cpu: the calling thread's CPU time;
- preempted: the time it was runnable but waited for a core (the scheduler's doing);
- asleep: the rest of the wall time, when the calling thread was neither running nor runnable:
  waiting at a barrier for a team member that has no core, or in the kernel (page faults).
"wall - preempted" is the call as if the caller had kept its core; a parallel region that loses
to the serial loop shows as asleep time (or as cpu spent spinning). Implementations run in a
shuffled order each round (a fixed order lets periodic preemptions land on one of them).
Workloads: those of workloads.py and cliffs.py, by name.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # as run.py: before torch loads libgomp
from cliffs import CLIFFS  # noqa: E402
from run import SEED, as_arrays, mismatch, parse_sizes, render_table, size_name  # noqa: E402
from workloads import WORKLOADS, Workload  # noqa: E402

PARTS = ("wall", "cpu", "preempted", "asleep")


class CallerClock:
    """The calling thread's wall, CPU and run-queue wait times, in seconds."""

    def __init__(self) -> None:
        self.fd = os.open(f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY)

    def now(self) -> tuple[float, float, float]:
        delay_ns = int(os.pread(self.fd, 128, 0).split()[1])  # time runnable, not running
        return time.perf_counter(), time.thread_time(), delay_ns * 1e-9


def time_call(clock: CallerClock, call: Callable[[], Any]) -> tuple[float, ...]:
    wall0, cpu0, delay0 = clock.now()
    call()
    wall1, cpu1, delay1 = clock.now()
    wall, cpu, delay = wall1 - wall0, cpu1 - cpu0, delay1 - delay0
    return wall, cpu, delay, max(0.0, wall - cpu - delay)


def measure(workload: Workload, shape: tuple[int, int], rounds: int,
            clock: CallerClock) -> dict[str, list[tuple[float, ...]]]:
    import stax

    inputs = workload.make_inputs(np.random.default_rng(SEED), *shape)
    jitted = stax.jit(workload.numpy_fn)
    why = mismatch(as_arrays(workload.numpy_fn(*inputs)), jitted(*inputs), workload.tolerance)
    if why is not None:
        raise SystemExit(f"{workload.name} {size_name(shape)}: stax differs from NumPy: {why}")
    calls = {"numpy": lambda: workload.numpy_fn(*inputs), "stax": lambda: jitted(*inputs)}
    samples: dict[str, list[tuple[float, ...]]] = {name: [] for name in calls}
    order = list(calls)
    shuffle = random.Random(SEED).shuffle
    for _ in range(rounds):
        shuffle(order)
        for name in order:
            samples[name].append(time_call(clock, calls[name]))
    return samples


def medians(samples: list[tuple[float, ...]]) -> dict[str, float]:
    parts = {part: statistics.median(s[i] for s in samples) for i, part in enumerate(PARTS)}
    parts["unpreempted"] = statistics.median(s[0] - s[2] for s in samples)
    return parts


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="rowdot_einsum,diff_cols,strided_slice_reduce,"
                        "roll_sub,int16_to_f32,transpose_3d_scale,argmax_rows")
    parser.add_argument("--sizes", type=parse_sizes, default=[(2048, 2048)])
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=40)
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    known = {w.name: w for w in WORKLOADS + CLIFFS}
    chosen = [known[name] for name in args.only.split(",")]
    clock = CallerClock()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.busy)]
    rows = []
    try:
        time.sleep(0.5 if busy else 0.0)
        load_before = os.getloadavg()
        for workload in chosen:
            for shape in args.sizes:
                got = {name: medians(s) for name, s in
                       measure(workload, shape, args.rounds, clock).items()}
                n, s = got["numpy"], got["stax"]
                rows.append([workload.name, size_name(shape)]
                            + [f"{n[p] * 1e3:.3f}" for p in ("wall", "unpreempted")]
                            + [f"{s[p] * 1e3:.3f}" for p in ("wall", "unpreempted", "cpu",
                                                             "preempted", "asleep")]
                            + [f"{s['wall'] / n['wall']:.2f}",
                               f"{s['unpreempted'] / n['unpreempted']:.2f}"])
        load_after = os.getloadavg()
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f"{args.busy} busy processes, {args.threads} thread(s), {args.rounds} shuffled rounds, "
          f"medians in ms; load average before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)}")
    print(render_table(["workload", "size", "numpy wall", "numpy unpreempted", "stax wall",
                        "stax unpreempted", "stax cpu", "stax preempted", "stax asleep",
                        "wall stax/numpy", "unpreempted stax/numpy"], rows, markdown=True))


if __name__ == "__main__":
    main(sys.argv[1:])
