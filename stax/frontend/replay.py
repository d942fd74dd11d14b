"""Replaying a function with graph breaks without running its Python (issue 16, item 6).

A segmented call (`stax.frontend.breaks`) records a *tape* as it goes: each compiled segment it
runs (`Run`: which values feed it, which it computes), each NumPy call at a break (`Call`: the
function and its arguments, traced values as `Ref`s), and a `Guard` for every value that flowed
into Python (`if x.sum() > 0`, `float()`, `.item()`, a scalar argument used as a Python int),
plus how the function's result and mutated arguments are made of the tape's values. A later
call with the same signature replays the tape: segment, NumPy, segment, ... on its arrays,
without executing the Python function. Replay is exact only while Python would take the same
path, so each guard compares the recomputed value (bit for bit) with the recorded one, a break's
array results must have the recorded shape, dtype and strides (later segments were compiled
for them), an argument NumPy did not mutate when recorded must not be mutated now, and a
Python value a NumPy call returned must be the recorded one. When any of that fails the call is
a `MISS` and runs segmented again (recording a new tape; a signature keeps MAX_TAPES, like a
guard cache). Nothing is written back to the arguments before the whole tape has run.

A tape is not recorded (`SegmentBuilder.no_replay` says why) when the Python function does
something replay would skip or cannot check: prints a traced array, draws random numbers,
gets an object Stax cannot compare from NumPy (a generator, flags), or a NumPy call raised.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stax.frontend.functions import suspended

MISS = object()  # a replay whose guards failed: the call runs segmented
MAX_TAPES = 4  # tapes kept per signature (the newest first tried)
# A signature whose calls missed every tape this often, and more often than a tape was
# replayed, stops replaying: Python decides on values that differ on nearly every call.
MAX_MISSES = 8


@dataclass(frozen=True)
class Run:
    """A compiled segment: `program` computes `outputs` from `inputs` (value ids)."""

    program: Any = field(repr=False)  # stax.runtime.wrapper.CompiledProgram
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]  # of the outputs when recorded (Python saw them)

    def run(self, env: dict[int, Any]) -> bool:
        flat = self.program.call([env[i] for i in self.inputs])
        env.update(zip(self.outputs, flat, strict=True))
        return tuple(a.shape for a in flat) == self.shapes


@dataclass(frozen=True)
class Guard:
    """A value Python saw (a branch, a float, a Python int): it must recompute bit for bit."""

    value: int
    expected: np.ndarray

    def run(self, env: dict[int, Any]) -> bool:
        return same(self.expected, np.asarray(env[self.value]))


@dataclass(frozen=True, eq=False)
class Ref:
    """A traced value among a NumPy call's arguments (`weak`: passed as the Python scalar)."""

    value: int
    weak: bool


@dataclass(frozen=True)
class Out:
    """An array a NumPy call returned: a new value of the traced program."""

    value: int
    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Viewed:
    """An array a NumPy call returned as a view of its `ref`-th argument (`np.trim_zeros`):
    traced as the same view of that argument, so it must view it alike on replay."""

    ref: int
    base: tuple[tuple[int, ...], tuple[int, ...]]  # the argument's shape and strides
    layout: tuple[Any, ...]  # `layout(argument, result)` when recorded


def views(base: np.ndarray, a: Any) -> bool:
    """`a` is `base` or a view of it (NumPy's chain of bases)."""
    while isinstance(a, np.ndarray):
        if a is base:
            return True
        a = a.base
    return False


def layout(base: np.ndarray, a: np.ndarray) -> tuple[Any, ...]:
    """Where `a`'s elements lie in `base`'s memory: byte offset, dtype, shape, and the strides
    of the dimensions longer than 1 (NumPy may give a unit dimension any stride)."""
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return (offset, a.dtype.str, a.shape,
            tuple(s if n > 1 else 0 for n, s in zip(a.shape, a.strides, strict=True)))


@dataclass(frozen=True)
class Items:
    """A tuple or list a NumPy call returned, item by item."""

    kind: type
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Seen:
    """A Python value a NumPy call returned (it went to Python: it must be the same)."""

    value: Any


@dataclass(frozen=True)
class Call:
    """A graph break: NumPy's `func` on copies of the `refs`' arrays; `rebound[k]` is the
    value that holds `refs[k]` after NumPy mutated it in place (None: not mutated)."""

    func: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    refs: tuple[Ref, ...]
    rebound: tuple[int | None, ...]
    result: Any  # Out, Viewed, Items or Seen

    @functools.cached_property
    def pure(self) -> bool:
        """A ufunc called without `out=`: it mutates nothing and returns new arrays (never a
        view of an argument), so its arguments need no copy and no check."""
        ufunc = getattr(self.func, "__self__", None)
        return isinstance(ufunc, np.ufunc) and self.func.__name__ == "__call__" and \
            len(self.args) <= ufunc.nin and "out" not in self.kwargs  # (out positionally)

    @functools.cached_property
    def flat(self) -> bool:
        """No containers among the arguments: each is a Ref or a constant."""
        return not any(isinstance(a, (tuple, list, dict))
                       for a in (*self.args, *self.kwargs.values()))

    def run(self, env: dict[int, Any]) -> bool:
        originals = [env[r.value] for r in self.refs]
        pure = self.pure
        copies = {id(r): a.item() if r.weak else a if pure else np.array(a, copy=True)
                  for r, a in zip(self.refs, originals, strict=True)}
        if self.flat:
            args = [copies[id(a)] if type(a) is Ref else a for a in self.args]
            kwargs = {k: copies[id(a)] if type(a) is Ref else a for k, a in self.kwargs.items()}
        else:
            from stax.frontend.breaks import _substitute

            args, kwargs = _substitute((self.args, self.kwargs), copies, Ref)
        result = self.func(*args, **kwargs)
        if not pure:
            for r, original, new in zip(self.refs, originals, self.rebound, strict=True):
                if new is not None:
                    env[new] = copies[id(r)]
                elif not r.weak and copies[id(r)].tobytes() != original.tobytes():
                    return False  # mutated now, not when recorded: the trace would differ
        return bind(self.result, result, env, [copies[id(r)] for r in self.refs])


