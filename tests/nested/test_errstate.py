"""Error flags of segmented kernels follow `np.errstate` as NumPy does (issue 12; the main
kernels' in tests/test_errstate.py): integer // and % by zero, float -> integer casts of
NaN/inf, an integer to a negative power, in every kind of kernel (maps, segmented maps,
reductions, scans, fused chains), on the flattening call, on Python replays and through the C
replay (which bails to the Python replay when a kernel set a flag), compared with the
reference interpreter (NumPy run one iteration at a time) and with NumPy on flat arrays."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches
from test_errstate import observe

import stax.nested as sn
from nested.helpers import assert_same
from nested.test_native import calls  # noqa: F401 - a fixture: which C replays returned
from stax.nested import native


def _divide(ns, ds):
    return sn.map(lambda n, d: n // d, ns, ds)


def _remainder_and_cast(ns, ds, xs):
    return sn.map(lambda n, d, x: (n % d, x.astype(np.int32)), ns, ds, xs)


def _rows_divided(rows, ds):  # a segmented map: d is replicated over its row
    return sn.map(lambda row, d: sn.map(lambda x: x // d, row), rows, ds)


def _reduce_of_quotients(rows):
    return sn.map(lambda row: sn.reduce(np.add, 0, sn.map(lambda x: 100 // x, row)), rows)


def _scan_of_remainders(rows):
    return sn.map(lambda row: sn.scan(np.add, 0, sn.map(lambda x: 7 % x, row)), rows)


def _divided_by_row_sum(rows):  # a fused chain: the sum, then a map reading it per segment
    def body(row):
        total = sn.reduce(np.add, 0, row)
        return sn.map(lambda x: x // total, row)
    return sn.map(body, rows)


def _iota_quotients(ns):  # a program the C replay runs
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: 60 // (i - 2), sn.iota(n))),
                  ns)


def _sum_of_casts(rows):
    return sn.map(lambda row: sn.reduce(np.add, 0, sn.map(lambda x: x.astype(np.int64), row)),
                  rows)


NS = np.array([7, -3, 0, 5, 9], np.int64)
DS = np.array([2, 0, 0, 1, -4], np.int64)
FLOATS = np.array([1.5, np.nan, np.inf, -2.0, 3.0])
ROWS = sn.Ragged(np.array([4, 0, 2, -6, 5, 0, 0, 3, 1], np.int64), np.array([3, 0, 2, 4]))
SUMS_TO_ZERO = sn.Ragged(np.array([4, 0, 2, -6, 5, 0, 0, 3, 1], np.int64),
                         np.array([4, 0, 1, 4]))  # the first row sums to 0
FLOAT_ROWS = sn.Ragged(np.array([1.5, np.nan, 2.0, -np.inf, 7.0]), np.array([2, 0, 3]))
CASES: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (_divide, (NS, DS)),
    (_remainder_and_cast, (NS, DS, FLOATS)),
    (_rows_divided, (ROWS, np.array([2, 1, 0, 3]))),
    (_reduce_of_quotients, (ROWS,)),
    (_scan_of_remainders, (ROWS,)),
    (_divided_by_row_sum, (SUMS_TO_ZERO,)),
    (_sum_of_casts, (FLOAT_ROWS,)),
]


def _flat(run: Callable[..., Any]) -> Callable[..., Any]:
    """`run` with a Ragged result as its values (what `observe` compares)."""
    def flat(*args: Any) -> Any:
        out = run(*args)
        return out.values if isinstance(out, sn.Ragged) else out
    return flat


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call", "log", "print"])
@pytest.mark.parametrize(("fn", "args"), CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_flags_follow_errstate(fn: Callable[..., Any], args: tuple[Any, ...], mode: str,
                               capfd: pytest.CaptureFixture[str]) -> None:
    want = observe(_flat(lambda *a: sn.interpret(fn, *a)), args, mode, capfd)
    assert mode in ("ignore", "raise") or any(want[1:])  # the case does raise a flag
    jitted = _flat(sn.jit(fn))
    for _ in range(3):  # flattened, then replayed (the C replay bails: the Python one reports)
        assert observe(jitted, args, mode, capfd) == want


def test_same_reports_as_numpy_on_flat_arrays(capfd: pytest.CaptureFixture[str]) -> None:
    for mode in ("ignore", "warn", "raise"):
        want = observe(lambda n, d, x: (n % d, x.astype(np.int32)), (NS, DS, FLOATS), mode,
                       capfd)
        assert observe(sn.jit(_remainder_and_cast), (NS, DS, FLOATS), mode, capfd) == want


@pytest.mark.parametrize("enabled", [True, False])
def test_replays_report_each_call_and_clean_calls_stay_quiet(
        enabled: bool, calls: list[bool], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(native, "ENABLED", enabled)
    f = sn.jit(_iota_quotients)
    clean = (np.array([2, 1, 0, 2]),)
    bad = (np.array([2, 7, 0, 3]),)  # 60 // 0 at i = 2
    want = sn.interpret(_iota_quotients, *clean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all
        for _ in range(3):
            assert_same(f(*clean), want)
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in floor_divide"):
            got = f(*bad)
        with np.errstate(divide="ignore"):
            assert_same(got, sn.interpret(_iota_quotients, *bad))
        with np.errstate(divide="raise"), pytest.raises(
                FloatingPointError, match="divide by zero encountered in floor_divide"):
            f(*bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(f(*clean), want)
    if enabled:  # the clean replays ran in C; each flagged one bailed to the Python replay
        assert True in calls and calls[-1] is True and False in calls
    else:
        assert not calls
    # one program recorded (a call that raised was flattened again, and recorded nothing)
    assert f.cache_info().compiles == 1 and len(f.programs) == 1


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.uint64])
def test_integer_division_by_zero_of_every_width(dtype: type) -> None:
    ns = np.array([100, 7, 0, 3], dtype)
    ds = np.array([0, 2, 0, 3], dtype)
    with np.errstate(divide="ignore"):
        want = (ns // ds, ns % ds)
    f = sn.jit(lambda a, b: sn.map(lambda n, d: (n // d, n % d), a, b))
    for _ in range(2):
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            f(ns, ds)
        with np.errstate(divide="ignore"):
            got = f(ns, ds)
        for g, w in zip(got, want, strict=True):
            assert_matches(g, w)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_casts_of_nan_inf_and_out_of_range_give_numpy_values(dtype: type) -> None:
    xs = np.array([1.5, np.nan, np.inf, -np.inf, -1.0, 300.0, 3e10, -7.9])
    with np.errstate(invalid="ignore"):
        want = xs.astype(dtype)
    f = sn.jit(lambda a: sn.map(lambda x: x.astype(dtype), a))
    with np.errstate(invalid="ignore"):
        assert_matches(f(xs), want)
    with np.errstate(invalid="raise"), pytest.raises(
            FloatingPointError, match="invalid value encountered in cast"):
        f(xs)
    with np.errstate(invalid="ignore"):  # in range: no flag, the same values
        assert_matches(f(xs[[0, 7]]), xs[[0, 7]].astype(dtype))


def test_integer_to_a_negative_power_raises_numpy_error() -> None:
    fn = sn.jit(lambda a, b: sn.map(lambda x, y: x ** y, a, b))
    xs, ys = np.array([2, 3, 4], np.int64), np.array([3, -1, 0], np.int64)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        sn.interpret(lambda a, b: sn.map(lambda x, y: x ** y, a, b), xs, ys)
    for _ in range(2):
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            fn(xs, ys)
    assert_matches(fn(xs, np.array([3, 0, 2])), np.array([8, 1, 16]))
