"""[NPB3] Python loops with a graph break in the body that use the loop index (a scalar made of
it, a row `m[i]`, a store `out[i] = v`): Stax vs NumPy, warm, interleaved, process CPU time.

    OMP_NUM_THREADS=1 python benchmarks/loop_breaks.py [--repeat 15]

Each case runs once for correctness (vs NumPy), then --repeat rounds of one NumPy call and one
Stax call; reported are the medians and their ratio, the first Stax call, and whether Stax ran
the function in NumPy (a break needing a new segment at every iteration).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-loop-breaks-"))

import stax  # noqa: E402


def relax(u: Any, steps: int) -> Any:
    """Time steps `t = i * dt` of a damped update, stopping when it settles."""
    dt = 1.0 / steps
    for i in range(steps):
        t = i * dt
        new = u + dt * (np.roll(u, 1) - 2 * u + np.roll(u, -1)) * np.exp(-t)
        if np.abs(new - u).max() < 1e-9:
            break
        u = new
    return u


def row_scores(m: Any, limit: float) -> Any:
    """A decision per row of a matrix, the row's result stored at its index."""
    out = np.zeros(m.shape[0])
    for i in range(m.shape[0]):
        row = np.sqrt(np.abs(m[i])) * 2.0
        if row.mean() > limit:
            out[i] = row.sum()
    return out


CASES: dict[str, tuple[Callable[..., Any], Callable[[np.random.Generator], tuple[Any, ...]]]] = {
    "relax (steps=50, n=200000)": (relax, lambda r: (r.random(200_000), 50)),
    "row_scores (64 x 50000)": (row_scores, lambda r: (r.random((64, 50_000)), 1.3)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    repeat = ap.parse_args().repeat
    warnings.simplefilter("ignore")
    print("| case | first Stax call (s) | NumPy (ms) | Stax (ms) | Stax/NumPy | in NumPy |")
    print("|---|---:|---:|---:|---:|---|")
    for name, (fn, make) in CASES.items():
        args = make(np.random.default_rng(0))
        jf = stax.jit(fn)
        start = time.perf_counter()
        got = jf(*args)
        first = time.perf_counter() - start
        np.testing.assert_allclose(got, fn(*args), rtol=1e-9)
        numpy_t: list[float] = []
        stax_t: list[float] = []
        for _ in range(repeat):
            for f, times in ((fn, numpy_t), (jf, stax_t)):
                start = time.process_time()
                f(*args)
                times.append(time.process_time() - start)
        n, s = statistics.median(numpy_t), statistics.median(stax_t)
        in_numpy = any("runs in NumPy from now on" in str(b)
                       for b in jf.breaks.get(jf.key(args), []))
        print(f"| {name} | {first:.2f} | {n * 1e3:.2f} | {s * 1e3:.2f} | {s / n:.2f} | "
              f"{'yes' if in_numpy else 'no'} |")


if __name__ == "__main__":
    main()
