"""The backend seam (issue 16 item 2): what the pipeline asks of a code generator.

Tracing, lowering and scheduling are backend-neutral. A backend answers the questions that
depend on the target: how costly an op is to recompute (materialization, seed 000 §7.4 Ex.
7.2), the fusion limits of one kernel, the plan of each kernel (loops, threads, vector form),
the source of a module of kernel regions (`emit`) and how that source becomes loaded code
(`build`). `stax.backends.get_backend(name)` gives the registered one; `CpuBackend`
(`stax/backends/cpu/`, C++ with OpenMP) is the first implementation. The pipeline
(`stax.api.compile_traced`) hands the chosen backend's `recompute_cost` to lowering and its
`fusion_rules()` to the scheduler (the recompute costs and kernel limits are the backend's;
lowering's inline-size limits and the fusion score's heuristics stay target-neutral).

The calling convention every backend keeps: a region is one function taking its kernels'
buffers (`region_params`, in that order), then the sizes of a shape-generic program
(`stax_sizes`, issue 11) when there are symbols, then the error-flag buffer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from stax.ir.program import Buffer, Node
from stax.ops import by_name
from stax.ops.table import Cost
from stax.sched.fusion import FusionRules  # defined by the scheduler that applies it
from stax.tiling.plan import KernelPlan

if TYPE_CHECKING:  # [H10] issue 10: loop drivers
    from stax.loops.driver import LoopDriver


class KernelRegion(NamedTuple):
    """Consecutive kernels run by one function of the module (for OpenMP: one parallel
    region); `aliased` buffers share storage inside it (the emitter may not assume them
    disjoint)."""

    name: str
    plans: Sequence[KernelPlan]
    aliased: set[str]


# The calling convention of a region's function: `name(<buffers in region_params order>,
# [stax_sizes,] flags)`; one with more than MANY_ARGS of them also has `name + MANY_ARGS_SUFFIX
# (args, flags)` taking one array of their addresses (ctypes calls at most 1024 arguments;
# [CALL] stax.runtime.fast's C call takes 16 directly, more through this entry).
MANY_ARGS = 16
MANY_ARGS_SUFFIX = "_args"


def region_params(plans: Sequence[KernelPlan]) -> list[str]:
    """The buffers a region's function takes, in order: its kernels' parameters, first
    occurrence first (the wrapper passes them in this order)."""
    names: dict[str, None] = {}
    for plan in plans:
        names.update(dict.fromkeys(plan.params()))
    return list(names)


class Backend(ABC):
    """A code generator for kernel regions. `name` is what `stax.jit(..., backend=name)`
    takes; `prelude` is the text every module of this backend starts with (the runtime
    header; `stax.explain` omits it)."""

    name: str
    prelude: str = ""

    def recompute_cost(self, op: str) -> Cost:
        """How costly elementwise op `op` is to recompute here (the op table's cost by
        default): a costly value with several consumers is materialized, not recomputed."""
        return by_name(op).cost

    def prepare(self) -> None:
        """Called before a program is compiled: a backend may start, in the background, the
        work its first build needs (probes, support modules) and would otherwise wait for."""
        return None

    @abstractmethod
    def fusion_rules(self) -> FusionRules:
        """The limits of one kernel here; the scheduler applies them (`stax.sched.fusion`)."""

    @abstractmethod
    def plan(self, name: str, nodes: Sequence[Node], shared_depth: int, *, threads: int,
             vectorize: bool, local: Mapping[str, int], form: str | None) -> KernelPlan:
        """The plan of one kernel: nodes fused with `shared_depth` shared outer loops."""

    @abstractmethod
    def emit(self, regions: Sequence[KernelRegion], buffers: Mapping[str, Buffer],
             symbols: Sequence[str] = ()) -> str:
        """The source of one module holding every region (`symbols`: a generic program's
        size symbols, in the order of `stax_sizes`)."""

    @abstractmethod
    def build(self, source: str, isa: str) -> Any:
        """Source -> loaded module: an object whose `.library` has one callable per
        region name (ctypes' CDLL for the CPU backend)."""

    def vectorization(self, source: str, plans: Sequence[KernelPlan], isa: str) -> str:
        """[VEC] For `stax.explain`: which loops of `source` (built at ISA level `isa`) run in
        vector registers, and why the others do not."""
        return f"not reported by backend {self.name!r}"

    # [H10] issue 10: loops compiled once per body (stax.loops.runner)
    def emit_loops(self, drivers: Sequence[LoopDriver]) -> tuple[str, tuple[str, ...]]:
        """One module holding loop bodies' regions and drivers (`stax_loop<suffix>`: all the
        iterations in one call, `stax.loops.driver`), and each driver's part of it. A backend
        without loop drivers raises NotImplementedError."""
        raise NotImplementedError(f"backend {self.name!r} emits no loop driver")

    # [H12] issue 12: segmented kernels of flattened nested programs (stax.nested)
    def segmented_kernel(self, kernel: Any) -> Any:
        """A kernel described by `stax.nested.spec` -> an object with `source`, `body` (the
        source without the shared prelude), `arrays` (the arguments, in order) and `entry`
        (called with n, k, W, a forced chunk count and the arrays). A backend without
        segmented kernels raises NotImplementedError."""
        raise NotImplementedError(f"backend {self.name!r} has no segmented kernels")
