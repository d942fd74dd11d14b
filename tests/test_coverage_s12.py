"""s12 HUNT5: what the tenth wild corpus (tests/corpus/test_corpus_wild10.py) found, checked
against NumPy in the test: np.positive / unary + and a roll by a multiple of the length are
new arrays (they returned the caller's array itself); `np.errstate` inside the function is
tested in test_errstate.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax

IDENTITIES: list[Callable[[Any], Any]] = [
    lambda x: np.positive(x),
    lambda x: +x,
    lambda x: np.roll(x, 0),
    lambda x: np.roll(x, x.shape[0] if x.ndim else 0, axis=0 if x.ndim else None),
    lambda x: np.roll(x, (0, 0), axis=(0, -1)) if x.ndim > 1 else np.roll(x, -0),
]


@pytest.mark.parametrize("k", range(len(IDENTITIES)))
@pytest.mark.parametrize("make", [
    lambda: np.arange(6.0), lambda: np.arange(12, dtype=np.int32).reshape(3, 4).T,
    lambda: np.array([2.5]), lambda: np.zeros((0, 3), np.uint8), lambda: np.arange(9.0)[::2]])
def test_identity_results_are_new_arrays(k: int, make: Callable[[], np.ndarray]) -> None:
    fn = IDENTITIES[k]
    x, theirs = make(), make()
    want = fn(theirs)
    got = stax.jit(fn)(x)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.shares_memory(got, x) == np.shares_memory(want, theirs)  # False: a new array
    if got.size:
        got.flat[0] = 1
        np.testing.assert_array_equal(x, theirs)  # writing the result leaves the argument


def test_positive_of_bool_is_numpys_error() -> None:
    with pytest.raises(TypeError):
        np.positive(np.ones(2, bool))
    with pytest.raises(TypeError):
        stax.jit(lambda x: +x)(np.ones(2, bool))
