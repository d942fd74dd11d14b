"""No silent scalar loops (issue 9, item 1): the generated C++ of a corpus of small programs
(every dtype, masks, casts, gathers, scans, argmax, var/std, fused column reductions,
transcendental functions) is compiled once more with g++'s vectorizer remarks; every innermost
loop Stax marked `omp simd` must be vectorized. Each program is also checked against NumPy."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.backends.cpu.cpp import HEADER
from stax.backends.cpu.vecreport import (
    LoopReport,
    innermost_loops,
    remarks_available,
    vector_report,
)
from stax.runtime.compiler import isa_level

# g++'s vectorizer remarks (-fopt-info): the tests that read them skip with another compiler
needs_gcc = pytest.mark.skipif(not remarks_available(), reason="needs g++ (-fopt-info remarks)")

R, C = 37, 70  # not multiples of any vector width: loops have tails


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def f32(*shape: int) -> np.ndarray:
    return _rng().standard_normal(shape or (R, C)).astype(np.float32)


def f64(*shape: int) -> np.ndarray:
    return _rng().standard_normal(shape or (R, C))


def i32(*shape: int, lo: int = -50, hi: int = 50) -> np.ndarray:
    return _rng().integers(lo, hi, shape or (R, C)).astype(np.int32)


def i64(*shape: int, lo: int = -50, hi: int = 50) -> np.ndarray:
    return _rng().integers(lo, hi, shape or (R, C)).astype(np.int64)


def u8(*shape: int) -> np.ndarray:
    return _rng().integers(0, 256, shape or (R, C)).astype(np.uint8)


def ints(dtype: str, *shape: int, lo: int = -50, hi: int = 50) -> np.ndarray:
    return _rng().integers(lo, hi, shape or (R, C)).astype(dtype)


def f16(*shape: int) -> np.ndarray:
    return f32(*shape).astype(np.float16)


def f16_edges() -> np.ndarray:
    """float16 with NaN, +-inf, subnormals and values whose products overflow."""
    x = with_inf(f16() * np.float16(300))
    x[7, :4] = [6e-8, -6e-8, 3e-5, 65504]
    return x


def with_inf(x: np.ndarray) -> np.ndarray:
    x = with_nan(x)
    x[5, 9], x[6, 1] = np.inf, -np.inf
    return x


def fortran(x: np.ndarray) -> np.ndarray:
    return np.asfortranarray(x)


def probs() -> np.ndarray:
    p = _rng().random((R, C)) + 0.01
    return p / p.sum(1, keepdims=True)


def c128(*shape: int) -> np.ndarray:
    return f64(*shape) + 1j * f64(*shape)[::-1]


def mask(*shape: int) -> np.ndarray:
    return _rng().random(shape or (R, C)) < 0.4


def with_nan(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x[3, 5] = np.nan
    return x


def softmax(z: Any) -> Any:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def erf_like(x: Any) -> Any:
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    p = t * (0.2548296 + t * (-0.2844967 + t * (1.4214137 + t * (-1.4531521 + t * 1.0614054))))
    return np.sign(x) * (1.0 - p * np.exp(-x * x))


# name -> (function, argument builder)
CORPUS: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]] = {
    "add_f32": (lambda x, y: x + y, lambda: (f32(), f32())),
    "axpy_f64": (lambda x, y: 2.5 * x + y, lambda: (f64(), f64())),
    "mixed_f32_f64": (lambda x, y: x * y, lambda: (f32(), f64())),
    "mixed_i32_f32": (lambda a, x: a + x, lambda: (i32(), f32())),
    "mixed_i64_f32": (lambda a, x: a * x, lambda: (i64(), f32())),
    "int64_muladd": (lambda a, b: a * b + 7, lambda: (i64(), i64())),
    "int32_floordiv_const": (lambda a: (a // 7, a % -3), lambda: (i32(),)),
    "int32_floordiv_var": (lambda a, b: (a // b, a % b), lambda: (i32(), i32(lo=1, hi=9))),
    "int32_div_by_zero": (lambda a, b: a // b, lambda: (i32(), i32(lo=0, hi=3))),
    "cast_f32_i32": (lambda x: (x * 100).astype(np.int32), lambda: (f32(),)),
    "cast_f64_i64": (lambda x: (x * 1e6).astype(np.int64), lambda: (f64(),)),
    "cast_i32_f32": (lambda a: a.astype(np.float32) * 0.5, lambda: (i32(),)),
    "cast_f64_f32": (lambda x: x.astype(np.float32), lambda: (f64(),)),
    "cast_i64_i32": (lambda a: (a * 3).astype(np.int32), lambda: (i64(),)),
    "compare_to_bool": (lambda x: x > 0.5, lambda: (f32(),)),
    "where_boolmask": (lambda m, x: np.where(m, x, 0.0), lambda: (mask(), f32())),
    "where_cmp_leaky": (lambda x: np.where(x > 0, x, 0.01 * x), lambda: (f32(),)),
    "bool_logic": (lambda x, m: (x > 0) & m | ~m, lambda: (f32(), mask())),
    "bool_to_f32": (lambda m: m.astype(np.float32) * 3.0, lambda: (mask(),)),
    "bool_to_i64_sum": (lambda m, n: m.astype(np.int64) + n, lambda: (mask(), mask())),
    "clip_round": (lambda x: np.round(np.clip(x * 10, -3, 3)), lambda: (f32(),)),
    "maximum_nan": (lambda x, y: np.maximum(x, y), lambda: (with_nan(f32()), f32())),
    "exp_f32": (np.exp, lambda: (f32(),)),
    "log_f64": (lambda x: np.log(np.abs(x) + 1), lambda: (f64(),)),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + np.tanh(0.79788456 * (x + 0.044715 * x ** 3))),
                  lambda: (f32(),)),
    "sin_cos_f64": (lambda x: np.sin(x) + np.cos(x), lambda: (f64(),)),
    "sin_cos_f32": (lambda x: np.sin(x) * np.cos(x), lambda: (f32(),)),
    "pow_f32": (lambda x, y: np.abs(x) ** y, lambda: (f32(), f32())),
    "erf_like_f32": (erf_like, lambda: (f32(),)),
    "erf_like_f64": (erf_like, lambda: (f64(),)),
    "sign_i32": (lambda a: np.sign(a) * np.abs(a), lambda: (i32(),)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda: (f32(),)),
    "take_rows": (lambda x, idx: x[idx], lambda: (f32(), i64(25, lo=-R, hi=R))),
    "take_flat": (lambda x, idx: np.take(x, idx), lambda: (f32(), i64(300, lo=0, hi=R * C))),
    "bcast_row_col": (lambda x, r, c: x * r + c, lambda: (f32(), f32(C), f32(R, 1))),
    "transpose_add": (lambda x, y: x.T + y, lambda: (f32(C, R), f32())),
    "isnan_where": (lambda x: np.where(np.isnan(x), 0.0, x), lambda: (with_nan(f64()),)),
    "float_floordiv": (lambda x: (x // 0.7, x % 0.7), lambda: (f64(),)),
    "sum_last": (lambda x: x.sum(-1), lambda: (f32(),)),
    "sum_first": (lambda x: x.sum(0), lambda: (f32(),)),
    "sum_all": (lambda x: x.sum(), lambda: (f32(),)),
    "sum_axes02_3d": (lambda x: x.sum((0, 2)), lambda: (f32(5, 6, 40),)),
    "mean_last_f64": (lambda x: x.mean(-1), lambda: (f64(),)),
    "sum_last_i32": (lambda a: a.sum(-1), lambda: (i32(),)),
    "prod_last_f64": (lambda x: (x * 0.1 + 1).prod(-1), lambda: (f64(),)),
    "max_last": (lambda x: x.max(-1), lambda: (with_nan(f32()),)),
    "min_first_i64": (lambda a: a.min(0), lambda: (i64(),)),
    "argmax_last": (lambda x: x.argmax(-1), lambda: (with_nan(f32()),)),
    "argmin_last_i32": (lambda a: a.argmin(-1), lambda: (i32(lo=-3, hi=3),)),
    "argmax_first_f64": (lambda x: x.argmax(0), lambda: (f64(),)),
    # [H9] lanes with a NaN flag and vector combines: float64, an expression, small ints
    "argmin_last_f64_nan": (lambda x: x.argmin(-1), lambda: (with_nan(f64()),)),
    "argmax_expr_f32": (lambda x, y: (x * x - y).argmax(-1), lambda: (f32(), f32()[::-1])),
    "argmax_last_i64": (lambda a: a.argmax(-1), lambda: (i64(lo=-3, hi=3),)),
    "any_cmp_last": (lambda x: (x > 2).any(-1), lambda: (f32(),)),
    "all_bool_last": (lambda m: m.all(-1), lambda: (mask(),)),
    "count_pos_last": (lambda x: (x > 0).sum(-1), lambda: (f32(),)),
    "var_last": (lambda x: x.var(-1), lambda: (f32(),)),
    "std_first": (lambda x: x.std(0), lambda: (f32(),)),
    "var_mean_cols": (lambda x: (x.var(0), x.mean(0)), lambda: (f32(),)),
    "cumsum_last": (lambda x: np.cumsum(x, -1), lambda: (f32(),)),
    "cumsum_first_i64": (lambda a: np.cumsum(a, 0), lambda: (i64(),)),
    "softmax": (softmax, lambda: (f32(),)),
    "masked_softmax": (lambda x, m: softmax(np.where(m, x * 0.125, -1e9)),
                       lambda: (f32(), mask())),
    "layernorm": (lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(
        x.var(-1, keepdims=True) + 1e-5), lambda: (f32(),)),
    "col_normalize": (lambda x: x / x.sum(0), lambda: (f32(),)),
    "row_center_i32": (lambda a: a - a.mean(-1, keepdims=True), lambda: (i32(),)),
    # [E16] complex: the struct's arithmetic, hypot, selects and parts vectorize
    "complex_arith": (lambda z, w: z * w + z / w - 1j, lambda: (c128(), c128()[::-1])),
    "complex_mandel_step": (lambda z, c: np.where(np.abs(z) < 2, z * z + c, z),
                            lambda: (c128(), c128()[::-1])),
    "complex_parts": (lambda z: z.real * z.imag + np.abs(z) + np.conj(z), lambda: (c128(),)),
    "complex_sum_first": (lambda z: z.sum(0), lambda: (c128(),)),
    # [H9] the kernels of the cliff-hunt workloads (benchmarks/workloads.py)
    "sum_mid_3d": (lambda x: x.sum(1), lambda: (f32(4, 9, 40),)),
    "sum_axis0_transposed": (lambda x: x.T.sum(0), lambda: (f32(C, R),)),
    "logsumexp_axis0": (lambda x: x.max(0) + np.log(np.exp(x - x.max(0)).sum(0)),
                        lambda: (f32(),)),
    "std_rows_f64": (lambda x: x.std(1), lambda: (f64(),)),
    "image_normalize_u8": (lambda img, m, s: (img.astype(np.float32) / 255 - m) / s,
                           lambda: (u8(R, 23, 3), f32(3), np.abs(f32(3)) + 0.1)),
    "where_chain": (lambda x: np.where(x > 1, x, np.where(x < -1, -x, x * x)),
                    lambda: (f32(),)),
    "center_rows_fortran": (lambda x: x - x.mean(1, keepdims=True), lambda: (fortran(f32()),)),
    "l2_normalize_rows": (lambda x: x / np.sqrt((x * x).sum(1, keepdims=True)),
                          lambda: (f32(),)),
    "cross_entropy": (lambda p, lab: -np.log(p[np.arange(p.shape[0]), lab]),
                      lambda: (probs(), i64(R, lo=0, hi=C))),
    "softmax_axis0": (lambda x: np.exp(x - x.max(0)) / np.exp(x - x.max(0)).sum(0),
                      lambda: (f32(),)),
    "outer_product": (lambda a, b: a[:, None] * b[None, :], lambda: (f32(R), f32(C))),
    "cumsum_axis0_3d": (lambda x: np.cumsum(x, axis=0), lambda: (f32(6, 5, 40),)),
    "cosine_tail": (lambda d, a, b: d / (a[:, None] * b[None, :]),
                    lambda: (f32(), np.abs(f32(R)) + 0.5, np.abs(f32(C)) + 0.5)),
    "frac_positive_rows": (lambda x: (x > 0).mean(1), lambda: (f32(),)),
    # [FORD] row tiles: a row softmax / layernorm of Fortran-ordered and transposed inputs
    "softmax_rows_fortran": (softmax, lambda: (fortran(f32()),)),
    "softmax_rows_transposed_f64": (lambda x: softmax(x.T), lambda: (f64(C, R),)),
    "layernorm_rows_fortran_f64": (
        lambda x: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
        lambda: (fortran(f64()),)),
    # [VEC] issue 9 item 1: every dtype, masks, casts both ways, scans along each axis,
    # argmax/argmin along each axis, var/std with ddof, fused column reductions, math
    "i8_scale": (lambda a, x: a * x, lambda: (ints("int8"), f32())),
    "i8_widen_sum": (lambda a: a.astype(np.int64).sum(-1), lambda: (ints("int8"),)),
    "i16_muladd_wrap": (lambda a, b: a * b + a, lambda: (ints("int16", lo=-300, hi=300),
                                                         ints("int16", lo=-300, hi=300))),
    "u16_to_f64": (lambda a: a.astype(np.float64) / 65535,
                   lambda: (ints("uint16", lo=0, hi=65535),)),
    "u32_bits": (lambda a, b: (a ^ b) >> 3 | (a & 7),
                 lambda: (ints("uint32", lo=0, hi=2**31), ints("uint32", lo=0, hi=2**31))),
    "u64_add_max": (lambda a, b: np.maximum(a + b, a),
                    lambda: (ints("uint64", lo=0, hi=2**40), ints("uint64", lo=0, hi=99))),
    "u8_threshold": (lambda a: np.where(a > 128, a, 0), lambda: (u8(),)),
    "f16_add": (lambda x, y: x * y + x, lambda: (f16(), f16())),
    "f16_exp_f32": (lambda x: np.exp(x.astype(np.float32)), lambda: (f16(),)),
    "f32_to_f16": (lambda x: (x * 3).astype(np.float16), lambda: (f32(),)),
    # [VEC5] float16 held as bits (stax_half): loads, per-op roundings, casts and stores vectorize
    "f16_edges_muladd": (lambda x, y: x * y + x, lambda: (f16_edges(), f16_edges()[::-1])),
    "f16_rows_sum": (lambda x: (x * 2 + 1).sum(-1), lambda: (f16(),)),
    "f16_exp_plus_max": (lambda x: np.exp(x) + x.max(1, keepdims=True), lambda: (f16(),)),
    "f16_to_f64_T": (lambda x: x.T.astype(np.float64) * 2, lambda: (f16_edges(),)),
    "f64_to_f16_tiny": (lambda x: (x * 1e-6).astype(np.float16), lambda: (f64(),)),
    "f16_where_cmp": (lambda x, y: np.where(x > y, x, y * 2), lambda: (f16(), f16()[::-1])),
    "f32_to_u8_clip": (lambda x: np.clip(x * 80 + 128, 0, 255).astype(np.uint8),
                       lambda: (f32(),)),
    "f64_to_i16": (lambda x: (x * 100).astype(np.int16), lambda: (f64(),)),
    "i64_to_f64": (lambda a: a.astype(np.float64) * 0.25, lambda: (i64(),)),
    "u8_to_f32_scale": (lambda a: a * np.float32(1 / 255), lambda: (u8(),)),
    "bool_mul_mask": (lambda m, x: m * x, lambda: (mask(), f32())),
    "bool_mul_f64": (lambda x, y: (x > 0) * y + (y < 0) * x, lambda: (f64(), f64())),
    "where_mask_i32": (lambda a, m: np.where(m, a, -a), lambda: (i32(), mask())),
    "i64_floordiv_var": (lambda a, b: (a // b, a % b), lambda: (i64(), i64(lo=1, hi=9))),
    "u8_div_var": (lambda a, b: (a // b, a % b), lambda: (u8(), ints("uint8", lo=1, hi=9))),
    "i16_mod_var_bcast": (lambda a, b: a % b,
                          lambda: (ints("int16"), ints("int16", C, lo=1, hi=20))),
    "compare_eq_ne": (lambda a, b, x, y: (a == b) | (x != y),
                      lambda: (i32(lo=0, hi=3), i32(lo=0, hi=3)[::-1], f32(), f32()[::-1])),
    "compare_range_i64": (lambda a: (a >= -10) & (a < 10), lambda: (i64(),)),
    "isfinite_where": (lambda x: np.where(np.isfinite(x), x, 0.0), lambda: (with_inf(f32()),)),
    "isnan_count_rows": (lambda x: np.isnan(x).sum(-1), lambda: (with_nan(f64()),)),
    "sign_f32_nan": (np.sign, lambda: (with_nan(f32()),)),
    "sign_i64_mul": (lambda a, b: np.sign(a) * b, lambda: (i64(), i64())),
    "clip_i32": (lambda a: np.clip(a, -5, 5), lambda: (i32(),)),
    "round_decimals_f64": (lambda x: np.round(x * 50, 2), lambda: (f64(),)),
    "floor_ceil_trunc": (lambda x: np.floor(x) + np.ceil(x) * np.trunc(x), lambda: (f32(),)),
    "tanh_f64": (np.tanh, lambda: (f64(),)),
    "log1p_expm1": (lambda x: np.log1p(np.abs(x)) + np.expm1(x * 0.1), lambda: (f32(),)),
    "pow_const_f64": (lambda x: x ** 3 + np.sqrt(np.abs(x)) ** 1.5, lambda: (f64(),)),
    "softplus": (lambda x: np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))), lambda: (f32(),)),
    "cumprod_last_f64": (lambda x: np.cumprod(x * 0.1 + 1, -1), lambda: (f64(),)),
    "cumsum_first_f32": (lambda x: np.cumsum(x, 0), lambda: (f32(),)),
    "cummax_last": (np.maximum.accumulate, lambda: (with_nan(f32()),)),
    "cummax_first_f64": (lambda x: np.maximum.accumulate(x, 0), lambda: (f64(),)),
    "cummin_rows_i32": (lambda a: np.minimum.accumulate(a, 1), lambda: (i32(),)),
    "argmin_first_f32": (lambda x: x.argmin(0), lambda: (with_nan(f32()),)),
    "argmax_first_u8": (lambda a: a.argmax(0), lambda: (u8(),)),
    "argmax_rows_transposed": (lambda x: x.T.argmax(-1), lambda: (f32(),)),
    "argmax_f16_expr": (lambda x: (x * x).argmax(-1), lambda: (with_nan(f16()),)),
    "var_first_ddof1_f64": (lambda x: x.var(0, ddof=1), lambda: (f64(),)),
    "std_last_ddof1_f32": (lambda x: x.std(-1, ddof=1), lambda: (f32(),)),
    "var_last_i32": (lambda a: a.var(-1), lambda: (i32(),)),
    "col_zscore": (lambda x: (x - x.mean(0)) / x.std(0), lambda: (f32(),)),
    "weighted_col_sum": (lambda x, w: (x * w[:, None]).sum(0) / w.sum(),
                         lambda: (f32(), f32(R))),
    "col_range_f64": (lambda x: x.max(0) - x.min(0), lambda: (f64(),)),
    "col_norm_sqrt": (lambda x: np.sqrt((x * x).sum(0)) + 1, lambda: (f32(),)),
    "bcast_3d": (lambda x, y: x[:, None, :] * y[None, :, :] - 1, lambda: (f32(5, C), f32(6, C))),
    "transpose_mul_f64": (lambda x, y: x.T * y, lambda: (f64(C, R), f64())),
    "transpose_cast_i32_f64": (lambda a: a.T.astype(np.float64) + 1, lambda: (i32(C, R),)),
    "take_rows_f64_scale": (lambda x, idx, s: x[idx] * s,
                            lambda: (f64(), i64(40, lo=0, hi=R), f64(C))),
    "take_axis1_i32": (lambda a, idx: np.take(a, idx, axis=1),
                       lambda: (i32(), i64(20, lo=0, hi=C))),
    "triangles_f32": (lambda x: np.triu(x, 2) - np.tril(x) * 2, lambda: (f32(),)),  # [PERF9]
    "mod_pow2_f32": (lambda x: np.mod(x * 3, 1.0) + np.mod(x, -0.5), lambda: (f32(),)),  # [PERF9]
    "mod_pow2_f64": (lambda x: np.mod(x, 0.25), lambda: (f64(),)),  # [PERF9]
    # [PERF10] a 5-point stencil of slices; float16 squares summed down the columns in float32
    # (rows a multiple of the row jam: no remainder loop); 4x4 matrix stacks by einsum; a
    # branchless binary search (gathers in a pointwise loop: scalar, not marked); a gather at
    # clipped indices
    "laplacian_5pt": (lambda x: x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1]
                      - 4 * x[1:-1, 1:-1], lambda: (f32(),)),
    "f16_sq_cols_f32": (lambda x: np.sqrt(np.mean(np.square(x.astype(np.float32)), 0)),
                        lambda: (f16(40, C),)),
    "bmm_4x4_f32": (lambda a, b: np.einsum("bij,bjk->bik", a, b),
                    lambda: (f32(R, 4, 4), f32(R, 4, 4))),
    "searchsorted_f32": (lambda g, x: np.searchsorted(g, x, side="right"),
                         lambda: (np.sort(f32(50)), with_nan(f32()))),
    "gather_clipped_f64": (lambda x, i: x[np.clip(i, 0, R - 1)] * 2,
                           lambda: (f64(R), i64(lo=-9, hi=R + 9))),
}


def _run(name: str) -> str:
    """Compile and run one corpus program, check it against NumPy, return its C++."""
    fn, make = CORPUS[name]
    args = make()
    jitted = stax.jit(fn)
    with np.errstate(all="ignore"):
        want = fn(*args)
        got = jitted(*args)
    assert_matches(got, want, rtol=_rtol(want), atol=1e-6)
    return jitted.compile(*args).program.cpp


def _rtol(value: Any) -> float:
    """The tolerance of the least precise float among the results."""
    values = value if isinstance(value, tuple) else (value,)
    kinds = {np.asarray(v).dtype.name for v in values}
    return 2e-3 if "float16" in kinds else 2e-5 if "float32" in kinds else 1e-11


def _bundle(sources: dict[str, str]) -> str:
    """All programs' kernels in one translation unit (functions renamed apart), so that g++
    runs once for the whole corpus."""
    parts = [HEADER, "#include <vector>\n#include <algorithm>\n"]
    for k, (name, cpp) in enumerate(sources.items()):
        body = cpp[len(HEADER):].replace("#include <vector>\n#include <algorithm>\n", "")
        parts.append(f"// ---- {name}\n" + re.sub(r'extern "C" void (\w+)\(',
                                                     rf'extern "C" void p{k}_\1(', body))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def report() -> dict[str, list[LoopReport]]:
    sources = {name: _run(name) for name in CORPUS}
    names = list(sources)
    out: dict[str, list[LoopReport]] = {name: [] for name in names}
    for loop in vector_report(_bundle(sources), isa_level()):
        out[names[int(loop.function.split("_")[0][1:])]].append(loop)
    return out


def test_corpus_is_broad() -> None:
    assert len(CORPUS) >= 50


@needs_gcc
def test_every_marked_loop_is_vectorized(report: dict[str, list[LoopReport]]) -> None:
    if isa_level() != "avx512":  # [LEAD18] on AVX2, int64 <-> float conversions (AVX-512DQ)
        # and integer division by a run-time divisor stay scalar: the claim is AVX-512's
        pytest.skip(f"the corpus's claim is made at the avx512 level (this CPU: {isa_level()})")
    failures = [f"{name}: line {loop.line} `{loop.code}`: {loop.reason}"
                for name, loops in report.items() for loop in loops
                if loop.marked and not loop.vectorized]
    total = sum(len(loops) for loops in report.values())
    done = sum(loop.vectorized for loops in report.values() for loop in loops)
    print(f"\ninnermost loops vectorized: {done}/{total}; not marked and scalar:")
    for name, loops in report.items():
        for loop in loops:
            if not loop.vectorized:
                print(f"  {name}: `{loop.code}`: {loop.reason}")
    assert not failures, "\n".join(failures)


@needs_gcc
def test_hot_loops_are_marked(report: dict[str, list[LoopReport]]) -> None:
    """The constructs that used to leave whole programs scalar now get vector loops."""
    if isa_level() != "avx512":  # [LEAD18] (see test_every_marked_loop_is_vectorized)
        pytest.skip(f"the corpus's claim is made at the avx512 level (this CPU: {isa_level()})")
    for name in ("where_boolmask", "bool_logic", "bool_to_f32", "cast_f32_i32",
                 "int32_floordiv_var", "sin_cos_f64", "erf_like_f32", "masked_softmax",
                 "argmax_expr_f32", "take_rows",  # [CLIFF] a plain argmax: explicit vectors
                 "floor_ceil_trunc", "f32_to_u8_clip",  # [VEC] -fno-trapping-math, clamps
                 "f16_add", "f16_edges_muladd", "f16_exp_plus_max", "f32_to_f16",
                 "f16_to_f64_T",  # [VEC5] float16 as bits
                 "triangles_f32", "mod_pow2_f32", "mod_pow2_f64",  # [PERF9]
                 "laplacian_5pt", "f16_sq_cols_f32", "bmm_4x4_f32"):  # [PERF10]
        assert any(loop.vectorized for loop in report[name]), name


@needs_gcc
def test_explain_reports_each_loop() -> None:
    """[VEC] `stax.explain` lists every innermost loop: marked or not, vectorized or not, why;
    and the kernels whose loops Stax leaves unmarked, with the rule's reason."""
    x, h = f32(), f16()

    def f(x: Any) -> Any:
        return np.where(x > 0, np.exp(x), 0.0) + np.cumsum(x, -1)

    report = stax.explain(f, x)
    text = str(report).split("== Vectorization (innermost loops) ==\n")[1].split("\n\n==")[0]
    assert text == report.vectorization
    loops = vector_report(report.compilation.program.cpp, isa_level())
    assert len(loops) == len(innermost_loops(report.compilation.program.cpp)) >= 2
    assert text.splitlines()[0] == (f"{sum(lp.vectorized for lp in loops)} of {len(loops)} "
                                    "innermost loops vectorized; marked `omp simd` and left "
                                    "scalar by g++: 0")
    for loop in loops:
        state = "vectorized" if loop.vectorized else "SCALAR"
        assert f"line {loop.line} `{loop.code}`: " in text and f"{state}: {loop.reason}" in text
    assert any(lp.marked and lp.vectorized for lp in loops)  # the where/exp loop
    assert any(not lp.marked and not lp.vectorized for lp in loops)  # the scan's recurrence
    half = str(stax.explain(lambda h: h * h + h, h))  # [VEC5] float16 loops vectorize
    assert "rule vector_blocker" not in half and "omp simd, vectorized" in half
    assert "omp simd, SCALAR" not in half


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_clamped_cast(src: str) -> None:
    """[VEC] A float clipped into the integer type's range before astype tests only NaN
    (`stax_cast_clamped`); bounds that do not fit keep the full test. NumPy's values and its
    warning either way, for NaN, +-inf, huge values and both bound orders, every integer type."""
    x = (_rng().standard_normal(300) * 1e7).astype(src)
    x[[3, 7]], x[5], x[9] = np.nan, np.inf, -np.inf
    bounds = ((0, 255), (-300, 300), (-3e9, 3e9), (0, 2147483647), (-1e19, 1e19))
    dtypes = ("uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64")

    def casts(x: Any) -> Any:
        return tuple(np.clip(x * 1e3, lo, hi).astype(t) for t in dtypes for lo, hi in bounds) \
            + (np.maximum(np.minimum(x, 200.0), -9.0).astype(np.int8),)

    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        got = stax.jit(casts)(x)
    with np.errstate(invalid="ignore"):
        assert_matches(got, casts(x))
    fits = sum(lo >= (info := np.iinfo(np.int32 if np.dtype(t).itemsize <= 2 else t)).min
               and float(np.dtype(src).type(hi)) < info.max + 1.0
               for t in dtypes for lo, hi in bounds) + 1
    cpp = stax.jit(casts).compile(x).program.cpp[len(HEADER):]
    assert cpp.count("stax_cast_clamped<") == fits


