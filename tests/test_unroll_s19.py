"""[UNROLL] Reductions over 2..4 elements per output, unrolled into pointwise code
(stax/lower.py `_few_reduced`, `_pointwise_reduce`): the cases tests/test_perf_s18.py leaves
out, each against NumPy computed here: integer wrap in a narrow result dtype, NumPy's default
result dtypes (bool and int sums, int means), axis=None, keepdims over several axes, where= and
initial=, argmax/argmin ties and NaN (not unrolled), float16, NaN/inf in every position,
broadcast, strided and negative-stride inputs, consumers fused with the unrolled value."""

from __future__ import annotations

import numpy as np
import pytest

import stax
from stax.api import _as_array, trace
from stax.lower import lower

pytestmark = pytest.mark.fast


def _same(fn, *args, exact: bool = True, signs: bool = True) -> None:
    """`fn` compiled gives NumPy's dtypes, shapes and values (one result or a tuple of them):
    exactly, NaN where NumPy's is, and the sign of zeros unless `signs` is False; else within
    1e-6 relative (1e-3 for float16) for sums whose order of adds differs from NumPy's."""
    with np.errstate(all="ignore"):
        wants = fn(*args)
        gots = stax.jit(fn)(*args)
    if not isinstance(wants, tuple):
        wants, gots = (wants,), (gots,)
    for i, (got, want) in enumerate(
        zip(map(np.asarray, gots), map(np.asarray, wants), strict=True)
    ):
        assert got.dtype == want.dtype and got.shape == want.shape, (i, got.dtype, want.dtype)
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=f"result {i}")
            if signs and want.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want), f"result {i}")
        else:
            rtol = 1e-3 if want.dtype == np.float16 else 1e-6
            np.testing.assert_allclose(got, want, rtol=rtol, err_msg=f"result {i}")


def _rules(fn, *args) -> list[str]:
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    return [d.rule for d in lower(trace(fn, args).graph, strides).decisions]


def _specials(dtype: type, n: int) -> np.ndarray:
    """n x 4 values of `dtype` with NaN, +-inf, +-0.0 in every column and in runs (float), or
    each dtype's extremes (integer)."""
    rng = np.random.default_rng(19)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((n, 4)).astype(dtype)
        for row, col, v in [
            (0, 0, np.nan),
            (1, 1, np.nan),
            (2, 2, np.nan),
            (3, 3, np.nan),
            (4, 0, np.inf),
            (4, 1, -np.inf),
            (5, 2, np.inf),
            (6, 3, -np.inf),
            (7, 0, -0.0),
            (7, 1, -0.0),
            (7, 2, -0.0),
            (7, 3, -0.0),
            (8, 0, 0.0),
            (8, 1, -0.0),
            (9, 0, np.inf),
            (9, 3, np.nan),
        ]:
            x[row, col] = v
        return x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (n, 4), dtype=dtype, endpoint=True)
    x[0], x[1] = info.max, info.min
    return x


FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.uint8, np.int32, np.int64, np.uint64]


def _by_width(fn: str, axis: int):
    """`fn` along `axis` of the first 2, 3 and 4 columns (axis -1) or rows (axis 0)."""
    return lambda x: tuple(getattr(x[:, :w] if axis else x.T[:w], fn)(axis) for w in (2, 3, 4))


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_inf_and_zeros_in_every_position(dtype):
    """max/min propagate NaN wherever it is; inf - inf is NaN; a sum of -0.0s is NumPy's 0.0.
    Rows are added in NumPy's order: exactly equal. Which zero max/min keep of -0.0 and 0.0
    is NumPy's loop's choice (it differs between its dtypes and widths; the reduction loops
    differ from it too, stax/backends/cpu/segmented.py): not compared."""
    x = _specials(dtype, 12)
    for fn in ("sum", "prod", "max", "min"):
        for axis in (-1, 0):
            _same(_by_width(fn, axis), x.copy(), signs=fn in ("sum", "prod"))


def test_float16_reduces_in_float32():
    """float16 reduces in float32 and rounds once ([A1], as before the unrolling): NumPy's own
    loop rounds after each row along an outer axis (1 ulp apart), not along the last axis."""
    x = _specials(np.float16, 12)
    for fn in ("sum", "prod", "max", "min"):
        _same(_by_width(fn, -1), x, signs=False)
        _same(_by_width(fn, 0), x, exact=fn in ("max", "min"), signs=False)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_results_wrap_as_numpy(dtype):
    """A sum/prod in the input's own narrow dtype wraps (NumPy's modular arithmetic); the
    default dtype widens to int64/uint64 first; max/min at the dtype's extremes."""

    def fn(x):
        return tuple(
            r
            for w in (2, 3, 4)
            for r in (
                x[:, :w].sum(-1, dtype=x.dtype),
                x[:, :w].prod(-1, dtype=x.dtype),
                x[:, :w].sum(-1),
                x[:, :w].prod(-1),
                x[:, :w].max(1),
                x.T[:w].min(0),
            )
        )

    _same(fn, _specials(dtype, 16))


def test_default_result_dtypes():
    """bool sums count as int64, int means are float64, float32 means stay float32, a bool
    max/min is a bool, any/all of numbers are bools."""
    rng = np.random.default_rng(3)
    b = rng.random((10, 3)) > 0.5
    i = rng.integers(-9, 9, (10, 4)).astype(np.int16)
    f = rng.standard_normal((10, 2)).astype(np.float32)

    def fn(b, i, f):
        bools = (b.sum(1), b.max(1), b.min(1), b.prod(1), b.mean(1), b.any(1), b.all(1))
        ints = (i.mean(1), i.sum(1), i.any(1), i.all(1), i.prod(1, dtype=np.float32))
        floats = (f.mean(1), f.sum(1, dtype=np.float64), f.mean(1, dtype=np.float64))
        return (*bools, *ints, i.mean(1, dtype=np.float32), *floats)

    _same(fn, b, i, f)


