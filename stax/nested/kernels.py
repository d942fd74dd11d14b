"""Parallel C++ kernels for flattened nested programs, with run-time sizes.

Three kernel shapes cover the flat programs:

- `run_map`: one parallel loop over the n elements of a space, storing expressions (a plain
  `omp parallel for simd`, or, when an expression needs the element's segment, a walk over the
  segments each thread's chunk touches, found by binary search in the segment bounds);
- `run_segreduce`: a segmented reduction, parallel over *elements* (so one long segment and
  many short ones balance alike): the elements are cut into equal chunks (4 per thread,
  handed out dynamically); each chunk reduces the segments inside it and keeps at most two
  partial results (the segments cut by its edges), which one serial pass combines in element
  order, so non-commutative operators are exact;
- `run_segscan`: a three-phase segmented scan (local scans per chunk, a serial pass over the
  chunks' carries, a fix-up of each chunk's leading continuation), inclusive or exclusive.

The element values are expressions (`stax.nested.expr`) evaluated inside the loop, so producers
such as `iota`, replicated free variables and elementwise arithmetic are fused into the
segmented kernel instead of being materialized. Sizes are kernel parameters, so a kernel is
compiled once per program structure and dtypes (through `stax.runtime.compiler`) and reused
for any data size.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from stax.nested import tape
from stax.nested.expr import (
    BOOL,
    INT64,
    OMP_INT_REDUCTIONS,
    OMP_REDUCTIONS,
    PRELUDE,
    Arg,
    Buf,
    Call,
    Const,
    Expr,
    Idx,
    Load,
    Seg,
    buffers,
    cpp_type,
    direct_loads,
    emit,
    guarded_load,
    rename_args,
    uses,
)
from stax.nested.tape import record
from stax.ops import ANY_FLAG
from stax.runtime.compiler import compile_source, isa_level
from stax.runtime.fast import interruptible

# Below this many elements a kernel runs on one thread (OpenMP start-up costs more).
PARALLEL_MIN = 1 << 15
# Chunks of the segmented kernels; None: one per OpenMP thread. Tests set it to split small
# inputs into many chunks (so carries cross several chunk edges, some chunks empty).
CHUNKS: int | None = None
CHUNKS_PER_THREAD = 4


def native(a: np.ndarray) -> np.ndarray:
    """`a` as a contiguous array in native byte order with a dtype kernels support."""
    cpp_type(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a)


@dataclass(frozen=True)
class Layout:
    """How the n elements of a space split into the k segments of its parent: `bounds`
    (k+1 offsets) or, for a regular nest, a uniform `width`."""
    k: int
    n: int
    bounds: np.ndarray | None
    width: int | None

    @staticmethod
    def uniform(k: int, width: int) -> Layout:
        return Layout(k, k * width, None, width)

    @staticmethod
    def from_bounds(bounds: np.ndarray) -> Layout:
        return Layout(len(bounds) - 1, int(bounds[-1]), bounds, None)


@dataclass(frozen=True)
class Operator:
    """An associative operator on tuples of `len(dtypes)` components, with neutral element
    `ne`; `combine[j]` is component j of op(a, b) over `Arg` leaves a0.., b0.."""
    name: str
    combine: tuple[Expr, ...]
    ne: tuple[Const, ...]
    dtypes: tuple[np.dtype, ...]

    @property
    def omp(self) -> tuple[str, ...] | None:
        """The OpenMP reduction identifiers when every component j is a plain commutative
        ufunc of (a_j, b_j) (float max/min too: `_vector_loop` tracks NaN on the side)."""
        ids = []
        for j, (c, dtype) in enumerate(zip(self.combine, self.dtypes, strict=True)):
            if not (isinstance(c, Call) and c.args == (Arg(dtype, f"a{j}"), Arg(dtype, f"b{j}"))
                    and dtype.kind != "b"):
                return None
            ident = (OMP_INT_REDUCTIONS.get(c.fn) if dtype.kind in "iuf" else None) \
                or OMP_REDUCTIONS.get(c.fn)
            if ident is None:
                return None
            ids.append(ident)
        return tuple(ids)

    def with_count(self) -> Operator:
        """The operator with one more component: an int64 sum (a fused count, e.g. of
        failed bounds checks)."""
        m = len(self.dtypes)
        add = Call(INT64, "add", (Arg(INT64, f"a{m}"), Arg(INT64, f"b{m}")))
        return Operator(self.name, (*self.combine, add), (*self.ne, Const(INT64, 0)),
                        (*self.dtypes, INT64))


@dataclass(frozen=True)
class Store:
    """out[index] = value (index None: the element index), only where `cond` holds."""
    out: np.ndarray
    value: Expr
    index: Expr | None = None
    cond: Expr | None = None


@dataclass(frozen=True)
class KernelRecord:
    kind: str
    summary: str
    source: str


_LOG: ContextVar[list[KernelRecord] | None] = ContextVar("stax_nested_kernel_log", default=None)


@contextmanager
def kernel_log() -> Iterator[list[KernelRecord]]:
    """Collect a record of every kernel launched inside the block."""
    log: list[KernelRecord] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


@functools.cache
def _load(source: str) -> ctypes._CFuncPtr:
    fn = compile_source(source, isa_level()).library.stax_nested
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]
    fn.restype = None
    return fn


@dataclass(frozen=True)
class _Kernel:
    """A compiled kernel as a step of a recorded program: its sizes (parameters n, k, W)
    come from the layout it runs over (or `n` for a plain loop outside a layout)."""
    fn: ctypes._CFuncPtr
    segmented: bool

    def __call__(self, layout: Layout | None, n: int | None, *arrays: np.ndarray) -> None:
        if self.segmented:
            assert layout is not None
            params = [layout.n, layout.k, layout.width or 0]
        else:
            params = [size_of(layout) if n is None else n, 0, 0]
        # (__array_interface__ is twice as fast as .ctypes.data: a warm call is mostly this)
        ptrs = (ctypes.c_void_p * max(1, len(arrays)))(
            *[a.__array_interface__["data"][0] for a in arrays])
        flags = (ctypes.c_int32 * (ANY_FLAG + 1))()
        address = ctypes.addressof(flags)
        ps = (ctypes.c_int64 * 5)(*params, CHUNKS or 0, address)
        if max(params[0], params[1]) < PARALLEL_MIN:  # short: Ctrl-C raises when it returns
            self.fn(ptrs, ps)
            return
        with interruptible(address):  # Ctrl-C stops the kernel (issue 8)
            self.fn(ptrs, ps)


def size_of(layout: Layout | None) -> int:
    """The number of iterations of a space with this layout (the top level has one)."""
    return 1 if layout is None else layout.n


def _launch(kind: str, summary: str, source: str, arrays: Sequence[np.ndarray],
            layout: Layout | None, n: int | None = None, segmented: bool = True) -> None:
    """Run a kernel over `layout` (segmented: its n, k and W are the parameters; else a loop
    over n elements, None: the layout's)."""
    for a in arrays:
        assert a.flags.c_contiguous and a.ndim == 1, "kernels take contiguous 1-D arrays"
    holder = _CHAIN.get()
    if holder and holder[0].owns(arrays):
        flush()  # reads results of deferred reductions: compute them first
    kernel = _Kernel(_load(source), segmented)
    log = _LOG.get()
    if log is not None:
        log.append(KernelRecord(kind, summary, source))
    tape.record(kernel, layout, n, *arrays)


def alloc(layout: Layout | None, per: str, dtype: np.dtype) -> np.ndarray:
    """An uninitialized array of one element per element ("n") or segment ("k") of
    `layout` (recorded: sized from the layout on replay)."""
    return tape.record(_alloc, layout, per, dtype)


def _zero(a: np.ndarray) -> np.ndarray:
    a.fill(0)
    return a


def _alloc(layout: Layout | None, per: str, dtype: np.dtype) -> np.ndarray:
    return np.empty(size_of(layout) if per == "n" else layout.k, dtype=dtype)


def empty_layout(layout: Layout | None, per: str) -> bool:
    """Whether `layout` has no elements ("n") or no segments ("k"): a guarded decision."""
    return tape.guard(_is_empty, layout, per)


def _is_empty(layout: Layout | None, per: str) -> bool:
    return (size_of(layout) if per == "n" else layout.k) == 0


def _check_loads(exprs: Sequence[Expr], n: int, k: int) -> None:
    """Loads at the element (segment) index read every lane of the loop, even under a `where`
    (vectorized): their arrays must hold n (k) elements."""
    for e in exprs:
        for load in direct_loads(e):
            index = load.index
            need = n if isinstance(index, Idx) else k if isinstance(index, Seg) \
                else int(index.value) + 1
            if load.buf.array.size < need or (isinstance(index, Const) and index.value < 0):
                raise AssertionError(f"stax.nested: a kernel reads {need} elements of an "
                                     f"array of {load.buf.array.size}")


class _Source:
    """Pointer declarations: B[j] is the j-th array; the parameters are n, k, W."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.decls: list[str] = []
        self.names: dict[int, str] = {}
        self.bounds: np.ndarray | None = None  # the segment bounds `off`, if any

    def add(self, array: np.ndarray, name: str, const: bool = True) -> str:
        j = len(self.arrays)
        self.arrays.append(array)
        q = "const " if const else ""
        t = cpp_type(array.dtype)
        self.decls.append(f"  {q}{t}* __restrict {name} = ({q}{t}*)B[{j}];")
        return name

    def add_inputs(self, exprs: Sequence[Expr]) -> None:
        for j, buf in enumerate(buffers(tuple(exprs))):
            self.names[id(buf)] = self.add(buf.array, f"in{j}")

    def function(self, body: str) -> str:
        # Ctrl-C (issue 8): every chunk loop polls the flag word of the armed call (P[4];
        # stax/runtime/fastcall.c sets the interrupt bit) and skips the chunks left
        polled = body.replace(CHUNK_LOOP, CHUNK_LOOP + "\n    if (stax_interrupted(flags)) "
                              "continue;  // Ctrl-C: skip what is left")
        return (PRELUDE + INTERRUPT
                + '\nextern "C" void stax_nested(void** B, const int64_t* P) {\n'
                "  const int64_t n = P[0], k = P[1], W = P[2]; (void)k; (void)W;\n"
                "  const int32_t* flags = reinterpret_cast<const int32_t*>(P[4]);\n"
                + "\n".join(self.decls) + "\n" + polled + "\n}\n")


def _layout_source(src: _Source, layout: Layout) -> str:
    """The OFF(s) macro text for a layout (its sizes are the parameters n, k, W)."""
    if layout.width is None:
        assert layout.bounds is not None and layout.bounds.dtype == INT64
        src.add(layout.bounds, "off")
        src.bounds = layout.bounds
        return "#define OFF(s) off[s]"
    return "#define OFF(s) ((s) * W)"


def _first_segment(layout: Layout) -> str:
    if layout.width is not None:
        return "      int64_t s = a / W;"
    return ("      int64_t s = std::min<int64_t>(std::lower_bound(off, off + k + 1, a) - off,\n"
            "                                    std::upper_bound(off, off + k + 1, a) - off - 1);")


CHUNK_LOOP = "for (int c = 0; c < C; ++c) {"  # the loop over chunks every parallel kernel has
INTERRUPT = f"""
static inline bool stax_interrupted(const int32_t* flags) {{  // the bit fastcall.c sets
    return (__atomic_load_n(&flags[{ANY_FLAG}], __ATOMIC_RELAXED) & (1 << 30)) != 0;
}}
"""


def _chunks() -> str:
    """The number of chunks: P[3] when set (tests force many chunks on small inputs), else
    CHUNKS_PER_THREAD per thread for large inputs, handed out dynamically (a thread that
    loses its core to another process does not hold the others up)."""
    return (f"  const int C = P[3] > 0 ? int(P[3]) : n >= {PARALLEL_MIN} ? "
            f"{CHUNKS_PER_THREAD} * omp_get_max_threads() : 1;\n")


def run_map(n: int, layout: Layout | None, stores: Sequence[Store], summary: str) -> None:
    """Evaluate `stores` for every element i < n of a space (segmented by `layout`)."""
    own = n == size_of(layout)  # a space's own loop: n is the layout's on replay too
    if not stores or (empty_layout(layout, "n") if own else n == 0) \
            or _pending_map(n, layout, stores, summary):
        return
    exprs = [e for st in stores for e in (st.value, st.index, st.cond) if e is not None]
    _check_loads(exprs, n, layout.k if layout is not None else 0)
    src = _Source()
    macro = ""
    segmented = any(uses(e, Seg) for e in exprs)
    if segmented:
        assert layout is not None
        macro = _layout_source(src, layout)
    outs = [src.add(st.out, f"out{j}", const=False) for j, st in enumerate(stores)]
    src.add_inputs(exprs)
    lines = []
    for name, st in zip(outs, stores, strict=True):
        at = "i" if st.index is None else f"(int64_t)({emit(st.index, src.names)})"
        line = f"{name}[{at}] = {emit(st.value, src.names)};"
        if st.cond is not None:
            line = f"if ({emit(st.cond, src.names)}) {line}"
        lines.append("        " + line)
    body = "\n".join(lines)
    # No `omp simd` for scatters or loads guarded by a condition: a vector loop may execute
    # a guarded load for lanes whose condition is false.
    simd = "" if any(st.cond is not None or st.index is not None for st in stores) or any(
        guarded_load(e) for e in exprs) else " simd"
    if not segmented:
        code = (f"  #pragma omp parallel for{simd} schedule(static) if(n >= {PARALLEL_MIN})\n"
                f"  for (int64_t i = 0; i < n; ++i) {{\n{body}\n  }}")
    else:
        code = (f"{macro}\n{_chunks()}"
                "  #pragma omp parallel for schedule(dynamic, 1) if(C > 1)\n"
                "  for (int c = 0; c < C; ++c) {\n"
                "    const int64_t a = n * c / C, b = n * (c + 1) / C;\n"
                "    if (a < b) {\n"
                f"{_first_segment(layout)}\n"
                "      for (; s < k && OFF(s) < b; ++s) {\n"
                "        const int64_t lo = std::max(a, OFF(s)), hi = std::min(b, OFF(s + 1));\n"
                + ("        #pragma omp simd\n" if simd else "") +
                f"        for (int64_t i = lo; i < hi; ++i) {{\n{body}\n        }}\n"
                "      }\n    }\n  }")
    _launch("map", summary, src.function(code), src.arrays, layout, None if own else n,
            segmented)


def _combine(op: Operator, left: Sequence[str], right: Sequence[str], dest: Sequence[str],
             names: dict[int, str]) -> str:
    """C++ statements dest = op(left, right) for tuples of locals."""
    m = len(op.dtypes)
    args: dict[str, Expr] = {}
    for j in range(m):
        args[f"a{j}"] = Arg(op.dtypes[j], left[j])
        args[f"b{j}"] = Arg(op.dtypes[j], right[j])
    temps = [f"const {cpp_type(op.dtypes[j])} t{j} = "
             f"{emit(rename_args(op.combine[j], args), names)};" for j in range(m)]
    moves = [f"{dest[j]} = t{j};" for j in range(m)]
    return "{ " + " ".join(temps + moves) + " }"


def _decl(op: Operator, names: Sequence[str], init: Sequence[str]) -> str:
    return " ".join(f"{cpp_type(t)} {n} = {v};" for t, n, v in
                    zip(op.dtypes, names, init, strict=True))


def _elements(op: Operator, elems: Sequence[Expr], src: _Source) -> str:
    return " ".join(f"const {cpp_type(t)} x{j} = {emit(e, src.names)};"
                    for j, (t, e) in enumerate(zip(op.dtypes, elems, strict=True)))


def _names(prefix: str, m: int, suffix: str = "") -> list[str]:
    return [f"{prefix}{j}{suffix}" for j in range(m)]


def _assign(dests: Sequence[str], srcs: Sequence[str]) -> str:
    return " ".join(f"{d} = {v};" for d, v in zip(dests, srcs, strict=True))


def _vectors(op: Operator, names: Sequence[str], size: str) -> str:
    return " ".join(f"std::vector<{cpp_type(t)}> {p}({size});"
                    for t, p in zip(op.dtypes, names, strict=True))


def _segmented_source(layout: Layout, op: Operator, outs: Sequence[np.ndarray],
                      elems: Sequence[Expr]) -> tuple[_Source, str, list[str]]:
    """A segmented kernel's arrays: the layout's, outputs `o0, o1, ...`, the element inputs;
    with the layout macro, its parameters and the neutral element's C++."""
    src = _Source()
    macro = _layout_source(src, layout)
    for j, o in enumerate(outs):
        src.add(o, f"o{j}", const=False)
    src.add_inputs(elems)
    return src, macro, [emit(c, src.names) for c in op.ne]


def _select(op: Operator) -> Expr | None:
    """For a selecting operator (every component `where(c, b_j, a_j)`, one condition c, e.g.
    an argmax): c, over the accumulators a_j and the element b_j."""
    conds = set()
    for j, (e, t) in enumerate(zip(op.combine, op.dtypes, strict=True)):
        if not (isinstance(e, Call) and e.fn == "where"
                and e.args[1:] == (Arg(t, f"b{j}"), Arg(t, f"a{j}"))):
            return None
        conds.add(e.args[0])
    return conds.pop() if len(conds) == 1 else None


def _select_cpp(op: Operator, cond: Expr, names: dict[int, str]) -> str:
    args: dict[str, Expr] = {}
    for j, t in enumerate(op.dtypes):
        args[f"a{j}"], args[f"b{j}"] = Arg(t, f"acc{j}"), Arg(t, f"x{j}")
    return emit(rename_args(cond, args), names)


def _increasing(e: Expr, bounds: np.ndarray | None) -> bool:
    """Whether an element expression grows strictly with the element index inside a segment,
    without overflow: the element index, or the index in the segment (i - bounds[s])."""
    if isinstance(e, Idx):
        return True
    return (isinstance(e, Call) and e.fn == "subtract" and e.dtype == INT64
            and isinstance(e.args[0], Idx) and isinstance(e.args[1], Load)
            and isinstance(e.args[1].index, Seg) and e.args[1].buf.array is bounds)


# a_j vs b_j when b_j comes from a later element than a_j and component j is increasing
_ORDERED = {"less": (True, False), "less_equal": (True, False), "greater": (False, True),
            "greater_equal": (False, True), "equal": (False, False),
            "not_equal": (True, True)}


def _in_order(e: Expr, up: frozenset[int]) -> Expr:
    """`e` (an operator's expression) knowing a_j < b_j for the components j in `up`: what
    holds while a sequential loop combines an accumulator taken from earlier elements with
    the next one (for an argmax's tie rule, `b1 < a1` is false: the first index wins by
    order alone)."""
    if not isinstance(e, Call):
        return e
    args = tuple(_in_order(a, up) for a in e.args)
    if e.fn in _ORDERED and len(args) == 2 and all(isinstance(a, Arg) for a in args):
        x, y = args
        for j in up:
            if (x.name, y.name) in ((f"a{j}", f"b{j}"), (f"b{j}", f"a{j}")):
                forward, backward = _ORDERED[e.fn]
                return Const(BOOL, forward if x.name[0] == "a" else backward)
    if e.fn in ("logical_and", "bitwise_and", "logical_or", "bitwise_or") \
            and e.dtype == BOOL:
        absorbing = e.fn.endswith("and") is False
        for p, q in (args, args[::-1]):
            if isinstance(p, Const):
                return Const(BOOL, absorbing) if bool(p.value) == absorbing else q
    if e.fn == "cast" and e.dtype == BOOL and isinstance(args[0], Const):
        return Const(BOOL, bool(args[0].value))
    return Call(e.dtype, e.fn, args)


def _vector_loop(op: Operator, ids: Sequence[str], elems: Sequence[Expr], src: _Source,
                 ne: Sequence[str], keep: str = "") -> str:
    """A segment's reduction loop as `omp simd` with one OpenMP reduction per component. A
    float max/min is `x > acc ? x : acc` (which vectorizes) plus a flag for NaN, which
    np.maximum/np.minimum propagate (the zero kept among -0.0 and 0.0 may differ from a
    sequential loop, as in NumPy's own vectorized reductions)."""
    decls, steps, clauses, after = [], [], [], []
    for j, (t, r) in enumerate(zip(op.dtypes, ids, strict=True)):
        ctype = cpp_type(t)
        decls.append(f"{ctype} acc{j} = {ne[j]};")
        clauses.append(f"reduction({r}:acc{j})")
        if t.kind == "f" and r in ("max", "min"):
            decls.append(f"int nan{j} = {ne[j]} != {ne[j]};")
            clauses.append(f"reduction(|:nan{j})")
            cmp = ">" if r == "max" else "<"
            steps.append(f"acc{j} = x{j} {cmp} acc{j} ? x{j} : acc{j}; nan{j} |= x{j} != x{j};")
            after.append(f"if (nan{j}) acc{j} = std::numeric_limits<{ctype}>::quiet_NaN();")
        else:
            args = {f"a{j}": Arg(t, f"acc{j}"), f"b{j}": Arg(t, f"x{j}")}
            steps.append(f"acc{j} = {emit(rename_args(op.combine[j], args), src.names)};")
    return (f"{' '.join(decls)}\n        #pragma omp simd {' '.join(clauses)}\n"
            f"        for (int64_t i = lo; i < hi; ++i) {{\n"
            f"          {_elements(op, elems, src)} {keep}\n          {' '.join(steps)}\n"
            f"        }}\n"
            f"        {' '.join(after)}")


SELECT_BLOCK = 64  # elements tested at once by a selecting reduction (see `_reduce_loop`)


def _reduce_loop(op: Operator, elems: Sequence[Expr], src: _Source, ne: Sequence[str],
                 keep: str = "") -> str:
    """Declare acc0.. and reduce the elements lo <= i < hi of segment s into them (`keep`:
    a statement storing the element x0 as well)."""
    m = len(op.dtypes)
    acc, x = _names("acc", m), _names("x", m)
    unguarded = not any(guarded_load(e) for e in elems)
    ids = op.omp if unguarded else None
    if ids:
        return _vector_loop(op, ids, elems, src, ne, keep)
    select = _select(op)
    if select is None:
        step = _combine(op, acc, x, acc, src.names)
    else:  # a rarely taken branch: branch-free, each comparison would wait for the last one
        step = f"if (__builtin_expect({_select_cpp(op, select, src.names)}, 0)) " \
               f"{{ {_assign(acc, x)} }}"

    def scalar(start: str, step: str) -> str:
        return f"""for (int64_t i = {start}; i < hi; ++i) {{
          {_elements(op, elems, src)} {keep}
          {step}
        }}"""
    if select is None or keep or not unguarded:
        return f"{_decl(op, acc, ne)}\n        {scalar('lo', step)}"
    # A selecting reduction: the first element is combined with the neutral element; after
    # it the accumulators come from earlier elements, so the condition simplifies for the
    # components that grow with the index (`_in_order`: an argmax's tie rule). The first
    # SELECT_BLOCK elements after it run sequentially (the accumulators change often there);
    # then by blocks: a vectorized test whether any element of the block would be selected
    # against the accumulators as they are at its start, and only then the sequential loop
    # over the block (the same result: the accumulators change only where it holds).
    up = frozenset(j for j, e in enumerate(elems) if _increasing(e, src.bounds))
    cond = _select_cpp(op, _in_order(select, up), src.names)
    later = f"if (__builtin_expect({cond}, 0)) {{ {_assign(acc, x)} }}"
    return f"""{_decl(op, acc, ne)}
        if (lo < hi) {{ const int64_t i = lo; {_elements(op, elems, src)} {step} }}
        const int64_t warm = std::min(hi, lo + 1 + {SELECT_BLOCK});
        {scalar('lo + 1', later).replace('i < hi', 'i < warm')}
        int64_t blk = warm;
        for (; blk + {SELECT_BLOCK} <= hi; blk += {SELECT_BLOCK}) {{
          int hit = 0;
          #pragma omp simd reduction(|:hit)
          for (int64_t i = blk; i < blk + {SELECT_BLOCK}; ++i) {{
            {_elements(op, elems, src)}
            hit |= int({cond});
          }}
          if (__builtin_expect(hit, 0)) {{
            {scalar('blk', later).replace('i < hi', f'i < blk + {SELECT_BLOCK}')}
          }}
        }}
        {scalar('blk', later)}"""


def run_segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
                  summary: str, outs: Sequence[np.ndarray] | None = None,
                  totals: int = 0) -> list[np.ndarray]:
    """Reduce each segment of `layout` into `outs` (or new arrays): one result per segment
    and component (ne if empty). The last `totals` components are int64 sums wanted only
    in total (counts of failed checks): one element each, summed over all segments."""
    m = len(op.dtypes)
    if outs is None:
        outs = [alloc(layout, "k", t) for t in op.dtypes[:m - totals]] \
            + [alloc(None, "n", t) for t in op.dtypes[m - totals:]]
    outs = list(outs)
    kept = m - totals  # components with one result per segment
    if empty_layout(layout, "k"):
        for o in outs[kept:]:
            record(_zero, o)
        return outs
    _check_loads(elems, layout.n, layout.k)
    src, macro, ne = _segmented_source(layout, op, outs, elems)
    acc = _names("acc", m)
    loop = _reduce_loop(op, elems, src, ne)
    pv = _names("pv", m)
    tot = _names("tot", m)[kept:]
    store = " ".join(f"o{j}[cur] = r{j};" for j in range(kept))
    code = f"""{macro}
{_chunks()}  std::vector<int64_t> pseg(2 * C, -1);
  {_vectors(op, pv, "2 * C")}
  {" ".join(f"int64_t {t} = 0;" for t in tot)}
  #pragma omp parallel for schedule(dynamic, 1) if(C > 1) {" ".join(
      f"reduction(+:{t})" for t in tot)}
  for (int c = 0; c < C; ++c) {{
    const int64_t a = n * c / C, b = n * (c + 1) / C;
    if (a < b) {{
{_first_segment(layout)}
      int np_ = 0;
      for (; s < k && OFF(s) < b; ++s) {{
        const int64_t lo = std::max(a, OFF(s)), hi = std::min(b, OFF(s + 1));
        {loop}
        {" ".join(f"{t} += acc{j};" for j, t in enumerate(tot, kept))}
        if (lo == OFF(s) && hi == OFF(s + 1)) {{ {_assign(_names("o", kept, "[s]"),
                                                           acc[:kept])} }}
        else {{ pseg[2 * c + np_] = s; {_assign([p + "[2 * c + np_]" for p in pv], acc)} ++np_; }}
      }}
    }}
  }}
  {" ".join(f"o{j}[0] = {t};" for j, t in enumerate(tot, kept))}
  int64_t cur = -1;
  {_decl(op, _names("r", m), ne)}
  for (int j = 0; j < 2 * C; ++j) {{
    if (pseg[j] < 0) continue;
    {_decl(op, _names("q", m), [f"{p}[j]" for p in pv])}
    if (pseg[j] == cur) {_combine(op, _names("r", m), _names("q", m), _names("r", m), src.names)}
    else {{ if (cur >= 0) {{ {store} }}
           cur = pseg[j]; {" ".join(f"r{j} = q{j};" for j in range(m))} }}
  }}
  if (cur >= 0) {{ {store} }}
  for (int64_t s = k - 1; s >= 0 && OFF(s) >= n; --s) {{ {_assign(_names("o", kept, "[s]"),
                                                                  ne[:kept])} }}"""
    _launch("segreduce", summary, src.function(code), src.arrays, layout)
    return outs


