"""Carried arrays updated in place: element and slice stores done by the loop driver.

A carried array whose last changes in a body are masked assignments at positions affine in
the loop indices (`A[i, j] = v`, `L[i, :i] = row`, `A[k, k:] -= ...`, recorded by
`stax.loops.affine.masked_assignment`) is not a body output: the body computes just the
stored values (a scalar, a row), and after the body's kernels the driver writes each into the
array's buffer at its offset, in the order the body assigned them (a masked slice: only its
valid part, NumPy's clamped length). Reads in the body still see the values NumPy would: every
version of the array the body reads is computed by its kernels from the buffer as it was when
the iteration began (the stores come after all of them), so no read sees a stale or early
value. The array is then neither rewritten in full (a masked `where` over all of it) nor
double-buffered: an iteration costs the stored elements, not the array's size.

Where the stores apply to a version the body computed otherwise (the result of a nested loop),
that version stays a body output (double-buffered) and the stores are written into it.

Early stores (the body in a C driver): where the stored version is read only by one nested
loop (not as its carried value) and, once the full-array versions are pruned, nothing but
that loop reads the array, the loop reads the array's buffer instead and the driver writes
the stores just before it (gramschmidt's `Q[:, k] = ...` read by its inner loop: no
full-array setitem per outer iteration). The stored values are extra inputs of the loop's
first extern, so the scheduler computes them before it.

Early stores into a nested loop's value: where the stores to the array the iteration starts
with make the version a nested loop carries (gramschmidt's `R[k, k] = v`, then the inner loop
stores `R[k, j]`), and nothing else reads that version or the array's buffer, the driver
writes them into the buffer just before the loop, which then runs in it (no full-array
`where` per iteration; the buffer is the carry's next version). Store-to-load forwarding
(`_forwarded`) first replaces a read of a stored version at exactly the element its last store
wrote by the stored value (`R[k, k]` right after `R[k, k] = v`), so such a read neither keeps
the `where` alive nor selects per element.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stax.graph import Graph, Op, Value
from stax.loops.affine import StoreForm

# constant, ((position of a 0-d int64 body input, coefficient), ...)
Form = tuple[int, tuple[tuple[int, int], ...]]


def _name(position: int) -> str:
    """A body input in explain's text: the loop index, or an enclosing index."""
    return "i" if position == 0 else f"in{position}"


@dataclass(frozen=True)
class Axis:
    """Positions `start + p*step`, `p < count`, on an axis of size `n`; `count` None: NumPy's
    clamped length of `start:stop:step` (`stop` given). `at`: an index (no value axis)."""

    start: Form
    step: int
    count: int | None
    stop: Form | None
    at: bool
    n: int


@dataclass(frozen=True)
class Store:
    value: int  # position of the stored value among the body's outputs
    shape: tuple[int, ...]  # the value's shape: one axis per axis that is not `at`
    axes: tuple[Axis, ...]

    def describe(self, name: str) -> str:
        def text(form: Form) -> str:
            terms = [f"{a}*{_name(p)}" if a != 1 else _name(p) for p, a in form[1]]
            return " + ".join([*terms, str(form[0])] if form[0] or not terms else terms)

        parts = []
        for ax in self.axes:
            if ax.at:
                parts.append(text(ax.start))
            elif ax.count is None:
                stop = text(ax.stop) if ax.stop is not None else str(ax.n)
                parts.append(f"{text(ax.start)}:{stop}" + (f":{ax.step}" if ax.step != 1 else ""))
            elif not ax.start[1] and ax.step > 0:
                stop = ax.start[0] + ax.step * ax.count
                parts.append(f"{ax.start[0]}:{stop}" + (f":{ax.step}" if ax.step != 1 else ""))
            else:
                parts.append(f"{text(ax.start)}{ax.step:+d}*[0:{ax.count}]")
        return f"{name}[{', '.join(parts)}]"


@dataclass(frozen=True)
class Carry:
    """How one carried value leaves an iteration: `output` the position of the body output
    holding its next version (None: its own buffer, updated in place), then `stores` written
    into that buffer; `how`: the decision and its reason, for explain."""

    output: int | None
    stores: tuple[Store, ...]
    how: str
    before: str = ""  # the nested loop (its extern key) the stores are written before


