"""PyTorch models under eager, torch.compile(backend="inductor") and backend="stax".

    python benchmarks/torch_models.py            # full table (quiet machine)
    python benchmarks/torch_models.py --quick    # smoke run: small sizes, few repetitions
    python benchmarks/torch_models.py --threads 1
    python benchmarks/torch_models.py --threads 1 --models cnn mlp   # some models only
    python benchmarks/torch_models.py --threads 1 --clock cpu  # loaded machine: CPU time

For each model, inference (eval, no_grad) and a training step (forward, backward; the
optimizer stays eager) at a small and a large batch. The three variants run interleaved in
one loop (each repetition times eager, inductor and stax in turn) and the median and the
best are kept; every compiled result (and, in training, every parameter's gradient) is
checked against eager's before timing. Compile time
is the first call's wall time with cold caches (fresh Stax and Inductor cache directories).
`--clock cpu` times the process's CPU time instead of the wall clock: with `--threads 1` on a
machine shared with other jobs, time spent preempted then does not count.
Prints a Markdown table with Stax/Inductor ratios and their geometric mean.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Threads for every runtime (PyTorch, OpenMP kernels, BLAS) before any is loaded:
# `--threads N` on the command line.
if "--threads" in sys.argv:
    _N = sys.argv[sys.argv.index("--threads") + 1]
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _N
# Cold caches for the compile-time column (set before torch and stax are imported).
_TMP = tempfile.mkdtemp(prefix="stax-torch-bench-")
os.environ["STAX_CACHE_DIR"] = os.path.join(_TMP, "stax")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_TMP, "inductor")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from stax.torch import models  # noqa: E402

BACKENDS = ("eager", "inductor", "stax")


@dataclass(frozen=True)
class Case:
    model: str
    make: Callable[[], nn.Module]
    inputs: Callable[[int], list[torch.Tensor]]
    batches: tuple[int, int]


def cases(quick: bool) -> list[Case]:
    d = 32 if quick else 256
    seq = 8 if quick else 64

    def bag_inputs(b: int) -> list[torch.Tensor]:
        return [torch.randint(0, 1000, (b * 8,)), torch.arange(0, b * 8, 8)]

    return [
        Case("mlp", lambda: models.mlp(d, 4 * d, d), lambda b: [torch.randn(b, d)],
             (8, 64 if quick else 1024)),
        Case("transformer block", lambda: models.encoder(d, 4, 4 * d),
             lambda b: [torch.randn(b, seq, d)], (2, 4 if quick else 32)),
        Case("cnn", lambda: models.SmallCNN(8 if quick else 32, 16, 10),
             lambda b: [torch.randn(b, 3, 16, 16)], (4, 16 if quick else 256)),
        Case("rmsnorm+swiglu", lambda: models.RMSNormSwiGLU(d, 3 * d),
             lambda b: [torch.randn(b, seq, d)], (2, 4 if quick else 32)),
        Case("embedding bag", lambda: models.Bag(1000, d, 4), bag_inputs,
             (8, 64 if quick else 2048)),
        Case("lstm cell x4", lambda: models.LSTMSteps(d, d),
             lambda b: [torch.randn(4, b, d), torch.randn(b, d), torch.randn(b, d)],
             (8, 64 if quick else 1024)),
    ]


def compiled(model: nn.Module, backend: str) -> Callable[..., Any]:
    return model if backend == "eager" else torch.compile(model, backend=backend)


def step_fn(fn: Callable[..., Any], train: bool) -> Callable[[list[torch.Tensor]], Any]:
    if not train:
        def infer(xs: list[torch.Tensor]) -> Any:
            with torch.no_grad():
                return fn(*xs)
        return infer

    def train_step(xs: list[torch.Tensor]) -> Any:
        out = fn(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.square().mean() for o in outs).backward()
        return tuple(o.detach() for o in outs)
    return train_step


def time_case(case: Case, batch: int, train: bool, reps: int,
              compile_times: dict[tuple[str, str], float],
              clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    torch.manual_seed(0)
    base = case.make().train(train)
    # No dropout: random masks depend on each backend's use of the generator (Inductor draws
    # its own), so outputs would not compare; the timed work is the rest of the model.
    for m in base.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
        if isinstance(m, nn.MultiheadAttention):
            m.dropout = 0.0
    xs = case.inputs(batch)
    fns = {}
    for b in BACKENDS:
        model = copy.deepcopy(base)
        fns[b] = step_fn(compiled(model, b), train)
        start = time.perf_counter()
        out = fns[b](xs)
        key = (case.model, "train" if train else "inference")
        if b != "eager":
            compile_times[key + (b,)] = compile_times.get(key + (b,), 0.0) + \
                time.perf_counter() - start
        grads = [p.grad for p in model.parameters()]
        if b == "eager":
            want, want_grads = out, grads
        else:  # outputs and (training) the parameters' gradients
            torch.testing.assert_close((out, grads), (want, want_grads), rtol=2e-3, atol=2e-4)
    times: dict[str, list[float]] = {b: [] for b in BACKENDS}
    for _ in range(reps):  # interleaved
        for b in BACKENDS:
            start = clock()
            fns[b](xs)
            times[b].append(clock() - start)
    return {**{b: statistics.median(t) for b, t in times.items()},
            **{f"{b} best": min(t) for b, t in times.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for PyTorch, Stax's kernels and BLAS (default: all)")
    parser.add_argument("--models", nargs="+", default=None,
                        help="models to run (names as in the table; default: all)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall clock or the process's CPU time (loaded machine)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    reps = args.reps or (3 if args.quick else 30)
    rows = []
    compile_times: dict[tuple[str, ...], float] = {}
    for case in cases(args.quick):
        if args.models is not None and case.model not in args.models:
            continue
        for train in (False, True):
            for batch in case.batches:
                torch._dynamo.reset()
                t = time_case(case, batch, train, reps, compile_times, clock)
                rows.append((case.model, "train" if train else "inference", batch, t))
                print(f"  {case.model} {rows[-1][1]} batch {batch}: "
                      + ", ".join(f"{b} {t[b] * 1e3:.3f} ms" for b in BACKENDS),
                      file=sys.stderr, flush=True)
    ratios = [t["stax"] / t["inductor"] for *_, t in rows]
    # Best of the repetitions too: on a loaded machine preemption spikes of a scheduler time
    # slice hit a few repetitions of each variant, and a median of few moves with them.
    best = [t["stax best"] / t["inductor best"] for *_, t in rows]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"median (and best) of {reps} interleaved repetitions, {args.clock} clock\n")
    print("| model | mode | batch | eager ms | inductor ms | stax ms | stax/inductor "
          "| best stax/inductor |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (model, mode, batch, t), r, rb in zip(rows, ratios, best, strict=True):
        print(f"| {model} | {mode} | {batch} | {t['eager'] * 1e3:.3f} | "
              f"{t['inductor'] * 1e3:.3f} | {t['stax'] * 1e3:.3f} | {r:.2f} | {rb:.2f} |")
    for what, rs in (("medians", ratios), ("best", best)):
        geo = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"\nGeometric mean stax/inductor ({what}): {geo:.2f} (target <= 0.8)")
    print()
    print("| model | mode | inductor compile s | stax compile s |")
    print("|---|---|---:|---:|")
    for model, mode in dict.fromkeys((m, mo) for m, mo, *_ in compile_times):
        print(f"| {model} | {mode} | {compile_times[(model, mode, 'inductor')]:.2f} | "
              f"{compile_times[(model, mode, 'stax')]:.2f} |")


if __name__ == "__main__":
    main()
