"""Graph breaks: what Stax cannot compile runs in NumPy between compiled segments; results equal
NumPy's, each break is warned about once, `strict=True` keeps the error."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax
from stax.frontend import breaks
from stax.frontend.breaks import GraphBreakWarning


def run_both(fn: Any, *args: Any) -> tuple[Any, Any]:
    """(stax result, NumPy result) on separate copies of array arguments."""
    mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        got = stax.jit(fn)(*mine)
    want = fn(*theirs)
    for m, t in zip(mine, theirs, strict=True):  # mutated arguments too
        if isinstance(m, np.ndarray):
            assert_matches(m, t)
    return got, want


def unsupported_between(x: Any, y: Any) -> Any:
    z = np.exp(x) + y
    m = np.trim_zeros(z.ravel()).mean()  # runs in NumPy
    s = np.i0(z)  # runs in NumPy
    return z - m, s * 2


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unsupported_function_between_compiled_parts(dtype: str) -> None:
    x = make_array((3, 5), dtype, seed=1, low=-2, high=2)
    y = make_array((5,), dtype, seed=2)
    got, want = run_both(unsupported_between, x, y)
    assert_matches(got, want, rtol=1e-5 if dtype == "float32" else None)


def test_warns_once_per_break_and_caches_segments() -> None:
    jf = stax.jit(unsupported_between)
    x, y = make_array((4, 3), "float64", seed=3), make_array((3,), "float64", seed=4)
    with pytest.warns(GraphBreakWarning) as record:
        jf(x, y)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2
    assert "np.trim_zeros" in messages[0] and "np.i0" in messages[1]
    assert "test_breaks.py" in messages[0]  # names the user's line
    compiled = len(breaks.SEGMENTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)  # no second warning
        got = jf(x + 1, y)
    assert len(breaks.SEGMENTS) == compiled  # no recompilation for new values
    assert_matches(got, unsupported_between(x + 1, y))


def branchy(x: Any) -> Any:
    if x.sum() > 0:
        return x * 2
    return -x


def test_python_if_on_array_values_takes_each_calls_branch() -> None:
    jf = stax.jit(branchy)
    pos, neg = np.arange(1.0, 5.0), -np.arange(1.0, 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        assert_matches(jf(pos), branchy(pos))
        assert_matches(jf(neg), branchy(neg))  # same signature, the other branch


def conversions(x: Any, n: int) -> Any:
    total = float(x.sum())
    top = int(x.argmax())
    first = x[0].item()
    as_list = x[:2].tolist()
    k = x.shape[0] // n
    return x * total + top + first + as_list[1], x[:k] * len(as_list)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_float_int_item_tolist(dtype: str) -> None:
    x = make_array((6,), dtype, seed=5)
    got, want = run_both(conversions, x, 2)
    assert_matches(got, want)


def test_printing_a_traced_array(capsys: pytest.CaptureFixture[str]) -> None:
    def fn(x: Any) -> Any:
        y = x + 1
        print(y)
        print(f"{y.sum():.2f}")
        return y * 2

    x = np.arange(3.0)
    got, want = run_both(fn, x)
    assert_matches(got, want)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[2] == str(x + 1) and out[1] == out[3] == "6.00"


def test_numpy_mutation_in_place_is_written_back() -> None:
    def fn(a: Any, idx: Any) -> Any:
        before = a * 2  # computed lazily: must see a's values before the mutation
        np.add.at(a, idx, 1.5)
        a[1:].sort()  # through a view
        return before, a.sum()

    a = make_array((7,), "float64", seed=6)
    idx = np.array([0, 0, 3, 6, 6, 6])
    got, want = run_both(fn, a, idx)
    assert_matches(got, want)


def test_mutated_argument_before_a_break() -> None:
    def fn(x: Any, s: float) -> Any:
        x += s
        m = np.trim_zeros(x.ravel())[0]  # a break
        x -= m
        return {"m": m, "scaled": x * s}

    x = make_array((2, 5), "float32", seed=7)
    got, want = run_both(fn, x, 0.5)
    assert_matches(got, want)


def test_data_dependent_shapes() -> None:
    def fn(x: Any) -> Any:
        pos = x[x > 0]
        nz = np.nonzero(x > 1)
        u = np.unique(np.round(x))
        return pos.sum() + u.size, nz, np.where(x > 2)

    x = make_array((3, 4), "float64", seed=8)
    got, want = run_both(fn, x)
    assert_matches(got, want)


def test_empty_and_zero_d() -> None:
    def fn(x: Any) -> Any:
        return np.sort(x, axis=None) + np.median(x) if x.size else np.sort(x, axis=None)

    for x in (np.zeros((0,)), np.array(3.0), make_array((4,), "float64")):
        got, want = run_both(fn, x)
        assert_matches(got, want)


def test_whole_function_in_numpy_when_nothing_can_be_traced() -> None:
    def fn(x: Any) -> Any:
        return np.abs(np.fft.hfft(x)) * 2  # (np.fft.hfft is not compiled)

    x = make_array((8,), "float64", seed=9)
    got, want = run_both(fn, x)
    assert_matches(got, want)


def test_numpy_errors_come_through() -> None:
    with pytest.raises(np.linalg.LinAlgError), warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        stax.jit(lambda x: np.linalg.inv(x * 0))(np.ones((2, 2)))


def test_strict_keeps_the_error() -> None:
    with pytest.raises(NotImplementedError, match="np.trim_zeros"):
        stax.jit(unsupported_between, strict=True)(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="traced"):
        stax.jit(branchy, strict=True)(np.ones(3))


def test_explain_lists_the_breaks() -> None:
    report = stax.explain(unsupported_between, np.ones((2, 3)), np.ones(3))
    assert [b.what for b in report.breaks] == ["np.trim_zeros", "np.i0"]
    assert "== Graph breaks ==\nnp.trim_zeros" in str(report)
    plain = stax.explain(lambda x: x + 1, np.ones(3))
    assert plain.breaks == () and "== Graph breaks ==\nnone" in str(plain)


def with_options(x: Any, shape: Any, mode: str = "same", axis: Any = None, *,
                 scale: float = 1.0, parts: Any = None) -> Any:
    y = x.reshape(shape) * scale
    if mode == "same":
        y = y + 1
    if parts:
        parts[0][...] = y * parts[1]  # an array inside a list, mutated
    return y.sum(axis=axis)


def test_keyword_and_non_array_arguments_specialize() -> None:
    jf = stax.jit(with_options)
    x = make_array((6,), "float64", seed=10)
    calls = [((x, (2, 3)), {}), ((x, (3, 2), "valid", 0), {"scale": 2.0}),
             ((x, [2, 3]), {"parts": [np.zeros((2, 3)), 2.0]}),
             ((x, (6,)), {"mode": None, "axis": None, "scale": 0.5})]
    for args, kwargs in calls:
        mine = copy_deep(args), copy_deep(kwargs)
        theirs = copy_deep(args), copy_deep(kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error", GraphBreakWarning)  # all compiled
            got = jf(*mine[0], **mine[1])
        assert_matches(got, with_options(*theirs[0], **theirs[1]))
        if "parts" in kwargs:
            assert_matches(mine[1]["parts"][0], theirs[1]["parts"][0])
    assert len(jf.variants) == 4


def copy_deep(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(copy_deep(o) for o in obj)
    if isinstance(obj, dict):
        return {k: copy_deep(v) for k, v in obj.items()}
    return obj


def test_an_opaque_argument_runs_the_function_in_numpy() -> None:
    class Model:
        def __init__(self) -> None:
            self.w = np.arange(3.0)

    model = Model()
    jf = stax.jit(lambda x, m: x * m.w)
    with pytest.warns(GraphBreakWarning, match="argument of type Model"):
        assert_matches(jf(np.ones(3), model), np.arange(3.0))
    model.w = model.w * 2  # not a stale constant
    assert_matches(jf(np.ones(3), model), np.arange(3.0) * 2)


def test_global_random_numbers_are_drawn_on_each_call() -> None:
    def fn(x: Any) -> Any:
        return x + np.random.rand(*x.shape) * np.random.normal(size=x.shape[0])

    jf = stax.jit(fn)
    x = np.zeros(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        np.random.seed(3)
        got = [jf(x), jf(x)]
    np.random.seed(3)
    want = [fn(x), fn(x)]
    assert_matches(got, want)
    assert not np.array_equal(got[0], got[1])


def test_user_try_except_cannot_swallow_a_break() -> None:
    def fn(x: Any) -> Any:
        try:
            scale = float(x.sum())
        except Exception:  # noqa: BLE001 - the user's code
            scale = 0.0
        return x * scale

    got, want = run_both(fn, np.arange(3.0))
    assert_matches(got, want)


def test_non_array_results_and_nested_jit() -> None:
    inner = stax.jit(lambda a: a * 2)

    def fn(x: Any) -> Any:
        return inner(x) + 1, "label", None, int

    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)  # compiled: inner is inlined
        got = stax.jit(fn)(np.ones(2))
    assert got[1:] == ("label", None, int)
    assert_matches(got[0], fn(np.ones(2))[0])


def test_shapes_that_depend_on_the_data_stop_compiling() -> None:
    def fn(x: Any) -> Any:
        # a new segment shape for each count of positives ([DYN16] x[x > 0] compiles)
        return (np.trim_zeros(np.maximum(x, 0)) * 2).sum()

    jf = stax.jit(fn)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", GraphBreakWarning)
        for k in range(14):  # one signature, 14 different counts
            x = np.arange(16, dtype=np.float64) - k
            assert_matches(jf(x), fn(x))
    assert any("runs in NumPy from now on" in str(w.message) for w in record)
    assert jf.segment_counts[jf.key((np.zeros(16),))][1] <= breaks.MAX_RECOMPILES + 2



def test_a_call_needing_many_segments_runs_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A break inside a Python loop whose segment differs per iteration (npbench nussinov: one
    g++ run per iteration) stops compiling after MAX_CALL_SEGMENTS; the call starts over in
    NumPy, nothing applied twice to the mutated argument, and later calls compile nothing."""
    monkeypatch.setattr(breaks, "MAX_CALL_SEGMENTS", 3)

    def fn(x: Any, out: Any) -> Any:
        for i in range(12):
            if x[i] > 0:  # a break per iteration, each segment with its own slice
                out[i:] += x[i]
            else:
                out[:i] -= 1.0
        return out.sum()

    jf = stax.jit(fn)
    x = np.linspace(-1.0, 1.0, 12) * np.array([1, -1] * 6)
    for _ in range(2):
        out, want_out = np.ones(12), np.ones(12)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", GraphBreakWarning)
            got = jf(x, out)
        assert_matches(got, fn(x, want_out))
        assert_matches(out, want_out)
    assert jf.segment_counts[jf.key((x, out))][1] > breaks.MAX_RECOMPILES
    assert not record  # the second call: NumPy directly, warned once before
    assert any("more than 3 compiled segments" in str(b) for b in jf.breaks[jf.key((x, out))])


STEPS: dict[str, Any] = {
    "exp_scale": lambda x: np.tanh(x) * 2 + 1,
    "i0": lambda x: np.i0(x),  # a break
    "center_by_float": lambda x: x - float(x.mean()),  # a break
    # a break; not `> 0`: after center_by_float the sum is 0 up to rounding, whose sign
    # depends on the summation order (NumPy's pairwise sum vs a vectorized one)
    "branch": lambda x: x * 3 if x.sum() > 0.25 else -x,
    "sorted_cumsum": lambda x: np.cumsum(np.sort(x)),  # compiled (extern + scan)
    "mask_set": lambda x: np.where(x > 0.5, 0.5, x),
    "item_shift": lambda x: x + x[0].item(),  # a break
}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4),
       st.integers(0, 2 ** 16))
def test_random_programs_with_breaks_match_numpy(names: list[str], seed: int) -> None:
    def program(x: Any) -> Any:
        for name in names:
            x = STEPS[name](x)
        return x

    x = make_array((6,), "float64", seed=seed, low=-1, high=1)
    got, want = run_both(program, x)
    assert_matches(got, want, rtol=1e-12, atol=1e-12)
