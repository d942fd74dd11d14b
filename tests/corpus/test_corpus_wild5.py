"""A fifth wave of the wild corpus (issue 16; the project is checked with NumPy programs we do
not see): domains the first four waves under-cover, written as outside users write them —
signal processing (convolve/correlate modes, FIR/IIR filters as loops, windows, envelopes,
zero crossings), statistics (histogram with bins/range/density/weights, digitize, searchsorted
sides, quantile methods, weighted covariance and corrcoef, ranks, z-scores, bootstrap with a
Generator), geometry (cross products, norms, polygon area and centroid, pairwise distances,
rotations, barycentric coordinates, angles), finance (returns, drawdown, EMA loops, rolling
windows, Sharpe, VWAP, compounding), images (uint8/uint16, clip, integer arithmetic, bit planes,
shifts and masks, saturating adds, thresholds), data wrangling (argsort, lexsort,
take_along_axis, put_along_axis, stack/split/concatenate, meshgrid, tile/repeat, one-hot,
group sums), simulations with Python loops (random walks, cellular automata, diffusion, SIR,
Euler and RK4 steps), `np.random.Generator` passed in, integer overflow (int8/uint8/int32/
uint64 wrap, abs of the minimum, negative shifts), complex numbers (roots of unity, DFT by a
matrix, phasors, polynomials), structured control flow (`if x.ndim == 2`, `for axis in
range(x.ndim)`, early returns on shape), and keyword arguments of every sort (`out=`,
`axis=(0, 2)`, `keepdims`, `dtype=`, `where=`, `initial=`, `ddof=`, `side=`, `method=`).

Same harness as test_corpus_wild.py (each function under one `stax.jit`, several inputs incl.
0/1-sized, dtypes, transposed and strided views; equal to NumPy on copies, arguments included;
NumPy's exception class where NumPy raises). `cd tests && python -m corpus.test_corpus_wild5
[names]` prints each function's class: compiled / break / FAIL.

First run (135 functions, with 345f582's view and extern-key fixes): 101 compiled, 32 break,
2 FAIL — np.nanstd/np.nanvar of data with an inf gave inf where NumPy gives NaN (the
deviation inf - inf was zeroed as if the input were NaN: a silently wrong result), and a
harness tolerance (a float32 mean summed in another order feeding np.interp's float64 result;
the input is float64 now). Most breaks: a `np.random.Generator` argument (9 functions: the
whole function runs in NumPy), Python control flow on values (`if`, `max()`, `int()` of a
traced value: 9), data-dependent lengths (flatnonzero, set operations, unique's
return_inverse, bincount of computed labels, `r_[r_ < 0]`), and keywords (`np.sum(out=)`,
`np.matmul(dtype=)`, `np.unpackbits(count=)`, `np.pad(reflect_type=)`, `np.repeat` with an array
of repeats), np.unwrap, np.piecewise, np.vectorize, np.cross of 2-vectors.

After the fixes (610d6d2): 107 compiled, 28 break, 0 FAIL. Compiled now: reductions and
scans with `out=`, `np.matmul(dtype=)`, `np.repeat` with a list of counts, np.average's
weights check (a run-time ZeroDivisionError); later np.unpackbits(count=) (4b71238). A
Generator argument's draws are graph breaks drawing from the call's generator (the rest
compiles; the 9 functions still count as breaks). Still breaks: Python control flow /
int() / float() on values, set operations, bincount of computed labels, np.unique of fewer
than 2 elements, np.cov weights, np.pad(reflect_type=), np.unwrap, np.piecewise, np.cross
of 2-vectors, np.array_equal, np.vectorize.
"""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import stax
from corpus.test_corpus_wild import img, main, normal, prices, run_case, same, wild

CASES5: dict[str, Any] = {}
case = functools.partial(wild, cases=CASES5)


def ints(r: np.random.Generator, lo: int, hi: int, *shape: int, dtype: str = "int64"
         ) -> np.ndarray:
    return r.integers(lo, hi, shape).astype(dtype)


def img16(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.integers(0, 65536, shape, dtype=np.uint16)


# ---- signal processing ----------------------------------------------------------------------

@case(lambda r: (normal(r, 40), np.array([0.25, 0.5, 0.25])),
      lambda r: (normal(r, 3, dtype="float32"), np.ones(5, np.float32) / 5),
      lambda r: (normal(r, 1), np.array([2.0])))
def convolve_all_modes(x, k):
    return (np.convolve(x, k), np.convolve(x, k, mode="same"), np.convolve(x, k, mode="valid")
            if len(x) >= len(k) else np.convolve(k, x, mode="valid"))


@case(lambda r: (normal(r, 30), normal(r, 7)), lambda r: (normal(r, 5), normal(r, 5)),
      lambda r: (ints(r, -3, 4, 9), ints(r, -2, 3, 4)))
def cross_correlation_lag(a, b):
    c = np.correlate(a, b, mode="full")
    lag = int(np.argmax(c)) - (len(b) - 1)
    return c, lag, np.correlate(a, b)


@case(lambda r: (normal(r, 50), np.array([0.2, 0.3, 0.5])),
      lambda r: (normal(r, 4, dtype="float32"), np.array([1.0, -1.0], np.float32)))
def fir_filter_loop(x, b):
    y = np.zeros_like(x)
    for n in range(len(x)):
        for k in range(len(b)):
            if n - k >= 0:
                y[n] += b[k] * x[n - k]
    return y


@case(lambda r: (normal(r, 60), 0.9), lambda r: (normal(r, 1), 0.5),
      lambda r: (normal(r, 20, dtype="float32"), 0.1))
def iir_one_pole(x, a):
    y = np.empty_like(x)
    prev = 0.0
    for i in range(x.shape[0]):
        prev = a * prev + (1 - a) * x[i]
        y[i] = prev
    return y


@case(lambda r: (16,), lambda r: (1,), lambda r: (0,), lambda r: (7,))
def window_functions(n):
    return (np.hanning(n), np.hamming(n), np.blackman(n), np.bartlett(n), np.kaiser(n, 5.0))


@case(lambda r: (normal(r, 64),), lambda r: (normal(r, 8, dtype="float32"),))
def windowed_energy(x):
    w = np.hanning(len(x))
    xw = x * w
    return np.sum(xw ** 2) / np.sum(w ** 2), xw.dtype


@case(lambda r: (normal(r, 50),), lambda r: (np.array([1.0, -1.0, 1.0, 0.0, -2.0]),),
      lambda r: (normal(r, 0),))
def zero_crossings(x):
    s = np.signbit(x)
    crossings = np.count_nonzero(s[1:] != s[:-1])
    return crossings, np.diff(s.astype(np.int8))


@case(lambda r: (normal(r, 40), 5), lambda r: (normal(r, 6, dtype="float32"), 3),
      lambda r: (normal(r, 4), 4))
def moving_average_cumsum(x, w):
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[w:] - c[:-w]) / float(w)


@case(lambda r: (normal(r, 30), 3), lambda r: (normal(r, 9), 1))
def moving_median_windows(x, k):
    win = np.lib.stride_tricks.sliding_window_view(x, 2 * k + 1)
    return np.median(win, axis=-1), win.max(axis=1) - win.min(axis=1)


@case(lambda r: (normal(r, 32),), lambda r: (normal(r, 3, 8).T,))
def dft_by_matrix(x):
    n = x.shape[0]
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return m @ x


@case(lambda r: (normal(r, 40), 0.2), lambda r: (normal(r, 5, dtype="float32"), 0.5))
def envelope_follower(x, release):
    env = np.zeros(x.shape, dtype=np.float64)
    level = 0.0
    for i, v in enumerate(np.abs(x)):
        level = max(v, level * (1.0 - release))
        env[i] = level
    return env


