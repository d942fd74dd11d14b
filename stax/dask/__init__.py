"""Jitted functions on Dask arrays: Stax kernels per block, Dask's scheduler between blocks.

`stax.jit(fn)(dask_array, ...)` traces `fn` once at the arrays' global shapes and partitions
the traced Graph by what each op needs of the chunking (`plan`):

- ops that stay within a block (elementwise; reductions, scans and slices along axes that are
  not chunked; transposes; broadcasts) are grouped into *stages*; each stage value that is
  needed outside its stage becomes one `blockwise` task per block running a compiled Stax
  program of the whole stage (the ops are replayed on the block with NumPy functions under
  `stax.jit`, so Stax fuses them as usual);
- reductions across chunked axes (sum/prod/max/min/any/all, the squared deviations behind
  var/std, argmax/argmin) become *tree reductions*: the producer stage and the partials of
  every reduction of it that is ready are one compiled program per block (column mean, var and
  max read each block once), and Dask's tree reduction combines the small partials
  (`stax.dask.partials`);
- a cumsum/cumprod along a chunked axis becomes Dask's `cumreduction` with Stax block scans;
- anything else that crosses blocks (a slice or reshape along a chunked axis, a matmul
  contracting a chunked axis, ...) runs Dask's own implementation of that NumPy operation on
  the materialized stage results (which rechunks where it must); `explain` names each such
  fallback and says where Dask rechunks.

Dask is imported lazily: the base install does not need it.
"""

from __future__ import annotations

import hashlib
import math
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from stax.dask.partials import ARG, Combine, Partial, Pick, block_partial, passthrough
from stax.graph import Graph, Op, Value

REDUCIBLE = ("sum", "prod", "max", "min", "any", "all", *ARG)
SCANS = {"cumsum": (np.add, 0), "cumprod": (np.multiply, 1)}


def is_dask_array(a: Any) -> bool:
    return type(a).__module__.startswith("dask.array") and hasattr(a, "chunks")


# ---- the plan: which op is local to a block, and where stages end --------------------------

Chunks = tuple[tuple[int, ...], ...]
Axes = tuple[int | None, ...]  # per axis: the symbol of a chunked axis, None if not chunked


@dataclass(frozen=True)
class Step:
    """One decision of the plan: how `op` runs on chunked data, and why."""

    op: Op
    kind: str  # "local", "tree-reduce", "cumreduction", "dask"
    reason: str

    def __str__(self) -> str:
        return f"{self.op.out} = {self.op.kind}: {self.kind} ({self.reason})"


class Symbols:
    """Chunked axes that must be aligned block by block share a symbol (union-find)."""

    def __init__(self) -> None:
        self.parent: list[int] = []

    def fresh(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, s: int) -> int:
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: int, b: int) -> int:
        a, b = self.find(a), self.find(b)
        self.parent[max(a, b)] = min(a, b)
        return min(a, b)


def broadcast_axes(op: Op) -> set[int]:
    """The output axes along which a broadcast op repeats its input."""
    (v,) = op.inputs
    nd = len(op.out.shape)
    return {i for i in range(nd)
            if i < nd - v.ndim or v.shape[i - nd + v.ndim] != op.out.shape[i]}


def _spans(user: Op, op: Op, i: int, producer: dict[int, Op]) -> bool:
    """Whether another input of `user` (not itself a broadcast) spans axis `i` of `op`'s."""
    nd = op.out.ndim
    return any(w.id != op.out.id and producer[w.id].kind != "broadcast" and
               w.ndim >= nd - i and w.shape[w.ndim - (nd - i)] == op.out.shape[i]
               for w in user.inputs)


def lazy_broadcasts(graph: Graph) -> dict[int, set[int]]:
    """Broadcasts left to NumPy's implicit broadcasting in their consumers (value id ->
    repeated axes): those whose every consumer is elementwise with another input that spans
    each repeated axis (so a block of `x - mean` takes `mean` at the block's extent)."""
    users = graph.users()
    producer = graph.producer()
    outputs = {v.id for v in graph.outputs}
    lazy = {}
    for op in graph.ops:
        if op.kind != "broadcast" or op.out.id in outputs:
            continue
        axes = broadcast_axes(op)
        if all(u.kind in ("elementwise", "where") and u.out.ndim == op.out.ndim and
               all(_spans(u, op, i, producer) for i in axes)
               for u in users.get(op.out.id, [])):
            lazy[op.out.id] = axes
    return lazy


