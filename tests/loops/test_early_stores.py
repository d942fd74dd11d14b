"""Early stores (issue 10): an outer loop's stores into a carried array whose stored version
only a nested loop reads are written into the array's buffer just before the nested loop's
C driver runs (no full-array setitem per outer iteration); where anything else reads the old
or the stored version, they stay after the body's kernels. Results against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

from .test_masked import gramschmidt, run

EARLY = "just before the nested loop that reads them"


def outer(recs):
    (rec,) = [r for r in recs if "nested loop(s) run by their own C drivers" in r.decision]
    return rec.decision


def column_sweep(a, q):
    for k in range(a.shape[1]):
        q[:, k] = a[:, k] * 2.0
        for j in range(k + 1, a.shape[1]):
            a[:, j] -= q[:, k] * 0.125
    return a, q


def old_version_read(a, q):
    for k in range(a.shape[1]):
        s = q.sum()  # the old q: read before the store
        q[:, k] = a[:, k] * 2.0
        for j in range(k + 1, a.shape[1]):
            a[:, j] -= q[:, k] * 0.125 + s
    return a, q


def stored_version_read_after(a, q):
    t = 0.0
    for k in range(a.shape[1]):
        q[:, k] = a[:, k] * 2.0
        for j in range(k + 1, a.shape[1]):
            a[:, j] -= q[:, k] * 0.125
        # the stored q, read by a kernel after the nested loop ([VADV] a whole-array read:
        # q[:, k] would be the stored value itself, not a read of the array)
        t = t + q.sum()
    return a, q, t


def nested_changes_it(a, q):
    for k in range(a.shape[1]):
        q[:, k] = a[:, k] * 2.0
        for j in range(k + 1, a.shape[1]):
            q[:, j] += q[:, k] * 0.125
    return a, q


@pytest.mark.parametrize("n", [1, 5])
def test_gramschmidt_q_stored_before_the_nested_loop(n):
    recs = run(gramschmidt, make_array((n, n), "float64") + np.eye(n), rtol=1e-9)
    if n > 1:
        assert (
            f"Q: in place: the body computes only the stored values, written into the "
            f"array's buffer at Q[0:{n}, i] {EARLY}" in outer(recs)
        )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_early_stores_and_where_they_are_refused(dtype):
    rtol = 1e-4 if dtype == "float32" else 1e-10
    a, q = make_array((6, 5), dtype), make_array((6, 5), dtype, 1)
    assert (
        f"q: in place: the body computes only the stored values, written into the "
        f"array's buffer at q[0:6, i] {EARLY}" in outer(run(column_sweep, a, q, rtol=rtol))
    )
    for fn in (old_version_read, stored_version_read_after, nested_changes_it):
        decision = outer(run(fn, a, q, rtol=rtol))
        assert EARLY not in decision, (fn.__name__, decision)


def test_early_stores_strided_and_empty():
    a = make_array((5, 8), "float64")[:, ::2]  # strided: the loop's own copy is contiguous
    q = np.asfortranarray(make_array((5, 4), "float64", 1))
    run(column_sweep, a, q, rtol=1e-10)
    empty = np.zeros((4, 0))
    run(column_sweep, empty, empty.copy())  # zero trips: nothing stored
