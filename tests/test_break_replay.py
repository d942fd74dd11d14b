"""Warm calls of functions with graph breaks replay a recorded tape (stax.frontend.replay): the
results equal NumPy's on every call, including calls whose data flip a guard (another branch,
another count, another Python int), and replay happens only where it must be exact."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_breaks import STEPS

import stax
from stax.frontend import replay
from stax.frontend.breaks import GraphBreakWarning


def calls(fn: Any, inputs: list[tuple[Any, ...]], atol: float = 0.0, **options: Any) -> Any:
    """Jit `fn`, call it on each of `inputs` (and NumPy on copies): results and arguments
    (mutated ones too) must match NumPy's on every call (within `atol` where values cancel).
    Returns the jitted function."""
    jf = stax.jit(fn, **options)
    for args in inputs:
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            got = jf(*mine)
        assert_matches(got, fn(*theirs), atol=atol)
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(m, np.ndarray):
                assert_matches(m, t, atol=atol)
    return jf


def branchy(x: Any) -> Any:
    y = x * 2
    if y.sum() > 0:  # a guard: the other branch re-traces
        return np.ldexp(y, 0) + 1
    return -y


def test_a_branch_flipped_by_the_data_retraces_then_replays_both_sides() -> None:
    pos, neg = np.arange(1.0, 6.0), -np.arange(1.0, 6.0)
    jf = calls(branchy, [(pos,), (pos * 3,), (neg,), (neg * 2,), (pos + 1,)])
    info = jf.replay_info()
    assert (info.traced, info.replayed, info.tapes) == (2, 3, 2)
    assert info.missed == 1  # the first negative call: the positive tape's guard failed


def item_as_shape(x: Any) -> Any:
    k = int(x[0].item())  # a Python int from the data: a guard
    return np.ldexp(x[1 : k + 1], 0) * k, x.sum()


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_item_used_as_a_python_int(dtype: str) -> None:
    def data(k: int, shift: float) -> np.ndarray:
        x = np.arange(8).astype(dtype) + np.asarray(shift, dtype=dtype)
        x[0] = k
        return x

    jf = calls(item_as_shape, [(data(3, 0),), (data(3, 1),), (data(5, 0),), (data(3, 2),)])
    assert jf.replay_info().replayed == 2  # k = 3 twice after its first call; k = 5 traced


def trimmed(x: Any) -> Any:
    t = np.trim_zeros(x)  # a NumPy result whose shape depends on the data
    return t * 2 + t.sum(), x.mean()


def test_data_dependent_break_shapes_are_guarded() -> None:
    a = np.array([0.0, 1.0, 2.0, 3.0, 0.0])
    b = np.array([0.0, 0.0, 5.0, 6.0, 0.0])  # another count
    jf = calls(trimmed, [(a,), (a * 2,), (b,), (b + np.array([0, 0, 1, 1, 0]),), (a,)])
    info = jf.replay_info()
    assert (info.traced, info.replayed) == (2, 3)
    calls(trimmed, [(np.zeros(0),), (np.zeros(0),), (np.zeros(3),)])  # empty inputs


def test_mutation_through_a_break_and_by_the_function() -> None:
    def fn(x: Any, a: Any, s: float) -> Any:
        x += s  # the function mutates an argument
        before = a * 2
        a[1:].partition(1)  # NumPy mutates another in place, through a view
        m = np.ldexp(x, 0)[0]
        x -= m
        return before, a.sum() + m

    inputs = [(make_array((5,), "float64", seed=k), make_array((6,), "float64", seed=k + 9),
               0.5 * k) for k in range(4)]
    jf = calls(fn, inputs)
    assert jf.replay_info().replayed == 3


def test_an_argument_not_mutated_when_recorded_is_not_replayed() -> None:
    def fn(a: Any) -> Any:
        np.clip(a, 0.0, None, out=np.ldexp(a, 0))  # not in place: `out` is a fresh array
        a[:2].partition(1)  # in place, a no-op when a[:2] is sorted
        return a * 2

    sorted_, unsorted = np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, 3.0])
    jf = calls(fn, [(sorted_,), (sorted_ + 1,), (unsorted,)])
    info = jf.replay_info()
    assert info.replayed == 1 and info.missed == 1 and info.traced == 2


def test_return_structures_identity_and_inputs_returned() -> None:
    def fn(x: Any, y: Any) -> Any:
        z = np.ldexp(x, 0) * y
        return {"z": z, "both": [z, x], "t": (z + float(z[0]), x)}

    jf = calls(fn, [(np.arange(4.0), 2.0), (np.arange(4.0) * 2, 3.0),  # z[0] == 0.0: replays
                    (np.array([0.0, 5.0, 1.0, 2.0]), 0.5)])
    x = np.linspace(0, 1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        got = jf(x, 2.0)
    assert jf.replay_info().replayed == 3
    assert got["z"] is got["both"][0] and got["both"][1] is x  # as NumPy's own objects
    assert got["t"][1] is x


def test_negative_zero_is_a_different_value() -> None:
    def fn(x: Any) -> Any:
        return np.ldexp(x, 0) / float(x.min())  # a float from the data: guarded bit for bit

    jf = calls(fn, [(np.array([0.0, 1.0]),), (np.array([-0.0, 1.0]),),
                    (np.array([0.0, 2.0]),)])
    assert jf.replay_info().replayed == 1


def test_python_scalar_arguments_used_as_python_values_are_guarded() -> None:
    def fn(x: Any, n: int) -> Any:
        return np.ldexp(x, 0)[:n] * n

    x = np.arange(6.0)
    jf = calls(fn, [(x, 2), (x + 1, 2), (x, 4), (x * 2, 4), (x, 2)])
    assert jf.replay_info().replayed == 3


def test_values_that_differ_on_every_call_stop_replaying() -> None:
    def fn(x: Any) -> Any:
        return np.ldexp(x, 0) - float(x.mean())  # new mean, new guard value, on each call

    jf = calls(fn, [(np.arange(4.0) * k,) for k in range(replay.MAX_MISSES + 4)])
    info = jf.replay_info()
    assert info.replayed == 0 and info.missed == replay.MAX_MISSES and info.tapes == 0
    assert "missed every tape" in next(iter(jf.no_replay.values()))


def test_a_numpy_error_on_a_replayed_call_comes_through() -> None:
    def fn(x: Any) -> Any:
        return np.linalg.inv(np.ldexp(x, 0) * 2)

    jf = calls(fn, [(np.eye(2),), (np.eye(2) * 3,)])
    with pytest.raises(np.linalg.LinAlgError), warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        jf(np.zeros((2, 2)))


def test_aliased_arguments_under_mutation_run_as_today() -> None:
    def fn(a: Any, b: Any) -> Any:
        a += 1
        return np.ldexp(b, 0) * 2

    jf = calls(fn, [(np.arange(3.0), np.arange(3.0)), (np.ones(3), np.zeros(3))])
    x, want = np.arange(3.0), np.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        got = jf(x, x)  # the same array twice: the whole function in NumPy, as before
    assert_matches(got, fn(want, want))
    assert_matches(x, want)


def test_printing_and_random_numbers_are_never_replayed(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    def printing(x: Any) -> Any:
        print(x.sum())
        return np.ldexp(x, 0)

    jf = calls(printing, [(np.arange(3.0),), (np.arange(3.0),)])
    assert capsys.readouterr().out.count("3.0") == 4  # both calls, Stax's and NumPy's
    assert jf.replay_info().replayed == 0
    assert "printing" in next(iter(jf.no_replay.values()))

    def drawing(x: Any) -> Any:
        return np.ldexp(x, 0) + np.random.rand(*x.shape)

    jf = stax.jit(drawing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        np.random.seed(5)
        got = [jf(np.zeros(3)) for _ in range(3)]
    np.random.seed(5)
    assert_matches(got, [drawing(np.zeros(3)) for _ in range(3)])
    assert jf.replay_info().replayed == 0
    assert "random" in next(iter(jf.no_replay.values()))


def test_python_values_returned_by_numpy_are_guarded() -> None:
    def fn(x: Any) -> Any:
        # Python floats: guarded by value (a tolist of over 64 elements is a break [HUNT7])
        first, second = np.tile(x[:2], 40).tolist()[:2]
        return x * (first + second) + np.ldexp(x, 0)

    jf = calls(fn, [(np.arange(4.0),), (np.array([0.0, 1.0, 7.0, 9.0]),), (np.ones(4),)])
    assert jf.replay_info().replayed == 1


def test_explain_says_whether_warm_calls_replay() -> None:
    jf = calls(branchy, [(np.arange(3.0),), (np.arange(3.0),)])
    text = str(stax.explain(jf, np.arange(3.0)))
    assert "== Warm calls with breaks ==\nreplayed without running the Python function" in text
    assert "1 tape(s)" in text
    report = stax.explain(lambda x: print(x * 2) or np.ldexp(x, 0) + 1, np.arange(3.0))
    assert "not replayed" in report.replay and "printing" in report.replay
    assert stax.explain(lambda x: x + 1, np.ones(3)).replay == ""


def test_strict_keeps_the_error() -> None:
    with pytest.raises(TypeError, match="traced"):
        stax.jit(branchy, strict=True)(np.ones(3))


def test_replay_false_runs_the_python_function_on_each_call() -> None:
    seen: list[float] = []

    def fn(x: Any) -> Any:
        y = np.ldexp(x, 0)
        seen.append(len(seen))  # a Python side effect: replay would skip it
        return y * 2

    jf = calls(fn, [(np.arange(3.0),), (np.arange(3.0) + 1,)], replay=False)
    assert jf.replay_info().replayed == 0 and len(seen) == 4  # both calls, Stax's and NumPy's
    assert "replay=False" in stax.explain(jf, np.arange(3.0)).replay
    with pytest.raises(ValueError, match="replay must be True or False"):
        stax.jit(fn, replay="yes")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4),
       st.integers(0, 2 ** 16))
@example(["branch", "center_by_float", "sorted_cumsum"], 0)  # found by CI: the cancelling sum
def test_random_programs_with_breaks_replay_like_numpy(names: list[str], seed: int) -> None:
    """Programs of steps with and without breaks (tests/test_breaks.py), each called on
    four inputs of one signature (signs flipped: branches differ), all equal to NumPy."""
    def program(x: Any) -> Any:
        for name in names:
            x = STEPS[name](x)
        return x

    xs = [make_array((6,), "float64", seed=seed + k, low=-1, high=1) for k in range(3)]
    # atol as test_breaks': after center_by_float a cumsum ends at 0 up to rounding, and a
    # mean summed in another order than NumPy's moves it by an ulp of the partial sums
    calls(program, [(xs[0],), (xs[1],), (-xs[0],), (xs[0] * 1.0,), (xs[2],)], atol=1e-12)


def test_a_ufunc_break_writing_into_an_argument() -> None:
    def fn(x: Any, m: Any, e: Any) -> Any:
        y = x * 2
        np.frexp(y, m, e)  # out= given positionally: NumPy writes into m and e
        return m + e, y

    def data(k: int) -> tuple[Any, ...]:
        return make_array((5,), "float64", seed=k), np.zeros(5), np.zeros(5, np.int32)

    jf = calls(fn, [data(1), data(2), data(3)])
    assert jf.replay_info().replayed == 2


def test_clear_caches_forgets_tapes() -> None:
    jf = calls(branchy, [(np.arange(4.0),), (np.arange(4.0) + 1,)])
    assert jf.replay_info().tapes == 1
    stax.clear_caches()
    assert jf.replay_info().tapes == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for x in (np.arange(4.0) + 2, np.arange(4.0) + 3):
            assert_matches(jf(x), branchy(x))
    assert jf.replay_info().tapes == 1 and jf.replay_info().replayed == 2
