"""Counterexamples found by adversarial testing: each once differed from NumPy or crashed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array, numpy_call

import stax
from stax.frontend.breaks import GraphBreakWarning


def check(fn: Callable[..., Any], *args: Any, **options: Any) -> None:
    """stax.jit(fn, **options) gives NumPy's result on copies of `args`."""
    want = numpy_call(fn, *args)
    got = stax.jit(fn, **options)(*(a.copy() if isinstance(a, np.ndarray) else a
                                    for a in args))
    assert_matches(got, want)


X2 = make_array((6, 8), "float64", seed=1)
X3 = make_array((4, 5, 6), "float64", seed=4)
F1 = make_array((7,), "float32", seed=2)
I1 = make_array((7,), "int32", seed=3)

I2 = make_array((6, 8), "int32", seed=5)


def _assign_row(x: Any, y: Any) -> Any:
    x[0] = y[0]
    x[1:3] = y[2:4].T.T * 3
    return x


CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    # A 0-d integer array as an index (or np.take with a scalar index) drops the axis.
    "index_0d_array": (lambda x, i: (x[i] + 1, x.T[i]), (X2, np.int64(3))),
    "take_scalar_index": (lambda x: np.take(x, -2, axis=1), (X2,)),
    # Concatenating pieces that are all empty along the axis.
    "concat_all_empty": (lambda x, y: np.concatenate([x, y]),
                         (np.zeros(0, np.int64), np.zeros(0, np.int32))),
    "concat_empty_slices": (lambda x: np.concatenate([x[:, :0], x[:, 5:2]], axis=1), (X2,)),
    # A Python bool argument is np.bool for promotion (not a weak scalar type).
    "python_bool_arg": (lambda x, c: (x + c, x * c, np.where(x > 0, c, x)), (F1, True)),
    "python_bool_arg_int": (lambda x, c: (x - c, x & c), (I1, True)),
    # np.dot of N-D arrays contracts a's last axis with b's second-to-last (not matmul).
    "dot_nd": (lambda x: (np.dot(x, x.transpose(0, 2, 1)), x[0].dot(x.transpose(0, 2, 1)),
                          np.dot(np.ones((4, 5)), x)), (X3,)),
    # -0.0 and 0.0 are different constants (they were shared as one).
    "signed_zero_constants": (lambda x: (x // 0.0, x // -0.0, x * -0.0, np.maximum(x, 0.0)),
                              (np.array([1.0, -1.0, 0.0, np.nan]),)),
    "clip_min_max_keywords": (lambda x: (x.clip(max=0), np.clip(x, min=-1), x.clip(-1, max=0.1)),
                              (X2,)),
    # np.round with negative decimals: divide, rint, multiply (integers via float64, cast back).
    "round_negative_decimals": (lambda x: (np.round(x, -1), x.round(2), np.round(x * 1.0, -1),
                                           np.round(x * 0.01, 1)),
                                (np.array([15, 25, 35, 45, 65, 75, -15, -25], np.int64),)),
    # Assignment casts with casting='unsafe' (float into int or bool is allowed).
    "setitem_float_into_int": (_assign_row, (I2, X2)),
    "setitem_float_into_bool": (_assign_row, (I2 > 0, X2)),
    # Advanced indexing: integers next to an array are advanced too, and advanced indices
    # separated by a slice or None put their dimensions first; several arrays broadcast.
    "int_and_array_separated": (lambda x: (x[1, :, [0, 2]], x[None, 1, :, [0, 2]],
                                           x[..., 1, None, [0, 2]], x[:, [0], None, [1]]),
                                (X3,)),
    "int_and_array_adjacent": (lambda x: (x[1, [0, 2], 3], x[:, 1, [0, 2]], x[[0, 2], None, 1]),
                               (X3,)),
    "several_index_arrays": (lambda x, i, j: (x[i, j], x[i, :, j], x[:, i, j], x[i, j, i],
                                              x[2, ::-1, i], x.T[i, j], x[::-1, None, i, j]),
                             (X3, np.array([[0, -1], [2, 3]]), np.array([1, -2], np.int32))),
    "divmod": (lambda x: (divmod(x, 2), divmod(7, x), np.divmod(x * 1.5, 2)), (I1 + 9,)),
}


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_case(name: str) -> None:
    fn, args = CASES[name]
    check(fn, *args)


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 2**40])
def test_python_int_argument_out_of_int32_range(value: int) -> None:
    f = stax.jit(lambda x, c: x + c)
    x = np.arange(3, dtype=np.int32)
    np.testing.assert_array_equal(f(x, 3), x + 3)
    with pytest.raises(OverflowError):
        x + value
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        f(x, value)


