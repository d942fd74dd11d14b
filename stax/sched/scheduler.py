"""The scheduler's full flow (seed 000 §7.6): LoopProgram -> Schedule.

1. one scheduler node per buffer, with canonical dependences (§7.1);
2. topological order; nodes whose results nobody uses are removed;
3. the quotient graph of the groups with a topological order, for the cycle check (inside
   `greedy_fusion`);
4. at most 10 rounds of greedy fusion (Algorithm 7.1);
5. kernel order chosen among four candidates for peak memory (§7.5);
6. last uses by a reverse scan, frees and buffer reuse (in `MemoryPlan`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stax.ir.program import LoopProgram
from stax.ir.sym import same_size
from stax.sched.deps import SchedulerNode, scheduler_nodes
from stax.sched.fusion import (
    FusionRecord,
    FusionRules,
    Group,
    collector_paused,
    greedy_fusion,
    single,
    topological_groups,
)
from stax.sched.local import LocalBuffer, find_local_buffers
from stax.sched.memory import MemBuffer, MemNode, MemoryPlan, plan_memory


@dataclass(frozen=True)
class Schedule:
    program: LoopProgram
    nodes: tuple[SchedulerNode, ...]
    removed: tuple[str, ...]  # "op3: result buf4 is never used"
    kernels: tuple[Group, ...]  # in execution order
    log: tuple[str, ...]
    local: tuple[LocalBuffer, ...]  # intermediates that never leave their kernel
    memory: MemoryPlan
    rules: FusionRules  # the backend's fusion rules it applied (issue 16)
    fusion: tuple[FusionRecord, ...] = ()  # the records `log` is rendered from (G)


def remove_dead(program: LoopProgram) -> tuple[LoopProgram, tuple[str, ...]]:
    """Drop nodes whose results are never read and are not outputs, in waves: first those
    nobody reads, then those read only by the nodes just dropped, and so on; a node that may
    raise (`Node.checked`) stays, as NumPy would raise there. Each buffer counts its live
    readers, so the whole is linear in the reads."""
    readers: dict[str, int] = dict.fromkeys(program.outputs, 1)  # an output is always used
    for n in program.nodes:
        for b in n.read_buffers():
            readers[b] = readers.get(b, 0) + 1
    writers: dict[str, list[int]] = {}
    for i, n in enumerate(program.nodes):
        writers.setdefault(n.out, []).append(i)
    dead: set[int] = set()
    wave = [i for i, n in enumerate(program.nodes) if not readers.get(n.out) and not n.checked]
    removed: list[str] = []
    while wave:
        dead.update(wave)
        removed += [f"{program.nodes[i].name}: result {program.nodes[i].out} is never used"
                    for i in wave]
        released: set[int] = set()
        for i in wave:
            for b in program.nodes[i].read_buffers():
                readers[b] -= 1
                if not readers[b]:
                    released.update(writers.get(b, ()))
        wave = sorted(i for i in released - dead if not program.nodes[i].checked)
    nodes = [n for i, n in enumerate(program.nodes) if i not in dead]
    kept = {n.out for n in nodes} | set(program.inputs) | {
        b.name for b in program.buffers if b.kind == "const"}
    buffers = tuple(b for b in program.buffers if b.name in kept)
    return LoopProgram(buffers, tuple(nodes), program.inputs, program.outputs,
                       program.output_shapes), tuple(removed)


def topological(nodes: Sequence[SchedulerNode]) -> tuple[SchedulerNode, ...]:
    """Lowering emits producers first; verify it rather than trust it."""
    seen: set[str] = set()
    produced = {n.node.out for n in nodes}
    for n in nodes:
        for b in n.node.read_buffers():
            if b in produced and b not in seen:
                raise AssertionError(f"{n.name} reads {b} before it is produced")
        seen.add(n.node.out)
    return tuple(nodes)


def inplace_candidates(g: Group, program: LoopProgram) -> tuple[tuple[str, str], ...]:
    """(read, written) pairs a kernel may compute in place (seed 000 §7.5, last paragraph):
    pointwise nodes over the same loops, where a node reads the buffer only at exactly the
    index it writes, with the same dtype and size, [SPARSE] the nodes before it read it only
    there too and none after it reads it, so each element is read before it is overwritten,
    in one iteration (`x[m] = f(x[m]); y[m] = g(x[m], y[m])` fused, both in place)."""
    nodes = [m.node for m in g.members]
    if any(n.kind != "pointwise" or n.ranges != nodes[0].ranges for n in nodes):
        return ()
    buffers = program.buffer_map
    pairs = []
    for k, node in enumerate(nodes):
        out = buffers[node.out]
        for buf in node.read_buffers():
            b = buffers[buf]
            if b.dtype == out.dtype and len(b.shape) == len(out.shape) and all(
                    same_size(x, y) for x, y in zip(b.shape, out.shape, strict=True)) and all(
                    ld.index == node.out_index for n in nodes[:k + 1] for ld in n.reads()
                    if ld.buf == buf) and not any(buf in n.read_buffers() for n in nodes[k + 1:]):
                pairs.append((buf, node.out))
    return tuple(pairs)


def memory_nodes(kernels: Sequence[Group], local: set[str], program: LoopProgram
                 ) -> list[MemNode]:
    out = []
    for g in kernels:
        writes = tuple(dict.fromkeys(m.node.out for m in g.members if m.node.out not in local))
        reads = tuple(dict.fromkeys(b for m in g.members for b in m.node.read_buffers()
                                    if b not in writes and b not in local))
        out.append(MemNode(g.name, reads, writes, tuple(  # not a kernel-local buffer's
            p for p in inplace_candidates(g, program) if not set(p) & local)))
    return out


def schedule(program: LoopProgram, *, fuse: bool = True, pool: bool = False,
             rules: FusionRules | None = None, donated: Mapping[str, str] | None = None
             ) -> Schedule:
    """`rules`: the backend's fusion rules (`Backend.fusion_rules()`); None: the default
    backend's (`stax.backends.DEFAULT`). [SPARSE] `donated`: input -> the output of its new
    value (a mutated argument, written back into the caller's array), which the memory plan
    may write in place of the input (`MemBuffer.becomes`) unless a node writing that output
    may raise (NumPy leaves the argument as it was)."""
    if rules is None:
        from stax.backends import DEFAULT, get_backend  # the seam sits above the scheduler
        rules = get_backend(DEFAULT).fusion_rules()
    with collector_paused():
        return _schedule(program, fuse=fuse, pool=pool, rules=rules, donated=donated or {})


def _schedule(program: LoopProgram, *, fuse: bool, pool: bool, rules: FusionRules,
              donated: Mapping[str, str]) -> Schedule:
    program, removed = remove_dead(program)
    nodes = topological(scheduler_nodes(program))
    if fuse:
        result = greedy_fusion(nodes, rules)
        kernels, log, records = result.groups, result.log, result.records
    else:
        records = ()
        position = {n.name: i for i, n in enumerate(nodes)}
        kernels, log = topological_groups([single(n) for n in nodes], position), (
            "fusion disabled",)
    local = find_local_buffers(kernels, program)
    local_names = {lb.buffer for lb in local}
    raising = {n.out for n in program.nodes if n.checked}
    buffers = {b.name: MemBuffer(b.name, b.nbytes, b.dtype.name,
                                 "input" if b.kind in ("input", "const") else
                                 "output" if b.kind == "output" else "intermediate",
                                 becomes if (becomes := donated.get(b.name)) not in raising
                                 else None)
               for b in program.buffers if b.name not in local_names}
    memory = plan_memory(memory_nodes(kernels, local_names, program), buffers, pool=pool)
    by_name = {g.name: g for g in kernels}
    ordered = tuple(by_name[name] for name in memory.order)
    return Schedule(program, nodes, removed, ordered, log, local, memory, rules, records)
