"""Segmented kernels and the C replay of recorded programs run with the launch team of
`stax.tiling.threads.team` (the cores idle now), as every other region does: on a busy machine
a parallel segmented kernel must not take the whole OpenMP team and wait at its barriers. The
team is consulted at each call and results stay NumPy's whatever the team."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from stax.backends.cpu import segmented
from stax.nested import native


def _sum_iota(ns: Any) -> Any:
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)


def _want(ns: np.ndarray) -> np.ndarray:
    return ns * (ns - 1) // 2


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("native_replay", [True, False])
def test_segmented_calls_take_the_launch_team(monkeypatch: pytest.MonkeyPatch, threads: int,
                                             native_replay: bool) -> None:
    asked: list[int] = []

    def team(planned: int) -> int:
        asked.append(planned)
        return threads

    monkeypatch.setattr(segmented, "team", team)
    monkeypatch.setattr(native, "team", team)
    monkeypatch.setattr(native, "ENABLED", native_replay)
    # planned for two threads whatever an earlier test left (one planned thread sizes no team)
    monkeypatch.setattr(native, "thread_count", lambda: 2)
    ns = np.random.default_rng(threads).integers(0, 40, segmented.PARALLEL_MIN * 2)
    jitted = sn.jit(_sum_iota)
    for call in range(3):  # the first call, then warm ones (the C replay when enabled)
        asked.clear()
        got = jitted(ns[call:])
        np.testing.assert_array_equal(got, _want(ns[call:]))
        assert asked, f"call {call} did not ask for a launch team"
