"""`stax.jit` and `stax.explain`: trace, lower, schedule, generate, compile, run.

A jitted function is traced once per input signature (shapes, dtypes, strides, scalar types)
and its compiled program cached; later calls with the same signature only run the wrapper.
"""

from __future__ import annotations

import functools
import gc
import inspect
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from stax.backends import DEFAULT, get_backend
from stax.cse import eliminate_common_subexpressions
from stax.dask import call as dask_call
from stax.dask import is_dask_array
from stax.frontend.breaks import SEGMENTS, Break, call_general, call_segmented, is_plain, warn_once
from stax.frontend.functions import creating
from stax.frontend.replay import Tape
from stax.frontend.trace import Builder, GraphBreak, Tracer, check_dtype, install_methods
from stax.graph import Graph, Op, Value
from stax.ir.program import LoopProgram, contiguous_strides
from stax.ir.sym import ShapeEnv, Sym, data_atoms_in, evaluate, is_data
from stax.lower import Lowered, lower
from stax.masked_reductions import fuse_masked_reductions
from stax.report.progress import PROGRESS_MIN_OPS, progress
from stax.runtime.compiler import isa_level
from stax.runtime.fast import disjoint, fastcall
from stax.runtime.wrapper import CompiledProgram, DataSizeMiss, build, release_all
from stax.sched.scheduler import Schedule, schedule
from stax.tiling.plan import thread_count

install_methods()

OPTIONS = {"fuse": True, "pool": False, "isa": None, "threads": None, "form": None,
           "strict": False, "dynamic": None, "backend": DEFAULT, "replay": True}


class CacheInfo(NamedTuple):
    """`f.cache_info()`: calls, programs compiled (specialized and generic), and how many of
    them are generic (each serves every shape of its class whose guards hold); [GEN] the exact
    shapes generic programs keep warm entries for (`currsize`, at most `maxsize`: the least
    recently used is dropped, and its next call finds its generic program again by guards)."""

    calls: int
    compiles: int
    generic: int
    currsize: int = 0
    maxsize: int = 0


# [GEN, issue 11] exact signatures served by generic programs kept warm (a serving loop with
# ever-new shapes would otherwise grow the caches without bound)
MAX_SHAPES = 1024


class ReplayInfo(NamedTuple):
    """`f.replay_info()` [BRK]: how calls of signatures with graph breaks ran."""

    traced: int
    replayed: int
    missed: int
    tapes: int


def _shape_class(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a generic program is specialized on (issue 11): per argument its kind, rank,
    dtype, which dimensions are 0 or 1 (sizes >= 2 are symbols) and whether it is
    C-contiguous (a generic program reads C-contiguous copies of strided arguments). None
    when an array's axes are not in C order in memory (Fortran order, transposes: NumPy lays
    results out as they are, a program specialized to the strides too)."""
    out: list[Any] = []
    for a in args:
        if isinstance(a, np.ndarray):
            steps = [abs(s) for s, d in zip(a.strides, a.shape, strict=True) if d > 1]
            if steps != sorted(steps, reverse=True):
                return None
            out.append(("array", a.dtype, tuple(d if d < 2 else -1 for d in a.shape),
                        a.flags.c_contiguous))
        else:
            out.append(_arg_signature(a))
    return tuple(out)


def _strided(args: tuple[Any, ...]) -> bool:
    return any(isinstance(a, np.ndarray) and not a.flags.c_contiguous for a in args)


def _contiguous(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments a generic program reads: strided arrays as C-contiguous copies."""
    return tuple(a.copy(order="C") if isinstance(a, np.ndarray) and not a.flags.c_contiguous
                 else a for a in args)


def _symbol_values(args: tuple[Any, ...]) -> dict[str, int]:
    """The symbols a generic trace of `args` would give (in the order `trace` creates them)."""
    values: dict[str, int] = {}
    for a in args:
        if isinstance(a, np.ndarray):
            for d in a.shape:
                if d > 1:
                    values[f"s{len(values)}"] = d
    return values


def _refuse_subclass(a: np.ndarray) -> None:
    """[C, issue 8] An ndarray subclass whose operators or mask change NumPy's results is
    refused (its kernels would compute plain-array results); np.memmap reads as an ndarray."""
    if type(a) is np.ndarray or type(a) is np.memmap:
        return
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError("stax.jit: masked arrays are not supported (the mask would be ignored); "
                        "pass a.filled(fill_value) and the mask as a boolean array, or call "
                        "the function without stax.jit")
    if isinstance(a, np.matrix):
        raise TypeError("stax.jit: np.matrix is not supported ('*' is a matrix product there); "
                        "pass np.asarray(m) and use '@' for matrix products")
    raise TypeError(f"stax.jit: arrays of the ndarray subclass {type(a).__name__} are not "
                    f"supported (their results may differ from a plain ndarray's); pass "
                    f"np.asarray(a)")


def _arg_signature(a: Any) -> tuple[Any, ...]:
    if isinstance(a, np.ndarray):
        _refuse_subclass(a)
        return ("array", a.shape, a.dtype, a.strides)  # the dtype object: no string built
    if isinstance(a, (bool, np.bool_)) and not isinstance(a, np.ndarray):
        return ("bool" if isinstance(a, bool) else "np.bool",)
    if isinstance(a, np.generic):  # [REVIEW] before float: np.float64 is a float subclass
        return ("scalar", a.dtype.str)
    if isinstance(a, int):
        return ("int",)
    if isinstance(a, float):
        return ("float",)
    if isinstance(a, complex):  # [E16]
        return ("complex",)
    if isinstance(a, (list, tuple)):
        raise TypeError(f"stax.jit: arguments must be NumPy arrays or scalars, got a "
                        f"{type(a).__name__} (convert it with np.asarray first)")
    raise TypeError(f"stax.jit: unsupported argument of type {type(a).__name__}")


# [H9, issue 9] The packed signature of a call's arguments (fastcall.c `key`: bytes, or None
# for arguments other than plain aligned ndarrays of built-in dtypes, Python floats and ints,
# NumPy scalars);
# set once the extension module is built (by the first compile), None without it.
# one of NumPy's view ops (a.T, a.real, ...), given the sizes of a shape-generic trace's symbols
NumPyView = Callable[[np.ndarray, Mapping[str, int]], np.ndarray]
_packed_key: Callable[[tuple[Any, ...]], bytes | None] | None = None


