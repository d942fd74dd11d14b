"""Tracing: the traced array type and the builder that records a Graph.

A `Tracer` stands for an array while a user function runs under `stax.jit`. Every NumPy
operation on it reaches `stax.frontend.numpy_api` (through operators, methods,
`__array_ufunc__` and `__array_function__`, NEP 13/18) and appends an op to its builder.
Mutation is functionalized: `x[i] = y` rebinds the tracer to a new value (seed 000 §7.1).
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from stax.graph import SUPPORTED_DTYPES, Graph, Op, Value
from stax.ir.program import contiguous_strides
from stax.ir.sym import ShapeEnv, is_sym
from stax.ops import ELEMENTWISE, FLAGS
from stax.runtime.externs import under_errstate


def check_dtype(dtype: np.dtype, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    # complex64/128 are supported; clongdouble is not [E16]. An argument of a kind kernels never
    # compute in (strings, dates, records, objects) is a TypeError under strict=True (without
    # it the call runs in NumPy: `breaks.is_plain`); such a value made inside the function
    # (`x.astype(str)`, `d + np.timedelta64(1, "D")`) is a graph break [HUNT10]
    if dtype.kind in "OSUVMm" and what == "an argument":
        raise TypeError(f"stax.jit: {what} has dtype {dtype}, which is not supported "
                        f"(supported: {', '.join(d.name for d in SUPPORTED_DTYPES)})")
    if dtype not in SUPPORTED_DTYPES:
        raise NotImplementedError(
            f"stax.jit: dtype {dtype} of {what} is not supported "
            f"(supported: {', '.join(d.name for d in SUPPORTED_DTYPES)})")
    return dtype


class GraphBreak(BaseException):  # noqa: N818 - a control-flow signal, not an error (A2)
    """Tracing reached something it cannot compile; `error` is the message for strict mode.
    `stax.frontend.breaks` runs such functions with graph breaks. A BaseException, so that
    the user's `except Exception:` cannot swallow it and trace on with a made-up value."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


# [LOOPFALL] A trace stops at this many ops (in segmented mode: ops since the last break) and the
# function runs in NumPy: a Python loop unrolled per iteration (`for pos in np.ndindex(...)`, a
# `range` loop whose body breaks) would take minutes to compile (7,000 ops of indexing and
# stores: ~20 s of g++). Above the 16,668 ops of the 5,000-step chain that
# tests/test_reliability_scale.py compiles.
MAX_TRACE_OPS = 25_000


# [ERR] The np.errstate categories an op may report at run time through its kernel's flags: an
# elementwise op's flags in the op table, a float -> int cast's invalid value; a compiled loop
# (an extern running its body's kernels) any of them. (A NumPy routine's extern call runs under
# the modes in effect where it was traced: `Builder.add`.)
_FLAG_CATEGORY = {f.name: f.errstate for f in FLAGS if f.errstate}
_REPORTS = {op.name: tuple(sorted({_FLAG_CATEGORY[f] for f in op.flags if f in _FLAG_CATEGORY}))
            for op in ELEMENTWISE}
_EVERY_CATEGORY = ("divide", "invalid", "over", "under")
LOOP_EXTERN = "stax.loop#"  # the key prefix of a compiled loop's extern (stax.loops.runner)


def reported(kind: str, inputs: tuple[Value, ...], dtype: np.dtype,
             attrs: dict[str, Any]) -> tuple[str, ...]:
    """[ERR] The np.errstate categories an op `kind` on `inputs` may report by its flags."""
    if kind == "elementwise":
        return _REPORTS.get(attrs["fn"], ())
    if kind == "cast":
        return ("invalid",) if inputs[0].dtype.kind in "fc" and dtype.kind in "iub" else ()
    loop = kind == "extern" and attrs["fn"].startswith(LOOP_EXTERN)
    return _EVERY_CATEGORY if loop else ()


def floating(kind: str, inputs: tuple[Value, ...], dtype: np.dtype) -> bool:
    """[ERR] Whether op `kind` computes in floating point: NumPy may report an IEEE exception of
    it (overflow, 0/0, ...), which compiled kernels compute without reporting."""
    return kind in ("elementwise", "reduce", "scan") and (
        dtype.kind in "fc" or any(v.dtype.kind in "fc" for v in inputs))


class TraceTooLarge(GraphBreak):
    """The trace reached MAX_TRACE_OPS ops: a break no loop fallback (unrolling) can help."""


