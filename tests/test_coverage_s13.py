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
