"""The segmented kernels run clean under AddressSanitizer + UBSan (no out-of-bounds access, no
undefined behaviour), with inputs split into many chunks, empty segments and empty inputs."""

from __future__ import annotations

from conftest import run_sanitized

PROGRAMS = r"""
import numpy as np
import stax.nested as sn
from stax.nested import kernels

for chunks in (None, 5):
    kernels.CHUNKS = chunks
    ns = np.array([3, 0, 5, 1, 0, 0, 4])
    r = sn.Ragged.from_list([[1.0, -2.0], [], [3.0, np.nan, 4.0], [], [5.0]])
    progs = [
        (lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n) * 2), ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.scan(np.maximum, -1, sn.iota(n) % 3), ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.concat(sn.iota(n), sn.replicate(n % 2, n)), ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.iota(n + 2)[n // 2:-1], ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.cond(n > 1, lambda: sn.iota(n)[1], lambda: -n), ns),
         (ns,)),
        (lambda ns: sn.map(lambda n: sn.loop(n, lambda i, a: a * 2 + i, 1), ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.cond(n > 2, lambda: sn.iota(n),
                                             lambda: sn.replicate(1, n)), ns), (ns,)),
        (lambda ns: sn.map(lambda n: sn.scatter(sn.replicate(n, 0), sn.iota(3) - 1,
                                                sn.replicate(3, 7)), ns), (ns,)),
        (lambda r: sn.map(lambda row: sn.reduce(np.minimum, np.inf, row), r), (r,)),
        (lambda r: sn.map(lambda row: row.cumsum() / (sn.length(row) + 1), r), (r,)),
        (lambda r, x: sn.map(lambda row: sn.map(lambda v: x[1] * v, row), r),
         (r, np.arange(3.0))),
        (lambda ns: sn.map(sn.iota, ns), (np.array([], dtype=np.int64),)),
        # regular rows: a per-row value and the in-row index (segment loops), a nest lifted
        # through a uniform parent, a Python operator, a reduction by the main pipeline
        (lambda a, w: sn.map(lambda row, s: row * s + sn.iota(3), a, w),
         (np.arange(12.0).reshape(4, 3), np.arange(4.0))),
        (lambda a, w: sn.map(lambda m, s: sn.map(
            lambda row: row * s + sn.reduce(np.add, 0.0, row), m), a, w),
         (np.arange(24.0).reshape(4, 2, 3), np.arange(4.0))),
        (lambda a: sn.map(lambda row: sn.reduce(lambda x, y: x + y, 0.0, np.exp(row)), a),
         (np.arange(12.0).reshape(3, 4),)),
        # error flags: integer // and % by zero, casts of NaN to an integer
        (lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, 7 // (sn.iota(n) - 1) + n % (n - 1)),
                           ns), (ns,)),
        (lambda r: sn.map(lambda row: sn.scan(np.add, 0, row.astype(np.int32)), r), (r,)),
    ]
    for fn, args in progs:
        with np.errstate(all="ignore"):
            got, want = sn.jit(fn)(*args), sn.interpret(fn, *args)
        as_list = lambda v: v.to_list() if isinstance(v, sn.Ragged) else np.asarray(v).tolist()
        g, w = as_list(got), as_list(want)
        assert np.allclose(np.array(sum(g, []) if g and isinstance(g[0], list) else g,
                                    dtype=float),
                           np.array(sum(w, []) if w and isinstance(w[0], list) else w,
                                    dtype=float), equal_nan=True), fn
    lengths = np.array([0, 4, 0, 0, 7, 1, 0])
    v = np.arange(12, dtype=np.int32)
    sn.segreduce(lambda a, b: (a[0] + b[0], np.where(a[1] > b[1], a[1], b[1])), (0, 0), None,
                 (v, v), lengths=lengths)
    sn.segscan(np.multiply, 1, None, v, lengths=lengths, exclusive=True)
    sn.seggather(sn.Ragged(v, lengths), sn.Ragged(np.zeros(12, np.int64), lengths))
    sn.partition(v % 3 == 0, v)
    # SpMV over rows of 0..300 elements: the streamed inputs' prefetch runs up to their end
    rows = np.array([0, 1, 300, 2, 17, 0, 150])
    cols = np.arange(int(rows.sum())) % 11 - 5
    vals = np.linspace(-1.0, 1.0, cols.size)
    x = np.arange(11.0)
    got = sn.jit(lambda c, a, x: sn.map(lambda cc, aa: sn.reduce(np.add, 0.0, sn.map(
        lambda j, w: w * x[j], cc, aa)), c, a))(sn.Ragged(cols, rows), sn.Ragged(vals, rows), x)
    ends = np.cumsum(rows)
    assert np.allclose(got, [np.sum((vals * x[cols])[e - r:e]) for r, e in zip(rows, ends)])
print("sanitized ok")
"""


def test_nested_kernels_run_clean_under_sanitizers(tmp_path) -> None:
    run_sanitized(PROGRAMS, tmp_path, timeout=900)


MISALIGNED = r"""
import numpy as np
import stax.nested as sn


def misaligned(a):  # the same values one byte past an aligned address (not aligned)
    buf = np.zeros(a.nbytes + 1, np.uint8)
    out = np.ndarray(a.shape, a.dtype, buffer=buf, offset=1)
    out[...] = a
    assert not out.flags.aligned and out.flags.c_contiguous
    return out


x = np.arange(300.0) - 7.5
ns = np.array([3, 0, 5, 1, 0, 4] * 20, np.int64)
double = sn.jit(lambda v: sn.map(lambda e: e * 2 + 1, v))
sums = sn.jit(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n) * 3), ns))
for _ in range(3):  # cold, then warm calls (the C replay)
    assert np.array_equal(np.asarray(double(misaligned(x))), x * 2 + 1)
    assert np.array_equal(np.asarray(sums(misaligned(ns))), [3 * n * (n - 1) // 2 for n in ns])
print("sanitized ok")
"""


def test_misaligned_arguments_run_clean_under_sanitizers(tmp_path) -> None:
    """[REVIEW] Misaligned arguments are copied before kernels load them (a load of a
    misaligned double was undefined behaviour), and the C replay bails on them."""
    run_sanitized(MISALIGNED, tmp_path, timeout=600)
