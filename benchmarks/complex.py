"""complex64/complex128 kernels (issue 16, E16): Stax vs NumPy, side by side in one process.

    python benchmarks/complex.py [--n 2000000] [--repeat 7] [--threads T]

Each workload runs in NumPy and as `stax.jit(fn)` on the same inputs (complex128 unless the
name says c64); results are checked against NumPy first (part by part, relative to |z|);
then the two run round-robin for --repeat rounds after a warm-up, and the medians and their
ratio Stax/NumPy are printed as a Markdown table. Threads: OMP_NUM_THREADS for Stax (NumPy's
elementwise ops are single-threaded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np


def mandelbrot(c: Any) -> tuple[Any, Any]:
    z = np.zeros_like(c)
    n = np.zeros(c.shape, np.int64)
    for it in range(20):
        inside = np.abs(z) < 2.0
        n = np.where(inside, it, n)
        z = np.where(inside, z * z + c, z)
    return z, n


WORKLOADS: dict[str, Callable[..., Any]] = {
    "axpy z*w+c": lambda z, w: z * w + (0.5 - 1j),
    "divide z/w": lambda z, w: z / w,
    "abs": lambda z, w: np.abs(z),
    "exp": lambda z, w: np.exp(z),
    "sum": lambda z, w: z.sum(),
    "abs2 sum (c64)": lambda z, w: (z * np.conj(z)).real.astype(np.float32).sum(),
    "mandelbrot 20 it": lambda z, w: mandelbrot(z * 0.7),
}


def close(got: Any, want: Any) -> bool:
    if isinstance(want, tuple):
        return all(close(g, w) for g, w in zip(got, want, strict=True))
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    scale = np.maximum(np.abs(want), 1e-30)
    tol = 1e-4 if want.dtype in (np.complex64, np.float32) else 1e-9
    diff = np.abs(got.astype(np.complex128) - want)
    return bool(np.all((diff <= tol * scale) | (np.isnan(got) & np.isnan(want))))


def timed(fn: Callable[..., Any], args: tuple[Any, ...]) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None)
    opts = parser.parse_args()
    if opts.threads:
        os.environ["OMP_NUM_THREADS"] = str(opts.threads)
    import stax  # after OMP_NUM_THREADS

    rng = np.random.default_rng(0)
    z = rng.uniform(-1.5, 1.5, opts.n) + 1j * rng.uniform(-1.5, 1.5, opts.n)
    w = rng.uniform(-2, 2, opts.n) + 1j * rng.uniform(-2, 2, opts.n)
    print(f"n = {opts.n}, repeat = {opts.repeat}, threads = "
          f"{os.environ.get('OMP_NUM_THREADS', os.cpu_count())}, NumPy {np.__version__}\n")
    print("| workload | NumPy (ms) | Stax (ms) | Stax/NumPy |")
    print("|---|---:|---:|---:|")
    for name, fn in WORKLOADS.items():
        args = (z.astype(np.complex64), w.astype(np.complex64)) if "c64" in name else (z, w)
        jitted = stax.jit(fn)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if not close(jitted(*args), fn(*args)):
                print(f"| {name} | | | differs from NumPy |")
                continue
            times: dict[str, list[float]] = {"numpy": [], "stax": []}
            for _ in range(opts.repeat):
                times["numpy"].append(timed(fn, args))
                times["stax"].append(timed(jitted, args))
        numpy_ms, stax_ms = (1e3 * statistics.median(times[k]) for k in ("numpy", "stax"))
        print(f"| {name} | {numpy_ms:.2f} | {stax_ms:.2f} | {stax_ms / numpy_ms:.2f} |")


if __name__ == "__main__":
    main()
