"""The generated Python wrapper (seed 000 §8.5) and the compiled-program object.

The wrapper checks input shapes, strides and dtypes against what the kernels assume, allocates
buffers, calls the kernels in the scheduled order, frees each buffer after its last use (or hands
its storage to a later buffer: `buf5 = buf2.reshape(...); del buf2  # reuse`), runs extern calls
(matmul through NumPy's BLAS), turns kernel error flags into NumPy's warnings and errors, and
returns the outputs.
"""

from __future__ import annotations

import _ctypes
import ctypes
import math
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from stax.backends import (
    DEFAULT,
    MANY_ARGS,
    MANY_ARGS_SUFFIX,
    Backend,
    KernelRegion,
    get_backend,
    region_params,
)
from stax.ir.program import Buffer
from stax.ir.sym import SYM_MIN, ShapeEnv, data_atoms_in, env_of, is_sym, py_expr, py_shape
from stax.ops import ANY_FLAG as OPS_ANY_FLAG  # [A1]
from stax.ops import FLAGS  # [A1]
from stax.runtime.compiler import Compiled
from stax.runtime.externs import EXTERNS, SIZED
from stax.runtime.fast import MAX_MANY as FAST_MAX_ARGS
from stax.runtime.fast import fastcall, interruptible  # [A8] interruptible
from stax.sched.fusion import Group
from stax.sched.memory import Reuse
from stax.sched.scheduler import Schedule
from stax.tiling.plan import SMALL_ROW, KernelPlan, PlanDecision
from stax.tiling.threads import team  # [H9] launch-time team size

ANY_FLAG = OPS_ANY_FLAG  # [A1] kernels also set this one, so the wrapper checks a single element
def new_flags() -> ctypes.Array:  # type: ignore[type-arg]
    """A zeroed kernel flag buffer."""
    return (ctypes.c_int32 * 8)()


# NumPy's names and status bits of the errstate categories kernels report (numpy/_core/ufunc
# config: the errtype passed to a `call` handler, UFUNC_FPE_DIVIDEBYZERO and UFUNC_FPE_INVALID)
FPE = {"divide": ("divide by zero", 1), "invalid": ("invalid value", 8)}


def raise_flags(values: Sequence[int], stacklevel: int = 3) -> None:
    """NumPy's warnings and errors for the flags a kernel set (`values`: its flag buffer's).
    A floating-point error category acts as `np.geterr()` says, as NumPy's ufuncs do: ignore,
    warn, raise FloatingPointError, call or log through `np.geterrcall()`, print."""
    raised = [f for k, f in enumerate(FLAGS) if values[k]]
    bits = sum({FPE[f.errstate][1] for f in raised if f.errstate})
    modes = np.geterr()
    for flag in raised:
        mode = modes[flag.errstate] if flag.errstate else "raise"
        if mode == "warn":
            warnings.warn(flag.message, flag.kind, stacklevel=stacklevel)
        elif mode == "raise":
            raise (FloatingPointError if flag.errstate else flag.kind)(flag.message)
        elif mode == "call":
            np.geterrcall()(FPE[flag.errstate][0], bits)
        elif mode == "log":
            np.geterrcall().write(f"Warning: {flag.message}\n")
        elif mode == "print":
            sys.stderr.write(f"Warning: {flag.message}\n")


def check_flags(flags: ctypes.Array) -> None:  # type: ignore[type-arg]
    """`raise_flags` for a flag buffer, cleared first (it serves the next call)."""
    values = tuple(flags)
    for k in (*range(len(FLAGS)), ANY_FLAG):
        flags[k] = 0
    raise_flags(values, stacklevel=4)


class DataSizeMiss(Exception):  # noqa: N818 - a control-flow signal, caught by stax.api
    """[DYN16] A data-dependent size bound during a call is 0 or 1, or breaks a guard the
    program was compiled under: the call runs the function in NumPy instead."""


def read_only() -> None:
    """[SPARSE] A mutated argument computed in place is read-only: NumPy's error."""
    raise ValueError("assignment destination is read-only")


def data_size_miss(symbol: str, value: int) -> None:
    raise DataSizeMiss(f"data-dependent size {symbol} = {value} is outside what the program "
                       "was compiled for")


