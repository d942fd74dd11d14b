"""Dask+NumPy blocks vs Dask+Stax blocks on the same `LocalCluster`, end to end.

    python benchmarks/dask_bench.py [--gib 8] [--workers 2] [--rounds 3] [--source npy]

The input (float32, chunked by rows) is either generated lazily per block (`--source random`,
`dask.array.random`) or read from disk (`--source npy`: one `.npy` file per block through
`dask.array.from_npy_stack`, memory-mapped; written once under `--dir`); either way an array
larger than one process's comfortable memory never exists in one place. Each workload
is the same NumPy function: run by Dask's own NumPy dispatch (`fn(dask_array)`) and by
`stax.jit(fn)(dask_array)`; both computed on one cluster, interleaved, best of `--rounds`.
Prints a Markdown table: seconds end to end, their ratio, the ratio of the time each spends
beyond the input (both minus the time of generating or reading and summing it alone: how
much faster the blocks' own work is), the largest difference relative to the result's largest
magnitude, and the peak resident memory per worker.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import stax


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).max()


def layernorm(x: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + 1e-5)).sum(0)


def colstats(x: Any) -> Any:
    return x.mean(0), x.var(0), x.max(0)


def chain(x: Any) -> Any:
    return (np.tanh(x * 0.5 + 1.0) * np.exp(-x * x) - np.abs(x)).sum(0)


WORKLOADS: dict[str, Callable[[Any], Any]] = {
    "softmax rows (max of result)": softmax,
    "layernorm rows (column sums)": layernorm,
    "column mean/var/max": colstats,
    "elementwise chain (column sums)": chain,
}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=8.0)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--chunk-rows", type=int, default=32768)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", choices=("random", "npy"), default="random")
    parser.add_argument("--dir", default="/tmp/stax_dask_bench")
    args = parser.parse_args()
    rows = int(args.gib * 2**30 / 4 / args.cols)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="6GiB") as cluster, \
            Client(cluster) as client:
        x = da.random.default_rng(0).random((rows, args.cols),
                                            chunks=(args.chunk_rows, args.cols),
                                            dtype=np.float32)
        if args.source == "npy":
            path = Path(args.dir) / f"{rows}x{args.cols}-{args.chunk_rows}"
            if not (path / "complete").exists():  # written once, on the cluster
                path.parent.mkdir(parents=True, exist_ok=True)
                da.to_npy_stack(str(path), x, axis=0)
                (path / "complete").touch()
            x = da.from_npy_stack(path, mmap_mode="r")
        print(f"input: float32 [{rows} x {args.cols}] = {x.nbytes / 2**30:.1f} GiB in "
              f"{x.npartitions} blocks ({args.source}); {args.workers} worker processes x "
              "1 thread\n")
        start = time.perf_counter()
        client.compute(x.sum(), sync=True)
        gen = time.perf_counter() - start
        print(f"{'generating' if args.source == 'random' else 'reading'} and summing the input "
              f"alone: {gen:.2f} s\n")
        print("| workload | Dask+NumPy s | Dask+Stax s | NumPy/Stax | beyond the input "
              "| max diff / max |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, fn in WORKLOADS.items():
            jitted = stax.jit(fn)
            client.compute(jitted(x[: args.chunk_rows * 2]), sync=True)  # compile on workers
            best = {"numpy": float("inf"), "stax": float("inf")}
            results: dict[str, Any] = {}
            for _ in range(args.rounds):
                for kind, f in (("numpy", fn), ("stax", jitted)):
                    start = time.perf_counter()
                    results[kind] = client.compute(f(x), sync=True)
                    best[kind] = min(best[kind], time.perf_counter() - start)
            want = results["numpy"] if isinstance(results["numpy"], tuple) else \
                (results["numpy"],)
            got = results["stax"] if isinstance(results["stax"], tuple) else (results["stax"],)
            diff = max(float(np.max(np.abs(np.asarray(g, np.float64) - w)) /
                             max(float(np.max(np.abs(w))), 1e-30))
                       for g, w in zip(got, want, strict=True))
            beyond = (best["numpy"] - gen) / (best["stax"] - gen) \
                if best["stax"] - gen > 0.05 else float("nan")
            print(f"| {name} | {best['numpy']:.2f} | {best['stax']:.2f} | "
                  f"{best['numpy'] / best['stax']:.2f}x | {beyond:.2f}x | {diff:.1e} |")
        mem = client.run(peak_rss_mib)
        print("\npeak resident memory per worker (MiB): " +
              ", ".join(f"{m:.0f}" for m in mem.values()))


if __name__ == "__main__":
    main()