def _proven_runner(comp: Compilation, args: tuple[Any, ...]) -> Callable[..., Any] | None:
    """[H9] What a warm call with the signature of `args` runs (on the arguments as given)
    once `args` have passed the compiled wrapper's checks: `program.proven` (no re-checks)
    itself when it returns the result as is, else with scalars converted and the result
    rebuilt; [LOOPS] with mutated arguments checked for aliasing and written back, and
    returned arguments as the caller's arrays (`write_back`), as `Jitted._run` does.
    [HUNT] Python ints narrowed to a smaller integer dtype (`uint8_image + k`) are checked
    against its bounds on each call, as `Traced.check_args` does (they took the ~20 us cold
    path on every call before)."""
    traced = comp.traced
    proven, single = comp.program.proven, comp.program.single
    if proven is None:
        return None
    bounds = tuple((i, int(np.iinfo(t).min), int(np.iinfo(t).max), t)
                   for i, t in traced.narrowed_ints)
    # exact floats and ints, [HUNT2] NumPy scalars (the packed key); [B16, CALL] ints read as
    # uint64 bits converted as `_run` converts them
    scalars = tuple((i, _int_bits if i in traced.unsigned_ints else
                     _SCALARS.get(type(a), np.asarray)) for i, a in enumerate(args)
                    if type(a) is not np.ndarray)
    if comp.program.at_shape is not None:  # [GOVH] a generic program at these exact shapes
        converted = _converted(args, scalars)
        proven = comp.program.at_shape(*converted) or proven
    structure = traced.structure
    mutates = bool(traced.writeback or traced.returned_args)
    if not mutates and not bounds:
        if _flat_as_returned(traced, single):
            if not scalars:
                return proven  # arrays in, one array or [CALL2] a tuple of arrays out
            return lambda *args: proven(*_converted(args, scalars))  # [CALL2]
        result = _result_maker(traced, single)  # [SLOW] results with scalars or constants
        if not scalars:
            return lambda *args: result(proven(*args))
        return lambda *args: result(proven(*_converted(args, scalars)))
    if _views_only(traced) and not bounds:  # [CALL2] no kernel: NumPy's views of arguments
        if traced.env is None:  # [SLOW] views: one expression of the arguments
            return _result_maker(traced, False, views=True)
        placeholders = (None,) * traced.n_results
        return lambda *args: _unflatten(structure, write_back(traced, args, placeholders))
    if traced.env is None and traced.writeback and not bounds:
        from stax.loops.runner import direct_entry  # [LOOPS3] one loop run in the argument

        direct = direct_entry(traced.graph, traced.writeback, traced.returned_args,
                              traced.n_results, args)
        if direct is not None:
            return _direct_runner(traced, scalars, *direct)

    def run(*args: Any) -> Any:
        for i, lo, hi, dtype in bounds:
            if not lo <= args[i] <= hi:
                raise OverflowError(f"Python integer {args[i]} out of bounds for {dtype}")
        arrays = _converted(args, scalars)
        for i in traced.writeback:
            if not disjoint(args, i):
                traced.check_args(args)  # raises if they share memory element by element
        out = proven(*arrays)
        flat = (out,) if single else out
        return result(write_back(traced, args, flat) if mutates else flat)

    result = _result_maker(traced, False)
    return run


def _by_position(fn: Callable[..., Any], n: int, names: tuple[str, ...]
                 ) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
    """[CALL2] The parameters after the first `n` of `fn`, up to the last of `names`, and their
    defaults (None where the call `fn(n positional arguments, **names)` is not the call by
    position with those: see `Jitted._positional`). The wrapper's own signature, not one
    `functools.wraps` copied (a decorator may treat keywords otherwise)."""
    try:
        params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):
        return None
    later = [p.name for p in params[n:]]
    if len(params) < n or any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params[n:]) \
            or any(p.kind is not p.POSITIONAL_ONLY and p.kind is not p.POSITIONAL_OR_KEYWORD
                   for p in params[:n]) or not set(names) <= set(later):
        return None
    rest = params[n: n + 1 + max(later.index(name) for name in names)]
    if any(p.name not in names and p.default is p.empty for p in rest):
        return None
    return tuple(p.name for p in rest), tuple(p.default for p in rest)


def _flat_as_returned(traced: Traced, single: bool) -> bool:
    """[CALL2] Whether `program.proven`'s return value is the function's result as it is: one
    output (a 0-d one already a NumPy scalar), or a plain tuple of all the outputs in order,
    none 0-d (NumPy returns those as scalars: `_unflatten` converts them)."""
    structure, outputs = traced.structure, traced.graph.outputs
    if single:
        return isinstance(structure, int)
    return (structure == ("tuple", list(range(len(outputs))), tuple)
            and all(v.shape != () for v in outputs))


def _result_maker(traced: Traced, single: bool, views: bool = False) -> Callable[..., Any]:
    """[SLOW] `_unflatten(traced.structure, flat)` as one Python expression compiled once per
    program, for warm calls (the recursive walk took ~1-2 us of a warm call whose result holds
    Python scalars or constants: `return x * 0.5, 8`, `return float(s), n`). An output's rank
    is fixed with the signature, so which ones are 0-d (NumPy scalars in the result) is known.
    `single`: it takes the one output itself (`program.proven`'s), else the flat sequence;
    `views`: it takes the arguments of a views-only function at fixed shapes (`_views_only`),
    each result NumPy's views of its argument (as `write_back` takes them)."""
    names: dict[str, Any] = {"np": np}
    outputs = traced.graph.outputs
    returned = {k: (i, chain) for k, i, chain in traced.returned_args} if views else {}

    def const(value: Any) -> str:
        names[name := f"c{len(names)}"] = value
        return name

    def output(k: int) -> str:
        if k in returned:
            i, chain = returned[k]
            return functools.reduce(lambda a, view: f"{const(view)}({a}, {{}})", chain,
                                    f"args[{i}]")
        return "out" if single else f"out[{k}]"

    def expr(s: Any) -> str:
        if isinstance(s, int):
            return output(s) + ("[()]" if outputs[s].shape == () else "")
        kind = s[0]
        if kind in ("tuple", "list"):
            items = "".join(f"{expr(item)}, " for item in s[1])
            return (f"[{items}]" if kind == "list" else f"({items})" if s[2] is tuple
                    else f"{const(s[2])}({items})")
        if kind == "dict":
            return "{" + "".join(f"{const(k)}: {expr(v)}, " for k, v in s[1].items()) + "}"
        if kind == "int":  # [DYN16]
            return f"int({output(s[1])})"
        if kind == "static":
            return const(s[1])
        if kind == "py":
            return f"{const(s[2])}({output(s[1])}[()])"
        if kind == "array":
            return f"np.asarray({output(s[1])})"  # (a view of an argument is itself)
        return "None"

    return eval(f"lambda {'*args' if views else 'out'}: {expr(traced.structure)}", names)


def _views_only(traced: Traced) -> bool:
    """[CALL2] Whether every result is an argument or NumPy's view of one (`return x[::2]`,
    `x.T`), the graph having no other output: a warm call needs no kernel (the compiled
    program computes copies of those views, which `write_back` replaces); [FUZZ2] not when a
    value nothing reads is computed all the same (it may raise or warn: `r = a // b`)."""
    graph = traced.graph
    unread = {op.out.id for op in graph.ops} - set(graph.users()) - {v.id for v in graph.outputs}
    return (not traced.writeback and not traced.view_scalars and not unread
            and len(traced.returned_args) == traced.n_results == len(graph.outputs))


