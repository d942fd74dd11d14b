"""Independent proof of the scheduler's fusion decisions with the polyhedral layer.

Each scheduler node becomes a `PolyStatement` (its loops the domain, its index expressions the
accesses) and each fused kernel a list of (statement, shared loops); `poly.verify_fusion` then
checks the fused order instance by instance (seed 000 §7.7, Prop. 7.3(2)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stax.ir.expr import FloorDiv, Index, Indirect, Mod, Var
from stax.ir.program import Buffer, Node, xvars
from stax.sched.scheduler import Schedule


@dataclass(frozen=True)
class Unverifiable:
    reason: str

    def __str__(self) -> str:
        return f"not verified: {self.reason}"


def isl_index(index: Index, rename: dict[str, str]) -> str:
    parts = []
    for atom, c in index.terms:
        if isinstance(atom, Var):
            s = rename[atom.name]
        elif isinstance(atom, FloorDiv):
            s = f"floor(({isl_index(atom.arg, rename)})/{atom.div})"
        elif isinstance(atom, Mod):
            s = f"(({isl_index(atom.arg, rename)}) mod {atom.div})"
        else:
            raise ValueError("data-dependent index")
        parts.append(f"{c}*{s}" if c != 1 else s)
    parts.append(str(index.const))
    return " + ".join(parts)


def statement(node: Node, buffers: dict[str, Buffer]) -> Any:
    from stax.poly.loop_program import PolyStatement

    names = xvars(len(node.ranges)) + tuple(f"r{k}" for k in range(len(node.reduction_ranges)))
    rename = {v: f"i{k}" for k, v in enumerate(names)}
    extents = node.ranges + node.reduction_ranges
    if node.kind == "extern":
        a, b = (buffers[n] for n in node.extern_inputs)
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise ValueError("matmul of non-2-D operands")
        (m, k), (_, n) = a.shape, b.shape
        reads = ((a.name, f"{a.strides[0]}*i0 + {a.strides[1]}*i2"),
                 (b.name, f"{b.strides[0]}*i2 + {b.strides[1]}*i1"), (node.out, f"{n}*i0 + i1"))
        return PolyStatement(node.name, (m, n, k), reads, ((node.out, f"{n}*i0 + i1"),))
    reads = []
    for ld in node.reads():
        if any(isinstance(a, Indirect) for a, _ in ld.index.terms):
            raise ValueError(f"{node.name} gathers from {ld.buf} with a data-dependent index")
        reads.append((ld.buf, isl_index(ld.index, rename)))
    write = (node.out, isl_index(node.out_index, rename))
    if node.kind == "reduction":
        reads.append(write)  # the accumulator is read and written at the output index
    return PolyStatement(node.name, extents, tuple(dict.fromkeys(reads)), (write,))


def verify_schedule(schedule: Schedule) -> Any:
    from stax.poly import verify_fusion

    buffers = schedule.program.buffer_map
    try:
        statements = [statement(m.node, buffers) for g in schedule.kernels for m in g.members]
    except ValueError as e:
        return Unverifiable(str(e))
    kernels = [[(m.name, g.depth if len(g.members) > 1 else len(m.node.ranges))
                for m in g.members] for g in schedule.kernels]
    return verify_fusion(statements, kernels)
