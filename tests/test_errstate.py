"""Kernel error flags follow `np.errstate` as NumPy's ufuncs do: every mode (ignore, warn,
raise, call, log, print) of the `divide` and `invalid` categories, on first and warm calls, in
specialized, shape-generic and loop programs, compared with the same function run by NumPy."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import stax


def floor_divide(a, b):
    return a // b


def remainder_and_cast(a, b, x):
    return a % b, x.astype(np.int32)


def reciprocal(a):
    return np.reciprocal(a) + 1


def in_a_loop(a, b):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] // b[i] + out[i - 1]
    return out


INTS = np.array([7, -3, 0, 5], np.int64)
ZEROS = np.array([2, 0, 0, 1], np.int64)
FLOATS = np.array([1.5, np.nan, np.inf, -2.0])
CASES: list[tuple[Callable, tuple]] = [
    (floor_divide, (INTS, ZEROS)),
    (remainder_and_cast, (INTS, ZEROS, FLOATS)),
    (reciprocal, (ZEROS,)),
    (in_a_loop, (INTS, ZEROS)),
]


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)


def observe(fn: Callable, args: tuple, mode: str, capfd) -> tuple:
    """What a call does under `np.errstate(all=mode)`: its result or exception, the warnings,
    the handler's calls (their error types; NumPy also passes the status bits of the ufunc
    call) or log lines, and what it printed; each as a set (NumPy reports once per ufunc call,
    in a loop once per iteration, a kernel once per call)."""
    calls: list[str] = []
    log = Log()
    handler = {"call": lambda errtype, bits: calls.append(errtype), "log": log}.get(mode)
    capfd.readouterr()
    with np.errstate(all=mode, call=handler), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = fn(*args)
            result: object = [np.asarray(r).tolist() for r in
                              (got if isinstance(got, tuple) else (got,))]
        except FloatingPointError as err:
            result = ("FloatingPointError", str(err).replace("scalar ", ""))
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    printed = capfd.readouterr().err.splitlines()
    # NumPy says "scalar floor_divide" of a NumPy scalar's operator (the loop's a[i] // b[i])
    reports = ({text.replace("scalar ", "") for text in texts}
               for texts in (messages, calls, log.lines, printed))
    return (result, *reports)


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call", "log", "print"])
@pytest.mark.parametrize(("fn", "args"), CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_flags_follow_errstate(fn: Callable, args: tuple, mode: str, capfd) -> None:
    want = observe(fn, args, mode, capfd)
    assert mode in ("ignore", "raise") or any(want[1:])  # the case does raise a flag
    for dynamic in (False, True):
        jitted = stax.jit(fn, dynamic=dynamic)
        for _ in range(2):  # the first call compiles, the second takes the warm path
            assert observe(jitted, args, mode, capfd) == want
