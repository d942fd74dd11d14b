"""Wide differential fuzzing: random programs over every dtype, input layout and many ops.

`tests/test_random_programs.py` draws DAGs of a few ops over contiguous bool/int32/int64/float
inputs. This file widens it: all integer widths (signed and unsigned, extremes included so that
arithmetic wraps), float16, complex64/128, Python int/float/complex scalars (NEP 50), inputs
that are transposed, reversed, step-sliced, broadcast (stride 0), Fortran-ordered, 0-d, empty
or with size-1 axes; steps: elementwise ufuncs (integer //, %, <<, >>, power, division by 0),
comparisons, where, clip, casts, reductions (axis tuples, negative axes, keepdims, dtype=),
scans, basic/integer/boolean indexing, views, concatenate/stack, in-place updates and `out=`,
matmul/dot. Each program runs under NumPy and under `stax.jit` on fresh copies of the same
inputs; results, mutated inputs and exception classes must agree.

A step NumPy rejects ends its program: Stax must then raise an exception of the same builtin
class. Stax raising `NotImplementedError` where NumPy succeeds is an unsupported program, not a
wrong result (allowed).

The committed test is small and derandomized. A campaign (outside the suite):

    STAX_FUZZ_EXAMPLES=2000 STAX_FUZZ_LOG=/tmp/fuzz.jsonl \\
        pytest tests/test_random_programs_wide.py --hypothesis-seed=7 -q

runs without shrinking and appends every disagreement to the log instead of failing.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import assert_matches
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_random_programs import _broadcastable

import stax

DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
LAYOUTS = ("c", "c", "f", "T", "rev", "step", "bcast")

# ----------------------------------------------------------------------------- inputs

InputDesc = tuple[Any, ...]  # ("array", dtype, shape, layout, seed) | ("scalar", value)


def _values(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Small values with occasional extremes (integer limits; NaN, inf, -0.0, large floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = 0 if dt.kind == "u" else -4
        arr = rng.integers(lo, 5, size=shape).astype(dt)
        extremes = np.array([info.min, info.max, info.min + 1, info.max - 1], dtype=dt)
        pick = rng.random(shape) < 0.15
        arr[pick] = rng.choice(extremes, size=int(pick.sum()))
        return arr
    real = rng.uniform(-3, 3, size=shape)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e4, -7e4, 0.5])
    pick = rng.random(shape) < 0.12
    real[pick] = rng.choice(special, size=int(pick.sum()))
    if dt.kind == "c":
        imag = rng.uniform(-3, 3, size=shape)
        return (real + 1j * imag).astype(dt)
    with np.errstate(over="ignore"):
        return real.astype(dt)


Values = Callable[[tuple[int, ...], str, np.random.Generator], np.ndarray]


def build_input(desc: InputDesc, values: Values = _values) -> Any:
    """A fresh input from its description (the same values and memory layout every time)."""
    if desc[0] == "scalar":
        return desc[1]
    arr = _layout(desc, values)
    return arr if isinstance(arr, np.ndarray) else np.array(arr)  # 0-d: an array, not a scalar


def _layout(desc: InputDesc, values: Values) -> Any:
    _, dtype, shape, layout, seed = desc
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    if layout == "f":
        return np.asfortranarray(values(shape, dtype, rng))
    if layout == "T":
        return values(shape[::-1], dtype, rng).T
    if layout == "rev":
        return values(shape, dtype, rng)[(slice(None, None, -1),) * ndim]
    if layout == "step":
        base = values(tuple(2 * s + 1 for s in shape), dtype, rng)
        return base[tuple(slice(1, 2 * s + 1, 2) for s in shape)]
    if layout == "bcast" and ndim:
        return np.broadcast_to(values((1,) + shape[1:], dtype, rng), shape)
    return values(shape, dtype, rng)


# ----------------------------------------------------------------------------- steps

def _neg(x: Any) -> Any:
    return ~x if x.dtype == np.bool_ else -x


UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": _neg,
    "abs": np.abs,
    "positive": np.positive,
    "square": np.square,
    "invert": np.invert,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "tanh": np.tanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "rint": np.rint,
    "trunc": np.trunc,
    "sign": np.sign,
    "isnan": np.isnan,
    "isfinite": np.isfinite,
    "logical_not": np.logical_not,
    "real": np.real,
    "copy": np.copy,
    "expm1": np.expm1,
    "log1p": np.log1p,
    "cbrt": np.cbrt,
    "cos": np.cos,
    "arccos": np.arccos,
    "isinf": np.isinf,
    "signbit": np.signbit,
    "reciprocal": np.reciprocal,
    "conj": np.conjugate,
    "round1": lambda x: np.round(x, 1),
    "round_neg": lambda x: np.round(x, -1),
}

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "truediv": lambda x, y: x / y,
    "floordiv": lambda x, y: x // y,
    "mod": lambda x, y: x % y,
    "pow": lambda x, y: x ** y,
    "lshift": lambda x, y: x << y,
    "rshift": lambda x, y: x >> y,
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "arctan2": np.arctan2,
    "hypot": np.hypot,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "logical_and": np.logical_and,
    "logical_xor": np.logical_xor,
    "fmod": np.fmod,
    "copysign": np.copysign,
    "heaviside": np.heaviside,
    "logaddexp": np.logaddexp,
    "float_power": np.float_power,
    "divmod": lambda x, y: np.divmod(x, y)[1],
}

SCALARS: tuple[Any, ...] = (0, 1, 2, 3, -1, -3, 7, 127, 200, 255, 300, -129, 2**31, 2**40,
                            0.5, -1.5, 2.0, 0.0, -0.0, 1e10, float("nan"), float("inf"),
                            1j, 2 - 0.5j, True, False)

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any",
              "all")
REDUCE_DTYPES = (None, None, None, "float64", "float32", "int64", "int32", "complex128")
SCANS: dict[str, Callable[[Any, int], Any]] = {
    "cumsum": lambda x, a: np.cumsum(x, axis=a),
    "cumprod": lambda x, a: np.cumprod(x, axis=a),
    "max_acc": lambda x, a: np.maximum.accumulate(x, axis=a),
    "min_acc": lambda x, a: np.minimum.accumulate(x, axis=a),
    "cumsum_f64": lambda x, a: x.cumsum(a, dtype=np.float64),
}
INPLACE = ("+=", "-=", "*=", "//=", "%=", "|=", "<<=", "=")

Step = tuple[Any, ...]


def _reduce(x: Any, name: str, axis: Any, keep: bool, dtype: str | None) -> Any:
    kwargs: dict[str, Any] = {"axis": axis}
    if name in ("argmax", "argmin"):
        if keep:
            kwargs["keepdims"] = True
        return getattr(np, name)(x, **kwargs)
    kwargs["keepdims"] = keep
    if dtype is not None and name in ("sum", "prod", "mean", "var", "std"):
        kwargs["dtype"] = dtype
    return getattr(np, name)(x, **kwargs)


def _view(x: Any, kind: str, arg: Any) -> Any:
    if kind == "T":
        return x.T
    if kind == "transpose":
        return np.transpose(x, arg)
    if kind == "ravel":
        return x.ravel()
    if kind == "reshape":
        return x.reshape(arg)
    if kind == "flip":
        return x[..., ::-1]
    if kind == "newaxis":
        return x[None]
    if kind == "squeeze":
        return np.squeeze(x)
    return np.swapaxes(x, *arg)


def _inplace(x: Any, op: str, y: Any, key: Any) -> Any:
    target = x if key is None else x[key]
    if op == "=":
        x[key if key is not None else ...] = y
        return x
    if op == "+=":
        target += y
    elif op == "-=":
        target -= y
    elif op == "*=":
        target *= y
    elif op == "//=":
        target //= y
    elif op == "%=":
        target %= y
    elif op == "|=":
        target |= y
    else:
        target <<= y
    if key is not None:
        x[key] = target
    return x


def apply_step(pool: list[Any], step: Step) -> Any:
    """The value one step appends to the pool (in-place steps also mutate a pool value)."""
    kind = step[0]
    if kind == "unary":
        return UNARY[step[1]](pool[step[2]])
    if kind == "binary":
        return BINARY[step[1]](pool[step[2]], pool[step[3]])
    if kind == "scalar":
        _, name, i, value, left = step
        return BINARY[name](value, pool[i]) if left else BINARY[name](pool[i], value)
    if kind == "where":
        _, c, i, j = step
        return np.where(pool[c] != 0, pool[i], pool[j] if isinstance(j, int) else j[0])
    if kind == "clip":
        return np.clip(pool[step[1]], step[2], step[3])
    if kind == "astype":
        return pool[step[1]].astype(step[2])
    if kind == "reduce":
        _, name, i, axis, keep, dtype = step
        return _reduce(pool[i], name, axis, keep, dtype)
    if kind == "scan":
        return SCANS[step[1]](pool[step[2]], step[3])
    if kind == "index":
        return pool[step[1]][step[2]]
    if kind == "take":
        _, i, axis, idx = step
        return pool[i][(slice(None),) * axis + (np.array(idx, dtype=np.int64),)]
    if kind == "mask":
        _, i, j = step
        return pool[i][pool[j] > 0]
    if kind == "view":
        return _view(pool[step[2]], step[1], step[3])
    if kind == "concat":
        _, i, j, axis = step
        return np.concatenate([pool[i], pool[j]], axis=axis)
    if kind == "stack":
        _, i, j, axis = step
        return np.stack([pool[i], pool[j]], axis=axis)
    if kind == "inplace":
        _, op, i, j, key = step
        return _inplace(pool[i], op, pool[j], key)
    if kind == "out":
        _, name, i, j, k = step
        ufunc = {"add": np.add, "mul": np.multiply, "maximum": np.maximum}[name]
        return ufunc(pool[i], pool[j], out=pool[k])
    if kind == "matmul":
        return pool[step[1]] @ pool[step[2]]
    if kind == "dot":
        return np.dot(pool[step[1]], pool[step[2]])
    raise AssertionError(kind)


def run_recipe(steps: list[Step], n_out: int, *inputs: Any) -> tuple[Any, ...]:
    pool = list(inputs)
    for step in steps:
        pool.append(apply_step(pool, step))
    return tuple(pool[-n_out:])


# ----------------------------------------------------------------------------- drawing

def _is_array(v: Any) -> bool:
    """An ndarray or a NumPy scalar (not a Python scalar)."""
    return isinstance(v, (np.ndarray, np.generic))


def _shape_draw(draw: st.DrawFn, ndim: int) -> tuple[int, ...]:
    sizes = (0, 1, 1, 2, 3, 3, 4, 5, 7, 17, 33) if ndim < 3 else (0, 1, 1, 2, 3, 4, 5)
    return tuple(draw(st.sampled_from(sizes)) for _ in range(ndim))


def _axis_draw(draw: st.DrawFn, ndim: int, tuples: bool) -> Any:
    if ndim == 0:
        return None
    choices = [st.none(), st.integers(-ndim, ndim - 1)]
    if tuples and ndim >= 2:
        choices.append(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                                unique=True).map(lambda ax: tuple(a - ndim for a in ax)
                                                 if len(ax) % 2 else tuple(ax)))
    return draw(st.one_of(*choices))


def _basic_key(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    key: list[Any] = []
    for n in shape:
        pick = draw(st.integers(0, 5))
        if pick == 0 and n > 0:
            key.append(draw(st.integers(-n, n - 1)))
        elif pick == 1:
            key.append(None)
            key.append(slice(None))
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.sampled_from((None, 1, 2, -1, -2, 3)))
            key.append(slice(start, stop, step))
    return tuple(key)


def _reshape_target(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    size = int(np.prod(shape))
    options = [(-1,), shape + (1,), (1,) + shape]
    if len(shape) >= 2:
        options.append((-1,) + shape[2:])
    if size and size % 2 == 0:
        options.append((2, -1))
    return draw(st.sampled_from(options))


def _draw_step(draw: st.DrawFn, pool: list[Any]) -> Step | None:
    kind = draw(st.sampled_from(
        ("unary", "binary", "binary", "scalar", "scalar", "where", "clip", "astype",
         "reduce", "reduce", "scan", "index", "take", "mask", "view", "view", "concat",
         "stack", "inplace", "out", "matmul", "dot")))
    i = draw(st.integers(0, len(pool) - 1))
    x = pool[i]
    if not _is_array(x) and kind != "binary":
        # a Python scalar argument: only as an operand beside an array (Python's own arithmetic
        # on two Python scalars, `0.25 // 0` raising, big ints, is outside Stax's semantics:
        # a scalar argument is traced as a NumPy value)
        return None
    arrays = [j for j, v in enumerate(pool) if _is_array(v)]
    if kind in ("inplace", "out") and not isinstance(x, np.ndarray):
        return None  # NumPy scalars are immutable
    if kind == "unary":
        return ("unary", draw(st.sampled_from(sorted(UNARY))), i)
    if kind == "binary":
        partners = [j for j, y in enumerate(pool) if _broadcastable(np.shape(x), np.shape(y))
                    and (_is_array(x) or _is_array(y))]
        return ("binary", draw(st.sampled_from(sorted(BINARY))), i, draw(st.sampled_from(partners)))
    if kind == "scalar":
        return ("scalar", draw(st.sampled_from(sorted(BINARY))), i,
                draw(st.sampled_from(SCALARS)), draw(st.booleans()))
    if kind == "where":
        partners = [j for j in arrays if _broadcastable(x.shape, pool[j].shape)]
        c = draw(st.sampled_from(partners))
        other: Any = draw(st.one_of(st.sampled_from(partners),
                                    st.sampled_from(SCALARS[:8]).map(lambda v: (v,))))
        return ("where", c, i, other)
    if kind == "clip":
        lo = draw(st.sampled_from((None, -1, 0, 1, -0.5, 2)))
        hi = draw(st.sampled_from((None, 2, 3, 100, 1.5)))
        if lo is None and hi is None:
            hi = 2
        return ("clip", i, lo, hi)
    if kind == "astype":
        return ("astype", i, draw(st.sampled_from(DTYPES)))
    if kind == "reduce":
        name = draw(st.sampled_from(REDUCTIONS))
        axis = _axis_draw(draw, x.ndim, tuples=name not in ("argmax", "argmin"))
        return ("reduce", name, i, axis, draw(st.booleans()),
                draw(st.sampled_from(REDUCE_DTYPES)))
    if kind == "scan":
        if x.ndim == 0:
            return None
        return ("scan", draw(st.sampled_from(sorted(SCANS))), i,
                draw(st.integers(-x.ndim, x.ndim - 1)))
    if kind == "index":
        return ("index", i, _basic_key(draw, x.shape))
    if kind == "take":
        if x.ndim == 0:
            return None
        axis = draw(st.integers(0, x.ndim - 1))
        n = x.shape[axis]
        idx = draw(st.lists(st.integers(-n - (n == 0), max(n - 1, 0)), min_size=0, max_size=4))
        return ("take", i, axis, tuple(idx))
    if kind == "mask":
        partners = [j for j in arrays if pool[j].shape == x.shape[:pool[j].ndim]
                    and pool[j].ndim]
        if not partners:
            return None
        return ("mask", i, draw(st.sampled_from(partners)))
    if kind == "view":
        vkind = draw(st.sampled_from(("T", "transpose", "ravel", "reshape", "flip",
                                      "newaxis", "squeeze", "swapaxes")))
        arg: Any = None
        if vkind == "transpose":
            arg = tuple(draw(st.permutations(range(x.ndim))))
        elif vkind == "reshape":
            arg = _reshape_target(draw, x.shape)
        elif vkind == "swapaxes":
            if x.ndim == 0:
                return None
            arg = (draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.integers(0, x.ndim - 1)))
        elif vkind == "flip" and x.ndim == 0:
            return None
        return ("view", vkind, i, arg)
    if kind in ("concat", "stack"):
        same = [j for j in arrays if pool[j].ndim == x.ndim]
        j = draw(st.sampled_from(same))
        axis = draw(st.integers(-x.ndim - (kind == "stack"), max(x.ndim - (kind == "concat"), 0)))
        return (kind, i, j, axis)
    if kind == "inplace":
        key = None if draw(st.booleans()) else _basic_key(draw, x.shape)
        target = x if key is None else x[key]
        op = draw(st.sampled_from(INPLACE))
        fits = [j for j in arrays if _broadcastable(target.shape, pool[j].shape)
                and np.broadcast_shapes(target.shape, pool[j].shape) == target.shape
                and (op == "=" or np.can_cast(pool[j].dtype, x.dtype, "same_kind"))]
        j = draw(st.sampled_from(fits or arrays))
        return ("inplace", op, i, j, key)
    if kind == "out":
        partners = [j for j in arrays if _broadcastable(x.shape, pool[j].shape)]
        outs = [k for k in arrays if isinstance(pool[k], np.ndarray)]
        return ("out", draw(st.sampled_from(("add", "mul", "maximum"))), i,
                draw(st.sampled_from(partners)), draw(st.sampled_from(outs)))
    inner = [j for j in arrays if x.ndim and pool[j].ndim
             and x.shape[-1] == pool[j].shape[-2 if pool[j].ndim > 1 else 0]]
    return (kind, i, draw(st.sampled_from(inner or arrays)))


Program = tuple[list[InputDesc], list[Step], int]


def grow(draw: st.DrawFn, pool: list[Any], most: int,
         draw_step: Callable[[st.DrawFn, list[Any]], Step | None],
         apply: Callable[[list[Any], Step], Any], largest: int) -> tuple[list[Step], bool]:
    """(up to `most` steps drawn over `pool`, each appending its value to it, whether the last
    is one NumPy rejects (then the program's result: an error program))."""
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, most))):
        step = draw_step(draw, pool)
        if step is None:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with np.errstate(all="ignore"):
                    value = apply(pool, step)
        except Exception:  # noqa: BLE001 - NumPy rejects it: keep some as error programs
            if draw(st.integers(0, 3)) == 0:
                steps.append(step)
                return steps, True
            continue
        if isinstance(value, np.ndarray) and value.size > largest:
            continue
        pool.append(value)
        steps.append(step)
    return steps, False


