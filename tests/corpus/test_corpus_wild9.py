"""A ninth wave of the wild corpus (s11 HUNT4): ordinary NumPy programs of the kinds users
bring, written in our own words — scipy-cookbook and StackOverflow-style snippets for
statistics, data cleaning, image operations, signal processing, small linear algebra and
simulations with loops — stressing keyword arguments and np.* functions less common in the
earlier corpora (histogram with weights/density, digitize right=, searchsorted sorter=,
interp left/right/period, polyfit/polyval, meshgrid indexing=, einsum with ellipsis, the
linalg family, pad modes, roll over several axes, put/place/putmask/copyto, ufunc.at and
.accumulate, bincount with minlength, ndindex/ndenumerate loops, NumPy names imported under
other names, masked updates of complex iterations in a loop).

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild9 [names]` prints each function's class.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from numpy import exp as e_
from numpy import linspace, sqrt
from numpy import zeros as z_

from corpus.test_corpus_wild import main, normal, run_case, wild

CASES9: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES9)


def ints(r: np.random.Generator, lo: int, hi: int, *shape: int, dtype: str = "int64"
         ) -> np.ndarray:
    return r.integers(lo, hi, shape).astype(dtype)


# ---- statistics and data cleaning -----------------------------------------------------------

@case(lambda r: (normal(r, 200),), lambda r: (normal(r, 50, dtype="float32"),),
      lambda r: (np.array([1.0, 1.0, 1.0]),))
def weighted_density_histogram(x):
    w = np.abs(x) + 0.5
    counts, edges = np.histogram(x, bins=8, range=(-3.0, 3.0), weights=w, density=True)
    centers = 0.5 * (edges[1:] + edges[:-1])
    return counts, centers, np.sum(counts * np.diff(edges))


@case(lambda r: (r.uniform(0, 100, 40),), lambda r: (np.array([0.0, 10, 20, 55, 100]),))
def grade_buckets(scores):
    bins = np.array([0.0, 50, 65, 80, 90])
    left = np.digitize(scores, bins)
    right = np.digitize(scores, bins, right=True)
    return left, right, np.bincount(left, minlength=bins.size + 1)


@case(lambda r: (normal(r, 30), normal(r, 7)), lambda r: (np.zeros(0), normal(r, 3)))
def rank_against_reference(ref, q):
    order = np.argsort(ref, kind="stable")
    pos = np.searchsorted(ref, q, side="right", sorter=order)
    return pos, pos / max(ref.size, 1)


@case(lambda r: (np.cumsum(r.uniform(0.1, 1, 12)), normal(r, 12), r.uniform(-1, 14, 20)),
      lambda r: (np.arange(5.0), np.arange(5.0) ** 2, np.array([-1.0, 0.5, 4.0, 9.0])))
def interpolate_with_fill(xp, fp, x):
    inside = np.interp(x, xp, fp)
    clamped = np.interp(x, xp, fp, left=np.nan, right=-1.0)
    return inside, clamped


@case(lambda r: (np.linspace(0, 350, 9), np.sin(np.linspace(0, 6, 9)), r.uniform(0, 720, 15)))
def periodic_interpolation(deg, vals, q):
    return np.interp(q, deg, vals, period=360)


@case(lambda r: (np.linspace(0, 1, 20), 3 * np.linspace(0, 1, 20) ** 2 - 1 + 0.01 * normal(r, 20)),
      lambda r: (np.arange(6.0), np.arange(6.0) * 2.0 + 1.0))
def polynomial_trend(t, y):
    coef = np.polyfit(t, y, 2)
    fitted = np.polyval(coef, t)
    return coef, y - fitted


@case(lambda r: (normal(r, 30),), lambda r: (np.array([1.0, np.nan, 3.0, np.nan, 5.0]),),
      lambda r: (np.array([np.nan, np.nan]),))
def fill_gaps_linear(y):
    bad = np.isnan(y)
    good = np.flatnonzero(~bad)
    out = y.copy()
    if good.size:
        out[bad] = np.interp(np.flatnonzero(bad), good, y[good])
    return out


@case(lambda r: (normal(r, 50),), lambda r: (np.r_[normal(r, 20), 40.0, -35.0],))
def zscore_outliers(x):
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    z = 0.6745 * (x - med) / mad
    return np.where(np.abs(z) > 3.5, med, x), np.count_nonzero(np.abs(z) > 3.5)


@case(lambda r: (ints(r, 0, 5, 40),), lambda r: (np.array([2, 2, 2, 7]),))
def mode_and_frequencies(v):
    vals, counts = np.unique(v, return_counts=True)
    return vals[np.argmax(counts)], counts / counts.sum()


@case(lambda r: (normal(r, 40, 3),), lambda r: (normal(r, 5, 2, dtype="float32"),))
def percentile_clip(X):
    lo, hi = np.percentile(X, [5, 95], axis=0)
    return np.clip(X, lo, hi), np.nanpercentile(X, 50, axis=0)


@case(lambda r: (normal(r, 30, 4),), lambda r: (normal(r, 3, 3),))
def correlation_matrix(X):
    C = np.corrcoef(X, rowvar=False)
    cov = np.cov(X.T, ddof=1)
    return C, cov, np.triu_indices_from(C, k=1)[0].size


@case(lambda r: (ints(r, 0, 4, 30), normal(r, 30)), lambda r: (np.array([1, 1, 3]), np.ones(3)))
def group_means(labels, values):
    sums = np.bincount(labels, weights=values)
    n = np.bincount(labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / n


@case(lambda r: (normal(r, 60),), lambda r: (normal(r, 9, dtype="float32"),))
def moving_average_convolve(x):
    k = np.ones(5) / 5
    return np.convolve(x, k, mode="valid"), np.convolve(x, k, mode="same")


# ---- image operations -----------------------------------------------------------------------

@case(lambda r: (r.integers(0, 256, (6, 7), dtype=np.uint8),),
      lambda r: (r.uniform(0, 1, (5, 5)).astype(np.float32),))
def pad_and_box_filter(im):
    p = np.pad(im.astype(np.float64), 1, mode="reflect")
    out = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 1:-1]
           + p[1:-1, 2:] + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]) / 9.0
    return out, np.pad(im, ((0, 1), (2, 0)), mode="constant", constant_values=7)


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 3, 4)[:, ::-1],))
def edge_pad_gradient(im):
    p = np.pad(im, 1, mode="edge")
    gy = p[2:, 1:-1] - p[:-2, 1:-1]
    gx = p[1:-1, 2:] - p[1:-1, :-2]
    return np.hypot(gx, gy), np.arctan2(gy, gx)


@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 4, 5, dtype="float32"),))
def periodic_laplacian_roll(u):
    return (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
            + np.roll(u, -1, axis=1) - 4 * u), np.roll(u, (1, 2), axis=(0, 1))


@case(lambda r: (r.integers(0, 256, (4, 6, 3), dtype=np.uint8),))
def rgb_to_hsv_value(im):
    f = im.astype(np.float32) / 255.0
    v = f.max(axis=-1)
    c = v - f.min(axis=-1)
    s = np.divide(c, v, out=np.zeros_like(v), where=v > 0)
    return v, s


@case(lambda r: (np.arange(12.0).reshape(3, 4),), lambda r: (normal(r, 2, 3),))
def tile_and_mirror(a):
    return np.tile(a, (2, 1)), np.flipud(a), np.fliplr(a), np.rot90(a, k=2)


@case(lambda r: (r.integers(0, 256, (8, 8), dtype=np.uint8),))
def block_mean_downsample(im):
    h, w = im.shape
    return im.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)).astype(np.uint8)


@case(lambda r: (r.integers(0, 256, (5, 6), dtype=np.uint8), 100),
      lambda r: (r.integers(0, 256, (3, 3), dtype=np.uint8), 0))
def threshold_in_place(im, t):
    out = im.copy()
    np.putmask(out, out < t, 0)
    np.place(out, out >= 200, [255])
    return out


# ---- linear algebra -------------------------------------------------------------------------

@case(lambda r: (normal(r, 5, 5) + 5 * np.eye(5), normal(r, 5)),
      lambda r: (np.eye(3), np.arange(3.0)))
def solve_and_residual(A, b):
    x = np.linalg.solve(A, b)
    return x, np.linalg.norm(A @ x - b), np.linalg.cond(A)


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 4, 4),))
def qr_least_squares(X):
    Q, R = np.linalg.qr(X)
    y = X @ np.arange(1.0, X.shape[1] + 1)
    beta = np.linalg.solve(R, Q.T @ y)
    return beta


@case(lambda r: (normal(r, 6, 4),))
def cholesky_whitening(X):
    S = X.T @ X / X.shape[0] + 1e-3 * np.eye(X.shape[1])
    L = np.linalg.cholesky(S)
    return np.linalg.solve(L, X.T).T, np.linalg.slogdet(S)[1]


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 3, 3, dtype="float32"),))
def svd_rank_and_pinv(A):
    s = np.linalg.svd(A, compute_uv=False)
    rank = np.sum(s > s.max() * 1e-10)
    return s, rank, np.linalg.pinv(A).shape


@case(lambda r: (normal(r, 4, 4),))
def symmetric_eig_power(A):
    S = (A + A.T) / 2
    w, V = np.linalg.eigh(S)
    return w, np.abs(V[:, -1]), np.linalg.matrix_power(S, 3)


@case(lambda r: (normal(r, 3, 4, 5), normal(r, 5, 2)),
      lambda r: (normal(r, 2, 2, 3, dtype="float32"), normal(r, 3, 3, dtype="float32")))
def einsum_variants(T, M):
    a = np.einsum("...ij,jk->...ik", T, M)
    b = np.einsum("bij->bj", T)
    c = np.einsum("bij,bij->b", T, T)
    return a, b, c


@case(lambda r: (normal(r, 10, 3), normal(r, 4, 3)),
      lambda r: (normal(r, 1, 2, dtype="float32"), normal(r, 3, 2, dtype="float32")))
def pairwise_distances_norm(A, B):
    D = np.linalg.norm(A[:, None, :] - B[None, :, :], axis=-1)
    nearest = D.argmin(axis=1)
    return D, nearest, np.take_along_axis(D, nearest[:, None], axis=1)[:, 0]


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 4, 2).T,))
def norms_by_order(X):
    return (np.linalg.norm(X, ord=1, axis=1), np.linalg.norm(X, ord=np.inf, axis=0),
            np.linalg.norm(X, "fro"), np.linalg.norm(X, ord=2))


# ---- signals --------------------------------------------------------------------------------

@case(lambda r: (np.cumsum(normal(r, 30)),), lambda r: (np.array([0.0, 3.0, 6.0, 0.5]),))
def unwrap_and_ediff(phase):
    w = np.mod(phase, 2 * np.pi)
    return np.unwrap(w), np.ediff1d(phase, to_begin=0.0)


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 6, dtype="float32"),))
def zero_crossings_and_peaks(x):
    s = np.signbit(x)
    crossings = np.flatnonzero(s[1:] != s[:-1])
    d = np.diff(np.sign(np.diff(x)))
    peaks = np.flatnonzero(d < 0) + 1
    return crossings, peaks


@case(lambda r: (np.linspace(0, 2, 21),), lambda r: (np.linspace(0, 1, 4, dtype=np.float32),))
def trapezoid_integrals(t):
    y = np.exp(-t) * np.cos(3 * t)
    return np.trapezoid(y, t), np.trapezoid(y, dx=0.1), np.gradient(y, t)


@case(lambda r: (normal(r, 50),))
def autocorrelation(x):
    x = x - x.mean()
    r = np.correlate(x, x, mode="full")[x.size - 1:]
    return r / r[0]


# ---- grids and geometry ---------------------------------------------------------------------

@case(lambda r: (5, 4), lambda r: (1, 3))
def meshgrid_ij_gaussian(n, m):
    x = np.linspace(-1, 1, n)
    y = np.linspace(-2, 2, m)
    X, Y = np.meshgrid(x, y, indexing="ij")
    Xs, Ys = np.meshgrid(x, y, sparse=True)
    return np.exp(-(X ** 2 + Y ** 2)), (Xs * Ys).shape


@case(lambda r: (normal(r, 8, 2),), lambda r: (normal(r, 3, 2),))
def polygon_area_shoelace(P):
    x, y = P[:, 0], P[:, 1]
    return 0.5 * np.abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))


@case(lambda r: (normal(r, 6, 3), normal(r, 6, 3)),
      lambda r: (normal(r, 2, 3, dtype="float32"), normal(r, 1, 3, dtype="float32")))
def cross_products_angles(u, v):
    c = np.cross(u, v)
    cosang = np.einsum("ij,ij->i", u, v) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
    return c, np.degrees(np.arccos(np.clip(cosang, -1, 1)))


# ---- indexing and scatter -------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 6, 20), normal(r, 20)), lambda r: (np.array([0, 0, 5]), np.ones(3)))
def scatter_add_max(idx, w):
    acc = np.zeros(6)
    np.add.at(acc, idx, w)
    hi = np.full(6, -np.inf)
    np.maximum.at(hi, idx, w)
    return acc, hi


@case(lambda r: (np.zeros(8), ints(r, -8, 8, 5), normal(r, 5)),
      lambda r: (np.ones(4, np.float32), np.array([9, -1]), np.array([2.0, 3.0])))
def put_wrap(a, ind, v):
    np.put(a, ind, v, mode="wrap")
    return a


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 3, 6, dtype="float32"),))
def top_k_per_row(X):
    k = 2
    idx = np.argsort(-X, axis=1)[:, :k]
    vals = np.take_along_axis(X, idx, axis=1)
    out = np.zeros_like(X)
    np.put_along_axis(out, idx, vals, axis=1)
    return vals, out


@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 4, 4).T,))
def fancy_corners(X):
    rows = np.array([0, -1])
    cols = np.array([0, -1])
    corners = X[np.ix_(rows, cols)]
    diag = X[np.arange(min(X.shape)), np.arange(min(X.shape))]
    Y = X.copy()
    Y[[0, 1], [1, 0]] = -9.0
    return corners, diag, Y


@case(lambda r: (normal(r, 10),), lambda r: (ints(r, -3, 3, 7),))
def running_extrema(x):
    return (np.maximum.accumulate(x), np.minimum.accumulate(x[::-1])[::-1],
            np.logical_or.accumulate(x > 1))


@case(lambda r: (normal(r, 4, 5), normal(r, 4, 5)), lambda r: (normal(r, 2, 2), normal(r, 1, 2)))
def copyto_where(dst, src):
    np.copyto(dst, src, where=src > 0)
    return dst


# ---- simulations with loops -----------------------------------------------------------------

@case(lambda r: (np.linspace(-2, 1, 24), np.linspace(-1.2, 1.2, 16), 20),
      lambda r: (np.linspace(-1.5, 0.5, 5), np.linspace(-1, 1, 3), 8))
def mandelbrot_masked(xs, ys, maxit):
    C = xs[None, :] + 1j * ys[:, None]
    Z = np.zeros_like(C)
    N = np.zeros(C.shape, dtype=np.int64)
    for _ in range(maxit):
        m = np.abs(Z) <= 2
        Z[m] = Z[m] ** 2 + C[m]
        N[m] += 1
    return N, Z


@case(lambda r: (r.uniform(0, 1, (6, 6)) < 0.4, 4), lambda r: (np.zeros((3, 4), bool), 2))
def game_of_life(board, steps):
    b = board.astype(np.uint8)
    for _ in range(steps):
        n = sum(np.roll(np.roll(b, i, 0), j, 1)
                for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        b = ((n == 3) | ((b == 1) & (n == 2))).astype(np.uint8)
    return b.astype(bool)


@case(lambda r: (1.0, 0.0, 0.05, 50),)
def damped_oscillator_euler(x0, v0, dt, steps):
    traj = np.empty((steps, 2))
    x, v = x0, v0
    for k in range(steps):
        a = -4.0 * x - 0.3 * v
        x, v = x + dt * v, v + dt * a
        traj[k] = x, v
    return traj


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 3),))
def local_maxima_ndindex(a):
    out = np.zeros(a.shape, dtype=bool)
    for i, j in np.ndindex(*a.shape):
        lo_i, hi_i = max(i - 1, 0), min(i + 2, a.shape[0])
        lo_j, hi_j = max(j - 1, 0), min(j + 2, a.shape[1])
        out[i, j] = a[i, j] >= a[lo_i:hi_i, lo_j:hi_j].max()
    return out


@case(lambda r: (normal(r, 3, 4),))
def ndenumerate_weighted(a):
    total = 0.0
    for (i, j), v in np.ndenumerate(a):
        total += v * (i + 1) * (j + 1)
    return total


@case(lambda r: (normal(r, 20), 0.2), lambda r: (normal(r, 5, dtype="float32"), 0.5))
def aliased_numpy_names(x, alpha):
    # `from numpy import zeros as z_`, `exp as e_`: the same functions under other names
    out = z_(x.shape[0] + 1, dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i + 1] = alpha * x[i] + (1 - alpha) * out[i]
    grid = linspace(0, 1, x.shape[0])
    return out, e_(-grid) * sqrt(grid + 1)


@case(lambda r: (np.full(10, 0.5), 30, 0.1), lambda r: (np.linspace(0, 1, 4), 5, 0.2))
def heat_explicit_with_bc(u0, steps, r):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0], u[-1] = 1.0, 0.0
    return u


@case(lambda r: (np.linspace(0.1, 3, 12), 25), lambda r: (np.array([1.0, 2.0, 4.0]), 3))
def newton_sqrt_vectorized(a, iters):
    x = np.ones_like(a)
    for _ in range(iters):
        x = 0.5 * (x + a / x)
    return x, np.abs(x * x - a).max()


# ---- second batch: overlapping writes, integer corners, keyword arguments --------------------

@case(lambda r: (normal(r, 8),), lambda r: (ints(r, -5, 5, 6, dtype="int32"),))
def overlapping_shift_writes(a):
    b = a.copy()
    b[1:] = b[:-1]  # NumPy copies the overlapping source first
    c = a.copy()
    c[1:] += c[:-1]
    d = a.copy()
    d[:-1] = d[1:] * 2
    return b, c, d


@case(lambda r: (ints(r, 0, 250, 10, dtype="uint8"), ints(r, 0, 250, 10, dtype="uint8")),
      lambda r: (ints(r, -120, 120, 6, dtype="int8"), ints(r, -120, 120, 6, dtype="int8")))
def small_int_corners(a, b):
    diff = a - b  # wraps
    widened = a.astype(np.int16) - b
    mean = np.mean(a, dtype=np.float64)
    total = a.sum(dtype=np.int64)
    return diff, widened, mean, total, np.abs(a - b), np.cumsum(a, dtype=np.int32)


@case(lambda r: (ints(r, -9, 9, 12), ints(r, 1, 4, 12) * np.resize([1, -1], 12)),
      lambda r: (normal(r, 7), normal(r, 7)))
def division_family(a, b):
    # (no integer divisor 0: NumPy names divmod and fmod in its warning, Stax floor_divide
    # and remainder; and inside `with np.errstate(divide="ignore")` Stax warns for integer
    # // and % by zero all the same: it reads the errstate at the call; s11 HUNT4's note)
    q, rem = np.divmod(a, b)
    return q, rem, np.fmod(a, b), np.floor_divide(a, b), np.remainder(a, -3)


@case(lambda r: (normal(r, 10) * 1000,), lambda r: (np.array([0.5, 1.5, 2.5, -0.5, 1234.5678]),))
def rounding_modes(x):
    return (np.round(x, 2), np.round(x, -2), np.around(x), np.floor(x), np.ceil(x),
            np.trunc(x), np.rint(x), np.fix(x))


@case(lambda r: (np.array([1.0, np.nan, -np.inf, np.inf, 2.0]),),
      lambda r: (normal(r, 6, dtype="float32"),))
def nan_cleaning(x):
    clean = np.nan_to_num(x, nan=0.0, posinf=1e6, neginf=-1e6)
    finite = x[np.isfinite(x)]
    return clean, finite.mean() if finite.size else 0.0, np.isclose(x, 2.0, atol=1e-3)


@case(lambda r: (normal(r, 12),), lambda r: (ints(r, 0, 9, 9),))
def diff_with_ends(x):
    return (np.diff(x, prepend=x[0]), np.diff(x, append=0), np.diff(x, n=2),
            np.ediff1d(x, to_end=[1, 2]))


@case(lambda r: (5, 1.5), lambda r: (1, 0.0))
def ranges_and_spaces(n, start):
    a, step = np.linspace(start, 10, n, endpoint=False, retstep=True)
    b = np.arange(start, start + n * 0.5, 0.5)
    c = np.logspace(0, 2, n, base=2.0)
    g = np.geomspace(1, 1000, n)
    return a, step, b, c, g


@case(lambda r: (normal(r, 6, 4), ints(r, 0, 6, 5)),
      lambda r: (normal(r, 3, 2, dtype="float32"), np.array([2, 0])))
def take_modes(X, idx):
    return (np.take(X, idx + 4, axis=0, mode="clip"), np.take(X, idx - 7, axis=0, mode="wrap"),
            X[idx][:, ::-1], np.take(X.ravel(), [0, -1]))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 3, 3).T,))
def triangles_and_diagonals(A):
    U = np.triu(A, k=1)
    L = np.tril(A, k=-1)
    D = np.diag(np.diag(A))
    B = A.copy()
    np.fill_diagonal(B, 0.0)
    return U + L + D - A, B, np.trace(A, offset=1), np.diagonal(A, offset=-1).copy()


@case(lambda r: (ints(r, 0, 4, 5), ints(r, 0, 3, 5)), lambda r: (np.array([3]), np.array([2])))
def index_arithmetic(rows, cols):
    flat = np.ravel_multi_index((rows, cols), (4, 3))
    back = np.unravel_index(flat, (4, 3))
    grid = np.zeros((4, 3), np.int64)
    np.add.at(grid, (rows, cols), 1)
    return flat, back[0], back[1], grid


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 3, dtype="float32"),))
def boolean_broadcast_assign(X):
    Y = X.copy()
    cols = X.mean(axis=0) > 0
    Y[:, cols] = 0.0
    Z = X.copy()
    Z[X < 0] = np.nan
    rows = (X > 0).sum(axis=1) >= 2
    return Y, Z, X[rows], np.nanmean(Z, axis=1)


@case(lambda r: (np.sort(normal(r, 20)), 3), lambda r: (np.arange(10.0), 4))
def reduceat_bins(x, k):
    starts = np.arange(0, x.size, k)
    sums = np.add.reduceat(x, starts)
    maxes = np.maximum.reduceat(x, starts)
    return sums, maxes, sums / np.diff(np.append(starts, x.size))


@case(lambda r: (normal(r, 10, 3), 0.9), lambda r: (normal(r, 2, 2, dtype="float32"), 0.5))
def exponential_smoothing_rows(X, beta):
    m = np.zeros(X.shape[1], X.dtype)
    out = np.empty_like(X)
    for t, row in enumerate(X):
        m = beta * m + (1 - beta) * row
        out[t] = m / (1 - beta ** (t + 1))
    return out


@case(lambda r: (normal(r, 6, 7), normal(r, 6, 7)))
def ndindex_elementwise_rolled(a, b):
    out = np.empty_like(a)
    for i, j in np.ndindex(a.shape):
        out[i, j] = a[i, j] * b[i, j] + np.maximum(a[i, j], 0.0)
    return out


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 1, 3),))
def ndindex_tuple_positions(a):
    out = np.zeros(a.shape)
    for pos in np.ndindex(*a.shape):
        out[pos] = np.sqrt(a[pos] ** 2 + 1.0)
    return out


@case(lambda r: (np.linspace(-2, 1, 30), np.linspace(-1, 1, 20), 15))
def julia_masked_float_parts(xs, ys, maxit):
    X, Y = np.meshgrid(xs, ys)
    zr, zi = X.copy(), Y.copy()
    count = np.zeros(X.shape, np.int32)
    for _ in range(maxit):
        alive = zr * zr + zi * zi < 4.0
        zr[alive], zi[alive] = (zr[alive] * zr[alive] - zi[alive] * zi[alive] - 0.8,
                                2 * zr[alive] * zi[alive] + 0.156)
        count[alive] += 1
    return count


# ---- third batch: aliasing, views of views, reductions with where=/initial= ----------------

@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 4, 4).T,))
def transpose_in_place_symmetrize(A):
    A += A.T  # NumPy buffers the overlapping transpose
    B = A.copy()
    B[:, ::2] = B[::2, :].T[:, : B.shape[1] // 2 + B.shape[1] % 2] if B.shape[0] == B.shape[1] \
        else B[:, ::2]
    return A, B


@case(lambda r: (normal(r, 5, 4),), lambda r: (ints(r, -3, 9, 3, 5),))
def reductions_with_where_initial(X):
    pos = X > 0
    return (np.sum(X, where=pos, axis=0), np.max(X, initial=-100, axis=1),
            np.min(X, where=pos, initial=100, axis=0), np.prod(X, axis=1, keepdims=True),
            np.mean(X, where=pos))


@case(lambda r: (normal(r, 8),), lambda r: (ints(r, 0, 5, 6, dtype="uint16"),))
def view_chain_writes(x):
    y = x[::-1]
    z = y[1::2]
    z[:] = 0
    w = x.reshape(-1, 2)[:, 1]
    w += 1
    return x, y, z


@case(lambda r: (normal(r, 4, 3), normal(r, 3)), lambda r: (normal(r, 1, 2), normal(r, 2)))
def out_arguments(A, b):
    out = np.empty_like(A)
    np.multiply(A, b, out=out)
    np.add(out, 1, out=out)
    res = np.zeros(A.shape[0])
    np.sum(out, axis=1, out=res)
    np.clip(out, -1, 1, out=out)
    return out, res


@case(lambda r: (normal(r, 10),), lambda r: (np.array([3.0, 1.0, 2.0, 1.0, np.nan]),))
def sorting_family(x):
    s = np.sort(x)
    idx = np.argsort(x, kind="stable")
    part = np.partition(x, 2)[:3]
    ranks = np.empty_like(idx)
    ranks[idx] = np.arange(x.size)
    return s, idx, np.sort(part), ranks, np.argmax(x), np.nanargmin(x)


@case(lambda r: (ints(r, 0, 100, 12),), lambda r: (np.array([5, 5, 5]),))
def integer_stats(v):
    return (np.mean(v), np.var(v), np.std(v, ddof=1) if v.size > 1 else 0.0, np.median(v),
            np.average(v, weights=np.arange(1, v.size + 1)), np.ptp(v), v.sum() // v.size)


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 2, dtype="float32"),))
def stacking_shapes(A):
    return (np.vstack([A, A[:1]]), np.hstack([A, A[:, :1]]), np.dstack([A, A]).shape,
            np.column_stack([A[:, 0], A[:, -1]]), np.concatenate([A, A], axis=None),
            np.stack([A, A], axis=-1).sum(-1), np.atleast_2d(A[0]).shape)


@case(lambda r: (normal(r, 20), 4), lambda r: (normal(r, 7, dtype="float32"), 3))
def rolling_window_stats(x, w):
    win = np.lib.stride_tricks.sliding_window_view(x, w)
    return win.mean(axis=1), win.max(axis=1) - win.min(axis=1), np.median(win, axis=1)


@case(lambda r: (normal(r, 6, 5), 2), lambda r: (normal(r, 3, 3), 0))
def row_normalize_in_loop(X, skip):
    Y = X.copy()
    for i in range(Y.shape[0]):
        if i == skip:
            continue
        n = np.sqrt((Y[i] ** 2).sum())
        Y[i] /= n
    return Y


@case(lambda r: (np.arange(24.0).reshape(2, 3, 4),), lambda r: (normal(r, 1, 2, 3),))
def axis_shuffles(T):
    return (np.moveaxis(T, 0, -1), np.swapaxes(T, 1, 2), T.transpose(2, 0, 1).reshape(-1, 2),
            np.rollaxis(T, 2), np.expand_dims(T, (0, 3)).shape, np.squeeze(T[:, :1]))


@pytest.mark.parametrize("name", sorted(CASES9))
def test_wild9_function_matches_numpy(name: str) -> None:
    run_case(name, CASES9, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES9, warm=True, views=True, warns=True)
