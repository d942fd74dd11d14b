"""Benchmark workloads: each one is a NumPy function, a PyTorch twin and an input maker.

The NumPy function is the single definition of a workload: the runner times that very function
object under NumPy and under ``stax.jit``. The PyTorch twin computes the same thing with the same
arithmetic (not a fused library call such as ``torch.softmax``), so that ``torch.compile`` and Stax
compile the same program. Inputs are deterministic (a fixed seed per workload): float32, except
where a workload is about another dtype (float64, bool masks, int64 indices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

try:
    import torch
except ImportError:  # the runner reports torch as missing; the twins are then never called
    torch = None

Arrays = tuple[np.ndarray, ...]
InputMaker = Callable[[np.random.Generator, int, int], Arrays]

EPS = 1e-5
SQRT_2_OVER_PI = 0.7978845608028654
# Adam hyperparameters and the bias corrections of step STEP, as an optimizer computes them
# in Python before its update.
LR, BETA1, BETA2, ADAM_EPS, STEP = 1e-3, 0.9, 0.999, 1e-8, 10
BIAS_CORRECTION1 = 1.0 - BETA1**STEP
BIAS_CORRECTION2 = 1.0 - BETA2**STEP


@dataclass(frozen=True)
class Workload:
    """One benchmark program.

    ``tolerance`` says how results are compared with NumPy's: "elementwise" is
    ``np.allclose(rtol=1e-4, atol=1e-5)``; "magnitude" (long sums and scans, whose rounding
    error grows with the running total) scales the absolute tolerance by the largest magnitude
    of the reference along its last axis; "ulp" also accepts one unit in the last place of the
    reference's dtype (NumPy's float16 `exp` on AVX512-FP16 is not correctly rounded: a quarter
    of its results are one ulp from exp's float16 rounding at 256x1024).
    """

    name: str
    numpy_fn: Callable[..., Any]
    torch_fn: Callable[..., Any]
    make_inputs: InputMaker
    tolerance: Literal["elementwise", "magnitude", "ulp"] = "elementwise"


# --- input makers ----------------------------------------------------------------------------


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


def one_normal(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (_normal(rng, rows, cols),)


def one_positive(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """Values in [0.5, 1.5): row sums stay far from zero, so row normalization is well posed."""
    return (rng.random((rows, cols), dtype=np.float32) + np.float32(0.5),)


def matrix_and_row_vectors(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), _normal(rng, cols), _normal(rng, cols)


def matrix_and_weight(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), _normal(rng, cols)


def transposed_pair(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """``x`` is (cols, rows) so that ``x.T + y`` is (rows, cols); square at 4096x4096."""
    return _normal(rng, cols, rows), _normal(rng, rows, cols)


def normal_and_mask(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), rng.random((rows, cols)) < 0.8


def normal_and_row_indices(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A matrix and `rows` int64 row indices (some negative): `x[idx]` gathers whole rows."""
    return _normal(rng, rows, cols), rng.integers(-rows, rows, rows).astype(np.int64)


def one_normal_f64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.standard_normal((rows, cols)),)


