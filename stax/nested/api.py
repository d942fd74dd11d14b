"""The user-facing nested operations. Inside `sn.jit` they apply flattening rules to traced
values (`stax.nested.flatten`); elsewhere (and under `sn.interpret`) they run the reference
semantics on NumPy values (`stax.nested.interp`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from stax.nested import flatten as fl
from stax.nested import interp
from stax.nested.kernels import KernelRecord, deferring, kernel_log, size_of
from stax.nested.operator import check_binary
from stax.nested.ragged import Ragged
from stax.nested.spec import Layout
from stax.nested.tape import Retrace, Tape, record, recording, waiting

_INTERPRETING: ContextVar[bool] = ContextVar("stax_nested_interpreting", default=False)


def _traced() -> bool:
    return fl.tracing() and not _INTERPRETING.get()


def map(f: Callable[..., Any], *xs: Any) -> Any:
    """Apply f to the elements (rows) of xs, which must have the same length."""
    if not xs:
        raise TypeError("stax.nested: sn.map needs at least one array")
    return fl.map_(f, xs) if _traced() else interp.map(f, *xs)


def reduce(op: Any, ne: Any, xs: Any) -> Any:
    """Reduce with an associative operator (a ufunc or a function of two values; tuples of
    arrays for tuple operators) whose neutral element is ne."""
    check_binary(op)
    if _traced():
        rows = xs if isinstance(xs, tuple) else (xs,)
        out = fl.reduce_rows(op, ne, rows)
        return out if isinstance(xs, tuple) else out[0]
    return interp.reduce(op, ne, xs)


def scan(op: Any, ne: Any, xs: Any) -> Any:
    """Inclusive scan with an associative operator and its neutral element."""
    check_binary(op)
    if _traced():
        rows = xs if isinstance(xs, tuple) else (xs,)
        out = fl.scan_rows(op, ne, rows)
        return out if isinstance(xs, tuple) else out[0]
    return interp.scan(op, ne, xs)


def iota(n: Any) -> Any:
    """[0, 1, ..., n-1] (int64); a negative n is a ValueError."""
    return fl.iota(n) if _traced() else interp.iota(n)


def range(start: Any, stop: Any, step: Any = 1) -> Any:  # noqa: A001
    """start, start+step, ... up to stop (exclusive), as Futhark's start..start+step..<stop."""
    return fl.range_(start, stop, step) if _traced() else interp.range(start, stop, step)


def replicate(n: Any, v: Any) -> Any:
    """n copies of the scalar v."""
    return fl.replicate(n, v) if _traced() else interp.replicate(n, v)


def concat(a: Any, b: Any) -> Any:
    return fl.concat(a, b) if _traced() else interp.concat(a, b)


def scatter(dest: Any, idx: Any, vals: Any) -> Any:
    """A copy of dest with dest[idx[j]] = vals[j]; out-of-range indices are ignored."""
    return fl.scatter(dest, idx, vals) if _traced() else interp.scatter(dest, idx, vals)


def cond(c: Any, then_fn: Callable[..., Any], else_fn: Callable[..., Any], *args: Any) -> Any:
    """then_fn(*args) if c else else_fn(*args). Both branches must return the same types (as
    in Futhark); inside a map, each runs only on the iterations that take it."""
    return fl.cond(c, then_fn, else_fn, args) if _traced() else \
        interp.cond(c, then_fn, else_fn, *args)


def loop(n: Any, body: Callable[[Any, Any], Any], init: Any) -> Any:
    """acc = init; for i in range(n): acc = body(i, acc)."""
    return fl.loop(n, body, init) if _traced() else interp.loop(n, body, init)


def length(row: Any) -> Any:
    """The length of a row (a traced value inside maps over irregular rows)."""
    return fl.length(row) if _traced() else interp.length(row)


def interpret(fn: Callable[..., Any], *args: Any) -> Any:
    """Run fn with the reference semantics (one iteration at a time, in Python)."""
    token = _INTERPRETING.set(True)
    try:
        return fn(*args)
    finally:
        _INTERPRETING.reset(token)


@dataclass(frozen=True)
class Run:
    """What one call of a jitted function did: rules applied and kernels launched."""
    rules: tuple[tuple[str, str], ...]
    kernels: tuple[KernelRecord, ...]


class CacheInfo(NamedTuple):
    """`f.cache_info()` of an `sn.jit` function: calls; flattenings (each records a program
    for its call signature, or re-records it when a replay's guard fails); calls served by
    replaying a recorded program; calls flattened because their program cannot be replayed
    (`f.unreplayable` says why)."""
    calls: int
    compiles: int
    replays: int
    uncached: int


@dataclass
class _Programs:
    """What a call signature maps to: recorded programs (one per set of decisions the data
    took, most recently used first), or why its calls cannot be replayed."""
    tapes: list[tuple[Tape, Run]]
    reason: str | None = None


KEEP = 4  # programs kept per call signature (e.g. empty and non-empty inputs)
SIGNATURES = 128  # call signatures kept per function (scalar arguments are part of them)