def plan(graph: Graph, names: Sequence[str],
         stores: Sequence[tuple[int, tuple[StoreForm, ...]]], early: bool = False,
         leading: Sequence[tuple[int, tuple[StoreForm, ...]]] = ()
         ) -> tuple[Graph, tuple[Carry, ...], Before]:
    """The body with the carried values its stores make in place left out of its outputs and
    the stored values added (dead ops pruned), how each carried value is updated, and the
    stores each nested loop starts with (`Before`). `early` (the body runs in a C driver):
    stores whose version only a nested loop reads are written just before it (`_early`),
    `leading` stores (per carried value: the version the stores to the iteration's value
    made, and those stores) whose version a nested loop carries are written into the array's
    buffer just before that loop (`_early_carried`), and fixed-position assignments whose
    version only a nested loop carries are written into that loop's buffer (`_into_nested`)."""
    position = {v.id: k for k, v in enumerate(graph.inputs)}
    values = {v.id: v for v in graph.inputs} | {op.out.id: op.out for op in graph.ops}
    made = [(final, stores[k][1][-1]) for k, final in enumerate(graph.outputs)
            if k < len(stores) and stores[k][1]] + [
        (values[m], forms[-1]) for m, forms in leading if early and forms and m in values]
    graph = Graph(graph.inputs, _forwarded(graph.ops, made), graph.outputs)
    outputs: list[Value] = []
    slot: dict[int, int] = {}  # stored values: each an output once

    def own(v: Value) -> int:  # a carried value's next version: an output of its own
        outputs.append(v)
        return len(outputs) - 1

    def stored(k: int, forms: Sequence[StoreForm]) -> tuple[tuple[Store, ...], str]:
        """Carried value k's stores (their values made outputs, once each), and explain's
        text for where they write."""
        shape = tuple(int(n) for n in graph.inputs[1 + k].shape)
        planned = []
        for f in forms:
            if f.value.id not in slot:
                slot[f.value.id] = len(outputs)
                outputs.append(f.value)
            planned.append(_store(f, slot[f.value.id], position, shape))
        return tuple(planned), " then ".join(s.describe(names[k].split(" ")[0]) for s in planned)

    plans: list[tuple[int, tuple[StoreForm, ...]] | str] = []
    for k, final in enumerate(graph.outputs):
        base, forms = stores[k] if k < len(stores) else (final.id, ())
        why = _refusal(forms, position, values, graph)
        if why is None and base not in values:
            why = "the version its stores apply to is computed outside the loop"
        plans.append(why if why is not None else (base, forms))
    versions = {final.id for final in graph.outputs} | {
        p[0] for p in plans if not isinstance(p, str)}
    carries: list[Carry] = []
    for k, p in enumerate(plans):
        if not isinstance(p, str) and any(f.value.id in versions for f in p[1]):
            p = "a stored value is the version of a carried array"
        if isinstance(p, str):
            carries.append(Carry(own(graph.outputs[k]), (), f"double-buffered because {p}"))
            continue
        base, forms = p
        target = None if base == graph.inputs[1 + k].id else own(values[base])
        planned, where = stored(k, forms)
        carries.append(Carry(target, planned, (
            f"in place: the body computes only the stored values, written after its kernels "
            f"into the array's buffer at {where} (no full-array where, no double buffer)"
            if target is None else
            f"double-buffered because the body computes its version other than by "
            f"assignments (a nested loop); the stores {where} are written into it")))
    ops = _live(graph.ops, outputs)
    for k, c in enumerate(carries):
        made, forms = leading[k] if early and k < len(leading) else (0, ())
        if forms and not c.stores and made in values and \
                _refusal(forms, position, values, graph) is None:
            moved = _early_carried(ops, outputs, graph.inputs[1 + k], graph.outputs[k],
                                   values[made], forms)
            if moved is not None:
                ops, key = moved
                planned, where = stored(k, forms)
                carries[k] = Carry(c.output, planned, (
                    f"the body's stores {where} written into the array's buffer just before "
                    f"the nested loop that carries that version, which then runs in it (early "
                    f"stores into a nested loop's value: a read of the stored element takes "
                    f"the stored value, nothing else reads the array; no full-array where)"),
                    key)
        if early and c.output is None:
            moved = _early(ops, outputs, graph.inputs[1 + k], graph.outputs[k],
                           [outputs[s.value] for s in c.stores])
            if moved is not None:
                ops, key = moved
                where = " then ".join(s.describe(names[k].split(" ")[0]) for s in c.stores)
                carries[k] = Carry(None, c.stores, (
                    f"in place: the body computes only the stored values, written into the "
                    f"array's buffer at {where} just before the nested loop that reads them "
                    f"(early stores: nothing else reads the array; no full-array where, no "
                    f"double buffer)"), key)
    before: Before = {}
    if early:
        ops, before = _into_nested(ops, outputs)
    return Graph(graph.inputs, ops, tuple(outputs)), tuple(carries), before