@dataclass
class Builder:
    """Records ops while a function is traced. Used only during one trace."""

    ops: list[Op] = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    next_id: int = 0
    # Scalar arguments whose value the function used as a Python value (an axis, a shape, an
    # `if`): the compiled code is specialized on their values.
    static: set[int] = field(default_factory=set)
    # [DYN16] the trace's symbols (a generic trace's), which data-dependent sizes join; None
    # until one is needed in a trace specialized on its shapes
    env: ShapeEnv | None = None
    # [DYN16] data-dependent results by (routine key, inputs): the same call on values
    # computed alike is one value with one size (`np.unique(x).size + np.unique(x).sum()`)
    sized: dict[tuple[str, tuple[Value, ...]], Value] = field(default_factory=dict)
    # [HUNT3] the element strides of the arguments not C-ordered (by input value id), NumPy's
    # strides of the values traced so far (by value id; `numpy_strides`)
    layouts: dict[int, tuple[int, ...]] = field(default_factory=dict)
    strides: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # [LOOPFALL] `add` stops the trace (`too_large`) when `ops` reach this many (MAX_TRACE_OPS;
    # a SegmentBuilder moves it on at each break: ops a segment computed are not compiled again)
    op_limit: int = field(default_factory=lambda: MAX_TRACE_OPS)
    # the traced ops by the id of the value each computes, with its position in `ops`, for
    # ops[:indexed] (see `producer`)
    producers: dict[int, tuple[int, Op]] = field(default_factory=dict)
    indexed: int = 0
    # [ERR] np.errstate when the trace began, and per category the mode in effect where ops
    # that report it were traced (None: the same as when it began, i.e. the caller's). A mode
    # set inside the function (`with np.errstate(divide="ignore"): q = a // b`) is the
    # program's for that category: every call runs under it (`errstate_modes`).
    errstate_base: dict[str, str] = field(default_factory=np.geterr)
    errstate: dict[str, str | None] = field(default_factory=dict)
    errcall: Any = None  # np.geterrcall() where a mode set inside is "call" or "log"
    # [SPMASK] how each masked selection `x[mask]` was compiled, and why (for stax.explain)
    masked: list[str] = field(default_factory=list)

    def data_size(self, bound: int, what: str) -> int:
        """[DYN16] The length of a result computed at run time (`x[mask]`, `np.unique`):
        a data-dependent symbol the wrapper binds from the array `what` returns. `bound`
        (its largest value, or a stand-in) is its hint."""
        if self.env is None:
            self.env = ShapeEnv()
        return self.env.data_symbol(bound, what)  # type: ignore[return-value]

    def new_value(self, shape: tuple[int, ...], dtype: np.dtype) -> Value:
        value = Value(self.next_id, tuple(s if is_sym(s) else int(s) for s in shape),
                      np.dtype(dtype))
        self.next_id += 1
        return value

    def add(self, kind: str, inputs: tuple[Value, ...], shape: tuple[int, ...],
            dtype: np.dtype, /, **attrs: Any) -> Value:
        if len(self.ops) >= self.op_limit:
            self.too_large()
        dtype = np.dtype(dtype)
        self.note_errstate(kind, inputs, dtype, attrs)
        out = self.new_value(shape, dtype)
        self.ops.append(Op(kind, inputs, out, tuple(sorted(attrs.items()))))
        return out

    def note_errstate(self, kind: str, inputs: tuple[Value, ...], dtype: np.dtype,
                      attrs: dict[str, Any]) -> None:
        """[ERR] The np.errstate an op is traced under (read once per op that depends on it):
        the modes of the categories its flags report are recorded (a category set inside the
        function around some of its ops that report it and not others is a break: one
        program-wide mode per category is what a call can apply); a floating-point op where
        the function set a mode that acts on IEEE errors (raise, warn, ...: not "ignore",
        what compiled kernels do) is a break, NumPy runs it; NumPy's routine (an extern)
        runs under the modes set around its call."""
        categories = reported(kind, inputs, dtype, attrs)
        float_op = floating(kind, inputs, dtype)
        extern = kind == "extern" and not attrs["fn"].startswith(LOOP_EXTERN)
        if not (categories or float_op or extern):
            return
        now = np.geterr()
        for c in categories:
            mode = None if now[c] == self.errstate_base[c] else now[c]
            if self.errstate.setdefault(c, mode) != mode:
                raise GraphBreak(NotImplementedError(
                    f"stax.jit: np.errstate({c}=...) set inside the function covers some of "
                    f"its operations that report {c!r} errors and not others"))
            if mode in ("call", "log"):
                self.errcall = np.geterrcall()
        changed: dict[str, Any] = {c: m for c, m in now.items() if m != self.errstate_base[c]}
        acting = [c for c in _EVERY_CATEGORY if changed.get(c, "ignore") != "ignore"]
        if float_op and acting:
            raise GraphBreak(NotImplementedError(
                f"stax.jit: np.errstate({acting[0]}={now[acting[0]]!r}) set inside the function "
                "around floating-point operations (compiled kernels do not report "
                "floating-point errors)"))
        if extern and changed:
            attrs["fn"] = under_errstate(attrs["fn"], changed | {"call": np.geterrcall()})

    def errstate_modes(self) -> tuple[tuple[str, Any], ...]:
        """[ERR] The keyword arguments of the np.errstate every call of the program runs
        under: the modes set inside the function (empty: the caller's errstate applies)."""
        modes = {c: m for c, m in sorted(self.errstate.items()) if m is not None}
        if self.errcall is not None:
            modes["call"] = self.errcall
        return tuple(modes.items())

    def producer(self, vid: int) -> tuple[int, Op] | None:
        """The op computing value `vid` and its position in `ops` (None: no traced op does),
        from an index kept across lookups and extended by the ops traced since (rebuilt only
        when ops were dropped below its end: a loop's trial trace), so a lookup costs the ops
        traced since the last one, not every op traced so far: a break per loop iteration, or
        a loop's affine index forms (`stax.loops.affine`), were quadratic in the trace's length
        (npbench's scattering_self_energies traced for minutes)."""
        hit = self.producers.get(vid)
        if hit is not None and hit[0] < len(self.ops) and self.ops[hit[0]] is hit[1]:
            return hit
        start = self.indexed
        if start > len(self.ops) or start and self.producers.get(
                self.ops[start - 1].out.id, (0, None))[1] is not self.ops[start - 1]:
            self.producers, start = {}, 0
        self.producers.update((op.out.id, (k, op)) for k, op in enumerate(self.ops[start:], start))
        self.indexed = len(self.ops)
        return self.producers.get(vid)

    def too_large(self) -> None:
        """The trace reached `op_limit` ops (MAX_TRACE_OPS, see there)."""
        from stax.frontend.breaks import _location

        raise TraceTooLarge(NotImplementedError(
            f"stax.jit: the traced program reached {self.op_limit} ops at {_location()[0]} (a "
            "Python loop unrolled per iteration: compiling it would take minutes)"))

    def input(self, shape: tuple[int, ...], dtype: np.dtype) -> Value:
        value = self.add("input", (), shape, dtype, index=len(self.inputs))
        self.inputs.append(value)
        return value

    def graph(self, outputs: tuple[Value, ...]) -> Graph:
        return Graph(tuple(self.inputs), tuple(self.ops), outputs)

    def numpy_strides(self, value: Value) -> tuple[int, ...]:
        """[HUNT3] The strides NumPy's array `value` has (an array made in the function: a
        ufunc's result of F-ordered operands is F-ordered, so its reshape copies), by
        `stax.lower.op_strides` over the ops it is computed from (C order where not known: a
        value from outside this trace, as a loop body's)."""
        from stax.lower import op_strides

        # [NPB4] only the strides `op_strides` reads, computed when it asks (a KeyError) back
        # from `value` (was: of every op traced since the last call; a reshape in a loop with a
        # break per iteration computed nearly every op's, npbench's channel_flow)
        stack = [value.id]
        while stack:
            hit = None if stack[-1] in self.strides else self.producer(stack[-1])
            if hit is None:  # known, or from outside this trace
                stack.pop()
                continue
            op = hit[1]
            # an op with an operand from outside this trace: its recorded layout or C order
            if op.kind == "input" or not all(v.id in self.strides or self.producer(v.id)
                                             for v in op.inputs):
                self.strides[op.out.id] = self.layouts.get(op.out.id,
                                                           contiguous_strides(op.out.shape))
                stack.pop()
                continue
            try:
                self.strides[op.out.id] = op_strides(op, self.strides)
            except KeyError as e:  # an operand's strides, not computed yet
                if e.args[0] not in {v.id for v in op.inputs}:
                    raise
                stack.append(e.args[0])
                continue
            stack.pop()
        return self.strides.get(value.id, contiguous_strides(value.shape))

    # Graph breaks (A2): a plain trace stops; `breaks.SegmentBuilder` runs them in NumPy.
    def concretize(self, tracer: Tracer, error: Exception) -> np.ndarray:
        raise GraphBreak(error)

    def eager(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              error: Exception, where: str | None = None) -> Any:
        raise GraphBreak(error)

    def whole_function(self, what: str) -> NoReturn:
        """[HUNT9] `what` cannot be traced and nothing of it can run in NumPy alone: a plain
        trace stops; `breaks.SegmentBuilder` runs the whole function in NumPy."""
        raise GraphBreak(NotImplementedError(f"stax.jit: {what} is not supported"))

    def position(self, k: int) -> int | Tracer:
        """The index a Python loop over a traced array uses at its `k`-th iteration."""
        return k

    def handed(self, array: np.ndarray) -> None:
        """A concrete value went to Python as `array` (`__array__`: a copy, where NumPy's would
        be the array itself, so writes into it must not be lost)."""

    def created(self, tracer: Tracer) -> None:
        """Every Tracer of this trace (a SegmentBuilder keeps the live ones)."""