def _under_errstate(traced: Traced, run: Callable[..., Any]) -> Callable[..., Any]:
    """[ERR] `run` under the np.errstate the function sets inside itself, if it does."""
    if not traced.errstate:
        return run
    modes = dict(traced.errstate)

    def under(*args: Any) -> Any:
        with np.errstate(**modes):
            return run(*args)

    return under


Conversions = tuple[tuple[int, Callable[[Any], np.ndarray]], ...]  # (argument, to 0-d array)


def _converted(args: tuple[Any, ...], scalars: Conversions) -> list[Any]:
    """The arguments a warm call passes to its kernels: the scalar ones as 0-d arrays."""
    arrays = list(args)
    for i, convert in scalars:
        arrays[i] = convert(arrays[i])
    return arrays


def _direct_runner(traced: Traced, scalars: Conversions,
                   loop: Callable[[list[Any]], None], i: int) -> Callable[..., Any]:
    """[LOOPS3] The warm call of a function that is one loop run in its argument `i`
    (`stax.loops.runner.direct_entry`): the argument checked for aliasing as on every warm
    call with a mutated argument, the loop run, the argument returned (`return x`)."""
    structure, n = traced.structure, traced.n_results

    def run(*args: Any) -> Any:
        arrays = _converted(args, scalars)
        if not disjoint(args, i):
            traced.check_args(args)  # raises if they share memory element by element
        loop(arrays)
        return args[i] if isinstance(structure, int) else _unflatten(structure, [args[i]] * n)

    return run


def _static_value(a: Any) -> tuple[type, str]:
    """A scalar argument's value in a cache key, where the trace used it as a Python value: by
    its repr, so -0.0 is not 0.0 (`math.copysign(1, s)` tells them apart; they compare equal)
    and a NaN is itself (NaN != NaN: each call compiled again)."""
    return type(a), repr(a)


def _int_array(a: int) -> np.ndarray:
    try:
        return np.asarray(a, dtype=np.int64)
    except OverflowError:
        raise OverflowError(f"stax.jit: Python int {a} does not fit in int64") from None


# Python scalars as the 0-d arrays kernels read, by type (the warm path picks by exact type)
# [CALL2] np.array of a bool, float or complex is its 0-d bool, float64 or complex128 (~0.2 us
# less than np.asarray with the dtype named); an int's dtype is named (overflow is an error)
_SCALARS: dict[type, Callable[[Any], np.ndarray]] = {
    bool: np.array,
    int: _int_array,
    float: np.array,
    complex: np.array,  # [E16]
}


def _as_array(a: Any) -> np.ndarray:
    """The array a kernel reads for argument `a` (Python scalars become 0-d arrays)."""
    if isinstance(a, np.ndarray):
        check_dtype(a.dtype, "an argument")
        if not a.flags.aligned or any(s % a.itemsize for s in a.strides):
            # kernels address whole elements: an unaligned array (a buffer received from the
            # network, a view into packed bytes) is read from an aligned copy
            return np.array(a, order="K")
        return a
    for kind, convert in _SCALARS.items():  # (bool before int: a subclass of it)
        if isinstance(a, kind):
            return convert(a)
    arr = np.asarray(a)
    check_dtype(arr.dtype, "an argument")
    return arr


@dataclass(frozen=True)
class Traced:
    graph: Graph
    structure: Any  # how to rebuild the return value from the flat outputs
    n_results: int
    writeback: tuple[int, ...]  # argument positions mutated inside fn (copied back)
    # Python int arguments converted to a narrower integer dtype (NEP 50: NumPy raises
    # OverflowError when the value does not fit): (position, dtype).
    narrowed_ints: tuple[tuple[int, np.dtype], ...] = ()
    static: frozenset[int] = frozenset()  # scalar arguments the trace used as Python values
    env: ShapeEnv | None = None  # a shape-generic trace's symbols and guards (issue 11)
    unsigned_ints: frozenset[int] = frozenset()  # [B16] Python ints read only as uint64
    # results that are an array argument itself, as it is at the function's end (`return x`,
    # `np.add(x, 1, out=o)`, `o += x; return o`), or views of it (`x.T`, `x[::2]`, `x[1]`,
    # `x.reshape(...)`, `z.real`, `np.diagonal(x)`): (result position, argument position,
    # NumPy's view ops from the argument);
    # the call returns the caller's array or the same views of it, as NumPy does, not copies
    returned_args: tuple[tuple[int, int, tuple[NumPyView, ...]], ...] = ()
    # [ERR] the np.errstate (keyword arguments) every call runs under: modes the function
    # sets inside itself around the ops that report them (`Builder.errstate_modes`)
    errstate: tuple[tuple[str, Any], ...] = ()
    # [HUNT6] run-time integers a returned view's index holds (`return x[i]`, i traced): the
    # key its NumPy view op reads them under in `sizes`, and their flat output position
    view_scalars: tuple[tuple[str, int], ...] = ()
    # [SPMASK] how each masked selection was compiled (`Builder.masked`), for stax.explain
    masked: tuple[str, ...] = ()

    def check_args(self, args: tuple[Any, ...]) -> None:
        """Refuse calls whose values NumPy would refuse, or whose aliasing the trace missed."""
        for i, dtype in self.narrowed_ints:
            info = np.iinfo(dtype)
            if not info.min <= args[i] <= info.max:
                raise OverflowError(f"Python integer {args[i]} out of bounds for {dtype}")
        for i in self.writeback:
            for j, other in enumerate(args):
                if j != i and isinstance(other, np.ndarray) and \
                        np.may_share_memory(args[i], other) and np.shares_memory(args[i], other):
                    raise AliasedArguments(
                        f"stax.jit: argument {i} is assigned to inside the function and "
                        f"shares memory with argument {j}; aliased arguments under mutation "
                        "are not supported (pass a copy)")


class AliasedArguments(NotImplementedError):
    """A call whose arguments share memory where the function writes one of them: the program
    assumed they do not (strict=False: the call runs in NumPy)."""


