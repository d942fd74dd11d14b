"""A twelfth wave of the wild corpus (s14 HUNT7): ordinary NumPy programs in styles the first
eleven waves use least — code ported from MATLAB (1-based index arithmetic, np.r_/np.c_, (n, 1)
column vectors, np.newaxis everywhere, @ chains, np.tile/np.repeat/np.kron), scientific snippets
(np.gradient, np.trapezoid, np.interp, np.polyval/np.polyfit, meshgrid formulas, linspace/
logspace/geomspace with endpoint), simulation loops over time steps that update arrays in place
and exit early on convergence, list accumulation then np.array/np.stack, data cleaning
(nan_to_num, isnan masks, nanmean/nanstd/nanpercentile with axis, clip with arrays,
round(decimals)), records as columns of a 2-D array (argsort by a column, np.split/array_split/
hsplit/vsplit, concatenate of views), dtype corners (int8/uint16/uint64/float16/bool by NumPy 2
rules, iinfo/finfo, astype with overflow, floor division and modulo of negatives, shifts),
default/keyword arguments, *args, closures and helpers, ndarray methods, results as tuples/
dicts/lists of arrays and Python scalars, 0-d and empty inputs.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild12 [names]` prints each function's class.

Counts (130 functions): on main 97d6d63 102 compiled, 24 break, 4 FAIL — `isinstance` of traced
values False (isinstance_dispatch, isinstance_array_checks: the other branch taken),
`np.broadcast_to(x, s).strides[0]` read from a break's C-ordered copy (broadcast_to_and_expand),
a returned 0-d view of the argument a NumPy scalar copy (single_element); after HUNT7 111
compiled, 19 break, 0 FAIL (x.item(), small x.tolist(), np.allclose/array_equal in results,
a.put compile). Still breaks: truth values and int()/float() of traced data, data-dependent
lengths used as Python ints, np.unique of one element, np.piecewise with functions, argwhere of
one element, `.strides` (the whole function runs in NumPy).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints

CASES12: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES12)


# ---- ported from MATLAB ---------------------------------------------------------------------

@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def matlab_one_based_loop(x):
    n = len(x)
    y = np.zeros(n)
    y[0] = x[0]
    for k in range(2, n + 1):
        y[k - 1] = 0.5 * y[k - 2] + x[k - 1]
    return y


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 2),))
def matlab_r_concat(x):
    a = np.r_[0.0, x, 1.0]
    b = np.r_[x[::-1], x]
    c = np.r_[1:4, 7, 9]
    return a, b, c, np.r_[x, np.zeros(2)].shape


@case(lambda r: (normal(r, 4), normal(r, 4)), lambda r: (normal(r, 1), normal(r, 1)))
def matlab_c_columns(x, y):
    M = np.c_[x, y, x * y]
    return M, M.shape, np.c_[np.ones(len(x)), x] @ np.array([1.0, 2.0])


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def column_vector_outer(v):
    c = v[:, np.newaxis]
    rr = v[np.newaxis, :]
    return c @ rr, c * rr, (c.T @ c).item(), c.shape


@case(lambda r: (normal(r, 4, 3), normal(r, 3, 1)), lambda r: (normal(r, 1, 2), normal(r, 2, 1)))
def matlab_matvec_column(A, b):
    y = A @ b
    return y, y.shape, (A.T @ y).ravel(), np.linalg.norm(y)


@case(lambda r: (normal(r, 2, 3),), lambda r: (normal(r, 1, 1),))
def tile_repeat_kron(A):
    return (np.tile(A, (2, 3)), np.repeat(A, 2, axis=0), np.repeat(A, [1, 2, 1][:A.shape[1]],
            axis=1), np.kron(A, np.eye(2)), np.tile(A[0], 3))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 2, 2),))
def matlab_end_indexing(A):
    n = A.shape[0]
    last_row = A[n - 1, :]
    last_col = A[:, -1]
    corner = A[n - 2:n, n - 2:n]
    return last_row, last_col, corner, A[1:n:2, 0:n:2]


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 3, 3),))
def matlab_colon_flatten(A):
    col_major = A.flatten(order="F")
    back = col_major.reshape(A.shape, order="F")
    return col_major, np.array_equal(back, A), A.ravel(order="F")[2:5]


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def matlab_find_first(x):
    idx = np.nonzero(x > 0)[0]
    first = idx[0] + 1 if idx.size else 0
    return first, idx + 1


@case(lambda r: (normal(r, 3, 3), normal(r, 3, 3)), lambda r: (normal(r, 1, 1), normal(r, 1, 1)))
def matlab_at_chain(A, B):
    C = A @ B.T @ A + np.eye(len(A))
    return C, np.trace(C), np.linalg.solve(C.T @ C + np.eye(len(A)), np.ones((len(A), 1)))


@case(lambda r: (4,), lambda r: (1,))
def matlab_meshgrid_ndgrid(n):
    x = np.linspace(-1, 1, n)
    X, Y = np.meshgrid(x, x[: n - 1] if n > 1 else x)
    I, J = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return X * Y, X.shape, I - J


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 3),))
def matlab_cumsum_movmean(x):
    k = 3
    c = np.cumsum(np.r_[0.0, x])
    mm = (c[k:] - c[:-k]) / k
    return mm, np.cumsum(x)[-1], np.cumprod(1 + 0.01 * x)


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 4),))
def matlab_bsxfun_normalize(A):
    mu = np.mean(A, axis=0)[np.newaxis, :]
    sd = np.std(A, axis=0, ddof=1)[np.newaxis, :] if A.shape[0] > 1 else np.ones((1, A.shape[1]))
    return (A - mu) / sd


@case(lambda r: (5,), lambda r: (1,))
def matlab_zeros_ones_eye(n):
    A = np.zeros((n, n))
    A[np.arange(n), np.arange(n)] = 2.0
    A[np.arange(n - 1), np.arange(1, n)] = -1.0
    A[np.arange(1, n), np.arange(n - 1)] = -1.0
    return A, np.linalg.det(A), np.ones((n, 1)).T @ A


# ---- scientific snippets --------------------------------------------------------------------

@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 2),))
def finite_diff_gradient(y):
    x = np.linspace(0, 1, len(y))
    return np.gradient(y, x), np.gradient(y, edge_order=1), np.diff(y) / np.diff(x)


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 3, 3),))
def gradient_2d_axes(F):
    gy, gx = np.gradient(F)
    return gy, gx, np.gradient(F, axis=1), np.gradient(F, 0.5, 2.0)


@case(lambda r: (normal(r, 11),), lambda r: (normal(r, 2),))
def trapezoid_integrals(y):
    x = np.linspace(0, np.pi, len(y))
    return np.trapezoid(y, x), np.trapezoid(y), np.trapezoid(np.sin(x), x)


@case(lambda r: (np.sort(normal(r, 6)), normal(r, 6), normal(r, 4)),
      lambda r: (np.array([0.0, 1.0]), np.array([2.0, 3.0]), np.array([-1.0, 0.5, 5.0])))
def interp_table_lookup(xp, fp, x):
    return np.interp(x, xp, fp), np.interp(x, xp, fp, left=0.0, right=-1.0)


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 4),))
def polyfit_polyval(y):
    x = np.arange(len(y), dtype=float)
    p = np.polyfit(x, y, 2)
    return p, np.polyval(p, x), np.polyval([1.0, 0.0, -1.0], y)


@case(lambda r: (normal(r, 4),), lambda r: (normal(r, 1),))
def horner_manual(coef):
    x = np.linspace(-1, 1, 7)
    acc = np.zeros_like(x)
    for c in coef:
        acc = acc * x + c
    return acc, np.polyval(coef, x)


@case(lambda r: (20,), lambda r: (2,))
def meshgrid_gaussian(n):
    x = np.linspace(-2, 2, n)
    X, Y = np.meshgrid(x, x)
    Z = np.exp(-(X ** 2 + Y ** 2) / 2) / (2 * np.pi)
    return Z.sum() * (x[1] - x[0]) ** 2, Z.max(), np.unravel_index(np.argmax(Z), Z.shape)


@case(lambda r: (5,), lambda r: (2,))
def spaces_with_endpoint(n):
    return (np.linspace(0, 1, n, endpoint=False), np.logspace(-2, 2, n),
            np.geomspace(1, 1000, n), np.logspace(0, 3, n, base=2.0, endpoint=False),
            np.linspace(0, 1, n, retstep=True))


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 3),))
def simpson_rule_manual(f):
    n = len(f) - 1 if len(f) % 2 == 0 else len(f)
    g = f[:n]
    h = 1.0 / max(n - 1, 1)
    if n < 3:
        return h * g.sum()
    return h / 3 * (g[0] + 4 * g[1:-1:2].sum() + 2 * g[2:-1:2].sum() + g[-1])


@case(lambda r: (normal(r, 7, 7),), lambda r: (normal(r, 3, 3),))
def laplacian_5_point(u):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                       - 4 * u[1:-1, 1:-1])
    return lap


@case(lambda r: (np.abs(normal(r, 8)) + 0.1,), lambda r: (np.array([1.0]),))
def log_space_stats(x):
    lx = np.log10(x)
    return 10 ** lx.mean(), np.exp(np.log(x).mean()), np.log1p(x).sum(), np.expm1(lx)


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (normal(r, 1), normal(r, 1)))
def polar_coordinates(x, y):
    rr = np.hypot(x, y)
    th = np.arctan2(y, x)
    return rr, np.degrees(th), np.rad2deg(th) % 360, rr * np.cos(th) - x


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 2),))
def central_difference_second(y):
    h = 0.1
    d2 = (y[2:] - 2 * y[1:-1] + y[:-2]) / h ** 2
    return d2, np.pad(d2, 1, mode="constant"), np.convolve(y, [1, -2, 1], mode="valid") / h ** 2


# ---- simulation loops -----------------------------------------------------------------------

@case(lambda r: (10,), lambda r: (3,))
def heat_equation_explicit(n):
    u = np.zeros(n)
    u[n // 2] = 1.0
    for _ in range(20):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (np.array([[4.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 4.0]]),
                 np.array([1.0, 2.0, 3.0])),
      lambda r: (np.array([[2.0]]), np.array([4.0])))
def jacobi_until_converged(A, b):
    x = np.zeros_like(b)
    D = np.diag(A)
    R = A - np.diagflat(D)
    for it in range(200):  # noqa: B007 - read after the loop, as users write
        x_new = (b - R @ x) / D
        if np.max(np.abs(x_new - x)) < 1e-10:
            break
        x = x_new
    return x_new, it


@case(lambda r: (2.0,), lambda r: (9.0,))
def newton_sqrt_while(a):
    x = np.float64(a)
    steps = 0
    while abs(x * x - a) > 1e-12 and steps < 50:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


@case(lambda r: (normal(r, 4),), lambda r: (normal(r, 1),))
def euler_decay_accumulate(y0):
    ys = [y0.copy()]
    y = y0.copy()
    for _ in range(5):
        y += 0.1 * (-y)
        ys.append(y.copy())
    return np.array(ys), np.stack(ys, axis=1).shape


@case(lambda r: (normal(r, 3),), lambda r: (normal(r, 1),))
def gradient_descent_allclose(x0):
    x = x0.copy()
    target = np.arange(len(x), dtype=float)
    for _ in range(500):
        g = 2 * (x - target)
        x_new = x - 0.1 * g
        if np.allclose(x_new, x, atol=1e-12):
            break
        x = x_new
    return x


@case(lambda r: (6,), lambda r: (3,))
def game_of_life_steps(n):
    g = np.zeros((n + 2, n + 2), dtype=np.int64)
    g[2:5, 3] = 1
    for _ in range(3):
        nb = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
                 if (i, j) != (0, 0))
        g = ((nb == 3) | ((g == 1) & (nb == 2))).astype(np.int64)
    return g, g.sum()


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def verlet_particles(x, v):
    x, v = x.copy(), v.copy()
    dt = 0.01
    a = -x
    energy = []
    for _ in range(10):
        x += v * dt + 0.5 * a * dt ** 2
        a_new = -x
        v += 0.5 * (a + a_new) * dt
        a = a_new
        energy.append(0.5 * (v ** 2 + x ** 2).sum())
    return x, v, np.array(energy)


@case(lambda r: (np.array([[0.9, 0.1], [0.5, 0.5]]),),
      lambda r: (np.array([[0.2, 0.3, 0.5], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]),))
def markov_stationary_power(P):
    p = np.ones(len(P)) / len(P)
    for k in range(1000):  # noqa: B007 - read after the loop
        q = p @ P
        if np.abs(q - p).max() < 1e-12:
            break
        p = q
    return q, k > 0


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def bubble_pass_in_place(x):
    x = x.copy()
    n = len(x)
    for i in range(n):
        for j in range(n - 1 - i):
            if x[j] > x[j + 1]:
                x[j], x[j + 1] = x[j + 1], x[j]
    return x


@case(lambda r: (3, 0.5), lambda r: (1, 2.0))
def logistic_map_history(n, r0):
    xs = np.empty((10, n))
    x = np.linspace(0.1, 0.9, n)
    for t in range(10):
        x = r0 * x * (1 - x)
        xs[t] = x
    return xs, xs[-1].tolist()


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def random_walk_cumulative(steps):
    pos = np.concatenate(([0.0], np.cumsum(np.sign(steps))))
    return pos, pos.max(), int(np.argmax(pos)), np.maximum.accumulate(pos)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def power_iteration(A):
    M = A @ A.T + np.eye(len(A))
    v = np.ones(len(A))
    lam = 0.0
    for _ in range(100):
        w = M @ v
        lam_new = np.linalg.norm(w)
        v = w / lam_new
        if abs(lam_new - lam) < 1e-10:
            break
        lam = lam_new
    return lam_new, np.abs(v)


# ---- data cleaning --------------------------------------------------------------------------

def with_nans(r: np.random.Generator, *shape: int) -> np.ndarray:
    x = r.standard_normal(shape)
    x[r.random(shape) < 0.25] = np.nan
    return x


@case(lambda r: (with_nans(r, 5, 4),), lambda r: (np.array([[np.nan, 1.0], [2.0, np.inf]]),))
def nan_to_num_variants(x):
    return (np.nan_to_num(x), np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
            np.isnan(x).sum(axis=0), np.where(np.isnan(x), 0.0, x))


@case(lambda r: (with_nans(r, 6, 3) + 1.0,), lambda r: (np.array([[1.0, 2.0], [3.0, 4.0]]),))
def nan_stats_axis(x):
    return (np.nanmean(x, axis=0), np.nanstd(x, axis=1), np.nanmedian(x, axis=0),
            np.nanpercentile(x, [25, 75], axis=0), np.nanmax(x), np.nansum(x, axis=1))


@case(lambda r: (with_nans(r, 10),), lambda r: (normal(r, 3),))
def fill_nan_with_column_mean(x):
    m = np.nanmean(x)
    y = x.copy()
    y[np.isnan(y)] = m
    return y, np.count_nonzero(np.isnan(x))


@case(lambda r: (with_nans(r, 6, 3),), lambda r: (normal(r, 2, 3),))
def drop_rows_with_nan(x):
    keep = ~np.isnan(x).any(axis=1)
    return x[keep], keep.sum()


@case(lambda r: (normal(r, 8), normal(r, 8) - 1, normal(r, 8) + 1),
      lambda r: (normal(r, 1), np.zeros(1), np.ones(1)))
def clip_with_arrays(x, lo, hi):
    return np.clip(x, lo, hi), x.clip(min=lo), x.clip(max=0.5), np.clip(x, -0.5, None)


@case(lambda r: (normal(r, 6) * 100,), lambda r: (np.array([0.125, 2.5, -2.5, 1.005]),))
def round_decimals(x):
    return np.round(x, 2), np.round(x, -1), x.round(1), np.around(x), np.rint(x), np.fix(x)


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 3),))
def winsorize_zscore(x):
    z = (x - x.mean()) / x.std()
    lo, hi = np.percentile(x, [5, 95])
    return np.clip(x, lo, hi), np.abs(z) > 1.5, (np.abs(z) <= 1.5).mean()


@case(lambda r: (with_nans(r, 12),), lambda r: (np.array([np.nan, np.nan, 1.0]),))
def forward_fill_loop(x):
    y = x.copy()
    for i in range(1, len(y)):
        if np.isnan(y[i]):
            y[i] = y[i - 1]
    return y


@case(lambda r: (with_nans(r, 4, 5),), lambda r: (with_nans(r, 1, 1),))
def nan_masked_mean_manual(x):
    m = ~np.isnan(x)
    s = np.where(m, x, 0).sum(axis=1)
    c = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / c, c


@case(lambda r: (normal(r, 10) * 5,), lambda r: (np.array([-0.0, 0.0]),))
def min_max_scale(x):
    rng_ = x.max() - x.min()
    scaled = (x - x.min()) / rng_ if rng_ else np.zeros_like(x)
    return scaled, scaled.dtype, np.ptp(x)


@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 1),))
def outlier_iqr(x):
    q1, q3 = np.quantile(x, [0.25, 0.75])
    iqr = q3 - q1
    mask = (x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)
    return mask, np.where(mask, np.median(x), x)


# ---- records as columns of a 2-D array ------------------------------------------------------

@case(lambda r: (np.c_[np.arange(6.0), normal(r, 6), ints(r, 0, 3, 6)],),
      lambda r: (np.zeros((1, 3)),))
def sort_records_by_column(R):
    order = np.argsort(R[:, 1])
    S = R[order]
    return S, S[::-1][:3], R[np.argsort(-R[:, 2], kind="stable")]


@case(lambda r: (np.c_[ints(r, 0, 3, 8), normal(r, 8)],), lambda r: (np.array([[1.0, 2.0]]),))
def group_sum_by_key_column(R):
    keys = R[:, 0].astype(np.int64)
    out = np.zeros(keys.max() + 1)
    np.add.at(out, keys, R[:, 1])
    return out, np.bincount(keys, weights=R[:, 1])


@case(lambda r: (normal(r, 9, 2),), lambda r: (normal(r, 3, 2),))
def split_records(R):
    a, b, c = np.split(R, 3)
    parts = np.array_split(R, 4)
    return a, c - b, [p.shape for p in parts]


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 2),))
def hsplit_vsplit(A):
    L, Rr = np.hsplit(A, 2)
    T, B = np.vsplit(A, 2)
    return L + Rr, T * B, np.split(A, [1], axis=1)[1]


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 1, 3),))
def concatenate_views(A):
    return (np.concatenate([A[:, :1], A[:, 2:], A[:, 1:2]], axis=1),
            np.concatenate((A[::-1], A), axis=0), np.vstack([A[0], A[-1]]),
            np.hstack([A[:, 0], A[:, -1]]), np.column_stack([A[:, 0], A[:, 1]]))


@case(lambda r: (np.c_[np.arange(5.0), normal(r, 5) * 10],), lambda r: (np.zeros((0, 2)),))
def select_records_where(R):
    hot = R[R[:, 1] > 0]
    return hot, hot[:, 0], len(hot)


@case(lambda r: (ints(r, 0, 4, 7), normal(r, 7)), lambda r: (np.array([2]), np.array([1.0])))
def unique_groups_means(g, v):
    keys, inv = np.unique(g, return_inverse=True)
    sums = np.bincount(inv, weights=v)
    counts = np.bincount(inv)
    return keys, sums / counts


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 1, 3),))
def argmax_record_by_column(R):
    i = np.argmax(R[:, 2])
    best = R[i]
    return best, i, R[:, 2].argsort()[::-1][:2]


@case(lambda r: (np.c_[ints(r, 0, 3, 8), ints(r, 0, 3, 8)],), lambda r: (np.array([[1, 1]]),))
def lexsort_two_columns(R):
    order = np.lexsort((R[:, 1], R[:, 0]))
    return R[order], order


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 2, 4),))
def delete_insert_columns(R):
    return np.delete(R, 1, axis=1), np.insert(R, 0, 9.0, axis=1), np.append(R, R[:1], axis=0)


# ---- dtype corners --------------------------------------------------------------------------

@case(lambda r: (ints(r, -128, 128, 6, dtype="int8"),), lambda r: (np.array([127], np.int8),))
def int8_wraparound(x):
    return x + np.int8(1), (x * 2).dtype, x.astype(np.int16) * 2, -x, np.abs(x)


@case(lambda r: (ints(r, 0, 65536, 5, dtype="uint16"),), lambda r: (np.array([0], np.uint16),))
def uint16_arith(x):
    return x - np.uint16(1), x // 3, x % 7, (x + 1).dtype, x.astype(np.float32) / 65535


@case(lambda r: (ints(r, 0, 2 ** 62, 5, dtype="uint64"),), lambda r: (np.array([1], np.uint64),))
def uint64_arith(x):
    return x >> np.uint64(3), x & np.uint64(255), x * np.uint64(2), x.max(), x.sum()


@case(lambda r: (normal(r, 6, dtype="float16"),), lambda r: (np.array([65504.0], np.float16),))
def float16_arith(x):
    return x * 2, (x + 1).dtype, x.astype(np.float32).sum(), x.mean(), x.sum(dtype=np.float32)


@case(lambda r: (ints(r, 0, 2, 6) > 0, ints(r, 0, 2, 6) > 0),
      lambda r: (np.array([True]), np.array([False])))
def bool_arithmetic(a, b):
    return (a + b, a * b, a.sum(), (a & b).dtype, a ^ b, ~a, a.astype(int) - b, a | b)


@case(lambda r: (ints(r, -20, 20, 8),), lambda r: (np.array([-7, 7, 0]),))
def floor_div_mod_negatives(x):
    return x // 3, x % 3, np.fmod(x, 3), np.remainder(x, -3), np.divmod(x, 4), -x // 2


@case(lambda r: (ints(r, -100, 100, 6),), lambda r: (np.array([-1, 1]),))
def shifts_signed(x):
    return x >> 2, x << 3, np.right_shift(x, 1), (x.astype(np.uint8) >> 1)


@case(lambda r: (normal(r, 6) * 400,), lambda r: (np.array([255.9, -1.0]),))
def astype_overflow(x):
    with np.errstate(invalid="ignore"):
        return x.astype(np.int64).astype(np.uint8), np.clip(x, 0, 255).astype(np.uint8)


@case(lambda r: (ints(r, 0, 100, 5, dtype="int32"),), lambda r: (np.array([0], np.int32),))
def iinfo_finfo_use(x):
    lim = np.iinfo(x.dtype).max
    eps = np.finfo(np.float64).eps
    return (lim - x).dtype, x.astype(float) + eps, np.iinfo(np.int8).min, np.finfo(np.float32).max


@case(lambda r: (ints(r, 0, 100, 5, dtype="int32"), 3), lambda r: (np.array([1], np.int32), 2))
def python_scalar_promotion(x, k):
    return (x * k).dtype, (x * 2.5).dtype, (x + np.int64(1)).dtype, x / k, (x ** 2).dtype


@case(lambda r: (normal(r, 4, dtype="float32"),), lambda r: (normal(r, 1, dtype="float32"),))
def float32_stays_float32(x):
    y = x * 2.0 + 1
    z = np.sqrt(np.abs(y)) / 3
    return y.dtype, z.dtype, z, (x + np.float64(1)).dtype, np.mean(x).dtype


@case(lambda r: (ints(r, -5, 5, 6),), lambda r: (np.array([0]),))
def integer_power_and_sign(x):
    return x ** 2, np.sign(x), np.abs(x).astype(np.uint8), np.square(x), x.astype(bool)


@case(lambda r: (ints(r, 0, 255, 6, dtype="uint8"), ints(r, 0, 255, 6, dtype="uint8")),
      lambda r: (np.array([0], np.uint8), np.array([1], np.uint8)))
def uint8_diff_without_wrap(a, b):
    wrapped = a - b
    right = a.astype(np.int16) - b
    return wrapped, right, np.abs(right).astype(np.uint8), np.maximum(a, b) - np.minimum(a, b)


@case(lambda r: (ints(r, 1, 50, 6),), lambda r: (np.array([1]),))
def integer_true_divide_and_mean(x):
    return x / 2, x.mean(), (x // 2).dtype, np.int64(7) // x, x.sum() / len(x)


# ---- functions, helpers, closures -----------------------------------------------------------

def _center(x, axis=0):
    return x - x.mean(axis=axis, keepdims=True)


def _scale(x, axis=0, ddof=0):
    return x / x.std(axis=axis, ddof=ddof, keepdims=True)


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 2, 2),))
def helpers_calling_helpers(X):
    return _scale(_center(X)), _center(X, axis=1), _scale(_center(X), ddof=1)


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def keyword_defaults(x, alpha=0.5, clip=None, normalize=True):
    y = alpha * x
    if clip is not None:
        y = np.clip(y, -clip, clip)
    if normalize:
        y = y / (np.abs(y).max() + 1e-12)
    return y


@case(lambda r: (normal(r, 3), normal(r, 3), normal(r, 3)), lambda r: (normal(r, 1),))
def star_args_stack(*arrays):
    return np.stack(arrays), sum(a.sum() for a in arrays), len(arrays)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def closure_builder(x):
    def make_affine(a, b):
        def f(v):
            return a * v + b
        return f
    f, g = make_affine(2.0, 1.0), make_affine(-1.0, 0.0)
    return f(x), g(f(x)), [h(x[0]) for h in (f, g)]


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 1, 1),))
def lambda_map_list(A):
    ops = [np.sin, np.cos, lambda a: a ** 2, np.tanh]
    return [op(A).sum(axis=0) for op in ops]


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def dict_of_results(x):
    return {"mean": x.mean(), "std": x.std(), "minmax": (x.min(), x.max()),
            "sorted": np.sort(x), "n": x.size}


@case(lambda r: (normal(r, 4), 2), lambda r: (normal(r, 3), 0))
def recursive_helper(x, depth):
    def smooth(v, d):
        if d == 0:
            return v
        return smooth(np.convolve(v, [0.25, 0.5, 0.25], mode="same"), d - 1)
    return smooth(x, depth)


@case(lambda r: (normal(r, 5), 2), lambda r: (normal(r, 3), 0.5), lambda r: (normal(r, 2), True))
def isinstance_dispatch(x, k):
    if isinstance(k, bool):
        return x > 0
    if isinstance(k, int):
        return x[:k]
    return x * k


@case(lambda r: (normal(r, 4),), lambda r: (normal(r, 2, 2),))
def isinstance_array_checks(x):
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    s = x.sum()
    kinds = (isinstance(s, float), isinstance(s, np.floating), isinstance(x[0], np.ndarray))
    return (x.ravel() if isinstance(x, np.ndarray) and x.ndim > 1 else x), kinds


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def kwargs_forwarding(A):
    def reduce(a, **kw):
        return a.sum(**kw), a.max(**kw)
    return reduce(A, axis=0), reduce(A, axis=1, keepdims=True), reduce(A)


# ---- methods and Python values --------------------------------------------------------------

@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def methods_keepdims(x):
    return (x.sum(axis=0, keepdims=True), x.mean(axis=1, keepdims=True), x.std(keepdims=True),
            x.cumsum(axis=1), x.prod(axis=0), x.var(ddof=0), x.argmin(axis=1))


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 2).T,))
def ravel_flat_item(x):
    return x.ravel(), x.flat[3] if x.size > 3 else x.flat[0], x.item(0), x.ravel()[::2], x.T.ravel()


@case(lambda r: (normal(r, 2, 3),), lambda r: (normal(r, 1, 1),))
def tolist_and_python(x):
    return x.tolist(), x.sum().item(), x.shape[0] * x.shape[1], float(x[0, 0]), x.ndim


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def methods_chain(x):
    return x.clip(-1, 1).round(2).cumsum().max(), x.copy().reshape(-1, 1).T, abs(x).argmax()


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 2),))
def methods_shape_ops(x):
    return (x.T.copy(), x.reshape(-1), x.swapaxes(0, 1).shape, x.squeeze().shape, x.any(axis=0),
            x.all(), x.nonzero()[0].size, x.dot(x.T).shape, x.trace(), x.diagonal())


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def fill_and_put(x):
    y = np.empty_like(x)
    y.fill(3.0)
    z = x.copy()
    z.put([0], -1.0)
    np.put(y, [len(y) - 1], 7.0)
    return y, z, np.sort(x).searchsorted(0.0)


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 1, 1),))
def sort_in_place_methods(x):
    y = x.copy()
    y.sort(axis=1)
    z = x.copy()
    z.sort(axis=0)
    return y, z, x.argsort(axis=None)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def astype_copy_semantics(x):
    a = x.astype(np.float64)
    a[0] = 100.0
    b = x.astype(np.float64, copy=False)
    return a, x[0], b.dtype, np.asarray(x) is x


# ---- 0-d, empty, scalars --------------------------------------------------------------------

@case(lambda r: (np.float64(2.5),), lambda r: (np.array(3.0),))
def zero_d_inputs(s):
    a = np.asarray(s)
    return a + 1, a.ndim, np.atleast_1d(a), (a * np.ones(3)).shape, np.sqrt(a)


@case(lambda r: (np.zeros(0),), lambda r: (np.zeros((0, 3)),))
def empty_reductions(x):
    return x.sum(), x.size, np.prod(x), x.reshape(-1).shape, np.concatenate([x.ravel(), [1.0]])


@case(lambda r: (np.zeros((0, 4)),), lambda r: (normal(r, 2, 4),))
def empty_rows_axis_ops(X):
    return X.sum(axis=0), X.max(axis=1) if X.shape[0] else X.sum(axis=1), X.mean(axis=1)


@case(lambda r: (normal(r, 1),), lambda r: (normal(r, 5),))
def single_element(x):
    return x.item() if x.size == 1 else x.sum(), np.squeeze(x), x[0], x[-1:], x.std()


@case(lambda r: (3.0, 4), lambda r: (0.5, 1))
def python_scalars_only(a, n):
    return np.full(n, a), np.arange(n) * a, np.float64(a) ** n, np.ones((n, n)) * a


@case(lambda r: (np.array(5),), lambda r: (np.array(-2),))
def zero_d_int_ops(k):
    return k + 1, k * np.arange(3), np.arange(5)[k % 5], k.item(), k // 2, k.dtype


@case(lambda r: (normal(r, 0, 3),), lambda r: (normal(r, 3, 0),))
def empty_matmul_and_stack(A):
    return A.T @ A, A @ A.T, np.vstack([A, A]).shape, np.zeros_like(A).shape


# ---- assorted everyday ----------------------------------------------------------------------

@case(lambda r: (normal(r, 5, 2),), lambda r: (normal(r, 2, 2),))
def pairwise_distance_loop(P):
    n = len(P)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            d = np.sqrt(((P[i] - P[j]) ** 2).sum())
            D[i, j] = D[j, i] = d
    return D


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def exponential_moving_average(x):
    alpha = 0.3
    ema = np.empty_like(x)
    ema[0] = x[0]
    for t in range(1, len(x)):
        ema[t] = alpha * x[t] + (1 - alpha) * ema[t - 1]
    return ema


@case(lambda r: (normal(r, 4, 3), normal(r, 4)), lambda r: (normal(r, 2, 2), normal(r, 2)))
def least_squares_normal_eq(X, y):
    Xb = np.c_[np.ones(len(X)), X] if X.shape[0] > X.shape[1] else X
    w = np.linalg.pinv(Xb.T @ Xb) @ Xb.T @ y
    return w, Xb @ w - y


@case(lambda r: (ints(r, 0, 4, 8), 4), lambda r: (np.array([0]), 2))
def one_hot_encode(labels, k):
    oh = np.zeros((len(labels), k))
    oh[np.arange(len(labels)), labels] = 1
    return oh, np.eye(k)[labels], oh.argmax(axis=1)


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def sliding_window_stats(x):
    w = 2
    win = np.lib.stride_tricks.sliding_window_view(x, w)
    return win.mean(axis=1), win.max(axis=1), win.shape


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (normal(r, 1), normal(r, 1)))
def correlation_manual(x, y):
    xm, ym = x - x.mean(), y - y.mean()
    denom = np.sqrt((xm ** 2).sum() * (ym ** 2).sum())
    r_ = (xm * ym).sum() / denom if denom else 0.0
    return r_, np.dot(xm, ym), np.inner(x, y), np.vdot(x, y)


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 2, 2),))
def triangular_parts(A):
    return np.triu(A), np.tril(A, -1), np.triu_indices(len(A), 1), A[np.tril_indices(len(A))]


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 4),))
def reshape_blocks_sum(x):
    B = x.reshape(-1, 2)
    return B.sum(axis=1), B[:, ::-1].ravel(), x.reshape(2, -1).T, np.flip(B, axis=0)


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def where_argwhere_count(A):
    pos = A > 0
    return np.where(pos)[0], np.argwhere(pos).shape, np.count_nonzero(pos, axis=0), pos.mean()


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def piecewise_and_select(x, y):
    return (np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]),
            np.select([x < -0.5, x > 0.5], [y, -y], default=0.0), np.heaviside(x, 0.5))


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def roll_shift_boundaries(A):
    return np.roll(A, 1, axis=0), np.roll(A, -1), np.roll(A, (1, 2), axis=(0, 1)), np.rot90(A)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def cumulative_ops_nan(x):
    y = x.copy()
    y[::2] = np.nan
    return np.nancumsum(y), np.nancumprod(y), np.cumsum(x[::-1])[::-1]


@case(lambda r: (ints(r, 1, 30, 6),), lambda r: (np.array([1]),))
def integer_number_theory(n):
    return np.gcd(n, 12), np.lcm(n, 4), n % 2 == 0, np.bitwise_count(n) if hasattr(
        np, "bitwise_count") else n, np.sqrt(n).astype(int) ** 2 == n


@case(lambda r: (normal(r, 3, 2),), lambda r: (normal(r, 1, 2),))
def complex_from_pairs(P):
    z = P[:, 0] + 1j * P[:, 1]
    return np.abs(z), np.angle(z), z.conj(), (z * z).real, np.exp(1j * np.pi * P[:, 0]).imag


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def histogram_counts_edges(x):
    counts, edges = np.histogram(x, bins=3)
    centers = 0.5 * (edges[1:] + edges[:-1])
    return counts, centers, np.digitize(x, edges[1:-1])


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def matrix_power_and_norms(A):
    return (np.linalg.matrix_power(A, 3), np.linalg.norm(A, "fro"), np.linalg.norm(A, 1),
            np.linalg.norm(A, axis=1), np.linalg.norm(A, np.inf))


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 2)), lambda r: (normal(r, 1, 1), normal(r, 1, 1)))
def einsum_and_tensordot(A, B):
    return (np.einsum("ij,jk->ik", A, B), np.tensordot(A, B, axes=1), np.einsum("ij->j", A),
            np.einsum("ij,ij->", A, A), np.outer(A[0], B[:, 0]))


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 6),))
def in_place_ops_on_argument(x):
    x *= 2
    x[x < 0] = 0
    x += 1
    return x.sum()


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 3, 3).T,))
def modify_view_of_argument(A):
    d = A.diagonal()
    row = A[1]
    row[:] = 0.0
    A[:, 0] += 1
    return d.copy(), A


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 3),))
def stack_list_of_windows(x):
    rows = []
    for i in range(len(x) - 2):
        rows.append(x[i:i + 3])
    return np.stack(rows) if rows else np.zeros((0, 3)), np.array(rows).sum(axis=0)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 2),))
def list_comprehension_scalars(x):
    sq = [float(v) ** 2 for v in x]
    return np.array(sq), sum(sq), max(x), min(x.tolist())


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def enumerate_zip_loop(x):
    acc = np.zeros(3)
    for i, v in enumerate(x):
        acc[i % 3] += v
    pairs = [a * b for a, b in zip(x[:-1], x[1:])]  # noqa: B905
    return acc, np.asarray(pairs, dtype=float)


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 5),))
def row_loop_normalize(A):
    out = np.empty_like(A)
    for i, row in enumerate(A):
        out[i] = row / np.linalg.norm(row)
    return out


@case(lambda r: (ints(r, 0, 10, 6), ints(r, 0, 10, 6)), lambda r: (np.array([3]), np.array([3])))
def ternary_where_scalar(a, b):
    best = a if a.sum() > b.sum() else b
    return best, np.maximum(a, b), max(a.sum(), b.sum()), (a == b).all()


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def sorted_topk_and_rank(x):
    k = min(3, len(x))
    top = np.sort(x)[-k:][::-1]
    rank = np.empty(len(x), dtype=int)
    rank[np.argsort(x)] = np.arange(len(x))
    return top, rank, np.partition(x, k - 1)[:k].max()


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 1, 1),))
def symmetric_check_and_eig(A):
    S = A + A.T
    w, V = np.linalg.eigh(S)
    return w, np.allclose(V @ np.diag(w) @ V.T, S), np.isclose(S, S.T).all()


@case(lambda r: (normal(r, 4), normal(r, 4)), lambda r: (normal(r, 1), normal(r, 1)))
def cross_product_3d(a, b):
    u = np.r_[a[:2], 1.0] if len(a) > 1 else np.array([a[0], 1.0, 0.0])
    v = np.r_[b[:2], 0.0] if len(b) > 1 else np.array([b[0], 0.0, 1.0])
    return np.cross(u, v), np.dot(np.cross(u, v), u)


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 2, 4)[:, ::2],))
def percentile_axis_keepdims(A):
    return (np.percentile(A, 50, axis=0), np.quantile(A, [0.1, 0.9], axis=1, keepdims=True),
            np.median(A, axis=1), np.percentile(A, 30, method="nearest"))


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def broadcast_to_and_expand(x):
    b = np.broadcast_to(x, (3, len(x)))
    e = np.expand_dims(x, axis=(0, 2))
    return b.sum(axis=0), e.shape, np.broadcast_arrays(x[:, None], x)[1].shape, b.strides[0]


@case(lambda r: (ints(r, 0, 3, 5), ints(r, 0, 3, 5)), lambda r: (np.array([0]), np.array([2])))
def confusion_matrix(y, p):
    k = 3
    cm = np.zeros((k, k), dtype=int)
    np.add.at(cm, (y, p), 1)
    acc = np.trace(cm) / cm.sum()
    return cm, acc, np.bincount(y * k + p, minlength=k * k).reshape(k, k)


@case(lambda r: (normal(r, 6, 2),), lambda r: (normal(r, 1, 2),))
def centroid_and_bbox(P):
    lo, hi = P.min(axis=0), P.max(axis=0)
    return P.mean(axis=0), np.r_[lo, hi], np.prod(hi - lo), np.linalg.norm(P - P.mean(0), axis=1)


@pytest.mark.parametrize("name", sorted(CASES12))
def test_wild12_function_matches_numpy(name: str) -> None:
    run_case(name, CASES12, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES12, warm=True, views=True, warns=True)
