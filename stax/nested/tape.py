"""A traced call recorded as a replayable program: `sn.jit` flattens once per call signature.

The flattener (`stax.nested.flatten`) is also the inspector: it runs each kernel as soon as
the kernel is formed, with the sizes of this call. While it runs under a `Tape`, every
operation on data is recorded as a *step* over slots (`record`): the kernels (compiled
once), the allocations and layouts (sized from the slots, never from this call's numbers),
the small host computations (bounds, conversions of the arguments) and the *guards*: each
decision the flattener took by looking at data (a uniform branch, a trip count, an empty
layout, a failed bounds check, a width used as a constant) is a step whose value is compared
on replay. A later call with the same signature replays the steps on its own arguments;
when a guard's value differs (or a step raises), the replay stops with `Retrace` and the
call is flattened again (which then raises the proper error, or records a program for the
new decisions).

Soundness rests on two rules, both checked: a step's inputs are slots or constants (an array
or layout that no step produced and no argument holds makes the call unreplayable:
`Tape.unreplayable`), and every read of data by the flattener goes through `record` or
`guard`. Constructs that read data otherwise call `unreplayable` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from stax.runtime.wrapper import Frame, Storage

_NO_GUARD = object()
_ALLOCATION = object()  # the `expect` of a step that allocates (`allocation`)


class Retrace(Exception):
    """A replay met a decision that differs from the recorded one: flatten the call again."""


class Tape:
    """Steps over a list of slots: `fn(*env[ins])` stored at `out` (or compared with
    `expect` for a guard)."""

    def __init__(self) -> None:
        self.steps: list[tuple[Callable[..., Any], tuple[int, ...], int, Any]] = []
        self.template: list[Any] = []  # constants in their slots, None elsewhere
        self.slots: dict[int, int] = {}  # id(object) -> slot, while recording
        self.alive: list[Any] = []  # keeps recorded objects (and their ids) alive
        self.args = 0
        self.output: Any = None  # the result's tree of slots
        self.reason: str | None = None  # why the call cannot be replayed, if it cannot
        self.effects: set[int] = set()  # steps that write into or check their inputs
        self._program: Callable[..., Any] | None = None  # the compiled replay (`_compile`)
        self._native: Callable[..., Any] | None = None  # its C form (`stax.nested.native`)
        self.fresh = False  # the result's arrays are all allocated by the program
        self._storage = Storage(0)  # the arrays replays recycle (`allocation`)
        self.dropped: list[str] = []  # the steps dead-step elimination removed, by name

    def _new(self, obj: Any, constant: bool) -> int:
        slot = len(self.template)
        self.template.append(obj if constant else None)
        self.slots[id(obj)] = slot
        self.alive.append(obj)
        return slot

    def argument(self, obj: Any) -> None:
        """The next argument leaf (bound by position on replay)."""
        assert self.args == len(self.template), "arguments come first"
        old = self.slots.get(id(obj))
        new = self._new(obj, False)
        self.args += 1
        if old is not None:  # f(x, x): the program holds for one object passed twice
            self.steps.append((_same_object, (old, new), -1, True))

    def constant(self, obj: Any) -> None:
        """An array the traced function reads from its closure or globals: captured as it is
        when the program is recorded (replays read that array object)."""
        old = self.slots.get(id(obj))
        if old is not None and self.template[old] is obj:
            return  # already this constant
        new = self._new(obj, True)
        if old is not None:  # also an argument (or computed): one object on replay too
            self.steps.append((_same_object, (old, new), -1, True))

    def unreplayable(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def slot(self, obj: Any) -> int:
        found = self.slots.get(id(obj))
        if found is not None:
            return found
        if isinstance(obj, (np.ndarray, np.generic)) or _is_data(obj):
            self.unreplayable(f"a {type(obj).__name__} computed outside the recorded program")
        return self._new(obj, True)

    def step(self, fn: Callable[..., Any], ins: tuple[Any, ...], result: Any,
             guard: bool, effect: bool = False, allocates: bool = False) -> None:
        slots = tuple(self.slot(x) for x in ins)
        if effect:
            self.effects.add(len(self.steps))
        if guard:
            self.steps.append((fn, slots, -1, result))
        else:  # a new slot even when fn returned an input (it may not on replay)
            old = self.slots.get(id(result))
            new = self._new(result, False)
            self.steps.append((fn, slots, new, _ALLOCATION if allocates else _NO_GUARD))
            if old is not None and old not in slots and (
                    isinstance(result, np.ndarray) or _is_data(result)):
                # The object is another value's too (two Ragged arguments sharing their
                # lengths): later steps name it by the new slot, which is right only while
                # both are one object.
                self.steps.append((_same_object, (old, new), -1, True))

    def finish(self, output: Any) -> None:
        """Record the result's structure; drop the steps nothing needs (below) and what only
        recording needed."""
        self.output = self._tree(output)
        live = self._live_steps()
        self.dropped = _names([st for j, st in enumerate(self.steps) if j not in live])
        self.steps = [self.steps[j] for j in sorted(live)]
        self.slots, self.alive, self.effects = {}, [], set()

    def _live_steps(self) -> set[int]:
        """Dead-step elimination: a step is kept when it is a guard or an effect (a kernel),
        or its result is read by a kept step or is part of the output. E.g. the bounds of a
        space whose kernels were all replaced by closed forms over its lengths (a cumsum
        over every segment per call)."""
        live = set(_slots_of(self.output))
        kept = set()
        for j in reversed(range(len(self.steps))):
            _, ins, out, _ = self.steps[j]
            if out < 0 or j in self.effects or out in live:
                kept.add(j)
                live.update(ins)
        return kept

    def _tree(self, v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(self._tree(x) for x in v)
        return self.slot(v)

    def summary(self) -> list[str]:
        """A name per step: "kernel", "guard <what it checks>" or the host function's."""
        return _names(self.steps)

    def replay(self, leaves: list[Any]) -> Any:
        if self._program is None:
            from stax.nested import native
            self._program = self._compile()
            translated = native.translate(self)
            if translated is not None:
                self._native, self.fresh = translated.program, translated.fresh
        if self._native is not None:
            out = self._run(self._native, leaves)
            if out is not None:
                return out
        return self._run(self._program, leaves)

    def _run(self, program: Callable[[list[Frame], list[Any]], Any], leaves: list[Any]) -> Any:
        frame: list[Frame] = []  # the call's Frame, taken at its first large allocation
        try:
            return program(frame, leaves)
        except Retrace:
            raise
        except Exception as exc:  # the flattener raises the proper error (or decides anew)
            raise Retrace from exc
        finally:
            if frame:
                self._storage.exit(frame[0])

    def _compile(self) -> Callable[..., Any]:
        """The steps as one straight-line Python function of the argument leaves (a local
        per slot, each step's function and each constant bound by name): a replay runs no
        interpreter loop over the steps."""
        names: dict[str, Any] = {"Retrace": Retrace, "allocate": _allocate,
                                 "storage": self._storage}
        leaves = "".join(f"v{j}, " for j in range(self.args))
        lines = ["def replay(frame, leaves):", f"    ({leaves}) = leaves"]
        for slot, value in enumerate(self.template[self.args:], self.args):
            names[f"v{slot}"] = value  # constants (slots computed later shadow them)
        for j, (fn, ins, out, expect) in enumerate(self.steps):
            names[f"f{j}"] = fn
            call = f"f{j}({', '.join(f'v{i}' for i in ins)})"
            if expect is _NO_GUARD:
                lines.append(f"    v{out} = {call}")
            elif expect is _ALLOCATION:
                lines.append(f"    v{out} = allocate(storage, frame, '{j}', *{call})")
            else:  # guards return Python values (bool, int, str, tuple)
                names[f"e{j}"] = expect
                lines.append(f"    if {call} != e{j}: raise Retrace")
        lines.append(f"    return {_tree_source(self.output)}")
        exec(compile("\n".join(lines), "<stax.nested replay>", "exec"), names)  # noqa: S102
        return names["replay"]