@case(lambda r: (normal(r, 100), 4), lambda r: (normal(r, 12), 3), lambda r: (normal(r, 10), 1))
def decimate_and_upsample(x, q):
    # (float64 inputs only: a float32 mean summed in another order, within float32's
    # tolerance, feeds np.interp's float64 result, compared at float64's)
    n = (len(x) // q) * q
    dec = x[:n].reshape(-1, q).mean(axis=1)
    up = np.repeat(dec, q)
    lin = np.interp(np.arange(n), np.arange(0, n, q), dec)
    return dec, up, lin


@case(lambda r: (normal(r, 30), 1.5), lambda r: (normal(r, 8), 0.0))
def clip_and_quantize(x, lim):
    y = np.clip(x, -lim, lim, out=np.empty_like(x))
    levels = 2 ** 4
    q = np.round((y + lim) / (2 * lim + 1e-12) * (levels - 1)).astype(np.int16)
    return y, q


@case(lambda r: (normal(r, 20), normal(r, 20)), lambda r: (normal(r, 1), normal(r, 1)))
def phase_and_magnitude(re, im):
    z = re + 1j * im
    return np.abs(z), np.angle(z), np.angle(z, deg=True), np.unwrap(np.angle(z))


@case(lambda r: (normal(r, 5, 40),), lambda r: (normal(r, 40, 3).T,),
      lambda r: (normal(r, 2, 1, dtype="float32"),))
def rms_per_channel(x):
    return np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True)), np.ptp(x, axis=1)


@case(lambda r: (normal(r, 64), 8), lambda r: (normal(r, 10), 3))
def frame_signal(x, hop):
    n_frames = 1 + (len(x) - 2 * hop) // hop
    idx = np.arange(2 * hop)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = x[idx] * np.hanning(2 * hop)
    return frames, (frames ** 2).sum(axis=1)


# ---- statistics ------------------------------------------------------------------------------

@case(lambda r: (normal(r, 200),), lambda r: (normal(r, 3, dtype="float32"),),
      lambda r: (ints(r, 0, 10, 50),))
def histogram_forms(x):
    h1, e1 = np.histogram(x, bins=10)
    h2, e2 = np.histogram(x, bins=[-2, -1, 0, 1, 2])
    h3, _ = np.histogram(x, bins=5, range=(-1.0, 1.0), density=True)
    return h1, e1, h2, e2, h3


@case(lambda r: (normal(r, 100), r.random(100)), lambda r: (normal(r, 4), r.random(4)))
def weighted_histogram(x, w):
    counts, edges = np.histogram(x, bins=8, weights=w)
    centers = 0.5 * (edges[1:] + edges[:-1])
    return counts, centers, np.sum(counts * centers) / np.sum(counts)


@case(lambda r: (normal(r, 50),), lambda r: (np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]),))
def digitize_both_sides(x):
    bins = np.array([-1.0, 0.0, 1.0])
    return (np.digitize(x, bins), np.digitize(x, bins, right=True),
            np.digitize(x, bins[::-1]))


@case(lambda r: (np.sort(normal(r, 30)), normal(r, 10)),
      lambda r: (np.array([1, 2, 2, 2, 3]), np.array([2, 0, 5, 2])))
def searchsorted_sides(a, v):
    return (np.searchsorted(a, v), np.searchsorted(a, v, side="right"),
            np.searchsorted(a, v, side="right") - np.searchsorted(a, v, side="left"))


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 5, 6),), lambda r: (ints(r, 0, 9, 7),))
def quantile_methods(x):
    return (np.quantile(x, [0.1, 0.5, 0.9]), np.percentile(x, 25, method="lower"),
            np.percentile(x, 75, method="higher"), np.quantile(x, 0.5, method="nearest"),
            np.quantile(x, 0.3, method="midpoint"))


@case(lambda r: (normal(r, 3, 30),), lambda r: (normal(r, 30, 4).T,),
      lambda r: (normal(r, 2, 2, dtype="float32"),))
def covariance_forms(x):
    return (np.cov(x), np.cov(x, bias=True), np.cov(x, ddof=0), np.cov(x[0], x[1]),
            np.cov(x.T, rowvar=False))


@case(lambda r: (normal(r, 4, 25), r.integers(1, 4, 25)),
      lambda r: (normal(r, 2, 6), np.ones(6, np.int64)))
def weighted_cov(x, fw):
    return np.cov(x, fweights=fw), np.cov(x, aweights=fw.astype(float) / fw.sum())


@case(lambda r: (normal(r, 5, 20),), lambda r: (normal(r, 2, 3, dtype="float32"),))
def corrcoef_matrix(x):
    c = np.corrcoef(x)
    return c, np.corrcoef(x[0], x[-1])[0, 1]


@case(lambda r: (normal(r, 30),), lambda r: (np.array([3.0, 1.0, 2.0, 1.0]),))
def ranks_via_argsort(x):
    order = np.argsort(x, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(x))
    return ranks, order


@case(lambda r: (normal(r, 6, 8),), lambda r: (normal(r, 8, 6, dtype="float32").T,),
      lambda r: (np.ones((3, 4)),))
def zscore_columns(x):
    mu = x.mean(axis=0, keepdims=True)
    sd = x.std(axis=0, ddof=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x - mu) / sd


@case(lambda r: (normal(r, 30), np.random.default_rng(3), 20),
      lambda r: (normal(r, 4), np.random.default_rng(5), 3))
def bootstrap_mean(x, rng, n_boot):
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    means = x[idx].mean(axis=1)
    return means.mean(), np.percentile(means, [2.5, 97.5])


@case(lambda r: (normal(r, 50),), lambda r: (normal(r, 7, dtype="float32"),))
def skew_kurtosis(x):
    m = x.mean()
    d = x - m
    m2 = np.mean(d ** 2)
    return np.mean(d ** 3) / m2 ** 1.5, np.mean(d ** 4) / m2 ** 2 - 3.0


@case(lambda r: (normal(r, 40), normal(r, 40)), lambda r: (normal(r, 3), normal(r, 3)))
def linear_regression_closed_form(x, y):
    a = np.vstack([x, np.ones_like(x)]).T
    coef = np.linalg.solve(a.T @ a, a.T @ y)
    resid = y - a @ coef
    return coef, resid @ resid


@case(lambda r: (normal(r, 30),), lambda r: (np.array([1.0, np.nan, 3.0, np.inf]),))
def nan_aware_stats(x):
    return (np.nanmean(x), np.nanstd(x), np.nanmax(x), np.nanargmin(x),
            np.isfinite(x).sum(), np.nan_to_num(x, nan=-1.0, posinf=9.0))


@case(lambda r: (ints(r, 0, 5, 40),), lambda r: (np.array([3, 3, 3]),))
def mode_and_counts(labels):
    counts = np.bincount(labels, minlength=5)
    return counts, int(np.argmax(counts)), counts / counts.sum()


@case(lambda r: (normal(r, 20), normal(r, 20)), lambda r: (normal(r, 2), normal(r, 2)))
def spearman_like(a, b):
    ra = np.argsort(np.argsort(a))
    rb = np.argsort(np.argsort(b))
    return np.corrcoef(ra, rb)[0, 1]


@case(lambda r: (normal(r, 100), 4), lambda r: (normal(r, 9), 3))
def ecdf_and_bins(x, k):
    xs = np.sort(x)
    ecdf = np.arange(1, len(xs) + 1) / len(xs)
    edges = np.linspace(xs[0], xs[-1], k + 1)
    return ecdf, np.searchsorted(edges, x, side="right"), edges


# ---- geometry --------------------------------------------------------------------------------

