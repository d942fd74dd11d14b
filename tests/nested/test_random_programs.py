"""Hypothesis-generated nested programs over random irregular data (with empty rows), compiled
by flattening and compared with the reference interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax.nested as sn
from nested.helpers import check

Fn = Callable[..., Any]


def ragged(draw: Any) -> sn.Ragged:
    lengths = draw(st.lists(st.integers(0, 5), max_size=7))
    values = draw(st.lists(st.integers(-20, 20), min_size=sum(lengths),
                           max_size=sum(lengths)))
    dtype = draw(st.sampled_from([np.int64, np.int32]))
    return sn.Ragged(np.array(values, dtype=dtype), lengths)


def row_expr(draw: Any, depth: int) -> Fn:
    """A function of (row, k) returning an array; k is a scalar of the same iteration."""
    choices = ["row", "arith", "scan", "map", "iota", "cond-map", "replicate", "scatter",
               "zip", "free", "range", "affine-scan", "cond-rows", "loop-rows", "cast"]
    if depth > 0:
        choices += ["concat", "slice", "inner"]
    kind = draw(st.sampled_from(choices))
    if kind == "row" or depth > 2:
        return lambda row, k: row
    if kind == "arith":
        f, c = row_expr(draw, depth + 1), draw(st.integers(-3, 3))
        return lambda row, k: f(row, k) * c + k
    if kind == "scan":
        f = row_expr(draw, depth + 1)
        op = draw(st.sampled_from([np.add, np.maximum]))
        ne = 0 if op is np.add else np.iinfo(np.int64).min
        return lambda row, k: sn.scan(op, ne, f(row, k))
    if kind == "map":
        f, c = row_expr(draw, depth + 1), draw(st.integers(1, 3))
        return lambda row, k: sn.map(lambda v: np.where(v > k, v - c, v * c), f(row, k))
    if kind == "iota":
        return lambda row, k: sn.iota(np.abs(k) % 4)
    if kind == "free":  # a map over an array from outside the enclosing map
        free = np.array([2, -1, 4])
        return lambda row, k: sn.map(lambda v: v * k - 1, free)
    if kind == "replicate":
        return lambda row, k: sn.replicate(np.abs(k) % 3, k)
    if kind == "scatter":  # some indices out of range (ignored), none repeated
        f = row_expr(draw, depth + 1)
        return lambda row, k: sn.scatter(f(row, k), sn.iota(2) + (np.abs(k) % 3) - 1,
                                         sn.replicate(2, k))
    if kind == "zip":  # two arrays of equal (irregular) lengths
        f = row_expr(draw, depth + 1)

        def zipped(row: Any, k: Any) -> Any:
            r = f(row, k)
            return sn.map(lambda a, b: a * b + k, r, sn.scan(np.add, 0, r))
        return zipped
    if kind == "cond-map":  # branch packing inside a nested map, closures over both levels
        f = row_expr(draw, depth + 1)
        return lambda row, k: sn.map(lambda v: sn.cond(
            v > k, lambda: v * 2 + k, lambda: sn.reduce(np.add, 0, sn.iota(np.abs(v) % 3)) + k),
            f(row, k))
    if kind == "range":  # bounds from the element, negative steps included
        step = draw(st.sampled_from([1, 2, -1, -3]))
        return lambda row, k: sn.range(k, k + step * (np.abs(k) % 4), step)
    if kind == "affine-scan":  # a non-commutative tuple operator (composition of x -> a x + b)
        f = row_expr(draw, depth + 1)
        return lambda row, k: (lambda r: sn.scan(
            lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (1, 0), (r % 3 - 1, r))[1])(f(row, k))
    if kind == "cond-rows":  # branches return arrays of different lengths (segmented merge)
        f, g = row_expr(draw, depth + 1), row_expr(draw, depth + 1)
        return lambda row, k: sn.cond(k % 2 == 0, lambda: f(row, k), lambda: g(row, k) + 1)
    if kind == "loop-rows":  # a loop whose state is an array (uniform trip count)
        f = row_expr(draw, depth + 1)
        return lambda row, k: sn.loop(2, lambda i, a: sn.map(lambda v: v * 2 - i + k, a),
                                      f(row, k))
    if kind == "cast":  # via float64 and //; abs: np.where evaluates both branches
        f = row_expr(draw, depth + 1)
        return lambda row, k: sn.map(lambda v: np.where(
            v > 0, (np.sqrt(np.abs(v) * 4.0) // 1).astype(np.int64), v // 2), f(row, k))
    if kind == "concat":
        f, g = row_expr(draw, depth + 1), row_expr(draw, depth + 1)
        return lambda row, k: sn.concat(f(row, k), g(row, k))
    if kind == "slice":
        f = row_expr(draw, depth + 1)
        return lambda row, k: (lambda r: r[sn.length(r) // 2:sn.length(r)])(f(row, k))
    f = row_expr(draw, depth + 1)  # inner: a nested map over an iota of each element
    return lambda row, k: sn.map(lambda v: sn.reduce(np.add, 0, sn.iota(np.abs(v) % 5) + v),
                                 f(row, k))


def scalar_expr(draw: Any) -> Fn:
    f = row_expr(draw, 0)
    kind = draw(st.sampled_from(["sum", "max", "length", "cond", "loop", "index", "affine"]))
    if kind == "affine":  # a non-commutative tuple reduction
        return lambda row, k: (lambda r: sn.reduce(
            lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (1, 0), (r % 3 - 1, r))[1])(f(row, k))
    if kind == "sum":
        return lambda row, k: sn.reduce(np.add, 0, f(row, k))
    if kind == "max":
        return lambda row, k: sn.reduce(np.maximum, np.iinfo(np.int64).min, f(row, k))
    if kind == "length":
        return lambda row, k: sn.length(f(row, k)) + k
    if kind == "loop":  # irregular trip counts: the active-set loop
        return lambda row, k: sn.loop(np.abs(k) % 3, lambda i, a: a * 2 + sn.reduce(
            np.add, 0, f(row, k)) * i, k)
    if kind == "index":  # guarded: rows may be empty
        def index(row: Any, k: Any) -> Any:
            r = f(row, k)
            return sn.cond(sn.length(r) > 0, lambda: r[np.abs(k) % sn.length(r)] + k * 0,
                           lambda: k)
        return index
    return lambda row, k: sn.cond(k > 0, lambda: sn.reduce(np.add, 0, f(row, k).astype(k.dtype)),
                                  lambda: k * 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_nested_programs(data: Any) -> None:
    r = ragged(data.draw)
    ks = np.array(data.draw(st.lists(st.integers(-4, 4), min_size=len(r), max_size=len(r))),
                  dtype=np.int64)
    if data.draw(st.booleans()):
        body = scalar_expr(data.draw)
    else:
        body = row_expr(data.draw, 0)
    check(lambda r, ks: sn.map(body, r, ks), r, ks)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=10), st.integers(0, 2**31))
def test_fixed_programs_random_sizes(ns: list[int], seed: int) -> None:
    """Fixed programs (compiled once) over many random irregular shapes."""
    ns_a = np.array(ns, dtype=np.int64)
    check(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.map(
        lambda i: sn.reduce(np.add, 0, sn.iota(i) * n), sn.iota(n))), ns), ns_a)
    check(lambda ns: sn.map(lambda n: sn.scan(np.add, 0, sn.iota(n) * 2 + 1), ns), ns_a)
    vals = np.random.default_rng(seed).normal(size=int(ns_a.sum()))
    x = sn.Ragged(vals, ns_a)
    check(lambda x: sn.map(lambda row: sn.cond(sn.length(row) > 0,
                                               lambda r: r.max() - r.sum(), lambda r: 0.0, row),
                           x), x)
