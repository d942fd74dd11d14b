"""A second corpus, written as an unseen user would (issue 16, items 4-6): uint8 images,
finance, physics, ML, statistics, signals, geometry, bit tricks and data munging, in the
styles people write (`out=`, `keepdims`, `dtype=` on reductions, `np.newaxis`, ellipsis,
negative fancy indices, mask assignment, NEP 50 scalars, int8/uint8 wrap-around, float16).

Each function runs under one `stax.jit` on several inputs (0- and 1-sized, several dtypes,
transposed and strided views) and must equal NumPy on copies of the same inputs: results,
dtypes, arguments mutated in place, and the exception class where NumPy raises. Graph breaks
are allowed (they run NumPy); wrong results, crashes and refusals are not.

`cd tests && python -m corpus.test_corpus_wild [names]` prints each function's class: compiled
(no break), break (correct, some of it ran in NumPy; the breaks are named), FAIL (a wrong result,
a crash or a refusal). First run (113 functions): 73 compiled, 9 break, 31 FAIL (every graph
break failed; 3 from another helper's edit in progress); after the fixes of issue 16's hunt
(124 functions): 107 compiled, 17 break, 0 FAIL. What still breaks: float()/int() of computed
values, data-dependent shapes (x[mask] used as an array, nonzero, unique, set operations,
bincount whose length depends on the data), np.fft, np.average's zero-weight check, a random
generator made inside the function, ndarray.view(dtype), np.frexp.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

import stax
from stax.frontend.breaks import GraphBreakWarning

Args = Callable[[np.random.Generator], tuple[Any, ...]]
CASES: dict[str, tuple[Callable[..., Any], tuple[Args, ...]]] = {}


def wild(*inputs: Args, cases: dict[str, Any] = CASES
         ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function with the inputs it is run on (in `cases`: this corpus's)."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        cases[fn.__name__] = (fn, inputs)
        return fn
    return register


def img(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.integers(0, 256, shape, dtype=np.uint8)


def normal(r: np.random.Generator, *shape: int, dtype: str = "float64") -> np.ndarray:
    return r.standard_normal(shape).astype(dtype)


def prices(r: np.random.Generator, n: int) -> np.ndarray:
    return 100.0 * np.exp(np.cumsum(0.01 * r.standard_normal(n)))


# ---- image processing on uint8 --------------------------------------------------------------

@wild(lambda r: (img(r, 16, 12),), lambda r: (img(r, 1, 1),), lambda r: (img(r, 0, 4),))
def histogram_uint8(im):
    return np.bincount(im.ravel(), minlength=256)


@wild(lambda r: (img(r, 9, 7), 128), lambda r: (img(r, 9, 7).T, 0),
      lambda r: (img(r, 0, 3), 10), lambda r: (img(r, 9, 7), -5), lambda r: (img(r, 9, 7), 300))
def threshold_binary(im, t):
    return np.where(im > t, 255, 0).astype(np.uint8)


@wild(lambda r: (img(r, 8, 8), 2.2), lambda r: (img(r, 5, 6)[:, ::2], 0.5))
def gamma_lut(im, gamma):
    lut = (np.arange(256) / 255.0) ** (1.0 / gamma) * 255.0
    lut = np.clip(np.round(lut), 0, 255).astype(np.uint8)
    return lut[im]


@wild(lambda r: (img(r, 7, 5),), lambda r: (img(r, 4, 6, 3)[..., ::-1],),
      lambda r: (np.array(7, np.uint8),))
def invert_uint8(im):
    return 255 - im, ~im


@wild(lambda r: (img(r, 6, 9), 60), lambda r: (img(r, 6, 9), -200),
      lambda r: (img(r, 3, 4).T, 0))
def brighten_saturating(im, delta):
    return np.clip(im.astype(np.int16) + delta, 0, 255).astype(np.uint8)


@wild(lambda r: (img(r, 6, 9),), lambda r: (img(r, 1, 3),))
def brighten_wraps(im):
    return im + np.uint8(100), im * 3, im // 7, im - np.uint8(200)


@wild(lambda r: (img(r, 10, 12),), lambda r: (img(r, 3, 3),), lambda r: (img(r, 12, 10).T,))
def box_blur_uint8(im):
    p = np.pad(im, 1, mode="edge").astype(np.uint16)
    acc = np.zeros(im.shape, dtype=np.uint16)
    for dy in range(3):
        for dx in range(3):
            acc += p[dy:dy + im.shape[0], dx:dx + im.shape[1]]
    return (acc // 9).astype(np.uint8)


@wild(lambda r: (img(r, 5, 6, 3),), lambda r: (img(r, 1, 1, 3),), lambda r: (img(r, 0, 2, 3),))
def rgb_to_gray_uint8(im):
    g = im[..., 0] * 0.299 + im[..., 1] * 0.587 + im[..., 2] * 0.114
    return np.round(g).astype(np.uint8)


@wild(lambda r: (img(r, 6, 6), img(r, 6, 6), 0.3),
      lambda r: (img(r, 6, 6), img(r, 6, 6).T, np.float32(0.75)))
def alpha_blend(a, b, alpha):
    out = a.astype(np.float32) * alpha + b.astype(np.float32) * (1 - alpha)
    return out.astype(np.uint8)


@wild(lambda r: (img(r, 8, 9, 3),), lambda r: (img(r, 1, 2, 3),))
def channel_stats(im):
    return (im.mean(axis=(0, 1)), im.sum(axis=(0, 1), dtype=np.uint64),
            im.max(axis=-1, keepdims=True), im.sum(axis=2))


@wild(lambda r: (img(r, 12, 16, 3),), lambda r: (img(r, 4, 4, 3),))
def crop_center(im):
    h, w = im.shape[:2]
    return im[h // 4: h - h // 4, w // 4: -(w // 4), ...].copy()


@wild(lambda r: (img(r, 7, 9),), lambda r: (np.full((3, 3), 9, np.uint8),),
      lambda r: (img(r, 4, 5)[::2],))
def contrast_stretch(im):
    lo, hi = im.min(), im.max()
    scaled = (im - lo).astype(np.float64) * (255.0 / max(float(hi) - float(lo), 1.0))
    return scaled.astype(np.uint8)


@wild(lambda r: (img(r, 8, 8),), lambda r: (img(r, 9, 5),))
def sobel_uint8(im):
    f = im.astype(np.int32)
    gx = f[1:-1, 2:] - f[1:-1, :-2]
    gy = f[2:, 1:-1] - f[:-2, 1:-1]
    mag = np.hypot(gx, gy)
    return np.minimum(mag, 255).astype(np.uint8)


@wild(lambda r: (img(r, 6, 8),), lambda r: (img(r, 1, 1),))
def otsu_threshold(im):
    hist = np.bincount(im.ravel(), minlength=256).astype(np.float64)
    p = hist / hist.sum()
    omega = np.cumsum(p)
    mu = np.cumsum(p * np.arange(256))
    mu_t = mu[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma_b = (mu_t * omega - mu) ** 2 / (omega * (1.0 - omega))
    sigma_b = np.nan_to_num(sigma_b)
    return int(np.argmax(sigma_b))


# ---- finance ----------------------------------------------------------------------------------

@wild(lambda r: (prices(r, 50),), lambda r: (prices(r, 2),),
      lambda r: (prices(r, 40).astype(np.float32)[::3],))
def simple_and_log_returns(p):
    return p[1:] / p[:-1] - 1, np.diff(np.log(p))


@wild(lambda r: (prices(r, 60),), lambda r: (prices(r, 1),),
      lambda r: (prices(r, 30).astype(np.float32),))
def drawdown(p):
    peak = np.maximum.accumulate(p)
    dd = (p - peak) / peak
    return dd, dd.min(), np.argmin(dd)


@wild(lambda r: (r.standard_normal(40), 0.2), lambda r: (r.standard_normal(1), 0.5))
def ewma_loop(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


@wild(lambda r: (r.standard_normal(30), 0.1), lambda r: (r.standard_normal(5), 0.9))
def ewma_vectorized(x, alpha):
    n = x.shape[0]
    w = (1 - alpha) ** np.arange(n)[::-1]
    num = np.cumsum(w * x)
    den = np.cumsum(w)
    return num / den


@wild(lambda r: (normal(r, 12), 3), lambda r: (r.integers(0, 9, 5).astype(np.int32), 5))
def prefix_sum_windows(x, w):
    c = np.r_[0, np.cumsum(x)]
    return (c[w:] - c[:-w]) / w, np.r_[x[:1], x[1:] - x[:-1], 0:2]


@wild(lambda r: (r.standard_normal(30), 5), lambda r: (r.standard_normal(6), 6))
def rolling_std_cumsum(x, w):
    c1 = np.concatenate(([0.0], np.cumsum(x)))
    c2 = np.concatenate(([0.0], np.cumsum(x * x)))
    s1 = c1[w:] - c1[:-w]
    s2 = c2[w:] - c2[:-w]
    var = s2 / w - (s1 / w) ** 2
    return np.sqrt(np.maximum(var, 0))


@wild(lambda r: (prices(r, 20), r.integers(1, 1000, 20)),
      lambda r: (prices(r, 5).astype(np.float32), r.integers(1, 9, 5).astype(np.int32)))
def vwap(price, volume):
    cum = np.cumsum(price * volume) / np.cumsum(volume)
    return cum, (price * volume).sum() / volume.sum()


@wild(lambda r: (0.01 * r.standard_normal(252),), lambda r: (0.01 * r.standard_normal(3),))
def risk_ratios(ret):
    vol = ret.std(ddof=1) * np.sqrt(252)
    downside = np.minimum(ret, 0.0)
    sortino = ret.mean() / np.sqrt((downside ** 2).mean()) * np.sqrt(252)
    return vol, sortino, np.percentile(ret, 5)


@wild(lambda r: (0.01 * r.standard_normal((50, 4)), np.full(4, 0.25)),
      lambda r: (0.01 * r.standard_normal((4, 30)).T, np.array([0.1, 0.2, 0.3, 0.4])))
def portfolio_growth(R, w):
    port = R @ w
    growth = np.cumprod(1 + port)
    return growth - 1, np.cov(R, rowvar=False) @ w


@wild(lambda r: (prices(r, 30), 5), lambda r: (prices(r, 8), 8))
def bollinger_bands(p, n):
    win = np.lib.stride_tricks.sliding_window_view(p, n)
    mid = win.mean(axis=-1)
    sd = win.std(axis=-1)
    return mid - 2 * sd, mid, mid + 2 * sd


@wild(lambda r: (r.uniform(80, 120, 10), 100.0, 0.05, 0.2, 1.0),
      lambda r: (r.uniform(80, 120, 3).astype(np.float32), 100.0, 0.01, 0.3, 0.5))
def black_scholes_call(S, K, r, sigma, T):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    cdf = lambda z: 0.5 * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))  # noqa: E731
    return S * cdf(d1) - K * np.exp(-r * T) * cdf(d2)


# ---- physics ----------------------------------------------------------------------------------

@wild(lambda r: (normal(r, 8, 3), normal(r, 8, 3), r.random(8) + 0.5),
      lambda r: (normal(r, 2, 3), normal(r, 2, 3), np.ones(2)))
def nbody_energy(pos, vel, mass):
    ke = 0.5 * np.sum(mass * np.sum(vel ** 2, axis=1))
    dx = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
    r = np.sqrt(np.sum(dx ** 2, axis=-1))
    i, j = np.triu_indices(len(mass), k=1)
    pe = -np.sum(mass[i] * mass[j] / r[i, j])
    return ke, pe, ke + pe


@wild(lambda r: (normal(r, 10, 3),), lambda r: (normal(r, 10, 3).astype(np.float32),))
def lennard_jones(pos):
    d = pos[:, None] - pos[None]
    r2 = (d ** 2).sum(-1)
    r2[np.diag_indices(len(pos))] = np.inf
    inv6 = (1.0 / r2) ** 3
    energy = 4 * (inv6 ** 2 - inv6)
    return 0.5 * energy.sum()


@wild(lambda r: (normal(r, 12, 10),), lambda r: (normal(r, 10, 12).T,),
      lambda r: (normal(r, 3, 3, dtype="float32"),))
def laplacian_5pt(u):
    out = np.zeros_like(u)
    out[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                       - 4 * u[1:-1, 1:-1])
    return out


@wild(lambda r: (normal(r, 20), normal(r, 20), 0.5), lambda r: (normal(r, 3), normal(r, 3), 1.0))
def wave_1d_step(u, u_prev, c):
    nxt = np.empty_like(u)
    nxt[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c ** 2 * (u[2:] - 2 * u[1:-1] + u[:-2])
    nxt[0] = nxt[-1] = 0.0
    return nxt


@wild(lambda r: (20.0, np.linspace(5, 85, 9)), lambda r: (np.float32(3), np.array([45.0])))
def projectile(v0, angles_deg):
    th = np.deg2rad(angles_deg)
    t_flight = 2 * v0 * np.sin(th) / 9.81
    rng_ = v0 ** 2 * np.sin(2 * th) / 9.81
    return t_flight, rng_, np.radians(angles_deg) - th


@wild(lambda r: (1.0, 0.0, 0.01, 50), lambda r: (0.5, 1.0, 0.1, 3))
def verlet_oscillator(x0, v0, dt, steps):
    x = np.zeros(steps)
    v = np.zeros(steps)
    x[0], v[0] = x0, v0
    for i in range(steps - 1):
        a = -x[i]
        x[i + 1] = x[i] + v[i] * dt + 0.5 * a * dt ** 2
        v[i + 1] = v[i] + 0.5 * (a - x[i + 1]) * dt
    return x, v


@wild(lambda r: (r.uniform(0, 10, (15, 2)), 10.0), lambda r: (r.uniform(0, 4, (3, 3)), 4.0))
def periodic_min_image(pos, box):
    d = pos[:, None, :] - pos[None, :, :]
    d -= box * np.round(d / box)
    return np.sqrt((d * d).sum(axis=-1))


# ---- machine learning -------------------------------------------------------------------------

@wild(lambda r: (r.integers(0, 5, 12), 5), lambda r: (r.integers(0, 3, 0), 3),
      lambda r: (r.integers(0, 4, 6).astype(np.int32), 4))
def one_hot_assign(y, k):
    out = np.zeros((len(y), k))
    out[np.arange(len(y)), y] = 1
    return out


@wild(lambda r: (r.dirichlet(np.ones(4), 10), r.integers(0, 4, 10)),
      lambda r: (r.dirichlet(np.ones(3), 5).astype(np.float32), r.integers(0, 3, 5)))
def cross_entropy_probs(p, y):
    n = p.shape[0]
    return -np.log(p[np.arange(n), y] + 1e-12).mean()


@wild(lambda r: (normal(r, 30, 2), normal(r, 3, 2)), lambda r: (normal(r, 4, 2), normal(r, 4, 2)))
def kmeans_step(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    labels = d.argmin(axis=1)
    sums = np.zeros_like(C)
    np.add.at(sums, labels, X)
    counts = np.bincount(labels, minlength=len(C))[:, None]
    return np.where(counts > 0, sums / np.maximum(counts, 1), C), labels


@wild(lambda r: (normal(r, 16, 8), np.ones(8), np.zeros(8)),
      lambda r: (normal(r, 8, 16, dtype="float32").T, np.full(8, 2, np.float32),
                 np.zeros(8, np.float32)),
      lambda r: (normal(r, 1, 4), np.ones(4), np.zeros(4)))
def batchnorm_train(x, gamma, beta):
    mu = x.mean(axis=0, keepdims=True)
    var = x.var(axis=0, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + 1e-5)
    return gamma * xhat + beta


@wild(lambda r: (normal(r, 2, 5, 4), normal(r, 2, 6, 4), normal(r, 2, 6, 3)),
      lambda r: (normal(r, 1, 1, 4, dtype="float32"), normal(r, 1, 2, 4, dtype="float32"),
                 normal(r, 1, 2, 2, dtype="float32")))
def attention(q, k, v):
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return w @ v


@wild(lambda r: (normal(r, 6, 7),), lambda r: (np.array([[-np.inf, -np.inf], [0.0, 1000.0]]),),
      lambda r: (normal(r, 5, 3, dtype="float32").T,))
def logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        return (m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))).squeeze(1)


@wild(lambda r: (normal(r, 5, 20), 3), lambda r: (normal(r, 2, 4), 4))
def topk_partition(x, k):
    idx = np.argpartition(-x, k - 1, axis=-1)[..., :k]
    vals = np.take_along_axis(x, idx, axis=-1)
    return np.sort(vals, axis=-1)[..., ::-1]


@wild(lambda r: (normal(r, 6, 10), 3), lambda r: (normal(r, 10, 6).T, 1))
def topk_argsort(x, k):
    order = np.argsort(x, axis=1)[:, ::-1][:, :k]
    return order, x[np.arange(x.shape[0])[:, None], order]


@wild(lambda r: (normal(r, 8, 6), r.random((8, 6)) > 0.5, 0.5),
      lambda r: (normal(r, 3, dtype="float32"), np.array([True, False, True]), 0.25))
def dropout_apply(x, mask, p):
    return np.where(mask, x / (1 - p), 0)


@wild(lambda r: (normal(r, 7, 3),), lambda r: (np.zeros((2, 3)),),
      lambda r: (normal(r, 3, 7, dtype="float32").T,))
def l2_normalize(x):
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / n.clip(min=1e-12)


@wild(lambda r: (r.integers(0, 4, 30), r.integers(0, 4, 30), 4),
      lambda r: (r.integers(0, 2, 5).astype(np.int32), r.integers(0, 2, 5).astype(np.int32), 2))
def confusion_matrix(y_true, y_pred, k):
    return np.bincount(k * y_true + y_pred, minlength=k * k).reshape(k, k)


@wild(lambda r: (normal(r, 10), normal(r, 10), np.zeros(10), np.zeros(10), 1),
      lambda r: (normal(r, 3, 2), normal(r, 3, 2), np.ones((3, 2)), np.ones((3, 2)), 5))
def adam_update(w, g, m, v, t):
    b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
    m[:] = b1 * m + (1 - b1) * g
    v[:] = b2 * v + (1 - b2) * g * g
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    w -= lr * mhat / (np.sqrt(vhat) + eps)
    return w


@wild(lambda r: (normal(r, 10), normal(r, 10), np.zeros(10)),
      lambda r: (normal(r, 4, dtype="float32"), normal(r, 4, dtype="float32"),
                 np.ones(4, np.float32)))
def sgd_momentum_out(w, g, vel):
    np.multiply(vel, 0.9, out=vel)
    vel -= 0.01 * g
    np.add(w, vel, out=w)
    return w, vel


@wild(lambda r: (normal(r, 6, 4), normal(r, 6, 4)), lambda r: (normal(r, 0, 4), normal(r, 0, 4)))
def relu_forward_backward(x, g):
    y = np.maximum(x, 0)
    dx = g * (x > 0)
    return y, dx


# ---- statistics -------------------------------------------------------------------------------

@wild(lambda r: (normal(r, 12, 4),), lambda r: (normal(r, 4, 12, dtype="float32").T,),
      lambda r: (r.integers(0, 10, (6, 3)),))
def zscore_ddof(x):
    return (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)


@wild(lambda r: (r.permutation(20).astype(np.float64),), lambda r: (normal(r, 1),),
      lambda r: (r.permutation(9).astype(np.int32)[::2],))
def ranks(x):
    return x.argsort().argsort(), np.argsort(np.argsort(-x)) + 1


@wild(lambda r: (normal(r, 40, 3),), lambda r: (normal(r, 1, 2),))
def percentiles_axis(x):
    return np.percentile(x, [5, 50, 95], axis=0), np.quantile(x, 0.5, axis=1, keepdims=True)


@wild(lambda r: (normal(r, 15), normal(r, 15), normal(r, 15, 3)),
      lambda r: (normal(r, 3, dtype="float32"), normal(r, 3, dtype="float32"), normal(r, 3, 2)))
def cov_and_corr(x, y, X):
    return np.cov(x, y), np.corrcoef(X.T), np.cov(X, rowvar=False, ddof=0)


@wild(lambda r: (np.where(r.random((5, 6)) < 0.3, np.nan, normal(r, 5, 6)),),
      lambda r: (np.array([[np.nan, 1.0], [2.0, 3.0]], np.float32),))
def nan_reductions(x):
    return (np.nanmean(x, axis=1), np.nanmedian(x, axis=0), np.nanvar(x), np.nansum(x, axis=0),
            np.nanargmax(x, axis=1), np.nanpercentile(x, 50))


@wild(lambda r: (normal(r, 10, 3), r.random(10)), lambda r: (normal(r, 2, 2), np.array([1.0, 3.0])))
def weighted_stats(x, w):
    mean = np.average(x, axis=0, weights=w)
    var = np.average((x - mean) ** 2, axis=0, weights=w)
    return mean, var


@wild(lambda r: (r.random(50),), lambda r: (r.random(1).astype(np.float32),))
def histogram_density(x):
    counts, edges = np.histogram(x, bins=8, range=(0.0, 1.0))
    dens, _ = np.histogram(x, bins=8, range=(0.0, 1.0), density=True)
    return counts, edges, dens


@wild(lambda r: (normal(r, 21),), lambda r: (normal(r, 6, 4).T,))
def median_abs_deviation(x):
    med = np.median(x, axis=-1, keepdims=True)
    return np.median(np.abs(x - med), axis=-1)


@wild(lambda r: (normal(r, 20), r.integers(0, 20, (5, 20))),
      lambda r: (normal(r, 3, dtype="float32"), r.integers(-3, 3, (2, 3))))
def bootstrap_means(x, idx):
    return x[idx].mean(axis=1)


@wild(lambda r: (normal(r, 100),), lambda r: (r.exponential(size=(7, 4)),))
def skew_kurtosis(x):
    m = x.mean(axis=0)
    d = x - m
    s2 = (d ** 2).mean(axis=0)
    return (d ** 3).mean(axis=0) / s2 ** 1.5, (d ** 4).mean(axis=0) / s2 ** 2 - 3.0


# ---- signal processing ------------------------------------------------------------------------

@wild(lambda r: (normal(r, 12),), lambda r: (normal(r, 6, 5).T,),
      lambda r: (r.integers(-9, 9, 7).astype(np.int8),))
def diffs(x):
    return np.diff(x, n=2, axis=0), np.diff(x, axis=0, prepend=0), np.diff(x, append=x[-1:])


@wild(lambda r: (normal(r, 20), np.array([0.25, 0.5, 0.25])),
      lambda r: (normal(r, 4, dtype="float32"), np.ones(5, np.float32) / 5))
def convolve_modes(x, k):
    return np.convolve(x, k, mode="same"), np.convolve(x, k, mode="valid"), np.convolve(x, k)


@wild(lambda r: (normal(r, 20), 4), lambda r: (r.integers(0, 100, 9), 3))
def moving_sum_cumsum(x, w):
    c = np.cumsum(x)
    c[w:] = c[w:] - c[:-w]
    return c[w - 1:]


@wild(lambda r: (np.sin(np.linspace(0, 20, 64)),), lambda r: (normal(r, 7),))
def fft_power(x):
    spec = np.fft.rfft(x)
    power = np.abs(spec) ** 2
    return power, np.argmax(power[1:]) + 1


@wild(lambda r: (normal(r, 30),), lambda r: (np.array([1.0, -1.0, 0.0, 2.0]),),
      lambda r: (np.zeros(0),))
def zero_crossings(x):
    return np.count_nonzero(np.diff(np.sign(x))), np.flatnonzero(x[:-1] * x[1:] < 0)


@wild(lambda r: (normal(r, 25),), lambda r: (normal(r, 12, dtype="float32")[::2],))
def peak_detect(x):
    peaks = (x[1:-1] > x[:-2]) & (x[1:-1] > x[2:])
    return np.nonzero(peaks)[0] + 1, x[1:-1][peaks]


@wild(lambda r: (normal(r, 30), 3), lambda r: (normal(r, 8, 6), 2))
def decimate_mean(x, q):
    n = x.shape[0] // q * q
    return x[:n].reshape(-1, q, *x.shape[1:]).mean(axis=1), x[::q]


@wild(lambda r: (normal(r, 16, dtype="float16"),), lambda r: (normal(r, 3, 4, dtype="float16"),))
def float16_signal(x):
    y = (x - x.mean()) / (x.std() + np.float16(1e-3))
    return y, x * 2 + 1, np.abs(x).max(), x.astype(np.float32).sum()


# ---- geometry ---------------------------------------------------------------------------------

@wild(lambda r: (normal(r, 6, 3), normal(r, 4, 3)),
      lambda r: (normal(r, 5, 2, dtype="float32"), normal(r, 2, 5, dtype="float32").T))
def pairwise_norms(a, b):
    d = np.linalg.norm(a[:, np.newaxis, :] - b[np.newaxis, :, :], axis=-1)
    return d, d.min(axis=1), np.argmin(d, axis=0)


@wild(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 3), normal(r, 3)))
def cross_products(a, b):
    c = np.cross(a, b)
    return c, np.einsum("...i,...i->...", c, a)


@wild(lambda r: (normal(r, 6, 3), normal(r, 6, 3), normal(r, 6, 3)))
def triangle_areas(v0, v1, v2):
    e1, e2 = v1 - v0, v2 - v0
    n = np.stack([e1[:, 1] * e2[:, 2] - e1[:, 2] * e2[:, 1],
                  e1[:, 2] * e2[:, 0] - e1[:, 0] * e2[:, 2],
                  e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]], axis=1)
    return 0.5 * np.sqrt((n ** 2).sum(axis=1))


@wild(lambda r: (normal(r, 10, 2), 0.3), lambda r: (normal(r, 1, 2, dtype="float32"), 1.0))
def rotate_points(pts, theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    return pts @ R.T


@wild(lambda r: (np.cos(np.linspace(0, 7, 9)), np.sin(np.linspace(0, 7, 9))),
      lambda r: (np.array([0.0, 1.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0, 1.0])))
def shoelace_area(x, y):
    return 0.5 * np.abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))


@wild(lambda r: (normal(r, 12, 3), -np.ones(3), np.ones(3)),
      lambda r: (normal(r, 0, 2), np.zeros(2), np.ones(2)))
def points_in_box(p, lo, hi):
    inside = np.all((p >= lo) & (p <= hi), axis=1)
    return inside, p[inside], np.any(p > hi, axis=0)


@wild(lambda r: (normal(r, 7, 3), normal(r, 7, 3)), lambda r: (normal(r, 3), normal(r, 3)))
def angles_between(u, v):
    cos = np.sum(u * v, axis=-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@wild(lambda r: (normal(r, 9, 3),), lambda r: (normal(r, 3, 9).T,))
def centroid_and_bbox(p):
    return p.mean(axis=0), p.min(axis=0), p.max(axis=0), np.ptp(p, axis=0)


# ---- bit tricks -------------------------------------------------------------------------------

@wild(lambda r: (r.integers(0, 2 ** 32, 20, dtype=np.uint32),),
      lambda r: (r.integers(0, 2 ** 63, 5, dtype=np.uint64),),
      lambda r: (r.integers(-128, 128, 6, dtype=np.int8),))
def popcounts(x):
    return np.bitwise_count(x), np.bitwise_count(x).sum()


@wild(lambda r: (r.integers(0, 2 ** 32, 16, dtype=np.uint32), 3),
      lambda r: (r.integers(0, 2 ** 32, 4, dtype=np.uint32), 31))
def rotate_left_u32(x, k):
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


@wild(lambda r: (r.integers(0, 2 ** 32, 16, dtype=np.uint32),),
      lambda r: (r.integers(0, 2 ** 32, 3, dtype=np.uint32)[::-1],))
def parity_u32(x):
    x = x ^ (x >> 16)
    x ^= x >> 8
    x ^= x >> 4
    x ^= x >> 2
    x ^= x >> 1
    return x & 1


@wild(lambda r: (r.integers(-128, 128, 12, dtype=np.int8),
                 r.integers(-128, 128, 12, dtype=np.int8)),
      lambda r: (r.integers(-128, 128, (3, 4), dtype=np.int8),
                 r.integers(-128, 128, (4, 3), dtype=np.int8).T))
def int8_wraparound(a, b):
    return a + b, a * np.int8(3), a * 2, -a, np.abs(a), a.sum(), a.sum(dtype=np.int8)


@wild(lambda r: (img(r, 10),), lambda r: (img(r, 2, 3),))
def unpack_bits(x):
    bits = (x[..., None] >> np.arange(8, dtype=np.uint8)) & 1
    return bits.astype(np.uint8), np.unpackbits(x[..., None], axis=-1)


@wild(lambda r: (img(r, 10),), lambda r: (r.integers(-128, 128, 5, dtype=np.int8),),
      lambda r: (r.random(6) > 0.5,))
def invert_bits(x):
    return ~x, np.invert(x), x ^ x, np.bitwise_and(x, x)


@wild(lambda r: (r.integers(0, 2 ** 16, 10).astype(np.uint32),
                 r.integers(0, 2 ** 16, 10).astype(np.uint32)),)
def morton_interleave(x, y):
    def spread(v):
        v = (v | (v << 8)) & np.uint32(0x00FF00FF)
        v = (v | (v << 4)) & np.uint32(0x0F0F0F0F)
        v = (v | (v << 2)) & np.uint32(0x33333333)
        v = (v | (v << 1)) & np.uint32(0x55555555)
        return v
    return spread(x) | (spread(y) << 1)


@wild(lambda r: (r.integers(0, 2 ** 62, 8, dtype=np.int64), 5),
      lambda r: (r.integers(0, 2 ** 15, 4).astype(np.int16), 3))
def shifts_signed(x, k):
    return x >> k, x << k, np.right_shift(-x, 1), np.left_shift(x, np.int8(1))


@wild(lambda r: (normal(r, 8, dtype="float32"),), lambda r: (normal(r, 2, 3, dtype="float32"),))
def float_bits(x):
    bits = x.view(np.uint32)
    sign = bits >> 31
    exponent = ((bits >> 23) & 0xFF).astype(np.int32) - 127
    return sign, exponent, np.frexp(x)[1]


# ---- data munging -----------------------------------------------------------------------------

@wild(lambda r: (r.integers(0, 6, 25),), lambda r: (np.array([3.0, np.nan, 1.0, 3.0]),),
      lambda r: (np.zeros(0, np.int32),))
def unique_stats(x):
    vals, idx, inv, counts = np.unique(x, return_index=True, return_inverse=True,
                                       return_counts=True)
    return vals, idx, inv, counts


@wild(lambda r: (np.sort(r.integers(0, 10, 15)), r.integers(-1, 12, 8)),
      lambda r: (np.array([1.0, 2.0, 2.0, 3.0]), np.array([2.0, 0.5, np.nan])))
def searchsorted_sides(a, v):
    return np.searchsorted(a, v, side="left"), np.searchsorted(a, v, side="right")


@wild(lambda r: (r.random(20) * 10, np.array([0.0, 2.5, 5.0, 7.5, 10.0])),
      lambda r: (np.array([[1.0, 5.0], [7.5, 12.0]]), np.array([10.0, 5.0, 0.0])))
def digitize_right(x, bins):
    return np.digitize(x, bins, right=True), np.digitize(x, bins)


@wild(lambda r: (normal(r, 20),), lambda r: (normal(r, 4, 5, dtype="float32").T,),
      lambda r: (np.array(0.5),))
def select_chain(x):
    grade = np.select([x < -1, x < 0, x < 1], [0, 1, 2], default=3)
    w = np.where(x > 1, 1.0, np.where(x < -1, -1.0, x))
    return grade, w


@wild(lambda r: (normal(r, 12), -0.5, 0.5), lambda r: (normal(r, 3, 4, dtype="float32"), 0, 1))
def clip_in_place(x, lo, hi):
    np.clip(x, lo, hi, out=x)
    return x.sum()


@wild(lambda r: (normal(r, 10),), lambda r: (np.array([np.inf, -1.0, np.nan, 2.0]),),
      lambda r: (normal(r, 4, 6).T,))
def mask_assign_chain(x):
    y = x.copy()
    y[y > 0] += 1
    y[~np.isfinite(y)] = 0
    y[(y < -1) | (y > 2)] *= 0.5
    return y


@wild(lambda r: (normal(r, 8, 5),), lambda r: (np.arange(12).reshape(3, 4),))
def negative_fancy_index(x):
    return x[[-1, 0, -2]], x[:, [-1, 0]], x[-1], x[np.array([-1, -1, 0])][:, -2:]


@wild(lambda r: (normal(r, 4, 3), normal(r, 5)), lambda r: (normal(r, 1, 1), normal(r, 2)))
def newaxis_and_ellipsis(x, y):
    outer = x[..., None] * y[None, None, ...]
    return outer, x[None].shape[0] + outer[..., 0], x[:, np.newaxis, :].sum(axis=1)


@wild(lambda r: (r.integers(-100, 100, (6, 5)).astype(np.int8),),
      lambda r: (r.integers(0, 200, (3, 4)).astype(np.uint8).T,),
      lambda r: (normal(r, 4, 5, dtype="float32"),))
def reduction_dtypes(x):
    return (x.sum(axis=0, dtype=np.int64), np.mean(x, dtype=np.float64),
            x.sum(axis=1, keepdims=True), np.prod(x, axis=0, dtype=np.float64),
            x.cumsum(axis=1, dtype=np.int32), x.mean(axis=-1))


@wild(lambda r: (normal(r, 10) * 300,), lambda r: (normal(r, 3, 4, dtype="float32") * 100,))
def astype_chain(x):
    return (x.astype(np.float32).astype(np.int16).astype(np.uint8),
            x.astype(np.int64).astype(np.float16), x.astype(bool).astype(np.int8),
            np.asarray(x, dtype=np.float32))


@wild(lambda r: (normal(r, 5, dtype="float32"), r.integers(-5, 5, 5).astype(np.int32)),
      lambda r: (normal(r, 2, 2, dtype="float16"), r.integers(0, 9, (2, 2)).astype(np.uint8)))
def nep50_scalars(f, i):
    return (f * 2.5, f + np.float64(1), i + 1.5, i * 2, i + np.int64(3), f + i,
            np.sqrt(2.0) * f, f ** 2, i // 2, i % 3, 1 / f)


@wild(lambda r: (np.array(2.5), np.array(3)), lambda r: (np.array(-1.0, np.float32), np.array(0)))
def zero_d_inputs(x, n):
    return x * n, np.sqrt(np.abs(x)), x.sum(), np.maximum(x, n), (x > 0) & (n > 1), x[()] + 1


@wild(lambda r: (np.zeros((0, 3)),), lambda r: (np.zeros((4, 0), np.float32),),
      lambda r: (normal(r, 2, 3),))
def empty_inputs(x):
    return (x.sum(axis=0), x.mean(axis=1), x.prod(), np.cumsum(x, axis=1), x.T @ x,
            np.maximum.reduce(x, axis=0, initial=-np.inf))


@wild(lambda r: (np.zeros((0, 3)),), lambda r: (normal(r, 2, 3),))
def max_of_empty_raises(x):
    return x.max(axis=0)


@wild(lambda r: (r.integers(-7, 8, 12), r.integers(-3, 4, 12)),
      lambda r: (r.integers(-7, 8, 6).astype(np.int8), r.integers(-3, 4, 6).astype(np.int8)))
def int_division_edges(a, b):
    with np.errstate(divide="ignore"):
        return a // b, a % b, np.fmod(a, b), np.divmod(a, 3)


@wild(lambda r: (normal(r, 15) * 10,), lambda r: (np.array([0.5, 1.5, 2.5, -0.5, -2.5]),),
      lambda r: (normal(r, 4, dtype="float32") * 100,))
def rounding(x):
    return np.round(x, 2), np.around(x, -1), np.rint(x), np.floor(x), np.trunc(x), np.fix(x)


@wild(lambda r: (normal(r, 10), normal(r, 10)),
      lambda r: (np.array([0.0, -0.0, np.nan]), np.ones(3)))
def sign_functions(x, y):
    return np.sign(x), np.copysign(y, x), np.heaviside(x, 0.5), np.signbit(x)


@wild(lambda r: (r.random((6, 4)) > 0.3,), lambda r: (r.random((0, 2)) > 0.5,),
      lambda r: (r.random((5, 3)) > 0.9,))
def boolean_reductions(m):
    return (m.any(axis=0), m.all(axis=1), np.logical_and.reduce(m, axis=0), m.sum(),
            m.mean(axis=0), np.count_nonzero(m, axis=1), np.logical_or.accumulate(m, axis=1))


@wild(lambda r: (normal(r, 5, 6), r.integers(0, 6, (5, 2))),
      lambda r: (normal(r, 3, 3).T, np.array([[2], [0], [1]])))
def take_put_along_axis(x, idx):
    y = x.copy()
    got = np.take_along_axis(x, idx, axis=1)
    np.put_along_axis(y, idx, -1.0, axis=1)
    return got, y


@wild(lambda r: (r.integers(0, 10, 15), [1, 3, 5]), lambda r: (np.arange(6.0), [2.0]))
def isin_filter(x, keep):
    m = np.isin(x, keep)
    return m, x[~m], np.argwhere(m)


@wild(lambda r: (normal(r, 2, 3, 4),), lambda r: (normal(r, 4, 3, 2).transpose(2, 1, 0),))
def axis_shuffles(x):
    return (np.moveaxis(x, 0, -1), x.swapaxes(0, 2).reshape(x.shape[2], -1),
            np.transpose(x, (1, 0, 2)) + 1, x.reshape(-1), x.ravel(order="F"))


@wild(lambda r: (normal(r, 4, 3), normal(r, 4, 3)), lambda r: (normal(r, 2, 5), normal(r, 2, 5)))
def einsum_forms(a, b):
    return (np.einsum("ij,ij->i", a, b), np.einsum("ij->", a), np.einsum("ij->ji", a),
            np.einsum("ij,kj->ik", a, b), np.einsum("i,i->", a[:, 0], b[:, 0]))


@wild(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 3, 5, dtype="float32"),))
def norm_variants(a):
    return (np.linalg.norm(a), np.linalg.norm(a, ord=1), np.linalg.norm(a, np.inf),
            np.linalg.norm(a, "fro"), np.linalg.norm(a, ord=1, axis=0),
            np.linalg.norm(a[0], ord=np.inf))


@wild(lambda r: (r.integers(-3, 4, 8),), lambda r: (r.integers(-3, 4, 5).astype(np.int8),))
def integer_powers(x):
    return x ** 2, np.power(x, 3), np.abs(x) ** np.abs(x), 2 ** np.abs(x), x ** 2.0


@wild(lambda r: (r.integers(0, 10, 8),), lambda r: (r.random(5) > 0.5,),
      lambda r: (normal(r, 2, 3, dtype="float32"),))
def mean_of_ints_and_bools(x):
    return x.mean(), np.mean(x, axis=0), x.var(), np.median(x), x.std(axis=0)


@wild(lambda r: (normal(r, 5),), lambda r: (r.integers(0, 5, 3).astype(np.int32),))
def like_constructors(x):
    a = np.full_like(x, 7)
    b = np.zeros_like(x, dtype=bool)
    c = np.ones_like(x, dtype=np.float32)
    d = np.empty_like(x)
    d[...] = x[::-1]
    return a, b, c, d


@wild(lambda r: (normal(r, 10),), lambda r: (np.array([np.nan, 1.0, np.nan]),),
      lambda r: (np.array([2.0, 2.0, 1.0], np.float32),))
def argmax_nan_ties(x):
    return np.argmax(x), np.argmin(x), np.max(x), np.fmax.reduce(x), np.nanmax(x)


@wild(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def build_matrix(v):
    n = v.shape[0]
    m = np.eye(n) * 2 - np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)
    return m @ v, np.diag(v[:, 0]), np.trace(m), np.trace(m, offset=1), np.trace(v, -1)


@wild(lambda r: (normal(r, 10), r.integers(0, 3, 10)),
      lambda r: (normal(r, 4, dtype="float32"), np.array([2, 2, 2, 2])))
def group_means(vals, keys):
    sums = np.bincount(keys, weights=vals, minlength=3)
    counts = np.bincount(keys, minlength=3)
    with np.errstate(invalid="ignore"):
        return sums / counts


@wild(lambda r: (normal(r, 6, 4), 2), lambda r: (normal(r, 3, 2), 0))
def column_ops(x, j):
    x[:, j] = x[:, j] * 10
    x[x[:, j] < 0, j] = 0
    return x


@wild(lambda r: (normal(r, 10),), lambda r: (normal(r, 1, dtype="float32"),))
def python_scalars_out(x):
    total = float(x.sum())
    n = int(x.size)
    return total / n, x / total, round(float(x.max()), 3)


@wild(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 2, 2),))
def lexsort_rows(x):
    order = np.lexsort((x[:, 1], x[:, 0]))
    return x[order], np.sort(x, axis=0)[::-1]


@wild(lambda r: (r.integers(0, 100, 20), r.integers(0, 100, 12)),
      lambda r: (np.arange(5), np.arange(3, 9)))
def set_operations(a, b):
    return np.intersect1d(a, b), np.union1d(a, b), np.setdiff1d(a, b)


@wild(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 2, 3, dtype="float32").T,))
def concatenations(x):
    return (np.concatenate([x, -x], axis=1), np.stack([x, x * 2], axis=-1),
            np.vstack([x[0], x[-1]]), np.hstack([x[:, :1], x[:, -1:]]), np.r_[x[0], 0.0])


@wild(lambda r: (img(r, 7, 5),), lambda r: (r.integers(-128, 128, 9, dtype=np.int8),),
      lambda r: (np.array([0, 2 ** 64 - 1], np.uint64),))
def wide_comparisons(x):
    return (x > -1, x == 300, x < 1000, -1 < x, x != 2 ** 63, np.clip(x, 10, 300),
            np.clip(x, -5, 100))


@wild(lambda r: (normal(r, 5),), lambda r: (normal(r, 3, dtype="float32"),))
def builtin_round(x):
    return round(x.mean(), 2), round(float(x.max()) * 10)


@wild(lambda r: (normal(r, 4, 5), r.random((4, 5)) > 0.5),
      lambda r: (normal(r, 0, 5), np.zeros((0, 5), bool)),
      lambda r: (r.integers(-9, 9, (3, 4)).astype(np.int8), r.random((3, 4)) > 0.2))
def masked_reductions(x, m):
    return (np.sum(x, axis=0, where=m), np.max(x, axis=0, where=m, initial=-100),
            x.min(axis=0, initial=50), np.prod(x, where=m), np.sum(x, initial=7))


@wild(lambda r: (normal(r, 6, 5),), lambda r: (r.integers(-9, 9, (4, 4)),),
      lambda r: (normal(r, 5, 6).T,), lambda r: (np.zeros((0, 3)),))
def masked_updates(x):
    y = x.copy()
    m = y > 0
    y[m] *= 2
    y[y < -2] = -2
    y[m] = y[m] - 1
    z = x.copy()
    z[z[:, 0] > 0] += 10
    return y, z, np.where(m, y, 0).sum()


@wild(lambda r: (normal(r, 6),), lambda r: (normal(r, 2, 3),))
def seeded_noise(x):
    rng = np.random.default_rng(42)
    noise = rng.normal(0.0, 0.1, size=x.shape)
    legacy = np.random.RandomState(7).rand(*x.shape)
    keep = np.random.Generator(np.random.PCG64(3)).random(x.shape) > 0.5
    return x + noise, x * legacy, np.where(keep, x, 0.0), rng.permutation(len(x))


@wild(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 3),))
def flatten_and_write(x):
    y = x.T.reshape(-1)
    y[0] = 100.0
    z = x.ravel()
    z[-1] = -100.0
    w = x.reshape(x.shape[0], 2, -1)
    w[0, 0, 0] = 7.0
    return x, y, z, np.mean(x, axis=0, where=x > 0)


@wild(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 4, 6).T,), lambda r: (normal(r, 2, 4),))
def train_test_split(X):
    n = X.shape[0]
    train, test = np.split(X, [n * 2 // 3])
    folds = np.array_split(X, 3, axis=0)
    left, right = np.hsplit(X, 2)
    return train.mean(0) - test.mean(0), [f.sum() for f in folds], left * right


@wild(lambda r: (r.integers(-5, 5, 6).astype(np.int16),), lambda r: (img(r, 6),),
      lambda r: (img(r, 2, 3),))
def assignment_conversions(x):
    y = x.copy()
    y[y > 2] = 2.7  # an unsafe float -> int cast, as NumPy
    z = np.full(x.shape, 7, dtype=x.dtype)
    z[[]] = 1
    w = x.copy()
    w[w > 3] = 300  # fits int16; NumPy raises OverflowError for uint8
    return y, z, x[[]], np.full_like(x, x.max()), w


@wild(lambda r: (img(r, 8),), lambda r: (r.integers(-128, 128, 8).astype(np.int8),),
      lambda r: (normal(r, 8, dtype="float32"),))
def sentinel_values(x):
    marked = np.where(x > 50, x, -1)  # -1 wraps to 255 for uint8, as NumPy's unsafe cast
    graded = np.select([x > 100, x > 0], [x, 0], default=-1)
    return marked, graded, np.where(x > 0, 1.5, x)


def tolerance(dtype: np.dtype) -> float:
    return {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}.get(np.dtype(dtype).name, 1e-9)


def same(got: Any, want: Any, floor: float = 1e-9) -> None:
    """Results equal NumPy's: structure, Python scalar types, ndarray or NumPy scalar, dtypes,
    shapes, values (within the tolerance of their dtype, at least `floor`: the least precise
    input's, whose intermediates a wider result may carry, summed in another order than NumPy's)."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (type(got), type(want))
        for g, w in zip(got, want, strict=True):
            same(g, w, floor)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want), (got, want)
        for k, w in want.items():
            same(got[k], w, floor)
    elif isinstance(want, str):
        assert got == want, (got, want)
    elif type(want) in (bool, int, float):  # Python scalars (not NumPy's float64)
        assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    else:
        assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), (  # 0-d: an array
            f"{type(got).__name__} != {type(want).__name__}")  # or a NumPy scalar, as NumPy's
        tol = max(floor, tolerance(np.asarray(want).dtype))
        assert_matches(got, want, rtol=tol, atol=tol)