@case(lambda r: (normal(r, 10, 3), normal(r, 10, 3)), lambda r: (normal(r, 3), normal(r, 3)),
      lambda r: (normal(r, 4, 2), normal(r, 4, 2)))
def cross_products(a, b):
    c = np.cross(a, b)
    return c, np.linalg.norm(c, axis=-1) if c.ndim else abs(c)


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 3, 8, dtype="float32").T,),
      lambda r: (normal(r, 0, 3),))
def norms_every_kind(v):
    return (np.linalg.norm(v, axis=1), np.linalg.norm(v, ord=1, axis=1),
            np.linalg.norm(v, ord=np.inf, axis=1), np.linalg.norm(v, axis=1, keepdims=True),
            np.sqrt(np.einsum("ij,ij->i", v, v)))


@case(lambda r: (np.array([[0.0, 0], [4, 0], [4, 3], [0, 3]]),), lambda r: (normal(r, 7, 2),),
      lambda r: (normal(r, 3, 2, dtype="float32"),))
def polygon_area_centroid(p):
    x, y = p[:, 0], p[:, 1]
    xs, ys = np.roll(x, -1), np.roll(y, -1)
    cross = x * ys - xs * y
    area = 0.5 * cross.sum()
    cx = ((x + xs) * cross).sum() / (6 * area)
    cy = ((y + ys) * cross).sum() / (6 * area)
    return abs(area), cx, cy


@case(lambda r: (normal(r, 12, 3), normal(r, 9, 3)), lambda r: (normal(r, 1, 2), normal(r, 4, 2)),
      lambda r: (normal(r, 5, 3, dtype="float32"), normal(r, 2, 3, dtype="float32")))
def pairwise_distances(a, b):
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    d = np.sqrt(np.maximum(d2, 0))
    direct = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    return d, direct, d.argmin(axis=1)


@case(lambda r: (normal(r, 20, 2), 0.3), lambda r: (normal(r, 1, 2), -np.pi))
def rotate_points(p, theta):
    c, s = np.cos(theta), np.sin(theta)
    rot = np.array([[c, -s], [s, c]])
    return p @ rot.T, np.einsum("ij,nj->ni", rot, p)


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 3, 3),))
def triangle_normals(v):
    a, b, c = v[:-2], v[1:-1], v[2:]
    n = np.cross(b - a, c - a)
    lens = np.linalg.norm(n, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return n / lens, 0.5 * lens[:, 0]


@case(lambda r: (normal(r, 10, 2), normal(r, 3, 2)),
      lambda r: (np.array([[0.25, 0.25]]), np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])))
def barycentric(p, tri):
    a, b, c = tri
    v0, v1, v2 = b - a, c - a, p - a
    d00, d01, d11 = v0 @ v0, v0 @ v1, v1 @ v1
    d20, d21 = v2 @ v0, v2 @ v1
    den = d00 * d11 - d01 * d01
    v = (d11 * d20 - d01 * d21) / den
    w = (d00 * d21 - d01 * d20) / den
    inside = (v >= 0) & (w >= 0) & (v + w <= 1)
    return np.stack([1 - v - w, v, w], axis=-1), inside


