"""An extern key never names two different routines (the np.copyto(where=) bug: a key missing
one fact served the routine first registered under it). No C++ compiler needed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stax.runtime import externs

pytestmark = pytest.mark.fast


def _copyto(has_where: bool) -> Any:
    def write(t: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        t = t.copy()
        np.copyto(t, rest[0], where=rest[-1] if has_where else True)
        return t
    return write


def _run(key: str, *arrays: np.ndarray) -> np.ndarray:
    out = np.empty_like(arrays[0])
    externs.EXTERNS[key](*arrays, out=out)
    return out


def test_different_routines_under_one_spelling_get_their_own_keys() -> None:
    spelled = "test.copyto(unit)"
    masked = externs.register(spelled, _copyto(True))
    plain = externs.register(spelled, _copyto(False))
    assert masked != plain and masked.startswith(spelled) and plain.startswith(spelled)
    x, y, m = np.zeros(4), np.arange(4.0) + 1, np.array([True, False, True, False])
    np.testing.assert_array_equal(_run(masked, x, y, m), np.where(m, y, x))
    np.testing.assert_array_equal(_run(plain, x, y), y)  # (the mask is not its source)


def test_equal_routines_share_a_key() -> None:
    spelled = "test.sort(unit)"
    keys = {externs.register(spelled, lambda a: np.sort(a, axis=-1)) for _ in range(3)}
    assert len(keys) == 1
    other = externs.register(spelled, lambda a: np.sort(a, axis=0))  # another constant
    assert other not in keys


@pytest.mark.parametrize("kind", ["register", "register_into", "register_sized"])
def test_every_registration_kind_is_distinct_by_closure(kind: str) -> None:
    def make(k: float) -> Any:
        if kind == "register_into":
            def into(a: np.ndarray, out: np.ndarray) -> None:
                np.multiply(a, k, out=out)
            return into
        return lambda a: a * k

    def reg(k: float) -> str:
        if kind == "register_sized":
            return externs.register_sized(f"test.{kind}", make(k), np.dtype(np.float64))
        return getattr(externs, kind)(f"test.{kind}", make(k))

    keys = [reg(k) for k in (2.0, 3.0, 2.0, -0.0, 0.0)]
    assert keys[0] == keys[2] and len(set(keys)) == 4
    a = np.arange(3.0)
    for k, key in zip((2.0, 3.0, 2.0, -0.0, 0.0), keys, strict=True):
        got = externs.EXTERNS[key](a) if kind == "register_sized" else _run(key, a)
        np.testing.assert_array_equal(got, a * k)
        assert np.signbit(got).tolist() == np.signbit(a * k).tolist()


def test_specification_compares_values_not_identity() -> None:
    spec = externs.specification
    assert spec({"q": [0.5, np.float32(1)]}) == spec({"q": [0.5, np.float32(1)]})
    assert spec(np.arange(3)) == spec(np.arange(3)) != spec(np.arange(3.0))
    assert spec(np.float32(1)) != spec(np.float64(1))
    assert spec(True) != spec(1) and spec(float("nan")) == spec(float("nan"))
    assert spec(np.sort) == spec(np.sort) != spec(np.argsort)


def _many_externs(x: Any, i: Any, m: Any) -> Any:
    y, z, w, v = x.copy(), x.copy(), x.copy(), x.copy()
    np.copyto(y, x * 2, where=m)
    np.put(z, [0, 1], [5.0, 6.0])
    np.add.at(w, i, 1.0)
    v[i] += 1
    return (np.sort(x), np.argsort(x), np.histogram(x, bins=4)[0], np.linalg.inv(np.eye(2) + x[0]),
            y, z, w, v, np.unravel_index(i, (2, 3)), np.add.reduceat(x, [0, 2]),
            np.bincount(i, minlength=6), np.searchsorted(np.sort(x), x), np.percentile(x, [10, 50]),
            np.linalg.eigh(np.eye(3) * x[1])[0], np.maximum.accumulate(x))


def test_tracing_again_registers_nothing_new() -> None:
    """A routine's specification holds no object made per trace (a Tracer, a bound method of a
    ufunc): each trace would add a routine and key, and segments keyed by it would compile
    again on every call."""
    from stax.api import trace

    x, i = np.random.default_rng(0).random(6), np.array([0, 1, 1, 5])
    trace(_many_externs, (x, i, x > 0.5))
    before = {k: len(v) for k, v in externs.SPECIFICATIONS.items()}
    for k in range(2):
        trace(_many_externs, (x + k, i, x > 0.5))
    assert {k: len(v) for k, v in externs.SPECIFICATIONS.items()} == before
