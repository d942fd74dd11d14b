"""Carried arrays updated in place by element and slice stores (issue 10, `stax.loops.stores`):
the body computes only the stored values and the driver writes them into the array's buffer
(no full-array `where`, no double buffer). Every result against the same function run by NumPy;
the decision (in place, or double-buffered and why) read from the loop records."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from hypothesis import given, settings
from hypothesis import strategies as st

import stax
from loops.test_masked import compare
from stax.backends.cpu.loop_driver import store_code
from stax.loops import records
from stax.loops.stores import Axis, Store, apply


def run(fn, *args, rtol: float | None = None) -> list[str]:
    """`fn` under stax.jit and under NumPy (`compare`); the loop decisions."""
    return [r.decision for r in records(compare(fn, *args, rtol=rtol))]


def in_place(decisions: list[str], name: str) -> bool:
    return any(f"{name}: in place" in d for d in decisions)


def element_then_read(x, a):
    for i in range(1, x.shape[0]):
        x[i] = x[i] + a[i]  # read, then store
        x[i] = x[i] * 2 + x[i - 1]  # reads the value just stored and the previous one
    return x


@pytest.mark.parametrize(("n", "dtype"), [(0, "float64"), (1, "float64"), (2, "float64"),
                                          (7, "float32"), (9, "int32")])
def test_element_stores_read_back_in_the_same_iteration(n, dtype):
    decisions = run(element_then_read, make_array((n,), dtype), make_array((n,), dtype, 1),
                    rtol=1e-5 if dtype == "float32" else None)
    if n > 2:
        assert in_place(decisions, "x")


def rows(L, v):
    for i in range(L.shape[0]):
        L[i, :i] = v[:i] * L[i, i]  # a masked row: only its first i elements
        L[i, i + 1::2] = -1.0  # a masked slice with a step, a broadcast value
    return L


@pytest.mark.parametrize("n", [2, 3, 8])
def test_masked_rows_copy_only_their_valid_part(n):
    assert in_place(run(rows, make_array((n, n), "float64"), make_array((n,), "float64", 1)),
                    "L")


def columns(A, b):
    for j in range(A.shape[1]):
        A[:, j] -= b * A[0, j]  # a full column at the index
        A[-1, j] = j  # a negative static index
        A[::-2, j] += 1.0  # a static slice with a negative step
    return A


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_columns_static_slices_and_negative_indices(dtype):
    a = make_array((5, 4), dtype)
    assert in_place(run(columns, a, make_array((5,), dtype, 1)), "A")


def test_transposed_and_strided_inputs():
    a = make_array((6, 5), "float64").T  # Fortran-ordered
    b = make_array((10,), "float64", 1)[::2]
    assert in_place(run(columns, a, b), "A")


def nan_rows(A):
    for i in range(A.shape[0]):
        A[i, i:] = A[i, i:] * 2.0 + A[i - 1, i:]
    return A


def test_nan_and_inf_outside_and_inside_the_stored_part():
    a = make_array((5, 5), "float64")
    a[0, 3], a[2, 1], a[4, 4] = np.nan, np.inf, -np.inf
    assert in_place(run(nan_rows, a), "A")


def two_stores_one_value(M, data):
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M]
    return cov


def test_one_value_stored_twice():
    assert in_place(run(two_stores_one_value, 4, make_array((6, 4), "float64")), "cov")


def mixed(x, a):
    s = a[0] * 0.0
    for i in range(x.shape[0]):
        s = s + x[i]  # rebound: double-buffered
        x[i] = s
    return x, s


def test_in_place_and_double_buffered_together():
    decisions = run(mixed, make_array((6,), "float64"), make_array((3,), "float64"))
    assert in_place(decisions, "x")
    assert any("s: double-buffered because" in d for d in decisions)


def whole_array_then_element(x):
    for i in range(x.shape[0]):
        x = x * 0.5  # the whole array changes: not a store
        x[i] = 1.0
    return x


def test_a_whole_array_change_stays_double_buffered():
    decisions = run(whole_array_then_element, make_array((5,), "float64"))
    assert not in_place(decisions, "x")


def outside_range(x, v):
    for i in range(x.shape[0]):
        x[i + 1] = v[i]
    return x


def wrapping(x, v):
    for i in range(x.shape[0]):
        x[i - 1] = v[i] + x[i - 1]
    return x


def test_offsets_out_of_range_raise_and_negative_ones_wrap():
    with pytest.raises(IndexError):
        stax.jit(outside_range)(np.zeros(5), np.arange(5.0))
    run(wrapping, make_array((5,), "float64"), make_array((5,), "float64", 1))


def with_extern(x, A):
    for i in range(A.shape[0]):
        x[i] = np.sort(A[i])[1]  # a NumPy routine: the body is stepped from Python
    return x


def test_python_stepped_body_stores_in_place():
    decisions = run(with_extern, np.zeros(4), make_array((4, 3), "float64"))
    assert in_place(decisions, "x")


def nested(A):
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] = A[i, j] - A[j, j]
        A[i, i] = np.sqrt(np.abs(A[i, i]))
    return A


def test_stores_into_a_nested_loops_result():
    decisions = run(nested, make_array((6, 6), "float64"))
    assert any("the stores A[i, i] are written into it" in d for d in decisions)
    assert in_place(decisions, "A")  # the inner loop


def test_explain_says_in_place():
    text = str(stax.explain(stax.jit(element_then_read), make_array((4,), "float64"),
                            make_array((4,), "float64", 1)))
    assert "x: in place" in text and "store" in text


@settings(max_examples=12, deadline=None)
@given(n=st.integers(2, 7), coef=st.sampled_from([1, 2]), const=st.integers(0, 3),
       width=st.integers(1, 3))
def test_random_affine_element_and_slice_stores(n, coef, const, width):
    size = coef * (n - 1) + const + width

    def f(x, v):
        for i in range(n):
            x[coef * i + const] = v[i] * 2.0
            x[coef * i + const + 1:coef * i + const + width] += v[i]
        return x

    run(f, make_array((size,), "float64"), make_array((n,), "float64", 1))


# ---- the store itself, compiler-free -----------------------------------------------------------

def _row_store(n: int) -> Store:
    """x[i, 1:stop] = value (value: output 0, length 4), i = input 0."""
    return Store(0, (4,), (Axis((0, ((0, 1),)), 1, 1, None, True, n),
                           Axis((1, ()), 1, None, (0, ((0, 1),)), False, n)))


def test_apply_writes_the_clamped_part_and_raises_out_of_range():
    target = np.zeros((3, 3))
    apply([_row_store(3)], target, [np.array([1.0, 2.0, 3.0, 4.0])], [np.array(2)])
    np.testing.assert_array_equal(target, [[0, 0, 0], [0, 0, 0], [0, 1, 0]])
    with pytest.raises(IndexError):
        apply([_row_store(3)], target, [np.arange(4.0)], [np.array(3)])
    np.testing.assert_array_equal(target, [[0, 0, 0], [0, 0, 0], [0, 1, 0]])  # nothing written


@pytest.mark.fast
def test_c_code_checks_bounds_before_writing():
    text = "\n".join(store_code([_row_store(3)], "b[1]", "double", ["b[2]"], {0: "b[0]"}, ""))
    assert "stax_raise" in text and "failed = true" in text and "std::min<int64_t>" in text
    assert text.index("stax_raise") < text.index("((double*)b[1])[")