# per nested loop (its extern key): (position of its carried value, a store written into the
# buffer that value starts in, just before the loop runs), in order
Before = dict[str, tuple[tuple[int, Store], ...]]


def _into_nested(ops: Sequence[Op], outputs: list[Value]) -> tuple[tuple[Op, ...], Before]:
    """[ADI2] Fixed-position assignments into a nested loop's buffer: where a nested loop's
    carried value starts from `setitem(x, v)` (`p[1:N-1, 0] = 0.0` just before `for j in
    ...`) and nothing else reads that version, the loop starts from `x` and the driver writes
    `v` into the loop's buffer (its copy of `x`, or `x`'s own storage where nothing after the
    loop reads `x`) just before it: no full-array pass making the new version. The stored
    values become body outputs (`outputs`, extended) and extra inputs of the loop's first
    extern (so they are computed before it)."""
    before: dict[str, list[tuple[int, Store]]] = {}
    ops = tuple(ops)
    changed = True
    while changed:
        changed = False
        producer = {op.out.id: op for op in ops}
        keys = dict.fromkeys(op.attr("fn").rpartition(" result ")[0] for op in ops
                             if op.kind == "extern" and op.attr("fn").startswith("stax.loop#"))
        for key in keys:
            mine = sorted((op for op in ops if op.kind == "extern" and
                           op.attr("fn").startswith(f"{key} result ")),
                          key=lambda op: int(op.attr("fn").rpartition(" ")[2]))
            ids = {id(op) for op in mine}
            for p in range(len(mine)):
                made = mine[0].inputs[p]
                op = producer.get(made.id)
                if op is None or op.kind != "setitem" or op.inputs[1].dtype != made.dtype or \
                        any(v.id == made.id for v in outputs) or any(
                        v.id == made.id and not (id(r) in ids and k == p)
                        for r in ops for k, v in enumerate(r.inputs)):
                    continue  # read elsewhere: the store would change a version it sees
                x, value = op.inputs
                slot = next((k for k, v in enumerate(outputs) if v.id == value.id), None)
                if slot is None:
                    slot, _ = len(outputs), outputs.append(value)
                store = Store(slot, tuple(value.shape), tuple(
                    Axis((start, ()), step, count, None, False, n) for start, step, count, n
                    in zip(op.attr("starts"), op.attr("steps"), value.shape, made.shape,
                           strict=True)))
                before.setdefault(key, []).insert(0, (p, store))
                ops = tuple(Op(r.kind, tuple(x if v.id == made.id else v for v in r.inputs)
                               + ((value,) if r is mine[0] else ()), r.out, r.attrs)
                            if id(r) in ids else r for r in ops)
                ops, changed = _live(ops, outputs), True
                break
            if changed:
                break
    return ops, {k: tuple(v) for k, v in before.items()}


def _live(ops: Sequence[Op], outputs: Sequence[Value]) -> tuple[Op, ...]:
    """`ops` without the dead ones (the full-array versions stored in place)."""
    keep = {v.id for v in outputs}
    live: list[Op] = []
    for op in reversed(ops):
        if op.kind == "input" or op.out.id in keep:
            live.append(op)
            keep.update(v.id for v in op.inputs)
    return tuple(reversed(live))


