"""`enumerate`, `zip` and `reversed` of ranges and arrays as the iterable of a `for` in a jitted
function (issue 10): one loop compiled once, against NumPy running the same function."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.loops import records


def iterables(x, y, n):
    s = np.zeros(x.shape[1], x.dtype)
    for k, v in enumerate(x):
        s = s + v * k
    for i, j in zip(range(1, n), range(2, n + 1), strict=True):
        y[i] = y[j] + 1
    for t in reversed(range(n)):
        y[t] = y[t] * 2 + t
    for k, r in enumerate(range(2, n, 2), start=3):
        y[r] = y[r] + k
    for a, row in zip(range(3, 300), x, strict=False):  # as long as the shortest
        y[a % 4] = y[a % 4] + row.sum()
    for names in enumerate(["a", "b"]):  # not a range or an array: Python's own
        s = s + len(names[1])
    return s, y


@pytest.mark.parametrize(("n", "dtype"), [(7, "float64"), (0, "float64"), (5, "float32")])
def test_enumerate_zip_reversed(n, dtype):
    x = make_array((5, 3), dtype)
    y = make_array((max(n + 1, 4),), dtype, 1)
    want = iterables(x, y.copy(), n)
    jitted = stax.jit(iterables, strict=True)
    got = jitted(x, y, n)
    assert_matches(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)
    recs = records(jitted)
    assert all(r.compiled for r in recs), [str(r) for r in recs]
    assert len(recs) == (5 if n >= 5 else 2)  # loops of fewer than 2 iterations run in Python


def long_zip(y):
    for i, j in zip(range(500), range(500, 0, -1), strict=True):
        y[i] = y[i] + j
    return y


def test_zip_of_a_long_range_is_compiled_not_unrolled():
    y = make_array((500,), "float64")
    jitted = stax.jit(long_zip, strict=True)
    assert_matches(jitted(y.copy()), long_zip(y.copy()))
    assert [r.compiled for r in records(jitted)] == [True]
