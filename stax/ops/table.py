"""The op table's entries (see `stax.ops`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Cost = Literal["cheap", "costly", "transcendental"]


# ---- kernel error flags -------------------------------------------------------------------------

@dataclass(frozen=True)
class Flag:
    """A kernel error flag: C++ enumerator `STAX_<name>`, raised by the wrapper as `kind`. A
    floating-point error NumPy reports through `np.errstate` names its category there
    (`errstate`: "divide" or "invalid"); the wrapper then acts as `np.geterr()` says."""

    name: str
    kind: type[Exception]
    message: str
    when: str  # the C++ comment: what sets it
    errstate: str | None = None


FLAGS: tuple[Flag, ...] = (
    Flag("DIV_ZERO_FLOOR_DIVIDE", RuntimeWarning, "divide by zero encountered in floor_divide",
         "integer // by zero: result 0", "divide"),
    Flag("DIV_ZERO_REMAINDER", RuntimeWarning, "divide by zero encountered in remainder",
         "integer % by zero: result 0", "divide"),
    Flag("INDEX_OUT_OF_BOUNDS", IndexError,
         "index out of bounds in a gather (np.take / take_along_axis / x[idx])",
         "gather index out of range"),
    Flag("NEGATIVE_INT_POWER", ValueError, "Integers to negative integer powers are not allowed.",
         "integer ** negative"),
    Flag("INVALID_CAST", RuntimeWarning, "invalid value encountered in cast",
         "float -> int of nan/inf/out of range", "invalid"),
    Flag("DIV_ZERO_RECIPROCAL", RuntimeWarning, "divide by zero encountered in reciprocal",
         "integer reciprocal of 0", "divide"),
    Flag("INVALID_RECIPROCAL", RuntimeWarning, "invalid value encountered in reciprocal",
         "integer reciprocal of 0 (NumPy converts 1.0 / 0 to the integer)", "invalid"),
)
ANY_FLAG = 7  # set with every other flag, so the wrapper checks one element; at most 7 flags
assert len(FLAGS) <= ANY_FLAG


def flag_index(name: str) -> int:
    return next(k for k, f in enumerate(FLAGS) if f.name == name)


def flag_enum_cpp() -> str:
    """The runtime header's `enum StaxFlag`, generated from `FLAGS`."""
    width = max(len(f.name) for f in FLAGS) + len("STAX_ = 0,")
    lines = [f"    {f'STAX_{f.name} = {k},':<{width}}  // {f.when}: {f.kind.__name__}"
             for k, f in enumerate(FLAGS)]
    lines.append(f"    STAX_ANY_FLAG = {ANY_FLAG}  // set with every other flag")
    return "enum StaxFlag {\n" + "\n".join(lines) + "\n};"


# ---- elementwise ops ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Cpp:
    """The C++ spelling of an op: a template per operand kind (`float`: float32/float64; `int`:
    signed and unsigned integers; `bool`; `complex`: complex64/complex128, the runtime
    header's `stax_complex`, given exactly when NumPy has a complex loop [E16]), over {a0}
    {a1} (operands), {t} (C++ type of the first operand), {f} (`f` for float32: the C float
    functions), {bad} (the kernel's flag variable) and {const} (`, true` when the second
    operand is a constant: a divisor g++ can strength-reduce). A real kind left None uses
    the previous one (bool -> int -> float); complex never falls back."""

    float: str
    int: str | None = None
    bool: str | None = None
    complex: str | None = None
    # the complex spelling calls glibc's scalar complex functions or branches: a loop with it
    # gets no `omp simd` (g++ leaves it scalar) [E16]
    complex_scalar: bool = False

    def template(self, kind: str) -> str:
        if kind == "c":
            if self.complex is None:
                raise NotImplementedError("stax.jit: no complex spelling for this op")
            return self.complex
        if kind == "b" and self.bool is not None:
            return self.bool
        if kind in "biu" and self.int is not None:
            return self.int
        return self.float


