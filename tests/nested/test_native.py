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
    f = sn.jit(lambda a, b: sn.map(lambda u, v: u + v, a, b))
    x = np.array([1.0, 2.0, 3.0])
    f(x, x)
    assert_matches(f(x, x), x + x)
    assert_matches(f(x, x), x + x)
    (programs,) = f.programs.values()
    assert programs.tapes[0][0]._native is None  # (one object passed twice: not translated)


def _softmax(r):
    def row(v):
        e = np.exp(v - sn.reduce(np.maximum, -np.inf, v))
        return e / sn.reduce(np.add, 0.0, e)
    return sn.map(row, r)


def _spmv(cols, vals, x):
    return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                  cols, vals)


def _row_max(r):
    return sn.map(np.max, r)  # a guard on empty rows (NumPy raises for them)


def _scaled_rows(r, w):
    return sn.map(lambda row, s: sn.map(lambda v: v * s, row), r, w)


def _ragged(lengths: list[int], rng: np.random.Generator, dtype: Any = np.float64) -> sn.Ragged:
    return sn.Ragged(rng.standard_normal(sum(lengths)).astype(dtype), lengths)


def _lengths_of(x: Any) -> list[int]:
    return x.lengths.tolist() if isinstance(x, sn.Ragged) else [len(x)]


RAGGED_PROGRAMS: list[tuple[Callable[..., Any], Callable[..., tuple[Any, ...]]]] = [
    (_softmax, lambda ls, rng: (_ragged(ls, rng),)),
    (_row_max, lambda ls, rng: (_ragged([max(n, 1) for n in ls], rng),)),
    (_scaled_rows, lambda ls, rng: (_ragged(ls, rng), rng.standard_normal(len(ls)))),
    (_spmv, lambda ls, rng: (sn.Ragged(rng.integers(0, 7, sum(ls)), ls), _ragged(ls, rng),
                             rng.standard_normal(7))),
]


@pytest.mark.parametrize("fn, make", RAGGED_PROGRAMS)
def test_c_replay_of_ragged_arguments(fn: Callable[..., Any], make: Callable[..., Any],
                                      calls: list[bool]) -> None:
    rng = np.random.default_rng(11)
    f = sn.jit(fn)
    for lengths in ([3, 0, 5, 1], [2, 4, 0, 3], [1, 1, 1, 1], [0, 6, 2, 2, 0, 1, 7],
                    [0, 0, 0], [], [40000, 3, 0, 12]):
        args = make(lengths, rng)
        got = f(*args)
        assert_same(got, sn.interpret(fn, *args))
        for g in got if isinstance(got, tuple) else (got,):
            for a in (g.values, g.lengths) if isinstance(g, sn.Ragged) else (g,):
                assert not any(np.may_share_memory(a, p) for x in args
                               for p in ((x.values, x.lengths) if isinstance(x, sn.Ragged)
                                         else (x,)))
    # the C call returned for the calls like the recorded one (new lengths, same guards);
    # empty inputs and the unbalanced one differ in a guard: they bail (and record their own)
    assert sum(calls) >= 3


def test_c_replay_of_ragged_arguments_bails_where_a_step_differs(calls: list[bool]) -> None:
    rng = np.random.default_rng(12)
    f = sn.jit(_scaled_rows)
    r, w = _ragged([2, 0, 3], rng), rng.standard_normal(3)
    f(r, w)
    assert_same(f(r, w), sn.interpret(_scaled_rows, r, w))
    assert calls == [True]
    calls.clear()

    class Rows(sn.Ragged):
        __slots__ = ()
    odd = [(Rows(r.values, r.lengths), w),  # not exactly a Ragged: its parts are read in Python
           (r, w.astype(">f8")),  # not in native byte order
           (r, np.repeat(w, 2)[::2])]  # strided: made contiguous
    for args in odd:
        assert_same(f(*args), sn.interpret(_scaled_rows, *args))
    assert not any(calls)
    # lengths that differ from the other argument's: the guard fails, the error is raised
    with pytest.raises(ValueError, match="different lengths"):
        f(r, rng.standard_normal(4))
    with pytest.raises(ValueError, match="different lengths"):
        sn.interpret(_scaled_rows, r, rng.standard_normal(4))
    g = sn.jit(_spmv)
    cols, vals = sn.Ragged(np.array([0, 2, 1]), [1, 0, 2]), _ragged([1, 0, 2], rng)
    x = rng.standard_normal(3)
    for _ in range(2):
        assert_same(g(cols, vals, x), sn.interpret(_spmv, cols, vals, x))
    calls.clear()
    with pytest.raises(ValueError, match="different lengths"):
        g(cols, _ragged([1, 1, 1], rng), x)
    with pytest.raises(IndexError, match="out of bounds"):  # a column past x: the kernel's
        g(sn.Ragged(np.array([0, 5, 1]), [1, 0, 2]), vals, x)  # check fails, C bails
    assert calls == [False, False]
    assert_same(g(cols, vals, x), sn.interpret(_spmv, cols, vals, x))
    assert calls[-1]
    h = sn.jit(_row_max)
    for _ in range(2):
        assert_same(h(r := _ragged([2, 1], rng)), sn.interpret(_row_max, r))
    calls.clear()
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        h(_ragged([2, 0, 1], rng))  # an empty row: the guard differs, the C call bails
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        sn.interpret(_row_max, _ragged([2, 0, 1], rng))
    assert calls == [False]