def _strides_read(strides: tuple[Any, ...], shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """[FUZZ2] The strides a kernel's addresses depend on: those of axes longer than 1 (an axis
    of one element is read at index 0; an empty array not at all). A (1,)-shaped step slice
    has its base's stride, where the kernels were compiled for another."""
    if any(n == 0 for n in shape):
        return ()
    return tuple(s for s, n in zip(strides, shape, strict=True) if n != 1)


def assert_input(arr: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype, name: str, contiguous: bool = False) -> None:
    layout_ok = arr.flags.c_contiguous if contiguous else \
        _strides_read(arr.strides, arr.shape) == _strides_read(strides, shape)
    if arr.shape != shape or arr.dtype != dtype or not layout_ok:
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
    storage: Storage
    variants: tuple[Variant, ...] = ()  # a generic program's tiling variants (issue 11)
    tiling_key: Callable[..., int] | None = None  # the run-time choice among them
    # [H9] `call` without its input checks, on the inputs as positional arguments: only for
    # arguments whose exact signature has passed `call`'s checks before (stax.api's fast path).
    # With `single` (one output) it returns that output alone, a 0-d one as a NumPy scalar.
    proven: Callable[..., Any] | None = None
    single: bool = False
    # [GOVH] a generic program's `proven` for the exact shapes of the given inputs (sizes and
    # tiling key bound once; no frame), or None where that shape needs a frame (or no such entry)
    at_shape: Callable[..., Callable[..., Any] | None] | None = None


def _byte_strides(buf: Buffer) -> tuple[int, ...]:
    return tuple(s * buf.dtype.itemsize for s in buf.strides)


# Memory kept across calls (intermediates, pooled storage, recycled outputs) by all programs
# together: above STAX_KEEP_MIB (default 128) the least recently used programs give theirs back;
# a program idle for IDLE_SECONDS gives its back at the next call of any program.
KEEP_BYTES = int(float(os.environ.get("STAX_KEEP_MIB", "128")) * 2**20)
IDLE_SECONDS = 30.0
# [H9] Outputs within one page come from np.empty on each call: malloc hands their memory out
# of its free lists (already mapped), and the recycling bookkeeping (~0.4 us per output) would
# cost more than it saves. Larger outputs are recycled (fresh pages fault on first touch).
RECYCLE_MIN_BYTES = 4096
# [CLIFF] Outputs below glibc's largest mmap threshold (32 MiB on 64-bit: smaller blocks, once
# freed, are reused from malloc's heap, already mapped) come from np.empty on each call too:
# malloc hands out the block freed last, still in cache, as NumPy's results get it; a recycled
# base was written calls ago and every store to it misses (a 16 MB row gather 2.1 -> 1.3 ms,
# NumPy 1.3, between other work). Larger blocks are mmapped afresh by malloc (pages fault on
# first touch): those are recycled (x * 2 of 64 MB: 16.2 -> 9.7 ms).
RECYCLE_MMAP_BYTES = 32 * 2**20
_live: weakref.WeakSet[Storage] = weakref.WeakSet()
_lock = threading.Lock()
_held = [0, time.monotonic()]  # bytes kept by all programs, time of the last idle sweep


class Frame:
    """What one call uses: its flag buffer, its intermediates (kept for a later call), its
    pooled storage, and recycled outputs. A call takes a frame no call in progress holds (one
    from the program's free list, else a new one) and gives it back when it ends, so concurrent
    calls (threads, a signal handler calling the program during a call) never share buffers."""

    __slots__ = ("storage", "generation", "flags", "address", "scratch", "pool", "outputs")
    OUTPUT_DEPTH = 2  # recycled bases kept per output

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.generation = storage.generation
        self.flags = new_flags()
        self.address = ctypes.addressof(self.flags)
        self.scratch: dict[str, np.ndarray] = {}
        self.pool: np.ndarray | None = None
        self.outputs: dict[str, list[np.ndarray]] = {}

    def intermediate(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        arr = self.scratch.get(name)
        if arr is None or arr.shape != shape:  # a generic program's sizes change per call
            old = 0 if arr is None else arr.nbytes
            arr = self.scratch[name] = np.empty(shape, dtype)
            self.storage.charge(arr.nbytes - old)
        return arr

    def pooled(self, offset: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """With `pool=True`: every intermediate lives at a fixed offset of one byte array,
        laid out by the inference pool planner (stax.sched.pool)."""
        if self.pool is None:
            self.pool = np.empty(max(self.storage.pool_size, 1), np.uint8)
            self.storage.charge(self.pool.nbytes)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return self.pool[offset:offset + nbytes].view(dtype).reshape(shape)

    def output(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """Outputs recycled once the caller has dropped them, like PyTorch's caching allocator:
        the caller receives a view of a base handed out again only when nothing but this frame
        refers to it (every view the caller kept holds a reference to its base), so reused
        memory is already mapped. [CLIFF] Only outputs malloc would map afresh."""
        if math.prod(shape) * dtype.itemsize < RECYCLE_MMAP_BYTES:
            return np.empty(shape, dtype)
        bases = self.outputs.setdefault(name, [])
        stale = -1  # a free base of another shape (a generic program's earlier call)
        for k in range(len(bases)):  # (enumerate's tuple would hold one more reference)
            base = bases[k]
            # referenced by the list, the local and getrefcount's argument only
            if sys.getrefcount(base) == 3:
                if base.shape == shape:
                    return base.view()
                stale = k
        base = np.empty(shape, dtype)
        if len(bases) < self.OUTPUT_DEPTH:
            bases.append(base)
            self.storage.charge(base.nbytes)
        elif stale >= 0:
            self.storage.charge(base.nbytes - bases[stale].nbytes)
            bases[stale] = base
        return base.view()


class Storage:
    """A program's free frames, and the bytes its frames keep."""

    def __init__(self, pool_size: int) -> None:
        self.pool_size = pool_size
        self.free: list[Frame] = []  # [H9] list.pop/append: atomic under the GIL, no lock
        self.generation = 0  # frames of an earlier generation were released: not taken back
        self.held = [0]  # bytes kept (a cell the finalizer reads once the program is gone)
        self.last_used = time.monotonic()
        with _lock:
            _live.add(self)
        weakref.finalize(self, _forget, self.held)

    @property
    def bytes(self) -> int:
        return self.held[0]

    def enter(self) -> Frame:
        try:
            frame = self.free.pop()
        except IndexError:  # every frame is in use (or none yet)
            frame = Frame(self)
        now = time.monotonic()
        self.last_used = now
        if now - _held[1] > IDLE_SECONDS:
            _sweep(now)
        return frame

    def exit(self, frame: Frame) -> None:
        if frame.generation == self.generation:  # not released during the call
            self.free.append(frame)

    def charge(self, nbytes: int) -> None:
        with _lock:
            self.held[0] += nbytes
            _held[0] += nbytes
            over = _held[0] > KEEP_BYTES
        if over:
            _trim(keep=self)

    def release(self) -> None:
        """Forget every frame: calls in progress keep theirs (their locals refer to it); the
        next call starts a fresh one."""
        with _lock:
            self.free = []
            self.generation += 1
            _held[0] -= self.held[0]
            self.held[0] = 0


def _forget(held: list[int]) -> None:
    """A program is gone: what it kept is no longer counted."""
    with _lock:
        _held[0] -= held[0]
        held[0] = 0


def _trim(keep: Storage) -> None:
    """Release the least recently used programs' storage until the total fits KEEP_BYTES (the
    program being called keeps its own)."""
    with _lock:
        order = sorted((s for s in _live if s is not keep and s.bytes), key=lambda s: s.last_used)
    for storage in order:
        if _held[0] <= KEEP_BYTES:
            break
        storage.release()


def _sweep(now: float) -> None:
    _held[1] = now
    with _lock:
        idle = [s for s in _live if s.bytes and now - s.last_used > IDLE_SECONDS]
    for storage in idle:
        storage.release()


def held_bytes() -> int:
    """Bytes kept across calls by all compiled programs."""
    return _held[0]


def release_all() -> None:
    """Give back every program's kept storage (stax.clear_caches)."""
    with _lock:
        live = list(_live)
    for storage in live:
        storage.release()


def _after_fork_in_child() -> None:
    """GNU OpenMP's thread pool does not survive fork (its threads are not copied; the next
    parallel region waits for them forever). When the parent had loaded libgomp, the child runs
    every parallel region on the calling thread, as PyTorch does: max-active-levels 0 (a
    process-wide setting of libgomp) makes each region a team of one. The lock is fresh."""
    global _lock
    _lock = threading.Lock()
    try:
        gomp = ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
    except OSError:
        return  # no OpenMP runtime in the parent: the child starts its own pool
    gomp.omp_set_max_active_levels(0)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _unload(library: ctypes.CDLL) -> None:
    """dlclose a program's library once its wrapper is gone (dlopen counts references, so a
    library loaded by several programs stays until the last one goes)."""
    _ctypes.dlclose(library._handle)


def _plan_all(schedule: Schedule, backend: Backend, threads: int, vectorize: bool,
              form: str | None) -> dict[str, KernelPlan]:
    plan_of: dict[str, KernelPlan] = {}
    for k, group in enumerate(schedule.kernels):
        if group.members[0].node.kind == "extern":
            continue
        local = {lb.buffer: lb.extent for lb in schedule.local if lb.kernel == group.name}
        plan_of[group.name] = backend.plan(
            f"kernel{k}", [m.node for m in group.members], group.depth, threads=threads,
            vectorize=vectorize, local=local, form=form)
    return plan_of


def _signature(plans: Mapping[str, KernelPlan]) -> tuple[Any, ...]:
    """What a tiling variant decides: per kernel its loop structure, form, block, vector
    lanes and short-row lengths."""
    return tuple((p.shared_depth, p.parallel_depth, p.threads, p.form, p.outer_block,
                  p.simd_lanes, p.row_symbol, p.row_lengths) for p in plans.values())


def _vector_loops(plans: Mapping[str, KernelPlan]) -> tuple[Any, ...]:
    """[H11] A tiling variant's forms and vector lanes: its signature without the split over
    threads and the short-row lengths (a variant compiled per short length runs any other
    length in its generic body)."""
    return tuple((p.form, p.simd_lanes) for p in plans.values())


# [issue 11] Sizes a generic program is also planned for (besides the traced ones): everything
# large; few, long rows; many short rows; [H11] many rows of SMALL_ROW elements (the longest
# short-row length, whose vectors differ); rows of a few vectors (narrow vectors, issue 11).
# Distinct plans become tiling variants in one module (the large ones first: see emit_module).
def representative_sizes(symbols: Sequence[str]) -> list[dict[str, int]]:
    out = [dict.fromkeys(symbols, 4096)]
    for big in symbols:
        out.append({s: 1 << 20 if s == big else 4 for s in symbols})
        out.append({s: 1 << 20 if s == big else SMALL_ROW for s in symbols})
    return [*out, dict.fromkeys(symbols, 16)]


@dataclass(frozen=True)
class Variant:
    """[issue 11] One tiling variant of a generic program: the sizes it was planned for and
    its kernel plans; `tiling_key` is its index."""

    sizes: Mapping[str, int]
    plans: Mapping[str, KernelPlan]


@dataclass(frozen=True)
class Module:
    """What a backend emitted for a schedule, before it is built: the plans of the traced
    sizes, every tiling variant and its regions, and the module's source."""

    plan_of: Mapping[str, KernelPlan]
    variants: tuple[Variant, ...]
    regions: list[list[Region]]
    source: str
    env: ShapeEnv | None
    symbols: tuple[str, ...]


def emit_module(schedule: Schedule, backend: Backend, *, threads: int, vectorize: bool,
                form: str | None = None) -> Module:
    """Plan every kernel through `backend` (and, for a generic program, at the
    representative sizes) and emit one module: no compiler runs."""
    plan_of = _plan_all(schedule, backend, threads, vectorize, form)
    buffers = schedule.program.buffer_map
    env = env_of(b.shape for b in buffers.values())
    symbols = tuple(env.hints) if env is not None else ()
    variants = [Variant(dict(env.hints) if env is not None else {}, plan_of)]
    if env is not None and symbols:
        seen = {_signature(plan_of)}
        loops: set[tuple[Any, ...]] = set()
        for wanted in representative_sizes(symbols):
            sizes = env.fit(wanted)  # [H11] sizes guarded equal made equal (x.T + y)
            if sizes is None:  # shapes this program never serves
                continue
            with env.assume(sizes):
                plans = _plan_all(schedule, backend, threads, vectorize, form)
            # [H11] a representative whose vector loops an earlier one has adds nothing (a
            # smaller split over threads: whether a region opens threads is decided at launch)
            if _signature(plans) not in seen and _vector_loops(plans) not in loops:
                seen.add(_signature(plans))
                loops.add(_vector_loops(plans))
                variants.append(Variant(sizes, plans))
    variants = _row_copies_within_budget(variants)
    regions = [_regions(schedule, v.plans, f"_v{k}" if len(variants) > 1 else "")
               for k, v in enumerate(variants)]
    source = backend.emit([KernelRegion(r.name, r.plans, r.aliased) for rs in regions
                           for r in rs], buffers, symbols)
    return Module(variants[0].plans, tuple(variants), regions, source, env, symbols)


# [H11] A variant's short-row lengths copy each of its regions once per length (up to 15): a
# module holds at most this many such kernel copies, the earliest variants first; a later
# variant over the budget runs every length in its generic body. g++ -O3 spends ~0.1 s per
# copy: six reductions over 3-D bools (wild3's all_any_axes) made 4 variants x 15 lengths of a
# 6-kernel region, 36 s of g++ at the second shape.
ROW_COPIES = 128


def _row_copies_within_budget(variants: Sequence[Variant]) -> list[Variant]:
    out, spent = [], 0
    for variant in variants:
        plans = variant.plans
        copies = max((len(p.row_lengths) for p in plans.values() if p.row_symbol), default=0)
        cost = copies * len(plans)
        if cost and spent + cost > ROW_COPIES:
            why = (f"short rows not compiled per length: {copies} lengths x {len(plans)} kernels "
                   f"would pass the module's budget of {ROW_COPIES} kernel copies (g++ time)")
            plans = {k: replace(p, row_symbol="", row_lengths=(), decisions=(
                *p.decisions, PlanDecision("small_rows", p.name, "", why)))
                if p.row_symbol else p for k, p in plans.items()}
            variant = Variant(variant.sizes, plans)
        else:
            spent += cost
        out.append(variant)
    return out


# A program of more kernels than this is not compiled: g++ takes ~0.1-0.3 s per kernel, so ops
# that do not fuse (an unrolled nest of small gathers and matrix products: npbench's
# scattering_self_energies rolled a loop body of 1,043 kernels, 3 MB of C++, over 8 minutes of
# g++) would take minutes. stax.jit runs the function in NumPy instead (strict=True: the error);
# stax.loops does not roll a body of more ops than this (ops >= kernels), so a loop body never
# meets the bound in its own (background) compile.
MAX_KERNELS = 400


def build(schedule: Schedule, *, threads: int, isa: str, form: str | None = None,
          backend: Backend | None = None) -> CompiledProgram:
    backend = backend or get_backend(DEFAULT)
    if len(schedule.kernels) > MAX_KERNELS:
        raise NotImplementedError(
            f"stax.jit: the program needs {len(schedule.kernels)} kernels (ops that do not fuse; "
            f"more than {MAX_KERNELS}): compiling them would take minutes")
    vectorize = isa != "scalar"
    module = emit_module(schedule, backend, threads=threads, vectorize=vectorize, form=form)
    library = backend.build(module.source, isa) if module.regions[0] else None
    storage = Storage(schedule.memory.pool.size if schedule.memory.pool is not None else 0)
    solver = _tiling_solver(schedule, backend, threads, vectorize, form, module.env,
                            module.variants)
    lines, names = _wrapper_lines(schedule, module.regions, library, module.symbols, solver)
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = dict(names, storage=storage)
    exec(compile(source, "<stax wrapper>", "exec"), namespace)  # noqa: S102 - generated code
    call = namespace["call"]
    if library is not None:  # unloaded when the wrapper (holding its functions) is gone
        weakref.finalize(call, _unload, library.library).atexit = False  # not at exit
    return CompiledProgram(call, tuple(module.plan_of.values()), module.source, source, library,
                           storage, module.variants, solver, namespace["proven"],
                           len(schedule.program.outputs) == 1, namespace["at_shape"])


MAX_EXACT_SIZES = 4096  # [H11] exact sizes the tiling_key remembers (then it starts over)


def _tiling_solver(schedule: Schedule, backend: Backend, threads: int, vectorize: bool,
                   form: str | None, env: ShapeEnv | None, variants: Sequence[Variant]
                   ) -> Callable[..., int] | None:
    """[issue 11] The run-time choice of a generic program's tiling variant (`tiling_key`):
    the planner's decisions for the actual sizes, matched to a compiled variant; [H11] else
    one with the same forms and vector loops (the split over threads differs: any split is
    correct, and a region opens threads only when its work pays, decided at launch); else the
    traced one. Memoized per power-of-two size class, sizes up to SMALL_ROW each a class of
    their own (a short-row variant is compiled per length)."""
    if env is None or len(variants) < 2:
        return None
    keys = {_signature(v.plans): k for k, v in enumerate(variants)}
    loops: dict[tuple[Any, ...], int] = {}
    for k, v in enumerate(variants):
        loops.setdefault(_vector_loops(v.plans), k)
    names = tuple(env.hints)
    memo: dict[tuple[int, ...], int] = {}
    exact: dict[tuple[int, ...], int] = {}  # [H11] sizes seen: one lookup per warm call

    def tiling_key(*sizes: int) -> int:
        key = exact.get(sizes)
        if key is not None:
            return key
        # [COMPACT] a data-dependent size of 0 or 1 is planned as 2 (every variant serves
        # every size)
        planned = tuple(max(n, SYM_MIN) for n in sizes)
        bucket = tuple(n if n <= SMALL_ROW else -n.bit_length() for n in planned)
        key = memo.get(bucket)
        if key is None:
            with env.assume(dict(zip(names, planned, strict=True))):
                plans = _plan_all(schedule, backend, threads, vectorize, form)
            key = memo[bucket] = keys.get(_signature(plans),
                                          loops.get(_vector_loops(plans), 0))
        if len(exact) >= MAX_EXACT_SIZES:  # a serving loop's many batch sizes
            exact.clear()
        exact[sizes] = key
        return key

    return tiling_key


def handed_over_storage(schedule: Schedule) -> list[Reuse]:
    """The memory plan's reuses the wrapper applies: outputs never take storage from the
    scratch (the caller keeps them), so only intermediates receive another's storage, and
    [SPARSE] an output written in place of an input: a mutated argument's new value in the
    caller's array itself (`MemBuffer.becomes`)."""
    buffers = schedule.program.buffer_map
    sized = {m.node.out for g in schedule.kernels for m in g.members
             if m.node.kind == "extern" and m.node.fn in SIZED}  # [DYN16] returned by NumPy
    return [r for r in schedule.memory.reuses + schedule.memory.inplace
            if r.new not in sized and (buffers[r.new].kind == "intermediate"
                                       or buffers[r.old].kind == "input")]


@dataclass(frozen=True)
class Region:
    """Consecutive C++ kernels run by one function in one OpenMP parallel region."""

    name: str
    groups: tuple[Group, ...]
    plans: tuple[KernelPlan, ...]
    aliased: set[str]  # buffers sharing storage inside the region (no __restrict__)


# At most this many kernels share one region function: g++'s optimizer is superlinear in the
# size of a function (its SSA updates walk the whole function once per loop transformed): the
# 400 kernels of an unrolled 200-step RK4 on 2 elements took 33 s of g++ -O3 in one function
# (41 s first call), 6.6 s split (tests/test_region_split.py).
REGION_KERNELS = 64


def _regions(schedule: Schedule, plan_of: Mapping[str, KernelPlan], suffix: str = ""
             ) -> list[Region]:
    runs: list[list[Group]] = []
    for group in schedule.kernels:
        if group.members[0].node.kind == "extern":
            runs.append([group])
        elif (runs and runs[-1][0].members[0].node.kind != "extern"
              and len(runs[-1]) < REGION_KERNELS):
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
        regions.append(Region(f"region{len(regions)}{suffix}", tuple(run), plans, aliased))
    return regions


def _frameless(schedule: Schedule, regions: Sequence[Region], symbols: Sequence[str],
               local: set[str]) -> bool:
    """[H9] Whether a call needs no frame: no pool, fixed sizes, every buffer the wrapper
    allocates within RECYCLE_MIN_BYTES (np.empty on each call), every region called through
    fastcall.c (whose flag buffer can live on the C stack)."""
    fast = fastcall()
    if schedule.memory.pool is not None or symbols or fast is None:
        return False
    buffers = schedule.program.buffer_map
    if any(len(region_params(r.plans)) > FAST_MAX_ARGS for r in regions):
        return False
    return all(buffers[m.node.out].nbytes < RECYCLE_MIN_BYTES
               for g in schedule.kernels for m in g.members if m.node.out not in local)


def _wrapper_lines(schedule: Schedule, variants: Sequence[Sequence[Region]],
                   library: Compiled | None, symbols: Sequence[str] = (),
                   solver: Callable[..., int] | None = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """The wrapper's source; `variants` holds the regions of each tiling variant (the same
    kernels, planned for other sizes), chosen per call by `solver` (issue 11)."""
    regions = variants[0]
    program = schedule.program
    buffers = program.buffer_map
    env: dict[str, Any] = {"empty": np.empty, "check_flags": check_flags,
                           "assert_input": assert_input, "_strides_read": _strides_read,
                           "matmul": np.matmul}
    lines = ["def call(args):"]
    ins = list(program.inputs)
    if ins:
        lines.append(f"    {', '.join(ins)}{',' if len(ins) == 1 else ''} = args")
    lines.append("    args.clear()")
    prelude_start = len(lines)
    bound: set[str] = set()
    shape_env = env_of(b.shape for b in buffers.values())
    data = {s: shape_env.hints[s] for s in symbols if shape_env and s in shape_env.data}
    generic = bool(set(symbols) - set(data))  # input sizes are symbols
    for name in ins:
        b = buffers[name]
        env[f"dtype_{name}"] = b.dtype
        if symbols:  # generic: bind each symbol from the first input dimension it names
            for k, d in enumerate(b.shape):
                if is_sym(d) and py_expr(d) in symbols and py_expr(d) not in bound:
                    bound.add(py_expr(d))
                    lines.append(f"    {py_expr(d)} = {name}.shape[{k}]")
    size_lines: list[str] = []
    if symbols:
        # [H9] fastcall.c's run reads a tuple of ints as int64 values; ctypes needs an array
        fast = fastcall() is not None and all(
            len(region_params(r.plans)) < FAST_MAX_ARGS for rs in variants for r in rs)
        env["sizes_array"] = np.array
        sizes = f"({', '.join(symbols)},)"
        size_lines.append(f"    stax_sizes = {sizes}" if fast else
                          f"    stax_sizes = sizes_array({sizes}, dtype='int64')")
        if solver is not None:
            env["tiling_key"] = solver
            size_lines.append(f"    key = tiling_key({', '.join(symbols)})  # the tiling variant")
        # [DYN16] data-dependent sizes: their traced stand-in until the call that computes
        # them has run (no kernel before it reads them), then bound and the sizes passed again
        lines += [f"    {s} = {hint}  # bound below, by the extern call that computes it"
                  for s, hint in data.items()]
        lines += size_lines
        assert bound | set(data) == set(symbols), "every symbol is an input dimension or data"
    checks_start = len(lines)
    for name in ins:
        b = buffers[name]
        shape, strides = py_shape(b.shape), py_shape(_byte_strides(b))
        # a generic program takes C-contiguous inputs (strides of 0/1-sized axes vary)
        read = _strides_read(_byte_strides(b), b.shape) if all(
            type(n) is int for n in b.shape) else _byte_strides(b)
        layout = f"not {name}.flags.c_contiguous" if generic else \
            f"{name}.strides != {strides}" if read == _byte_strides(b) else \
            f"_strides_read({name}.strides, {name}.shape) != {read}"
        lines.append(f"    if {name}.shape != {shape} or {layout} or "
                     f"{name}.dtype != dtype_{name}:")  # inline: no call on the warm path
        lines.append(f"        assert_input({name}, {shape}, {strides}, dtype_{name}, {name!r}, "
                     f"{generic})")
    for b in buffers.values():
        if b.kind == "const":
            env[b.name] = b.data
    local = {lb.buffer for lb in schedule.local}
    allocated = [buffers[m.node.out] for g in schedule.kernels for m in g.members
                 if m.node.out not in local
                 and not (m.node.kind == "extern" and m.node.fn in SIZED)]

    def body(frameless: bool) -> list[str]:
        """The call after its input checks: framed, or [H9] frameless (np.empty buffers,
        flags on the C stack)."""
        return _body_lines(schedule, variants, library, symbols, solver, env, frameless, local,
                           data, set(bound), shape_env, size_lines)

    framed = body(_frameless(schedule, regions, symbols, local))
    lines += framed
    # [H9] `proven(*inputs)`: the same call without the input checks, for arguments whose exact
    # signature (shape, strides, dtype) has passed them before (stax.api's fast path); a single
    # output is returned by itself, a 0-d one as a NumPy scalar (as NumPy's functions return it)
    outs = _outputs(schedule)
    single = outs[0] + ("[()]" if program.output_shapes[0] == () else "") if len(outs) == 1 \
        else None
    lines += ["", f"def proven({', '.join(ins)}):", *lines[prelude_start:checks_start],
              *_returned(framed, outs, single)]
    # [GOVH] a generic program's warm call at one exact shape (stax.api's fast path keys calls
    # by it): sizes, tiling key and byte counts computed once per shape, then called without a
    # frame when every buffer it allocates is small at that shape, as a specialized program is
    if symbols and not data and _frameless_generic(schedule, regions):
        small = " and ".join(f"{b.dtype.itemsize} * {' * '.join(map(py_expr, b.shape)) or 1}"
                             f" < {RECYCLE_MIN_BYTES}" for b in allocated) or "True"
        at = _returned(body(True), outs, single)
        picks = [f"{r.name}_ptr[key]" for r in regions if solver is not None]
        for pick in picks:  # each region's function chosen once per shape
            at = [line.replace(pick, pick.replace("[key]", "_at")) for line in at]
        lines += ["", f"def at_shape({', '.join(ins)}):", *lines[prelude_start:checks_start],
                  f"    if not ({small}):", "        return None",
                  *(f"    {pick.replace('[key]', '_at')} = {pick}" for pick in picks),
                  f"    def proven_at({', '.join(ins)}):", *("    " + line for line in at),
                  "    return proven_at"]
    else:
        lines += ["", "at_shape = None"]
    return lines, env


def _outputs(schedule: Schedule) -> list[str]:
    """The returned expression of each output (reshaped where its buffer's shape differs)."""
    program, buffers = schedule.program, schedule.program.buffer_map
    return [name if buffers[name].shape == shape else f"{name}.reshape({py_shape(shape)})"
            for name, shape in zip(program.outputs, program.output_shapes, strict=True)]


def _returned(body: list[str], outs: list[str], single: str | None) -> list[str]:
    """`body` returning its single output by itself (proven's convention) when `single`."""
    if single is None:
        return body
    tuple_form = f"return ({outs[0]},)"
    return [line.replace(tuple_form, f"return {single}") if line.strip() == tuple_form else line
            for line in body]


def _frameless_generic(schedule: Schedule, regions: Sequence[Region]) -> bool:
    """[GOVH] Whether a generic program's call can run without a frame at shapes where every
    buffer it allocates is small (checked per shape, `at_shape`): as `_frameless`, the sizes
    tuple being one more argument of each region."""
    return (schedule.memory.pool is None and fastcall() is not None
            and all(len(region_params(r.plans)) < FAST_MAX_ARGS for r in regions))


def _body_lines(schedule: Schedule, variants: Sequence[Sequence[Region]],
                library: Compiled | None, symbols: Sequence[str],
                solver: Callable[..., int] | None, env: dict[str, Any], frameless: bool,
                local: set[str], data: Mapping[str, int], bound: set[str],
                shape_env: ShapeEnv | None, size_lines: list[str]) -> list[str]:
    """The wrapper's call after its input checks: buffers, region calls, frees, the return;
    in a frame (storage.enter) or [H9] frameless (np.empty buffers, flags on the C stack).
    Adds the names the lines use to `env`."""
    regions = variants[0]
    memory = schedule.memory
    buffers = schedule.program.buffer_map
    lines: list[str] = []
    pool = memory.pool
    if frameless:  # [H9]
        env["raise_flags"] = raise_flags
        lines.append("    # no frame: every buffer is small and comes from np.empty, each region "
                     "has its flags on the C stack")
    else:
        lines.append("    fr = storage.enter()  # this call's buffers (a frame no other call "
                     "holds)")
        lines.append("    try:")
    if not frameless:
        lines.append("    flags = fr.address")
    if pool is not None:
        lines.append(f"    # pool: {pool.size:,} B for all intermediates (M* "
                     f"{memory.peak_bytes:,} B)")
    reused = {r.new: r for r in handed_over_storage(schedule)} if memory.pool is None else {}
    handed_over = {r.old for r in reused.values()}  # deleted when reused, not when freed
    region_of = {g.name: r for r in regions for g in r.groups}
    pending: list[str] = []  # storage handed over inside the current region: delete after it
    data_guards = shape_env.data_guards() if data else []
    for group in schedule.kernels:
        unbound = set(data) - bound
        if unbound and any(data_atoms_in((m.node, buffers[m.node.out].shape)) & unbound
                           for m in group.members if m.node.fn not in SIZED):  # [DYN16]
            raise NotImplementedError(f"stax.jit: {group.name} uses a data-dependent size "
                                      "before the call that computes it")
        for m in group.members:
            if m.node.out in local or m.node.kind == "extern" and m.node.fn in SIZED:
                continue
            out = buffers[m.node.out]
            env[f"dtype_{out.name}"] = out.dtype
            r = reused.get(out.name)
            if pool is not None and out.name in pool.offsets:
                lines.append(f"    {out.name} = fr.pooled({pool.offsets[out.name]}, "
                             f"{py_shape(out.shape)}, dtype_{out.name})")
            elif r is not None and buffers[r.old].kind == "input":  # [SPARSE] the argument
                env["read_only"] = read_only
                lines += [f"    if not {r.old}.flags.writeable:", "        read_only()",
                          f"    {out.name} = {r.old}  # {r.reason}"]
                pending.append(r.old)
            elif r is not None:
                lines.append(f"    {out.name} = {r.old}.reshape({py_shape(out.shape)})"
                             f"  # reuse: {r.reason}")
                pending.append(r.old)
            elif frameless or (out.kind != "intermediate" and not symbols
                               and out.nbytes < RECYCLE_MMAP_BYTES):  # [H9] malloc's own reuse
                lines.append(f"    {out.name} = empty({_stored(out)}, dtype_{out.name})"
                             f"{_transposed(out)}")
            elif out.kind == "intermediate":
                lines.append(f"    {out.name} = fr.intermediate({out.name!r}, "
                             f"{py_shape(out.shape)}, dtype_{out.name})")
            else:
                lines.append(f"    {out.name} = fr.output({out.name!r}, {_stored(out)}, "
                             f"dtype_{out.name}){_transposed(out)}")
        node = group.members[0].node
        region = region_of.get(group.name)
        if region is not None and group is not region.groups[-1]:
            continue  # the region's function runs once its last kernel's buffers exist
        if node.kind == "extern" and node.fn in SIZED:  # [DYN16] the routine returns it
            env["externs"] = EXTERNS
            lines.append(f"    {node.out} = externs[{node.fn!r}]({', '.join(node.extern_inputs)})"
                         f"  # {group.name}: {node.origin} (extern, NumPy; sized by its result)")
            lines += _bind_data(buffers[node.out], data, bound, data_guards, size_lines)
            env["data_size_miss"] = data_size_miss
        elif node.kind == "extern" and node.fn != "matmul":  # a NumPy routine (A2, externs.py)
            env["externs"] = EXTERNS
            lines.append(f"    externs[{node.fn!r}]({', '.join(node.extern_inputs)}, "
                         f"out={node.out})  # {group.name}: {node.origin} (extern, NumPy)")
        elif node.kind == "extern":
            a, b_ = node.extern_inputs
            lines.append(f"    matmul({a}, {b_}, out={node.out})  # {group.name}: "
                         f"{node.origin} (extern, BLAS)")
        else:
            assert region is not None and library is not None
            # the region in every tiling variant (one only, unless generic: issue 11)
            params = region_params(region.plans) + (["stax_sizes"] if symbols else [])
            many = len(params) > MANY_ARGS  # through one array of the buffers' addresses
            fns = [getattr(library.library, rs[regions.index(region)].name
                           + (MANY_ARGS_SUFFIX if many else "")) for rs in variants]
            for fn in fns:
                fn.argtypes = [ctypes.c_void_p] * (2 if many else len(params) + 1)
                fn.restype = None
            pick = "[key]" if solver is not None else ""
            groups = ", ".join(g.name for g in region.groups)
            fast = fastcall()
            # [H9] a region that may open a team gets the cores idle at launch (the kernel's
            # num_threads is min(planned, omp_get_max_threads()), which the call sets to this)
            planned = max(p.threads for p in region.plans)
            env["team"] = team
            size = f", team({planned})" if planned > 1 else ""
            # one C call (fastcall.c; [CALL] a region of more than MANY_ARGS buffers through
            # its entry taking their addresses: `fns`)
            if fast is not None and len(params) <= FAST_MAX_ARGS:
                env["run"] = fast.run
                ptrs = tuple(ctypes.cast(fn, ctypes.c_void_p).value for fn in fns)
                env[f"{region.name}_ptr"] = ptrs if solver is not None else ptrs[0]
                arrays = "".join(f"{p}, " for p in params)
                if frameless:
                    lines.append(f"    bad = run({region.name}_ptr{pick}, ({arrays}), None"
                                 f"{size})  # {groups}")
                    lines += ["    if bad is not None:", "        raise_flags(bad)"]
                else:
                    lines.append(f"    run({region.name}_ptr{pick}, ({arrays}), flags{size})"
                                 f"  # {groups}")
            else:  # [A8] armed for Ctrl-C (stax.runtime.fast.interruptible)
                env["interruptible"] = interruptible
                env[region.name] = fns if solver is not None else fns[0]
                # a constant's address is fixed (the wrapper holds the array): taken once
                # here, not per call (`.ctypes.data` costs ~0.5 us; an unrolled loop of Python
                # scalars passes dozens of constants)
                env.update((f"{p}_address", buffers[p].data.ctypes.data)
                           for p in params if p in buffers and buffers[p].kind == "const")
                args = ", ".join([f"{p}_address" if f"{p}_address" in env else f"{p}.ctypes.data"
                                  for p in params] + ["flags"])
                if many:
                    env["addresses"] = addresses
                    args = f"addresses(({', '.join(params)},)), flags"
                lines.append(f"    with interruptible(flags{size}): {region.name}{pick}({args})"
                             f"  # {groups}")
        freed = [name for g in (region.groups if region is not None else (group,))
                 for name in memory.frees_after.get(g.name, ())
                 if name not in handed_over and buffers[name].kind != "const"]
        if freed or pending:
            lines.append(f"    del {', '.join(pending + freed)}")
        pending = []
    if not frameless:
        lines.append(f"    if fr.flags[{ANY_FLAG}]:")
        lines.append("        check_flags(fr.flags)")
    outs = _outputs(schedule)
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    if not frameless:
        lines[2:] = ["    " + line for line in lines[2:]]  # in the try
        lines += ["    finally:", "        storage.exit(fr)"]
    return lines


def addresses(arrays: Sequence[np.ndarray]) -> ctypes.Array:
    """The arrays' data addresses as one C array (a region with many buffers takes this)."""
    return (ctypes.c_void_p * len(arrays))(*(a.ctypes.data for a in arrays))


def _stored(buf: Buffer) -> str:
    """[LAYOUT] The shape `buf` is allocated with: its axes in memory order."""
    return py_shape(tuple(buf.shape[d] for d in buf.order) if buf.order else buf.shape)


def _transposed(buf: Buffer) -> str:
    """[LAYOUT] The view of the allocation in `_stored`'s shape with `buf`'s own axes."""
    if not buf.order:
        return ""
    return f".transpose({tuple(sorted(range(len(buf.order)), key=buf.order.__getitem__))})"


def _bind_data(out: Buffer, data: Mapping[str, int], bound: set[str],
               guards: list[tuple[str, Any, int]], size_lines: list[str]) -> list[str]:
    """[DYN16] After an extern call that returned `out`: bind the data-dependent sizes its
    shape holds (or check them, bound by an earlier call), check every guard whose sizes are
    now all bound (any size is served otherwise, 0 and 1 too: [COMPACT]), then pass the sizes
    again."""
    lines = []
    for axis, d in enumerate(out.shape):
        name = py_expr(d) if is_sym(d) else ""
        if name not in data:
            continue
        if name in bound:
            lines += [f"    if {out.name}.shape[{axis}] != {name}:",
                      f"        data_size_miss({name!r}, {out.name}.shape[{axis}])"]
            continue
        bound.add(name)
        lines.append(f"    {name} = {out.name}.shape[{axis}]  # [DYN16] a data-dependent size")
        env = d.env
        ready = [g for g in guards if env.atoms_of(g[1]) & set(data) <= bound
                 and name in env.atoms_of(g[1])]
        if ready:
            checks = " and ".join(f"{py_expr(lhs)} {op} {rhs}" for op, lhs, rhs in ready)
            lines += [f"    if not ({checks}):  # guards on it",
                      f"        data_size_miss({name!r}, {name})"]
        lines += size_lines
    return lines
