"""Scans along the last axis (issue 9): stax.jit vs NumPy vs torch, interleaved.

    python benchmarks/scans.py [--shapes 100000x100,10000x1000,...] [--fns cumsum,cumprod,cummax]
                               [--dtypes float64,float32,int64] [--repeat 9] [--torch]

Each case runs `op.accumulate(a, axis=-1)` (np.add / np.multiply / np.maximum) compiled by
`stax.jit`, NumPy's own call and (with --torch) torch.cumsum / torch.cumprod / torch.cummax on
the same data, round robin: one call of each per round, --repeat rounds after a warm-up. The
result is checked against NumPy's first (bit-equal for the integer and max scans and for
float sums, which keep NumPy's order). Reported: the median wall time and the median process
CPU time (all threads, spinning included) in ms; ratio = stax / NumPy (< 1: stax is faster).
Set OMP_NUM_THREADS=1 for one thread.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import stax

UFUNCS = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum}


def _data(shape: tuple[int, ...], dtype: str, fn: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.startswith("int"):
        return rng.integers(-3 if fn == "cumprod" else -1000, 4 if fn == "cumprod" else 1000,
                            size=shape).astype(dtype)
    if fn == "cumprod":  # values near 1: the product stays finite
        return (1 + 1e-4 * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _torch_call(fn: str, a: np.ndarray) -> Callable[[], Any] | None:
    try:
        import torch
    except ImportError:
        return None
    t = torch.from_numpy(a)
    if fn == "cumsum":
        return lambda: torch.cumsum(t, dim=-1)
    if fn == "cumprod":
        return lambda: torch.cumprod(t, dim=-1)
    return lambda: torch.cummax(t, dim=-1).values


def measure(shape: tuple[int, ...], dtype: str, fn: str, repeat: int, torch: bool
            ) -> dict[str, tuple[float, float]]:
    a = _data(shape, dtype, fn)
    ufunc = UFUNCS[fn]
    jitted = stax.jit(lambda x: ufunc.accumulate(x, axis=-1))
    want = ufunc.accumulate(a, axis=-1)
    np.testing.assert_array_equal(jitted(a), want)
    calls: dict[str, Callable[[], Any]] = {"stax": lambda: jitted(a),
                                            "numpy": lambda: ufunc.accumulate(a, axis=-1)}
    call = _torch_call(fn, a) if torch else None
    if call is not None:
        calls["torch"] = call
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    for round_ in range(repeat + 1):
        for name, run in calls.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            if round_:
                samples[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {name: (1e3 * statistics.median(w for w, _ in s),
                   1e3 * statistics.median(c for _, c in s)) for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="100000x100,10000x1000,1000x10000,100x100000,"
                        "10000000,4096x4096")
    parser.add_argument("--fns", default="cumsum,cumprod,cummax")
    parser.add_argument("--dtypes", default="float64,float32,int64")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--torch", action="store_true")
    args = parser.parse_args()
    print("| shape | dtype | scan | stax wall | stax cpu | NumPy wall | NumPy cpu | "
          "torch wall | stax/NumPy wall |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for text in args.shapes.split(","):
        shape = tuple(int(s) for s in text.split("x"))
        for dtype in args.dtypes.split(","):
            for fn in args.fns.split(","):
                r = measure(shape, dtype, fn, args.repeat, args.torch)
                torch = f"{r['torch'][0]:.2f}" if "torch" in r else "-"
                print(f"| {text} | {dtype} | {fn} | {r['stax'][0]:.2f} | {r['stax'][1]:.2f} | "
                      f"{r['numpy'][0]:.2f} | {r['numpy'][1]:.2f} | {torch} | "
                      f"{r['stax'][0] / r['numpy'][0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