def _aligned(op: Op, info: dict[int, tuple[Chunks, Axes]], syms: Symbols,
             free: dict[int, set[int]]) -> tuple[Chunks, Axes] | None:
    """Chunks and symbols of a broadcasting op's output, or None when inputs disagree."""
    nd = len(op.out.shape)
    chunks: list[tuple[int, ...]] = [(s,) for s in op.out.shape]
    axes: list[int | None] = [None] * nd
    for v in op.inputs:  # the chunking of each output axis: its chunked inputs'
        ch, sy = info[v.id]
        for j, s in enumerate(sy):
            if s is not None and v.shape[j] == op.out.shape[nd - len(ch) + j]:
                chunks[nd - len(ch) + j] = ch[j]
    for v in op.inputs:  # every input not broadcast along an axis must be chunked alike
        ch, sy = info[v.id]
        for j, s in enumerate(sy):
            i = nd - len(ch) + j
            if v.shape[j] != op.out.shape[i] or op.out.shape[i] == 1 or \
                    j in free.get(v.id, ()):
                continue
            if ch[j] != chunks[i]:
                return None
            if s is not None:
                axes[i] = s if axes[i] is None else syms.union(axes[i], s)
    return tuple(chunks), tuple(axes)


def _local(op: Op, info: dict[int, tuple[Chunks, Axes]], syms: Symbols,
           free: dict[int, set[int]]) -> tuple[tuple[Chunks, Axes] | None, str]:
    """Chunks and symbols of the output when `op` is local to a block, else (None, why not)."""
    ins = [info[v.id] for v in op.inputs]
    cut = [{i for i, s in enumerate(sy) if s is not None} for _, sy in ins]
    shape = op.out.shape
    if not any(cut):
        return (_single(shape), (None,) * len(shape)), "no input is chunked"
    kind = op.kind
    if kind in ("elementwise", "where", "cast", "broadcast") or \
            kind == "concatenate" and not any(op.attr("axis") in c for c in cut):
        out = _aligned(op, info, syms, free)
        return (out, "within a block") if out is not None else \
            (None, "inputs are chunked differently")
    if kind == "concatenate":
        return None, f"concatenates along chunked axis {op.attr('axis')}"
    (ch, sy), c0 = ins[0], cut[0]
    if kind == "transpose":
        if len(c0) > 1:
            return None, "transposes several chunked axes"
        perm = op.attr("perm")
        return (tuple(ch[p] for p in perm), tuple(sy[p] for p in perm)), "within a block"
    if kind == "reduce":
        axes = set(op.attr("axes"))
        if axes & c0:
            return None, f"reduces across the chunks of axis {sorted(axes & c0)}"
        return reduced((ch, sy), axes, op.attr("keepdims")), \
            "reduces only axes that are not chunked"
    if kind == "scan":
        if op.attr("axis") in c0:
            return None, f"scans across the chunks of axis {op.attr('axis')}"
        return ins[0], "scans an axis that is not chunked"
    if kind == "slice":
        v = op.inputs[0]
        for i in c0:
            if (op.attr("starts")[i], op.attr("steps")[i], shape[i]) != (0, 1, v.shape[i]):
                return None, f"slices axis {i} across chunks"
        return ins[0], "slices only axes that are not chunked"
    if kind == "reshape":
        k = max(c0) + 1
        if op.inputs[0].shape[:k] == shape[:k]:
            return (ch[:k] + _single(shape[k:]), sy[:k] + (None,) * (len(shape) - k)), \
                "keeps the chunked leading axes"
        return None, "reshapes chunked axes"
    if kind == "matmul" and not cut[1] and len(op.inputs[1].shape) == 2 and \
            len(ch) >= 2 and len(ch) - 1 not in c0:
        return (ch[:-1] + ((op.out.shape[-1],),), sy[:-1] + (None,)), \
            "multiplies blocks of rows by an unchunked matrix"
    if kind == "matmul":
        return None, "a matmul across chunks (Dask's blocked matmul)"
    return None, f"{kind} of chunked data"


def reduced(info: tuple[Chunks, Axes], axes: set[int], keepdims: bool
            ) -> tuple[Chunks, Axes]:
    """Chunks and symbols of a reduction's result over `axes`."""
    ch, sy = info
    if keepdims:
        return (tuple((1,) if i in axes else c for i, c in enumerate(ch)),
                tuple(None if i in axes else s for i, s in enumerate(sy)))
    keep = [i for i in range(len(ch)) if i not in axes]
    return tuple(ch[i] for i in keep), tuple(sy[i] for i in keep)


def _single(shape: Sequence[int]) -> Chunks:
    return tuple((int(s),) for s in shape)


def _boundary_kind(op: Op) -> str:
    if op.kind == "reduce" and op.attr("fn") in REDUCIBLE:
        return "tree-reduce"
    if op.kind == "scan" and op.attr("fn") in SCANS:
        return "cumreduction"
    return "dask"


# ---- replaying ops with NumPy functions (on blocks under stax.jit, or on Dask arrays) -------

