"""[FUZZ2, s16] Random programs, written as Python source, over what the earlier fuzzers did not
draw: Python `for` loops rolled by `stax.loops` (arrays and scalars carried, slices indexed by
the loop index, names rebound before and after reads, names read after the loop, zero-trip
loops, nested loops, loops over rows), integer arithmetic (//, %, divmod with negatives and zero
divisors, shifts by the width and more, negative powers, abs of the minimum, wrap-around, mixed
signed/unsigned and NEP 50 Python scalars), ufunc keywords (out= aliasing an input, where= with
out=, dtype=, casting=), reductions with initial=/where=/dtype=/keepdims over empty axes,
cumsum/cumprod with dtype=, clip/minimum/maximum with NaN, float16 and complex values, in-place
updates of overlapping views (`x[1:] += x[:-1]`, `x[::-1] *= x`), sort/argsort (stable, NaN
last) and np.where/np.select with broadcasting.

Each program is a function `f(a, b, c, n)` built from source; it runs under NumPy and under
`stax.jit` on fresh copies of the same inputs (two calls, the second with other values). Values
(NaN-aware, exact for integers), dtypes, shapes, ndarray vs NumPy scalar, exception classes,
the arguments after the call, memory shared with the arguments and whether a RuntimeWarning
(division by zero, invalid value) was issued must agree. A campaign (outside the suite):

    STAX_FUZZ_EXAMPLES=2000 STAX_FUZZ_LOG=/tmp/fuzz16.jsonl pytest -n 0 -o addopts="" \\
        tests/test_fuzz_s16.py -k random --hypothesis-seed=3 -q

runs without shrinking and appends every disagreement to the log instead of failing.
"""

from __future__ import annotations

import json
import linecache
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from conftest import assert_matches
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_fuzz_s15 import _kinds
from test_random_programs import _broadcastable
from test_random_programs_wide import DTYPES, LAYOUTS, InputDesc, _compare_call, build_input

import stax
from stax.ops import FLAGS

INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
NAMES = ("a", "b", "c")

# ----------------------------------------------------------------------------- statements

PY_SCALARS = ("0", "1", "-1", "2", "-3", "7", "127", "128", "255", "300", "-129", "2**31",
              "2**63 - 1", "0.5", "-2.5", "float('nan')", "1j")
SHIFTS = ("0", "1", "7", "8", "15", "16", "31", "32", "63", "64", "65", "-1")
OPS = ("+", "-", "*", "//", "%", "/", "**", "<<", ">>", "&", "|", "^")


def _arrays(env: dict[str, Any], ndim: int = 0) -> list[str]:
    return sorted(k for k, v in env.items() if isinstance(v, np.ndarray) and v.ndim >= ndim)


def _axis(draw: st.DrawFn, x: np.ndarray) -> str:
    if x.ndim == 0:
        return "None"
    return draw(st.sampled_from(["None"] + [str(a) for a in range(-x.ndim, x.ndim)]))


def _dtype(draw: st.DrawFn) -> str:
    return "np." + draw(st.sampled_from(DTYPES + INTS))


def _partner(draw: st.DrawFn, env: dict[str, Any], x: str) -> str:
    fits = [k for k in _arrays(env) if _broadcastable(env[x].shape, env[k].shape)]
    return draw(st.sampled_from(fits))


def _integer(draw: st.DrawFn, env: dict[str, Any], x: str, y: str) -> str:
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return f"{x} {draw(st.sampled_from(OPS))} {y}"
    if kind == 1:
        return f"{x} {draw(st.sampled_from(OPS))} {draw(st.sampled_from(PY_SCALARS))}"
    if kind == 2:
        return f"{draw(st.sampled_from(PY_SCALARS))} {draw(st.sampled_from(OPS))} {x}"
    if kind == 3:
        return f"{x} {draw(st.sampled_from(('<<', '>>')))} {draw(st.sampled_from(SHIFTS))}"
    if kind == 4:
        return f"np.divmod({x}, {y})[{draw(st.integers(0, 1))}]"
    if kind == 5:
        return f"np.{draw(st.sampled_from(('abs', 'negative', 'square', 'sign')))}({x})"
    return f"{x}.astype(np.{draw(st.sampled_from(INTS))})"