def trace(fn: Callable[..., Any], args: tuple[Any, ...], builder: Builder | None = None,
          env: ShapeEnv | None = None) -> Traced:
    """Trace `fn` on `args`; with `env`, every array dimension other than 0 and 1 is a
    symbol of `env` (a shape-generic trace, issue 11)."""
    if builder is None and not getattr(fn, "_stax_loops", False):  # H (issue 10): loops
        from stax.loops import trace_with_loops  # compiled once per body (stax.loops)

        return trace_with_loops(functools.partial(trace, env=env), fn, args)
    builder = Builder(env=env) if builder is None else builder  # SegmentBuilder: breaks (A2)
    tracers: list[Any] = []
    for i, a in enumerate(args):
        arr = _int_bits(a) if type(a) is int else _as_array(a)  # [B16] checked below
        shape: tuple[Any, ...] = arr.shape
        if env is not None and isinstance(a, np.ndarray):
            shape = tuple(env.symbol(d) if d > 1 else d for d in shape)
        value = builder.input(shape, arr.dtype)
        weak = isinstance(a, (int, float, complex)) and not isinstance(a, (bool, np.generic))
        scalar = not isinstance(a, np.ndarray)
        tracers.append(Tracer(builder, value, weak=weak,
                              concrete=(frozenset({i}), a) if scalar else None))
        tracers[-1].argument_class = type(a) if scalar else None
        tracers[-1].array0 = not scalar and arr.ndim == 0  # returned as the 0-d array it is
        if env is None and isinstance(a, np.ndarray) and not arr.flags.c_contiguous:  # [B16]
            tracers[-1].layout = builder.layouts[value.id] = tuple(s // arr.itemsize
                                                                   for s in arr.strides)
    originals = [t.value for t in tracers]
    with creating(builder):  # np.zeros(n) etc. in fn make traced arrays (A2)
        try:
            result = fn(*tracers)
        except Exception as e:
            if isinstance(e.__cause__, GraphBreak):  # [B16] NumPy made the break its own
                raise e.__cause__ from None  # error (`out[0] = x.sum()` into an ndarray)
            if builder.env is not None and builder.env.data:  # [DYN16] decided on a size's
                raise GraphBreak(e) from e  # stand-in: NumPy's values decide (a break)
            raise
    if builder.env is not None and set(builder.env.data) & set(builder.env.specialized):
        raise GraphBreak(NotImplementedError(  # [DYN16] known only at run time
            "stax.jit: the length of a data-dependent result (x[mask], np.unique, ...) used "
            "as a Python int"))
    leaves: list[Value] = []
    derived: dict[Value, Derived] = {}
    structure = _flatten(result, builder, leaves, derived)
    mutated = tuple(i for i, t in enumerate(tracers)
                    if isinstance(args[i], np.ndarray) and t.value != originals[i])
    outputs = tuple(leaves) + tuple(tracers[i].value for i in mutated)
    outputs += tuple(dict.fromkeys(  # [DYN16] each call binding a data-dependent size runs,
        op.out for op in builder.ops if op.kind == "extern" and op.out not in outputs
        and any(is_data(d) for d in op.out.shape)))  # also when only its size is used
    graph = fuse_masked_reductions(builder.graph(outputs), len(leaves) + len(mutated))  # [SEL]
    unsigned = _unsigned_ints(graph, args, originals)  # [B16]
    for i, a in enumerate(args):
        if type(a) is int and a > np.iinfo(np.int64).max and i not in unsigned:
            raise OverflowError(f"Python integer {a} out of bounds for int64")
    finals = {t.value: i for i, t in enumerate(tracers) if isinstance(args[i], np.ndarray)}
    producers = {op.out: op for op in graph.ops}
    found = {k: v for k, leaf in enumerate(leaves)
             if (v := _view_of_argument(producers, derived, leaf, finals)) is not None}
    returned = tuple((k, i, chain) for k, (i, chain, _) in found.items())
    scalars = tuple(dict.fromkeys(v for _, _, used in found.values() for v in used))
    if scalars:  # [HUNT6] the run-time index of a returned view of an argument: outputs too
        graph = replace(graph, outputs=graph.outputs + scalars)
    first = len(graph.outputs) - len(scalars)
    return Traced(graph, structure, len(leaves), mutated, _narrowed_ints(graph, args, originals),
                  frozenset(builder.static), env, unsigned, returned, builder.errstate_modes(),
                  tuple((_scalar_key(v), first + k) for k, v in enumerate(scalars)),
                  tuple(dict.fromkeys(builder.masked)))


# a value Stax computes where NumPy returns a view of another: that value, NumPy's view op, and
# the run-time integers that view op reads (`Traced.view_scalars`)
Derived = tuple[Value, NumPyView, tuple[Value, ...]]
VIEW_OPS = frozenset({"transpose", "slice", "reshape"})  # NumPy views (reshape: where it can)
PARTS = frozenset({"real", "imag"})  # `z.real`, `z.imag` of a complex array: views


def _view_of_argument(producers: dict[Value, Op], derived: dict[Value, Derived], leaf: Value,
                      finals: dict[Value, int]
                      ) -> tuple[int, tuple[NumPyView, ...], tuple[Value, ...]] | None:
    """The argument whose final version `leaf` is, or is a chain of views of (view ops, complex
    parts, and views NumPy returns that Stax computes, such as np.diagonal: `derived`), with
    NumPy's view ops from the argument and the run-time integers they read; None for anything
    else (a size known only mid-call)."""
    chain: list[NumPyView] = []
    scalars: list[Value] = []
    seen: set[Value] = set()
    while leaf not in finals:
        if leaf in seen:  # [HUNT3] a view written through, of an array made inside the
            return None  # function (`t = x * 2; v = t.T; v[0] = 1`): t's value is v's
        seen.add(leaf)  # write-back, computed from v's value: a cycle, not an argument's view
        op = producers.get(leaf)
        if leaf in derived:
            leaf, view, used = derived[leaf]
            chain.append(view)
            scalars.extend(used)
            continue
        if op is None or not (op.kind in VIEW_OPS or op.kind == "elementwise"
                              and dict(op.attrs)["fn"] in PARTS) or \
                data_atoms_in((op.out.shape, op.attrs)):
            return None
        chain.append(_numpy_view(op))
        leaf = op.inputs[0]
    return finals[leaf], tuple(reversed(chain)), tuple(scalars)


def _numpy_view(op: Op) -> NumPyView:
    """NumPy's own view op `op` (a reshape NumPy cannot view copies, as NumPy does) as a
    function of the array and the values of a shape-generic trace's symbols on this call;
    [CALL] its attributes read, and its shape and slices computed when they hold no symbol,
    once here rather than on each warm call (a view chain of 3 ops took ~4 us per call)."""
    attrs = dict(op.attrs)
    if op.kind == "transpose":
        perm = attrs["perm"]
        return lambda a, sizes: a.transpose(perm)
    if op.kind == "elementwise":
        part = attrs["fn"]
        return lambda a, sizes: getattr(a, part)
    if op.kind in ("reshape", "broadcast"):
        view = np.reshape if op.kind == "reshape" else np.broadcast_to
        if not any(isinstance(d, Sym) for d in op.out.shape):
            fixed = tuple(op.out.shape)
            return lambda a, sizes: view(a, fixed)
        return lambda a, sizes: view(a, tuple(evaluate(d, sizes) for d in op.out.shape))

    def index(sizes: Mapping[str, int]) -> tuple[slice, ...]:
        shape = (evaluate(d, sizes) for d in op.out.shape)
        starts = (evaluate(d, sizes) for d in attrs["starts"])
        return tuple(slice(start, stop if (stop := start + step * n) >= 0 else None, step)
                     for start, step, n in zip(starts, attrs["steps"], shape, strict=True))

    if not any(isinstance(d, Sym) for d in (*op.out.shape, *attrs["starts"])):
        fixed_index = index({})
        return lambda a, sizes: a[fixed_index]
    return lambda a, sizes: a[index(sizes)]


