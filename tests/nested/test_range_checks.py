"""The range check of `sn.iota(n)` over an array of n, deferred into the next kernel that reads
the lengths (a count summed in the same pass), and never after anything reads the bounds of the
iota's space: results against the interpreter, bad ranges raise its ValueError on the call that
flattens and on replays (C and Python), whatever runs first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from nested.helpers import assert_same, check


def _sum(ns):
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)


PROGRAMS: dict[str, Callable[..., Any]] = {
    "closed-form sum": _sum,
    # a kernel over the iterations that reads the iota space's bounds (the slice's start)
    "sum plus a slice": lambda ns: sn.map(
        lambda n: sn.reduce(np.add, 0, sn.iota(n)) + sn.reduce(np.add, 0, sn.iota(n)[1:]), ns),
    # the elements themselves: a segreduce and a ragged result use the iota space's layout
    "float sum": lambda ns: sn.map(
        lambda n: sn.reduce(np.add, 0.0, np.sqrt(sn.iota(n) + 0.5)), ns),
    "ragged": lambda ns: sn.map(lambda n: sn.scan(np.add, 0, sn.iota(n)), ns),
    # the check over the rows runs inside the reduction over them
    "total": lambda ns: sn.reduce(np.add, 0, sn.map(
        lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_deferred_iota_checks(name: str) -> None:
    fn = PROGRAMS[name]
    f = sn.jit(fn)
    good = [np.array([5, 7, 0, 3]), np.array([4]), np.array([0, 0]), np.zeros(0, np.int64),
            np.array([2, 9, 1], dtype=np.int32), np.random.default_rng(1).integers(0, 40, 300)]
    for ns in good:
        check(fn, ns, jitted=f)
    for ns, message in ((np.array([4, -3, 2]), r"Range 0\.\.1\.\.<-3 is invalid"),
                        (np.array([-1]), r"Range 0\.\.1\.\.<-1 is invalid"),
                        (np.array([0, -2], dtype=np.int32), r"Range 0\.\.1\.\.<-2 is invalid"),
                        # [FUZZ] the first bad range is named, as by the interpreter
                        (np.array([3, -1, -5, -2]), r"Range 0\.\.1\.\.<-1 is invalid")):
        with pytest.raises(ValueError, match=message):
            sn.interpret(fn, ns)
        for _ in range(2):  # flattened, then after a good call (replays) again
            with pytest.raises(ValueError, match=message):
                f(ns)
            assert_same(f(good[0]), sn.interpret(fn, good[0]))


def test_the_closed_form_sum_reads_the_lengths_once() -> None:
    f = sn.jit(_sum)
    ns = np.array([3, 0, 6])
    result, run = f.run(ns)
    assert_same(result, sn.interpret(_sum, ns))
    rules = [rule for rule, _ in run.rules]
    assert "iota range check deferred" in rules and "check fused into a map" in rules
    assert len(run.kernels) == 1  # the closed form and the count of negative lengths
    f(ns)
    (programs,) = f.programs.values()
    steps = programs.tapes[0][0].summary()
    assert "_iota_lengths" not in steps and steps.count("kernel") == 1
