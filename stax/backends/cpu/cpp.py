"""C++ printer: prints KernelPlans as OpenMP C++ functions (seed 000 §8).

Every kernel is `extern "C" void kernelN(<buffer pointers>, int32_t* flags)`. Loads and stores go
through the canonical index expressions; subexpressions are printed once (CSE); branches of a
guarded `select` are printed inline so their loads happen only under the guard. The printers
build code objects (`stax.backends.cpu.emit`: statements, blocks, loops with their pragmas);
one renderer owns the indentation.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from stax.backends.base import MANY_ARGS, MANY_ARGS_SUFFIX, KernelRegion, region_params
from stax.backends.cpu.emit import Block, Code, Emitter, Stmt, render
from stax.ir.expr import (
    Call,
    Const,
    Expr,
    FloorDiv,
    Index,
    IndexValue,
    Indirect,
    Load,
    Mod,
    Var,
    bounds,
    children,
    walk,
)
from stax.ir.prefix import Clamp, prefix_stop  # [H10]
from stax.ir.program import Buffer, Node, rvars, xvars
from stax.ir.sym import is_data, is_sym, surely
from stax.ops import ELEMENTWISE, Cpp, by_name, flag_enum_cpp, scan  # [A1] the op table
from stax.ops import part as complex_part_of  # [E16]
from stax.tiling.plan import (
    MASK_SKIP_BLOCK,
    MAX_OUTER_BLOCK,
    REDUCTION_CHUNK,
    TILE_COLS,
    TILE_ROWS,
    KernelPlan,
    MaskSkip,
    block_clamps,
    one_chain_scan,
    outer_block,
    output_space,
)
from stax.tiling.threads import parallel_pays

HEADER = (Path(__file__).with_name("runtime_header.h")).read_text().replace(
    "// STAX_FLAG_ENUM", flag_enum_cpp() + "\n//", 1)  # [A1] the enum from stax.ops.FLAGS

CTYPES = {"bool": "bool", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
          "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t",
          "uint64": "uint64_t", "float16": "stax_half", "float32": "float", "float64": "double",
          "complex64": "stax_complex64", "complex128": "stax_complex128"}  # [E16] the header's
HALF = np.dtype(np.float16)  # [A1] the header's stax_half: stored as half, computed as float
# [FUZZ] ops whose float16 loops in NumPy keep the first of two equal values (-0.0, 0.0), where
# its float32/float64 loops keep the second: the header's stax_half_<op>
HALF_TIES = ("maximum", "minimum", "fmax", "fmin")

# [SPARSE] A mask-skip block (MASK_SKIP_BLOCK elements) selecting at most this many elements
# computes the costly side on those alone, one by one, after the cheap side for the block:
# at 1-10 % masks most selected blocks hold 1-3 (benchmarks/masked_inplace_ab.py --few).
MASK_FEW_LANES = 8


def ctype(dtype: np.dtype) -> str:
    return CTYPES[np.dtype(dtype).name]


# Checks OR their error bits into this thread-private variable of the region (no branch in the
# loop); the region raises the flags after its loops (runtime header: stax_raise). [B]
BAD = "stax_bad"
SIMD_BAD = f" reduction(|:{BAD})"
# [A8] Ctrl-C (issue 8 item 10): kernels poll the interrupt bit (stax_interrupted) once per
# iteration of their outermost work-shared loop; a flat pointwise nest whose polled loop is the
# vector loop is strip-mined into chunks of stax_poll_step elements (the runtime header).
POLL = "if (stax_interrupted(flags)) continue;  // Ctrl-C: skip what is left [A8]"
# The outer-reduction form reads ROW_JAM rows per pass over a block's lanes, for reductions
# whose update is a plain in-order fold (the row order stays NumPy's).
ROW_JAM = 4
JAMMED = frozenset({"sum", "prod", "any", "all", "max", "min"})


def const_str(value: object, dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    t = ctype(dtype)
    if dtype.kind == "b":
        return "true" if value else "false"
    if dtype.kind in "iu":
        v = int(value)  # type: ignore[call-overload]
        if dtype.kind == "i" and v == np.iinfo(dtype).min:
            return f"std::numeric_limits<{t}>::min()"
        return f"(({t}){v}{'ULL' if dtype.kind == 'u' else 'LL'})"
    if dtype.kind == "c":  # [E16] (re, im), each spelled as its real dtype
        z, part_dtype = complex(value), np.dtype(f"f{dtype.itemsize // 2}")  # type: ignore[arg-type]
        return f"{t}({const_str(z.real, part_dtype)}, {const_str(z.imag, part_dtype)})"
    f = float(value)  # type: ignore[arg-type]
    if dtype == HALF:  # [VEC5] from the float32 spelling (exact: every half is a float)
        return f"((stax_half){const_str(f, np.dtype(np.float32))})"
    if np.isnan(f):
        return f"std::numeric_limits<{t}>::quiet_NaN()"
    if np.isinf(f):
        return f"{'-' if f < 0 else ''}std::numeric_limits<{t}>::infinity()"
    if dtype.name == "float32":
        return f"{float(np.float32(f))!r}f"
    return repr(f)


class ExprPrinter:
    """Prints expression DAGs into statements with one temporary per shared subexpression."""

    def __init__(self, ranges: Mapping[str, int]) -> None:
        self.ranges = dict(ranges)
        self.names: dict[Expr, str] = {}
        self.atom_names: dict[Indirect, str] = {}  # [G9] gather indices wrapped before a loop
        # [COV] clamped gather indices -> their argument, where no clamp bites (clamp_free)
        self.unclamped: dict[Expr, Expr] = {}
        self.counter = 0

    def hoist(self, roots: Sequence[Expr], var: str | set[str], written: set[str],
              out: Emitter) -> None:
        """[G9] Loop-invariant code motion: before the loop over `var`, names the eagerly
        evaluated subexpressions that do not depend on `var` and read no buffer in `written`
        (values stored by the loop itself), and wraps the gather indices that do not depend on
        `var` once. A row gather `x[idx]` then checks and wraps each index once per row and its
        loop is a contiguous copy (not a vector gather). Safe: an eager load invariant in `var`
        reads inside its array whenever the outer loop variables are in range. [INVAR] `var`
        may be a set: before a nest of loops (a reduction's), over all of its variables."""
        eager = self._eager(roots)
        loop_vars = {var} if isinstance(var, str) else var
        fixed: dict[Expr, bool] = {}
        for e in walk_all(roots):
            fixed[e] = not loop_vars & _own_variables(e) and not (
                isinstance(e, Load) and e.buf in written) and all(fixed[c] for c in children(e))
        for e in walk_all(roots):
            if fixed[e] and e in eager and e not in self.names and not isinstance(e, Const):
                # [VEC5] a float16 value as its (exact) float: g++ vectorizes no `omp simd`
                # loop reading a stax_half declared outside it
                self._name(e, f"(float){self.expr(e)}" if e.dtype == HALF else self.expr(e), out,
                           "float" if e.dtype == HALF else ctype(e.dtype))
        for e in walk_all(roots):
            if e not in eager or not isinstance(e, (Load, IndexValue)):
                continue
            for atom, _ in e.index.terms:
                if isinstance(atom, Indirect) and atom not in self.atom_names and fixed[
                        atom.expr]:
                    name = f"tmp{self.counter}"
                    self.counter += 1
                    out.stmt(f"const int64_t {name} = {self.atom(atom)};")
                    self.atom_names[atom] = name

    def fork(self) -> ExprPrinter:
        """A printer that knows the names this one has so far (declared before the code it
        prints) and adds its own apart: [SPMASK] for a loop printed in another block."""
        other = copy.copy(self)
        other.names, other.atom_names = dict(self.names), dict(self.atom_names)
        return other

    def _name(self, e: Expr, value: str, out: Emitter, type_: str | None = None) -> None:
        name = f"tmp{self.counter}"
        self.counter += 1
        out.stmt(f"const {type_ or ctype(e.dtype)} {name} = {value};")
        self.names[e] = name

    def emit(self, roots: Sequence[Expr], out: Emitter) -> list[str]:
        """Statements naming the eagerly evaluated subexpressions of `roots` (added to `out`),
        and the C++ of each root."""
        eager = self._eager(roots)
        for e in walk_all(roots):
            if e in self.names or e not in eager or isinstance(e, Const):
                continue
            self._name(e, self.expr(e), out)
        return [self.ref(r) for r in roots]

    def _eager(self, roots: Sequence[Expr]) -> set[Expr]:
        """Subexpressions evaluated unconditionally (not only inside a select's branch)."""
        eager: set[Expr] = set()
        stack = list(roots)
        while stack:
            e = stack.pop()
            if e in eager:
                continue
            eager.add(e)
            if isinstance(e, Call) and e.fn == "select":
                stack.append(e.args[0])
            else:
                stack.extend(self.unclamped.get(c, c) for c in children(e))
        return eager

    def ref(self, e: Expr) -> str:
        return self.names.get(e) or self.expr(e)

    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return const_str(e.value, e.dtype)
        if isinstance(e, Load):
            if e.dtype == np.dtype(bool):  # bytes: g++ has no vector type for `bool` loads
                return f"(reinterpret_cast<const uint8_t*>({e.buf})[{self.index(e.index)}] != 0)"
            return f"{e.buf}[{self.index(e.index)}]"
        if isinstance(e, IndexValue):
            return f"((int64_t)({self.index(e.index)}))"
        assert isinstance(e, Call)
        a = [self.ref(x) for x in e.args]
        fn = e.fn
        if fn == "where" and e.dtype.kind == "c":  # [E16] part by part: the loop vectorizes
            return f"stax_cwhere({a[0]}, {a[1]}, {a[2]})"
        if fn == "where" and e.dtype == HALF:  # [VEC5] of bits (a select of structs left
            # the loop scalar), [F16X] by masks: both sides are evaluated anyway
            return f"stax_half::where({a[0]}, stax_half({a[1]}), stax_half({a[2]}))"
        if fn == "select" and e.dtype == HALF:  # a branch: only the side taken is evaluated
            return (f"stax_half::of_bits({a[0]} ? stax_half({a[1]}).bits : "
                    f"stax_half({a[2]}).bits)")
        if fn in ("where", "select"):
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if fn == "cast" and e.dtype == HALF and e.args[0].dtype.kind == "c":  # [E16] real part
            return f"((stax_half){a[0]}.re)"
        if fn == "cast" and e.dtype == HALF:  # directly: no double rounding through float
            return (f"({a[0]} ? (stax_half)1.0f : (stax_half)0.0f)"
                    if e.args[0].dtype.kind == "b" else f"((stax_half){a[0]})")
        if fn == "cast" and e.args[0].dtype == HALF and e.dtype == np.float64:
            return f"stax_h2d(stax_half({a[0]}).bits)"  # [VEC5] directly: NaN payloads kept
        if fn == "cast" and e.args[0].dtype == HALF and e.dtype == np.uint32:
            # NumPy converts float16 to uint32 through int64 (nan/inf: 0, with the warning)
            return f"((uint32_t)stax_cast<int64_t, float>((float){a[0]}, {BAD}))"
        if fn == "signbit" and e.args[0].dtype == HALF:  # [VEC5] the bit: g++ 12's
            return f"((stax_half({a[0]}).bits & 0x8000u) != 0)"  # std::signbit crashed (ICE)
        if fn == "nextafter" and e.dtype == HALF:  # [CHOOSE] on the bits, as NumPy's loop
            return f"stax_half_nextafter(stax_half({a[0]}), stax_half({a[1]}))"
        if e.dtype == HALF or any(x.dtype == HALF for x in e.args):
            # [A1] float16 is stored as stax_half and computed as float32, rounded per op (NumPy)
            a = [f"((float){s})" if x.dtype == HALF else s for s, x in zip(a, e.args, strict=True)]
            if fn in HALF_TIES and all(x.dtype == HALF for x in e.args):
                return f"((stax_half)stax_half_{fn}({a[0]}, {a[1]}))"  # [FUZZ] ties: the first
            args = tuple(np.dtype(np.float32) if x.dtype == HALF else x.dtype for x in e.args)
            out = np.dtype(np.float32) if e.dtype == HALF else e.dtype
            value = self.call(fn, a, args, out, e.args)
            return f"((stax_half){value})" if e.dtype == HALF else value
        return self.call(fn, a, tuple(x.dtype for x in e.args), e.dtype, e.args)

    def call(self, fn: str, a: list[str], args: tuple[np.dtype, ...], out: np.dtype,
             exprs: tuple[Expr, ...]) -> str:
        """The C++ of op `fn` on operands `a` of dtypes `args`, giving `out`. [A1]"""
        t = ctype(args[0]) if args else ctype(out)
        if fn == "cast":
            helper = "stax_cast_clamped" if _clamped_into(exprs[0], out) else "stax_cast"
            return f"{helper}<{ctype(out)}, {t}>({a[0]}, {BAD})"
        if fn in ("power", "float_power") and out.kind == "f" and \
                isinstance(exprs[1], Const) and exprs[1].value == 0.5:
            return f"stax_pow_half({a[0]})"  # [FUZZ4] g++'s vectorizer makes pow(x, 0.5) sqrt
        if fn == "power" and out.kind == "f":
            exponent = exprs[1]
            if isinstance(exponent, Const) and exponent.value in (2.0, 3.0, 4.0):
                # small integer powers by multiplication (within 2 ulp of pow; the vector pow
                # takes a slow path for negative bases: 70x slower measured for x ** 3)
                return "(" + " * ".join([a[0]] * int(exponent.value)) + ")"
        size = _size_divisor(fn, exprs)
        if size is not None and args[1].kind == "f":  # [GEN] a mean's run-time count
            return f"stax_div_size({a[0]}, {a[1]}, {self.ref(size)})"
        if fn == "exp" and out.kind == "f" and _far_constant(exprs[0]):
            return f"stax_exp{'f' if t == 'float' else ''}({a[0]})"  # [G9]
        complex_part = complex_part_of(fn)  # [E16] z.real / z.imag
        if complex_part is not None:
            return complex_part.cpp.format(a0=a[0])
        try:
            spelling: Cpp = by_name(fn).cpp  # [A1] the op table's C++ spelling
        except KeyError:
            raise NotImplementedError(
                f"stax.jit: code generation for np.{fn} is not supported") from None
        const = ", true" if len(exprs) > 1 and isinstance(exprs[1], Const) else ""
        return spelling.template(args[0].kind).format(
            a0=a[0], a1=a[1] if len(a) > 1 else "", t=t, f="f" if t == "float" else "",
            bad=BAD, const=const)

    def index(self, idx: Index) -> str:
        parts = []
        for atom, c in idx.terms:
            s = self.atom(atom)
            parts.append(s if isinstance(c, int) and c == 1 else f"{c}*{s}")
        if is_sym(idx.const) or idx.const or not parts:
            parts.append(str(idx.const))
        return " + ".join(parts).replace("+ -", "- ")

    def atom(self, atom: object) -> str:
        if isinstance(atom, Var):
            return atom.name
        if isinstance(atom, (FloorDiv, Mod)):
            lo, _ = bounds(atom.arg, self.ranges)
            inner = self.index(atom.arg)
            div = f"({atom.div})" if is_sym(atom.div) else atom.div  # a product of sizes
            if lo >= 0:
                return f"(({inner}) {'/' if isinstance(atom, FloorDiv) else '%'} {div})"
            helper = "stax_idx_floordiv" if isinstance(atom, FloorDiv) else "stax_idx_mod"
            return f"{helper}({inner}, {div})"
        assert isinstance(atom, Indirect)
        if atom in self.atom_names:  # [G9] wrapped before the loop
            return self.atom_names[atom]
        if atom.expr in self.unclamped:  # [COV] inside the clamp and the axis (clamp_free)
            return self.ref(self.unclamped[atom.expr])
        lo, hi = _value_range(atom.expr)
        if lo >= 0 and hi < atom.size:  # [PERF10] clipped into the axis: nothing to check
            return f"(int64_t)({self.ref(atom.expr)})"
        return f"stax_wrap_index((int64_t)({self.ref(atom.expr)}), {atom.size}, {BAD})"


COMPLEX_SCALAR = frozenset(op.name for op in ELEMENTWISE if op.cpp.complex_scalar)  # [E16]


def vector_blocker(bodies: Iterable[Expr]) -> str | None:
    """Why a loop computing `bodies` cannot be vectorized on x86, or None. Such loops get no
    `omp simd`: the vectorization test holds every marked loop to being vectorized."""
    for e in walk_all(list(bodies)):
        if isinstance(e, Call) and any(x.dtype.kind == "c" for x in e.args) and \
                e.fn in COMPLEX_SCALAR:  # [E16]
            return f"complex {e.fn} calls glibc's scalar complex functions or branches"
        if not isinstance(e, Call) or e.fn not in ("floor_divide", "remainder", "power"):
            continue
        runtime = not isinstance(e.args[1], Const)
        if e.fn == "remainder" and e.dtype.kind == "f" and _power_of_two(e.args[1]):
            continue  # [PERF9] x % 2**k: exact without fmod (stax_fmod)
        if e.fn != "power" and e.dtype.kind == "f":
            return f"float {e.fn} needs fmod (no vector variant in libmvec)"
        if e.fn != "power" and e.dtype.itemsize == 8 and runtime:
            return "64-bit integer division by a runtime divisor (no vector instruction)"
        if e.fn == "power" and e.dtype.kind in "iu" and runtime:
            return "integer power by a runtime exponent (a loop per element)"
    return None


def _power_of_two(e: Expr) -> bool:
    """[PERF9] `e` is a constant normal power of two (the divisor of stax_fmod's exact path)."""
    if not isinstance(e, Const) or e.dtype.kind != "f":
        return False
    v = abs(float(e.value))
    return np.isfinite(v) and v >= np.finfo(e.dtype).tiny and np.frexp(v)[0] == 0.5


def _size_divisor(fn: str, exprs: tuple[Expr, ...]) -> IndexValue | None:
    """[GEN] The run-time size that `true_divide(a, float(size))` divides by (a mean over
    symbolic sizes), else None. Printed as the runtime's `stax_div_size`: a product by the
    exact reciprocal when the size is a power of two, as g++ compiles a constant divisor of the
    specialized program (the same result; measured 1.2x on layernorm rows of 256)."""
    if fn != "true_divide" or not (isinstance(d := exprs[1], Call) and d.fn == "cast"):
        return None
    size = d.args[0]
    if isinstance(size, IndexValue) and not size.index.terms and is_sym(size.index.const):
        return size
    return None


def _value_range(e: Expr) -> tuple[float, float]:
    """[VEC] Bounds of a float or integer value apart from NaN, from the constants of the
    maximum/minimum (np.clip) that compute it; (-inf, inf) where unknown."""
    if isinstance(e, Const) and e.dtype.kind in "iuf":
        value = float(e.dtype.type(e.value))  # as the kernel holds it (float32: rounded)
        return value, value
    if isinstance(e, Call) and e.fn in ("maximum", "minimum") and e.dtype.kind in "iuf" and \
            all(x.dtype == e.dtype for x in e.args):
        (alo, ahi), (blo, bhi) = _value_range(e.args[0]), _value_range(e.args[1])
        pick = max if e.fn == "maximum" else min
        return pick(alo, blo), pick(ahi, bhi)
    return -np.inf, np.inf


def _clamped_into(arg: Expr, out: np.dtype) -> bool:
    """[VEC] Is a float cast to integer `out` clamped into range before (np.clip, then astype)?
    Then only NaN can be out of range: `stax_cast_clamped` tests it alone (with the full range
    test, g++ specializes the clamp's constant paths and leaves the loop scalar)."""
    if arg.dtype.kind != "f" or out.kind not in "iu":
        return False
    lo, hi = _value_range(arg)
    info = np.iinfo(np.int32 if out.itemsize <= 2 else out)  # 8/16-bit: through int32
    return lo >= info.min and hi < float(info.max) + 1


def _far_constant(arg: Expr) -> bool:
    """[G9] Does the argument of an exp compute from a constant beyond libmvec's fast range
    (e.g. the -1e9 or -inf of a masked softmax)? Such lanes send whole vectors down libmvec's
    scalar path (measured 8-12x slower), so that exp is printed as the runtime's `stax_exp`,
    which answers them by a select (1.3-1.5x slower than a plain exp on ordinary values)."""
    return any(isinstance(e, Const) and e.dtype.kind == "f" and not abs(float(e.value)) < 80.0
               for e in walk(arg))


def _own_variables(e: Expr) -> set[str]:
    """[G9] Loop variables `e` itself reads (its index's plain, floor/mod terms), not its
    children's: an indirect term's expression is a child."""
    if not isinstance(e, (Load, IndexValue)):
        return set()
    out: set[str] = set()
    for atom, _ in e.index.terms:
        if isinstance(atom, Var):
            out.add(atom.name)
        elif isinstance(atom, (FloorDiv, Mod)):
            out |= Index(((atom, 1),)).variables()
    return out


def walk_all(roots: Sequence[Expr]) -> list[Expr]:
    seen: set[int] = set()
    out: list[Expr] = []
    for r in roots:
        for e in walk(r):
            if id(e) not in seen:
                seen.add(id(e))
                out.append(e)
    return out


# ---- reductions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Accumulator:
    """How one reduction accumulates: declaration, update, combine of partials, result.

    Its variables are `name+suffix` (the value), `..._nan` (a NaN was seen, for float max/min)
    and `..._idx` (argmax/argmin position); with a `lane`, each is an array indexed by it."""

    fn: str
    name: str
    acc_type: str
    float_value: bool

    def var(self, part: str = "", suffix: str = "", lane: str = "") -> str:
        return f"{self.name}{suffix}{part}" + (f"[{lane}]" if lane else "")

    @property
    def tracks_nan(self) -> bool:
        return self.fn in ("max", "min") and self.float_value

    def init(self) -> str:
        t = self.acc_type
        return {"sum": f"({t})0", "prod": f"({t})1", "any": "0", "all": "1",
                "max": f"-std::numeric_limits<{t}>::infinity()" if self.float_value
                else f"std::numeric_limits<{t}>::lowest()",
                "min": f"std::numeric_limits<{t}>::infinity()" if self.float_value
                else f"std::numeric_limits<{t}>::max()",
                "argmax": f"({t})0", "argmin": f"({t})0"}[self.fn]

    def declare(self, suffix: str = "", lanes: int | str = 0) -> list[Stmt]:
        dims = f"[{lanes}]" if lanes else ""
        lines = [Stmt(f"{self.acc_type} {self.var('', suffix)}{dims};")]
        if self.tracks_nan:
            lines.append(Stmt(f"int {self.var('_nan', suffix)}{dims};"))
        if self.fn in ("argmax", "argmin"):
            lines.append(Stmt(f"int64_t {self.var('_idx', suffix)}{dims};"))
        return lines + self.reset(suffix, "lane" if lanes else "", lanes)

    def reset(self, suffix: str, lane: str, lanes: int | str) -> list[Stmt]:
        body = [f"{self.var('', suffix, lane)} = {self.init()};"]
        if self.tracks_nan:
            body.append(f"{self.var('_nan', suffix, lane)} = 0;")
        if self.fn in ("argmax", "argmin"):
            body.append(f"{self.var('_idx', suffix, lane)} = -1;")
        if not lanes:
            return [Stmt(line) for line in body]
        return [Stmt(f"for (int64_t lane = 0; lane < {lanes}; lane += 1) {{ "
                     + " ".join(body) + " }")]

    def update(self, value: str, position: str, suffix: str = "", lane: str = ""
               ) -> list[Stmt]:
        n = self.var("", suffix, lane)
        fn = self.fn
        if fn in ("sum", "prod"):
            return [Stmt(f"{n} = {n} {'+' if fn == 'sum' else '*'} ({self.acc_type}){value};")]
        if fn in ("any", "all"):  # int flags: `|`/`&` reductions vectorize, `||` does not
            return [Stmt(f"{n} = {n} {'|' if fn == 'any' else '&'} (int)(bool){value};")]
        if fn in ("max", "min"):
            op = ">" if fn == "max" else "<"
            lines = [Stmt(f"{n} = ({value} {op} {n}) ? {value} : {n};")]
            if self.tracks_nan:
                nan = self.var("_nan", suffix, lane)
                lines.append(Stmt(f"{nan} = {nan} | (int)({value} != {value});"))
            return lines
        idx = self.var("_idx", suffix, lane)
        return [Stmt(self._take_if_better(value, position, n, idx))]

    def _take_if_better(self, value: str, position: str, n: str, idx: str) -> str:
        """argmax/argmin: the first position of the best value; a NaN wins and sticks."""
        op = ">" if self.fn == "argmax" else "<"
        nan_test = f" || {value} != {value}" if self.float_value else ""
        stuck = f"!({n} != {n}) && " if self.float_value else ""
        return (f"if ({idx} < 0 || ({stuck}({value} {op} {n}{nan_test}))) "
                f"{{ {n} = {value}; {idx} = {position}; }}")

    def simd_clause(self) -> str:
        if self.acc_type.startswith(("stax_complex", "stax_half")):  # [E16] g++ leaves a
            return ""  # user-defined OpenMP reduction on a struct scalar: no `omp simd` for it
        op = {"sum": "+", "prod": "*", "any": "|", "all": "&", "max": "max", "min": "min"}.get(
            self.fn)
        if op is None:
            return ""
        clause = f" reduction({op}:{self.name})"
        if self.tracks_nan:
            clause += f" reduction(|:{self.name}_nan)"
        return clause

    def combine(self, other_suffix: str, suffix: str = "", lane: str = "",
                other_lane: str = "") -> list[Stmt]:
        """Fold the partial `name+other_suffix` into `name+suffix` (partials are combined in
        order); with lanes, lane `other_lane` of the one into lane `lane` of the other."""
        o = self.var("", other_suffix, other_lane)
        if self.fn in ("argmax", "argmin"):
            idx = self.var("_idx", other_suffix)
            return [Stmt(f"if ({idx} >= 0) "
                         + self._take_if_better(o, idx, self.name, self.var("_idx")))]
        lines = self.update(o, "", suffix, lane)
        if self.tracks_nan:
            nan = self.var("_nan", suffix, lane)
            lines.append(Stmt(f"{nan} = {nan} | {self.var('_nan', other_suffix, other_lane)};"))
        return lines

    def result(self, lane: str = "") -> str:
        n = self.var("", "", lane)
        if self.fn in ("argmax", "argmin"):
            return self.var("_idx", "", lane)
        if self.tracks_nan:
            return (f"({self.var('_nan', '', lane)} ? "
                    f"std::numeric_limits<{self.acc_type}>::quiet_NaN() : {n})")
        return n


def accumulator(node: Node, name: str) -> Accumulator:
    assert node.body is not None
    vt = ctype(node.body.dtype)
    is_float = node.body.dtype.kind == "f"
    acc_t = vt
    if node.fn in ("any", "all"):
        acc_t = "int"  # a 0/1 flag: bitwise reductions vectorize
    return Accumulator(node.fn, name, acc_t, is_float)


# [TORCH2] the largest constant stride of a load `simd_ok` lets into a forced vector loop: g++
# de-interleaves strides 2, 3 and 4 with permutes (measured faster than scalar for 1-8 byte
# elements); larger strides load element by element or gather
MAX_INTERLEAVE = 4

# [SCAN] rows per chain of a row scan from which the chains are an odd number of rows apart: a
# power of two apart (4096x4096 float64: 1024 rows, 32 MB) their lines compete for the same
# cache sets and DRAM banks (one thread: 23.5 ms, odd 19.9 ms); from 8 rows on the last chain
# stays non-empty (all chains in step but in at most 7 iterations)
CHAIN_ODD = 8

# [CLIFF] elements per block of argmax/argmin values evaluated before `stax_arg_block` compares
# them (a stack buffer of 4-8 KB: it stays in L1)
ARG_BLOCK = 1024


# ---- kernels -------------------------------------------------------------------------------------

class KernelPrinter:
    """Prints one kernel as statements inside an OpenMP parallel region: work-shared loops
    (`omp for`) where the plan parallelizes, `omp single` around serial parts. Declarations
    that threads share (partials of parallel reductions) go to `prologue`, before the region."""

    def __init__(self, plan: KernelPlan, buffers: Mapping[str, Buffer],
                 aliased: Collection[str] = ()) -> None:
        self.plan = plan
        self.aliased = aliased  # buffers that may share storage (the region's)
        # [LAYOUT] output row tiles are addressed like the buffers they are copied out to
        self.buffers = {**buffers, **{t.name: replace(buffers[t.load.buf], name=t.name)
                                      for t in plan.row_tiles if t.store}}
        self.vectorize = plan.form != "scalar"
        self.out = Emitter()
        self.prologue: list[Code] = []
        self.work_shared = False  # does the body contain `omp for`?
        self.outer_printer: ExprPrinter | None = None  # [G9] holds values hoisted out of the loop
        self.first_stop: str | None = None  # the plan's outer_stop, computed before the loops
        # [SPMASK] the vector loop of the mask-skip form, opened per block by `print_skipping`:
        # (variable, first, end, pragmas, the statement defining the kernel's variable)
        self.skip_loop: tuple[str, str, str, list[str], str] | None = None

    def print(self) -> tuple[Code, ...]:
        plan = self.plan
        out = self.out
        origins = "; ".join(f"{n.name}: {n.origin}" for n in plan.nodes)
        out.comment(f"{plan.name}: {origins}")
        outer = plan.outer_ranges
        names = xvars(len(outer))
        parallel_inside = plan.parallel_depth == 0 and plan.threads > 1 and not outer
        # When the shared loops hold only pointwise work (no inner loops), the innermost
        # shared loop is the vector loop ([H9] the one above it when the plan unrolls a
        # short innermost loop inside it).
        vec = len(names) - 1 - (plan.unroll > 0)
        flat = bool(names) and all(n.kind == "pointwise" and n.ranges == outer
                                   for n in plan.nodes)
        simd_outer = flat and self.vectorize and (
            plan.unroll > 0 or self.simd_ok(plan.nodes, names[-1]))
        # [A8] the loop that polls for Ctrl-C: the last work-shared one (the first if serial);
        # when that is the vector loop of a flat pointwise nest, it is strip-mined
        poll = max(plan.parallel_depth, 1) - 1
        strip = bool(names) and poll == vec and all(
            n.kind == "pointwise" and n.ranges == outer for n in plan.nodes)
        pragmas: list[str] = []
        if plan.parallel_depth > 0:
            collapse = f" collapse({plan.parallel_depth})" if plan.parallel_depth > 1 else ""
            simd = " simd" if simd_outer and plan.parallel_depth == vec + 1 and not strip \
                else ""
            pragmas.append(f"omp for{simd}{collapse} schedule(static)")
            self.work_shared = True
        elif not parallel_inside:
            pragmas.append("omp single")
        if plan.outer_stop is not None:  # [LOOPS] a loop body's stored values (runner)
            out.comment("stored_prefix: the driver's stores read no element past this one")
            # the first loop: a shared one, or [COV] the outer-reduction form's first own loop
            self.first_stop = self.print_stop(f"stax_xstop_{plan.name}", plan.outer_stop,
                                              (outer or output_space(plan.nodes))[0], {})
            outer = (self.first_stop, *outer[1:]) if outer else outer
        with ExitStack() as scope:
            if plan.parallel_depth == 0:  # a block of its own (`omp for` needs its loop next)
                scope.enter_context(out.block(pragmas=pragmas))
                pragmas = []
            for k, (name, r) in enumerate(zip(names, outer, strict=True)):
                first = pragmas if k == 0 else []
                if strip and k == poll:  # [A8] chunks, each polling first
                    step = f"stax_poll_step({r}, {plan.threads})"
                    scope.enter_context(out.loop(f"{name}c", 0, r, step=step, pragmas=first))
                    out.stmt(POLL)
                    self.hoist_into_vector_loop(flat, k)
                    # counted from 0 inside the chunk: `x0 = x0c; x0 < min(...)` kept more
                    # values live across libmvec calls (spills: 10% slower sin on AVX-512)
                    out.stmt(f"const int64_t {name}n = std::min<int64_t>({step}, "
                             f"{r} - {name}c);")
                    simd_pragma = [self.simd_pragma()] if simd_outer else []
                    self.open_vector_loop(scope, f"{name}i", "0", f"{name}n", simd_pragma,
                                          f"const int64_t {name} = {name}c + {name}i;")
                    continue
                if plan.scan_chains and k == len(names) - 1:  # [CLIFF3] rows in step
                    scope.enter_context(out.loop(f"{name}q", 0, _chain_rows(r, plan.scan_chains),
                                                 pragmas=first))
                    if k == poll:
                        out.stmt(POLL)
                    continue
                if plan.row_block and k == len(names) - 1:  # [FORD] blocks of rows
                    scope.enter_context(out.loop(f"{name}b", 0, r, step=plan.row_block,
                                                 pragmas=first))
                    if k == poll:
                        out.stmt(POLL)
                    self.copy_row_tiles(name, r)
                    scope.callback(self.copy_row_tiles, name, r, True)  # after the block
                    scope.enter_context(out.loop(f"{name}i", 0, f"{name}n"))
                    out.stmt(f"const int64_t {name} = {name}b + {name}i;")
                    continue
                self.hoist_into_vector_loop(flat, k)
                if simd_outer and k == vec and k >= plan.parallel_depth:
                    first = [*first, self.simd_pragma()]
                if plan.unroll and k == len(names) - 1:  # [H9] inside the vector loop
                    first = [*first, f"GCC unroll {plan.unroll}"]
                if plan.mask_skip is not None and k == len(names) - 1 and k != poll:
                    self.open_vector_loop(scope, name, "0", str(r), first, "")
                    continue
                scope.enter_context(out.loop(name, 0, r, pragmas=first))
                if k == poll:  # [A8]
                    out.stmt(POLL)
            if plan.form == "outer-reduction":
                self.print_outer_block(parallel_inside)
            elif plan.scan_chains:
                self.print_scan_chains(names[-1], outer[-1])
            elif self.skip_loop is not None:
                self.print_skipping(parallel_inside)
            else:
                self.print_groups(plan.nodes, parallel_inside)
        return out.code

    def print_groups(self, nodes: Sequence[Node], parallel_inside: bool) -> None:
        """The loop groups of `nodes` inside the kernel's loops, after its kernel-local
        buffers."""
        for name, extent in self.plan.local:
            t = ctype(self.buffers[name].dtype)
            self.out.stmt(f"{t} {name}[{extent}];  // kernel-local (never leaves this loop)")
        for group in self.groups(nodes):
            self.print_group(group, parallel_inside)

    def open_vector_loop(self, scope: ExitStack, var: str, lo: str, hi: str, pragmas: list[str],
                         define: str) -> None:
        """Open the kernel's innermost loop, over `var` from `lo` to `hi`, `define` its first
        statement. [SPMASK] In the mask-skip form (the plan's `mask_skip`), a loop over blocks
        of it instead, each first testing whether the mask selects an element of the block
        (`stax_selected`); `print_skipping` prints the loop itself."""
        skip = self.plan.mask_skip
        if skip is None:
            scope.enter_context(self.out.loop(var, lo, hi, pragmas=pragmas))
            if define:
                self.out.stmt(define)
            return
        out = self.out
        scope.enter_context(out.loop(f"{var}b", lo, hi, step=MASK_SKIP_BLOCK))
        end = f"{var}e"
        out.stmt(f"const int64_t {end} = std::min<int64_t>({var}b + {MASK_SKIP_BLOCK}, {hi});",
                 "int stax_selected = 0;  // how many elements of the block the mask selects")
        with out.loop(var, f"{var}b", end, pragmas=[f"{p} reduction(+:stax_selected)"
                                                    for p in pragmas if p.startswith("omp simd")]):
            if define:
                out.stmt(define)
            out.stmt(f"stax_selected += {self.selected(out)};")
        self.skip_loop = (var, f"{var}b", end, pragmas, define)

    def selected(self, out: Emitter) -> str:
        """[SPMASK] Whether the mask selects the element (the costly side of its `where`s), as
        printed into `out`."""
        skip = self.plan.mask_skip
        assert skip is not None
        printer = self.outer_printer.fork() if self.outer_printer else ExprPrinter(
            self.plan.nodes[0].var_ranges)
        (cond,) = printer.emit([skip.cond], out)
        return cond if skip.costly_if else f"!{cond}"

    def print_skipping(self, parallel_inside: bool) -> None:
        """[SPMASK] The vector loop of the mask-skip form, twice: as planned in a block where the
        mask selects an element, with its costly side of the mask's `where`s dropped in the
        others. [SPARSE] Where those others only copy a buffer that may share storage with the
        output at the same index (`x[m] = f(x[m])` computed in the caller's array), the copy
        runs only when the two differ: the mask's blocks alone are written. A block of at most
        MASK_FEW_LANES selected elements runs the cheap version, then the costly side on the
        selected elements alone, one by one (`few`)."""
        assert self.skip_loop is not None and self.plan.mask_skip is not None
        var, lo, hi, pragmas, define = self.skip_loop
        skip, outer, printer = self.plan.mask_skip, self.out, self.outer_printer
        versions = []
        cheap = tuple(replace(n, body=skip.cheap(n.body)) for n in self.plan.nodes
                      if n.body is not None)
        copies = [f"{n.out} != {n.body.buf}" for n in cheap if isinstance(n.body, Load)
                  and n.body.index == n.out_index and {n.out, n.body.buf} <= set(self.aliased)]
        for nodes in (self.plan.nodes, cheap):
            self.out, self.outer_printer = Emitter(), printer and printer.fork()
            with self.out.loop(var, lo, hi, pragmas=pragmas):
                if define:
                    self.out.stmt(define)
                self.print_groups(nodes, parallel_inside)
            versions.append(self.out.code)
        self.out, self.outer_printer = Emitter(), printer and printer.fork()
        costly = MaskSkip(skip.cond, not skip.costly_if)  # its cheap side: the costly one
        with self.out.loop(var, lo, hi):
            if define:
                self.out.stmt(define)
            with self.out.block(f"if ({self.selected(self.out)})"):
                self.print_groups(tuple(replace(n, body=costly.cheap(n.body))
                                        for n in self.plan.nodes if n.body is not None),
                                  parallel_inside)
        few = self.out.code
        self.out, self.outer_printer = outer, printer
        if copies and len(copies) == len(cheap):  # [SPARSE] copies in place: none where aliased
            versions[1] = (Block(f"if ({' || '.join(copies)})", versions[1]),)
        if not self.cheap_keeps_reads(cheap):  # [INPLACE] see there
            self.out.stmt(
                "// no one-by-one costly side: the cheap version overwrites what it "
                "reads (a buffer written in place)"
            )
            self.out.add(Block("if (stax_selected)", versions[0], orelse=versions[1]))
            return
        self.out.add(Block(f"if (stax_selected > {MASK_FEW_LANES})", versions[0], orelse=(
            Block("if (stax_selected)", (*versions[1], *few), orelse=versions[1]),)))

    def cheap_keeps_reads(self, cheap: Sequence[Node]) -> bool:
        """[INPLACE] Whether the one-by-one costly side of a block (`few`, run after the cheap
        version wrote the whole block) reads what the kernel's buffers held before the block: a
        node writing a buffer that may share storage with one it reads (written in place,
        `x[m] = f(x[m])` in the caller's array) must read no other such buffer and its cheap
        version must copy that one at the index it writes, leaving its storage as it was.
        Otherwise the costly side would read the cheap version's new values (`out = exp(x,
        where=x < 0)` fused with `x = maximum(x, 0)` in place over x read the maximum)."""
        aliased = set(self.aliased)
        for node, c in zip((n for n in self.plan.nodes if n.body is not None), cheap, strict=True):
            shared = {ld.buf for ld in node.reads()} & aliased
            copy = isinstance(c.body, Load) and c.body.index == node.out_index
            if node.out in aliased and shared and not (copy and shared == {c.body.buf}):
                return False
        return True

    def copy_row_tiles(self, x: str, extent: int, stores: bool = False) -> None:
        """[FORD] Copy the block of rows starting at `{x}b` of each operand the plan reads from
        a row tile (`RowTile`) into its tile, along the operand's contiguous axis: blocks transposed
        in registers (8x8 of 4-byte, 4x4 of 8-byte elements), element by element at the edges
        (and for other element sizes). [LAYOUT] With `stores`, after the block: each output
        tile out to its buffer the same way."""
        rows = self.plan.row_block
        out = self.out
        if not stores:
            out.stmt(f"const int64_t {x}n = std::min<int64_t>({rows}, {extent} - {x}b);")
        printer = ExprPrinter({})
        declared: set[str] = set()
        for t in self.plan.row_tiles:
            ld, v, n = t.load, t.var, t.extent
            at = f"{t.name}[{t.pitch}*({x} - {x}b) + {v}]"
            buf = printer.expr(ld)
            if not stores and t.name not in declared:  # [LAYOUT] an output may share a tile
                declared.add(t.name)
                out.stmt(f"alignas(64) static thread_local {ctype(ld.dtype)} "
                         f"{t.name}[{rows * t.pitch}];  // {ld.buf} by rows of {v}")
            if t.store != stores:
                continue
            # (source, its row stride, destination, its row stride) of a transposed block
            ends = (at, t.pitch, buf, ld.index.coef(v)) if stores else (
                buf, ld.index.coef(v), at, t.pitch)
            edges: list[tuple[object, object, str]] = [(0, n, f"{x}b")]
            size = {4: 8, 8: 4}.get(ld.dtype.itemsize, 0)  # of the blocks transposed
            if size and ld.dtype.kind in "fiu" and rows % size == 0:
                whole, n_whole = f"{t.name}_{'out' if stores else 'rows'}", n // size * size
                out.stmt(f"const int64_t {whole} = {x}b + {x}n / {size} * {size};")
                with out.loop(v, 0, n_whole, step=size), \
                        out.loop(x, f"{x}b", whole, step=size):
                    out.stmt(f"stax_transpose{size}x{size}_{ld.dtype.itemsize}(&{ends[0]}, "
                             f"{ends[1]}, &{ends[2]}, {ends[3]});")
                edges = [(0, n_whole, whole), (n_whole, n, f"{x}b")]
            for lo, hi, first in edges:
                if lo != hi:
                    with out.loop(v, lo, hi), out.loop(x, first, f"{x}b + {x}n"):
                        out.stmt(f"{ends[2]} = {ends[0]};")

    def hoist_into_vector_loop(self, flat: bool, k: int) -> None:
        """[G9] Before the kernel's own innermost loop (when the kernel is one loop nest of
        pointwise work and statements may stand before that loop), what that loop does not
        change; the pointwise groups inside print with this printer. [VADV] Also when the
        loop is not vectorized (`x[:, :, k]` reads a column): a gather index read at a
        run-time position (a loop body's `k`) is wrapped and checked there once, not per
        element."""
        names = xvars(len(self.plan.outer_ranges))
        if not flat or k != len(names) - 1 or self.plan.unroll or \
                k < self.plan.parallel_depth or \
                not surely(self.plan.outer_ranges[k], ">", 0):  # [B16] a loop that may
            return  # run zero times (a data-dependent size may be 0: [COMPACT]): no hoisting
        self.outer_printer = ExprPrinter(self.plan.nodes[0].var_ranges)
        self.outer_printer.hoist([n.body for n in self.plan.nodes if n.body is not None],
                                 names[-1], {n.out for n in self.plan.nodes}, self.out)

    def groups(self, nodes: Sequence[Node]) -> list[list[Node]]:
        """Consecutive nodes with the same loops below the shared ones share one loop nest,
        unless one reads what another writes (a reduction's result exists only after its
        loop; a pointwise value is forwarded from the same iteration instead)."""
        out: list[list[Node]] = []
        d = self.plan.shared_depth
        for n in nodes:
            key = (n.kind, n.ranges[d:], n.reduction_ranges)
            if out and n.kind in ("pointwise", "reduction") and (
                    out[-1][0].kind, out[-1][0].ranges[d:], out[-1][0].reduction_ranges) == key \
                    and (n.kind == "pointwise" or not set(n.read_buffers()) & {
                        m.out for m in out[-1]}) and _is_arg(n) == _is_arg(out[-1][0]):
                out[-1].append(n)
            else:
                out.append([n])
        return out

    def print_group(self, nodes: list[Node], parallel_inside: bool) -> None:
        """Each loop group gets its own block, so temporaries never clash. In a kernel without
        parallel outer loops, groups that can share work do; the others run in `omp single`."""
        pragmas = []
        if parallel_inside and not self.shares_work(nodes):
            pragmas.append("omp single")
            parallel_inside = False
        with self.out.block(pragmas=pragmas):
            self.print_group_body(nodes, parallel_inside)

    def shares_work(self, nodes: list[Node]) -> bool:
        node = nodes[0]
        if node.kind == "pointwise":
            return self.plan.form == "tiled"
        if node.kind == "reduction":
            return len(node.reduction_ranges) == 1 and \
                self.long(node.reduction_ranges[0]) and \
                len(node.ranges) == self.plan.shared_depth
        if node.kind == "scan":  # one long scan: two passes over the threads
            return not node.ranges and self.long(node.reduction_ranges[0]) and \
                not one_chain_scan(nodes)
        return False

    @staticmethod
    def long(n: int) -> bool:
        """Longer than one chunk; [DYN16] a data-dependent length may be (the chunked form
        serves every length: no guard on a size only known mid-call)."""
        return is_data(n) or n > REDUCTION_CHUNK

    def print_group_body(self, nodes: list[Node], parallel_inside: bool) -> None:
        kind = nodes[0].kind
        if kind == "pointwise" and self.plan.form == "tiled":
            self.print_tiled(nodes[0], parallel_inside)
        elif kind == "pointwise":
            self.print_pointwise(nodes)
        elif kind == "reduction":
            self.print_reduction(nodes, parallel_inside)
        elif kind == "scan":
            self.print_scan(nodes[0], parallel_inside)
        else:
            raise AssertionError(f"extern node {nodes[0].name} inside a C++ kernel")

    def simd_pragma(self, clause: str = "", bad: bool = True) -> str:
        """`omp simd` for the kernel's row loops, on the plan's narrow vectors for short rows
        (`simdlen`, issue 11); `bad`: the loop may set error bits."""
        lanes = f" simdlen({self.plan.simd_lanes})" if self.plan.simd_lanes else ""
        return f"omp simd{lanes}{clause}{SIMD_BAD if bad else ''}"

    def simd_ok(self, nodes: Sequence[Node], var: str, gathers: bool = False) -> bool:
        """Force `omp simd` only where every store is unit-stride (or invariant) in `var` and
        every load is too or reads every 2nd..`MAX_INTERLEAVE`th element (`x[:, ::2]`, the
        windows of a 2x2 max pooling): g++ loads such a read as whole vectors de-interleaved
        by permutes. Other strided or data-dependent accesses become gathers and scatters,
        slower than scalar code on this class of CPU. `gathers`: [GATHER] loads of 4- or
        8-byte items (the sizes vector gathers load) at an index read from data (`x[idx]`)
        are allowed too: in a reduction the scalar loop's one accumulator waits on each random
        read in turn, vector gathers keep 8 in flight ((v * x[idx]).sum() at 10^7 over an
        8 MB table, one thread: 98 -> 46 ms)."""
        for n in nodes:
            if n.body is None:
                continue
            loads = [e for e in walk(n.body) if isinstance(e, Load)]
            gathered = {e.index for e in loads if gathers and e.dtype.itemsize in (4, 8)
                        and _gathered(e.index, var)}
            for index, most in [(n.out_index, 1), *((e.index, MAX_INTERLEAVE) for e in loads)]:
                c = index.coef(var)
                if not (index.is_linear_in(var) or index in gathered) or not (
                        isinstance(c, int) and -1 <= c <= most):
                    return False
        return vector_blocker(n.body for n in nodes if n.body is not None) is None

    def open_loops(self, scope: ExitStack, names: Sequence[str], ranges: Sequence[int],
                   simd_clause: str | None) -> None:
        """Open one loop per name (closed when `scope` ends); the innermost gets `omp simd`
        with `simd_clause` when given (and the kernel vectorizes)."""
        for k, (name, r) in enumerate(zip(names, ranges, strict=True)):
            simd = k == len(names) - 1 and simd_clause is not None and self.vectorize
            scope.enter_context(self.out.loop(
                name, 0, r, pragmas=[self.simd_pragma(simd_clause)] if simd else []))

    def print_tiled(self, node: Node, parallel: bool, rows: tuple[str, str] | None = None,
                    printer: ExprPrinter | None = None) -> None:
        """§8.2: the last two loops in TILE_ROWS x TILE_COLS tiles. Each operand read along the
        outer axis (a transpose) is first copied into a small tile along its contiguous axis,
        so every cache line it brings in is used whole; the compute loop then reads the tile.
        `rows`: the range of the outer of the two loops when it is not the whole axis (a block
        of the outer-reduction form), with the block's `printer`."""
        out = self.out
        n = len(node.ranges)
        (ra, rb), (va, vb) = node.ranges[-2:], (f"x{n - 2}", f"x{n - 1}")
        a_lo, ra = rows if rows is not None else (0, ra)
        xnames = xvars(n)[self.plan.shared_depth:-2] if rows is None else []
        ta, tb = TILE_ROWS, TILE_COLS
        printer = printer or ExprPrinter(node.var_ranges)
        assert node.body is not None
        transposed = [e for e in walk(node.body) if isinstance(e, Load)
                      and abs(e.index.coef(va)) == 1 and abs(e.index.coef(vb)) > 1]
        a_hi = f"std::min<int64_t>({va}t + {ta}, {ra})"
        b_hi = f"std::min<int64_t>({vb}t + {tb}, {rb})"
        with ExitStack() as scope:
            self.open_loops(scope, xnames, node.ranges[self.plan.shared_depth:-2][:len(xnames)],
                            None)
            out.comment(f"{node.name}: {node.origin} in {ta}x{tb} tiles")
            pragmas = []
            if parallel and not xnames:
                pragmas.append("omp for collapse(2) schedule(static)")
                self.work_shared = True
            with out.loop(f"{va}t", a_lo, ra, step=ta, pragmas=pragmas), \
                    out.loop(f"{vb}t", 0, rb, step=tb):
                out.stmt(POLL)
                for k, ld in enumerate(transposed):
                    self.copy_tile(f"tile{k}", ld, printer, (va, ra, a_hi), (vb, rb, b_hi))
                untiled = [e for e in walk(node.body)
                           if isinstance(e, Load) and e not in transposed]
                simd = self.vectorize and all(abs(e.index.coef(vb)) <= 1 for e in untiled)
                with out.loop(va, f"{va}t", a_hi), \
                        out.loop(vb, f"{vb}t", b_hi,  # [H11] the plan's lanes (short rows)
                                 pragmas=[self.simd_pragma()] if simd else []):
                    (value,) = printer.emit([node.body], out)
                    out.stmt(f"{node.out}[{printer.index(node.out_index)}] = {value};")

    def copy_tile(self, tile: str, ld: Load, printer: ExprPrinter, a: tuple[str, int, str],
                  b: tuple[str, int, str]) -> None:
        """Copy what `ld` reads in this tile into `tile`, along its contiguous axis; later
        reads of `ld` read the tile."""
        (va, ra, a_hi), (vb, rb, b_hi) = a, b
        ta, tb = TILE_ROWS, TILE_COLS
        at = f"{tile}[{va} - {va}t][{vb} - {vb}t]"
        self.out.stmt(f"{ctype(ld.dtype)} {tile}[{ta}][{tb}];  // {ld.buf}, read along {va}")
        copy = Emitter()
        with copy.loop(vb, f"{vb}t", b_hi), copy.loop(va, f"{va}t", a_hi):
            copy.stmt(f"{at} = {printer.expr(ld)};")
        a_full, b_full = f"{tile}_af", f"{tile}_bf"  # [H11] a partial tile's kxk part ends
        # [G9] a whole tile of 4-byte elements is copied in 8x8 blocks transposed in
        # registers (the element-wise copy is scalar: 8-element rows, strided stores);
        # [FORD] 8-byte elements in 4x4 blocks
        k = {4: 8, 8: 4}.get(ld.dtype.itemsize, 0)
        transpose = f"stax_transpose{k}x{k}_{ld.dtype.itemsize}"
        blocks = k and ld.dtype.kind in "fiu" and \
            ld.index.coef(va) == 1 and ld.index.is_linear_in(va) and \
            ld.index.is_linear_in(vb) and ta % k == 0 and tb % k == 0
        if blocks:
            whole = Emitter()
            # source lines whole before the next ones (8 KB strides share a cache set)
            with whole.loop(vb, f"{vb}t", f"{vb}t + {tb}", step=k), \
                    whole.loop(va, f"{va}t", f"{va}t + {ta}", step=k):
                whole.stmt(f"{transpose}(&{printer.expr(ld)}, {ld.index.coef(vb)}, "
                           f"&{at}, {tb});")
            # [H11] a partial tile (a side shorter than the tile: every tile of a 100-column
            # transpose) in kxk blocks too; element by element only its ragged edges
            part = Emitter()
            part.stmt(f"const int64_t {a_full} = {va}t + ({a_hi} - {va}t) / {k} * {k};",
                      f"const int64_t {b_full} = {vb}t + ({b_hi} - {vb}t) / {k} * {k};")
            with part.loop(vb, f"{vb}t", b_full, step=k), \
                    part.loop(va, f"{va}t", a_full, step=k):
                part.stmt(f"{transpose}(&{printer.expr(ld)}, {ld.index.coef(vb)}, "
                          f"&{at}, {tb});")
            # [GEN] rows past the last block (2 of a 10-row transpose) copied along the tile's
            # long side: as the inner loop they ran 2 iterations at a time (run-time bounds in
            # a generic program; x.T + y 10x100000 generic/specialized 1.15-1.21 -> 1.0)
            with part.loop(va, a_full, a_hi), part.loop(vb, f"{vb}t", b_full):
                part.stmt(f"{at} = {printer.expr(ld)};")
            with part.loop(vb, b_full, b_hi), part.loop(va, f"{va}t", a_hi):
                part.stmt(f"{at} = {printer.expr(ld)};")
            self.out.add(Block(f"if ({va}t + {ta} <= {ra} && {vb}t + {tb} <= {rb})",
                               whole.code, orelse=part.code))
        else:
            self.out.add(*copy.code)
        printer.names[ld] = at

    def print_pointwise(self, nodes: list[Node]) -> None:
        d = self.plan.shared_depth
        node = nodes[0]
        names = xvars(len(node.ranges))[d:]
        inner = node.ranges[d:]
        printer = self.outer_printer or ExprPrinter(node.var_ranges)
        with ExitStack() as scope:
            self.open_loops(scope, names[:-1], inner[:-1], None)
            if names and inner[-1] != 0:  # [G9] what the innermost loop does not change,
                # computed before it ([B16] not before a zero-trip loop: its loads may be empty)
                printer.hoist([n.body for n in nodes if n.body is not None], names[-1],
                              {n.out for n in nodes}, self.out)
            self.open_loops(scope, names[-1:], inner[-1:],
                            "" if names and self.simd_ok(nodes, names[-1]) else None)
            for n in nodes:
                assert n.body is not None
                self.out.comment(f"{n.name}: {n.origin}")
                (value,) = printer.emit([n.body], self.out)
                self.out.stmt(f"{n.out}[{printer.index(n.out_index)}] = {value};")
                # later nodes of this loop read the value from the register, not memory
                printer.names[Load(n.out, n.out_index, self.buffers[n.out].dtype)] = value

    def print_reduction(self, nodes: list[Node], parallel_inside: bool) -> None:
        d = self.plan.shared_depth
        node = nodes[0]
        xnames = xvars(len(node.ranges))[d:]
        rnames = rvars(len(node.reduction_ranges))
        accs = [accumulator(n, f"acc_{n.name}") for n in nodes]
        # chunks (cascade summation) whenever the length may exceed one chunk: a symbolic
        # length may, at launch (issue 11)
        chunked = len(rnames) == 1 and (is_sym(node.reduction_ranges[0])
                                        or node.reduction_ranges[0] > REDUCTION_CHUNK)
        store = [Stmt(f"{n.out}[{ExprPrinter(node.var_ranges).index(n.out_index)}] = "
                      f"({ctype(self.buffers[n.out].dtype)}){a.result()};")
                 for n, a in zip(nodes, accs, strict=True)]
        with ExitStack() as scope:
            self.open_loops(scope, xnames, node.ranges[d:], None)
            for n in nodes:
                self.out.comment(f"{n.name}: {n.origin} over {n.reduction_ranges}")
            if chunked and is_sym(node.reduction_ranges[0]) and not (parallel_inside
                                                                     and not xnames):
                # [H11] a symbolic length: a row that fits one chunk (short rows of a generic
                # program) is reduced by one loop, without the chunk loop, its poll and fold
                outer, self.out = self.out, Emitter()
                self.print_whole_reduction(nodes, accs, rnames, store)
                short, self.out = self.out.code, Emitter()
                self.print_chunked_reduction(nodes, accs, store, False)
                long, self.out = self.out.code, outer
                self.out.add(Block(f"if (({node.reduction_ranges[0]}) <= {REDUCTION_CHUNK})",
                                   short, orelse=long))
            elif chunked:
                self.print_chunked_reduction(nodes, accs, store, parallel_inside and not xnames)
            else:
                self.print_whole_reduction(nodes, accs, rnames, store)

    def print_whole_reduction(self, nodes: list[Node], accs: list[Accumulator],
                              rnames: Sequence[str], store: list[Stmt]) -> None:
        """The reduction of one output in one loop (no chunks), then its store."""
        for a in accs:
            self.out.add(*a.declare())
        self.print_reduction_loop(nodes, accs, rnames, "", "0", self.print_prefix_stop(nodes))
        self.out.add(*store)

    def print_prefix_stop(self, nodes: list[Node]) -> str | None:
        """[H10] `stax_rstop_<node>`, where the reduction loop may stop: every node's terms past it
        are the reduction's identity (`stax.ir.prefix`, a masked slice of index-dependent
        length); None: the loop runs to its extent."""
        stops = [prefix_stop(n, self.buffers) for n in nodes]
        if stops[0] is None or any(s != stops[0] for s in stops) or is_sym(
                nodes[0].reduction_ranges[0]):
            return None
        self.out.comment("masked_prefix: the terms past the slice's length are the identity")
        return self.print_stop(f"stax_rstop_{nodes[0].name}", stops[0],
                               nodes[0].reduction_ranges[0], nodes[0].var_ranges)

    def print_stop(self, name: str, stop: Expr, extent: int, ranges: Mapping[str, int]) -> str:
        """`int64_t name`: `stop` clamped to [0, extent], computed once before the loop."""
        self.out.stmt(f"int64_t {name};")
        with self.out.block():
            (value,) = ExprPrinter(ranges).emit([stop], self.out)
            self.out.stmt(f"{name} = std::min<int64_t>({extent}, "
                          f"std::max<int64_t>((int64_t)({value}), 0));")
        return name

    def print_outer_block(self, parallel: bool) -> None:
        """Reductions over an outer (strided) axis, with the work fused around them: blocks
        of adjacent outputs keep one accumulator each; every reduction step updates a whole
        block with contiguous, vectorized loads (column sums read each row once instead of
        striding down columns). The kernel's loop groups run one after another per block;
        values local to the kernel (one per output) live in a block-wide array."""
        out = self.out
        plan = self.plan
        space = output_space(plan.nodes)
        last = f"x{len(space) - 1}"
        xnames = xvars(len(space))[plan.shared_depth:-1]
        extent = space[-1]
        block = plan.outer_block  # an int, or C text evaluated at launch (issue 11)
        size = block if isinstance(block, int) else MAX_OUTER_BLOCK  # the arrays' extent
        local = {name for name, _ in plan.local}
        wide = {name for name, e in plan.local if e != 1}  # [FROWS] rows of values per output
        if parallel and not xnames and not wide and plan.threads > 1 \
                and block == outer_block(extent, plan.threads):
            # [BUSY] the blocks split the outputs over the team at launch: a region planned for
            # P threads that runs on one (a busy machine, stax.tiling.threads.team) reads whole
            # rows, as a one-thread plan does (2048x2048 f32 column sum on one thread: blocks of
            # 1024 0.644 ms, of 2048 0.577 ms, NumPy 0.573)
            size = outer_block(extent, 1) if isinstance(extent, int) else MAX_OUTER_BLOCK
            block = outer_block(extent, "omp_get_num_threads()")
        simd = [f"omp simd{SIMD_BAD}"] if self.vectorize else []

        def local_ref(buf: str, index: Index, printer: ExprPrinter) -> str:
            """A kernel-local value of the lane's output: [FROWS] a wide one's element
            `index` of the lane's row, the block's outputs contiguous."""
            return f"{buf}[({printer.index(index)}) * {size} + lane]" if buf in wide \
                else f"{buf}[lane]"

        hoisted: ExprPrinter | None = None  # [INVAR] what no loop of the block changes
        unclamped: dict[Expr, Expr] = {}  # [COV] in the branch where no clamp bites

        def lane_printer(nodes: list[Node]) -> ExprPrinter:
            out.stmt(f"const int64_t {last} = block + lane;")
            printer = ExprPrinter(nodes[0].var_ranges)
            printer.unclamped = unclamped
            if hoisted is not None:
                printer.names.update(hoisted.names)
                printer.atom_names.update(hoisted.atom_names)
                printer.counter = hoisted.counter
            for n in nodes:
                for ld in walk(n.body):  # type: ignore[arg-type]
                    if isinstance(ld, Load) and ld.buf in local:
                        printer.names[ld] = local_ref(ld.buf, ld.index, printer)
            return printer

        def target(n: Node, printer: ExprPrinter) -> str:
            return local_ref(n.out, n.out_index, printer) if n.out in local else \
                f"{n.out}[{printer.index(n.out_index)}]"

        own = list(space[plan.shared_depth:])
        if self.first_stop is not None and plan.shared_depth == 0:  # [COV] the stores' count
            own[0] = self.first_stop
            extent = own[-1]
        with ExitStack() as scope:
            self.open_loops(scope, xnames, own[:-1], None)
            if not isinstance(block, int):
                out.stmt(f"const int64_t stax_block = {block};  // outputs per block")
                block = "stax_block"
            out.comment(f"{block} outputs at a time")
            pragmas = []
            if parallel and not xnames:
                pragmas.append("omp for schedule(static)")
                self.work_shared = True
            scope.enter_context(out.loop("block", 0, extent, step=block, pragmas=pragmas))
            out.stmt(POLL, f"const int64_t lanes = std::min<int64_t>({block}, {extent} - block);")
            bodies = [n.body for n in plan.nodes if n.body is not None]
            if all(surely(r, ">", 0) for n in plan.nodes
                   for r in (*n.ranges, *n.reduction_ranges)):
                # [INVAR] once per block, what depends on no loop inside it (a 0-d count's
                # conversion), when every loop inside runs (their loads may be empty otherwise)
                hoisted = ExprPrinter(plan.nodes[0].var_ranges)
                inside = {v for e in walk_all(bodies) for v in _own_variables(e)} - set(
                    xvars(len(space) - 1))
                hoisted.hoist(bodies, inside, {n.out for n in plan.nodes} | local, out)
            for name, e in sorted(plan.local):
                t = ctype(self.buffers[name].dtype)
                out.stmt(f"alignas(64) static thread_local {t} {name}[{size} * {e}];  "
                         f"// [FROWS] kernel-local, {e} per output, outputs contiguous"
                         if name in wide else
                         f"{t} {name}[{size}];  // kernel-local, one per output of the block")
            for nodes in self.clamp_branches(block_clamps(plan.nodes, len(space)), last,
                                             unclamped, hoisted):
                for n in nodes:
                    out.comment(f"{n.name}: {n.origin}")
                if nodes[0].kind == "scan":  # rows of the block added one after another
                    n = nodes[0]
                    t = ctype(self.buffers[n.out].dtype)
                    identity = scan_identity(n.fn, t)
                    out.stmt(f"{t} acc_{n.name}[{size}];",
                             f"for (int64_t lane = 0; lane < {block}; lane += 1) "
                             f"{{ acc_{n.name}[lane] = {identity or f'({t})0'}; }}")
                    with out.loop("r0", 0, n.reduction_ranges[0]), \
                            out.loop("lane", 0, "lanes", pragmas=simd):
                        printer = lane_printer(nodes)
                        (value,) = printer.emit([n.body], out)  # type: ignore[list-item]
                        acc = f"acc_{n.name}[lane]"
                        # [E16] no exact identity (complex, max/min): from the first row
                        first = "" if identity else f"r0 == 0 ? ({t}){value} : "
                        step = _scan_step(n.fn, t, acc, f"({t}){value}")
                        out.stmt(f"{acc} = {first}{step};", f"{target(n, printer)} = {acc};")
                elif nodes[0].kind == "reduction":
                    accs = [accumulator(n, f"acc_{n.name}") for n in nodes]
                    for a in accs:
                        out.add(*a.declare(lanes=size))

                    def update(rows: Sequence[str | None], nodes: list[Node] = nodes,
                               accs: list[Accumulator] = accs) -> None:
                        """One pass over the block's lanes applying rows `rows` in order
                        (None: the enclosing loop's r0; else r0's value in its own scope)."""
                        with out.loop("lane", 0, "lanes", pragmas=simd):
                            for r in rows:
                                with out.block() if r else nullcontext():
                                    if r:
                                        out.stmt(f"const int64_t r0 = {r};")
                                    printer = lane_printer(nodes)
                                    bodies = [n.body for n in nodes]
                                    values = printer.emit(bodies, out)  # type: ignore[arg-type]
                                    for a, v in zip(accs, values, strict=True):
                                        out.add(*a.update(v, "", lane="lane"))

                    ranges = nodes[0].reduction_ranges
                    rest = True  # rows left for one-row passes
                    with ExitStack() as rloops:
                        if len(ranges) == 1 and self.vectorize and all(
                                a.fn in JAMMED for a in accs):
                            # ROW_JAM rows per pass over the lanes, each lane's accumulator
                            # updated row after row (NumPy's order): that many row streams in
                            # flight once the input leaves the caches (4096x4096 f32 column
                            # sums, one thread: 2.9 -> 1.7 ms, NumPy 1.9)
                            (extent_r,) = ranges
                            with out.loop("rj", 0, f"({extent_r}) - {ROW_JAM - 1}", step=ROW_JAM):
                                update([f"rj + {k}" for k in range(ROW_JAM)])
                            # [PERF10] no remainder loop of zero trips (g++ drops it, and the
                            # vectorization report saw a marked loop left scalar)
                            rest = not isinstance(extent_r, int) or extent_r % ROW_JAM != 0
                            if rest:
                                rloops.enter_context(out.loop(
                                    "r0", f"({extent_r}) / {ROW_JAM} * {ROW_JAM}", extent_r))
                        else:
                            self.open_loops(rloops, rvars(len(ranges)), ranges, None)
                        if rest:
                            update([None])
                    with out.loop("lane", 0, "lanes"):
                        printer = lane_printer(nodes)
                        for n, a in zip(nodes, accs, strict=True):
                            out.stmt(f"{target(n, printer)} = "
                                     f"({ctype(self.buffers[n.out].dtype)}){a.result('lane')};")
                elif nodes[0].out not in wide and _transposes(nodes, len(space)):  # in tiles
                    printer = ExprPrinter(nodes[0].var_ranges)
                    printer.names.update(
                        (ld, f"{ld.buf}[{last} - block]") for ld in walk(nodes[0].body)  # type: ignore[arg-type]
                        if isinstance(ld, Load) and ld.buf in local)
                    self.print_tiled(nodes[0], False, ("block", "block + lanes"), printer)
                else:  # pointwise; loops of its own (beyond the outputs) outside the lanes
                    own = nodes[0].ranges[len(space):]
                    with ExitStack() as loops:
                        self.open_loops(loops, xvars(len(nodes[0].ranges))[len(space):], own,
                                        None)
                        loops.enter_context(out.loop(
                            "lane", 0, "lanes",
                            pragmas=simd if not own or self.simd_ok(nodes, last) else []))
                        printer = lane_printer(nodes)
                        for n in nodes:
                            (value,) = printer.emit([n.body], out)  # type: ignore[list-item]
                            out.stmt(f"{target(n, printer)} = {value};")
                            printer.names[Load(n.out, n.out_index,
                                               self.buffers[n.out].dtype)] = value

    def clamp_branches(self, clamps: Mapping[Expr, Clamp], last: str,
                       unclamped: dict[Expr, Expr], hoisted: ExprPrinter | None
                       ) -> Iterator[list[Node]]:
        """The kernel's loop groups for one block of outputs (`{last}` from `block`, `lanes`
        of them), for the caller to print. [COV] With clamped gather indices (a masked
        slice's positions, rule clamp_free): twice, first in `if (stax_free)`, where no clamp
        bites anywhere in the block, with `unclamped` holding each index's argument (its
        lanes read contiguously: vector loads, not gathers), then in its `else`."""
        if not clamps:
            yield from self.groups(self.plan.nodes)
            return
        out = self.out
        out.comment("clamp_free: where no clamped index of the block is clamped, read unclamped")
        out.stmt("bool stax_free = lanes > 0;")
        for first in ("block", "block + lanes - 1"):  # the arguments are affine in the lane
            with out.block():
                out.stmt(f"const int64_t {last} = {first};")
                ends = ExprPrinter(self.plan.nodes[0].var_ranges)
                ends.counter = hoisted.counter if hoisted is not None else 0
                values = ends.emit([c.arg for c in clamps.values()], out)
                out.stmt("stax_free = stax_free" + "".join(
                    f" && {v} >= {c.low} && {v} <= {c.high}"
                    for v, c in zip(values, clamps.values(), strict=True)) + ";")
        with out.block("if (stax_free)"):
            unclamped.update((e, c.arg) for e, c in clamps.items())
            yield from self.groups(self.plan.nodes)
        unclamped.clear()
        with out.block("else"):
            yield from self.groups(self.plan.nodes)

    def print_reduction_loop(self, nodes: list[Node], accs: list[Accumulator],
                             rnames: Sequence[str], suffix: str,
                             start: str = "0", stop: str | None = None,
                             runs: bool = False) -> None:
        """The reduction loops of `nodes` updating `accs` (first loop from `start` to `stop`
        when given; `runs`: the caller knows that range is not empty, as a chunk's)."""
        node = nodes[0]
        if len(rnames) == 1 and self.vectorize and _is_arg(node) and not any(
                a.acc_type.startswith("stax_complex") for a in accs) and \
                self.simd_ok(nodes, rnames[0]):
            self.print_arg_lanes(nodes, accs, suffix, start,
                                 stop or str(node.reduction_ranges[0]))
            return
        simd = None
        if rnames and all(a.simd_clause() for a in accs) and self.simd_ok(
                nodes, rnames[-1], gathers=True):
            simd = "".join(a.simd_clause().replace(f":{a.name}", f":{a.name}{suffix}")
                           for a in accs)
        printer = ExprPrinter(node.var_ranges)
        bodies = [n.body for n in nodes if n.body is not None]
        ranges = node.reduction_ranges
        if rnames and (runs or stop is None and surely(ranges[0], ">", 0)) and all(
                surely(r, ">", 0) for r in ranges[1:]):
            # [INVAR] what the loops do not change, once before them (not before a loop that
            # may run zero times: its loads may be empty): an int64 0-d count converted to
            # double per element of a where(...).sum() cost 13-15 ms vs 1.4 ms at 10^6
            printer.hoist(bodies, set(rnames), {n.out for n in nodes}, self.out)
        if len(rnames) == 1 and simd is not None and self.vectorize and is_sym(ranges[0]):
            self.print_lane_reduction(nodes, accs, printer, suffix, start,
                                      stop or str(ranges[0]))
            return
        with ExitStack() as scope:
            for k, (name, r) in enumerate(zip(rnames, ranges, strict=True)):
                lo, hi = (start, stop) if stop is not None and k == 0 else ("0", str(r))
                vector = k == len(rnames) - 1 and simd is not None and self.vectorize
                scope.enter_context(self.out.loop(
                    name, lo, hi, pragmas=[self.simd_pragma(simd)] if vector else []))
            values = printer.emit(bodies, self.out)
            position = printer.index(_flat_r(node))
            for a, v in zip(accs, values, strict=True):
                self.out.add(*a.update(v, position, suffix))

    def print_lane_reduction(self, nodes: list[Node], accs: list[Accumulator],
                             printer: ExprPrinter, suffix: str, start: str, stop: str) -> None:
        """[GEN2] A reduction over a run-time length (generic programs, issue 11) into a vector
        of lane accumulators: `omp simd` over the lanes of whole vectors; the elements left
        over by one more vector, the last one of the range, whose lanes already added hold
        the identity (a range shorter than a vector: one by one into the scalar); then the
        lanes folded pairwise (a tree of log2(lanes) vector steps). `omp simd reduction` over
        a run-time trip count left its scalar remainder adding through the stack (store-to-load
        forwarding per element) and folded its 16 lanes one after another (16 dependent adds
        per row): layernorm rows of 100 floats, C++ micro, 1.17x the constant-length loop,
        this form 0.93x (250: 1.16x -> 0.96x, 300: 1.06x -> 0.85x)."""
        out = self.out
        lanes, vec = "stax_lanes", f"r0_vec{suffix}"
        widest = ", ".join(["4"] + [f"sizeof({a.acc_type})" for a in accs])
        bodies = [n.body for n in nodes if n.body is not None]
        state = dict(printer.names), dict(printer.atom_names), printer.counter

        def lane_loop(first: str, last: bool) -> None:
            """The lane loop of the vector starting at `first` (`last`: lanes before `vec`
            were added already: a sum or product adds the identity there; max, min, any and
            all, idempotent, take them again, which also keeps their selects vectorizable:
            g++ 12 left `(v > n) ? v : n` of a select scalar, "control flow in loop")."""
            printer.names, printer.atom_names, printer.counter = map(copy.copy, state)
            body = Emitter()
            body.stmt(f"const int64_t r0 = {first} + lane;")
            for a, v in zip(accs, printer.emit(bodies, body), strict=True):
                masked = last and a.fn in ("sum", "prod")
                value = f"(r0 >= {vec} ? {v} : {a.init()})" if masked else v
                body.add(*a.update(value, "r0", f"{suffix}_l", "lane"))
            # no `reduction(|:stax_bad)` unless the body raises: unused, it still cost 1.5x
            pragma = self.simd_pragma(bad=any(BAD in line for line in render(body.code)))
            with out.loop("lane", 0, lanes, pragmas=[pragma]):
                out.add(*body.code)

        whole = f"{stop} - ({start}) >= {lanes}"
        with out.block():
            out.stmt(f"constexpr int64_t {lanes} = " + (
                str(self.plan.simd_lanes) if self.plan.simd_lanes
                else f"stax_vec_bytes / std::max<int64_t>({{{widest}}})") + ";")
            for a in accs:
                out.add(*a.declare(f"{suffix}_l", lanes))
            out.stmt(f"const int64_t {vec} = {start} + ({stop} - ({start})) / {lanes} * {lanes};")
            with out.loop("rb", start, vec, step=lanes):
                lane_loop("rb", False)
            with out.block(f"if ({whole} && {vec} < {stop})"):
                lane_loop(f"{stop} - {lanes}", True)
            with out.block(f"for (int64_t w = {lanes} / 2; w > 0; w /= 2)"), \
                    out.loop("lane", 0, "w", pragmas=["omp simd"]):
                for a in accs:
                    out.add(*a.combine(f"{suffix}_l", f"{suffix}_l", "lane", "lane + w"))
            for a in accs:
                out.add(*a.combine(f"{suffix}_l", suffix, "", "0"))
            printer.names, printer.atom_names, printer.counter = map(copy.copy, state)
            with out.block(f"if (!({whole}))"), out.loop("r0", vec, stop):
                for a, v in zip(accs, printer.emit(bodies, out), strict=True):
                    out.add(*a.update(v, "r0", suffix))

    def print_arg_lanes(self, nodes: list[Node], accs: list[Accumulator], suffix: str,
                        start: str, stop: str) -> None:
        """[CLIFF, ROWS] argmax/argmin with accumulators in vector registers (`stax_arg_block`
        of the runtime header: the best value of each 2 KiB chunk, then its first position in
        the chunk, with NumPy's first-position and first-NaN rules). A value that is a load of
        contiguous elements is read in place; other values (expressions, strided or narrow
        loads) are evaluated by an `omp simd` loop into a block of ARG_BLOCK elements, widened
        to 4 or 8 bytes."""
        out = self.out
        direct = [_contiguous_load(n.body) for n in nodes]
        with out.block():
            for a in accs:
                t = _arg_type(a)
                out.stmt(f"{t} {a.name}_bv = ({t}){a.var('', suffix)};",
                         f"int64_t {a.name}_bi = {a.var('_idx', suffix)};")
            calls = [f"stax_arg_block<{_arg_type(a)}, {str(a.fn == 'argmax').lower()}>"
                     for a in accs]
            for a, load, call in zip(accs, direct, calls, strict=True):
                if load is not None:
                    printer = ExprPrinter(nodes[0].var_ranges)
                    with out.block():
                        out.stmt(f"const int64_t r0 = {start};")
                        out.stmt(f"{call}(&{load.buf}[{printer.index(load.index)}], "
                                 f"{stop} - r0, r0, {a.name}_bv, {a.name}_bi);")
            blocked = [k for k, load in enumerate(direct) if load is None]
            if blocked:
                for k in blocked:
                    out.stmt(f"alignas(64) {_arg_type(accs[k])} {accs[k].name}_vb[{ARG_BLOCK}];")
                with out.block(f"for (int64_t rb = {start}; rb < {stop}; rb += {ARG_BLOCK})"):
                    out.stmt(f"const int64_t rn = std::min<int64_t>({ARG_BLOCK}, {stop} - rb);")
                    simd = vector_blocker(nodes[k].body for k in blocked) is None  # type: ignore[misc]
                    with out.loop("lane", 0, "rn", pragmas=[f"omp simd{SIMD_BAD}"] * simd):
                        out.stmt("const int64_t r0 = rb + lane;")
                        printer = ExprPrinter(nodes[0].var_ranges)
                        values = printer.emit([nodes[k].body for k in blocked],  # type: ignore[misc]
                                              out)
                        for k, v in zip(blocked, values, strict=True):
                            out.stmt(f"{accs[k].name}_vb[lane] = ({_arg_type(accs[k])}){v};")
                    for k in blocked:
                        out.stmt(f"{calls[k]}({accs[k].name}_vb, rn, rb, {accs[k].name}_bv, "
                                 f"{accs[k].name}_bi);")
            for a in accs:
                n, idx = a.var("", suffix), a.var("_idx", suffix)
                out.stmt(f"if ({a.name}_bi >= 0) {{ {n} = ({a.acc_type}){a.name}_bv; "
                         f"{idx} = {a.name}_bi; }}")

    def print_chunked_reduction(self, nodes: list[Node], accs: list[Accumulator],
                                store: list[Stmt], parallel: bool) -> None:
        """Reduce in chunks of REDUCTION_CHUNK and fold the chunk results in order: cascade
        summation (accurate float sums). When the outer loops give no parallelism the chunks
        are shared among threads through partial arrays, folded in the same order by one
        thread, so results are deterministic and do not depend on the thread count."""
        n = nodes[0].reduction_ranges[0]
        chunks = (n + REDUCTION_CHUNK - 1) // REDUCTION_CHUNK
        out = self.out
        bounds = (f"chunk * {REDUCTION_CHUNK}",
                  f"std::min<int64_t>((chunk + 1) * {REDUCTION_CHUNK}, {n})")
        parts = [("", "acc_type", "{a.name}_pp"), ("_nan", "int", "{a.name}_pn"),
                 ("_idx", "int64_t", "{a.name}_pi")]

        def reduce_chunk() -> None:
            out.stmt(POLL)
            for a in accs:
                out.add(*a.declare("_c"))
            self.print_reduction_loop(nodes, accs, ["r0"], "_c", *bounds, runs=True)

        if not parallel:
            for a in accs:
                out.add(*a.declare())
            with out.loop("chunk", 0, chunks):
                reduce_chunk()
                for a in accs:
                    out.add(*a.combine("_c"))
            out.add(*store)
            return
        for a in accs:
            for _, t, ptr in self._partials(a, parts):
                ctype_ = a.acc_type if t == "acc_type" else t
                ctype_ = "char" if ctype_ == "bool" else ctype_  # std::vector<bool> has no data()
                self.prologue += [Stmt(f"std::vector<{ctype_}> {ptr.format(a=a)}_v({chunks});"),
                                  Stmt(f"{ctype_}* {ptr.format(a=a)} = "
                                       f"{ptr.format(a=a)}_v.data();")]
        self.work_shared = True
        with out.loop("chunk", 0, chunks, pragmas=["omp for schedule(static)"]):
            reduce_chunk()
            for a in accs:
                for part, _, ptr in self._partials(a, parts):
                    out.stmt(f"{ptr.format(a=a)}[chunk] = {a.var(part, '_c')};")
        with out.block(pragmas=["omp single"]):
            for a in accs:
                out.add(*a.declare())
            with out.loop("chunk", 0, chunks):
                for a in accs:
                    for part, t, ptr in self._partials(a, parts):
                        ctype_ = a.acc_type if t == "acc_type" else t
                        out.stmt(f"{ctype_} {a.var(part, '_c')} = {ptr.format(a=a)}[chunk];")
                    out.add(*a.combine("_c"))
            out.add(*store)

    @staticmethod
    def _partials(a: Accumulator, parts: list[tuple[str, str, str]]
                  ) -> list[tuple[str, str, str]]:
        keep = {"": True, "_nan": a.tracks_nan, "_idx": a.fn in ("argmax", "argmin")}
        return [pt for pt in parts if keep[pt[0]]]

    def print_scan(self, node: Node, parallel: bool) -> None:
        d = self.plan.shared_depth
        xnames = xvars(len(node.ranges))[d:]
        if parallel and not xnames:
            self.print_parallel_scan(node)
            return
        assert node.body is not None
        out = self.out
        t = ctype(self.buffers[node.out].dtype)
        with ExitStack() as scope:
            self.open_loops(scope, xnames, node.ranges[d:], None)
            out.comment(f"{node.name}: {node.origin} along r0")
            out.stmt(f"{t} acc = {scan_identity(node.fn, t) or f'({t})0'};")
            with out.loop("r0", 0, node.reduction_ranges[0]):
                self.print_scan_step(node, t, "acc")

    def print_scan_step(self, node: Node, t: str, acc: str) -> None:
        """One element of a scan at r0: its value, the running value `acc` updated, stored."""
        assert node.body is not None
        printer = ExprPrinter(node.var_ranges)
        (v,) = printer.emit([node.body], self.out)
        # [E16] complex: from the first element, as NumPy ((1+0j) * (0+inf j) is nan+inf j);
        # [CLIFF] max/min too
        first = "" if scan_identity(node.fn, t) else f"r0 == 0 ? ({t}){v} : "
        self.out.stmt(f"{acc} = {first}{_scan_step(node.fn, t, acc, f'({t}){v}')};",
                      f"{node.out}[{printer.index(node.out_index)}] = {acc};")

    def print_scan_chains(self, x: str, extent: int | str) -> None:
        """[CLIFF3] The rows `{x}q`, `{x}q + Q`, ... of a row scan (`scan_chains` of them, Q
        = `_chain_rows` apart [SCAN], fewer at the end) scanned in step: one running value per
        row, each element of every row in turn, so the rows' dependence chains overlap; each
        row sees its elements in order."""
        node, chains, out = self.plan.nodes[0], self.plan.scan_chains, self.out
        t = ctype(self.buffers[node.out].dtype)
        apart = _chain_rows(extent, chains)
        out.comment(f"{node.name}: {node.origin} along r0, {chains} rows of {x} in step, " + (
            f"{apart} apart" if isinstance(apart, int) else
            f"ceil({extent} / {chains}) apart (odd from {CHAIN_ODD})"))
        out.stmt(f"const int64_t {x}n = std::min<int64_t>({chains}, "
                 f"({extent} - {x}q + {apart} - 1) / {apart});",
                 f"{t} acc[{chains}];")
        for count, head in ((chains, f"if ({x}n == {chains})"), (f"{x}n", "else")):
            with out.block(head=head):  # constant count: acc[] lives in registers
                unroll = [f"GCC unroll {chains}"]
                with out.loop(f"{x}i", 0, count, pragmas=unroll):
                    out.stmt(f"acc[{x}i] = {scan_identity(node.fn, t) or f'({t})0'};")
                with out.loop("r0", 0, node.reduction_ranges[0]), \
                        out.loop(f"{x}i", 0, count, pragmas=unroll):
                    out.stmt(f"const int64_t {x} = {x}q + {x}i * {apart};")
                    self.print_scan_step(node, t, f"acc[{x}i]")

    def print_parallel_scan(self, node: Node) -> None:
        """One long scan over the threads, in two passes: each thread totals its slice (a
        vectorized reduction), the totals are scanned by one thread, then each thread scans its
        slice again from its offset. Integer results equal the serial scan; float results
        differ by rounding only (the additions are grouped by slice). Sums and products of
        real numbers only: [SCAN] max/min and complex scans run serial (`one_chain_scan`)."""
        out = self.out
        assert node.body is not None
        t = ctype(self.buffers[node.out].dtype)
        identity = scan_identity(node.fn, t)
        assert identity is not None, "[SCAN] one_chain_scan: max/min, complex scans run serial"
        n = node.reduction_ranges[0]
        parts = f"{node.name}_parts"
        self.prologue.append(Stmt(f"std::vector<{t}> {parts}({self.plan.threads + 1});"))
        out.comment(f"{node.name}: {node.origin} along r0, two passes over the threads")
        out.stmt("const int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();",
                 f"const int64_t lo = {n} * me / nt, hi = {n} * (me + 1) / nt;",
                 f"{t} total = {identity};")
        op = "+" if node.fn == "cumsum" else "*"
        simd = [f"omp simd reduction({op}:total){SIMD_BAD}"] if self.vectorize else []
        with out.loop("r0", "lo", "hi", pragmas=simd):
            (v,) = ExprPrinter(node.var_ranges).emit([node.body], out)
            out.stmt(f"total = {_scan_step(node.fn, t, 'total', f'({t}){v}')};")
        if simd and op == "+" and self.buffers[node.out].dtype.kind == "f":
            # [FIX16] the vector lanes start from +0.0, which loses the sign of a slice of
            # -0.0 only: a zero total is summed again in order from the identity
            with out.block(head="if (total == 0)"):
                out.stmt(f"total = {identity};")
                with out.loop("r0", "lo", "hi"):
                    (v,) = ExprPrinter(node.var_ranges).emit([node.body], out)
                    out.stmt(f"total = total + ({t}){v};")
        out.stmt(f"{parts}[me + 1] = total;")
        out.pragma("omp barrier")
        out.pragma("omp single")
        out.stmt(f"{{ {parts}[0] = {identity}; for (int64_t k = 1; k <= nt; k += 1) "
                 f"{parts}[k] = {_scan_step(node.fn, t, f'{parts}[k - 1]', f'{parts}[k]')}; }}",
                 f"{t} acc = {parts}[me];")
        with out.loop("r0", "lo", "hi"):
            printer = ExprPrinter(node.var_ranges)
            (v,) = printer.emit([node.body], out)
            out.stmt(f"acc = {_scan_step(node.fn, t, 'acc', f'({t}){v}')};",
                     f"{node.out}[{printer.index(node.out_index)}] = acc;")
        self.work_shared = True


def _chain_rows(extent: int | str, chains: int) -> int | str:
    """[SCAN] The rows of each chain of a row scan run in step, the chains that far apart (C
    text for a symbolic extent): ceil(extent / chains), odd from CHAIN_ODD rows on."""
    if isinstance(extent, int):
        q = -(-extent // chains)
        return q | 1 if q >= CHAIN_ODD else q
    q = f"(({extent} + {chains - 1}) / {chains})"
    return f"({q} >= {CHAIN_ODD} ? {q} | 1 : {q})"


def scan_identity(fn: str, t: str) -> str | None:
    """The value a scan's accumulator starts from, in C++ type `t` (the op table's: -0.0 for
    cumsum, so a leading -0.0 stays -0.0 as in NumPy [FIX16]); None where no identity is exact
    (complex; [CLIFF] max/min): the scan starts from its first element."""
    if t.startswith("stax_complex") or fn in ("cummax", "cummin"):
        return None
    return f"({t}){scan(fn).identity!r}"


def _scan_step(fn: str, t: str, acc: str, value: str) -> str:
    """[CLIFF] Scan `fn`'s next running value from `acc` and `value`; max/min propagate NaN and
    of equal values (-0.0 and 0.0) keep NumPy's choice: the second operand (stax_maximum's
    rule), for float16 the first (NumPy's float16 loop)."""
    if fn in ("cummax", "cummin"):
        a, b = (value, acc) if t == "stax_half" else (acc, value)
        return f"stax_{'maximum' if fn == 'cummax' else 'minimum'}<{t}>({a}, {b})"
    return f"{acc} {'+' if fn == 'cumsum' else '*'} {value}"


def _arg_type(a: Accumulator) -> str:
    """[CLIFF] The type `stax_arg_block` compares argmax/argmin values in: 4 or 8 bytes, with
    narrower values widened (order and NaN kept: float16 as float, bool and 8/16-bit integers
    as int32)."""
    if a.acc_type in ("float", "double", "int32_t", "uint32_t", "int64_t", "uint64_t"):
        return a.acc_type
    return "float" if a.float_value else "int32_t"


def _gathered(index: Index, var: str) -> bool:
    """`var` occurs in `index` only as a plain term or inside gather indices (`x[idx[r]]`)."""
    return all(isinstance(a, Var | Indirect) or var not in Index(((a, 1),)).variables()
               for a, _ in index.terms)


def _contiguous_load(body: Expr | None) -> Load | None:
    """[CLIFF] `body` when it is a load of 4- or 8-byte numbers at an affine index advancing by
    one element per reduction step (argmax/argmin then read the array in place)."""
    if not isinstance(body, Load) or body.dtype.kind not in "iuf" or \
            body.dtype.itemsize not in (4, 8) or body.index.coef("r0") != 1:
        return None
    return body if all(isinstance(atom, Var) for atom, _ in body.index.terms) else None


def _transposes(nodes: Sequence[Node], rank: int) -> bool:
    """A pointwise node with one loop of its own beyond an outer-reduction block's `rank`
    output loops, storing along that loop and reading an operand along the block's rows:
    a transpose, printed in tiles."""
    node = nodes[0]
    if len(nodes) != 1 or len(node.ranges) != rank + 1 or node.body is None:
        return False
    row, own = f"x{rank - 1}", f"x{rank}"
    return abs(node.out_index.coef(own)) == 1 and any(
        isinstance(e, Load) and abs(e.index.coef(row)) == 1 and abs(e.index.coef(own)) > 1
        for e in walk(node.body))


def _is_arg(node: Node) -> bool:
    """argmax/argmin keep vector lanes of (value, position): they share loops only with each
    other."""
    return node.kind == "reduction" and node.fn in ("argmax", "argmin")


def _flat_r(node: Node) -> Index:
    out = Index()
    stride = 1
    for name, r in reversed(list(zip(rvars(len(node.reduction_ranges)), node.reduction_ranges,
                                     strict=True))):
        out = out + Index.var(name) * stride
        stride *= r
    return out


def print_region(name: str, plans: Sequence[KernelPlan], buffers: Mapping[str, Buffer],
                 aliased: set[str], symbols: Sequence[str] = ()) -> str:
    """Adjacent kernels in one C++ function and one OpenMP parallel region (seed 000 §8.5),
    saving the region's entry and exit per kernel; implicit barriers after each work-shared
    loop keep the kernels in order. Buffers that share storage lose `__restrict__`."""
    printers = [KernelPrinter(plan, buffers, aliased) for plan in plans]
    kernels = [code for printer in printers for code in printer.print()]
    written = {n.out for plan in plans for n in plan.nodes} | {
        t.load.buf for plan in plans for t in plan.row_tiles if t.store}  # [LAYOUT]
    params = []
    for buf in region_params(plans):
        t = ctype(buffers[buf].dtype)
        restrict = "" if buf in aliased else " __restrict__"
        params.append(f"{t}*{restrict} {buf}" if buf in written else f"const {t}*{restrict} {buf}")
    if symbols:  # a generic program: the sizes of this call (issue 11)
        params.append("const int64_t* __restrict__ stax_sizes")
    signature = ", ".join([*params, "int32_t* flags"])
    # [H11] short rows: the body is a template on the row symbol's length (0: the run-time size)
    row, lengths = next(((p.row_symbol, p.row_lengths) for p in plans if p.row_symbol),
                        ("", ()))
    out = Emitter()
    out.comment(f"{name}: {', '.join(p.name for p in plans)}")
    with out.block(f"template <int64_t STAX_ROW> static void {name}_rows({signature})" if row
                   else f"extern \"C\" void {name}({signature})"):
        out.stmt(*(f"const int64_t {s} = STAX_ROW ? STAX_ROW : stax_sizes[{k}];" if s == row
                   else f"const int64_t {s} = stax_sizes[{k}];" for k, s in enumerate(symbols)))
        for printer in printers:
            out.add(*printer.prologue)
        launch = [plan.launch_work for plan in plans if plan.launch_work is not None]
        shared = any(printer.work_shared for printer in printers)
        # [BUSY] the body of a region that may share work is a lambda, called by each thread
        # of a team or by the calling thread alone (noinline: compiled once); the buffers are
        # its parameters, which keeps their `__restrict__` (a capture loses it, and g++ then
        # turns no copy loop into memcpy)
        call = f"stax_body({', '.join(p.rsplit(' ', 1)[1] for p in params)});"
        with out.block(f"const auto stax_body = [&]({', '.join(params)}) "
                       "__attribute__((noinline))" if shared else "", tail=";" if shared else ""):
            out.stmt(f"int {BAD} = 0;  // error bits of this thread (stax_raise)")
            out.add(*kernels)
            out.stmt(f"if ({BAD}) stax_raise(flags, {BAD});")
        if shared:
            # the thread count the plans were made for (the threads= option / OMP_NUM_THREADS)
            threads = max(plan.threads for plan in plans)  # serial kernels run in `omp single`
            # [H9] The team is the launch-time decision alone: the wrapper sets the calling
            # thread's nthreads-var to the cores idle now (stax.tiling.threads.team, set by
            # fastcall's run), so omp_get_max_threads() caps the planned count. No dynamic
            # adjustment (libgomp's would size it again from the lagging load average).
            # [BUSY] A team of one, or work too small to pay, opens no region at all: an
            # `omp parallel if(false)` still makes a team of one, whose barriers (each work-
            # shared loop's, the region's end) each make a futex system call in libgomp; the
            # orphaned `omp for`/`single`/`barrier` of the body then run on the caller alone.
            out.stmt(f"const int stax_team = std::min({threads}, omp_get_max_threads());")
            pays = f" && ({' || '.join(map(parallel_pays, launch))})" if launch else ""
            team = Block("", (Stmt(call),), ("omp parallel num_threads(stax_team)",))
            out.add(Block(f"if (stax_team > 1{pays})", (team,),
                          orelse=(Stmt(f"{call}  // the calling thread alone"),)))
    if row:
        _row_dispatch(out, name, signature, symbols.index(row), lengths)
    if len(params) > MANY_ARGS:
        _pointer_array_entry(out, name, params)
    return "\n".join(render(out.code))


def _pointer_array_entry(out: Emitter, name: str, params: Sequence[str]) -> None:
    """The entry of a region with more than MANY_ARGS buffers: one array of their addresses
    (ctypes calls at most 1024 arguments; issue 10 asks for any number)."""
    args = [f"({p.rsplit(' ', 1)[0].replace(' __restrict__', '')})stax_args[{k}]"
            for k, p in enumerate(params)]
    with out.block(f"extern \"C\" void {name}{MANY_ARGS_SUFFIX}(void* const* stax_args, "
                   "int32_t* flags)"):
        out.stmt(f"{name}({', '.join([*args, 'flags'])});")


def _row_dispatch(out: Emitter, name: str, signature: str, k: int,
                  lengths: Sequence[int]) -> None:
    """[H11] The entry of a region compiled per short row length: a switch on the size."""
    args = ", ".join(p.rsplit(" ", 1)[1] for p in signature.split(", "))
    with out.block(f"extern \"C\" void {name}({signature})"):
        out.stmt(f"switch (stax_sizes[{k}]) {{", *(
            f"    case {n}: return {name}_rows<{n}>({args});" for n in lengths),
            f"    default: return {name}_rows<0>({args});", "}")


def print_module(regions: Sequence[KernelRegion],
                 buffers: Mapping[str, Buffer], symbols: Sequence[str] = ()) -> str:
    parts = [HEADER, "#include <vector>\n#include <algorithm>\n"]
    for name, plans, aliased in regions:
        parts.append(print_region(name, plans, buffers, aliased, symbols))
    return "\n\n".join(parts) + "\n"
