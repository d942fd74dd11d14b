"""Ordinary NumPy functions as people write them (ML, science, finance, images, bits,
npbench-style kernels). Not limited to what Stax supports: each must compile fully or with
graph breaks and equal NumPy. `CASES` maps a name to (function, argument factory)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Args = Callable[[np.random.Generator], tuple[Any, ...]]
CASES: dict[str, tuple[Callable[..., Any], Args]] = {}


def case(make_args: Args) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        CASES[fn.__name__] = (fn, make_args)
        return fn
    return register


def mat(*shape: int, dtype: str = "float64") -> Args:
    return lambda rng: (rng.standard_normal(shape).astype(dtype),)


# ---- machine learning ----

@case(mat(16, 10))
def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@case(mat(16, 10))
def log_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


@case(lambda rng: (rng.standard_normal((8, 32)), np.ones(32), np.zeros(32)))
def layernorm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + 1e-5) + beta


@case(mat(64))
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@case(mat(64))
def relu_inplace(x):
    y = x.copy()
    y[y < 0] = 0
    return y


@case(mat(64))
def leaky_relu(x):
    return np.where(x > 0, x, 0.01 * x)


@case(mat(64))
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@case(lambda rng: (rng.standard_normal((12, 5)), rng.integers(0, 5, 12)))
def cross_entropy(logits, labels):
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


@case(lambda rng: (rng.standard_normal((12, 5)), rng.integers(0, 5, 12)))
def softmax_grad(logits, labels):
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1
    return p / len(labels)


@case(lambda rng: (rng.integers(0, 4, 10),))
def one_hot(labels):
    return np.eye(4)[labels]


@case(lambda rng: (rng.standard_normal((10, 4)), rng.standard_normal((4, 3)),
                   rng.standard_normal(3)))
def dense_layer(x, w, b):
    return np.maximum(x @ w + b, 0)


@case(lambda rng: (rng.standard_normal((6, 8)), rng.standard_normal((5, 8))))
def pairwise_distances(a, b):
    d2 = (a ** 2).sum(1)[:, None] + (b ** 2).sum(1)[None, :] - 2 * a @ b.T
    return np.sqrt(np.maximum(d2, 0))


@case(lambda rng: (rng.standard_normal((20, 3)), rng.standard_normal((4, 3))))
def kmeans_assign(points, centers):
    d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
    return np.argmin(d, axis=1)


@case(lambda rng: (rng.standard_normal((20, 3)), rng.integers(0, 4, 20)))
def kmeans_update(points, labels):
    centers = np.zeros((4, 3))
    for k in range(4):
        members = points[labels == k]
        if len(members):
            centers[k] = members.mean(axis=0)
    return centers


@case(lambda rng: (rng.standard_normal((30, 4)), rng.standard_normal(30)))
def linear_regression(X, y):
    Xb = np.hstack([np.ones((X.shape[0], 1)), X])
    return np.linalg.solve(Xb.T @ Xb, Xb.T @ y)


@case(lambda rng: (rng.standard_normal((30, 4)), rng.standard_normal(30)))
def ridge_gd(X, y):
    w = np.zeros(X.shape[1])
    for _ in range(5):
        grad = X.T @ (X @ w - y) / len(y) + 0.1 * w
        w -= 0.1 * grad
    return w


@case(lambda rng: (rng.standard_normal((25, 5)),))
def pca_project(X):
    Xc = X - X.mean(axis=0)
    cov = np.cov(Xc, rowvar=False)
    vals, vecs = np.linalg.eigh(cov)
    return np.abs(Xc @ vecs[:, -2:])


@case(lambda rng: (rng.standard_normal((10, 6)),))
def standardize(X):
    return (X - X.mean(0)) / (X.std(0) + 1e-8)


@case(lambda rng: (rng.random(20), (rng.random(20) > 0.5).astype(np.int64)))
def binary_accuracy(probs, y):
    pred = (probs > 0.5).astype(np.int64)
    return (pred == y).mean()


@case(lambda rng: (rng.random(20) * 0.98 + 0.01, (rng.random(20) > 0.5).astype(np.float64)))
def bce_loss(p, y):
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


@case(lambda rng: (rng.standard_normal((4, 6, 8)),))
def attention_scores(q):
    s = np.einsum("bik,bjk->bij", q, q) / np.sqrt(q.shape[-1])
    s = np.exp(s - s.max(-1, keepdims=True))
    return s / s.sum(-1, keepdims=True)


@case(mat(50))
def top_k(x):
    idx = np.argsort(x)[-5:][::-1]
    return idx, x[idx]


# ---- science ----

@case(mat(32, 32))
def jacobi_2d(a):
    b = a.copy()
    for _ in range(3):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1]
                               + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1]
                               + b[:-2, 1:-1])
    return a


@case(mat(64))
def heat_1d(u):
    for _ in range(4):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda rng: (rng.standard_normal((16, 3)), rng.random(16) + 0.5))
def nbody_accel(pos, mass):
    dx = pos[None, :, :] - pos[:, None, :]
    r2 = (dx ** 2).sum(-1) + 1e-3
    inv = r2 ** -1.5
    np.fill_diagonal(inv, 0.0)
    return (dx * (mass[None, :, None] * inv[:, :, None])).sum(1)


@case(mat(40))
def trapezoid_integral(y):
    return np.trapezoid(y, dx=0.1)


@case(lambda rng: (np.linspace(0, 1, 50), rng.standard_normal(50)))
def finite_difference(x, y):
    return np.diff(y) / np.diff(x)


@case(mat(50))
def gradient_1d(y):
    return np.gradient(y, 0.5)


@case(mat(8, 9))
def gradient_2d(f):
    gy, gx = np.gradient(f)
    return np.hypot(gx, gy)


@case(lambda rng: (rng.standard_normal(5), np.linspace(-1, 1, 30)))
def polynomial_eval(c, x):
    return np.polyval(c, x)


@case(lambda rng: (rng.standard_normal(5), np.linspace(-1, 1, 30)))
def horner(c, x):
    out = np.zeros_like(x)
    for coef in c:
        out = out * x + coef
    return out


@case(mat(64))
def moving_average(x):
    return np.convolve(x, np.ones(5) / 5, mode="valid")


@case(mat(64))
def cumulative_moving_average(x):
    return np.cumsum(x) / np.arange(1, x.size + 1)


@case(lambda rng: (rng.standard_normal((6, 6)) + 6 * np.eye(6), rng.standard_normal(6)))
def gauss_seidel(A, b):
    x = np.zeros_like(b)
    for _ in range(5):
        for i in range(len(b)):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


@case(lambda rng: (rng.standard_normal((5, 5)),))
def power_iteration(A):
    v = np.ones(A.shape[0])
    for _ in range(10):
        v = A.T @ A @ v
        v /= np.linalg.norm(v)
    return v


@case(mat(32))
def spectrum_peak(x):
    spec = np.abs(np.fft.rfft(x))
    return int(np.argmax(spec[1:])) + 1, spec.max()


@case(lambda rng: (rng.standard_normal((20, 3)),))
def correlation_matrix(X):
    return np.corrcoef(X.T)


@case(lambda rng: (rng.standard_normal(100),))
def histogram_counts(x):
    counts, edges = np.histogram(x, bins=10, range=(-3, 3))
    return counts, edges


@case(mat(200))
def monte_carlo_pi_like(u):
    v = np.abs(u) % 1.0
    inside = (v[:100] ** 2 + v[100:] ** 2) <= 1.0
    return 4.0 * np.count_nonzero(inside) / 100


@case(lambda rng: (rng.random((10, 10)) < 0.4,))
def game_of_life(board):
    b = board.astype(np.int64)
    n = sum(np.roll(np.roll(b, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
            if (i, j) != (0, 0))
    return (n == 3) | (board & (n == 2))


@case(lambda rng: (rng.standard_normal((6, 6)),))
def cholesky_solve(a):
    spd = a @ a.T + 6 * np.eye(6)
    L = np.linalg.cholesky(spd)
    return L, np.linalg.det(spd)


@case(mat(40))
def median_filter_3(x):
    padded = np.pad(x, 1, mode="edge")
    windows = np.stack([padded[:-2], padded[1:-1], padded[2:]])
    return np.median(windows, axis=0)


# ---- finance ----

@case(lambda rng: (100 * np.exp(np.cumsum(rng.standard_normal(60) * 0.01)),))
def log_returns(prices):
    return np.log(prices[1:] / prices[:-1])


@case(lambda rng: (100 * np.exp(np.cumsum(rng.standard_normal(60) * 0.01)),))
def max_drawdown(prices):
    peak = np.maximum.accumulate(prices)
    return ((prices - peak) / peak).min()


@case(lambda rng: (rng.standard_normal(60) * 0.01,))
def sharpe_ratio(r):
    return np.sqrt(252) * r.mean() / r.std(ddof=1)


@case(lambda rng: (100 * np.exp(np.cumsum(rng.standard_normal(60) * 0.01)),))
def ema(prices):
    alpha = 2 / (10 + 1)
    out = np.empty_like(prices)
    out[0] = prices[0]
    for t in range(1, len(prices)):
        out[t] = alpha * prices[t] + (1 - alpha) * out[t - 1]
    return out


@case(lambda rng: (rng.uniform(50, 150, 32), rng.uniform(80, 120, 32), rng.uniform(0.1, 2, 32)))
def black_scholes(S, K, T):
    r, sigma = 0.02, 0.3
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    from math import erf, sqrt
    cdf = np.vectorize(lambda z: 0.5 * (1 + erf(z / sqrt(2))))
    return S * cdf(d1) - K * np.exp(-r * T) * cdf(d2)


@case(lambda rng: (rng.standard_normal((50, 4)) * 0.01, np.array([0.4, 0.3, 0.2, 0.1])))
def portfolio_var(returns, w):
    cov = np.cov(returns, rowvar=False)
    return float(w @ cov @ w)


@case(lambda rng: (100 * np.exp(np.cumsum(rng.standard_normal(60) * 0.01)),))
def rolling_mean_window(prices):
    c = np.cumsum(np.insert(prices, 0, 0.0))
    return (c[10:] - c[:-10]) / 10


@case(lambda rng: (rng.standard_normal(100) * 0.02,))
def value_at_risk(r):
    return -np.percentile(r, 5)


@case(lambda rng: (np.array([100.0, 5, 5, 5, 105]), 0.04))
def bond_price(cashflows, rate):
    t = np.arange(len(cashflows))
    return (cashflows / (1 + rate) ** t).sum()


@case(lambda rng: (rng.uniform(90, 110, 40), 100.0))
def option_payoffs(S, K):
    return np.maximum(S - K, 0), np.maximum(K - S, 0)


# ---- image processing ----

@case(lambda rng: (rng.random((12, 16, 3)),))
def rgb_to_gray(img):
    return img @ np.array([0.299, 0.587, 0.114])


@case(lambda rng: (rng.random((12, 12)),))
def box_blur(img):
    p = np.pad(img, 1, mode="reflect")
    return (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 1:-1]
            + p[1:-1, 2:] + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]) / 9


@case(lambda rng: (rng.random((12, 12)),))
def sobel_magnitude(img):
    gx = img[1:-1, 2:] - img[1:-1, :-2]
    gy = img[2:, 1:-1] - img[:-2, 1:-1]
    return np.sqrt(gx ** 2 + gy ** 2)


@case(lambda rng: (rng.random((12, 12)),))
def threshold_otsu_like(img):
    t = img.mean()
    out = np.zeros(img.shape, dtype=np.uint8)
    out[img > t] = 255
    return out.astype(np.int64)


@case(lambda rng: (rng.integers(0, 256, (10, 10)).astype(np.int64),))
def histogram_equalize(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf = (cdf - cdf.min()) * 255 // (cdf.max() - cdf.min())
    return cdf[img]


@case(lambda rng: (rng.random((8, 10)),))
def flip_and_rotate(img):
    return np.fliplr(img), np.flipud(img), np.rot90(img), img[::-1, ::-1]


@case(lambda rng: (rng.random((8, 10)),))
def normalize_image(img):
    lo, hi = img.min(), img.max()
    return (img - lo) / (hi - lo)


@case(lambda rng: (rng.random((8, 8)),))
def downsample_2x(img):
    return img.reshape(4, 2, 4, 2).mean(axis=(1, 3))


@case(lambda rng: (rng.random((6, 6)),))
def upsample_nearest(img):
    return np.repeat(np.repeat(img, 2, axis=0), 2, axis=1)


@case(lambda rng: (rng.random((8, 8)), rng.random((3, 3))))
def conv2d_valid(img, k):
    h, w = img.shape[0] - 2, img.shape[1] - 2
    out = np.zeros((h, w))
    for i in range(3):
        for j in range(3):
            out += k[i, j] * img[i:i + h, j:j + w]
    return out


@case(lambda rng: (rng.random((10, 10)),))
def clip_and_gamma(img):
    return np.clip(img * 1.2, 0, 1) ** (1 / 2.2)


@case(lambda rng: (rng.random((6, 7)),))
def tile_image(img):
    return np.tile(img, (2, 3))


# ---- bit manipulation ----

@case(lambda rng: (rng.integers(0, 2 ** 31, 32).astype(np.int64),))
def popcount(x):
    c = np.zeros_like(x)
    for _ in range(32):
        c += x & 1
        x = x >> 1
    return c


@case(lambda rng: (rng.integers(0, 2 ** 20, 32).astype(np.int64),))
def bit_reverse_16(x):
    x = x & 0xFFFF
    out = np.zeros_like(x)
    for i in range(16):
        out |= ((x >> i) & 1) << (15 - i)
    return out


@case(lambda rng: (rng.integers(0, 2 ** 30, 32).astype(np.int64),))
def gray_code(x):
    return x ^ (x >> 1)


@case(lambda rng: (rng.integers(1, 2 ** 30, 32).astype(np.int64),))
def is_power_of_two(x):
    return (x & (x - 1)) == 0


@case(lambda rng: (rng.integers(0, 2 ** 31, 32).astype(np.int64),))
def xorshift(x):
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


@case(lambda rng: (rng.integers(0, 255, 32).astype(np.int64),))
def pack_nibbles(x):
    hi, lo = x >> 4, x & 0xF
    return (lo << 4) | hi


@case(lambda rng: (rng.integers(0, 2, (4, 16)).astype(np.uint8),))
def packbits_rows(bits):
    return np.packbits(bits, axis=1)


@case(lambda rng: (rng.integers(0, 2 ** 31, 32).astype(np.int64),))
def bitwise_count_builtin(x):
    return np.bitwise_count(x)


@case(lambda rng: (rng.integers(0, 2 ** 31, 20).astype(np.int64),
                   rng.integers(0, 2 ** 31, 20).astype(np.int64)))
def hamming_distance(a, b):
    d = a ^ b
    count = 0
    while np.any(d):
        count += (d & 1).sum()
        d >>= 1
    return count


# ---- npbench-style kernels ----

@case(lambda rng: (1.5, 1.2, rng.random((10, 12)), rng.random((12, 8)), rng.random((10, 8))))
def gemm(alpha, beta, A, B, C):
    C[:] = alpha * A @ B + beta * C
    return C


@case(lambda rng: (rng.random((10, 10)), rng.random(10), rng.random(10)))
def atax(A, x, y):
    return (A @ x) @ A + y


@case(lambda rng: (rng.random((10, 8)),))
def covariance(data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((data.shape[1], data.shape[1]), dtype=data.dtype)
    for i in range(data.shape[1]):
        cov[i:, i] = cov[i, i:] = data[:, i] @ data[:, i:] / (data.shape[0] - 1.0)
    return cov


@case(lambda rng: (rng.random((12, 12)) + 12 * np.eye(12),))
def lu_decomp(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


@case(lambda rng: (rng.random((10, 10)), rng.random(10), rng.random(10), rng.random(10)))
def mvt(A, x1, x2, y1):
    x1 += A @ y1
    x2 += y1 @ A
    return x1, x2


@case(lambda rng: (rng.random((16, 16)),))
def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))
    return path


@case(lambda rng: (rng.random(16), rng.random(16)))
def go_fast(a, b):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i])
    return b + trace


@case(lambda rng: (rng.random((12, 10)),))
def crc16_like(data):
    poly = 0x8408
    crc = np.full(data.shape[0], 0xFFFF, dtype=np.int64)
    bytes_ = (data * 255).astype(np.int64)
    for j in range(bytes_.shape[1]):
        crc ^= bytes_[:, j]
        for _ in range(8):
            crc = np.where(crc & 1, (crc >> 1) ^ poly, crc >> 1)
    return crc


@case(lambda rng: (rng.random(20), rng.random(20)))
def arc_distance(theta_1, phi_1):
    theta_2, phi_2 = theta_1[::-1], phi_1[::-1]
    temp = (np.sin((theta_2 - theta_1) / 2) ** 2
            + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2)
    return 2 * np.arctan2(np.sqrt(temp), np.sqrt(1 - temp))


@case(lambda rng: (rng.random((5, 6, 7)),))
def softmax_axis0_transpose(x):
    y = np.transpose(x, (2, 0, 1))
    e = np.exp(y - y.max(0))
    return e / e.sum(0)


@case(lambda rng: (rng.random((8, 8)),))
def tril_triu_mix(a):
    return np.tril(a) - np.triu(a, 1).T


@case(lambda rng: (rng.random((6, 5)),))
def stacking(a):
    return np.vstack([a, a * 2]), np.column_stack([a[:, 0], a[:, 1]]), np.dstack([a, a])


@case(lambda rng: (rng.random(30), rng.random(30) > 0.3))
def nan_aware_stats(x, mask):
    y = np.where(mask, x, np.nan)
    return np.nansum(y), np.nanmean(y), np.nanmax(y), np.nanmin(y), np.nanstd(y)


@case(lambda rng: (np.sort(rng.random(10)), rng.random(15)))
def bucketize(edges, values):
    return np.searchsorted(edges, values), np.digitize(values, edges)


@case(lambda rng: (rng.integers(0, 6, 30), rng.random(30)))
def group_sums(keys, vals):
    return np.bincount(keys, weights=vals, minlength=6)


@case(lambda rng: (rng.random(12),))
def outer_product(v):
    return np.outer(v, v) - np.multiply.outer(v, np.ones(3)).sum(1)[:, None]


@case(lambda rng: (rng.random((4, 5)), rng.random((5, 3))))
def tensordot_contract(a, b):
    return np.tensordot(a, b, axes=1), np.einsum("ij,jk->ik", a, b), np.einsum("ii", a[:, :4])


@case(lambda rng: (rng.random(20), rng.random(20)))
def select_piecewise(x, y):
    return np.select([x < 0.3, x < 0.6], [y, y * 2], default=-1.0)


@case(lambda rng: (rng.random((6, 6)),))
def linalg_suite(a):
    spd = a @ a.T + np.eye(6)
    q, r = np.linalg.qr(a)
    s = np.linalg.svd(a, compute_uv=False)
    return np.abs(np.diag(r)), s, np.linalg.inv(spd) @ spd


@case(lambda rng: (rng.random(25),))
def quantiles(x):
    return np.quantile(x, [0.25, 0.5, 0.75]), np.median(x), np.partition(x, 5)[5]


@case(lambda rng: (rng.random(10), rng.random(10)))
def close_checks(a, b):
    return np.isclose(a, a + 1e-12), np.allclose(a, b), np.average(a, weights=b)


@case(lambda rng: (rng.random(12),))
def ranges_and_grids(x):
    xs, ys = np.meshgrid(np.arange(3), np.linspace(0, 1, 4))
    return x[:, None] * np.identity(12)[:, :2], xs + ys, np.indices((2, 3)).sum(0)


@case(lambda rng: (rng.random((5, 4)),))
def accumulate_reduce(a):
    return np.add.accumulate(a, axis=1), np.multiply.reduce(a, axis=0), np.cumsum(a, axis=0)


@case(lambda rng: (rng.integers(0, 5, 20),))
def unique_counts(x):
    vals, counts = np.unique(x, return_counts=True)
    return vals, counts


@case(lambda rng: (rng.random(16),))
def put_and_place(x):
    y = x.copy()
    np.put(y, [0, 3, 5], [-1.0, -2.0, -3.0])
    np.place(y, y > 0.9, 0.0)
    return y


@case(lambda rng: (rng.random(16), np.array([1, 1, 3, 3, 3, 7])))
def repeated_index_assignment(x, idx):
    y = x.copy()
    y[idx] += 1.0
    z = np.zeros(8)
    np.add.at(z, idx, 1.0)
    return y, z


@case(lambda rng: (rng.random(10),))
def fill_from_shape(x):
    n = x.shape[0]
    out = np.empty((n, 2))
    out[:, 0] = x
    out[:, 1] = x ** 2
    z = np.zeros(n)
    z[1:] = np.diff(x)
    z += 1
    return out, z


@case(lambda rng: (rng.random(10).astype(np.float32),))
def dtype_conversions(x):
    y = np.asarray(x, dtype=np.float64)
    i = (y * 10).astype(np.int32)
    return np.array(y * 2), i, float(y.sum()) * y