def test_axis_none_keepdims_and_several_axes():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11.5

    def whole(x):
        parts = [x.ravel()[: int(np.prod(s))].reshape(s) for s in [(2, 2), (4,), (3, 1), (2, 1, 2)]]
        return tuple(
            r for y in parts for r in (y.sum(), y.max(keepdims=True), np.mean(y, keepdims=True))
        )

    def axes(x):
        return (
            x[:2, :2].sum((0, 1), keepdims=True),
            x[:, :2].min((0, 1)),
            x.reshape(1, 2, 12).sum((0, 1)),  # a unit axis too
        )

    _same(whole, x)
    _same(axes, x)
    _same(lambda x: x.reshape(2, 3, 2, 2).sum((0, 3), keepdims=True), x, exact=False)


def test_where_and_initial():
    """where= fills the masked-out elements with the identity (or `initial`); `initial` is
    combined after the unrolled value; a mean divides by the number of selected elements (the
    row with none selected: NaN in both)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((9, 3))
    x[0, 1] = np.nan
    m = rng.random((9, 3)) > 0.4
    m[1] = False

    def fn(x, m):
        return (
            x.sum(1, where=m),
            x.prod(1, where=m, initial=2.0),
            x.max(1, where=m, initial=-0.5),
            x.min(1, where=m, initial=0.25),
            np.any(x > 0, axis=1, where=m),
            np.all(x > 0, axis=1, where=m),
            x.max(1, initial=0.5),
            x.sum(1, initial=10),
            x.mean(1, where=m),
        )

    _same(fn, x, m)


def test_argmax_ties_and_nan_keep_numpys_rule():
    """argmax/argmin are not unrolled: the first of equal values, the first NaN."""
    rows = np.array(
        [
            [1, 1, 1, 1],
            [0, 2, 2, 0],
            [np.nan, 1, np.nan, 0],
            [3, np.nan, 3, 9],
            [-0.0, 0.0, -0.0, 0.0],
            [np.inf, np.inf, -np.inf, 1],
            [5, 4, 5, 4],
        ]
    )

    def fn(x):
        return tuple(
            r
            for w in (1, 2, 3, 4)
            for f in (np.argmax, np.argmin)
            for r in (f(x[:, :w], axis=1), f(x.T[:w], axis=0), f(x[:, :w].astype(np.int32), 1))
        )

    _same(fn, rows)


def test_layouts_and_broadcast_inputs():
    x = np.random.default_rng(7).standard_normal((10, 12))

    def fn(v):
        return v[:, :3].sum(1), v[:4].max(0), v[:, :4].mean(-1, keepdims=True)

    for view in (x, x[::-1], x[:, ::-3], x.T, np.asfortranarray(x), x[1::2, 2::3]):
        _same(fn, view)
    row = np.array([1.5, -2.0, np.nan])
    _same(
        lambda r: (np.broadcast_to(r, (5, 3)).sum(1), np.broadcast_to(r[:, None], (3, 4)).min(1)),
        row,
    )


def test_fused_consumers():
    """The unrolled value inlined into pointwise consumers, broadcast back over its axis, and
    read by two consumers; RGB to gray as a weighted sum over a last axis of 3; avgpool."""
    rng = np.random.default_rng(9)
    img = rng.random((16, 20, 3)).astype(np.float32)
    w = np.array([0.299, 0.587, 0.114], np.float32)

    def exact(img, w):
        pairs = img.reshape(-1, 3)[:, :2]
        return (img * w).sum(-1), pairs.max(-1), pairs.max(-1) * 2 + pairs.min(-1)

    def pool(x):
        n, m = x.shape
        return np.sqrt(x.reshape(n // 2, 2, m // 2, 2).mean((1, 3)) + 1.0)

    _same(exact, img, w)
    _same(lambda x: (x - x.mean(-1, keepdims=True), pool(x[..., 0])), img, exact=False)


def test_one_element_and_empty():
    x = np.arange(6.0).reshape(6, 1) - 3
    fns = (np.sum, np.prod, np.max, np.min, np.argmax, np.argmin, np.mean)
    _same(lambda x: tuple(f(x, axis=1) for f in fns), x)
    empty = (np.zeros((0, 3), np.float32), np.zeros((0, 2)), np.zeros((3, 0), np.int8))
    _same(lambda a, b, c: (a.sum(1), b.mean(1), c.sum(0), b.T.sum(1)), *empty)


def test_complex_and_large_counts_are_loops():
    """Complex values and counts above UNROLLED_REDUCE_MAX keep the reduction loop; a count of
    2..4 is recorded for stax.explain as `unrolled_reduce`."""
    z = (np.arange(12) + 1j * np.arange(12)[::-1]).reshape(4, 3)
    _same(lambda z: z.sum(1), z)
    _same(lambda z: z.prod(1), z, exact=False)
    x = np.ones((8, 5))
    assert "unrolled_reduce" not in _rules(lambda x: x.sum(1), x)
    assert "unrolled_reduce" not in _rules(lambda z: z.sum(1), z)
    assert "unrolled_reduce" in _rules(lambda x: x[:, :4].sum(1), x)
    assert "unrolled_reduce" in _rules(lambda x: x.reshape(4, 2, 5).max(1), x)
