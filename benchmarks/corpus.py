"""The corpora of ordinary NumPy functions (tests/corpus/programs.py, test_corpus_wild.py,
test_corpus_wild2.py, test_corpus_wild4.py, test_corpus_wild5.py, test_corpus_wild6.py,
test_corpus_wild7.py, test_corpus_wild8.py, test_corpus_wild9.py, test_corpus_wild12.py,
test_corpus_wild13.py, test_corpus_wild14.py, test_corpus_wild15.py) under stax.jit.

    python benchmarks/corpus.py [--repeat N] [--corpus programs,wild,wild2] [--only name,...]
                                [--markdown OUT.md]

The wild corpora run each function on its first input (the others are edge cases: 0- and
1-sized, transposed), named `wild:NAME` / `wild2:NAME`.

Per function: whether it compiles without a graph break, runs with breaks (how many; "whole"
when the whole function falls back to NumPy), or fails (an exception or a result that differs
from NumPy's); and the times of Stax and NumPy (us per call) and their ratio: median of
--repeat calls each, run alternately after one warm-up call, at the corpus's own (small)
argument sizes, so the ratio mostly shows per-call overhead, not kernel speed. Compile time is
not included. The summary counts the functions slower than NumPy.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-corpus-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from corpus.programs import CASES as PROGRAMS  # noqa: E402
from corpus.test_corpus_wild import CASES as WILD  # noqa: E402
from corpus.test_corpus_wild2 import CASES2 as WILD2  # noqa: E402
from corpus.test_corpus_wild4 import CASES4 as WILD4  # noqa: E402
from corpus.test_corpus_wild5 import CASES5 as WILD5  # noqa: E402
from corpus.test_corpus_wild6 import CASES6 as WILD6  # noqa: E402
from corpus.test_corpus_wild7 import CASES7 as WILD7  # noqa: E402
from corpus.test_corpus_wild8 import CASES8 as WILD8  # noqa: E402
from corpus.test_corpus_wild9 import CASES9 as WILD9  # noqa: E402
from corpus.test_corpus_wild12 import CASES12 as WILD12  # noqa: E402
from corpus.test_corpus_wild13 import CASES13 as WILD13  # noqa: E402
from corpus.test_corpus_wild14 import CASES14 as WILD14  # noqa: E402
from corpus.test_corpus_wild15 import CASES15 as WILD15  # noqa: E402

import stax  # noqa: E402
from stax.frontend.breaks import GraphBreakWarning  # noqa: E402


def copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Arrays copied; a random Generator too (each call draws from the same state)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else copy.deepcopy(a)
                 if isinstance(a, np.random.Generator) else a for a in args)


Maker = Callable[[np.random.Generator], tuple[Any, ...]]
CORPORA: dict[str, dict[str, tuple[Callable[..., Any], Maker]]] = {
    "programs": dict(PROGRAMS),
    "wild": {f"wild:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD.items()},
    "wild2": {f"wild2:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD2.items()},
    "wild4": {f"wild4:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD4.items()},
    "wild5": {f"wild5:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD5.items()},
    "wild6": {f"wild6:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD6.items()},
    "wild7": {f"wild7:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD7.items()},
    "wild8": {f"wild8:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD8.items()},
    "wild9": {f"wild9:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD9.items()},
    "wild12": {f"wild12:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD12.items()},
    "wild13": {f"wild13:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD13.items()},
    "wild14": {f"wild14:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD14.items()},
    "wild15": {f"wild15:{n}": (fn, inputs[0]) for n, (fn, inputs) in WILD15.items()},
}
CASES = {name: case for corpus in CORPORA.values() for name, case in corpus.items()}
TOLERANCE = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


def same(got: Any, want: Any) -> bool:
    if isinstance(want, (tuple, list)):
        return isinstance(got, type(want)) and len(got) == len(want) and all(
            same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(
            same(got[k], w) for k, w in want.items())
    if isinstance(want, str):
        return got == want
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype != w.dtype:
        return False
    if w.dtype.kind in "fc":
        tol = TOLERANCE.get(w.dtype.name, 1e-9)
        return bool(np.allclose(g, w, rtol=tol, atol=tol * 1e-3, equal_nan=True))
    return bool(np.array_equal(g, w))


def timed(fn: Callable[..., Any], args: tuple[Any, ...]) -> float:
    fresh = copies(args)
    start = time.perf_counter()
    fn(*fresh)
    return time.perf_counter() - start


def measure(name: str, repeat: int) -> tuple[str, str, tuple[float, float] | None]:
    """(status, detail, (Stax, NumPy) median seconds per call or None when not timed)."""
    fn, make_args = CASES[name]
    args = make_args(np.random.default_rng(sum(map(ord, name))))
    theirs, mine = copies(args), copies(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(*theirs)
    except Exception as e:  # noqa: BLE001 - a wild case on NumPy's error path: not timed
        return "skip", f"NumPy raises {type(e).__name__}", None
    jitted = stax.jit(fn)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            got = jitted(*mine)
    except Exception as e:  # noqa: BLE001 - a failure is a row of the table
        return "fail", f"{type(e).__name__}: {str(e)[:60]}", None
    if not same(got, want) or not all(same(m, t) for m, t in zip(mine, theirs, strict=True)
                                      if isinstance(m, np.ndarray)):
        return "fail", "result differs from NumPy", None
    found = [b for j in (jitted, *jitted.variants.values()) for bs in j.breaks.values()
             for b in bs]  # (a call with keywords or a generator runs a variant)
    found += [b for b in jitted.warned if b not in found]  # (an argument it cannot compile for)
    if not found:
        status, detail = "compiled", ""
    elif any("the whole function" in (b.what[:18], b.action[:18]) for b in found):
        status, detail = "whole", found[-1].what[:70]
    else:
        status, detail = "breaks", f"{len(found)}: " + ", ".join(
            sorted({b.what.split(" (")[0][:30] for b in found}))
    stax_t, numpy_t = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeat):
            stax_t.append(timed(jitted, args))
            numpy_t.append(timed(fn, args))
    return status, detail, (statistics.median(stax_t), statistics.median(numpy_t))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--corpus", default=",".join(CORPORA))
    parser.add_argument("--only", default="")
    parser.add_argument("--markdown", default="")
    opts = parser.parse_args()
    names = opts.only.split(",") if opts.only else [
        n for c in opts.corpus.split(",") for n in sorted(CORPORA[c])]
    rows = [(n, *measure(n, opts.repeat)) for n in names]
    lines = []
    for corpus in [*opts.corpus.split(","), "all"]:
        mine = [r for r in rows if corpus == "all" or r[0] in CORPORA[corpus]]
        if not mine:
            continue
        counts = {k: sum(r[1] == k for r in mine) for k in ("compiled", "breaks", "whole", "fail")}
        medians = {k: statistics.median(rs) if (rs := [r[3][0] / r[3][1] for r in mine
                                                        if r[1] == k]) else None
                   for k in ("compiled", "breaks")}
        timed_rows = [r[3] for r in mine if r[3] is not None]
        shown = {k: "-" if v is None else f"{v:.2f}" for k, v in medians.items()}
        lines.append(f"{corpus}: {len(mine)} functions; compiled without a break: "
                     f"{counts['compiled']} (median Stax/NumPy {shown['compiled']}); with graph "
                     f"breaks: {counts['breaks']} (median {shown['breaks']}); whole function in "
                     f"NumPy: {counts['whole']}; failed: {counts['fail']}"
                     + (f"; skipped (NumPy raises): {skipped}" if (skipped := sum(
                         r[1] == "skip" for r in mine)) else "")
                     + f"; slower than NumPy: {sum(a > b for a, b in timed_rows)} of "
                       f"{len(timed_rows)} timed")
    lines += ["", "| function | status | breaks | Stax us | NumPy us | Stax/NumPy time |",
              "|---|---|---|---:|---:|---:|"]
    for name, status, detail, times in rows:
        shown = "- | - | -" if times is None else (
            f"{times[0] * 1e6:.1f} | {times[1] * 1e6:.1f} | {times[0] / times[1]:.2f}")
        lines.append(f"| {name} | {status} | {detail.replace('|', '/')} | {shown} |")
    text = "\n".join(lines)
    print(text)
    if opts.markdown:
        with open(opts.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
