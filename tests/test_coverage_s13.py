"""Coverage fixes of session 13, each tested against NumPy computed in the test."""

from __future__ import annotations

import numpy as np
import pytest

import stax


def _same_results(jitted, fn, make) -> None:
    """Values, dtypes and memory shared with the arguments as NumPy's, on fresh inputs."""
    mine, theirs = make(), make()
    got, want = jitted(*mine), fn(*theirs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(t, np.ndarray):
                assert np.shares_memory(g, m) == np.shares_memory(w, t)
    for m, t in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(m, t)


@pytest.mark.parametrize("dtype", ["float64", "int8", "complex64"])
def test_row_at_runtime_index_is_a_view_of_the_argument(dtype: str) -> None:
    """[HUNT6] `return A[i]` with i an argument (or computed) is NumPy's view of the caller's
    array: it was a copy (a write through the result missed A)."""
    def fn(A, i):
        j = A[:, 0].real.argmax()
        return A[i], A[:, i], A[-i, 1:], A[..., i], A[j], A.T[i][::2], A[i] * 2

    base = np.arange(24).reshape(6, 4).astype(dtype)
    jitted = stax.jit(fn)
    for i in (2, 0, 1, 2):
        for arr in (base, base[::2], base.T.copy().T, base[1:, ::-1]):
            _same_results(jitted, fn, lambda arr=arr, i=i: (arr.copy(), i))
    out = jitted(base.copy(), 1)
    out[0][0] = 99  # written through, as NumPy's view
    assert out[0].base is not None


def test_row_view_after_writes_to_the_argument() -> None:
    """[HUNT6] The argument written at the run-time index first, then its row returned."""
    def fn(A, i):
        A[i] += 1
        r = A[i]
        r[0] = 7
        return r, A[i][::2]

    jitted = stax.jit(fn)
    for i in (1, 4, 1):
        _same_results(jitted, fn, lambda i=i: (np.linspace(0, 1, 20).reshape(5, 4), i))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "bool"])
def test_any_all_with_where(dtype: str) -> None:
    """[HUNT6] np.any / np.all with where= (masked-out elements are False / True) compile;
    they ran in NumPy. initial= stays NumPy's TypeError."""
    def fn(x, m):
        return (np.any(x, where=m), np.all(x, where=m), np.any(x, axis=0, where=m),
                np.all(x.T, axis=1, where=m.T, keepdims=True), x.any(axis=-1, where=m[0]),
                np.all(x[:0], where=m[:0]))

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((5, 4)) > 0.3).astype(dtype)
    x[1] = 1
    for m in (rng.standard_normal((5, 4)) > 0, np.ones((5, 4), bool), np.zeros((5, 4), bool)):
        for got, want in zip(stax.jit(fn)(x[::-1], m), fn(x[::-1], m), strict=True):
            assert np.asarray(got).dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(TypeError):
        stax.jit(lambda x: np.any(x, initial=True))(x)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32"])
def test_isposinf_isneginf(dtype: str) -> None:
    """[HUNT6] np.isposinf / np.isneginf (NumPy's isinf and signbit) compile; complex values
    are NumPy's TypeError."""
    def fn(x):
        return np.isposinf(x), np.isneginf(x.T), np.isposinf(x[0, 0]), np.isneginf(x[:0])

    x = np.array([[np.inf, -np.inf, 0.0], [-0.0, np.nan, -3.0]])
    if dtype == "int32":
        x = np.array([[1, -2, 0], [5, 7, -9]])
    x = x.astype(dtype)
    for got, want in zip(stax.jit(fn)(x), fn(x), strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want)
    with pytest.raises(TypeError):
        stax.jit(np.isposinf)(np.ones(2, complex))
