"""A sixteenth wave of the wild corpus (s18 HUNT11): ordinary NumPy programs in the domains and
idioms the first fifteen waves use least — signal processing (windows, np.convolve modes,
np.correlate lags, FFT filtering and FFT convolution, IIR loops, detrending by lstsq);
statistics (percentile/quantile/median along axes and methods, nan-quantiles, np.cov with
bias/aweights, corrcoef, histogram2d, digitize with decreasing bins, ECDFs, Mahalanobis
distances); image (np.pad modes on uint8, rot90 k/axes, flips, gradients, rolls, integral
images, histogram equalization); finance (cumprod wealth, drawdowns, rolling windows with
np.lib.stride_tricks.sliding_window_view, EMA loops in a nested function); physics (n-body by
broadcasting, velocity Verlet and heat steps in loops, while loops on counters); geometry
(cross products, norms, solve/lstsq/eigh/eigvals/svd/det/slogdet/pinv); integer work
(np.unique with counts/index/inverse, bincount, searchsorted with sorter, lexsort, stable
argsort, np.add.at co-occurrence); structured control flow (while loops on array values, early
returns, try/except around LinAlgError and reshape errors, helpers, closures, recursion,
default arguments, *args, dataclass/dict/tuple inputs); dtypes (uint8, int16, int8/uint8
promotion, uint64, float16, float32 with NEP 50 scalars, complex64/128, bool, 0-d and empty);
NumPy 2 names (np.concat, permute_dims, astype, isdtype, unique_values/counts/inverse/all,
vecdot, matrix_transpose, cumulative_sum/prod, matvec/vecmat, np.linalg's array-API names,
acos/pow aliases, bitwise_left_shift, unstack).

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild16 [names]` prints each function's class.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints
from corpus.test_corpus_wild14 import pos, u8

CASES16: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES16)


# ---- signal processing -----------------------------------------------------------------------


@case(lambda r: (normal(r, 32),), lambda r: (normal(r, 5),))
def hann_window_energy(x):
    w = np.hanning(len(x))
    y = x * w
    return y, np.sum(y**2) / np.sum(w**2), np.hamming(len(x)).sum()


@case(lambda r: (normal(r, 40), normal(r, 5)), lambda r: (normal(r, 3), normal(r, 3)))
def convolve_modes_lengths(x, k):
    full = np.convolve(x, k)
    valid = np.convolve(x, k, mode="valid")
    same = np.convolve(x, k, mode="same")
    return full, valid, same, len(full) - len(valid)


@case(lambda r: (normal(r, 30), normal(r, 30)), lambda r: (normal(r, 4), normal(r, 4)))
def xcorr_full_mode_lag(a, b):
    c = np.correlate(a - a.mean(), b - b.mean(), mode="full")
    lag = np.argmax(c) - (len(b) - 1)
    return c, lag, np.correlate(a, b)


@case(lambda r: (normal(r, 64),), lambda r: (normal(r, 8),))
def fft_lowpass_filter(x):
    X = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), d=0.1)
    X[f > 2.0] = 0
    return np.fft.irfft(X, n=len(x)), np.abs(X).max()


@case(lambda r: (normal(r, 50), normal(r, 7)), lambda r: (normal(r, 6), normal(r, 2)))
def fft_convolution_matches_direct(x, k):
    n = len(x) + len(k) - 1
    y = np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(k, n), n)
    return y, np.allclose(y, np.convolve(x, k))


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 4),))
def moving_average_cumsum_valid(x):
    w = 3
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[w:] - c[:-w]) / w, np.convolve(x, np.ones(w) / w, mode="valid")


@case(lambda r: (normal(r, 25),), lambda r: (normal(r, 2),))
def one_pole_lowpass_loop(x):
    y = np.empty_like(x)
    acc = 0.0
    for i in range(len(x)):
        acc = 0.9 * acc + 0.1 * x[i]
        y[i] = acc
    return y


@case(lambda r: (normal(r, 48),), lambda r: (normal(r, 16),))
def power_spectrum_peak(x):
    t = np.arange(len(x))
    s = x + 3 * np.sin(2 * np.pi * 4 * t / len(x))
    p = np.abs(np.fft.fft(s)) ** 2 / len(s)
    freqs = np.fft.fftfreq(len(s))
    half = p[: len(s) // 2]
    return freqs[np.argmax(half)], half.sum(), np.fft.fftshift(freqs)[:3]


@case(lambda r: (normal(r, 30),), lambda r: (normal(r, 3),))
def zero_crossings_rate(x):
    s = np.signbit(x)
    zc = np.count_nonzero(s[1:] != s[:-1])
    return zc, zc / max(len(x) - 1, 1), np.flatnonzero(np.diff(s.astype(np.int8)))


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 1),))
def envelope_by_abs_max_filter(x):
    a = np.abs(x)
    p = np.pad(a, 2, mode="edge")
    env = np.max(np.stack([p[i : i + len(a)] for i in range(5)]), axis=0)
    return env, env >= a


@case(lambda r: (normal(r, 24),), lambda r: (normal(r, 6),))
def bartlett_blackman_kaiser(x):
    n = len(x)
    return x * np.bartlett(n), x * np.blackman(n), x * np.kaiser(n, 5.0)


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 3),))
def upsample_zero_stuff(x):
    y = np.zeros(2 * len(x))
    y[::2] = x
    k = np.array([0.5, 1.0, 0.5])
    return np.convolve(y, k, mode="same"), y.reshape(-1, 2)[:, 0]


@case(lambda r: (normal(r, 4, 36),), lambda r: (normal(r, 1, 9),))
def batched_fft_magnitude(X):
    F = np.fft.fft(X, axis=1)
    return np.abs(F), np.angle(F[:, 1]), np.fft.ifft(F, axis=1).real


@case(lambda r: (normal(r, 33),), lambda r: (normal(r, 2),))
def detrend_linear(x):
    t = np.arange(len(x), dtype=float)
    A = np.vstack([t, np.ones_like(t)]).T
    coef = np.linalg.lstsq(A, x, rcond=None)[0]
    return x - A @ coef, coef


@case(lambda r: (normal(r, 30),), lambda r: (normal(r, 5),))
def savgol_like_polyfit_window(x):
    out = x.copy()
    for i in range(2, len(x) - 2):
        c = np.polyfit(np.arange(-2, 3), x[i - 2 : i + 3], 2)
        out[i] = c[-1]
    return out


# ---- statistics ------------------------------------------------------------------------------


@case(lambda r: (normal(r, 6, 9),), lambda r: (normal(r, 1, 3),))
def percentile_along_axes(X):
    return (
        np.percentile(X, [10, 50, 90], axis=1),
        np.quantile(X, 0.25, axis=0),
        np.median(X, axis=-1),
        np.percentile(X, 75),
    )


@case(lambda r: (normal(r, 11),), lambda r: (np.array([1.0, np.nan, 3.0]),))
def nan_quantiles(x):
    return np.nanpercentile(x, 50), np.nanquantile(x, [0.1, 0.9]), np.nanmedian(x)


@case(lambda r: (normal(r, 3, 20),), lambda r: (normal(r, 2, 2),))
def cov_corrcoef_rows(X):
    C = np.cov(X)
    R = np.corrcoef(X)
    return C, R, np.cov(X, bias=True), np.cov(X.T, rowvar=False)


@case(lambda r: (normal(r, 40), normal(r, 40)), lambda r: (normal(r, 3), normal(r, 3)))
def histogram2d_fixed_range_total(x, y):
    H, xe, ye = np.histogram2d(x, y, bins=4, range=[[-2, 2], [-2, 2]])
    return H, xe, ye, H.sum()


@case(lambda r: (normal(r, 25),), lambda r: (normal(r, 0),))
def digitize_decreasing_bins(x):
    bins = np.array([2.0, 1.0, 0.0, -1.0])
    return np.digitize(x, bins), np.digitize(x, bins, right=True)


@case(lambda r: (normal(r, 50),), lambda r: (normal(r, 4),))
def moments_third_fourth_ddof(x):
    m = x.mean()
    d = x - m
    s2 = (d**2).mean()
    return (d**3).mean() / s2**1.5, (d**4).mean() / s2**2 - 3, np.std(x, ddof=1)


@case(lambda r: (normal(r, 30), normal(r, 30)), lambda r: (normal(r, 3), normal(r, 3)))
def ols_slope_intercept_r2(x, y):
    xm, ym = x.mean(), y.mean()
    beta = ((x - xm) * (y - ym)).sum() / ((x - xm) ** 2).sum()
    alpha = ym - beta * xm
    resid = y - (alpha + beta * x)
    return alpha, beta, 1 - (resid**2).sum() / ((y - ym) ** 2).sum()


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 2),))
def ecdf_values(x):
    s = np.sort(x)
    p = np.arange(1, len(s) + 1) / len(s)
    return s, p, np.searchsorted(s, 0.0, side="right") / max(len(s), 1)


@case(lambda r: (normal(r, 5, 8),), lambda r: (normal(r, 2, 1),))
def standardize_columns_ddof(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1)
    return (X - mu) / np.where(sd == 0, 1, sd), np.var(X, axis=1, keepdims=True)


@case(lambda r: (normal(r, 4, 6), pos(r, 6)), lambda r: (normal(r, 1, 2), pos(r, 2)))
def cov_aweights_and_average_axis1(X, w):
    return np.cov(X, aweights=w), np.average(X, axis=1, weights=w)


@case(lambda r: (normal(r, 15), normal(r, 15)), lambda r: (normal(r, 2), normal(r, 2)))
def rank_corr_double_argsort(a, b):
    ra = np.argsort(np.argsort(a))
    rb = np.argsort(np.argsort(b))
    return np.corrcoef(ra, rb)[0, 1], ra, rb


@case(lambda r: (ints(r, 0, 6, 30),), lambda r: (ints(r, 0, 2, 1),))
def mode_by_bincount(x):
    c = np.bincount(x)
    return np.argmax(c), c.max(), c / c.sum()


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 5),))
def trimmed_mean_sorted(x):
    s = np.sort(x)
    k = len(s) // 10
    return s[k : len(s) - k].mean(), np.ptp(x), np.percentile(x, [25, 75], method="nearest")


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 3, 3),))
def mahalanobis_distances(X):
    mu = X.mean(axis=0)
    C = np.cov(X, rowvar=False) + np.eye(X.shape[1])
    Ci = np.linalg.inv(C)
    d = X - mu
    return np.sqrt(np.einsum("ij,jk,ik->i", d, Ci, d))


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 0, 4),))
def quantile_methods_axis0(X):
    return (
        np.quantile(X, 0.3, axis=0, method="lower"),
        np.quantile(X, 0.3, axis=0, method="higher"),
        np.quantile(X, 0.3, axis=0, method="midpoint"),
    )


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 1),))
def histogram_density_and_weights(x):
    h, e = np.histogram(x, bins=4, density=True)
    hw, _ = np.histogram(x, bins=e, weights=np.abs(x))
    return h, e, hw, np.histogram_bin_edges(x, bins=3)


# ---- image -----------------------------------------------------------------------------------


@case(lambda r: (u8(r, 6, 7),), lambda r: (u8(r, 1, 1),))
def pad_modes_uint8(im):
    return (
        np.pad(im, 1, mode="reflect") if min(im.shape) > 1 else np.pad(im, 1),
        np.pad(im, ((1, 2), (0, 1)), mode="constant", constant_values=7),
        np.pad(im, 2, mode="wrap"),
        np.pad(im, 1, mode="symmetric"),
        np.pad(im, 1, mode="maximum"),
    )


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 3),))
def rot90_k_and_axes(X):
    return np.rot90(X), np.rot90(X, 2), np.rot90(X, -1), np.rot90(X, axes=(1, 0))


@case(lambda r: (u8(r, 3, 4, 3),), lambda r: (u8(r, 1, 2, 3),))
def flip_channels_rgb_bgr(im):
    return im[..., ::-1], np.flip(im, axis=0), np.flipud(im), np.fliplr(im), np.flip(im)


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 2, 2),))
def gradient_magnitude_image(X):
    gy, gx = np.gradient(X) if min(X.shape) > 1 else (X * 0, X * 0)
    return np.hypot(gx, gy), np.arctan2(gy, gx)


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 3),))
def gradient_spacing_edge_order(y):
    return np.gradient(y, 0.5), np.gradient(y, 2.0, edge_order=2) if len(y) > 2 else y


@case(lambda r: (u8(r, 8, 8),), lambda r: (u8(r, 2, 2),))
def roll_shift_difference(im):
    a = im.astype(np.int16)
    return a - np.roll(a, 1, axis=1), np.roll(im, (1, -1), axis=(0, 1)), np.roll(im, 3)


@case(lambda r: (u8(r, 6, 6),), lambda r: (u8(r, 2, 4),))
def uint8_add_saturate_by_clip(im):
    a = np.clip(im.astype(np.int16) + 60, 0, 255).astype(np.uint8)
    b = im + np.uint8(60)  # wraps
    return a, b, (a >= b).all()


@case(lambda r: (u8(r, 8, 8),), lambda r: (u8(r, 4, 4),))
def downsample_mean_2x2(im):
    h, w = im.shape[0] // 2 * 2, im.shape[1] // 2 * 2
    blocks = im[:h, :w].reshape(h // 2, 2, w // 2, 2)
    return blocks.mean(axis=(1, 3)).astype(np.uint8), blocks.max(axis=(1, 3))


@case(lambda r: (u8(r, 5, 5),), lambda r: (u8(r, 1, 1),))
def nearest_upscale_repeat_kron(im):
    return np.repeat(np.repeat(im, 2, axis=0), 2, axis=1), np.kron(im, np.ones((2, 2), im.dtype))


@case(lambda r: (u8(r, 10, 10),), lambda r: (u8(r, 3, 3),))
def integral_image_box_sums(im):
    ii = np.pad(im.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    k = 2
    s = ii[k:, k:] - ii[:-k, k:] - ii[k:, :-k] + ii[:-k, :-k]
    return ii, s


@case(lambda r: (normal(r, 7, 7),), lambda r: (normal(r, 3, 3),))
def laplacian_by_slices(X):
    P = np.pad(X, 1, mode="edge")
    return P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4 * X


@case(lambda r: (r.random((4, 5, 3)),), lambda r: (r.random((1, 1, 3)),))
def rgb_max_min_saturation(im):
    mx = im.max(axis=-1)
    mn = im.min(axis=-1)
    s = np.where(mx > 0, (mx - mn) / np.where(mx > 0, mx, 1), 0)
    return mx, s, np.argmax(im, axis=-1)


@case(lambda r: (u8(r, 9, 9),), lambda r: (u8(r, 2, 2),))
def threshold_to_bool_and_back(im):
    m = im > 127
    return m, m.astype(np.uint8) * 255, np.count_nonzero(m, axis=0), ~m


@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 2, 2),))
def transpose_mirror_symmetrize(X):
    return (X + X.T) / 2, np.triu(X) + np.triu(X, 1).T, np.tril(X, -1)


@case(lambda r: (u8(r, 16, 16),), lambda r: (u8(r, 1, 5),))
def histogram_equalize_uint8(im):
    h = np.bincount(im.ravel(), minlength=256)
    cdf = h.cumsum()
    lut = np.round(255 * (cdf - cdf.min()) / max(cdf[-1] - cdf.min(), 1)).astype(np.uint8)
    return lut[im]


# ---- finance ---------------------------------------------------------------------------------


def prices16(r: np.random.Generator, n: int) -> np.ndarray:
    return 20 * np.exp(np.cumsum(0.03 * r.standard_normal(n)))


@case(lambda r: (prices16(r, 20),), lambda r: (prices16(r, 1),))
def cumprod_returns_wealth(p):
    ret = p[1:] / p[:-1] - 1
    wealth = np.cumprod(1 + ret)
    return wealth, wealth[-1] - 1 if len(wealth) else 0.0, np.prod(1 + ret)


@case(lambda r: (prices16(r, 30),), lambda r: (prices16(r, 3),))
def drawdown_fmax_accumulate(p):
    peak = np.maximum.accumulate(p)
    dd = (p - peak) / peak
    under = dd < 0
    return dd.min(), under.sum(), np.fmax.accumulate(dd)


@case(lambda r: (prices16(r, 25),), lambda r: (prices16(r, 5),))
def rolling_mean_sliding_window_view(p):
    w = np.lib.stride_tricks.sliding_window_view(p, 3)
    return w.mean(axis=1), w.max(axis=1) - w.min(axis=1), w.shape


@case(lambda r: (prices16(r, 30),), lambda r: (prices16(r, 4),))
def rolling_std_zscore_swv(p):
    win = 4
    w = np.lib.stride_tricks.sliding_window_view(p, win)
    mu, sd = w.mean(-1), w.std(-1, ddof=1)
    return (p[win - 1 :] - mu) / sd


@case(lambda r: (normal(r, 12, 3) * 0.01,), lambda r: (normal(r, 2, 3) * 0.01,))
def portfolio_variance_weights(R):
    w = np.array([0.5, 0.3, 0.2])
    C = np.cov(R, rowvar=False)
    return w @ C @ w, R @ w, np.sqrt(np.diag(C))


@case(lambda r: (prices16(r, 40),), lambda r: (prices16(r, 12),))
def macd_ema_loop(p):
    def ema(x, span):
        a = 2 / (span + 1)
        out = np.empty_like(x)
        out[0] = x[0]
        for i in range(1, len(x)):
            out[i] = a * x[i] + (1 - a) * out[i - 1]
        return out

    m = ema(p, 3) - ema(p, 6)
    return m, ema(m, 2)


@case(lambda r: (prices16(r, 30),), lambda r: (prices16(r, 2),))
def log_returns_annualized(p):
    lr = np.diff(np.log(p))
    return lr.mean() * 252, lr.std() * np.sqrt(252), np.expm1(lr.sum())


@case(lambda r: (pos(r, 10) * 100, pos(r, 10)), lambda r: (pos(r, 1) * 100, pos(r, 1)))
def npv_irr_like(cash, rate):
    t = np.arange(len(cash))
    disc = (1 + rate[:, None] / 10) ** -t
    return disc @ cash, np.cumsum(cash * disc[0])


@case(lambda r: (prices16(r, 20), pos(r, 20)), lambda r: (prices16(r, 2), pos(r, 2)))
def rolling_vwap_swv(p, v):
    pv = np.lib.stride_tricks.sliding_window_view(p * v, 2).sum(-1)
    vv = np.lib.stride_tricks.sliding_window_view(v, 2).sum(-1)
    return pv / vv


@case(lambda r: (normal(r, 50) * 0.02,), lambda r: (normal(r, 5) * 0.02,))
def value_at_risk_historical(ret):
    var95 = -np.percentile(ret, 5)
    es = -ret[ret <= -var95].mean() if (ret <= -var95).any() else 0.0
    return var95, es


@case(lambda r: (pos(r, 6), pos(r, 6)), lambda r: (pos(r, 1), pos(r, 1)))
def coupon_bond_macaulay(coupon, ytm):
    t = np.arange(1, 6)
    cf = np.outer(coupon, np.ones(5))
    cf[:, -1] += 100
    disc = (1 + ytm[:, None] / 10) ** -t
    price = (cf * disc).sum(1)
    return price, (t * cf * disc).sum(1) / price


# ---- physics ---------------------------------------------------------------------------------


@case(lambda r: (normal(r, 6, 3), pos(r, 6)), lambda r: (normal(r, 1, 3), pos(r, 1)))
def nbody_accelerations_broadcast(pos_, m):
    d = pos_[None, :, :] - pos_[:, None, :]
    r2 = (d**2).sum(-1) + 0.1
    inv = m[None, :] / r2**1.5
    np.fill_diagonal(inv, 0.0)
    return (d * inv[..., None]).sum(1)


@case(lambda r: (normal(r, 5, 2), normal(r, 5, 2)), lambda r: (normal(r, 1, 2), normal(r, 1, 2)))
def velocity_verlet_spring_loop(x, v):
    dt = 0.05
    a = -x
    for _ in range(10):
        x = x + v * dt + 0.5 * a * dt**2
        a_new = -x
        v = v + 0.5 * (a + a_new) * dt
        a = a_new
    return x, v, 0.5 * (v**2).sum() + 0.5 * (x**2).sum()


@case(lambda r: (normal(r, 8, 2),), lambda r: (normal(r, 2, 2),))
def pairwise_lennard_jones_energy(p):
    d = np.linalg.norm(p[:, None] - p[None, :], axis=-1)
    iu = np.triu_indices(len(p), 1)
    r = d[iu] + 1.0
    return (4 * (r**-12 - r**-6)).sum(), r.min() if r.size else 0.0


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 3),))
def heat_1d_explicit_steps(u):
    u = u.copy()
    for _ in range(15):
        u[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (normal(r, 10, 3), normal(r, 10, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def lorentz_force_cross(v, B):
    q = 1.6
    return q * np.cross(v, B), np.einsum("ij,ij->i", v, np.cross(v, B))


@case(lambda r: (pos(r, 4), pos(r, 4)), lambda r: (pos(r, 1), pos(r, 1)))
def projectile_range_while_loop(v0, ang):
    x = np.zeros_like(v0)
    y = np.zeros_like(v0)
    vx, vy = v0 * np.cos(ang), v0 * np.sin(ang)
    t = 0
    while t < 40:
        x = x + vx * 0.01
        y = y + vy * 0.01
        vy = vy - 9.81 * 0.01
        t += 1
    return x, y


@case(lambda r: (normal(r, 8, 8),), lambda r: (normal(r, 3, 3),))
def ising_energy_periodic(S):
    s = np.sign(S)
    e = -(s * np.roll(s, 1, 0) + s * np.roll(s, 1, 1)).sum()
    return e, s.mean()


@case(lambda r: (pos(r, 7),), lambda r: (pos(r, 1),))
def harmonic_oscillator_energy_levels(omega):
    n = np.arange(5)[:, None]
    return (n + 0.5) * omega[None, :], np.exp(-omega) / (1 - np.exp(-omega))


@case(lambda r: (normal(r, 30, 2),), lambda r: (normal(r, 2, 2),))
def center_of_mass_inertia(p):
    m = np.linspace(1, 2, len(p))
    com = (m[:, None] * p).sum(0) / m.sum()
    q = p - com
    I = np.einsum("i,i->", m, (q**2).sum(1))
    return com, I


# ---- geometry and linear algebra ---------------------------------------------------------------


@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 0, 3), normal(r, 0, 3)))
def triangle_normals_areas(a, b):
    n = np.cross(a, b)
    area = 0.5 * np.linalg.norm(n, axis=1)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12), area


@case(lambda r: (normal(r, 4, 4), normal(r, 4, 2)), lambda r: (normal(r, 2, 2), normal(r, 2, 1)))
def solve_det_inv_consistency(A, B):
    A = A + 5 * np.eye(len(A))
    X = np.linalg.solve(A, B)
    return X, np.linalg.det(A), np.allclose(np.linalg.inv(A) @ B, X), np.linalg.slogdet(A)


@case(lambda r: (normal(r, 10, 3), normal(r, 10)), lambda r: (normal(r, 3, 3), normal(r, 3)))
def lstsq_residual_rank(A, b):
    x, res, rank, sv = np.linalg.lstsq(A, b, rcond=None)
    return x, rank, sv, np.linalg.norm(A @ x - b)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 1, 1),))
def eig_symmetric_reconstruct(A):
    S = A + A.T
    w, V = np.linalg.eigh(S)
    return w, np.allclose(V @ np.diag(w) @ V.T, S), np.linalg.eigvalsh(S)


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.diag([1.0, 2.0, 3.0]),))
def eig_general_sorted_abs(A):
    w = np.linalg.eigvals(A)
    return np.sort(np.abs(w)), np.abs(np.prod(w)), np.abs(np.linalg.det(A))


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 2, 2),))
def svd_low_rank_approx(A):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    A1 = s[0] * np.outer(U[:, 0], Vt[0])
    return s, np.linalg.norm(A - A1), np.linalg.matrix_rank(A), np.linalg.cond(A)


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 1, 3),))
def norms_orders_axis(X):
    return (
        np.linalg.norm(X, axis=1),
        np.linalg.norm(X, ord=1, axis=1),
        np.linalg.norm(X, ord=np.inf, axis=1),
        np.linalg.norm(X),
        np.linalg.norm(X, "fro"),
    )


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.eye(3),))
def matrix_power_and_expm_series(A):
    A = A / 4
    E = np.eye(3)
    term = np.eye(3)
    for k in range(1, 8):
        term = term @ A / k
        E = E + term
    return np.linalg.matrix_power(A, 3), E


@case(lambda r: (normal(r, 7, 2),), lambda r: (normal(r, 3, 2),))
def polygon_perimeter_shoelace(P):
    Q = np.roll(P, -1, axis=0)
    area = 0.5 * np.abs(np.sum(P[:, 0] * Q[:, 1] - Q[:, 0] * P[:, 1]))
    return area, np.linalg.norm(Q - P, axis=1).sum()


@case(
    lambda r: (normal(r, 3), normal(r, 3)), lambda r: (np.array([1.0, 0, 0]), np.array([0, 1.0, 0]))
)
def angle_between_vectors(a, b):
    c = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))
    return np.degrees(np.arccos(np.clip(c, -1, 1))), np.cross(a, b), np.inner(a, b)


@case(lambda r: (normal(r, 9, 3),), lambda r: (normal(r, 3, 3),))
def pca_by_svd_projection(X):
    Xc = X - X.mean(0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    proj = Xc @ Vt[:2].T
    return np.abs(proj), s**2 / max(len(X) - 1, 1)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def qr_gram_schmidt_loop(A):
    A = A + 3 * np.eye(len(A))
    Q = np.zeros_like(A)
    for j in range(A.shape[1]):
        v = A[:, j].copy()
        for i in range(j):
            v -= (Q[:, i] @ A[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    return Q.T @ Q


@case(lambda r: (normal(r, 12, 2), normal(r, 3, 2)), lambda r: (normal(r, 1, 2), normal(r, 1, 2)))
def nearest_centroid_assign(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    lab = d.argmin(1)
    return lab, d.min(1), np.array([X[lab == k].sum(0) for k in range(len(C))])


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.zeros((3, 3)),))
def pinv_and_tensordot(A):
    return np.linalg.pinv(A), np.tensordot(A, A, axes=([1], [0])), np.tensordot(A, A, 2)


# ---- integer and text-like work ----------------------------------------------------------------


@case(lambda r: (ints(r, 0, 8, 25),), lambda r: (ints(r, 0, 3, 1),), lambda r: (ints(r, 0, 3, 0),))
def unique_counts_sorted_by_freq(x):
    u, c = np.unique(x, return_counts=True)
    o = np.argsort(-c, kind="stable")
    return u[o], c[o]


@case(lambda r: (ints(r, 0, 5, 20),), lambda r: (ints(r, 0, 5, 2),))
def unique_index_first_occurrence(x):
    u, idx = np.unique(x, return_index=True)
    return u, idx, x[np.sort(idx)]


@case(lambda r: (ints(r, 0, 10, 15), normal(r, 15)), lambda r: (ints(r, 0, 10, 1), normal(r, 1)))
def bincount_weighted_minlength(lab, w):
    return np.bincount(lab, weights=w, minlength=10), np.bincount(lab, minlength=10).cumsum()


@case(
    lambda r: (np.sort(normal(r, 10)), normal(r, 6)),
    lambda r: (np.sort(normal(r, 1)), normal(r, 0)),
)
def searchsorted_sides_sorter(a, v):
    s = np.argsort(-a)
    return (
        np.searchsorted(a, v),
        np.searchsorted(a, v, side="right"),
        np.searchsorted(-a, -v, sorter=np.argsort(-a)),
        s,
    )


@case(
    lambda r: (ints(r, 0, 3, 12), ints(r, 0, 3, 12), normal(r, 12)),
    lambda r: (ints(r, 0, 1, 1), ints(r, 0, 1, 1), normal(r, 1)),
)
def lexsort_three_keys(a, b, c):
    o = np.lexsort((c, b, a))
    return o, a[o], b[o], c[o]


@case(
    lambda r: (ints(r, 97, 123, 30, dtype="uint8"),),
    lambda r: (ints(r, 97, 123, 1, dtype="uint8"),),
)
def char_codes_letter_histogram(codes):
    h = np.bincount(codes - 97, minlength=26)
    upper = codes - 32
    vowels = np.isin(codes, np.array([97, 101, 105, 111, 117], dtype=np.uint8))
    return h, upper, vowels.sum()


@case(lambda r: (ints(r, 0, 4, 18),), lambda r: (ints(r, 0, 4, 1),))
def run_lengths_by_diff(x):
    change = np.flatnonzero(np.diff(x)) + 1
    starts = np.r_[0, change]
    lengths = np.diff(np.r_[starts, len(x)])
    return x[starts], lengths


@case(lambda r: (ints(r, 0, 1000, 16),), lambda r: (ints(r, 0, 1000, 1),))
def hash_buckets_mod(x):
    h = (x * 2654435761) % 2**32
    b = h % 8
    return h, np.bincount(b, minlength=8), np.argsort(b, kind="stable")


@case(lambda r: (ints(r, 0, 50, 20),), lambda r: (ints(r, 0, 50, 0),))
def sorted_unique_inverse_reconstruct(x):
    u, inv = np.unique(x, return_inverse=True)
    return np.array_equal(u[inv], x), inv, len(u)


@case(
    lambda r: (ints(r, 0, 6, 10), ints(r, 0, 6, 10)), lambda r: (ints(r, 0, 2, 1), ints(r, 0, 2, 1))
)
def pair_codes_cooccurrence(a, b):
    M = np.zeros((6, 6), dtype=np.int64)
    np.add.at(M, (a, b), 1)
    return M, M.sum(0), np.ravel_multi_index((a, b), (6, 6))


@case(lambda r: (ints(r, 0, 9, 4, 5),), lambda r: (ints(r, 0, 9, 1, 1),))
def argsort_rows_stable_and_take(X):
    o = np.argsort(X, axis=1, kind="stable")
    return o, np.take_along_axis(X, o, axis=1), np.sort(X, axis=0)


@case(
    lambda r: (ints(r, 0, 2**16, 10, dtype="uint32"),),
    lambda r: (ints(r, 0, 5, 1, dtype="uint32"),),
)
def bit_ops_popcount_loop(x):
    c = np.zeros_like(x)
    y = x.copy()
    for _ in range(17):
        c += y & 1
        y >>= 1
    return c, np.bitwise_count(x), x ^ (x >> 1)


@case(lambda r: (ints(r, 1, 100, 8),), lambda r: (ints(r, 1, 100, 1),))
def digits_of_integers(n):
    d = (n[:, None] // 10 ** np.arange(3)[::-1]) % 10
    return d, d.sum(1), np.char.mod("%d", n).astype(str).tolist() == [str(v) for v in n]


# ---- structured control flow --------------------------------------------------------------------


def _normalize(v, eps=1e-9):
    return v / (np.linalg.norm(v) + eps)


def _project(u, v):
    return (u @ v) * v


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def helper_functions_composed(u, v):
    n = _normalize(v)
    p = _project(u, n)
    return p, u - p, _normalize(u, eps=0.5)


@case(lambda r: (pos(r, 6),), lambda r: (pos(r, 1),))
def newton_sqrt_while_converges(a):
    x = a.copy()
    it = 0
    while np.max(np.abs(x * x - a)) > 1e-12 and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 0),))
def early_return_on_empty(x):
    if x.size == 0:
        return np.zeros(1)
    if np.all(x > 0):
        return np.log(x)
    return np.abs(x).cumsum()


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.zeros((2, 2)),))
def try_except_singular(A):
    try:
        return np.linalg.inv(A), True
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A), False


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def closure_scale_factory(x):
    def make(scale):
        return lambda v: v * scale + 1

    f, g = make(2.0), make(-0.5)
    return f(x), g(f(x))


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 1),))
def default_and_keyword_args(x, lo=-1.0, hi=1.0):
    return np.clip(x, lo, hi), np.clip(x, a_min=lo / 2, a_max=None)


@case(
    lambda r: (normal(r, 4), normal(r, 4), normal(r, 4)),
    lambda r: (normal(r, 1), normal(r, 1), normal(r, 1)),
)
def varargs_total_and_max(*xs):
    total = np.zeros_like(xs[0])
    for x in xs:
        total += x
    return total, np.stack(xs).max(0), len(xs)


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def dict_of_stats_result(x):
    out = {"mean": x.mean(), "std": x.std(), "range": (x.min(), x.max())}
    out["z"] = (x - out["mean"]) / (out["std"] + 1)
    return out


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 1),))
def bisection_root_scalar_loop(c):
    lo, hi = np.full_like(c, -5.0), np.full_like(c, 5.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        f = mid**3 - c
        lo = np.where(f < 0, mid, lo)
        hi = np.where(f < 0, hi, mid)
    return (lo + hi) / 2


@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 3),))
def recursion_depth_halving(x):
    def rec(v, depth):
        if depth == 0 or len(v) < 2:
            return v.sum()
        h = len(v) // 2
        return rec(v[:h], depth - 1) + rec(v[h:], depth - 1)

    return rec(x, 3), x.sum()


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 4),))
def list_comprehension_columns(X):
    cols = [X[:, j] * (j + 1) for j in range(X.shape[1])]
    return np.column_stack(cols), sum(c.sum() for c in cols)


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def enumerate_zip_accumulate(x):
    acc = []
    for i, (a, b) in enumerate(zip(x[:-1], x[1:], strict=True)):
        acc.append(a * b + i)
    return np.array(acc, dtype=float)


@case(lambda r: (ints(r, 1, 30, 6),), lambda r: (ints(r, 1, 3, 1),))
def collatz_steps_vectorized_while(n):
    n = n.copy()
    steps = np.zeros_like(n)
    while (n != 1).any():
        active = n != 1
        n = np.where(active, np.where(n % 2 == 0, n // 2, 3 * n + 1), n)
        steps += active
    return steps


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 6),))
def raise_value_error_checked(x):
    if x.shape[0] != 6:
        raise ValueError("need 6")
    return x.reshape(2, 3).sum(0)


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 4),))
def reshape_error_caught(x):
    try:
        return x.reshape(2, -1), "ok"
    except ValueError:
        return x[:, None], "fallback"


@dataclass
class Particles:
    x: np.ndarray
    v: np.ndarray
    dt: float = 0.1


def particles(r: np.random.Generator, n: int) -> Particles:
    return Particles(r.standard_normal((n, 2)), r.standard_normal((n, 2)))


@case(lambda r: (particles(r, 6),), lambda r: (particles(r, 1),))
def dataclass_input_step(p):
    x = p.x + p.v * p.dt
    return x, np.linalg.norm(p.v, axis=1).max()


@case(
    lambda r: ({"a": normal(r, 5), "b": normal(r, 5)},),
    lambda r: ({"a": normal(r, 1), "b": normal(r, 1)},),
)
def dict_input_arrays(d):
    return d["a"] + d["b"], {k: v.mean() for k, v in sorted(d.items())}


@case(lambda r: ((normal(r, 3), normal(r, 3)), 2), lambda r: ((normal(r, 1), normal(r, 1)), 0))
def tuple_input_and_int_power(pair, k):
    a, b = pair
    return a**k + b, np.power(b, k)


# ---- dtype varieties ---------------------------------------------------------------------------


@case(lambda r: (u8(r, 4, 4, 3),), lambda r: (u8(r, 1, 1, 3),))
def uint8_luma_integer_math(im):
    r_, g, b = (im[..., i].astype(np.uint16) for i in range(3))
    y = ((66 * r_ + 129 * g + 25 * b + 128) >> 8) + 16
    return y.astype(np.uint8), (im // 2 + im // 2).dtype


@case(
    lambda r: (ints(r, -30000, 30000, 10, dtype="int16"),),
    lambda r: (ints(r, -3, 3, 1, dtype="int16"),),
)
def int16_overflow_wraps(x):
    return x * np.int16(3), x + x, (x.astype(np.int32) * 3).astype(np.int16), np.abs(x)


@case(lambda r: (normal(r, 12, dtype="float16"),), lambda r: (normal(r, 1, dtype="float16"),))
def float16_mean_and_cast(x):
    return x * 2, x.astype(np.float32).mean(), (x + np.float16(1)).dtype, np.sqrt(np.abs(x))


@case(lambda r: (normal(r, 6) + 1j * normal(r, 6),), lambda r: (np.array([1j, -1 + 0j]),))
def complex128_polar_roundtrip(z):
    rho, th = np.abs(z), np.angle(z)
    back = rho * np.exp(1j * th)
    return back, np.conj(z) * z, z.real, z.imag, np.allclose(back, z)


@case(lambda r: (normal(r, 4, 4) + 1j * normal(r, 4, 4),), lambda r: (np.eye(2, dtype=complex),))
def complex_matrix_hermitian(A):
    H = A + A.conj().T
    return np.linalg.eigvalsh(H), np.trace(A @ A.conj().T).real, np.vdot(A, A)


@case(
    lambda r: (r.random(10) > 0.5, r.random(10) > 0.3),
    lambda r: (np.array([True]), np.array([False])),
)
def bool_logic_reductions(a, b):
    return (
        a & b,
        a | b,
        a ^ b,
        ~a,
        np.logical_and.reduce([a, b, a]),
        a.sum(),
        np.any(a & ~b),
        a.astype(np.int8) - b,
    )


@case(
    lambda r: (ints(r, -128, 127, 8, dtype="int8"), ints(r, 0, 255, 8, dtype="uint8")),
    lambda r: (ints(r, -1, 1, 1, dtype="int8"), ints(r, 0, 2, 1, dtype="uint8")),
)
def mixed_int8_uint8_promotion(a, b):
    return a + b, (a + b).dtype, a * np.int8(2), b.astype(np.int8), np.minimum(a, 5)


@case(lambda r: (normal(r, 8, dtype="float32"),), lambda r: (normal(r, 1, dtype="float32"),))
def float32_python_scalar_nep50(x):
    return x * 2.5, (x * 2.5).dtype, x + np.float64(1), x.sum(dtype=np.float64)


@case(
    lambda r: (ints(r, 0, 2**40, 5, dtype="uint64"),), lambda r: (ints(r, 0, 2, 1, dtype="uint64"),)
)
def uint64_shifts_and_mix(x):
    return (x << np.uint64(3)) ^ (x >> np.uint64(7)), x % np.uint64(1000), x.astype(np.float64)


@case(
    lambda r: (normal(r, 5, dtype="float32") + 1j * normal(r, 5, dtype="float32"),),
    lambda r: (np.array([1 + 1j], dtype=np.complex64),),
)
def complex64_fft_dtype(z):
    F = np.fft.fft(z)
    return F, F.dtype, np.abs(z).dtype


@case(lambda r: (u8(r, 5, 5), u8(r, 5, 5)), lambda r: (u8(r, 1, 1), u8(r, 1, 1)))
def uint8_absdiff_without_wrap(a, b):
    return np.maximum(a, b) - np.minimum(a, b), np.abs(a.astype(np.int16) - b).astype(np.uint8)


@case(lambda r: (np.array(2.5),), lambda r: (np.array(-1.0),))
def zero_d_array_ops(x):
    return x * np.arange(3), np.sqrt(np.abs(x)), x.ndim, x[()], np.atleast_1d(x)


@case(lambda r: (np.zeros((0, 3)),), lambda r: (normal(r, 2, 3),))
def empty_rows_reductions(X):
    return X.sum(0), X.max(0, initial=-np.inf), X.mean(1), np.concatenate([X, X]).shape


# ---- NumPy 2 API names -------------------------------------------------------------------------


@case(lambda r: (normal(r, 3, 4), normal(r, 2, 4)), lambda r: (normal(r, 1, 1), normal(r, 0, 1)))
def np2_concat_and_permute_dims(a, b):
    c = np.concat([a, b], axis=0)
    return c, np.permute_dims(c, (1, 0)), np.concat([a, b], axis=None)


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def np2_astype_function(x):
    return np.astype(x, np.float32), np.astype(x * 10, np.int32), np.astype(x, x.dtype, copy=False)


@case(lambda r: (normal(r, 4),), lambda r: (ints(r, 0, 3, 4),))
def np2_isdtype_branch(x):
    if np.isdtype(x.dtype, "real floating"):
        return x * 0.5, "float"
    if np.isdtype(x.dtype, "integral"):
        return x // 2, "int"
    return x, "other"


@case(lambda r: (ints(r, 0, 6, 20),), lambda r: (ints(r, 0, 6, 1),))
def np2_unique_values_counts(x):
    v = np.unique_values(x)
    c = np.unique_counts(x)
    return np.sort(v), c.values, c.counts


@case(lambda r: (ints(r, 0, 4, 12),), lambda r: (ints(r, 0, 4, 2),))
def np2_unique_inverse_all(x):
    u = np.unique_inverse(x)
    a = np.unique_all(x)
    return u.values, u.inverse_indices, a.indices, a.counts


@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def np2_vecdot_rows(a, b):
    return np.vecdot(a, b), np.vecdot(a, b, axis=0), np.linalg.vecdot(a, b)


@case(lambda r: (normal(r, 2, 3, 4),), lambda r: (normal(r, 1, 1, 2),))
def np2_matrix_transpose_batched(A):
    return np.matrix_transpose(A), A.mT, np.linalg.matrix_transpose(A) @ A


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 1),))
def np2_cumulative_sum_prod(x):
    return (
        np.cumulative_sum(x),
        np.cumulative_sum(x, include_initial=True),
        np.cumulative_prod(1 + x / 10),
    )


@case(lambda r: (normal(r, 3, 3), normal(r, 3)), lambda r: (normal(r, 1, 1), normal(r, 1)))
def np2_matvec_vecmat(A, v):
    return np.matvec(A, v), np.vecmat(v, A), np.linalg.matrix_norm(A), np.linalg.vector_norm(v)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 1, 1),))
def np2_linalg_names(A):
    return (
        np.linalg.diagonal(A),
        np.linalg.trace(A),
        np.linalg.outer(A[0], A[-1]),
        np.linalg.cross(A[:, :3], A[:, 1:4]) if A.shape[1] >= 4 else 0,
    )


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def np2_trig_aliases(x):
    y = np.tanh(x)
    return np.acos(y), np.asin(y), np.atan(x), np.atan2(x, 1.0), np.pow(np.abs(x), 1.5)


@case(lambda r: (ints(r, 0, 64, 6),), lambda r: (ints(r, 0, 64, 1),))
def np2_bitwise_aliases(x):
    return np.bitwise_left_shift(x, 1), np.bitwise_right_shift(x, 2), np.bitwise_invert(x)


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def np2_unstack_and_copy(X):
    a, b, c = np.unstack(X, axis=1)
    return a + b * c, np.asarray(X, copy=True) is not X


@pytest.mark.parametrize("name", sorted(CASES16))
def test_wild16_function_matches_numpy(name: str) -> None:
    run_case(name, CASES16, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES16, warm=True, views=True, warns=True)