@case(lambda r: (normal(r, 15, 3), normal(r, 15, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def angles_between(a, b):
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@case(lambda r: (normal(r, 30, 2),), lambda r: (normal(r, 2, 2),))
def bounding_box_and_hull_extremes(p):
    lo, hi = p.min(axis=0), p.max(axis=0)
    extremes = p[[p[:, 0].argmin(), p[:, 0].argmax(), p[:, 1].argmin(), p[:, 1].argmax()]]
    return lo, hi, np.prod(hi - lo), extremes


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.eye(3),))
def rodrigues_rotation(axis_angles):
    out = []
    for w in axis_angles:
        theta = np.linalg.norm(w)
        if theta < 1e-12:
            out.append(np.eye(3))
            continue
        k = w / theta
        kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        out.append(np.eye(3) + np.sin(theta) * kx + (1 - np.cos(theta)) * kx @ kx)
    return np.stack(out)


@case(lambda r: (normal(r, 20, 3),), lambda r: (normal(r, 4, 3, dtype="float32"),))
def centroid_and_principal_axis(p):
    c = p.mean(axis=0)
    q = p - c
    w, v = np.linalg.eigh(q.T @ q)
    axis = v[:, -1] * np.sign(v[np.argmax(np.abs(v[:, -1])), -1])
    return c, w, axis


@case(lambda r: (normal(r, 9, 2), 0.5), lambda r: (normal(r, 3, 2), 10.0))
def points_in_circle(p, radius):
    d = np.hypot(p[:, 0], p[:, 1])
    return np.count_nonzero(d <= radius), np.where(d <= radius, d, np.inf).min(initial=np.inf)


# ---- finance ----------------------------------------------------------------------------------

@case(lambda r: (prices(r, 80),), lambda r: (prices(r, 2),),
      lambda r: (prices(r, 30).astype(np.float32),))
def max_drawdown_duration(p):
    peak = np.maximum.accumulate(p)
    dd = p / peak - 1.0
    under = dd < 0
    longest, run = 0, 0
    for u in under:
        run = run + 1 if u else 0
        longest = max(longest, run)
    return dd.min(), longest


@case(lambda r: (prices(r, 60), 10), lambda r: (prices(r, 5), 2))
def ema_loop_span(p, span):
    alpha = 2.0 / (span + 1)
    ema = np.empty_like(p)
    ema[0] = p[0]
    for t in range(1, len(p)):
        ema[t] = alpha * p[t] + (1 - alpha) * ema[t - 1]
    return ema, p[-1] / ema[-1] - 1


@case(lambda r: (normal(r, 250) * 0.01, 252), lambda r: (normal(r, 3) * 0.01, 12))
def sharpe_sortino(r_, periods):
    mean = r_.mean()
    sd = r_.std(ddof=1)
    down = r_[r_ < 0]
    dsd = np.sqrt(np.mean(down ** 2)) if down.size else np.nan
    return np.sqrt(periods) * mean / sd, np.sqrt(periods) * mean / dsd


@case(lambda r: (prices(r, 40), r.integers(100, 1000, 40)),
      lambda r: (prices(r, 1), np.array([5])))
def vwap(p, v):
    cum_pv = np.cumsum(p * v)
    cum_v = np.cumsum(v)
    return cum_pv / cum_v, np.average(p, weights=v)


@case(lambda r: (prices(r, 50), 5), lambda r: (prices(r, 8), 3))
def rolling_volatility(p, w):
    ret = np.diff(np.log(p))
    win = np.lib.stride_tricks.sliding_window_view(ret, w)
    return win.std(axis=-1, ddof=1), win.mean(axis=-1)


@case(lambda r: (1000.0, 0.05, 12, 10), lambda r: (1.0, 0.0, 1, 3))
def compound_interest_table(principal, rate, per_year, years):
    t = np.arange(years + 1)
    return principal * (1 + rate / per_year) ** (per_year * t)


@case(lambda r: (normal(r, 5, 30) * 0.01, r.random(5)),
      lambda r: (normal(r, 2, 3) * 0.01, np.array([1.0, 0.0])))
def portfolio_returns(rets, w):
    w = w / w.sum()
    port = w @ rets
    cov = np.cov(rets)
    return port, np.sqrt(w @ cov @ w), np.cumprod(1 + port) - 1


@case(lambda r: (prices(r, 60), 5, 20), lambda r: (prices(r, 25), 2, 4))
def moving_average_crossover(p, fast, slow):
    k1 = np.ones(fast) / fast
    k2 = np.ones(slow) / slow
    f = np.convolve(p, k1, mode="valid")[slow - fast:]
    s = np.convolve(p, k2, mode="valid")
    signal = np.where(f > s, 1, -1)
    trades = np.flatnonzero(np.diff(signal))
    return signal, trades


@case(lambda r: (normal(r, 200) * 0.02, 0.95), lambda r: (normal(r, 10) * 0.02, 0.5))
def value_at_risk(r_, level):
    var = -np.quantile(r_, 1 - level)
    tail = r_[r_ <= -var]
    return var, -tail.mean() if tail.size else var


@case(lambda r: (prices(r, 30), 100.0, 0.05, 0.2, 0.5),
      lambda r: (np.array([90.0, 100.0, 110.0]), 100.0, 0.0, 0.3, 1.0))
def black_scholes_call(s, k, r_, sigma, t):
    from math import erf, sqrt
    d1 = (np.log(s / k) + (r_ + 0.5 * sigma ** 2) * t) / (sigma * np.sqrt(t))
    d2 = d1 - sigma * np.sqrt(t)
    cdf = np.vectorize(lambda z: 0.5 * (1 + erf(z / sqrt(2))))
    return s * cdf(d1) - k * np.exp(-r_ * t) * cdf(d2)


@case(lambda r: (prices(r, 40),), lambda r: (prices(r, 3).astype(np.float32),))
def returns_table(p):
    simple = p[1:] / p[:-1] - 1
    log = np.log1p(simple)
    cum = np.cumprod(1 + simple) - 1
    return simple, log, cum, np.expm1(log.sum())


# ---- images: uint8/uint16, integer arithmetic, bits -------------------------------------------

@case(lambda r: (img(r, 8, 9), img(r, 8, 9)), lambda r: (img(r, 1, 1), img(r, 1, 1)),
      lambda r: (img(r, 6, 4).T, img(r, 4, 6)))
def saturating_add_uint8(a, b):
    s = a.astype(np.uint16) + b
    return np.minimum(s, 255).astype(np.uint8), a + b, np.clip(a.astype(np.int16) - b, 0, 255)


@case(lambda r: (img(r, 7, 6),), lambda r: (img(r, 2, 3)[:, ::-1],))
def bit_planes(im):
    planes = (im[..., None] >> np.arange(8, dtype=np.uint8)) & 1
    back = (planes << np.arange(8, dtype=np.uint8)).sum(axis=-1, dtype=np.uint8)
    return planes, back, np.unpackbits(im[..., None], axis=-1)


@case(lambda r: (img16(r, 6, 7),), lambda r: (img16(r, 1, 4),))
def uint16_to_uint8_scaling(im):
    hi = (im >> 8).astype(np.uint8)
    scaled = (im.astype(np.uint32) * 255 // 65535).astype(np.uint8)
    return hi, scaled, im.max(), im.mean(dtype=np.float64)


@case(lambda r: (img(r, 10, 10, 3),), lambda r: (img(r, 3, 1, 3),))
def rgb_to_hsv_value_saturation(im):
    f = im.astype(np.float32) / 255.0
    v = f.max(axis=-1)
    c = v - f.min(axis=-1)
    s = np.divide(c, v, out=np.zeros_like(v), where=v > 0)
    return v, s


@case(lambda r: (img(r, 9, 8), 3), lambda r: (img(r, 4, 4), 1))
def integer_box_filter(im, k):
    pad = k // 2
    p = np.pad(im.astype(np.int32), pad, mode="reflect")
    out = np.zeros(im.shape, np.int32)
    for dy in range(k):
        for dx in range(k):
            out += p[dy:dy + im.shape[0], dx:dx + im.shape[1]]
    return (out + k * k // 2) // (k * k)


@case(lambda r: (img(r, 12, 12),), lambda r: (img(r, 2, 3),))
def otsu_like_threshold_loop(im):
    hist = np.bincount(im.ravel(), minlength=256)
    total = im.size
    best_t, best_var = 0, -1.0
    sum_all = np.dot(np.arange(256), hist)
    w_b, sum_b = 0, 0
    for t in range(256):
        w_b += hist[t]
        if w_b == 0 or w_b == total:
            continue
        sum_b += t * hist[t]
        m_b = sum_b / w_b
        m_f = (sum_all - sum_b) / (total - w_b)
        var = w_b * (total - w_b) * (m_b - m_f) ** 2
        if var > best_var:
            best_t, best_var = t, var
    return best_t, (im > best_t).astype(np.uint8) * 255


@case(lambda r: (img(r, 8, 8), 2), lambda r: (img(r, 5, 7), 3))
def downsample_stride_and_mean(im, f):
    h, w = (im.shape[0] // f) * f, (im.shape[1] // f) * f
    blocks = im[:h, :w].reshape(h // f, f, w // f, f)
    return im[::f, ::f], blocks.mean(axis=(1, 3)).astype(np.uint8), blocks.max(axis=(1, 3))


@case(lambda r: (img(r, 6, 6), img(r, 6, 6)), lambda r: (img(r, 1, 5), img(r, 1, 5)))
def xor_and_hamming(a, b):
    x = np.bitwise_xor(a, b)
    return x, np.bitwise_count(x).sum(), np.unpackbits(x).sum(dtype=np.int64)


@case(lambda r: (img(r, 7, 7, 3),), lambda r: (img(r, 2, 2, 3),))
def channel_swap_and_flip(im):
    bgr = im[..., ::-1]
    return np.flipud(bgr), np.fliplr(im), np.rot90(im, k=1, axes=(0, 1)), im.transpose(2, 0, 1)


@case(lambda r: (img(r, 9, 9),), lambda r: (img(r, 3, 3),))
def gradient_magnitude_int(im):
    f = im.astype(np.int16)
    gx = np.zeros_like(f)
    gy = np.zeros_like(f)
    gx[:, 1:-1] = f[:, 2:] - f[:, :-2]
    gy[1:-1, :] = f[2:, :] - f[:-2, :]
    return np.abs(gx) + np.abs(gy), np.abs(gx).max()


@case(lambda r: (img(r, 10, 10), 100, 200), lambda r: (img(r, 3, 4), 0, 255))
def hysteresis_masks(im, lo, hi):
    strong = im >= hi
    weak = (im >= lo) & ~strong
    out = np.zeros(im.shape, np.uint8)
    out[strong] = 255
    out[weak] = 75
    return out, strong.sum(), weak.mean()


@case(lambda r: (img(r, 8, 8), 1.3), lambda r: (img(r, 4, 4).T, 0.7))
def gamma_correct_float_roundtrip(im, g):
    f = (im / 255.0) ** g
    return (f * 255 + 0.5).astype(np.uint8), np.rint(f * 255).astype(np.uint8)


@case(lambda r: (img16(r, 6, 6),), lambda r: (np.array([[65535, 0]], np.uint16),))
def uint16_overflow_arith(im):
    return im + im, im * np.uint16(3), im - np.uint16(1), (im.astype(np.int64) * 3) % 65536


@case(lambda r: (img(r, 12, 8),), lambda r: (img(r, 1, 8),))
def pack_and_unpack_rows(im):
    bits = im > 127
    packed = np.packbits(bits, axis=1)
    return packed, np.unpackbits(packed, axis=1, count=im.shape[1]).astype(bool) == bits


# ---- data wrangling --------------------------------------------------------------------------

@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 6, 5).T,),
      lambda r: (ints(r, 0, 4, 3, 3),))
def take_along_axis_topk(x):
    idx = np.argsort(-x, axis=1, kind="stable")[:, :2]
    return np.take_along_axis(x, idx, axis=1), idx


@case(lambda r: (normal(r, 4, 5),), lambda r: (np.zeros((2, 3)),))
def put_along_axis_argmax(x):
    y = np.zeros_like(x)
    idx = np.argmax(x, axis=1)[:, None]
    np.put_along_axis(y, idx, 1.0, axis=1)
    return y


@case(lambda r: (ints(r, 0, 3, 12), ints(r, 0, 5, 12), normal(r, 12)),
      lambda r: (np.array([1, 1, 0]), np.array([2, 1, 2]), np.array([1.0, 2.0, 3.0])))
def lexsort_two_keys_records(a, b, vals):
    order = np.lexsort((b, a))
    return a[order], b[order], vals[order]


@case(lambda r: (normal(r, 3, 4), normal(r, 3, 4)), lambda r: (normal(r, 1, 2), normal(r, 1, 2)))
def stack_family(a, b):
    return (np.stack([a, b]), np.stack([a, b], axis=-1), np.vstack([a, b]), np.hstack([a, b]),
            np.dstack([a, b]), np.column_stack([a[0], b[0]]), np.concatenate([a, b], axis=None))


@case(lambda r: (normal(r, 12, 4),), lambda r: (normal(r, 6, 3),))
def split_family(x):
    parts = np.split(x, 3)
    uneven = np.array_split(x, 5, axis=0)
    cols = np.hsplit(x, [1, 2])
    return [p.sum() for p in parts], [u.shape for u in uneven], cols[1], np.vsplit(x, 3)[2]


@case(lambda r: (np.linspace(0, 1, 5), np.linspace(-1, 1, 4)),
      lambda r: (np.array([0.0]), np.array([1.0, 2.0])))
def meshgrid_forms(x, y):
    xx, yy = np.meshgrid(x, y)
    xi, yi = np.meshgrid(x, y, indexing="ij")
    sx, sy = np.meshgrid(x, y, sparse=True)
    return xx + yy, xi * yi, (sx * sy).shape, np.hypot(xx, yy)


@case(lambda r: (normal(r, 3, 2),), lambda r: (ints(r, 0, 5, 2),))
def tile_repeat_forms(x):
    return (np.tile(x, 2), np.tile(x, (2, 1)), np.repeat(x, 3), np.repeat(x, 2, axis=0),
            np.repeat(x, [1, 2][: x.shape[0]] + [0] * (x.shape[0] - 2), axis=0))


@case(lambda r: (ints(r, 0, 4, 10), 4), lambda r: (np.array([0, 0]), 2))
def one_hot_forms(labels, k):
    a = np.eye(k)[labels]
    b = np.zeros((labels.size, k), np.int8)
    b[np.arange(labels.size), labels] = 1
    c = (labels[:, None] == np.arange(k)).astype(np.float32)
    return a, b, c


@case(lambda r: (ints(r, 0, 4, 20), normal(r, 20)),
      lambda r: (np.array([2, 2, 0]), np.array([1.0, 2.0, 3.0])))
def group_sum_mean(keys, vals):
    s = np.bincount(keys, weights=vals, minlength=4)
    n = np.bincount(keys, minlength=4)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s, s / n, np.add.reduceat(np.sort(vals), [0, len(vals) // 2])


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 1),))
def reshape_and_axes_ops(x):
    return (x.reshape(-1), x.reshape(x.shape[1], -1), np.moveaxis(x[None], 0, -1),
            np.swapaxes(x, 0, 1), np.expand_dims(x, (0, 2)), x.ravel(order="F"))


@case(lambda r: (normal(r, 6, 4), ints(r, 0, 6, 3)),
      lambda r: (normal(r, 2, 2), np.array([1, 1, 0])))
def fancy_row_gather_scatter(x, rows):
    picked = x[rows]
    y = x.copy()
    y[rows] = -1.0
    z = x.copy()
    np.add.at(z, rows, 1.0)
    return picked, y, z


@case(lambda r: (ints(r, 0, 6, 15),), lambda r: (np.array([5, 5, 5]),),
      lambda r: (ints(r, 0, 1, 0),))
def unique_forms(x):
    u, c = np.unique(x, return_counts=True)
    u2, inv = np.unique(x, return_inverse=True)
    return u, c, inv, u2[inv]


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 4), 0))
def sort_partition_forms(x, k):
    s = np.sort(x)[::-1]
    part = np.partition(x, k)[k]
    return s, part, np.argpartition(x, k)[k] == np.argsort(x, kind="stable")[k]


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 1, 3),))
def where_select_chains(x):
    a = np.where(x > 1, 1, np.where(x < -1, -1, 0))
    b = np.select([x > 1, x < -1], [x * 2, x / 2], default=0.0)
    c = np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
    return a, b, c