def _names(steps: list[tuple[Callable[..., Any], tuple[int, ...], int, Any]]) -> list[str]:
    names = []
    for fn, _, out, _ in steps:
        name = getattr(fn, "__name__", None) or "kernel"
        if out < 0:
            name = "guard " + name.strip("_").replace("_", " ")
        names.append(name)
    return names


def _slots_of(tree: Any) -> Iterator[int]:
    if isinstance(tree, tuple):
        for t in tree:
            yield from _slots_of(t)
    else:
        yield tree


def _same_object(a: Any, b: Any) -> bool:
    return a is b


def _tree_source(tree: Any) -> str:
    if isinstance(tree, tuple):
        return "(" + "".join(f"{_tree_source(t)}, " for t in tree) + ")"
    return f"v{tree}"


_DATA_TYPES: tuple[type, ...] = ()


def _is_data(obj: Any) -> bool:
    """Layouts and Ragged arrays: data that must come from a slot."""
    return isinstance(obj, _DATA_TYPES)


def register_data_types(*types: type) -> None:
    global _DATA_TYPES
    _DATA_TYPES = (*_DATA_TYPES, *types)


_TAPE: ContextVar[Tape | None] = ContextVar("stax_nested_tape", default=None)


@contextmanager
def recording(tape: Tape | None) -> Iterator[None]:
    token = _TAPE.set(tape)
    try:
        yield
    finally:
        _TAPE.reset(token)


