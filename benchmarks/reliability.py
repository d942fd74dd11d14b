"""Issue 8/9 (C) figures in one run: compile time vs program size, memory held after a
20-shape sweep, warm call overhead against a single NumPy ufunc call on tiny arrays.

    python benchmarks/reliability.py            # the full table (run on a quiet machine)
    python benchmarks/reliability.py --quick    # a smoke run at small sizes
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
import timeit
from collections.abc import Callable

os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-bench-"))

import numpy as np  # noqa: E402

import stax  # noqa: E402
from stax.api import OPTIONS, compile_traced, trace  # noqa: E402


def chain(n: int) -> Callable[[np.ndarray], np.ndarray]:
    steps = [k % 3 for k in range(n)]

    def f(x: np.ndarray) -> np.ndarray:
        for k in steps:  # a list, not range: traced step by step
            x = x * 1.0001 + 0.5 if k == 1 else (np.sin(x) if k == 2 else x - 0.25)
        return x

    return f


def compile_times(sizes: list[int]) -> list[str]:
    x = np.linspace(0, 1, 1000)
    stax.jit(lambda a: a + 1)(x)  # ISA and thread probes, the C entry point: built once, first
    rows = ["| steps | trace s | lower+schedule+g++ s | kernels | C++ lines |",
            "|---:|---:|---:|---:|---:|"]
    for n in sizes:
        f = chain(n)
        t0 = time.perf_counter()
        traced = trace(f, (x,))
        t1 = time.perf_counter()
        comp = compile_traced(traced, [x], OPTIONS)
        t2 = time.perf_counter()
        assert np.allclose(comp.program.call([x])[0], f(x))
        rows.append(f"| {n} | {t1 - t0:.2f} | {t2 - t1:.2f} | {len(comp.schedule.kernels)} | "
                    f"{len(comp.program.cpp.splitlines())} |")
    return rows


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory_sweep(rows_base: int, shapes: int) -> list[str]:
    f = stax.jit(lambda a: np.exp(a - a.mean(-1, keepdims=True))
                 / np.exp(a).sum(-1, keepdims=True) + a * 2)
    f(np.ones((8, 8)))
    gc.collect()
    base = rss_mib()
    total = 0
    for k in range(shapes):
        x = np.random.default_rng(k).standard_normal((rows_base + 64 * k, 1024))
        total += x.nbytes
        f(x)
        del x
    gc.collect()
    held = rss_mib() - base
    f.clear_cache()
    stax.clear_caches()
    gc.collect()
    return [f"memory: {shapes} shapes ({total / 2**20:.0f} MiB of inputs), results dropped: "
            f"{held:.0f} MiB held (STAX_KEEP_MIB budget); after f.clear_cache(): "
            f"{rss_mib() - base:.0f} MiB"]


def overhead() -> list[str]:
    x, y = np.ones(8), np.ones(8)
    add = stax.jit(lambda a, b: a + b)
    add(x, y)

    def best(fn: Callable[[], object]) -> float:
        return min(timeit.repeat(fn, number=20000, repeat=7)) / 20000 * 1e6

    rows = []
    for _ in range(3):  # interleaved: NumPy, Stax
        numpy_us, stax_us = best(lambda: np.add(x, y)), best(lambda: add(x, y))
        rows.append(f"warm call, 8 float64: np.add {numpy_us:.2f} us, stax.jit(a + b) "
                    f"{stax_us:.2f} us: {stax_us - numpy_us:+.2f} us")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    quick = parser.parse_args().quick
    sizes = [50, 100] if quick else [100, 400, 1000, 5000]
    for line in (compile_times(sizes) + memory_sweep(64 if quick else 1024, 4 if quick else 20)
                 + overhead()):
        print(line, flush=True)


if __name__ == "__main__":
    main()
