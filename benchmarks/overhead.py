"""Per-call overhead of a warm stax.jit call (issue 9 item 4: at most 2 µs above the
equivalent single NumPy ufunc call), measured the issue's way: `a + b` on 8 float64.

    python benchmarks/overhead.py [--repeat 15] [--calls 20000] [--markdown OUT.md]
                                  [--kinds] [--sizes 1,1000,100000] [--clock wall|process]

Each case times a batch of `--calls` calls of NumPy and of the jitted function, the two
interleaved round-robin for `--repeat` rounds (garbage collection off); medians per call are
reported with the difference. Cases: the issue's `a + b` (8 float64), also compiled
shape-generic (`dynamic=True`, issue 11); `a * s` with a Python
float; a 0-d result (`a.sum()`); a program with 8 outputs against NumPy's 8 ufunc calls. The
breakdown times the warm path's parts: the packed signature (fastcall.c `key`), the wrapper
without checks (`program.proven`), the checked wrapper (`program.call`).

[CALL2] `--kinds`: instead, one table per argument kind at each of `--sizes` elements (1-, 2-
and 3-argument elementwise, a reduction, a tuple of results, a Python float and a 0-d array
argument, a view of the argument as the result, keyword arguments), each against the
equivalent NumPy calls. `--clock process` times by the process's CPU clock (less noise on a
loaded machine; a kernel run by several threads counts each thread's time).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's stax
import stax  # noqa: E402
from stax.runtime.fast import fastcall  # noqa: E402


def eight_outputs(a: np.ndarray) -> tuple[np.ndarray, ...]:
    return (a + 1, a - 1, a * 2, a / 2, -a, a * a, np.abs(a), np.sqrt(np.abs(a)))


def cases() -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """name -> (NumPy call, warm stax call), both on the same inputs."""
    a, b = np.arange(8.0), np.ones(8)
    add = stax.jit(lambda x, y: x + y)
    generic = stax.jit(lambda x, y: x + y, dynamic=True)  # one program for every length
    scale = stax.jit(lambda x, s: x * s)
    total = stax.jit(lambda x: x.sum())
    many = stax.jit(eight_outputs)
    out = {
        "a + b (8 float64)": (lambda: np.add(a, b), lambda: add(a, b)),
        "a + b, shape-generic program": (lambda: np.add(a, b), lambda: generic(a, b)),
        "a * 2.0 (Python float)": (lambda: np.multiply(a, 2.0), lambda: scale(a, 2.0)),
        "a.sum() (0-d result)": (lambda: np.add.reduce(a), lambda: total(a)),
        "8 outputs (8 NumPy ufuncs)": (lambda: eight_outputs(a), lambda: many(a)),
    }
    for numpy_call, stax_call in out.values():  # compile, then take the warm path once
        np.testing.assert_allclose(stax_call(), numpy_call())
        np.testing.assert_allclose(stax_call(), numpy_call())
    return out


def scaled(x: np.ndarray, y: Any = 1.0) -> np.ndarray:
    return x * y


def kinds(n: int) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """[CALL2] name -> (NumPy call, warm stax call) per argument kind, on `n` float64."""
    a, b, c = np.arange(float(n)), np.ones(n), np.full(n, 2.0)
    zero_d = np.array(3.0)
    one = stax.jit(lambda x: np.sqrt(x))
    two = stax.jit(lambda x, y: x + y)
    three = stax.jit(lambda x, y, z: x * y + z)
    total = stax.jit(lambda x: x.sum())
    pair = stax.jit(lambda x, y: (x + y, x - y))
    scale = stax.jit(lambda x, s: x * s)
    view = stax.jit(lambda x: x[::2])
    keywords = stax.jit(scaled)
    out = {
        "np.sqrt(x)": (lambda: np.sqrt(a), lambda: one(a)),
        "x + y": (lambda: np.add(a, b), lambda: two(a, b)),
        "x * y + z": (lambda: np.add(np.multiply(a, b), c), lambda: three(a, b, c)),
        "x.sum()": (lambda: np.add.reduce(a), lambda: total(a)),
        "(x + y, x - y)": (lambda: (np.add(a, b), np.subtract(a, b)), lambda: pair(a, b)),
        "x * 2.0 (Python float)": (lambda: np.multiply(a, 2.0), lambda: scale(a, 2.0)),
        "x * s (0-d array)": (lambda: np.multiply(a, zero_d), lambda: scale(a, zero_d)),
        "x[::2] (a view)": (lambda: a[::2], lambda: view(a)),
        "f(x, y=2.0) (keyword)": (lambda: np.multiply(a, 2.0), lambda: keywords(a, y=2.0)),
    }
    for numpy_call, stax_call in out.values():  # compile, then take the warm path once
        np.testing.assert_allclose(stax_call(), numpy_call())
        np.testing.assert_allclose(stax_call(), numpy_call())
    return out


def parts() -> dict[str, Callable[[], Any]]:
    """The warm path of `a + b` piece by piece."""
    a, b = np.arange(8.0), np.ones(8)
    add = stax.jit(lambda x, y: x + y)
    add(a, b)
    program = next(iter(add.cache.values())).program
    out: dict[str, Callable[[], Any]] = {"np.add": lambda: np.add(a, b),
                                         "whole warm call": lambda: add(a, b)}
    # (getattr: the script also measures checkouts from before these parts existed)
    key = getattr(fastcall(), "key", None)
    if key is not None:
        args = (a, b)
        out["packed key (fastcall.key)"] = lambda: key(args)
    proven = getattr(program, "proven", None)
    if proven is not None:
        out["program.proven (no checks)"] = lambda: proven(a, b)
    call = program.call
    out["program.call (checked)"] = lambda: call([a, b])
    return out


def per_call_us(calls: dict[str, Callable[[], Any]], n: int, repeat: int,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median µs per call of each, batches of `n` calls interleaved round-robin."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, call in calls.items():
                start = clock()
                for _ in range(n):
                    call()
                samples[name].append((clock() - start) / n * 1e6)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(s) for name, s in samples.items()}


def compared(calls: dict[str, tuple[Callable[[], Any], Callable[[], Any]]], n: int,
             repeat: int, clock: Callable[[], float]) -> list[list[str]]:
    """A table row per case: NumPy µs, Stax µs and the difference (interleaved medians)."""
    rows = []
    for name, (numpy_call, stax_call) in calls.items():
        us = per_call_us({"numpy": numpy_call, "stax": stax_call}, n, repeat, clock)
        rows.append([name, f"{us['numpy']:.3f}", f"{us['stax']:.3f}",
                     f"{us['stax'] - us['numpy']:+.3f}"])
    return rows


def table(rows: Sequence[Sequence[str]], headers: Sequence[str], markdown: bool) -> str:
    if markdown:
        return "\n".join(["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
                         + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                     for r in [headers, *rows])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--calls", type=int, default=20000, help="calls per timed batch")
    parser.add_argument("--markdown", type=Path, help="also write the tables as markdown here")
    parser.add_argument("--kinds", action="store_true", help="per argument kind and size")
    parser.add_argument("--sizes", default="1,1000,100000", help="elements, with --kinds")
    parser.add_argument("--clock", choices=["wall", "process"], default="wall")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    headers = ["case", "numpy µs", "stax µs", "stax - numpy µs"]
    if args.kinds:
        for n in map(int, args.sizes.split(",")):
            rows = compared(kinds(n), args.calls, args.repeat, clock)
            print(f"{n} elements\n{table(rows, headers, markdown=False)}\n")
            if args.markdown:
                with args.markdown.open("a") as out:
                    out.write(f"{n} elements\n\n{table(rows, headers, markdown=True)}\n\n")
        return 0
    rows = compared(cases(), args.calls, args.repeat, clock)
    pieces = per_call_us(parts(), args.calls, args.repeat, clock)
    part_rows = [[name, f"{us:.3f}"] for name, us in pieces.items()]
    part_headers = ["warm path of a + b, piece by piece", "µs per call"]
    print(table(rows, headers, markdown=False))
    print()
    print(table(part_rows, part_headers, markdown=False))
    if args.markdown:
        args.markdown.write_text(table(rows, headers, markdown=True) + "\n\n"
                                 + table(part_rows, part_headers, markdown=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
