"""Every corpus function equals NumPy under stax.jit: compiled fully or with graph breaks,
never failing or differing (arguments mutated in place must match too)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_matches

import stax
from corpus.programs import CASES
from stax.frontend.breaks import GraphBreakWarning


def matches(got: object, want: object) -> None:
    """`assert_matches`, and Python scalars (NumPy returns them from float(), allclose, ...)
    must come back as the same Python type."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            matches(g, w)
    elif isinstance(want, (bool, int, float)):
        assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    else:
        assert_matches(got, want, rtol=1e-9, atol=1e-12)


def copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_function_matches_numpy(name: str) -> None:
    fn, make_args = CASES[name]
    args = make_args(np.random.default_rng(sum(map(ord, name))))
    theirs, mine = copies(args), copies(args)
    want = fn(*theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        got = stax.jit(fn)(*mine)
    matches(got, want)
    for m, t in zip(mine, theirs, strict=True):
        if isinstance(m, np.ndarray):
            assert_matches(m, t, rtol=1e-9, atol=1e-12)
