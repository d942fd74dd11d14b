"""[VADV] Python loops whose bodies rebind temporaries before reading them and read back rows
they just stored (npbench's vadv, the Thomas algorithm, a time stepper):
Stax vs NumPy, one thread, process CPU clock, NumPy and Stax calls interleaved, medians.

    OMP_NUM_THREADS=1 python benchmarks/loop_temporaries.py [--repeat 15] [--npbench PATH]

vadv is npbench's own code (preset S, 60x60x40), found as benchmarks/npbench_probe.py finds
npbench; it is left out when no npbench checkout is there.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import stax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npbench_probe import locate  # noqa: E402


def thomas(a, b, c, d):
    """Tridiagonal systems, one per row (sub-, main, super-diagonal, right-hand side)."""
    n = d.shape[1]
    cp = np.empty_like(d)
    dp = np.empty_like(d)
    cp[:, 0] = c[:, 0] / b[:, 0]
    dp[:, 0] = d[:, 0] / b[:, 0]
    for k in range(1, n):
        m = b[:, k] - a[:, k] * cp[:, k - 1]
        cp[:, k] = c[:, k] / m
        dp[:, k] = (d[:, k] - a[:, k] * dp[:, k - 1]) / m
    x = np.empty_like(d)
    x[:, -1] = dp[:, -1]
    for k in range(n - 2, -1, -1):
        x[:, k] = dp[:, k] - cp[:, k] * x[:, k + 1]
    return x


def stepper(u, f, steps):
    for _ in range(steps):
        flux = 0.5 * (u[1:] + u[:-1])
        grad = u[1:] - u[:-1]
        rhs = f[1:-1] - (flux[1:] - flux[:-1]) + 0.1 * (grad[1:] - grad[:-1])
        u[1:-1] = u[1:-1] + 0.01 * rhs
    return u


def cases(npbench: Path | None) -> list[tuple[str, Callable[..., Any], Callable[[], tuple]]]:
    rng = np.random.default_rng(0)
    a, c, d = (rng.random((400, 200)) for _ in range(3))
    b = 4 + rng.random((400, 200))
    u, f = rng.random(100_000), rng.random(100_000)
    out = [("thomas 400x200", thomas, lambda: (a, b, c, d)),
           ("stepper 1e5 x 50", stepper, lambda: (u.copy(), f, 50))]
    if npbench is not None:
        sys.path.insert(0, str(npbench))
        vadv = importlib.import_module(
            "npbench.benchmarks.weather_stencils.vadv.vadv_numpy").vadv
        init = importlib.import_module("npbench.benchmarks.weather_stencils.vadv.vadv")
        dtr, *arrays = init.initialize(60, 60, 40)
        out.append(("npbench vadv S 60x60x40", vadv,
                    lambda: (*(x.copy() for x in arrays[:1]), *arrays[1:], dtr)))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--npbench")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn, make in cases(locate(args.npbench, Path(tmp))):
            jitted = stax.jit(fn)
            ins_n, ins_s = make(), make()  # results and mutated arguments match NumPy's
            for w, g in [(fn(*ins_n), jitted(*ins_s)), *zip(ins_n, ins_s, strict=True)]:
                assert w is None or np.allclose(g, w), name
            times: dict[str, list[float]] = {"numpy": [], "stax": []}
            for _ in range(args.repeat):
                for side, call in (("numpy", fn), ("stax", jitted)):
                    inputs = make()
                    t = time.process_time()
                    call(*inputs)
                    times[side].append(time.process_time() - t)
            n, s = (statistics.median(times[k]) for k in ("numpy", "stax"))
            print(f"{name:26s} numpy {n * 1e3:8.2f} ms  stax {s * 1e3:8.2f} ms  "
                  f"stax/numpy {s / n:5.2f}  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
