"""Shape-generic programs (issue 11): a generic program against shape-specialized ones, against
torch.compile(dynamic=True), and a serving loop where every call has a new batch size.

    python benchmarks/dynamic.py [--elements 1000000] [--repeat 5] [--only softmax,...]
                                 [--calls 200] [--no-torch] [--no-serving] [--stat min|median]
                                 [--clock wall|cpu] [--markdown OUT.md]

Sweep: for each workload, shapes rows x cols with rows*cols = --elements from 1 x N to N x 1
(powers of ten) plus the square sizes 256^2, 1024^2, 2048^2. Per shape, round-robin after a
warm-up, the best (default; `--stat median` for medians) of --repeat runs: on a machine shared
with other work the minimum is the run least disturbed by it (`--clock cpu` with
OMP_NUM_THREADS=1 times the process's CPU time instead of wall time: on a loaded machine, the
time a single-threaded kernel ran rather than the time it also waited for a core):
- specialized: `stax.jit(fn, dynamic=False)` compiled for that shape;
- generic: ONE `stax.jit(fn, dynamic=True)` per workload and shape class (rank, dtype, which
  dimensions are 1), compiled on the first shape of its class and reused for every other;
- torch: `torch.compile(twin, dynamic=True)` (one compile per workload, Dynamo's symbolic shapes).
Serving: --calls calls of softmax/layernorm on (batch, 1024) with a new random batch in
[1, 512] each call; total wall time of all calls including every compile, for
stax.jit (default dynamic=None), torch.compile (default: automatic dynamic), and NumPy; then
the same calls again (warm: no compiles).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from workloads import WORKLOADS, Workload  # noqa: E402

import stax  # noqa: E402

SWEEP_WORKLOADS = ("softmax", "layernorm", "column_sum", "column_var_mean", "transpose_add",
                   "rmsnorm", "gelu_tanh")


def sweep_shapes(elements: int) -> list[tuple[int, int]]:
    digits = round(math.log10(elements))
    shapes = [(10**k, elements // 10**k) for k in range(digits + 1)]
    return shapes + [(256, 256), (1024, 1024), (2048, 2048)]


CLOCK: list[Callable[[], float]] = [time.perf_counter]  # --clock cpu: time.process_time


def batch_time(fn: Callable[[], Any], number: int) -> float:
    """Seconds per call over `number` back-to-back calls."""
    clock = CLOCK[0]
    start = clock()
    for _ in range(number):
        fn()
    return (clock() - start) / number


def calls_per_batch(fn: Callable[[], Any]) -> int:
    """Enough calls for a batch of about 5 ms (timer resolution and noise)."""
    return max(1, min(1000, int(0.005 / max(batch_time(fn, 1), 1e-7))))


def shape_class(args: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    return tuple((a.dtype.str, tuple(min(d, 2) for d in a.shape)) for a in args)


def sweep(workload: Workload, shapes: list[tuple[int, int]], repeat: int, use_torch: bool,
          stat: Callable[[list[float]], float]) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    generic: dict[tuple[Any, ...], Any] = {}
    compiled_torch = None
    if use_torch:
        import torch

        torch._dynamo.reset()
        compiled_torch = torch.compile(workload.torch_fn, dynamic=True)
    rows_out = []
    for rows, cols in shapes:
        args = workload.make_inputs(rng, rows, cols)
        expected = workload.numpy_fn(*args)
        cls = shape_class(args)
        if cls not in generic:
            generic[cls] = stax.jit(workload.numpy_fn, dynamic=True)
        gen, spec = generic[cls], stax.jit(workload.numpy_fn, dynamic=False)
        runs: dict[str, Callable[[], Any]] = {
            "specialized": lambda spec=spec, args=args: spec(*args),
            "generic": lambda gen=gen, args=args: gen(*args)}
        if compiled_torch is not None:
            import torch

            targs = [torch.from_numpy(a) for a in args]
            runs["torch"] = lambda targs=targs: compiled_torch(*targs)
        for name, run in runs.items():  # warm-up (compiles) and a correctness check
            got = run()
            got = got if isinstance(got, tuple) else (got,)
            exp = expected if isinstance(expected, tuple) else (expected,)
            for g, e in zip(got, exp, strict=True):
                g = g.numpy() if hasattr(g, "numpy") else g
                if not np.allclose(g, e, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(e).max(
                        initial=0.0))):
                    raise AssertionError(f"{workload.name} {rows}x{cols}: {name} differs")
        number = {name: calls_per_batch(run) for name, run in runs.items()}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repeat):  # round-robin: the load of a shared machine hits all alike
            for name, run in runs.items():
                times[name].append(batch_time(run, number[name]))
        row = {"workload": workload.name, "shape": f"{rows}x{cols}"}
        row |= {name: stat(ts) for name, ts in times.items()}
        rows_out.append(row)
        print(_fmt(row), flush=True)
    for cls, f in generic.items():
        info = f.cache_info()
        print(f"  {workload.name} class {cls}: {info}", flush=True)
    return rows_out


def _fmt(row: dict[str, Any]) -> str:
    g, s = row["generic"], row["specialized"]
    text = f"{row['workload']:16} {row['shape']:>12}  spec {s * 1e3:8.3f} ms  generic " \
           f"{g * 1e3:8.3f} ms  generic/spec {g / s:5.2f}"
    if "torch" in row:
        text += f"  torch {row['torch'] * 1e3:8.3f} ms  generic/torch {g / row['torch']:5.2f}"
    return text


def serving(calls: int, use_torch: bool) -> list[tuple[str, str, float, float]]:
    rng = np.random.default_rng(1)
    batches = [int(b) for b in rng.integers(1, 513, calls)]
    out = []
    for name in ("softmax", "layernorm"):
        w = next(w for w in WORKLOADS if w.name == name)
        inputs = [rng.standard_normal((b, 1024)).astype(np.float32) for b in batches]
        impls: dict[str, Callable[[np.ndarray], Any]] = {"numpy": w.numpy_fn,
                                                         "stax": stax.jit(w.numpy_fn)}
        if use_torch:
            import torch

            torch._dynamo.reset()
            compiled = torch.compile(w.torch_fn)
            impls["torch"] = lambda x, c=compiled: c(torch.from_numpy(x))
        for impl, fn in impls.items():
            totals = []
            for _ in range(2):  # [GEN] the first pass compiles; the second runs warm
                start = time.perf_counter()
                for x in inputs:
                    fn(x)
                totals.append(time.perf_counter() - start)
            extra = f" ({impls['stax'].cache_info()})" if impl == "stax" else ""
            print(f"serving {name:10} {impl:6} {calls} calls: {totals[0]:8.3f} s, again (warm) "
                  f"{totals[1]:8.3f} s{extra}", flush=True)
            out.append((name, impl, totals[0], totals[1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=",".join(SWEEP_WORKLOADS))
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-serving", action="store_true")
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--markdown")
    opts = parser.parse_args()
    if opts.clock == "cpu":
        if os.environ.get("OMP_NUM_THREADS") != "1":
            parser.error("--clock cpu sums the CPU time of all threads: set OMP_NUM_THREADS=1")
        CLOCK[0] = time.process_time
    os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-dyn-"))
    use_torch = not opts.no_torch
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"statistic: {opts.stat} of {opts.repeat}, clock: {opts.clock}", flush=True)
    shapes = sweep_shapes(opts.elements)
    rows = []
    for name in opts.only.split(","):
        w = next(w for w in WORKLOADS if w.name == name)
        rows += sweep(w, shapes, opts.repeat, use_torch,
                      min if opts.stat == "min" else statistics.median)
    ratios = [r["generic"] / r["specialized"] for r in rows]
    geo = math.exp(statistics.fmean(map(math.log, ratios)))
    print(f"generic/specialized: geomean {geo:.3f}, worst {max(ratios):.2f}")
    if use_torch:
        vs_torch = [r["generic"] / r["torch"] for r in rows]
        print(f"generic/torch.compile(dynamic=True): geomean "
              f"{math.exp(statistics.fmean(map(math.log, vs_torch))):.3f}, worst "
              f"{max(vs_torch):.2f}, shapes slower than torch: "
              f"{sum(v > 1 for v in vs_torch)}/{len(vs_torch)}")
    served = [] if opts.no_serving else serving(opts.calls, use_torch)
    if opts.markdown:
        with open(opts.markdown, "w") as fh:
            fh.write("| workload | shape | specialized ms | generic ms | generic/spec |"
                     + (" torch ms | generic/torch |" if use_torch else "") + "\n")
            fh.write("|---|---|---|---|---|" + ("---|---|" if use_torch else "") + "\n")
            for r in rows:
                line = f"| {r['workload']} | {r['shape']} | {r['specialized'] * 1e3:.3f} | " \
                       f"{r['generic'] * 1e3:.3f} | {r['generic'] / r['specialized']:.2f} |"
                if use_torch:
                    line += f" {r['torch'] * 1e3:.3f} | {r['generic'] / r['torch']:.2f} |"
                fh.write(line + "\n")
            fh.write(f"\n| serving ({opts.calls} calls) | impl | first pass s | second pass s |"
                     "\n|---|---|---|---|\n")
            for name, impl, total, warm in served:
                fh.write(f"| {name} | {impl} | {total:.3f} | {warm:.3f} |\n")


if __name__ == "__main__":
    main()
