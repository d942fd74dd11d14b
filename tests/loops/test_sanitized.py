"""Loops with run-time bounds under AddressSanitizer + UBSan (STAX_SANITIZE=1): reductions
stopped at a slice's length (masked_prefix) and nested loops run by their drivers inside the
enclosing driver (pointer tables filled at run time), elementwise kernels stopped at their
store's count (stored_prefix), on triangular kernels whose slices are
empty at the first and last index, compared with NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import run_sanitized

PROGRAMS = textwrap.dedent("""
    import numpy as np, stax

    def cholesky(A):
        A[0, 0] = np.sqrt(A[0, 0])
        for i in range(1, A.shape[0]):
            for j in range(i):
                A[i, j] -= np.dot(A[i, :j], A[j, :j])
                A[i, j] /= A[j, j]
            A[i, i] -= np.dot(A[i, :i], A[i, :i])
            A[i, i] = np.sqrt(A[i, i])
        return A

    def lu(A):
        for i in range(A.shape[0]):
            for j in range(i):
                A[i, j] -= A[i, :j] @ A[:j, j]
                A[i, j] /= A[j, j]
            for j in range(i, A.shape[0]):
                A[i, j] -= A[i, :i] @ A[:i, j]
        return A

    def trmm(alpha, A, B):
        for i in range(B.shape[0]):
            for j in range(B.shape[1]):
                B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
        B *= alpha
        return B

    def three_levels(a):
        for i in range(a.shape[0]):
            for j in range(i - 1, -1, -1):
                for k in range(j, a.shape[0]):
                    a[i, j] += a[i, k:].sum() * 0.01 + a[j, :k].max(initial=0.0) * 0.001
        return a

    def tails(x, v):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.dot(x[i, i + 1:], v[i + 1:]) + x[i, :i].sum()
        return out

    def gramschmidt(A):  # Q's stores written just before the inner loop (early stores)
        Q = np.zeros_like(A)
        R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
        for k in range(A.shape[1]):
            nrm = np.dot(A[:, k], A[:, k])
            R[k, k] = np.sqrt(nrm)
            Q[:, k] = A[:, k] / R[k, k]
            for j in range(k + 1, A.shape[1]):
                R[k, j] = np.dot(Q[:, k], A[:, j])
                A[:, j] -= Q[:, k] * R[k, j]
        return Q @ R

    def durbin(r):  # y[:k]'s kernel stops at the store's count (stored_prefix)
        y = np.empty_like(r)
        alpha = -r[0]
        beta = 1.0
        y[0] = -r[0]
        for k in range(1, r.shape[0]):
            beta *= 1.0 - alpha * alpha
            alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
            y[:k] += alpha * np.flip(y[:k])
            y[k] = alpha
        return y

    rng = np.random.default_rng(0)
    for n in (1, 6):
        m = rng.random((n, n))
        spd = m @ m.T + n * np.eye(n)
        for fn, args in ((cholesky, (spd,)), (lu, (spd,)), (trmm, (1.5, m, np.tril(m).T)),
                         (three_levels, (m,)), (tails, (m, rng.random(n))),
                         (gramschmidt, (m + np.eye(n),)), (durbin, (m[0] / (2 * n),))):
            got = stax.jit(fn)(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
            want = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    print("sanitized ok")
""")


def test_run_time_bounds_run_clean_under_sanitizers(tmp_path: Path) -> None:
    run_sanitized(PROGRAMS, tmp_path / "cache", timeout=900)
