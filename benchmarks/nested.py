"""Irregular (ragged) workloads: stax.nested vs hand-flattened NumPy vs Numba parallel loops.

    python benchmarks/nested.py [--elements 10000000] [--repeat 5] [--small 1000]
                                [--markdown OUT.md] [--clock wall|cpu]

Each workload is written three ways and run side by side in one process:

- stax: the nested program (`sn.map` over rows, inner `sn.reduce`/`sn.iota`...) compiled by
  `sn.jit`, i.e. flattened into segmented OpenMP kernels;
- numpy: the best hand-flattened NumPy we know (`np.repeat`, `np.add.reduceat`, cumsum
  tricks; single-threaded, as NumPy is);
- numba: a plain loop over rows with `@njit(parallel=True)` and `prange`.

Every implementation's result is checked against the NumPy one first (that call also compiles
stax's kernels and Numba's loop). Each then runs one warm-up call and --repeat timed calls in a
row (see `_times`); the median is reported with the ratios NumPy/stax and Numba/stax
(> 1: stax is faster), then the ratios of the best calls. Threads: OpenMP and Numba use every
core (`os.cpu_count()`).
`--regular`: workloads over rows of one length (a (k, 100) array: a map, two scans, a
softmax, an ELL SpMV), where NumPy's code is the plain 2-D one along axis 1.
A second table runs the same workloads at --small elements (per-call overhead: a warm
`sn.jit` call replays its recorded program), median of 200 calls.
`--clock cpu` times the process's CPU time instead of the wall clock: on a loaded machine
preemption does not count (with OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 it is each
implementation's single-thread time; with more threads, their sum, spinning included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import njit, prange

import stax.nested as sn

Runners = tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]
Fill = Callable[[np.ndarray, np.random.Generator], tuple[Any, ...]]


@dataclass(frozen=True)
class Workload:
    name: str
    make: Callable[[int, np.random.Generator], tuple[Any, ...]]  # inputs for ~n elements
    prepare: Callable[..., Runners]  # inputs -> (stax, numpy, numba) zero-argument calls
    rtol: float
    fill: Fill | None = None  # ragged workloads: (row lengths, rng) -> inputs
    min_len: int = 0  # ragged workloads: the shortest row they accept (softmax: row.max())


def _lengths(n: int, mean: int, rng: np.random.Generator, min_len: int = 0) -> np.ndarray:
    """Row lengths with total ~n: uniform in [min_len, 2*mean], so rows vary widely."""
    k = max(1, n // mean)
    return rng.integers(min_len, 2 * mean + 1, size=k).astype(np.int64)


def _starts(lengths: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _reduceat(ufunc: np.ufunc, values: np.ndarray, lengths: np.ndarray,
              empty: float) -> np.ndarray:
    """ufunc.reduceat per row, empty rows set to `empty`. reduceat gets empty segments wrong
    (an index equal to the next gives that element), so it runs over the starts of the
    non-empty rows only (strictly increasing, all < len(values); each segment then ends where
    the next non-empty row starts, or at the end)."""
    out = np.full(len(lengths), empty, dtype=values.dtype)
    full = lengths > 0
    if full.any():
        out[full] = ufunc.reduceat(values, _starts(lengths)[full])
    return out


# 1. sum of iota n per element --------------------------------------------------------------

def sum_iota_stax(ns: np.ndarray) -> np.ndarray:
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)


def sum_iota_numpy(ns: np.ndarray) -> np.ndarray:
    inner = np.arange(ns.sum()) - np.repeat(_starts(ns), ns)
    return _reduceat(np.add, inner, ns, 0).astype(np.int64)


@njit(parallel=True, cache=False)
def sum_iota_numba(ns: np.ndarray) -> np.ndarray:
    out = np.empty(len(ns), dtype=np.int64)
    for j in prange(len(ns)):
        acc = 0
        for i in range(ns[j]):
            acc += i
        out[j] = acc
    return out


def fill_sum_iota(ns: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    return (ns,)


# 2. segmented softmax over ragged rows -------------------------------------------------------

def softmax_stax(x: sn.Ragged) -> sn.Ragged:
    def row_softmax(row: Any) -> Any:
        e = np.exp(row - row.max())
        return e / e.sum()
    return sn.map(row_softmax, x)


def softmax_numpy(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    m = _reduceat(np.maximum, values, lengths, -np.inf)
    e = np.exp(values - np.repeat(m, lengths))
    s = _reduceat(np.add, e, lengths, 0.0)
    return e / np.repeat(s, lengths)


@njit(parallel=True, cache=False)
def softmax_numba(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    out = np.empty_like(values)
    for j in prange(len(lengths)):
        a, b = starts[j], starts[j] + lengths[j]
        m = -np.inf
        for i in range(a, b):
            m = max(m, values[i])
        s = 0.0
        for i in range(a, b):
            out[i] = np.exp(values[i] - m)
            s += out[i]
        for i in range(a, b):
            out[i] /= s
    return out


def fill_softmax(lengths: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.normal(size=int(lengths.sum())), lengths)


# 3. CSR sparse matrix-vector product as a map over rows --------------------------------------

def spmv_stax(cols: sn.Ragged, vals: sn.Ragged, x: np.ndarray) -> np.ndarray:
    return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                  cols, vals)


def spmv_numpy(cols: np.ndarray, vals: np.ndarray, lengths: np.ndarray,
               x: np.ndarray) -> np.ndarray:
    return _reduceat(np.add, vals * x[cols], lengths, 0.0)


@njit(parallel=True, cache=False)
def spmv_numba(cols: np.ndarray, vals: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
               x: np.ndarray) -> np.ndarray:
    out = np.empty(len(lengths))
    for j in prange(len(lengths)):
        acc = 0.0
        for i in range(starts[j], starts[j] + lengths[j]):
            acc += vals[i] * x[cols[i]]
        out[j] = acc
    return out


def fill_spmv(lengths: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    nnz = int(lengths.sum())
    ncols = 2 * len(lengths)  # n // 10 for rows of mean 20
    return (rng.integers(0, ncols, size=nnz), rng.normal(size=nnz), lengths,
            rng.normal(size=ncols))


# 4. per-segment maximum and its index --------------------------------------------------------

def _argmax_op(a: tuple, b: tuple) -> tuple:
    take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
    return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])


def argmax_stax(x: sn.Ragged) -> tuple[np.ndarray, np.ndarray]:
    return sn.map(lambda row: sn.reduce(_argmax_op, (-np.inf, -1),
                                        (row, sn.iota(sn.length(row)))), x)


def argmax_numpy(values: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = _reduceat(np.maximum, values, lengths, -np.inf)
    inner = np.arange(len(values)) - np.repeat(_starts(lengths), lengths)
    big = np.iinfo(np.int64).max
    first = _reduceat(np.minimum, np.where(values == np.repeat(m, lengths), inner, big),
                      lengths, big)
    return m, np.where(lengths == 0, -1, first)


@njit(parallel=True, cache=False)
def argmax_numba(values: np.ndarray, starts: np.ndarray,
                 lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    best = np.empty(len(lengths))
    where = np.empty(len(lengths), dtype=np.int64)
    for j in prange(len(lengths)):
        m, w = -np.inf, -1
        for i in range(lengths[j]):
            v = values[starts[j] + i]
            if v > m:
                m, w = v, i
        best[j], where[j] = m, w
    return best, where


def fill_argmax(lengths: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.normal(size=int(lengths.sum())), lengths)


# 5. nested map with an irregular inner reduce ------------------------------------------------

def inner_stax(ns: np.ndarray, w: np.ndarray) -> np.ndarray:
    return sn.map(lambda n, s: sn.reduce(np.add, 0.0, sn.map(
        lambda i: np.sqrt(i * s + 1.0), sn.iota(n))), ns, w)


def inner_numpy(ns: np.ndarray, w: np.ndarray) -> np.ndarray:
    inner = np.arange(ns.sum()) - np.repeat(_starts(ns), ns)
    return _reduceat(np.add, np.sqrt(inner * np.repeat(w, ns) + 1.0), ns, 0.0)


@njit(parallel=True, cache=False)
def inner_numba(ns: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.empty(len(ns))
    for j in prange(len(ns)):
        acc = 0.0
        for i in range(ns[j]):
            acc += np.sqrt(i * w[j] + 1.0)
        out[j] = acc
    return out


def fill_inner(ns: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    return (ns, rng.uniform(0.0, 2.0, size=len(ns)))


# ---------------------------------------------------------------------------------------------

def sum_iota_runners(ns: np.ndarray) -> Runners:
    f = sn.jit(sum_iota_stax)
    return (lambda: f(ns), lambda: sum_iota_numpy(ns), lambda: sum_iota_numba(ns))


def softmax_runners(values: np.ndarray, lengths: np.ndarray) -> Runners:
    x, starts, f = sn.Ragged(values, lengths), _starts(lengths), sn.jit(softmax_stax)
    return (lambda: f(x).values, lambda: softmax_numpy(values, lengths),
            lambda: softmax_numba(values, starts, lengths))


def spmv_runners(cols: np.ndarray, vals: np.ndarray, lengths: np.ndarray,
                 x: np.ndarray) -> Runners:
    rc, rv, starts = sn.Ragged(cols, lengths), sn.Ragged(vals, lengths), _starts(lengths)
    f = sn.jit(spmv_stax)
    return (lambda: f(rc, rv, x), lambda: spmv_numpy(cols, vals, lengths, x),
            lambda: spmv_numba(cols, vals, starts, lengths, x))


def argmax_runners(values: np.ndarray, lengths: np.ndarray) -> Runners:
    x, starts, f = sn.Ragged(values, lengths), _starts(lengths), sn.jit(argmax_stax)
    return (lambda: f(x), lambda: argmax_numpy(values, lengths),
            lambda: argmax_numba(values, starts, lengths))


def inner_runners(ns: np.ndarray, w: np.ndarray) -> Runners:
    f = sn.jit(inner_stax)
    return (lambda: f(ns, w), lambda: inner_numpy(ns, w), lambda: inner_numba(ns, w))


def _ragged(name: str, mean: int, fill: Fill, prepare: Callable[..., Runners], rtol: float,
            min_len: int = 0) -> Workload:
    """A workload over rows of random lengths (`_lengths`: mean `mean`, at least `min_len`)."""
    return Workload(name, lambda n, rng: fill(_lengths(n, mean, rng, min_len), rng), prepare,
                    rtol, fill, min_len)


WORKLOADS = [
    _ragged("sum of iota n per element", 1000, fill_sum_iota, sum_iota_runners, 0.0),
    _ragged("segmented softmax (ragged rows)", 100, fill_softmax, softmax_runners, 1e-9,
            min_len=1),
    _ragged("CSR SpMV (map over rows)", 20, fill_spmv, spmv_runners, 1e-9),
    _ragged("per-segment max and its index", 50, fill_argmax, argmax_runners, 0.0),
    _ragged("nested map, irregular inner reduce", 300, fill_inner, inner_runners, 1e-9),
]

# Row lengths with empty rows at the start, in the middle and at the end; all rows empty; one
# long row between empty ones (`check_empty_rows`; rows shorter than a workload's min_len are
# lengthened to it).
EMPTY_ROWS = ([0, 0, 3, 0, 0, 5, 1, 0, 7, 2, 0, 0], [0, 0, 0], [0, 3000, 0])


def check_empty_rows(workloads: list[Workload]) -> None:
    """Stax, NumPy and Numba agree on rows of EMPTY_ROWS (the random lengths of the timed
    data rarely give empty rows next to the ends, where NumPy's reduceat needs care)."""
    rng = np.random.default_rng(1)
    for wl in workloads:
        for lengths in EMPTY_ROWS:
            assert wl.fill is not None
            rows = np.maximum(np.array(lengths, dtype=np.int64), wl.min_len)
            fns = wl.prepare(*wl.fill(rows, rng))
            want = fns[1]()
            for who, fn in (("stax", fns[0]), ("numba", fns[2])):
                _check(fn(), want, wl.rtol, who, f"{wl.name}, row lengths {rows}")


# Regular rows (k rows of W elements): `--regular` -------------------------------------------
#
# Work over rows of one length runs through the main pipeline (`stax.nested.regular`); NumPy's
# own code is then the 2-D one (axis=1), no hand-flattening needed.

WIDTH = 100


def _rows(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(max(1, n // WIDTH), WIDTH))


def rowmap_stax(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    return sn.map(lambda row, s: np.exp(row) * s + 1.0, a, w)


@njit(parallel=True, cache=False)
def rowmap_numba(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for j in prange(a.shape[0]):
        for i in range(a.shape[1]):
            out[j, i] = np.exp(a[j, i]) * w[j] + 1.0
    return out


def make_rowmap(n: int, rng: np.random.Generator) -> tuple[Any, ...]:
    a = _rows(n, rng)
    return (a, rng.normal(size=len(a)))


def rowmap_runners(a: np.ndarray, w: np.ndarray) -> Runners:
    f = sn.jit(rowmap_stax)
    return (lambda: f(a, w), lambda: np.exp(a) * w[:, None] + 1.0, lambda: rowmap_numba(a, w))


def rowscan_stax(a: np.ndarray) -> np.ndarray:
    return sn.map(lambda row: sn.scan(np.add, 0.0, row), a)


@njit(parallel=True, cache=False)
def rowscan_numba(a: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for j in prange(a.shape[0]):
        acc = 0.0
        for i in range(a.shape[1]):
            acc += a[j, i]
            out[j, i] = acc
    return out


def rowscan_runners(a: np.ndarray) -> Runners:
    f = sn.jit(rowscan_stax)
    return (lambda: f(a), lambda: np.cumsum(a, axis=1), lambda: rowscan_numba(a))


def rowmax_stax(a: np.ndarray) -> np.ndarray:
    return sn.map(lambda row: sn.scan(np.maximum, -np.inf, row * row), a)


@njit(parallel=True, cache=False)
def rowmax_numba(a: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for j in prange(a.shape[0]):
        acc = -np.inf
        for i in range(a.shape[1]):
            acc = max(acc, a[j, i] * a[j, i])
            out[j, i] = acc
    return out


def rowmax_runners(a: np.ndarray) -> Runners:
    f = sn.jit(rowmax_stax)
    return (lambda: f(a), lambda: np.maximum.accumulate(a * a, axis=1), lambda: rowmax_numba(a))


def rowsoftmax_numpy(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@njit(parallel=True, cache=False)
def rowsoftmax_numba(a: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for j in prange(a.shape[0]):
        m = -np.inf
        for i in range(a.shape[1]):
            m = max(m, a[j, i])
        t = 0.0
        for i in range(a.shape[1]):
            out[j, i] = np.exp(a[j, i] - m)
            t += out[j, i]
        for i in range(a.shape[1]):
            out[j, i] /= t
    return out


def rowsoftmax_runners(a: np.ndarray) -> Runners:
    f = sn.jit(softmax_stax)
    return (lambda: f(a), lambda: rowsoftmax_numpy(a), lambda: rowsoftmax_numba(a))


def ell_stax(cols: np.ndarray, vals: np.ndarray, x: np.ndarray) -> np.ndarray:
    return spmv_stax(cols, vals, x)


@njit(parallel=True, cache=False)
def ell_numba(cols: np.ndarray, vals: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.empty(cols.shape[0])
    for j in prange(cols.shape[0]):
        acc = 0.0
        for i in range(cols.shape[1]):
            acc += vals[j, i] * x[cols[j, i]]
        out[j] = acc
    return out


def make_ell(n: int, rng: np.random.Generator) -> tuple[Any, ...]:
    k, ncols = max(1, n // 20), max(1, n // 10)
    return (rng.integers(0, ncols, size=(k, 20)), rng.normal(size=(k, 20)),
            rng.normal(size=ncols))


def ell_runners(cols: np.ndarray, vals: np.ndarray, x: np.ndarray) -> Runners:
    f = sn.jit(ell_stax)
    return (lambda: f(cols, vals, x), lambda: (vals * x[cols]).sum(axis=1),
            lambda: ell_numba(cols, vals, x))


REGULAR = [
    Workload("map over rows: exp(row) * w[s] + 1", make_rowmap, rowmap_runners, 1e-12),
    Workload("scan over rows: cumsum", lambda n, rng: (_rows(n, rng),), rowscan_runners, 1e-9),
    Workload("scan over rows: running max of row**2", lambda n, rng: (_rows(n, rng),),
             rowmax_runners, 0.0),
    Workload("softmax over rows", lambda n, rng: (_rows(n, rng),), rowsoftmax_runners, 1e-9),
    Workload("ELL SpMV (20 per row)", make_ell, ell_runners, 1e-9),
]


def _check(got: Any, want: Any, rtol: float, who: str, name: str) -> None:
    got_t = got if isinstance(got, tuple) else (got,)
    want_t = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got_t, want_t, strict=True):
        if rtol:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12,
                                       err_msg=f"{who} differs on {name}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{who} differs on {name}")


Row = tuple[str, int, tuple[float, float, float], tuple[float, float, float]]


CLOCK = time.perf_counter  # --clock cpu: time.process_time


def run(elements: int, repeat: int, workloads: list[Workload]) -> list[Row]:
    """One row per workload: its name, inner elements, the median and the best seconds of
    stax, numpy and numba."""
    rows = []
    rng = np.random.default_rng(0)
    for wl in workloads:
        inputs = wl.make(elements, rng)
        fns = wl.prepare(*inputs)
        want = fns[1]()
        for who, fn in (("stax", fns[0]), ("numba", fns[2])):
            _check(fn(), want, wl.rtol, who, wl.name)  # also the warm-up (compiles)
        times = [_times(fn, repeat) for fn in fns]
        median = tuple(statistics.median(t) for t in times)
        best = tuple(min(t) for t in times)
        rows.append((wl.name, _elements(wl.name, inputs), median, best))
    return rows


def _times(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Seconds of `repeat` consecutive calls after one warm-up call. Consecutive, not
    round-robin: the thread pools of OpenMP (stax) and Numba keep spinning for a while after a
    parallel region and would steal cores from each other on a small machine."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return times


def _elements(name: str, inputs: tuple[Any, ...]) -> int:
    """The number of inner elements (iterations of the innermost map)."""
    first = inputs[0]
    if first.ndim == 2:  # regular rows
        return int(first.size)
    if name.startswith(("sum of iota", "nested map")):
        return int(first.sum())
    return int(len(first))


def table(rows: list[Row], unit: str = "ms") -> str:
    """Medians and their ratios; then the ratios of the best calls (on a loaded machine the
    median includes time the kernels' threads waited for a core; the best call shows less
    of it)."""
    scale = {"ms": 1e3, "us": 1e6}[unit]
    lines = [f"| workload | inner elements | stax {unit} | numpy {unit} | numba {unit} | "
             "numpy/stax | numba/stax | best: numpy/stax | best: numba/stax |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, n, (ts, tn, tb), (bs, bn, bb) in rows:
        lines.append(f"| {name} | {n:,} | {ts * scale:.2f} | {tn * scale:.2f} | "
                     f"{tb * scale:.2f} | {tn / ts:.2f}x | {tb / ts:.2f}x | {bn / bs:.2f}x | "
                     f"{bb / bs:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--markdown", type=str, default=None)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--regular", action="store_true",
                        help="the workloads over regular rows (k x 100 arrays) instead")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    workloads = REGULAR if args.regular else WORKLOADS
    if not args.regular:
        check_empty_rows(workloads)
    rows = run(args.elements, args.repeat, workloads)
    small = run(args.small, 200, workloads)
    header = (f"stax.nested vs hand-flattened NumPy vs Numba parallel, ~{args.elements:,} "
              f"elements, median of {args.repeat}, {args.clock} clock; {os.cpu_count()} cores, "
              f"numba threads {numba.config.NUMBA_NUM_THREADS}, OMP_NUM_THREADS="
              f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; load average before the run "
              f"{os.getloadavg()[0]:.1f}")
    text = (header + "\n\n" + table(rows) + f"\n\nSmall inputs (~{args.small:,} elements, "
            f"median of 200 calls: per-call overhead)\n\n" + table(small, "us"))
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