@case(lambda r: (normal(r, 3, 4, 5),), lambda r: (normal(r, 2, 1, 3),))
def axes_tuple_reductions(x):
    return (x.sum(axis=(0, 2)), x.mean(axis=(0, 2), keepdims=True), x.max(axis=(1, 2)),
            np.std(x, axis=(0, 1)), np.any(x > 2, axis=(0, 2)), np.prod(x, axis=(0, 1, 2)))


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def insert_delete_append(x):
    y = np.insert(x, [0, len(x)], [-9.0, 9.0])
    z = np.delete(y, [1, 2])
    return np.append(z, x[:2]), np.roll(x, 2), np.flip(x)


@case(lambda r: (ints(r, 0, 10, 20), ints(r, 0, 10, 15)),
      lambda r: (np.array([1, 2]), np.array([3, 4])))
def set_operations(a, b):
    return (np.intersect1d(a, b), np.union1d(a, b), np.setdiff1d(a, b), np.isin(a, b),
            np.setxor1d(a, b))


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 6, 1),))
def triangular_and_diag(x):
    return np.triu(x, 1), np.tril(x), np.diag(x), np.trace(x), np.diagonal(x, offset=1)


# ---- simulations with Python loops -----------------------------------------------------------

@case(lambda r: (np.random.default_rng(0), 50, 3), lambda r: (np.random.default_rng(1), 2, 1))
def random_walks(rng, steps, walkers):
    pos = np.zeros(walkers)
    path = np.empty((steps, walkers))
    for t in range(steps):
        pos += rng.choice([-1.0, 1.0], size=walkers)
        path[t] = pos
    return path, np.abs(path).max(axis=0)


@case(lambda r: (np.array([0] * 15 + [1] + [0] * 15, np.uint8), 30, 10),
      lambda r: (np.array([1, 0, 1], np.uint8), 90, 3))
def elementary_cellular_automaton(state, rule, steps):
    table = np.array([(rule >> i) & 1 for i in range(8)], np.uint8)
    rows = [state]
    for _ in range(steps):
        left, right = np.roll(state, 1), np.roll(state, -1)
        state = table[(left << 2) | (state << 1) | right]
        rows.append(state)
    return np.array(rows)


