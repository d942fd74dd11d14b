"""Fixes of session 18's coverage hunt (HUNT11, from tests/corpus/test_corpus_wild16.py), each
tested against NumPy computed in the test."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from corpus.test_corpus_wild import same

import stax
from stax.frontend import breaks


def by_layout(x: np.ndarray, n: Any) -> np.ndarray:
    """Runs whole in NumPy when `n > 2` (ndarray.strides of a traced array), compiles else."""
    if n > 2:
        return x.strides[0] * x
    return x * 2


def by_data(x: np.ndarray) -> np.ndarray:
    if x[0] > 2:  # a value Python sees
        return x.strides[0] * x
    return x * 2


def calls(jitted: Any, *args: Any) -> None:
    """`jitted(*args)` equals the plain function's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", breaks.GraphBreakWarning)
        got = jitted(*args)
    same(got, jitted.fn(*args))


def test_fallback_on_a_value_dependent_path_is_not_remembered() -> None:
    """[HUNT11] A call that ran whole in NumPy after Python saw a value (`if x[0] > 2`, or a
    scalar argument's `if n > 2`) sent every later call of its signature to NumPy without
    trying ([HUNT10]'s "from now on"): a call that takes the other path now compiles."""
    x = np.ones(3)
    jitted = stax.jit(by_data)
    calls(jitted, x + 5)
    calls(jitted, x)
    ran, _, _, _, in_numpy = jitted.segment_counts[jitted.key((x,))]
    assert (ran, in_numpy) == (2, 1)  # the second call ran segmented (compiled), not in NumPy
    jitted = stax.jit(by_layout)
    for n in (5, 1, 1, 5, 1, 7):
        calls(jitted, x, n)
    assert (
        jitted.cache_info().compiles + sum(c[0] - c[4] for c in jitted.segment_counts.values()) >= 1
    )


def test_fallbacks_on_most_calls_are_remembered() -> None:
    """[HUNT11] A value-dependent fallback on most calls (MAX_FALLBACKS of them) runs the
    later calls in NumPy at once, as [HUNT10] did at the first."""
    x = np.ones(3) + 5
    jitted = stax.jit(by_data)
    for _ in range(breaks.MAX_FALLBACKS + 2):
        calls(jitted, x)
    counts = jitted.segment_counts[jitted.key((x,))]
    assert counts[4] == breaks.MAX_FALLBACKS  # then no more segmented runs
    assert any("from now on" in str(b) for b in jitted.breaks[jitted.key((x,))])


def test_fallback_without_values_seen_is_remembered_at_once() -> None:
    """[HUNT10] unchanged: a path that saw no value runs later calls in NumPy at once."""

    def fn(x: np.ndarray) -> np.ndarray:
        return x.strides[0] * x

    x = np.ones(4)
    jitted = stax.jit(fn)
    for _ in range(3):
        calls(jitted, x)
    assert jitted.segment_counts[jitted.key((x,))][0] == 1