def _early(ops: Sequence[Op], outputs: Sequence[Value], base: Value, final: Value,
           stored: Sequence[Value]) -> tuple[tuple[Op, ...], str] | None:
    """The body's ops with a nested loop reading the carried array's buffer `base` in place of
    its stored version `final` (the driver writes the stores just before the loop; the stored
    values become extra inputs of its first extern, so the scheduler computes them before
    it), and the loop's extern key; None where a version other than the loop's would see the
    early stores: `final` is read by anything but one nested loop's externs, or the array's
    old version by anything but that loop once the full-array versions are pruned."""
    readers = [op for op in ops if any(v.id == final.id for v in op.inputs)]
    keys = {op.attr("fn").rpartition(" result ")[0] if op.kind == "extern" else ""
            for op in readers}
    if len(keys) != 1 or not next(iter(keys)).startswith("stax.loop#") or any(
            v.id == final.id for v in outputs):
        return None
    (key,) = keys
    carried = sum(op.kind == "extern" and op.attr("fn").startswith(f"{key} result ")
                  for op in ops)  # the nested loop's carried values: its first inputs
    if any(v.id == final.id for op in readers for v in op.inputs[:carried]):
        return None  # its initial value: the loop may run in (and change) that storage
    rewritten = []
    for op in ops:
        if any(op is r for r in readers):
            inputs = tuple(base if v.id == final.id else v for v in op.inputs)
            if op.attr("fn").endswith(" result 0"):
                inputs += tuple(stored)
            op = Op(op.kind, inputs, op.out, op.attrs)
        rewritten.append(op)
    live = _live(rewritten, outputs)
    if any(op.attr("fn").rpartition(" result ")[0] != key if op.kind == "extern" else True
           for op in live if any(v.id == base.id for v in op.inputs)):
        return None
    return live, key


def _early_carried(ops: Sequence[Op], outputs: Sequence[Value], base: Value, final: Value,
                   made: Value, forms: Sequence[StoreForm]
                   ) -> tuple[tuple[Op, ...], str] | None:
    """The body's ops with the nested loop that carries the stored version `made` to the
    array's next version `final` started from the array's buffer `base` instead (the driver
    writes `forms` into it just before the loop; their values become extra inputs of its
    first extern), and the loop's extern key. None where anything else reads `made` (after
    `_forwarded`) or `base`: the early stores would change a version it sees."""
    (result,) = [op for op in ops if op.out.id == final.id] or [None]
    if result is None or result.kind != "extern" or \
            not result.attr("fn").startswith("stax.loop#"):
        return None
    key, _, p = result.attr("fn").rpartition(" result ")
    if result.inputs[int(p)].id != made.id or any(v.id == made.id for v in outputs):
        return None  # the loop does not carry `made` to `final`
    stored = tuple(dict.fromkeys(f.value for f in forms))
    rewritten = []
    for op in ops:
        if op.kind == "extern" and op.attr("fn").startswith(f"{key} result "):
            inputs = tuple(base if v.id == made.id else v for v in op.inputs)
            if op.attr("fn").endswith(" result 0"):
                inputs += stored
            op = Op(op.kind, inputs, op.out, op.attrs)
        rewritten.append(op)
    live = _live(rewritten, outputs)
    if any(v.id == made.id or v.id == base.id and not (
            op.kind == "extern" and op.attr("fn").startswith(f"{key} result "))
            for op in live for v in op.inputs):
        return None
    return live, key


def _forwarded(ops: Sequence[Op], made: Sequence[tuple[Value, StoreForm]]) -> tuple[Op, ...]:
    """Store-to-load forwarding: `ops` with each read of a stored version at exactly the
    element its last store wrote (`_reads_stored`) replaced by the stored value, so the
    masked `where` that made the version is not evaluated per read (`R[k, k]` after
    `R[k, k] = v`), and each slice of a fixed-position assignment's version at exactly the
    assigned region by the assigned value (`q[1:N-1, 0] = v[0, 1:N-1]` right after `v[0,
    1:N-1] = 1.0`); the reads become dead."""
    forward = {op.out.id: last.value for op in ops for version, last in made
               if _reads_stored(op, version, last)}
    assigned = {op.out.id: op for op in ops if op.kind == "setitem"}
    forward.update({op.out.id: a.inputs[1] for op in ops if op.kind == "slice" and (
        a := assigned.get(op.inputs[0].id)) is not None and
        (op.attr("starts"), op.attr("steps")) == (a.attr("starts"), a.attr("steps")) and
        op.out.shape == a.inputs[1].shape and op.out.dtype == a.inputs[1].dtype})
    return tuple(op if not any(v.id in forward for v in op.inputs) else Op(
        op.kind, tuple(forward.get(v.id, v) for v in op.inputs), op.out, op.attrs)
        for op in ops)


