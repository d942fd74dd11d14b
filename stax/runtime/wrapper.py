"""The generated Python wrapper (seed 000 §8.5) and the compiled-program object.

The wrapper checks input shapes, strides and dtypes against what the kernels assume, allocates
buffers, calls the kernels in the scheduled order, frees each buffer after its last use (or hands
its storage to a later buffer: `buf5 = buf2.reshape(...); del buf2  # reuse`), runs extern calls
(matmul through NumPy's BLAS), turns kernel error flags into NumPy's warnings and errors, and
returns the outputs.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stax.codegen.cpp import print_module, region_params
from stax.ir.program import Buffer
from stax.runtime.compiler import Compiled, compile_source
from stax.runtime.externs import EXTERNS
from stax.sched.fusion import Group
from stax.sched.memory import Reuse
from stax.sched.scheduler import Schedule
from stax.tiling.plan import KernelPlan, plan_kernel

FLAG_MESSAGES = (
    (RuntimeWarning, "divide by zero encountered in floor_divide"),
    (RuntimeWarning, "divide by zero encountered in remainder"),
    (IndexError, "index out of bounds in a gather (np.take / take_along_axis / x[idx])"),
    (ValueError, "Integers to negative integer powers are not allowed."),
    (RuntimeWarning, "invalid value encountered in cast"),
)


ANY_FLAG = 7  # kernels also set this one, so the wrapper checks a single element


class FlagBuffer(threading.local):
    """Error flags for kernel calls, one buffer per Python thread (ctypes releases the GIL)."""

    def __init__(self) -> None:
        self.flags = (ctypes.c_int32 * 8)()
        self.address = ctypes.addressof(self.flags)


def check_flags(flags: ctypes.Array) -> None:  # type: ignore[type-arg]
    raised = [(kind, message) for k, (kind, message) in enumerate(FLAG_MESSAGES) if flags[k]]
    for k in range(len(flags)):
        flags[k] = 0
    for kind, message in raised:
        if issubclass(kind, Warning):
            warnings.warn(message, kind, stacklevel=3)
        else:
            raise kind(message)


def assert_input(arr: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype, name: str) -> None:
    if arr.shape != shape or arr.dtype != dtype or arr.strides != strides:
        raise ValueError(
            f"stax: input {name} has shape {arr.shape}, strides {arr.strides}, dtype "
            f"{arr.dtype}; the compiled kernels assume shape {shape}, strides {strides}, "
            f"dtype {dtype}")


@dataclass(frozen=True)
class CompiledProgram:
    call: Callable[[list[np.ndarray]], tuple[np.ndarray, ...]]
    plans: tuple[KernelPlan, ...]
    cpp: str
    wrapper: str
    library: Compiled | None


def _byte_strides(buf: Buffer) -> tuple[int, ...]:
    return tuple(s * buf.dtype.itemsize for s in buf.strides)


class Scratch(threading.local):
    """Intermediate buffers kept across calls, per Python thread: repeated calls reuse the
    same (already faulted-in) pages instead of allocating fresh ones. Outputs are always
    fresh arrays, since the caller keeps them."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        arr = self.arrays.get(name)
        if arr is None:
            arr = self.arrays[name] = np.empty(shape, dtype)
        return arr


