"""`stax demo`: the seed's examples and common kernels, checked against NumPy and timed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import stax


def ex71(x: np.ndarray) -> np.ndarray:
    """Seed 000 Ex. 7.1: row normalize."""
    return x / x.sum(-1, keepdims=True)


def ex72(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Seed 000 Ex. 7.2: sum and max of exp."""
    e = np.exp(x)
    return e.sum(-1), e.max(-1)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def adam(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, lr: float, t: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b1, b2, eps = 0.9, 0.999, 1e-8
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    return p - lr * mhat / (np.sqrt(vhat) + eps), m, v


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable[..., Any]
    make_args: Callable[[np.random.Generator], tuple[Any, ...]]


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


PROGRAMS = (
    Program("Ex. 7.1  x / x.sum(-1, keepdims=True)  64x128", ex71,
            lambda r: (r.uniform(0.5, 1.5, (64, 128)).astype(np.float32),)),
    Program("Ex. 7.2  (exp(x).sum(-1), exp(x).max(-1))  64x128", ex72,
            lambda r: (_f32(r, 64, 128),)),
    Program("softmax  1024x1024", softmax, lambda r: (_f32(r, 1024, 1024),)),
    Program("layernorm  1024x1024", layernorm,
            lambda r: (_f32(r, 1024, 1024), _f32(r, 1024), _f32(r, 1024))),
    Program("GELU (tanh)  1024x1024", gelu, lambda r: (_f32(r, 1024, 1024),)),
    Program("Adam step  1M params", adam,
            lambda r: (_f32(r, 1 << 20), _f32(r, 1 << 20), _f32(r, 1 << 20),
                       np.abs(_f32(r, 1 << 20)), 1e-3, 7)),
)


def _median_time(fn: Callable[[], Any], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _max_error(got: Any, want: Any) -> float:
    if isinstance(want, tuple):
        return max(_max_error(g, w) for g, w in zip(got, want, strict=True))
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = np.maximum(np.abs(want), 1.0)
    return float(np.max(np.abs(got - want) / scale)) if want.size else 0.0


def run_demo() -> int:
    rng = np.random.default_rng(0)
    failures = 0
    rows = []
    for prog in PROGRAMS:
        args = prog.make_args(rng)
        report = stax.explain(prog.fn, *args)
        jitted = stax.jit(prog.fn)
        got = jitted(*args)
        want = prog.fn(*args)
        err = _max_error(got, want)
        ok = err < 1e-4
        failures += not ok
        t_np = _median_time(lambda p=prog, a=args: p.fn(*a))
        t_sx = _median_time(lambda j=jitted, a=args: j(*a))
        print(f"\n### {prog.name}")
        for g in report.schedule.kernels:
            print(f"  kernel  {g.describe()}")
        print(f"  check   {'PASS' if ok else 'FAIL'}  max relative error {err:.2e}")
        print(f"  time    numpy {t_np * 1e3:8.3f} ms   stax {t_sx * 1e3:8.3f} ms   "
              f"speedup {t_np / t_sx:5.2f}x   (compile {report.compilation.seconds:.2f} s)")
        rows.append((prog.name, ok, t_np / t_sx))
    print("\n### summary")
    for name, ok, speedup in rows:
        print(f"  {'PASS' if ok else 'FAIL'}  {speedup:6.2f}x vs numpy  {name}")
    geo = float(np.exp(np.mean([np.log(r[2]) for r in rows])))
    print(f"  {len(rows) - failures}/{len(rows)} programs match NumPy; "
          f"geometric-mean speedup {geo:.2f}x")
    return 1 if failures else 0