UFUNCS = ("add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
          "fmax", "true_divide", "power", "left_shift")


def _ufunc_kw(draw: st.DrawFn, env: dict[str, Any], x: str, y: str) -> str | None:
    name = draw(st.sampled_from(UFUNCS))
    kind = draw(st.integers(0, 4))  # (where= without out= leaves elements uninitialized)
    shape = np.broadcast_shapes(env[x].shape, env[y].shape)
    outs = [k for k in _arrays(env) if env[k].shape == shape]
    if kind == 0 and outs:  # out= (often an input)
        return f"np.{name}({x}, {y}, out={draw(st.sampled_from(outs))})"
    if kind == 1 and outs:  # where= with out=
        o = draw(st.sampled_from(outs))
        return f"np.{name}({x}, {y}, where={x} > 0, out={o})"
    if kind == 2 and outs and shape:  # out= a reversed view of an input
        o = draw(st.sampled_from(outs))
        return f"np.{name}({x}, {y}, out={o}[::-1])"
    if kind == 3:
        casting = draw(st.sampled_from(("", ", casting='unsafe'", ", casting='same_kind'")))
        return f"np.{name}({x}, {y}, dtype={_dtype(draw)}{casting})"
    return f"np.{name}({x}, {y})"


def _reduction(draw: st.DrawFn, env: dict[str, Any], x: str, y: str) -> str:
    name = draw(st.sampled_from(("sum", "prod", "max", "min", "mean", "add.reduce",
                                 "maximum.reduce")))
    kw = [f"axis={_axis(draw, env[x])}"]
    if draw(st.booleans()):
        kw.append("keepdims=True")
    if name != "mean" and draw(st.booleans()):
        kw.append(f"initial={draw(st.sampled_from(('0', '-1', '5', '0.5', 'np.nan')))}")
    if draw(st.booleans()) and _broadcastable(env[x].shape, env[y].shape) \
            and np.broadcast_shapes(env[x].shape, env[y].shape) == env[x].shape:
        kw.append(f"where={y} > 0")
    if name in ("sum", "prod", "mean", "add.reduce") and draw(st.booleans()):
        kw.append(f"dtype={_dtype(draw)}")
    return f"np.{name}({x}, {', '.join(kw)})"


def _nan_and_misc(draw: st.DrawFn, env: dict[str, Any], x: str, y: str) -> str:
    kind = draw(st.integers(0, 7))
    v = draw(st.sampled_from(("np.nan", "0", "-1", "2.5", y, "-np.inf")))
    if kind == 0:
        return f"np.clip({x}, {v}, {draw(st.sampled_from(('np.nan', '3', y, 'None')))})"
    if kind == 1:
        return f"np.{draw(st.sampled_from(('minimum', 'maximum', 'fmin', 'fmax')))}({x}, {v})"
    if kind == 2 and env[x].ndim:
        scan = draw(st.sampled_from(("cumsum", "cumprod")))
        return f"np.{scan}({x}, axis={draw(st.integers(-env[x].ndim, env[x].ndim - 1))}, " \
            f"dtype={_dtype(draw)})"
    if kind == 3 and env[x].ndim:
        ax = draw(st.integers(-env[x].ndim, env[x].ndim - 1))
        kw = draw(st.sampled_from(("", ", kind='stable'")))
        return f"np.{draw(st.sampled_from(('sort', 'argsort')))}({x}, axis={ax}{kw})"
    if kind == 4:
        return f"np.where({x} > 0, {y}, {draw(st.sampled_from(('0', '-1.5', x, 'np.nan')))})"
    if kind == 5:
        return f"np.select([{x} > 0, {y} < 1], [{x}, {y}], " \
            f"default={draw(st.sampled_from(('0', '2', 'np.nan')))})"
    if kind == 6:
        return f"{x}.astype(np.{draw(st.sampled_from(('float16', 'complex64', 'complex128')))})" \
            f" {draw(st.sampled_from(('*', '+', '/')))} {y}"
    return f"np.sort({x}, axis=None)"


