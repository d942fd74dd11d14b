"""A thirteenth wave of the wild corpus (s15 HUNT8): ordinary NumPy programs in styles the first
twelve waves use least — image stencils by shifted views with np.pad modes, morphology by
stacking shifted views, sliding_window_view; time series by cumsum windows, drawdown with
np.maximum.accumulate, np.diff with prepend/append, resampling by reshape+mean; geometry
(broadcast pairwise distances, np.cross of stacks, norm with axis/ord, einsum rotations, shoelace
areas, arctan2/np.unwrap); statistics (bincount with weights/minlength, histogram2d, digitize
right=, searchsorted sides, quantile methods, unique with index/inverse/counts, corrcoef);
linear algebra in use (solve, qr, svd, eigh, det, slogdet, pinv, matrix_power, inv, cholesky);
ML snippets (one-hot, log-softmax, cross-entropy, k-means steps, logistic regression descent,
PCA by SVD, batch norm); sorting along axes (argsort kind="stable", lexsort, partition,
argpartition); set operations; np.ix_, fancy indices mixed with slices, take/put_along_axis,
nonzero/argwhere/flatnonzero; complex numbers and np.fft; in-place operators on views and out=;
np.errstate; np.indices/mgrid/ogrid/tri/triu/tril/eye(k=); dtype= of reductions; Python lists,
tuples and scalars as arguments; 0-d and empty inputs.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild13 [names]` prints each function's class.

Counts (152 functions): on main 11dbf04 131 compiled, 19 break, 2 FAIL — np.roll by an int
argument (a traced shift) raised TypeError "len() of unsized object" (tile_and_crop,
runtime_roll_shift); after HUNT8 140 compiled, 12 break, 0 FAIL (np.roll by a run-time shift,
np.modf, np.linalg.matrix_rank, np.matmul(out=), `B[[k, p]]` with p traced, np.fft.fft/ifft/
rfft/irfft/fftshift/ifftshift, np.polyder/polyint compile; then np.histogram2d: 141 compiled,
11 break). Still breaks: np.poly1d and np.polymul (trim_zeros), np.real_if_close, np.linalg.eig,
np.float64() of a traced value, ndarray.view(dtype), data-dependent lengths (x[mask] in a loop,
x[:argmin + 1], np.argwhere/unique of one element, np.transpose(np.nonzero(A))).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints

CASES13: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES13)


def u8(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.integers(0, 256, shape).astype(np.uint8)


def walk(r: np.random.Generator, n: int) -> np.ndarray:
    return 100.0 * np.exp(np.cumsum(0.02 * r.standard_normal(n)))


# ---- images ---------------------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 7),), lambda r: (normal(r, 1, 1),), lambda r: (normal(r, 5, 4).T,))
def laplacian_reflect(im):
    p = np.pad(im, 1, mode="reflect") if min(im.shape) > 1 else np.pad(im, 1, mode="edge")
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * im


@case(lambda r: (u8(r, 6, 5),), lambda r: (u8(r, 2, 2),))
def pad_modes(im):
    return (np.pad(im, ((1, 2), (0, 1)), mode="constant", constant_values=9),
            np.pad(im, 2, mode="wrap"), np.pad(im, (1, 1), mode="symmetric"),
            np.pad(im, 1, mode="edge"), np.pad(im.astype(float), 1, mode="linear_ramp"))


@case(lambda r: (u8(r, 7, 7) > 128,), lambda r: (np.ones((3, 3), bool),))
def binary_dilate_stack(b):
    p = np.pad(b, 1)
    h, w = b.shape
    shifts = np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])
    return shifts.any(axis=0), shifts.all(axis=0), shifts.sum(axis=0, dtype=np.uint8)


@case(lambda r: (normal(r, 6, 8),), lambda r: (normal(r, 3, 3),))
def median_filter_windows(im):
    from numpy.lib.stride_tricks import sliding_window_view
    win = sliding_window_view(np.pad(im, 1, mode="edge"), (3, 3))
    return np.median(win, axis=(-2, -1)), win.max(axis=(-2, -1)), win.shape


@case(lambda r: (normal(r, 20), 4), lambda r: (normal(r, 4), 4))
def sliding_window_1d(x, w):
    from numpy.lib.stride_tricks import sliding_window_view
    v = sliding_window_view(x, w)
    return v.mean(axis=1), v.std(axis=1), v[::2].sum(axis=1)


@case(lambda r: (u8(r, 12, 12),), lambda r: (np.full((3, 4), 5, np.uint8),))
def histogram_equalize_interp(im):
    hist, bins = np.histogram(im.ravel(), 256, (0, 256))
    cdf = hist.cumsum()
    cdf = 255 * cdf / cdf[-1]
    return np.interp(im.ravel(), bins[:-1], cdf).reshape(im.shape).astype(np.uint8)


@case(lambda r: (u8(r, 6, 6, 3),), lambda r: (u8(r, 1, 2, 3),))
def rgb_to_hsv_value(im):
    f = im / 255.0
    mx, mn = f.max(axis=-1), f.min(axis=-1)
    delta = mx - mn
    s = np.where(mx > 0, delta / np.where(mx > 0, mx, 1), 0.0)
    return mx, s, f.argmax(axis=-1)


@case(lambda r: (normal(r, 8, 8),), lambda r: (normal(r, 2, 2),))
def gaussian_kernel_conv2d(im):
    k = np.array([1.0, 4.0, 6.0, 4.0, 1.0])
    k2 = np.outer(k, k) / k.sum() ** 2
    p = np.pad(im, 2, mode="edge")
    h, w = im.shape
    out = np.zeros_like(im)
    for i in range(5):
        for j in range(5):
            out += k2[i, j] * p[i:i + h, j:j + w]
    return out


@case(lambda r: (u8(r, 8, 8), 3), lambda r: (u8(r, 2, 2), 1))
def block_max_pool(im, s):
    h, w = im.shape[0] // s * s, im.shape[1] // s * s
    b = im[:h, :w].reshape(h // s, s, w // s, s)
    return b.max(axis=(1, 3)), b.mean(axis=(1, 3), dtype=np.float32)


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 1, 6),))
def normalize_image_range(im):
    lo, hi = np.percentile(im, [2, 98])
    out = np.clip((im - lo) / (hi - lo + 1e-12), 0, 1)
    return out, np.ptp(im), np.ptp(im, axis=0)


@case(lambda r: (u8(r, 6, 6),), lambda r: (u8(r, 3, 2),))
def image_gradients(im):
    gy, gx = np.gradient(im.astype(np.float32))
    return np.hypot(gx, gy), np.degrees(np.arctan2(gy, gx)), gx.dtype


@case(lambda r: (u8(r, 10, 10), 4), lambda r: (u8(r, 4, 4), 2))
def tile_and_crop(im, k):
    t = np.tile(im, (2, 2))
    c = t[k:k + im.shape[0], k:k + im.shape[1]]
    return c, np.roll(im, (1, -1), axis=(0, 1)), np.array_equal(np.roll(c, k, axis=(0, 1)), im)


@case(lambda r: (u8(r, 5, 5, 3), np.array([255, 0, 0], np.uint8)),
      lambda r: (u8(r, 1, 1, 3), np.array([0, 0, 0], np.uint8)))
def color_distance_mask(im, c):
    d = np.linalg.norm(im.astype(np.int32) - c, axis=-1)
    m = d < 200
    out = im.copy()
    out[m] = c
    return out, m.sum(), d.min()


# ---- time series and finance ----------------------------------------------------------------

@case(lambda r: (walk(r, 30),), lambda r: (walk(r, 1),), lambda r: (walk(r, 2),))
def max_drawdown_accumulate(p):
    peak = np.maximum.accumulate(p)
    dd = p / peak - 1
    end = np.argmin(dd)
    start = np.argmax(p[:end + 1])
    return dd.min(), start, end, np.minimum.accumulate(p)


@case(lambda r: (walk(r, 25), 5), lambda r: (walk(r, 5), 5))
def rolling_mean_cumsum(x, w):
    c = np.cumsum(np.insert(x, 0, 0.0))
    m = (c[w:] - c[:-w]) / w
    c2 = np.cumsum(np.insert(x ** 2, 0, 0.0))
    v = (c2[w:] - c2[:-w]) / w - m ** 2
    return m, np.sqrt(np.maximum(v, 0))


@case(lambda r: (walk(r, 12),), lambda r: (walk(r, 1),))
def diff_prepend_append(p):
    return (np.diff(p, prepend=p[0]), np.diff(p, append=0.0), np.diff(p, n=2, prepend=[0, 0]),
            np.diff(p) / p[:-1])


@case(lambda r: (walk(r, 24),), lambda r: (walk(r, 6),))
def resample_ohlc(p):
    b = p[:len(p) // 6 * 6].reshape(-1, 6)
    return b[:, 0], b.max(axis=1), b.min(axis=1), b[:, -1], b.mean(axis=1)


@case(lambda r: (normal(r, 15), 0.3, 0.2), lambda r: (normal(r, 3), 0.5, 0.5))
def holt_linear_trend(x, a, b):
    level, trend = x[0], x[1] - x[0] if len(x) > 1 else 0.0
    out = [level]
    for t in range(1, len(x)):
        prev = level
        level = a * x[t] + (1 - a) * (level + trend)
        trend = b * (level - prev) + (1 - b) * trend
        out.append(level + trend)
    return np.array(out)


@case(lambda r: (walk(r, 40) / 100, 0.0), lambda r: (walk(r, 3) / 100, 0.01))
def sharpe_sortino(p, rf):
    r = np.diff(np.log(p))
    ex = r - rf / 252
    down = np.minimum(ex, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sharpe = np.sqrt(252) * ex.mean() / ex.std(ddof=1)
        sortino = np.sqrt(252) * ex.mean() / np.sqrt((down ** 2).mean())
    return sharpe, sortino


@case(lambda r: (walk(r, 30), 3, 8), lambda r: (walk(r, 10), 2, 4))
def moving_average_crossover(p, fast, slow):
    def sma(x, n):
        return np.convolve(x, np.ones(n) / n, mode="valid")
    f, s = sma(p, fast)[slow - fast:], sma(p, slow)
    signal = np.sign(f - s)
    cross = np.flatnonzero(np.diff(signal) != 0) + 1
    return signal, cross


@case(lambda r: (normal(r, 10, 3), np.array([0.5, 0.3, 0.2])),
      lambda r: (normal(r, 1, 3), np.array([1.0, 0.0, 0.0])))
def portfolio_var(R, w):
    cov = np.cov(R, rowvar=False) if len(R) > 1 else np.zeros((3, 3))
    ret = R @ w
    return w @ cov @ w, np.percentile(ret, 5), np.cumprod(1 + ret)[-1]


@case(lambda r: (walk(r, 20), 14), lambda r: (walk(r, 5), 3))
def rsi_wilder(p, n):
    d = np.diff(p)
    up, dn = np.clip(d, 0, None), np.clip(-d, 0, None)
    au, ad = up[:n].mean(), dn[:n].mean()
    for i in range(n, len(d)):
        au = (au * (n - 1) + up[i]) / n
        ad = (ad * (n - 1) + dn[i]) / n
    return 100 - 100 / (1 + au / ad)


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 4),))
def autocorrelation(x):
    x = x - x.mean()
    ac = np.correlate(x, x, mode="full")[len(x) - 1:]
    return ac / ac[0], np.argmax(ac[1:] < 0) + 1 if len(x) > 1 else 0


@case(lambda r: (normal(r, 12), 4), lambda r: (normal(r, 4), 4))
def lagged_design_matrix(x, k):
    n = len(x) - k
    X = np.column_stack([x[i:i + n] for i in range(k)])
    y = x[k:]
    return X, y, X.T @ y


# ---- geometry -------------------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 3), normal(r, 4, 3)), lambda r: (normal(r, 1, 3), normal(r, 0, 3)))
def pairwise_distances(A, B):
    d = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    d2 = (A ** 2).sum(1)[:, None] + (B ** 2).sum(1)[None, :] - 2 * A @ B.T
    return d, np.maximum(d2, 0), d.argmin(axis=1) if d.size else d.sum(axis=1)


@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def cross_stack_normals(a, b):
    n = np.cross(a, b)
    return n / np.linalg.norm(n, axis=1, keepdims=True), np.einsum("ij,ij->i", n, a)


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 2),))
def norms_ord_axis(X):
    return (np.linalg.norm(X), np.linalg.norm(X, ord=1, axis=1), np.linalg.norm(X, np.inf, axis=0),
            np.linalg.norm(X, ord="fro"), np.linalg.norm(X, ord=2, axis=1),
            np.linalg.norm(X, axis=1, ord=0), np.linalg.norm(X, ord=-np.inf, axis=1))


@case(lambda r: (normal(r, 7, 3), 0.4), lambda r: (normal(r, 1, 3), 0.0))
def rotate_points_einsum(P, theta):
    c, s = np.cos(theta), np.sin(theta)
    Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    Q = np.einsum("ij,nj->ni", Rz, P)
    return Q, np.allclose(np.linalg.norm(Q, axis=1), np.linalg.norm(P, axis=1)), P @ Rz.T


@case(lambda r: (normal(r, 8), normal(r, 8)),
      lambda r: (np.array([0.0, 1, 0]), np.array([0.0, 0, 1])))
def shoelace_area(x, y):
    area = 0.5 * np.abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
    cx = np.sum((x + np.roll(x, -1)) * (x * np.roll(y, -1) - np.roll(x, -1) * y))
    return area, cx


@case(lambda r: (np.cumsum(r.uniform(0, 1.5, 15)),), lambda r: (np.array([3.0]),))
def unwrap_angles(t):
    a = np.arctan2(np.sin(t), np.cos(t))
    return np.unwrap(a), np.unwrap(np.degrees(a), period=360), np.rad2deg(np.angle(np.exp(1j * t)))


@case(lambda r: (normal(r, 6, 2),), lambda r: (normal(r, 2, 2),))
def polygon_edges_angles(P):
    e = np.roll(P, -1, axis=0) - P
    lens = np.hypot(e[:, 0], e[:, 1])
    ang = np.arctan2(e[:, 1], e[:, 0])
    turn = np.diff(np.concatenate([ang, ang[:1]]))
    return lens.sum(), (turn + np.pi) % (2 * np.pi) - np.pi


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 3, 3),))
def plane_fit_svd(P):
    c = P.mean(axis=0)
    _, s, vt = np.linalg.svd(P - c)
    n = vt[-1]
    return np.abs(n), np.abs((P - c) @ n).max(), s.shape


@case(lambda r: (normal(r, 3), normal(r, 3)),
      lambda r: (np.array([1.0, 0, 0]), np.array([1.0, 0, 0])))
def angle_between(u, v):
    cosang = np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))
    sine = np.linalg.norm(np.cross(u, v))
    return np.arccos(np.clip(cosang, -1.0, 1.0)), np.degrees(np.arctan2(sine, np.dot(u, v)))


@case(lambda r: (normal(r, 5, 2), normal(r, 2)), lambda r: (normal(r, 1, 2), np.zeros(2)))
def nearest_point_argmin(P, q):
    d = np.linalg.norm(P - q, axis=1)
    i = np.argmin(d)
    return P[i], d[i], np.argsort(d)[:3]


@case(lambda r: (np.array([[0.0, 0], [1, 0], [0, 1]]), normal(r, 6, 2)),
      lambda r: (np.array([[0.0, 0], [2, 0], [0, 2]]), normal(r, 1, 2)))
def barycentric_coords(T, P):
    a, b, c = T
    v0, v1 = b - a, c - a
    M = np.column_stack([v0, v1])
    lam = np.linalg.solve(M, (P - a).T).T
    inside = (lam >= 0).all(axis=1) & (lam.sum(axis=1) <= 1)
    return lam, inside


# ---- statistics -----------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 5, 20), normal(r, 20)), lambda r: (np.array([3]), np.array([2.0])))
def bincount_weights_minlength(k, w):
    s = np.bincount(k, weights=w, minlength=6)
    n = np.bincount(k, minlength=6)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
    return s, n, mean


@case(lambda r: (normal(r, 30), normal(r, 30)), lambda r: (normal(r, 2), normal(r, 2)))
def histogram2d_counts(x, y):
    H, xe, ye = np.histogram2d(x, y, bins=4, range=[[-3, 3], [-3, 3]])
    return H, xe, H.sum(axis=0)


@case(lambda r: (normal(r, 12),), lambda r: (np.array([0.0, 1.0]),))
def digitize_right(x):
    bins = np.array([-1.0, 0.0, 1.0])
    return (np.digitize(x, bins), np.digitize(x, bins, right=True),
            np.digitize(x, bins[::-1]), np.searchsorted(bins, x, side="right"))


@case(lambda r: (np.sort(ints(r, 0, 6, 15)), ints(r, -1, 8, 5)),
      lambda r: (np.array([1, 1, 1]), np.array([1])))
def searchsorted_sides_counts(a, v):
    lo = np.searchsorted(a, v, side="left")
    hi = np.searchsorted(a, v, side="right")
    return lo, hi, hi - lo, np.searchsorted(a, 3)


@case(lambda r: (normal(r, 11),), lambda r: (normal(r, 4, 3),))
def quantile_methods(x):
    return tuple(np.quantile(x, [0.1, 0.5, 0.9], method=m)
                 for m in ("linear", "lower", "higher", "midpoint", "nearest",
                           "median_unbiased", "inverted_cdf"))


@case(lambda r: (ints(r, 0, 5, 12),), lambda r: (np.array([4, 4, 2]),))
def unique_all_returns(x):
    u, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    return u, idx, inv, cnt, u[inv], u[np.argmax(cnt)]


@case(lambda r: (normal(r, 4, 10),), lambda r: (normal(r, 2, 3),))
def corrcoef_matrix(X):
    C = np.corrcoef(X)
    c01 = np.corrcoef(X[0], X[1])[0, 1]
    return C, c01, np.cov(X, ddof=0), np.diag(C)


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 3),))
def zscore_outliers(x):
    z = (x - x.mean()) / x.std()
    mad = np.median(np.abs(x - np.median(x)))
    return z, np.abs(z) > 1.5, mad, np.count_nonzero(np.abs(z) > 1.0)


@case(lambda r: (normal(r, 25),), lambda r: (normal(r, 5),))
def histogram_density(x):
    h, e = np.histogram(x, bins=5, density=True)
    c, _ = np.histogram(x, bins=[-2, -1, 0, 1, 2])
    return h, e, c, np.sum(h * np.diff(e))


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 1, 4),))
def weighted_stats(X):
    w = np.arange(1, X.shape[0] + 1, dtype=float)
    m = np.average(X, axis=0, weights=w)
    avg, sw = np.average(X, axis=0, weights=w, returned=True)
    var = np.average((X - m) ** 2, axis=0, weights=w)
    return m, sw, var


@case(lambda r: (normal(r, 15),), lambda r: (normal(r, 2),))
def rank_data(x):
    order = np.argsort(x, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(x))
    return ranks, (ranks + 1) / len(x), np.argsort(np.argsort(-x))


@case(lambda r: (r.integers(0, 2, 30).astype(bool),), lambda r: (np.array([True]),))
def run_lengths(b):
    x = np.concatenate(([0], b.view(np.int8), [0]))
    d = np.diff(x)
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return starts, ends - starts


# ---- linear algebra in use ------------------------------------------------------------------

@case(lambda r: (normal(r, 4, 4) + 4 * np.eye(4), normal(r, 4)),
      lambda r: (np.array([[2.0]]), np.array([3.0])))
def solve_and_residual(A, b):
    x = np.linalg.solve(A, b)
    X = np.linalg.solve(A, np.eye(len(b)))
    return x, np.linalg.norm(A @ x - b), np.allclose(X, np.linalg.inv(A))


@case(lambda r: (normal(r, 10, 3), normal(r, 10)), lambda r: (normal(r, 3, 3), normal(r, 3)))
def least_squares_normal_eq(X, y):
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    q, rr = np.linalg.qr(X)
    beta2 = np.linalg.solve(rr, q.T @ y)
    return beta, np.allclose(beta, beta2), np.sum((y - X @ beta) ** 2)


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def eigh_spectrum(A):
    S = (A + A.T) / 2
    w, v = np.linalg.eigh(S)
    recon = (v * w) @ v.T
    return w, np.allclose(recon, S), np.linalg.eigvalsh(S)


@case(lambda r: (normal(r, 4, 4),), lambda r: (np.eye(2),), lambda r: (normal(r, 3, 3).T,))
def det_slogdet(A):
    sign, logdet = np.linalg.slogdet(A)
    return np.linalg.det(A), sign, logdet, np.trace(A), np.linalg.matrix_power(A, 3)


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 2, 4),))
def pinv_projection(A):
    P = np.linalg.pinv(A)
    H = A @ P
    return P, np.allclose(H @ H, H), np.linalg.matrix_rank(A)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def cholesky_spd(A):
    S = A @ A.T + np.eye(len(A))
    L = np.linalg.cholesky(S)
    y = np.linalg.solve(L, np.ones(len(A)))
    return L, np.tril(L) - L, y, np.prod(np.diag(L)) ** 2


@case(lambda r: (normal(r, 6, 4), 2), lambda r: (normal(r, 3, 3), 1))
def truncated_svd(A, k):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    Ak = U[:, :k] * s[:k] @ Vt[:k]
    return Ak, np.linalg.norm(A - Ak), s[:k] ** 2 / np.sum(s ** 2)


@case(lambda r: (np.array([[0.9, 0.1], [0.2, 0.8]]), 5), lambda r: (np.eye(3), 0))
def markov_matrix_power(T, n):
    Tn = np.linalg.matrix_power(T, n)
    w, v = np.linalg.eig(T.T)
    return Tn, np.sort(np.abs(w)), Tn.sum(axis=1)


@case(lambda r: (normal(r, 3, 3, 3),), lambda r: (normal(r, 1, 2, 2),))
def batched_linalg(A):
    return (np.linalg.det(A), np.linalg.inv(A) @ A, np.matmul(A, A.transpose(0, 2, 1)),
            np.trace(A, axis1=1, axis2=2))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 2, 2),))
def gram_schmidt(A):
    Q = np.zeros_like(A)
    for j in range(A.shape[1]):
        v = A[:, j].copy()
        for i in range(j):
            v -= (Q[:, i] @ A[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    return np.abs(Q), np.allclose(Q.T @ Q, np.eye(A.shape[1]))


# ---- machine learning snippets --------------------------------------------------------------

@case(lambda r: (ints(r, 0, 4, 7), 4), lambda r: (np.array([2]), 3),
      lambda r: (ints(r, 0, 1, 0), 2))
def one_hot_eye(y, k):
    a = np.eye(k)[y]
    b = np.zeros((len(y), k), dtype=np.int8)
    b[np.arange(len(y)), y] = 1
    c = (y[:, None] == np.arange(k)).astype(np.float32)
    return a, b, c


@case(lambda r: (normal(r, 5, 4), ints(r, 0, 4, 5)), lambda r: (normal(r, 1, 3), np.array([2])))
def log_softmax_cross_entropy(z, y):
    m = z.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(axis=1, keepdims=True))
    logp = z - lse
    loss = -logp[np.arange(len(y)), y].mean()
    grad = np.exp(logp)
    grad[np.arange(len(y)), y] -= 1
    return loss, grad / len(y), logp.argmax(axis=1)


@case(lambda r: (normal(r, 20, 2), normal(r, 3, 2)), lambda r: (normal(r, 3, 2), normal(r, 3, 2)))
def kmeans_steps(X, C):
    for _ in range(3):
        d = ((X[:, None] - C[None]) ** 2).sum(-1)
        lab = d.argmin(1)
        C = np.array([X[lab == k].mean(0) if np.any(lab == k) else C[k] for k in range(len(C))])
    return C, lab


@case(lambda r: (normal(r, 20, 3), ints(r, 0, 2, 20).astype(float)),
      lambda r: (normal(r, 2, 3), np.array([1.0, 0.0])))
def logistic_regression_gd(X, y):
    w = np.zeros(X.shape[1])
    b = 0.0
    for _ in range(25):
        p = 1 / (1 + np.exp(-(X @ w + b)))
        w -= 0.5 * X.T @ (p - y) / len(y)
        b -= 0.5 * np.mean(p - y)
    loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
    return w, b, loss


@case(lambda r: (normal(r, 12, 4), 2), lambda r: (normal(r, 3, 3), 1))
def pca_svd(X, k):
    Xc = X - X.mean(axis=0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    Z = Xc @ Vt[:k].T
    explained = s ** 2 / (len(X) - 1)
    return np.abs(Z), explained[:k] / explained.sum()


@case(lambda r: (normal(r, 8, 4), np.ones(4), np.zeros(4)),
      lambda r: (normal(r, 1, 3), np.ones(3), np.zeros(3)))
def batch_norm_forward(x, gamma, beta):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    xhat = (x - mu) / np.sqrt(var + 1e-5)
    return gamma * xhat + beta, mu, var


@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 1, 5),))
def layer_norm_gelu(x):
    mu = x.mean(-1, keepdims=True)
    sd = x.std(-1, keepdims=True)
    h = (x - mu) / (sd + 1e-6)
    return 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))


@case(lambda r: (normal(r, 4, 3), normal(r, 3, 2), normal(r, 4, 2)),
      lambda r: (normal(r, 1, 3), normal(r, 3, 2), normal(r, 1, 2)))
def mlp_backprop(X, W, Y):
    H = X @ W
    A = np.maximum(H, 0)
    err = A - Y
    dW = X.T @ (err * (H > 0))
    return 0.5 * np.sum(err ** 2), dW, (H > 0).mean()


@case(lambda r: (normal(r, 10, 3), ints(r, 0, 3, 10), normal(r, 4, 3)),
      lambda r: (normal(r, 2, 3), np.array([1, 1]), normal(r, 1, 3)))
def knn_predict(Xtr, ytr, Xte):
    d = ((Xte[:, None, :] - Xtr[None]) ** 2).sum(-1)
    k = min(3, len(Xtr))
    nn = np.argpartition(d, k - 1, axis=1)[:, :k]
    votes = ytr[nn]
    pred = np.array([np.bincount(v, minlength=3).argmax() for v in votes])
    return pred, np.sort(d, axis=1)[:, :k]


@case(lambda r: (ints(r, 0, 3, 12), ints(r, 0, 3, 12)), lambda r: (np.array([1]), np.array([0])))
def precision_recall(y, p):
    tp = np.sum((y == 1) & (p == 1))
    fp = np.sum((y != 1) & (p == 1))
    fn = np.sum((y == 1) & (p != 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = tp / (tp + fp)
        rec = np.float64(tp) / (tp + fn)
    return prec, rec, np.mean(y == p)


@case(lambda r: (normal(r, 10),), lambda r: (np.array([0.0]),))
def activations(x):
    return (1 / (1 + np.exp(-x)), np.where(x > 0, x, 0.01 * x), np.logaddexp(0, x),
            np.tanh(x), np.maximum(x, 0).astype(np.float32), np.expm1(np.minimum(x, 0)))


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 0, 3),))
def minmax_standard_scaler(X):
    lo, hi = X.min(axis=0, initial=np.inf), X.max(axis=0, initial=-np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        mm = (X - lo) / (hi - lo)
    return mm, X.mean(axis=0) if len(X) else np.zeros(3), lo


# ---- sorting --------------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 4, 5, 6),), lambda r: (ints(r, 0, 2, 1, 3),))
def argsort_axes_stable(A):
    return (np.argsort(A, axis=0, kind="stable"), np.argsort(A, axis=1, kind="stable"),
            np.argsort(A, axis=None, kind="stable"), np.sort(A, axis=0)[::-1], -np.sort(-A, axis=1))


@case(lambda r: (ints(r, 0, 3, 10), ints(r, 0, 3, 10), normal(r, 10)),
      lambda r: (np.array([1]), np.array([0]), np.array([2.0])))
def lexsort_multi_key(a, b, c):
    o = np.lexsort((c, b, a))
    o2 = np.lexsort(np.stack([b, a]))
    return o, a[o], o2, np.lexsort((-c,))


@case(lambda r: (normal(r, 5, 8), 3), lambda r: (normal(r, 2, 4), 0))
def partition_topk(A, k):
    p = np.partition(A, k, axis=1)
    ap = np.argpartition(-A, k, axis=1)[:, :k + 1]
    top = np.take_along_axis(A, ap, axis=1)
    return p[:, k], np.sort(top, axis=1), np.partition(A.ravel(), -2)[-2]


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 1),))
def sorted_merge_median(x):
    s = np.sort(x)
    n = len(s)
    med = (s[(n - 1) // 2] + s[n // 2]) / 2
    return med, np.median(x), s[::-1][:3], np.argsort(x)[::-1][:3]


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 1),))
def sort_rows_by_column(M):
    by_last = M[M[:, -1].argsort()]
    by_first_desc = M[np.argsort(-M[:, 0], kind="stable")]
    return by_last, by_first_desc, np.sort(M, axis=None)


@case(lambda r: (ints(r, 0, 10, 12),), lambda r: (np.array([5]),))
def sort_in_place_view(x):
    y = x.copy()
    y[::2].sort()
    z = x.copy()
    z[:len(z) // 2] = np.sort(z[:len(z) // 2])[::-1]
    return y, z


# ---- set operations -------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 10, 8), ints(r, 0, 10, 6)), lambda r: (np.array([1]), np.array([1])))
def set_ops(a, b):
    return (np.intersect1d(a, b), np.setdiff1d(a, b), np.union1d(a, b), np.setxor1d(a, b),
            np.isin(a, b), np.isin(a, b, invert=True))


@case(lambda r: (ints(r, 0, 10, 8), [2, 3, 5, 7]), lambda r: (np.array([4]), [4]))
def isin_list_filter(a, allowed):
    m = np.isin(a, allowed)
    return a[m], m.sum(), np.where(m, a, -1)


@case(lambda r: (ints(r, 0, 6, 9), ints(r, 0, 6, 9)), lambda r: (np.array([2, 2]), np.array([2])))
def intersect_assume_unique(a, b):
    ua, ub = np.unique(a), np.unique(b)
    return (np.intersect1d(ua, ub, assume_unique=True), np.setdiff1d(ua, ub, assume_unique=True),
            len(np.union1d(a, b)))


# ---- indexing -------------------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 3, 3).T,))
def ix_submatrix(A):
    rows, cols = [0, 2], [1, 2]
    sub = A[np.ix_(rows, cols)]
    B = A.copy()
    B[np.ix_(rows, cols)] = 0
    return sub, B, A[np.ix_([True, False, True], [0, 1])]


@case(lambda r: (normal(r, 4, 5, 6),), lambda r: (normal(r, 3, 3, 3),))
def fancy_mixed_with_slices(T):
    return T[:, [0, 2]], T[[1, 0], :, 1:], T[1:, :, [2, 0]], T[..., [0]], T[[0, 1], [1, 2]]


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 4),))
def take_put_along_axis(A):
    idx = np.argsort(A, axis=1)
    s = np.take_along_axis(A, idx, axis=1)
    B = np.zeros_like(A)
    np.put_along_axis(B, idx[:, :1], 1.0, axis=1)
    mx = np.take_along_axis(A, A.argmax(axis=0)[None], axis=0)
    return s, B, mx


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 2, 2),))
def boolean_mask_2d(A):
    m = A > 0
    B = A.copy()
    B[~m] = 0
    rows = A[m.any(axis=1)]
    return A[m], B, rows, A[:, m[0]]


@case(lambda r: (ints(r, 0, 2, 4, 5),), lambda r: (np.zeros((2, 2), int),))
def nonzero_argwhere(A):
    i, j = np.nonzero(A)
    return (i, j, np.argwhere(A), np.flatnonzero(A), np.transpose(np.nonzero(A)),
            np.count_nonzero(A, axis=0))


@case(lambda r: (normal(r, 8),), lambda r: (np.zeros(3),))
def where_one_argument(x):
    (idx,) = np.where(x > 0)
    return idx, np.where(x)[0], x[np.where(x > 0.5)]


@case(lambda r: (normal(r, 6, 4), 2), lambda r: (normal(r, 3, 3), 0))
def runtime_index_views(A, i):
    row = A[i]
    col = A[:, i]
    row2 = A[i - 1]
    return row, col, row2, A[i, i], A[i:i + 2, ::2]


@case(lambda r: (np.arange(12.0).reshape(3, 4),), lambda r: (np.ones((2, 3)),))
def negative_and_step_indices(A):
    return A[-1], A[::-1, ::-2], A[-2:, -3:-1], A[:, -1:], A[::2, 1::2]


@case(lambda r: (normal(r, 10), np.array([3, 1, 7])), lambda r: (normal(r, 3), np.array([0, 0])))
def take_modes(x, idx):
    return (np.take(x, idx), np.take(x, idx + 5, mode="wrap"), np.take(x, idx + 5, mode="clip"),
            x[idx][::-1], np.take(x, [[0, 1], [1, 0]]))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def diag_indices_fill(A):
    B = A.copy()
    np.fill_diagonal(B, 0)
    i, j = np.triu_indices(len(A), k=1)
    C = A.copy()
    C[np.diag_indices(len(A))] += 10
    return B, A[i, j], C, np.diagonal(A, offset=1)


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 2),))
def ravel_unravel_index(A):
    k = A.argmax()
    r, c = np.unravel_index(k, A.shape)
    flat = np.ravel_multi_index((np.array([0, 1]), np.array([1, 0])), A.shape)
    return k, r, c, A[r, c], flat, np.unravel_index(A.argmin(axis=None), A.shape)


# ---- complex numbers and FFT ----------------------------------------------------------------

@case(lambda r: (normal(r, 6) + 1j * normal(r, 6),), lambda r: (np.array([1j]),))
def complex_parts(z):
    return (np.abs(z), np.angle(z), np.angle(z, deg=True), np.conj(z), z.real, z.imag,
            z * z.conj(), np.real_if_close(z * z.conj()))


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 4),))
def rfft_lowpass(x):
    X = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), d=0.1)
    X[f > 2.0] = 0
    return np.fft.irfft(X, n=len(x)), np.abs(X), f


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def fft_power_spectrum(x):
    X = np.fft.fft(x)
    P = np.abs(X) ** 2 / len(x)
    return P, np.fft.fftfreq(len(x)), np.fft.fftshift(P), np.fft.ifft(X).real


@case(lambda r: (normal(r, 6) + 1j * normal(r, 6), 0.5), lambda r: (np.array([2 + 0j]), 1.0))
def complex_rotation(z, theta):
    w = z * np.exp(1j * theta)
    return w, np.abs(w) - np.abs(z), np.unwrap(np.angle(w)) - np.unwrap(np.angle(z)), w.dtype


@case(lambda r: (normal(r, 8, dtype="float32"),), lambda r: (normal(r, 1, dtype="float32"),))
def complex64_pipeline(x):
    z = x.astype(np.complex64) * np.complex64(1j)
    return z, (z * z).dtype, np.abs(z).dtype, z.conj().sum()


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def polar_roundtrip(re, im):
    z = re + 1j * im
    r, th = np.abs(z), np.arctan2(im, re)
    back = r * np.cos(th) + 1j * r * np.sin(th)
    return np.allclose(back, z), np.sqrt(z), np.roots([1, 0, 1]) if len(re) > 1 else z


@case(lambda r: (normal(r, 8), normal(r, 5)), lambda r: (normal(r, 2), normal(r, 2)))
def fft_convolution(a, b):
    n = len(a) + len(b) - 1
    c = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)
    return c, np.allclose(c, np.convolve(a, b))


# ---- in-place and out= ----------------------------------------------------------------------

@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 2, 2),))
def inplace_on_views(A):
    B = A.copy()
    B[:, ::2] *= 2
    B[1:] -= B[:-1]
    B.T[0] += 100
    v = B[::-1]
    v[0] /= 2
    return B


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def ufunc_out_arguments(x):
    out = np.empty_like(x)
    np.multiply(x, 2, out=out)
    np.add(out, 1, out=out)
    y = np.zeros(len(x) * 2)
    np.exp(x, out=y[::2])
    s = np.empty(())
    np.sum(x, out=s)
    return out, y, s


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 5),))
def out_reductions(A):
    m = np.empty(A.shape[1])
    A.mean(axis=0, out=m)
    c = np.zeros(A.shape)
    np.cumsum(A, axis=0, out=c)
    return m, c, np.clip(A, -1, 1, out=A.copy())


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def inplace_argument_mutation(x):
    x[x < 0] = 0
    x += 1
    np.sqrt(x, out=x)
    return x.sum()


@case(lambda r: (ints(r, 0, 100, 8, dtype="int32"),), lambda r: (np.array([7], np.int32),))
def integer_inplace_ops(a):
    b = a.copy()
    b //= 3
    b <<= 1
    b |= 1
    c = a.copy()
    c %= 7
    c **= 2
    return b, c, b.dtype


# ---- errstate -------------------------------------------------------------------------------

@case(lambda r: (normal(r, 6), np.array([1.0, 0, -1, 0, 2, 3])),
      lambda r: (np.zeros(1), np.zeros(1)))
def errstate_divide(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        q = a / b
        l = np.log(np.abs(b))
    return np.where(np.isfinite(q), q, 0.0), l


@case(lambda r: (normal(r, 5),), lambda r: (np.array([-1.0]),))
def errstate_all_ignore(x):
    with np.errstate(all="ignore"):
        s = np.sqrt(x)
        r = 1.0 / (x - x)
    return np.nan_to_num(s), np.isnan(r).sum(), np.isinf(r).sum()


@case(lambda r: (normal(r, 5),), lambda r: (np.array([0.0]),))
def warns_outside_errstate(x):
    y = np.log(x ** 2)
    return y, np.isneginf(y).any()


# ---- shape generators -----------------------------------------------------------------------

@case(lambda r: (3, 4), lambda r: (1, 1), lambda r: (0, 2))
def indices_grids(m, n):
    I, J = np.indices((m, n))
    Y, X = np.mgrid[0:m, 0:n]
    oy, ox = np.ogrid[0:m, 0:n]
    return I + 10 * J, np.array_equal(Y, I), (oy * ox).shape, np.mgrid[0:1:5j]


@case(lambda r: (4,), lambda r: (1,), lambda r: (0,))
def tri_generators(n):
    return (np.tri(n), np.tri(n, n + 1, k=-1, dtype=int), np.eye(n, k=1), np.eye(n, n + 2, k=-1),
            np.triu(np.ones((n, n)), 1), np.tril(np.arange(n * n).reshape(n, n), -1),
            np.identity(n))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def triangular_masks(A):
    lower = np.tril(A)
    upper = np.triu(A, k=1)
    m = np.tri(*A.shape, dtype=bool)
    return lower + upper.T, A[m], np.allclose(lower + upper, A), np.tril(A.T, -1).sum()


@case(lambda r: (5,), lambda r: (1,))
def distance_matrix_grid(n):
    i, j = np.ogrid[:n, :n]
    D = np.abs(i - j)
    T = np.fromfunction(lambda a, b: a * 10 + b, (n, n))
    return D, T, np.hypot(*np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))


@case(lambda r: (4, 3.0), lambda r: (1, 0.5))
def vandermonde_hilbert(n, x0):
    x = np.linspace(x0, x0 + 1, n)
    i, j = np.indices((n, n))
    H = 1.0 / (i + j + 1)
    return np.vander(x), np.vander(x, 3, increasing=True), H, np.diag(np.arange(n), k=-1)


# ---- dtype= of reductions -------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 200, 10, dtype="uint8"),), lambda r: (np.zeros(0, np.uint8),))
def reduce_dtypes(x):
    return (x.sum(), x.sum(dtype=np.uint8), np.sum(x, dtype=np.float32),
            np.prod(x[:3], dtype=np.int64), np.cumsum(x, dtype=np.int16),
            x.mean(dtype=np.float32), np.add.reduce(x, dtype=np.uint16))


@case(lambda r: (normal(r, 6, dtype="float32"),), lambda r: (normal(r, 1, dtype="float32"),))
def float32_accumulation(x):
    return (x.sum(dtype=np.float64), x.mean(), x.std(dtype=np.float64), x.var(),
            np.cumprod(x, dtype=np.float64), np.linalg.norm(x).dtype)


@case(lambda r: (ints(r, -5, 5, 3, 4, dtype="int8"),), lambda r: (np.zeros((0, 4), np.int8),))
def int8_reductions(A):
    return (A.sum(axis=0), A.sum(axis=1, dtype=np.int8), A.max(axis=0) if len(A) else A.sum(0),
            np.mean(A, axis=1), A.cumsum(axis=1).dtype)


# ---- Python lists, tuples and scalars as inputs ---------------------------------------------

@case(lambda r: ([1.0, 2.0, 3.0], (4, 5, 6)), lambda r: ([0.5], (1,)))
def list_tuple_arguments(a, b):
    x = np.asarray(a)
    y = np.array(b, dtype=float)
    return x + y, np.dot(a, b), np.mean(a), np.concatenate([a, b]), np.sum(b)


@case(lambda r: (3.0, 4), lambda r: (0.0, 0))
def scalar_arguments(x, n):
    a = np.full(n, x)
    return a, np.sqrt(x), np.arange(n) * x, np.float32(x) * 2, np.exp(x) + n


@case(lambda r: ([[1, 2], [3, 4]], 2), lambda r: ([[0]], 1))
def nested_list_matrix(M, k):
    A = np.array(M)
    return A @ A, np.linalg.matrix_power(A, k), A.T.tolist() if A.size < 10 else None, A.dtype


@case(lambda r: (normal(r, 5), [0, 2, 4]), lambda r: (normal(r, 3), [1]))
def list_of_indices(x, idx):
    y = x.copy()
    y[idx] = 0
    return x[idx], y, x[idx[::-1]], np.delete(x, idx)


@case(lambda r: (np.float64(2.5),), lambda r: (np.array(3.0),))
def zero_d_inputs(s):
    a = np.atleast_1d(s)
    return a, s * np.ones(3), np.asarray(s).ndim, np.sqrt(s), np.array(s) + 1


@case(lambda r: (np.zeros((0, 3)),), lambda r: (np.zeros((2, 0)),), lambda r: (normal(r, 2, 3),))
def empty_inputs(A):
    return (A.sum(axis=0), A.sum(axis=1), A.max(axis=0, initial=-1.0), A.T @ A, A.reshape(-1),
            np.concatenate([A, A]), A.mean(axis=0) if A.shape[0] else np.full(A.shape[1], np.nan))


@case(lambda r: (normal(r, 4), True), lambda r: (normal(r, 4), False))
def flag_argument_branch(x, normalize):
    y = x - x.mean()
    if normalize:
        y = y / np.abs(y).max()
    return y


@case(lambda r: (normal(r, 6), None), lambda r: (normal(r, 6), 3))
def optional_argument(x, k):
    if k is None:
        k = len(x) // 2
    return np.sort(x)[-k:], np.partition(x, -k)[-k:].sum()


@case(lambda r: (normal(r, 3, 4), 1), lambda r: (normal(r, 3, 4), -1),
      lambda r: (normal(r, 3, 4), None))
def axis_argument(A, axis):
    return (A.sum(axis=axis), np.max(A, axis=axis, keepdims=True), np.argmax(A, axis=axis),
            np.cumsum(A, axis=axis))


# ---- numerical methods ----------------------------------------------------------------------

@case(lambda r: (np.linspace(0, np.pi, 21),), lambda r: (np.array([0.0, 1.0]),))
def trapezoid_simpson(x):
    y = np.sin(x)
    h = np.diff(x)
    trap = np.sum(h * (y[1:] + y[:-1]) / 2)
    return trap, np.trapezoid(y, x), np.cumsum(h * (y[1:] + y[:-1]) / 2)


@case(lambda r: (2.0,), lambda r: (9.0,))
def newton_sqrt(a):
    x = a
    for _ in range(20):
        x = 0.5 * (x + a / x)
    return x, np.sqrt(a)


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def polynomial_ops(c):
    p = np.poly1d(c)
    x = np.linspace(-1, 1, 5)
    return p(x), np.polyval(c, x), np.polyder(c), np.polyint(c), np.polymul(c, [1, -1])


@case(lambda r: (np.linspace(0, 1, 11), 3), lambda r: (np.linspace(0, 1, 4), 1))
def polyfit_residuals(x, deg):
    y = np.exp(x)
    c = np.polyfit(x, y, deg)
    return c, np.max(np.abs(np.polyval(c, x) - y))


@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 3),))
def finite_differences(f):
    d1 = np.gradient(f, 0.1)
    d2 = np.zeros_like(f)
    d2[1:-1] = (f[2:] - 2 * f[1:-1] + f[:-2]) / 0.01
    return d1, d2, np.ediff1d(f, to_begin=0)


@case(lambda r: (10, 0.1), lambda r: (1, 0.5))
def heat_equation_steps(n, dt):
    u = np.zeros(n + 2)
    u[(n + 2) // 2] = 1.0
    for _ in range(20):
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u, u.sum()


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def interp_extrapolate(x, y):
    o = np.argsort(x)
    xs, ys = x[o], y[o]
    q = np.linspace(-2, 2, 7)
    return (np.interp(q, xs, ys), np.interp(q, xs, ys, left=np.nan, right=0.0),
            np.interp(1.0, xs, ys))


@case(lambda r: (normal(r, 8, 8),), lambda r: (normal(r, 2, 2),))
def conway_life_step(A):
    b = (A > 0).astype(np.uint8)
    n = sum(np.roll(np.roll(b, i, 0), j, 1)
            for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    return ((n == 3) | ((b == 1) & (n == 2))).astype(np.uint8), n.dtype


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 1),))
def clip_round_floor(x):
    return (np.clip(x, -0.5, 0.5), np.round(x, 2), np.floor(x), np.ceil(x), np.trunc(x),
            np.rint(x * 2), np.fix(x), np.around(x, -1), np.sign(x).astype(int),
            np.copysign(1.0, x), np.modf(x))


@case(lambda r: (ints(r, -20, 20, 10),), lambda r: (np.array([0]),))
def integer_math(a):
    return (np.gcd(a, 12), np.lcm(a, 4), np.divmod(a, 3), np.abs(a) % 5, np.floor_divide(a, -4),
            np.power(a, 2), np.left_shift(np.abs(a), 1), np.bitwise_and(a, 7), np.negative(a))


@case(lambda r: (normal(r, 10),), lambda r: (np.array([np.nan, 1.0]),))
def nan_aware_stats(x):
    y = x.copy()
    y[::3] = np.nan
    return (np.nanmean(y), np.nanmax(y), np.nanargmin(y), np.nansum(y), np.nanstd(y),
            np.nanpercentile(y, 50), np.isnan(y).sum(), np.nancumsum(y))


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 2)), lambda r: (normal(r, 1, 1), normal(r, 1, 1)))
def einsum_variety(A, B):
    return (np.einsum("ij,jk->ik", A, B), np.einsum("ij->", A), np.einsum("ij->j", A),
            np.einsum("ij,ij->", A, A), np.einsum("i,j->ij", A[0], B[:, 0]), np.einsum("ji", A),
            np.tensordot(A, B, axes=1), np.inner(A, A), np.outer(A[0], A[-1]),
            np.kron(A[:1], B[:1]))


@case(lambda r: (normal(r, 4, 3), normal(r, 4, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def stacking_functions(a, b):
    return (np.vstack([a, b]), np.hstack([a, b]), np.dstack([a, b]).shape,
            np.stack([a, b], axis=-1), np.column_stack([a[:, 0], b[:, 0]]),
            np.block([[a, b], [b, a]]), np.concatenate([a, b], axis=None))


@case(lambda r: (normal(r, 2, 3, 4),), lambda r: (normal(r, 1, 1, 1),))
def axis_shuffles(T):
    return (np.moveaxis(T, 0, -1), np.swapaxes(T, 0, 2), T.transpose(1, 2, 0), np.rollaxis(T, 2),
            np.squeeze(T[:, :1]), T[None, ..., None].shape, np.expand_dims(T, -1).shape,
            T.reshape(T.shape[0], -1))


# ---- aliasing, overlaps and run-time offsets ------------------------------------------------

@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def overlapping_inplace_add(x):
    y = x.copy()
    y[1:] += y[:-1]
    z = x.copy()
    z[:-1] += z[1:]
    w = x.copy()
    w[::-1] += w
    return y, z, w


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 2, 2),))
def transpose_inplace_overlap(A):
    B = A.copy()
    B += B.T
    C = A.copy()
    C[:] = C[::-1, ::-1]
    D = A.copy()
    D[1:, 1:] = D[:-1, :-1]
    return B, C, D


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 3), 0), lambda r: (normal(r, 4), -2))
def runtime_roll_shift(x, k):
    return np.roll(x, k), np.roll(x, k + 1) - x, np.roll(np.roll(x, k), -k)


@case(lambda r: (normal(r, 10), 2, 5), lambda r: (normal(r, 6), 0, 6))
def runtime_slice_bounds(x, lo, hi):
    y = x.copy()
    y[lo:hi] = 0
    v = x[lo:hi]
    return y, v, x[lo:hi:2].sum(), x[hi - 1], x[-hi:]


@case(lambda r: (normal(r, 6, 4), 1), lambda r: (normal(r, 3, 3), 2))
def runtime_row_write(A, i):
    B = A.copy()
    B[i] = B[i] * 2
    B[:, i] += 1
    B[i, :] -= B[i - 1, :]
    return B, B[i]


@case(lambda r: (ints(r, 0, 5, 12), normal(r, 12)), lambda r: (np.array([0, 0, 0]), np.ones(3)))
def add_at_vs_fancy_assign(idx, v):
    a = np.zeros(5)
    np.add.at(a, idx, v)
    b = np.zeros(5)
    b[idx] += v  # the last write wins, as NumPy
    c = np.zeros(5)
    np.maximum.at(c, idx, v)
    return a, b, c


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 1),))
def chained_view_writes(A):
    B = A.copy()
    v = B[1:, ::2]
    w = v.T
    w[0] = -1
    u = B.reshape(-1)
    u[::3] = 9
    return B, v, w.shape


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def returned_views_of_argument(x):
    return x[::2], x[1:], x.reshape(-1, 1), x[None], x.T, x[...]


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def out_aliasing_input(A):
    B = A.copy()
    np.add(B, B[::-1], out=B)
    C = A.copy()
    np.matmul(C, np.eye(C.shape[1]), out=C)
    D = A.copy()
    np.cumsum(D, axis=1, out=D)
    return B, C, D


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def swap_via_fancy(x):
    y = x.copy()
    y[[0, 1]] = y[[1, 0]]
    z = x.copy()
    z[0], z[-1] = z[-1], z[0]
    w = x.copy()
    w[0], w[-1] = w[-1].copy(), w[0].copy()
    return y, z, w


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def row_swap_pivot(A):
    B = A.copy()
    for k in range(len(B)):
        p = k + np.argmax(np.abs(B[k:, k]))
        B[[k, p]] = B[[p, k]]
    return B


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def lu_no_pivot(A):
    n = len(A)
    U = A.copy() + n * np.eye(n)
    L = np.eye(n)
    for k in range(n - 1):
        L[k + 1:, k] = U[k + 1:, k] / U[k, k]
        U[k + 1:] -= L[k + 1:, k:k + 1] * U[k]
    return L, U, np.allclose(L @ U, A + n * np.eye(n))


@case(lambda r: (normal(r, 7), 2), lambda r: (normal(r, 3), 3))
def runtime_window_sum(x, w):
    c = np.concatenate(([0.0], np.cumsum(x)))
    return c[w:] - c[:-w], x[w - 1:].copy(), np.convolve(x, np.ones(w), "valid")


@case(lambda r: (normal(r, 6, 3), np.array([2, 0, 5])), lambda r: (normal(r, 2, 2), np.array([1])))
def put_and_place(A, idx):
    B = A.copy()
    np.put(B, idx, -1.0)
    C = A.copy()
    np.place(C, C > 0, [7.0, 8.0])
    D = A.copy()
    np.copyto(D, 0.0, where=D < 0)
    return B, C, D


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 4),))
def masked_assign_broadcast(A):
    B = A.copy()
    B[B[:, 0] > 0] = np.arange(A.shape[1])
    C = A.copy()
    C[:, A[0] > 0] *= -1
    D = A.copy()
    D[(A > 0) & (A < 1)] = np.nan
    return B, C, np.isnan(D).sum()


@case(lambda r: (ints(r, -3, 3, 10, dtype="int32"), 2), lambda r: (np.array([5], np.int32), 0))
def int_argument_promotion(a, k):
    return a + k, a * 2.5, a // (k + 1), (a << k).dtype, a ** 2, np.abs(a - k).max()


@case(lambda r: (ints(r, 0, 255, 6, dtype="uint8"), 3), lambda r: (np.array([250], np.uint8), 10))
def uint8_with_int_argument(a, k):
    return a + k, a - k, a * k, np.clip(a.astype(int) + k, 0, 255).astype(np.uint8), (a + k).dtype


@pytest.mark.parametrize("name", sorted(CASES13))
def test_wild13_function_matches_numpy(name: str) -> None:
    run_case(name, CASES13, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES13, warm=True, views=True, warns=True)
