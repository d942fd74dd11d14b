"""A seventh wave of the wild corpus (issue 16; ordinary NumPy programs a user brings), in styles
the first six waves leave out: data-science preprocessing (standardizing, one-hot by comparison,
outlier clipping, rolling windows by cumsum, group-bys by bincount/argsort, imputation, robust
scaling, binning, ranks), image processing (3x3 convolution by slicing, gamma, histogram
equalization, rgb->gray with uint8 in and out, unsharp masks), finance (returns, drawdowns by
maximum.accumulate, EWMA by weights, Bollinger bands, VWAP), physics (pairwise n-body forces by
broadcasting, explicit heat and wave steps, gradients, divergence and curl), geometry (pairwise
distances two ways, triangle normals by np.cross, shoelace areas, rotations), signals
(np.convolve, FIR by slices, IIR by a loop, np.diff and np.gradient with coordinates, zero
crossings, int16 audio), text statistics over integer token arrays (frequencies, bigrams, tf-
idf), mask assignment `x[x > t] = v`, np.where chains, in-place operators on views of arguments,
fancy indices with negative values, methods (`.astype`, `.clip`, `.round`, `.cumsum(axis)`),
keyword arguments, dtype promotion with Python scalars, 0-d and empty arrays,
int8/uint8/int16/int64/float16/bool/complex inputs, and the exceptions NumPy raises.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True` (Stax's
RuntimeWarnings are NumPy's: a warning NumPy does not give is a failure).
`cd tests && python -m corpus.test_corpus_wild7 [names]` prints each function's class.

Counts (146 functions; two more, compiled in both runs, were dropped as copies of wild's): on
main before this wave's fixes (58dd699) 134 compiled, 11 break, 1 FAIL (order_keywords:
np.ascontiguousarray(x.T) came back as a view of the caller's array, and every order= was
ignored); after them 137 compiled, 9 break, 0 FAIL (np.ix_ and np.diag_indices_from compile).
Still breaks: Python control flow and conversions on traced values (`max(n, 1)`, `while x.sum()
< t`, float()/int()/.item()/.tolist(), a slice bound computed from data), np.gcd/np.lcm,
np.apply_along_axis/np.vectorize, np.bincount whose length depends on the data, np.unique of
under 2 elements in set routines. While probing, a first input that promoted float32 statistics
to float64 through np.sqrt(252) differed from NumPy by one float32 ulp (rounding, not a bug):
that input uses a Python float now.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import img, main, normal, prices, run_case, wild
from corpus.test_corpus_wild5 import ints

CASES7: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES7)


def with_nans(r: np.random.Generator, *shape: int) -> np.ndarray:
    x = r.standard_normal(shape)
    x[r.random(shape) < 0.2] = np.nan
    return x


def fortran_(a: np.ndarray) -> np.ndarray:
    return np.asfortranarray(a)


def rgb(r: np.random.Generator, h: int, w: int) -> np.ndarray:
    return r.integers(0, 256, (h, w, 3), dtype=np.uint8)


# ---- data-science preprocessing -------------------------------------------------------------

@case(lambda r: (normal(r, 20, 4),), lambda r: (normal(r, 5, 3, dtype="float32").T,),
      lambda r: (np.ones((4, 2)),), lambda r: (normal(r, 1, 3),))
def standardize_columns(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    return (X - mu) / sd


@case(lambda r: (normal(r, 12, 3),), lambda r: (normal(r, 12, 3), -1.0, 1.0),
      lambda r: (ints(r, 0, 50, 6, 2, dtype="int32"), 0, 10))
def min_max_scale(X, lo=0.0, hi=1.0):
    mn, mx = X.min(axis=0, keepdims=True), X.max(axis=0, keepdims=True)
    span = np.maximum(mx - mn, 1e-12)
    return lo + (X - mn) * (hi - lo) / span


@case(lambda r: (ints(r, 0, 5, 17), 5), lambda r: (ints(r, 0, 3, 4, dtype="int8"), 4),
      lambda r: (ints(r, 0, 3, 0), 3))
def one_hot_by_comparison(labels, k):
    return (labels[:, None] == np.arange(k)).astype(np.float32)


@case(lambda r: (normal(r, 50),), lambda r: (normal(r, 9, dtype="float32") * 10,),
      lambda r: (np.array([1.0, 2.0, 3.0, 100.0, -50.0]),))
def clip_outliers_iqr(x):
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return np.clip(x, q1 - 1.5 * iqr, q3 + 1.5 * iqr)


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 40), 1.0),
      lambda r: (normal(r, 7, 3, dtype="float32"), 2.0))
def winsorize_sigma(x, k=3.0):
    mu, sd = x.mean(), x.std()
    return x.clip(mu - k * sd, mu + k * sd)


@case(lambda r: (normal(r, 30), 5), lambda r: (normal(r, 4, dtype="float32"), 4),
      lambda r: (prices(r, 12), 1))
def rolling_mean_cumsum(x, w):
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[w:] - c[:-w]) / w


@case(lambda r: (normal(r, 30), 6), lambda r: (prices(r, 10), 3))
def rolling_std_cumsum(x, w):
    c1 = np.concatenate(([0.0], np.cumsum(x)))
    c2 = np.concatenate(([0.0], np.cumsum(x * x)))
    s1, s2 = c1[w:] - c1[:-w], c2[w:] - c2[:-w]
    var = s2 / w - (s1 / w) ** 2
    return np.sqrt(np.maximum(var, 0.0))


@case(lambda r: (ints(r, 0, 4, 25), normal(r, 25), 4),
      lambda r: (ints(r, 0, 6, 8, dtype="int32"), normal(r, 8, dtype="float32"), 7),
      lambda r: (ints(r, 0, 3, 0), normal(r, 0), 3))
def groupby_mean_bincount(keys, vals, k):
    sums = np.bincount(keys, weights=vals, minlength=k)
    counts = np.bincount(keys, minlength=k)
    return sums / np.maximum(counts, 1), counts


@case(lambda r: (ints(r, 0, 5, 20), normal(r, 20)),
      lambda r: (np.array([3, 1, 3, 1, 2]), np.array([5.0, 1.0, 2.0, 7.0, 0.5])))
def groupby_max_argsort(keys, vals):
    order = np.argsort(keys, kind="stable")
    k, v = keys[order], vals[order]
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    return k[starts], np.maximum.reduceat(v, starts)


@case(lambda r: (with_nans(r, 10, 3),), lambda r: (with_nans(r, 4, 5).T,))
def impute_column_mean(X):
    m = np.nanmean(X, axis=0)
    return np.where(np.isnan(X), m, X)


@case(lambda r: (normal(r, 15, 3),), lambda r: (normal(r, 6, 2, dtype="float32"),))
def robust_scale_median(X):
    med = np.median(X, axis=0)
    mad = np.median(np.abs(X - med), axis=0)
    return (X - med) / (1.4826 * mad + 1e-9)


@case(lambda r: (ints(r, 0, 1000, 9, 4),), lambda r: (ints(r, 0, 100, 5, dtype="uint16"),))
def log1p_counts(counts):
    return np.log1p(counts).astype(np.float32), np.sqrt(counts)


@case(lambda r: (r.uniform(0, 90, 25),), lambda r: (ints(r, 0, 90, 7),),
      lambda r: (np.array([18.0, 30.0, 64.9, 65.0, 0.0]),))
def bin_ages(ages):
    return np.digitize(ages, [18, 30, 45, 65]), np.searchsorted([18, 30, 45, 65], ages, \
        side="right")


@case(lambda r: (normal(r, 11),), lambda r: (ints(r, 0, 4, 9, dtype="int16"),))
def rank_transform(x):
    ranks = x.argsort(kind="stable").argsort(kind="stable")
    return ranks / (len(x) - 1)


@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 3, 4, dtype="float32").T,))
def zscore_rows_inplace(X):
    X -= X.mean(axis=1, keepdims=True)
    X /= X.std(axis=1, keepdims=True)


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 1, 2, dtype="float32"),))
def polynomial_features(X):
    return np.hstack([np.ones((X.shape[0], 1), X.dtype), X, X ** 2, X[:, :1] * X[:, 1:]])


@case(lambda r: (normal(r, 10, 3), ints(r, 0, 2, 10).astype(bool)),
      lambda r: (normal(r, 4, 2, dtype="float32"), np.zeros(4, bool)))
def class_conditional_means(X, y):
    pos = y[:, None]
    n1 = y.sum()
    m1 = np.where(pos, X, 0).sum(0) / max(n1, 1)
    m0 = np.where(~pos, X, 0).sum(0) / max(len(y) - n1, 1)
    return m1 - m0


# ---- image processing -----------------------------------------------------------------------

@case(lambda r: (normal(r, 9, 8, dtype="float32"), normal(r, 3, 3, dtype="float32")),
      lambda r: (img(r, 6, 7).astype(np.float64), np.full((3, 3), 1 / 9)))
def conv3x3_by_slicing(im, k):
    h, w = im.shape
    out = np.zeros((h - 2, w - 2), dtype=np.result_type(im, k))
    for i in range(3):
        for j in range(3):
            out += k[i, j] * im[i:h - 2 + i, j:w - 2 + j]
    return out


@case(lambda r: (img(r, 8, 9), 2.2), lambda r: (img(r, 5, 4).T, 0.5), lambda r: (img(r, 0, 3), 1.0))
def gamma_uint8(im, g):
    return ((im / 255.0) ** g * 255).round().astype(np.uint8)


@case(lambda r: (img(r, 12, 10),), lambda r: (np.full((3, 3), 7, np.uint8),))
def histogram_equalize(im):
    hist = np.bincount(im.ravel(), minlength=256)
    cdf = hist.cumsum()
    lo = cdf[cdf > 0].min()
    span = np.maximum(cdf[-1] - lo, 1)
    lut = np.clip(np.round((cdf - lo) * 255.0 / span), 0, 255).astype(np.uint8)
    return lut[im]


@case(lambda r: (rgb(r, 6, 5),), lambda r: (rgb(r, 1, 1),), lambda r: (rgb(r, 0, 4),))
def rgb_to_gray_weights(im):
    g = 0.299 * im[..., 0] + 0.587 * im[..., 1] + 0.114 * im[..., 2]
    return np.clip(g.round(), 0, 255).astype(np.uint8)


@case(lambda r: (rgb(r, 7, 4),), lambda r: (np.ascontiguousarray(rgb(r, 4, 3)[:, ::-1]),))
def rgb_to_gray_matmul(im):
    return (im @ np.array([0.2126, 0.7152, 0.0722])).astype(np.uint8)


@case(lambda r: (img(r, 7, 6), 200), lambda r: (img(r, 3, 3), 0))
def invert_and_saturate(im, t):
    out = 255 - im
    out[out > t] = 255
    return out


@case(lambda r: (img(r, 8, 8),), lambda r: (img(r, 4, 6)[:, ::2],))
def box2x2_uint16(im):
    acc = (im[:-1, :-1].astype(np.uint16) + im[1:, :-1] + im[:-1, 1:] + im[1:, 1:])
    return ((acc + 2) // 4).astype(np.uint8)


@case(lambda r: (img(r, 9, 9), 1.5), lambda r: (img(r, 4, 5), 0.0))
def unsharp_mask(im, amount):
    f = im.astype(np.float32)
    blur = f.copy()
    blur[1:-1, 1:-1] = (f[:-2, :-2] + f[:-2, 1:-1] + f[:-2, 2:] + f[1:-1, :-2] + f[1:-1, 1:-1]
                        + f[1:-1, 2:] + f[2:, :-2] + f[2:, 1:-1] + f[2:, 2:]) / 9
    return np.clip(f + amount * (f - blur), 0, 255).astype(np.uint8)


@case(lambda r: (normal(r, 6, 7),), lambda r: (img(r, 5, 5),))
def laplacian_roll(im):
    f = im.astype(np.float64)
    return (np.roll(f, 1, 0) + np.roll(f, -1, 0) + np.roll(f, 1, 1) + np.roll(f, -1, 1) - 4 * f)


@case(lambda r: (r.random((8, 10, 3)).astype(np.float32), 0.5),
      lambda r: (r.random((3, 3, 3)), 1.0))
def vignette(im, strength):
    h, w = im.shape[:2]
    yy, xx = np.indices((h, w))
    d = np.hypot((yy - (h - 1) / 2) / h, (xx - (w - 1) / 2) / w)
    mask = 1 - strength * d / d.max()
    return im * mask[..., None]


@case(lambda r: (rgb(r, 5, 7),), lambda r: (img(r, 4, 3),))
def crop_flip_rotate(im):
    c = im[1:-1, ::-1]
    return np.rot90(c), np.fliplr(c).copy(), np.flipud(im)[::2]


@case(lambda r: (rgb(r, 6, 5),), lambda r: (rgb(r, 2, 1),))
def channel_stats(im):
    return im.mean(axis=(0, 1)), im.std(axis=(0, 1)), im.max(axis=(0, 1)), im.min(axis=(0, 1))


@case(lambda r: (r.random((4, 5)).astype(np.float16), r.random((4, 5)).astype(np.float16),
                 r.random((4, 5)).astype(np.float16)),)
def alpha_composite_float16(fg, bg, a):
    out = a * fg + (1 - a) * bg
    return out, out.astype(np.float32).sum()


# ---- finance --------------------------------------------------------------------------------

@case(lambda r: (prices(r, 20),), lambda r: (prices(r, 2).astype(np.float32),))
def returns_simple_and_log(p):
    return p[1:] / p[:-1] - 1, np.diff(np.log(p))


@case(lambda r: (prices(r, 40),), lambda r: (np.array([1.0, 2.0, 1.0, 3.0, 0.5]),))
def max_drawdown(p):
    peak = np.maximum.accumulate(p)
    dd = p / peak - 1
    end = np.argmin(dd)
    start = np.argmax(p[:end + 1])
    return dd.min(), start, end


@case(lambda r: (normal(r, 15), 4), lambda r: (prices(r, 6), 2))
def ewma_weights(x, span):
    alpha = 2 / (span + 1)
    n = len(x)
    w = (1 - alpha) ** np.arange(n)
    num = np.array([np.dot(w[:i + 1][::-1], x[:i + 1]) for i in range(n)])
    den = np.cumsum(w)
    return num / den


@case(lambda r: (0.01 * normal(r, 60),), lambda r: (0.01 * normal(r, 9, dtype="float32"),))
def sharpe_sortino(r):
    ann = 252 ** 0.5  # a Python float: float32 stays float32
    sharpe = r.mean() / r.std(ddof=1) * ann
    downside = np.sqrt(np.mean(np.minimum(r, 0) ** 2))
    return sharpe, r.mean() / downside * ann


@case(lambda r: (np.array([0.5, 0.3, 0.2]), np.stack([prices(r, 10) for _ in range(3)], 1)),
      lambda r: (np.array([1.0]), prices(r, 4)[:, None]))
def portfolio_value(weights, P):
    rets = P[1:] / P[:-1] - 1
    return np.concatenate(([1.0], np.cumprod(1 + rets @ weights)))


@case(lambda r: (prices(r, 30), 5, 2.0), lambda r: (prices(r, 8), 3, 1.0))
def bollinger_positions(p, w, k):
    c1 = np.cumsum(np.concatenate(([0.0], p)))
    c2 = np.cumsum(np.concatenate(([0.0], p * p)))
    m = (c1[w:] - c1[:-w]) / w
    sd = np.sqrt(np.maximum((c2[w:] - c2[:-w]) / w - m * m, 0))
    q = p[w - 1:]
    return np.where(q > m + k * sd, -1, np.where(q < m - k * sd, 1, 0))


@case(lambda r: (prices(r, 20), ints(r, 1, 1000, 20)),
      lambda r: (prices(r, 5).astype(np.float32), ints(r, 1, 9, 5, dtype="int32")))
def vwap(price, volume):
    return np.cumsum(price * volume) / np.cumsum(volume)


@case(lambda r: (1000.0, 0.05, np.arange(6)), lambda r: (np.float32(10), 0.1, ints(r, 0, 30, 4)))
def compound_interest(principal, rate, years):
    return principal * (1 + rate) ** years, principal * np.exp(rate * years)


# ---- physics --------------------------------------------------------------------------------

@case(lambda r: (normal(r, 7, 3), r.random(7) + 0.5),
      lambda r: (normal(r, 2, 2, dtype="float32"), np.ones(2, np.float32)))
def nbody_accelerations(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d ** 2).sum(-1) + 1e-3
    inv = r2 ** -1.5
    np.fill_diagonal(inv, 0.0)
    return (d * (mass[None, :, None] * inv[..., None])).sum(axis=1)


@case(lambda r: (normal(r, 6, 3), r.random(6) + 0.1), lambda r: (normal(r, 1, 3), np.ones(1)))
def nbody_potential(pos, mass):
    i, j = np.triu_indices(len(mass), k=1)
    r = np.linalg.norm(pos[i] - pos[j], axis=1)
    return -(mass[i] * mass[j] / r).sum()


@case(lambda r: (normal(r, 5, 2), normal(r, 5, 2), 0.01, 4))
def leapfrog_harmonic(x, v, dt, steps):
    x, v = x.copy(), v.copy()
    for _ in range(steps):
        v -= 0.5 * dt * x
        x += dt * v
        v -= 0.5 * dt * x
    return x, v, 0.5 * (x * x + v * v).sum()


@case(lambda r: (r.random(20), 0.25, 5), lambda r: (r.random(3).astype(np.float32), 0.1, 2))
def heat_1d_explicit(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (normal(r, 8, 9), normal(r, 8, 9), 0.2),
      lambda r: (normal(r, 3, 3, dtype="float32"), normal(r, 3, 3, dtype="float32"), 0.5))
def wave_2d_step(u, u_prev, c2):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    return 2 * u - u_prev + c2 * lap, u


@case(lambda r: (normal(r, 6, 5), 0.5), lambda r: (normal(r, 3, 4, dtype="float32").T, 2.0))
def gradient_2d_spacing(field, dx):
    gy, gx = np.gradient(field, dx)
    return gy, gx, np.hypot(gx, gy)


@case(lambda r: (normal(r, 7, 6), normal(r, 7, 6)),)
def divergence_and_curl(fx, fy):
    dfx_dx = np.gradient(fx, axis=1)
    dfy_dy = np.gradient(fy, axis=0)
    dfy_dx = np.gradient(fy, axis=1)
    dfx_dy = np.gradient(fx, axis=0)
    return dfx_dx + dfy_dy, dfy_dx - dfx_dy


@case(lambda r: (normal(r, 10, 3), r.random(10) + 1), lambda r: (normal(r, 0, 3), np.ones(0)))
def kinetic_energy_temperature(v, m):
    ke = 0.5 * (m[:, None] * v ** 2).sum()
    return ke, 2 * ke / (3 * max(len(m), 1))


@case(lambda r: (np.cumsum(r.random(8)), 3.0, 0.5), lambda r: (np.array([0.0, 1.0]), 1.0, 1.0))
def spring_chain_forces(x, k, rest):
    ext = np.diff(x) - rest
    f = np.zeros_like(x)
    f[:-1] += k * ext
    f[1:] -= k * ext
    return f


# ---- geometry -------------------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 3), normal(r, 4, 3)),
      lambda r: (normal(r, 3, 2, dtype="float32"), normal(r, 0, 2, dtype="float32")))
def pairwise_dist_broadcast(A, B):
    return np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@case(lambda r: (normal(r, 6, 3), normal(r, 5, 3)), lambda r: (normal(r, 4, 4).T, normal(r, 2, 4)))
def pairwise_dist_gram(A, B):
    aa = (A * A).sum(1)[:, None]
    bb = np.einsum("ij,ij->i", B, B)[None, :]
    return np.sqrt(np.maximum(aa + bb - 2 * A @ B.T, 0.0))


@case(lambda r: (normal(r, 6, 3), np.array([[0, 1, 2], [2, 3, 4], [-1, 0, 3]])),
      lambda r: (normal(r, 3, 3, dtype="float32"), np.array([[0, 1, 2]], dtype=np.int32)))
def triangle_normals(v, f):
    e1 = v[f[:, 1]] - v[f[:, 0]]
    e2 = v[f[:, 2]] - v[f[:, 0]]
    n = np.cross(e1, e2)
    area = np.linalg.norm(n, axis=1)
    return n / area[:, None], 0.5 * area


@case(lambda r: (np.cos(np.linspace(0, 2 * np.pi, 9)[:-1]),
                 np.sin(np.linspace(0, 2 * np.pi, 9)[:-1])),
      lambda r: (np.array([0, 4, 4, 0]), np.array([0, 0, 3, 3])))
def shoelace_area(x, y):
    return 0.5 * np.abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))


@case(lambda r: (normal(r, 5, 2), 0.3), lambda r: (normal(r, 3, 2, dtype="float32"), np.pi / 2))
def rotate_points(pts, theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    return pts @ R.T


@case(lambda r: (normal(r, 9, 3),), lambda r: (ints(r, -5, 5, 4, 2, dtype="int8"),))
def bounding_box(pts):
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return lo, hi, np.prod(hi - lo), pts.mean(0)


@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)),
      lambda r: (np.array([[1.0, 0, 0]]), np.array([[2.0, 0, 0]])))
def angle_between(u, v):
    cos = (u * v).sum(-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@case(lambda r: (normal(r, 30, 2), np.array([0.1, -0.2]), 1.0),
      lambda r: (normal(r, 0, 2), np.zeros(2), 2))
def points_in_circle(pts, c, radius):
    inside = ((pts - c) ** 2).sum(axis=1) <= radius * radius
    return inside.sum(), np.count_nonzero(~inside), inside.mean() if len(inside) else 0.0


@case(lambda r: (normal(r, 4, 3), normal(r, 4, 3)),
      lambda r: (ints(r, -3, 3, 2, 3), ints(r, -3, 3, 2, 3)))
def cross_manual_vs_numpy(a, b):
    ax, ay, az = a[:, 0], a[:, 1], a[:, 2]
    bx, by, bz = b[:, 0], b[:, 1], b[:, 2]
    manual = np.stack([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx], axis=-1)
    return manual, np.cross(a, b)


# ---- signals --------------------------------------------------------------------------------

@case(lambda r: (normal(r, 25), 4), lambda r: (normal(r, 3, dtype="float32"), 3))
def moving_average_convolve(x, w):
    return np.convolve(x, np.ones(w) / w, mode="valid")


@case(lambda r: (normal(r, 20), np.array([0.1, 0.2, 0.4, 0.2, 0.1])),
      lambda r: (normal(r, 6, dtype="float32"), np.array([0.5, 0.5], np.float32)))
def fir_by_slices(x, taps):
    n, m = len(x), len(taps)
    y = np.zeros(n - m + 1, dtype=np.result_type(x, taps))
    for k in range(m):
        y += taps[m - 1 - k] * x[k:n - m + 1 + k]
    return y


@case(lambda r: (normal(r, 15), 0.9), lambda r: (normal(r, 2, dtype="float32"), 0.5))
def iir_first_order(x, a):
    y = np.zeros_like(x)
    acc = 0.0
    for i in range(len(x)):
        acc = a * acc + (1 - a) * x[i]
        y[i] = acc
    return y


@case(lambda r: (np.cumsum(r.random(9)), normal(r, 9)),
      lambda r: (np.arange(4.0), np.array([1.0, 4.0, 9.0, 16.0])))
def gradient_with_coordinates(t, x):
    return np.gradient(x, t), np.diff(x) / np.diff(t), np.diff(x, append=x[-1])


@case(lambda r: (normal(r, 30),), lambda r: (np.array([1.0, -0.0, 0.0, -1.0, 2.0]),),
      lambda r: (normal(r, 1, dtype="float32"),))
def zero_crossings(x):
    return np.sum(np.signbit(x[1:]) != np.signbit(x[:-1])), np.count_nonzero(np.diff(np.sign(x)))


@case(lambda r: (normal(r, 20),), lambda r: (ints(r, -100, 100, 6, dtype="int16"),))
def envelope_peak_hold(x):
    a = np.abs(x)
    return np.maximum.accumulate(a), a.argmax(), np.abs(x).astype(np.float64).mean()


@case(lambda r: (normal(r, 30), 3), lambda r: (normal(r, 5, dtype="float32"), 1))
def autocorrelation_lag(x, lag):
    xc = x - x.mean()
    return np.dot(xc[:-lag], xc[lag:]) / np.dot(xc, xc)


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 7, dtype="float32"),))
def decimate_by_two(x):
    n = len(x) // 2 * 2
    return x[:n:2], x[:n].reshape(-1, 2).mean(axis=1)


@case(lambda r: (ints(r, -32768, 32768, 12, dtype="int16"), 0.5),
      lambda r: (np.array([-32768, 32767, 0, 100], np.int16), 2.0))
def int16_audio_gain(x, gain):
    f = x.astype(np.float32) / 32768.0 * gain
    return (np.clip(f, -1.0, 1.0 - 1 / 32768) * 32768).astype(np.int16)


# ---- text statistics over integer arrays ----------------------------------------------------

@case(lambda r: (ints(r, 0, 10, 40, dtype="int32"), 10), lambda r: (ints(r, 0, 3, 0), 3))
def token_frequency(tokens, vocab):
    c = np.bincount(tokens, minlength=vocab)
    return c, c / max(len(tokens), 1), np.argsort(-c, kind="stable")[:3]


@case(lambda r: (ints(r, 0, 4, 30), 4), lambda r: (np.array([1, 1, 1]), 2))
def bigram_counts(tokens, vocab):
    idx = tokens[:-1] * vocab + tokens[1:]
    return np.bincount(idx, minlength=vocab * vocab).reshape(vocab, vocab)


@case(lambda r: (ints(r, 0, 4, 5, 7),), lambda r: (ints(r, 0, 2, 3, 3, dtype="int32"),))
def tf_idf(counts):
    tf = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    df = (counts > 0).sum(axis=0)
    idf = np.log(counts.shape[0] / (1 + df)) + 1
    return tf * idf


@case(lambda r: (np.sort(ints(r, 0, 5, 30)),), lambda r: (np.array([0, 0, 2, 2, 2]),))
def document_length_stats(doc_ids):
    lengths = np.bincount(doc_ids)
    return lengths.mean(), lengths.max(), (lengths == 0).sum()


@case(lambda r: (ints(r, 32, 127, 50, dtype="uint8"),), lambda r: (np.zeros(0, np.uint8),))
def char_class_counts(codes):
    upper = ((codes >= 65) & (codes <= 90)).sum()
    lower = np.logical_and(codes >= 97, codes <= 122).sum()
    digits = np.count_nonzero((codes >= 48) & (codes < 58))
    lowered = np.where((codes >= 65) & (codes <= 90), codes + 32, codes).astype(np.uint8)
    return upper, lower, digits, lowered


# ---- mask assignment, where chains, in-place on views, negative fancy indices ----------------

@case(lambda r: (normal(r, 5, 4), 0.5, -1.0), lambda r: (ints(r, -5, 5, 7, dtype="int8"), 2, 100),
      lambda r: (normal(r, 0), 0.0, 1.0))
def mask_assign_scalar(x, t, v):
    y = x.copy()
    y[y > t] = v
    return y


@case(lambda r: (normal(r, 6, 3), 0.0), lambda r: (ints(r, 0, 255, 9, dtype="uint8"), 128))
def mask_assign_argument(x, t):
    x[x < t] = 0


@case(lambda r: (normal(r, 9), normal(r, 9)), lambda r: (normal(r, 3, 3, dtype="float32"),
                                                        normal(r, 3, 3, dtype="float32")))
def mask_assign_from_array(x, y):
    out = x.copy()
    m = out < 0
    out[m] = y[m]
    return out


@case(lambda r: (3 * normal(r, 20),), lambda r: (ints(r, -3, 4, 6),), lambda r: (np.float64(0.5),))
def where_chain_piecewise(x):
    return np.where(x < 0, 0, np.where(x < 1, x ** 2, np.where(x < 2, 2 * x - 1, 3)))


@case(lambda r: (normal(r, 6, 4),), lambda r: (ints(r, 0, 9, 3, 3),))
def inplace_on_row_views(X):
    X[::2] *= 2
    X[:, -1] += X[:, 0]
    X[1:, 1] -= X[:-1, 1]


@case(lambda r: (normal(r, 3, 4),), lambda r: (fortran_(normal(r, 4, 2, dtype="float32")),))
def inplace_on_transposed_view(X):
    v = X.T
    v[0] -= 1
    v[-1] *= v[0]
    return X.sum()


@case(lambda r: (normal(r, 8),), lambda r: (ints(r, 0, 9, 5, 3),))
def fancy_negative_indices(x):
    return x[[-1, 0, -2]], x[np.array([-3, -1])], np.take(x, [-1], axis=0)


@case(lambda r: (normal(r, 6),), lambda r: (ints(r, 0, 9, 4, 2, dtype="int16"),))
def fancy_assign_negative(x):
    y = x.copy()
    y[[-1, -2]] = 0
    y[np.array([0, -1])] += 1
    return y


@case(lambda r: (r.uniform(0, 100, 20),), lambda r: (ints(r, 50, 100, 5, dtype="int32"),))
def select_grades(scores):
    return np.select([scores >= 90, scores >= 80, scores >= 70], [4, 3, 2], default=0)


@case(lambda r: (normal(r, 5, 5),), lambda r: (ints(r, -4, 4, 3, 3, dtype="int8"),))
def triangular_masks(X):
    Y = X.copy()
    Y[np.tril_indices_from(Y, k=-1)] = 0
    return Y, np.triu(X, 1).sum(), X[np.diag_indices_from(X)]


# ---- methods, keywords, promotion with Python scalars ---------------------------------------

@case(lambda r: (3 * normal(r, 7),), lambda r: (normal(r, 2, 3, dtype="float16"),))
def methods_clip_round_astype(x):
    return x.clip(-1, 1).round(2).astype(np.float32), x.round(decimals=-1), np.round(x * 100) / 100


@case(lambda r: (normal(r, 4, 5),), lambda r: (ints(r, 0, 3, 3, 2, dtype="int8"),),
      lambda r: (normal(r, 0, 3),))
def cumsum_axis_methods(X):
    return X.cumsum(axis=0), X.cumsum(1), X.cumprod(axis=-1), X.cumsum()


@case(lambda r: (normal(r, 5, 4),), lambda r: (ints(r, 0, 200, 3, 3, dtype="uint8"),))
def keyword_reductions(X):
    return (X.sum(axis=0, keepdims=True), np.mean(X, axis=1, dtype=np.float64),
            X.max(axis=1, initial=-100), np.sum(X, axis=(0, 1), where=X > 0),
            np.prod(X, axis=-1, dtype=np.float64))


@case(lambda r: (normal(r, 9),), lambda r: (ints(r, 0, 9, 4, 3),), lambda r: (normal(r, 1),))
def std_var_ddof(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.std(x, ddof=1), np.var(x, axis=0, ddof=0), x.var(axis=-1, keepdims=True)


@case(lambda r: (ints(r, 0, 5, 12),), lambda r: (normal(r, 6, dtype="float32"),))
def argsort_stable_descending(x):
    order = np.argsort(-x, kind="stable")
    return order, x[order], np.sort(x)[::-1]


@case(lambda r: (img(r, 6), 3), lambda r: (img(r, 6), 300), lambda r: (img(r, 6), -1))
def uint8_plus_python_int(x, k):
    return x + k, x * 2, x // 3


@case(lambda r: (ints(r, -128, 128, 8, dtype="int8"),), lambda r: (np.array([-128, 127], np.int8),))
def int8_mixed_scalars(x):
    return x * 1.5, x // 2, x % 3, -x, np.abs(x), x.astype(np.int16) * 200


@case(lambda r: (normal(r, 6, dtype="float32"),), lambda r: (normal(r, 2, 2, dtype="float16"),))
def float_with_python_and_numpy_scalars(x):
    return x * 2.5, x + np.float64(1), x + np.float32(1), x * 3, x / 7, x ** 2


@case(lambda r: (ints(r, -50, 50, 9),), lambda r: (ints(r, -9, 9, 3, 3, dtype="int32"),))
def int64_divisions(x):
    return x / 3, x // -3, x % -3, np.true_divide(x, 4), np.floor_divide(x, 2), divmod(x, 5)


@case(lambda r: (r.random(10) > 0.5,), lambda r: (np.zeros((2, 3), bool),))
def bool_arithmetic(m):
    return m.sum(), m + m, m * 2.5, m.mean(), ~m, m ^ True, np.cumsum(m), m.astype(np.int8) - 1


@case(lambda r: (normal(r, 8, dtype="float16"),), lambda r: (normal(r, 3, 3, dtype="float16"),))
def float16_statistics(x):
    return (x * x).sum(), x.mean(), np.sqrt(np.abs(x)), x.max(), x.astype(np.float32).std()


@case(lambda r: ((normal(r, 5) + 1j * normal(r, 5)).astype(np.complex128),),
      lambda r: ((normal(r, 2, 2) + 1j * normal(r, 2, 2)).astype(np.complex64),))
def complex_operations(z):
    return np.abs(z), np.angle(z), (z.conj() * z).real, (z * 1j).imag, z.sum(), np.exp(z)


# ---- 0-d and empty arrays, exceptions -------------------------------------------------------

@case(lambda r: (np.array(2.0), np.array(3)),
      lambda r: (np.array(1, np.uint8), np.array(250, np.uint8)))
def zero_d_arithmetic(a, b):
    return a * b + 1, np.maximum(a, b), (a < b), a.sum(), b[()]


@case(lambda r: (np.zeros((0, 3)),),
      lambda r: (np.zeros(0, np.int32),),
      lambda r: (np.zeros((2, 0)),))
def empty_reductions(x):
    return x.sum(), x.prod(axis=0), x.any(), x.all(), x.cumsum(), x.reshape(-1).size


@case(lambda r: (np.zeros((0, 3)),), lambda r: (np.zeros(0),))
def empty_max_raises(x):
    return x.max()


@case(lambda r: (np.zeros((0, 4)),), lambda r: (normal(r, 3, 4),))
def empty_mean_warns(X):
    return X.mean(axis=0)


@case(lambda r: (ints(r, 1, 5, 6), ints(r, 0, 3, 6)),
      lambda r: (np.array([1, 2], np.int8), np.array([0, 1], np.int8)))
def integer_division_by_zero_warns(a, b):
    return a // b, a % b


@case(lambda r: (normal(r, 3, 4), normal(r, 3)), lambda r: (normal(r, 2, 2), normal(r, 5, 1, 3)))
def bad_broadcast_raises(a, b):
    return a + b


@case(lambda r: (normal(r, 5), 2), lambda r: (normal(r, 5), 5), lambda r: (normal(r, 5), -6))
def index_out_of_bounds_raises(x, i):
    return x[i] * 2


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 7),))
def reshape_bad_size_raises(x):
    return x.reshape(4, -1)


@case(lambda r: (normal(r, 5), np.array([0, 4, 5])), lambda r: (normal(r, 5), np.array([-1, -5])),
      lambda r: (normal(r, 5), np.array([-6])))
def fancy_index_out_of_bounds_raises(x, idx):
    return x[idx]


# ---- less common idioms: Python builtins, dtype queries, out=/where=, in-place methods --------

@case(lambda r: (normal(r, 4, 3),), lambda r: (ints(r, -9, 9, 5, dtype="int8"),))
def python_builtins_on_arrays(x):
    parts = [x[i] for i in range(len(x))]
    return sum(parts), abs(x), pow(x, 2), x ** 0.5 if x.dtype.kind == "f" else x * 1, \
        round(x.dtype.itemsize)


@case(lambda r: (normal(r, 6),), lambda r: (ints(r, 0, 200, 6, dtype="uint8"),),
      lambda r: (normal(r, 3, dtype="float16"),))
def dtype_queries(x):
    if np.issubdtype(x.dtype, np.integer):
        top = np.iinfo(x.dtype).max
        return (x.astype(np.float64) / top).astype(np.float32)
    eps = np.finfo(x.dtype).eps
    return x / (np.abs(x).max() + eps), x.dtype.type(0) + x


@case(lambda r: (normal(r, 5, 4),), lambda r: (ints(r, 0, 9, 3, 3),))
def zeros_like_shape_dtype(x):
    out = np.zeros(x.shape, dtype=x.dtype)
    out[1:] = x[:-1]
    e = np.empty_like(x, dtype=np.float64)
    e.fill(2.5)
    return out, e, np.full(x.shape, np.nan), np.ones((x.shape[0],), dtype=int)


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 3, 4, dtype="float32"),))
def ufunc_out_where(x):
    out = np.zeros_like(x)
    np.exp(x, out=out, where=x < 0)
    np.maximum(x, 0, out=x)
    np.multiply(x, 2, out=x)
    return out


@case(lambda r: (normal(r, 9),), lambda r: (ints(r, 0, 9, 4, 3),))
def sort_method_in_place(x):
    x.sort()
    return x[::-1].copy(), x[-1]


@case(lambda r: (normal(r, 6), np.array([0, 2, -1])),
      lambda r: (ints(r, 0, 9, 5), np.array([1, 1, 3])))
def put_place_putmask_copyto(x, idx):
    a = x.copy()
    np.put(a, idx, -1)
    b = x.copy()
    np.putmask(b, b > b.mean(), 0)
    c = np.zeros_like(x)
    np.copyto(c, x, where=x > 2)
    return a, b, c


@case(lambda r: (normal(r, 5, 4), np.array([0, 2, 0]), 1.0),
      lambda r: (ints(r, 0, 5, 4, 2), np.array([3, 3]), 2))
def repeated_index_increment(x, idx, v):
    a = x.copy()
    a[idx] += v  # buffered: each row once
    b = x.copy()
    np.add.at(b, idx, v)  # unbuffered: repeats add up
    return a, b


@case(lambda r: (normal(r, 5, 6), np.array([0, 3, 4]), np.array([1, 5])),
      lambda r: (ints(r, 0, 9, 3, 3), np.array([-1]), np.array([0, -1])))
def ix_submatrix(X, rows, cols):
    sub = X[np.ix_(rows, cols)]
    Y = X.copy()
    Y[np.ix_(rows, cols)] = 0
    return sub, Y, X[rows][:, cols], X[:, [0, -1]]


@case(lambda r: (normal(r, 4, 5),), lambda r: (ints(r, 0, 9, 3, 3, dtype="int32"),))
def mask_2d_increment(X):
    Y = X.copy()
    Y[Y > 2] += 1
    Y[np.abs(Y) < 0.5] *= -1
    return Y


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 6, 2, dtype="float32").T,))
def take_along_sorted(X):
    order = np.argsort(X, axis=1)
    top = np.take_along_axis(X, order[:, -2:], axis=1)
    Y = X.copy()
    np.put_along_axis(Y, order[:, :1], 0.0, axis=1)
    return top, Y, X.argmax(axis=1, keepdims=True)


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 3, 3, dtype="float32"),))
def argmax_unravel(X):
    i, j = np.unravel_index(np.argmax(X), X.shape)
    return i, j, X[i, j], np.ravel_multi_index((i, j), X.shape)


@case(lambda r: (normal(r, 8),), lambda r: (ints(r, -5, 5, 4),))
def clip_variants(x):
    return np.clip(x, None, 1), np.clip(x, a_min=-1, a_max=None), x.clip(max=0), \
        np.clip(x, np.zeros_like(x), np.abs(x).mean())


@case(lambda r: (normal(r, 3, 4),), lambda r: (ints(r, 0, 3, 2, 2, dtype="uint8"),))
def astype_spellings(x):
    return x.astype("f4"), x.astype(float), x.astype(int), x.astype(bool), \
        np.asarray(x, dtype=np.float32), np.array(x, dtype="float64", copy=True)


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 5).T,))
def order_keywords(X):
    return X.flatten("F"), X.ravel(order="F"), X.reshape(2, -1, order="F"), \
        np.ascontiguousarray(X.T), X.copy(order="F"), np.asfortranarray(X)


@case(lambda r: (3, 2), lambda r: (1, 0), lambda r: (4, -1))
def constructors(n, k):
    return np.eye(n, k=k, dtype=int), np.identity(n), np.tri(n, k=k), np.arange(0.5, n, 0.25), \
        np.logspace(0, 2, n), np.geomspace(1, 1000, n + 1), np.diag(np.arange(n), k)


@case(lambda r: (normal(r, 10), normal(r, 10)),
      lambda r: (normal(r, 4, dtype="float32"), normal(r, 4, dtype="float32")))
def stacking_lists_of_tracers(a, b):
    rows = [a * i for i in range(3)]
    return np.array([a.sum(), b.sum()]), np.vstack(rows), np.column_stack((a, b)), \
        np.asarray([a, b]), np.stack([a, b], axis=-1)


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 10),))
def split_pieces(x):
    halves = np.array_split(x, 3)
    a, b = np.split(x[: len(x) // 2 * 2], 2)
    return [h.mean() for h in halves], a - b


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 2, 3, dtype="float32"),))
def statistics_family(X):
    return (np.ptp(X, axis=0), np.average(X, axis=1, weights=np.arange(1, X.shape[1] + 1)),
            np.cov(X), np.corrcoef(X[0], X[1]), np.median(X, axis=1), np.quantile(X, 0.9, axis=0),
            np.percentile(X, [10, 50], method="nearest"))


@case(lambda r: (with_nans(r, 4, 5),), lambda r: (np.array([[np.nan, 1.0], [2.0, np.nan]]),))
def nan_aware_family(X):
    return np.nanmax(X, axis=0), np.nanargmin(X, axis=1), np.nanstd(X), np.nansum(X, axis=1), \
        np.nan_to_num(X, nan=-1.0), np.isnan(X).sum(axis=0)


@case(lambda r: (ints(r, 1, 50, 8), ints(r, 1, 50, 8)),
      lambda r: (np.array([0, 6, -4]), np.array([4, 0, 6])))
def integer_math(a, b):
    return np.gcd(a, b), np.lcm(a, b), np.left_shift(a, 2), np.right_shift(a, 1), \
        np.invert(a.astype(np.uint8)), np.bitwise_and(a, b), np.negative(a.astype(np.uint8))


@case(lambda r: (normal(r, 7) * 3, normal(r, 7)),
      lambda r: (np.array([-0.0, 0.0, np.inf, -3.5]), np.array([2.0, -2.0, 1.0, 0.0])))
def float_math_family(x, y):
    with np.errstate(all="ignore"):
        return (np.fmod(x, y), np.remainder(x, y), np.copysign(x, y), np.heaviside(x, 0.5),
                np.logaddexp(x, y), np.float_power(np.abs(x), 0.5), np.exp2(x), np.signbit(x),
                np.rint(x), np.fix(x), np.around(x, 1))


@case(lambda r: (ints(r, 0, 6, 20), ints(r, 3, 9, 6)),
      lambda r: (np.array([1, 2, 3]), np.zeros(0, int)))
def set_operations(a, b):
    return np.isin(a, b), np.intersect1d(a, b), np.setdiff1d(a, b), np.union1d(a, b), \
        np.unique(a, return_counts=True)


@case(lambda r: (normal(r, 30), 6), lambda r: (normal(r, 5, dtype="float32"), 2))
def histogram_and_interp(x, bins):
    counts, edges = np.histogram(x, bins=bins)
    centers = 0.5 * (edges[1:] + edges[:-1])
    return counts, edges, np.interp(x, centers, counts.astype(np.float64)), \
        np.trapezoid(counts, centers)


@case(lambda r: (normal(r, 4, 4) + 4 * np.eye(4), normal(r, 4)),
      lambda r: (np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])))
def linear_algebra_family(A, b):
    x = np.linalg.solve(A, b)
    return x, np.linalg.inv(A) @ b, np.linalg.det(A), np.linalg.norm(A, ord=1), \
        np.linalg.norm(A, "fro"), np.linalg.norm(b, np.inf), np.trace(A)


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 5)),
      lambda r: (ints(r, -3, 3, 2, 3), ints(r, -3, 3, 3, 2)))
def integer_and_float_products(A, B):
    return A @ B, np.dot(A[0], B[:, 0]), np.einsum("ij,jk->ik", A, B), np.tensordot(A, B, axes=1), \
        np.outer(A[0], B[0]), np.kron(A[:1, :2], B[:2, :1])


@case(lambda r: (ints(r, -128, 128, 6, dtype="int8"), ints(r, -128, 128, 6, dtype="int8")),)
def int8_products_wrap(a, b):
    return a * b, np.dot(a, b), a @ b, (a.astype(np.int32) * b).sum(), np.cumsum(a, dtype=np.int8)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 2, 3),))
def errstate_inside(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x)
        z = 1.0 / (x - x)
    return np.where(np.isfinite(y), y, 0.0), np.isnan(z).sum()


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 2, 2, dtype="float32"),))
def apply_along_and_vectorize(X):
    norms = np.apply_along_axis(np.linalg.norm, 1, X)
    f = np.vectorize(lambda v: v * 2 if v > 0 else -v)
    return norms, f(X)


@case(lambda r: (normal(r, 5, 3),), lambda r: (ints(r, 0, 5, 2, 2),))
def item_and_tolist(X):
    total = X.sum().item()
    return total, X[0].tolist(), float(X.max()), int(X.argmin())


@case(lambda r: (r.random((6, 6)) > 0.5,), lambda r: (np.ones((2, 9), bool),))
def packbits_rows(m):
    p = np.packbits(m, axis=1)
    return p, np.unpackbits(p, axis=1)[:, : m.shape[1]], np.bitwise_count(p).sum(axis=1)


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 0, 4),))
def reductions_to_python_in_fstring(X):
    m = X.mean(axis=0) if len(X) else np.zeros(X.shape[1])
    return {"mean": m, "n": len(X), "shape": X.shape, "label": f"rows={X.shape[0]}"}


@case(lambda r: (normal(r, 6, 2), 3), lambda r: (normal(r, 4, 2, dtype="float32"), 2))
def meshgrid_ogrid_grid(pts, n):
    gx, gy = np.meshgrid(np.linspace(-1, 1, n), np.linspace(0, 1, n + 1), indexing="ij")
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    d = ((grid[:, None, :] - pts[None]) ** 2).sum(-1)
    return d.argmin(axis=1), np.mgrid[0:n, 0:2].sum(axis=0), np.ogrid[0:n][:, None] + np.arange(2)


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 10, dtype="float32"),))
def reverse_cumulative(x):
    return x[::-1].cumsum()[::-1], np.flip(np.maximum.accumulate(np.flip(x))), \
        np.minimum.reduce(x), np.add.reduce(x, axis=0), np.multiply.outer(x[:3], x[:2])


# ---- Python around arrays: iteration, unpacking, builtins, recursion, overlapping writes -----

@case(lambda r: (normal(r, 4, 3),), lambda r: (ints(r, 0, 9, 2, 2, dtype="uint8"),))
def iterate_rows_and_unpack(X):
    out = [row * 2 for row in X]
    first, *rest = X
    return np.array(out), first + rest[-1], [i * e.sum() for i, e in enumerate(X)]


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (ints(r, 0, 9, 3), ints(r, 0, 9, 3)))
def zip_builtins_sorted(x, y):
    prods = np.array([p * q for p, q in zip(x, y, strict=True)])
    return prods, max(x), min(y), sum(x), np.array(sorted(x)), sum(v for v in y)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 5), 3.0, 1))
def keyword_only_and_star_args(x, *extra, scale=2.0):
    shift = sum(extra) if extra else 0
    return x * scale + shift


@case(lambda r: (normal(r, 5), 3), lambda r: (ints(r, 0, 4, 3), 0))
def recursive_halving(x, n):
    def inner(v, k):
        return v if k == 0 else inner(v * 0.5 + 1, k - 1)
    return inner(x, n), (lambda t: t * t)(x)


@case(lambda r: (r.random(5) + 0.1,), lambda r: (np.full(3, 50.0),))
def while_on_data(x):
    steps = 0
    while x.sum() < 100:
        x = x * 2
        steps += 1
    return x, steps


@case(lambda r: (normal(r, 4, 3),), lambda r: (ints(r, 0, 9, 2, 5),))
def swap_rows_by_tuple(X):
    X[0], X[1] = X[1], X[0]  # the second is a view: NumPy writes row 1 into both
    Y = X.copy()
    Y[[0, -1]] = Y[[-1, 0]]
    return Y


@case(lambda r: (normal(r, 8),), lambda r: (ints(r, -5, 5, 6, dtype="int8"),))
def overlapping_shifts(x):
    a, b, c = x.copy(), x.copy(), x.copy()
    a[1:] += a[:-1]
    b[:-1] = b[1:]
    c[1:] = c[:-1]
    x[:] = x[::-1]
    return a, b, c


@case(lambda r: (normal(r, 4, 4),), lambda r: (ints(r, 0, 9, 3, 3),))
def add_own_transpose(X):
    Y = X[:3, :3]
    Y += Y.T  # NumPy's buffering makes this symmetric
    return X


@case(lambda r: (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.005, 2.675, 0.125, -2.5, np.nan, np.inf]),),
      lambda r: (np.array([0.5, 1.5, 2.5, -0.5, 0.125, 0.375], np.float32),))
def rounding_half_to_even(v):
    return np.round(v), np.round(v, 1), np.round(v, 2), np.round(v, -1), np.rint(v), v.round(3)


@case(lambda r: (np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, 5.0, -5.0, np.nan]),
                 np.array([0.0, 0.0, 1.0, -1.0, 2.0, 2.0, np.inf, np.inf, 1.0])),)
def floor_division_specials(a, b):
    with np.errstate(all="ignore"):
        return a // b, a % b, np.divmod(a, b), np.fmod(a, b)


@case(lambda r: (np.zeros(5, np.int8), np.array([0, -1, 0, 2, -1]),
                 np.array([100, 100, 100, 1, 1], np.int8)),
      lambda r: (np.zeros(4), np.array([3, 3, 3]), np.array([1.0, 2.0, 3.0])))
def ufunc_at_accumulate(a, i, v):
    b, c, d = a.copy(), a.copy(), a.copy()
    np.add.at(b, i, v)
    np.maximum.at(c, i, v)
    np.subtract.at(d, i, 1)
    return b, c, d


@case(lambda r: (np.array([0, 1, 2**63, 2**64 - 1], np.uint64),),
      lambda r: (np.array([0, 1, 128, 255], np.uint8),))
def unsigned_wraparound(v):
    return v - 1, v * 255, v >> 1, v.astype(np.int8), v // 3, v.mean(), -v, v.sum()


@pytest.mark.parametrize("name", sorted(CASES7))
def test_wild7_function_matches_numpy(name: str) -> None:
    run_case(name, CASES7, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES7, warm=True, views=True, warns=True)