@case(lambda r: (r.random((12, 12)) < 0.3, 5), lambda r: (np.zeros((3, 3), bool), 2))
def game_of_life(board, steps):
    b = board.astype(np.uint8)
    for _ in range(steps):
        n = sum(np.roll(np.roll(b, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
                if (i, j) != (0, 0))
        b = ((n == 3) | ((b == 1) & (n == 2))).astype(np.uint8)
    return b


@case(lambda r: (r.random(30), 0.2, 40), lambda r: (np.ones(3), 0.5, 2))
def diffusion_1d_explicit(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (0.99, 0.01, 0.0, 0.3, 0.1, 100), lambda r: (0.5, 0.5, 0.0, 0.0, 0.0, 3))
def sir_model_euler(s, i, rec, beta, gamma, steps):
    out = np.zeros((steps, 3))
    for t in range(steps):
        ds = -beta * s * i
        dr = gamma * i
        s, i, rec = s + ds, i - ds - dr, rec + dr
        out[t] = (s, i, rec)
    return out


@case(lambda r: (np.array([1.0, 0.0]), 0.01, 200), lambda r: (np.array([0.0, 1.0]), 0.5, 3))
def rk4_harmonic_oscillator(y0, h, n):
    def f(y):
        return np.array([y[1], -y[0]])
    y = y0.astype(float)
    traj = [y]
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(y)
    return np.array(traj)


@case(lambda r: (np.random.default_rng(2), 1000), lambda r: (np.random.default_rng(3), 1))
def monte_carlo_pi(rng, n):
    pts = rng.random((n, 2))
    inside = np.sum(np.sum(pts ** 2, axis=1) <= 1.0)
    return 4.0 * inside / n


@case(lambda r: (normal(r, 10, 2), normal(r, 10, 2), 0.01, 20),
      lambda r: (normal(r, 2, 2), np.zeros((2, 2)), 0.1, 2))
def particles_in_box(pos, vel, dt, steps):
    pos, vel = pos.copy(), vel.copy()
    for _ in range(steps):
        pos += vel * dt
        hit = np.abs(pos) > 1.0
        vel[hit] *= -1
        pos = np.clip(pos, -1.0, 1.0)
    return pos, vel


@case(lambda r: (np.random.default_rng(4), 0.3, 40), lambda r: (np.random.default_rng(5), 0.9, 5))
def geometric_brownian_paths(rng, sigma, n):
    z = rng.standard_normal((3, n))
    inc = (0.05 - 0.5 * sigma ** 2) / n + sigma * np.sqrt(1.0 / n) * z
    return 100 * np.exp(np.cumsum(inc, axis=1))


@case(lambda r: (r.random((8, 8)), 30), lambda r: (np.zeros((3, 3)), 1))
def jacobi_laplace(u, iters):
    u = u.copy()
    u[0, :] = 1.0
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


@case(lambda r: (2.0, 1e-10, 50), lambda r: (10.0, 1e-3, 5))
def newton_sqrt_loop(a, tol, max_iter):
    x = a
    for k in range(max_iter):
        nx = 0.5 * (x + a / x)
        if abs(nx - x) < tol:
            return nx, k
        x = nx
    return x, max_iter


@case(lambda r: (np.random.default_rng(6), 4, 30), lambda r: (np.random.default_rng(7), 2, 1))
def markov_chain_steps(rng, k, n):
    p = rng.random((k, k))
    p /= p.sum(axis=1, keepdims=True)
    state = np.zeros(k)
    state[0] = 1.0
    hist = []
    for _ in range(n):
        state = state @ p
        hist.append(state.copy())
    return np.array(hist), np.linalg.matrix_power(p, n)[0]


# ---- np.random Generator passed in ---------------------------------------------------------

@case(lambda r: (normal(r, 20), np.random.default_rng(8)),
      lambda r: (normal(r, 1), np.random.default_rng(9)))
def add_gaussian_noise(x, rng):
    return x + rng.normal(0.0, 0.1, size=x.shape)


@case(lambda r: (normal(r, 12, 3), np.random.default_rng(10)),
      lambda r: (normal(r, 2, 2), np.random.default_rng(11)))
def shuffle_and_split(x, rng):
    idx = rng.permutation(len(x))
    cut = int(0.75 * len(x))
    return x[idx[:cut]], x[idx[cut:]]


@case(lambda r: (np.random.default_rng(12), 5, 3), lambda r: (np.random.default_rng(13), 1, 1))
def random_init_weights(rng, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    w = rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32)
    return w, np.abs(w).max() <= limit


@case(lambda r: (normal(r, 10), np.random.default_rng(14), 0.5),
      lambda r: (normal(r, 3), np.random.default_rng(15), 0.0))
def dropout_with_generator(x, rng, p):
    mask = rng.random(x.shape) >= p
    return np.where(mask, x / (1 - p), 0.0)


# ---- integer overflow ------------------------------------------------------------------------

@case(lambda r: (np.array([127, -128, 100, 0], np.int8),),
      lambda r: (ints(r, -128, 128, 6, dtype="int8"),))
def int8_wraparound(x):
    return x + np.int8(1), x * 2, -x, np.abs(x), x.sum(), x.sum(dtype=np.int8)


@case(lambda r: (np.array([2**31 - 1, -2**31, 5], np.int32),),
      lambda r: (ints(r, -99, 99, 4, dtype="int32"),))
def int32_overflow(x):
    return x + 1, x * x, np.cumsum(x, dtype=np.int32), x.astype(np.int64) * x


@case(lambda r: (np.array([2**64 - 1, 0, 2**63], np.uint64),),
      lambda r: (np.array([1, 2], np.uint64),))
def uint64_wrap_and_shift(x):
    return x + np.uint64(1), x - np.uint64(1), x >> np.uint64(3), x * np.uint64(3)


@case(lambda r: (np.array([1, 2, 3], np.int64), np.array([62, 63, 64])),
      lambda r: (np.array([-8, 8], np.int64), np.array([1, 2])))
def shifts_past_width(x, s):
    return x << s, x >> s, np.left_shift(1, s[:1])


@case(lambda r: (np.array([200, 100, 255], np.uint8), np.array([100, 200, 1], np.uint8)),
      lambda r: (img(r, 5), img(r, 5)))
def uint8_difference_traps(a, b):
    return (a - b, np.abs(a.astype(np.int16) - b), (a > b) * (a - b),
            np.subtract(a, b, dtype=np.int16))


@case(lambda r: (np.array([10**18, 10**18], np.int64),), lambda r: (np.arange(5),))
def int64_sum_overflow(x):
    return x.sum(), np.prod(x), np.cumprod(x), x * 10


# ---- complex numbers -------------------------------------------------------------------------

@case(lambda r: (8,), lambda r: (1,), lambda r: (3,))
def roots_of_unity(n):
    k = np.arange(n)
    w = np.exp(2j * np.pi * k / n)
    return w, np.abs(w.sum()) < 1e-9 if n > 1 else w.sum(), np.prod(w)


@case(lambda r: (normal(r, 10) + 1j * normal(r, 10),),
      lambda r: ((normal(r, 3) + 1j * normal(r, 3)).astype(np.complex64),))
def complex_elementwise(z):
    return (z.real, z.imag, np.conj(z), np.abs(z), z * z.conj(), np.exp(z), z.sum(),
            np.angle(z), z / (1 + 1j))


@case(lambda r: (normal(r, 4) + 1j * normal(r, 4), normal(r, 6)),
      lambda r: (np.array([1.0 + 0j]), np.array([0.0, 1.0])))
def complex_polyval(coeffs, x):
    return np.polyval(coeffs, x), np.polyval(coeffs.real, x + 0.5j)


@case(lambda r: (np.linspace(-2, 0.5, 12), np.linspace(-1, 1, 10), 20),
      lambda r: (np.array([0.0]), np.array([0.0]), 5))
def mandelbrot_escape(xs, ys, max_iter):
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int32)
    for _ in range(max_iter):
        z = z * z + c
        alive = np.abs(z) <= 2
        count += alive
        z = np.where(alive, z, 2.5)
    return count


@case(lambda r: (normal(r, 30), 50.0, 1000.0), lambda r: (normal(r, 2), 1.0, 10.0))
def phasor_demodulation(x, f, fs):
    t = np.arange(len(x)) / fs
    carrier = np.exp(-2j * np.pi * f * t)
    bb = x * carrier
    return bb.mean(), np.abs(bb).max(), bb.real.dtype


# ---- structured control flow ----------------------------------------------------------------

@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 3, 4),))
def normalize_by_ndim(x):
    if x.ndim == 1:
        return x / np.linalg.norm(x)
    elif x.ndim == 2:
        return x / np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.abs(x).max()


