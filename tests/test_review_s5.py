"""[REVIEW] Adversarial programs for this session's features, each called several times with
one signature and different data (guards flip), compared with NumPy on every call: compiled
data-dependent shapes, graph-break replay, run-time prefix stops and nested loop drivers.
Bugs found are tests here (fixed, or xfail(strict=True) naming the bug)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax

RNG = np.random.default_rng(5)


def calls(fn: Any, inputs: list[tuple[Any, ...]]) -> Any:
    """`stax.jit(fn)` on each of `inputs` equals NumPy's `fn` on copies: results, arguments
    (mutated ones too) and NumPy's exception type where NumPy raises."""
    jf = stax.jit(fn)
    for args in inputs:
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        try:
            want = fn(*theirs)
        except Exception as e:  # noqa: BLE001 - NumPy's error is the expected one
            with pytest.raises(type(e)), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                jf(*mine)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = jf(*mine)
        assert_matches(got, want)
        for m, t in zip(mine, theirs, strict=True):
            if isinstance(m, np.ndarray):
                assert_matches(m, t)
    return jf


# ---- data-dependent shapes -------------------------------------------------------------------

SIGNS = [
    np.array([1.0, -1, 2, -3]),
    np.array([-1.0, -2, -3, -4]),
    np.array([1.0, 2, 3, 4]),
    np.array([-1.0, 5, -2, -3]),
    np.array([3.0, -1, 2, 1]),
]  # counts 2, 0, 4, 1, 3


def test_mask_counts_feed_reductions_broadcasts_and_further_masks() -> None:
    def f(x: Any, y: Any) -> Any:
        m = x[x > 0]
        return m.sum(), m[:, None] + y[None, :], m[m > 1.5], np.nonzero(m > 1)[0]

    calls(f, [(x, np.arange(3.0)) for x in SIGNS])


def test_argument_mutated_after_a_data_dependent_selection() -> None:
    def f(x: Any) -> Any:
        m = x[x > 0]
        x[x > 0] = 0
        x += 1
        return m, x

    calls(f, [(x,) for x in SIGNS])


def test_unique_of_floats_with_nan_and_signed_zeros() -> None:
    def f(x: Any) -> Any:
        v, i, c = np.unique(x, return_index=True, return_counts=True)
        return v, i, c, 1.0 / v, (v * c).sum()

    calls(
        f,
        [
            (np.array([0.0, -0.0, np.nan, 1.0, np.nan, 1.0]),),
            (np.array([np.nan, np.nan, np.nan, 2.0]),),
            (np.array([-0.0, 0.0, 0.0, 3.0, 3.0, 3.0]),),
            (np.array([5.0, 4, 3, 2, 1, 0]),),
        ],
    )


def test_bincount_weights_and_negative_values() -> None:
    def f(x: Any, w: Any) -> Any:
        return np.bincount(x, weights=w), np.bincount(x) + 1

    calls(
        f,
        [
            (np.array([0, 1, 1, 3, 2]), np.arange(5.0)),
            (np.array([4, 4, 0, 0, 0]), np.ones(5)),
            (np.array([0, -1, 2, 1, 1]), np.ones(5)),  # NumPy's ValueError
            (np.array([0, 0, 0, 0, 0]), np.ones(5)),
        ],
    )


@pytest.mark.parametrize("dtype", ["float16", "bool", "uint64"])
def test_selections_of_small_and_unsigned_dtypes(dtype: str) -> None:
    def f(x: Any) -> Any:
        return x[x > x.min()], np.unique(x), np.flatnonzero(x), np.argwhere(x)

    calls(
        f,
        [
            (np.array(v).astype(dtype),)
            for v in ([3, 1, 2, 1, 0, 3], [1, 1, 1, 1, 1, 1], [0, 5, 0, 0, 9, 2])
        ],
    )


def test_strided_transposed_and_empty_inputs() -> None:
    a = RNG.standard_normal((6, 5))

    def f(x: Any) -> Any:
        return x[x > 0], np.nonzero(x > 0), np.compress(x[:, 0] > 0, x, axis=0)

    calls(f, [(a.T,), (-np.abs(a).T,), (np.abs(a).T,), (a.T[::-1],)])
    calls(f, [(a[::2, ::-1],), (np.zeros((0, 5)),)])


# ---- graph-break replay ----------------------------------------------------------------------


def test_numpy_scalar_and_python_float_are_different_signatures() -> None:
    """Bug (fixed): np.float64 is a subclass of float, so a call with np.float64(1.0) after one
    with 1.0 reused the weak-scalar program (float32 result; NumPy's is float64)."""

    def plain(x: Any, s: Any) -> Any:
        return x + s

    def broken(x: Any, s: Any) -> Any:
        return np.unwrap(x) + s  # np.unwrap: a graph break

    x = np.arange(3, dtype=np.float32)
    for f in (plain, broken):
        calls(f, [(x, 1.0), (x, np.float64(1.0)), (x, 1), (x, np.complex128(1)), (x, 1.0)])


