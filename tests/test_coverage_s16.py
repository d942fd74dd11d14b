"""Coverage fixes of session 16 (HUNT9, from tests/corpus/test_corpus_wild14.py), each tested
against NumPy computed in the test. Graph breaks are allowed here (they run NumPy); wrong
results, wrong types and crashes are not."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stax


def same(got: Any, want: Any) -> None:
    """Equal structure, types (a 0-d ndarray is not a NumPy scalar), dtypes and values."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want) and list(map(type, got)) == list(map(type, want))
        for k, w in want.items():
            same(got[k], w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        assert got == want, (got, want)


def run(fn, *args: Any) -> None:  # type: ignore[no-untyped-def]
    """`fn` under stax.jit, twice (the second call warm), equals NumPy's on copies."""
    jitted = stax.jit(fn)
    for _ in range(2):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fn(*copies)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = jitted(*args)
        same(got, want)


class Stats:
    def __init__(self, m: int) -> None:
        self.n = 0
        self.mean = np.zeros(m)
        self.total = np.zeros(m)
        self.history: list[Any] = []

    def push(self, row: Any) -> None:
        self.n += 1
        self.mean += (row - self.mean) / self.n
        self.total = self.total + row

    def log(self, row: Any) -> None:
        self.history.append(row.sum())


def test_loop_body_rebinding_an_attribute() -> None:
    """[HUNT9] A loop over rows whose body rebinds an object's attribute (`self.n += 1`,
    `self.total = self.total + row`, `self.history.append(...)`) was compiled once from two
    traces: `s.n` was 2 after 6 rows and the means were wrong. Such a body now unrolls (its
    record says why)."""
    def welford(rows):
        s = Stats(rows.shape[1])
        for row in rows:
            s.push(row)
        return s.mean, s.total, s.n

    def in_list(rows):
        boxes = [Stats(rows.shape[1])]
        for i in range(len(rows)):
            boxes[0].push(rows[i] * 2)
        return boxes[0].mean, boxes[0].n

    def logged(rows):
        s = Stats(rows.shape[1])
        for row in rows:
            s.log(row)
        return s.history

    rng = np.random.default_rng(0)
    for rows in (rng.standard_normal((6, 3)), rng.standard_normal((3, 5)).T,
                 np.arange(8, dtype=np.float32).reshape(2, 4)[:, ::2], np.zeros((0, 2))):
        run(welford, rows)
        run(in_list, rows)
        run(logged, rows)
    jitted = stax.jit(welford)
    jitted(rng.standard_normal((4, 2)))
    assert any(not r.compiled and "of an object it reaches" in r.reason
               for r in stax.loops.records(jitted))


def test_shuffle_by_a_generator_made_inside() -> None:
    """[HUNT9] `rng.shuffle(Y)` of a traced array, rng made in the function: NumPy's Cython took
    the Tracer for a Python sequence and swapped rows through views (rows repeated). A draw
    given traced values now runs NumPy's on their values (default_rng), or the whole function
    runs in NumPy (np.random.RandomState)."""
    def made(X, seed):
        rng = np.random.default_rng(seed)
        Y = X.copy()
        rng.shuffle(Y)
        return Y, rng.permutation(X), rng.choice(X[:, 0], 2), rng.random(2)

    def legacy(X, seed):
        rng = np.random.RandomState(seed)
        Y = X.copy()
        rng.shuffle(Y)
        return Y, rng.rand(2)

    rng = np.random.default_rng(1)
    for X in (rng.standard_normal((7, 2)), np.arange(12).reshape(3, 4).T,
              rng.standard_normal((1, 3))):
        for seed in (0, 5):
            run(made, X, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # NumPy's, on a Tracer
                run(legacy, X, seed)


def test_traced_scalar_as_a_dict_key() -> None:
    """[HUNT9] A traced scalar as a dict key (`d[v]` for v in x.tolist()) raised TypeError
    (unhashable type: 'Tracer'): a scalar argument hashes by its value (specialized), another
    runs the whole function in NumPy; an array stays unhashable, as NumPy's."""
    def counts(labels):
        d: dict[Any, int] = {}
        for v in labels.tolist():
            d[v] = d.get(v, 0) + 1
        return d, len({labels[0].item()})

    def table(x, mode):
        lookup = {0: x, 1: 2 * x, 2: -x}
        return lookup[mode], {mode: x.sum()}

    def array_key(x):
        return {x: 1}

    for labels in (np.array([3, 1, 3, 0, 1, 3]), np.array([2], np.int8), np.array([0.5, 0.5])):
        run(counts, labels)
    for mode in (0, 2, np.int64(1)):
        run(table, np.arange(4.0), mode)
        run(table, np.arange(6.0).reshape(2, 3).T, mode)
    for x in (np.arange(3.0), np.array(1.0)):
        with pytest.raises(TypeError, match="unhashable type: 'numpy.ndarray'"):
            array_key(x)
        with pytest.raises(TypeError, match="unhashable type: 'numpy.ndarray'"):
            stax.jit(array_key)(x)


def test_break_inside_a_numpy_conversion() -> None:
    """[HUNT9] `x[i] = t` into a NumPy array (np.zeros_like of a constant np.arange) converts
    the Tracer t by float(): when that break needed the whole function in NumPy, NumPy turned
    the signal into ValueError "setting an array element with a sequence" (a crash)."""
    def solve(A):
        L = np.tril(A) + 5 * np.eye(len(A))
        b = np.arange(1.0, len(A) + 1)
        x = np.zeros_like(b)
        for i in range(len(b)):
            x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
        return x

    rng = np.random.default_rng(2)
    for A in (rng.standard_normal((6, 6)), rng.standard_normal((5, 5)).T, np.ones((1, 1))):
        run(solve, A)


def test_zero_d_arrays_returned() -> None:
    """[HUNT9] A 0-d NumPy array the function made from constants (np.array(0.5)) or got from
    NumPy at a break (np.vectorize of a 0-d array) was returned as a NumPy scalar; np.piecewise
    of a 0-d array raised IndexError (NumPy's x[cond] of a 0-d x is 1-d)."""
    def made(x):
        return np.array(0.5), np.array(3, np.int8), x * 2, np.array([1.0])

    def vectorized(x):
        return np.vectorize(lambda v: v * v if v > 0 else -v)(x)

    def piecewise(x):
        return (np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]),
                np.piecewise(x, [x < -1, (x >= -1) & (x < 1)], [0.0, lambda v: v, 1.0]))

    def one_condition(x):
        return np.piecewise(x, x > 0, [lambda v: v + 1, -1])

    for x in (np.array(-1.5), np.array(0.5), np.array(2.0, np.float32), np.array(3)):
        run(made, x)
        run(vectorized, x)
        run(piecewise, x)
        run(one_condition, x)
    run(one_condition, np.linspace(-2, 2, 7))
    run(piecewise, np.linspace(-2, 2, 7))
    run(piecewise, np.linspace(-2, 2, 6).reshape(2, 3).T)


def test_iscomplexobj_isrealobj() -> None:
    """[HUNT9] np.iscomplexobj / np.isrealobj were graph breaks: Python bools from the dtype."""
    def fn(x):
        z = x + 1j * x[::-1]
        return np.iscomplexobj(z), np.iscomplexobj(x), np.isrealobj(x), np.isrealobj(z), \
            np.abs(z) if np.iscomplexobj(z) else x

    for x in (np.linspace(-1, 1, 5), np.arange(6, dtype=np.float32).reshape(2, 3).T,
              np.arange(4, dtype=np.int16), np.zeros(0)):
        run(fn, x)