def adam_state(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    param, grad = _normal(rng, rows, cols), _normal(rng, rows, cols)
    m = np.float32(0.1) * _normal(rng, rows, cols)
    v = np.float32(0.01) * rng.random((rows, cols), dtype=np.float32)  # second moment: >= 0
    return param, grad, m, v


def rgb_and_weights(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """[UNROLL] An RGB image (rows, cols, 3) and gray weights of its channels."""
    return _normal(rng, rows, cols, 3), np.array([0.299, 0.587, 0.114], np.float32)


# Input makers of the cliff hunt (H9): shapes derived from (rows, cols) keep about rows*cols
# elements, so every size of the issue keeps its meaning.


def _split_rows(rows: int) -> tuple[int, int]:
    """rows = outer * inner with inner 16 where it divides (3-D shapes of rows*cols elements)."""
    inner = 16 if rows % 16 == 0 else 1
    return rows // inner, inner


def normal_3d(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (_normal(rng, *_split_rows(rows), cols),)


def one_transposed(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A (rows, cols) transposed view of a C-contiguous (cols, rows) array."""
    return (_normal(rng, cols, rows).T,)


def one_fortran(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (np.asfortranarray(_normal(rng, rows, cols)),)


# [FORD] Fortran-ordered inputs of the row workloads (issue 9: no cliff on column-major input)


def one_positive_fortran(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (np.asfortranarray(one_positive(rng, rows, cols)[0]),)


def one_fortran_f64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (np.asfortranarray(rng.standard_normal((rows, cols))),)


def fortran_and_weight(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return np.asfortranarray(_normal(rng, rows, cols)), _normal(rng, cols)


# [LAYOUT] Input makers of the sixth wave's unseen workloads


def normal_3d_wide(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A 3-D array (outer, 16, cols) where rows divides by 16, for reductions over (0, 2)."""
    return (_normal(rng, *_split_rows(rows)[::-1], cols),)


def one_int32(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.integers(-(1 << 20), 1 << 20, (rows, cols), dtype=np.int32),)


def column_and_row(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, 1), _normal(rng, 1, cols)


def mixed_f32_f64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), rng.standard_normal(cols)


def image_and_stats(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """An HxWx3 uint8 image of about rows*cols bytes, per-channel mean and std (float32)."""
    image = rng.integers(0, 256, (rows, max(cols // 3, 1), 3), dtype=np.uint8)
    return (
        image,
        np.array([0.485, 0.456, 0.406], np.float32),
        np.array([0.229, 0.224, 0.225], np.float32),
    )


def probs_and_labels(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """Row-stochastic probabilities (rows, cols) and one int64 label per row."""
    p = rng.random((rows, cols), dtype=np.float32) + np.float32(0.01)
    return p / p.sum(1, keepdims=True), rng.integers(0, cols, rows).astype(np.int64)


def two_vectors(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows), _normal(rng, cols)


def dots_and_norms(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (
        _normal(rng, rows, cols),
        rng.random(rows, dtype=np.float32) + np.float32(0.5),
        rng.random(cols, dtype=np.float32) + np.float32(0.5),
    )


def two_normal(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), _normal(rng, rows, cols)


def one_normal_f16(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (_normal(rng, rows, cols).astype(np.float16),)


def two_normal_f16(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols).astype(np.float16), _normal(rng, rows, cols).astype(np.float16)


def one_int64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.integers(-1000, 1000, (rows, cols)),)


def matrix_and_row_bounds(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A matrix and per-column bounds lo < hi."""
    lo = _normal(rng, cols) - np.float32(1)
    return _normal(rng, rows, cols), lo, lo + np.float32(2)


def matrix_and_column_weights(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), _normal(rng, rows)


def one_image(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """An HxWx3 uint8 image of about rows*cols bytes."""
    return (rng.integers(0, 256, (rows, max(cols // 3, 1), 3), dtype=np.uint8),)


# [PERF9] Input makers of the sixteenth wave's unseen workloads


def normal_and_labels(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """Logits (rows, cols) and one int64 class label per row."""
    return _normal(rng, rows, cols), rng.integers(0, cols, rows).astype(np.int64)


def labels_and_class_weights(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """``rows`` int64 labels in [0, cols) and a float32 weight per class (one-hot: rows x cols)."""
    return rng.integers(0, cols, rows).astype(np.int64), _normal(rng, cols)


def two_embeddings(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """``rows`` and ``cols`` embeddings of width 64: their similarity matrix is rows x cols."""
    return _normal(rng, rows, 64), _normal(rng, cols, 64)


def matrix_and_row_scales(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A matrix of magnitude ~50 and a positive scale per row (int8 quantization)."""
    return np.float32(50) * _normal(rng, rows, cols), rng.random(rows, dtype=np.float32) + 0.5


def int8_and_row_scales(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (
        rng.integers(-128, 128, (rows, cols), dtype=np.int8),
        rng.random(rows, dtype=np.float32) + np.float32(0.5),
    )


# [PERF10] Input makers of the seventeenth wave's unseen workloads


def sorted_grid_and_normal(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A sorted grid of 256 float32 points and a matrix to place in it (np.searchsorted)."""
    return np.sort(_normal(rng, 256)), _normal(rng, rows, cols)


def _batched_pair(rng: np.random.Generator, rows: int, cols: int, k: int) -> Arrays:
    """Two stacks of k x k matrices of about rows*cols elements each."""
    n = max(rows * cols // (k * k), 1)
    return _normal(rng, n, k, k), _normal(rng, n, k, k)


def batched_4x4(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _batched_pair(rng, rows, cols, 4)


def batched_8x8(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _batched_pair(rng, rows, cols, 8)


def tall_skinny(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """(rows*cols/64, 64): its Gram matrix x.T @ x is 64 x 64."""
    return (_normal(rng, max(rows * cols // 64, 1), 64),)


def half_image(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A (rows/2, cols/2) image: its 2x bilinear upsampling is about rows x cols."""
    return (_normal(rng, max(rows // 2, 1), max(cols // 2, 1)),)


def one_complex64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A complex64 (rows, cols/2) array: rows*cols float32 values."""
    shape = (rows, max(cols // 2, 1))
    return ((_normal(rng, *shape) + 1j * _normal(rng, *shape)).astype(np.complex64),)


# [PERF11] input makers of the eighteenth wave's unseen workloads


def two_point_sets(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """``rows`` and ``cols`` points in 3-D: their squared distances are rows x cols."""
    return _normal(rng, rows, 3), _normal(rng, cols, 3)


def two_int8(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return tuple(rng.integers(-128, 128, (rows, cols)).astype(np.int8) for _ in range(2))


def two_uint8(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return tuple(rng.integers(0, 256, (rows, cols)).astype(np.uint8) for _ in range(2))


def normal_with_nans(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """A matrix with about 10 % NaN (nan-aware reductions)."""
    x = _normal(rng, rows, cols)
    x[rng.random((rows, cols)) < 0.1] = np.nan
    return (x,)


def int32_and_normal(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return rng.integers(-1000, 1000, (rows, cols)).astype(np.int32), _normal(rng, rows, cols)


def two_complex64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return one_complex64(rng, rows, cols) + one_complex64(rng, rows, cols)


# --- NumPy definitions (timed under NumPy and stax.jit) --------------------------------------


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _standardize(x):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + EPS)


def layernorm(x):
    return _standardize(x)


def layernorm_affine(x, weight, bias):
    return _standardize(x) * weight + bias


def rmsnorm(x, weight):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * weight


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))


def sum_max_exp(x):
    e = np.exp(x)
    return e.sum(-1), e.max(-1)


def row_normalize(x):
    return x / x.sum(-1, keepdims=True)


def transpose_add(x, y):
    return x.T + y


def column_sum(x):
    return x.sum(0)


def adam_step(param, grad, m, v):
    m = BETA1 * m + (1.0 - BETA1) * grad
    v = BETA2 * v + (1.0 - BETA2) * (grad * grad)
    param = param - LR * (m / BIAS_CORRECTION1) / (np.sqrt(v / BIAS_CORRECTION2) + ADAM_EPS)
    return param, m, v


def cumsum_rows(x):
    return np.cumsum(x, axis=1)


# Workloads of issue 9 (loops that used to stay scalar or walk columns; B).
MASK_SCALE = 0.125
ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def masked_softmax(x, mask):
    return softmax(np.where(mask, x * MASK_SCALE, -1e9))


def column_var_mean(x):
    return x.var(0), x.mean(0)


def argmax_rows(x):
    return x.argmax(-1)


def cast_to_int(x):
    return (x * 100.0).astype(np.int32)


def gather_rows(x, idx):
    return x[idx]


def erf_like(x):  # Abramowitz-Stegun 7.1.26, a polynomial in t times exp
    t = 1.0 / (1.0 + ERF_P * np.abs(x))
    a1, a2, a3, a4, a5 = ERF_A
    poly = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def sin_cos_f64(x):
    return np.sin(x) + np.cos(x)


def clip_round(x):
    return np.round(np.clip(x * 10.0, -3.0, 3.0))


def cumsum_cols(x):
    return np.cumsum(x, axis=0)


# Workloads of the cliff hunt (H9): programs nobody tuned for.


def sum_mid_3d(x):
    return x.sum(1)


def sum_axis0_transposed(x):
    return x.sum(0)


def logsumexp_axis0(x):
    m = x.max(0)
    return m + np.log(np.exp(x - m).sum(0))


def logsumexp_rows(x):
    m = x.max(-1, keepdims=True)
    return m[:, 0] + np.log(np.exp(x - m).sum(-1))


def std_rows_f64(x):
    return x.std(1)


def image_normalize(image, mean, std):
    return (image.astype(np.float32) / 255 - mean) / std


def where_chain(x):
    return np.where(x > 1, x, np.where(x < -1, -x, x * x))


def center_rows_fortran(x):
    return x - x.mean(1, keepdims=True)


def l2_normalize_rows(x):
    return x / np.sqrt((x * x).sum(1, keepdims=True))


def cross_entropy(p, labels):
    return -np.log(p[np.arange(p.shape[0]), labels])


def softmax_axis0(x):
    e = np.exp(x - x.max(0))
    return e / e.sum(0)


def outer_product(a, b):
    return a[:, None] * b[None, :]


def cumsum_axis0_3d(x):
    return np.cumsum(x, axis=0)


def cosine_tail(dots, na, nb):
    return dots / (na[:, None] * nb[None, :])


def frac_positive_rows(x):
    return (x > 0).mean(1)


# [LAYOUT] The sixth wave's unseen workloads.


def sum_02_3d(x):
    return x.sum(axis=(0, 2))


def int32_mix(x):
    return (x * 7 + (x >> 3)) ^ (x & 255)


def where_chain_f64(x):
    return np.where(x > 0.5, np.sqrt(np.abs(x)), np.where(x < -0.5, x * x, 2 * x + 1))


def col_row_hinge(col, row):
    return np.maximum(col - row, 0) * row


def strided_cols(x):
    return x[:, ::2] * 2 - x[:, 1::2]


def mixed_scale_rows(x, w):
    return (x * w).sum(1)


def tanh_fortran(x):
    return np.tanh(x) * 2 + 1


def transpose_scale(x):
    return x.T * 2 + 1


# [CLIFF] unseen workloads of the seventh wave


def masked_mean_rows(x, mask):
    return np.where(mask, x, 0).sum(1) / np.maximum(mask.sum(1), 1).astype(np.float32)


def abs_diff_max(x, y):
    return np.abs(x - y).max(1)


def f16_roundtrip(x):
    return x.astype(np.float16).astype(np.float32)


def f16_muladd(x, y):  # [VEC5] float16 in, float16 out: rounded after every op
    return x * y + x


def f16_exp_rows_sum(x, y):  # [VEC5] float16 widened, then float32 math and a reduction
    return np.exp(x.astype(np.float32)).sum(1) + (y * 2 + 1).astype(np.float32).sum(1)


def f32_to_f16_scale(x):  # [VEC5] a float16 result from float32 work
    return (x * 3 + 1).astype(np.float16)


def f16_exp(x):  # [F16X] float16 in and out: NumPy 2.x runs AVX512-FP16 SVML here
    return np.exp(x)


def cumsum_int64_rows(x):
    return x.cumsum(1)


def clip_rows(x, lo, hi):
    return np.clip(x, lo, hi)


def weighted_col_sum(x, w):
    return (x * w[:, None]).sum(0)


def transpose_3d_scale(x):
    return x.transpose(2, 0, 1) * 2


def running_max_rows(x):
    return np.maximum.accumulate(x, axis=1)


def top1_where(x):
    return np.where(x == x.max(1, keepdims=True), x, 0)


def softplus(x):
    return np.log1p(np.exp(x))


def var0_ddof1_f64(x):
    return x.var(0, ddof=1)


def u8_center_channels(image):
    img = image.astype(np.float32) / 255
    return img - img.mean(axis=(0, 1))


# [PERF9] unseen workloads of the sixteenth wave (layernorm_transposed reuses layernorm)


def xent_logits(x, labels):
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    return lse - np.take_along_axis(x, labels[:, None], 1)[:, 0]


def one_hot_weighted(labels, w):
    return (labels[:, None] == np.arange(w.shape[0])) * w


def nearest_1d(a, b):
    return np.abs(a[:, None] - b[None, :]).min(1)


def outer_max_axis0(a, b):
    return (a[:, None] * b[None, :]).max(0)


def cosine_sim(a, b):
    na = np.sqrt((a * a).sum(1))
    nb = np.sqrt((b * b).sum(1))
    return (a @ b.T) / (na[:, None] * nb[None, :])


def u8_brightness(image):
    return np.clip(image.astype(np.int16) * 3 // 2 - 40, 0, 255).astype(np.uint8)


def quantize_i8(x, scale):
    return np.clip(np.round(x / scale[:, None]), -128, 127).astype(np.int8)


def dequant_i8_rows(q, scale):
    return q.astype(np.float32) * scale[:, None]


def count_nonzero_axis0(x):
    return np.count_nonzero(np.abs(x) > 1, axis=0)


def f64_to_f32_chain(x):
    return (np.log(x * x + 1.0) * 0.5).astype(np.float32) * 2 + 1


def gradient_rows(x):
    return np.gradient(x, axis=1)


def logaddexp_pair(x, y):
    return np.logaddexp(x, y)


def norm_axis0(x):
    return np.linalg.norm(x, axis=0)


def triu_scale(x):
    return np.triu(x) * 2


def ptp_rows(x):
    return np.ptp(x, axis=1)


def frac_mod(x):
    return np.mod(x * 3, 1.0)


def strided_minmax(x):
    v = x[::2, ::3]
    return v.min(0), v.max(1)

# [PERF10] unseen workloads of the seventeenth wave (norm_axis0_fortran reuses norm_axis0)

ROLL_WINDOW = 16
EMA_DECAY = 0.999  # decay**-cols stays finite in float32 up to 4096 columns
HIST_BINS = 256
TOPK = 8


def rolling_mean_rows(x):
    c = np.cumsum(x, axis=1)
    return (c[:, ROLL_WINDOW:] - c[:, :-ROLL_WINDOW]) / ROLL_WINDOW


def ema_rows(x):
    """y[t] = (1-a) * sum_s a**(t-s) x[s] along axis 1, without a Python loop."""
    w = np.cumprod(np.full(x.shape[1], EMA_DECAY, np.float32))
    return (1 - EMA_DECAY) * w * np.cumsum(x / w, axis=1)


def histogram_bincount(x):
    bins = np.clip((x * 16 + HIST_BINS // 2).astype(np.int64), 0, HIST_BINS - 1)
    return np.bincount(bins.ravel(), minlength=HIST_BINS)


def unique_count_sort(x):
    s = np.sort((x * 4).astype(np.int64).ravel())
    return np.count_nonzero(s[1:] != s[:-1]) + 1


def sort_rows(x):
    return np.sort(x, axis=1)


def argsort_rows(x):
    return np.argsort(x, axis=1, kind="stable")


def topk_rows(x):
    return np.sort(np.partition(x, -TOPK, axis=1)[:, -TOPK:], axis=1)


def topk_sorted_rows(x):
    """[TOPK] The 8 largest of each row by a sort and a slice."""
    return np.sort(x, axis=1)[:, -TOPK:]


def bottomk_rows(x):
    """[TOPK] The 8 smallest of each row by a partition, then a sort of them."""
    return np.sort(np.partition(x, TOPK - 1, axis=1)[:, :TOPK], axis=1)


def median_rows(x):
    return np.median(x, axis=1)


def searchsorted_grid(grid, x):
    return np.searchsorted(grid, x)


def batched_matmul(a, b):
    return np.einsum("bij,bjk->bik", a, b)


def gram_normalize(x):
    g = x.T @ x
    d = np.sqrt(np.diag(g))
    return g / np.outer(d, d)


def _bilinear_source(n: int, xp):
    """Source coordinates of a 2x upsampling (half-pixel centers): index, next index, weight."""
    pos = xp.clip((xp.arange(2 * n, dtype=xp.float32) + 0.5) / 2 - 0.5, 0, n - 1)
    lo = xp.floor(pos)
    i0 = lo.astype(xp.int64) if xp is np else lo.to(torch.int64)
    return i0, xp.clip(i0 + 1, 0, n - 1), pos - lo


def resize_bilinear2x(img):
    y0, y1, wy = _bilinear_source(img.shape[0], np)
    x0, x1, wx = _bilinear_source(img.shape[1], np)
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy[:, None]) + bottom * wy[:, None]


def laplacian_5pt(x):
    return x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1] - 4 * x[1:-1, 1:-1]


def complex_abs_angle(z):
    return np.abs(z), np.angle(z)


def f16_rms_cols(x):
    return np.sqrt(np.mean(np.square(x.astype(np.float32)), axis=0))


def cummax_i64_rows(x):
    return np.maximum.accumulate(x, axis=1)


def mask_compact_mean(x):
    return x[x > 1].mean()


def diff_transposed(x):
    return np.diff(x.T, axis=0)


def outer_count(a, b):
    return np.count_nonzero(np.outer(a, b) > 0.5)



# [PERF11] unseen workloads of the eighteenth wave

POLY = np.array([0.05, -0.2, 0.5, -1.0, 2.0, 0.3], np.float32)  # np.polyval's float32 coefficients
TAPS = (0.1, 0.2, 0.4, 0.2, 0.1)  # a 5-tap smoothing filter along axis 1


def pairwise_sqdist_3d(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)


def polyval5(x):
    return np.polyval(POLY, x)


def conv1d_5tap(x):
    n = x.shape[1] - len(TAPS) + 1
    return sum(t * x[:, i : i + n] for i, t in enumerate(TAPS))


def tril_rowsum(x):
    return np.tril(x).sum(1)


def rowdot_einsum(x, y):
    return np.einsum("ij,ij->i", x, y)


def second_diff_rows(x):
    return np.diff(x, n=2, axis=1)


def select_piecewise(x):
    return np.select([x < -1, x < 1], [-x - 0.5, 0.5 * x * x], x - 0.5)


def quantize_u8(x):
    return (np.clip(x * 64 + 128, 0, 255) + 0.5).astype(np.uint8)


def i8_wrap_muladd(a, b):
    return a * b + a * 3


def u8_absdiff(a, b):
    return np.maximum(a, b) - np.minimum(a, b)


def any_all_bool(x):
    return (x > 3).any(0), (x > -4).all(1)


def cummax_axis0(x):
    return np.maximum.accumulate(x, axis=0)


def complex_conj_mul_real(z, w):
    return (z * np.conj(w)).real


def histogram_fixed(x):
    return np.histogram(x, bins=64, range=(-4.0, 4.0))[0]


def col_l2_normalize(x):
    return x / np.sqrt((x * x).sum(0, keepdims=True))


def int_float_promote(i, y):
    return i * y + 1


def nansum_rows(x):
    return np.nansum(x, axis=1)


def nanmean_axis0(x):
    return np.nanmean(x, axis=0)


def flip_add(x):
    return x + x[:, ::-1]


def roll_diff(x):
    return np.roll(x, 1, axis=1) - x


def avgpool2x2(x):
    r, c = x.shape[0] // 2, x.shape[1] // 2
    return x[: 2 * r, : 2 * c].reshape(r, 2, c, 2).mean((1, 3))


def argmin_axis0(x):
    return np.argmin(x, axis=0)


def sum_triples(img, w):  # [UNROLL] reductions over 3 and 4 elements per output
    return img.reshape(-1, 3).sum(1)


def rgb_to_gray(img, w):
    return (img * w).sum(-1)


def sum_quads_rows(x):
    return x.reshape(x.shape[0], -1, 4).sum(-1)


def sum_f64_rows(x):
    return x.sum(axis=1, dtype=np.float64)


def tiny_add(x, y):
    """The per-call overhead probe (4 elements); plain operators, so torch runs it as is."""
    return x + y


# --- PyTorch twins (compiled with torch.compile) ---------------------------------------------


def softmax_torch(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _standardize_torch(x):
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=-1, keepdim=True)
    return centered / torch.sqrt(var + EPS)


def layernorm_torch(x):
    return _standardize_torch(x)


def layernorm_affine_torch(x, weight, bias):
    return _standardize_torch(x) * weight + bias


def rmsnorm_torch(x, weight):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * weight


def gelu_tanh_torch(x):
    return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))


def sum_max_exp_torch(x):
    e = torch.exp(x)
    return e.sum(-1), e.amax(-1)


def row_normalize_torch(x):
    return x / x.sum(-1, keepdim=True)


def transpose_add_torch(x, y):
    return x.T + y


def column_sum_torch(x):
    return x.sum(0)


def adam_step_torch(param, grad, m, v):
    m = BETA1 * m + (1.0 - BETA1) * grad
    v = BETA2 * v + (1.0 - BETA2) * (grad * grad)
    param = param - LR * (m / BIAS_CORRECTION1) / (torch.sqrt(v / BIAS_CORRECTION2) + ADAM_EPS)
    return param, m, v


def cumsum_rows_torch(x):
    return torch.cumsum(x, dim=1)


def masked_softmax_torch(x, mask):
    return softmax_torch(torch.where(mask, x * MASK_SCALE, -1e9))


def column_var_mean_torch(x):
    return x.var(0, unbiased=False), x.mean(0)


def argmax_rows_torch(x):
    return x.argmax(-1)


def cast_to_int_torch(x):
    return (x * 100.0).to(torch.int32)


def gather_rows_torch(x, idx):
    return x[idx]


def erf_like_torch(x):
    t = 1.0 / (1.0 + ERF_P * torch.abs(x))
    a1, a2, a3, a4, a5 = ERF_A
    poly = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))))
    return torch.sign(x) * (1.0 - poly * torch.exp(-x * x))


def sin_cos_f64_torch(x):
    return torch.sin(x) + torch.cos(x)


def clip_round_torch(x):
    return torch.round(torch.clamp(x * 10.0, -3.0, 3.0))


def cumsum_cols_torch(x):
    return torch.cumsum(x, dim=0)


def sum_mid_3d_torch(x):
    return x.sum(1)


def sum_axis0_transposed_torch(x):
    return x.sum(0)


def logsumexp_axis0_torch(x):
    m = x.amax(0)
    return m + torch.log(torch.exp(x - m).sum(0))


def logsumexp_rows_torch(x):
    m = x.amax(-1, keepdim=True)
    return m[:, 0] + torch.log(torch.exp(x - m).sum(-1))


def std_rows_f64_torch(x):
    return x.std(1, unbiased=False)


def image_normalize_torch(image, mean, std):
    return (image.to(torch.float32) / 255 - mean) / std


def where_chain_torch(x):
    return torch.where(x > 1, x, torch.where(x < -1, -x, x * x))


def center_rows_fortran_torch(x):
    return x - x.mean(1, keepdim=True)


def l2_normalize_rows_torch(x):
    return x / torch.sqrt((x * x).sum(1, keepdim=True))


def cross_entropy_torch(p, labels):
    return -torch.log(p[torch.arange(p.shape[0]), labels])


def softmax_axis0_torch(x):
    e = torch.exp(x - x.amax(0))
    return e / e.sum(0)


def outer_product_torch(a, b):
    return a[:, None] * b[None, :]


def cumsum_axis0_3d_torch(x):
    return torch.cumsum(x, dim=0)


def cosine_tail_torch(dots, na, nb):
    return dots / (na[:, None] * nb[None, :])


def frac_positive_rows_torch(x):
    return (x > 0).to(torch.float64).mean(1)


def sum_02_3d_torch(x):
    return x.sum(dim=(0, 2))


def int32_mix_torch(x):
    return (x * 7 + (x >> 3)) ^ (x & 255)


def where_chain_f64_torch(x):
    return torch.where(x > 0.5, torch.sqrt(x.abs()), torch.where(x < -0.5, x * x, 2 * x + 1))


def col_row_hinge_torch(col, row):
    return torch.clamp(col - row, min=0) * row


def strided_cols_torch(x):
    return x[:, ::2] * 2 - x[:, 1::2]


def mixed_scale_rows_torch(x, w):
    return (x * w).sum(1)


def tanh_fortran_torch(x):
    return torch.tanh(x) * 2 + 1


def transpose_scale_torch(x):
    return x.T * 2 + 1


def masked_mean_rows_torch(x, mask):
    return torch.where(mask, x, 0).sum(1) / mask.sum(1).clamp(min=1).to(torch.float32)


def abs_diff_max_torch(x, y):
    return (x - y).abs().amax(1)


def f16_roundtrip_torch(x):
    return x.to(torch.float16).to(torch.float32)


def f16_muladd_torch(x, y):
    return x * y + x


def f16_exp_rows_sum_torch(x, y):
    return torch.exp(x.float()).sum(1) + (y * 2 + 1).float().sum(1)


def f16_exp_torch(x):
    return torch.exp(x)


def f32_to_f16_scale_torch(x):
    return (x * 3 + 1).half()


def cumsum_int64_rows_torch(x):
    return x.cumsum(1)


def clip_rows_torch(x, lo, hi):
    return torch.minimum(torch.maximum(x, lo), hi)


def weighted_col_sum_torch(x, w):
    return (x * w[:, None]).sum(0)


def transpose_3d_scale_torch(x):
    return x.permute(2, 0, 1) * 2


def running_max_rows_torch(x):
    return torch.cummax(x, 1).values


def top1_where_torch(x):
    return torch.where(x == x.amax(1, keepdim=True), x, 0)


def softplus_torch(x):
    return torch.log1p(torch.exp(x))


def var0_ddof1_f64_torch(x):
    return torch.var(x, 0, correction=1)


def u8_center_channels_torch(image):
    img = image.to(torch.float32) / 255
    return img - img.mean(dim=(0, 1))


def xent_logits_torch(x, labels):
    m = x.amax(1, keepdim=True)
    lse = m[:, 0] + torch.log(torch.exp(x - m).sum(1))
    return lse - torch.gather(x, 1, labels[:, None])[:, 0]


def one_hot_weighted_torch(labels, w):
    return (labels[:, None] == torch.arange(w.shape[0])) * w


def nearest_1d_torch(a, b):
    return torch.abs(a[:, None] - b[None, :]).amin(1)


def outer_max_axis0_torch(a, b):
    return (a[:, None] * b[None, :]).amax(0)


def cosine_sim_torch(a, b):
    na = torch.sqrt((a * a).sum(1))
    nb = torch.sqrt((b * b).sum(1))
    return (a @ b.T) / (na[:, None] * nb[None, :])


def u8_brightness_torch(image):
    scaled = torch.div(image.to(torch.int16) * 3, 2, rounding_mode="floor") - 40
    return torch.clamp(scaled, 0, 255).to(torch.uint8)


def quantize_i8_torch(x, scale):
    return torch.clamp(torch.round(x / scale[:, None]), -128, 127).to(torch.int8)


def dequant_i8_rows_torch(q, scale):
    return q.to(torch.float32) * scale[:, None]


def count_nonzero_axis0_torch(x):
    return torch.count_nonzero(torch.abs(x) > 1, dim=0)


def f64_to_f32_chain_torch(x):
    return (torch.log(x * x + 1.0) * 0.5).to(torch.float32) * 2 + 1


def gradient_rows_torch(x):
    return torch.gradient(x, dim=1)[0]


def logaddexp_pair_torch(x, y):
    return torch.logaddexp(x, y)


def norm_axis0_torch(x):
    return torch.sqrt((x * x).sum(0))


def triu_scale_torch(x):
    return torch.triu(x) * 2


def ptp_rows_torch(x):
    return x.amax(1) - x.amin(1)


def frac_mod_torch(x):
    return torch.remainder(x * 3, 1.0)


def strided_minmax_torch(x):
    v = x[::2, ::3]
    return v.amin(0), v.amax(1)

def rolling_mean_rows_torch(x):
    c = torch.cumsum(x, 1)
    return (c[:, ROLL_WINDOW:] - c[:, :-ROLL_WINDOW]) / ROLL_WINDOW


def ema_rows_torch(x):
    w = torch.cumprod(torch.full((x.shape[1],), EMA_DECAY, dtype=torch.float32), 0)
    return (1 - EMA_DECAY) * w * torch.cumsum(x / w, 1)


def histogram_bincount_torch(x):
    bins = torch.clamp((x * 16 + HIST_BINS // 2).to(torch.int64), 0, HIST_BINS - 1)
    return torch.bincount(bins.ravel(), minlength=HIST_BINS)


def unique_count_sort_torch(x):
    s = torch.sort((x * 4).to(torch.int64).ravel()).values
    return (s[1:] != s[:-1]).sum() + 1


def sort_rows_torch(x):
    return torch.sort(x, 1).values


def argsort_rows_torch(x):
    return torch.argsort(x, dim=1, stable=True)


def topk_rows_torch(x):
    return torch.sort(torch.topk(x, TOPK, 1).values, 1).values


def bottomk_rows_torch(x):
    return torch.sort(torch.topk(x, TOPK, 1, largest=False).values, 1).values


def median_rows_torch(x):
    s = torch.sort(x, 1).values
    n = x.shape[1]
    return (s[:, (n - 1) // 2] + s[:, n // 2]) / 2


def searchsorted_grid_torch(grid, x):
    return torch.searchsorted(grid, x)


def batched_matmul_torch(a, b):
    return torch.einsum("bij,bjk->bik", a, b)


def gram_normalize_torch(x):
    g = x.T @ x
    d = torch.sqrt(torch.diagonal(g))
    return g / torch.outer(d, d)


def resize_bilinear2x_torch(img):
    y0, y1, wy = _bilinear_source(img.shape[0], torch)
    x0, x1, wx = _bilinear_source(img.shape[1], torch)
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy[:, None]) + bottom * wy[:, None]


def laplacian_5pt_torch(x):
    return x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1] - 4 * x[1:-1, 1:-1]


def complex_abs_angle_torch(z):
    return torch.abs(z), torch.angle(z)


def f16_rms_cols_torch(x):
    return torch.sqrt(torch.mean(torch.square(x.to(torch.float32)), 0))


def cummax_i64_rows_torch(x):
    return torch.cummax(x, 1).values


def mask_compact_mean_torch(x):
    return x[x > 1].mean()


def diff_transposed_torch(x):
    return torch.diff(x.T, dim=0)


def outer_count_torch(a, b):
    return (torch.outer(a, b) > 0.5).sum()


def pairwise_sqdist_3d_torch(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)


def polyval5_torch(x):
    y = torch.zeros_like(x)
    for c in POLY.tolist():
        y = y * x + c
    return y


def conv1d_5tap_torch(x):
    n = x.shape[1] - len(TAPS) + 1
    return sum(t * x[:, i : i + n] for i, t in enumerate(TAPS))


def tril_rowsum_torch(x):
    return torch.tril(x).sum(1)


def rowdot_einsum_torch(x, y):
    return torch.einsum("ij,ij->i", x, y)


def second_diff_rows_torch(x):
    return torch.diff(x, n=2, dim=1)


def select_piecewise_torch(x):
    return torch.where(x < -1, -x - 0.5, torch.where(x < 1, 0.5 * x * x, x - 0.5))


def quantize_u8_torch(x):
    return (torch.clamp(x * 64 + 128, 0, 255) + 0.5).to(torch.uint8)


def i8_wrap_muladd_torch(a, b):
    return a * b + a * 3


def u8_absdiff_torch(a, b):
    return torch.maximum(a, b) - torch.minimum(a, b)


def any_all_bool_torch(x):
    return (x > 3).any(0), (x > -4).all(1)


def cummax_axis0_torch(x):
    return torch.cummax(x, 0).values


def complex_conj_mul_real_torch(z, w):
    return (z * torch.conj(w)).real


def histogram_fixed_torch(x):
    return torch.histc(x, 64, -4.0, 4.0).to(torch.int64)


def col_l2_normalize_torch(x):
    return x / torch.sqrt((x * x).sum(0, keepdim=True))


def int_float_promote_torch(i, y):
    return i.to(torch.float64) * y.to(torch.float64) + 1


def nansum_rows_torch(x):
    return torch.nansum(x, 1)


def nanmean_axis0_torch(x):
    return torch.nanmean(x, 0)


def flip_add_torch(x):
    return x + torch.flip(x, [1])


def roll_diff_torch(x):
    return torch.roll(x, 1, 1) - x


def avgpool2x2_torch(x):
    r, c = x.shape[0] // 2, x.shape[1] // 2
    return x[: 2 * r, : 2 * c].reshape(r, 2, c, 2).mean((1, 3))


def argmin_axis0_torch(x):
    return torch.argmin(x, 0)


def sum_triples_torch(img, w):
    return img.reshape(-1, 3).sum(1)


def rgb_to_gray_torch(img, w):
    return (img * w).sum(-1)


def sum_quads_rows_torch(x):
    return x.reshape(x.shape[0], -1, 4).sum(-1)


def sum_f64_rows_torch(x):
    return x.sum(1, dtype=torch.float64)



WORKLOADS: tuple[Workload, ...] = (
    Workload("softmax", softmax, softmax_torch, one_normal),
    Workload("layernorm", layernorm, layernorm_torch, one_normal),
    Workload("layernorm_affine", layernorm_affine, layernorm_affine_torch, matrix_and_row_vectors),
    Workload("rmsnorm", rmsnorm, rmsnorm_torch, matrix_and_weight),
    Workload("gelu_tanh", gelu_tanh, gelu_tanh_torch, one_normal),
    Workload("sum_max_exp", sum_max_exp, sum_max_exp_torch, one_normal),
    Workload("row_normalize", row_normalize, row_normalize_torch, one_positive),
    Workload("transpose_add", transpose_add, transpose_add_torch, transposed_pair),
    Workload("column_sum", column_sum, column_sum_torch, one_normal, "magnitude"),
    Workload("adam_step", adam_step, adam_step_torch, adam_state),
    Workload("cumsum_rows", cumsum_rows, cumsum_rows_torch, one_normal, "magnitude"),
    Workload("masked_softmax", masked_softmax, masked_softmax_torch, normal_and_mask),
    Workload("column_var_mean", column_var_mean, column_var_mean_torch, one_normal),
    Workload("argmax_rows", argmax_rows, argmax_rows_torch, one_normal),
    Workload("cast_to_int", cast_to_int, cast_to_int_torch, one_normal),
    Workload("gather_rows", gather_rows, gather_rows_torch, normal_and_row_indices),
    Workload("erf_like", erf_like, erf_like_torch, one_normal),
    Workload("sin_cos_f64", sin_cos_f64, sin_cos_f64_torch, one_normal_f64),
    Workload("clip_round", clip_round, clip_round_torch, one_normal),
    Workload("cumsum_cols", cumsum_cols, cumsum_cols_torch, one_normal, "magnitude"),
    # the cliff hunt (H9)
    Workload("sum_mid_3d", sum_mid_3d, sum_mid_3d_torch, normal_3d, "magnitude"),
    Workload(
        "sum_axis0_transposed",
        sum_axis0_transposed,
        sum_axis0_transposed_torch,
        one_transposed,
        "magnitude",
    ),
    Workload("logsumexp_axis0", logsumexp_axis0, logsumexp_axis0_torch, one_normal),
    Workload("std_rows_f64", std_rows_f64, std_rows_f64_torch, one_normal_f64),
    Workload("image_normalize", image_normalize, image_normalize_torch, image_and_stats),
    Workload("where_chain", where_chain, where_chain_torch, one_normal),
    Workload("center_rows_fortran", center_rows_fortran, center_rows_fortran_torch, one_fortran),
    Workload("l2_normalize_rows", l2_normalize_rows, l2_normalize_rows_torch, one_normal),
    Workload("cross_entropy", cross_entropy, cross_entropy_torch, probs_and_labels),
    Workload("softmax_axis0", softmax_axis0, softmax_axis0_torch, one_normal),
    Workload("outer_product", outer_product, outer_product_torch, two_vectors),
    Workload("cumsum_axis0_3d", cumsum_axis0_3d, cumsum_axis0_3d_torch, normal_3d, "magnitude"),
    Workload("cosine_tail", cosine_tail, cosine_tail_torch, dots_and_norms),
    Workload("frac_positive_rows", frac_positive_rows, frac_positive_rows_torch, one_normal),
    # Fortran-ordered and transposed inputs of row workloads (FORD)
    Workload("softmax_fortran", softmax, softmax_torch, one_fortran),
    Workload("softmax_transposed", softmax, softmax_torch, one_transposed),
    Workload("softmax_fortran_f64", softmax, softmax_torch, one_fortran_f64),
    Workload("layernorm_fortran", layernorm, layernorm_torch, one_fortran),
    Workload("rmsnorm_fortran", rmsnorm, rmsnorm_torch, fortran_and_weight),
    Workload("logsumexp_rows_fortran", logsumexp_rows, logsumexp_rows_torch, one_fortran),
    Workload("row_normalize_fortran", row_normalize, row_normalize_torch, one_positive_fortran),
    # [LAYOUT] unseen workloads of the sixth wave
    Workload("sum_02_3d", sum_02_3d, sum_02_3d_torch, normal_3d_wide, "magnitude"),
    Workload("int32_mix", int32_mix, int32_mix_torch, one_int32),
    Workload("where_chain_f64", where_chain_f64, where_chain_f64_torch, one_normal_f64),
    Workload("col_row_hinge", col_row_hinge, col_row_hinge_torch, column_and_row),
    Workload("strided_cols", strided_cols, strided_cols_torch, one_normal),
    Workload("mixed_scale_rows", mixed_scale_rows, mixed_scale_rows_torch, mixed_f32_f64),
    Workload("tanh_fortran", tanh_fortran, tanh_fortran_torch, one_fortran),
    Workload("transpose_scale", transpose_scale, transpose_scale_torch, one_normal),
    # [CLIFF] unseen workloads of the seventh wave
    Workload("masked_mean_rows", masked_mean_rows, masked_mean_rows_torch, normal_and_mask),
    Workload("abs_diff_max", abs_diff_max, abs_diff_max_torch, two_normal),
    Workload("f16_roundtrip", f16_roundtrip, f16_roundtrip_torch, one_normal),
    Workload("cumsum_int64_rows", cumsum_int64_rows, cumsum_int64_rows_torch, one_int64),
    Workload("clip_rows", clip_rows, clip_rows_torch, matrix_and_row_bounds),
    Workload("weighted_col_sum", weighted_col_sum, weighted_col_sum_torch,
             matrix_and_column_weights, "magnitude"),
    Workload("transpose_3d_scale", transpose_3d_scale, transpose_3d_scale_torch, normal_3d),
    Workload("running_max_rows", running_max_rows, running_max_rows_torch, one_normal),
    Workload("top1_where", top1_where, top1_where_torch, one_normal),
    Workload("softplus", softplus, softplus_torch, one_normal),
    Workload("var0_ddof1_f64", var0_ddof1_f64, var0_ddof1_f64_torch, one_normal_f64),
    Workload("u8_center_channels", u8_center_channels, u8_center_channels_torch, one_image),
    # [VEC5] float16 (issue 9: float16 loops were scalar)
    Workload("f16_muladd", f16_muladd, f16_muladd_torch, two_normal_f16),
    Workload("f16_exp_rows_sum", f16_exp_rows_sum, f16_exp_rows_sum_torch, two_normal_f16,
             "magnitude"),
    Workload("f32_to_f16_scale", f32_to_f16_scale, f32_to_f16_scale_torch, one_normal),
    Workload("f16_exp", f16_exp, f16_exp_torch, one_normal_f16, "ulp"),  # [F16X]
    # [PERF9] unseen workloads of the sixteenth wave
    Workload("layernorm_transposed", layernorm, layernorm_torch, one_transposed),
    Workload("xent_logits", xent_logits, xent_logits_torch, normal_and_labels),
    Workload("one_hot_weighted", one_hot_weighted, one_hot_weighted_torch,
             labels_and_class_weights),
    Workload("nearest_1d", nearest_1d, nearest_1d_torch, two_vectors),
    Workload("outer_max_axis0", outer_max_axis0, outer_max_axis0_torch, two_vectors),
    Workload("cosine_sim", cosine_sim, cosine_sim_torch, two_embeddings),
    Workload("u8_brightness", u8_brightness, u8_brightness_torch, one_image),
    Workload("quantize_i8", quantize_i8, quantize_i8_torch, matrix_and_row_scales),
    Workload("dequant_i8_rows", dequant_i8_rows, dequant_i8_rows_torch, int8_and_row_scales),
    Workload("count_nonzero_axis0", count_nonzero_axis0, count_nonzero_axis0_torch, one_normal),
    Workload("f64_to_f32_chain", f64_to_f32_chain, f64_to_f32_chain_torch, one_normal_f64),
    Workload("gradient_rows", gradient_rows, gradient_rows_torch, one_normal),
    Workload("logaddexp_pair", logaddexp_pair, logaddexp_pair_torch, two_normal),
    Workload("norm_axis0", norm_axis0, norm_axis0_torch, one_normal, "magnitude"),
    Workload("triu_scale", triu_scale, triu_scale_torch, one_normal),
    Workload("ptp_rows", ptp_rows, ptp_rows_torch, one_normal),
    Workload("frac_mod", frac_mod, frac_mod_torch, one_normal),
    Workload("strided_minmax", strided_minmax, strided_minmax_torch, one_normal),
    # [PERF10] unseen workloads of the seventeenth wave
    Workload("rolling_mean_rows", rolling_mean_rows, rolling_mean_rows_torch, one_normal,
             "magnitude"),
    Workload("ema_rows", ema_rows, ema_rows_torch, one_normal, "magnitude"),
    Workload("histogram_bincount", histogram_bincount, histogram_bincount_torch, one_normal),
    Workload("unique_count_sort", unique_count_sort, unique_count_sort_torch, one_normal),
    Workload("sort_rows", sort_rows, sort_rows_torch, one_normal),
    Workload("argsort_rows", argsort_rows, argsort_rows_torch, one_normal),
    Workload("topk_rows", topk_rows, topk_rows_torch, one_normal),
    Workload("topk_sorted_rows", topk_sorted_rows, topk_rows_torch, one_normal),
    Workload("bottomk_rows", bottomk_rows, bottomk_rows_torch, one_normal),
    Workload("median_rows", median_rows, median_rows_torch, one_normal),
    Workload("searchsorted_grid", searchsorted_grid, searchsorted_grid_torch,
             sorted_grid_and_normal),
    Workload("bmm_4x4", batched_matmul, batched_matmul_torch, batched_4x4),
    Workload("bmm_8x8", batched_matmul, batched_matmul_torch, batched_8x8),
    Workload("gram_normalize", gram_normalize, gram_normalize_torch, tall_skinny),
    Workload("resize_bilinear2x", resize_bilinear2x, resize_bilinear2x_torch, half_image),
    Workload("laplacian_5pt", laplacian_5pt, laplacian_5pt_torch, one_normal),
    Workload("complex_abs_angle", complex_abs_angle, complex_abs_angle_torch, one_complex64),
    Workload("f16_rms_cols", f16_rms_cols, f16_rms_cols_torch, one_normal_f16, "magnitude"),
    Workload("cummax_i64_rows", cummax_i64_rows, cummax_i64_rows_torch, one_int64),
    Workload("mask_compact_mean", mask_compact_mean, mask_compact_mean_torch, one_normal,
             "magnitude"),
    Workload("diff_transposed", diff_transposed, diff_transposed_torch, one_normal),
    Workload("outer_count", outer_count, outer_count_torch, two_vectors),
    Workload("norm_axis0_fortran", norm_axis0, norm_axis0_torch, one_fortran, "magnitude"),
    # [PERF11] unseen workloads of the eighteenth wave
    Workload("pairwise_sqdist_3d", pairwise_sqdist_3d, pairwise_sqdist_3d_torch, two_point_sets),
    Workload("polyval5", polyval5, polyval5_torch, one_normal),
    Workload("conv1d_5tap", conv1d_5tap, conv1d_5tap_torch, one_normal),
    Workload("tril_rowsum", tril_rowsum, tril_rowsum_torch, one_normal, "magnitude"),
    Workload("rowdot_einsum", rowdot_einsum, rowdot_einsum_torch, two_normal, "magnitude"),
    Workload("second_diff_rows", second_diff_rows, second_diff_rows_torch, one_normal),
    Workload("select_piecewise", select_piecewise, select_piecewise_torch, one_normal),
    Workload("quantize_u8", quantize_u8, quantize_u8_torch, one_normal),
    Workload("i8_wrap_muladd", i8_wrap_muladd, i8_wrap_muladd_torch, two_int8),
    Workload("u8_absdiff", u8_absdiff, u8_absdiff_torch, two_uint8),
    Workload("any_all_bool", any_all_bool, any_all_bool_torch, one_normal),
    Workload("cummax_axis0", cummax_axis0, cummax_axis0_torch, one_normal),
    Workload("complex_conj_mul_real", complex_conj_mul_real, complex_conj_mul_real_torch,
             two_complex64),
    Workload("histogram_fixed", histogram_fixed, histogram_fixed_torch, one_normal, "magnitude"),
    Workload("col_l2_normalize", col_l2_normalize, col_l2_normalize_torch, one_normal),
    Workload("int_float_promote", int_float_promote, int_float_promote_torch, int32_and_normal),
    Workload("nansum_rows", nansum_rows, nansum_rows_torch, normal_with_nans, "magnitude"),
    Workload("nanmean_axis0", nanmean_axis0, nanmean_axis0_torch, normal_with_nans),
    Workload("flip_add", flip_add, flip_add_torch, one_normal),
    Workload("roll_diff", roll_diff, roll_diff_torch, one_normal),
    Workload("avgpool2x2", avgpool2x2, avgpool2x2_torch, one_normal),
    Workload("argmin_axis0", argmin_axis0, argmin_axis0_torch, one_normal),
    Workload("sum_triples", sum_triples, sum_triples_torch, rgb_and_weights),
    Workload("rgb_to_gray", rgb_to_gray, rgb_to_gray_torch, rgb_and_weights),
    Workload("sum_quads_rows", sum_quads_rows, sum_quads_rows_torch, one_normal),
    Workload("sum_f64_rows", sum_f64_rows, sum_f64_rows_torch, one_normal, "magnitude"),
)


# --- STREAM-style memory baselines (NumPy only) ----------------------------------------------


@dataclass(frozen=True)
class StreamKernel:
    """A STREAM kernel: ``bytes_per_element`` counts what STREAM counts (reads + writes)."""

    name: str
    fn: Callable[..., np.ndarray]
    arity: int
    bytes_per_element: int


TRIAD_SCALAR = np.float32(3.0)


def stream_copy(a: np.ndarray) -> np.ndarray:
    return a.copy()


def stream_triad(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + TRIAD_SCALAR * b


STREAM_KERNELS: tuple[StreamKernel, ...] = (
    StreamKernel("copy", stream_copy, 1, 2 * 4),
    StreamKernel("triad", stream_triad, 2, 3 * 4),
)
