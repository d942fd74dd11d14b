"""Warm calls of the corpus functions with graph breaks: replayed tapes vs re-traced calls.

    python benchmarks/break_replay.py [--repeat N] [--corpus programs,wild,wild2,wild3]
                                      [--only name,...] [--markdown OUT.md]

For each corpus function (its first input) that runs with graph breaks: first a correctness
pass, the jitted function called on the input, on two inputs made with other seeds (same
signature: guards may fail and re-trace), and on the first input again, each result and
mutated argument compared with NumPy's; then the median time of --repeat warm calls on the
first input, interleaved: NumPy, `stax.jit(fn)` (replays its tape) and
`stax.jit(fn, replay=False)` (runs the Python function under the tracer on each call, as
before replay existed). Reported: the ratios to NumPy, the replay's time saved per call, and
how the correctness pass ran (replayed / missed calls).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-replay-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from corpus.programs import CASES as PROGRAMS  # noqa: E402
from corpus.test_corpus_wild import CASES as WILD  # noqa: E402
from corpus.test_corpus_wild2 import CASES2 as WILD2  # noqa: E402
from corpus.test_corpus_wild3 import CASES3 as WILD3  # noqa: E402

import stax  # noqa: E402

Maker = Callable[[np.random.Generator], tuple[Any, ...]]
CORPORA: dict[str, dict[str, tuple[Callable[..., Any], Maker]]] = {
    "programs": dict(PROGRAMS),
    **{label: {f"{label}:{n}": (fn, inputs[0]) for n, (fn, inputs) in cases.items()}
       for label, cases in (("wild", WILD), ("wild2", WILD2), ("wild3", WILD3))},
}
CASES = {name: case for corpus in CORPORA.values() for name, case in corpus.items()}
TOLERANCE = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


def copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def same(got: Any, want: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            same(got[k], want[k]) for k in want)
    if isinstance(want, (tuple, list)):
        return isinstance(got, type(want)) and len(got) == len(want) and all(
            same(g, w) for g, w in zip(got, want, strict=True))
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype != w.dtype:
        return False
    if w.dtype.kind in "fc":
        tol = TOLERANCE.get(w.dtype.name, 1e-9)
        return bool(np.allclose(g, w, rtol=tol, atol=tol * 1e-3, equal_nan=True))
    return bool(np.array_equal(g, w))


def check(jitted: Any, fn: Callable[..., Any], make: Maker, seed: int) -> str:
    """'' when `jitted` gives NumPy's results (and mutations) on the input `make` makes from
    `seed`, else what differs (made twice: a generator argument is consumed)."""
    theirs, mine = (make(np.random.default_rng(seed)) for _ in range(2))
    try:
        want = fn(*theirs)
    except Exception as e:  # noqa: BLE001 - NumPy's error path: Stax must raise the same
        try:
            jitted(*mine)
        except type(e):
            return ""
        return f"NumPy raises {type(e).__name__}, Stax did not"
    got = jitted(*mine)
    if not same(got, want) or not all(same(m, t) for m, t in zip(mine, theirs, strict=True)
                                      if isinstance(m, np.ndarray)):
        return "result differs from NumPy"
    return ""


def timed(fn: Callable[..., Any], args: tuple[Any, ...]) -> float:
    fresh = copies(args)
    start = time.perf_counter()
    fn(*fresh)
    return time.perf_counter() - start


def measure(name: str, repeat: int) -> tuple[str, str, tuple[float, ...] | None]:
    """(status, detail, (NumPy s, replay s, re-trace s)); status 'compiled' rows are dropped."""
    fn, make = CASES[name]
    seed = sum(map(ord, name))
    replayed, retraced = stax.jit(fn), stax.jit(fn, replay=False)
    for k in (0, 1, 2, 0):
        for jitted in (replayed, retraced):
            try:
                problem = check(jitted, fn, make, seed + k)
            except Exception as e:  # noqa: BLE001 - a failure is a row of the table
                problem = f"{type(e).__name__}: {str(e)[:60]}"
            if problem:
                return "fail", problem, None
    found = [b for bs in replayed.breaks.values() for b in bs]
    if not found:
        return "compiled", "", None
    if any(b.what.startswith("the whole function") for b in found):
        return "whole", found[-1].what[:60], None
    info = replayed.replay_info()
    reason = "; ".join(sorted(set(replayed.no_replay.values())))[:60]
    detail = f"{info.replayed} replayed, {info.missed} missed" + (f" ({reason})" if reason
                                                                   else "")
    times: list[list[float]] = [[], [], []]
    args = make(np.random.default_rng(seed))
    for _ in range(repeat):
        for k, f in enumerate((fn, replayed, retraced)):
            times[k].append(timed(f, args))
    return "breaks", detail, tuple(statistics.median(t) for t in times)


def overhead(repeat: int) -> str:
    """Replay's own cost: a function of one compiled segment, one NumPy call at a break and
    one guard, on 8 elements (NumPy's work is a few microseconds)."""
    def fn(x: np.ndarray) -> np.ndarray:
        y = np.unwrap(x * 2.0)
        return y + 1.0 if x[0] > -1.0 else y

    x = np.linspace(0.0, 1.0, 8)
    replayed, retraced = stax.jit(fn), stax.jit(fn, replay=False)
    times: list[list[float]] = [[], [], []]
    for _ in range(repeat * 50):
        for k, f in enumerate((fn, replayed, retraced)):
            times[k].append(timed(f, (x,)))
    numpy_t, replay_t, retrace_t = (statistics.median(t) * 1e6 for t in times)
    return (f"one segment + one NumPy call + one guard, 8 elements: NumPy {numpy_t:.1f} us, "
            f"replayed {replay_t:.1f} us (+{replay_t - numpy_t:.1f} us), re-traced "
            f"{retrace_t:.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--corpus", default=",".join(CORPORA))
    parser.add_argument("--only", default="")
    parser.add_argument("--markdown", default="")
    opts = parser.parse_args()
    names = opts.only.split(",") if opts.only else [
        n for c in opts.corpus.split(",") for n in sorted(CORPORA[c])]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            rows.append((name, *measure(name, opts.repeat)))
        rows_overhead = overhead(opts.repeat)
    timed_rows = [r for r in rows if r[3] is not None]
    fails = [r for r in rows if r[1] == "fail"]
    lines = [f"{len(rows)} functions: {len(timed_rows)} with graph breaks, "
             f"{sum(r[1] == 'whole' for r in rows)} whole function in NumPy, "
             f"{len(fails)} failed"]
    if timed_rows:
        replay = [t[1] / t[0] for *_, t in timed_rows]
        retrace = [t[2] / t[0] for *_, t in timed_rows]
        saved = [(t[2] - t[1]) * 1e6 for *_, t in timed_rows]
        extra = [(t[1] - t[0]) * 1e6 for *_, t in timed_rows]
        lines.append(f"median Stax/NumPy: replayed {statistics.median(replay):.2f}, re-traced "
                     f"(replay=False) {statistics.median(retrace):.2f}; median time saved per "
                     f"call {statistics.median(saved):.0f} us; median Stax - NumPy per call "
                     f"{statistics.median(extra):.0f} us")
    lines.append(f"replay overhead: {rows_overhead}")
    lines += ["", "| function | replay (correctness pass) | NumPy us | replayed / NumPy | "
              "re-traced / NumPy |", "|---|---|---|---|---|"]
    for name, status, detail, t in rows:
        if status == "compiled":
            continue
        if t is None:
            lines.append(f"| {name} | {status}: {detail.replace('|', '/')} | - | - | - |")
        else:
            lines.append(f"| {name} | {detail.replace('|', '/')} | {t[0] * 1e6:.0f} | "
                         f"{t[1] / t[0]:.2f} | {t[2] / t[0]:.2f} |")
    text = "\n".join(lines)
    print(text)
    if opts.markdown:
        with open(opts.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