def test_item_as_index_and_shape_flipping_branches() -> None:
    def f(x: Any) -> Any:
        k = int(x[0])
        y = np.zeros(max(k, 0)) + x[1 : k + 1].sum()
        s = float(np.unwrap(x)[1])
        return (y, x / s) if s != 0.0 else (y, x + 1)

    calls(
        f,
        [
            (np.array(v),)
            for v in (
                [2.0, 1, 2, 3],
                [0.0, 0, 2, 3],
                [2.0, 5, 6, 3],
                [-1.0, -0.0, 6, 3],
                [3.0, np.nan, 2, 3],
                [2.0, 1, 2, 9],
            )
        ],
    )


def test_numpy_mutating_arguments_inside_breaks() -> None:
    def f(x: Any, y: Any) -> Any:
        np.copyto(x, y * 2)
        z = np.unwrap(x)
        x.sort()
        return z + x

    calls(f, [(RNG.standard_normal(5), RNG.standard_normal(5)) for _ in range(4)])


def test_copyto_with_and_without_where_are_different_externs() -> None:
    """Both registered one extern key (`where` was not in it): the first routine served both
    (a copyto without `where` called NumPy's with the source as the mask)."""
    def masked(x: Any, y: Any, m: Any) -> Any:
        np.copyto(x, y * 3, where=m)
        return x + 1

    def plain(x: Any, y: Any) -> Any:
        np.copyto(x, y * 2)
        return x + 1

    x, y, m = RNG.standard_normal(5), RNG.standard_normal(5), RNG.random(5) > 0.5
    for fn, args in ((masked, (x, y, m)), (plain, (x, y))):
        got, want = stax.jit(fn)(*(a.copy() for a in args)), fn(*(a.copy() for a in args))
        assert_matches(got, want)


