"""[NPB3] A Python loop whose body has a graph break and uses its Python loop index (a scalar
`x * (i / n)`, a row `m[i]`, a store `out[i] = v`): the segments differ per iteration only in
those Python values, which become inputs of one compiled segment (it ran in NumPy after
MAX_SITE_SEGMENTS new segments at the break). Results vs NumPy."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.frontend.breaks import GraphBreakWarning


def in_numpy(jf: Any, args: tuple[Any, ...]) -> bool:
    return any("runs in NumPy from now on" in str(b) for b in jf.breaks.get(jf.key(args), []))


def run(fn: Any, calls: list[tuple[Any, ...]], rtol: float | None = None) -> Any:
    """`stax.jit(fn)` on each call's arguments (copies), each result vs NumPy's."""
    jf = stax.jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for args in calls:
            assert_matches(jf(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]),
                           fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]),
                           rtol=rtol)
    return jf


def ramp(x: Any, n: int) -> Any:
    """Python scalars made of the loop index reach the segment of each iteration's break."""
    total = np.zeros(x.shape, np.float64)
    for i in range(n):
        y = x * (i / n) - 0.25 * i + (1j * i if np.iscomplexobj(x) else 0)
        if np.abs(y).sum() > 0.3 * x.size:
            total += y.real
        else:
            total -= 1
    return total


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
def test_scalars_of_the_loop_index_are_segment_inputs(dtype: str) -> None:
    x = make_array((80, 60), dtype, seed=1)  # > SMALL_ARRAY: worth a compiled segment
    calls = [(x, 9), (x, 9),  # the second replays the first's tape
             (make_array((80, 60), dtype, seed=2) * 3, 9),  # other branches: guards fail
             (x.T, 9), (make_array((0, 3), dtype), 9), (np.asarray(x[0, 0]), 7)]  # 0-d
    jf = run(ramp, calls, rtol=1e-5 if dtype == "float32" else None)
    assert not in_numpy(jf, (x, 9))
    assert jf.segment_counts[jf.key((x, 9))][2] >= 1  # a warm call replayed the tape


def rows(m: Any, limit: Any) -> Any:
    """Rows read (`m[i]`, `m[:, i]`) and stored (`out[i] = v`, `grid[i, :] = v`) at the
    loop index, with a break on each row."""
    out = np.zeros(m.shape[0], m.dtype)
    grid = np.zeros((m.shape[0], 3), m.dtype)
    for i in range(m.shape[0]):
        row = m[i] * 2
        if row.max() > limit:
            out[i] = row.sum()
            grid[i, :] = row[-3:]
        else:
            out[-1 - i] += m[:, i % m.shape[1]].sum()
    return out, grid


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_rows_at_the_loop_index_are_segment_inputs(dtype: str) -> None:
    m = make_array((8, 5000), dtype, seed=3, low=-5, high=5)  # rows > SMALL_ARRAY
    calls = [(m, 2), (m, 2), (m[::-1, ::2], 9), (np.asfortranarray(m), 8),
             (make_array((0, 6), dtype), 2)]
    jf = run(rows, calls)
    assert not in_numpy(jf, (m, 2))
    assert jf.segment_counts[jf.key((m, 2))][2] >= 1


def test_a_loop_over_small_arrays_keeps_its_constants() -> None:
    """A segment of small arrays costs about a call: the loop keeps its constants, and past
    MAX_SITE_SEGMENTS runs in NumPy (as a store into a large matrix row by row does)."""
    m = make_array((70, 6), "float64", seed=4)
    jf = run(rows, [(m, 2)])
    assert in_numpy(jf, (m, 2))


def test_a_break_outside_a_loop_keeps_its_constants() -> None:
    """Lifting is for a break reached again in one call; a straight-line function compiles
    its segments with their constants, and values stay NumPy's (NaN and inf too)."""
    def fn(x: Any) -> Any:
        y = x ** 2 + 1.5
        if np.isnan(y).any():
            y = np.nan_to_num(y, posinf=7.0)
        return y[1] * 3, y

    x = np.array([1.0, np.inf, np.nan, -2.0])
    run(fn, [(x,), (x[::-1],), (np.zeros(4),)])