def run_segscan(layout: Layout, op: Operator, elems: Sequence[Expr], exclusive: bool,
                summary: str, outs: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """Scan each segment of `layout` (inclusive, or exclusive starting from ne), into `outs`
    (contiguous arrays of n elements) or new arrays."""
    m = len(op.dtypes)
    if outs is None:
        outs = [alloc(layout, "n", t) for t in op.dtypes]
    outs = list(outs)
    if empty_layout(layout, "n"):
        return outs
    _check_loads(elems, layout.n, layout.k)
    src, macro, ne = _segmented_source(layout, op, outs, elems)
    acc, x = _names("acc", m), _names("x", m)
    store = " ".join(f"o{j}[i] = acc{j};" for j in range(m))
    step = _combine(op, acc, x, acc, src.names)
    scan = f"{store} {step}" if exclusive else f"{step} {store}"
    last, carry = _names("last", m), _names("carry", m)
    code = f"""{macro}
{_chunks()}  std::vector<char> mid(C, 0), open(C, 0), whole(C, 0), cin(C, 0);
  std::vector<int64_t> fix(C, 0);
  {_vectors(op, last, "C")}
  {_vectors(op, [p + "v" for p in carry], "C")}
  #pragma omp parallel for schedule(dynamic, 1) if(C > 1)
  for (int c = 0; c < C; ++c) {{
    const int64_t a = n * c / C, b = n * (c + 1) / C;
    if (a < b) {{
{_first_segment(layout)}
      for (; s < k && OFF(s) < b; ++s) {{
        const int64_t lo = std::max(a, OFF(s)), hi = std::min(b, OFF(s + 1));
        {_decl(op, acc, ne)}
        for (int64_t i = lo; i < hi; ++i) {{
          {_elements(op, elems, src)}
          {scan}
        }}
        if (lo > OFF(s)) {{ mid[c] = 1; fix[c] = hi; }}
        if (hi < OFF(s + 1)) {{ open[c] = 1; whole[c] = lo > OFF(s);
          {" ".join(f"{p}[c] = acc{j};" for j, p in enumerate(last))} }}
      }}
    }}
  }}
  bool valid = false;
  {_decl(op, carry, ne)}
  for (int c = 0; c < C; ++c) {{
    const int64_t a = n * c / C, b = n * (c + 1) / C;
    if (a >= b) continue;
    cin[c] = mid[c] && valid;
    {" ".join(f"{p}v[c] = {p};" for p in carry)}
    if (!open[c]) {{ valid = false; continue; }}
    {_decl(op, _names("l", m), [f"{p}[c]" for p in last])}
    if (whole[c] && valid) {_combine(op, carry, _names("l", m), carry, src.names)}
    else {{ {" ".join(f"{p} = l{j};" for j, p in enumerate(carry))} }}
    valid = true;
  }}
  #pragma omp parallel for schedule(dynamic, 1) if(C > 1)
  for (int c = 0; c < C; ++c) {{
    if (!cin[c]) continue;
    const int64_t a = n * c / C;
    for (int64_t i = a; i < fix[c]; ++i) {{
      {_decl(op, _names("l", m), [f"{p}v[c]" for p in carry])}
      {_decl(op, _names("r", m), [f"o{j}[i]" for j in range(m)])}
      {_combine(op, _names("l", m), _names("r", m), _names("r", m), src.names)}
      {" ".join(f"o{j}[i] = r{j};" for j in range(m))}
    }}
  }}"""
    _launch("segscan", summary, src.function(code), src.arrays, layout)
    return outs


# ---------------------------------------------------------------- segment-local fusion
#
# Inside `sn.jit`, a segmented reduction is deferred: its results are read only later, often
# per segment by the next kernel over the same segments (a softmax: the maximum, then the sum
# of exp(x - max[s]), then the map dividing by sum[s]). Such a chain runs as one kernel that
# walks whole segments (chunks cut at segment bounds): each segment's elements are read from
# memory once and reused from cache by the later phases. A chain runs (`flush`) as soon as
# anything else needs its results; it is not formed where one segment would hold so many
# elements that whole-segment chunks could not balance the threads.


@dataclass(frozen=True)
class Phase:
    """A deferred segmented reduction: outs[j][s] = component j of segment s's reduction."""
    op: Operator
    elems: tuple[Expr, ...]
    outs: tuple[np.ndarray, ...]
    summary: str


@dataclass
class Chain:
    layout: Layout
    phases: list[Phase]

    def owns(self, arrays: Sequence[np.ndarray]) -> bool:
        """Whether some of `arrays` are results of this chain."""
        ours = {id(o) for p in self.phases for o in p.outs}
        return any(id(a) in ours for a in arrays)

    def reads(self, exprs: Sequence[Expr]) -> bool:
        return self.owns([b.array for b in buffers(tuple(exprs))])

    def reads_elsewhere(self, exprs: Sequence[Expr]) -> bool:
        """Whether `exprs` read a result of this chain other than as x[s] (the segment's)."""
        ours = {id(o) for p in self.phases for o in p.outs}

        def walk(e: Expr) -> bool:
            if isinstance(e, Load):
                return (id(e.buf.array) in ours and not isinstance(e.index, Seg)) \
                    or walk(e.index)
            return isinstance(e, Call) and any(walk(a) for a in e.args)

        return any(walk(e) for e in exprs)


_CHAIN: ContextVar[list[Chain] | None] = ContextVar("stax_nested_chain", default=None)


@contextmanager
def deferring() -> Iterator[None]:
    """Defer segmented reductions inside the block (`defer_segreduce`); all run by its end."""
    holder: list[Chain] = []
    token = _CHAIN.set(holder)
    try:
        yield
        flush()
    finally:
        _CHAIN.reset(token)


def _balanced(layout: Layout) -> bool:
    """Whether chunks of whole segments can balance the threads: no segment holds more than
    an eighth of the elements (or the kernel runs on one thread anyway)."""
    if layout.bounds is None:
        return False
    return layout.n < PARALLEL_MIN or int(np.diff(layout.bounds).max()) * 8 <= layout.n


def defer_segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
                    summary: str) -> list[np.ndarray]:
    """`run_segreduce`, deferred into the chain of reductions over `layout` when possible;
    the arrays returned are filled before anything reads them."""
    holder = _CHAIN.get()
    if holder is None or empty_layout(layout, "k") or empty_layout(layout, "n"):
        return run_segreduce(layout, op, elems, summary)
    chain = holder[0] if holder else None
    if chain is not None and (chain.layout is not layout or chain.reads_elsewhere(elems)):
        flush()
        chain = None
    if chain is None:
        if not tape.guard(_balanced, layout):
            return run_segreduce(layout, op, elems, summary)
        chain = Chain(layout, [])
        holder.append(chain)
    _check_loads(elems, layout.n, layout.k)
    outs = tuple(alloc(layout, "k", t) for t in op.dtypes)
    chain.phases.append(Phase(op, tuple(elems), outs, summary))
    return list(outs)