def test_the_same_array_returned_twice_stays_one_object() -> None:
    def f(x: Any) -> Any:
        y = np.unwrap(x)
        return y, y, x

    jf = stax.jit(f)
    for v in (np.arange(4.0), np.arange(4.0) + 1, -np.arange(4.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b, c = jf(v)
        assert a is b and c is v
        assert_matches(a, f(v)[0])


def _view_programs() -> list[Any]:
    def write_through_break_view(x: Any) -> Any:
        y = np.trim_zeros(x)  # NumPy returns a view of x
        y[0] = 7.0
        return y, x

    def mutate_after_break_view(x: Any) -> Any:
        t = np.trim_zeros(x)
        x[:] = 0  # t shows the zeros in NumPy
        return t

    def view_of_a_strided_view(x: Any) -> Any:
        y = np.trim_zeros(x[::-2])  # a view of a (reversed, strided) view of x
        y += 1
        return y * 2, x

    def reshaped_and_squeezed(x: Any) -> Any:
        y = np.trim_zeros(x).reshape(1, -1, 1)  # views of the break's view
        z = np.squeeze(y)
        z[-1] = -3.0
        return y.T, x.sum(), x

    def ufunc_out_returns_its_argument(x: Any) -> Any:
        m, e = np.frexp(x, np.empty_like(x), np.empty(x.shape, np.int32))
        y = np.frexp(x, m, e)[0]  # out= positionally: NumPy returns m itself
        y[0] = 0.5
        return m, y

    return [write_through_break_view, mutate_after_break_view, view_of_a_strided_view,
            reshaped_and_squeezed, ufunc_out_returns_its_argument]


@pytest.mark.parametrize("fn", _view_programs(), ids=lambda f: f.__name__)
def test_break_results_that_view_arguments(fn: Any) -> None:
    """A break's result that NumPy returns as a view of an argument is that view of the
    traced argument (writes through either reach the other), first call and replayed."""
    calls(fn, [(np.array([0.0, 1, 2, 0]),), (np.array([3.0, 1, 2, 0]),),
               (np.array([5.0, 1, 2, 0]),), (np.array([0.0, 0, 2, 4]),),
               (np.array([0.0, 1, 2, 0]),), (np.array([6.0, 1, 2, 0]),)])


def _view_programs_2d() -> list[Any]:
    def trim_columns(x: Any) -> Any:
        y = np.trim_zeros(x, axis=1)
        y[..., 0] = -1.0
        return y, x

    def trim_transposed(x: Any) -> Any:
        y = np.trim_zeros(x.T, axis=0)
        y *= 2
        return y.copy(), x

    def window_written_through_as_strided(x: Any) -> Any:
        # as_strided converts x with np.array(x, copy=None): x itself in NumPy
        y = np.lib.stride_tricks.as_strided(x, shape=(2,), strides=(x.strides[-1] * 3,))
        y[0] = 9.0
        return x + 1

    def dtype_view_written(x: Any) -> Any:
        y = np.trim_zeros(x.ravel()).view(np.int64)  # Stax has no dtype views: NumPy runs it
        y[0] = 0
        return x

    return [trim_columns, trim_transposed, window_written_through_as_strided,
            dtype_view_written]


@pytest.mark.parametrize("fn", _view_programs_2d(), ids=lambda f: f.__name__)
def test_break_views_of_2d_and_fortran_arguments(fn: Any) -> None:
    base = np.array([[0.0, 1, 2, 0], [0, 3, 0, 0], [0, 0, 0, 0]])
    calls(fn, [(base,), (base + 1,), (np.asfortranarray(base),), (base[:, ::-1],),
               (base,), (np.asfortranarray(base),)])


# ---- loops: run-time prefix stops, nested drivers ----------------------------------------------


def test_triangular_slices_with_negative_zero_and_far_stops() -> None:
    def f(x: Any, out: Any, k: int) -> Any:
        for i in range(x.shape[0]):
            out[i] = (
                x[i, : i - 2].sum()
                + np.dot(x[i, i - 3 :], x[i, i - 3 :])
                + x[i, : 2 * i + 5].max(initial=-1.0)
                + x[i, : k - i].sum()
                + x[i, i + 1 : i - 1].sum()
                + np.prod(x[i, :i])
            )
        return out

    calls(
        f,
        [
            (RNG.standard_normal((n, n)), np.zeros(n), k)
            for n, k in ((1, 0), (6, 3), (6, -2), (6, 9), (6, 0))
        ],
    )


def test_nested_loops_with_reversed_empty_and_negative_ranges() -> None:
    def f(a: Any, b: Any) -> Any:
        n = a.shape[0]
        for i in range(n):
            for j in range(i, 0, -1):
                a[i, j] = a[i, j - 1] * 0.5 + a[j, :i].sum()
            for j in range(n - i, n - 2 * i):
                a[i, j] += 1.0
            for j in range(i - 3, i):
                a[i, j] = a[i, j] + np.dot(a[i, :j], b[:j, j])
        return a

    mats = [RNG.standard_normal((n, n)) for n in (1, 2, 6)]
    calls(f, [(m, RNG.standard_normal((n, n))) for m, n in zip(mats, (1, 2, 6), strict=True)])
    calls(
        f, [(np.asfortranarray(m), RNG.standard_normal((2 * len(m),) * 2)[::2, ::-2]) for m in mats]
    )


# ---- random generator arguments (s6 HUNT) -------------------------------------------------------

def _generator_programs() -> list[Any]:
    def noise(x: Any, rng: Any) -> Any:
        return x + rng.normal(0.0, 0.1, size=x.shape)

    def bootstrap(x: Any, rng: Any, n: int) -> Any:
        idx = rng.integers(0, len(x), size=(n, len(x)))
        return x[idx].mean(axis=1), rng.random()  # a Python float drawn: replay misses

    def branch_on_a_draw(x: Any, rng: Any) -> Any:
        y = x * 2
        if rng.random(1)[0] > 0.5:  # Python decides on a draw: replays miss half the time
            y = y + rng.standard_normal(x.shape)
        return y.sum(), x

    def walk(x: Any, rng: Any) -> Any:
        for _ in range(20):  # more segments than one call may compile: NumPy from then on
            x = x + rng.choice([-1.0, 1.0], size=x.shape) * np.sqrt(np.abs(x).sum() + 1)
        return x

    def legacy_and_keywords(x: Any, *, state: Any, scale: float = 1.0) -> Any:
        state.shuffle(x)  # in place, on the argument
        return x * scale + state.standard_normal(3).sum()

    return [noise, bootstrap, branch_on_a_draw, walk, legacy_and_keywords]


@pytest.mark.parametrize("fn", _generator_programs(), ids=lambda f: f.__name__)
def test_random_generator_arguments_draw_as_numpy(fn: Any) -> None:
    """A Generator (or RandomState) argument: each draw is a graph break drawing from the
    call's generator (on replay too); the rest compiles. Same numbers as NumPy's, the
    generator left in NumPy's state, also when a replay misses or the call starts over in
    NumPy (the generators' states are restored first)."""
    jf = stax.jit(fn)
    for seed in (1, 2, 3, 1, 4, 5, 6, 7, 8, 2):
        x = RNG.standard_normal(6)
        legacy = fn.__name__ == "legacy_and_keywords"
        make = (lambda s=seed: np.random.RandomState(s)) if legacy else \
            (lambda s=seed: np.random.default_rng(s))
        mine, theirs = make(), make()
        a, b = x.copy(), x.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if legacy:
                got, want = jf(a, state=mine, scale=2.0), fn(b, state=theirs, scale=2.0)
            else:
                extra = (4,) if fn.__name__ == "bootstrap" else ()
                got, want = jf(a, mine, *extra), fn(b, theirs, *extra)
        assert_matches(got, want)
        assert_matches(a, b)
        assert mine.random() == theirs.random()  # the generators were advanced alike
