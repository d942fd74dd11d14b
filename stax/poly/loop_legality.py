"""Legality of a rolled Python loop (issue 10, item 4), checked with isl.

`stax.loops` records, while it traces a loop body, which elements of each carried array one
iteration reads and writes: per axis an index affine in the loop index (and in enclosing loop
indices, which are constant during the loop: isl parameters), a slice with affine bounds, or
the whole axis; an access it cannot describe is the whole array. Here the iteration domain is
`{ L[t] : 0 <= t < n }` (the index is `start + step*t`), the accesses are isl maps
`L[t] -> A[x...]`, and the loop-carried dependences are the pairs of iterations `t < t'` that
touch one element with at least one write:

    flow   = W . R^-1  restricted to t < t'   (t writes what t' reads)
    anti   = R . W^-1  restricted to t < t'   (t reads what t' overwrites)
    output = W . W^-1  restricted to t < t'

No carried dependence: the iterations are independent (they may run in any order, or at once:
`stax.loops.runner` runs them on OpenMP threads when every carried array is stored in place).
Otherwise the loop is sequential. Stores done in place (`stax.loops.stores`) need no check
within an iteration: they are written after all of the iteration's kernels, which compute every
read from the buffer as the iteration found it (a read of a stored element sees the stored
value through the body's own versions of the array). The C driver double-buffers each other
carried array: iteration t reads the buffer the previous iteration wrote in full and writes
the other one, which iteration t-1 read. That is legal for a loop run in order: every anti
dependence (write after read) goes from t to a later t', which starts only after t has
finished reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import islpy as isl

Form = tuple[int, tuple[tuple[str, int], ...]]  # constant, ((index name, coefficient), ...)
# An axis of an access: ("int", form) | ("slice", start form, stop form, step) | ("all",)
Axis = tuple
MAX_OPERATIONS = 200_000  # isl's budget for one loop's check


@dataclass(frozen=True)
class Access:
    """One read or write of a carried array by one iteration."""

    array: str
    write: bool
    shape: tuple[int, ...]
    region: tuple[Axis, ...] | None  # None: the whole array


@dataclass(frozen=True)
class Legality:
    parallel: bool
    dependences: tuple[str, ...]  # "flow on A: distances { ... }", ...
    double_buffering: str

    def __str__(self) -> str:
        head = ("iterations independent (no loop-carried dependence): they may run in any "
                "order or concurrently" if self.parallel else
                "sequential: loop-carried " + "; ".join(self.dependences))
        return f"{head}. Double buffering: {self.double_buffering}"


def _expr(form: Form, index: str, trip: range) -> str:
    """The form with the loop index replaced by start + step*t."""
    const, coefs = form
    terms: dict[str, int] = {}
    for name, a in coefs:
        if name == index:
            const += a * trip.start
            terms["t"] = terms.get("t", 0) + a * trip.step
        else:
            terms[name] = terms.get(name, 0) + a
    text = str(const)
    for name, a in terms.items():
        if a:
            text += f" + {a}*{name}" if a > 0 else f" - {-a}*{name}"
    return text


def _access_map(acc: Access, array: str, index: str, trip: range, params: str) -> str:
    xs = [f"x{k}" for k in range(len(acc.shape))]
    cons = [f"0 <= t < {len(trip)}"] + [f"0 <= {x} < {n}" for x, n in zip(xs, acc.shape,
                                                                          strict=True)]
    for x, axis in zip(xs, acc.region or (), strict=False):
        if axis[0] == "int":
            cons.append(f"{x} = {_expr(axis[1], index, trip)}")
        elif axis[0] == "slice":
            start, stop, step = axis[1], axis[2], axis[3]
            cons.append(f"{x} >= {_expr(start, index, trip)}")
            cons.append(f"{x} < {_expr(stop, index, trip)}")
            if step != 1:
                cons.append(f"({x} - ({_expr(start, index, trip)})) mod {step} = 0")
    return f"{params}{{ L[t] -> {array}[{', '.join(xs)}] : {' and '.join(cons)} }}"


def check_loop(index: str, trip: range, outer: Mapping[str, range],
               accesses: Sequence[Access]) -> Legality:
    """The loop-carried dependences of a loop over `trip` whose index is named `index`;
    `outer`: the enclosing indices its accesses use, with their ranges."""
    ctx = isl.Context()
    ctx.set_max_operations(MAX_OPERATIONS)
    names = sorted(outer)
    params = f"[{', '.join(names)}] -> " if names else ""
    context = " and ".join(f"{min(r[0], r[-1])} <= {p} <= {max(r[0], r[-1])}"
                           for p, r in outer.items() if len(r))
    arrays = {a: f"A{k}" for k, a in enumerate(dict.fromkeys(acc.array for acc in accesses))}
    empty = isl.UnionMap.read_from_str(ctx, f"{params}{{ }}")
    reads, writes = empty, empty
    for acc in accesses:
        m = isl.UnionMap.read_from_str(ctx, _access_map(acc, arrays[acc.array], index, trip,
                                                        params))
        if acc.write:
            writes = writes.union(m)
        else:
            reads = reads.union(m)
    later = isl.UnionMap.read_from_str(ctx, f"{params}{{ L[t] -> L[u] : t < u"
                                            f"{' and ' + context if context else ''} }}")
    found: list[str] = []
    n_anti = 0
    for kind, first, second in (("flow", writes, reads), ("anti", reads, writes),
                                ("output", writes, writes)):
        for name, label in arrays.items():
            xs = ", ".join(f"x{k}" for k in range(_rank(accesses, name)))
            pick = isl.UnionSet.read_from_str(ctx, f"{params}{{ {label}[{xs}] }}")
            dep = first.intersect_range(pick).apply_range(
                second.intersect_range(pick).reverse()).intersect(later)
            if not dep.is_empty():
                n_anti += kind == "anti"
                found.append(f"{kind} dependence on {name}: distances "
                             f"{dep.deltas().coalesce()}")
    if not found:
        buffering = ("legal: no iteration reads what another writes; each iteration writes "
                     "its whole carried buffers")
    else:
        buffering = ("legal: the iterations run in order and each writes its whole carried "
                     "buffers, so every cross-iteration dependence goes from t to a later t' "
                     f"that starts after t has finished (anti dependences: {n_anti} array(s)"
                     " - no write-after-read is left unsatisfied)")
    return Legality(not found, tuple(found), buffering)


def _rank(accesses: Sequence[Access], name: str) -> int:
    return next(len(a.shape) for a in accesses if a.array == name)
