"""A mutated argument's new value computed in the caller's array (INPLACE, issue 9): every read
of the argument's old value (another output, a reduction, a second mutated argument, a view, a
later kernel, the one-by-one costly side of a sparse mask's block) sees the old value. Each
function runs in NumPy and in Stax on copies of the same arguments: every result and every
argument after the call equal, over dtypes, densities (none, sparse, all), strided and
transposed arguments, 0-d and empty arrays, and random sequences of in-place statements."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax

IN_PLACE = "the caller's array itself"


def same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    if not isinstance(want, (np.ndarray, np.generic)):
        assert got == want
        return
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 2e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)


def run_both(fn: Callable[..., Any], *args: Any) -> None:
    """`fn` on copies of `args` in NumPy and in Stax (compiled for these arguments): the results
    and the arguments after the call equal; a second call on fresh copies (the compiled
    program's warm path) too."""
    jitted = stax.jit(fn)
    for _ in range(2):
        ours = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = fn(*theirs)
            got = jitted(*ours)
        same(got, want)
        for g, w in zip(ours, theirs, strict=True):
            same(g, w)


def sparse(n: int, density: float, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    """Values in [0.5, 1.5) and, at `density` of the elements (scattered), negatives."""
    rng = np.random.default_rng(seed)
    x = rng.random(n) + 0.5
    x[rng.random(n) < density] *= -1
    return x.astype(dtype)


DENSITIES = (0.0, 0.01, 0.1, 0.5, 1.0)


# the four corpus programs' patterns, small


@pytest.mark.parametrize("density", DENSITIES)
def test_where_output_then_argument_overwritten(density: float) -> None:
    """wild7 ufunc_out_where: `exp(x, where=x < 0)` reads x's old value in the same kernel
    that writes `maximum(x, 0)` into x (it returned zeros)."""

    def f(x: Any) -> Any:
        out = np.zeros_like(x)
        np.exp(x, out=out, where=x < 0)
        np.maximum(x, 0, out=x)
        np.multiply(x, 2, out=x)
        return out

    run_both(f, sparse(1000, density))
    run_both(f, sparse(7, density))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nanvar_of_inf_then_mutation(dtype: str) -> None:
    """wild5's nanvar with inf - inf: a reduction of the old value next to a masked update."""

    def f(x: Any) -> Any:
        v = np.nanvar(x)
        x[np.isinf(x)] = 0
        return v, np.nanmean(x)

    x = sparse(300, 0.05, dtype=dtype)
    x[[3, 70, 150]] = [np.inf, -np.inf, np.nan]
    run_both(f, x)


def test_correlation_standardized_in_place() -> None:
    """wild6 polybench correlation: the data standardized in place, column statistics of the
    old values first, a small-stddev guard as a masked update."""

    def f(data: Any) -> Any:
        n = data.shape[0]
        mean = data.mean(axis=0)
        std = np.sqrt(((data - mean) ** 2).mean(axis=0))
        std[std <= 0.1] = 1.0
        data -= mean
        data /= np.sqrt(n) * std
        return data.T @ data, mean, std

    rng = np.random.default_rng(1)
    d = rng.random((40, 9))
    d[:, 3] = 0.5  # a zero stddev
    run_both(f, d)


def test_mutation_program_with_old_value_outputs() -> None:
    """wild13 inplace_argument_mutation's shape: outputs computed from the old value, then
    several in-place statements on the argument."""

    def f(x: Any, y: Any) -> Any:
        before = x.sum()
        x *= 2
        x[x > 1.5] = 0
        y += x
        np.clip(y, -1, 1, out=y)
        return before, x.max()

    run_both(f, sparse(500, 0.1), sparse(500, 0.3, seed=2))


# old value read elsewhere


@pytest.mark.parametrize("density", DENSITIES)
def test_old_value_read_by_another_output(density: float) -> None:
    def f(x: Any) -> Any:
        y = x * 2
        m = x < 0
        x[m] = np.exp(x[m])
        return y

    run_both(f, sparse(1000, density))


@pytest.mark.parametrize("density", DENSITIES)
def test_old_value_read_by_reduction_after_the_write(density: float) -> None:
    def f(x: Any) -> Any:
        old = x + 0
        x[x < 0] = x[x < 0] ** 2
        return old.sum(), np.cumsum(old)[-1], x.sum()

    run_both(f, sparse(1000, density))


@pytest.mark.parametrize("density", DENSITIES)
def test_old_value_read_by_a_second_mutated_argument(density: float) -> None:
    def f(x: Any, y: Any) -> None:
        t = x * 1.0
        m = x < 0
        x[m] = np.abs(x[m]) ** 1.5
        y[m] = np.exp(t[m]) - y[m]
        y += t

    run_both(f, sparse(1000, density), sparse(1000, 0.5, seed=3))


def test_old_value_read_in_a_later_kernel() -> None:
    """A matmul (an extern call) and a reduction over the old value after the in-place update."""

    def f(x: Any, w: Any) -> Any:
        old = x.copy()
        x[x < 0] = np.log(-x[x < 0])
        return old @ w, (old * x).sum()

    run_both(f, sparse(64, 0.1), np.random.default_rng(4).random((64, 3)))


@pytest.mark.parametrize("density", [0.05, 0.5])
def test_views_of_the_argument(density: float) -> None:
    def through_transpose(x: Any) -> Any:
        v = x.T
        r = x[::-1] + 0
        x[x < 0] = np.exp(x[x < 0])
        return v + 0, r  # v is a view: the new value; r the old one

    def overlapping(x: Any) -> None:
        x[1:] = x[:-1] * 2  # NumPy: the right side first
        x[x < 0] = np.sqrt(-x[x < 0])

    def shifted_mask(x: Any) -> None:
        m = x[:-1] < 0
        x[1:][m] = np.exp(x[:-1][m])

    x = sparse(30 * 20, density).reshape(30, 20)
    run_both(through_transpose, x)
    run_both(overlapping, sparse(500, density))
    run_both(shifted_mask, sparse(500, density))


def test_argument_passed_twice() -> None:
    def f(a: Any, b: Any) -> Any:
        a[a < 0] = np.exp(a[a < 0])
        b *= 2
        return a + b

    x = sparse(200, 0.1)
    ours, theirs = x.copy(), x.copy()
    want = f(theirs, theirs)
    got = stax.jit(f)(ours, ours)
    same(got, want)
    same(ours, theirs)


@pytest.mark.parametrize("density", DENSITIES)
def test_out_aliasing_an_input(density: float) -> None:
    def f(x: Any, y: Any) -> Any:
        np.exp(x, out=x, where=x < 0)
        np.add(x, y, out=y, where=y < 0)
        np.multiply(y, x, out=x)
        return x.sum()

    run_both(f, sparse(1000, density), sparse(1000, density, seed=5))


@pytest.mark.parametrize("density", DENSITIES)
def test_chain_of_in_place_ops(density: float) -> None:
    def f(x: Any) -> Any:
        y = x.copy()
        x[x < 0] *= 0.5
        x[x > 1.2] **= 2
        x += 1
        np.sqrt(x, out=x, where=x > 1.4)
        return y - x

    run_both(f, sparse(1000, density))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_dtypes(dtype: str) -> None:
    def f(x: Any, y: Any) -> Any:
        old = x.copy()
        x[y] = ~x[y] if x.dtype == bool else x[y] * 3
        return old, x[0]

    rng = np.random.default_rng(6)
    x = (rng.random(300) * 10).astype(dtype)
    run_both(f, x, rng.random(300) < 0.05)


def test_strided_and_transposed_arguments() -> None:
    def f(x: Any) -> Any:
        old = x * 1
        m = x < 0
        x[m] = np.exp(x[m])
        return old

    base = sparse(40 * 60, 0.05).reshape(40, 60)
    selectors: tuple[Callable[[np.ndarray], np.ndarray], ...] = (
        np.transpose,
        lambda a: a[::2],
        lambda a: a[:, ::3],
        lambda a: a[::-1],
    )
    for select in selectors:
        ours, theirs = base.copy(), base.copy()
        want = f(select(theirs))
        got = stax.jit(f)(select(ours))
        same(got, want)
        same(ours, theirs)


@pytest.mark.parametrize("shape", [(), (0,), (5, 0)])
def test_zero_d_and_empty(shape: tuple[int, ...]) -> None:
    def f(x: Any) -> Any:
        old = x + 1
        m = x < 0
        x[m] = np.exp(x[m])
        np.exp(x, out=x, where=x > 100)
        return old

    run_both(f, np.full(shape, -0.5))


# random sequences of in-place statements


STATEMENTS = (
    "{a}[{a} < 0] = np.exp({a}[{a} < 0])",
    "{a}[{b} < 0] = {a}[{b} < 0] ** 2 - {b}[{b} < 0]",
    "np.exp({a}, out={a}, where={b} < 0)",
    "np.maximum({a}, 0, out={a})",
    "{a}[{a} > 1.4] *= 0.5",
    "{a} += {b}",
    "{a}[:] = {b}[::-1]",
    "t = {a} * 2",
    "outs.append({a} + t)",
    "outs.append({a}.sum())",
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(STATEMENTS), st.sampled_from("xyz"), st.sampled_from("xyz")),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0.0, 0.02, 0.3]),
)
def test_random_in_place_sequences(program: list[tuple[str, str, str]], density: float) -> None:
    lines = ["def f(x, y, z):", "    t = x + 0", "    outs = []"]
    lines += ["    " + s.format(a=a, b=b) for s, a, b in program]
    lines.append("    return tuple(outs) + (t,)")
    env: dict[str, Any] = {"np": np}
    exec("\n".join(lines), env)  # noqa: S102 - a generated test program
    run_both(
        env["f"],
        sparse(200, density, seed=7),
        sparse(200, density, seed=8),
        sparse(200, density, seed=9),
    )