def _overlap(draw: st.DrawFn, env: dict[str, Any], x: str) -> list[str] | None:
    """An in-place update of an input through overlapping views of itself."""
    if not env[x].ndim:
        return None
    op = draw(st.sampled_from(("+=", "-=", "*=", "=", "//=", "|=")))
    lhs, rhs = draw(st.sampled_from((("[1:]", "[:-1]"), ("[:-1]", "[1:]"), ("[::-1]", ""),
                                     ("", "[::-1]"), ("[::2]", "[1::2]"), ("[1:]", "[1:][::-1]"),
                                     ("", ".T"), ("[2:]", "[:-2] * 2"))))
    return [f"{x}{lhs} {op} {x}{rhs}"]


def _loop(draw: st.DrawFn, env: dict[str, Any], v: str, w: str) -> list[str]:
    """A `for` over range carrying arrays and scalars (stax.loops)."""
    trip = draw(st.sampled_from(("len(V)", "len(V) - 1", "0", "1", "2", "n", "min(n, len(V))")))
    op = draw(st.sampled_from(("+", "-", "*", "//", "np.maximum")))

    def comb(p: str, q: str) -> str:
        return f"np.maximum({p}, {q})" if op == "np.maximum" else f"{p} {op} {q}"

    kind = draw(st.integers(0, 8))
    if kind == 0:  # an array carried, a row read at k
        body = ["s = V[0] * 0", f"for k in range({trip}):", f"    s = {comb('s', 'V[k]')}"]
    elif kind == 1:  # a scalar carried
        body = ["t = 0", f"for k in range({trip}):", f"    t = {comb('t', 'V[k].sum()')}",
                "s = t + V.sum()"]
    elif kind == 2:  # a recurrence through a copy
        body = ["s = V.copy()", f"for k in range(1, {trip}):",
                f"    s[k] = {comb('s[k - 1]', 'V[k]')}"]
    elif kind == 3:  # names rebound before and after reads; one bound in the body read after
        body = ["t = V[0]", "u = V[-1] * 1", f"for k in range({trip}):", "    u = t * 2",
                f"    t = {comb('V[k]', 'u')}", "    u = u - t", "s = u + t"]
    elif kind == 4:  # a slice indexed by k
        body = ["s = np.zeros_like(V)", f"for k in range({trip}):",
                f"    s[k:k + 2] = {comb('s[k:k + 2]', 'V[k]')}"]
    elif kind == 5:  # nested, triangular
        body = ["s = V * 1", f"for k in range({trip}):", "    for j in range(k):",
                f"        s[k] = {comb('s[k]', 's[j]')}"]
    elif kind == 6:  # a loop over rows, with an index read after the loop
        body = ["s = V[0] * 0", "k = -1", "for row in V:", f"    s = {comb('s', 'row')}",
                "    k = k + 1", "s = s + k"]
    elif kind == 7:  # a loop writing an input in place, reading W
        body = [f"for k in range({trip}):", f"    V[k] = {comb('V[k]', 'W')}", "s = V"]
    else:  # a reduction over a growing prefix, carried scalar and array
        body = ["t = V[0] * 0", "s = V * 0", f"for k in range({trip}):",
                f"    t = {comb('t', 'V[:k + 1].sum(axis=0)')}", "    s[k] = t"]
    return [line.replace("V", v).replace("W", w) for line in body]


def _statement(draw: st.DrawFn, env: dict[str, Any], fresh: str) -> list[str] | None:
    arrays = _arrays(env)
    x = draw(st.sampled_from(arrays))
    y = _partner(draw, env, x)
    kind = draw(st.sampled_from(("int", "int", "ufunc", "reduce", "misc", "overlap", "loop",
                                 "loop", "loop")))
    if kind == "overlap":
        return _overlap(draw, env, draw(st.sampled_from([k for k in NAMES if k in env])))
    if kind == "loop":
        rows = [k for k in _arrays(env, 1) if env[k].shape[0] > 0 or draw(st.booleans())]
        if not rows:
            return None
        v = draw(st.sampled_from(rows))
        w = draw(st.sampled_from([k for k in arrays if _broadcastable(env[v].shape[1:],
                                                                       env[k].shape)]))
        return _loop(draw, env, v, w) + [f"{fresh} = s"]
    make: dict[str, Callable[..., str | None]] = {
        "int": _integer, "ufunc": _ufunc_kw, "reduce": _reduction, "misc": _nan_and_misc}
    expr = make[kind](draw, env, x, y)
    return None if expr is None else [f"{fresh} = {expr}"]


