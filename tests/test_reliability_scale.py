"""Issue 8 item 8: traces of any size lower, schedule and compile (no RecursionError), with
compile time growing about linearly (chains of inlined ops are cut every MAX_INLINE_DEPTH)."""

from __future__ import annotations

import numpy as np

import stax

STEPS = [k % 3 for k in range(5000)]


def _chain(x: np.ndarray) -> np.ndarray:
    for k in STEPS:  # a list, not range: traced step by step
        if k == 0:
            x = x * 1.0001 + 0.5
        elif k == 1:
            x = np.sin(x)
        else:
            x = x - 0.25
    return x


def test_a_5000_step_chain_compiles_and_matches() -> None:
    f = stax.jit(_chain)
    x = np.linspace(-2, 2, 74).reshape(2, 37).T  # strided
    np.testing.assert_allclose(f(x), _chain(x), rtol=1e-10)
    (comp,) = f.cache.values()
    depth_cuts = [d for d in comp.lowered.decisions if d.rule == "inline_depth_limit"]
    assert len(depth_cuts) >= 5000 // 65


def test_a_long_chain_with_shared_values_compiles_and_matches() -> None:
    def shared(x: np.ndarray) -> np.ndarray:
        for _ in [0] * 1500:
            x = np.maximum(x, x * 0.5) - 0.125  # each value used twice
        return x

    x = np.linspace(-3, 3, 21, dtype=np.float32)
    got = stax.jit(shared)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, shared(x), rtol=1e-5)


def test_a_chain_of_costly_values_read_twice_compiles_and_matches() -> None:
    """Each value read twice and costly (a sin): the lowering asks whether each is repeated
    (np.repeat) by one backward pass; a walk per value followed every path, 2**n in this chain
    (24 steps took 135 s to lower, 60 did not finish)."""
    fns = [np.sin, np.cos, np.tanh, np.arctan]

    def costly(x: np.ndarray) -> np.ndarray:
        for k in range(200):
            x = fns[k % 4](x) * (1.0 + k / 1000) + x
        return np.repeat(x, 2)[1:] * x.sum()

    x = np.linspace(-1, 1, 37)[::2]  # strided
    f = stax.jit(costly)
    np.testing.assert_allclose(f(x), costly(x), rtol=1e-9)
    (comp,) = f.cache.values()
    assert any(d.rule == "repeated_costly" for d in comp.lowered.decisions)
