"""Python loops inside jitted functions (issue 10): PolyBench-style kernels in plain NumPy,
compiled once per loop body, against NumPy running the same function."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array, numpy_call
from hypothesis import given, settings
from hypothesis import strategies as st

import stax
from stax.loops import LoopError, records


def check(fn, *args, compiled: int, unrolled: int = 0, rtol: float | None = None):
    """Run `fn` under stax.jit and NumPy; compare results and mutated arguments; check how
    many loops were compiled once and how many unrolled."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    jitted = stax.jit(fn, strict=True)
    got = jitted(*got_args)
    assert_matches(got, want, rtol=rtol)
    for g, w in zip(got_args, want_args, strict=True):
        if isinstance(w, np.ndarray):
            assert_matches(g, w, rtol=rtol)
    recs = records(jitted)
    assert sum(r.compiled for r in recs) == compiled, [str(r) for r in recs]
    assert sum(not r.compiled for r in recs) == unrolled, [str(r) for r in recs]
    return jitted


# ---- time loops with fixed-shape bodies: all iterations in one C call ----------------------

def jacobi_1d(a, steps):
    b = a.copy()
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_jacobi_1d_mutates_its_argument(dtype):
    jitted = check(jacobi_1d, make_array((40,), dtype), 25, compiled=1)
    (rec,) = records(jitted)
    assert "one C call" in rec.decision
    assert "double-buffered" in rec.decision


def jacobi_2d(u, steps):
    for _ in range(steps):
        new = u.copy()
        new[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                 + u[1:-1, 2:])
        u = new
    return u


def test_jacobi_2d_rebinds_a_name():
    check(jacobi_2d, make_array((12, 9), "float64"), 7, compiled=1)


def test_jacobi_2d_transposed_input():
    check(jacobi_2d, make_array((9, 12), "float64").T, 5, compiled=1)


def heat_3d(a, b, steps):
    for _ in range(steps):
        b[1:-1, 1:-1, 1:-1] = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                        + a[:-2, 1:-1, 1:-1])
                               + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                          + a[1:-1, :-2, 1:-1])
                               + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                          + a[1:-1, 1:-1, :-2])
                               + a[1:-1, 1:-1, 1:-1])
        a[1:-1, 1:-1, 1:-1] = 0.5 * (b[1:-1, 1:-1, 1:-1] + a[1:-1, 1:-1, 1:-1])
    return a


def test_heat_3d_two_arrays_assigned_into():
    check(heat_3d, make_array((6, 5, 4), "float64"), make_array((6, 5, 4), "float64", 1), 3,
          compiled=1)


def swap_after_assign(a, b, steps):
    for _ in range(steps):
        b[1:] = a[:-1] * 0.5 + a[1:]
        a, b = b, a
    return a, b


@pytest.mark.parametrize("steps", [3, 4])  # the swap leaves the result in either array
def test_swap_of_arrays_assigned_into_is_unrolled(steps):
    jitted = check(swap_after_assign, make_array((7,), "float64"),
                   make_array((7,), "float64", 1), steps, compiled=0, unrolled=1)
    assert "swapped" in records(jitted)[0].reason


def swap_values(a, b, steps):
    for _ in range(steps):
        a, b = b, a * 0.5 + b
    return a, b


def test_swap_of_values():
    check(swap_values, make_array((7,), "float64"), make_array((7,), "float64", 1), 5,
          compiled=1)


def euler(y, dt, steps):
    for _ in range(steps):
        y = y + dt * (-0.5 * y + np.sin(y))
    return y


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_explicit_euler_weak_scalar_keeps_dtype(dtype):
    check(euler, make_array((17,), dtype), 0.01, 50, compiled=1)


def rk4(y, dt, steps):
    def f(v):
        return np.cos(v) - 0.1 * v

    for _ in range(steps):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def test_rk4_with_body_local_temporaries():
    check(rk4, make_array((3, 5), "float64"), 0.05, 20, compiled=1)


def index_as_scalar(x, n):
    for t in range(1, n, 3):
        x = x - x // 3 + t  # the index is a weak Python int: x's dtype is kept
    return x


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_index_used_as_a_scalar(dtype):
    check(index_as_scalar, make_array((4,), dtype), 20, compiled=1)


def halving(x, n):
    for _ in range(n):
        x = x * 0.5
    return x


def test_carried_value_changing_dtype_is_unrolled():
    jitted = check(halving, np.arange(4), 3, compiled=0, unrolled=1)
    assert "int64[4] to float64[4]" in records(jitted)[0].reason