def flush() -> None:
    """Run the pending chain, if any."""
    holder = _CHAIN.get()
    if not holder:
        return
    chain = holder.pop()
    if len(chain.phases) == 1:
        p = chain.phases[0]
        run_segreduce(chain.layout, p.op, p.elems, p.summary, p.outs)
    else:
        _run_chain(chain, [], "")


def _pending_map(n: int, layout: Layout | None, stores: Sequence[Store], summary: str) -> bool:
    """Run a map as the last phase of the pending chain when it reads the chain's results
    per segment (else flush the chain first if it reads them at all). True when done."""
    holder = _CHAIN.get()
    if not holder:
        return False
    chain = holder[0]
    exprs = [e for st in stores for e in (st.value, st.index, st.cond) if e is not None]
    if not chain.reads(exprs):
        return False
    holder.pop()
    if (chain.layout is layout and not chain.reads_elsewhere(exprs)
            and all(st.index is None and st.cond is None for st in stores)):
        _check_loads(exprs, n, layout.k)
        _run_chain(chain, stores, summary)
        return True
    holder.append(chain)
    flush()
    return False


def _bind(e: Expr, local: dict[int, Arg]) -> Expr:
    """`e` with loads x[s] of the arrays in `local` replaced by the locals."""
    if isinstance(e, Load):
        if id(e.buf.array) in local and isinstance(e.index, Seg):
            return local[id(e.buf.array)]
        return Load(e.dtype, e.buf, _bind(e.index, local))
    if isinstance(e, Call):
        return Call(e.dtype, e.fn, tuple(_bind(a, local) for a in e.args))
    return e