# ----------------------------------------------------------------------------- programs

Program = tuple[list[InputDesc], int, str]  # (inputs a, b, c; the int n; the function's source)
_COUNTER = [0]


def build(source: str) -> Callable[..., Any]:
    """The function `f` of `source` (its lines registered so that tracebacks show them)."""
    _COUNTER[0] += 1
    name = f"<fuzz16-{_COUNTER[0]}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    scope: dict[str, Any] = {"np": np}
    exec(compile(source, name, "exec"), scope)  # noqa: S102 - the fuzzer's own programs
    return scope["f"]


def _ints_or_any(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(INTS)) if draw(st.booleans()) else draw(st.sampled_from(DTYPES))


@st.composite
def programs(draw: st.DrawFn) -> Program:
    ndim = draw(st.integers(0, 2))
    base = tuple(draw(st.sampled_from((0, 1, 2, 3, 4, 5, 7))) for _ in range(ndim))
    descs: list[InputDesc] = []
    for _ in range(draw(st.integers(1, 3))):
        sub = tuple(1 if draw(st.integers(0, 4)) == 0 else s
                    for s in base[ndim - draw(st.integers(0, ndim)):])
        descs.append(("array", _ints_or_any(draw), sub, draw(st.sampled_from(LAYOUTS)),
                      draw(st.integers(0, 2**16))))
    n = draw(st.sampled_from((0, 1, 2, 3, 9)))
    env: dict[str, Any] = dict(zip(NAMES, (build_input(d) for d in descs), strict=False))
    env["n"] = n
    lines: list[str] = []
    results: list[str] = []
    for step in range(draw(st.integers(1, 5))):
        fresh = f"r{step}"
        stmt = _statement(draw, env, fresh)
        if stmt is None:
            continue
        code = "\n".join(stmt)
        trial = dict(env)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                exec(code, {"np": np}, trial)  # noqa: S102
        except Exception:  # noqa: BLE001 - NumPy rejects it: keep some as error programs
            if draw(st.integers(0, 3)) == 0:
                lines += stmt
                break
            continue
        if not isinstance(trial.get(fresh, 0), (np.ndarray, np.generic)) or \
                np.size(trial.get(fresh, 0)) > 5000:
            continue
        env = {k: v for k, v in trial.items() if k in NAMES or k == "n" or k.startswith("r")}
        lines += stmt
        if fresh in env:
            results.append(fresh)
    outs = draw(st.lists(st.sampled_from(results + [k for k in NAMES[:len(descs)]]),
                         min_size=1, max_size=3, unique=True)) if results else list(NAMES[:1])
    args = ", ".join(NAMES[:len(descs)])
    body = "".join(f"    {line}\n" for line in lines)
    return descs, n, f"def f({args}, n):\n{body}    return ({', '.join(outs)},)\n"


# ----------------------------------------------------------------------------- checking

# The warnings Stax's kernels issue (integer division by zero, float -> int casts of NaN/inf);
# NumPy's floating-point warnings are not reproduced (README), nor those of scalar overflow.
FLAG_WARNINGS = tuple(f.message for f in FLAGS if f.kind is RuntimeWarning) + (
    "divide by zero encountered in divmod",)


def _run(fn: Callable[..., Any], descs: list[InputDesc], n: int
         ) -> tuple[tuple[Any, list[Any]], bool]:
    """((results or the exception raised, the inputs after the call), whether a warning Stax
    reproduces was issued)."""
    inputs = [build_input(d) for d in descs]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out: Any = fn(*inputs, n)
        except Exception as exc:  # noqa: BLE001 - compared with NumPy's
            out = exc
    return (out, inputs), any(_message(w) in FLAG_WARNINGS for w in seen)