def ema(x, alpha):
    s = x[0] * 0.0
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        s = alpha * x[t] + (1 - alpha) * s
        out[t] = s
    return out, s


def test_exponential_moving_average_indexes_with_the_loop_index():
    check(ema, make_array((30,), "float64"), 0.3, compiled=1)


def floyd_warshall(d):
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k][:, None] + d[k][None, :])
    return d


def test_floyd_warshall():
    d = np.abs(make_array((8, 8), "float64")) + 1.0
    d[np.eye(8, dtype=bool)] = 0
    d[2, 5] = np.inf  # no direct edge
    check(floyd_warshall, d, compiled=1)


def python_scalar_accumulator(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
    return s


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_python_scalar_accumulator(dtype):
    check(python_scalar_accumulator, make_array((11,), dtype), compiled=1)


def nested(a, steps):
    for _ in range(steps):
        for _ in range(3):
            a = a * 0.9 + 0.1 * np.roll(a, 1)
        a = a - a.mean()
    return a


def test_nested_loops():
    check(nested, make_array((10,), "float64"), 4, compiled=2)


# ---- edge cases ---------------------------------------------------------------------------

def counted(x, n):
    for _ in range(n):
        x = x + 1
    return x


@pytest.mark.parametrize("n", [0, 1])
def test_zero_and_one_trip_loops(n):
    check(counted, make_array((3,), "int64"), n, compiled=0)


def test_empty_and_zero_d_arrays():
    check(counted, np.zeros((0, 3)), 5, compiled=1)
    check(counted, np.float32(2.5), 5, compiled=1)


def test_nan_and_inf_pass_through():
    check(euler, np.array([np.nan, np.inf, -np.inf, 1.0]), 0.1, 5, compiled=1)


def test_trip_count_does_not_change_the_body():
    jitted = stax.jit(counted, strict=True)
    for n in (2, 50, 1000):
        assert_matches(jitted(np.arange(3), n), np.arange(3) + n)


# ---- bodies that differ per iteration: unrolled, or a clear error ---------------------------

def python_if_on_index(x, n):
    for i in range(n):
        if i % 2 == 0:
            x = x + i
        else:
            x = x * 2
    return x


def test_python_if_on_the_index_is_unrolled():
    jitted = check(python_if_on_index, make_array((5,), "int64"), 6, compiled=0, unrolled=1)
    (rec,) = records(jitted)
    assert "traced array" in rec.reason


def test_long_loop_whose_body_differs_names_the_line():
    with pytest.raises(LoopError, match=r"test_loops.py:\d+ \(1000 iterations\).*rebinds 'k'"):
        stax.jit(python_counter, strict=True)(np.arange(3), 1000)


def test_python_if_on_the_index_of_a_long_loop_is_a_graph_break():
    with pytest.raises(TypeError, match="not known while tracing"):
        stax.jit(python_if_on_index, strict=True)(np.arange(3), 1000)


def with_break(x, n):
    for i in range(n):
        x = x + i
        if i == 3:
            break
    return x


def test_break_is_unrolled():
    check(with_break, make_array((3,), "int64"), 8, compiled=0, unrolled=1)


def python_counter(x, n):
    k = 0
    for _ in range(n):
        x = x + k
        k += 1
    return x


def test_python_counter_is_unrolled():
    jitted = check(python_counter, make_array((3,), "int64"), 5, compiled=0, unrolled=1)
    assert "rebinds 'k'" in records(jitted)[0].reason


def list_append(x, n):
    xs = []
    for _ in range(n):
        x = x + 1
        xs.append(x)
    return xs[-1] + xs[0]


def test_growing_list_is_unrolled():
    check(list_append, make_array((3,), "float64"), 4, compiled=0, unrolled=1)


def triangular_solve(lower_t, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - lower_t[i, :i] @ x[:i]) / lower_t[i, i]
    return x


def test_triangular_solve_index_dependent_shapes_are_masked():
    lower_t = np.tril(make_array((6, 6), "float64")) + 8 * np.eye(6)
    check(triangular_solve, lower_t, make_array((6,), "float64", 1), compiled=1)


def cholesky(a):
    n = a.shape[0]
    low = np.zeros_like(a)
    for j in range(n):
        low[j, j] = np.sqrt(a[j, j] - np.sum(low[j, :j] ** 2))
        low[j + 1:, j] = (a[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return low


def test_cholesky_column_form_is_masked():
    m = make_array((5, 5), "float64")
    check(cholesky, m @ m.T + 5 * np.eye(5), compiled=1)


def lu(a):
    n = a.shape[0]
    for k in range(n):
        a[k + 1:, k] = a[k + 1:, k] / a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


def test_lu_mutates_its_argument_unrolled():
    check(lu, make_array((5, 5), "float64") + 10 * np.eye(5), compiled=0, unrolled=1)


def rows(a):
    total = np.zeros(a.shape[1])
    for row in a:
        total = total + row * row
    return total


def test_loop_over_rows():
    check(rows, make_array((4, 3), "float32"), compiled=1)


def last_row(a):
    for row in a:
        row[0] = 7  # a view: writes into `a`
    return a, row


def test_loop_over_rows_writing_through_the_row_is_unrolled():
    check(last_row, make_array((4, 3), "float64"), compiled=0, unrolled=1)


def test_numpy_reference_of_helpers():
    # the helpers themselves are plain NumPy: sanity of the references used above
    x = make_array((6,), "float64")
    assert_matches(numpy_call(python_scalar_accumulator, x), np.sum(x * x), rtol=1e-12)


# ---- random trip counts (start, stop, step), one body ---------------------------------------

def stepped(x, start, stop, step):
    for t in range(start, stop, step):
        x = x * 0.5 + t
    return x


_STEPPED = stax.jit(stepped, strict=True)


@settings(max_examples=12, deadline=None)
@given(start=st.integers(-20, 20), stop=st.integers(-20, 20),
       step=st.integers(-4, 4).filter(bool))
def test_random_ranges(start, stop, step):
    x = make_array((5,), "float64")
    assert_matches(_STEPPED(x, start, stop, step), stepped(x, start, stop, step))


def test_default_options_fall_back_through_graph_breaks():
    x = make_array((5,), "int64")
    assert_matches(stax.jit(python_if_on_index)(x, 6), python_if_on_index(x, 6))


def test_body_errors_keep_numpy_classes():
    with pytest.raises(ValueError, match="broadcast"):
        stax.jit(mismatched, strict=True)(np.zeros(3), 4)


def mismatched(x, n):
    for _ in range(n):
        x = x + np.ones(2)  # shapes (3,) and (2,) do not broadcast
    return x


# ---- slices affine in the index: one body, bounds proven for the whole range ----------------

def moving_sum(x, k):
    s = 0.0
    for i in range(x.shape[0] - k + 1):
        s = s + x[i:i + k].sum() * i
    return s


def test_sliding_window_slice():
    jitted = check(moving_sum, make_array((20,), "float64"), 4, compiled=1)
    assert "one C call" in records(jitted)[0].decision


def shifted_2d(a, n):
    acc = np.zeros((3, 4), a.dtype)
    for t in range(n):
        acc = acc + a[1:4, 2 * t + 1:2 * t + 9:2] * (t + 1)
    return acc


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_strided_slice_in_two_dimensions(dtype):
    check(shifted_2d, make_array((5, 20), dtype), 6, compiled=1)


def overrunning(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i:i + 3].sum()  # NumPy clamps the last slices: their length changes
    return s


def test_slice_running_off_the_end_is_masked():
    check(overrunning, make_array((6,), "float64"), 6, compiled=1)


def wrapping(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i - 1:i + 1].sum()  # x[-1:1] is empty in NumPy
    return s


def test_slice_with_negative_start_is_unrolled():
    check(wrapping, make_array((6,), "float64"), 4, compiled=0, unrolled=1)


def row_sweep(a, steps):
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 1:-1] = (a[i - 1, 1:-1] + a[i, :-2] + a[i, 1:-1] + a[i, 2:]
                          + a[i + 1, 1:-1]) / 5.0
    return a


def test_row_sweep_seidel_style():
    check(row_sweep, make_array((7, 6), "float64"), 3, compiled=2)


def gram_schmidt(a):
    q = np.zeros_like(a)
    for k in range(a.shape[1]):
        v = a[:, k]
        v = v - q @ (q.T @ v)  # columns not yet computed are zero
        q[:, k] = v / np.sqrt(np.sum(v * v))
    return q


def test_gram_schmidt():
    check(gram_schmidt, make_array((6, 4), "float64"), compiled=1, rtol=1e-10)


def test_explain_shows_each_loop_body_and_its_driver():
    text = str(stax.explain(counted, np.arange(3.0), 4))
    section = text.split("== Loops compiled once per body (stax.loops) ==")[1].split("\n== ")[0]
    assert "carried x" in section
    assert "stax_loop" in section and "std::swap" in section


# ---- assignments at the loop index: masked, so the body stays in C --------------------------

def fill_rows(a, col):
    for i in range(a.shape[0]):
        a[i] = a[i] * 2 + i  # a row, written where the row index equals i
        a[:, 0] = 0.5 if a.dtype.kind == "f" else 3  # a static column
    for j in range(a.shape[1]):
        a[1:, j] = col[1:] * j  # a column below the first row, value broadcast
    return a


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_assignment_at_the_index(dtype):
    jitted = check(fill_rows, make_array((4, 5), dtype), make_array((4,), "float64", 1),
                   compiled=2, unrolled=0)
    assert all("one C call" in r.decision for r in records(jitted))


def pairs(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = a[i, j] + i * 10 + j
    return a


def test_assignment_at_two_indices():
    check(pairs, make_array((3, 4), "int64"), compiled=2)


def wrapped_write(x):
    for i in range(x.shape[0]):
        x[i - 1] = x[i] + 1.0  # x[-1] at i = 0: NumPy wraps around
    return x


def test_assignment_with_wrapping_index_keeps_numpy_semantics():
    check(wrapped_write, make_array((5,), "float64"), compiled=1)


def write_through_index_view(x, n):
    for i in range(n):
        v = x[i:i + 2]
        v += 1.0  # writes into x in NumPy
        w = x[i]
        w[...] = w * 2
    return x


def test_assigning_into_a_view_at_the_index_is_unrolled():
    check(write_through_index_view, make_array((6, 3), "float64"), 4, compiled=0, unrolled=1)


CALLS = 0


def counts_calls(x, n):
    global CALLS
    CALLS += 1
    for _ in range(n):
        x = x + 1
    return x


def test_function_assigning_a_global_keeps_its_globals():
    global CALLS
    CALLS = 0
    jitted = check(counts_calls, np.arange(3), 4, compiled=0)
    assert CALLS == 2  # NumPy's run and the trace
    assert jitted is not None


def test_partial_and_callable_objects_trace_as_before():
    import functools

    class Scale:
        def __call__(self, x):
            return x * 3

    assert_matches(stax.jit(functools.partial(counted, n=3), strict=False)(np.arange(3)),
                   np.arange(3) + 3)
    assert_matches(stax.jit(Scale())(np.arange(3.0)), np.arange(3.0) * 3)


def test_repeated_and_concurrent_calls_reuse_scratch_safely():
    import threading

    jitted = stax.jit(heat_3d, strict=True)
    inputs = [(make_array((6, 5, 4), "float64", s), make_array((6, 5, 4), "float64", s + 9))
              for s in range(4)]
    wants = [heat_3d(a.copy(), b.copy(), 5) for a, b in inputs]
    for (a, b), want in zip(inputs, wants, strict=True):
        assert_matches(jitted(a.copy(), b.copy(), 5), want)
    got: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        for _ in range(5):
            got[k] = jitted(inputs[k][0].copy(), inputs[k][1].copy(), 5)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert_matches(got[k], wants[k])


def _running_max(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    for i in range(1, t.shape[0]):
        t[i] = max(t[i], t[i - 1] + s[i])
    return t


def _extrema(a: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
    return max(a[0], b[1], a[2]), min(a[1], 3 * b[0]), max(a[0], a[1])


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_builtin_max_min_of_traced_scalars_compile(dtype: str) -> None:
    """Builtin max/min of traced scalars (nussinov's `max(t[i], t[i-1])`) compile with the
    builtin's rule (first winner by `>`/`<`, so NaN placement matches), without a break."""
    t, s = make_array((40,), dtype, seed=1), make_array((40,), dtype, seed=2)
    a = np.array([1, 7, 3], dtype) if dtype == "int32" else np.array([1.0, np.nan, 3.0])
    b = np.array([4, 2, 5], dtype) if dtype == "int32" else np.array([np.nan, 2.0, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches(stax.jit(_running_max)(t.copy(), s), _running_max(t.copy(), s))
        assert_matches(stax.jit(_extrema)(a, b), _extrema(a, b))


def test_builtin_min_with_a_python_number_is_the_builtins() -> None:
    """`min(x, 1)` may return the Python int itself: left to the builtin (a graph break)."""
    def f(a: np.ndarray) -> Any:
        return min(a[2], 1), min(a[0], 5)
    a = np.array([1, 7, 3], np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = stax.jit(f)(a)
    want = f(a)
    assert [type(g) for g in got] == [type(w) for w in want] and got == want
