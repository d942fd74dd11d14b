"""Issue 8 item 6: no undefined behaviour. Programs with kernel-local buffers read inside a
gather's index (take_along_axis of an argmax: the local was read at [x0] before the fix) and
other gathers run under AddressSanitizer + UBSan (STAX_SANITIZE=1), compared with NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import run_sanitized

PROGRAMS = textwrap.dedent("""
    import numpy as np, stax
    rng = np.random.default_rng(0)
    cases = [
        (lambda a: np.take_along_axis(a, np.argmax(a, axis=1)[:, None], axis=1),
         rng.standard_normal((8, 33))),
        (lambda a: np.take_along_axis(a, np.argmin(a, axis=0)[None, :], axis=0),
         rng.standard_normal((17, 5)).astype(np.float32)),
        (lambda a: a[np.arange(a.shape[0]), np.argmax(a, axis=1)] * 2,
         rng.integers(-9, 9, (6, 7)).astype(np.int32)),
        (lambda a: np.take(a, np.argsort(a.sum(1))[::-1], axis=0), rng.standard_normal((5, 3))),
        (lambda a: a[np.argmax(a, axis=1)] + a.max(1, keepdims=True),
         rng.standard_normal((9, 9))),
    ]
    for fn, x in cases:
        got, want = stax.jit(fn)(x), fn(x)
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
    print("sanitized ok")
""")


def test_gathers_of_local_buffers_run_clean_under_sanitizers(tmp_path: Path) -> None:
    run_sanitized(PROGRAMS, tmp_path / "cache")