def _reads_stored(op: Op, made: Value, last: StoreForm) -> bool:
    """`op` reads `made` exactly at the element the store `last` (which made it) wrote, as
    an index of every axis by the same 0-d values (so also the same wrapped position)."""
    if op.kind != "take" or op.inputs[0].id != made.id or last.value.shape != () or \
            last.value.dtype != made.dtype or op.attr("axes") != tuple(range(made.ndim)) or \
            len(op.inputs) != 1 + made.ndim:
        return False
    return all(ax.at and ax.start == (0, {v.id: 1}) and v.shape == ()
               for ax, v in zip(last.axes, op.inputs[1:], strict=True))


def _refusal(forms: Sequence[StoreForm], position: dict[int, int], values: dict[int, Value],
             graph: Graph) -> str | None:
    if not forms:
        return "the body changes it other than by assignments at the index"
    for f in forms:
        if f.value.id not in values:
            return "a stored value is computed outside the body"
        for ax in f.axes:
            for form in (ax.start, ax.stop):
                if form is not None and any(
                        k not in position or graph.inputs[position[k]].shape != ()
                        or graph.inputs[position[k]].dtype != np.int64 for k in form[1]):
                    return "a store's position depends on an index the body does not receive"
    return None


def _store(f: StoreForm, value: int, position: dict[int, int], shape: tuple[int, ...]
           ) -> Store:
    def form(x: tuple[int, dict[int, int]] | None) -> Form | None:
        return None if x is None else (x[0], tuple((position[k], a) for k, a in x[1].items()))

    axes = []
    for ax, n in zip(f.axes, shape, strict=True):
        start = form(ax.start)
        assert start is not None
        axes.append(Axis(start, ax.step, ax.count, form(ax.stop), ax.at, n))
    return Store(value, tuple(int(d) for d in f.value.shape), tuple(axes))


# ---- applying stores -----------------------------------------------------------------------

def _eval(form: Form, arrays: Sequence[np.ndarray]) -> int:
    return form[0] + sum(a * int(arrays[p]) for p, a in form[1])


def _count(ax: Axis, start: int, arrays: Sequence[np.ndarray]) -> int:
    if ax.count is not None:
        return ax.count
    assert ax.stop is not None
    return -(-max(min(_eval(ax.stop, arrays), ax.n) - min(start, ax.n), 0) // ax.step)


def apply(stores: Sequence[Store], target: np.ndarray, outputs: Sequence[np.ndarray],
          inputs: Sequence[np.ndarray]) -> None:
    """The stores written into `target` (a C-contiguous array) by NumPy (the body stepped from
    Python); IndexError where a position is outside the array (never written)."""
    for s in stores:
        index: list[object] = []
        take: list[object] = []
        for ax in s.axes:
            start = _eval(ax.start, inputs)
            count = _count(ax, start, inputs)
            start = min(start, ax.n) if ax.count is None else start
            last = start + (count - 1) * ax.step
            if count and not (0 <= min(start, last) and max(start, last) < ax.n):
                raise IndexError(f"index {start if start < 0 or start >= ax.n else last} is "
                                 f"out of bounds for axis {len(index)} with size {ax.n}")
            if ax.at:
                index.append(start)
                continue
            d = len(take)
            if count > s.shape[d] != 1:
                raise IndexError(f"a stored value of length {s.shape[d]} for {count} positions")
            index.append(np.arange(count) * ax.step + start)
            take.append(slice(None) if s.shape[d] == 1 else slice(0, count))
        value = outputs[s.value][tuple(take)]
        ranges = [i for i in index if isinstance(i, np.ndarray)]
        grids = iter(np.ix_(*ranges)) if ranges else iter(())
        target[tuple(next(grids) if isinstance(i, np.ndarray) else i for i in index)] = value
