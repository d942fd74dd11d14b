"""[TOPK, s19] The per-row top-k forms (`stax.frontend.topk`, `stax.runtime.topk`): the k
largest or smallest of each row, sorted, by `np.sort(x)[..., -k:]` / `[..., :k]` and by
`np.sort(np.partition(x, kth)[..., -k:])`, against NumPy's own result computed in each test:
dtypes, NaN (last, as NumPy sorts it), infinities, ties, -0.0 / 0.0, k = 1, k = the row's
length, empty rows and arrays, 1-D, 3-D along any axis, transposed and strided inputs; and the
forms that must stay NumPy's (a partition slice read unsorted, argpartition, k above MAX_K,
a kth out of bounds, writes through the slice).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import stax
from stax.frontend.topk import MAX_K

pytestmark = pytest.mark.fast

K = 5


def part_largest(x):
    return np.sort(np.partition(x, -K, axis=-1)[..., -K:], axis=-1)


def part_largest_kth_before(x):  # kth n - k - 1: the elements after it are the k largest
    return np.sort(np.partition(x, x.shape[-1] - K - 1, axis=-1)[..., -K:], axis=-1)


def part_smallest(x):
    return np.sort(np.partition(x, K - 1, axis=-1)[..., :K], axis=-1)


def part_smallest_kth_after(x):  # kth k: the elements before it are the k smallest
    return np.sort(np.partition(x, K, axis=-1)[..., :K], axis=-1)


def sort_largest(x):
    return np.sort(x, axis=-1)[..., -K:]


def sort_smallest(x):
    return np.sort(x, axis=-1)[..., :K]


def sort_method_of_slice(x):  # sorts the slice in place: the partition gets the sorted k
    p = np.partition(x, -K, axis=-1)
    p[..., -K:].sort(axis=-1)
    return p[..., -K:].copy()


FORMS = [
    part_largest,
    part_largest_kth_before,
    part_smallest,
    part_smallest_kth_after,
    sort_largest,
    sort_smallest,
]
DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64]


def _run(fn: Callable, *args: np.ndarray) -> tuple[np.ndarray, str]:
    """Stax's result of `fn` and the wrapper's extern calls, as explain prints them."""
    jitted = stax.jit(fn)
    got = jitted(*args)
    calls = [line for line in str(stax.explain(jitted, *args)).splitlines() if "externs[" in line]
    return got, "\n".join(calls)


def _check(fn: Callable, x: np.ndarray, native: bool = True) -> None:
    want = fn(x.copy())
    got, calls = _run(fn, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if native:
        assert "stax.topk" in calls and "np.partition" not in calls and "np.sort" not in calls, (
            calls
        )
    else:
        assert "stax.topk" not in calls, calls


def _values(dtype: type, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", FORMS)
def test_forms_match_numpy(form, dtype):
    _check(form, _values(dtype, (37, 300)))  # rows long enough for the chunks' bound


@pytest.mark.parametrize("form", [part_largest, part_smallest, sort_largest])
@pytest.mark.parametrize("shape", [(7,), (2000,), (3, 4, 40), (6, K), (5, 11)])
def test_shapes(form, shape):
    """1-D, 3-D, k = the row's length (the slice is the whole array: no top-k form, the
    routines'), short rows (the heap alone)."""
    _check(form, _values(np.float64, shape, 1), native=shape[-1] != K)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("form", FORMS)
def test_nan_inf_ties_and_signed_zeros(form, dtype):
    x = _values(dtype, (9, 400), 2)
    x[0, ::7] = np.nan  # some NaN: the largest k are NaN
    x[1, :] = np.nan  # all NaN
    x[2, 3:] = np.nan  # 3 numbers, fewer than K: the smallest K hold 2 NaN
    x[3, :] = 1.5  # all tied
    x[4, ::2] = -0.0
    x[4, 1::2] = 0.0
    x[5, ::3] = np.inf
    x[6, ::3] = -np.inf
    x[7, :390] = np.arange(390)  # ascending: every element enters the heap
    x[8, :390] = -np.arange(390)
    _check(form, x)


def test_k_one_and_largest_k():
    x = _values(np.float64, (20, 500), 3)
    for fn in (
        lambda x: np.sort(np.partition(x, -1, axis=1)[:, -1:], axis=1),
        lambda x: np.sort(x, axis=1)[:, :1],
        lambda x: np.sort(np.partition(x, -MAX_K, axis=1)[:, -MAX_K:], axis=1),
    ):
        _check(fn, x)