def test_python_int_argument_assigned_into_int32() -> None:
    def fn(x: Any, c: Any) -> Any:
        x[1] = c
        return x

    np.testing.assert_array_equal(stax.jit(fn)(np.zeros(3, np.int32), -7), [0, -7, 0])
    with pytest.raises(OverflowError):
        stax.jit(fn)(np.zeros(3, np.int32), 2**35)


def test_mutated_argument_aliasing_another() -> None:
    def fn(x: Any, y: Any) -> Any:
        x[0] = y[1] + 1
        return x

    base = np.arange(4.0)
    with pytest.raises(NotImplementedError, match="shares memory"):
        stax.jit(fn, strict=True)(base, base[::-1])
    # [HUNT] strict=False: the call runs in NumPy (a graph break), later calls compile
    jf, mine, theirs = stax.jit(fn), np.arange(4.0), np.arange(4.0)
    jf(np.zeros(4), np.ones(4))
    with pytest.warns(GraphBreakWarning, match="shares memory"):
        np.testing.assert_array_equal(jf(mine, mine[::-1]), fn(theirs, theirs[::-1]))
    np.testing.assert_array_equal(mine, theirs)
    # Disjoint views of one array are fine.
    a, b = np.arange(4.0), np.arange(4.0)
    np.testing.assert_array_equal(stax.jit(fn)(a[::2], a[1::2]), fn(b[::2], b[1::2]))


# ---- found by tests/test_random_programs_wide.py (helper FUZZ) ---------------------------------

def _scalar_inplace(x: Any, c: Any) -> Any:
    s = x.sum()  # NumPy scalars are immutable: `s += 1` rebinds s, u keeps the old value
    u = s
    s += 1
    v = x[0, 1]  # a scalar too (a copy): `v -= 1` must not write into x
    w = v
    v -= 1
    z = x[1, 0] * 2
    z2 = z
    z += np.ones(2)  # rebinds to an array, as NumPy's scalar does
    d = c  # a Python scalar argument
    c *= 3
    row = x[1]  # a view: `row += 5` does write into x
    row += 5
    return s, u, v, w, z, z2, c, d, x


def test_inplace_on_scalars_rebinds() -> None:
    check(_scalar_inplace, make_array((3, 4), "float64", seed=7), 1.5)
    check(_scalar_inplace, make_array((3, 4), "int32", seed=8), 2)


@pytest.mark.filterwarnings("ignore::stax.frontend.breaks.GraphBreakWarning")
def test_masked_selection_reshaped() -> None:
    """x[x > 0] (lazy, data-dependent) then reshaped by np.stack / np.reshape: AttributeError
    'layout' (the lazy selection lacked a Tracer attribute)."""
    check(lambda x: (np.stack([x[x > 0], x]), np.reshape(x[x > 1], (-1, 1))),
          np.array([5, 1, 3], np.uint32))


@pytest.mark.filterwarnings("ignore::stax.frontend.breaks.GraphBreakWarning")
def test_var_std_integer_dtype() -> None:
    """np.std(x, dtype=np.int32) is an int32 in NumPy (truncated mean and quotient): stax gave
    a float64; now NumPy's own var/std runs (a graph break)."""
    check(lambda x: (np.std(x, dtype=np.int32), np.var(x, axis=0, dtype=np.int64),
                     x.var(dtype=np.uint8)), make_array((3, 4), "int8", seed=9))


def _assign_unit_dims(x: Any, v: Any) -> Any:
    x[0] = v[:1]  # a (1,) value into one element
    x[1:3] = v[None, None, :2] * 2  # leading unit dimensions beyond the region's
    return x


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim:DeprecationWarning")
def test_assignment_drops_leading_unit_dims() -> None:
    """NumPy drops a value's leading size-1 dimensions the region lacks: stax raised
    ValueError('cannot broadcast shape (1,) to ()') (NumPy deprecates it for one element)."""
    check(_assign_unit_dims, make_array((4,), "float64", seed=10), make_array((3,), "int16"))


def test_out_larger_than_inputs_broadcast() -> None:
    """np.add(v, v, out=x) with v (2,) and x (1, 2): NumPy iterates over out's shape; stax
    raised 'non-broadcastable output operand'."""
    check(lambda x, v: (np.add(v, v, out=x), np.multiply(v[:1], 3, out=x[0])),
          make_array((1, 2), "float64", seed=11), make_array((2,), "float32", seed=12))


def test_float16_mean_rounds_once() -> None:
    """NumPy's float16 mean sums and divides in float32, rounding once: stax divided the
    float16-rounded sum (50.03 for NumPy's 50.0)."""
    x = np.linspace(0, 100, 1000).astype(np.float16)
    check(lambda x: (x.mean(), x.reshape(10, 100).mean(1), x.reshape(10, 100).mean(0),
                     x.mean(keepdims=True), x.mean(where=x > 50)), x)