def _slices(op: Op, x: Any) -> tuple[slice, ...]:
    out = []
    for start, step, n, extent in zip(op.attr("starts"), op.attr("steps"), op.out.shape,
                                      op.inputs[0].shape, strict=True):
        if (start, step, n) == (0, 1, extent):
            out.append(slice(None))
            continue
        stop = start + n * step
        out.append(slice(start, None if stop < 0 else stop, step))
    return tuple(out)


def replay(op: Op, xs: list[Any], lazy: bool = False) -> Any:
    """`op` applied to `xs` with NumPy's functions; block shapes follow the inputs. A lazy
    broadcast only adds the repeated axes (as length 1): its consumer broadcasts."""
    kind = op.kind
    if kind == "const":
        return np.asarray(op.attr("value"), dtype=op.out.dtype)
    if kind == "constant_array":
        return op.attr("data").array
    if kind == "elementwise":
        result = getattr(np, op.attr("fn"))(*xs)
    elif kind == "cast":
        return xs[0].astype(op.out.dtype)
    elif kind == "where":
        result = np.where(*xs)
    elif kind == "broadcast":
        (v,) = op.inputs
        nd = len(op.out.shape)
        shape = list(op.out.shape)
        for j in range(v.ndim):
            if v.shape[j] == shape[nd - v.ndim + j]:
                shape[nd - v.ndim + j] = xs[0].shape[j]
        if lazy:
            return np.reshape(xs[0], tuple(1 if i in broadcast_axes(op) else n
                                           for i, n in enumerate(shape)))
        return np.broadcast_to(xs[0], tuple(shape))
    elif kind == "transpose":
        return np.transpose(xs[0], op.attr("perm"))
    elif kind == "reduce":
        fn, axes = op.attr("fn"), op.attr("axes")
        if fn in ("argmax", "argmin"):
            result = getattr(np, fn)(xs[0], axis=axes[0], keepdims=op.attr("keepdims"))
        else:
            result = getattr(np, fn)(xs[0], axis=axes, keepdims=op.attr("keepdims"))
    elif kind == "scan":
        result = getattr(np, op.attr("fn"))(xs[0], axis=op.attr("axis"))
    elif kind == "slice":
        return xs[0][_slices(op, xs[0])]
    elif kind == "reshape":
        v = op.inputs[0]
        k = next((i for i in range(min(v.ndim, op.out.ndim))
                  if v.shape[i] != op.out.shape[i]), min(v.ndim, op.out.ndim))
        return np.reshape(xs[0], tuple(xs[0].shape[:k]) + tuple(op.out.shape[k:]))
    elif kind == "concatenate":
        result = np.concatenate(xs, axis=op.attr("axis"))
    elif kind == "matmul":
        result = np.matmul(*xs)
    elif kind == "gather":
        result = np.take_along_axis(xs[0], xs[1], axis=op.attr("axis"))
    else:
        raise NotImplementedError(f"stax.jit on Dask arrays: op {kind} ({op}) is not supported "
                                  "across chunks; rechunk the input to one chunk")
    return result if result.dtype == op.out.dtype else result.astype(op.out.dtype)


@dataclass(frozen=True)
class Program:
    """The ops of one stage that compute `outputs` from `inputs`, as a picklable block task:
    the block of the one output, or (with `finish`) the partials of each output's reduction."""

    inputs: tuple[Value, ...]
    ops: tuple[Op, ...]
    outputs: tuple[Value, ...]
    finish: tuple[Partial, ...] | None  # partial reductions of the outputs, one per output
    threads: int
    lazy: frozenset[int] = frozenset()  # broadcasts left to their consumers
    # Stencil windows (map_overlap): slice op id -> (axis, start) along the overlapped axis,
    # and the block's (first output row - first input row, output rows) once specialized.
    windows: tuple[tuple[int, int, int], ...] = ()
    at: tuple[int, int] | None = None
    starts: bool = False  # the last block holds the block's first global index per axis

    @property
    def __name__(self) -> str:  # Dask names some tasks after their function
        return "stax-" + "-".join(op.kind for op in self.ops[-2:])

    def run(self, *blocks: Any) -> Any:
        starts = np.reshape(blocks[-1], (-1,)) if self.starts else None
        env = {v.id: b for v, b in zip(self.inputs, blocks[:len(self.inputs)], strict=True)}
        windows = {w[0]: w[1:] for w in self.windows}
        for op in self.ops:
            xs = [env[v.id] for v in op.inputs]
            if op.out.id in windows and self.at is not None:
                axis, start = windows[op.out.id]
                index = [slice(None)] * op.out.ndim
                index[axis] = slice(self.at[0] + start, self.at[0] + start + self.at[1])
                op = Op(op.kind, op.inputs, op.out, tuple(
                    (k, tuple(0 if i == axis else x for i, x in enumerate(v))
                     if k == "starts" else v) for k, v in op.attrs))
                xs = [xs[0][tuple(index)]]
            env[op.out.id] = replay(op, xs, op.out.id in self.lazy)
        if self.finish is None:
            (out,) = (env[v.id] for v in self.outputs)
            return out
        return tuple(a for part, v in zip(self.finish, self.outputs, strict=True)
                     for a in block_partial(part, env[v.id], starts, v.shape))

    @property
    def key(self) -> str:
        return hashlib.sha256(pickle.dumps(self)).hexdigest()[:16]

    def __call__(self, *blocks: Any, **_: Any) -> np.ndarray:
        """A block task (keyword arguments that Dask passes, such as a scan's axis, are
        already part of the program). A stencil's last block is its position: (B, lo, hi)."""
        program = self
        if self.windows:
            base, lo, hi = (int(t) for t in np.ravel(blocks[-1]))
            blocks = blocks[:-1]
            program = replace(self, at=(lo - base, hi - lo))
        out = _compiled(program)(*(np.require(b, requirements="CA") for b in blocks))
        return np.asarray(out) if self.finish is None else tuple(map(np.asarray, out))


