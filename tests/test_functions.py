"""NumPy functions compiled as graph compositions (stax/frontend/functions.py): each equals
NumPy's result (dtype, shape, values) and compiles without a graph break."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.frontend.breaks import GraphBreakWarning

M = make_array((4, 5), "float64", seed=1)
F32 = make_array((3, 4), "float32", seed=2)
I32 = make_array((4, 5), "int32", seed=3)
B = make_array((3, 4), "bool", seed=4)
V = make_array((6,), "float64", seed=5)
NANS = np.where(make_array((4, 5), "bool", seed=6), np.nan, M)
NANS[2] = np.nan  # an all-NaN row
T = make_array((2, 3, 4), "float64", seed=7)

CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "diff": (lambda x: (np.diff(x), np.diff(x, 2, axis=0), np.diff(x, prepend=0.0)), (M,)),
    "diff_int_bool": (lambda x, b: (np.diff(x), np.diff(b, axis=0)), (I32, B)),
    "roll": (lambda x: (np.roll(x, 2), np.roll(x, -1, axis=1), np.roll(x, (1, 7), (0, 1))),
             (M,)),
    "flips": (lambda x: (np.flip(x), np.fliplr(x), np.flipud(x), np.flip(x, (0, 2))), (T,)),
    "rot90": (lambda x: (np.rot90(x), np.rot90(x, 2), np.rot90(x, 3), np.rot90(x, -1, (1, 2))),
              (T,)),
    "tril_triu": (lambda x, i: (np.tril(x), np.triu(x, 1), np.tril(i, -1), np.triu(T, -1)),
                  (M, I32)),
    "tile_repeat": (lambda x: (np.tile(x, 2), np.tile(x, (2, 1, 3)), np.repeat(x, 3),
                               np.repeat(x, 2, axis=1)), (F32,)),
    "stacks": (lambda x, v: (np.vstack([x, x]), np.hstack([v, v]), np.hstack([x, x]),
                             np.dstack([x, x]), np.column_stack([v, v]),
                             np.column_stack([x, x]), np.atleast_3d(v)), (M, V)),
    "outer": (lambda v, w: (np.outer(v, w), np.add.outer(v, w), np.maximum.outer(w, v),
                            np.subtract.outer(M, v)), (V, V[:4])),
    "tensordot": (lambda a, b: (np.tensordot(a, b, 1), np.tensordot(T, T, ([1, 2], [1, 2])),
                                np.tensordot(a, a, 2)), (M, M.T)),
    "einsum": (lambda a, t: (np.einsum("ij,jk->ik", a, a.T), np.einsum("ij->", a),
                             np.einsum("bij,bkj->bik", t, t), np.einsum("ii->i", a[:, :4]),
                             np.einsum("i,i", a[0], a[1]), np.einsum("ij", a),
                             np.einsum("ji", a)), (M, T)),
    "einsum_int": (lambda a: np.einsum("ij,kj->ik", a, a), (I32,)),
    "count_nonzero": (lambda x, b: (np.count_nonzero(x), np.count_nonzero(b, axis=1),
                                    np.count_nonzero(x, axis=0, keepdims=True)), (I32, B)),
    "nan_functions": (lambda x: (np.nansum(x), np.nansum(x, axis=1), np.nanmean(x, axis=0),
                                 np.nanmax(x, axis=1), np.nanmin(x, axis=0),
                                 np.nanstd(x, axis=0), np.nanvar(x, ddof=1)), (NANS,)),
    "nan_functions_f32_int": (lambda x, i: (np.nanmean(x), np.nanstd(x), np.nansum(i),
                                            np.nanmax(i, 0)), (F32, I32)),
    "average": (lambda x: (np.average(x), np.average(x, axis=1)), (M,)),
    "cov_corrcoef": (lambda x, f: (np.cov(x), np.cov(x, rowvar=False), np.cov(x, bias=True),
                                   np.corrcoef(x), np.cov(f), np.cov(x[0])), (M, F32)),
    "isclose": (lambda a, b: (np.isclose(a, b), np.isclose(a, a + 1e-9),
                              np.isclose(np.array([np.inf, np.nan, 1.0]), a[:3],
                                         equal_nan=True)), (V, V[::-1])),
    "select": (lambda x: np.select([x < -1, x < 1], [x, x * 2], default=-5), (M,)),
    "polyval": (lambda p, x: (np.polyval(p, x), np.polyval(p, 2.0)), (V[:4], M)),
    "trace_norm": (lambda x: (np.trace(x), np.trace(I32), np.linalg.norm(x),
                              np.linalg.norm(x, axis=1), np.linalg.norm(x[0], 1),
                              np.linalg.norm(x[0], np.inf), np.linalg.norm(x, "fro"),
                              np.linalg.norm(x, axis=0, keepdims=True)), (M,)),
    "meshgrid": (lambda x, y: (np.meshgrid(x, y), np.meshgrid(x, y, indexing="ij"),
                               np.meshgrid(x, y, sparse=True)), (V, V[:3])),
    "empty_and_zero_d": (lambda e, s: (np.diff(e), np.roll(e, 3), np.flip(s), np.tile(s, 2),
                                       np.count_nonzero(s), np.nansum(e)),
                         (np.zeros((0,)), np.array(2.5))),
    "strided_input": (lambda x: (np.roll(x, 1), np.diff(x, axis=0), np.tril(x)), (M.T[::2],)),
    "pad": (lambda x, i: (np.pad(x, 1), np.pad(x, ((0, 2), (3, 1)), constant_values=(7, -1)),
                          np.pad(i, (2, 1), "edge"), np.pad(x, ((1, 2), (3, 0)), "wrap"),
                          np.pad(x, ((2, 1), (3, 2)), "reflect"),
                          np.pad(x, ((0, 2), (4, 1)), "symmetric"),
                          np.pad(x.T, 0), np.pad(i, 1, constant_values=2.7)), (M, I32)),
    "gradient_trapezoid": (lambda m, i: (np.gradient(m), np.gradient(m, 0.5, axis=1),
                                         np.gradient(i), np.gradient(F32[0], 2.0),
                                         np.trapezoid(m), np.trapezoid(m, dx=0.1, axis=0),
                                         np.trapezoid(m, np.arange(5.0) ** 2),
                                         np.trapezoid(i)), (M, I32)),
    "diag_eye": (lambda m, i: (np.diag(m), np.diag(m, 1), np.diag(m, -2), np.diag(m[0]),
                               np.diag(m[0], 2), np.diag(i[0], -1), np.diagonal(m, 3),
                               np.diag(m, 7), np.eye(4)[np.array([1, 0, 3])] @ m,
                               np.identity(4, dtype=np.int64) * i[:, :4]), (M, I32)),
    # extern calls: NumPy's own routines run by the compiled program
    "sort": (lambda x, i: (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None),
                           np.argsort(x, kind="stable"), np.sort(i), np.partition(x, 2),
                           np.sort(NANS, axis=1)), (M, I32)),
    "median_quantiles": (lambda x, i: (np.median(x), np.median(x, axis=1),
                                       np.median(i, axis=0, keepdims=True),
                                       np.percentile(x, [10, 50]), np.quantile(x, 0.3, axis=1),
                                       np.median(F32, axis=1),
                                       np.quantile(x, 0.5, method="nearest")), (M, I32)),
    "search_interp": (lambda v, e: (np.searchsorted(np.sort(e), v),
                                    np.digitize(v, np.sort(e), right=True),
                                    np.interp(v, np.sort(e), e)), (V, V[::-1] * 2)),
    "convolve": (lambda v: (np.convolve(v, v[:3]), np.convolve(v, v[:3], "same"),
                            np.correlate(v, v[:3]), np.convolve(v, np.ones(3) / 3, "valid"),
                            np.convolve(I32[0], I32[1])), (V,)),
    "histogram_bins_argument": (lambda v, n: np.histogram(v, n), (V, 5)),
    "histogram": (lambda v: (np.histogram(v), np.histogram(v, bins=4, range=(-1, 1)),
                             np.histogram(v, bins=np.array([-2.0, 0, 2]), weights=v),
                             np.histogram(v, 3, density=True)), (V,)),
    "ufunc_accumulate_reduce": (lambda x: (np.maximum.accumulate(x, axis=1),
                                           np.minimum.accumulate(x),
                                           np.bitwise_or.reduce(I32, axis=0),
                                           np.logaddexp.accumulate(x[0])), (M,)),
    "linalg": (lambda s, m: (np.linalg.solve(s, m[:, 0]), np.linalg.solve(s, m),
                             np.linalg.inv(s), np.linalg.det(s), np.linalg.cholesky(s),
                             np.linalg.eigh(s)[0], np.linalg.eigvalsh(s),
                             tuple(np.linalg.slogdet(s)), np.abs(np.linalg.qr(m)[1]),
                             np.linalg.svd(m, compute_uv=False), np.linalg.svd(m)[1],
                             np.linalg.inv(s.astype(np.float32))),
               (M[:, :4] @ M[:, :4].T + 4 * np.eye(4), M)),
    "extern_edges": (lambda e, s: (np.sort(e), np.argsort(e), np.median(e[:1]),
                                   np.cumsum(np.sort(s[None]))), (np.zeros((0,)), np.array(2.0))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_function_matches_numpy_without_breaks(name: str) -> None:
    fn, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        got = stax.jit(fn)(*args)
        want = fn(*args)
    assert_matches(got, want, rtol=1e-12 if name != "nan_functions_f32_int" else 2e-6,
                   atol=1e-12)


def test_allclose_is_a_python_bool_through_a_break() -> None:
    def fn(a: Any, b: Any) -> Any:
        return a * 2 if np.allclose(a, b) else a, np.allclose(a, b + 1)

    with pytest.warns(GraphBreakWarning):
        got = stax.jit(fn)(V, V + 1e-12)
    want = fn(V, V + 1e-12)
    assert_matches(got[0], want[0])
    assert got[1] is want[1] is False  # a Python bool, as NumPy returns


def test_weighted_average_checks_the_weights_at_run_time() -> None:
    """[HUNT] NumPy's check that no weight sum is 0 runs in the compiled program (an extern
    raising NumPy's ZeroDivisionError; was a graph break on the truth value)."""
    def fn(x: Any, w: Any) -> Any:
        return np.average(x, axis=1, weights=w), np.average(x, weights=x * 0 + 2)

    jf = stax.jit(fn, strict=True)
    assert_matches(jf(M, V[:5] + 10), fn(M, V[:5] + 10))
    w = np.array([1.0, -1.0, 2.0, -2.0, 0.0])  # weights summing to 0
    with pytest.raises(ZeroDivisionError):
        fn(M, w)
    with pytest.raises(ZeroDivisionError):
        jf(M, w)