_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


class Tracer:
    """The array type a jitted function sees while it is traced."""

    __array_priority__ = 1000

    def __init__(self, builder: Builder, value: Value, weak: bool = False,
                 parent: Tracer | None = None, view: tuple[str, dict[str, Any]] | None = None,
                 concrete: tuple[frozenset[int], Any] | None = None) -> None:
        self.builder = builder
        self.value = value
        # A weak tracer stands for a Python scalar argument (NEP 50: it adopts the array's dtype).
        self.weak = weak
        # A view remembers the array it views (`parent`), how (`view_op`: the op and its
        # attributes, so an assignment into it can be written back; not `view`, which is an
        # ndarray method users call), its root `base`, and the base's version when it was
        # taken: a view left stale by a later assignment is caught.
        self.parent = parent
        self.view_op = view
        self.base = None if parent is None else parent if parent.base is None else parent.base
        self.base_version = self.base.version if self.base is not None else 0
        self.version = 0
        # [B16] An argument's element strides as the caller laid it out (None: C order); what
        # NumPy's view-or-copy decisions (ravel, reshape, `.shape =`) depend on.
        self.layout: tuple[int, ...] | None = None
        # For a scalar argument (or arithmetic on such): the argument positions it comes from
        # and its value, for use as a Python value.
        self.concrete = concrete
        self.born: Value | None = value  # [HUNT3] its first value: NumPy's layout follows it
        # [FUZZ] NumPy holds a scalar here (a 0-d reduction or ufunc result, `x[i, j]`): it is
        # immutable, so `s += 1` rebinds `s` and leaves every other name for it unchanged.
        self.scalar = weak
        # A 0-d value NumPy returns as a 0-d ndarray (a 0-d argument, np.copy, np.where,
        # x[...]); any other 0-d result is returned as a NumPy scalar, as most of NumPy's are.
        self.array0 = False
        self.argument_class: type | None = None  # [HUNT7] a scalar argument's (`__class__`)
        builder.created(self)

    @property
    def is_array(self) -> bool:
        """Is this value returned as an ndarray (not a NumPy scalar)? A 0-d view of an array
        is one too ([HUNT7] `np.squeeze` of one element, `x[0, ...]`)."""
        return self.ndim > 0 or self.array0 or self.parent is not None and not self.scalar

    # ---- array attributes -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        self.check_fresh()
        return self.value.shape

    @shape.setter
    def shape(self, new: Any) -> None:
        """`a.shape = (m, n)`: NumPy reshapes `a` in place (its views keep their shape)."""
        if self.base is not None:
            raise NotImplementedError("stax.jit: setting .shape of a view is not supported "
                                      "(use .reshape)")
        from stax.frontend.numpy_api import _reshaped_strides, _strides, reshape

        reshaped = reshape(self, new)
        layout = _reshaped_strides(self.value.shape, _strides(self), reshaped.value.shape)
        if layout is None:  # [B16] NumPy's refusal: the elements are not laid out that way
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.")
        self.value, self.layout = reshaped.value, layout

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    @property
    def ndim(self) -> int:
        return self.value.ndim

    @property
    def size(self) -> int:
        return self.value.size

    def __len__(self) -> int:
        if not self.value.shape:
            raise TypeError("len() of unsized object")
        return self.value.shape[0]

    def __repr__(self) -> str:
        return f"Tracer({self.value}: {self.value.typestr()})"

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: PLE0307 - isinstance reads it
        """[HUNT7] The class NumPy's value has, for the user's code: `isinstance(x, np.ndarray)`
        and `isinstance(n, int)` (a Python scalar argument) were False while tracing, and the
        function took its other branch. Stax's and NumPy's own code see Tracer (they tell
        traced values from arrays by it); `type(x)` stays Tracer."""
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__", "").partition(".")[0] in ("stax", "numpy") or \
                caller.f_code.co_filename.startswith("<stax"):
            return Tracer
        return self.numpy_class()

    def numpy_class(self) -> type:
        """The class of NumPy's value: a Python or NumPy scalar's, or np.ndarray."""
        if self.argument_class is not None:
            return self.argument_class
        if self.weak:
            return _PYTHON_TYPES[self.dtype.kind]
        return self.dtype.type if self.scalar and self.ndim == 0 else np.ndarray

    def check_fresh(self) -> None:
        """A view of an array assigned to since the view was taken shows the new values, as
        in NumPy: it is derived again from its (refreshed) parent."""
        if self.base is None or self.base.version == self.base_version:
            return
        parent = self.parent
        assert parent is not None and self.view_op is not None
        parent.check_fresh()
        kind, attrs = self.view_op
        if kind == "derived":  # [HUNT3] a view NumPy returns and Stax computes: again
            self.value = attrs["derive"](parent).value
        else:
            self.value = self.builder.add(kind, (parent.value,), self.value.shape,
                                          self.value.dtype, **attrs)
        self.base_version = self.base.version

    # ---- things a traced value cannot do ----------------------------------------------------
    def python_value(self) -> Any:
        """The value of a scalar argument used as a Python value (an axis, a shape, a loop
        bound, an `if`): the trace is specialized on it, and calls with another value
        compile again."""
        if self.concrete is None:
            array = self.builder.concretize(self, TypeError(
                "stax.jit: the value of a traced array is not known while tracing (Python `if`, "
                "int(), float() or an index need a concrete value); use np.where(...) for "
                "element-wise choices, or pass the value as a Python scalar argument"))
            return array[()] if array.ndim == 0 else array
        positions, value = self.concrete
        self.builder.static |= positions
        return value

    def __bool__(self) -> bool:
        return bool(self.python_value())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.concrete is not None:  # [H16] a scalar argument (`np.uint32(k)`): its value,
            return np.array(self.python_value(), dtype=dtype)  # the trace specialized on it
        array = self.builder.concretize(self, TypeError(
            "stax.jit: a traced array cannot be converted to a NumPy array inside a jitted "
            "function (this happens with np.asarray, float(), or unsupported functions)"))
        array = np.array(array, dtype=dtype, copy=True)
        self.builder.handed(array)
        return array

    def __float__(self) -> float:
        return float(self.python_value())

    def __int__(self) -> int:
        return int(self.python_value())

    def __index__(self) -> int:
        return operator.index(self.python_value())

    def __round__(self, ndigits: int | None = None) -> Any:
        """[H16] `round(x)` of a 0-d value (a NumPy scalar there): a Python int (its value is
        needed: a graph break), or with `ndigits` np.round; arrays have no __round__."""
        from stax.frontend.numpy_api import round as round_

        if self.ndim:
            raise TypeError("type numpy.ndarray doesn't define __round__ method")
        return round(self.python_value()) if ndigits is None else round_(self, ndigits)

    def __iter__(self):  # type: ignore[no-untyped-def]
        """`for z in x`: x[0], x[1], ...; over a 1-d array (NumPy scalars, not views that
        writes would go through) the builder chooses the index (`SegmentBuilder.position`)."""
        if self.ndim != 1:
            return (self[i] for i in range(len(self)))
        return (self._element(self.builder.position(i)) for i in range(len(self)))

    def _element(self, index: int | Tracer) -> Tracer:
        element = self[index]
        element.scalar, element.array0 = True, False  # NumPy's scalar, as x[i] is
        return element

    def __hash__(self) -> int:
        """[HUNT9] A traced scalar as a dict key or set element (`d[v]` for v in x.tolist()):
        a scalar argument's value (the trace is specialized on it, as for an `if`; a returned
        dict holds the value, `api._flatten`); another's
        is known only when it runs, and a dict keyed by it could be neither looked up nor
        returned, so the whole function runs in NumPy (it raised TypeError: unhashable type
        'Tracer'). An array is unhashable, as NumPy's."""
        if self.is_array:
            raise TypeError("unhashable type: 'numpy.ndarray'")
        if self.concrete is not None:
            return hash(self.python_value())
        self.builder.whole_function("a traced value as a dict key or set element")