def _sizes(graph: Graph, args: tuple[Any, ...]) -> dict[str, int]:
    """The values of a shape-generic trace's symbols on this call (each an argument's size)."""
    return {d.terms[0][0][0]: n for v, a in zip(graph.inputs, args, strict=True)
            if isinstance(a, np.ndarray) for d, n in zip(v.shape, a.shape, strict=True)
            if isinstance(d, Sym)}


def _narrowed_ints(graph: Graph, args: tuple[Any, ...], inputs: list[Value]
                   ) -> tuple[tuple[int, np.dtype], ...]:
    """[B16] Python int arguments cast to another integer dtype somewhere in the graph (NumPy
    raises OverflowError when the value does not fit that dtype: NEP 50), each dtype once."""
    return tuple(dict.fromkeys(
        (i, op.out.dtype) for i, a in enumerate(args) if type(a) is int for op in graph.ops
        if op.kind == "cast" and op.inputs[0] == inputs[i] and op.out.dtype.kind in "iu"
        and op.out.dtype != np.int64))


def _unsigned_ints(graph: Graph, args: tuple[Any, ...], inputs: list[Value]) -> frozenset[int]:
    """[B16] Python int arguments read only by casts to uint64: one above int64's maximum is
    passed as the int64 with its bits (NumPy: `uint64_array + 2**63`)."""
    return frozenset(
        i for i, a in enumerate(args) if type(a) is int and inputs[i] not in graph.outputs
        and all(op.kind == "cast" and op.out.dtype == np.uint64
                for op in graph.ops if inputs[i] in op.inputs))


def _int_bits(a: int) -> np.ndarray:
    """[B16] A Python int as the 0-d int64 a kernel reads; one in [2**63, 2**64) as the int64
    with its bits (only for arguments in `Traced.unsigned_ints`)."""
    if 2**63 <= a < 2**64:
        return np.asarray(a, dtype=np.uint64).view(np.int64)
    return _int_array(a)


def write_back(traced: Traced, args: tuple[Any, ...], flat: Any) -> list[Any]:
    """[B16] Arguments mutated inside the function get their new values (and, after
    `x.shape = ...`, their new shape, as NumPy sets it on the caller's array); the function's
    flat results, a result that is an argument itself being the caller's array."""
    for k, i in enumerate(traced.writeback):
        new = flat[traced.n_results + k]
        if new is args[i]:  # [SPARSE] computed in the caller's array itself
            continue
        if args[i].shape != new.shape:
            args[i].shape = new.shape
        np.copyto(args[i], new)
    results = list(flat[: traced.n_results])
    sizes = _sizes(traced.graph, args) if traced.returned_args and traced.env else {}
    sizes.update((key, int(flat[k])) for key, k in traced.view_scalars)
    for k, i, chain in traced.returned_args:
        results[k] = functools.reduce(lambda a, view: view(a, sizes), chain, args[i])
    return results


def _scalar_key(v: Value) -> str:
    return f"@{v.id}"  # (no symbol of a shape-generic trace starts with @)


def _indexed_view(index: tuple[Any, ...], scalars: dict[int, Value]) -> NumPyView:
    """[HUNT6] NumPy's basic indexing `a[index]` whose integers at positions `scalars` are known
    only at run time (read from `sizes` under their `_scalar_key`)."""
    keys = {k: _scalar_key(v) for k, v in scalars.items()}
    fixed = tuple(None if k in keys else it for k, it in enumerate(
        index if isinstance(index, tuple) else (index,)))
    return lambda a, sizes: a[tuple(sizes[keys[k]] if k in keys else it
                                    for k, it in enumerate(fixed))]


def _record_views(obj: Tracer, derived: dict[Value, Derived]) -> None:
    """`obj` and the arrays it views, each with what it views and NumPy's view op, in
    `derived` (Stax's value of a view written through is the array's write-back source, not
    a view of it: its producers lead back to itself). A view NumPy returns and Stax computes
    (np.diagonal, ...) carries its NumPy op."""
    node = obj
    while node.view_op is not None and node.parent is not None and node.value not in derived:
        parent = node.parent
        parent.check_fresh()
        kind, attrs = node.view_op
        if (numpy := attrs.get("numpy")) is not None:
            derived[node.value] = (parent.value, lambda a, _, numpy=numpy: numpy(a), ())
        elif (scalars := attrs.get("scalars")) is not None:  # [HUNT6] x[i], i traced
            derived[node.value] = (parent.value, _indexed_view(attrs["index"], scalars),
                                   tuple(scalars.values()))
        elif (kind in VIEW_OPS or kind == "broadcast"  # np.broadcast_to's read-only view
              or kind == "elementwise" and attrs["fn"] in PARTS) and \
                not data_atoms_in((node.value.shape, attrs)):  # [HUNT3] a view written
            op = Op(kind, (parent.value,), node.value, tuple(sorted(attrs.items())))  # through
            derived[node.value] = (parent.value, _numpy_view(op), ())
        else:
            return
        node = parent


def _flatten(obj: Any, builder: Builder, leaves: list[Value], derived: dict[Value, Derived]
             ) -> Any:
    """`obj`'s structure, its arrays appended to `leaves`; results that are views NumPy returns
    and Stax computes (np.diagonal, ...) in `derived`: the value viewed and NumPy's view op."""
    if isinstance(obj, Tracer):
        obj.check_fresh()
        leaves.append(obj.value)
        _record_views(obj, derived)
        if obj.weak and obj.ndim == 0:  # [HUNT] Python operators on Python scalars (`a / 2`
            return ("py", len(leaves) - 1, _PYTHON_TYPES[obj.dtype.kind])  # ): as in Python
        if obj.ndim == 0 and obj.is_array:  # a 0-d array NumPy returns as an array: np.copy,
            return ("array", len(leaves) - 1)  # x[...], np.where, [HUNT7] a 0-d view
        return len(leaves) - 1
    if isinstance(obj, tuple):
        # a namedtuple (np.linalg.eigh's EighResult, the user's own) keeps its type (A2)
        return ("tuple", [_flatten(o, builder, leaves, derived) for o in obj],
                type(obj) if hasattr(obj, "_fields") else tuple)
    if isinstance(obj, list):
        return ("list", [_flatten(o, builder, leaves, derived) for o in obj])
    if isinstance(obj, dict):
        return ("dict", {k.python_value() if isinstance(k, Tracer) else k:  # [HUNT9] a key
                         _flatten(v, builder, leaves, derived) for k, v in obj.items()})
    if obj is None:
        return ("none",)
    if isinstance(obj, Sym):  # [DYN16] a size known at launch or mid-call: a Python int
        from stax.frontend.numpy_api import to_value

        leaves.append(to_value(builder, obj))
        return ("int", len(leaves) - 1)
    if not isinstance(obj, np.ndarray):
        # a Python or NumPy scalar, a string, a type: fixed while tracing (a value computed
        # from the data is a graph break, so it is computed on each call), returned as is (A2)
        return ("static", obj)
    from stax.frontend.numpy_api import to_value

    leaves.append(to_value(builder, obj))  # [HUNT9] a 0-d one stays an array (np.array(0.5),
    return ("array", len(leaves) - 1) if obj.ndim == 0 else len(leaves) - 1  # np.vectorize's)


