"""The generated Python wrapper (seed 000 §8.5) and the compiled-program object.

The wrapper checks input shapes, strides and dtypes against what the kernels assume, allocates
buffers, calls the kernels in the scheduled order, frees each buffer after its last use (or hands
its storage to a later buffer: `buf5 = buf2.reshape(...); del buf2  # reuse`), runs extern calls
(matmul through NumPy's BLAS), turns kernel error flags into NumPy's warnings and errors, and
returns the outputs.
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stax.codegen.cpp import print_module
from stax.ir.program import Buffer
from stax.runtime.compiler import Compiled, compile_source
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


def build(schedule: Schedule, *, threads: int, isa: str, form: str | None = None
          ) -> CompiledProgram:
    program = schedule.program
    buffers = program.buffer_map
    vectorize = isa != "scalar"
    plans: list[KernelPlan] = []
    plan_of: dict[str, KernelPlan] = {}
    for k, group in enumerate(schedule.kernels):
        if group.members[0].node.kind == "extern":
            continue
        local = {lb.buffer: lb.extent for lb in schedule.local if lb.kernel == group.name}
        plan = plan_kernel(f"kernel{k}", [m.node for m in group.members], group.depth,
                           threads=threads, vectorize=vectorize, local=local, form=form)
        plans.append(plan)
        plan_of[group.name] = plan
    cpp = print_module(plans, buffers)
    library = compile_source(cpp, isa) if plans else None
    lines, env = _wrapper_lines(schedule, plan_of, buffers, library)
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = dict(env)
    exec(compile(source, "<stax wrapper>", "exec"), namespace)  # noqa: S102 - generated code
    return CompiledProgram(namespace["call"], tuple(plans), cpp, source, library)


def _wrapper_lines(schedule: Schedule, plan_of: Mapping[str, KernelPlan],
                   buffers: Mapping[str, Buffer],
                   library: Compiled | None) -> tuple[list[str], dict[str, Any]]:
    program = schedule.program
    memory = schedule.memory
    env: dict[str, Any] = {"np": np, "empty": np.empty, "check_flags": check_flags,
                           "assert_input": assert_input, "matmul": np.matmul,
                           "flag_buffer": FlagBuffer()}
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
    reused = {r.new: r for r in memory.reuses + memory.inplace}
    local = {lb.buffer for lb in schedule.local}
    for group in schedule.kernels:
        for m in group.members:
            if m.node.out in local:
                continue
            out = buffers[m.node.out]
            env[f"dtype_{out.name}"] = out.dtype
            r = reused.get(out.name)
            if r is not None:
                lines.append(f"    {out.name} = {r.old}.reshape({out.shape}); del {r.old}"
                             f"  # reuse: {r.reason}")
            else:
                lines.append(f"    {out.name} = empty({out.shape}, dtype_{out.name})")
        node = group.members[0].node
        if node.kind == "extern":
            a, b_ = node.extern_inputs
            lines.append(f"    matmul({a}, {b_}, out={node.out})  # {group.name}: "
                         f"{node.origin} (extern, BLAS)")
        else:
            plan = plan_of[group.name]
            fn = getattr(library.library, plan.name)  # type: ignore[union-attr]
            params = plan.params()
            fn.argtypes = [ctypes.c_void_p] * (len(params) + 1)
            fn.restype = None
            env[plan.name] = fn
            args = ", ".join([f"{p}.ctypes.data" for p in params] + ["flags"])
            lines.append(f"    {plan.name}({args})  # {group.name}")
        for name in memory.frees_after.get(group.name, ()):
            if name in reused_sources(memory) or buffers[name].kind == "const":
                continue
            lines.append(f"    del {name}")
    lines.append(f"    if fb.flags[{ANY_FLAG}]:")
    lines.append("        check_flags(fb.flags)")
    outs = []
    for name, shape in zip(program.outputs, program.output_shapes, strict=True):
        outs.append(name if buffers[name].shape == shape else f"{name}.reshape({shape})")
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    return lines, env


def reused_sources(memory: Any) -> set[str]:
    return {r.old for r in memory.reuses + memory.inplace}


def run(program: CompiledProgram, arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    return program.call(list(arrays))
