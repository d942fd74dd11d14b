"""[FUZZ, s15] Random programs over the constructs the last waves changed in the lowering:
reshape/ravel/transpose/broadcast_to/repeat/tile of fused values, reductions along any axis
(keepdims, negative axes) feeding elementwise ops, argmax/argmin (ties, NaN, rows of length
0/1/odd/longer than a 2 KiB chunk), setitem through views (slices, negative steps, ravel of a
fused value), values used twice or not at all (gather checks), in-place ops, every dtype,
strided/transposed/Fortran/0-d/empty inputs, NaN/inf.

Each program runs under NumPy and under `stax.jit` on fresh copies of the same inputs (two calls,
the second with other values); results (values NaN-aware and exact for integers, dtype, shape,
ndarray vs NumPy scalar), the arguments after the call and the memory results share with the
arguments must agree. A campaign (outside the suite):

    STAX_FUZZ_EXAMPLES=3000 STAX_FUZZ_LOG=/tmp/fuzz15.jsonl pytest -n 0 -o addopts="" \\
        tests/test_fuzz_s15.py -k random --hypothesis-seed=3 -q

runs without shrinking and appends every disagreement to the log instead of failing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import assert_matches
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_random_programs import _broadcastable
from test_random_programs_wide import (
    DTYPES,
    LAYOUTS,
    InputDesc,
    Step,
    _basic_key,
    _compare_call,
    _reseeded,
    _run,
    _values,
    apply_step,
    build_input,
    grow,
    precision_floor,
)
from test_random_programs_wide import _draw_step as wide_step

import stax

# ----------------------------------------------------------------------------- inputs

def _ties(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Half the inputs: few distinct values (ties for argmax/argmin), some NaN in float rows;
    the others the wide fuzzer's values (extremes, NaN, inf, -0.0)."""
    if rng.random() < 0.5:
        return _values(shape, dtype, rng)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.3
    arr = rng.integers(0, 3, size=shape).astype(dt)
    if dt.kind in "fc":
        arr[rng.random(shape) < 0.02] = np.nan
    return arr


# ----------------------------------------------------------------------------- steps

FUSED: dict[str, Callable[[Any], Any]] = {
    "mul2": lambda x: x * 2,
    "add1": lambda x: x + 1,
    "exp": np.exp,
    "sin": np.sin,
    "sq": np.square,
    "neg_abs": lambda x: -np.abs(x),
}
SHAPERS = ("ravel", "reshape", "T", "transpose", "bcast", "repeat", "tile", "flipT")


def _shaper(x: Any, kind: str, arg: Any) -> Any:
    if kind == "ravel":
        return x.ravel()
    if kind == "reshape":
        return x.reshape(arg)
    if kind == "T":
        return x.T
    if kind == "transpose":
        return np.transpose(x, arg)
    if kind == "bcast":
        return np.broadcast_to(x, arg)
    if kind == "repeat":
        return np.repeat(x, arg[0], axis=arg[1])
    if kind == "tile":
        return np.tile(x, arg)
    return x[::-1].T


def _setitem(x: Any, view: str, key: Any, value: Any) -> Any:
    """x (a fresh fused copy) written through a view of it, then returned."""
    y = x * 1 if x.dtype != np.bool_ and x.ndim else x.copy()
    target = y.ravel() if view == "ravel" else y.T if view == "T" else y
    target[key] = value
    return y


def apply(pool: list[Any], step: Step) -> Any:
    kind = step[0]
    if kind == "fused":
        return FUSED[step[1]](pool[step[2]])
    if kind == "shape":
        return _shaper(pool[step[2]], step[1], step[3])
    if kind == "center":  # a reduction with keepdims feeding elementwise work
        _, name, i, axis = step
        x = pool[i]
        return x - getattr(np, name)(x, axis=axis, keepdims=True)
    if kind == "arg":
        _, name, i, axis, keep = step
        return getattr(np, name)(pool[i], axis=axis, keepdims=keep)
    if kind == "set":
        _, i, view, key, value = step
        return _setitem(pool[i], view, key, pool[value[1]] if isinstance(value, tuple) else value)
    if kind == "twice":
        x = pool[step[1]]
        return x * x + x
    return apply_step(pool, step)


def run_program(steps: list[Step], outs: tuple[int, ...], *inputs: Any) -> tuple[Any, ...]:
    pool = list(inputs)
    for step in steps:
        pool.append(apply(pool, step))
    return tuple(pool[k] for k in outs)


# ----------------------------------------------------------------------------- drawing

