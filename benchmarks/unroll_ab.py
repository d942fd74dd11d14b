"""[UNROLL] Reductions over 2..4 elements per output, unrolled (stax/lower.py `_few_reduced`) vs
the reduction loop (`_few_reduced` patched to False while the second function compiles), NumPy
beside them: CPU time of this thread (OMP_NUM_THREADS=1), medians of interleaved rounds.

    OMP_NUM_THREADS=1 python benchmarks/unroll_ab.py [--repeat 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from workloads import avgpool2x2, rgb_to_gray, sum_quads_rows, sum_triples  # noqa: E402

import stax  # noqa: E402
import stax.lower  # noqa: E402


def compiled(fn: Callable[..., Any], args: tuple[Any, ...], unrolled: bool) -> Callable[[], Any]:
    jitted = stax.jit(fn)
    keep = stax.lower._few_reduced
    if not unrolled:
        stax.lower._few_reduced = lambda op: False
    try:
        np.testing.assert_allclose(jitted(*args), fn(*args), rtol=1e-4, atol=1e-5)
    finally:
        stax.lower._few_reduced = keep
    return lambda: jitted(*args)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=11)
    repeat = parser.parse_args().repeat
    rng = np.random.default_rng(0)
    w = np.array([0.299, 0.587, 0.114], np.float32)
    print("| workload | shape | numpy ms | stax loop ms | stax unrolled ms | loop / unrolled |")
    print("|---|---|---|---|---|---|")
    for rows, cols in ((2048, 2048), (256, 1024)):
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        img = rng.standard_normal((rows, cols, 3), dtype=np.float32)
        for fn, args in (
            (avgpool2x2, (x,)),
            (sum_quads_rows, (x,)),
            (sum_triples, (img, w)),
            (rgb_to_gray, (img, w)),
        ):
            calls = {
                "numpy": lambda fn=fn, args=args: fn(*args),
                "loop": compiled(fn, args, False),
                "unrolled": compiled(fn, args, True),
            }
            times: dict[str, list[float]] = {k: [] for k in calls}
            for _ in range(repeat + 1):  # the first round warms up
                for k, call in calls.items():
                    t = time.thread_time()
                    call()
                    times[k].append(time.thread_time() - t)
            ms = {k: 1e3 * statistics.median(v[1:]) for k, v in times.items()}
            print(
                f"| {fn.__name__} | {rows}x{cols} | {ms['numpy']:.3f} | {ms['loop']:.3f} | "
                f"{ms['unrolled']:.3f} | {ms['loop'] / ms['unrolled']:.2f}x |"
            )


if __name__ == "__main__":
    main()
