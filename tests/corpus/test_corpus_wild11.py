"""An eleventh wave of the wild corpus (s13 HUNT6): ordinary NumPy programs in styles the first
ten waves use least — uint8 image pipelines with channels, clipping and casts (separable blur by
slicing, histogram equalization through a cumulative LUT, Sobel magnitudes, gamma, alpha
compositing), signal processing (windows, np.convolve/np.correlate in every mode, framing by
reshape and strides, zero padding, np.fft), statistics with weights and ddof, quantiles with
axis/keepdims, histogram/bincount/digitize, geometry (cross products, rotations, pairwise
distances, the np.linalg solvers), ranking (argsort of argsort, lexsort, unique with counts and
inverse, searchsorted), table wrangling with masks and np.where/select/choose, integer corners
(uint8/int16 wrap-around, NumPy 2 promotion with Python scalars, bit operations), reductions
with `where=`/`initial=`/`out=`/`dtype=`, in-place operations on views, ufunc.reduceat/.outer,
einsum with repeated indices, float32 pipelines that must stay float32, and complex64.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild11 [names]` prints each function's class.

Counts (122 functions): on main cf987e2 96 compiled, 25 break, 1 FAIL — `return A[i], A[:, i]`
with i an argument returned copies where NumPy returns views of the caller's array; after the
fixes 98 compiled, 24 break, 0 FAIL (np.any/np.all with where= compile; np.isposinf/isneginf
too); s13 CHOOSE: 100 compiled, 22 break (np.choose and np.nextafter compile:
grade_bands_select and choose_columns; nan_inf_classification still breaks on its `if`). Still
breaks: np.random.default_rng, np.fft, np.linalg.lstsq/eigvals/matrix_rank, np.polyder,
ndarray.view(dtype), np.unique(axis=) and of fewer than 2 elements,
np.intersect1d(return_indices=), data-dependent lengths (x[mask], np.extract, np.argwhere,
np.flatnonzero), np.max(out=) of another dtype, float()/int()/.item()/.tolist() and the truth
value of traced arrays (np.allclose in a tuple, `if ... .any()`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints

CASES11: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES11)


def u8(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.integers(0, 256, shape).astype(np.uint8)


# ---- images ---------------------------------------------------------------------------------

@case(lambda r: (u8(r, 6, 7, 3),), lambda r: (u8(r, 1, 1, 3),), lambda r: (u8(r, 4, 6, 3)[:, ::2],))
def rgb_to_luma_u8(im):
    w = np.array([0.299, 0.587, 0.114])
    y = im.astype(np.float64) @ w
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


@case(lambda r: (u8(r, 8, 9),), lambda r: (u8(r, 3, 3).T,))
def separable_box_blur(im):
    f = im.astype(np.float32)
    p = np.pad(f, 1, mode="edge")
    h = (p[:, :-2] + p[:, 1:-1] + p[:, 2:]) / 3
    v = (h[:-2] + h[1:-1] + h[2:]) / 3
    return v.astype(np.uint8), v.dtype


@case(lambda r: (u8(r, 16, 16),), lambda r: (np.full((2, 3), 7, np.uint8),))
def histogram_equalize(im):
    hist = np.bincount(im.ravel(), minlength=256)
    cdf = hist.cumsum()
    nz = cdf[cdf > 0][0]
    denom = max(cdf[-1] - nz, 1)
    lut = np.clip(np.round((cdf - nz) * 255.0 / denom), 0, 255).astype(np.uint8)
    return lut[im]


@case(lambda r: (u8(r, 7, 8),), lambda r: (u8(r, 3, 3),))
def sobel_magnitude_u8(im):
    f = im.astype(np.int16)
    gx = (f[:-2, 2:] + 2 * f[1:-1, 2:] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[1:-1, :-2] + f[2:, :-2])
    gy = (f[2:, :-2] + 2 * f[2:, 1:-1] + f[2:, 2:]) - (f[:-2, :-2] + 2 * f[:-2, 1:-1] + f[:-2, 2:])
    mag = np.hypot(gx, gy)
    return gx.dtype, np.minimum(mag, 255).astype(np.uint8), np.arctan2(gy, gx)


@case(lambda r: (u8(r, 5, 6, 3), 0.5), lambda r: (u8(r, 2, 2, 3), 2.2))
def gamma_correct_lut(im, g):
    lut = (255 * (np.arange(256) / 255.0) ** (1 / g)).astype(np.uint8)
    return np.take(lut, im)


@case(lambda r: (u8(r, 4, 5, 4), u8(r, 4, 5, 3)), lambda r: (u8(r, 1, 2, 4), u8(r, 1, 2, 3)))
def alpha_composite_over(fg, bg):
    a = fg[..., 3:4].astype(np.float32) / 255
    out = fg[..., :3] * a + bg * (1 - a)
    return out.round().astype(np.uint8), out.dtype


@case(lambda r: (u8(r, 5, 5), 40), lambda r: (u8(r, 2, 2), 300))
def brighten_uint8_corners(im, d):
    wrapped = im + np.uint8(d % 256)
    sat = np.clip(im.astype(np.int16) + d, 0, 255).astype(np.uint8)
    return wrapped, sat, (im // 2 + im // 2).dtype, 255 - im


@case(lambda r: (u8(r, 6, 6, 3),), lambda r: (u8(r, 0, 4, 3),))
def channel_statistics(im):
    flat = im.reshape(-1, 3)
    return (flat.mean(axis=0), flat.std(axis=0, dtype=np.float64), im.max(axis=(0, 1)),
            im.sum(axis=-1, dtype=np.uint16) if im.size else im.sum(axis=-1), im.min(initial=255))


@case(lambda r: (u8(r, 9, 9),), lambda r: (u8(r, 4, 4),))
def downsample_2x2_mean(im):
    h, w = im.shape[0] // 2 * 2, im.shape[1] // 2 * 2
    blocks = im[:h, :w].reshape(h // 2, 2, w // 2, 2)
    return blocks.mean(axis=(1, 3)).astype(np.uint8), blocks.max(axis=(1, 3))


@case(lambda r: (u8(r, 6, 5, 3),), lambda r: (u8(r, 2, 2, 3),))
def flips_and_rotations(im):
    return (im[::-1], np.flip(im, axis=1), np.rot90(im), np.rot90(im, k=2, axes=(0, 1)),
            np.transpose(im, (1, 0, 2)), im[:, :, ::-1])


@case(lambda r: (u8(r, 8, 8), 100), lambda r: (u8(r, 2, 3), 0))
def threshold_morphology(im, t):
    b = im > t
    p = np.pad(b, 1)
    dil = p[1:-1, 1:-1] | p[:-2, 1:-1] | p[2:, 1:-1] | p[1:-1, :-2] | p[1:-1, 2:]
    ero = p[1:-1, 1:-1] & p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return dil.astype(np.uint8) * 255, np.count_nonzero(ero), (dil ^ ero).sum()


@case(lambda r: (u8(r, 5, 6),), lambda r: (u8(r, 1, 1),))
def integral_image(im):
    ii = np.zeros((im.shape[0] + 1, im.shape[1] + 1), np.int64)
    ii[1:, 1:] = im.cumsum(0).cumsum(1)
    return ii, ii[-1, -1] == im.sum(dtype=np.int64)


@case(lambda r: (u8(r, 6, 6, 3),), lambda r: (u8(r, 3, 1, 3),))
def rgb_to_hsv_value_sat(im):
    f = im / 255.0
    mx = f.max(axis=-1)
    mn = f.min(axis=-1)
    s = np.where(mx > 0, (mx - mn) / np.where(mx > 0, mx, 1), 0.0)
    return mx, s, np.argmax(f, axis=-1)


@case(lambda r: (u8(r, 10, 10),), lambda r: (u8(r, 3, 3),))
def unsharp_mask(im):
    f = im.astype(np.float64)
    k = np.array([1.0, 2.0, 1.0]) / 4
    p = np.pad(f, 1, mode="reflect")
    blur = k[0] * p[:-2] + k[1] * p[1:-1] + k[2] * p[2:]
    blur = k[0] * blur[:, :-2] + k[1] * blur[:, 1:-1] + k[2] * blur[:, 2:]
    return np.clip(f + 1.5 * (f - blur), 0, 255).astype(np.uint8)


@case(lambda r: (u8(r, 6, 8),), lambda r: (u8(r, 1, 3),))
def image_normalize_float32(im):
    f = im.astype(np.float32) / np.float32(255)
    m = f.mean()
    s = f.std()
    z = (f - m) / (s + np.float32(1e-6))
    return z.dtype, z, m.dtype


@case(lambda r: (u8(r, 12, 3),), lambda r: (u8(r, 2, 3),))
def palette_quantize(px):
    pal = np.array([[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]], np.int32)
    d = ((px[:, None, :].astype(np.int32) - pal[None]) ** 2).sum(-1)
    idx = d.argmin(axis=1)
    return idx, pal[idx].astype(np.uint8)


# ---- signal processing ----------------------------------------------------------------------

@case(lambda r: (normal(r, 32),), lambda r: (normal(r, 5, dtype="float32"),))
def windowed_energy(x):
    n = x.size
    w = np.hanning(n)
    hm = np.hamming(n)
    return (x * w).sum(), np.dot(x, hm), np.blackman(n).sum(), np.bartlett(n)[n // 2]


@case(lambda r: (normal(r, 20), normal(r, 5)), lambda r: (normal(r, 3), normal(r, 3)),
      lambda r: (normal(r, 2), normal(r, 4)))
def convolve_modes(x, k):
    return (np.convolve(x, k), np.convolve(x, k, mode="same"), np.convolve(x, k, mode="valid"))


@case(lambda r: (normal(r, 16), normal(r, 4)), lambda r: (normal(r, 3), normal(r, 3)))
def correlate_modes(x, y):
    return (np.correlate(x, y), np.correlate(x, y, mode="full"), np.correlate(x, y, mode="same"),
            np.argmax(np.correlate(x, y, "full")))


@case(lambda r: (normal(r, 40), 8, 4), lambda r: (normal(r, 8), 8, 8))
def frame_signal_reshape(x, frame, hop):
    n = 1 + (x.size - frame) // hop
    idx = np.arange(frame)[None, :] + hop * np.arange(n)[:, None]
    frames = x[idx] * np.hanning(frame)
    return frames, np.sqrt((frames ** 2).mean(axis=1))


@case(lambda r: (normal(r, 30), 6), lambda r: (normal(r, 6), 6))
def frame_by_strides(x, w):
    v = np.lib.stride_tricks.sliding_window_view(x, w)[::2]
    return v.mean(axis=1), v.std(axis=1), v[:, ::-1].copy()


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 5),))
def fft_power_spectrum(x):
    X = np.fft.rfft(x)
    p = np.abs(X) ** 2 / x.size
    f = np.fft.rfftfreq(x.size, d=0.1)
    return p, f[np.argmax(p)]


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 1),))
def fft_roundtrip_filter(x):
    X = np.fft.fft(x)
    X[np.abs(np.fft.fftfreq(x.size)) > 0.25] = 0
    return np.fft.ifft(X).real


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 2), 5))
def zero_pad_and_moving_average(x, w):
    p = np.concatenate([np.zeros(w - 1), x])
    c = np.cumsum(p)
    c[w:] = c[w:] - c[:-w]
    return c[w - 1:] / w, np.pad(x, (2, 3), constant_values=(-1, 1))


@case(lambda r: (normal(r, 25), 0.3), lambda r: (normal(r, 1, dtype="float32"), 0.5))
def first_order_iir_loop(x, a):
    y = np.empty_like(x)
    acc = 0.0
    for i in range(x.size):
        acc = a * x[i] + (1 - a) * acc
        y[i] = acc
    return y


@case(lambda r: (normal(r, 30),), lambda r: (np.array([1.0, -1.0, 1.0]),))
def zero_crossings_and_envelope(x):
    s = np.signbit(x)
    zc = np.nonzero(s[1:] != s[:-1])[0]
    env = np.maximum.accumulate(np.abs(x))
    return zc, env, np.diff(np.sign(x)).astype(bool).sum()


@case(lambda r: (normal(r, 20), 4), lambda r: (normal(r, 4), 2))
def decimate_and_upsample(x, q):
    d = x[::q]
    u = np.zeros(d.size * q)
    u[::q] = d
    return d, u, np.repeat(d, q), np.interp(np.arange(x.size), np.arange(0, x.size, q), d)


@case(lambda r: (normal(r, 8, dtype="float32"),), lambda r: (normal(r, 3, dtype="float32"),))
def float32_signal_chain(x):
    y = x * np.float32(0.5) + 1
    z = np.sqrt(np.abs(y)) * np.sin(y)
    e = np.sum(z * z)
    return y.dtype, z.dtype, e.dtype, np.mean(z), np.exp(z).dtype, (z / 3).dtype


@case(lambda r: (normal(r, 20) + 1j * normal(r, 20),),
      lambda r: ((normal(r, 3) + 1j * normal(r, 3)).astype(np.complex64),))
def complex_baseband(z):
    ph = np.angle(z)
    unwrapped = np.unwrap(ph)
    inst_f = np.diff(unwrapped)
    return np.abs(z), unwrapped, inst_f, (z * np.conj(z)).real, z.dtype


# ---- statistics -----------------------------------------------------------------------------

@case(lambda r: (normal(r, 20), r.uniform(size=20)), lambda r: (np.ones(1), np.ones(1)))
def weighted_mean_var(x, w):
    m = np.average(x, weights=w)
    v = np.average((x - m) ** 2, weights=w)
    m2, sw = np.average(x, weights=w, returned=True)
    return m, v, m2, sw


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 2, 3).T,))
def zscores_ddof(X):
    mu = X.mean(axis=0, keepdims=True)
    sd = X.std(axis=0, ddof=1, keepdims=True)
    return (X - mu) / sd, np.var(X, axis=1, ddof=1)


@case(lambda r: (normal(r, 5, 8),), lambda r: (normal(r, 1, 4),))
def quantiles_axis_keepdims(X):
    return (np.percentile(X, [10, 90], axis=1), np.quantile(X, 0.5, axis=0, keepdims=True),
            np.median(X, axis=1, keepdims=True), np.quantile(X, [0.25, 0.75], axis=None))


@case(lambda r: (normal(r, 50),), lambda r: (np.array([0.5, 0.5]),))
def histogram_variants(x):
    h, e = np.histogram(x, bins=5)
    hd, _ = np.histogram(x, bins=4, range=(-2, 2), density=True)
    hw, _ = np.histogram(x, bins=[-3, -1, 0, 1, 3], weights=np.abs(x))
    return h, e, hd, hw


@case(lambda r: (normal(r, 15), np.array([-1.0, 0.0, 1.0])),
      lambda r: (np.array([0.0]), np.array([0.0])))
def digitize_bins(x, edges):
    return (np.digitize(x, edges), np.digitize(x, edges, right=True),
            np.bincount(np.digitize(x, edges), minlength=edges.size + 1))


@case(lambda r: (normal(r, 3, 20),), lambda r: (normal(r, 2, 2),))
def cov_corr(X):
    return np.cov(X), np.corrcoef(X), np.cov(X, ddof=0), np.cov(X.T, rowvar=False)


@case(lambda r: (ints(r, 0, 6, 30), r.uniform(size=30)), lambda r: (np.array([2]), np.array([0.5])))
def bincount_weighted_groupmean(g, v):
    s = np.bincount(g, weights=v)
    n = np.bincount(g)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / n, n.argmax(), np.bincount(g, minlength=8)


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 3),))
def robust_scale_mad(x):
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    q1, q3 = np.percentile(x, [25, 75])
    return (x - med) / (1.4826 * mad), q3 - q1, np.ptp(x)


@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 3, 1),))
def standardize_float32_stats(X):
    X = X.astype(np.float32)
    m = X.mean(axis=0)
    v = X.var(axis=0)
    return m.dtype, v.dtype, (X - m) / np.sqrt(v + 1e-5), X.sum(dtype=np.float64)


@case(lambda r: (normal(r, 30), normal(r, 30)), lambda r: (normal(r, 2), normal(r, 2)))
def pearson_spearman(x, y):
    r = np.corrcoef(x, y)[0, 1]
    rx = x.argsort().argsort()
    ry = y.argsort().argsort()
    rho = np.corrcoef(rx, ry)[0, 1]
    return r, rho


@case(lambda r: (normal(r, 4, 7), r.uniform(size=(4, 7)) < 0.3),
      lambda r: (normal(r, 2, 2), np.zeros((2, 2), bool)))
def masked_mean_where(X, miss):
    ok = ~miss
    n = ok.sum(axis=1)
    s = np.sum(X, axis=1, where=ok)
    with np.errstate(invalid="ignore"):
        return s / n, np.mean(X, axis=0, where=ok), np.max(X, axis=1, where=ok, initial=-np.inf)


@case(lambda r: (normal(r, 30), 5), lambda r: (normal(r, 5), 1))
def bootstrap_means_seeded(x, b):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, x.size, (b, x.size))
    return x[idx].mean(axis=1)


@case(lambda r: (normal(r, 100),), lambda r: (normal(r, 4),))
def moments_skew_kurt(x):
    m = x.mean()
    d = x - m
    m2 = (d ** 2).mean()
    return (d ** 3).mean() / m2 ** 1.5, (d ** 4).mean() / m2 ** 2 - 3


# ---- geometry and linear algebra ------------------------------------------------------------

@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 1, 3), normal(r, 3)))
def cross_products(a, b):
    c = np.cross(a, b)
    return c, np.einsum("ij,ij->i", c, a), np.linalg.norm(c, axis=-1)


@case(lambda r: (normal(r, 4, 2), normal(r, 3, 2)), lambda r: (normal(r, 2, 2), normal(r, 2, 2)))
def cross_2d_vectors(a, b):
    return a[:, 0] * b[:1, 1] - a[:, 1] * b[:1, 0], np.cross(np.pad(a, ((0, 0), (0, 1))), [0, 0, 1])


@case(lambda r: (normal(r, 6, 3), 0.3), lambda r: (normal(r, 1, 3), 3.0))
def rotation_about_z(P, th):
    c, s = np.cos(th), np.sin(th)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    Q = P @ R.T
    return Q, np.allclose(np.linalg.norm(Q, axis=1), np.linalg.norm(P, axis=1)), np.linalg.det(R)


@case(lambda r: (normal(r, 7, 3),), lambda r: (normal(r, 1, 2),))
def pairwise_distances(X):
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    sq = (X * X).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0)
    np.fill_diagonal(d2, np.inf)
    return d, d2.argmin(axis=1), np.triu_indices(X.shape[0], 1)[0].size


@case(lambda r: (normal(r, 4, 4) + 4 * np.eye(4), normal(r, 4)),
      lambda r: (normal(r, 2, 2) + 3 * np.eye(2), normal(r, 2, 3)))
def linalg_solvers(A, b):
    x = np.linalg.solve(A, b)
    return x, np.linalg.inv(A) @ b, np.linalg.det(A), np.linalg.slogdet(A)[1]


@case(lambda r: (normal(r, 10, 3), normal(r, 10)), lambda r: (normal(r, 3, 2), normal(r, 3)))
def least_squares_fit(A, y):
    coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    return coef, rank, sv, A @ coef - y


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 2, 2),))
def symmetric_eigh(A):
    S = A + A.T
    w, V = np.linalg.eigh(S)
    return w, np.abs(V.T @ S @ V - np.diag(w)).max() < 1e-9, np.linalg.eigvalsh(S)


@case(lambda r: (normal(r, 8, 2),), lambda r: (normal(r, 3, 2),))
def polygon_area_centroid(P):
    x, y = P[:, 0], P[:, 1]
    xs, ys = np.roll(x, -1), np.roll(y, -1)
    cr = x * ys - xs * y
    a = cr.sum() / 2
    return a, ((x + xs) * cr).sum() / (6 * a), np.hypot(xs - x, ys - y).sum()


@case(lambda r: (normal(r, 6, 3), normal(r, 3)), lambda r: (normal(r, 1, 3), np.ones(3)))
def plane_projection(P, n):
    n = n / np.linalg.norm(n)
    d = P @ n
    return P - np.outer(d, n), np.abs(d).max(), np.vdot(n, n)


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 2, 3),))
def qr_svd_pinv(A):
    Q, R = np.linalg.qr(A)
    s = np.linalg.svd(A, compute_uv=False)
    return np.abs(np.diag(R)), s, np.linalg.pinv(A).shape, np.linalg.matrix_rank(A)


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.eye(2),))
def matrix_power_and_trace(A):
    return (np.linalg.matrix_power(A, 3), np.trace(A @ A), np.linalg.norm(A, "fro"),
            np.kron(A, np.eye(2)))


@case(lambda r: (normal(r, 10, 2), normal(r, 2)), lambda r: (normal(r, 1, 2), np.zeros(2)))
def nearest_point_and_angle(P, q):
    d = np.linalg.norm(P - q, axis=1)
    i = np.argmin(d)
    ang = np.degrees(np.arctan2(P[:, 1] - q[1], P[:, 0] - q[0]))
    return i, d[i], np.mod(ang, 360)


# ---- sorting and ranking --------------------------------------------------------------------

@case(lambda r: (normal(r, 12),), lambda r: (np.array([3.0, 1.0, 3.0, 2.0]),))
def ranks_by_double_argsort(x):
    r1 = x.argsort(kind="stable").argsort(kind="stable")
    r2 = np.empty_like(r1)
    r2[np.argsort(x, kind="stable")] = np.arange(x.size)
    return r1, r2, (r1 == r2).all()


@case(lambda r: (ints(r, 0, 3, 10), normal(r, 10)),
      lambda r: (np.array([1, 1]), np.array([2.0, 1.0])))
def lexsort_table(k, v):
    order = np.lexsort((v, k))
    return k[order], v[order], np.lexsort((-v, k))


@case(lambda r: (ints(r, 0, 5, 20),), lambda r: (np.array([7]),))
def unique_counts_inverse(x):
    u, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
    _, first = np.unique(x, return_index=True)
    return u, inv, cnt, first, u[cnt.argmax()], cnt[inv]


@case(lambda r: (np.sort(normal(r, 10)), normal(r, 4)),
      lambda r: (np.array([1.0, 1.0]), np.array([1.0])))
def searchsorted_sides(a, v):
    return (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a, a[::-1]),
            np.clip(np.searchsorted(a, v), 0, a.size - 1))


@case(lambda r: (normal(r, 6, 5), 2), lambda r: (normal(r, 3, 3), 3))
def topk_rows(X, k):
    idx = np.argpartition(-X, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(X, idx, axis=1)
    o = np.argsort(-vals, axis=1)
    return np.take_along_axis(idx, o, axis=1), -np.sort(-X, axis=1)[:, :k]


@case(lambda r: (normal(r, 9),), lambda r: (np.array([np.nan, 1.0, -np.inf, 0.0]),))
def sort_with_nans(x):
    return np.sort(x), np.argsort(x), np.nanargmax(x) if (~np.isnan(x)).any() else -1, np.nanmin(x)


@case(lambda r: (ints(r, 0, 4, 5, 3),), lambda r: (np.array([[1, 2], [1, 2]]),))
def unique_rows_count(A):
    u, c = np.unique(A, axis=0, return_counts=True)
    return u, c


@case(lambda r: (normal(r, 15), 3), lambda r: (normal(r, 4), 1))
def rank_buckets(x, q):
    edges = np.quantile(x, np.linspace(0, 1, q + 1)[1:-1])
    b = np.searchsorted(edges, x, side="right")
    return b, np.bincount(b, minlength=q)


@case(lambda r: (ints(r, 0, 10, 12),), lambda r: (np.array([3, 3, 3]),))
def dedupe_keep_order(x):
    _, idx = np.unique(x, return_index=True)
    keep = np.sort(idx)
    return x[keep], np.isin(x, x[keep][:2]), np.setdiff1d(x, [1, 2]), np.intersect1d(x, [3, 4, 5])


# ---- tables with masks ----------------------------------------------------------------------

@case(lambda r: (normal(r, 12) * 20 + 50, ints(r, 0, 3, 12)),
      lambda r: (np.array([10.0]), np.array([1])))
def grade_bands_select(score, grp):
    band = np.select([score >= 80, score >= 60, score >= 40], [3, 2, 1], default=0)
    bonus = np.choose(grp, [0.0, 5.0, 10.0])
    return band, score + bonus, np.where(band > 1, "ok" == "ok", False)


@case(lambda r: (normal(r, 10), normal(r, 10)),
      lambda r: (np.array([np.nan, 1.0]), np.array([2.0, np.nan])))
def fillna_forward(a, b):
    x = np.where(np.isnan(a), b, a)
    m = np.isnan(x)
    idx = np.where(~m, np.arange(x.size), 0)
    np.maximum.accumulate(idx, out=idx)
    return x[idx], np.nan_to_num(a, nan=-1.0), m.sum()


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 1, 3),))
def table_filter_sort(T):
    keep = (T[:, 0] > -0.5) & ~(T[:, 2] < -1)
    sub = T[keep]
    sub = sub[np.argsort(sub[:, 1])[::-1]]
    return sub, keep.nonzero()[0], np.flatnonzero(~keep)


@case(lambda r: (ints(r, 0, 4, 20), normal(r, 20)),
      lambda r: (np.array([0, 0]), np.array([1.0, 2.0])))
def groupby_sorted_reduceat(k, v):
    o = np.argsort(k, kind="stable")
    ks, vs = k[o], v[o]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    return ks[starts], np.add.reduceat(vs, starts), np.maximum.reduceat(vs, starts)


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 2, 2),))
def clip_outliers_inplace(X):
    Y = X.copy()
    lo, hi = np.percentile(Y, [5, 95], axis=0)
    np.clip(Y, lo, hi, out=Y)
    Y[Y[:, 0] < 0, 1:] *= -1
    return Y


@case(lambda r: (normal(r, 10),), lambda r: (np.zeros(3),))
def pivot_counts(x):
    cat = np.where(x > 0.5, 2, np.where(x < -0.5, 0, 1))
    tab = np.zeros((3, 2), int)
    np.add.at(tab, (cat, (x > 0).astype(int)), 1)
    return tab, tab.sum(axis=0), tab / tab.sum()


@case(lambda r: (normal(r, 5, 4), ints(r, 0, 4, 5)), lambda r: (normal(r, 2, 4), np.array([3, 0])))
def choose_columns(X, c):
    return (X[np.arange(X.shape[0]), c], np.take_along_axis(X, c[:, None], 1)[:, 0],
            np.choose(c % 2, [X[:, 0], X[:, 1]]))


@case(lambda r: (normal(r, 12),), lambda r: (np.array([1.0]),))
def where_single_arg_and_extract(x):
    (i,) = np.where(x > 0)
    return i, np.extract(x > 0, x), np.compress(x < 0, x), np.argwhere(x > 0)[:, 0]


# ---- integer corners ------------------------------------------------------------------------

@case(lambda r: (u8(r, 10), u8(r, 10)),
      lambda r: (np.array([255], np.uint8), np.array([1], np.uint8)))
def uint8_wraparound(a, b):
    return a + b, a - b, a * b, (a.astype(np.uint16) + b), a // np.maximum(b, 1), a.astype(np.int8)


@case(lambda r: (ints(r, -30000, 30000, 8, dtype="int16"),),
      lambda r: (np.array([32767], np.int16),))
def int16_overflow_and_abs(x):
    return x + np.int16(1), x * 2, np.abs(x), -x, x.sum(), x.sum(dtype=np.int16), x.mean()


@case(lambda r: (ints(r, 0, 100, 6, dtype="int32"), 2.5), lambda r: (np.array([1], np.int8), 3))
def numpy2_promotion_python_scalars(x, s):
    return (x + s).dtype, x * s, (x + 1).dtype, (x / 2).dtype, (x // 2).dtype, x ** 2


@case(lambda r: (ints(r, 0, 100, 6, dtype="int8"), ints(r, 0, 100, 6, dtype="uint8")),
      lambda r: (np.array([-1], np.int8), np.array([200], np.uint8)))
def mixed_int_promotion(a, b):
    return ((a + b).dtype, a + b, a * b.astype(np.float32), (a + np.float32(1)).dtype,
            np.maximum(a, b))


@case(lambda r: (ints(r, 0, 2 ** 31, 8, dtype="uint32"),),
      lambda r: (np.array([0xFFFFFFFF], np.uint32),))
def bit_operations(x):
    return (x & 0xFF, x | 1, x ^ (x >> 3), x << 2, ~x,
            np.bitwise_count(x) if hasattr(np, "bitwise_count") else x, np.left_shift(x, 31),
            np.invert(x.astype(np.uint8)))


@case(lambda r: (ints(r, 0, 256, 12, dtype="uint8"),), lambda r: (np.array([0, 255], np.uint8),))
def pack_unpack_bits(x):
    bits = np.unpackbits(x)
    return bits, np.packbits(bits), np.packbits(x > 100), bits.reshape(-1, 8).sum(1)


@case(lambda r: (ints(r, -50, 50, 10), 7), lambda r: (np.array([-7, 7]), -3))
def floor_div_mod_signs(x, d):
    return x // d, x % d, np.fmod(x, d), np.remainder(x, d), np.divmod(x, d), np.trunc(x / d)


@case(lambda r: (ints(r, 0, 1000, 10),), lambda r: (np.array([0]),))
def int_sum_dtypes(x):
    return (x.sum(dtype=np.int8), x.astype(np.int32).sum().dtype, x.astype(np.uint8).sum().dtype,
            np.cumsum(x.astype(np.int8)).dtype, np.prod(x[:3].astype(np.int16)),
            x.astype(bool).sum())


@case(lambda r: (ints(r, 1, 30, 8), ints(r, 1, 30, 8)), lambda r: (np.array([0]), np.array([0])))
def gcd_lcm_and_powers(a, b):
    return np.gcd(a, b), np.lcm(a, b), np.power(a, 2), a ** np.uint8(2), np.float_power(a, 0.5)


@case(lambda r: (u8(r, 6),), lambda r: (np.zeros(0, np.uint8),))
def uint8_reductions_overflow(x):
    return (x.sum(), x.max(), np.add.reduce(x, dtype=np.uint8), x.mean(), x.cumsum().dtype,
            np.ptp(x) if x.size else 0)


# ---- reductions with keywords ---------------------------------------------------------------

@case(lambda r: (normal(r, 4, 5),), lambda r: (np.zeros((0, 3)),))
def reductions_initial(X):
    return (np.max(X, initial=-1.0), np.min(X, axis=0, initial=10.0), np.sum(X, initial=5.0),
            np.prod(X, axis=1, initial=2.0), X.max(axis=1, initial=0.0))


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 3, 3).T,))
def reductions_out(X):
    out = np.empty(X.shape[1])
    np.sum(X, axis=0, out=out)
    o2 = np.zeros((1, X.shape[1]))
    np.mean(X, axis=0, keepdims=True, out=o2)
    o3 = np.empty(X.shape[0], np.float32)
    X.max(axis=1, out=o3)
    return out, o2, o3


@case(lambda r: (normal(r, 6, 3), r.uniform(size=(6, 3)) < 0.5),
      lambda r: (normal(r, 2, 2), np.ones((2, 2), bool)))
def reductions_where(X, m):
    return (np.sum(X, where=m), np.sum(X, axis=0, where=m), np.prod(X, axis=1, where=m),
            np.min(X, axis=0, where=m, initial=np.inf), np.any(X > 0, where=m),
            np.all(X > -5, axis=1, where=m))


@case(lambda r: (ints(r, 0, 100, 5, 4, dtype="int16"),),
      lambda r: (ints(r, 0, 3, 1, 1, dtype="int16"),))
def reductions_dtype(X):
    return (X.sum(dtype=np.float32), X.mean(dtype=np.float32), X.prod(axis=0, dtype=np.int64),
            np.cumsum(X, axis=1, dtype=np.float64), X.std(dtype=np.float32),
            np.add.reduce(X, 0, np.int8))


@case(lambda r: (normal(r, 3, 4, 5),), lambda r: (normal(r, 1, 2, 1),))
def keepdims_everywhere(X):
    return (X.sum(axis=(0, 2), keepdims=True), X.max(axis=-1, keepdims=True),
            np.argmax(X, axis=1, keepdims=True), np.any(X > 0, axis=0, keepdims=True),
            np.linalg.norm(X, axis=-1, keepdims=True), np.median(X, axis=(1, 2), keepdims=True),
            np.count_nonzero(X > 0, axis=2, keepdims=True))


@case(lambda r: (normal(r, 12), np.array([0, 3, 3, 8])), lambda r: (normal(r, 4), np.array([2, 0])))
def reduceat_edge_cases(x, idx):
    return np.add.reduceat(x, idx), np.minimum.reduceat(x, idx), np.multiply.reduceat(x, idx)


@case(lambda r: (normal(r, 4), normal(r, 3)), lambda r: (np.array([1.0]), np.array([2.0])))
def ufunc_outer_family(a, b):
    return (np.subtract.outer(a, b), np.multiply.outer(a, b), np.maximum.outer(a, b),
            np.greater.outer(a, b), np.power.outer(np.abs(a), 2), np.add.outer(a, b).sum(1))


@case(lambda r: (normal(r, 4, 4), normal(r, 4, 4)), lambda r: (normal(r, 2, 2), normal(r, 2, 2)))
def einsum_repeated_indices(A, B):
    return (np.einsum("ii", A), np.einsum("ii->i", A), np.einsum("ij,ji->", A, B),
            np.einsum("ij,ij->j", A, B), np.einsum("ik,kj->ij", A, B), np.einsum("i,i", A[0], B[0]),
            np.einsum("ij->ji", A))


@case(lambda r: (normal(r, 3, 4, 5), normal(r, 3, 5, 2)),
      lambda r: (normal(r, 1, 1, 2), normal(r, 1, 2, 1)))
def einsum_batched(A, B):
    return (np.einsum("bij,bjk->bik", A, B), np.einsum("bij->b", A), np.einsum("...ij->...ji", A),
            A @ B)


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def cumulative_keywords(X):
    return (np.cumsum(X, axis=0, dtype=np.float32), np.cumprod(X[:, :2], axis=0),
            np.nancumsum(X, axis=1), np.logical_or.accumulate(X > 0, axis=1),
            np.add.accumulate(X, axis=1, dtype=np.float64))


# ---- in-place on views ----------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 2, 2),))
def inplace_on_views(A):
    B = A.copy()
    B[::2] += 1
    v = B[:, 1:]
    v *= 2
    B.T[0] -= 5
    np.negative(B[1], out=B[1])
    return B


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 1),))
def inplace_overlapping_shift(x):
    y = x.copy()
    y[1:] += y[:-1]
    z = x.copy()
    z[1:] = z[:-1]
    w = x.copy()
    w[:-1] = w[1:] * 2
    return y, z, w


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 3, 3),))
def inplace_diag_triangle(A):
    B = A.copy()
    B[np.diag_indices_from(B)] = 0
    B[np.triu_indices_from(B, 1)] *= -1
    d = np.einsum("ii->i", B)
    return B, d.copy(), np.tril(A, -1).sum(), np.triu(A).T


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 2),))
def argument_mutation(x):
    x *= 2
    x[x < 0] = 0
    x += x[::-1]
    return x.sum()


@case(lambda r: (normal(r, 4, 6),), lambda r: (normal(r, 2, 2).T,))
def ufunc_out_on_slices(A):
    B = np.zeros_like(A)
    np.add(A[:, :-1], A[:, 1:], out=B[:, 1:])
    np.multiply(A, 2, out=B, where=A > 0)
    np.exp(A[0], out=B[-1])
    return B


@case(lambda r: (normal(r, 6, 4), 2), lambda r: (normal(r, 3, 2), 0))
def returned_views(A, i):
    return A[i], A[:, i], A.T, A[::2], A.reshape(-1), A[i:i + 2].ravel()


# ---- float32 and complex64 ------------------------------------------------------------------

@case(lambda r: (normal(r, 6, 4, dtype="float32"), normal(r, 4, dtype="float32")),
      lambda r: (normal(r, 1, 2, dtype="float32"), normal(r, 2, dtype="float32")))
def float32_mlp_layer(X, b):
    W = np.ones((X.shape[1], 3), np.float32) * np.float32(0.1)
    h = np.maximum(X @ W + b[:1], 0)
    p = np.exp(h - h.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return p.dtype, p, (X * 0.5).dtype, np.tanh(h).dtype, np.log1p(np.abs(X)).dtype


@case(lambda r: (normal(r, 10, dtype="float32"),),
      lambda r: (np.array([np.inf, -1.0], np.float32),))
def float32_with_float64_scalars(x):
    return ((x + np.float64(1)).dtype, x * 1e-3, x + np.float32(3), np.float32(2) ** x,
            x.astype(np.float16))


@case(lambda r: ((normal(r, 8) + 1j * normal(r, 8)).astype(np.complex64),),
      lambda r: (np.array([1j, 0], np.complex64),))
def complex64_ops(z):
    return (z * z, (z * 2.0).dtype, np.abs(z).dtype, z.real.dtype, np.exp(z), z.conj() * z,
            np.sum(z), np.mean(z).dtype, z / (np.abs(z) + 1))


@case(lambda r: (normal(r, 6, 2),), lambda r: (normal(r, 1, 2),))
def complex_from_pairs(P):
    z = P[:, 0] + 1j * P[:, 1]
    return z, np.abs(z), np.angle(z, deg=True), np.real(z * 1j), z.view(np.float64).reshape(-1, 2)


@case(lambda r: (normal(r, 8, dtype="float32"),), lambda r: (normal(r, 2, dtype="float32"),))
def float32_reductions_stay_float32(x):
    return (x.sum().dtype, x.mean().dtype, x.std().dtype, np.linalg.norm(x).dtype,
            np.median(x).dtype, np.percentile(x, 50).dtype, np.dot(x, x).dtype, np.cumsum(x).dtype)


@case(lambda r: (normal(r, 4, 3, dtype="float32"),), lambda r: (normal(r, 1, 1, dtype="float32"),))
def float32_linalg(A):
    G = A.T @ A + np.eye(A.shape[1], dtype=np.float32)
    return (G.dtype, np.linalg.inv(G).dtype,
            np.linalg.solve(G, np.ones(A.shape[1], np.float32)).dtype, np.linalg.det(G).dtype)


# ---- misc everyday ---------------------------------------------------------------------------

@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (np.array([0.0]), np.array([0.0])))
def safe_divide_variants(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.true_divide(a, b)
    q2 = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
    return np.nan_to_num(q, posinf=1e9, neginf=-1e9), q2


@case(lambda r: (normal(r, 20), 0.5), lambda r: (np.array([1.0]), 1.0))
def logistic_and_softplus(x, t):
    s = 1 / (1 + np.exp(-x / t))
    sp = np.logaddexp(0, x)
    return s, sp, np.log(s), np.expm1(np.log1p(np.abs(x))), np.heaviside(x, 0.5)


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 1, 3),))
def meshgrid_evaluations(P):
    gx, gy = np.meshgrid(np.linspace(0, 1, 4), np.linspace(-1, 1, 3))
    f = np.exp(-(gx[..., None] - P[:, 0]) ** 2 - (gy[..., None] - P[:, 1]) ** 2).sum(-1)
    ix, iy = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    return f, ix + iy, np.mgrid[0:3, 0:2].sum(0), np.ogrid[0:3][::-1]


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 1),))
def polynomial_fit_eval(y):
    x = np.linspace(-1, 1, y.size)
    deg = min(2, y.size - 1)
    c = np.polyfit(x, y, deg)
    return (np.polyval(c, x), np.roots([1.0, -3.0, 2.0]), np.polyder(c) if deg else c,
            np.polymul([1, 1], [1, -1]))


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 0, 3),))
def tile_repeat_broadcast(A):
    return (np.tile(A, (2, 1)), np.repeat(A, 2, axis=1), np.broadcast_to(A.sum(0), (2, 3)).copy(),
            np.expand_dims(A, 1).shape, np.atleast_2d(A[0] if len(A) else A).shape,
            np.squeeze(A[:, :1], 1))


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def stack_split_roundtrip(x):
    a, b = np.array_split(x, 2)
    s = np.stack([x, x * 2], axis=1)
    h = np.hstack([a, b])
    d = np.dstack([x, x])
    return s, h, d.shape, np.vstack([x, x]).T, np.column_stack([x, x]), np.block([[x], [x]])


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 3),))
def isclose_allclose_equal(x):
    y = x + 1e-12
    return (np.isclose(x, y), np.allclose(x, y), np.array_equal(x, x.copy()),
            np.isclose(x, 0, atol=0.5))


@case(lambda r: (normal(r, 8) * 10,), lambda r: (np.array([-0.5, 0.5, 1.5, 2.5]),))
def rounding_family(x):
    return (np.round(x), np.around(x, 1), np.floor(x), np.ceil(x), np.rint(x), np.fix(x),
            np.round(x, -1))


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def moveaxis_swapaxes(A):
    B = A[None].repeat(2, 0)
    return (np.moveaxis(B, 0, -1).shape, np.swapaxes(B, 1, 2),
            B.transpose(2, 0, 1).reshape(-1, 2).shape)


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 3), 3))
def running_max_min_window(x, w):
    out_max = np.full(x.size - w + 1, -np.inf)
    out_min = np.full(x.size - w + 1, np.inf)
    for k in range(w):
        seg = x[k:x.size - w + 1 + k]
        np.maximum(out_max, seg, out=out_max)
        np.minimum(out_min, seg, out=out_min)
    return out_max, out_min


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 4),))
def softmax_cross_entropy(logits):
    y = np.arange(logits.shape[0]) % logits.shape[1]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(len(y)), y].mean()
    grad = np.exp(logp)
    grad[np.arange(len(y)), y] -= 1
    return loss, grad / len(y)


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 2),))
def diff_gradient_trapz(y):
    return (np.diff(y, n=2), np.gradient(y), np.gradient(y, 0.5), np.trapezoid(y, dx=0.1),
            np.ediff1d(y, to_begin=0))


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def structured_constructors(A):
    return (np.eye(3, k=1), np.identity(2), np.diag(A), np.diag(A[0]), np.diagflat(A[0]),
            np.tri(3, dtype=int), np.arange(0, 1, 0.25), np.linspace(0, 1, 5, endpoint=False),
            np.logspace(0, 2, 3), np.zeros((2, 0)).sum(0))


@case(lambda r: (normal(r, 8),), lambda r: (np.array([np.inf, -np.inf, np.nan]),))
def nan_inf_classification(x):
    return (np.isfinite(x), np.isinf(x), np.isnan(x), np.isposinf(x), np.isneginf(x),
            np.nanmax(np.where(np.isfinite(x), x, np.nan)) if np.isfinite(x).any() else 0.0,
            np.copysign(1.0, x), np.nextafter(x, 0) == x)


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (np.array([1.0]), np.array([-1.0])))
def comparisons_and_logic(a, b):
    return (np.logical_xor(a > 0, b > 0), np.maximum(a, b) >= np.minimum(a, b), np.all(a == a),
            np.any(a > b), (a > 0).astype(np.float32) - (b > 0), np.sign(a) * np.sign(b),
            np.greater_equal(a, 0).sum())


@case(lambda r: (ints(r, 0, 5, 6), ints(r, 0, 5, 6)), lambda r: (np.array([1]), np.array([1])))
def set_operations(a, b):
    return (np.union1d(a, b), np.intersect1d(a, b, return_indices=True)[1:], np.setxor1d(a, b),
            np.isin(a, b, invert=True), np.in1d(a, b) if hasattr(np, "in1d") else np.isin(a, b))


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 2, 2),))
def matrix_checks(A):
    S = (A + A.T) / 2
    return (np.allclose(S, S.T), np.linalg.cond(S + 10 * np.eye(len(S))),
            np.linalg.eigvals(S + 10 * np.eye(len(S))).real.sum(),
            np.linalg.cholesky(S @ S.T + np.eye(len(S))).diagonal())


@case(lambda r: (normal(r, 4),), lambda r: (normal(r, 1),))
def scalar_extraction(x):
    return (float(x.sum()), int(np.argmax(x)), x.max().item(), x.tolist(), bool((x > 0).any()),
            len(x))


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 2, 2),))
def random_seeded_noise_add(A):
    rng = np.random.default_rng(42)
    n = rng.standard_normal(A.shape)
    u = rng.uniform(0, 1, A.shape[0])
    return A + 0.1 * n, u, rng.permutation(A.shape[0])


@pytest.mark.parametrize("name", sorted(CASES11))
def test_wild11_function_matches_numpy(name: str) -> None:
    run_case(name, CASES11, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES11, warm=True, views=True, warns=True)
