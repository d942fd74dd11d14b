"""Gathers in the main pipeline (issue 9): `x[idx]`, `x[idx].sum()`, `(v * x[idx]).sum()` and
row gathers `X[idx]`, Stax vs NumPy interleaved, at 10^5 / 10^6 / 10^7 index elements over a
table a tenth as long (random int64 indices). Best of `--repeat`, thread CPU clock by default
(run with OMP_NUM_THREADS=1 for one thread's time).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 python benchmarks/gathers.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import stax

PROGRAMS: dict[str, Callable[..., Any]] = {
    "x[idx]": lambda v, x, idx, X: x[idx],
    "x[idx].sum()": lambda v, x, idx, X: x[idx].sum(),
    "(v * x[idx]).sum()": lambda v, x, idx, X: (v * x[idx]).sum(),
    "X[idx] (8 cols)": lambda v, x, idx, X: X[idx[: len(idx) // 8]],
}
CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}


def best(fn: Callable[[], Any], clock: Callable[[], float]) -> float:
    t = clock()
    fn()
    return clock() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10**5, 10**6, 10**7])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    rng = np.random.default_rng(0)
    print("| program | n | Stax ms | NumPy ms | NumPy/Stax |\n|---|---|---|---|---|")
    for n in args.sizes:
        m = max(1, n // 10)
        inputs = (rng.random(n), rng.random(m), rng.integers(0, m, n), rng.random((m, 8)))
        for name, fn in PROGRAMS.items():
            f = stax.jit(fn)
            np.testing.assert_allclose(f(*inputs), fn(*inputs), rtol=1e-9)
            ts, tn = [], []
            for _ in range(args.repeat):  # interleaved: both see the same machine load
                ts.append(best(lambda f=f, a=inputs: f(*a), clock))
                tn.append(best(lambda fn=fn, a=inputs: fn(*a), clock))
            s, p = min(ts) * 1e3, min(tn) * 1e3
            print(f"| {name} | {n:.0e} | {s:.3f} | {p:.3f} | {p / s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