def _matmul_operands(a: Any, b: Any) -> tuple[Any, Any]:
    """`a @ b` with a NumPy scalar on either side and no array on the other is a TypeError, as
    the scalar has no `@` (np.matmul of 0-d arrays raises ValueError)."""
    def array(v: Any) -> bool:
        return v.is_array if isinstance(v, Tracer) else isinstance(v, np.ndarray)
    if not (array(a) or array(b)):
        raise TypeError(f"unsupported operand type(s) for @: '{_kind_name(a)}' and "
                        f"'{_kind_name(b)}'")
    return a, b


def _kind_name(v: Any) -> str:
    return f"numpy.{v.dtype.name}" if isinstance(v, Tracer) else type(v).__name__


def install_methods() -> None:
    """Attach operators and ndarray methods; they all route to `numpy_api`."""
    from stax.frontend import numpy_api as api

    binary = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
        "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
        "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
        "rshift": "right_shift", "matmul": None,
    }
    for py, fn in binary.items():
        forward = api.matmul if fn is None else _ufunc_method(fn)
        setattr(Tracer, f"__{py}__", lambda a, b, f=forward: f(a, b))
        setattr(Tracer, f"__r{py}__", lambda a, b, f=forward: f(b, a))
        setattr(Tracer, f"__i{py}__", lambda a, b, f=forward, n=fn or "matmul":
                api.inplace(a, f(a, b), n))
    Tracer.__matmul__ = lambda a, b: api.matmul(*_matmul_operands(a, b))  # type: ignore
    Tracer.__rmatmul__ = lambda a, b: api.matmul(*_matmul_operands(b, a))  # type: ignore
    Tracer.__pow__ = lambda a, b: api.power_operator(a, b)  # type: ignore[method-assign]
    Tracer.__divmod__ = api.divmod_  # type: ignore[attr-defined]
    Tracer.__rdivmod__ = lambda a, b: api.divmod_(b, a)  # type: ignore[attr-defined]
    for py, fn in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                   "eq": "equal", "ne": "not_equal"}.items():
        setattr(Tracer, f"__{py}__", _ufunc_method(fn))
    for py, fn in {"neg": "negative", "pos": "positive", "abs": "absolute",
                   "invert": "invert"}.items():
        setattr(Tracer, f"__{py}__", _ufunc_method(fn))
    Tracer.__getitem__ = api.getitem  # type: ignore[method-assign]
    Tracer.__setitem__ = api.setitem  # type: ignore[method-assign]
    Tracer.__array_ufunc__ = api.array_ufunc  # type: ignore[attr-defined]
    Tracer.__array_function__ = api.array_function  # type: ignore[attr-defined]
    for name in api.METHODS:
        method = getattr(api, name)
        setattr(Tracer, name, _kind_kept(method) if name in KIND_KEPT else method)
    Tracer.transpose = _kind_kept(api.transpose_method)  # type: ignore[attr-defined]
    Tracer.T = property(_kind_kept(api.transpose))  # type: ignore[attr-defined]
    Tracer.mT = property(lambda a: api.swapaxes(a, -1, -2))  # type: ignore[attr-defined]
    from stax.frontend import breaks, functions  # more functions; graph breaks (A2)

    functions.register(Tracer)
    breaks.install(Tracer)


# Methods whose 0-d result is a NumPy scalar on a scalar, else a 0-d array (`s.copy()`,
# `s.astype(np.float32)`, `x.T`), as NumPy's
KIND_KEPT = frozenset({"reshape", "squeeze", "astype", "copy"})


def _kind_kept(method: Callable[..., Any]) -> Callable[..., Any]:
    def kept(self: Tracer, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        if isinstance(result, Tracer) and result.ndim == 0 and result is not self:
            result.scalar, result.array0 = not self.is_array, self.is_array
        return result

    return functools.wraps(method)(kept)


def _ufunc_method(name: str) -> Callable[..., Tracer]:
    from stax.frontend import numpy_api as api

    return lambda *args: api.apply_ufunc(name, *args)
