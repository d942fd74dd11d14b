"""Stepped row slices and replicate of arrays, against the interpreter and NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches
from hypothesis import given, settings
from hypothesis import strategies as st

import stax.nested as sn
from nested.helpers import check

ROWS = sn.Ragged.from_list([[1, 2, 3, 4, 5], [], [6], [7, 8], [9, 10, 11, 12, 13, 14, 15]])
BOUNDS = st.one_of(st.none(), st.integers(-9, 9))
_SLICED = {}


def _sliced(lo: int | None, hi: int | None, step: int) -> sn.Jitted:
    """One jitted function per slice (its bounds and step are constants of the program)."""
    key = (lo, hi, step)
    if key not in _SLICED:
        _SLICED[key] = sn.jit(lambda x: sn.map(lambda r: r[lo:hi:step], x))
    return _SLICED[key]


@settings(max_examples=25, deadline=None)
@given(lo=BOUNDS, hi=BOUNDS, step=st.sampled_from([1, 2, 3, -1, -2, -4]))
def test_stepped_slices_follow_python(lo: int | None, hi: int | None, step: int) -> None:
    got = _sliced(lo, hi, step)(ROWS)
    want = [row[lo:hi:step] for row in ROWS]
    assert_matches(got.lengths, np.array([len(w) for w in want]))
    assert_matches(got.values, np.concatenate(want))


def test_stepped_slices_with_traced_bounds_and_regular_rows() -> None:
    starts = np.array([4, 0, -1, 1, -3])
    check(lambda x, a: sn.map(lambda r, i: r[i::-2], x, a), ROWS, starts)
    check(lambda x, a: sn.map(lambda r, i: sn.reduce(np.add, 0, r[:i:2]), x, a), ROWS, starts)
    m = np.arange(24.0).reshape(4, 6)
    assert_matches(sn.jit(lambda a: sn.map(lambda r: r[::-2], a))(m), m[:, ::-2])
    assert_matches(sn.jit(lambda a: sn.map(lambda r: r[1::4], a))(m), m[:, 1::4])
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        sn.jit(lambda x: sn.map(lambda r: r[::0], x))(ROWS)


def test_replicate_arrays() -> None:
    v = np.array([1.5, -2.0, 3.0])
    assert_matches(sn.jit(lambda a: sn.replicate(3, a))(v), np.tile(v, (3, 1)))
    check(lambda a: sn.replicate(2, a), v)
    # n copies of each row, reduced: n * sum(row); and each copy's maximum.
    ns = np.array([2, 0, 1, 3, 4])
    check(lambda x, ns: sn.map(lambda r, n: sn.reduce(np.add, 0, sn.map(
        lambda c: c.sum(), sn.replicate(n, r))), x, ns), ROWS, ns)
    check(lambda x, ns: sn.map(lambda r, n: sn.map(lambda c: c.sum() * 2, sn.replicate(n, r)),
                               x, ns), ROWS, ns)
    with pytest.raises(NotImplementedError, match="replicate of arrays of arrays"):
        sn.jit(lambda x: sn.map(lambda r: sn.replicate(2, sn.map(sn.iota, r)), x))(
            sn.Ragged.from_list([[1, 2], [3]]))
