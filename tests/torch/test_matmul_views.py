"""`stax.jit` matrix products on transposed operands (issue 13, `lower_matmul`): NumPy's
matmul reads the transpose of the operand's buffer (BLAS takes it as it is) instead of a
transposed copy; operands without a unit stride in their matrix axes are still copied.
Results equal NumPy's: float32/float64/int64, batch dimensions, strided, Fortran-ordered,
empty and 1-D operands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array, numpy_call

import stax


def _t_input(a: Any, b: Any) -> Any:
    return a.T @ b


def _t_both(a: Any, b: Any) -> Any:
    return (a * 2).T @ (b + 1).T


def _batched(x: Any, y: Any) -> Any:
    return np.swapaxes(x - 1, -1, -2) @ y


def _batch_axis_moved(x: Any, w: Any) -> Any:
    return (x * 3).transpose(1, 0, 2) @ w


def _two_transposes(x: Any, y: Any) -> Any:
    return np.transpose(np.transpose(x + 0.5, (1, 2, 0)), (0, 2, 1)) @ y


def _no_unit_stride(x: Any, y: Any) -> Any:
    return (x + 1).transpose(2, 0, 1) @ y


# fn, operand shapes, whether the product reads a transposed buffer (no copy)
CASES: dict[str, tuple[Callable[..., Any], tuple[tuple[int, ...], ...], bool]] = {
    "input": (_t_input, ((5, 3), (5, 4)), True),
    "both": (_t_both, ((5, 3), (4, 5)), True),
    "batched": (_batched, ((2, 6, 3), (2, 6, 4)), True),
    "batch axis moved": (_batch_axis_moved, ((5, 2, 3), (3, 4)), True),
    "two transposes": (_two_transposes, ((3, 4, 5), (5, 2)), True),
    "no unit stride": (_no_unit_stride, ((3, 4, 5), (4, 2)), False),
}
_JITTED = {name: stax.jit(fn) for name, (fn, _, _) in CASES.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", list(CASES))
def test_transposed_operands_match_numpy(name: str, dtype: str) -> None:
    fn, shapes, _ = CASES[name]
    args = [make_array(s, dtype, seed=k) for k, s in enumerate(shapes)]
    assert_matches(_JITTED[name](*args), numpy_call(fn, *args), rtol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_transposed_operands_read_without_copy(name: str) -> None:
    fn, shapes, direct = CASES[name]
    args = [make_array(s, "float64", seed=k) for k, s in enumerate(shapes)]
    text = str(stax.explain(_JITTED[name], *args))
    assert ("np.matmul(x" in text) == direct, text


def test_strided_fortran_and_empty_inputs() -> None:
    f = _JITTED["input"]
    a = make_array((5, 6), "float32")
    b = make_array((5, 4), "float32", seed=1)
    cases = [
        (a[:, ::2], b),  # no unit stride: copied, then the product
        (np.asfortranarray(a), b),  # a.T is a C-ordered matrix
        (a[::-1], b[::-1]),  # negative strides
        (np.zeros((0, 3), np.float32), np.zeros((0, 4), np.float32)),  # empty sum: zeros
        (make_array((5, 0), "float64"), make_array((5, 4), "float64")),  # empty result
    ]
    for x, y in cases:
        assert_matches(f(x, y), numpy_call(_t_input, x, y), rtol=1e-5)


def test_vector_and_nonfinite_operands() -> None:
    g = stax.jit(lambda v, m: v @ (m * 1).T)
    v = np.array([1.0, np.inf, 0.5])
    m = make_array((4, 3), "float64")
    m[1, 2] = np.nan
    assert_matches(g(v, m), numpy_call(lambda v, m: v @ (m * 1).T, v, m))


def test_shape_generic_program_reads_the_transpose() -> None:
    f = stax.jit(_t_both, dynamic=True)
    for n in (5, 9, 0):
        a, b = make_array((n, 3), "float64"), make_array((4, n), "float64", seed=1)
        assert_matches(f(a, b), numpy_call(_t_both, a, b))
    assert "np.matmul(x" in str(stax.explain(f, a, b))
