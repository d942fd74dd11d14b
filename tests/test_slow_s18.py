"""[SLOW2] Warm calls whose arguments `call_general` splits (tuples and lists of arrays, None,
dtypes and other static values, keyword-only arguments) take a matcher compiled once per
argument structure (`stax.frontend.breaks._matcher`) instead of the walk: every call returns
NumPy's result (computed here) while the structure, dtypes, shapes, strides and static values
change between calls (never a stale variant), mutated arrays inside a tuple are written back,
Tracers inside a trace never match, and bad input raises as NumPy does."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from test_coverage_s16 import same  # types at every level, values, dtypes

import stax
from stax.frontend.breaks import MAX_MATCHERS


def pair_sum(xs: Sequence[Any]) -> Any:
    return xs[0] + xs[1]


def maybe(x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    return x * 2.0 if y is None else x + y


def cast(x: np.ndarray, dtype: Any) -> np.ndarray:
    return x.astype(dtype) * 2


def signed(xs: tuple[np.ndarray, float]) -> np.ndarray:
    return xs[0] * math.copysign(1.0, xs[1])


def keyword_only(x: np.ndarray, *, scale: Any, shift: Any) -> np.ndarray:
    return x * scale + shift


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def floats(seed: int, shape: tuple[int, ...] = (5, 4)) -> np.ndarray:
    return rng(seed).standard_normal(shape)


def check(jitted: Callable[..., Any], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    same(jitted(*args, **kwargs), fn(*args, **kwargs))


@pytest.mark.parametrize("container", [tuple, list])
def test_sequences_of_arrays_as_numpy(container: type) -> None:
    f = stax.jit(pair_sum)
    for seed in range(4):  # cold, then warm calls on new arrays of the same signature
        check(f, pair_sum, container([floats(seed), floats(seed + 10)]))
    assert f.matchers


def test_structure_dtype_layout_changes_between_calls() -> None:
    f = stax.jit(pair_sum)
    a, b = floats(1), floats(2)
    calls = [
        (a, b),
        [a, b],
        (a, b, a),  # a longer tuple: another structure
        (a.astype(np.float32), b.astype(np.int32)),
        (a.T, b.T),
        (a[::2], b[::2]),
        (np.asfortranarray(a), b),
        (a, 2.5),  # a nested float is static
        (a, -1.5),
        (a.astype(bool), b > 0),
        (a + 1j * b, b),
        (np.float64(2.0), a),  # a NumPy scalar nested: static
        (np.zeros((0, 4)), np.ones((0, 4))),
        (np.array(3.0), np.array(4.0)),  # 0-d arrays
        (a[0], b[:, :1]),  # broadcasting
        (a, b),
    ]
    for _ in range(2):
        for xs in calls:
            check(f, pair_sum, xs)


def test_none_and_array_alternate() -> None:
    f = stax.jit(maybe)
    for seed in range(3):
        x = floats(seed)
        check(f, maybe, x, None)
        check(f, maybe, x, floats(seed + 1))
        check(f, maybe, x.astype(np.float32), None)


@pytest.mark.parametrize("dtypes", [(np.float32, np.int32, "float32", np.dtype("<i2"), bool)])
def test_dtype_arguments(dtypes: tuple[Any, ...]) -> None:
    f = stax.jit(cast)
    x = floats(3) * 10
    for _ in range(2):
        for dtype in dtypes:
            check(f, cast, x, dtype)


def test_static_float_by_repr() -> None:
    """-0.0 and 0.0 compare equal, NaN is not itself: the matcher compares reprs, as the key."""
    f = stax.jit(signed)
    x = floats(4)
    for value in [0.0, -0.0, 0.0, -0.0, math.nan, -math.inf, math.inf]:
        check(f, signed, (x, value))


def test_keyword_only_arguments_and_their_order() -> None:
    f = stax.jit(keyword_only)
    x = floats(5)
    for _ in range(3):
        check(f, keyword_only, x, scale=2.0, shift=x)
        check(f, keyword_only, x, shift=x, scale=2.0)  # other order: another structure
        check(f, keyword_only, x, scale=np.float32(3.0), shift=1)
        check(f, keyword_only, x.astype(np.float32), scale=x, shift=0.5)


def test_mutated_array_in_a_tuple_is_written_back() -> None:
    def bump(xs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        xs[0][...] += xs[1]
        return xs[0] * 2

    f = stax.jit(bump)
    got, want = floats(6), floats(6)
    step = floats(7)
    for _ in range(4):
        same(f((got, step)), bump((want, step)))
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_tracers_inside_a_trace_do_not_match() -> None:
    inner = stax.jit(pair_sum)
    a, b = floats(8), floats(9)
    check(inner, pair_sum, (a, b))
    check(inner, pair_sum, (a, b))  # a matcher for (array, array)

    def outer(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return inner((x, y)) * 2 - inner([y, x])

    f = stax.jit(outer)
    for seed in range(3):
        check(f, outer, floats(seed), floats(seed + 1))


def test_many_structures_past_the_matcher_bound() -> None:
    f = stax.jit(lambda xs: sum(xs[1:], xs[0]))
    arrays = [floats(k) for k in range(MAX_MATCHERS + 4)]
    for _ in range(2):
        for n in range(2, len(arrays) + 1):
            same(f(tuple(arrays[:n])), sum(arrays[1:n], arrays[0]))
    assert len(f.matchers) == MAX_MATCHERS


def test_dicts_and_generators_still_as_numpy() -> None:
    f = stax.jit(lambda d: d["a"] - d["b"])
    g = stax.jit(lambda x, r: x + r.standard_normal(x.shape))
    x = floats(10)
    for seed in range(3):
        same(f({"a": x, "b": floats(seed)}), x - floats(seed))
        same(f({"b": floats(seed), "a": x}), x - floats(seed))
        same(g(x, rng(seed)), x + rng(seed).standard_normal(x.shape))


def test_unsupported_dtype_in_a_tuple_runs_in_numpy() -> None:
    f = stax.jit(pair_sum)
    a = floats(11)
    td = np.arange(4, dtype="timedelta64[s]")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            check(f, pair_sum, (a, a))
            np.testing.assert_array_equal(f((td, td)), td + td)


def test_bad_input_raises_as_numpy() -> None:
    f = stax.jit(pair_sum)
    a = floats(12)
    check(f, pair_sum, (a, a))
    check(f, pair_sum, (a, a))
    with pytest.raises(ValueError):
        f((a, floats(13, (3, 7))))  # shapes that do not broadcast
    with pytest.raises(ValueError):
        pair_sum((a, floats(13, (3, 7))))
    with pytest.raises(IndexError):
        f((a,))
    check(f, pair_sum, (a, a))  # still warm and right afterwards