def _message(w: warnings.WarningMessage) -> str:
    """The warning's message, NumPy's scalar operations' named as its arrays'."""
    return str(w.message).replace("in scalar ", "in ")


def _integral(descs: list[InputDesc], source: str) -> bool:
    """Whether a program computes in integers only (NumPy's float // 0 warns, Stax's not)."""
    return all(np.dtype(d[1]).kind in "biu" for d in descs) and not re.search(
        r"(?<!/)/(?!/)|\.\d|nan|inf|float|complex|mean|1j", source)


def _reseeded(descs: list[InputDesc]) -> list[InputDesc]:
    return [d[:4] + (d[4] + 1,) for d in descs]


def compare(program: Program, options: dict[str, Any]) -> str | None:
    """Why stax.jit(program, **options) differs from NumPy, or None."""
    descs, n, source = program
    fn = build(source)
    jitted = stax.jit(fn, **options)
    for call, ds in enumerate((descs, _reseeded(descs))):
        (want, want_warned), (got, got_warned) = _run(fn, ds, n), _run(jitted, ds, n)
        if isinstance(want[0], NameError):  # a name a zero-trip loop did not bind
            ok = isinstance(got[0], NameError)
            why = None if ok else f"NumPy raised {want[0]!r}; stax gave {got[0]!r}"
        else:
            why = _compare_call(want, got, 0.0)[1] or _kinds(want, got)
        if why is None and want_warned != got_warned and not isinstance(want[0], Exception) \
                and not isinstance(got[0], NotImplementedError) \
                and (got_warned or _integral(ds, source)):
            why = f"RuntimeWarning: NumPy {want_warned}, stax {got_warned}"
        if why is not None:
            return f"call {call + 1}: {why}"
    return None


_CAMPAIGN = int(os.environ.get("STAX_FUZZ_EXAMPLES", "0"))
_LOG = os.environ.get("STAX_FUZZ_LOG")
OPTIONS: tuple[dict[str, Any], ...] = ({}, {}, {"fuse": False}, {"dynamic": True})


@settings(max_examples=_CAMPAIGN or 30, deadline=None, derandomize=not _CAMPAIGN,
          phases=(Phase.generate,) if _LOG else tuple(Phase),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs(), st.sampled_from(OPTIONS))
def test_random_program_s16(program: Program, options: dict[str, Any]) -> None:
    why = compare(program, options)
    if _LOG and why is not None:
        with open(_LOG, "a") as log:
            log.write(json.dumps({"program": repr(program[:2]), "source": program[2],
                                  "options": repr(options), "why": why}) + "\n")
        return
    assert why is None, f"{program[:2]!r}\n{program[2]}(options {options}): {why}"


# ----------------------------------------------------------------------------- found by the fuzzer

def _same(fn: Callable[..., Any], *args: np.ndarray, jitted: Any = None) -> None:
    """stax.jit(fn) (or `jitted`, warm) gives NumPy's results or exception class and the same
    warnings."""
    runs = []
    for f in (fn, jitted or stax.jit(fn)):
        copies = [a.copy() for a in args]
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                out: Any = f(*copies)
            except (ValueError, OverflowError) as exc:
                out = type(exc)
        runs.append((out, copies, sorted({_message(w) for w in seen
                                          if _message(w) in FLAG_WARNINGS})))
    (want, want_args, want_warned), (got, got_args, got_warned) = runs
    assert got_warned == want_warned
    if isinstance(want, type):
        assert got is want
    else:
        assert_matches((got, got_args), (want, want_args))