def _reshape_target(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    size = int(np.prod(shape))
    options = [(-1,), shape[::-1] if size else (-1,), shape + (1,)]
    if len(shape) >= 2:
        options.append((shape[0] * shape[1],) + shape[2:])
    for d in (2, 3, 5):
        if size and size % d == 0:
            options += [(d, -1), (-1, d)]
    return draw(st.sampled_from(options))


def _shape_arg(draw: st.DrawFn, kind: str, x: Any) -> Any:
    if kind == "reshape":
        return _reshape_target(draw, x.shape)
    if kind == "transpose":
        return tuple(draw(st.permutations(range(x.ndim))))
    if kind == "bcast":
        shape = tuple(draw(st.sampled_from((n, 3))) if n == 1 else n for n in x.shape)
        return (draw(st.sampled_from((1, 2, 3))),) + shape
    if kind == "repeat":
        axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1))) if x.ndim else None
        return draw(st.sampled_from((0, 1, 2, 3))), axis
    if kind == "tile":
        return tuple(draw(st.sampled_from((1, 2, 3))) for _ in range(draw(st.integers(1, 3))))
    return None


def _setitem_draw(draw: st.DrawFn, pool: list[Any], i: int) -> Step | None:
    x = pool[i]
    view = draw(st.sampled_from(("ravel", "T", "plain")))
    target_shape = (x.size,) if view == "ravel" else x.shape[::-1] if view == "T" else x.shape
    if not target_shape:
        return ("set", i, "plain", (), 7)
    key = _basic_key(draw, target_shape)
    sub = np.empty(target_shape)[key].shape
    fits = [j for j, v in enumerate(pool) if isinstance(v, np.ndarray) and
            _broadcastable(sub, v.shape) and np.broadcast_shapes(sub, v.shape) == sub]
    value: Any = ("pool", draw(st.sampled_from(fits))) if fits and draw(st.booleans()) else \
        draw(st.sampled_from((7, -1, 0.5, True)))
    return ("set", i, view, key, value)


def _draw_step(draw: st.DrawFn, pool: list[Any]) -> Step | None:
    kind = draw(st.sampled_from(("fused", "fused", "shape", "shape", "shape", "center", "arg",
                                 "arg", "set", "set", "twice", "wide", "wide", "wide")))
    i = draw(st.integers(0, len(pool) - 1))
    x = pool[i]
    if not isinstance(x, (np.ndarray, np.generic)):
        return None
    if kind == "fused":
        return ("fused", draw(st.sampled_from(sorted(FUSED))), i)
    if kind == "shape":
        sk = draw(st.sampled_from(SHAPERS))
        if sk == "flipT" and x.ndim == 0:
            return None
        return ("shape", sk, i, _shape_arg(draw, sk, x))
    if kind in ("center", "arg"):
        axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1))) if x.ndim else None
        name = draw(st.sampled_from(("max", "min", "sum", "mean") if kind == "center"
                                    else ("argmax", "argmin")))
        return (kind, name, i, axis) if kind == "center" else \
            (kind, name, i, axis, draw(st.booleans()))
    if kind == "set":
        return _setitem_draw(draw, pool, i) if isinstance(x, np.ndarray) else None
    if kind == "twice":
        return ("twice", i)
    return wide_step(draw, pool)  # the wide fuzzer's steps (binary, reduce, in place, ...)


Program = tuple[list[InputDesc], list[Step], tuple[int, ...]]
ROWS = (0, 1, 2, 3, 5, 7, 16, 33, 257, 601, 1100)


@st.composite
def programs(draw: st.DrawFn) -> Program:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.sampled_from(ROWS if k == ndim - 1 and ndim <= 2 else ROWS[:7]))
                  for k in range(ndim))
    descs: list[InputDesc] = []
    for _ in range(draw(st.integers(1, 2))):
        sub = tuple(1 if draw(st.integers(0, 4)) == 0 else s
                    for s in shape[ndim - draw(st.integers(0, ndim)):])
        descs.append(("array", draw(st.sampled_from(DTYPES)), sub, draw(st.sampled_from(LAYOUTS)),
                      draw(st.integers(0, 2**16))))
    pool: list[Any] = [build_input(d, _ties) for d in descs]
    steps, failed = grow(draw, pool, 7, _draw_step, apply, 20_000)
    if failed:
        return descs, steps, (len(pool),)
    if not steps:
        steps.append(("fused", "add1", 0))
        pool.append(None)
    n = len(pool)
    outs = tuple(sorted(set(draw(st.lists(st.integers(len(descs), n - 1), min_size=1,
                                          max_size=3)))))
    return descs, steps, outs


# ----------------------------------------------------------------------------- checking

def compare(program: Program, options: dict[str, Any]) -> str | None:
    """Why stax.jit(program, **options) differs from NumPy, or None."""
    descs, steps, outs = program

    def fn(*args: Any) -> tuple[Any, ...]:
        return run_program(steps, outs, *args)

    jitted = stax.jit(fn, **options)
    floor = precision_floor(descs, steps)
    for call, ds in enumerate((descs, _reseeded(descs))):
        want, got = _run(fn, ds, _ties), _run(jitted, ds, _ties)
        why = _compare_call(want, got, floor)[1] or _kinds(want, got)
        if why is not None:
            return f"call {call + 1}: {why}"
    return None