@case(lambda r: (normal(r, 3, 4, 5),), lambda r: (normal(r, 6),), lambda r: (normal(r, 2, 2),))
def loop_over_axes(x):
    out = []
    for axis in range(x.ndim):
        out.append(x.sum(axis=axis))
        out.append(np.diff(x, axis=axis).mean() if x.shape[axis] > 1 else 0.0)
    return out


@case(lambda r: (normal(r, 0),), lambda r: (normal(r, 1),), lambda r: (normal(r, 9),))
def early_returns_on_shape(x):
    if x.size == 0:
        return np.nan
    if x.shape[0] == 1:
        return float(x[0])
    return np.median(x)


@case(lambda r: (normal(r, 6, 3), "l2"), lambda r: (normal(r, 6, 3), "l1"),
      lambda r: (normal(r, 2, 2), "max"), lambda r: (normal(r, 2, 2), "bogus"))
def normalize_by_string_option(x, how):
    if how == "l2":
        n = np.sqrt((x ** 2).sum(axis=1, keepdims=True))
    elif how == "l1":
        n = np.abs(x).sum(axis=1, keepdims=True)
    elif how == "max":
        n = np.abs(x).max(axis=1, keepdims=True)
    else:
        raise ValueError(f"unknown norm {how!r}")
    return x / n


@case(lambda r: (normal(r, 4, 4), None), lambda r: (normal(r, 4, 4), 0),
      lambda r: (normal(r, 4, 4), 1))
def optional_axis_argument(x, axis):
    m = x.mean(axis=axis, keepdims=axis is not None)
    return x - m, np.argmax(x, axis=axis)


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 10), 0), lambda r: (normal(r, 3), 5))
def while_loop_halving(x, k):
    y = x.copy()
    n = 0
    while n < k and y.size > 1:
        y = 0.5 * (y[::2][: y.size // 2] + y[1::2][: y.size // 2])
        n += 1
    return y, n


@case(lambda r: (normal(r, 8), normal(r, 8)), lambda r: (normal(r, 3, 2), normal(r, 2)))
def dtype_and_shape_dispatch(a, b):
    if a.shape == b.shape:
        r_ = a * b
    else:
        r_ = a @ b
    if np.issubdtype(r_.dtype, np.floating):
        r_ = np.round(r_, 3)
    return r_


# ---- keyword arguments of every sort ---------------------------------------------------------

@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 3, dtype="float32"),))
def out_arguments(x):
    o = np.empty_like(x)
    np.multiply(x, 2.0, out=o)
    s = np.empty(x.shape[1])
    np.sum(x, axis=0, out=s)
    m = np.zeros((1, x.shape[1]), dtype=x.dtype)
    np.maximum(x[:1], 0, out=m)
    return o, s, m


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 5, dtype="float32").T,))
def where_and_initial(x):
    pos = x > 0
    return (np.sum(x, where=pos), np.max(x, axis=1, where=pos, initial=-np.inf),
            np.min(x, initial=0.0), np.mean(x, axis=0, where=pos),
            np.add(x, 1.0, where=pos, out=np.zeros_like(x)))


@case(lambda r: (ints(r, 0, 200, 4, 5, dtype="uint8"),), lambda r: (img(r, 2, 3),))
def dtype_keywords(x):
    return (x.sum(dtype=np.uint8), x.sum(axis=0, dtype=np.int64), np.mean(x, dtype=np.float32),
            np.cumsum(x, axis=1, dtype=np.uint16), np.add(x, x, dtype=np.int16),
            x.astype(np.float16), np.prod(x, dtype=np.float64))


@case(lambda r: (normal(r, 5, 6),), lambda r: (normal(r, 2, 1),))
def ddof_and_keepdims(x):
    return (np.var(x, ddof=1), np.std(x, axis=1, ddof=1, keepdims=True),
            np.var(x, axis=0, keepdims=True),
            np.average(x, axis=1, weights=np.arange(1.0, x.shape[1] + 1)))


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1, dtype="float32"),))
def ufunc_methods_with_keywords(x):
    return (np.add.reduce(x, initial=10.0), np.maximum.accumulate(x),
            np.multiply.outer(x, x[:2]), np.add.accumulate(x, dtype=np.float64),
            np.minimum.reduce(x, keepdims=True, initial=np.inf))


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 0, 3),))
def clip_round_keywords(x):
    return (np.clip(x, a_min=-0.5, a_max=None), np.round(x, decimals=2), np.around(x, 1),
            np.clip(x, -1, 1, out=np.empty_like(x)), np.rint(x, out=np.empty_like(x)))


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 1, 1),))
def sort_keywords(x):
    return (np.sort(x, axis=None), np.sort(x, axis=0, kind="stable"), np.argsort(x, axis=-1),
            np.sort(x, axis=1)[:, ::-1])


@case(lambda r: (normal(r, 5, 4), normal(r, 4, 3)), lambda r: (normal(r, 1, 2), normal(r, 2, 1)))
def einsum_and_tensordot_keywords(a, b):
    return (np.einsum("ij,jk->ik", a, b, optimize=True), np.tensordot(a, b, axes=1),
            np.tensordot(a, a, axes=([0, 1], [0, 1])), np.einsum("ii->", a @ a.T),
            np.matmul(a, b, dtype=np.float64))


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def linspace_arange_keywords(x):
    n = x.shape[0]
    return (np.linspace(0, 1, num=n, endpoint=False), np.linspace(-1, 1, n, retstep=True),
            np.arange(start=0, stop=n, step=2, dtype=np.float32), np.geomspace(1, 100, num=n),
            np.logspace(0, 2, n, base=10.0))


@case(lambda r: (normal(r, 4, 4),), lambda r: (np.eye(2),))
def full_like_and_friends(x):
    return (np.full_like(x, 7, dtype=np.int32), np.zeros_like(x, dtype=bool),
            np.ones_like(x, shape=(2, 3)), np.empty_like(x).shape,
            np.identity(x.shape[0], dtype=int),
            np.eye(x.shape[0], k=1))


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 2),))
def cumulative_keywords(x):
    return (np.cumsum(x, axis=0), np.cumprod(x, axis=1), np.diff(x, n=2, axis=1, prepend=0.0),
            np.diff(x, axis=0, append=x[-1:]), np.gradient(x, axis=1) if x.shape[1] > 1 else x)


@case(lambda r: (normal(r, 5, 5), 2), lambda r: (normal(r, 3, 3), -1))
def pad_keywords(x, w):
    w = abs(w)
    return (np.pad(x, w, mode="constant", constant_values=-1), np.pad(x, ((w, 0), (0, w)), "edge"),
            np.pad(x, w, mode="reflect", reflect_type="odd"), np.pad(x, (1, 2), "wrap"))


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 2),))
def isclose_allclose_keywords(x):
    y = x + 1e-9
    return (np.isclose(x, y), np.allclose(x, y, rtol=0, atol=1e-12),
            np.isclose(x, y, equal_nan=True),
            np.array_equal(x, x.copy()), np.count_nonzero(x > 0, axis=1))


@pytest.mark.parametrize("name", sorted(CASES5))
def test_wild5_function_matches_numpy(name: str) -> None:
    run_case(name, CASES5)


