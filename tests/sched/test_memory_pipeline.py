"""The memory plan as the wrapper applies it: reuse, in-place writes, the inference pool."""

from __future__ import annotations

import numpy as np
import pytest

import stax


def in_place(x):
    e = np.exp(x)
    s1 = e.sum(0)
    g = np.sqrt(e + s1)  # reads e at the index it writes, e's last use: overwrite e in place
    return g.sum(0) + g.max(0)


def program(x):
    g = np.sqrt(np.exp(x) + np.exp(x).sum(0))
    return g.sum(0) + g.max(0) + np.tanh(g).sum(1)


X = np.random.default_rng(3).random((64, 64))


def test_in_place_write_is_planned_and_correct() -> None:
    report = stax.explain(in_place, X)
    inplace = report.schedule.memory.inplace
    assert inplace and inplace[0].rule == "in_place"
    assert f"{inplace[0].new} = {inplace[0].old}.reshape" in report.wrapper
    # buffers sharing storage lose __restrict__ in the kernel signature
    assert f"double* {inplace[0].old}" in report.code
    for _ in range(3):  # scratch storage reused across calls
        np.testing.assert_allclose(stax.jit(in_place)(X), in_place(X), rtol=1e-12)


@pytest.mark.parametrize("pool", [False, True])
def test_pool_option(pool: bool) -> None:
    report = stax.explain(program, X, pool=pool)
    layout = report.schedule.memory.pool
    if pool:
        assert layout is not None and layout.size >= layout.live_peak
        assert "fr.pooled(" in report.wrapper  # the pooled storage (C: wrapper frames)
    else:
        assert layout is None
    np.testing.assert_allclose(stax.jit(program, pool=pool)(X), program(X), rtol=1e-12)


def test_memory_timeline_in_explain() -> None:
    text = str(stax.explain(program, X))
    assert "peak M*" in text and "<- peak" in text