def _kinds(numpy_run: tuple[Any, list[Any]], stax_run: tuple[Any, list[Any]]) -> str | None:
    """ndarray vs NumPy scalar, and memory shared with the arguments, as NumPy's."""
    (want, want_in), (got, got_in) = numpy_run, stax_run
    if isinstance(want, Exception) or isinstance(got, Exception):
        return None
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(g, np.ndarray) != isinstance(w, np.ndarray):
            return f"result {k}: {type(g).__name__}, NumPy {type(w).__name__}"
        for a, (m, t) in enumerate(zip(got_in, want_in, strict=True)):
            # a read-only view (np.broadcast_to of an argument) may be a copy in Stax
            if isinstance(w, np.ndarray) and w.flags.writeable \
                    and np.shares_memory(g, m) != np.shares_memory(w, t):
                return f"result {k} shares memory with argument {a}: {not np.shares_memory(w, t)}"
    return None


_CAMPAIGN = int(os.environ.get("STAX_FUZZ_EXAMPLES", "0"))
_LOG = os.environ.get("STAX_FUZZ_LOG")
OPTIONS: tuple[dict[str, Any], ...] = ({}, {}, {"fuse": False}, {"dynamic": True})


@settings(max_examples=_CAMPAIGN or 40, deadline=None, derandomize=not _CAMPAIGN,
          phases=(Phase.generate,) if _LOG else tuple(Phase),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs(), st.sampled_from(OPTIONS))
def test_random_program_s15(program: Program, options: dict[str, Any]) -> None:
    why = compare(program, options)
    if _LOG and why is not None:
        with open(_LOG, "a") as log:
            log.write(json.dumps({"program": repr(program), "options": repr(options),
                                  "why": why}) + "\n")
        return
    assert why is None, f"{program!r} (options {options}): {why}"


# ----------------------------------------------------------------------------- found by the fuzzer

_IDX = np.array([0, 1, 0])
GATHERS_READ_IN_PART: tuple[Callable[[Any], Any], ...] = (
    lambda x: np.argmax(x, axis=-1, keepdims=True)[_IDX],  # a keepdims reduction
    lambda x: x.sum(keepdims=True)[np.array([1])],
    lambda x: x.sum(-1, keepdims=True)[:, _IDX],
    lambda x: np.broadcast_to(x[..., :1], x.shape[:-1] + (1,))[..., _IDX] * 2,
    lambda x: np.take_along_axis(x.max(-1, keepdims=True), np.ones_like(x[..., :1], int), -1),
    lambda x: x[np.array([5])][:, None].argmax(1),  # an argmax over one gathered element
    lambda x: x[np.array([5])][:0] + 1,  # no element of the gather read
)


def test_gathers_read_in_part_check_their_indices() -> None:
    """A gather from an axis of extent 1 (a keepdims reduction, a broadcast, an argmax over one
    element) checks its indices as NumPy does: the source's loader dropped the index, and with
    it the bounds check (`x.sum(keepdims=True)[[1]]` gave x.sum() instead of IndexError); so
    does a gather of which an empty result reads nothing."""
    raised = 0
    for fn in GATHERS_READ_IN_PART:
        for x in (np.arange(1100, dtype=np.uint32)[::-1], np.ones((3, 4))):
            try:
                want = fn(x)
            except IndexError:
                raised += 1
                with np.testing.assert_raises(IndexError):
                    stax.jit(fn)(x)
            else:
                assert_matches(stax.jit(fn)(x), want)
    assert raised == 11


def test_matmul_operator_of_numpy_scalars_is_a_type_error() -> None:
    """`s @ t` of NumPy scalars (or a scalar and a Python number) raises TypeError as NumPy's
    scalars have no `@`; 0-d arrays raise ValueError (np.matmul); Stax raised ValueError for
    both."""
    x, y = np.ones(3), np.arange(3.0)
    programs_: tuple[Callable[[Any, Any], Any], ...] = (
        lambda x, y: x @ y, lambda x, y: x.sum() @ y.sum(), lambda x, y: x.sum() @ y,
        lambda x, y: x[0] @ 2.0, lambda x, y: 2.0 @ x[0], lambda x, y: x[0, ...] @ y[1, ...])
    for fn in programs_:
        try:
            want = fn(x, y)
        except (TypeError, ValueError) as exc:
            with np.testing.assert_raises(type(exc)):
                stax.jit(fn)(x, y)
        else:
            assert_matches(stax.jit(fn)(x, y), want)
    with np.testing.assert_raises(TypeError):
        stax.jit(lambda s, t: s @ t)(np.float64(2), np.float64(3))


def test_in_place_update_of_a_masked_selection_reaches_every_name() -> None:
    """`n = x[x > 0]; n += 1` changes the one array both names hold, as NumPy's (the lazy
    selection's in-place operators returned a new selection: `m` kept the old values)."""
    def fn(x: np.ndarray) -> tuple[Any, Any, Any]:
        m = x[x > 0]
        n = m
        n += 1
        n *= m
        k = x[x < 0]
        k -= k
        return m, k, x
    for x in (np.array([1.0, -2.0, 3.0]), np.arange(-3, 4, dtype=np.int32), np.ones((2, 3))):
        assert_matches(stax.jit(fn)(x.copy()), fn(x.copy()))