class Jitted:
    """A nested function compiled by flattening (see `stax.nested.flatten`). The first call
    with a signature (per argument: Ragged or array, dtype, rank, inner dimensions; scalars
    by value) flattens it and records the program (`stax.nested.tape`); later calls with that
    signature replay it on their own data, whatever its sizes."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.last_run: Run | None = None
        self.programs: dict[Any, _Programs] = {}
        self.counts = [0, 0, 0, 0]
        functools.update_wrapper(self, fn)

    def cache_info(self) -> CacheInfo:
        return CacheInfo(*self.counts)

    @property
    def unreplayable(self) -> dict[Any, str]:
        """Per call signature whose calls are each flattened: the reason."""
        return {k: p.reason for k, p in self.programs.items() if p.reason is not None}

    def __call__(self, *args: Any) -> Any:
        self.counts[0] += 1
        leaves: list[Any] = []
        key = _signature(args, leaves)
        entry = self.programs.get(key) if key is not None else None
        if entry is not None and entry.reason is not None:
            self.counts[3] += 1
            result, self.last_run = self.run(*args)
            return result
        if entry is not None:
            for j, (tape, run) in enumerate(entry.tapes):
                try:
                    out = tape.replay(leaves)
                except Retrace:
                    continue
                if j:
                    entry.tapes.insert(0, entry.tapes.pop(j))
                self.counts[2] += 1
                self.last_run = run
                return out if tape.fresh else _fresh(out, _arrays(args))
        tape = Tape() if key is not None else None
        result, run = self._trace(args, tape)
        self.counts[1] += 1
        if tape is not None:
            if key not in self.programs and len(self.programs) >= SIGNATURES:
                del self.programs[next(iter(self.programs))]  # the oldest signature
            if tape.reason is not None:
                self.programs[key] = _Programs([], tape.reason)
            else:
                entry = self.programs.setdefault(key, _Programs([]))
                entry.tapes[:] = [(tape, run), *entry.tapes[:KEEP - 1]]
        self.last_run = run
        return result

    def run(self, *args: Any) -> tuple[Any, Run]:
        """Flatten and run one call (nothing recorded): the result and what it did."""
        return self._trace(args, None)

    def _trace(self, args: tuple[Any, ...], tape: Tape | None) -> tuple[Any, Run]:
        trace = fl.Trace()
        token = fl._TRACE.set(trace)
        try:
            root = fl.Space(None, None)
            # recording outermost: the deferred kernels run by `deferring`'s end are recorded
            with recording(tape), waiting(), fl.in_space(root), kernel_log() as log, \
                    deferring():
                if tape is not None:
                    leaves: list[Any] = []
                    _signature(args, leaves)
                    for leaf in leaves:
                        tape.argument(leaf)
                traced = [_argument(a, root) for a in args]
                out = self.fn(*traced)
                out = _output(out)  # materializing fuses the checks over a value's space
                fl.flush_checks()
            if tape is not None:
                tape.finish(out)
            result = _fresh(out, _arrays(args))
        finally:
            fl._TRACE.reset(token)
        return result, Run(tuple(trace.rules), tuple(log))


def jit(fn: Callable[..., Any]) -> Jitted:
    """Compile a nested function: each call flattens it into segmented kernels."""
    return fn if isinstance(fn, Jitted) else Jitted(fn)


def _signature(args: tuple[Any, ...], leaves: list[Any]) -> tuple[Any, ...] | None:
    """What a recorded program is specialized on: per argument Ragged or array, dtype, rank
    and the dimensions after the first (the lengths are run-time values); Python and NumPy
    scalars by value (they are constants of the kernels). None: not cacheable. Appends the
    arrays and Ragged arguments to `leaves`, in order (a recorded program's inputs: one pass
    over the arguments for a warm call)."""
    out: list[Any] = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append((0, a.dtype, a.shape[1:] if a.ndim else None))
            leaves.append(a)
        elif isinstance(a, Ragged):
            out.append((1, a.values.dtype, a.values.shape[1:]))
            leaves.append(a)
        elif isinstance(a, (bool, int, float)):
            out.append((type(a), a if a == a else "nan"))  # every NaN is one key
        elif isinstance(a, np.generic):
            v = a.item()
            out.append((a.dtype, v if v == v else "nan"))
        elif isinstance(a, tuple):
            inner = _signature(a, leaves)
            if inner is None:
                return None
            out.append(inner)
        else:
            return None
    return tuple(out)


def _argument(a: Any, root: fl.Space) -> Any:
    if isinstance(a, tuple):
        return tuple(_argument(x, root) for x in a)
    if isinstance(a, (np.ndarray, Ragged)):
        return fl.from_array(a, root)
    if isinstance(a, (bool, int, float, np.generic)):
        return a
    if isinstance(a, list):
        raise TypeError("stax.nested: pass NumPy arrays or sn.Ragged, not lists "
                        "(use np.asarray or sn.Ragged.from_list)")
    raise TypeError(f"stax.nested: unsupported argument of type {type(a).__name__}")


def _arrays(args: Any) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for a in args:
        if isinstance(a, tuple):
            out += _arrays(a)
        elif isinstance(a, Ragged):
            out += [a.values, a.lengths]
        elif isinstance(a, np.ndarray):
            out.append(a)
    return out


def _fresh(v: Any, inputs: list[np.ndarray]) -> Any:
    """Results never alias the arguments (an identity map returns a copy, as NumPy would)."""
    if isinstance(v, tuple):
        return tuple(_fresh(x, inputs) for x in v)
    if isinstance(v, Ragged):
        values, lengths = _fresh(v.values, inputs), _fresh(v.lengths, inputs)
        if values is v.values and lengths is v.lengths:
            return v
        # copies only what aliases (often just the lengths, with their bounds)
        bounds = v.bounds if lengths is v.lengths else v.bounds.copy()
        return Ragged.trusted(values, lengths, bounds)
    if isinstance(v, np.ndarray) and any(np.may_share_memory(v, a) for a in inputs):
        return v.copy()
    return v


def _output(v: Any) -> Any:
    if isinstance(v, tuple):
        return tuple(_output(x) for x in v)
    v = fl.to_traced(v)
    if isinstance(v, fl.Scalar):
        if v.space is None or v.space.parent is not None:
            raise ValueError("stax.nested: a value escapes the map that computes it")
        return record(_item, fl.materialize(v))
    if isinstance(v, fl.Row):
        return _row_output(v)
    return np.asarray(v)[()]


def _item(a: np.ndarray) -> Any:
    return a[0]


def _row_output(row: fl.Row) -> np.ndarray | Ragged:
    lead, widths = row.space.layout, []
    v: Any = row.elem
    ragged = None
    while isinstance(v, fl.Row):
        if v.space.width is not None:
            widths.append(v.space.width)
        elif ragged is None and not widths:
            ragged, lead = v.space, v.space.layout
        else:
            raise NotImplementedError("stax.nested: results whose inner rows are irregular "
                                      "(ragged arrays of ragged arrays) cannot be returned")
        v = v.elem
    values = record(_shaped, fl.materialize(v), lead, tuple(widths))
    if ragged is not None:
        return record(_ragged, values, ragged.lengths, ragged.layout)
    return values


def _shaped(values: np.ndarray, lead: Layout, widths: tuple[int, ...]) -> np.ndarray:
    return values.reshape(size_of(lead), *widths)


def _ragged(values: np.ndarray, lengths: np.ndarray, layout: Layout) -> Ragged:
    return Ragged.trusted(values, lengths, layout.bounds)


@dataclass(frozen=True)
class Explanation:
    """`sn.explain`: the nested program, the flattening rules applied, the flat program (the
    kernels launched, in order), what later calls with the same signature replay, and the
    kernels' C++."""
    source: str
    run: Run
    replay: str = ""

    def __str__(self) -> str:
        rules = "\n".join(f"- {rule}: {detail}" for rule, detail in self.run.rules)
        flat = "\n".join(f"{j}. {k.kind}: {k.summary}" for j, k in enumerate(self.run.kernels))
        kernels = "\n\n".join(f"// kernel {j} ({k.kind}: {k.summary})\n{k.body}"
                                for j, k in enumerate(self.run.kernels))
        return "\n\n".join(f"== {title} ==\n{body or 'none'}" for title, body in (
            ("Nested program", self.source), ("Flattening rules applied", rules),
            ("Flat program (segmented kernels, in launch order)", flat),
            ("Recorded program (replayed by later calls with this signature)", self.replay),
            ("Kernels (C++, shared prelude omitted)", kernels)))