def record(fn: Callable[..., Any], *ins: Any) -> Any:
    """fn(*ins), recorded as a step when a tape is recording. fn must be a pure function of
    its inputs (sizes are read from the layouts or arrays passed, never captured): a replay
    skips it when nothing reads its result. One that writes into its inputs is an `effect`."""
    return _step(fn, ins, guard=False, effect=False)


def allocation(spec: Callable[..., tuple[tuple[int, ...], np.dtype]], *ins: Any) -> np.ndarray:
    """An uninitialized array of the shape and dtype `spec(*ins)` returns. Replays take it
    from the arrays earlier replays allocated at this step once nothing else refers to them
    (the outputs the caller dropped, the intermediates), as compiled programs recycle their
    outputs (`stax.runtime.wrapper.Frame.output`): no fresh pages to fault in on each call."""
    _await(ins)
    tape = _TAPE.get()
    if tape is None:
        return np.empty(*spec(*ins))
    token = _TAPE.set(None)
    try:
        result = np.empty(*spec(*ins))
    finally:
        _TAPE.reset(token)
    tape.step(spec, ins, result, guard=False, allocates=True)
    return result


# Below this many bytes np.empty is served from malloc's heap (glibc's default mmap threshold:
# memory already mapped), and recycling would cost more (~1 us a call) than it saves.
RECYCLE_MIN_BYTES = 1 << 17


def _allocate(storage: Storage, frame: list[Frame], name: str, shape: tuple[int, ...],
              dtype: np.dtype) -> np.ndarray:
    if shape[0] * dtype.itemsize < RECYCLE_MIN_BYTES:
        return np.empty(shape, dtype)
    if not frame:
        frame.append(storage.enter())
    return frame[0].output(name, shape, dtype)


def effect(fn: Callable[..., Any], *ins: Any) -> Any:
    """`record` for a function that writes into (some of) its inputs, as a kernel does, or
    that checks them (raises a ValueError on bad data, as the lengths of an iota do): it is
    replayed whether or not anything reads its result."""
    return _step(fn, ins, guard=False, effect=True)


def _step(fn: Callable[..., Any], ins: tuple[Any, ...], guard: bool, effect: bool) -> Any:
    _await(ins)
    tape = _TAPE.get()
    if tape is None:
        return fn(*ins)
    token = _TAPE.set(None)  # what fn does inside is part of this one step
    try:
        result = fn(*ins)
    finally:
        _TAPE.reset(token)
    tape.step(fn, ins, result, guard, effect)
    return result


_WAITING: ContextVar[dict[int, tuple[Any, Callable[[], None]]] | None] = ContextVar(
    "stax_nested_waiting", default=None)


@contextmanager
def waiting() -> Iterator[None]:
    """A scope for `wait_for` (one traced call)."""
    token = _WAITING.set({})
    try:
        yield
    finally:
        _WAITING.reset(token)


def wait_for(objs: tuple[Any, ...], action: Callable[[], None]) -> None:
    """Run `action` (once) before the first step that reads one of `objs`: data that is
    valid only once a pending check has passed (e.g. the bounds of iotas whose lengths are
    not yet known to be >= 0) is never read before it."""
    table = _WAITING.get()
    assert table is not None, "wait_for outside a traced call"
    for obj in objs:
        table[id(obj)] = (obj, action)


def _await(ins: tuple[Any, ...]) -> None:
    table = _WAITING.get()
    if not table:
        return
    for x in ins:
        entry = table.get(id(x))
        if entry is not None and entry[0] is x:
            action = entry[1]
            for key in [key for key, (_, a) in table.items() if a is action]:
                del table[key]
            action()


def guard(fn: Callable[..., Any], *ins: Any) -> Any:
    """fn(*ins) (a decision taken by looking at data), checked again on replay."""
    return _step(fn, ins, guard=True, effect=False)


def unreplayable(reason: str) -> None:
    """The current call cannot be replayed (each call with this signature is flattened)."""
    tape = _TAPE.get()
    if tape is not None:
        tape.unreplayable(reason)


def recording_now() -> bool:
    return _TAPE.get() is not None


def constant(obj: Any) -> None:
    """An array the traced function reads from its closure or globals (captured)."""
    tape = _TAPE.get()
    if tape is not None:
        tape.constant(obj)