# ---- regression tests of the fixes this corpus found ----------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nanvar_keeps_the_nan_of_inf_minus_inf(dtype: str) -> None:
    """np.nanvar/np.nanstd zero the deviations where x is NaN (NumPy's mask of the input), not
    every NaN deviation: an inf makes the mean inf and its own deviation inf - inf = NaN, so the
    variance is NaN (Stax gave inf)."""
    fn = stax.jit(lambda x: (np.nanstd(x), np.nanvar(x, axis=0), np.nanvar(x, axis=1, ddof=1),
                             np.nanstd(x, axis=0, keepdims=True)), strict=True)
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, np.nan], [np.nan, np.nan, -np.inf],
                  [4.0, 5.0, 6.0]], dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for v in (x, x.T, x[::2]):
            same(fn(v), (np.nanstd(v), np.nanvar(v, axis=0), np.nanvar(v, axis=1, ddof=1),
                         np.nanstd(v, axis=0, keepdims=True)))


def _reductions_into_out(x: Any) -> Any:
    s, m = np.empty(x.shape[1], x.dtype), np.zeros((1, x.shape[1]), x.dtype)
    t, c = np.zeros((), x.dtype), np.empty(x.shape, x.dtype)
    i = np.zeros(x.shape[0], np.intp)
    r1 = np.sum(x, axis=0, out=s)
    np.max(x, axis=0, keepdims=True, out=m)
    np.add.reduce(x, axis=None, out=t)
    np.cumsum(x, axis=1, out=c)
    np.argmax(x, axis=1, out=i)
    f = np.zeros(x.shape[1], np.float64)
    np.mean(x, axis=0, out=f)  # (another dtype for integer x: NumPy runs it)
    return r1 is s, s, m, t, c, i, f, np.prod(x, axis=0, out=np.ones(x.shape[1], x.dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_reductions_and_scans_write_out(dtype: str) -> None:
    """np.sum/max/prod/mean/argmax/cumsum and ufunc.reduce with out= of the result's dtype and
    shape write into out and return it (were graph breaks); another dtype stays NumPy's."""
    r = np.random.default_rng(3)
    x = (r.standard_normal((4, 5)) * 4).astype(dtype)
    fn = stax.jit(_reductions_into_out, strict=dtype == "float64")  # (mean's out: float64)
    for v in (x, x.T, x[::2, ::-1], x[:0]):
        with np.errstate(all="ignore"):
            try:
                want = _reductions_into_out(v)
            except ValueError:
                with pytest.raises(ValueError):
                    fn(v)
                continue
            same(fn(v), want)


def test_matmul_dtype_keyword() -> None:
    """np.matmul(a, b, dtype=) computes in that dtype (was a graph break); a dtype the operands
    do not cast to ('same_kind') is NumPy's error."""
    r = np.random.default_rng(4)
    a, b = r.standard_normal((3, 4)).astype(np.float32), r.standard_normal((4, 2))
    fn = stax.jit(lambda a, b: (np.matmul(a, b, dtype=np.float64), a @ b.astype(np.float32)),
                  strict=True)
    same(fn(a, b), (np.matmul(a, b, dtype=np.float64), a @ b.astype(np.float32)))
    same(fn(a.T.copy().T, b[:, :1]), (np.matmul(a, b[:, :1], dtype=np.float64),
                                      a @ b[:, :1].astype(np.float32)))
    bad = stax.jit(lambda a, b: np.matmul(a, b, dtype=np.int32))
    with pytest.raises(TypeError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad(a, b)


def _repeats(x: Any) -> Any:
    return (np.repeat(x, [1, 0, 2], axis=0), np.repeat(x, [3]), np.repeat(x, np.arange(x.size)),
            np.repeat(x[:, 0], (2, 2, 1)))


def test_repeat_with_a_count_per_element() -> None:
    """np.repeat with a list/array of counts known while tracing compiles (a gather of the
    positions NumPy's np.repeat gives); NumPy's errors for bad counts."""
    for x in (np.arange(6.0).reshape(3, 2), np.arange(6, dtype=np.int8).reshape(2, 3).T,
              np.array([[True], [False], [True]])):
        same(stax.jit(_repeats, strict=True)(x), _repeats(x))
    for bad in ([1, 2], [1, -1, 1]):
        with pytest.raises(ValueError):
            stax.jit(lambda v, b=bad: np.repeat(v, b), strict=True)(np.arange(3.0))


def _unpacked(x: Any) -> Any:
    return (np.unpackbits(x, axis=1, count=5), np.unpackbits(x, axis=0, count=20),
            np.unpackbits(x, count=-3), np.unpackbits(x, axis=1, count=0),
            np.unpackbits(x, axis=1, count=-12, bitorder="little"))


def test_unpackbits_count() -> None:
    """np.unpackbits(count=) compiles: NumPy's length (zeros padded past the bits, bits
    trimmed for a negative count) and its errors (was a graph break)."""
    r = np.random.default_rng(6)
    for x in (img(r, 3, 2), img(r, 2, 3).T, img(r, 1, 2)):
        same(stax.jit(_unpacked, strict=True)(x), _unpacked(x))
    for bad, error in ((-100, ValueError), (2.5, TypeError)):
        with pytest.raises(error):
            stax.jit(lambda v, c=bad: np.unpackbits(v, axis=1, count=c))(img(r, 2, 2))


def _covariances(x: Any) -> Any:
    return (np.cov(x), np.cov(x, rowvar=False, bias=True), np.corrcoef(x), np.cov(x[0], x[1]),
            np.cov(x, ddof=0))


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float64"])
def test_cov_of_complex_data_conjugates(dtype: str) -> None:
    """np.cov is X @ X.T.conj() / fact: the conjugate was missing, so complex covariances
    (and corrcoef) were silently wrong."""
    r = np.random.default_rng(7)
    x = (r.standard_normal((3, 5)) + (1j * r.standard_normal((3, 5)) if "c" in dtype[0] else 0)
         ).astype(dtype)
    for v in (x, x.T.copy().T, x[:, ::-1]):
        same(stax.jit(_covariances, strict=True)(v), _covariances(v))


def _complex_norms(z: Any) -> Any:
    return (np.linalg.norm(z), np.linalg.norm(z, axis=1), np.linalg.norm(z, "fro"),
            np.linalg.norm(z, axis=(0, 1)), np.linalg.norm(z[0], 3), np.linalg.norm(z, 1),
            np.linalg.vector_norm(z), np.linalg.matrix_norm(z),
            np.linalg.norm(z, axis=0, keepdims=True))


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_norms_of_complex_data_are_real(dtype: str) -> None:
    """np.linalg.norm's 2-norms and Frobenius norm of complex data sum |z|**2 = re*re +
    im*im (they summed z*z: a complex 'norm', silently wrong)."""
    r = np.random.default_rng(8)
    z = (r.standard_normal((3, 4)) + 1j * r.standard_normal((3, 4))).astype(dtype)
    for v in (z, z.T.copy().T, z[:, ::-1], z[:0]):
        with np.errstate(all="ignore"):
            try:
                want = _complex_norms(v)
            except Exception as e:  # noqa: BLE001 - Stax must raise the same class
                with pytest.raises(type(e)):
                    stax.jit(_complex_norms)(v)
                continue
            same(stax.jit(_complex_norms, strict=True)(v), want)


def test_bool_array_squared_is_int8() -> None:
    """`b ** 2` of a bool array is NumPy's fast path np.square: int8 (np.power gives int64;
    Stax gave int64 for both: a wrong dtype)."""
    b = np.array([[True, False], [False, True]])
    fn = stax.jit(lambda v: (v ** 2, v.T ** 2, np.power(v, 2), v ** 3, v ** 2.0), strict=True)
    for v in (b, b[::-1], np.ones((0, 2), bool)):
        same(fn(v), (v ** 2, v.T ** 2, np.power(v, 2), v ** 3, v ** 2.0))


if __name__ == "__main__":
    main(sys.argv[1:], CASES5)
