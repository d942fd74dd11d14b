"""Coverage fixes of session 15 (HUNT8, from tests/corpus/test_corpus_wild13.py), each tested
against NumPy computed in the test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning


def check(fn, *args) -> None:  # type: ignore[no-untyped-def]
    """`fn` compiled without a graph break gives NumPy's results (values, dtypes, kinds)."""
    want = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)
        got = stax.jit(fn)(*args)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        assert np.array_equal(np.signbit(g), np.signbit(w)), (g, w)


def test_roll_by_a_run_time_shift() -> None:
    """[HUNT8] np.roll with an int argument as the shift (traced) raised TypeError
    ("len() of unsized object"): NumPy's roll, now a gather at (i - shift) mod n."""
    def fn(x, k):
        return (np.roll(x, k), np.roll(x, k, axis=(0, 1)), np.roll(x, (k, -k), axis=(1, 0)),
                np.roll(x[:, ::2], -k, axis=1), np.roll(x, (1, k), axis=(0, 0)),
                np.roll(np.roll(x, k), -k))

    for x in (np.arange(12.0).reshape(3, 4), np.arange(12, dtype=np.int16).reshape(3, 4).T,
              np.zeros((0, 3))):
        for k in (0, 2, -7, np.int8(3)):
            check(fn, x, k)


def test_modf() -> None:
    """[HUNT8] np.modf was a graph break: (fraction, integral part) with x's sign, in the dtype
    of NumPy's loop (float16 for int8/bool), the fraction of +-inf +-0."""
    for x in (np.array([-0.0, np.inf, -np.inf, -2.5, 3.0, -3.0, 0.75]),
              np.arange(-4, 4, dtype=np.int8), np.linspace(-2, 2, 7, dtype=np.float32)[::-1],
              np.array(-2.5), np.zeros((0, 2))):
        check(np.modf, x)
    y = np.array([np.nan, 1.5])
    got, want = stax.jit(np.modf)(y), np.modf(y)
    np.testing.assert_array_equal(got, want)


def test_matrix_rank() -> None:
    """[HUNT8] np.linalg.matrix_rank was a graph break: NumPy's default tolerance over the
    singular values, of a matrix (a NumPy int) or a stack (an array)."""
    rng = np.random.default_rng(0)
    low = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    for a in (np.ones((3, 4)), np.eye(3), low, low.T, rng.standard_normal((2, 3, 3)),
              np.ones((3, 3), np.float32), np.arange(6).reshape(2, 3)):
        check(lambda m: (np.linalg.matrix_rank(m),), a)


def test_list_index_holding_traced_integers() -> None:
    """[HUNT8] `B[[k, p]] = B[[p, k]]` with p = k + np.argmax(...) (a pivoting row swap) and
    `A[[0, i]]` converted the list through the tracers' __array__: a graph break. The list is
    now one traced index array, read and written as NumPy does."""
    def fn(a):
        b = a.copy()
        for k in range(len(b)):
            p = k + np.argmax(np.abs(b[k:, k]))
            b[[k, p]] = b[[p, k]]
        i = np.argmin(a[0])
        return b, a[[0, i]], a[:, [i, 0, i]], a[[i], [i]], a[0, [i, -1]]

    for a in (np.random.default_rng(1).standard_normal((5, 5)), np.arange(16.0).reshape(4, 4).T,
              np.ones((1, 1)), np.arange(9, dtype=np.int32).reshape(3, 3)[::-1]):
        check(fn, a)