def explain(fn: Callable[..., Any] | Jitted, *args: Any) -> Explanation:
    jitted = jit(fn)
    try:
        source = inspect.getsource(jitted.fn)
    except (OSError, TypeError):
        source = repr(jitted.fn)
    key = _signature(args, [])
    tape = Tape() if key is not None else None
    _, run = jitted._trace(args, tape)
    return Explanation(source.strip(), run, _describe_replay(key, tape))


def _describe_replay(key: Any, tape: Tape | None) -> str:
    if tape is None:
        return "none: an argument's type cannot be part of a call signature (flattened per call)"
    if tape.reason is not None:
        return f"none: {tape.reason} (each call with this signature is flattened)"
    counts: dict[str, int] = {}
    for name in tape.summary():
        counts[name] = counts.get(name, 0) + 1
    kernels = counts.pop("kernel", 0)
    guards = {k[6:]: v for k, v in counts.items() if k.startswith("guard ")}
    host = sum(v for k, v in counts.items() if not k.startswith("guard "))
    dropped: dict[str, int] = {}
    for name in tape.dropped:
        dropped[name] = dropped.get(name, 0) + 1
    return (f"signature {key}: {len(tape.steps)} steps: {kernels} kernel launches, {host} "
            f"allocations and host steps (layouts, bounds, argument conversions), "
            f"{sum(guards.values())} guards re-checked on every call (a different value "
            f"flattens again): " + ", ".join(f"{k} x{v}" for k, v in guards.items())
            + f"; dead-step elimination: {len(tape.dropped)} recorded steps nothing reads are "
            f"not replayed" + "".join(f", {k.strip('_')} x{v}" for k, v in dropped.items()))