def test_loop_parser_finds_innermost_loops() -> None:
    cpp = ('extern "C" void f(int* a) {\n'
           "    for (int i = 0; i < 4; i += 1) {\n"
           "        #pragma omp simd\n"
           "        for (int j = 0; j < 4; j += 1) {\n"
           "            a[j] = i;\n"
           "        }\n"
           "        for (int k = 0; k < 4; k += 1) { a[k] += 1; }\n"
           "    }\n"
           "}\n")
    loops = innermost_loops(cpp)
    assert [(loop.function, loop.line, loop.end, loop.marked) for loop in loops] == [
        ("f", 4, 6, True), ("f", 7, 7, False)]


# ---- [G9] forms: values hoisted out of the vector loop, transposed tiles by 8x8 blocks,
# ---- argmax lane positions as wide as the values; each checked against NumPy

def test_row_gather_wraps_each_index_once() -> None:
    take = stax.jit(lambda x, i: x[i] * 2.0)
    x = f32()
    idx = np.array([0, -1, R - 1, -R, 5, 5, -2])
    assert_matches(take(x, idx), x[idx] * 2.0)
    assert "stax_wrap_index" not in _inner_loop_lines(take.compile(x, idx).program.cpp)
    for bad in ([0, R], [-R - 1, 1]):
        with pytest.raises(IndexError):
            take(x, np.array(bad))
    take_t = stax.jit(lambda x, i: x.T[i] + 1.0)  # rows of a transposed view: strided loads
    assert_matches(take_t(x, idx % C), x.T[idx % C] + 1.0)