@st.composite
def programs(draw: st.DrawFn) -> Program:
    ndim = draw(st.integers(0, 3))
    base = _shape_draw(draw, ndim)
    descs: list[InputDesc] = []
    for k in range(draw(st.integers(1, 3))):
        if k and draw(st.integers(0, 5)) == 0:
            descs.append(("scalar", draw(st.sampled_from((3, -2, 0.25, 1.5 - 2j, True, 100)))))
            continue
        nd = draw(st.integers(0, ndim))
        shape = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in base[ndim - nd:])
        descs.append(("array", draw(st.sampled_from(DTYPES)), shape,
                      draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16))))
    pool = [build_input(d) for d in descs]
    steps, failed = grow(draw, pool, 8, _draw_step, apply_step, 4096)
    if failed:
        return descs, steps, 1
    if not steps:
        steps.append(("unary", "copy", 0) if isinstance(pool[0], np.ndarray)
                     else ("scalar", "add", 0, 1, False))
    return descs, steps, draw(st.integers(1, min(2, len(steps))))


# ----------------------------------------------------------------------------- checking

RTOL = {"float16": 1e-2, "float32": 1e-4, "complex64": 1e-4, "float64": 1e-9,
        "complex128": 1e-9}
# Builtin exception classes whose agreement is checked (NumPy's own subclasses are private).
EXCEPTIONS = (IndexError, ValueError, TypeError, OverflowError, ZeroDivisionError,
              FloatingPointError)


