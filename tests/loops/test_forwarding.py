"""Store-to-load forwarding and early stores into a nested loop's carried value (issue 10):
gramschmidt's `R[k, k] = sqrt(nrm)` is written into R's buffer just before the inner loop,
which runs in it (no full-array `where` of R per outer iteration), and the read `R[k, k]`
right after the store takes the stored value. Where anything else reads R's old or stored
version, the copy stays. Results against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

from .test_masked import gramschmidt, run

EARLY = "early stores into a nested loop's value"


def outer(recs):
    (rec,) = [r for r in recs if "nested loop(s) run by their own C drivers" in r.decision]
    return rec.decision


def well_conditioned(shape, dtype, seed=0):
    a = make_array(shape, dtype, seed)
    a[np.arange(min(shape)), np.arange(min(shape))] += 10 * max(shape)
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_gramschmidt_r_stored_before_the_inner_loop(n, dtype):
    rtol = 1e-4 if dtype == "float32" else 1e-10
    recs = run(gramschmidt, well_conditioned((n, n), dtype), rtol=rtol)
    if n > 1:
        assert "R: the body's stores R[i, i] written into the array's buffer just before " \
               "the nested loop that carries that version" in outer(recs)
        assert EARLY in outer(recs)


def test_gramschmidt_layouts_and_zero_trips():
    a = well_conditioned((9, 12), "float64")
    run(gramschmidt, a[:, ::2], rtol=1e-10)  # strided: the loop's own copy is contiguous
    run(gramschmidt, np.asfortranarray(a[:, :6]), rtol=1e-10)
    run(gramschmidt, well_conditioned((7, 1), "float64"), rtol=1e-10)  # inner loop: 0 trips
    run(gramschmidt, np.zeros((3, 0)), rtol=1e-10)  # outer loop: 0 trips


def old_version_read_after(a):
    r = np.zeros((a.shape[1], a.shape[1]), dtype=a.dtype)
    t = 0.0
    for k in range(a.shape[1]):
        old = r[k, :] * 1.0  # R's old row (fused into its reader after the inner loop)
        r[k, k] = np.sqrt(np.dot(a[:, k], a[:, k])) + 1.0
        for j in range(k + 1, a.shape[1]):
            r[k, j] = np.dot(a[:, k], a[:, j]) / r[k, k]
        t = t + np.dot(old + 1.0, r[k, :])
    return r, t


def stored_version_read(a):
    r = np.ones((a.shape[1], a.shape[1]), dtype=a.dtype)
    t = 0.0
    for k in range(a.shape[1]):
        r[k, k] = np.dot(a[:, k], a[:, k])
        t = t + r[k, :].sum()  # the stored version, read beyond the stored element
        for j in range(k + 1, a.shape[1]):
            r[k, j] = r[k, j - 1] * 0.5 + a[0, j]
    return r, t


def in_place_wrong(a):
    """The inner loop's result and the old R both reach the end: running the inner loop in
    R's buffer would change the old version a later read sees."""
    r = np.ones((a.shape[1], a.shape[1]), dtype=a.dtype)
    keep = np.zeros(a.shape[1], dtype=a.dtype)
    for k in range(a.shape[1]):
        prev = r[:, k] + 0.0
        r[k, k] = a[k, k] * 2.0
        for j in range(k + 1, a.shape[1]):
            r[k, j] = r[k, j - 1] + a[k, j]
        keep = keep + prev * r[k, :]
    return r, keep


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_copy_kept_where_in_place_would_be_wrong(dtype):
    rtol = 1e-4 if dtype == "float32" else 1e-10
    a = well_conditioned((6, 5), dtype)
    for fn in (old_version_read_after, stored_version_read, in_place_wrong):
        decision = outer(run(fn, a, rtol=rtol))
        assert EARLY not in decision, (fn.__name__, decision)
        assert "R: double-buffered" in decision or "r: double-buffered" in decision, decision


def forwarded(x, y):
    for i in range(x.shape[0]):
        x[i] = y[i] * 3.0 + 1.0
        y[i] = x[i] * 2.0  # read at the stored element: the stored value
    return x, y


def not_forwarded(x, y):
    for i in range(1, x.shape[0]):
        x[i] = y[i] * 3.0
        y[i] = x[i - 1] + x[i]  # x[i - 1]: another element, read from the stored version
    return x, y


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_forwarding_at_the_stored_element(dtype):
    """A store into an int32 array of a float value is cast: the read gets the cast value
    (no forwarding of the float); other elements read the array."""
    x, y = make_array((9,), dtype), make_array((9,), "float64", 1)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for fn in (forwarded, not_forwarded):
        run(fn, x, y, rtol=rtol)
        run(fn, x[:0], y[:0], rtol=rtol)