@dataclass(frozen=True)
class Domain:
    """Test inputs of an op: random values in [low, high) (integers: the same bounds clipped to
    the dtype), plus NaN/inf/±0 when `specials`; results compared with relative tolerance
    `rtol` (per float dtype: float32, float64) and exactly for integers and booleans."""

    low: float = -10.0
    high: float = 10.0
    specials: bool = True
    rtol: tuple[float, float] = (1e-6, 1e-12)
    int_low: int | None = None  # integer operands: a narrower range (shift counts, exponents)
    int_high: int | None = None


WIDE = Domain()
UNIT = Domain(-1.0, 1.0)
POSITIVE = Domain(0.0, 10.0)
TRANSCENDENTAL_TOL = (4e-6, 1e-13)  # libmvec: within 4 ulp


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op: `ufunc` is the dispatch key (any ufunc object, NumPy's or another
    library's); NumPy's `ufunc.resolve_dtypes` decides the dtypes. `aliases`: other `np.` names
    of the same ufunc object. `flags`: the error flags its C++ may set. `decomposition`: the op
    written with other ops of the table over x (and y), for a backend that lacks it."""

    name: str
    ufunc: np.ufunc
    cpp: Cpp
    cost: Cost = "cheap"
    flags: tuple[str, ...] = ()
    domain: Domain = WIDE
    decomposition: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def nin(self) -> int:
        return int(self.ufunc.nin)


def _every(form: str) -> Cpp:
    """One spelling for every operand kind, complex included (its operators are NumPy's)."""
    return Cpp(form, complex=form)


def _infix(op: str, bool_form: str | None = None, complex_form: bool = False) -> Cpp:
    form = f"({{a0}} {op} {{a1}})"
    return Cpp(form, bool=bool_form, complex=form if complex_form else None)


def _math(fn: str, domain: Domain = WIDE, cost: Cost = "transcendental",
          decomposition: str | None = None, name: str | None = None,
          complex_fn: str | None = None) -> Elementwise:
    """A C math function (float32: the `f` variant, libmvec's vector version where declared);
    `complex_fn`: the runtime header's complex version (`stax_c<name>`). [E16]"""
    args = "{a0}, {a1}" if getattr(np, name or fn).nin == 2 else "{a0}"
    cpp = Cpp(f"{fn}{{f}}({args})", complex=f"{complex_fn}({args})" if complex_fn else None,
              complex_scalar=complex_fn is not None and complex_fn != "stax_clog1p")
    return Elementwise(name or fn, getattr(np, name or fn), cpp, cost,
                       domain=domain, decomposition=decomposition)


_T = TRANSCENDENTAL_TOL

ELEMENTWISE: tuple[Elementwise, ...] = (
    # arithmetic
    Elementwise("add", np.add, _infix("+", "({a0} || {a1})", True)),
    Elementwise("subtract", np.subtract, _infix("-", complex_form=True)),
    Elementwise("multiply", np.multiply, _infix("*", "({a0} && {a1})", True)),
    Elementwise("true_divide", np.true_divide, _infix("/", complex_form=True), "costly",
                aliases=("divide",),
                domain=Domain(rtol=(1e-6, 1e-15))),
    Elementwise("floor_divide", np.floor_divide,
                Cpp("stax_floordiv<{t}{const}>({a0}, {a1}, {bad})"), "costly",
                flags=("DIV_ZERO_FLOOR_DIVIDE",), decomposition="floor(true_divide(x, y))"),
    Elementwise("remainder", np.remainder, Cpp("stax_remainder<{t}{const}>({a0}, {a1}, {bad})"),
                "costly", flags=("DIV_ZERO_REMAINDER",), aliases=("mod",),
                decomposition="subtract(x, multiply(floor_divide(x, y), y))"),
    Elementwise("power", np.power, Cpp("pow{f}({a0}, {a1})", "stax_power<{t}>({a0}, {a1}, {bad})",
                                       complex="stax_cpow({a0}, {a1})", complex_scalar=True),
                "transcendental", flags=("NEGATIVE_INT_POWER",),
                domain=Domain(0.0, 4.0, rtol=_T, int_low=0, int_high=5),
                decomposition="exp(multiply(y, log(x)))"),
    # [HUNT3] NumPy's float_power: power in float64 / complex128 (its only loops but longdouble)
    Elementwise("float_power", np.float_power, Cpp("pow{f}({a0}, {a1})",
                                                   complex="stax_cpow({a0}, {a1})",
                                                   complex_scalar=True),
                "transcendental", domain=Domain(0.0, 4.0, rtol=_T),
                decomposition="exp(multiply(y, log(x)))"),
    Elementwise("negative", np.negative, Cpp("stax_neg<{t}>({a0})", complex="(-{a0})"),
                decomposition="subtract(0, x)"),
    Elementwise("positive", np.positive, _every("{a0}")),
    Elementwise("absolute", np.absolute, Cpp("stax_abs<{t}>({a0})", complex="stax_cabs({a0})"),
                aliases=("abs",),
                decomposition="where(less(x, 0), negative(x), x)"),
    Elementwise("square", np.square, _every("({a0} * {a0})"),
                decomposition="multiply(x, x)"),
    Elementwise("reciprocal", np.reciprocal, Cpp("(({t})1 / {a0})", "stax_reciprocal<{t}>({a0}, "
                                                 "{bad})", complex="stax_creciprocal({a0})"),
                "costly",
                flags=("DIV_ZERO_RECIPROCAL", "INVALID_RECIPROCAL"),
                decomposition="true_divide(1, x)"),
    Elementwise("sign", np.sign, Cpp("stax_sign<{t}>({a0})", complex="stax_csign({a0})",
                                     complex_scalar=True)),
    # [E16] complex conjugate (a copy for real dtypes, as NumPy)
    Elementwise("conjugate", np.conjugate, Cpp("{a0}", complex="stax_conj({a0})"),
                aliases=("conj",)),
    # comparisons
    # (a signed and an unsigned operand compare exactly, as NumPy's uint64/int64 loops)
    Elementwise("equal", np.equal, _every("stax_equal({a0}, {a1})")),
    Elementwise("not_equal", np.not_equal, _every("(!stax_equal({a0}, {a1}))")),
    Elementwise("less", np.less, _every("stax_less({a0}, {a1})")),
    Elementwise("less_equal", np.less_equal, _every("stax_less_equal({a0}, {a1})")),
    Elementwise("greater", np.greater, _every("stax_less({a1}, {a0})")),
    Elementwise("greater_equal", np.greater_equal, _every("stax_less_equal({a1}, {a0})")),
    # [HUNT3] of two equal values NumPy's loops return the second (np.maximum(-0.0, 0.0) is
    # 0.0, np.minimum(0.0, -0.0) is -0.0), [FIX16] of two NaNs the first (the header's
    # stax_maximum/stax_minimum: a NaN first, then ties to the second; [FUZZ] float16's loops
    # tie to the first: cpp.HALF_TIES)
    Elementwise("maximum", np.maximum, Cpp("stax_maximum<{t}>({a0}, {a1})",
                                          complex="stax_cmaximum({a0}, {a1})")),
    Elementwise("minimum", np.minimum, Cpp("stax_minimum<{t}>({a0}, {a1})",
                                          complex="stax_cminimum({a0}, {a1})")),
    Elementwise("fmax", np.fmax, Cpp("stax_fmax<{t}>({a0}, {a1})",
                                          complex="stax_cfmax({a0}, {a1})")),
    Elementwise("fmin", np.fmin, Cpp("stax_fmin<{t}>({a0}, {a1})",
                                          complex="stax_cfmin({a0}, {a1})")),
    # logic and bits
    Elementwise("logical_and", np.logical_and, Cpp("((bool){a0} && (bool){a1})",
                                                   complex="((bool){a0} & (bool){a1})")),
    Elementwise("logical_or", np.logical_or, Cpp("((bool){a0} || (bool){a1})",
                                                 complex="((bool){a0} | (bool){a1})")),
    Elementwise("logical_xor", np.logical_xor, _every("((bool){a0} != (bool){a1})")),
    Elementwise("logical_not", np.logical_not, _every("(!(bool){a0})")),
    Elementwise("bitwise_and", np.bitwise_and, _infix("&")),
    Elementwise("bitwise_or", np.bitwise_or, _infix("|")),
    Elementwise("bitwise_xor", np.bitwise_xor, _infix("^")),
    # [H16] NumPy counts the bits of the absolute value (a uint8 result; integer loops only)
    Elementwise("bitwise_count", np.bitwise_count,
                Cpp("((uint8_t)__builtin_popcountll({a0} < 0 ? 0ULL - (unsigned long long)"
                    "{a0} : (unsigned long long){a0}))")),
    Elementwise("invert", np.invert, Cpp("(({t})~{a0})", bool="(!{a0})"),
                aliases=("bitwise_not",), decomposition="bitwise_xor(x, -1)"),
    Elementwise("left_shift", np.left_shift, Cpp("stax_shl<{t}>({a0}, {a1})"),
                domain=Domain(int_low=-2, int_high=70)),
    Elementwise("right_shift", np.right_shift, Cpp("stax_shr<{t}>({a0}, {a1})"),
                domain=Domain(int_low=-2, int_high=70)),
    # [VEC4] integer loops only (NumPy refuses floats and bool): the header's stax_gcd/stax_lcm
    Elementwise("gcd", np.gcd, Cpp("stax_gcd<{t}>({a0}, {a1})"), "costly",
                domain=Domain(-1000.0, 1000.0)),
    Elementwise("lcm", np.lcm, Cpp("stax_lcm<{t}>({a0}, {a1})"), "costly",
                domain=Domain(-1000.0, 1000.0)),
    # exponentials and logarithms
    _math("exp", complex_fn="stax_cexp", domain=Domain(-20.0, 20.0, rtol=_T)),
    _math("exp2", complex_fn="stax_cexp2", domain=Domain(-20.0, 20.0, rtol=_T)),
    _math("expm1", complex_fn="stax_cexpm1", domain=Domain(-5.0, 5.0, rtol=_T)),
    _math("log", complex_fn="stax_clog", domain=Domain(0.0, 100.0, rtol=_T)),
    _math("log2", complex_fn="stax_clog2", domain=Domain(0.0, 100.0, rtol=_T)),
    _math("log10", complex_fn="stax_clog10", domain=Domain(0.0, 100.0, rtol=_T)),
    _math("log1p", complex_fn="stax_clog1p", domain=Domain(-1.0, 100.0, rtol=_T)),
    _math("sqrt", POSITIVE, "costly", complex_fn="stax_csqrt"),
    _math("cbrt", Domain(rtol=_T)),
    Elementwise("logaddexp", np.logaddexp, Cpp("stax_logaddexp<{t}>({a0}, {a1})"),
                "transcendental", domain=Domain(rtol=_T),
                decomposition="add(maximum(x, y), log1p(exp(negative(absolute(subtract(x, y))))))"),
    # trigonometric and hyperbolic
    _math("stax_sin", Domain(rtol=_T), name="sin", complex_fn="stax_csin"),
    _math("stax_cos", Domain(rtol=_T), name="cos", complex_fn="stax_ccos"),
    _math("tan", complex_fn="stax_ctan", domain=Domain(-1.5, 1.5, rtol=_T)),
    _math("asin", Domain(-1.0, 1.0, rtol=_T), name="arcsin", complex_fn="stax_casin"),
    _math("acos", Domain(-1.0, 1.0, rtol=_T), name="arccos", complex_fn="stax_cacos"),
    _math("atan", Domain(rtol=_T), name="arctan", complex_fn="stax_catan"),
    _math("sinh", complex_fn="stax_csinh", domain=Domain(-5.0, 5.0, rtol=_T)),
    _math("cosh", complex_fn="stax_ccosh", domain=Domain(-5.0, 5.0, rtol=_T)),
    _math("tanh", complex_fn="stax_ctanh", domain=Domain(-5.0, 5.0, rtol=_T)),
    _math("asinh", Domain(rtol=_T), name="arcsinh", complex_fn="stax_casinh"),
    _math("acosh", Domain(1.0, 10.0, rtol=_T), name="arccosh", complex_fn="stax_cacosh"),
    _math("atanh", Domain(-0.99, 0.99, rtol=_T), name="arctanh", complex_fn="stax_catanh"),
    _math("atan2", Domain(rtol=_T), name="arctan2"),
    _math("hypot", Domain(rtol=_T), decomposition="sqrt(add(multiply(x, x), multiply(y, y)))"),
    # rounding (integers are already integral: a copy)
    Elementwise("floor", np.floor, Cpp("floor{f}({a0})", "{a0}")),
    Elementwise("ceil", np.ceil, Cpp("ceil{f}({a0})", "{a0}")),
    Elementwise("trunc", np.trunc, Cpp("trunc{f}({a0})", "{a0}")),
    Elementwise("rint", np.rint, Cpp("nearbyint{f}({a0})", "{a0}", complex="stax_crint({a0})")),
    Elementwise("copysign", np.copysign, Cpp("copysign{f}({a0}, {a1})")),
    Elementwise("nextafter", np.nextafter, Cpp("nextafter{f}({a0}, {a1})")),  # [CHOOSE]
    Elementwise("fabs", np.fabs, Cpp("fabs{f}({a0})")),  # [HUNT5]
    # [H16] C's fmod for floats (as stax_fmod [PERF9]); integers as NumPy's loop: x fmod 0 is 0
    # (NumPy also warns "divide by zero encountered in fmod": not raised, the flag enum is
    # full), MIN fmod -1 is 0
    Elementwise("fmod", np.fmod, Cpp("stax_fmod<{t}{const}>({a0}, {a1})",
                                     "({a1} == 0 ? ({t})0 : ({t})({a0} % ((({t})-1 < ({t})0 && "
                                     "{a1} == ({t})-1) ? ({t})1 : {a1})))"),
                "costly", decomposition="subtract(x, multiply(trunc(true_divide(x, y)), y))"),
    # [H16] NumPy's npy_heaviside: NaN, h0 at 0, else 0 or 1 (float loops only)
    Elementwise("heaviside", np.heaviside,
                Cpp("(std::isnan({a0}) ? {a0} : {a0} == ({t})0 ? {a1} : "
                    "{a0} < ({t})0 ? ({t})0 : ({t})1)")),
    # [H16] angle conversions: NumPy's constants rounded in the loop's type (NPY_PIf / 180.0f);
    # np.radians / np.degrees are ufuncs of their own with the same loops
    *(Elementwise(name, getattr(np, name), Cpp(form), decomposition=decomposition)
      for names, form, decomposition in (
          (("deg2rad", "radians"), "({a0} * (({t})3.141592653589793238462643383279502884 / "
                                   "({t})180))", "multiply(x, 0.017453292519943295)"),
          (("rad2deg", "degrees"), "({a0} * (({t})180 / "
                                   "({t})3.141592653589793238462643383279502884))",
           "multiply(x, 57.29577951308232)"))
      for name in names),
    # classification
    Elementwise("isnan", np.isnan, Cpp("std::isnan({a0})", "false", complex="stax_cisnan({a0})"),
                decomposition="not_equal(x, x)"),
    Elementwise("isinf", np.isinf, Cpp("std::isinf({a0})", "false", complex="stax_cisinf({a0})")),
    Elementwise("isfinite", np.isfinite, Cpp("std::isfinite({a0})", "true",
                                             complex="stax_cisfinite({a0})"),
                decomposition="logical_not(isnan(subtract(x, x)))"),
    Elementwise("signbit", np.signbit, Cpp("std::signbit({a0})", "({a0} < 0)", "false")),
)

_BY_NAME = {op.name: op for op in ELEMENTWISE}
_BY_UFUNC = {op.ufunc: op for op in ELEMENTWISE}
assert len(_BY_NAME) == len(_BY_UFUNC) == len(ELEMENTWISE)


def by_name(name: str) -> Elementwise:
    """The op named `name` (its canonical name or an alias such as `divide`)."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    op = by_ufunc(getattr(np, name, None))
    if op is None:
        raise KeyError(name)
    return op


def flags_of(name: str) -> tuple[str, ...]:
    """[FUZZ2] The error flags op `name` may set (none for a name outside the table, such as
    the `real` and `imag` parts of a complex value)."""
    try:
        return by_name(name).flags
    except KeyError:
        return ()


def may_set_flags(fn: str, operands: Sequence[np.dtype], result: np.dtype) -> bool:
    """Whether op `fn` (an op of the table, or "cast") on operands of these dtypes may set an
    error flag: a float cast to an integer type, an op with flags on integer operands (//, % by
    zero, ** of a negative exponent). One rule for Graph ops (stax.lower) and Expr calls."""
    if fn == "cast":
        return operands[0].kind == "f" and result.kind in "iu"
    return bool(flags_of(fn)) and any(d.kind in "biu" for d in operands)


def by_ufunc(ufunc: object) -> Elementwise | None:
    """The op dispatched for `ufunc`, or None."""
    try:
        return _BY_UFUNC.get(ufunc)  # type: ignore[arg-type]
    except TypeError:  # unhashable
        return None


@dataclass(frozen=True)
class Part:
    """A part of a complex number [E16]: `np.real` / `np.imag` are NumPy functions, not
    ufuncs; the result has the real dtype of the same precision. `cpp`: over {a0}."""

    name: str
    numpy: object
    cpp: str


PARTS: tuple[Part, ...] = (Part("real", np.real, "{a0}.re"), Part("imag", np.imag, "{a0}.im"))


def part(name: str) -> Part | None:
    return next((p for p in PARTS if p.name == name), None)


def ufunc_names() -> tuple[str, ...]:
    """Every `np.` name that dispatches to the table (canonical names and aliases)."""
    return tuple(n for op in ELEMENTWISE for n in (op.name, *op.aliases))


# ---- reductions and scans -----------------------------------------------------------------------

@dataclass(frozen=True)
class Reduction:
    """A reduction: `combine` (an elementwise op of the table) folds values, starting from
    `identity` (None: an empty reduction is an error, as in NumPy). `nan`: `propagate` (any NaN
    gives NaN), `first` (argmax/argmin: the first NaN's position) or `none` (not a float rule).
    `ties`: which position argmax/argmin return among equal values. `ufunc`: the NumPy ufunc
    whose `.reduce` this is (None for argmax/argmin)."""

    name: str
    numpy: object  # np.sum, np.argmax, ...
    ufunc: np.ufunc | None
    combine: str
    identity: bool | int | None
    nan: Literal["propagate", "first", "none"]
    ties: Literal["first", "none"] = "none"
    simd: str | None = None  # the OpenMP `reduction(op:...)` operator, None if none exists
    domain: Domain = Domain(-3.0, 3.0, rtol=(1e-5, 1e-12))


REDUCTIONS: tuple[Reduction, ...] = (
    Reduction("sum", np.sum, np.add, "add", 0, "propagate", simd="+"),
    Reduction("prod", np.prod, np.multiply, "multiply", 1, "propagate", simd="*",
              domain=Domain(0.5, 1.5, rtol=(1e-5, 1e-12))),
    Reduction("max", np.max, np.maximum, "maximum", None, "propagate", simd="max"),
    Reduction("min", np.min, np.minimum, "minimum", None, "propagate", simd="min"),
    Reduction("any", np.any, np.logical_or, "logical_or", False, "none", simd="|"),
    Reduction("all", np.all, np.logical_and, "logical_and", True, "none", simd="&"),
    Reduction("argmax", np.argmax, None, "greater", None, "first", ties="first"),
    Reduction("argmin", np.argmin, None, "less", None, "first", ties="first"),
)


@dataclass(frozen=True)
class Scan:
    """An inclusive scan along one axis: `combine` from `identity`, in order. NumPy's
    accumulate starts from the first element, so the identity must give back every value
    exactly: for `add` it is -0.0 (-0.0 + x is x for every x; 0.0 + -0.0 is 0.0, and NumPy's
    cumsum of a leading -0.0 is -0.0), which is 0 for integers [FIX16]."""

    name: str
    numpy: object
    ufunc: np.ufunc
    combine: str
    identity: float
    domain: Domain = Domain(0.5, 1.5, rtol=(1e-5, 1e-12))


SCANS: tuple[Scan, ...] = (
    Scan("cumsum", np.cumsum, np.add, "add", -0.0),
    Scan("cumprod", np.cumprod, np.multiply, "multiply", 1),
)


def scan(name: str) -> Scan:
    return next(s for s in SCANS if s.name == name)