def _unflatten(structure: Any, flat: tuple[np.ndarray, ...]) -> Any:
    if isinstance(structure, int):
        out = flat[structure]
        return out[()] if out.ndim == 0 else out
    kind = structure[0]
    if kind == "tuple":
        items = [_unflatten(s, flat) for s in structure[1]]
        return tuple(items) if structure[2] is tuple else structure[2](*items)
    if kind == "list":
        return [_unflatten(s, flat) for s in structure[1]]
    if kind == "dict":
        return {k: _unflatten(s, flat) for k, s in structure[1].items()}
    if kind == "int":  # [DYN16]
        return int(flat[structure[1]])
    if kind == "static":
        return structure[1]
    if kind == "py":
        return structure[2](flat[structure[1]][()])
    if kind == "array":
        return np.asarray(flat[structure[1]])  # (a view of an argument is itself)
    return None


_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


@dataclass(frozen=True)
class Compilation:
    traced: Traced
    lowered: Lowered
    schedule: Schedule
    program: CompiledProgram
    seconds: float
    backend: str = DEFAULT  # the backend that generated `program` (stax.backends)


def compile_traced(traced: Traced, arrays: list[np.ndarray], options: dict[str, Any]
                   ) -> Compilation:
    start = time.perf_counter()
    backend = get_backend(options["backend"])  # [S16] costs and limits are the backend's
    backend.prepare()  # [COMPILE] its first build's probes compile while this one lowers
    strides: list[tuple[Any, ...]] = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    if traced.env is not None and traced.env.hints:  # generic: C-contiguous inputs (issue 11)
        strides = [contiguous_strides(v.shape) for v in traced.graph.inputs]
    n_ops = len(traced.graph.ops)  # G: a progress bar on a terminal for large programs
    with progress(f"stax: compiling {n_ops} ops", 3, when=n_ops >= PROGRESS_MIN_OPS) as bar:
        graph, _ = eliminate_common_subexpressions(traced.graph)  # B (issue 9): CSE
        lowered = lower(graph, strides, backend.recompute_cost)
        bar.advance("lowered")
        sched = schedule(lowered.program, fuse=options["fuse"], pool=options["pool"],
                         rules=backend.fusion_rules(), donated=_donated(traced, lowered.program))
        bar.advance("scheduled")
        threads = options["threads"] or thread_count()
        program = build(sched, threads=threads, isa=isa_level(options["isa"]),
                        form=options["form"], backend=backend)
        bar.advance("compiled")
    return Compilation(traced, lowered, sched, program, time.perf_counter() - start,
                       options["backend"])


def _donated(traced: Traced, program: LoopProgram) -> dict[str, str]:
    """[SPARSE] Mutated arguments whose new value the program may compute in the caller's
    array itself (`stax.sched.scheduler.schedule`'s `donated`): input -> the output buffer of
    its new value, where that buffer has the input's shape, strides and dtype and is returned
    at no other position than the argument's (`return x` is the caller's array: `write_back`).
    Aliased arguments never reach the program (`Traced.check_args`). [LEAD18] None where the
    program calls an extern: a NumPy routine raising mid-call (`np.linalg.inv` of a singular
    matrix: `Jitted._raised`) or a selection's size of 0 or 1 (`DataSizeMiss`) reruns the call
    in NumPy, which must read the arguments as they were."""
    buffers, outputs = program.buffer_map, program.outputs
    donated: dict[str, str] = {}
    if any(n.kind == "extern" for n in program.nodes):
        return donated
    for k, i in enumerate(traced.writeback):
        at = traced.n_results + k
        new, old = buffers[outputs[at]], buffers[program.inputs[i]]
        returned = {r for r, j, _ in traced.returned_args if j == i}
        if new.kind == "output" and (new.shape, new.strides, new.dtype) == (
                old.shape, old.strides, old.dtype) and all(
                p == at or p in returned for p, name in enumerate(outputs) if name == new.name):
            donated[old.name] = new.name
    return donated