def same_views(got: Any, want: Any, mine: tuple[Any, ...], theirs: tuple[Any, ...]) -> None:
    """Each array result shares memory with the same arguments as NumPy's result does: a view
    of an argument is a view of the caller's array, a copy is not a view."""
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want, strict=True):
            same_views(g, w, mine, theirs)
    elif isinstance(want, dict):
        for k, w in want.items():
            same_views(got[k], w, mine, theirs)
    elif isinstance(want, np.ndarray):
        for i, (m, t) in enumerate(zip(mine, theirs, strict=True)):
            if isinstance(t, np.ndarray):
                assert np.shares_memory(got, m) == np.shares_memory(want, t), \
                    f"result shares memory with argument {i}: {np.shares_memory(want, t)} in NumPy"


def run_case(name: str, cases: dict[str, Any] = CASES, *, warm: bool = False,
             views: bool = False, warns: bool = False) -> set[str]:
    """Run `name` on all its inputs under one jitted function; the graph breaks met. `warm`:
    then once more on every input, compiling nothing new; `views`: results alias arguments as
    NumPy's do; `warns`: every RuntimeWarning Stax gives is one NumPy gives."""
    fn, inputs = cases[name]
    jitted = stax.jit(fn)
    breaks: set[str] = set()
    for rerun in (False, True) if warm else (False,):
        compiles = jitted.cache_info()[1]
        for k, make in enumerate(inputs):  # made twice: copies would lose transposed layouts
            theirs, mine = make(np.random.default_rng(k)), make(np.random.default_rng(k))
            with warnings.catch_warnings(record=True) as numpy_caught:
                warnings.simplefilter("always", RuntimeWarning)
                try:
                    want = fn(*theirs)
                except Exception as e:  # noqa: BLE001 - Stax must raise the same class
                    with pytest.raises(type(e)):
                        jitted(*mine)
                    continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = jitted(*mine)
            breaks |= {str(w.message).split(": ", 2)[-1] for w in caught
                       if issubclass(w.category, GraphBreakWarning)}
            if warns:
                extra = ({str(w.message) for w in caught if w.category is RuntimeWarning}
                         - {str(w.message) for w in numpy_caught})
                assert not extra, f"warnings NumPy does not give: {sorted(extra)}"
            same(got, want, max((tolerance(a.dtype) for a in theirs
                                 if isinstance(a, np.ndarray)), default=1e-9))
            for m, t in zip(mine, theirs, strict=True):
                if isinstance(m, np.ndarray):
                    same(m, t)
            if views:
                same_views(got, want, mine, theirs)
        assert not rerun or jitted.cache_info()[1] == compiles, "compiled again when warm"
    return breaks


@pytest.mark.parametrize("name", sorted(CASES))
def test_wild_function_matches_numpy(name: str) -> None:
    run_case(name)


def main(names: list[str], cases: dict[str, Any] = CASES, **checks: bool) -> None:
    """Classify the functions named (all by default): compiled / break / FAIL (with the
    first line of the error)."""
    counts = {"compiled": 0, "break": 0, "FAIL": 0}
    for name in names or sorted(cases):
        try:
            breaks = run_case(name, cases, **checks)
            kind, detail = ("break" if breaks else "compiled"), "; ".join(sorted(breaks))
        except BaseException as e:  # noqa: BLE001 - a failure of any kind is reported
            if isinstance(e, KeyboardInterrupt):
                raise
            kind, detail = "FAIL", f"{type(e).__name__}: {str(e).strip().splitlines()[0:1]}"
        counts[kind] += 1
        print(f"{kind:9s} {name} {detail}", flush=True)
    print(counts, f"of {len(names or cases)}")


if __name__ == "__main__":
    main(sys.argv[1:])
