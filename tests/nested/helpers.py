"""Comparison of compiled nested results with the reference interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np
from conftest import assert_matches

import stax.nested as sn


def as_ragged(x: Any) -> sn.Ragged:
    if isinstance(x, sn.Ragged):
        return x
    x = np.asarray(x)
    return sn.Ragged(x.reshape(-1, *x.shape[2:]), np.full(x.shape[0], x.shape[1]))


def assert_same(got: Any, want: Any) -> None:
    """Same structure, dtype and values; a regular array and a Ragged with equal rows are the
    same value (the compiled side decides regularity statically, the interpreter by the
    data)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
        return
    if isinstance(got, sn.Ragged) or isinstance(want, sn.Ragged):
        g, w = as_ragged(got), as_ragged(want)
        assert_matches(g.lengths, w.lengths)
        assert_matches(g.values, w.values)
        return
    assert_matches(got, want)


def check(fn: Any, *args: Any) -> Any:
    """Run fn compiled and interpreted; assert they agree; return the compiled result."""
    got = sn.jit(fn)(*args)
    want = sn.interpret(fn, *args)
    assert_same(got, want)
    return got
