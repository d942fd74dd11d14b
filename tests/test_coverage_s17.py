"""Coverage fixes of session 17 (HUNT10, from tests/corpus/test_corpus_wild15.py), each tested
against NumPy computed in the test. Graph breaks are allowed here (they run NumPy); wrong
results, wrong types and crashes are not."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning


def same(got: Any, want: Any) -> None:
    """Equal structure, types (a 0-d ndarray is not a NumPy scalar), dtypes and values."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got, want)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_array_equal(got, want)
    else:
        assert got == want, (got, want)


def run(fn, *args: Any) -> set[str]:  # type: ignore[no-untyped-def]
    """`fn` under stax.jit, twice (the second call warm), equals NumPy's on copies; the graph
    breaks met."""
    jitted = stax.jit(fn)
    breaks: set[str] = set()
    for _ in range(2):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fn(*copies)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = jitted(*args)
        breaks |= {str(w.message) for w in caught if w.category is GraphBreakWarning}
        same(got, want)
    return breaks


WORDS = np.array(["apple", "Banana", "cherry", "fig"])
DAYS = np.array(["2024-01-31", "2024-03-01", "2023-12-25"], dtype="datetime64[D]")
RECORDS = np.array([(1, 2.5), (0, -1.0), (1, 4.0)], dtype=[("id", "i4"), ("x", "f8")])


@pytest.mark.parametrize("arg", [WORDS, WORDS[::-2], WORDS[:0], np.array("kiwi"), DAYS,
                                 DAYS[::-1], RECORDS, np.array([b"ab", b"c"]),
                                 np.array([1, "a"], dtype=object)], ids=str)
def test_argument_of_a_dtype_kernels_never_compute_in(arg: np.ndarray) -> None:
    """[HUNT10] An argument of strings, dates, records or objects was refused with a TypeError
    (`np.char.upper(w)`, `d.astype("datetime64[M]")`, `a["x"]`): the call now runs in NumPy
    with a graph break naming the dtype (strict=True keeps the TypeError)."""
    def fn(a, x):
        return a.copy(), a[..., ::-1] if a.ndim else a[()], a.shape, x * 2
    breaks = run(fn, arg, np.arange(3.0))
    assert any(f"dtype {arg.dtype}" in b for b in breaks), breaks
    with pytest.raises(TypeError, match="not supported"):
        stax.jit(fn, strict=True)(arg, np.arange(3.0))


def test_strings_dates_and_records_in_user_code() -> None:
    """[HUNT10] What such arguments meet in ordinary programs, against NumPy."""
    run(lambda w, v: (np.char.upper(w), np.char.str_len(w) * v, w[v > 0]), WORDS,
        np.array([1.0, -1.0, 2.0, 0.0]))
    run(lambda d: (d.astype("datetime64[M]"), np.diff(np.sort(d)).astype(int)), DAYS)
    run(lambda a: (a["x"] * 2, np.sort(a, order="x")["id"], a[a["id"] == 1]), RECORDS)


def test_values_of_such_dtypes_made_inside_the_function() -> None:
    """[HUNT10] A string, date or timedelta value made from a traced array (`x.astype(str)`,
    `t0 + secs.astype("timedelta64[s]")`) raised TypeError while tracing: a graph break."""
    secs = np.array([0.0, 3600.0, 5400.0])

    def stamps(s):
        t = np.datetime64("2024-03-10T00:00") + s.astype("timedelta64[s]")
        return t, np.diff(t) / np.timedelta64(1, "m"), (s * 2).astype(str)
    run(stamps, secs)
    run(stamps, secs[::-1])
    run(stamps, secs[:0])
    run(lambda x: (np.round(x, 1).astype(str), np.char.add("v=", x.astype("U8"))),
        np.array([[1.25, -2.0]]).T)