def test_matmul_out() -> None:
    """[HUNT8] np.matmul(a, b, out=c) was a graph break: the product written into `out` (an
    input too, a stack of one, float32), NumPy's errors for a core-shape or cast mismatch."""
    def fn(a, b):
        c = a.copy()
        np.matmul(c, b, out=c)
        d = np.zeros((1, a.shape[0], b.shape[1]))
        r = np.matmul(a, b, out=d)
        e = np.empty(a.shape[0])
        np.matmul(a, b[:, 0], out=e)
        f = np.zeros((a.shape[0], b.shape[1]), np.float32)
        np.matmul(a.astype(np.float32), b.astype(np.float32), out=(f,))
        return c, d, r, e, f

    rng = np.random.default_rng(2)
    for a, b in ((rng.standard_normal((3, 3)), rng.standard_normal((3, 3))),
                 (rng.standard_normal((4, 4)).T, np.eye(4)[::-1]), (np.ones((1, 1)), np.ones((1,
                                                                                              1)))):
        check(fn, a, b)
    with pytest.raises(ValueError):
        stax.jit(lambda a: np.matmul(a, a, out=np.zeros((2, 3))))(np.ones((2, 2)))
    with pytest.raises(TypeError):
        stax.jit(lambda a: np.matmul(a, a, out=np.zeros((2, 2), int)))(np.ones((2, 2)))


def test_fft_transforms_and_shifts() -> None:
    """[HUNT8] np.fft.fft/ifft/rfft/irfft/fftshift/ifftshift were graph breaks: NumPy's own
    transform as an extern call (shape, dtype, n=, axis=, norm= as NumPy; float32 gives
    complex64), the shifts a roll by half of each axis; NumPy's errors."""
    def fn(x, k):
        spectrum = np.fft.rfft(x)
        return (np.fft.fft(x), np.fft.ifft(np.fft.fft(x)).real, spectrum,
                np.fft.irfft(spectrum, n=x.shape[-1]), np.fft.rfft(x, k),
                np.fft.fft(x, axis=0, norm="ortho"), np.fft.fftshift(x),
                np.fft.ifftshift(x, axes=0), np.fft.fftshift(np.abs(spectrum), axes=(-1,)),
                np.fft.fft(x, 2 * k, norm="forward"), np.fft.ifft(x + 1j, 5))

    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((4, 8)), rng.standard_normal((8, 5)).T,
              rng.standard_normal((3, 6)).astype(np.float32), rng.standard_normal((1, 2))):
        want = fn(x, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)
            got = stax.jit(fn)(x, 3)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="FFT data points"):
        stax.jit(lambda x: np.fft.fft(x))(np.zeros((2, 0)))
    with pytest.raises(TypeError):
        stax.jit(lambda x: np.fft.rfft(x))(np.ones(3, complex))


def test_polyder_polyint() -> None:
    """[HUNT8] np.polyder / np.polyint of 1-d coefficients were graph breaks: NumPy's steps
    (orders 0-5, past the degree; a constant k; int32, float32, reversed inputs)."""
    def fn(c):
        return (np.polyder(c), np.polyder(c, 2), np.polyder(c, 5), np.polyint(c),
                np.polyint(c, 2, k=3), np.polyint(c, k=2.5))

    for c in (np.array([3.0, 2, 1, 5]), np.arange(4, dtype=np.int32), np.array([2.0]),
              np.arange(6.0)[::-2], np.array([1, 2], np.float32)):
        check(fn, c)
    with pytest.raises(ValueError):
        stax.jit(lambda c: np.polyder(c, -1))(np.ones(3))


def test_histogram2d() -> None:
    """[HUNT8] np.histogram2d was a graph break: NumPy's own as an extern call for bins an int
    or a pair (an int argument too) and a constant range, with density= and weights=."""
    def fn(x, y, w, k):
        return (*np.histogram2d(x, y), *np.histogram2d(x, y, bins=4, range=[[-3, 3], [-2, 2]]),
                *np.histogram2d(x, y, bins=(k, 2), density=True),
                *np.histogram2d(x, y, bins=3, weights=w),
                *np.histogram2d(x[::2], y[::2], bins=[2, 5], range=((0, 1), (0, 1))))

    rng = np.random.default_rng(4)
    for n in (30, 2, 1):
        check(fn, rng.standard_normal(n), rng.standard_normal(n), rng.random(n), 3)
