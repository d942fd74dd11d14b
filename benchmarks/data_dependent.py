"""[DYN16] Functions with data-dependent result shapes (issue 16 item 5): warm time of Stax
(compiled, the length bound at run time) against NumPy, against the same program with each
selection NumPy's compaction as an extern call (before [SEL]'s masked reductions,
`stax.masked_reductions`) and against the function run as a graph break (before DYN16: the
op in NumPy between compiled segments).

    python benchmarks/data_dependent.py [--repeat 9] [--n 1000000] [--only sum]

Each case's four calls are interleaved round-robin for `--repeat` rounds (garbage collection
off); each round times a batch of calls; medians per call are reported.
"""

from __future__ import annotations

import argparse
import functools
import gc
import operator
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's stax
import stax  # noqa: E402
from stax.frontend import data_dependent  # noqa: E402
from stax.runtime import compaction  # noqa: E402


def positive_sum(x: np.ndarray) -> Any:
    return x[x > 0].sum()


def standardize_selected(x: np.ndarray) -> Any:
    y = x[x > 0.5]
    return (y - y.mean()) / y.std()


def positive_max(x: np.ndarray) -> Any:
    return x[x > 0].max()


def positive_scaled(x: np.ndarray) -> Any:
    return x[x > 0] * 2


def positive_mean_std(x: np.ndarray) -> Any:
    y = x[x > 0]
    return y.mean(), y.std()


def count_in_band(x: np.ndarray) -> Any:
    return np.count_nonzero(x[np.abs(x) < 1.0]), x[np.abs(x) < 1.0].size


def selected_rows_sum(x: np.ndarray) -> Any:
    return x[x[:, 0] > 0].sum(0)


def flat_indices(x: np.ndarray) -> Any:
    return np.flatnonzero(x > 1.0) * 2


def histogram(labels: np.ndarray) -> Any:
    return np.bincount(labels) / labels.size


def distinct(ids: np.ndarray) -> Any:
    return np.unique(ids)


def distinct_counts(ids: np.ndarray) -> Any:
    return np.unique(ids, return_counts=True)


def cases(n: int) -> dict[str, tuple[Callable[..., Any], np.ndarray]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    labels = rng.integers(0, 1000, n)
    ids = rng.integers(0, n // 10, n // 10)
    return {
        f"x[x > 0].max()  ({n:,} f64)": (positive_max, x),
        f"x[x > 0].sum()  ({n:,} f64)": (positive_sum, x),
        f"x[x > 0] * 2  ({n:,} f64)": (positive_scaled, x),
        f"y.mean(), y.std(), y = x[x > 0]  ({n:,} f64)": (positive_mean_std, x),
        f"count_nonzero(x[|x| < 1]), .size  ({n:,} f64)": (count_in_band, x),
        f"x[x[:, 0] > 0].sum(0)  ({n // 8:,} x 8 f64)": (selected_rows_sum,
                                                         x.reshape(-1, 8)),
        f"(y - y.mean()) / y.std(), y = x[x > .5]  ({n:,})": (standardize_selected, x),
        f"np.flatnonzero(x > 1) * 2  ({n:,})": (flat_indices, x),
        f"np.bincount(labels) / n  ({n:,} labels < 1000)": (histogram, labels),
        f"np.unique(ids)  ({n // 10:,} int64)": (distinct, ids),
        f"np.unique(ids, return_counts=True)  ({n // 10:,})": (distinct_counts, ids),
    }


def as_break(fn: Callable[..., Any], arg: np.ndarray) -> Callable[..., Any]:
    """`fn` jitted the way it ran before DYN16: the data-dependent op a graph break."""
    jitted = stax.jit(fn)
    compiles, data_dependent._compiles = data_dependent._compiles, lambda b: False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):  # trace, then warm calls (replays)
                jitted(arg)
    finally:
        data_dependent._compiles = compiles
    return jitted


def as_extern(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` jitted as before [SEL]: every selection NumPy's compaction (an extern call), no
    masked reductions."""
    jitted = stax.jit(fn)
    saved = (stax.api.fuse_masked_reductions, compaction.select, compaction.flatnonzero)
    stax.api.fuse_masked_reductions = lambda g, n: g
    compaction.select, compaction.flatnonzero = operator.getitem, np.flatnonzero
    try:
        jitted.compile(*ARGS[fn])
    finally:
        stax.api.fuse_masked_reductions, compaction.select, compaction.flatnonzero = saved
    return jitted


ARGS: dict[Callable[..., Any], tuple[Any, ...]] = {}


def timed(call: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    args = parser.parse_args()
    print("| function | NumPy | Stax | Stax/NumPy | extern (before SEL) | extern/NumPy "
          "| as a break | break/NumPy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (fn, arg) in cases(args.n).items():
        if args.only not in name:
            continue
        ARGS[fn] = (arg,)
        compiled, extern, broken = stax.jit(fn), as_extern(fn), as_break(fn, arg)
        want = fn(arg)
        for got in (compiled(arg), extern(arg), broken(arg)):
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,), strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-9)
        runs = {"numpy": functools.partial(fn, arg), "stax": functools.partial(compiled, arg),
                "extern": functools.partial(extern, arg), "break": functools.partial(broken, arg)}
        calls = max(1, int(0.05 / max(timed(runs["numpy"], 1), 1e-6)))
        times: dict[str, list[float]] = {k: [] for k in runs}
        gc.disable()
        try:
            for _ in range(args.repeat):
                for key, call in runs.items():
                    times[key].append(timed(call, calls))
        finally:
            gc.enable()
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {name} | {med['numpy'] * 1e3:.3f} ms | {med['stax'] * 1e3:.3f} ms | "
              f"{med['stax'] / med['numpy']:.2f}x | {med['extern'] * 1e3:.3f} ms | "
              f"{med['extern'] / med['numpy']:.2f}x | {med['break'] * 1e3:.3f} ms | "
              f"{med['break'] / med['numpy']:.2f}x |")


if __name__ == "__main__":
    main()
