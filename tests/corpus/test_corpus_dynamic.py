"""Issue 11: every corpus function under `stax.jit(fn, dynamic=True)` (a shape-generic trace)
equals NumPy on its arguments and on arguments of other sizes (every size >= 2 grown by 3,
consistently across arguments, so that sizes equal in one call are equal in the other)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from corpus.programs import CASES
from corpus.test_corpus import copies, matches
from stax.frontend.breaks import GraphBreakWarning


def grown(args: tuple) -> tuple:
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim:
            a = np.resize(a, tuple(d + 3 if d >= 2 else d for d in a.shape))
        out.append(a)
    return tuple(out)


def _diverges(value: object) -> bool:
    parts = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(p, np.ndarray) and p.dtype.kind == "f" and p.size and
               np.nanmax(np.abs(p), initial=0.0) > 1e12 for p in parts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generic_trace_matches_numpy_on_two_shapes(name: str) -> None:
    fn, make_args = CASES[name]
    args = make_args(np.random.default_rng(sum(map(ord, name))))
    f = stax.jit(fn, dynamic=True)
    for call in (args, grown(args)):
        theirs, mine = copies(call), copies(call)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = fn(*theirs)
        except Exception:  # noqa: BLE001 - the grown sizes do not suit this program
            continue
        if call is not args and _diverges(want):
            continue  # resized data broke the method (Gauss-Seidel without dominance): chaotic
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            got = f(*mine)
        matches(got, want)
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(m, np.ndarray):
                matches(m, t)
