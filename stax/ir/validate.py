"""Checks of a `LoopProgram`'s well-formedness, run by `stax.explain` and the tests.

A program is valid when:
- buffer names are unique; inputs and outputs name buffers of the right kind;
- every node writes an existing buffer that is not an input or a constant, and every buffer a
  node reads exists and, if computed, was written by an earlier node (defined before use);
- every index uses only the node's loop variables, and where its range is statically known
  (plain and floor/mod terms; a gather's index is checked at run time) it stays inside the
  elements the buffer's shape and strides address; loads under a `select` branch are exempt
  (they are valid only under their guard);
- dtypes agree: a load has its buffer's dtype, a node's value has its output buffer's dtype,
  `where`/`select` branches have the result's dtype and a boolean condition.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from stax.ir.expr import Call, Expr, Index, IndexValue, Load, bounds, walk
from stax.ir.program import Buffer, LoopProgram, Node

INDEX_FREE_REDUCTIONS = ("argmax", "argmin")  # their value is an int64 position, not the body


@dataclass(frozen=True)
class Problem:
    """One violation, by `rule` (`unknown_buffer`, `undefined_buffer`, `bad_write`,
    `duplicate_buffer`, `bad_io`, `unknown_variable`, `out_of_bounds`, `dtype`)."""

    rule: str
    where: str  # the node or buffer
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message} ({self.rule})"


class InvalidProgram(ValueError):
    """A LoopProgram that breaks the IR's invariants (a bug in Stax, not in the user's code)."""

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        super().__init__("invalid loop program (a bug in Stax):\n" +
                         "\n".join(f"  {p}" for p in problems))
        self.problems = problems


def validate(program: LoopProgram) -> tuple[Problem, ...]:
    """Every problem found (empty for a valid program)."""
    return tuple(_problems(program))


def check(program: LoopProgram) -> LoopProgram:
    """`program` unchanged if valid, else `InvalidProgram` listing the problems."""
    problems = validate(program)
    if problems:
        raise InvalidProgram(problems)
    return program


def _problems(program: LoopProgram) -> Iterator[Problem]:
    buffers: dict[str, Buffer] = {}
    for b in program.buffers:
        if b.name in buffers:
            yield Problem("duplicate_buffer", b.name, "two buffers have this name")
        buffers[b.name] = b
    for name in program.inputs:
        if name not in buffers or buffers[name].kind != "input":
            yield Problem("bad_io", name, "an input that is not an input buffer")
    for name in program.outputs:
        if name not in buffers or buffers[name].kind in ("const",):
            yield Problem("bad_io", name, "an output that is not a computed buffer")
    defined = {b.name for b in program.buffers if b.kind in ("input", "const")}
    for node in program.nodes:
        yield from _node_problems(node, buffers, defined)
        defined.add(node.out)


def _node_problems(node: Node, buffers: dict[str, Buffer], defined: set[str]
                   ) -> Iterator[Problem]:
    out = buffers.get(node.out)
    if out is None:
        yield Problem("unknown_buffer", node.name, f"writes {node.out}, which is not a buffer")
    elif out.kind in ("input", "const"):
        yield Problem("bad_write", node.name, f"writes the {out.kind} buffer {node.out}")
    for name in node.read_buffers():
        if name not in buffers:
            yield Problem("unknown_buffer", node.name, f"reads {name}, which is not a buffer")
        elif name not in defined and name != node.out:
            yield Problem("undefined_buffer", node.name, f"reads {name} before any node writes it")
    if node.body is None:
        if node.kind != "extern":
            yield Problem("bad_write", node.name, f"a {node.kind} node without a body")
        return
    ranges = node.var_ranges
    empty = node.numel == 0 or (node.kind == "reduction" and node.rnumel == 0)
    guarded = _guarded(node.body)
    for e in walk(node.body):
        if isinstance(e, Call):
            yield from _call_problems(node, e)
        if not isinstance(e, (Load, IndexValue)):
            continue
        unknown = e.index.variables() - ranges.keys()
        if unknown:
            yield Problem("unknown_variable", node.name,
                          f"index uses {', '.join(sorted(unknown))}, not loops of the node")
        buf = buffers.get(e.buf) if isinstance(e, Load) else None
        if buf is None:
            continue
        if e.dtype != buf.dtype:
            yield Problem("dtype", node.name,
                          f"loads {e.buf} as {e.dtype}, but it holds {buf.dtype}")
        if not unknown and not empty and id(e) not in guarded:
            yield from _index_problems(node, buf, e.index, ranges, "reads")
    if out is not None:
        unknown = node.out_index.variables() - ranges.keys()
        if unknown:
            yield Problem("unknown_variable", node.name,
                          f"store index uses {', '.join(sorted(unknown))}")
        elif not empty:
            yield from _index_problems(node, out, node.out_index, ranges, "writes")
        value = np.dtype(np.int64) if node.fn in INDEX_FREE_REDUCTIONS else node.body.dtype
        if value != out.dtype and node.kind != "reduction":
            yield Problem("dtype", node.name, f"stores a {value} value into {out.dtype} "
                          f"buffer {node.out}")


def _index_problems(node: Node, buf: Buffer, index: Index, ranges: dict[str, int], verb: str
                    ) -> Iterator[Problem]:
    lo, hi = bounds(index, ranges)
    first, last = _extent(buf)
    if lo < first or hi > last:
        yield Problem("out_of_bounds", node.name,
                      f"{verb} {buf.name}[{index}] over [{lo}, {hi}], but {buf.name} "
                      f"({buf.shape}, strides {buf.strides}) spans [{first}, {last}]")


def _extent(buf: Buffer) -> tuple[int, int]:
    """The element offsets a buffer's shape and strides address, inclusive."""
    if 0 in buf.shape:
        return 0, -1
    lo = sum(min(0, (n - 1) * s) for n, s in zip(buf.shape, buf.strides, strict=True))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(buf.shape, buf.strides, strict=True))
    return lo, hi


def _call_problems(node: Node, e: Call) -> Iterator[Problem]:
    if e.fn not in ("where", "select"):
        return
    cond, *branches = e.args
    if cond.dtype != np.bool_:
        yield Problem("dtype", node.name, f"{e.fn} condition is {cond.dtype}, not bool")
    for b in branches:
        if b.dtype != e.dtype:
            yield Problem("dtype", node.name, f"{e.fn} branch is {b.dtype}, result {e.dtype}")


def _guarded(body: Expr) -> set[int]:
    """Ids of the loads inside a `select`'s branches (valid only under the guard)."""
    out: set[int] = set()
    for e in walk(body):
        if isinstance(e, Call) and e.fn == "select":
            for branch in e.args[1:]:
                out.update(id(x) for x in walk(branch) if isinstance(x, Load))
    return out
