"""[INVAR] argmax/argmin's vector lanes flag a NaN by one unordered compare per pair of the
ARG_TREE elements a lane takes per step: a NaN in any slot of a step (or in the tail) is found
first, as NumPy finds it; checked against NumPy for float16/32/64."""

from __future__ import annotations

import numpy as np
import pytest

import stax
from stax.backends.cpu.cpp import ARG_LANES, ARG_TREE

COLS = ARG_LANES * ARG_TREE * 2 + 5  # two whole steps and a tail


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_nan_in_every_slot_of_a_step(dtype):
    rng = np.random.default_rng(0)
    positions = [k * ARG_LANES + 3 for k in range(ARG_TREE)] + [
        ARG_LANES * ARG_TREE + 1, COLS - 1]
    x = rng.standard_normal((len(positions) + 2, COLS)).astype(dtype)
    for row, p in enumerate(positions):
        x[row, p] = np.nan
    x[-2, [positions[1], positions[0] + ARG_LANES * ARG_TREE]] = np.nan  # the first one wins
    x[-1, :] = x[-1, 0]  # ties: the first position
    for fn in (lambda a: a.argmax(-1), lambda a: a.argmin(-1)):
        np.testing.assert_array_equal(stax.jit(fn, threads=1)(x), fn(x))
