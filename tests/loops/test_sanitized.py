"""Loops with run-time bounds under AddressSanitizer + UBSan (STAX_SANITIZE=1): reductions
stopped at a slice's length (masked_prefix) and nested loops run by their drivers inside the
enclosing driver (pointer tables filled at run time), elementwise kernels stopped at their
store's count (stored_prefix), on triangular kernels whose slices are
empty at the first and last index, compared with NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import run_sanitized

PROGRAMS = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
""" + textwrap.dedent("""
    import numpy as np, stax
    # gramschmidt: Q's stores written just before the inner loop (early stores); durbin: y[:k]'s
    # kernel stops at the store's count (stored_prefix)
    from loops.test_masked import cholesky, durbin, gramschmidt, lu, trmm
    # adi: fixed-position assignments written into the inner loops' buffers (ADI2)
    from loops.test_columns import adi

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

    rng = np.random.default_rng(0)
    for n in (1, 6):
        m = rng.random((n, n))
        spd = m @ m.T + n * np.eye(n)
        for fn, args in ((cholesky, (spd,)), (lu, (spd,)), (trmm, (1.5, m, np.tril(m).T)),
                         (three_levels, (m,)), (tails, (m, rng.random(n))),
                         (gramschmidt, (m + np.eye(n),)), (durbin, (m[0] / (2 * n),)),
                         (adi, (2, n, m))):
            got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            got, want = stax.jit(fn)(*got_args), fn(*want_args)
            for g, w in zip((got, *got_args), (want, *want_args)):
                if w is not None:  # cholesky, lu, trmm return None: the argument is the result
                    np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    print("sanitized ok")
""")


def test_run_time_bounds_run_clean_under_sanitizers(tmp_path: Path) -> None:
    run_sanitized(PROGRAMS, tmp_path / "cache", timeout=900)