def test_explain_records_the_in_place_write() -> None:
    """The memory plan says where an argument's new value is written in the caller's array."""

    def f(x: Any) -> None:
        m = x < 0
        x[m] = x[m] ** 1.5

    assert IN_PLACE in str(stax.explain(stax.jit(f), sparse(1000, 0.01)))


def test_explain_records_why_a_block_runs_the_full_version() -> None:
    """Where the cheap version overwrites what the costly side reads, the generated code says
    why the block has no one-by-one costly side (and the values are NumPy's: above)."""

    def f(x: Any) -> Any:
        out = np.zeros_like(x)
        np.exp(x, out=out, where=x < 0)
        np.maximum(x, 0, out=x)
        return out

    assert "no one-by-one costly side" in str(stax.explain(stax.jit(f), sparse(1000, 0.01)))


def test_returned_argument_and_calls_in_a_loop() -> None:
    """The mutated argument returned (the caller's array itself), next to an output of its old
    value; five calls on the same arrays as NumPy's five."""

    def f(x: Any, y: Any) -> Any:
        old = y * 1
        m = x < 0
        x[m] = np.exp(x[m])
        y[m] = np.sqrt(x[m]) + y[m]
        return x, old

    jitted = stax.jit(f)
    ours = (sparse(1000, 0.02), sparse(1000, 0.5, seed=1))
    theirs = tuple(a.copy() for a in ours)
    for _ in range(5):
        ours[0][::7] *= -1
        theirs[0][::7] *= -1
        got, want = jitted(*ours), f(*theirs)
        assert got[0] is ours[0]
        same(got, want)
        same(ours, theirs)
