"""C++ for the segmented kernels of flattened nested programs (issue 12), behind the Backend seam.

`stax.nested` describes each kernel it needs (`stax.nested.spec`: a map over a space's
elements, a segmented reduction, a segmented scan, a chain of per-segment reductions ending in
a map); `CpuBackend.segmented_kernel` hands the description to `build` here, which prints one C++
function `stax_nested(void* B0, ..., const int64_t* P, int32_t* flags)` (B0..: the arrays; P:
the run-time sizes n, k, W and the chunk count forced by tests; the call's flag buffer, the
calling convention of Stax's regions, so fastcall.c runs it), compiles it through
the backend's `build` (`stax.runtime.compiler`: g++, OpenMP, the disk cache) and returns a
callable. Sizes are parameters, so one compiled kernel serves every data size.

A kernel's source starts as the main kernels' do (`backend.PRECOMPILED`: the runtime header,
precompiled once), and its element code spells each ufunc as the op table does (`stax.ops`), so
values and error flags are the main kernels': integer // and % by zero, an integer to a negative
power, a float cast to an integer out of range set their flag (branch-free, per thread and vector
lane, OR-reduced; raised once at the kernel's end), which the call turns into NumPy's warning or
error as `np.errstate` says (`stax.runtime.wrapper.raise_flags`).

The kernel shapes (decisions recorded in the comments of the text they print):

- map: one parallel loop over the n elements (`omp parallel for simd`), or, when an expression
  needs the element's segment, a walk over the segments each chunk touches, found by binary
  search in the segment bounds;
- segmented reduction, parallel over *elements* (one long segment and many short ones balance
  alike): equal chunks (4 per thread, handed out dynamically), each reducing the segments inside
  it and keeping at most two partial results (the segments cut by its edges), combined by one
  serial pass in element order, so non-commutative operators are exact; a float sum over
  irregular segments (CSR SpMV) computes each chunk's elements flat into an L1 tile, then
  sums them per segment by masked vector steps with no branch on segment lengths
  (`_tiled_sum`);
- segmented scan in three phases (local scans per chunk, a serial pass over the chunks'
  carries, a fix-up of each chunk's leading continuation), inclusive or exclusive;
- chain (segment-local fusion): chunks of whole segments, each segment's reductions in order,
  then the map over its elements, reading results as registers; each reduction's last
  partial vector runs as one masked vector step (no scalar epilogue calling exp per element).
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from stax.backends.cpu.backend import PRECOMPILED
from stax.nested.expr import (
    BOOL,
    INT64,
    Arg,
    Buf,
    Call,
    Const,
    Expr,
    Idx,
    Load,
    Seg,
    buffers,
    guarded_load,
    rename_args,
    uses,
)
from stax.nested.spec import (
    ChainKernel,
    Layout,
    MapKernel,
    Operator,
    SegmentedKernel,
    SegReduceKernel,
    SegScanKernel,
)
from stax.ops import ANY_FLAG, by_name
from stax.runtime.compiler import isa_level
from stax.runtime.fast import MAX_ARGS, fastcall, interruptible
from stax.runtime.wrapper import raise_flags
from stax.tiling.plan import thread_count
from stax.tiling.threads import team

if TYPE_CHECKING:
    from stax.backends.base import Backend

# Below this many elements a kernel runs on one thread (OpenMP start-up costs more).
PARALLEL_MIN = 1 << 15
CHUNKS_PER_THREAD = 4

CPP_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float32": "float", "float64": "double",
}
# OpenMP reduction identifiers for operators that are associative and commutative on
# every dtype they accept (max/min only on integers: the float versions propagate NaN).
OMP_REDUCTIONS = {"add": "+", "multiply": "*", "bitwise_and": "&", "bitwise_or": "|",
                  "bitwise_xor": "^", "logical_and": "&&", "logical_or": "||"}
OMP_INT_REDUCTIONS = {"maximum": "max", "minimum": "min"}

# Error flags (stax.ops.FLAGS), as in the main kernels: a call that may fail ORs its bit into
# `stax_bad`, private per thread (an OpenMP `reduction(|:stax_bad)` on each loop of a kernel
# that has such a call: `_Source.function`), raised once at the kernel's end; no branch.
BAD = "stax_bad"
NO_FLAG = "stax_no_flag"  # the flag argument of calls that cannot fail: never written


def cpp_type(dtype: np.dtype) -> str:
    try:
        return _CPP_BY_DTYPE[dtype]
    except (KeyError, TypeError):
        pass
    try:
        name = CPP_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"stax.nested: dtype {np.dtype(dtype)} is not supported") from None
    if isinstance(dtype, np.dtype) and dtype.isnative:
        _CPP_BY_DTYPE[dtype] = name  # dtype.name is slow; kernels ask for it thousands of times
    return name


_CPP_BY_DTYPE: dict[np.dtype, str] = {}


def _literal(c: Const) -> str:
    t = cpp_type(c.dtype)
    if c.dtype.kind == "b":
        return "true" if c.value else "false"
    if c.dtype.kind == "f":
        v = float(c.value)
        if np.isnan(v):
            return f"std::numeric_limits<{t}>::quiet_NaN()"
        if np.isinf(v):
            return f"({'-' if v < 0 else ''}std::numeric_limits<{t}>::infinity())"
        return f"{t}({v!r})"
    if c.dtype == INT64 and c.value == np.iinfo(np.int64).min:
        return "std::numeric_limits<int64_t>::min()"
    return f"{t}({int(c.value)}LL)" if c.dtype.kind == "i" else f"{t}({int(c.value)}ULL)"


def emit(e: Expr, names: dict[int, str]) -> str:
    """C++ for `e`; `names` maps id(Buf) to its pointer; Idx is `i`, Seg is `s`."""
    if isinstance(e, Const):
        return _literal(e)
    if isinstance(e, Idx):
        return "i"
    if isinstance(e, Seg):
        return "s"
    if isinstance(e, Arg):
        return e.name
    if isinstance(e, Load):
        return f"{names[id(e.buf)]}[{emit(e.index, names)}]"
    assert isinstance(e, Call)
    args = [emit(a, names) for a in e.args]
    flag = BAD if _raises(e) else NO_FLAG
    if e.fn == "cast":
        return f"stax_cast<{cpp_type(e.dtype)}, {cpp_type(e.args[0].dtype)}>({args[0]}, {flag})"
    if e.fn == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    shift = _pow2_divisor(e)
    if shift is not None:  # floor semantics in two's complement: exact for negatives too
        op = (f">> {shift}" if e.fn == "floor_divide"
              else f"& {_literal(Const(e.dtype, (1 << shift) - 1))}")
        return f"{cpp_type(e.dtype)}({args[0]} {op})"
    t = cpp_type(e.args[0].dtype)
    form = by_name(e.fn).cpp.template(e.args[0].dtype.kind)  # the op table's C++
    text = form.format(a0=args[0], a1=args[1] if len(args) > 1 else "", t=t,
                       f="f" if t == "float" else "", bad=flag,
                       const=", true" if len(args) > 1 and isinstance(e.args[1], Const) else "")
    return f"{cpp_type(e.dtype)}({text})"


def _raises(e: Call) -> bool:
    """Whether the C++ of `e` may set an error flag: a float cast to an integer type, an op
    of the table with flags on integer operands (//, % by zero, ** of a negative exponent)."""
    if e.fn == "cast":
        return e.args[0].dtype.kind == "f" and e.dtype.kind in "iu"
    return e.fn != "where" and bool(by_name(e.fn).flags) and e.args[0].dtype.kind in "biu" \
        and _pow2_divisor(e) is None


def _pow2_divisor(e: Call) -> int | None:
    """k when `e` is an integer x // 2**k or x % 2**k (a shift or a mask: vectorizable, no
    division), else None."""
    if e.fn not in ("floor_divide", "remainder") or e.dtype.kind not in "iu":
        return None
    d = e.args[1]
    if not isinstance(d, Const) or isinstance(d.value, bool) or d.value <= 0 \
            or d.value & (d.value - 1):
        return None
    return int(d.value).bit_length() - 1


class _Source:
    """Pointer declarations: B[j] is the j-th array; the parameters are n, k, W."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.decls: list[str] = []
        self.names: dict[int, str] = {}
        self.bounds: np.ndarray | None = None  # the segment bounds `off`, if any
        self.code = ""  # the function's body

    def add(self, array: np.ndarray, name: str, const: bool = True) -> str:
        j = len(self.arrays)
        self.arrays.append(array)
        q = "const " if const else ""
        t = cpp_type(array.dtype)
        self.decls.append(f"  {q}{t}* __restrict {name} = ({q}{t}*)B{j};")
        return name

    def add_inputs(self, exprs: Sequence[Expr]) -> None:
        for j, buf in enumerate(buffers(tuple(exprs))):
            self.names[id(buf)] = self.add(buf.array, f"in{j}")

    def function(self) -> str:
        # Ctrl-C (issue 8): every chunk loop polls the flag word of the armed call (`flags`;
        # stax/runtime/fastcall.c sets the interrupt bit) and skips the chunks left; every
        # segment loop polls it too (a chunk can take seconds: a busy machine, costly elements)
        polled = self.code.replace(CHUNK_LOOP, CHUNK_LOOP + "\n    if (stax_interrupted(flags)) "
                                   "continue;  // Ctrl-C: skip what is left")
        for loop in SEGMENT_LOOPS:
            polled = polled.replace(loop, loop + " if (stax_interrupted(flags)) break;")
        top, end = "", ""
        if BAD in polled:  # each loop reduces the flags its threads and vector lanes set
            polled = re.sub(r"(#pragma omp (?:parallel for|simd)[^\n]*)",
                            rf"\1 reduction(|:{BAD})", polled)
            top, end = f"  int {BAD} = 0;\n", f"\n  if ({BAD}) stax_raise(flags, {BAD});"
        if NO_FLAG in polled:
            top += f"  int {NO_FLAG} = 0;\n"
        return (PRECOMPILED
                + f"\n{_SIGNATURE}("
                + "".join(f"void* B{j}, " for j in range(len(self.arrays)))
                + "const int64_t* P, int32_t* flags) {\n"
                "  const int64_t n = P[0], k = P[1], W = P[2]; (void)k; (void)W;\n"
                + "\n".join(self.decls) + "\n" + top + polled + end + "\n}\n")


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


_SIGNATURE = 'extern "C" void stax_nested'
CHUNK_LOOP = "for (int c = 0; c < C; ++c) {"  # the loop over chunks every parallel kernel has
# the loops over the segments of a chunk (a chunk of elements; a chain's whole segments)
SEGMENT_LOOPS = ("for (; s < k && OFF(s) < b; ++s) {", "for (int64_t s = s0; s < s1; ++s) {")


def _chunks() -> str:
    """The number of chunks: P[3] when set (tests force many chunks on small inputs), else
    CHUNKS_PER_THREAD per thread for large inputs, handed out dynamically (a thread that
    loses its core to another process does not hold the others up)."""
    return (f"  const int C = P[3] > 0 ? int(P[3]) : n >= {PARALLEL_MIN} ? "
            f"{CHUNKS_PER_THREAD} * omp_get_max_threads() : 1;\n")


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


def _omp(op: Operator) -> tuple[str, ...] | None:
    """The OpenMP reduction identifiers when every component j is a plain commutative ufunc
    of (a_j, b_j) (float max/min too: `_vector_loop` tracks NaN on the side)."""
    ids = []
    for j, (c, dtype) in enumerate(zip(op.combine, op.dtypes, strict=True)):
        if not (isinstance(c, Call) and c.args == (Arg(dtype, f"a{j}"), Arg(dtype, f"b{j}"))
                and dtype.kind != "b"):
            return None
        ident = (OMP_INT_REDUCTIONS.get(c.fn) if dtype.kind in "iuf" else None) \
            or OMP_REDUCTIONS.get(c.fn)
        if ident is None:
            return None
        ids.append(ident)
    return tuple(ids)


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
                 ne: Sequence[str], keep: str = "", tail: bool = False) -> str:
    """A segment's reduction loop as `omp simd` with one OpenMP reduction per component. A
    float max/min is `x > acc ? x : acc` (which vectorizes) plus a flag for NaN, which
    np.maximum/np.minimum propagate (the zero kept among -0.0 and 0.0 may differ from a
    sequential loop, as in NumPy's own vectorized reductions).

    `tail`: the loop runs over whole vectors only; the segment's last < one vector of
    elements run as one more vector step whose lanes past the end read the last element
    (index clamped) and count as the neutral element (stores masked): no scalar epilogue
    (which called exp one element at a time: a softmax over rows of ~100 spent a third of
    its time there)."""
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
    body = f"{_elements(op, elems, src)} {keep}\n          {' '.join(steps)}"
    if not tail:
        return (f"{' '.join(decls)}\n        #pragma omp simd {' '.join(clauses)}\n"
                f"        for (int64_t i = lo; i < hi; ++i) {{\n          {body}\n        }}\n"
                f"        {' '.join(after)}")
    lanes = 64 // min(t.itemsize for t in op.dtypes)
    masked = " ".join(f"const {cpp_type(t)} y{j} = live ? x{j} : {ne[j]};"
                      for j, t in enumerate(op.dtypes))
    unmask = " ".join(f"const {cpp_type(t)} x{j} = y{j};" for j, t in enumerate(op.dtypes))
    return (f"{' '.join(decls)}\n"
            f"        const int64_t mid = lo + ((hi - lo) & ~int64_t({lanes - 1}));\n"
            f"        #pragma omp simd {' '.join(clauses)}\n"
            f"        for (int64_t i = lo; i < mid; ++i) {{\n          {body}\n        }}\n"
            f"        if (mid < hi) {{  // the last elements: one vector step, lanes masked\n"
            f"          #pragma omp simd {' '.join(clauses)}\n"
            f"          for (int64_t l = 0; l < {lanes}; ++l) {{\n"
            f"            const int64_t i = std::min(mid + l, hi - 1); const bool live = "
            f"mid + l < hi;\n"
            f"            {_elements(op, elems, src)} {f'if (live) {{ {keep} }}' if keep else ''}"
            f"\n            {masked} {{ {unmask} {' '.join(steps)} }}\n          }}\n        }}\n"
            f"        {' '.join(after)}")


SELECT_BLOCK = 64  # elements tested at once by a selecting reduction (see `_reduce_loop`)
# Prefetch of the arrays a reduction streams (read at the element index i): each segment
# asks for its first PREFETCH_SPAN elements' lines PREFETCH_AHEAD elements ahead. Short
# segments (CSR rows) next to a gather otherwise wait on these streams (SpMV at 10^7: one
# thread's time 52 -> 35 ms); longer runs inside a segment are the hardware prefetcher's.
PREFETCH_AHEAD = 128
PREFETCH_SPAN = 64


def _streamed(elems: Sequence[Expr], names: dict[int, str]) -> dict[str, int]:
    """The pointers `elems` read at the element index i, with their item sizes."""
    found: dict[str, int] = {}

    def walk(e: Expr) -> None:
        if isinstance(e, Load):
            if isinstance(e.index, Idx):
                found[names[id(e.buf)]] = e.buf.array.dtype.itemsize
            walk(e.index)
        elif isinstance(e, Call):
            for a in e.args:
                walk(a)

    for e in elems:
        walk(e)
    return found


def _prefetch(elems: Sequence[Expr], src: _Source) -> str:
    """Prefetch hints for the streamed arrays of the segment [lo, hi) (hints only: nothing
    is read; the addresses stay below n)."""
    streamed = _streamed(elems, src.names)
    if not streamed:
        return ""
    step = 64 // max(streamed.values())  # elements per cache line of the widest array
    hints = " ".join(f"__builtin_prefetch({p} + q);" for p in streamed)
    return (f"for (int64_t q = lo + {PREFETCH_AHEAD}; q < std::min(std::min(hi, lo + "
            f"{PREFETCH_SPAN}) + {PREFETCH_AHEAD}, n); q += {step}) {{ {hints} }}\n        ")


def _reduce_loop(op: Operator, elems: Sequence[Expr], src: _Source, ne: Sequence[str],
                 keep: str = "", tail: bool = False) -> str:
    """Declare acc0.. and reduce the elements lo <= i < hi of segment s into them (`keep`:
    a statement storing the element x0 as well; `tail`: `_vector_loop`'s)."""
    m = len(op.dtypes)
    acc, x = _names("acc", m), _names("x", m)
    unguarded = not any(guarded_load(e) for e in elems)
    ids = _omp(op) if unguarded else None
    if ids:
        return _prefetch(elems, src) + _vector_loop(op, ids, elems, src, ne, keep, tail)
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


def _chain_source(chain: ChainKernel) -> _Source:
    """One kernel: for each segment, every phase's reduction in order, then the stores."""
    layout, stores = chain.layout, chain.stores
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
        # whole segments, often short (rows of a softmax): no scalar epilogue per segment
        loop = _reduce_loop(phase.op, elems[p], src, ne, keeps.get(p, ""), tail=True)
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
    src.code = code
    return src


def _int_division(e: Expr) -> bool:
    if isinstance(e, Load):
        return _int_division(e.index)
    return isinstance(e, Call) and (
        e.fn in ("floor_divide", "remainder") and e.dtype.kind in "iu"
        and _pow2_divisor(e) is None or any(_int_division(a) for a in e.args))


def _map_source(kernel: MapKernel) -> _Source:
    stores, layout, counts = kernel.stores, kernel.layout, kernel.counts
    exprs = [e for st in (*stores, *counts) for e in (st.value, st.index, st.cond)
             if e is not None]
    src = _Source()
    macro = ""
    if kernel.segmented:
        assert layout is not None
        macro = _layout_source(src, layout)
    outs = [src.add(st.out, f"out{j}", const=False) for j, st in enumerate(stores)]
    totals = [src.add(c.out, f"count{j}", const=False) for j, c in enumerate(counts)]
    src.add_inputs(exprs)
    lines = []
    for name, st in zip(outs, stores, strict=True):
        at = "i" if st.index is None else f"(int64_t)({emit(st.index, src.names)})"
        line = f"{name}[{at}] = {emit(st.value, src.names)};"
        if st.cond is not None:
            line = f"if ({emit(st.cond, src.names)}) {line}"
        lines.append("        " + line)
    # counts (failed checks) summed in the same pass: an OpenMP reduction per count
    lines += [f"        t{j} += {emit(c.value, src.names)};" for j, c in enumerate(counts)]
    body = "\n".join(lines)
    sums = "".join(f" reduction(+:t{j})" for j in range(len(counts)))
    zero = "".join(f"  int64_t t{j} = 0;\n" for j in range(len(counts)))
    store = "".join(f"\n  {name}[0] = t{j};" for j, name in enumerate(totals))
    # No `omp simd` for scatters or loads guarded by a condition: a vector loop may execute
    # a guarded load for lanes whose condition is false. Nor over integer // and %: their
    # vector emulation costs more than the scalar loop (a closed-form sum over 10^4 segments:
    # 9.5 vs 4.4 us); gcc's cost model decides there.
    simd = "" if any(st.cond is not None or st.index is not None for st in stores) or any(
        guarded_load(e) or _int_division(e) for e in exprs) else " simd"
    if not kernel.segmented:
        # `if(parallel: ...)`: a bare `if` clause of a combined `parallel for simd` applies to
        # the simd construct too (OpenMP 5.0), so a short loop ran serial *and scalar* (the
        # closed-form sum over 10^4 segments: 4.0 us; vectorized 2.1 us).
        code = (f"{zero}  #pragma omp parallel for{simd} schedule(static) "
                f"if(parallel: n >= {PARALLEL_MIN}){sums}\n"
                f"  for (int64_t i = 0; i < n; ++i) {{\n{body}\n  }}{store}")
    else:
        code = (f"{macro}\n{_chunks()}{zero}"
                f"  #pragma omp parallel for schedule(dynamic, 1) if(C > 1){sums}\n"
                "  for (int c = 0; c < C; ++c) {\n"
                "    const int64_t a = n * c / C, b = n * (c + 1) / C;\n"
                "    if (a < b) {\n"
                f"{_first_segment(layout)}\n"
                "      for (; s < k && OFF(s) < b; ++s) {\n"
                "        const int64_t lo = std::max(a, OFF(s)), hi = std::min(b, OFF(s + 1));\n"
                + (f"        #pragma omp simd{sums}\n" if simd else "") +
                f"        for (int64_t i = lo; i < hi; ++i) {{\n{body}\n        }}\n"
                f"      }}\n    }}\n  }}{store}")
    src.code = code
    return src


# The tiled segmented sum (`_tiled_sum`): elements per tile (in an L1 buffer: 8 KiB of
# doubles) and per step (the lanes under one mask: two vectors of doubles, one of floats).
SUM_TILE = 1024
SUM_STEP = 16


def _tiled(layout: Layout, op: Operator, kept: int, elems: Sequence[Expr]) -> bool:
    """Whether a segmented reduction is one float sum (besides int64 totals) over irregular
    segments, with neutral element 0, loads every lane may execute and elements that do not
    depend on their segment (computed flat, where s is not the element's): `_tiled_sum`'s
    form."""
    return (layout.width is None and kept == 1 and op.dtypes[0].kind == "f"
            and _omp(op) == ("+",) * len(op.dtypes) and float(op.ne[0].value) == 0.0
            and not any(guarded_load(e) or uses(e, Seg) for e in elems))


def _tiled_sum(op: Operator, elems: Sequence[Expr], src: _Source, tot: Sequence[str]) -> str:
    """A chunk [a, b) of a segmented float sum from its first segment s, with no branch on
    segment lengths (random CSR row lengths cost the per-segment loop a misprediction or two
    per row). Per tile of SUM_TILE elements, one vectorized loop computes the elements into
    an L1 buffer; then each step adds the segment's next <= SUM_STEP elements under a lane
    mask (lane < count) into vector accumulators and stores their sum as the segment's result
    so far; where the segment ends, the accumulators are cleared and s moves on: arithmetic,
    not a branch. The chunk's cut segments (first, last) store into `cut` for the serial
    pass. Summation order: per lane, then a tree over the lanes (as the `omp simd`
    reduction it replaces)."""
    t = cpp_type(op.dtypes[0])
    lanes = 64 // op.dtypes[0].itemsize
    vecs = SUM_STEP // lanes
    mask = "int64_t" if lanes == 8 else "int32_t"
    loads = "\n".join(f"          {{ stax_v v; std::memcpy(&v, buf + (p - t0) + {h * lanes}, 64);"
                      f" acc{h} += lane + {h * lanes} < take ? v : zero; }}"
                      for h in range(vecs))
    fold, width = ["auto f0 = " + " + ".join(f"acc{h}" for h in range(vecs)) + ";"], lanes
    while width > 2:  # the lanes' sum as a tree of halves
        width //= 2
        f = f"f{len(fold) - 1}"
        fold.append(f"auto f{len(fold)} = __builtin_shufflevector({f}, {f}, "
                    f"{', '.join(map(str, range(width)))}) + __builtin_shufflevector({f}, {f}, "
                    f"{', '.join(map(str, range(width, 2 * width)))});")
    f = f"f{len(fold) - 1}"
    return f"""// tiled segmented sum: no branch on segment lengths (`_tiled_sum`)
      typedef {t} stax_v __attribute__((vector_size(64)));
      typedef {mask} stax_m __attribute__((vector_size(64)));
      const stax_v zero = {{}};
      const stax_m lane = {{{", ".join(map(str, range(lanes)))}}};
      alignas(64) {t} buf[{SUM_TILE + SUM_STEP}] = {{}};
      {t} cut[2] = {{}};
      {" ".join(f"stax_v acc{h} = zero;" for h in range(vecs))}
      const int64_t s0 = s;
      int64_t p = a, e1 = OFF(s + 1), e2 = OFF(std::min(s + 2, k));
      for (int64_t t0 = a; t0 < b; t0 += {SUM_TILE}) {{
        if (stax_interrupted(flags)) break;  // Ctrl-C (a chunk may take long)
        const int64_t t1 = std::min(b, t0 + {SUM_TILE});
        #pragma omp simd {" ".join(f"reduction(+:{name})" for name in tot)}
        for (int64_t i = t0; i < t1; ++i) {{
          {_elements(op, elems, src)}
          buf[i - t0] = x0; {" ".join(f"{name} += x{j};" for j, name in enumerate(tot, 1))}
        }}
        for (; s < k && OFF(s) < b;) {{
          // the ends of segments s and s + 1 (e1, e2) kept in registers: the next step's end
          // is a select, not a load that waits for s
          const int64_t end = std::min(e1, b), q = std::min(std::min(end, t1), p + {SUM_STEP});
          const {mask} take = {mask}(q - p);
{loads}
          p = q;
          const bool done = p == end;
          {" ".join(fold)}
          {t}* dst = OFF(s) < a ? cut : OFF(s + 1) > b ? cut + 1 : o0 + s;
          *dst = {f}[0] + {f}[1];
          const stax_m keep = lane - lane + {mask}(done) - 1;  // all ones: the segment goes on
          {" ".join(f"acc{h} = keep ? acc{h} : zero;" for h in range(vecs))}
          s += done;
          e1 = done ? e2 : e1;
          e2 = OFF(std::min(s + 2, k));
          // the segment goes on in the next tile (p == t1, not done: one test, no branch on done)
          if (((p - t1) | int64_t(done)) == 0) break;
        }}
      }}
      int np_ = 0;
      if (OFF(s0) < a) {{ pseg[2 * c] = s0; pv0[2 * c] = cut[0]; np_ = 1; }}
      if ((s - 1 != s0 || OFF(s0) >= a) && OFF(s) > b) {{
        pseg[2 * c + np_] = s - 1; pv0[2 * c + np_] = cut[1]; }}"""


def _segreduce_source(kernel: SegReduceKernel) -> _Source:
    layout, op, elems, outs = kernel.layout, kernel.op, kernel.elems, kernel.outs
    m = len(op.dtypes)
    kept = m - kernel.totals  # components with one result per segment
    src, macro, ne = _segmented_source(layout, op, outs, elems)
    acc = _names("acc", m)
    pv = _names("pv", m)
    tot = _names("tot", m)[kept:]
    store = " ".join(f"o{j}[cur] = r{j};" for j in range(kept))
    if _tiled(layout, op, kept, elems):
        chunk = _tiled_sum(op, elems, src, tot)
    else:
        chunk = f"""int np_ = 0;
      for (; s < k && OFF(s) < b; ++s) {{
        const int64_t lo = std::max(a, OFF(s)), hi = std::min(b, OFF(s + 1));
        {_reduce_loop(op, elems, src, ne)}
        {" ".join(f"{t} += acc{j};" for j, t in enumerate(tot, kept))}
        if (lo == OFF(s) && hi == OFF(s + 1)) {{ {_assign(_names("o", kept, "[s]"),
                                                           acc[:kept])} }}
        else {{ pseg[2 * c + np_] = s; {_assign([p + "[2 * c + np_]" for p in pv], acc)} ++np_; }}
      }}"""
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
      {chunk}
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
    src.code = code
    return src


def _segscan_source(kernel: SegScanKernel) -> _Source:
    layout, op, elems, outs = kernel.layout, kernel.op, kernel.elems, kernel.outs
    m = len(op.dtypes)
    src, macro, ne = _segmented_source(layout, op, outs, elems)
    acc, x = _names("acc", m), _names("x", m)
    store = " ".join(f"o{j}[i] = acc{j};" for j in range(m))
    step = _combine(op, acc, x, acc, src.names)
    scan = f"{store} {step}" if kernel.exclusive else f"{step} {store}"
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
    src.code = code
    return src


_PRINTERS = {MapKernel: _map_source, SegReduceKernel: _segreduce_source,
             SegScanKernel: _segscan_source, ChainKernel: _chain_source}


_FLAGS = ctypes.c_int32 * (ANY_FLAG + 1)
_SIZES = ctypes.c_int64 * 4


class Entry:
    """A loaded kernel: `stax_nested(void* B0, ..., const int64_t* P, int32_t* flags)`, called
    with its arrays, P = (n, k, W, a forced chunk count) and a zeroed flag buffer, whose flags
    it raises as NumPy would. Through
    fastcall's `run` (stax/runtime/fastcall.c: one C call, the sizes as an int64 array on its
    stack, armed for Ctrl-C on the main thread) when it is built and takes this many
    arguments; through ctypes otherwise."""

    def __init__(self, fn: ctypes._CFuncPtr, count: int) -> None:
        fn.argtypes = [ctypes.c_void_p] * count + [ctypes.POINTER(ctypes.c_int64),
                                                   ctypes.c_void_p]
        fn.restype = None
        self.fn = fn
        self.address = ctypes.cast(fn, ctypes.c_void_p).value
        module = fastcall()
        self.fast = module.run if module is not None and count + 1 <= MAX_ARGS else None
        self.planned = thread_count()  # the threads a call may take, before the load's cut

    def __call__(self, n: int, k: int, width: int, chunks: int,
                 arrays: Sequence[np.ndarray]) -> None:
        threads = team(self.planned)  # the cores idle now: no barrier waits on a busy machine
        if self.fast is not None:
            raised = self.fast(self.address, (*arrays, (n, k, width, chunks)), None, threads)
            if raised is not None:
                raise_flags(raised)
            return
        # (__array_interface__ is twice as fast as .ctypes.data)
        args = [a.__array_interface__["data"][0] for a in arrays]
        flags = _FLAGS()
        address = ctypes.addressof(flags)
        sizes = _SIZES(n, k, width, chunks)
        if max(n, k) < PARALLEL_MIN:  # short: Ctrl-C raises when it returns
            self.fn(*args, sizes, address)
        else:
            with interruptible(address, threads):  # Ctrl-C stops the kernel (issue 8)
                self.fn(*args, sizes, address)
        if flags[ANY_FLAG]:
            raise_flags(tuple(flags))


@dataclass(frozen=True)
class Built:
    """A segmented kernel ready to run: its C++ (`body`: without the shared prelude), the
    arrays it takes in order, and the loaded function."""
    source: str
    body: str
    arrays: tuple[np.ndarray, ...]
    entry: Entry


def build(kernel: SegmentedKernel, backend: Backend) -> Built:
    """Print `kernel` as C++, compile it with `backend.build` (cached per source text)."""
    src = _PRINTERS[type(kernel)](kernel)
    source = src.function()
    body = source[source.index(_SIGNATURE):].strip()
    return Built(source, body, tuple(src.arrays), _load(source, len(src.arrays), backend))


@functools.cache
def _load(source: str, count: int, backend: Backend) -> Entry:
    return Entry(backend.build(source, isa_level()).library.stax_nested, count)