@dataclass
class Jitted:
    fn: Callable[..., Any]
    options: dict[str, Any]
    cache: dict[tuple[Any, ...], Compilation] = field(default_factory=dict)
    # Positions of scalar arguments some trace used as Python values: part of the cache key.
    static: frozenset[int] = frozenset()
    static_order: tuple[int, ...] = ()  # [SLOW] `static` sorted (`_fast_key` on warm calls)
    # Signatures that run with graph breaks, and the breaks met (A2, stax.frontend.breaks).
    breaks: dict[tuple[Any, ...], list[Break]] = field(default_factory=dict)
    warned: set[Break] = field(default_factory=set)
    variants: dict[Any, Jitted] = field(default_factory=dict)  # by non-array arguments
    # Per signature with breaks: [calls run segmented, segments compiled after the first
    # call, replayed calls, missed replays] (A2).
    segment_counts: dict[tuple[Any, ...], list[int]] = field(default_factory=dict)
    # [BRK] Per signature with breaks: recorded tapes that warm calls replay (newest last),
    # or why its calls are not replayed (stax.frontend.replay).
    tapes: dict[tuple[Any, ...], list[Tape]] = field(default_factory=dict)
    no_replay: dict[tuple[Any, ...], str] = field(default_factory=dict)
    # [issue 11] shape-generic programs by shape class; classes seen once (dynamic=None
    # compiles a generic program on the second shape); classes that stay specialized, why.
    generic: dict[tuple[Any, ...], list[Compilation]] = field(default_factory=dict)
    seen: set[tuple[Any, ...]] = field(default_factory=set)
    not_generic: dict[tuple[Any, ...], str] = field(default_factory=dict)
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # calls, compiles, generic
    # [H9, issue 9] warm calls: runners by the packed signature (`_packed_key`) of arguments
    # that passed a compiled wrapper's checks; empty while scalar values are part of the key
    # (with the values of static scalar arguments: `_fast_key`)
    fast: dict[Any, Callable[..., Any]] = field(default_factory=dict)
    # [GEN, issue 11] the keys of `cache` whose program is generic, least recently used first:
    # at most MAX_SHAPES (`fast` holds at most MAX_SHAPES runners, the oldest dropped first)
    shapes: OrderedDict[tuple[Any, ...], None] = field(default_factory=OrderedDict)
    # [CALL2] by (count of positional arguments, keyword names): `_by_position`'s answer
    binders: dict[tuple[int, tuple[str, ...]], tuple[tuple[str, ...], tuple[Any, ...]] | None
                  ] = field(default_factory=dict)
    # [SLOW2] `call_general`'s argument structures seen: (matcher, the variant it calls)
    matchers: list[tuple[Callable[..., Any], Jitted]] = field(default_factory=list)

    def __post_init__(self) -> None:
        functools.update_wrapper(self, self.fn)  # type: ignore[arg-type]
        _JITTED[id(self)] = self

    def clear_cache(self) -> None:
        """Forget this function's compiled programs and give back the memory they keep; their
        libraries are unloaded (dlclose) once no other function uses them."""
        for comp in [*self.cache.values(), *(c for cs in self.generic.values() for c in cs)]:
            comp.program.storage.release()
        for variant in self.variants.values():
            variant.clear_cache()
        self.cache.clear()
        self.shapes.clear()
        self.fast.clear()
        self.breaks.clear()
        self.tapes.clear()
        self.no_replay.clear()
        self.variants.clear()
        self.matchers.clear()
        self.generic.clear()
        self.seen.clear()
        self.not_generic.clear()

    def key(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        # [HUNT] a position static for a scalar may hold an array in another call: its
        # signature alone (an array's value is never specialized on, and is unhashable)
        return tuple(_arg_signature(a) + (_static_value(a),)
                     if i in self.static and not isinstance(a, np.ndarray)
                     else _arg_signature(a) for i, a in enumerate(args))

    def compile(self, *args: Any) -> Compilation:
        hit = self._cached(self.key(args))
        if hit is None:
            hit = self._generic(args) or self._compile(args, None)
            key = self.key(args)  # the key again: the trace may add static args
            self.cache[key] = hit
            env = hit.traced.env
            if env is not None and not env.fully_specialized:  # [GEN] a generic program's
                self.shapes[key] = None  # shape: kept among the MAX_SHAPES most recent
                if len(self.shapes) > MAX_SHAPES:
                    del self.cache[self.shapes.popitem(last=False)[0]]
        return hit

    def _cached(self, key: tuple[Any, ...]) -> Compilation | None:
        """The program compiled for signature `key` (or the generic one that served it)."""
        hit = self.cache.get(key)
        if hit is not None and key in self.shapes:
            self.shapes.move_to_end(key)  # [GEN] most recently used
        return hit

    def _compile(self, args: tuple[Any, ...], env: ShapeEnv | None) -> Compilation:
        try:
            traced = trace(self.fn, args, env=env)
        except GraphBreak as e:  # strict=True keeps the plain error (A2)
            if self.options["strict"]:
                raise e.error from None
            raise
        if env is not None and env.hints and any(
                op.kind == "extern" and op.attr("fn").startswith("stax.loop#")
                for op in traced.graph.ops):
            raise NotImplementedError("Python loops compiled once per body (stax.loops) are "
                                      "specialized to their shapes")
        comp = compile_traced(traced, [_int_bits(a) if i in traced.unsigned_ints  # [B16]
                                       else _as_array(a) for i, a in enumerate(args)],
                              self.options)
        if not comp.traced.static <= self.static:
            self.fast.clear()  # keyed without the values of arguments now static
        self.static |= comp.traced.static
        self.static_order = tuple(sorted(self.static))
        self.counts[1] += 1
        return comp

    def _generic(self, args: tuple[Any, ...]) -> Compilation | None:
        """[issue 11] A shape-generic program for `args`: one already compiled whose guards
        hold for these sizes, or a new one (`dynamic=True`, or `None` once the shape class has
        been seen with another shape); None means compile for this shape only."""
        dynamic = self.options["dynamic"]
        shapes = _shape_class(args) if dynamic is not False and not self.options["pool"] \
            else None
        if shapes is None:
            return None
        cls = (shapes, tuple((i, _static_value(args[i])) for i in sorted(self.static)
                             if not isinstance(args[i], np.ndarray)))
        strided = _strided(args)  # generic on the second shape only: a copy per call
        if cls in self.not_generic or not ((dynamic and not strided) or cls in self.seen):
            self.seen.add(cls)
            return None
        values = _symbol_values(args)
        for comp in self.generic.get(cls, ()):
            assert comp.traced.env is not None
            if comp.traced.env.check(values):
                return comp
        try:
            comp = self._compile(_contiguous(args), ShapeEnv())
        except (Exception, GraphBreak) as e:  # noqa: BLE001 - sizes left specialized
            self.not_generic[cls] = f"{type(e).__name__}: {e}"
            return None
        env = comp.traced.env
        assert env is not None
        if env.fully_specialized:  # every size pinned: nothing generic about it
            self.not_generic[cls] = "every size was needed as a Python int"
        elif strided and (comp.traced.writeback or comp.traced.returned_args):
            self.not_generic[cls] = ("a strided argument the function mutates or returns is "
                                     "specialized to its strides (a copy would not be the "
                                     "caller's array)")
            comp.program.storage.release()
            return None
        else:
            self.generic.setdefault(cls, []).append(comp)
            self.counts[2] += 1
        return comp

    def cache_info(self) -> CacheInfo:
        """Calls, programs compiled, and how many of those are shape-generic (issue 11)."""
        return CacheInfo(self.counts[0], self.counts[1], self.counts[2], len(self.shapes),
                         MAX_SHAPES)

    def replay_info(self) -> ReplayInfo:
        """[BRK] Calls of signatures with graph breaks: run segmented (the Python function
        traced again), replayed from a tape, replays whose guards failed; tapes kept."""
        own = (*(sum(c[k] for c in self.segment_counts.values()) for k in (0, 2, 3)),
               sum(map(len, self.tapes.values())))
        infos = [own, *(v.replay_info() for v in self.variants.values())]  # keyword calls
        return ReplayInfo(*map(sum, zip(*infos, strict=True)))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.counts[0] += 1
        if kwargs and (bound := self._positional(args, kwargs)) is not None:
            args, kwargs = bound, {}  # [CALL2] the same call by position: warm when seen
        if self.fast and not kwargs:  # [H9, issue 9] the warm path: a signature seen before
            # ([CALL2] the packed key inline where no argument is static: one frame fewer;
            # `_packed_key` is set before `fast` is filled)
            run = self.fast.get(self._fast_key(args) if self.static
                                else _packed_key(args))  # type: ignore[misc]
            if run is not None:
                try:
                    return run(*args)
                except DataSizeMiss:  # [DYN16] a count of 0 or 1, or a broken guard
                    return self.fn(*args)
                except AliasedArguments as e:  # [REVIEW] as on a cold call
                    return self._aliased(e, args)
                except np.linalg.LinAlgError as e:  # [HUNT11] as on a cold call
                    return self._raised(e, args)
        for match, variant in self.matchers:  # [SLOW2] `call_general` on a structure seen
            flat = match(args, kwargs)  # before (tuples, lists, None, dtypes): no walk
            if flat is not None:
                return variant(*flat)
        if any(map(is_dask_array, args)):  # blockwise on Dask's scheduler (stax.dask)
            return dask_call(self, args).result
        if (kwargs or not all(map(is_plain, args))) and not self.options["strict"]:
            return call_general(self, args, kwargs)  # specialized on non-array values (A2)
        if kwargs:
            raise TypeError("stax.jit: keyword arguments need strict=False")
        key = self.key(args)
        if key in self.breaks:  # runs with graph breaks (A2)
            return call_segmented(self, args, key)
        hit = self._cached(key)
        if hit is None:
            try:
                hit = self.compile(*args)
            except (GraphBreak, NotImplementedError):
                if self.options["strict"]:
                    raise
                return call_segmented(self, args, key)
        try:
            result = self._run(hit, args)
        except DataSizeMiss:  # [DYN16] a count of 0 or 1, or a broken guard: NumPy runs it
            return self.fn(*args)
        except AliasedArguments as e:
            return self._aliased(e, args)
        except np.linalg.LinAlgError as e:
            return self._raised(e, args)
        self._remember(hit, args)
        return result

    def _raised(self, error: np.linalg.LinAlgError, args: tuple[Any, ...]) -> Any:
        """[HUNT11] A NumPy routine of the compiled program (np.linalg.inv of a singular
        matrix) raised: the call runs in NumPy, where the function's own `try: ... except
        LinAlgError:` sees the error (the trace ran no such error; a compiled program let it
        escape the function); without one NumPy raises it again. A program calling an extern
        writes no argument in place (`_donated`), so NumPy reads them unchanged. strict=True:
        the error."""
        if self.options["strict"]:
            raise error
        warn_once(self, Break(f"a NumPy routine raised {type(error).__name__} inside the "
                              "compiled program", self.fn.__name__,
                              "such calls run in NumPy (a try/except of the function sees it)"), 4)
        return self.fn(*args)

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                    ) -> tuple[Any, ...] | None:
        """[CALL2] `args` with `kwargs` bound to the function's parameters by position (the
        ones between them given their defaults): the same call, which takes the warm path
        (`call_general` took ~7 us per call with keywords); None where a keyword cannot be
        passed by position (strict=True, `*args`/`**kwargs`/keyword-only parameters, a name
        the function lacks or gets twice, a missing argument): `call_general` then."""
        key = len(args), tuple(kwargs)
        try:
            rest = self.binders[key]
        except KeyError:  # [SLOW2] strict=True kept in `binders` too: one lookup per call
            rest = self.binders[key] = None if self.options["strict"] else \
                _by_position(self.fn, *key)
        return None if rest is None else (*args, *map(kwargs.get, *rest))

    def _aliased(self, error: AliasedArguments, args: tuple[Any, ...]) -> Any:
        """A call refused by `Traced.check_args` before anything ran (cold or warm): it runs in
        NumPy with a GraphBreakWarning (strict=True: the error)."""
        if self.options["strict"]:
            raise error
        warn_once(self, Break(str(error).removeprefix("stax.jit: "), self.fn.__name__,
                              "such calls run in NumPy"), 4)
        return self.fn(*args)

    def _fast_key(self, args: tuple[Any, ...]) -> Any:
        """[H9] The key of `fast`: the packed signature of `args` (None when some argument is
        not one the packed key describes); [CALL] with the type and value of each static
        scalar argument, as `key` has them (a call with another value runs another program)."""
        packed = _packed_key(args)  # type: ignore[misc]  # set before `fast` is filled
        if not self.static or packed is None:
            return packed
        return packed, *(_static_value(a) for i in self.static_order
                         if i < len(args) and type(a := args[i]) is not np.ndarray)

    def _remember(self, comp: Compilation, args: tuple[Any, ...]) -> None:
        """[H9] `args` passed `comp`'s checks: later calls with their exact signature (and
        the values of static scalar arguments) take the warm path."""
        global _packed_key
        module = fastcall()
        if module is None or comp.traced.env is not None and _strided(args):
            return  # [issue 11] a generic program's strided arguments are copied (`_run`)
        _packed_key = module.key
        key = self._fast_key(args)
        run = _proven_runner(comp, args) if key is not None else None
        if run is not None:
            run = _under_errstate(comp.traced, run)
            if len(self.fast) >= MAX_SHAPES:  # [GEN] bounded: the oldest runner goes
                del self.fast[next(iter(self.fast))]
            self.fast[key] = run

    @staticmethod
    def _run(comp: Compilation, args: tuple[Any, ...]) -> Any:
        traced = comp.traced
        traced.check_args(args)
        if traced.env is not None:  # [issue 11] a generic program reads C-contiguous arrays
            args = _contiguous(args)
        call = _under_errstate(traced, comp.program.call)  # [ERR]
        flat = call([a if isinstance(a, np.ndarray) and a.flags.aligned
                     else _int_bits(a) if i in traced.unsigned_ints  # [B16]
                     else _as_array(a) for i, a in enumerate(args)])
        return _unflatten(traced.structure, write_back(traced, args, flat))  # [B16]


