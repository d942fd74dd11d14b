"""[PERF11] np.histogram with a count of bins and a given range, compiled (not NumPy's extern):
counts and edges equal NumPy's exactly, over dtypes, layouts, empty arrays, NaN/inf and values
on the edges; the other forms (weights, density, no range, integer values) still match."""

from __future__ import annotations

import numpy as np
import pytest

import stax

pytestmark = pytest.mark.fast


def _edge_values(dtype: type) -> np.ndarray:
    """Every edge of 64 bins over [-4, 4], the floats next to them, NaN, +-inf, out of range."""
    edges = np.linspace(-4.0, 4.0, 65, dtype=dtype)
    near = np.concatenate(
        [edges, np.nextafter(edges, dtype(-np.inf)), np.nextafter(edges, dtype(np.inf))]
    )
    return np.concatenate([near, np.array([np.nan, np.inf, -np.inf, 5, -5, 0], dtype)])


def _same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def hist64(x):
    return np.histogram(x, bins=64, range=(-4.0, 4.0))


def hist7_f64_range(x):
    return np.histogram(x, bins=7, range=(np.float64(-1.5), 2.5))


def hist_int_range(x):
    return np.histogram(x, bins=10, range=(-3, 3))


def hist_f32_range(x):
    return np.histogram(x, bins=9, range=(np.float32(-2.1), np.float32(3.3)))


def hist_point_range(x):
    return np.histogram(x, bins=3, range=(1.0, 1.0))


def hist_one_bin(x):
    return np.histogram(x, 1, (0.0, 1e-3))[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "fn", [hist64, hist7_f64_range, hist_int_range, hist_f32_range, hist_point_range, hist_one_bin]
)
def test_uniform_histogram_matches_numpy(fn, dtype):
    rng = np.random.default_rng(7)
    inputs = [
        np.concatenate(
            [
                (rng.standard_normal(2000) * 2).astype(dtype),
                _edge_values(dtype),
                np.array([1.0, 0.5, 1.5, 0.0, 1e-3, 3.3, -2.1], dtype),
            ]
        ),
        (rng.standard_normal((96, 64)) * 2).astype(dtype).T,  # transposed
        (rng.standard_normal(3001) * 2).astype(dtype)[::3],  # strided
        np.zeros((0, 5), dtype),
        np.array(0.25, dtype),  # 0-d
    ]
    compiled = stax.jit(fn)
    for x in inputs:
        want = fn(x)
        got = compiled(x)
        _same(
            got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)
        )


def test_uniform_histogram_counts_large():
    """Past NumPy's 65536-value blocks, compiled: no call of NumPy's histogram."""
    x = np.random.default_rng(3).standard_normal((512, 300)).astype(np.float32) * 3
    compiled = stax.jit(hist64)
    _same(compiled(x), hist64(x))
    assert "np.histogram" not in str(stax.explain(compiled, x))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: np.histogram(x, bins=5),  # range from the data
        lambda x: np.histogram(x, bins=5, range=(-2.0, 2.0), density=True),
        lambda x: np.histogram(x, bins=5, range=(-2.0, 2.0), weights=x * x),
        lambda x: np.histogram(x, bins=np.array([-2.0, 0.0, 0.5, 3.0])),
        lambda x: np.histogram((x * 4).astype(np.int32), bins=5, range=(-8, 8)),
        lambda x: np.histogram(x.astype(np.float16), bins=5, range=(-2.0, 2.0)),
    ],
)
def test_other_histograms_still_match(fn):
    x = np.random.default_rng(5).standard_normal(999).astype(np.float32)
    want, got = fn(x), stax.jit(fn)(x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_bad_range_is_numpys_error():
    def reversed_range(x):
        return np.histogram(x, bins=4, range=(1.0, -1.0))

    def infinite_range(x):
        return np.histogram(x, bins=4, range=(0.0, np.inf))

    x = np.ones(4, np.float32)
    for fn in (reversed_range, infinite_range):
        with pytest.raises(ValueError) as want:
            fn(x)
        with pytest.raises(ValueError, match=str(want.value).split(" ")[0]):
            stax.jit(fn)(x)


# [PERF11] reductions over 2..4 elements per output, unrolled pointwise

SMALL_REDUCTIONS = {
    "avgpool": lambda x: x.reshape(x.shape[0] // 2, 2, x.shape[1] // 2, 2).mean((1, 3)),
    "sum_last3": lambda x: x[:, :3].sum(-1),
    "sum_axis0_2": lambda x: x[:2].sum(0, keepdims=True),
    "prod_pairs": lambda x: x.reshape(x.shape[0], -1, 2).prod(-1),
    "max_4": lambda x: x.reshape(-1, 4).max(1),
    "min_cols_t": lambda x: x.T[:, 1:4].min(1),
    "any_pairs": lambda x: (x > 0.5).reshape(-1, 2).any(1),
    "all_cols": lambda x: x[:, ::4][:, :4].all(1),
    "sum_axes02": lambda x: x.reshape(2, x.shape[0] // 2, x.shape[1] // 2, 2).sum((0, 3)),
}


def _small_inputs(dtype: type) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((8, 12)).astype(dtype)
        x[1, 2], x[3, 0], x[5, 5], x[0, 1] = np.nan, np.inf, -np.inf, -0.0
        neg_zero = np.full((4, 8), -0.0, dtype)
        return [x, x[::-1], np.asfortranarray(x), neg_zero]
    x = rng.integers(-100, 100, (8, 12)).astype(dtype)
    return [x, x[::-1], np.zeros((4, 8), dtype)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, bool])
@pytest.mark.parametrize("name", sorted(SMALL_REDUCTIONS))
def test_small_reductions_match_numpy(name, dtype):
    fn = SMALL_REDUCTIONS[name]
    compiled = stax.jit(fn)
    for x in _small_inputs(dtype):
        with np.errstate(all="ignore"):
            want = fn(x)
            got = compiled(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        # floats: the elements are added in another order than NumPy's (an ulp apart)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_small_reduction_of_empty_rows():
    """Rows of 3 with no rows: an empty sum; an empty axis 0 of max: NumPy's ValueError."""
    x = np.zeros((0, 3), np.float32)
    got = stax.jit(lambda x: x.sum(1))(x)
    assert got.shape == x.sum(1).shape == (0,) and got.dtype == np.float32
    with pytest.raises(ValueError):
        stax.jit(lambda x: x.max(0))(x)


def test_avgpool_is_one_pass():
    fn = SMALL_REDUCTIONS["avgpool"]
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    compiled = stax.jit(fn)
    np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-5)  # another order of the adds
    assert "reduction_split" not in str(stax.explain(compiled, x))
