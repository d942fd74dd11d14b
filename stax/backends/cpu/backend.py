"""`CpuBackend`: the C++/OpenMP code generator behind the `Backend` interface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING  # [H10]

from stax.backends.base import Backend, FusionRules, KernelRegion
from stax.backends.cpu import loop_driver  # [H10]
from stax.backends.cpu.cpp import HEADER, print_module
from stax.backends.cpu.vecreport import vectorization_text
from stax.ir.program import Buffer, Node
from stax.runtime.compiler import (
    Compiled,
    cache_dir,
    compile_source,
    in_background,
    isa_level,
    precompile,
)
from stax.runtime.fast import fastcall
from stax.tiling.plan import KernelPlan, plan_kernel
from stax.tiling.threads import crossover

if TYPE_CHECKING:  # [H10]
    from stax.loops.driver import LoopDriver


# [COMPILE] What every module this backend emits starts with (kernel modules and loop
# drivers alike): the runtime header and the standard headers after it, precompiled once.
PRECOMPILED = print_module([], {}).rstrip("\n") + "\n"


class CpuBackend(Backend):
    """Kernels planned by `stax.tiling.plan` (parallel loops, blocks, tiles, threads), printed
    as one C++ function per region (`stax.backends.cpu.cpp`), compiled by g++ for the
    detected ISA into a cached shared library (`stax.runtime.compiler`)."""

    name = "cpu"
    prelude = HEADER
    prepared = False

    def prepare(self) -> None:
        # the ISA probe (then the precompiled header for its flags), the parallel crossover
        # probe and the per-call entry module each run the compiler once per process (then
        # read from the disk cache): started together, they compile while the first program
        # is lowered and scheduled. cache_dir() first, here, so that a warning about the
        # cache is the caller's.
        if not CpuBackend.prepared:
            CpuBackend.prepared = True
            cache_dir()
            in_background(lambda: precompile(PRECOMPILED, isa_level()), crossover, fastcall)

    def fusion_rules(self) -> FusionRules:
        # at most 128 nodes and 32 distinct buffers per kernel (the limits the scheduler has
        # applied since the first session, used with this backend); scans keep a strict order
        # and extern calls run in the wrapper: never fused
        return FusionRules(max_nodes=128, max_buffers=32, opaque=frozenset({"scan", "extern"}))

    def plan(self, name: str, nodes: Sequence[Node], shared_depth: int, *, threads: int,
             vectorize: bool, local: Mapping[str, int], form: str | None) -> KernelPlan:
        return plan_kernel(name, nodes, shared_depth, threads=threads, vectorize=vectorize,
                           local=local, form=form)

    def emit(self, regions: Sequence[KernelRegion], buffers: Mapping[str, Buffer],
             symbols: Sequence[str] = ()) -> str:
        return print_module(regions, buffers, symbols)

    def build(self, source: str, isa: str) -> Compiled:
        return compile_source(source, isa, PRECOMPILED)

    # [H10] issue 10: C++ loop drivers (`stax.backends.cpu.loop_driver`)
    def vectorization(self, source: str, plans: Sequence[KernelPlan], isa: str) -> str:
        return vectorization_text(source, plans, isa)  # [VEC] g++'s remarks per loop

    def emit_loops(self, drivers: Sequence[LoopDriver]) -> tuple[str, tuple[str, ...]]:
        return loop_driver.emit_loops(drivers)

    # [H12] issue 12: segmented kernels (`stax.backends.cpu.segmented`, imported on first use)
    def segmented_kernel(self, kernel: object) -> object:
        from stax.backends.cpu import segmented

        return segmented.build(kernel, self)
