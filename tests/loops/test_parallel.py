"""Rolled loops whose iterations isl proves independent run them on OpenMP threads (issue 10,
item 2): every result against the same function run by NumPy; the decision and its reason read
from the loop records."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.loops import records


@pytest.fixture(autouse=True)
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # a team even where the tests run on one core


def run(fn, *args, rtol: float | None = None) -> str:
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jitted = stax.jit(fn, strict=True)
    assert_matches(jitted(*got_args), want, rtol=rtol)
    for g, w in zip(got_args, want_args, strict=True):
        if isinstance(w, np.ndarray):
            assert_matches(g, w, rtol=rtol)
    return " | ".join(r.decision for r in records(jitted))


def row_norms(out, A):
    for i in range(A.shape[0]):
        out[i] = np.sqrt(np.sum(A[i] * A[i])) + np.max(np.sin(A[i]))
    return out


def row_maps(out, A, w):
    for i in range(A.shape[0]):
        out[i, :] = np.exp(-A[i] * w) + A[i, ::-1]
    return out


@pytest.mark.filterwarnings("ignore:invalid value encountered in sin")  # NumPy's, for inf
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_independent_rows_run_in_parallel(dtype):
    a = make_array((300, 128), dtype)
    a[7, 3], a[100, 0] = np.nan, np.inf
    decision = run(row_norms, np.zeros(300, dtype), a, rtol=1e-5 if dtype == "float32" else None)
    assert "iterations in parallel on up to 2 OpenMP threads" in decision
    assert "no loop-carried dependence" in decision


def test_row_stores_in_parallel_with_transposed_input():
    a = make_array((128, 300), "float64").T  # Fortran order: rows are strided
    decision = run(row_maps, np.zeros((300, 128)), a, make_array((128,), "float64", 1))
    assert "iterations in parallel" in decision


def prefix(x, a):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * 0.5 + np.sum(a[i] * a[i])
    return x


def test_a_carried_dependence_keeps_the_order():
    decision = run(prefix, make_array((300,), "float64"), make_array((300, 128), "float64"))
    assert "iterations in order" in decision and "loop-carried dependences" in decision


def accumulate(out, A):
    s = A[0, 0] * 0.0
    for i in range(A.shape[0]):
        s = s + np.sum(A[i])
        out[i] = s
    return out


def test_a_rebound_accumulator_keeps_the_order():
    decision = run(accumulate, np.zeros(300), make_array((300, 128), "float64"))
    assert "iterations in order" in decision


def test_too_little_work_runs_in_order():
    decision = run(row_norms, np.zeros(4), make_array((4, 3), "float64"))
    assert "iterations in order" in decision and "less than a thread team costs" in decision


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_trip_counts(n):
    run(row_norms, np.zeros(n), make_array((n, 5), "float64"))


def same_element(out, A):
    for i in range(A.shape[0]):
        out[0] = np.sum(A[i] * A[i])  # every iteration writes one element: the last one wins
    return out


def mirrored(out, A):
    for i in range(A.shape[0]):
        out[i] = out[A.shape[0] - 1 - i] + np.sum(A[i])  # reads what another iteration writes
    return out


@pytest.mark.parametrize("fn", [same_element, mirrored])
def test_iterations_touching_the_same_elements_keep_the_order(fn):
    decision = run(fn, make_array((300,), "float64"), make_array((300, 128), "float64", 1))
    assert "iterations in order" in decision and "loop-carried dependences" in decision


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha
    return B


@pytest.mark.parametrize("n", [190, 201])  # 201: blocks of 101 and 100 iterations
def test_a_parallel_loop_inside_an_ordered_one(n):
    """The inner j loop runs its iterations on a team (one block per thread, each in its own
    team of one) once per outer iteration."""
    rng = np.random.default_rng(n)
    decision = run(trmm, 1.5, rng.random((n, n)), rng.random((n, n)), rtol=1e-12)
    assert "iterations in parallel on up to 2 OpenMP threads" in decision
    assert "nested loop(s) run by their own C drivers" in decision
