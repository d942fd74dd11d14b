"""A recorded program (`stax.nested.tape`) as one C call: fastcall's `replay`
(stax/runtime/fastcall.c) runs code translated here from the steps, when every step is one it
knows (below); other programs replay in Python.

What it knows are the steps of maps over plain arrays and Ragged arguments: the top layout of
an argument, the parts of a Ragged argument (its bounds, lengths and values, read as attributes
of an object of exactly that class), the conversions of an argument (`ascontiguousarray`,
`native`, int64) when they return it as it is, the range check of `iota` over int64 lengths,
the guards on sizes, on empty arrays, on equal segment lengths (`sn.map` over several
arguments), on zero lengths, on balanced segments and on the counts of failed checks a kernel
summed, allocations, kernels and the reshape of a result. Whatever the C call
cannot do as the Python steps would (a conversion that would copy, a guard that differs, a
negative length, a flag a kernel set) makes it *bail*: it returns None and the caller replays
the steps in Python, which computes what differs, raises the proper error or retraces. So the C
call only ever returns what the Python replay would have returned. STAX_NESTED_NATIVE=0 turns
it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from stax.nested import flatten as fl
from stax.nested import kernels, primitives, tape
from stax.nested.api import _ragged, _shaped
from stax.nested.expr import DTYPES
from stax.nested.ragged import Ragged
from stax.nested.spec import Layout
from stax.runtime.fast import MAX_ARGS, fastcall
from stax.tiling.plan import thread_count
from stax.tiling.threads import team

if TYPE_CHECKING:
    from stax.runtime.wrapper import Frame

ENABLED = os.environ.get("STAX_NESTED_NATIVE") != "0"
SLOTS = 256  # fastcall.c's REPLAY_SLOTS

# fastcall.c's opcodes
(TOP_LAYOUT, SAME, NOT_NEGATIVE, GUARD_FITS, ALLOC, GUARD_EMPTY, KERNEL, SHAPED, RETURN, BOUNDS,
 FROM_BOUNDS, CALL3, GUARD_ANY, ATTR, GUARD_SAME_LENGTHS, GUARD_BALANCED,
 GUARD_EMPTY_ARRAY, TOP_LENGTHS) = range(1, 19)
_ANY, _KERNEL_DTYPE = -2, -1  # SAME's dtype operand besides a typenum
_NATIVE_TYPES = sorted(np.dtype(name).num for name in DTYPES)
_RAGGED_PARTS = (fl._bounds, fl._lengths_of, fl._values_of)  # steps reading a Ragged argument

Program = Callable[[list["Frame"], list[Any]], Any]


class _Untranslatable(Exception):
    """A step or operand the C replay does not know."""


@dataclass(frozen=True)
class Native:
    """`program`: the C replay, a function of the call's frame and argument leaves returning
    the result, or None to replay in Python. `fresh`: every array of the result is one the
    program allocates, whichever way it runs (never an argument: no alias check needed)."""
    program: Program
    fresh: bool


def translate(t: tape.Tape) -> Native | None:
    """The C replay of `t`, or None when a step is one it does not know."""
    module = fastcall() if ENABLED else None
    if module is None or len(t.template) > SLOTS:
        return None
    translation = _Translation(t)
    try:
        code, consts = translation.code()
    except _Untranslatable:
        return None
    replay, planned = module.replay, thread_count()  # planned once, as a region's threads
    if planned == 1:  # no team to size (as the wrapper's calls): ~0.4 us of a warm call
        return Native(lambda frame, leaves: replay(code, consts, leaves, frame,
                                                   kernels.CHUNKS or 0), translation.fresh)
    return Native(lambda frame, leaves: replay(code, consts, leaves, frame,
                                               kernels.CHUNKS or 0, team(planned)),
                  translation.fresh)


class _Translation:
    def __init__(self, t: tape.Tape) -> None:
        self.tape = t
        self.words = [len(_NATIVE_TYPES), *_NATIVE_TYPES]
        self.consts: list[Any] = [tape._allocate, t._storage]
        self.arrays = set(range(t.args))  # slots holding arrays
        self.layouts: set[int] = set()  # slots holding layouts
        self.produced = {out for _, _, out, _ in t.steps if out >= 0}
        self.allocated: set[int] = set()  # array slots the program allocates
        self.nones: set[int] = set()  # slots of None (what kernels return)
        self.ragged: set[int] = set()  # slots of Ragged results (only returned)
        self.bounds: set[int] = set()  # slots of bounds (computed, or a Ragged argument's)
        self.top_lengths: dict[int, int] = {}  # slots of a top layout's lengths -> layout
        self.ragged_args = {ins[0] for fn, ins, _, _ in t.steps
                            if fn in _RAGGED_PARTS and ins[0] < t.args}
        self.spare = len(t.template)  # the next slot no step uses
        self.fresh = False

    def code(self) -> tuple[np.ndarray, tuple[Any, ...]]:
        for j, step in enumerate(self.tape.steps):
            self.step(j, *step)
        out = self.tape.output
        slots = out if isinstance(out, tuple) else (out,)
        if any(isinstance(s, tuple) for s in slots):
            raise _Untranslatable
        self.arrays.update(self.ragged)
        self.fresh = all(s in self.allocated for s in slots) and len(set(slots)) == len(slots)
        self.words += [RETURN, len(out) if isinstance(out, tuple) else -1,
                       *(self.array(s) for s in slots)]
        if self.spare > SLOTS:
            raise _Untranslatable
        return np.array(self.words, dtype=np.int64), tuple(self.consts)

    def step(self, j: int, fn: Any, ins: tuple[int, ...], out: int, expect: Any) -> None:
        if out < 0:
            self.guard(fn, ins, expect)
        elif expect is tape._ALLOCATION and fn is kernels._alloc:
            dtype = np.dtype(self.constant(ins[2]))
            self.allocated.add(out)
            self.emit(ALLOC, self.array_out(out), self.layout(ins[0], True), self.per(ins[1]),
                      self.const(dtype), self.const(str(j)))
        elif expect is not tape._NO_GUARD:
            raise _Untranslatable
        elif fn is fl._top_layout and ins[0] in self.ragged_args:  # len(x): its row count
            lengths = self.attr(ins[0], "lengths", self.spare)
            self.spare += 1
            self.emit(TOP_LAYOUT, self.layout_out(out), lengths)
        elif fn is fl._top_layout:
            self.emit(TOP_LAYOUT, self.layout_out(out), self.array(ins[0]))
        elif fn is fl._top_lengths and ins[0] in self.layouts:
            self.top_lengths[out] = ins[0]  # made an array only when a kernel reads it
        elif fn in (fl._bounds, fl._lengths_of) and ins[0] in self.ragged_args:
            if fn is fl._bounds:
                self.bounds.add(out)
            self.attr(ins[0], "bounds" if fn is fl._bounds else "lengths", out)
        elif fn is fl._values_of and ins[0] in self.ragged_args:
            self.emit(SAME, self.attr(ins[0], "values", out), out, _ANY, 1)
        elif fn in (np.ascontiguousarray, kernels.native, fl._int64, fl._as_int64):
            dtype = {np.ascontiguousarray: _ANY, kernels.native: _KERNEL_DTYPE}.get(
                fn, np.dtype(np.int64).num)
            self.emit(SAME, self.array_out(out), self.array(ins[0]), dtype,
                      int(fn is not fl._as_int64))
        elif fn is fl._iota_lengths and self.constant(ins[0]) == 0:
            self.emit(NOT_NEGATIVE, self.array_out(out), self.array(ins[1]))
        elif isinstance(fn, kernels._Kernel):
            self.kernel(fn, ins, out)
        elif fn is primitives.bounds_of:
            self.bounds.add(out)
            self.emit(BOUNDS, self.array_out(out), self.array(ins[0]),
                      primitives.BOUNDS_PARALLEL_MIN)
        elif fn is Layout.from_bounds and ins[0] in self.bounds:
            self.emit(FROM_BOUNDS, self.layout_out(out), self.array(ins[0]))
        elif fn is _ragged:
            self.ragged.add(out)
            self.emit(CALL3, out, self.const(Ragged.trusted), self.array(ins[0]),
                      self.array(ins[1]), self.layout(ins[2]))
        elif fn is _shaped and self.constant(ins[2]) == ():
            if ins[0] in self.allocated:
                self.allocated.add(out)
            self.emit(SHAPED, self.array_out(out), self.array(ins[0]), self.layout(ins[1], True))
        else:
            raise _Untranslatable

    def guard(self, fn: Any, ins: tuple[int, ...], expect: Any) -> None:
        if not isinstance(expect, bool):
            raise _Untranslatable
        if fn is fl._fits:
            self.emit(GUARD_FITS, self.array(ins[0]), self.layout(ins[1]), int(expect))
        elif fn is kernels._is_empty:
            self.emit(GUARD_EMPTY, self.layout(ins[0]), self.per(ins[1]), int(expect))
        elif fn is fl._any_true and ins[0] in self.allocated:
            self.emit(GUARD_ANY, self.array(ins[0]), 0, int(expect))
        elif fn is fl._any_zero:
            self.emit(GUARD_ANY, self.array(ins[0]), 1, int(expect))
        elif fn is fl._same_lengths:
            a, la, b, lb = ins
            self.emit(GUARD_SAME_LENGTHS, self.layout(a), self.lengths(la), self.layout(b),
                      self.lengths(lb), int(expect))
        elif fn is kernels._balanced:
            self.emit(GUARD_BALANCED, self.layout(ins[0]), kernels.PARALLEL_MIN, int(expect))
        elif fn is fl._is_empty_array:
            self.emit(GUARD_EMPTY_ARRAY, self.array(ins[0]), int(expect))
        else:
            raise _Untranslatable

    def kernel(self, fn: kernels._Kernel, ins: tuple[int, ...], out: int) -> None:
        entry = fn.entry
        if getattr(entry, "fast", None) is None or len(ins) - 2 + 1 > MAX_ARGS:
            raise _Untranslatable  # (called through ctypes)
        n = None if ins[1] in self.nones else self.constant(ins[1])  # None: the layout's size
        for slot in ins[2:]:
            if slot in self.top_lengths and slot not in self.arrays:
                self.emit(TOP_LENGTHS, self.array_out(slot), self.top_lengths[slot])
        self.nones.add(out)
        self.emit(KERNEL, self.const(entry.address), self.layout(ins[0], not fn.segmented),
                  int(fn.segmented), -1 if n is None else int(n), len(ins) - 2,
                  *(self.array(s) for s in ins[2:]))

    def emit(self, *words: int) -> None:
        self.words += words

    def const(self, obj: Any) -> int:
        self.consts.append(obj)
        return len(self.consts) - 1

    def constant(self, slot: int) -> Any:
        """The value of a constant slot (one no step computes)."""
        if slot < self.tape.args or slot in self.produced:
            raise _Untranslatable
        return self.tape.template[slot]

    def per(self, slot: int) -> int:
        per = self.constant(slot)
        if per not in ("n", "k"):
            raise _Untranslatable
        return int(per == "k")

    def array(self, slot: int) -> int:
        if slot not in self.arrays:
            raise _Untranslatable
        return slot

    def layout(self, slot: int, none_ok: bool = False) -> int:
        """A layout slot; -1 for the top level's (None: one iteration) where allowed."""
        if slot in self.layouts:
            return slot
        if none_ok and (slot in self.nones or self.constant(slot) is None):
            return -1
        raise _Untranslatable

    def lengths(self, slot: int) -> int:
        """A space's lengths for GUARD_SAME_LENGTHS: an array, or -1 for a top layout's."""
        return -1 if slot in self.top_lengths else self.array(slot)

    def attr(self, ragged: int, name: str, out: int) -> int:
        """`out` = the attribute `name` of the Ragged argument in slot `ragged`."""
        self.emit(ATTR, out, ragged, self.const(Ragged), self.const(name))
        return self.array_out(out)

    def array_out(self, slot: int) -> int:
        self.arrays.add(slot)
        return slot

    def layout_out(self, slot: int) -> int:
        self.layouts.add(slot)
        return slot