@dataclass(frozen=True, eq=False)
class Known:
    """A value known when the call was recorded, the same on every call: [NPB2] the position a
    Python loop over a 1-d traced array reached (`for z in x`, `SegmentBuilder.position`), or
    [NPB3] a Python scalar constant a segment takes as an input (`SegmentBuilder.program`)."""

    value: int
    array: np.ndarray = field(repr=False)

    def run(self, env: dict[int, Any]) -> bool:
        env[self.value] = self.array
        return True


Step = Run | Guard | Call | Known


@dataclass(frozen=True)
class Tape:
    """What one segmented call did, to be done again on other arrays of its signature."""

    inputs: tuple[int, ...]  # the values of the call's arguments
    steps: tuple[Step, ...]
    traced: Any  # stax.api.Traced: outputs, result structure, arguments written back

    def count(self, kind: type) -> int:
        return sum(isinstance(s, kind) for s in self.steps)

    def describe(self) -> str:
        return (f"{self.count(Run)} compiled segments, {self.count(Call)} NumPy calls, "
                f"{self.count(Guard)} guards")

    def replay(self, args: tuple[Any, ...]) -> Any:
        """The function's result on `args`, or MISS (nothing written back then)."""
        from stax.api import _as_array, _unflatten, write_back

        traced = self.traced
        try:  # (aliased arguments under mutation: the segmented call runs NumPy)
            traced.check_args(args)
            env: dict[int, Any] = dict(zip(self.inputs, map(_as_array, args), strict=True))
            with suspended():  # NumPy's own creation functions in the NumPy calls
                for step in self.steps:
                    if not step.run(env):
                        return MISS
        except Exception:  # noqa: BLE001 - an error on another path: the trace reports it
            return MISS
        flat = [env[v.id] for v in traced.graph.outputs]
        return _unflatten(traced.structure, tuple(write_back(traced, args, flat)))


class NoReplay(Exception):  # noqa: N818 - internal signal
    """What a NumPy call returned cannot be compared on replay."""


def template(result: Any, wrapped: Any, viewed: dict[int, Viewed]) -> Any:
    """How a NumPy call's `result` became traced values (`wrapped`, see SegmentBuilder._wrap;
    `viewed`: the Tracers that view an argument, by id)."""
    from stax.frontend.trace import Tracer

    if isinstance(wrapped, Tracer) and id(wrapped) in viewed:
        return viewed[id(wrapped)]
    if isinstance(wrapped, Tracer):
        array = np.asarray(result)
        return Out(wrapped.value.id, array.shape, array.dtype, array.strides)
    if isinstance(result, (tuple, list)) and wrapped is not result:
        return Items(type(result), tuple(template(r, w, viewed)
                                         for r, w in zip(result, wrapped, strict=True)))
    if not comparable(result):
        raise NoReplay(f"a NumPy call returned a {type(result).__name__}")
    return Seen(result)


def bind(template: Any, result: Any, env: dict[int, Any],
         arguments: Sequence[Any] = ()) -> bool:
    """`result` has the recorded form: its arrays become the template's values (a view of
    one of the call's `arguments` must view it as recorded: the trace computes it so)."""
    if isinstance(template, Viewed):
        base = arguments[template.ref]
        return type(result) is np.ndarray and views(base, result) and \
            (base.shape, base.strides) == template.base and \
            layout(base, result) == template.layout
    if isinstance(template, Out):
        if not (type(result) is np.ndarray or isinstance(result, np.generic)):
            return False
        array = np.asarray(result)
        if (array.shape, array.dtype, array.strides) != \
                (template.shape, template.dtype, template.strides):
            return False  # later segments were compiled for the recorded layout
        if any(views(a, result) for a in arguments):
            return False  # a view of an argument now: traced, it would be another array
        env[template.value] = array
        return True
    if isinstance(template, Items):
        return type(result) is template.kind and len(result) == len(template.items) and \
            all(bind(t, r, env, arguments)
                for t, r in zip(template.items, result, strict=True))
    return same(template.value, result)


SCALARS = (type(None), bool, int, str, bytes, np.dtype, type, slice, type(Ellipsis))


def comparable(obj: Any) -> bool:
    """`same` can tell whether `obj` is unchanged."""
    if type(obj) is np.ndarray or isinstance(obj, np.generic):
        return obj.dtype.kind != "O"
    if isinstance(obj, (tuple, list)):
        return all(map(comparable, obj))
    if isinstance(obj, dict):
        return all(map(comparable, obj.values()))
    return isinstance(obj, (*SCALARS, float, complex))


def same(a: Any, b: Any) -> bool:
    """`a` and `b` are the same value, bit for bit (-0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(map(same, a.values(), b.values()))
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)
    return bool(a == b)


def is_random(func: Any) -> bool:
    """`func` draws random numbers (np.random's functions, a generator's methods)."""
    owner = getattr(func, "__self__", None)
    return isinstance(owner, (np.random.RandomState, np.random.Generator)) or \
        str(getattr(func, "__module__", "") or "").startswith("numpy.random")
