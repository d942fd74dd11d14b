"""Replay's comparisons (stax.frontend.replay), without a compiler: a guard holds only for the
same value bit for bit, a NumPy result binds only in the recorded layout."""

from __future__ import annotations

import numpy as np

from stax.frontend import replay


def test_same_is_bit_for_bit() -> None:
    assert replay.same(0.5, 0.5) and replay.same(float("nan"), float("nan"))
    assert not replay.same(-0.0, 0.0) and not replay.same(1, 1.0) and not replay.same(1, True)
    assert replay.same(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    assert not replay.same(np.array([0.0]), np.array([-0.0]))
    assert not replay.same(np.array([1, 2]), np.array([1, 2], np.int32))  # dtype
    assert not replay.same(np.zeros((2, 1)), np.zeros((1, 2)))  # shape
    assert replay.same(np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3).T.copy())
    assert replay.same([1, (2.0, "a")], [1, (2.0, "a")]) and not replay.same([1], (1,))
    assert replay.same({"a": 1, "b": 2}, {"a": 1, "b": 2})
    assert not replay.same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # order is visible to Python
    assert replay.same(np.float32(1.5), np.float32(1.5))
    assert not replay.same(np.float32(1.5), np.float64(1.5))


def test_comparable_values() -> None:
    assert replay.comparable([1, 2.0, None, "s", np.int8(3), {"k": np.zeros(2)}, np.dtype("f4")])
    assert not replay.comparable(np.array([object()], dtype=object))
    assert not replay.comparable(np.random.default_rng(0))
    assert not replay.comparable(np.ma.masked_array([1.0]))  # a subclass: its mask
    assert not replay.comparable(np.zeros(3).flags)


def test_bind_checks_the_recorded_layout() -> None:
    out = replay.Out(7, (2, 3), np.dtype(np.float64), (24, 8))
    env: dict[int, object] = {}
    assert replay.bind(out, np.zeros((2, 3)), env) and env[7].shape == (2, 3)
    assert not replay.bind(out, np.zeros((3, 2)), {})  # another shape (a data-dependent one)
    assert not replay.bind(out, np.zeros((3, 2)).T, {})  # another layout
    assert not replay.bind(out, np.zeros((2, 3), np.float32), {})
    assert not replay.bind(out, [[0.0] * 3] * 2, {})  # not an array
    items = replay.Items(tuple, (out, replay.Seen(4)))
    assert replay.bind(items, (np.ones((2, 3)), 4), {})
    assert not replay.bind(items, (np.ones((2, 3)), 5), {})  # the Python value changed
    assert not replay.bind(items, [np.ones((2, 3)), 4], {})  # a list, not a tuple


def test_random_functions() -> None:
    assert replay.is_random(np.random.rand) and replay.is_random(np.random.default_rng)
    assert replay.is_random(np.random.default_rng(0).normal)
    assert not replay.is_random(np.unwrap) and not replay.is_random(np.add)
