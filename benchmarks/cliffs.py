"""Cliff hunt (issue 9, thirteenth wave): workloads unlike the 65 of workloads.py, timed as run.py.

    python benchmarks/cliffs.py [--sizes 2048x2048,256x1024] [--repeat 5] [--threads 1]
                                [--clock cpu] [--only name,...]

Each workload is a NumPy function and a PyTorch twin with the same arithmetic (the function
itself where its code runs on both). NumPy, stax.jit
and torch.compile run interleaved in one process (run.py's ``time_round_robin``: medians after
a warm-up round); every output is checked against NumPy's first. Compiles happen once per
implementation (no cold/warm split: this script looks for slow kernels, not slow compiles);
``TORCHINDUCTOR_CACHE_DIR`` is kept between runs (``--inductor-cache``) to save compile time.
Printed: per workload and size the milliseconds and the ratios stax/numpy and stax/torch,
sorted worst first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # as run.py: before torch loads libgomp
from run import (  # noqa: E402
    REPO_ROOT,
    SEED,
    as_arrays,
    describe_error,
    mismatch,
    parse_sizes,
    render_table,
    size_name,
    time_round_robin,
)
from workloads import Arrays, Workload, _normal, normal_3d, one_normal, two_normal  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


# --- input makers ----------------------------------------------------------------------------


def points(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """``rows`` points in 4-D: the pairwise output is rows x rows."""
    return (_normal(rng, rows, 4),)


def normal_and_mask(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), rng.random((rows, cols)) < 0.7


def three_shapes(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows), _normal(rng, rows, cols), _normal(rng, cols)


def normal_f64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.standard_normal((rows, cols)),)


def hash_keys(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.integers(0, 1 << 31, (rows, cols), dtype=np.int64),)


def image_f32(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    """An H x W x 3 float32 image of about rows*cols elements, values around [0, 1]."""
    width = max(cols // 3, 1)
    return (rng.random((rows, width, 3), dtype=np.float32) * np.float32(1.2) - np.float32(0.1),)


def normal_and_indices(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), rng.integers(0, rows, rows)


def near_one(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (np.float32(1) + np.float32(1e-3) * _normal(rng, rows, cols),)


def transposed(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (_normal(rng, cols, rows).T,)


def matrix_vector_bias(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), _normal(rng, cols), _normal(rng, rows)


def f32_and_f64(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return _normal(rng, rows, cols), rng.standard_normal((rows, cols))


def even_rows(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (_normal(rng, rows + rows % 2, cols),)


def int16_samples(rng: np.random.Generator, rows: int, cols: int) -> Arrays:
    return (rng.integers(-(1 << 15), 1 << 15, (rows, cols), dtype=np.int16),)


# --- workloads: NumPy -------------------------------------------------------------------------


def pairwise_sqdist(p):
    return ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)


def masked_argmax_rows(x, mask):
    return np.argmax(np.where(mask, x, -np.inf), axis=1)


def softmax_mid_3d(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mean_var_02_3d(x):
    return x.mean(axis=(0, 2)), x.var(axis=(0, 2))


def normalize_cols(x):
    return x / np.sqrt((x * x).sum(axis=0))


def diff_rows(x):
    return np.diff(x, axis=1)


def diff_cols(x):
    return np.diff(x, axis=0)


def where_3shapes(c, x, y):
    return np.where(c[:, None] > 0, x, y)


def chain10_f64(x):
    y = x * 1.5 + 0.25
    y = y * y - x
    y = np.abs(y) + 1.0
    y = np.sqrt(y) * 0.5
    y = y - x * 0.125
    return np.maximum(y, 0.1) / (1.0 + x * x)


def int64_hash(x):
    h = (x ^ (x >> 13)) * 0x5BD1E995
    return h ^ (h >> 15)


def any_all_axis0(x):
    return (x > 2).any(axis=0), (x < 1).all(axis=0)


def image_to_u8(img):
    return np.clip(img * 255, 0, 255).astype(np.uint8)


def gather_rowsum(x, idx):
    return x[idx].sum(axis=1)


def cumprod_rows(x):
    return np.cumprod(x, axis=1)


def expnorm_axis0_t(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def matvec_tanh(a, v, b):
    return np.tanh(a @ v + b)


def strided_slice_reduce(x):
    s = x[::2, 1::3]
    return s.sum(axis=1), s.max(axis=0)


def f32_f64_rowsum(x, y):
    return (x * y + x).sum(axis=1)


def rowdot_einsum(a, b):
    return np.einsum("ij,ij->i", a, b)


def horner_f32(x):
    c = [np.float32(v) for v in (0.5, -1.25, 0.75, 2.0, -0.3, 0.01, 0.2, -0.05)]
    y = c[0]
    for coef in c[1:]:
        y = y * x + coef
    return y


def act_mix(x):
    a = np.abs(x)
    return 1 / (1 + np.exp(-x)) * np.tanh(x) + np.log1p(a) - np.expm1(-a)


def minmax_argmin_axis0(x):
    return x.min(axis=0), x.max(axis=0), x.argmin(axis=0)


def glu_halves(x):
    half = x.shape[1] // 2
    return x[:, :half] / (1 + np.exp(-x[:, half:]))


def group_norm(x):
    g = x.reshape(x.shape[0], 8, -1)
    m = g.mean(axis=2, keepdims=True)
    v = ((g - m) ** 2).mean(axis=2, keepdims=True)
    return ((g - m) / np.sqrt(v + 1e-5)).reshape(x.shape)


def maxpool_1x4(x):
    return x.reshape(x.shape[0], -1, 4).max(axis=2)


def stencil5(x):
    return 4 * x[1:-1, 1:-1] - x[:-2, 1:-1] - x[2:, 1:-1] - x[1:-1, :-2] - x[1:-1, 2:]


def avgpool_2x2(x):
    return (x[::2, ::2] + x[1::2, ::2] + x[::2, 1::2] + x[1::2, 1::2]) * 0.25


def count_positive_rows(x):
    return np.count_nonzero(x > 0, axis=1)


def hypot_atan2(x, y):
    return np.hypot(x, y), np.arctan2(y, x)


def roll_sub(x):
    return np.roll(x, 1, axis=1) - x


def relu_sq_mean(x):
    return (np.maximum(x, 0) ** 2).mean(axis=1)


def int16_to_f32(x):
    return x.astype(np.float32) * np.float32(1 / 32768) - np.float32(0.5)


def rowsum_f64_acc(x):
    return x.sum(axis=1, dtype=np.float64)


# --- workloads: PyTorch twins -----------------------------------------------------------------


def masked_argmax_rows_t(x, mask):
    return torch.argmax(torch.where(mask, x, -torch.inf), dim=1)


def softmax_mid_3d_t(x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


def mean_var_02_3d_t(x):
    m = x.mean(dim=(0, 2))
    return m, ((x - m[None, :, None]) ** 2).mean(dim=(0, 2))


def normalize_cols_t(x):
    return x / torch.sqrt((x * x).sum(dim=0))


def diff_rows_t(x):
    return torch.diff(x, dim=1)


def diff_cols_t(x):
    return torch.diff(x, dim=0)


def where_3shapes_t(c, x, y):
    return torch.where(c[:, None] > 0, x, y)


def chain10_f64_t(x):
    y = x * 1.5 + 0.25
    y = y * y - x
    y = torch.abs(y) + 1.0
    y = torch.sqrt(y) * 0.5
    y = y - x * 0.125
    return torch.clamp(y, min=0.1) / (1.0 + x * x)


def any_all_axis0_t(x):
    return (x > 2).any(dim=0), (x < 1).all(dim=0)


def image_to_u8_t(img):
    return torch.clamp(img * 255, 0, 255).to(torch.uint8)


def gather_rowsum_t(x, idx):
    return x[idx].sum(dim=1)


def cumprod_rows_t(x):
    return torch.cumprod(x, dim=1)


def expnorm_axis0_t_t(x):
    e = torch.exp(x - x.amax(dim=0))
    return e / e.sum(dim=0)


def matvec_tanh_t(a, v, b):
    return torch.tanh(a @ v + b)


def strided_slice_reduce_t(x):
    s = x[::2, 1::3]
    return s.sum(dim=1), s.amax(dim=0)


def f32_f64_rowsum_t(x, y):
    return (x * y + x).sum(dim=1)


def rowdot_einsum_t(a, b):
    return torch.einsum("ij,ij->i", a, b)


def act_mix_t(x):
    a = torch.abs(x)
    return torch.sigmoid(x) * torch.tanh(x) + torch.log1p(a) - torch.expm1(-a)


def minmax_argmin_axis0_t(x):
    return x.amin(dim=0), x.amax(dim=0), x.argmin(dim=0)


def glu_halves_t(x):
    half = x.shape[1] // 2
    return x[:, :half] / (1 + torch.exp(-x[:, half:]))


def group_norm_t(x):
    g = x.reshape(x.shape[0], 8, -1)
    m = g.mean(dim=2, keepdim=True)
    v = ((g - m) ** 2).mean(dim=2, keepdim=True)
    return ((g - m) / torch.sqrt(v + 1e-5)).reshape(x.shape)


def maxpool_1x4_t(x):
    return x.reshape(x.shape[0], -1, 4).amax(dim=2)


def count_positive_rows_t(x):
    return (x > 0).sum(dim=1)


def hypot_atan2_t(x, y):
    return torch.hypot(x, y), torch.atan2(y, x)


def roll_sub_t(x):
    return torch.roll(x, 1, dims=1) - x


def relu_sq_mean_t(x):
    return (torch.clamp(x, min=0) ** 2).mean(dim=1)


def int16_to_f32_t(x):
    return x.to(torch.float32) * (1 / 32768) - 0.5


def rowsum_f64_acc_t(x):
    return x.sum(dim=1, dtype=torch.float64)


CLIFFS: tuple[Workload, ...] = (
    Workload("pairwise_sqdist", pairwise_sqdist, pairwise_sqdist, points),
    Workload("masked_argmax_rows", masked_argmax_rows, masked_argmax_rows_t, normal_and_mask),
    Workload("softmax_mid_3d", softmax_mid_3d, softmax_mid_3d_t, normal_3d),
    Workload("mean_var_02_3d", mean_var_02_3d, mean_var_02_3d_t, normal_3d, "magnitude"),
    Workload("normalize_cols", normalize_cols, normalize_cols_t, one_normal),
    Workload("diff_rows", diff_rows, diff_rows_t, one_normal),
    Workload("diff_cols", diff_cols, diff_cols_t, one_normal),
    Workload("where_3shapes", where_3shapes, where_3shapes_t, three_shapes),
    Workload("chain10_f64", chain10_f64, chain10_f64_t, normal_f64),
    Workload("int64_hash", int64_hash, int64_hash, hash_keys),
    Workload("any_all_axis0", any_all_axis0, any_all_axis0_t, one_normal),
    Workload("image_to_u8", image_to_u8, image_to_u8_t, image_f32),
    Workload("gather_rowsum", gather_rowsum, gather_rowsum_t, normal_and_indices, "magnitude"),
    Workload("cumprod_rows", cumprod_rows, cumprod_rows_t, near_one),
    Workload("expnorm_axis0_t", expnorm_axis0_t, expnorm_axis0_t_t, transposed),
    Workload("matvec_tanh", matvec_tanh, matvec_tanh_t, matrix_vector_bias),
    Workload("strided_slice_reduce", strided_slice_reduce, strided_slice_reduce_t, one_normal,
             "magnitude"),
    Workload("f32_f64_rowsum", f32_f64_rowsum, f32_f64_rowsum_t, f32_and_f64, "magnitude"),
    Workload("rowdot_einsum", rowdot_einsum, rowdot_einsum_t, two_normal, "magnitude"),
    Workload("horner_f32", horner_f32, horner_f32, one_normal),
    Workload("act_mix", act_mix, act_mix_t, one_normal),
    Workload("minmax_argmin_axis0", minmax_argmin_axis0, minmax_argmin_axis0_t, one_normal),
    Workload("glu_halves", glu_halves, glu_halves_t, one_normal),
    Workload("group_norm", group_norm, group_norm_t, one_normal),
    Workload("maxpool_1x4", maxpool_1x4, maxpool_1x4_t, one_normal),
    Workload("stencil5", stencil5, stencil5, one_normal),
    Workload("avgpool_2x2", avgpool_2x2, avgpool_2x2, even_rows),
    Workload("count_positive_rows", count_positive_rows, count_positive_rows_t, one_normal),
    Workload("hypot_atan2", hypot_atan2, hypot_atan2_t, two_normal),
    Workload("roll_sub", roll_sub, roll_sub_t, one_normal),
    Workload("relu_sq_mean", relu_sq_mean, relu_sq_mean_t, one_normal),
    Workload("int16_to_f32", int16_to_f32, int16_to_f32_t, int16_samples),
    Workload("rowsum_f64_acc", rowsum_f64_acc, rowsum_f64_acc_t, one_normal, "magnitude"),
)


# --- running ---------------------------------------------------------------------------------


def run_one(stax: Any, workload: Workload, shape: tuple[int, int], repeat: int,
            clock: Callable[[], float]) -> tuple[dict[str, float], dict[str, str]]:
    """Median seconds per implementation and the problems (errors, mismatches) of the others."""
    inputs = workload.make_inputs(np.random.default_rng(SEED), *shape)
    reference = as_arrays(workload.numpy_fn(*inputs))
    calls: dict[str, Callable[[], Any]] = {"numpy": lambda: workload.numpy_fn(*inputs)}
    problems: dict[str, str] = {}
    peers = {"stax": (lambda: stax.jit(workload.numpy_fn), inputs)}
    if torch is not None:
        torch._dynamo.reset()
        tensors = tuple(torch.from_numpy(a) for a in inputs)  # views keep their strides
        peers["torch"] = (lambda: torch.compile(workload.torch_fn, dynamic=False), tensors)
    for name, (make, args) in peers.items():
        try:
            fn = make()
            why = mismatch(reference, fn(*args), workload.tolerance)
        except Exception as exc:
            why = f"error {describe_error(exc)}"
        if why is None:
            calls[name] = lambda fn=fn, args=args: fn(*args)
        else:
            problems[name] = why
    return time_round_robin(calls, repeat, clock), problems


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes("2048x2048,256x1024"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--inductor-cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "stax-cliffs-inductor")
    args = parser.parse_args(argv)
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu times the calling thread only: it needs --threads 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(args.inductor_cache)
    sys.path.insert(0, str(REPO_ROOT))
    import stax

    if torch is not None:
        torch.set_num_threads(args.threads)
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    chosen = set(args.only.split(",")) if args.only else None
    load_before = os.getloadavg()
    rows = []
    for shape in args.sizes:
        for workload in CLIFFS:
            if chosen is not None and workload.name not in chosen:
                continue
            print(f"{workload.name} {size_name(shape)}...", file=sys.stderr, flush=True)
            seconds, problems = run_one(stax, workload, shape, args.repeat, clock)
            for impl, why in problems.items():
                print(f"  {impl}: {why}", file=sys.stderr)
            stax_s = seconds.get("stax")
            ratios = [stax_s / seconds[o] if stax_s and o in seconds else None
                      for o in ("numpy", "torch")]
            rows.append((workload.name, size_name(shape), seconds, ratios))
    rows.sort(key=lambda r: -max((x for x in r[3] if x is not None), default=0.0))
    table = [[name, size, *(f"{s[i] * 1e3:.3f}" if i in s else "-"
                           for i in ("numpy", "stax", "torch")),
              *(f"{r:.2f}" if r is not None else "-" for r in ratios)]
             for name, size, s, ratios in rows]
    print(f"load average before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.threads} thread(s), "
          f"{args.clock} clock, {args.repeat} rounds")
    print(render_table(["workload", "size", "numpy ms", "stax ms", "torch ms", "stax/numpy",
                        "stax/torch"], table, markdown=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