def _tolerances(want: Any, floor: float) -> tuple[float | None, float]:
    """rtol and atol for a result: its dtype's, at least `floor` (the loosest precision the
    program computed in: a float32 sine summed as complex128 is float32-accurate)."""
    arr = np.asarray(want)
    if arr.dtype.name not in RTOL:
        return None, 0.0
    rtol = max(RTOL[arr.dtype.name], floor)
    finite = np.abs(arr[np.isfinite(arr)])
    scale = float(finite.max()) if finite.size else 1.0
    return rtol, rtol * max(scale, 1.0) * 10


def precision_floor(descs: list[InputDesc], steps: list[Step]) -> float:
    """The loosest relative precision a program computes in (its inputs' dtypes and those its
    casts and reductions ask for)."""
    computed = [d[1] for d in descs if d[0] == "array"] + [
        step[-1] for step in steps if step[0] in ("astype", "reduce") and step[-1]]
    return max(RTOL.get(np.dtype(dt).name, 0.0) for dt in computed)


def _run(fn: Callable[..., Any], descs: list[InputDesc], values: Values = _values
         ) -> tuple[Any, list[Any]]:
    """(results or the exception raised, the inputs after the call)."""
    inputs = [build_input(d, values) for d in descs]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                return fn(*inputs), inputs
    except Exception as exc:  # noqa: BLE001 - compared with NumPy's
        return exc, inputs