def test_ufunc_where_does_not_compute_masked_out_elements() -> None:
    """`np.power(a, b, where=b >= 0, out=o)` raises nothing for a negative exponent that the
    mask leaves out, and `np.floor_divide(a, b, where=b != 0, out=o)` does not warn: NumPy
    computes no masked-out element (Stax computed them all, then chose)."""
    a, b = np.array([-3, 0, 2, 7], np.int16), np.array([-1, 0, 3, 2], np.int16)
    _same(lambda a, b: np.power(a, b, where=b >= 0, out=a), a, b)
    _same(lambda a, b: np.floor_divide(a, b, where=b != 0, out=b * 1), a, b)
    _same(lambda a, b: np.remainder(a[:, None], b, where=b > 0, out=np.ones((4, 4), a.dtype)),
          a, b)
    _same(lambda a, b: np.power(a, b, where=a > 0, out=a), a, b)  # raises: b[3] < 0 kept


def test_unused_values_raise_and_warn_as_numpy() -> None:
    """A value nothing reads is computed all the same where it may raise or warn: `r = a ** b`
    alone raised nothing for a negative exponent, `a // b` and a NaN cast to int did not warn
    (the value was inlined nowhere, or its node removed as never used)."""
    def power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r = a ** b  # noqa: F841 - unused, as in the fuzzer's program
        return a + 1

    def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        q = a // b  # noqa: F841
        w = (a % b)[:0]  # noqa: F841 - read only into an empty result
        return b - 1

    def cast(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        c = (a / b).astype(np.int32)  # noqa: F841
        return a * 2

    a = np.array([-2, 0, 3, 5], np.int32)
    for b in (np.array([1, 2, -1, 0], np.int32), np.array([1, 2, 3, 4], np.int32)):
        for fn in (power, divide, cast):
            _same(fn, a, b)
            _same(fn, a.T[::-1], b[::-1].astype(np.uint8))


def test_loop_reads_a_one_element_step_slice() -> None:
    """A loop body's invariant input of one element sliced with a step (strides (8,), the
    body compiled for (4,)) was refused by the body's argument check ("the compiled kernels
    assume ..."); the strides of axes of one element are not read."""
    def fn(a: np.ndarray, c: np.ndarray) -> np.ndarray:
        for k in range(len(a)):
            a[k] = a[k] * c
        return a

    for c in (np.arange(5, dtype=np.uint32)[1::2][:1], np.arange(6, dtype=np.int64)[::-3][1:]):
        a = np.arange(6.0, dtype=np.float32)
        assert_matches(stax.jit(fn)(a.copy(), c), fn(a.copy(), c))


def test_reduction_float_initial_for_integers_as_numpy() -> None:
    """A Python float initial= of an integer reduction goes through int() as in NumPy: NaN
    raises ValueError, inf OverflowError, 2.7 is 2 (Stax cast NaN to 0)."""
    a, m = np.array([[1, 2], [3, 0]], np.uint32), np.array([True, False])
    for initial in (np.nan, np.inf, 2.7, -0.5):
        _same(lambda a, m, i=initial: np.prod(a, axis=0, initial=i, dtype=np.int8), a, m)
        _same(lambda a, m, i=initial: np.max(a, axis=1, initial=i, where=m), a, m)
        _same(lambda a, m, i=initial: np.sum(a[:0], initial=i, keepdims=True), a, m)


def test_warm_call_returning_views_still_checks() -> None:
    """A function whose results are views of its arguments skipped its kernels on warm calls:
    an unused gather out of bounds (`r = a[i]; return a.T`) raised IndexError on the first
    call only, and an unused `a // b` warned on the first call only."""
    def gather(a: np.ndarray, i: np.ndarray) -> np.ndarray:
        r = a[i]  # noqa: F841 - unused, checked all the same
        return a.T

    def divide(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = a // b  # noqa: F841
        return a[::-1], b

    jitted = stax.jit(gather)
    for i in ([1], [5], [-4], [2]):
        try:
            want = gather(np.arange(3.0), np.array(i))
        except IndexError:
            with np.testing.assert_raises(IndexError):
                jitted(np.arange(3.0), np.array(i))
        else:
            assert_matches(jitted(np.arange(3.0), np.array(i)), want)
    jitted = stax.jit(divide)
    for b in ([1, 2], [0, 1], [3, 0]):
        _same(divide, np.array([4, 5]), np.array(b), jitted=jitted)
