"""Fixed-position assignments written into a nested loop's buffer (issue 10, [ADI2]).

npbench's adi assigns `v[0, 1:N-1] = 1.0`, `p[1:N-1, 0] = 0.0` in its time loop just before an
inner loop that carries the array. Where nothing else reads the assigned version, the driver
writes the values into the inner loop's buffer just before calling it
(`stax.loops.stores._into_nested`), and the inner loop runs in the time loop's own array when
nothing after it reads the old version (`runner._in_place_results`): no full-array pass, no
copy per time step. Every result against the same function run by NumPy, including the
arrays written back to the caller; the decision read from the loop records."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import stax
from loops.test_columns import adi
from loops.test_in_place import run
from stax.loops import records

STORED = "stored into it (a fixed-position assignment"


def nested(decisions: list[str]) -> str:
    """The time loop's decision (the one that runs nested loops)."""
    (d,) = [d for d in decisions if "nested loop(s)" in d]
    return d


@pytest.mark.parametrize(("steps", "n", "dtype"), [
    (1, 6, "float64"), (1, 2, "float64"), (2, 3, "float32"), (3, 7, "float64"),
    (2, 10, "float32")])
def test_adi_in_place_against_numpy(steps, n, dtype):
    u = make_array((n, n), dtype, low=0.0, high=1.0)
    decisions = run(adi, steps, n, u, rtol=1e-3 if dtype == "float32" else None)
    if steps > 1 and n > 3:  # the decision: every inner loop in the time loop's arrays
        d = nested(decisions)
        assert d.count(STORED) == 8, d  # v, u: two stores each; p, q: one before each loop
        assert d.count("updated in place") == 6 and "copied in" not in d, d
        assert d.count("in place: the nested loops that make its next version") == 4, d


@pytest.mark.parametrize("view", ["transposed", "strided"])
def test_adi_writes_back_into_a_view(view):
    big = make_array((16, 16), "float64", low=0.0, high=1.0)
    want_big = big.copy()
    u = big[:8, :8].T if view == "transposed" else big[::2, 1::2]
    want_u = want_big[:8, :8].T if view == "transposed" else want_big[::2, 1::2]
    want = adi(3, 8, want_u)
    got = stax.jit(adi)(3, 8, u)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(big, want_big, rtol=1e-12)  # the caller's array, written back


def edges(N, p, w):
    """Assignments with steps and from the array itself, then a loop carrying it."""
    for _ in range(3):
        p[N - 2:0:-2, 0] = p[N - 2:0:-2, N - 1] * 0.5  # a negative step, read from p itself
        p[0, :] = 1.0
        for j in range(1, N):
            p[:, j] = 0.5 * p[:, j - 1] + w[:, j]
    return p


@pytest.mark.parametrize(("n", "dtype"), [(1, "float64"), (2, "float64"), (6, "float32"),
                                          (9, "float64")])
def test_strided_and_self_reading_assignments(n, dtype):
    decisions = run(edges, n, make_array((n, n), dtype), make_array((n, n), dtype, 1),
                    rtol=1e-5 if dtype == "float32" else None)
    if n > 2:
        assert nested(decisions).count(STORED) == 2, decisions


def seen_elsewhere(N, p, w):
    """The assigned version is read by something other than the loop (a sum): the
    assignment stays a full-array version; the old version is read after the loop."""
    total = w[0, 0] * 0.0
    for _ in range(2):
        old = p + 0.0
        p[0, :] = 2.0
        total = total + p.sum()
        for j in range(1, N):
            p[j, :] = p[j - 1, :] * 0.5 + w[j, :]
        total = total + old[N - 1, 0]
    return p, total


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_an_assigned_version_read_elsewhere_stays(dtype):
    decisions = run(seen_elsewhere, 5, make_array((5, 4), dtype), make_array((5, 4), dtype, 1),
                    rtol=1e-5 if dtype == "float32" else None)
    assert STORED not in " ".join(decisions), decisions


def integers(steps, N, a):
    for t in range(steps):
        a[:, 0] = t + 1
        for j in range(1, N):
            a[:, j] = a[:, j - 1] * 2 + j
    return a


@pytest.mark.parametrize("steps", [0, 3])  # 0: a zero-trip time loop
def test_integer_arrays_and_the_decision_record(steps):
    a = make_array((4, 6), "int64")
    got_a = a.copy()
    jitted = stax.jit(integers)
    got = jitted(steps, 6, got_a)
    want_a = a.copy()
    want = integers(steps, 6, want_a)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_a, want_a)  # written back to the caller
    if steps:  # a zero-trip loop is not traced as one
        (outer,) = [r for r in records(jitted) if "nested loop(s)" in r.decision]
        assert "a[0:4, 0:1] stored into it" in outer.decision, outer.decision
