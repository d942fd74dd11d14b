"""Random programs (DAGs of supported ops over broadcastable shapes) against NumPy.

A recipe is a list of steps over a pool of values (the inputs first). The same closure over the
recipe runs under NumPy and under stax.jit (fused and unfused).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import assert_matches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stax

DTYPES = ("bool", "int32", "int64", "float32", "float64")

UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": lambda x: -x if x.dtype != np.bool_ else ~x,
    "abs": np.abs,
    "tanh": np.tanh,
    "sin": np.sin,
    "sqrt_abs": lambda x: np.sqrt(np.abs(x)),
    "exp_tanh": lambda x: np.exp(np.tanh(x)),
    "floor": lambda x: np.floor(x) if x.dtype.kind == "f" else x,
    "sign": lambda x: np.sign(x) if x.dtype != np.bool_ else x,
    "isnan": np.isnan,
    "to_f32": lambda x: x.astype(np.float32),
    "to_i64": lambda x: x.astype(np.int64),
    "scale": lambda x: x * 0.5,
    "plus1": lambda x: x + 1,
}

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y if x.dtype != np.bool_ or y.dtype != np.bool_ else x ^ y,
    "mul": lambda x, y: x * y,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "safe_div": lambda x, y: x / (1 + np.abs(y)),
    "greater": lambda x, y: x > y,
    "where": lambda x, y: np.where(x > y, x, y),
}

REDUCE: dict[str, Callable[..., Any]] = {
    "sum": lambda x, axis, keep: x.sum(axis=axis, keepdims=keep),
    "max": lambda x, axis, keep: x.max(axis=axis, keepdims=keep),
    "min": lambda x, axis, keep: np.min(x, axis=axis, keepdims=keep),
    "mean": lambda x, axis, keep: x.mean(axis=axis, keepdims=keep),
    "any": lambda x, axis, keep: x.any(axis=axis, keepdims=keep),
}

Step = tuple[Any, ...]


def run_recipe(steps: list[Step], n_out: int, *inputs: Any) -> tuple[Any, ...]:
    pool = list(inputs)
    for step in steps:
        kind = step[0]
        if kind == "unary":
            pool.append(UNARY[step[1]](pool[step[2]]))
        elif kind == "binary":
            pool.append(BINARY[step[1]](pool[step[2]], pool[step[3]]))
        elif kind == "reduce":
            pool.append(REDUCE[step[1]](pool[step[2]], step[3], step[4]))
        elif kind == "transpose":
            pool.append(np.transpose(pool[step[1]]))
        elif kind == "slice":
            pool.append(pool[step[1]][..., ::-1])
    return tuple(pool[-n_out:])


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[Step], int, list[np.ndarray]]:
    ndim = draw(st.integers(1, 3))
    base = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    n_in = draw(st.integers(1, 3))
    inputs = []
    for k in range(n_in):
        # each input: a suffix of the base shape, some dims replaced by 1
        nd = draw(st.integers(1, ndim))
        shape = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else s
                      for s in base[ndim - nd:])
        dtype = draw(st.sampled_from(DTYPES))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)) + k)
        if dtype == "bool":
            arr = rng.random(shape) < 0.5
        elif dtype.startswith("int"):
            arr = rng.integers(-3, 4, size=shape).astype(dtype)
        else:
            arr = rng.uniform(-2, 2, size=shape).astype(dtype)
        inputs.append(arr)
    # simulate with NumPy to know shapes while drawing steps
    pool: list[np.ndarray] = [a.copy() for a in inputs]
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "transpose",
                                     "slice"]))
        i = draw(st.integers(0, len(pool) - 1))
        x = pool[i]
        if kind == "unary":
            step: Step = ("unary", draw(st.sampled_from(sorted(UNARY))), i)
        elif kind == "binary":
            partners = [j for j, y in enumerate(pool) if _broadcastable(x.shape, y.shape)]
            j = draw(st.sampled_from(partners))
            step = ("binary", draw(st.sampled_from(sorted(BINARY))), i, j)
        elif kind == "reduce":
            if x.ndim == 0:
                continue
            name = draw(st.sampled_from(sorted(REDUCE)))
            axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
            step = ("reduce", name, i, axis, draw(st.booleans()))
        elif kind == "transpose":
            step = ("transpose", i)
        else:
            if x.ndim == 0:
                continue
            step = ("slice", i)
        with np.errstate(all="ignore"):
            value = run_recipe([step], 1, *pool)[0]
        if np.asarray(value).dtype.name not in DTYPES:
            continue  # e.g. float16 from a bool: outside the supported dtypes
        pool.append(value)
        steps.append(step)
    n_out = draw(st.integers(1, min(2, len(pool))))
    return steps, n_out, inputs


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _tolerances(want: Any) -> tuple[float, float]:
    arr = np.asarray(want)
    if arr.dtype == np.float32:
        rtol = 1e-4
    elif arr.dtype == np.float64:
        rtol = 1e-9
    else:
        return 0.0, 0.0
    finite = np.abs(arr[np.isfinite(arr)])
    scale = float(finite.max()) if finite.size else 1.0
    return rtol, rtol * max(scale, 1.0) * 10


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_program(program: tuple[list[Step], int, list[np.ndarray]]) -> None:
    steps, n_out, inputs = program

    def fn(*args: Any) -> tuple[Any, ...]:
        return run_recipe(steps, n_out, *args)

    with np.errstate(all="ignore"):
        want = fn(*inputs)
    for fuse in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = stax.jit(fn, fuse=fuse)(*inputs)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            rtol, atol = _tolerances(w)
            assert_matches(g, w, rtol=rtol if rtol else None, atol=atol)
