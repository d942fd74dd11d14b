"""A long run of kernels is split into region functions of at most REGION_KERNELS kernels
(g++ -O3 is superlinear in a function's size: an unrolled 200-step RK4, 400 kernels in one
function, took 33 s to compile, 41 s first call; split, 6.6 s). Buffers live across the split
(intermediates of the frame or the pool, storage handed over, arrays written in place), so every
program here runs with a bound of 2 and is compared with NumPy, specialized and shape-generic,
cold and warm, on one thread and with every kernel in a parallel region."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from corpus.test_corpus_wild5 import rk4_harmonic_oscillator as rk4

import stax
from stax.runtime import wrapper as runtime_wrapper


def chained_reductions(x: Any) -> Any:
    a = x.sum(axis=0)
    b = (x - a).max(axis=1)
    c = (x - b[:, None]).min(axis=0)
    d = (x * c).sum(axis=1)
    return (x + d[:, None]).max(axis=0) + a, np.cumsum(d)


def in_place_updates(x: Any) -> Any:
    y = x * 2
    for k in range(4):
        y[k % y.shape[0]] += y.mean(axis=0)
        y -= y.max()
    return y


PROGRAMS: list[tuple[Callable[..., Any], Callable[[np.ndarray], tuple[Any, ...]]]] = [
    (rk4, lambda x: (x[0, :2], 0.1, 6)),
    (chained_reductions, lambda x: (x,)),
    (in_place_updates, lambda x: (x,)),
]


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize(("fn", "args_of"), PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_split_regions_match_numpy(monkeypatch: pytest.MonkeyPatch, request: Any,
                                   fn: Callable[..., Any],
                                   args_of: Callable[[np.ndarray], tuple[Any, ...]],
                                   dynamic: bool, parallel: bool) -> None:
    if parallel:
        request.getfixturevalue("always_parallel")
    monkeypatch.setattr(runtime_wrapper, "REGION_KERNELS", 2)
    counts: list[int] = []
    split = runtime_wrapper._regions

    def spy(*a: Any, **k: Any) -> Any:
        regions = split(*a, **k)
        counts.append(len(regions))
        return regions

    monkeypatch.setattr(runtime_wrapper, "_regions", spy)
    jf = stax.jit(fn, dynamic=dynamic, threads=2 if parallel else 1)
    rng = np.random.default_rng(7)
    for x in (rng.standard_normal((5, 7)), rng.standard_normal((7, 5)).T,
              rng.standard_normal((9, 6))[::2]):
        for _ in range(2):  # cold, then warm
            assert_matches(jf(*args_of(x.copy())), fn(*args_of(x.copy())))
    assert counts and max(counts) > 1, counts  # the bound split the program's kernels