_JITTED: weakref.WeakValueDictionary[int, Jitted] = weakref.WeakValueDictionary()


def clear_caches() -> None:
    """Forget every compiled program of every jitted function (and compiled segments of
    functions with graph breaks), give back all kept memory, unload libraries no longer used.
    The disk cache stays: recompiling takes a verified object from it."""
    for jitted in list(_JITTED.values()):
        jitted.clear_cache()
    SEGMENTS.clear()
    release_all()
    gc.collect()  # wrappers in reference cycles go now, and with them their libraries


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Compile a NumPy function: `@stax.jit` or `stax.jit(fn, fuse=False, isa="avx2")`.

    `backend`: the code generator (`stax.backends`; "cpu", C++ with OpenMP, is the default).

    `dynamic`: None (default) compiles for the first call's shapes, then one shape-generic
    program for the function's later shapes of the same ranks, dtypes and 0/1 dimensions
    (C-contiguous arrays); True is generic from the first call; False specializes always.

    `replay` [BRK]: warm calls of a function with graph breaks replay what its first call ran
    (compiled segments and NumPy calls) while every value its Python code saw is unchanged,
    without running the Python function (`stax.frontend.replay`); False runs it on each call
    (Python side effects between breaks, such as appending to a list, then happen each call)."""
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise TypeError(f"stax.jit: unknown option(s) {', '.join(sorted(unknown))} "
                        f"(known: {', '.join(OPTIONS)})")
    opts = OPTIONS | options
    if opts["dynamic"] not in (None, True, False):
        raise ValueError(f"stax.jit: dynamic must be None, True or False, got "
                         f"{opts['dynamic']!r}")
    if opts["replay"] not in (True, False):
        raise ValueError(f"stax.jit: replay must be True or False, got {opts['replay']!r}")
    get_backend(opts["backend"])  # an unknown name: ValueError naming the known ones
    if fn is None:
        return lambda f: Jitted(f, opts)
    if not callable(fn):
        raise TypeError("stax.jit expects a function")
    if inspect.isclass(fn):
        raise TypeError("stax.jit expects a function, not a class")
    return Jitted(fn, opts)
