"""[LOOPS] Elementwise work on a masked slice whose length follows the loop index (`y[:k] +=
...`, `A[i, :i] = ...`): the kernel computing the stored value stops at the store's count
(`stored_prefix`, `stax.loops.runner._store_stops`) instead of the longest slice; compared
with NumPy over zero and one trips, dtypes, strided and Fortran-ordered inputs, and a value
that is read elsewhere too (which must run full length)."""

from __future__ import annotations

import numpy as np
import pytest

import stax
from stax.loops import runner

from .test_masked import durbin


def rows(A):
    for i in range(A.shape[0]):
        A[i, :i] = A[i, :i] * 0.5 + A[:i, i]
    return A


def windows(x):
    for k in range(2, x.shape[0]):
        x[k - 2:k] = x[k - 2:k] * 0.25 + x[k]
    return x


def reread(y, out):
    for k in range(y.shape[0]):
        v = y[:k] + 1.0
        y[:k] = v
        out[k] = v.sum()
    return y, out


def _body(fn, line: int) -> runner.LoopBody:
    """The last compiled body of `fn`'s loop on its `line`-th line (the def is line 0)."""
    at = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno + line} "
    return runner.BODIES[next(k for k in reversed(runner.BODIES) if at in k)]


@pytest.mark.parametrize("n", [1, 2, 7, 40])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_durbin_equals_numpy(n: int, dtype: str) -> None:
    r = (np.random.default_rng(n).random(2 * n) / (4 * n)).astype(dtype)[::2]  # strided
    got = stax.jit(durbin)(r)
    np.testing.assert_allclose(got, durbin(r.copy()), rtol=1e-4 if dtype == "float32" else 1e-10)


def test_kernels_stop_at_the_store() -> None:
    stax.jit(durbin)(np.linspace(0.01, 0.02, 9))
    stax.jit(rows)(np.ones((9, 9)))
    for body in (_body(durbin, 5), _body(rows, 1)):
        body.compile()
        assert "stored_prefix" in body.source
        assert "x0c < stax_xstop_" in body.source


@pytest.mark.parametrize("n", [0, 1, 5, 33])
def test_rows_and_windows_equal_numpy(n: int) -> None:
    a = np.random.default_rng(1).random((n, n))
    f = np.asfortranarray(a)
    np.testing.assert_allclose(stax.jit(rows)(f.copy(order="F")), rows(a.copy()), rtol=1e-12)
    x = np.random.default_rng(2).random(n + 2)
    np.testing.assert_allclose(stax.jit(windows)(x.copy()), windows(x.copy()), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 6])
def test_value_read_elsewhere_equals_numpy(n: int) -> None:
    y = np.arange(n, dtype=np.float64)
    got_y, got_out = stax.jit(reread)(y.copy(), np.zeros(n))
    want_y, want_out = reread(y.copy(), np.zeros(n))
    np.testing.assert_allclose(got_y, want_y)
    np.testing.assert_allclose(got_out, want_out)


def growing(x):
    for i in range(1, 4):
        x[:i * 40000] = np.sin(x[:i * 40000]) * 0.5 + 1.0
    return x


def test_work_shared_kernel_stops_at_the_store() -> None:
    x = np.random.default_rng(2).random(120001)
    np.testing.assert_allclose(stax.jit(growing)(x.copy()), growing(x.copy()), rtol=1e-12)
    body = _body(growing, 1)
    assert "stored_prefix" in body.source  # large enough for an `omp for` when threads > 1