OPTIONS: tuple[dict[str, Any], ...] = ({}, {"fuse": False}, {"dynamic": True})


def _reseeded(descs: list[InputDesc]) -> list[InputDesc]:
    """The same inputs (shapes, dtypes, layouts) with other values: a second call."""
    return [d[:4] + (d[4] + 1,) if d[0] == "array" else d for d in descs]


def compare(program: Program, options: dict[str, Any]) -> tuple[str, str | None]:
    """(outcome, why stax.jit(program, **options) differs from NumPy or None when it agrees)
    over two calls of one jitted function (the second with other values); outcome is "raised"
    (both raised), "unsupported" (stax raised NotImplementedError) or "ran"."""
    descs, steps, n_out = program

    def fn(*args: Any) -> tuple[Any, ...]:
        return run_recipe(steps, n_out, *args)

    jitted = stax.jit(fn, **options)
    floor = precision_floor(descs, steps)
    outcome, why = "ran", None
    for call, inputs in enumerate((descs, _reseeded(descs))):
        outcome, why = _compare_call(_run(fn, inputs), _run(jitted, inputs), floor)
        if why is not None:
            return outcome, f"call {call + 1}: {why}"
    return outcome, why


def _compare_call(numpy_run: tuple[Any, list[Any]], stax_run: tuple[Any, list[Any]],
                  floor: float) -> tuple[str, str | None]:
    (want, want_inputs), (got, got_inputs) = numpy_run, stax_run
    if isinstance(want, Exception):
        classes = [c for c in EXCEPTIONS if isinstance(want, c)]
        if isinstance(got, Exception) and any(isinstance(got, c) for c in classes):
            return "raised", None
        return "raised", f"NumPy raised {want!r}; stax gave {got!r}"
    if isinstance(got, NotImplementedError):
        return "unsupported", None  # not a wrong result
    if isinstance(got, Exception):
        return "ran", f"stax raised {got!r}; NumPy gave {want!r}"
    pairs = [(g, w) for g, w in zip((*got, *got_inputs), (*want, *want_inputs), strict=True)
             if isinstance(w, (np.ndarray, np.generic)) or isinstance(g, np.ndarray)]
    # a result computed from Python scalars alone is a Python scalar in NumPy's run
    pairs += [(np.asarray(g), np.asarray(w)) for g, w in zip(got, want, strict=True)
              if not isinstance(w, (np.ndarray, np.generic)) and not isinstance(g, np.ndarray)]
    try:
        for g, w in pairs:
            rtol, atol = _tolerances(w, floor)
            assert_matches(g, w, rtol=rtol, atol=atol)
    except (AssertionError, ValueError, TypeError) as exc:
        return "ran", f"results differ: {exc}\nNumPy: {want!r}\nstax: {got!r}"
    return "ran", None


_CAMPAIGN = int(os.environ.get("STAX_FUZZ_EXAMPLES", "0"))
_LOG = os.environ.get("STAX_FUZZ_LOG")
_SETTINGS = settings(
    max_examples=_CAMPAIGN or 80, deadline=None, derandomize=not _CAMPAIGN,
    phases=(Phase.generate,) if _LOG else tuple(Phase),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])


@_SETTINGS
@given(programs(), st.sampled_from(OPTIONS))
def test_random_program_wide(program: Program, options: dict[str, Any]) -> None:
    outcome, why = compare(program, options)
    if _LOG:
        with open(_LOG, "a") as log:
            log.write(json.dumps({"program": repr(program), "options": repr(options),
                                  "outcome": outcome, "why": why}) + "\n")
        return
    assert why is None, f"{program!r} (options {options}): {why}"
