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