class Pool(threading.local):
    """With `pool=True`: every intermediate lives at a fixed offset of one byte array per
    thread, laid out by the inference pool planner (stax.sched.pool)."""

    def __init__(self, size: int) -> None:
        self.storage = np.empty(max(size, 1), np.uint8)

    def get(self, offset: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return self.storage[offset:offset + nbytes].view(dtype).reshape(shape)


class OutputPool(threading.local):
    """Outputs recycled once the caller has dropped them, like PyTorch's caching allocator.

    Each output slot keeps up to OUTPUT_POOL_DEPTH base arrays; the caller receives a view of
    one. A base is handed out again only when nothing but this pool refers to it (CPython's
    reference count: every view the caller kept holds a reference to its base), so reused
    memory is already mapped and no page faults are paid for fresh pages."""

    DEPTH = 2

    def __init__(self) -> None:
        self.slots: dict[str, list[np.ndarray]] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        bases = self.slots.setdefault(name, [])
        for k in range(len(bases)):
            # referenced by the list and by getrefcount's argument only: free to reuse
            if sys.getrefcount(bases[k]) == 2:
                return bases[k].view()
        base = np.empty(shape, dtype)
        if len(bases) < self.DEPTH:
            bases.append(base)
        return base.view()


def build(schedule: Schedule, *, threads: int, isa: str, form: str | None = None
          ) -> CompiledProgram:
    vectorize = isa != "scalar"
    plan_of: dict[str, KernelPlan] = {}
    for k, group in enumerate(schedule.kernels):
        if group.members[0].node.kind == "extern":
            continue
        local = {lb.buffer: lb.extent for lb in schedule.local if lb.kernel == group.name}
        plan_of[group.name] = plan_kernel(
            f"kernel{k}", [m.node for m in group.members], group.depth, threads=threads,
            vectorize=vectorize, local=local, form=form)
    regions = _regions(schedule, plan_of)
    buffers = schedule.program.buffer_map
    cpp = print_module([(r.name, r.plans, r.aliased) for r in regions], buffers)
    library = compile_source(cpp, isa) if regions else None
    lines, env = _wrapper_lines(schedule, regions, library)
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = dict(env)
    exec(compile(source, "<stax wrapper>", "exec"), namespace)  # noqa: S102 - generated code
    return CompiledProgram(namespace["call"], tuple(plan_of.values()), cpp, source, library)


def handed_over_storage(schedule: Schedule) -> list[Reuse]:
    """The memory plan's reuses the wrapper applies: outputs never take storage from the
    scratch (the caller keeps them), so only intermediates receive another's storage."""
    buffers = schedule.program.buffer_map
    return [r for r in schedule.memory.reuses + schedule.memory.inplace
            if buffers[r.new].kind == "intermediate"]


@dataclass(frozen=True)
class Region:
    """Consecutive C++ kernels run by one function in one OpenMP parallel region."""

    name: str
    groups: tuple[Group, ...]
    plans: tuple[KernelPlan, ...]
    aliased: set[str]  # buffers sharing storage inside the region (no __restrict__)


def _regions(schedule: Schedule, plan_of: Mapping[str, KernelPlan]) -> list[Region]:
    runs: list[list[Group]] = []
    for group in schedule.kernels:
        if group.members[0].node.kind == "extern":
            runs.append([group])
        elif runs and runs[-1][0].members[0].node.kind != "extern":
            runs[-1].append(group)
        else:
            runs.append([group])
    pairs = handed_over_storage(schedule)
    regions = []
    for run in runs:
        if run[0].members[0].node.kind == "extern":
            continue
        plans = tuple(plan_of[g.name] for g in run)
        params = set(region_params(plans))
        aliased = {n for r in pairs if {r.new, r.old} <= params for n in (r.new, r.old)}
        if schedule.memory.pool is not None:  # pooled intermediates may share addresses
            aliased |= set(schedule.memory.pool.offsets) & params
        regions.append(Region(f"region{len(regions)}", tuple(run), plans, aliased))
    return regions


def _wrapper_lines(schedule: Schedule, regions: Sequence[Region],
                   library: Compiled | None) -> tuple[list[str], dict[str, Any]]:
    program = schedule.program
    memory = schedule.memory
    buffers = program.buffer_map
    env: dict[str, Any] = {"empty": np.empty, "check_flags": check_flags,
                           "assert_input": assert_input, "matmul": np.matmul,
                           "flag_buffer": FlagBuffer(), "scratch": Scratch(),
                           "outputs": OutputPool()}
    lines = ["def call(args):"]
    ins = list(program.inputs)
    if ins:
        lines.append(f"    {', '.join(ins)}{',' if len(ins) == 1 else ''} = args")
    lines.append("    args.clear()")
    for name in ins:
        b = buffers[name]
        env[f"dtype_{name}"] = b.dtype
        lines.append(f"    assert_input({name}, {b.shape}, {_byte_strides(b)}, dtype_{name}, "
                     f"{name!r})")
    for b in buffers.values():
        if b.kind == "const":
            env[b.name] = b.data
    lines.append("    fb = flag_buffer")
    lines.append("    flags = fb.address")
    lines.append("    s = scratch")
    lines.append("    o = outputs")
    pool = memory.pool
    if pool is not None:
        env["pool"] = Pool(pool.size)
        lines.append(f"    p = pool  # {pool.size:,} B for all intermediates (M* "
                     f"{memory.peak_bytes:,} B)")
    reused = {r.new: r for r in handed_over_storage(schedule)} if memory.pool is None else {}
    handed_over = {r.old for r in reused.values()}  # deleted when reused, not when freed
    local = {lb.buffer for lb in schedule.local}
    region_of = {g.name: r for r in regions for g in r.groups}
    pending: list[str] = []  # storage handed over inside the current region: delete after it
    for group in schedule.kernels:
        for m in group.members:
            if m.node.out in local:
                continue
            out = buffers[m.node.out]
            env[f"dtype_{out.name}"] = out.dtype
            r = reused.get(out.name)
            if pool is not None and out.name in pool.offsets:
                lines.append(f"    {out.name} = p.get({pool.offsets[out.name]}, {out.shape}, "
                             f"dtype_{out.name})")
            elif r is not None:
                lines.append(f"    {out.name} = {r.old}.reshape({out.shape})"
                             f"  # reuse: {r.reason}")
                pending.append(r.old)
            elif out.kind == "intermediate":
                lines.append(f"    {out.name} = s.get({out.name!r}, {out.shape}, "
                             f"dtype_{out.name})")
            else:
                lines.append(f"    {out.name} = o.get({out.name!r}, {out.shape}, "
                             f"dtype_{out.name})")
        node = group.members[0].node
        region = region_of.get(group.name)
        if region is not None and group is not region.groups[-1]:
            continue  # the region's function runs once its last kernel's buffers exist
        if node.kind == "extern" and node.fn != "matmul":  # a NumPy routine (A2, externs.py)
            env["externs"] = EXTERNS
            lines.append(f"    externs[{node.fn!r}]({', '.join(node.extern_inputs)}, "
                         f"out={node.out})  # {group.name}: {node.origin} (extern, NumPy)")
        elif node.kind == "extern":
            a, b_ = node.extern_inputs
            lines.append(f"    matmul({a}, {b_}, out={node.out})  # {group.name}: "
                         f"{node.origin} (extern, BLAS)")
        else:
            assert region is not None and library is not None
            fn = getattr(library.library, region.name)
            params = region_params(region.plans)
            fn.argtypes = [ctypes.c_void_p] * (len(params) + 1)
            fn.restype = None
            env[region.name] = fn
            args = ", ".join([f"{p}.ctypes.data" for p in params] + ["flags"])
            lines.append(f"    {region.name}({args})  # "
                         f"{', '.join(g.name for g in region.groups)}")
        freed = [name for g in (region.groups if region is not None else (group,))
                 for name in memory.frees_after.get(g.name, ())
                 if name not in handed_over and buffers[name].kind != "const"]
        if freed or pending:
            lines.append(f"    del {', '.join(pending + freed)}")
        pending = []
    lines.append(f"    if fb.flags[{ANY_FLAG}]:")
    lines.append("        check_flags(fb.flags)")
    outs = []
    for name, shape in zip(program.outputs, program.output_shapes, strict=True):
        outs.append(name if buffers[name].shape == shape else f"{name}.reshape({shape})")
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return lines, env
