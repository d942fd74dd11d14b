"""Masked updates of an argument computed in the caller's array itself (SPARSE, issue 9): the
memory plan writes a mutated argument's new value in place of the argument when the kernel
reads it only at the index it writes and cannot raise (`stax.api._donated`,
`MemBuffer.becomes`); blocks the mask selects no element of are then not written at all.
Values and the caller's arrays vs NumPy computed here, over dtypes, densities, strided and
transposed arguments, aliased arguments, 0-d and empty arrays, NaN/inf outside the mask with
warnings as errors, read-only arguments, calls in a Python loop and at each ISA level."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import stax
from stax.frontend.breaks import GraphBreakWarning
from stax.runtime.compiler import ISA_LEVELS, isa_level

IN_PLACE = "the caller's array itself"
DENSITIES = (0.0, 0.005, 0.05, 0.5, 1.01)  # none, sparse, ..., all (r < 1.01)


def updates(x: Any, y: Any, r: Any, d: Any) -> None:
    m = r < d
    x[m] = x[m] ** 1.5
    y[m] = np.exp(x[m]) - y[m]


def run_both(fn: Any, *args: Any) -> None:
    """fn on copies of `args` in NumPy and in Stax, every warning an error: the results and
    the arguments after the call equal."""
    ours = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = fn(*theirs)
        got = stax.jit(fn)(*ours)
    same(got, want)
    for g, w in zip(ours, theirs, strict=True):
        same(g, w)


def same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    if want is None or not isinstance(want, (np.ndarray, np.generic)):
        assert got == want
        return
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 2e-6 if want.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


def data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> tuple[Any, Any, Any]:
    """x, y and the mask's source r; outside the sparse masks x holds NaN, inf and negatives
    (NumPy warns on their power, which it computes only inside the mask)."""
    rng = np.random.default_rng(seed)
    x = (rng.random(shape) + 0.5).astype(dtype)
    y, r = rng.random(shape).astype(dtype), rng.random(shape)
    outside = r >= 0.6
    x[outside] = np.where(rng.random(shape) < 0.5, -3.0, np.nan)[outside]
    x.flat[np.flatnonzero(outside.ravel())[:3]] = np.inf
    return x, y, r


@pytest.mark.parametrize("isa", ISA_LEVELS)
def test_in_place_at_each_isa(isa: str) -> None:
    """float64 contiguous (a ragged last block), float32 transposed and strided arguments,
    every density: values and the caller's arrays as NumPy's, at each ISA level."""
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"this CPU does not run {isa}")
    f = stax.jit(updates, isa=isa)
    x, y, r = data((1001,), "float64")
    xt, yt, rt = data((40, 70), "float32", 1)
    for d in DENSITIES:
        for args in ((x, y, r, d), (xt.T, yt.T, rt.T, d),
                     (xt[::2, ::3], yt[::2, ::3], rt[::2, ::3], d)):
            ours = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
            theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
            with warnings.catch_warnings(), np.errstate(all="ignore" if d > 1 else "warn"):
                warnings.simplefilter("error")
                updates(*theirs)
                assert f(*ours) is None
            same(ours[0], theirs[0])
            same(ours[1], theirs[1])
    assert IN_PLACE in str(stax.explain(f, x, y, r, 0.1))


def test_argument_views_are_updated_through() -> None:
    """A transposed view and a strided view of a larger array: the base array gets NumPy's
    values, elements outside the view untouched."""
    base = np.random.default_rng(4).random((30, 40)) + 0.1
    for view in (lambda a: a.T, lambda a: a[::2, 1::3], lambda a: a[:, ::-1]):
        ours, theirs = base.copy(), base.copy()
        r = np.random.default_rng(5).random(view(base).shape)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            updates(view(theirs), np.ones_like(view(theirs)), r, 0.1)
            stax.jit(updates)(view(ours), np.ones_like(view(ours)), r, 0.1)
        same(ours, theirs)


def integer_updates(a: Any, m: Any, k: Any) -> Any:
    a[m] = a[m] * k + 1
    return a


def integer_division(a: Any, b: Any, m: Any) -> None:
    a[m] = a[m] // b[m]


def test_integers_and_a_kernel_that_may_raise() -> None:
    """Ints in place (`return a` is the caller's array); an integer division (it may raise
    after writing) is not computed in place: raising, NumPy's argument is left as it was."""
    rng = np.random.default_rng(6)
    for dtype in ("int64", "int32", "uint8"):
        a = rng.integers(0, 100, 999).astype(dtype)
        m = rng.random(999) < 0.05
        run_both(integer_updates, a, m, 3)
        ours = a.copy()
        assert stax.jit(integer_updates)(ours, m, 3) is ours
    a, b = np.arange(1, 301), np.where(np.arange(300) % 7 == 0, 0, 3)
    run_both(integer_division, a, b, b != 0)
    assert IN_PLACE not in str(stax.explain(integer_division, a, b, b != 0))
    ours = a.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            stax.jit(integer_division)(ours, b, b < 2)
    np.testing.assert_array_equal(ours, a)


def other_reads(x: Any, m: Any) -> tuple[Any, Any]:
    s = x.sum()  # another kernel reads x first
    x[m] = x[m] * 2.0 + s
    return x[::-1].copy(), s


def reversed_read(x: Any, m: Any) -> None:
    x[m] = x[::-1][m] * 2.0  # reads x at another index: never in place


def two_args(x: Any, y: Any, m: Any) -> None:
    x[m] = np.sqrt(y[m]) + x[m]


def test_other_readers_and_aliased_arguments() -> None:
    """The argument read by another kernel or at another index; two views of one array passed
    as two arguments (Stax runs such a call in NumPy: `Traced.check_args`): NumPy's results
    and arrays."""
    rng = np.random.default_rng(7)
    x, m = rng.random(513), rng.random(513) < 0.3
    run_both(other_reads, x, m)
    run_both(reversed_read, x, m)
    assert IN_PLACE not in str(stax.explain(reversed_read, x, m))
    f = stax.jit(two_args)
    f(x.copy(), x.copy(), m)  # compiled for disjoint arguments
    for y_of in (lambda a: a, lambda a: a[::-1]):
        ours, theirs = x.copy(), x.copy()
        two_args(theirs, y_of(theirs), m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            f(ours, y_of(ours), m)
        same(ours, theirs)


def whole(x: Any, m: Any) -> None:
    x[...] = np.where(m, np.sqrt(x) * 3.0, x)  # a 0-d argument (x[m] of a 0-d m: not traced)


def test_0d_empty_read_only_and_a_python_loop() -> None:
    for x, m in ((np.array(2.0), np.array(True)), (np.array(2.0), np.array(False)),
                 (np.zeros(0), np.zeros(0, bool)), (np.ones((3, 0), np.float32),
                                                    np.zeros((3, 0), bool))):
        run_both(whole, x, m)
        if x.ndim:
            run_both(updates, x, np.ones_like(x), m.astype(float), 0.5)
    x = np.random.default_rng(8).random(200)
    frozen = x.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        updates(frozen, np.ones(200), x, 0.5)
    with pytest.raises(ValueError, match="read-only"):
        stax.jit(updates)(frozen, np.ones(200), x, 0.5)
    np.testing.assert_array_equal(frozen, x)
    f = stax.jit(updates)
    ours, theirs, y_ours, y_theirs = x.copy(), x.copy(), np.ones(200), np.ones(200)
    for d in (0.5, 0.3, 0.1, 0.02):  # the same arguments again and again
        updates(theirs, y_theirs, x, d)
        f(ours, y_ours, x, d)
        same(ours, theirs)
        same(y_ours, y_theirs)
