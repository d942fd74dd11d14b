"""Session 18, lead: selections reduced inside a Python loop's body (npbench's azimint_naive:
`res[i] = data[(r1 <= radius) & (radius < r2)].mean()`) are not compacted per iteration: the
loop recognizer no longer records a guard `d1 == d0` between two iterations' data-dependent
sizes of a temporary (`values = data[mask]`, rebound each iteration), so the body's selections
take the masked-reduction rewrite as a program's do (`stax.masked_reductions`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import stax
from stax.runtime import compaction


def azimint(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask = np.logical_and(r1 <= radius, radius < r2)
        values = data[mask]
        res[i] = values.mean()
    return res


def binned_stats(x, edges):
    out = np.zeros((len(edges) - 1, 3), x.dtype)
    for i in range(len(edges) - 1):
        sel = x[(x >= edges[i]) & (x < edges[i + 1])]
        out[i, 0] = sel.sum()
        out[i, 1] = sel.max(initial=-1.0)
        out[i, 2] = np.count_nonzero(sel > 0.5)
    return out


def kept_after_loop(x, n):
    total = 0.0
    for i in range(n):
        values = x[x > i * 0.1]
        total += values.sum()
    return total, values


def _pairs(got, expected):
    """A result and NumPy's, paired result by result (one result, or a tuple of them)."""
    return zip(got if isinstance(got, tuple) else (got,),
               expected if isinstance(expected, tuple) else (expected,), strict=True)


def _same(got, expected, rtol: float = 1e-12) -> None:
    for g, e in _pairs(got, expected):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=rtol, equal_nan=True)


RTOL = {np.float64: 1e-12, np.float32: 1e-5}  # float32 sums: another summation order


def _counting(monkeypatch) -> list[int]:
    calls = [0]
    select = compaction.select

    def counted(*args, **kwargs):
        calls[0] += 1
        return select(*args, **kwargs)

    monkeypatch.setattr(compaction, "select", counted)
    return calls


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["c", "strided"])
def test_azimint_no_compaction(monkeypatch, dtype, layout) -> None:
    rng = np.random.default_rng(0)
    data, radius = (rng.random(4000).astype(dtype) for _ in range(2))
    if layout == "strided":
        data, radius = np.repeat(data, 2)[::2], np.repeat(radius, 2)[::2]
    data[7] = np.nan  # a NaN selected in its bin propagates to that bin only
    f = stax.jit(azimint)
    calls = _counting(monkeypatch)
    for npt in (10, 10, 37):  # cold, warm, another bin count
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _same(f(data, radius, npt), azimint(data, radius, npt), RTOL[dtype])
    assert calls[0] == 0


def test_empty_bins_warn_as_numpy() -> None:
    data = np.linspace(0.0, 1.0, 50)
    radius = np.concatenate([np.full(25, 0.1), np.full(25, 0.9)])  # most bins empty
    f = stax.jit(azimint)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = f(data, radius, 8)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = azimint(data, radius, 8)
    _same(got, expected)
    assert np.isnan(got).sum() >= 5
    assert "Mean of empty slice." in {str(w.message) for w in ours}
    assert "Mean of empty slice." in {str(w.message) for w in theirs}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_several_reductions_of_one_selection(monkeypatch, dtype) -> None:
    x = np.random.default_rng(1).random(3000).astype(dtype)
    x[::97] = np.inf
    edges = np.array([0.0, 0.2, 0.5, 0.5, 0.9, 2.0], dtype)  # an empty bin, an inf bin
    f = stax.jit(binned_stats)
    calls = _counting(monkeypatch)
    for _ in range(2):
        _same(f(x, edges), binned_stats(x, edges), RTOL[dtype])
    assert calls[0] == 0


@pytest.mark.parametrize("n", [1, 4])
def test_selection_read_after_the_loop_is_kept(n) -> None:
    x = np.random.default_rng(2).random(200)
    f = stax.jit(kept_after_loop)
    for _ in range(2):
        got, expected = f(x, n), kept_after_loop(x, n)
        assert np.isclose(got[0], expected[0], rtol=1e-12)
        np.testing.assert_array_equal(got[1], expected[1])


def test_empty_input() -> None:
    f = stax.jit(azimint)  # radius.max() of an empty array: NumPy's ValueError on both sides
    with pytest.raises(ValueError, match="zero-size array"):
        azimint(np.zeros(0), np.zeros(0), 3)
    with pytest.raises(ValueError, match="zero-size array"):
        f(np.zeros(0), np.zeros(0), 3)


SELECTED_REDUCTIONS = [
    lambda x: x[x > 2].max(initial=-1.0),
    lambda x: np.min(x[x > 2], initial=5),
    lambda x: (x[x > 2].max(initial=-1.0), x[x > 2].min()),  # the second raises when empty
    lambda x: (x[x > 2].max(initial=-1.0), x[x > 2]),  # the selection returned: compacted
    lambda x: x[x > 2].max(),
    lambda x: np.argmax(x[x > 2]),
]


@pytest.mark.parametrize("k", range(len(SELECTED_REDUCTIONS)))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_initial_of_an_empty_selection(k, dtype) -> None:
    """A max/min with initial= of a selection that may be empty gives `initial` (it raised
    NumPy's "no identity" error); one without raises NumPy's own words."""
    fn = SELECTED_REDUCTIONS[k]
    f = stax.jit(fn)
    rng = np.random.default_rng(k)
    for x in (rng.random(100) * 3, rng.random(100), np.zeros(0), np.array([np.nan, 3.0])):
        x = x.astype(dtype)
        try:
            expected = fn(x)
        except ValueError as e:  # (which of two reductions of one selection names itself
            # may differ: each checks the selection's count where the selection is made)
            with pytest.raises(ValueError, match=str(e).replace("minimum", "m..imum")):
                f(x)
            continue
        got = f(x)
        for g, e in _pairs(got, expected):
            assert np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_array_equal(g, e)


def _mutate_then_invert(x, a):
    x[x > 0.5] = x[x > 0.5] ** 2 + 1  # (written in the caller's array where no extern runs)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        return None


def _mutate_then_select(x, y):
    x[x > 0.5] *= 2
    return y[y > 0.99].sum(), x[x > 1.9]


@pytest.mark.parametrize("fn, make", [
    (_mutate_then_invert, lambda rng: (rng.random(5), np.zeros((2, 2)))),  # singular
    (_mutate_then_invert, lambda rng: (rng.random(5), np.eye(2))),
    (_mutate_then_select, lambda rng: (rng.random(100), rng.random(100))),
    (_mutate_then_select, lambda rng: (rng.random(100), np.zeros(100))),  # nothing selected
])
def test_calls_rerun_in_numpy_read_unchanged_arguments(fn, make) -> None:
    """A call that reruns in NumPy mid-program (a NumPy routine raised, a selection of 0 or 1
    elements) must find its mutated arguments as they were: a program with an extern call
    never writes an argument's new value in place (`stax.api._donated`)."""
    f = stax.jit(fn)
    rng = np.random.default_rng(3)
    for _ in range(3):
        ours = make(rng)
        theirs = tuple(a.copy() for a in ours)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, expected = f(*ours), fn(*theirs)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
        for g, e in _pairs(got, expected):
            assert (g is None) == (e is None)
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=1e-12)
