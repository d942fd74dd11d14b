"""sn.jit flattens once per call signature and replays the recorded program on later calls
(stax/nested/tape.py): results equal the interpreter's on every call, whatever the sizes;
decisions taken from the data are guards (a failed one flattens again); errors are the same
as on a first call."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax.nested as sn
from nested.helpers import assert_same, check
from nested.test_random_programs import row_expr, scalar_expr
from stax.backends.cpu import segmented


def _ragged(rng: np.random.Generator, k: int, mean: int, low: int = 0) -> sn.Ragged:
    lengths = rng.integers(low, 2 * mean + 1, size=k)
    return sn.Ragged(rng.normal(size=int(lengths.sum())), lengths)


def sum_iota(ns: Any) -> Any:
    return sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)


def softmax(x: Any) -> Any:
    def row(r: Any) -> Any:
        e = np.exp(r - r.max())
        return e / e.sum()
    return sn.map(row, x)


def spmv(cols: Any, vals: Any, x: Any) -> Any:
    return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                  cols, vals)


def argmax(x: Any) -> Any:
    def op(a: Any, b: Any) -> Any:
        take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return np.where(take, b[0], a[0]), np.where(take, b[1], a[1])
    return sn.map(lambda r: sn.reduce(op, (-np.inf, -1), (r, sn.iota(sn.length(r)))), x)


def inner(ns: Any, w: Any) -> Any:
    return sn.map(lambda n, s: sn.reduce(np.add, 0.0, sn.map(
        lambda i: np.sqrt(i * s + 1.0), sn.iota(n))), ns, w)


def test_one_flattening_over_many_sizes() -> None:
    """The benchmark workloads: flattened and compiled on the first call only; every call
    (sizes from empty to a few thousand, empty rows) agrees with the interpreter."""
    rng = np.random.default_rng(1)
    jitted = {f: sn.jit(f) for f in (sum_iota, softmax, spmv, argmax, inner)}
    sizes = [5, 1, 0, 7, 300, 2]
    for j, k in enumerate(sizes):
        ns = rng.integers(0, 12, size=k)
        check(sum_iota, ns, jitted=jitted[sum_iota])
        check(inner, ns, rng.uniform(0, 2, size=k), jitted=jitted[inner])
        x = _ragged(rng, k, 6)
        check(argmax, x, jitted=jitted[argmax])
        check(softmax, _ragged(rng, k, 6, low=1), jitted=jitted[softmax])  # rows not empty
        ncols = 1 + j * 5  # the gathered vector's length changes too
        cols = sn.Ragged(rng.integers(0, ncols, size=len(x.values)), x.lengths)
        check(spmv, cols, x, rng.normal(size=ncols), jitted=jitted[spmv])
        if j == 0:
            compiled = segmented._load.cache_info().misses
    assert segmented._load.cache_info().misses == compiled, \
        [f.cache_info() for f in jitted.values()]
    for f in jitted.values():
        info = f.cache_info()
        assert info.calls == 2 * len(sizes), (f.__name__, info)
        assert info.uncached == 0 and f.unreplayable == {}
        assert info.compiles <= 2, (f.__name__, info)  # the empty call decides otherwise
        assert info.replays == info.calls - info.compiles


def test_explain_shows_the_recorded_program() -> None:
    x = sn.Ragged.from_list([[1.0, 2.0], [0.5], [3.0]])
    text = str(sn.explain(softmax, x))
    assert "== Recorded program (replayed by later calls with this signature) ==" in text
    assert "1 kernel launches" in text and "guards re-checked on every call" in text
    branchy = str(sn.explain(lambda x: sn.map(lambda r: sn.reduce(
        lambda a, b: a if a > b else b, -np.inf, r), x), x))
    assert "none: an operator that branches in Python runs in Python" in branchy


def test_signature_decides_the_program() -> None:
    f = sn.jit(lambda x, c: sn.map(lambda r: r.sum() * c, x))
    a = sn.Ragged.from_list([[1, 2], [3]])
    b = sn.Ragged.from_list([[1, 2, 3], [], [4]])
    check(f.fn, a, 2, jitted=f)
    check(f.fn, b, 2, jitted=f)
    assert f.cache_info().compiles == 1
    check(f.fn, b, 3, jitted=f)  # a scalar argument is a constant of the program
    check(f.fn, sn.Ragged.from_list([[1.5], [2.5, 1.0]]), 2, jitted=f)  # another dtype
    assert f.cache_info().compiles == 3
    assert len(f.programs) == 3
    check(f.fn, a, float("nan"), jitted=f)
    check(f.fn, b, float("nan"), jitted=f)  # another NaN object: the same signature
    assert f.cache_info().compiles == 4


def test_guards_follow_the_data() -> None:
    """A branch every iteration takes, then a mixed mask, then the other branch; uniform and
    irregular trip counts: each call correct, a changed decision flattens again."""
    def f(ns: Any) -> Any:
        return sn.map(lambda n: sn.cond(n > 2, lambda: sn.reduce(np.add, 0, sn.iota(n)),
                                        lambda: n * 10), ns)
    g = sn.jit(f)
    for ns in ([3, 4], [5, 6, 7], [1, 4, 0], [9, 1, 3], [0, 1], [], [1]):
        check(f, np.array(ns, dtype=np.int64), jitted=g)
    info = g.cache_info()
    assert info.compiles >= 3 and info.replays >= 3

    def h(ns: Any) -> Any:
        return sn.map(lambda n: sn.loop(n, lambda i, a: a * 2 + i, n), ns)
    hj = sn.jit(h)
    for ns in ([2, 2], [3, 3, 3], [1, 4], [0, 2, 1]):
        check(h, np.array(ns, dtype=np.int64), jitted=hj)


def test_errors_on_replay_are_the_first_call_errors() -> None:
    f = sn.jit(lambda xs, idx: sn.map(lambda r, i: r[i] * 2.0, xs, idx))
    xs = sn.Ragged.from_list([[1.0, 2.0], [3.0]])
    check(f.fn, xs, np.array([1, 0]), jitted=f)
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 1"):
        f(xs, np.array([1, 2]))
    with pytest.raises(ValueError, match="different lengths"):
        f(xs, np.array([1, 0, 0]))
    check(f.fn, xs, np.array([-2, -1]), jitted=f)
    g = sn.jit(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns))
    check(g.fn, np.array([3, 4]), jitted=g)
    with pytest.raises(ValueError, match=r"Range 0..1..<-2 is invalid"):
        g(np.array([3, -2]))
    m = sn.jit(lambda x: sn.map(lambda r: r.max(), x))
    check(m.fn, sn.Ragged.from_list([[1.0], [2.0, 0.5]]), jitted=m)
    with pytest.raises(ValueError, match="zero-size array"):
        m(sn.Ragged.from_list([[1.0], []]))


def test_replay_skips_dead_steps_but_keeps_checks() -> None:
    """The closed-form sum of an iota reads only the lengths: its bounds (a cumsum per call)
    are not replayed. An iota whose values nothing reads still checks its lengths."""
    g = sn.jit(sum_iota)
    check(sum_iota, np.array([3, 0, 5]), jitted=g)
    (tape, _), = next(iter(g.programs.values())).tapes
    assert "bounds_of" not in tape.summary() and "bounds_of" in tape.dropped
    assert "not replayed, top_lengths x1, bounds_of x1" in str(
        sn.explain(sum_iota, np.array([3, 0, 5])))
    check(sum_iota, np.array([7, 1]), jitted=g)
    assert g.cache_info()[1:3] == (1, 3)  # one flattening, then replays

    def unused(ns: Any) -> Any:
        return sn.map(lambda n: (sn.iota(n), n + 1)[1], ns)
    u = sn.jit(unused)
    check(unused, np.array([2, 4]), jitted=u)
    with pytest.raises(ValueError, match=r"Range 0..1..<-3 is invalid"):
        sn.interpret(unused, np.array([1, -3]))
    with pytest.raises(ValueError, match=r"Range 0..1..<-3 is invalid"):
        u(np.array([1, -3]))


def test_replays_recycle_only_dropped_arrays() -> None:
    """A replay takes its arrays from earlier replays' once nothing refers to them: a result
    the caller keeps is never written again; one it dropped is reused (no fresh pages)."""
    rng = np.random.default_rng(5)
    x = _ragged(rng, 300, 100, low=1)  # 30000 values: recycled (over 128 KiB)
    f = sn.jit(softmax)
    want = sn.interpret(softmax, x)
    f(x)  # flattens and records
    kept = f(x)
    snapshot = kept.values.copy()
    again = f(x)
    assert not np.shares_memory(again.values, kept.values)
    address = again.values.__array_interface__["data"][0]
    del again
    third = f(x)
    assert third.values.__array_interface__["data"][0] == address
    other = _ragged(rng, 500, 30, low=1)  # other sizes: other arrays, right values
    assert_same(f(other), sn.interpret(softmax, other))
    np.testing.assert_array_equal(kept.values, snapshot)
    for got in (kept, third):
        assert_same(got, want)


def test_top_level_length_used_as_a_number() -> None:
    """len() of an argument is a Python int in the traced code: a guard, not a stale value."""
    def f(x: Any) -> Any:
        return sn.iota(len(x)) * 2 + x
    g = sn.jit(f)
    for n in (3, 3, 5, 0, 5):
        check(f, np.arange(n, dtype=np.int64), jitted=g)
    assert g.cache_info().compiles == 3


def test_unreplayable_calls_are_flattened_each_time() -> None:
    def branchy(a: Any, b: Any) -> Any:  # Python control flow: runs sequentially in Python
        return a if a > b else b
    f = sn.jit(lambda x: sn.map(lambda r: sn.reduce(branchy, -np.inf, r), x))
    for rows in ([[1.0, 3.0], [2.0]], [[5.0], [], [1.0, 2.0]]):
        check(f.fn, sn.Ragged.from_list(rows), jitted=f)
    info = f.cache_info()
    assert info.compiles == 1 and info.replays == 0 and info.uncached == 3
    assert "Python" in next(iter(f.unreplayable.values()))


def test_captured_arrays_are_read_at_each_replay() -> None:
    w = np.array([1.0, 2.0, 3.0])
    f = sn.jit(lambda x: sn.map(lambda r: r.sum() * sn.reduce(np.add, 0.0, w), x))
    x = sn.Ragged.from_list([[1.0], [2.0, 3.0]])
    check(f.fn, x, jitted=f)
    w[:] = [10.0, 0.0, 0.0]  # changed in place: the recorded program reads the same array
    assert_same(f(x), sn.interpret(f.fn, x))
    assert f.cache_info().replays == 2
    g = sn.jit(lambda x: x * 2.0 + sn.reduce(np.add, 0.0, w))  # w also passed as x first
    check(g.fn, w, jitted=g)
    check(g.fn, np.arange(3.0), jitted=g)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_programs_replayed_on_new_data(data: Any) -> None:
    """A random nested program recorded on one random input and replayed on others (sizes,
    empty rows and values all differ; each call against the interpreter)."""
    body = scalar_expr(data.draw) if data.draw(st.booleans()) else row_expr(data.draw, 0)
    fn = lambda r, ks: sn.map(body, r, ks)  # noqa: E731
    f = sn.jit(fn)
    dtype = data.draw(st.sampled_from([np.int64, np.int32]))
    for _ in range(3):
        lengths = data.draw(st.lists(st.integers(0, 5), max_size=7))
        values = data.draw(st.lists(st.integers(-20, 20), min_size=sum(lengths),
                                    max_size=sum(lengths)))
        ks = data.draw(st.lists(st.integers(-4, 4), min_size=len(lengths),
                                max_size=len(lengths)))
        r = sn.Ragged(np.array(values, dtype=dtype), lengths)
        check(fn, r, np.array(ks, dtype=np.int64), jitted=f)


def test_arguments_sharing_arrays() -> None:
    """Recorded with two Ragged sharing one lengths array (or one array passed twice), replayed
    with separate ones: the sharing is a guard, never an assumption."""
    rng = np.random.default_rng(3)
    f = sn.jit(spmv)
    lengths = np.array([2, 0, 3])
    cols = sn.Ragged(np.array([0, 1, 1, 0, 1]), lengths)
    vals = sn.Ragged(rng.normal(size=5), lengths)
    x = rng.normal(size=2)
    check(spmv, cols, vals, x, jitted=f)
    other = sn.Ragged(vals.values, np.array([2, 0, 3]))  # equal lengths, another array
    check(spmv, cols, other, x, jitted=f)
    with pytest.raises(ValueError, match="different lengths"):
        f(cols, sn.Ragged(vals.values, np.array([3, 0, 2])), x)
    check(spmv, cols, vals, x, jitted=f)
    g = sn.jit(lambda a, b: sn.map(lambda u, v: u * 2 - v, a, b))
    a = np.arange(4.0)
    check(g.fn, a, a, jitted=g)
    check(g.fn, a, a[::-1].copy(), jitted=g)
    with pytest.raises(ValueError, match="different lengths"):
        g(a, np.arange(3.0))


@pytest.mark.parametrize("rows", [0, 1, 3])
def test_free_arrays_in_a_map_of_no_rows(rows: int) -> None:
    """A free array (1-D, or sliced rows of a 2-D one) mapped inside a map: its width is the
    array's, also where the outer map has no iteration (CI found shape (0, 0) for (0, 3));
    recorded on one size and replayed on the others."""
    free, grid = np.array([2, -1, 4]), np.arange(12).reshape(3, 4)
    mapped = sn.jit(lambda r, ks: sn.map(lambda row, k: sn.map(lambda v: v * k - 1, free), r, ks))
    sliced = sn.jit(lambda r, ks: sn.map(lambda row, k: grid[1][1:3] * k, r, ks))
    for n in (rows, 2, 0, rows):
        ks = np.arange(n, dtype=np.int64) - 1
        r = sn.Ragged(np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64))
        got = check(mapped.fn, r, ks, jitted=mapped)
        assert_same(got, np.array([[v * k - 1 for v in free] for k in ks], np.int64).reshape(n, 3))
        got = check(sliced.fn, r, ks, jitted=sliced)
        assert_same(got, np.array([[5 * k, 6 * k] for k in ks], np.int64).reshape(n, 2))
