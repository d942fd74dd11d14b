"""Kernels and bytes moved per workload, without and with fusion (issue 3's measure).

Bytes moved = for every kernel, the bytes of each distinct buffer it reads or writes in memory
(kernel-local buffers never reach memory). `python benchmarks/fusion_effect.py [--size RxC]`.
"""

from __future__ import annotations

import argparse

import numpy as np
from workloads import WORKLOADS

import stax
from stax.sched.scheduler import Schedule


def traffic(schedule: Schedule) -> int:
    buffers = schedule.program.buffer_map
    local = {lb.buffer for lb in schedule.local}
    total = 0
    for g in schedule.kernels:
        touched = {m.node.out for m in g.members}
        touched |= {b for m in g.members for b in m.node.read_buffers()}
        total += sum(buffers[b].nbytes for b in touched - local)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="4096x4096")
    args = parser.parse_args()
    rows, cols = (int(s) for s in args.size.split("x"))
    rng = np.random.default_rng(0)
    print(f"| workload ({args.size}) | kernels unfused | kernels fused | MB unfused | MB fused |"
          " saved |")
    print("|---|---|---|---|---|---|")
    for w in WORKLOADS:
        inputs = w.make_inputs(rng, rows, cols)
        unfused = stax.explain(w.numpy_fn, *inputs, fuse=False).schedule
        fused = stax.explain(w.numpy_fn, *inputs).schedule
        before, after = traffic(unfused), traffic(fused)
        print(f"| {w.name} | {len(unfused.kernels)} | {len(fused.kernels)} | "
              f"{before / 1e6:.1f} | {after / 1e6:.1f} | {1 - after / before:.0%} |")


if __name__ == "__main__":
    main()
