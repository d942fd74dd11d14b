"""Scheduler time on synthetic graphs of 100, 1,000 and 5,000 nodes (issue 3's measure).

Each graph is a traced NumPy program whose every step materializes one node: a row reduction
(keepdims) of a pointwise combination of two earlier values, so the scheduler sees N nodes with
fusion candidates between neighbours and long-range reads. Steps whose value nothing reads are
dead and removed by the scheduler first, so the table gives the live nodes too (the ones fused),
and the N log N column is per live node. Times: tracing, lowering, scheduling (greedy fusion +
memory planning), and fusion alone on the same live nodes; `python benchmarks/sched_scaling.py`.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from stax.api import trace
from stax.lower import lower
from stax.sched.deps import scheduler_nodes
from stax.sched.fusion import greedy_fusion
from stax.sched.scheduler import remove_dead, schedule


def program(n: int, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    picks = [(int(rng.integers(0, k + 1)), int(rng.integers(max(0, k - 8), k + 1)))
             for k in range(n)]

    def fn(x):  # type: ignore[no-untyped-def]
        values = [x]
        for a, b in picks:
            values.append((values[a] * 0.5 + values[b]).sum(-1, keepdims=True) + x)
        return values[-1]
    return fn


def measure(n: int) -> dict[str, float]:
    x = np.ones((4, 8))
    start = time.perf_counter()
    traced = trace(program(n), (x,))
    t_trace = time.perf_counter() - start
    start = time.perf_counter()
    lowered = lower(traced.graph, [(8, 1)])
    t_lower = time.perf_counter() - start
    start = time.perf_counter()
    sched = schedule(lowered.program)
    t_sched = time.perf_counter() - start
    nodes = scheduler_nodes(remove_dead(lowered.program)[0])
    start = time.perf_counter()
    greedy_fusion(nodes, sched.rules)
    t_fusion = time.perf_counter() - start
    return {"nodes": len(lowered.program.nodes), "live": len(nodes), "kernels": len(sched.kernels),
            "trace": t_trace, "lower": t_lower, "schedule": t_sched, "fusion": t_fusion}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,5000")
    args = parser.parse_args()
    rows = [measure(int(n)) for n in args.sizes.split(",")]
    print("| nodes | live | kernels | trace s | lower s | schedule s (fusion + memory) |"
          " fusion s | schedule / (N log N) µs, N live |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        n = r["live"]
        per = r["schedule"] / (n * math.log2(max(n, 2))) * 1e6
        print(f"| {r['nodes']} | {n} | {r['kernels']} | {r['trace']:.3f} | {r['lower']:.3f} | "
              f"{r['schedule']:.3f} | {r['fusion']:.3f} | {per:.2f} |")


if __name__ == "__main__":
    main()
