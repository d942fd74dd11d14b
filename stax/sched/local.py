"""Kernel-local buffers: an intermediate that lives only inside one fused kernel.

When every reader of a buffer sits in the kernel that writes it, and every read happens in the
same iteration of the shared outer loops as the write (which fusion already proved), the buffer
never needs to reach memory: it becomes a small array declared inside the outer loop (a row of
`exp(x - max)` in softmax, the row sum of Ex. 7.1). The wrapper does not allocate it, and the
memory plan does not count it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stax.ir.expr import Index, bounds
from stax.ir.program import LoopProgram, Node, xvars
from stax.sched.fusion import Group, dense_extent, split_index

MAX_LOCAL_BYTES = 128 * 1024  # per outer iteration, on the thread's stack


@dataclass(frozen=True)
class LocalBuffer:
    buffer: str
    kernel: str
    extent: int  # elements per outer iteration
    reason: str


def find_local_buffers(kernels: Sequence[Group], program: LoopProgram
                       ) -> tuple[LocalBuffer, ...]:
    readers: dict[str, set[str]] = {}
    for g in kernels:
        for m in g.members:
            for b in m.node.read_buffers():
                readers.setdefault(b, set()).add(g.name)
    outputs = set(program.outputs)
    buffers = program.buffer_map
    found = []
    for g in kernels:
        if g.depth == 0 or len(g.members) == 1:
            continue
        shared = set(xvars(g.depth))
        for m in g.members:
            buf = m.node.out
            if buf in outputs or readers.get(buf, set()) - {g.name}:
                continue
            split = split_index(m.node.out_index, shared)
            if split is None:
                continue
            wout, win = split
            extent = dense_extent(win, m.node.var_ranges)
            if extent is None or extent * buffers[buf].dtype.itemsize > MAX_LOCAL_BYTES:
                continue
            if all(_read_ok(r.node, buf, wout, extent, shared) for r in g.members):
                found.append(LocalBuffer(
                    buf, g.name, extent,
                    f"{buf} is written and read only inside {g.name}, within one iteration of "
                    f"its {g.depth} shared loop(s): {extent} element(s) on the stack"))
    return tuple(found)


def _read_ok(node: Node, buf: str, wout: Index, extent: int, shared: set[str]) -> bool:
    for ld in node.reads():
        if ld.buf != buf:
            continue
        split = split_index(ld.index, shared)
        if split is None or split[0] != wout:
            return False
        lo, hi = bounds(split[1], node.var_ranges)
        if lo < 0 or hi >= extent:
            return False
    return True
