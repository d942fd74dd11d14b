"""[VADV] Loop bodies that rebind temporaries before reading them (not carried) and read back
what they just stored at the loop index (forwarded, not the whole array re-read), vs NumPy."""

import numpy as np
import pytest

import stax
from stax.loops import records


def sweep(a, b):
    """A forward and a backward pass (the Thomas algorithm's shape) with fresh temporaries."""
    c = np.empty_like(a)
    d = np.empty_like(a)
    c[:, 0] = b[:, 0]
    d[:, 0] = a[:, 0]
    for k in range(1, a.shape[1]):
        g = 0.5 * (b[:, k] + b[:, k - 1])
        h = g * 2 - 1
        c[:, k] = h * b[:, k]
        d[:, k] = (a[:, k] - d[:, k - 1] * c[:, k - 1]) / (2 + c[:, k] * c[:, k])
    out = np.empty_like(a)
    out[:, -1] = d[:, -1]
    for k in range(a.shape[1] - 2, -1, -1):
        t = d[:, k] - c[:, k] * out[:, k + 1]
        out[:, k] = t
    return out


def last_value(x, n):
    """A temporary read after the loop: it holds the last iteration's value."""
    t = x[0] * 0
    for k in range(n):
        t = x[k] * 3
        x[k] = t + 1
    return x, t


def fresh_then_carried(x):
    s = np.zeros_like(x[0])
    for k in range(x.shape[0]):
        t = np.sin(x[k])
        s = s + t
    return s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sweep_matches_numpy(dtype):
    rng = np.random.default_rng(0)
    a = rng.random((7, 9)).astype(dtype)
    b = rng.random((7, 9)).astype(dtype)
    f = stax.jit(sweep)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(f(a, b), sweep(a, b), rtol=tol)
    # transposed and strided inputs
    at, bt = rng.random((9, 7)).astype(dtype).T, rng.random((9, 14)).astype(dtype)[:, ::2].T
    np.testing.assert_allclose(f(at, bt), sweep(at, bt), rtol=tol)
    rolled = [r for r in records(f) if r.compiled]
    assert len(rolled) == 2 and all("g" not in r.carried and "t" not in r.carried
                                    for r in rolled)
    assert "not carried" in rolled[0].body.describe()


def test_rebound_then_read_after_loop():
    x = np.arange(12, dtype=np.int64).reshape(4, 3)
    got_x, got_t = stax.jit(last_value)(x.copy(), 4)
    want_x, want_t = last_value(x.copy(), 4)
    np.testing.assert_array_equal(got_x, want_x)
    np.testing.assert_array_equal(got_t, want_t)
    assert got_t.dtype == want_t.dtype
    rec = [r for r in records(stax.jit(last_value)) if r.compiled]
    assert all("t" in r.carried for r in rec)


def test_fresh_temporary_and_carried_sum():
    x = np.linspace(-2, 2, 30).reshape(6, 5)
    f = stax.jit(fresh_then_carried)
    np.testing.assert_allclose(f(x), fresh_then_carried(x), rtol=1e-13, atol=1e-14)
    (rec,) = [r for r in records(f) if r.compiled]
    assert rec.carried == ("s",)


def dynamic(x, n):
    t = x[0] + 0
    for k in range(n):
        t = x[k] * 2
    return t


@pytest.mark.parametrize("n", [0, 1, 3])
def test_run_time_trip_count_with_zero_trips(n):
    x = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(stax.jit(dynamic)(x, np.int64(n)), dynamic(x, n))


def forward_reads(x, j):
    y = x.copy()
    for k in range(1, x.shape[1]):
        y[:, k] = y[:, k - 1] * 0.5 + x[:, k]
        z = y[:, k] + y[:, j]  # the stored row, and a run-time column that may be row k
        y[:, k] = z
    return y


@pytest.mark.parametrize("j", [0, 2, -1])
def test_read_back_after_store(j):
    x = np.random.default_rng(1).random((3, 5))
    np.testing.assert_allclose(stax.jit(forward_reads)(x, j), forward_reads(x, j),
                               rtol=1e-13)


def out_of_range(x, off):
    y = np.zeros_like(x)
    for k in range(x.shape[1]):
        t = x[:, k + off] * 2
        y[:, k] = t
    return y


def test_index_out_of_range_raises():
    x = np.arange(12.0).reshape(3, 4)
    f = stax.jit(out_of_range)
    np.testing.assert_array_equal(f(x, -4), out_of_range(x, -4))  # negative: wraps
    for off in (1, -5):
        with pytest.raises(IndexError):
            out_of_range(x, off)
        with pytest.raises(IndexError):
            f(x, off)


def column(x, j):
    return x[:, j] * 2 + 1


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_run_time_column_index_checked_once(dtype):
    """A column at a run-time index (strided: a scalar loop, the index wrapped and checked
    once before it): values as NumPy's, IndexError out of range."""
    f = stax.jit(column)
    x = np.arange(6 * 40).reshape(6, 40).astype(dtype)
    for j in (3, -1, -40):
        got = f(x, np.int64(j))
        np.testing.assert_array_equal(got, column(x, j))
        assert got.dtype == column(x, j).dtype
    for j in (40, -41):
        with pytest.raises(IndexError):
            f(x, np.int64(j))
