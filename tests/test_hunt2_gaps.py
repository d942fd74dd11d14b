"""[HUNT2] NumPy functions that were graph breaks and now compile: `np.unique_counts`,
`ufunc.reduceat`, `np.pad(mode='linear_ramp')`, reductions of a Python list of traced arrays,
`np.unravel_index` / `np.ravel_multi_index` of traced indices. Each is compiled with
`strict=True` (a break would raise) and compared with NumPy computed here, over dtypes,
strided/transposed inputs and empty or degenerate cases; NumPy's errors are NumPy's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax

RNG = np.random.default_rng(16)


def same(fn: Any, *args: Any) -> None:
    """`stax.jit(fn, strict=True)` equals NumPy's `fn`, or raises NumPy's exception type."""
    try:
        want = fn(*args)
    except Exception as e:  # noqa: BLE001 - NumPy's error is the expected one
        with pytest.raises(type(e)):
            stax.jit(fn, strict=True)(*args)
        return
    got = stax.jit(fn, strict=True)(*args)
    if isinstance(want, tuple):  # np.unique_counts's namedtuple
        assert type(got) is type(want)
    assert_matches(got, want)


# ---- np.unique_counts (NumPy 2) ----


@pytest.mark.parametrize(
    "x",
    [
        np.array([5, 3, 1, 3, 9, 0, -2, 3]),
        np.array([5.0, 3.0, np.nan, 1.0, 3.0, np.nan, -0.0, 0.0]),  # NaNs counted one by one
        RNG.integers(0, 6, (4, 5)).astype(np.uint8)[:, ::-1],  # strided, flattened
        RNG.integers(0, 4, (3, 4)).astype(np.float32).T,
        np.array([True, False, True, True]),
        np.arange(7, dtype=np.int16)[::2],
    ],
    ids=["int64", "float_nan", "uint8_strided", "float32_T", "bool", "int16_step"],
)
def test_unique_counts(x: np.ndarray) -> None:
    same(np.unique_counts, x)

    def fields(a: Any) -> Any:
        r = np.unique_counts(a * 2)
        return r.values, r.counts, r.counts.sum()

    if x.dtype != np.bool_:
        same(fields, x)


def test_unique_counts_of_tiny_arrays_is_numpys() -> None:
    # fewer than 2 elements: not compiled (a break), the result is still NumPy's
    for x in (np.zeros(0), np.ones(1, np.int32)):
        assert_matches(stax.jit(np.unique_counts)(x), np.unique_counts(x))


# ---- ufunc.reduceat ----


@pytest.mark.parametrize(
    ("ufunc", "dtype"),
    [
        (np.add, "float64"),
        (np.add, "uint8"),
        (np.multiply, "int16"),
        (np.maximum, "float32"),
        (np.minimum, "int32"),
        (np.logical_or, "bool"),
        (np.bitwise_xor, "int64"),
    ],
)
def test_reduceat_1d(ufunc: np.ufunc, dtype: str) -> None:
    x = RNG.integers(0, 9, 12).astype(dtype)
    for idx in ([0, 2, 5], [0, 4, 4, 1, 11], np.array([3]), [11, 0]):
        same(lambda a, i=idx: ufunc.reduceat(a, i), x)
    same(lambda a: ufunc.reduceat(a[::-2], [0, 2]), x)


def test_reduceat_axes_dtype_and_errors() -> None:
    y = RNG.standard_normal((5, 7)).astype(np.float32)
    same(lambda a: np.add.reduceat(a, [0, 3, 1], axis=1), y)
    same(lambda a: np.add.reduceat(a.T, [0, 2], axis=-1), y)
    same(lambda a: np.add.reduceat(a, [1, 4], axis=0, dtype=np.float64), y)
    same(lambda a: np.multiply.reduceat(a, [0, 2], dtype=np.int64), np.arange(1, 6, dtype=np.int8))
    same(lambda a: np.add.reduceat(a, [0, 7]), np.arange(6.0))  # IndexError, NumPy's
    same(lambda a: np.add.reduceat(a, [-1]), np.arange(6.0))
    no_indices = np.zeros(0, np.intp)
    same(lambda a: np.add.reduceat(a, no_indices, axis=1), y)
    same(lambda a: np.add.reduceat(a, [0]), np.zeros(0))  # empty axis: IndexError


@pytest.mark.parametrize(
    "idx", [np.array([0, 3]), np.array([4, 1, 1], np.uint8), np.array([0, 9]), np.zeros(0, int)]
)
def test_reduceat_with_traced_indices(idx: np.ndarray) -> None:
    x = RNG.standard_normal((6, 2))
    same(lambda a, i: np.add.reduceat(a, i), x, idx)  # 9: NumPy's IndexError
    same(lambda a, i: np.maximum.reduceat(a.T, i[::-1], axis=1), x, idx)


# ---- np.pad(mode='linear_ramp') ----


@pytest.mark.parametrize(
    ("x", "width", "kw"),
    [
        (RNG.standard_normal(5), 3, {}),
        (RNG.standard_normal((4, 3)).astype(np.float32), ((1, 2), (3, 0)), {"end_values": 2}),
        (RNG.standard_normal((4, 3)).astype(np.float32), 2, {"end_values": ((1, -1), (0.5, 7))}),
        (RNG.integers(-50, 50, (3, 5)), (2, 3), {"end_values": (5, -7)}),
        (RNG.integers(0, 250, (3, 5)).astype(np.uint8)[:, ::-1], 2, {}),
        (np.array([1.0, 1.0, 2.0]), 4, {"end_values": 1.0}),  # a zero step: NumPy's other rounding
        (np.arange(6.0).reshape(2, 3).T, 1, {"end_values": 0}),
        (np.int16([3, -4]), 5, {"end_values": 100}),
        (np.array([np.inf, np.nan, 1.0]), 2, {}),
        (np.zeros((0, 2)), ((0, 0), (1, 1)), {}),  # an empty axis not padded
        (np.zeros((0, 2)), 1, {}),  # padding an empty axis: NumPy's ValueError
        (np.array(2.5, np.float32), 3, {}),
    ],
    ids=[
        "f64",
        "f32_pairs",
        "f32_per_axis",
        "int64",
        "uint8_strided",
        "zero_step",
        "transposed",
        "int16_wide",
        "inf_nan",
        "empty_unpadded",
        "empty_padded",
        "0d",
    ],
)
def test_pad_linear_ramp(x: Any, width: Any, kw: dict[str, Any]) -> None:
    same(lambda a: np.pad(a, width, mode="linear_ramp", **kw), x)


# ---- reductions of a Python list of traced arrays ----

LIST_REDUCTIONS = [
    lambda a, b: np.sum([a, b], axis=0),
    lambda a, b: np.mean([a, b * 2]),
    lambda a, b: np.max((a, b), axis=1),
    lambda a, b: np.std([a.sum(), b.sum(), 2.0]),
    lambda a, b: np.argmax([a[0], b[-1]], axis=0),
    lambda a, b: np.all([a > 1, b > 0], axis=0),
    lambda a, b: np.prod([[a[0, 0], 1.0], [b[-1, -1], 3]]),
    lambda a, b: np.cumsum([a, b], axis=0),
    lambda a, b: np.nanmax([a, b]),
    lambda a, b: np.sum([1.0, 2.0]) + a,  # no traced element: NumPy's own
]


@pytest.mark.parametrize("fn", LIST_REDUCTIONS, ids=range(len(LIST_REDUCTIONS)))
@pytest.mark.parametrize(
    ("a", "b"),
    [
        (np.arange(6.0).reshape(2, 3), np.ones((2, 3), np.float32)),
        (RNG.integers(-5, 5, (3, 4)).T, RNG.integers(0, 9, (4, 3)).astype(np.uint8)),
        (np.array([[np.nan, 1.0]]), np.array([[2.0, -np.inf]])),
    ],
    ids=["f64_f32", "int_T_uint8", "nan_inf"],
)
def test_reduction_of_a_list_of_traced_arrays(fn: Any, a: np.ndarray, b: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        same(fn, a, b)


# ---- np.unravel_index / np.ravel_multi_index of traced indices ----

UNRAVEL = [
    (lambda i: np.unravel_index(i, (3, 4)), np.array([1, 7, 11])),
    (lambda i: np.unravel_index(i, (3, 4)), np.int64(5)),
    (lambda i: np.unravel_index(i * 2, (2, 3, 4), order="F"), np.arange(6).reshape(2, 3).T),
    (lambda i: np.unravel_index(i, 7), np.array([6, 0], np.uint8)),
    (lambda i: np.unravel_index(i, (3, 4)), np.zeros(0, np.int32)),
    (lambda i: np.unravel_index(i, (3, 4)), np.array([12])),  # ValueError, NumPy's
    (lambda i: np.unravel_index(i, (3, 4)), np.array([-1])),
    (lambda i: np.unravel_index(i, (3, 4)), np.array([1.0])),  # TypeError
    (lambda i: np.unravel_index(i, (3, -4)), np.array([1])),
    (lambda x: np.unravel_index(np.argmax(x), x.shape), np.arange(12.0).reshape(3, 4)[:, ::-1]),
    (lambda i: np.ravel_multi_index((i, i[::-1]), (3, 4)), np.array([0, 2, 1])),
    (lambda i: np.ravel_multi_index((i, [1, 2]), (3, 4), mode="wrap"), np.array([5, -1])),
    (
        lambda i: np.ravel_multi_index((i, [1, 2]), (3, 4), mode=("clip", "raise")),
        np.array([5, -1]),
    ),
    (lambda i: np.ravel_multi_index((i, [1]), (3, 4), order="F"), np.array([[2], [0]])),
    (lambda i: np.ravel_multi_index((i, [0]), (3, 4)), np.array([3])),  # ValueError, NumPy's
]


@pytest.mark.parametrize(("fn", "x"), UNRAVEL, ids=range(len(UNRAVEL)))
def test_unravel_and_ravel_multi_index(fn: Any, x: Any) -> None:
    same(fn, x)