def _contains(e: Expr, part: Expr) -> bool:
    if e == part:
        return True
    if isinstance(e, Load):
        return _contains(e.index, part)
    return isinstance(e, Call) and any(_contains(a, part) for a in e.args)


def _replace(e: Expr, part: Expr, by: Expr) -> Expr:
    if e == part:
        return by
    if isinstance(e, Load):
        return Load(e.dtype, e.buf, _replace(e.index, part, by))
    if isinstance(e, Call):
        return Call(e.dtype, e.fn, tuple(_replace(a, part, by) for a in e.args))
    return e


def _run_chain(chain: Chain, stores: Sequence[Store], summary: str) -> None:
    """One kernel: for each segment, every phase's reduction in order, then the stores."""
    layout = chain.layout
    src = _Source()
    macro = _layout_source(src, layout)
    aliases: dict[int, str] = {}
    for p, phase in enumerate(chain.phases):
        for j, o in enumerate(phase.outs):
            aliases[id(o)] = src.add(o, f"o{p}_{j}", const=False)
    outs = [src.add(st.out, f"out{j}", const=False) for j, st in enumerate(stores)]
    exprs = [e for phase in chain.phases for e in phase.elems] + [st.value for st in stores]
    for j, buf in enumerate(buffers(tuple(exprs))):
        src.names[id(buf)] = aliases.get(id(buf.array)) or src.add(buf.array, f"in{j}")
    # Later phases read a result as the local r<p>_<j> (x[s] -> a scalar the loops keep in a
    # register; through the array, gcc would not vectorize them).
    local = {id(o): Arg(o.dtype, f"r{p}_{j}") for p, phase in enumerate(chain.phases)
             for j, o in enumerate(phase.outs)}
    elems = [[_bind(e, local) for e in phase.elems] for phase in chain.phases]
    values = [_bind(st.value, local) for st in stores]
    # A store whose value contains a phase's (computed) element keeps that element from the
    # reduction's pass (out[i] = x0) and reads it back (softmax: exp once per element).
    keeps: dict[int, str] = {}
    for j, st in enumerate(stores):
        for p in reversed(range(len(chain.phases))):
            e = elems[p][0]
            if (p not in keeps and len(elems[p]) == 1 and isinstance(e, Call)
                    and e.dtype == st.out.dtype and _contains(values[j], e)):
                buf = Buf(st.out)
                src.names[id(buf)] = outs[j]
                keeps[p] = f"{outs[j]}[i] = x0;"
                values[j] = _replace(values[j], e, Load(e.dtype, buf, Idx()))
                break
    blocks = []
    for p, phase in enumerate(chain.phases):
        ne = [emit(c, src.names) for c in phase.op.ne]
        loop = _reduce_loop(phase.op, elems[p], src, ne, keeps.get(p, ""))
        results = " ".join(f"r{p}_{j} = o{p}_{j}[s] = acc{j};" for j in range(len(phase.outs)))
        decls = " ".join(f"{cpp_type(o.dtype)} r{p}_{j};" for j, o in enumerate(phase.outs))
        blocks.append(f"      {decls}\n      {{ {loop}\n        {results} }}")
    if stores:
        body = " ".join(f"{name}[i] = {emit(v, src.names)};"
                        for name, v in zip(outs, values, strict=True))
        simd = "" if any(guarded_load(st.value) for st in stores) else "      #pragma omp simd\n"
        blocks.append(f"{simd}      for (int64_t i = lo; i < hi; ++i) {{ {body} }}")
    code = (f"{macro}\n{_chunks()}"
            "  #pragma omp parallel for schedule(dynamic, 1) if(C > 1)\n"
            "  for (int c = 0; c < C; ++c) {\n"
            "    // whole segments: those starting in [n*c/C, n*(c+1)/C) (the last chunk: to k)\n"
            "    const int64_t s0 = std::lower_bound(off, off + k + 1, n * c / C) - off;\n"
            "    const int64_t s1 = c == C - 1 ? k : std::lower_bound(off, off + k + 1, "
            "n * (c + 1) / C) - off;\n"
            "    for (int64_t s = s0; s < s1; ++s) {\n"
            "      const int64_t lo = OFF(s), hi = OFF(s + 1);\n"
            + "\n".join(blocks) + "\n    }\n  }")
    names = "; ".join([p.summary for p in chain.phases] + ([summary] if summary else []))
    _launch("fused segments", names, src.function(code), src.arrays, layout)
