"""A loop's first carried value runs in the extern's buffer (`LoopBody.run(into=...)`): one
copy of its initial value, not a copy in and a copy out; the caller's arrays stay unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.loops import records


def accumulate(x, steps):
    y = x  # the carried value starts as the invariant it adds
    for _ in range(steps):
        y = y + x * 0.5
    return y, x


def two_carried_nested(a, b):
    for i in range(a.shape[0]):
        for j in range(i):  # nested: the outer body runs from Python, the inner in C
            a[i, j] -= a[j, j] * b[j]
            b[i] += a[i, j]
    return a, b


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_carried_value_that_is_also_an_invariant(dtype):
    x = make_array((7, 5), dtype)
    before = x.copy()
    jitted = stax.jit(accumulate)
    got = jitted(x, 4)
    assert_matches(got, accumulate(before.copy(), 4), rtol=1e-6)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("n", [0, 1, 2, 6])
def test_nested_loops_with_two_carried_arrays(n):
    a = make_array((n, n), "float64")
    b = make_array((n,), "float64", 1)
    want = two_carried_nested(a.copy(), b.copy())
    jitted = stax.jit(two_carried_nested)
    a2, b2 = a.copy(), b.copy()
    got = jitted(a2, b2)
    assert_matches(got, want, rtol=1e-12)
    assert_matches((a2, b2), want, rtol=1e-12)  # written back into the arguments
    if n > 2:
        assert any(r.compiled and "one C call" in r.decision for r in records(jitted))
