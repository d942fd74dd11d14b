"""Masked updates (issue 9, MASK): Stax vs NumPy, interleaved in one process, process CPU clock.

    python benchmarks/masked_updates.py [--n 1000000] [--repeat 7] [--sweep] [NAME ...]

Each workload runs as NumPy and as `stax.jit(fn)` on fresh copies of the same inputs, checked
against NumPy first (exact for integers, allclose otherwise); then the two alternate for
--repeat rounds and the medians of `time.process_time` and their ratio Stax/NumPy are printed
as a Markdown table. Masks: "dense" selects ~90% of the elements, "sparse" ~1%. Run with
OMP_NUM_THREADS=1 for a per-core comparison (NumPy's elementwise ops are single-threaded).
--sweep (SPMASK): instead, costly masked updates (pow, exp, log, sqrt, arctan2, complex
division) under masks of 0.1 %, 1 %, 10 %, 50 % and 100 % density.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def mandelbrot(xmin: float, xmax: float, ymin: float, ymax: float, xn: int, yn: int,
               maxiter: int, horizon: float = 2.0) -> tuple[Any, Any]:
    """npbench's mandelbrot1 (its NumPy version, as published)."""
    x = np.linspace(xmin, xmax, xn, dtype=np.float64)
    y = np.linspace(ymin, ymax, yn, dtype=np.float64)
    c = x + y[:, None] * 1j
    n = np.zeros(c.shape, dtype=np.int64)
    z = np.zeros(c.shape, dtype=np.complex128)
    for it in range(maxiter):
        inside = np.less(abs(z), horizon)
        n[inside] = it
        z[inside] = z[inside] ** 2 + c[inside]
    n[n == maxiter - 1] = 0
    return z, n


def cheap(x: Any, t: float) -> Any:  # x[m] = f(x[m]), f cheap (kept lazy: a where)
    m = x < t
    x[m] = x[m] * 2.0 - 1.0
    return x


def power(x: Any, t: float) -> Any:  # a costly f that cannot fail (kept lazy)
    m = x < t
    x[m] = x[m] ** 1.5
    return x


def costly(x: Any, y: Any, t: float) -> Any:  # y[m] = g(x[m], y[m]), a libm call
    m = x < t
    y[m] = np.exp(x[m]) * y[m]
    return y


def where_costly(x: Any, t: float) -> Any:  # NumPy computes exp everywhere too
    return np.where(x < t, np.exp(x), x)


def time_loop(x: Any, t: float) -> Any:  # the mask shrinks over the iterations
    for _ in range(10):
        m = x < t
        x[m] = x[m] * 1.5 + 0.01
    return x


def sweep(n: int) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """[SPMASK] Costly masked updates; the mask `r < d` selects a share d of the elements."""
    def pow_(x: Any, y: Any, r: Any, d: float) -> Any:
        m = r < d
        x[m] = x[m] ** 1.5
        return x

    def exp(x: Any, y: Any, r: Any, d: float) -> Any:
        m = r < d
        y[m] = np.exp(x[m])
        return y

    def log(x: Any, y: Any, r: Any, d: float) -> Any:
        m = r < d
        x[m] = np.log(x[m])
        return x

    def sqrt(x: Any, y: Any, r: Any, d: float) -> Any:
        return np.where(r < d, np.sqrt(x), x)

    def arctan2(x: Any, y: Any, r: Any, d: float) -> Any:
        m = r < d
        y[m] = np.arctan2(x[m], y[m])
        return y

    def cdiv(z: Any, y: Any, r: Any, d: float) -> Any:
        m = r < d
        z[m] = z[m] / (z[m] + 2.0)
        return z

    rng = np.random.default_rng(0)
    x, y, r = rng.random(n), rng.random(n), rng.random(n)
    z = x + 1j * y
    out: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
    for name, fn, first in (("x[m] = x[m]**1.5", pow_, x), ("y[m] = exp(x[m])", exp, x),
                            ("x[m] = log(x[m])", log, x), ("where(m, sqrt(x), x)", sqrt, x),
                            ("y[m] = arctan2(x[m], y[m])", arctan2, x),
                            ("z[m] = z[m]/(z[m]+2), complex", cdiv, z)):
        for d in (0.001, 0.01, 0.1, 0.5, 1.0):
            out[f"{name}, {d:.1%}"] = (fn, (first, y, r, d))
    return out


def workloads(n: int) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    rng = np.random.default_rng(0)
    x, y = rng.random(n), rng.random(n)
    side = int(round(np.sqrt(n)))
    out: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
        "mandelbrot1 S (125^2, 60 it)": (mandelbrot, (-1.75, 0.25, -1.0, 1.0, 125, 125, 60)),
        "mandelbrot1 M (250^2, 150 it)": (mandelbrot, (-1.75, 0.25, -1.0, 1.0, 250, 250, 150)),
        f"mandelbrot {side}^2, 20 it": (mandelbrot, (-2.0, 0.5, -1.25, 1.25, side, side, 20)),
    }
    for name, t in (("dense", 0.9), ("sparse", 0.01)):
        out[f"x[m] = x[m]*2-1, {name}"] = (cheap, (x, t))
        out[f"x[m] = x[m]**1.5, {name}"] = (power, (x, t))
        out[f"y[m] = exp(x[m])*y[m], {name}"] = (costly, (x, y, t))
        out[f"where(m, exp(x), x), {name}"] = (where_costly, (x, t))
    out["10 x (x[m] = x[m]*1.5+0.01), shrinking"] = (time_loop, (x, 0.5))
    return out


def fresh(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def same(got: Any, want: Any) -> bool:
    """Equal dtypes and shapes; integers exact, others np.allclose as npbench_probe.py."""
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    return all(np.asarray(g).dtype == w.dtype and np.shape(g) == w.shape and (
        np.array_equal(g, w) if w.dtype.kind in "biu" else
        np.allclose(g, w, rtol=1e-5, atol=1e-8, equal_nan=True)) for g, w in pairs)


def medians(sides: tuple[Callable[..., Any], ...], args: tuple[Any, ...],
            repeat: int) -> list[float]:
    """The median process CPU time of each side, the sides alternating on fresh inputs."""
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(repeat):
        for fn, spent in zip(sides, times, strict=True):
            inputs = fresh(args)
            start = time.process_time()
            fn(*inputs)
            spent.append(time.process_time() - start)
    return [statistics.median(spent) for spent in times]


def main() -> None:
    import stax

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sweep", action="store_true", help="masks of 0.1-100 %% density")
    parser.add_argument("names", nargs="*", help="substrings of workload names to run")
    opts = parser.parse_args()
    print("| workload | NumPy ms | Stax ms | Stax/NumPy |\n|---|---:|---:|---:|")
    for name, (fn, args) in (sweep if opts.sweep else workloads)(opts.n).items():
        if opts.names and not any(s in name for s in opts.names):
            continue
        jitted = stax.jit(fn)
        if not same(jitted(*fresh(args)), fn(*fresh(args))):
            print(f"| {name} | WRONG RESULT | | |")
            continue
        s, m = medians((jitted, fn), args, opts.repeat)
        print(f"| {name} | {m * 1e3:.2f} | {s * 1e3:.2f} | {s / m:.2f}x |")


if __name__ == "__main__":
    main()