def _inner_loop_lines(cpp: str) -> str:
    """The text of every innermost loop of `cpp`."""
    lines = cpp.splitlines()
    return "\n".join("\n".join(lines[loop.line - 1:loop.end])
                     for loop in innermost_loops(cpp))


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "float64", "int16"])
def test_transposed_tiles(dtype: str) -> None:
    add = stax.jit(lambda x, y: x.T + y)
    # whole tiles (the 8x8 block copy for 4-byte types) and partial tiles at both edges
    for rows, cols in ((32, 512), (40, 300)):
        x = make_array((cols, rows), dtype, seed=1)
        y = make_array((rows, cols), dtype, seed=2)
        assert_matches(add(x, y), x.T + y)
    if np.dtype(dtype).itemsize == 4:
        assert "stax_transpose8x8_4" in add.compile(x, y).program.cpp
    big = make_array((2 * cols, rows + 3), dtype, seed=3)
    xs = big[::2, 1:rows + 1]  # a strided view: row stride of the transposed operand != rows
    assert_matches(add(xs, y), xs.T + y)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint16", "int64"])
def test_argmax_lane_positions(dtype: str) -> None:
    arg = stax.jit(lambda x: (x.argmax(-1), x.argmin(-1), x[:, :7].argmax(-1)))
    x = make_array((6, 203), dtype, seed=4, low=0, high=3)  # many ties: the first one wins
    if x.dtype.kind == "f":
        x[1, 50] = np.nan
        x[2, [7, 150]] = np.nan
        x[3] = np.inf
        x[4, 202] = -np.inf
    assert_matches(arg(x), (x.argmax(-1), x.argmin(-1), x[:, :7].argmax(-1)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exp_of_far_constants(dtype: str) -> None:
    """exp of an argument computed from a constant beyond libmvec's fast range (a masked
    softmax's -1e9) answers the 0/inf lanes by a select; every value stays NumPy's."""
    edges = [-1e9, -np.inf, -746.0, -745.1, -104.0, -103.9, -100.0, -87.5, -1.0, 0.0, 0.5,
             88.7, 88.73, 89.0, 709.7, 709.8, 1e9, np.inf, np.nan]
    x = np.array(edges * 3, dtype=dtype).reshape(3, -1)
    m = np.arange(x.size).reshape(x.shape) % 4 != 0

    def masked_exp(x: Any, m: Any) -> Any:
        return np.exp(np.where(m, x, -1e9))

    f = stax.jit(masked_exp)
    with np.errstate(all="ignore"):
        assert_matches(f(x, m), masked_exp(x, m))
        assert_matches(stax.jit(softmax)(np.where(m, x, -1e9)[:, 8:13]),
                       softmax(np.where(m, x, -1e9)[:, 8:13]))
    assert "stax_exp" in f.compile(x, m).program.cpp[len(HEADER):]
    assert "stax_exp" not in stax.jit(np.exp).compile(x).program.cpp[len(HEADER):]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_outer_reduction_blocks_with_rows(dtype: str) -> None:
    """[H9] A row reduction of a Fortran-ordered input fused with work over its rows: per
    block of rows the reductions (vector loads along the block), then each row's elements
    (in tiles when the output is C-ordered). Shapes with partial blocks and tiles, NaN."""
    def center(x: Any) -> Any:
        return x - x.mean(1, keepdims=True)

    def scale(x: Any, w: Any) -> Any:
        return x / np.sqrt((x * x).sum(1, keepdims=True)) * w

    f, g = stax.jit(center), stax.jit(scale)
    tol = {"rtol": 1e-5 if dtype == "float32" else 1e-12, "atol": 1e-6}  # sums in other orders
    for rows, cols in ((37, 70), (300, 41), (16, 256), (2, 3)):
        x = np.asfortranarray(make_array((rows, cols), dtype, seed=5))
        x[rows // 2, cols - 1] = np.nan
        w = make_array((cols,), dtype, seed=6)
        with np.errstate(all="ignore"):
            assert_matches(f(x), center(x), **tol)
            assert_matches(g(x, w), scale(x, w), **tol)
            assert_matches(f(x.T), center(x.T), **tol)  # C-ordered: rows of the transpose
    x = np.asfortranarray(make_array((300, 41), dtype, seed=5))
    plans = f.compile(x).program.plans
    assert any(p.form == "outer-reduction" and len(p.nodes) > 1 for p in plans)
    # [LAYOUT] the result is Fortran-ordered as NumPy's: written along the block, no tiles
    assert f(x).strides == center(x).strides and "tile0" not in f.compile(x).program.cpp

    def center_plus(x: Any, y: Any) -> Any:  # a C-ordered operand: a C-ordered result
        return x - x.mean(1, keepdims=True) + y

    h, y = stax.jit(center_plus), make_array((300, 41), dtype, seed=7)
    assert_matches(h(x, y), center_plus(x, y), **tol)
    assert h(x, y).flags.c_contiguous
    assert "tile0" in h.compile(x, y).program.cpp  # the C-ordered output written in tiles


@pytest.mark.parametrize("dtype", ["uint8", "float32", "float64", "int32"])
def test_short_rows_unrolled(dtype: str) -> None:
    """[H9] A short innermost loop (channels last, a per-channel operand) is unrolled inside
    the vector loop over the loop above it; NumPy's values at every shape, also reversed and
    transposed operands (where the plan keeps the innermost loop as the vector loop)."""
    def norm(img: Any, m: Any, s: Any) -> Any:
        return (img.astype(np.float32) / 255 - m) / s

    f = stax.jit(norm)
    for shape in ((37, 3), (5, 41, 3), (300, 4), (20, 8), (33, 2)):
        img = make_array(shape, dtype, seed=8)
        m = make_array(shape[-1:], "float32", seed=9)
        s = np.abs(make_array(shape[-1:], "float32", seed=10)) + np.float32(0.5)
        assert_matches(f(img, m, s), norm(img, m, s), rtol=1e-6)
        assert_matches(f(img[::-1, ::-1], m, s), norm(img[::-1, ::-1], m, s), rtol=1e-6)
    plans = stax.jit(norm, dynamic=False).compile(img, m, s).program.plans
    assert any(p.unroll == 2 for p in plans)
    t = make_array((3, 50), dtype, seed=11)
    assert_matches(f(t.T, m[:1], s[:1]), norm(t.T, m[:1], s[:1]), rtol=1e-6)
