"""Dump the C++ the CPU backend emits for a wide set of programs, without compiling any.

    python tools/dump_cpp.py OUT_DIR     # one OUT_DIR/<program>.cpp per program
    diff -r BEFORE_DIR AFTER_DIR         # a refactor of the emitter must change nothing

Programs: the corpus (tests/corpus), the shape-generic programs of tests/test_dynamic.py
(dynamic=True), and reductions / scans / tiles / outer blocks / argmax / complex / float16 /
integer / gather / strided / each forced form / loops compiled once per body. The source is
captured where the backend would build it (`CpuBackend.build`, loop drivers included), so
nothing is compiled; the planner's parallel crossover is fixed
(STAX_PARALLEL_MIN_NS), hashes are seeded (PYTHONHASHSEED=0), and the ISA and thread count are
given, so the text does not depend on the machine (gather terms are ordered by structure,
`stax.ir.expr.structural_key`, in every run). Programs with graph breaks dump their first
compiled segment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # a dump (imported, e.g. by tests/unit/test_ir_validate_dump.py:
    # the programs only)
    if os.environ.get("PYTHONHASHSEED") != "0":  # string hashes (set orders) fixed, so that
        os.environ["PYTHONHASHSEED"] = "0"  # two dumps compare line by line
        os.execv(sys.executable, [sys.executable, *sys.argv])
    os.environ.setdefault("STAX_PARALLEL_MIN_NS", "20000")  # before stax reads it

import numpy as np  # noqa: E402

import stax  # noqa: E402
import stax.api  # noqa: E402
from stax.backends.cpu import CpuBackend  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from corpus.programs import CASES  # noqa: E402


class Captured(BaseException):  # not an Exception: no fallback path may swallow it
    def __init__(self, source: str) -> None:
        self.source = source


def _capture(*args: Any) -> None:
    raise Captured(args[-2])  # (self,) source, isa


def extra_programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    """name -> (function, arguments, jit options)."""
    rng = np.random.default_rng(0)
    f64 = rng.standard_normal((300, 200))
    f32 = f64.astype(np.float32)
    big = rng.standard_normal(50_000)
    cols = rng.standard_normal((2000, 48)).astype(np.float32)
    sq = rng.standard_normal((256, 256))
    z = (rng.standard_normal(1000) + 1j * rng.standard_normal(1000)).astype(np.complex64)
    h = rng.standard_normal((64, 64)).astype(np.float16)
    i32 = rng.integers(-100, 100, (128, 64)).astype(np.int32)
    u8 = rng.integers(0, 255, (64, 64)).astype(np.uint8)
    idx = rng.integers(0, 300, 500)

    def jacobi_1d(a, steps):
        b = a.copy()
        for _ in range(steps):
            b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
            a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
        return a

    def row_loop(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = np.exp(x[i] - x[i].max())
        return out

    p: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {
        "sum_rows": (lambda x: x.sum(1), (f64,), {}),
        "sum_all_long": (lambda x: x.sum(), (big,), {}),
        "prod_max_min": (lambda x: (x.prod(0), x.max(1), x.min()), (f32,), {}),
        "any_all": (lambda x: ((x > 0).any(1), (x < 2).all(0)), (f64,), {}),
        "argmax_rows": (lambda x: (x.argmax(1), x.argmin(1)), (f32,), {}),
        "argmax_long": (lambda x: x.argmax(), (big,), {}),
        "argmax_f64_cols": (lambda x: x.argmax(0), (f64,), {}),
        "nan_max": (lambda x: np.max(np.where(x > 1, np.nan, x), axis=1), (f64,), {}),
        "mean_var": (lambda x: (x.mean(0), x.var(1)), (f64,), {}),
        "cumsum_rows": (lambda x: np.cumsum(x, axis=1), (f64,), {}),
        "cumsum_long": (lambda x: np.cumsum(x), (big,), {}),
        "cumprod_cols": (lambda x: np.cumprod(x, axis=0), (cols,), {}),
        "column_sums": (lambda x: x.sum(0), (cols,), {}),
        "column_softmax": (lambda x: np.exp(x) / np.exp(x).sum(0), (cols,), {}),
        "column_argmax": (lambda x: x.argmax(0), (cols,), {}),
        "transpose_add": (lambda x: x.T + x, (sq,), {}),
        "transpose_f32": (lambda x: x.T * 2 + x, (sq.astype(np.float32),), {}),
        "transpose_3d": (lambda x: x.transpose(0, 2, 1) + x,
                         (rng.standard_normal((4, 64, 64)),), {}),
        "softmax_f32": (lambda x: np.exp(x - x.max(1, keepdims=True)), (f32,), {}),
        "masked_softmax": (lambda x: np.exp(np.where(x > 0, x, -1e9)), (f32,), {}),
        "gelu_f32": (lambda x: 0.5 * x * (1 + np.tanh(0.79788 * (x + 0.044715 * x ** 3))),
                     (f32,), {}),
        "complex_arith": (lambda a, b: a * b + a / b, (z, z[::-1].copy()), {}),
        "complex_abs_sum": (lambda a: (np.abs(a), a.sum(), np.exp(a)), (z,), {}),
        "complex_cumsum": (lambda a: np.cumsum(a), (z,), {}),
        "float16_ops": (lambda x: (np.sqrt(np.abs(x)) + x * 2, x.sum(0)), (h,), {}),
        "float16_cast": (lambda x: x.astype(np.float32) + x.astype(np.uint32), (h,), {}),
        "int_division": (lambda x: (x // 7, x % 5, x // (x + 200)), (i32,), {}),
        "int_power": (lambda x: x ** 2 + x ** (x & 3), (i32,), {}),
        "uint8_image": (lambda x: np.clip(x.astype(np.int16) * 2 - 50, 0, 255).astype(np.uint8),
                        (u8,), {}),
        "gather_rows": (lambda x, i: x[i] * 2, (f64, idx), {}),
        "gather_mean": (lambda x, i: x[i].mean(1), (f64, idx), {}),
        "strided_input": (lambda x: np.sin(x) + 1, (f64[::2, ::3],), {}),
        "transposed_input": (lambda x: x * 3 + 1, (f64.T,), {}),
        "broadcast_outer": (lambda a, b: a[:, None] * b[None, :], (big[:300], big[:200]), {}),
        "zero_d": (lambda x: x * 2 + 1, (np.float64(3.0),), {}),
        "empty": (lambda x: np.exp(x) + 1, (np.ones((0, 5)),), {}),
        "where_select": (lambda x: np.where(x > 0, np.log(x), 0.0), (f64,), {}),
        "matmul_then_exp": (lambda a, b: np.exp(a @ b), (f64[:50, :50], f64[:50, :30]), {}),
        "form_scalar": (lambda x: np.exp(x) + x.sum(1, keepdims=True), (f32,),
                        {"form": "scalar"}),
        "form_vectorized": (lambda x: x.T + x, (sq,), {"form": "vectorized"}),
        "form_tiled": (lambda x: x.T + x, (sq,), {"form": "tiled"}),
        "form_outer_reduction": (lambda x: x.sum(0), (f64,), {"form": "outer-reduction"}),
        "isa_scalar": (lambda x: np.exp(x).sum(1), (f32,), {"isa": "scalar"}),
        "threads_1": (lambda x: np.exp(x).sum(1), (f32,), {"threads": 1}),
        "pool": (lambda x: np.exp(np.exp(x) + 1).sum() + (x * 2).sum(), (f64,), {"pool": True}),
        "no_fuse": (lambda x: np.exp(x).sum(1), (f64,), {"fuse": False}),
        "loops_jacobi_1d": (jacobi_1d, (big[:40].copy(), 25), {}),
        "loops_rows": (row_loop, (f64[:20].copy(),), {}),
    }
    return p


def dynamic_programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    from test_dynamic import column_stats, layernorm, softmax, transpose_add

    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 53))
    dyn = {"dynamic": True}
    return {
        "dynamic_softmax": (softmax, (x,), dyn),
        "dynamic_layernorm": (layernorm, (x, np.ones(53), np.zeros(53)), dyn),
        "dynamic_column_stats": (column_stats, (x,), dyn),
        "dynamic_transpose_add": (transpose_add, (rng.standard_normal((40, 40)),), dyn),
        "dynamic_softmax_f32": (softmax, (x.astype(np.float32),), dyn),
        "dynamic_vector": (lambda v: np.cumsum(v) + v.sum(), (rng.standard_normal(999),), dyn),
    }


def all_programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    out = {}
    for name, (fn, make_args) in sorted(CASES.items()):
        out[f"corpus_{name}"] = (fn, make_args(np.random.default_rng(sum(map(ord, name)))), {})
    out.update(dynamic_programs())
    out.update(extra_programs())
    return out


def emitted(fn: Callable[..., Any], args: tuple[Any, ...], options: dict[str, Any]) -> str:
    """The first module the backend is asked to build for fn(*args), or why there is none."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) and a.flags.c_contiguous else a
                 for a in args)
    try:
        stax.jit(fn, **{"threads": 4, "isa": "avx2", **options})(*args)
    except Captured as c:
        return c.source
    except Exception as e:  # noqa: BLE001 - recorded in the dump, compared too
        return f"// no module: {type(e).__name__}: {e}\n"
    return "// no module: nothing compiled (NumPy only)\n"


def main(out_dir: str) -> None:
    import warnings

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    CpuBackend.build = _capture  # type: ignore[method-assign]
    stax.api.isa_level = lambda forced=None: forced or "avx2"  # type: ignore[attr-defined]
    programs = all_programs()
    modules = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (fn, args, options) in programs.items():
            text = emitted(fn, args, options)
            modules += not text.startswith("// no module")
            (out / f"{name}.cpp").write_text(text)
    print(f"{len(programs)} programs, {modules} modules emitted, in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