_PROGRAMS: dict[str, Callable[..., Any]] = {}


def _compiled(program: Program) -> Callable[..., Any]:
    """One `stax.jit` per program per process (workers compile once; the disk cache is shared)."""
    key = program.key
    fn = _PROGRAMS.get(key)
    if fn is None:
        from stax.api import jit

        # Specialized per block shape (dynamic=False): the partials use block sizes as numbers.
        fn = _PROGRAMS[key] = jit(program.run, threads=program.threads, dynamic=False)
    return fn


# ---- building the Dask graph ---------------------------------------------------------------

def default_threads() -> int:
    """Stax threads per block task: the cores of the machine shared by the task threads that
    Dask runs on it (workers x threads never oversubscribe the cores). With a distributed
    client, the busiest host's worker threads count (hosts are assumed alike); with Dask's
    local schedulers, which run one task per core, one thread."""
    import os

    try:
        from distributed import default_client

        workers = default_client().scheduler_info()["workers"].values()
    except (ImportError, ValueError):  # no distributed client: a local scheduler
        return 1
    per_host: dict[str, int] = {}
    for w in workers:
        host = str(w.get("host", ""))
        per_host[host] = per_host.get(host, 0) + int(w.get("nthreads", 1))
    return max(1, (os.cpu_count() or 1) // max(per_host.values(), default=1))


@dataclass(frozen=True)
class Pending:
    """A reduction across chunks not built yet: `op` summarized per block as `part` of
    `src`, built together with every other ready reduction of the same blocks."""

    op: Op
    src: Value
    part: Partial


class Builder:
    """Walks the traced ops once: plans each, builds Dask arrays where stages end."""

    def __init__(self, graph: Graph, arrays: dict[int, Any], label: str, threads: int) -> None:
        self.graph = graph
        self.label = label
        self.threads = threads
        self.syms = Symbols()
        self.arrays = dict(arrays)  # value id -> its Dask array, once built
        self.info: dict[int, tuple[Chunks, Axes]] = {}
        self.local: set[int] = set()
        self.steps: list[Step] = []
        self.producer = graph.producer()
        self.free = lazy_broadcasts(graph)
        # Stencils: window value id -> (chunked axis, extent); window slice op -> (axis, start)
        self.wins: dict[int, tuple[int, int]] = {}
        self.slices: dict[int, tuple[int, int]] = {}
        # Reductions across chunks: pending ones by result id, built partials by (source, part)
        self.pending: dict[int, Pending] = {}
        self.partials: dict[tuple[int, Partial], Any] = {}
        self.flattened = _flattened_for_args(graph)
        for v in graph.inputs:
            self.info[v.id] = self._describe(self.arrays[v.id])
        for op in graph.ops:
            if op.kind == "input":
                continue
            out, reason = self._window(op)
            if out is None and not reason:
                out, reason = _local(op, self.info, self.syms, self.free)
            if out is not None:
                self.steps.append(Step(op, "local", reason))
                self.info[op.out.id] = out
                self.local.add(op.out.id)
            elif op.out.id in self.flattened:
                self.steps.append(Step(op, "tree-reduce", "flattened by the arg-reduction that "
                                       "reads it: no reshape, no rechunk"))
                self.info[op.out.id] = (_single(op.out.shape), (self.syms.fresh(),))
            elif _boundary_kind(op) == "tree-reduce":
                self._defer(Step(op, "tree-reduce", reason))
            else:
                self._boundary(Step(op, _boundary_kind(op), reason))

    def _window(self, op: Op) -> tuple[tuple[Chunks, Axes] | None, str]:
        """Stencils: a step-1 slice along one chunked axis (its halo taken from the next block,
        as `map_overlap` does), and elementwise ops or reductions over other axes of such
        windows, stay local; anything else on a window ends its stage."""
        wins = {self.wins[v.id] for v in op.inputs if v.id in self.wins}
        if op.kind == "slice" and not wins:
            (v,) = op.inputs
            ch, sy = self.info[v.id]
            cut = [i for i, c in enumerate(ch) if len(c) > 1 and (
                op.attr("starts")[i], op.attr("steps")[i], op.out.shape[i]) != (0, 1, v.shape[i])]
            if len(cut) != 1 or op.attr("steps")[cut[0]] != 1 or \
                    v.shape[cut[0]] - op.out.shape[cut[0]] > min(ch[cut[0]]):
                return None, ""
            (a,) = cut
            self.array(v)  # the halo comes from a built array
            self.wins[op.out.id] = (a, op.out.shape[a])
            self.slices[op.out.id] = (a, op.attr("starts")[a])
            chunks = tuple(c if len(c) > 1 else (n,) for c, n in zip(ch, op.out.shape,
                                                                      strict=True))
            return (chunks, sy), f"a stencil window along chunked axis {a} " \
                f"(halo {v.shape[a] - op.out.shape[a]})"
        if not wins:
            return None, ""
        nd = op.out.ndim
        placed = {(nd - v.ndim + self.wins[v.id][0], self.wins[v.id][1])
                  for v in op.inputs if v.id in self.wins}
        if op.kind in ("elementwise", "where", "cast") and len(placed) == 1:
            out = _aligned(op, self.info, self.syms, self.free)
            if out is not None:
                self.wins[op.out.id] = next(iter(placed))
                return out, "within a block of stencil windows"
        if op.kind in ("reduce", "scan", "slice") and len(wins) == 1:
            ((a, n),) = wins
            axes = op.attr("axes") if op.kind == "reduce" else ()
            out, reason = _local(op, self.info, self.syms, self.free)
            if out is not None and a not in axes:
                shift = sum(i < a for i in axes) if op.kind == "reduce" and \
                    not op.attr("keepdims") else 0
                self.wins[op.out.id] = (a - shift, n)
                return out, reason
            if op.kind == "reduce" and a in axes:
                return None, ""  # a tree reduction of the stencil's blocks
        return None, "a stencil window ends its stage here"

    def _describe(self, arr: Any) -> tuple[Chunks, Axes]:
        chunks = tuple(tuple(int(s) for s in c) for c in arr.chunks)
        return chunks, tuple(self.syms.fresh() if len(c) > 1 else None for c in chunks)

    def stage(self, values: Sequence[Value]) -> tuple[list[Value], list[Op]]:
        """The local ops that compute `values` from built (or pending) arrays, and those
        arrays' values."""
        inputs: dict[int, Value] = {}
        ops: dict[int, Op] = {}
        todo = list(values)
        while todo:
            w = todo.pop()
            if w.id in ops or w.id in inputs:
                continue
            if w.id in self.arrays or w.id in self.pending:
                inputs[w.id] = w
                continue
            op = self.producer[w.id]
            ops[w.id] = op
            todo.extend(op.inputs)
        order = [op for op in self.graph.ops if op.out.id in ops]
        return sorted(inputs.values(), key=lambda x: x.id), order

    def array(self, v: Value) -> Any:
        if v.id in self.pending:
            self._force(v.id)
        if v.id not in self.arrays:
            self.arrays[v.id] = self.blockwise([v], None)
        return self.arrays[v.id]

    def index(self, v: Value, fresh: list[int]) -> tuple[str, ...]:
        """Blockwise index letters of `v`: its chunked axes' symbols, fresh ones otherwise."""
        def letter(s: int | None) -> str:
            if s is not None:
                return f"s{self.syms.find(s)}"
            fresh[0] += 1
            return f"u{fresh[0]}"
        return tuple(letter(s) for s in self.info[v.id][1])

    def blockwise(self, values: list[Value], finish: tuple[Partial, ...] | None) -> Any:
        """One task per block computing the stage of `values` (one value, or with `finish`
        the values whose partials it returns, all of one block structure)."""
        import dask.array as da

        v = values[0]
        inputs, ops = self.stage(values)
        fresh = [0]
        out_ind = self.index(v, fresh)
        arrays = [self.array(w) for w in inputs]
        windows = tuple((op.out.id, *self.slices[op.out.id]) for op in ops
                        if op.out.id in self.slices)
        adjust: dict[str, Any] = {}
        first = None
        if windows:
            arrays, position, first = self._overlap(v, ops, inputs, arrays)
            adjust[out_ind[self.wins[v.id][0]]] = tuple(int(r) for r in np.diff(first))
        args: list[Any] = []
        for w, arr in zip(inputs, arrays, strict=True):
            args += [arr, self.index(w, fresh)]
        starts = finish is not None and any(p.kind in ARG for p in finish)
        if starts:
            args += self._starts(v, out_ind, fresh, first)
        if windows:
            args += [position, (out_ind[self.wins[v.id][0]], self.index(v, fresh)[0] + "p")]
        reduced = {a for p in finish for a in p.axes} if finish else set()
        new_axes = {c: (1 if i in reduced else n) for i, (c, n) in
                    enumerate(zip(out_ind, v.shape, strict=True)) if c.startswith("u")}
        adjust |= {out_ind[i]: 1 for i in reduced if out_ind[i].startswith("s")}
        program = Program(tuple(inputs), tuple(ops), tuple(values), finish, self.threads,
                          frozenset(op.out.id for op in ops if op.out.id in self.free),
                          windows, starts=starts)
        what = "partials-" + "-".join(p.kind for p in finish) if finish else \
            (ops[-1].kind if ops else "copy")
        dtype = np.dtype(object) if finish else v.dtype
        return da.blockwise(program, out_ind, *args, dtype=dtype, new_axes=new_axes,
                            adjust_chunks=adjust or None, concatenate=True,
                            align_arrays=not (windows or starts),
                            token=f"stax-{self.label}-{what}",
                            meta=np.empty((0,) * v.ndim, dtype))

    def _starts(self, v: Value, out_ind: tuple[str, ...], fresh: list[int],
                window: np.ndarray | None) -> list[Any]:
        """A blockwise argument giving each block its first global index along each axis
        (along a stencil's axis, the first of its `window` rows: their bounds per block)."""
        import dask.array as da

        ch, sy = self.info[v.id]
        first = np.zeros(tuple(len(c) for c in ch) + (len(ch),), np.int64)
        for i, c in enumerate(ch):
            shape = [1] * len(ch)
            shape[i] = len(c)
            bounds = window if window is not None and i == self.wins[v.id][0] else \
                np.cumsum((0,) + c)
            first[..., i] = np.reshape(bounds[:-1], shape)
        index = list(self.index(v, fresh))  # fresh letters on unchunked axes (one block)
        index = [out_ind[i] if s is not None else index[i] for i, s in enumerate(sy)]
        fresh[0] += 1
        return [da.from_array(first, chunks=(1,) * len(ch) + (len(ch),)),
                (*index, f"u{fresh[0]}")]

    def _overlap(self, v: Value, ops: list[Op], inputs: list[Value], arrays: list[Any]
                 ) -> tuple[list[Any], Any, np.ndarray]:
        """A stencil stage's inputs with their halos, each block's position, and the bounds of
        the blocks' output rows."""
        import dask.array as da

        a, n = self.wins[v.id]
        windows = [(op.inputs[0].id, *self.slices[op.out.id]) for op in ops
                   if op.out.id in self.slices]
        sliced = {w: axis for w, axis, _ in windows}
        starts = [start for _, _, start in windows]
        s_min, depth = min(starts), max(starts) - min(starts)
        axis = windows[0][1]
        base = next(arr for w, arr in zip(inputs, arrays, strict=True) if w.id in sliced)
        bounds = np.cumsum((0,) + base.chunks[axis])
        lo = np.clip(bounds[:-1] - s_min, 0, n)
        hi = np.clip(bounds[1:] - s_min, 0, n)
        hi[-1] = n
        position = da.from_array(np.stack([bounds[:-1], lo, hi], axis=1), chunks=(1, 3))
        overlapped = [da.overlap.overlap(arr, depth={sliced[w.id]: (0, depth)},
                                         boundary="none") if w.id in sliced and depth else arr
                      for w, arr in zip(inputs, arrays, strict=True)]
        return overlapped, position, np.append(lo, n)

    # ---- reductions across chunks: deferred, then built in groups sharing one pass ----------

    def _defer(self, step: Step) -> None:
        """Plans a reduction across chunks; its blocks are read when its result is needed,
        together with every other reduction of the same blocks that is ready by then."""
        op = step.op
        src, axes = op.inputs[0], op.attr("axes")
        flat = src.id in self.flattened
        if flat:  # x.argmax(): the flat index of the source's blocks, no reshape
            src = self.producer[src.id].inputs[0]
            axes = tuple(range(src.ndim))
        kind = op.attr("fn")
        moment = _moment_source(op, self.producer) if kind == "sum" else None
        if moment is not None:
            src, kind = moment, "moment"
            step = replace(step, reason=step.reason + "; the sum of squared deviations from "
                           "the mean, as count/mean/M2 partials (Chan et al.)")
        self.steps.append(step)
        self.pending[op.out.id] = Pending(op, src, Partial(kind, axes, op.out.dtype, flat))
        self.info[op.out.id] = (_single(op.out.shape), (None,) * op.out.ndim) if flat else \
            reduced(self.info[src.id], set(axes), op.attr("keepdims"))

    def _group(self, p: Pending) -> tuple[Any, ...]:
        """Reductions with equal keys share one block program: the same block structure and
        chunked axes reduced (a stencil's blocks only with reductions of the same value)."""
        _, sy = self.info[p.src.id]
        windowed = any(o.out.id in self.slices for o in self.stage([p.src])[1])
        return (tuple(None if s is None else self.syms.find(s) for s in sy),
                tuple(i for i in p.part.axes if sy[i] is not None),
                p.src.id if windowed else None)

    def _ready(self, p: Pending) -> bool:
        return not any(w.id in self.pending for w in self.stage([p.src])[0])

    def _force(self, vid: int) -> None:
        """Builds the pending reduction `vid` and every ready one sharing its blocks."""
        p = self.pending[vid]
        for w in self.stage([p.src])[0]:
            if w.id in self.pending:
                self._force(w.id)
        if vid not in self.pending:
            return
        key = self._group(p)
        group = [q for q in self.pending.values() if self._group(q) == key and self._ready(q)]
        self._build(group)

    def _build(self, group: list[Pending]) -> None:
        import dask.array as da

        todo: dict[tuple[int, Partial], Pending] = {}
        for q in group:
            if (q.src.id, q.part) not in self.partials:
                todo.setdefault((q.src.id, q.part), q)
        members = list(todo.values())
        if members:
            parts = tuple(q.part for q in members)
            carrier = self.blockwise([q.src for q in members], parts)
            _, sy = self.info[members[0].src.id]
            grid = tuple(i for i in parts[0].axes if sy[i] is not None)
            combined = da.reduction(
                carrier, passthrough, Combine(parts, final=True), axis=grid, keepdims=True,
                dtype=object, combine=Combine(parts, final=False), concatenate=False,
                meta=np.empty((0,) * carrier.ndim, object), name=f"stax-{self.label}-combine")
            for i, q in enumerate(members):
                self.partials[(q.src.id, q.part)] = combined.map_blocks(
                    Pick(i), chunks=reduced(self.info[q.src.id], set(q.part.axes), True)[0],
                    dtype=q.part.dtype, meta=np.empty((0,) * q.src.ndim, q.part.dtype),
                    token=f"stax-{self.label}-{q.part.kind}")
        shared = ", ".join(f"{q.part.kind}(v{q.src.id})" for q in members)
        for q in group:
            result, out = self.partials[(q.src.id, q.part)], q.op.out
            if q.part.flat:
                result = result.reshape(out.shape)
            elif not q.op.attr("keepdims"):
                result = da.squeeze(result, axis=q.part.axes)
            self.arrays[out.id] = result
            del self.pending[out.id]
            if members:
                i = next(i for i, s in enumerate(self.steps) if s.op is q.op)
                self.steps[i] = replace(self.steps[i], reason=self.steps[i].reason +
                                        f"; one pass over the blocks with {shared}")

    def _boundary(self, step: Step) -> None:
        import dask.array as da

        op = step.op
        xs = [self.array(w) for w in op.inputs]
        if step.kind == "cumreduction":
            binop, ident = SCANS[op.attr("fn")]
            scan = Program((op.inputs[0],), (op,), (op.out,), None, self.threads)
            result = da.reductions.cumreduction(scan, binop, ident, xs[0],
                                                axis=op.attr("axis"), dtype=op.out.dtype)
        else:
            result = replay(op, xs)
            before = {name for x in xs for name in x.dask.layers}
            if any(name.startswith("rechunk") and name not in before
                   for name in result.dask.layers):
                step = replace(step, reason=step.reason + "; Dask rechunks here")
        self.steps.append(step)
        self.arrays[op.out.id] = result
        self.info[op.out.id] = self._describe(result)


def _flattened_for_args(graph: Graph) -> set[int]:
    """Flattening reshapes (`x.argmax()`) read only by argmax/argmin: the arg-reduction takes
    flat indices of the source's blocks itself when the reshape would cross chunks."""
    users = graph.users()
    outputs = {v.id for v in graph.outputs}
    return {op.out.id for op in graph.ops
            if op.kind == "reshape" and op.out.ndim == 1 and op.inputs[0].ndim > 1 and
            op.out.id not in outputs and users.get(op.out.id) and
            all(u.kind == "reduce" and u.attr("fn") in ARG for u in users[op.out.id])}


def _through(v: Value, producer: dict[int, Op], kinds: tuple[str, ...]) -> Op:
    """The producer of `v`, looking through ops of `kinds` (broadcasts, casts)."""
    op = producer[v.id]
    while op.kind in kinds:
        op = producer[op.inputs[0].id]
    return op


def _same(a: Value, b: Value, producer: dict[int, Op]) -> bool:
    """One value, or the same cast of one value (a trace casts `x` once per use)."""
    if a.id == b.id:
        return True
    pa, pb = producer[a.id], producer[b.id]
    return pa.kind == pb.kind == "cast" and a.dtype == b.dtype and \
        _same(pa.inputs[0], pb.inputs[0], producer)


def _moment_source(op: Op, producer: dict[int, Op]) -> Value | None:
    """`y` when `op` sums (y - mean(y))**2 over the axes of that mean (var/std): then its
    partials are count/mean/M2 of `y` per block, and no pass needs the global mean first."""
    axes = op.attr("axes")
    sq = producer[op.inputs[0].id]
    if sq.kind != "elementwise" or not (
            sq.attr("fn") == "square" or
            sq.attr("fn") == "multiply" and sq.inputs[0].id == sq.inputs[1].id):
        return None
    sub = producer[sq.inputs[0].id]
    if sub.kind != "elementwise" or sub.attr("fn") != "subtract":
        return None
    y, centre = sub.inputs
    if y.shape != sub.out.shape or y.dtype.kind != "f":
        return None
    mean = _through(centre, producer, ("broadcast",))
    if mean.kind != "elementwise" or mean.attr("fn") != "true_divide":
        return None
    total, count = (producer[v.id] for v in mean.inputs)
    count = _through(count.out, producer, ("broadcast",))
    if total.kind != "reduce" or total.attr("fn") != "sum" or \
            set(total.attr("axes")) != set(axes) or \
            not _same(total.inputs[0], y, producer) or count.kind != "const" or \
            count.attr("value") != math.prod(y.shape[i] for i in axes):
        return None
    if not total.attr("keepdims") and tuple(sorted(axes)) != tuple(range(len(axes))):
        return None  # the mean broadcasts back along leading axes only
    return y


@dataclass(frozen=True)
class DaskCall:
    steps: tuple[Step, ...]
    result: Any
    threads: str  # Stax threads per block task, and why

    def explain(self) -> str:
        lines = [f"  {s}" for s in self.steps
                 if s.kind != "local" or s.reason.startswith("a stencil window")]
        local = sum(s.kind == "local" for s in self.steps)
        return "\n".join([f"{local} ops run inside blocks (fused into Stax programs per block)",
                          f"Stax threads per block task: {self.threads}", *lines])


def call(jitted: Any, args: tuple[Any, ...]) -> DaskCall:
    """Run `jitted` on Dask array arguments: a lazy result of Dask arrays."""
    import dask.array as da

    from stax.api import _unflatten, trace
    from stax.frontend.trace import GraphBreak

    placeholders = []
    for i, a in enumerate(args):
        if not is_dask_array(a):
            placeholders.append(a)
            continue
        if any(np.isnan(s) for c in a.chunks for s in c):
            raise ValueError(f"stax.jit: argument {i} is a Dask array with unknown chunk "
                             "sizes (NaN); call compute_chunk_sizes() on it first")
        placeholders.append(np.broadcast_to(np.zeros((), a.dtype), a.shape))
    try:
        traced = trace(jitted.fn, tuple(placeholders))
    except GraphBreak as e:  # a break would need the values of a lazy array
        raise NotImplementedError(f"stax.jit on Dask arrays: {e.error} (this would be a graph "
                                  "break, which needs computed values; call the function on "
                                  "blocks with map_blocks, or compute the array first)"
                                  ) from None
    if traced.writeback:
        raise NotImplementedError("stax.jit on Dask arrays: the function assigns into "
                                  f"argument(s) {list(traced.writeback)}; Dask arrays are "
                                  "immutable")
    graph = traced.graph
    arrays = {}
    for op in graph.ops:
        if op.kind == "input":
            a = args[op.attr("index")]
            arrays[op.out.id] = a if is_dask_array(a) else da.from_array(np.asarray(a))
    given = jitted.options.get("threads")
    threads = given or default_threads()
    why = "as given to stax.jit" if given else "the cores per Dask task thread on a host"
    builder = Builder(graph, arrays, getattr(jitted.fn, "__name__", "fn"), threads)
    flat = tuple(builder.array(v) for v in graph.outputs)
    return DaskCall(tuple(builder.steps), _unflatten(traced.structure, flat[: traced.n_results]),
                    f"{threads} ({why})")


def explain(jitted: Any, *args: Any) -> str:
    """How a jitted function maps onto Dask for these arguments: the steps that cross blocks."""
    return call(jitted, args).explain()


__all__ = ["call", "default_threads", "explain", "is_dask_array"]