@pytest.mark.parametrize("layout", ["transposed", "strided", "reversed", "fortran"])
def test_layouts(layout):
    base = _values(np.float32, (300, 90), 4)
    x = {
        "transposed": base.T,
        "strided": base[::2, ::3],
        "reversed": base[:, ::-1],
        "fortran": np.asfortranarray(base),
    }[layout]
    _check(part_largest, x)
    _check(sort_smallest, x)


def test_other_axes():
    x = _values(np.int32, (30, 40, 50), 5)
    _check(lambda x: np.sort(np.partition(x, -3, axis=0)[-3:], axis=0), x)
    _check(lambda x: np.sort(x, axis=1)[:, :4, :], x)
    _check(lambda x: np.sort(np.partition(x.T, 2, axis=1)[:, :3], axis=1), x[0])


def test_empty():
    _check(sort_largest, np.zeros((0, 30)))
    _check(part_smallest, np.zeros((4, 0, 30), np.float32))
    _check(lambda x: np.sort(x, axis=1)[:, -3:], np.zeros((4, 0)), native=False)


def test_sort_method_writes_into_the_partition():
    x = _values(np.float64, (10, 200), 6)
    got, calls = _run(sort_method_of_slice, x)
    np.testing.assert_array_equal(got, sort_method_of_slice(x.copy()))
    assert "stax.topk" in calls and "np.partition" in calls  # the partition is read: it runs


def test_forms_kept_numpy():
    x = _values(np.float64, (12, 300), 7)
    # a partition slice read unsorted: NumPy's order, so NumPy's routine
    _check(lambda x: np.partition(x, -K, axis=1)[:, -K:], x, native=False)
    _check(lambda x: np.partition(x, -K, axis=1)[:, -K:].max(axis=1), x, native=False)
    # argpartition: which tied indices it picks is NumPy's choice
    ties = np.round(x)
    _check(lambda x: np.sort(np.argpartition(x, -K, axis=1)[:, -K:], axis=1), ties, native=False)
    # k above MAX_K; a slice that is not the first or last k; a step; a kth not at the edge
    k = MAX_K + 1
    _check(lambda x: np.sort(np.partition(x, -k, axis=1)[:, -k:], axis=1), x, native=False)
    _check(lambda x: np.sort(x, axis=1)[:, 1:4], x, native=False)
    _check(lambda x: np.sort(x, axis=1)[:, ::-1][:, :3], x, native=False)
    _check(lambda x: np.sort(x, axis=1)[:, -6::2], x, native=False)
    _check(lambda x: np.sort(np.partition(x, -K - 2, axis=1)[:, -K:], axis=1), x, native=False)
    _check(lambda x: np.sort(x, axis=1)[1:, -K:], x, native=False)
    # a dtype the routine does not take
    _check(sort_largest, x.astype(np.float16), native=False)
    _check(sort_largest, x > 0, native=False)


def test_partition_both_used():
    """The partition is read too: it runs, and the top-k is still right."""
    x = _values(np.float64, (8, 100), 8)

    def f(x):
        p = np.partition(x, -K, axis=1)
        return np.sort(p[:, -K:], axis=1), p[:, :-K].max(axis=1)

    want, got = f(x), stax.jit(f)(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_writes_through_the_sorted_slice():
    x = _values(np.float64, (6, 50), 9)

    def f(x):
        s = np.sort(x, axis=1)
        t = s[:, -3:]
        t[:, 0] = 0.0
        return s, t + 1

    want, got = f(x.copy()), stax.jit(f)(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_kth_out_of_bounds_raises():
    x = _values(np.float64, (4, 10), 10)

    def f(x):
        return np.sort(np.partition(x, -11, axis=1)[:, :1], axis=1)

    with pytest.raises(ValueError):
        f(x)
    with pytest.raises(ValueError):
        stax.jit(f)(x)


def test_bad_kind_raises_unused():
    """A sort or partition whose top-k slice was replaced still raises NumPy's errors for its
    arguments (it runs when they are bad)."""
    x = _values(np.float64, (4, 100), 11)
    for f in (
        lambda x: np.sort(x, axis=1, kind="bogus")[:, -3:],
        lambda x: np.sort(np.partition(x, -3, axis=1, kind="bogus")[:, -3:], axis=1),
    ):
        with pytest.raises(ValueError):
            f(x)
        with pytest.raises(ValueError):
            stax.jit(f)(x)