def test_extern_errors_are_numpys_at_run_time() -> None:
    inv = stax.jit(lambda a: np.linalg.inv(a) * 2)
    assert_matches(inv(np.eye(2) * 4), np.eye(2) / 2)
    with pytest.raises(np.linalg.LinAlgError):
        inv(np.zeros((2, 2)))  # singular: raised by NumPy inside the compiled program
    with pytest.raises(ValueError):
        stax.jit(lambda x: np.digitize(x, np.array([3.0, 1.0, 2.0])))(V)
    with pytest.raises(ValueError):
        stax.jit(lambda x: np.quantile(x, 1.5))(V)


def test_eigh_keeps_numpys_result_type() -> None:
    s = M[:, :4] @ M[:, :4].T + np.eye(4)
    got = stax.jit(lambda a: np.linalg.eigh(a))(s)
    want = np.linalg.eigh(s)
    assert type(got).__name__ == type(want).__name__
    assert_matches(got.eigenvalues, want.eigenvalues)
    assert_matches(np.abs(got.eigenvectors), np.abs(want.eigenvectors))


def test_bad_arguments_raise_numpys_errors() -> None:
    with pytest.raises(ValueError):
        stax.jit(lambda x: np.diff(x))(np.array(1.0))
    with pytest.raises(ValueError):
        stax.jit(lambda x: np.tensordot(x, x, ([0], [1])))(M)
    with pytest.raises(ValueError):
        stax.jit(lambda x: np.select([x > 0], [x, x]))(M)
    with pytest.raises(ZeroDivisionError):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            stax.jit(lambda x, w: np.average(x, weights=w))(V, V * 0)
