"""The C replay of recorded programs (stax.nested.native, fastcall's `replay`): a warm call
returns what the Python replay (and the interpreter) would, bails to the Python replay
whenever a step would differ (conversions that copy, guards, bad ranges), and raises the
same errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax.nested as sn
from nested.helpers import assert_same
from stax.nested import native
from stax.runtime.fast import fastcall

pytestmark = pytest.mark.skipif(fastcall() is None, reason="no fast call module")


def _sum_iota(ns):
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)


def _max_square(ns):
    return sn.map(lambda n: sn.reduce(np.maximum, -1, sn.map(lambda i: i * i - 3 * i,
                                                              sn.iota(n))), ns)


def _sqrt_sums(ns):
    return sn.map(lambda n: sn.reduce(np.add, 0.0, sn.map(lambda i: np.sqrt(i + 0.5),
                                                          sn.iota(n))), ns)


def _two(x):
    return sn.map(lambda v: v * 2 + 1, x), sn.map(lambda v: v - 1, x)


PROGRAMS: list[tuple[Callable[..., Any], bool]] = [  # (program, returns only fresh arrays)
    (_sum_iota, True), (_max_square, True), (_sqrt_sums, True), (_two, True),
    (lambda ns: sn.map(sn.iota, ns), False),  # a Ragged whose lengths are the argument's
    (lambda x: sn.map(lambda v: v, x), False),  # the argument itself: copied
]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per C replay made from now on (in any program): True when it returned, False when it
    bailed to the Python replay."""
    made: list[bool] = []
    translate = native.translate

    def counted_translate(t: Any) -> native.Native | None:
        found = translate(t)
        if found is None:
            return None
        program = found.program

        def counted(frame: Any, leaves: list[Any]) -> Any:
            out = program(frame, leaves)
            made.append(out is not None)
            return out
        return native.Native(counted, found.fresh)
    monkeypatch.setattr(native, "translate", counted_translate)
    return made


def _check(fn: Callable[..., Any], x: np.ndarray, f: sn.Jitted) -> Any:
    got = f(x)
    assert_same(got, sn.interpret(fn, x))
    for g in got if isinstance(got, tuple) else (got,):
        for a in (g.values, g.lengths) if isinstance(g, sn.Ragged) else (g,):
            assert not np.may_share_memory(a, x)
    return got


@pytest.mark.parametrize("fn, fresh", PROGRAMS)
def test_c_replay_matches_the_interpreter(fn: Callable[..., Any], fresh: bool,
                                          calls: list[bool]) -> None:
    rng = np.random.default_rng(5)
    f = sn.jit(fn)
    _check(fn, np.array([3, 0, 5, 1]), f)  # flattened
    _check(fn, np.array([3, 0, 5, 1]), f)  # replayed: the C form is made, and runs
    assert calls == [True]
    (programs,) = f.programs.values()
    assert programs.tapes[0][0].fresh is fresh
    calls.clear()
    inputs = [np.array([7, 0, 0, 2]), np.array([0]), np.zeros(0, np.int64), np.array([1]),
              rng.integers(0, 50, 20000),  # results above the recycling size (Frame)
              rng.integers(0, 3, 1000)]
    for x in inputs:
        _check(fn, x, f)
    # the C call returned for the inputs like the recorded one (with no rows or no elements a
    # guard differs: it bails, and the call records a program of its own)
    assert sum(calls) >= 3
    first = f(np.array([4, 4]))  # a result the caller keeps is not recycled by later calls
    kept = [a.copy() for a in (first if isinstance(first, tuple) else (first,))
            if isinstance(a, np.ndarray)]
    f(np.array([9, 9]))
    for a, b in zip(kept, (first if isinstance(first, tuple) else (first,)), strict=False):
        assert_matches(b, a)


@pytest.mark.parametrize("fn", [_sum_iota, _max_square, _sqrt_sums])
def test_c_replay_bails_to_python_where_a_step_differs(fn: Callable[..., Any],
                                                       calls: list[bool]) -> None:
    f = sn.jit(fn)
    _check(fn, np.array([3, 0, 5]), f)
    _check(fn, np.array([3, 0, 5]), f)
    assert calls == [True]
    calls.clear()
    base = np.array([6, 2, 0, 9, 4, 4])
    odd = [base.astype(np.int32),  # converted to int64 (a copy)
           base.astype(">i8"),  # not in native byte order
           np.repeat(base, 2)[::2],  # strided: made contiguous
           base.astype(np.uint8)]
    for x in odd:
        _check(fn, x, f)
    assert not any(calls)  # each bailed (its result came from the Python replay)
    calls.clear()
    _check(fn, base, f)
    assert calls == [True]
    # a negative length: the range check fails, the call is flattened again and raises
    with pytest.raises(ValueError, match=r"Range 0\.\.1\.\.<-2 is invalid"):
        f(np.array([3, -2, 1]))
    with pytest.raises(ValueError, match=r"Range 0\.\.1\.\.<-1 is invalid"):
        f(np.array([-1]))


def test_c_replay_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "ENABLED", False)
    f = sn.jit(_sum_iota)
    x = np.array([5, 7, 0])
    f(x)
    assert_matches(f(x), np.array([10, 21, 0]))
    assert_matches(f(x), np.array([10, 21, 0]))
    (programs,) = f.programs.values()
    assert programs.tapes[0][0]._native is None


def test_programs_the_c_replay_does_not_know_replay_in_python() -> None:
    r = sn.Ragged.from_list([[1.0, 2.0], [], [3.0]])
    f = sn.jit(lambda r: sn.map(lambda row: sn.reduce(np.add, 0.0, row), r))
    f(r)
    assert_matches(f(r), np.array([3.0, 0.0, 3.0]))
    assert_matches(f(r), np.array([3.0, 0.0, 3.0]))
    (programs,) = f.programs.values()
    assert programs.tapes[0][0]._native is None  # (a Ragged argument: not translated)
