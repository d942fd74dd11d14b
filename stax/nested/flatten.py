"""Flattening by lifting: nested operations applied to all iterations of a map nest at once.

`sn.jit` runs the user's function on traced values instead of data. Every `sn.map` opens a new
*iteration space* (`Space`): the flat set of all iterations of that nest level, grouped into
segments by the iterations of the enclosing level (`Layout`: bounds, or a uniform width for
regular nests, which therefore stay regular: no bounds, no flags). A traced value is either a
`Scalar` (one value per iteration, held as a scalar expression over the flat index) or a `Row`
(one array per iteration: a child space plus the value of its elements), so a map body is
traced *once* for all iterations, and each construct is rewritten by its flattening rule
(`note` records the rule applied, by name):

- elementwise NumPy code composes into one expression (map fusion, `map f . map g`); a value
  from an enclosing level is replicated *symbolically* by substituting its index with the
  segment index (a gather `x[seg]`, never a copy);
- expressions are materialized only where a segmented operation needs an array: they are
  distributed there (fission), each segmented kernel evaluating its element expression inline
  (so `iota` and arithmetic fuse into `segreduce`/`segscan`);
- map of reduce/scan -> segreduce/segscan; map of iota/range/replicate/slice/concat -> a new
  segmented space whose element expression computes the values from the segment index and the
  in-segment index; map of index -> gather; map of scatter -> segmented scatter; cond ->
  branch packing (each branch runs on the iterations that take it); loop -> interchange when
  the trip count is uniform, an active-set loop otherwise.

The driver is also the inspector: sizes are known when each kernel launches, and kernels
take them as parameters (compiled once per structure). It runs on the first call with a
signature, recording what it does on data (`stax.nested.tape`: kernels, allocations, host
steps, and every decision it took from the data as a guard); later calls replay that.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from stax.nested import tape
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
    cast_to,
    const,
    substitute,
    ufunc_call,
    uses,
    where,
)
from stax.nested.kernels import (
    alloc,
    defer_segreduce,
    empty_layout,
    flush,
    native,
    pending_reads,
    run_map,
    run_segreduce,
    run_segscan,
    size_of,
)
from stax.nested.ragged import Ragged
from stax.nested.regular import map_ as regular_map
from stax.nested.regular import segreduce as regular_segreduce
from stax.nested.regular import segscan as regular_segscan
from stax.nested.spec import Layout, Store
from stax.nested.tape import effect, guard, record

tape.register_data_types(Layout, Ragged)


@dataclass
class Trace:
    """The state of one traced call: rules applied and the spaces created."""
    rules: list[tuple[str, str]] = field(default_factory=list)
    counter: Iterator[int] = field(default_factory=itertools.count)
    layouts: dict[int, tuple[np.ndarray, Layout]] = field(default_factory=dict)
    arrays: dict[int, tuple[np.ndarray, str]] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)  # deferred bounds checks, in order
    passed: set[int] = field(default_factory=set)  # the checks known to hold (by seq)

    def known_layout(self, lengths: np.ndarray) -> Layout | None:
        """The layout of an existing space whose lengths are this array (so its values are
        valid lengths: >= 0, as checked when that space was made)."""
        known = self.layouts.get(id(lengths))
        return known[1] if known is not None and known[0] is lengths else None

    def array_name(self, array: np.ndarray) -> str:
        """A stable name for an array in explain output (b0, b1, ... by first mention)."""
        entry = self.arrays.setdefault(id(array), (array, f"b{len(self.arrays)}"))
        return entry[1]


_TRACE: ContextVar[Trace | None] = ContextVar("stax_nested_trace", default=None)
_SPACE: ContextVar[Space | None] = ContextVar("stax_nested_space", default=None)


def tracing() -> bool:
    return _TRACE.get() is not None


def note(rule: str, detail: str) -> None:
    trace = _TRACE.get()
    if trace is not None:
        trace.rules.append((rule, detail))


def current() -> Space:
    space = _SPACE.get()
    assert space is not None, "not inside sn.jit"
    return space


@contextmanager
def in_space(space: Space) -> Iterator[None]:
    token = _SPACE.set(space)
    try:
        yield
    finally:
        _SPACE.reset(token)


def _i64(v: int) -> Const:
    return Const(INT64, int(v))


def _add(a: Expr, b: Expr) -> Expr:
    return ufunc_call(np.add, (a, b))


def _sub(a: Expr, b: Expr) -> Expr:
    return ufunc_call(np.subtract, (a, b))


def _mul(a: Expr, b: Expr) -> Expr:
    return ufunc_call(np.multiply, (a, b))


class Space:
    """An iteration space: `size` iterations, segmented by the iterations of `parent`."""

    def __init__(self, parent: Space | None, layout: Layout | None,
                 lengths: np.ndarray | None = None) -> None:
        trace = _TRACE.get()
        self.name = f"S{next(trace.counter) if trace else 0}"
        self.parent = parent
        self.layout = layout
        self.lengths = lengths
        self.depth = 0 if parent is None else parent.depth + 1
        self.guarded = False  # the iterations of one branch of a cond (branch packing)
        self._segment_ids: Buf | None = None

    @staticmethod
    def child(parent: Space, lengths: np.ndarray | int) -> Space:
        """A child space whose segment j has lengths[j] iterations (uniform for an int, or
        under the root, which has one iteration)."""
        if isinstance(lengths, np.ndarray) and parent.parent is None:
            lengths = guard(_first, lengths)  # a width in the kernels: checked on replay
        if not isinstance(lengths, np.ndarray):
            return Space(parent, record(_uniform_under, parent.layout, int(lengths)))
        from stax.nested.primitives import bounds_of
        lengths = record(_int64, lengths)
        trace = _TRACE.get()
        known = trace.known_layout(lengths) if trace else None
        if known is not None:
            return Space(parent, known, lengths)  # segments like an existing space's
        layout = record(Layout.from_bounds, record(bounds_of, lengths))
        space = Space(parent, layout, lengths)
        space.remember()
        return space

    def remember(self) -> None:
        """Let later spaces with the same lengths array reuse this layout (e.g. iota of the
        lengths of rows: no new bounds, and `unify` sees identical layouts)."""
        trace = _TRACE.get()
        if trace is not None and self.lengths is not None:
            trace.layouts[id(self.lengths)] = (self.lengths, self.layout)

    @property
    def size(self) -> int:
        return 1 if self.layout is None else self.layout.n

    @property
    def width(self) -> int | None:
        return None if self.layout is None else self.layout.width

    def describe(self) -> str:
        if self.parent is None:
            return f"{self.name} (top level)"
        kind = (f"regular, width {self.width}" if self.width is not None
                else "irregular segments")
        return (f"{self.name}: {self.size} iterations in {self.layout.k} "
                f"{kind} of {self.parent.name}")

    def segment(self) -> Expr:
        """The parent iteration of element Idx of this space."""
        if self.parent is not None and self.parent.parent is None:
            return _i64(0)  # the top level has one iteration
        return Seg()

    def start(self) -> Expr:
        """At the parent: the first element of the segment Idx."""
        if self.parent is not None and self.parent.parent is None:
            return _i64(0)
        if self.width is not None:
            return _mul(Idx(), _i64(self.width))
        return Load(INT64, Buf(self.layout.bounds), Idx())

    def length(self) -> Expr:
        """At the parent: the number of elements in segment Idx (read from the lengths for
        the top-level arrays too: their length is a run-time value of the kernels)."""
        if self.lengths is not None:
            return Load(INT64, Buf(self.lengths), Idx())
        return _i64(self.width)

    def inner(self) -> Expr:
        """The position of element Idx inside its segment."""
        if self.parent is not None and self.parent.parent is None:
            return Idx()
        if self.width is not None:
            return _sub(Idx(), _mul(Seg(), _i64(self.width)))
        return _sub(Idx(), Load(INT64, Buf(self.layout.bounds), Seg()))

    def segment_ids(self) -> Buf:
        """The parent iteration of every element, materialized (for deeper gathers)."""
        if self._segment_ids is None:
            out = alloc(self.layout, "n", INT64)
            run_map(self.size, self.layout, [Store(out, self.segment())],
                    f"segment ids of {self.name}")
            self._segment_ids = Buf(out)
        return self._segment_ids

    def chain_from(self, ancestor: Space) -> list[Space]:
        """The spaces below `ancestor` down to self (empty when self is ancestor)."""
        chain: list[Space] = []
        s: Space | None = self
        while s is not None and s is not ancestor:
            chain.append(s)
            s = s.parent
        if s is None:
            raise ValueError("stax.nested: a value from one map or cond branch is used "
                             "outside it")
        return chain[::-1]


def _first(a: np.ndarray) -> int:
    return int(a[0])


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _uniform_under(parent: Layout | None, width: int) -> Layout:
    """The layout of `width` elements per iteration of a space laid out by `parent`."""
    return Layout.uniform(size_of(parent), width)


def _top_layout(x: np.ndarray | Ragged) -> Layout:
    return Layout.uniform(1, len(x))


def _top_lengths(layout: Layout) -> np.ndarray:
    return np.array([layout.n], dtype=np.int64)


def static_width(layout: Layout) -> int:
    """A regular layout's width used as a number (a constant of the kernels, or a size the
    program decides by): checked on replay, since the top-level widths are the arguments'
    lengths."""
    return guard(_width, layout)


def _width(layout: Layout) -> int:
    return layout.width


def _lift_expr(e: Expr, parent: Space, child: Space) -> Expr:
    """Replicate an expression of `parent` over the elements of `child` (a gather by
    segment index, substituted symbolically)."""
    mapping: dict[type, Expr] = {Idx: child.segment()}
    if uses(e, Seg) and parent.width is not None:  # the same in every element of a segment
        mapping[Seg] = ufunc_call(np.floor_divide, (child.segment(), _i64(max(parent.width, 1))))
    elif uses(e, Seg):
        mapping[Seg] = Load(INT64, parent.segment_ids(), child.segment())
    return substitute(e, mapping)


def _root(space: Space) -> Space:
    while space.parent is not None:
        space = space.parent
    return space


class Traced:
    """NumPy's ufuncs and functions on traced scalars and rows (NEP 13/18) build expressions."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kw: Any) -> Any:
        if method != "__call__" or kw:
            return NotImplemented
        return apply_ufunc(ufunc, *inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return array_function(func, args, kwargs)


class Scalar(Traced):
    """One value per iteration of `space` (None: an operator argument being traced)."""

    def __init__(self, space: Space | None, expr: Expr) -> None:
        self.space = space
        self.expr = expr

    @property
    def dtype(self) -> np.dtype:
        return self.expr.dtype

    ndim = 0
    shape = ()

    def __bool__(self) -> bool:
        from stax.nested.operator import UntraceableOperator
        raise UntraceableOperator(
            "stax.nested: a traced value has no truth value (use sn.cond, np.where or "
            "np.maximum instead of Python if/and/or/min/max)")

    def __index__(self) -> int:
        raise TypeError("stax.nested: a traced value cannot be used as a Python int")

    def astype(self, dtype: Any) -> Scalar:
        return Scalar(self.space, cast_to(self.expr, np.dtype(dtype)))

    def __repr__(self) -> str:
        return f"Scalar({self.dtype} over {self.space.name if self.space else 'args'})"


def _binary(ufunc: np.ufunc, swap: bool = False) -> Callable[..., Any]:
    def method(self: Any, other: Any) -> Any:
        return apply_ufunc(ufunc, other, self) if swap else apply_ufunc(ufunc, self, other)
    return method


def _unary(ufunc: np.ufunc) -> Callable[..., Any]:
    def method(self: Any) -> Any:
        return apply_ufunc(ufunc, self)
    return method


_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor,
}


class Row(Traced):
    """One array per iteration of `space.parent`: its elements live in `space`."""

    def __init__(self, space: Space, elem: Scalar | Row) -> None:
        self.space = space
        self.elem = elem

    @property
    def parent(self) -> Space:
        assert self.space.parent is not None
        return self.space.parent

    @property
    def dtype(self) -> np.dtype:
        return self.elem.dtype

    @property
    def ndim(self) -> int:
        return 1 + self.elem.ndim

    @property
    def size(self) -> Scalar:
        return Scalar(self.parent, self.space.length())

    @property
    def shape(self) -> tuple[Any, ...]:
        n = static_width(self.space.layout) if self.space.width is not None else self.size
        return (n, *self.elem.shape)

    def __len__(self) -> int:
        if self.space.width is None:
            raise TypeError("stax.nested: the length of an irregular row is a traced value; "
                            "use sn.length(row) or row.size")
        return static_width(self.space.layout)

    def __bool__(self) -> bool:
        raise TypeError("stax.nested: a traced array has no truth value")

    def astype(self, dtype: Any) -> Row:
        return Row(self.space, self.elem.astype(dtype))

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            step = 1 if key.step is None else key.step
            if not isinstance(step, (int, np.integer)) or isinstance(step, bool):
                raise NotImplementedError("stax.nested: a slice step must be a Python int "
                                          "(traced steps are not supported)")
            return slice_row(self, key.start, key.stop, step=int(step))
        if isinstance(key, tuple):
            raise NotImplementedError("stax.nested: index one dimension at a time")
        return index_row(self, key)

    def _accumulating(self, method: str) -> Row:
        """The row in NumPy's accumulator type for `method` (sum of int32 is int64...)."""
        dtype = getattr(np.zeros(1, self.dtype), method)().dtype
        return self if dtype == self.dtype else self.astype(dtype)

    def _over_inner(self, method: str) -> Row | None:
        """For a row of rows (regular inner dimensions): `method` of each inner row, which
        NumPy's reduction over every axis then reduces (the segmented reduction is over
        scalars); None for a row of scalars."""
        if not isinstance(self.elem, Row):
            return None
        note(f"{method} over every axis -> inner rows first", "then one value per row")
        return map_(lambda r: getattr(r, method)(), (self,))

    def sum(self) -> Scalar:
        inner = self._over_inner("sum")
        return inner.sum() if inner is not None else reduce_rows(
            np.add, 0, (self._accumulating("sum"),))[0]

    def prod(self) -> Scalar:
        inner = self._over_inner("prod")
        return inner.prod() if inner is not None else reduce_rows(
            np.multiply, 1, (self._accumulating("prod"),))[0]

    def max(self) -> Scalar:
        inner = self._over_inner("max")
        return inner.max() if inner is not None else _extremum(self, np.maximum)

    def min(self) -> Scalar:
        inner = self._over_inner("min")
        return inner.min() if inner is not None else _extremum(self, np.minimum)

    def mean(self) -> Scalar:
        return apply_ufunc(np.divide, self.sum(), self.size)

    def cumsum(self) -> Row:
        return scan_rows(np.add, 0, (self._accumulating("cumsum"),))[0]

    def cumprod(self) -> Row:
        return scan_rows(np.multiply, 1, (self._accumulating("cumprod"),))[0]

    def __repr__(self) -> str:
        return f"Row({self.dtype}, elements in {self.space.describe()})"


for _name, _uf in _OPERATORS.items():
    for _cls in (Scalar, Row):
        setattr(_cls, f"__{_name}__", _binary(_uf))
        setattr(_cls, f"__r{_name}__", _binary(_uf, swap=True))
for _name, _uf in {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                   "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}.items():
    for _cls in (Scalar, Row):
        setattr(_cls, f"__{_name}__", _binary(_uf))
for _name, _uf in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                   "invert": np.invert}.items():
    for _cls in (Scalar, Row):
        setattr(_cls, f"__{_name}__", _unary(_uf))
Scalar.__hash__ = None  # type: ignore[assignment]
Row.__hash__ = None  # type: ignore[assignment]


def _identity_of_extremum(ufunc: np.ufunc, dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return -np.inf if ufunc is np.maximum else np.inf
    if dtype.kind == "b":
        return ufunc is not np.maximum
    info = np.iinfo(dtype)
    return dtype.type(info.min if ufunc is np.maximum else info.max)


def _any_zero(a: np.ndarray) -> bool:
    return bool(np.any(a == 0))


def _any_true(a: np.ndarray) -> bool:
    return bool(np.count_nonzero(a))  # faster than a.any() on integer arrays


def _extremum(row: Row, ufunc: np.ufunc) -> Scalar:
    if guard(_any_zero, materialize(row.size)):
        raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has "
                         f"no identity")
    return reduce_rows(ufunc, _identity_of_extremum(ufunc, row.dtype), (row,))[0]


# ---------------------------------------------------------------- values, lifting, materializing

Value = Scalar | Row


def from_array(x: np.ndarray | Ragged, root: Space) -> Value:
    """A concrete argument as a traced value of the top level."""
    if isinstance(x, Ragged):
        outer = _top_space(root, x)
        layout = record(Layout.from_bounds, record(_bounds, x))
        rows = Space(outer, layout, record(_lengths_of, x))
        rows.remember()
        return Row(outer, Row(rows, _regular(rows, record(_values_of, x))))
    x = np.asarray(x)
    if x.ndim == 0:
        return Scalar(root, Load(x.dtype, Buf(record(_one, x)), Idx()))
    top = _top_space(root, x)
    return Row(top, _regular(top, record(np.ascontiguousarray, x)))


def _top_space(root: Space, x: np.ndarray | Ragged) -> Space:
    layout = record(_top_layout, x)
    return Space(root, layout, record(_top_lengths, layout))


def _bounds(x: Ragged) -> np.ndarray:
    return x.bounds


def _lengths_of(x: Ragged) -> np.ndarray:
    return x.lengths


def _values_of(x: Ragged) -> np.ndarray:
    return np.ascontiguousarray(x.values)


def _one(x: np.ndarray) -> np.ndarray:
    return x.reshape(1)


def _outer_rows(values: np.ndarray) -> np.ndarray:
    return values.reshape(-1, *values.shape[2:])


def _regular(space: Space, values: np.ndarray) -> Value:
    """Elements in `space` of shape values.shape[1:]: nested uniform spaces."""
    if values.ndim == 1:
        values = record(native, values)
        return Scalar(space, Load(values.dtype, Buf(values), Idx()))
    inner = Space(space, record(_uniform_under, space.layout, values.shape[1]))
    return Row(inner, _regular(inner, record(_outer_rows, values)))


def to_traced(v: Any) -> Any:
    """Concrete arrays used inside a traced function are top-level values."""
    if isinstance(v, (np.ndarray, Ragged)) and not (isinstance(v, np.ndarray) and v.ndim == 0):
        tape.constant(v)  # read from a closure or a global: captured when recorded
        return from_array(v, _root(current()))
    return v


def lift(v: Any, target: Space) -> Any:
    """`v` replicated over the iterations of `target` (a descendant of v's space)."""
    if isinstance(v, tuple):
        return tuple(lift(x, target) for x in v)
    v = to_traced(v)
    if isinstance(v, Row):
        if v.parent is target:
            return v
        return slice_row(v, None, None, target)
    if isinstance(v, Scalar):
        if v.space is target:
            return v
        if v.space is None:
            raise NotImplementedError("stax.nested: an operator argument escapes its operator")
        e, parent = v.expr, v.space
        for child in target.chain_from(v.space):
            e = _lift_expr(e, parent, child)
            parent = child
        return Scalar(target, e)
    if isinstance(v, np.ndarray):
        return Scalar(target, cast_to(const(v[()]), v.dtype))
    return Scalar(target, const(v))


def _space_of(v: Any) -> Space | None:
    if isinstance(v, Scalar):
        return v.space
    if isinstance(v, Row):
        return v.parent
    return None


def deepest(*values: Any, minimum: Space | None = None) -> Space:
    """The innermost space among the values (they must lie on one chain) and the enclosing
    cond branch, if any. Work on values of outer levels stays there (hoisted, computed once
    per outer iteration) except under a branch, where it must not run for iterations that
    do not take the branch (it could fail there)."""
    spaces = [s for s in map(_space_of, values) if s is not None]
    if minimum is not None:
        spaces.append(minimum)
    guard = _SPACE.get()  # inside a cond branch, work runs only on the packed iterations
    while guard is not None and not guard.guarded:
        guard = guard.parent
    if guard is not None:
        spaces.append(guard)
    best = max(spaces, key=lambda s: s.depth) if spaces else current()
    for s in spaces:
        best.chain_from(s)
    return best


def materialize(v: Scalar) -> np.ndarray:
    """The values of a Scalar over its space, as a contiguous array."""
    e, space = v.expr, v.space
    assert space is not None
    direct = isinstance(e, (Load, Const)) and (
        isinstance(e, Const) or isinstance(e.index, Idx)
        and guard(_fits, e.buf.array, space.layout))
    # a value read back may decide sizes or control: never read garbage. The checks over
    # this space run inside the kernel that computes it (as counts), the others before.
    checks, bad = ([], []) if direct else _counted(space)
    flush_checks()
    if isinstance(e, Const):
        return record(_full, space.layout, e.dtype, e.value)
    if direct:
        flush()  # the array may hold results of deferred reductions
        return e.buf.array
    if not checks and space.width is not None and space.parent is not None \
            and space.parent.parent is not None and not pending_reads([e]):
        routed = regular_map(space.layout, e, f"map over {space.name}: {show(e)}")
        if routed is not None:
            note("map over regular rows -> elementwise program (main pipeline)",
                 f"{show(e)} over {space.describe()}: rows of one length are a 2-D array, "
                 f"so the map is one elementwise NumPy program over it, compiled by the main "
                 f"pipeline (stax.jit: Graph, fusion, C++)")
            return routed
    out = alloc(space.layout, "n", e.dtype)
    counts = [alloc(None, "n", INT64) for _ in checks]
    for c in checks:
        note("check fused into a map", f"the check over {c.space.name} is a count summed "
             f"by the kernel that computes {show(e)}")
    run_map(space.size, space.layout, [Store(out, e)], f"materialize over {space.name}: "
            f"{show(e)}", [Store(n, b) for n, b in zip(counts, bad, strict=True)])
    _raise_counted(checks, counts)
    return out


def _fits(a: np.ndarray, layout: Layout | None) -> bool:
    return a.size == size_of(layout)


def _full(layout: Layout | None, dtype: np.dtype, value: Any) -> np.ndarray:
    return np.full(size_of(layout), value, dtype=dtype)


def materialized(v: Any) -> Any:
    """The same value with its expressions computed into arrays (bounds expression growth in
    loops)."""
    if isinstance(v, tuple):
        return tuple(materialized(x) for x in v)
    if isinstance(v, Scalar) and v.space is not None:
        return Scalar(v.space, Load(v.dtype, Buf(materialize(v)), Idx()))
    if isinstance(v, Row):
        return Row(v.space, materialized(v.elem))
    return v


def _elements(row: Row, what: str) -> Buf:
    if not isinstance(row.elem, Scalar):
        raise NotImplementedError(f"stax.nested: {what} of arrays whose elements are arrays is "
                                  f"not supported")
    return Buf(materialize(row.elem))


def show(e: Expr) -> str:
    """A readable form of an expression for explain."""
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, Idx):
        return "i"
    if isinstance(e, Seg):
        return "seg"
    if isinstance(e, Load):
        trace = _TRACE.get()
        name = trace.array_name(e.buf.array) if trace else "array"
        return f"{name}[{show(e.index)}]"
    if isinstance(e, Call):
        if e.fn == "cast":
            return f"{e.dtype}({show(e.args[0])})"
        return f"{e.fn}({', '.join(show(a) for a in e.args)})"
    return getattr(e, "name", "?")


# ---------------------------------------------------------------- elementwise work

def apply_ufunc(ufunc: np.ufunc, *args: Any) -> Any:
    args = tuple(to_traced(a) if tracing() else a for a in args)
    if any(isinstance(a, Row) for a in args):
        return _row_ufunc(ufunc, args)
    space, exprs = _exprs(args)
    return Scalar(space, ufunc_call(ufunc, exprs))


def _exprs(args: Sequence[Any]) -> tuple[Space | None, tuple[Expr, ...]]:
    """Scalar operands brought to their innermost space (None: operator arguments)."""
    spaces = [a.space for a in args if isinstance(a, Scalar)]
    if spaces and all(s is None for s in spaces):
        return None, tuple(a.expr if isinstance(a, Scalar) else const(a) for a in args)
    space = deepest(*args)
    return space, tuple(lift(a, space).expr for a in args)


def _row_ufunc(ufunc: np.ufunc, args: tuple[Any, ...]) -> Row:
    """Elementwise work on rows: a map over the row (fused into the element expression)."""
    space = deepest(*args)
    lifted = [lift(a, space) for a in args]
    rows = [a for a in lifted if isinstance(a, Row)]
    child = unify(rows, f"np.{ufunc.__name__}")
    elems = [lift(a, child) if not isinstance(a, Row) else rehome(a, child).elem
             for a in lifted]
    return Row(child, apply_ufunc(ufunc, *elems))


def rehome(row: Row, space: Space) -> Row:
    """A row whose elements lie in a space with the same layout as `space`, moved there."""
    if row.space is space:
        return row
    return Row(space, _rehome_value(row.elem, space))


def _rehome_value(v: Value, space: Space) -> Value:
    if isinstance(v, Scalar):
        return Scalar(space, v.expr)
    inner = Space(space, v.space.layout, v.space.lengths)
    return Row(inner, _rehome_value(v.elem, inner))


def unify(rows: Sequence[Row], what: str) -> Space:
    """The common element space of rows of one level (their lengths must agree)."""
    first = rows[0].space
    for r in rows[1:]:
        if r.space is first:
            continue
        a, b = first.layout, r.space.layout
        if a is not b and not guard(_same_lengths, a, first.lengths, b, r.space.lengths):
            raise ValueError(f"stax.nested: {what}: arrays of different lengths "
                             f"({_describe_lengths(first)} vs {_describe_lengths(r.space)})")
    return first


def _same_lengths(a: Layout, la: np.ndarray | None, b: Layout, lb: np.ndarray | None) -> bool:
    """Whether two layouts (with their spaces' lengths) have the same segment lengths."""
    if la is not None and la is lb:
        return True
    return a.k == b.k and a.n == b.n and (
        (a.width is not None and a.width == b.width)
        or (a.width is None and b.width is None and np.array_equal(a.bounds, b.bounds))
        or np.array_equal(_layout_lengths(a, la), _layout_lengths(b, lb)))


def _layout_lengths(layout: Layout, lengths: np.ndarray | None) -> np.ndarray:
    if layout.width is not None:
        return np.full(layout.k, layout.width, dtype=np.int64)
    return lengths


def _lengths(space: Space) -> np.ndarray:
    return _layout_lengths(space.layout, space.lengths)


def _describe_lengths(space: Space) -> str:
    lengths = _lengths(space)
    return str(lengths.tolist() if len(lengths) <= 8 else f"{lengths[:8].tolist()}...")


def array_function(func: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """np.where, np.sum/max/min/prod/mean/cumsum/cumprod on traced values."""
    if func is np.where and len(args) == 3 and not kwargs:
        return where_(*args)
    methods = {np.sum: "sum", np.max: "max", np.min: "min", np.prod: "prod", np.mean: "mean",
               np.cumsum: "cumsum", np.cumprod: "cumprod", np.amax: "max", np.amin: "min"}
    if func in methods and len(args) == 1 and not kwargs and isinstance(args[0], Row):
        return getattr(args[0], methods[func])()
    raise NotImplementedError(f"stax.nested: np.{func.__name__} is not supported on traced "
                              f"values here")


def where_(c: Any, a: Any, b: Any) -> Any:
    args = tuple(to_traced(x) if tracing() else x for x in (c, a, b))
    if any(isinstance(x, Row) for x in args):
        space = deepest(*args)
        lifted = [lift(x, space) for x in args]
        child = unify([x for x in lifted if isinstance(x, Row)], "np.where")
        elems = [lift(x, child) if not isinstance(x, Row) else rehome(x, child).elem
                 for x in lifted]
        return Row(child, where_(*elems))
    space, (ec, ea, eb) = _exprs(args)
    return Scalar(space, where(ec, ea, eb))


# ---------------------------------------------------------------- constructs and their rules

def as_row(x: Any, what: str) -> Row:
    x = to_traced(x)
    if not isinstance(x, Row):
        raise TypeError(f"stax.nested: {what} needs arrays, got "
                        f"{'a scalar' if isinstance(x, Scalar) else type(x).__name__}")
    return x


def map_(f: Callable[..., Any], xs: Sequence[Any]) -> Any:
    rows = [as_row(x, "sn.map") for x in xs]
    # Never hoisted: the body may use values of the current iteration, so its iterations
    # must nest under the current space (a free array is replicated there).
    space = deepest(*rows, minimum=current())
    rows = [lift(r, space) for r in rows]
    child = unify(rows, "sn.map")
    rows = [rehome(r, child) for r in rows]
    note("map: lift the body", f"body traced once over all {child.size} iterations "
         f"({child.describe()}); elementwise code fuses into one expression per value")
    with in_space(child):
        result = f(*(r.elem for r in rows))
    return _wrap(result, child)


def _wrap(result: Any, child: Space) -> Any:
    if isinstance(result, tuple):
        return tuple(_wrap(r, child) for r in result)
    return Row(child, lift(result, child))


def length(row: Any) -> Scalar:
    return as_row(row, "sn.length").size


def reduce_rows(op: Any, ne: Any, rows: Sequence[Row]) -> tuple:
    """Reduce each row (map of reduce -> segreduce); a tuple of rows for tuple operators."""
    return _segmented("reduce", op, ne, rows)


def scan_rows(op: Any, ne: Any, rows: Sequence[Row]) -> tuple:
    """Inclusive scan of each row (map of scan -> segscan)."""
    return _segmented("scan", op, ne, rows)


def _segmented(kind: str, op: Any, ne: Any, rows: Sequence[Row]) -> tuple:
    from stax.nested.operator import UntraceableOperator, make_operator
    what = f"sn.{kind}"
    rows = [as_row(r, what) for r in rows]
    space = deepest(*rows)
    rows = [lift(r, space) for r in rows]
    child = unify(rows, what)
    elems = [_scalar_elem(rehome(r, child), what) for r in rows]
    try:
        operator = make_operator(op, ne, [e.dtype for e in elems])
    except UntraceableOperator:
        return _python_fallback(kind, op, ne, child, elems, space)
    prim = "segreduce" if kind == "reduce" else "segscan"
    exprs = [e.expr for e in elems]
    checks, counts = _counted(child) if kind == "reduce" else ([], [])
    closed = _closed_form_sum(operator, exprs, child) if kind == "reduce" and not checks \
        else None
    if not checks and closed is None and (kind == "reduce" or space.parent is not None):
        routed = _main_pipeline(kind, operator, exprs, child, space)
        if routed is not None:
            return routed
    rule = (f"map-of-{kind} -> {prim}" if space.parent is not None
            else f"{kind} -> {prim} (one segment)")
    note(rule, f"{operator.name} over {child.describe()}; element expression fused: "
         f"{', '.join(show(e.expr) for e in elems)}")
    summary = f"{prim} {operator.name} over {child.name}"
    if kind == "reduce":
        if closed is not None:
            note("segreduce of an affine element -> closed form (strength reduction)",
                 f"instead of the segreduce: the sum over each segment of {child.name} of "
                 f"c0 + c1 * j (j: the index in the segment) = len * c0 + c1 * len * (len - 1) "
                 f"/ 2, exact in "
                 f"wrapping {closed.dtype} "
                 f"arithmetic; an expression per segment, computed where used")
            return (Scalar(space, closed),)
        if not checks:
            note("segment-local fusion", f"the segreduce over {child.name} is deferred: "
                 f"later kernels over the same segments that read its result per segment "
                 f"run in the same pass over each segment (see the flat program)")
            outs = defer_segreduce(child.layout, operator, exprs, summary)
            return tuple(Scalar(space, Load(o.dtype, Buf(o), Idx())) for o in outs)
        for c in checks:
            operator = operator.with_count()
            note("bounds check fused into segreduce", f"the check over {c.space.name} is a "
                 f"count reduced alongside")
        outs = run_segreduce(child.layout, operator, exprs + counts, summary,
                             totals=len(checks))
        _raise_counted(checks, outs[len(elems):])
        return tuple(Scalar(space, Load(o.dtype, Buf(o), Idx())) for o in outs[:len(elems)])
    outs = run_segscan(child.layout, operator, exprs, False, summary)
    return tuple(Row(child, Scalar(child, Load(o.dtype, Buf(o), Idx()))) for o in outs)


def _main_pipeline(kind: str, operator: Any, exprs: Sequence[Expr], child: Space,
                   space: Space) -> tuple | None:
    """A reduction or scan over rows of one length through the main pipeline
    (`stax.nested.regular`), or None where it does not apply."""
    reduce = kind == "reduce"
    method = "reduce" if reduce else "accumulate"
    outs = (regular_segreduce if reduce else regular_segscan)(
        child.layout, operator, exprs, f"{operator.name}.{method} over {child.name}, axis 1")
    if outs is None:
        return None
    note(f"map-of-{kind} -> regular {'reduction' if reduce else 'scan'} (main pipeline)",
         f"{operator.name} over {child.describe()}: rows of one length are a 2-D array, so "
         f"the {kind} is {operator.name}.{method}(axis=1) of the element expression "
         f"{show(exprs[0])}, compiled by the main pipeline (stax.jit: Graph, fusion, C++)")
    if reduce:
        return tuple(Scalar(space, Load(o.dtype, Buf(o), Idx())) for o in outs)
    return tuple(Row(child, Scalar(child, Load(o.dtype, Buf(o), Idx()))) for o in outs)


def _affine(e: Expr) -> tuple[Expr, Expr] | None:
    """(c0, c1) with e == c0 + c1 * Idx, c0 and c1 free of Idx, when e is built from Idx by
    +, - and * in int64; else None."""
    if not uses(e, Idx):
        return e, Const(e.dtype, 0)
    if isinstance(e, Idx):
        return Const(INT64, 0), Const(INT64, 1)
    if not (isinstance(e, Call) and e.fn in ("add", "subtract", "multiply", "negative")
            and e.dtype == INT64 and all(a.dtype == INT64 for a in e.args)):
        return None
    parts = [_affine(a) for a in e.args]
    if any(p is None for p in parts):
        return None
    if e.fn == "negative":
        return _neg(parts[0][0]), _neg(parts[0][1])
    (x0, x1), (y0, y1) = parts
    if e.fn == "multiply":
        if uses(e.args[0], Idx) and uses(e.args[1], Idx):
            return None
        k, (p0, p1) = (e.args[1], (x0, x1)) if uses(e.args[0], Idx) else (e.args[0], (y0, y1))
        return _mul(p0, k), _mul(p1, k)
    combine = _add if e.fn == "add" else _sub
    return combine(x0, y0), combine(x1, y1)


def _closed_form_sum(operator: Any, exprs: Sequence[Expr], child: Space) -> Expr | None:
    """Sum per segment of an element affine in the element index, as an expression of the
    parent iteration (Idx = the segment): exact, since wrapping 64-bit integer arithmetic is
    a ring (the kernels compile with -fwrapv), so no pass over the elements is needed. The
    element is taken as c0 + c1 * j with j = i - lo its index in the segment, so the start
    cancels where the program counts from it (the sum of an iota is len * (len - 1) / 2)."""
    dtype = INT64
    if (len(exprs) != 1 or operator.dtypes[0] != dtype
            or operator.combine[0] != Call(dtype, "add", (Arg(dtype, "a0"), Arg(dtype, "b0")))):
        return None
    start = substitute(child.start(), {Idx: Seg()})  # the segment's first element
    parts = _affine(substitute(exprs[0], {Idx: _add(Idx(), start)}))
    if parts is None:
        return None
    c0, c1 = (substitute(c, {Seg: Idx()}) for c in parts)
    layout = child.layout
    if layout.width is not None:
        n: Expr = _i64(static_width(layout))
    elif child.lengths is not None:
        n = child.length()
    else:
        bounds = Buf(layout.bounds)
        n = _sub(Load(INT64, bounds, _add(Idx(), _i64(1))), Load(INT64, bounds, Idx()))
    # n * (n - 1) / 2 without losing the bit the product may carry out: with n = 2h + r
    # (h = n // 2, r = n % 2) it is h * (n - 1 + r), exact for every n; branch-free (it
    # vectorizes, where a `where` over the two halvings kept the loop scalar).
    half, odd = (ufunc_call(ufunc, (n, _i64(2))) for ufunc in (np.floor_divide, np.remainder))
    pairs = _mul(half, _add(_sub(n, _i64(1)), odd))
    return _add(operator.ne[0], _add(_mul(n, c0), _mul(c1, pairs)))


def _scalar_elem(row: Row, what: str) -> Scalar:
    if not isinstance(row.elem, Scalar):
        raise NotImplementedError(f"stax.nested: {what} over arrays of arrays is not "
                                  f"supported (reduce the inner arrays first)")
    return row.elem


def _python_fallback(kind: str, op: Any, ne: Any, child: Space, elems: Sequence[Scalar],
                     space: Space) -> tuple:
    """An operator that branches on values cannot become C++: run it per segment in Python."""
    from stax.nested.interp import segmented
    tape.unreplayable("an operator that branches in Python runs in Python")
    note(f"{kind} with an untraceable operator -> sequential Python",
         f"{getattr(op, '__name__', op)} branches on its arguments; {child.size} elements")
    outs = segmented(kind, op, ne, child.layout, [materialize(e) for e in elems])
    if kind == "reduce":
        return tuple(Scalar(space, Load(o.dtype, Buf(o), Idx())) for o in outs)
    return tuple(Row(child, Scalar(child, Load(o.dtype, Buf(o), Idx()))) for o in outs)


def _ints(v: Any, space: Space) -> np.ndarray | int:
    """An integer argument at `space`: a Python int, or its values."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, Scalar):
        if v.dtype.kind not in "iu":
            raise TypeError(f"stax.nested: sizes must be integers, got {v.dtype}")
        arr = record(_as_int64, materialize(lift(v, space)))
        return guard(_first, arr) if space.parent is None else arr
    raise TypeError(f"stax.nested: sizes must be integers, got {type(v).__name__}")


def _as_int64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64, copy=False)


def _iota_lengths(v0: int, v1: np.ndarray) -> np.ndarray:
    """The lengths of v0..<v1 per iteration (checked: a ValueError names a bad range)."""
    from stax.nested.interp import check_range
    low = int(v1.min()) if len(v1) else v0
    if low < v0:  # [FUZZ] names the first bad range, as the interpreter does (not the least)
        check_range(np.full(len(v1), v0), v1, np.ones(len(v1), dtype=np.int64))
    return v1 - v0 if v0 else v1


def _range_lengths(layout: Layout | None, *values: np.ndarray | int) -> np.ndarray:
    """The lengths of start..start+step..<stop per iteration of a space laid out by
    `layout` (checked: a ValueError names a bad range)."""
    from stax.nested.interp import check_range
    k = size_of(layout)
    arrays = [np.full(k, v, dtype=np.int64) if isinstance(v, int) else v for v in values]
    check_range(*arrays)
    s0, s1, st = arrays
    steps = np.where(st > 0, st, -st)
    lengths = np.where(st > 0, s1 - s0, s0 - s1) + steps - 1
    return lengths // np.where(st == 0, 1, steps)


def range_(start: Any, stop: Any, step: Any) -> Row:
    space = deepest(start, stop, step)
    values = [_ints(v, space) for v in (start, stop, step)]
    v0, v1, v2 = values
    lengths: np.ndarray | int
    trace = _TRACE.get()
    iota_like = isinstance(v0, int) and isinstance(v2, int) and v2 == 1 \
        and not isinstance(v1, int)
    if iota_like and v0 == 0 and trace is not None \
            and trace.known_layout(v1) is not None:  # sn.iota(sn.length(row))
        note("iota of row lengths -> no range check", f"the lengths of {space.name}'s "
             f"iotas are those of existing rows (>= 0 when their space was made)")
        lengths = v1
    elif iota_like and v0 == 0 and trace is not None:
        return _iota_deferred(space, v1)
    elif iota_like:  # one pass
        lengths = effect(_iota_lengths, v0, v1)
    elif all(isinstance(v, int) for v in values):  # one width (no iteration: no check)
        lengths = 0 if empty_layout(space.layout, "n") else \
            int(_range_lengths(None, *values)[0])
    else:
        lengths = effect(_range_lengths, space.layout, *values)
    child = Space.child(space, lengths)
    first, stride = (lift(_int64_at(v, space), child).expr for v in (start, step))
    return _iota_row(space, child, _add(first, _mul(stride, child.inner())))


def _iota_row(space: Space, child: Space, elem: Expr) -> Row:
    note("map-of-iota -> segiota" if space.parent is not None else "iota -> iota",
         f"{child.describe()}: element = start + step * (index in segment), computed "
         f"where used")
    return Row(child, Scalar(child, elem))


def _iota_deferred(space: Space, n: np.ndarray) -> Row:
    """sn.iota(n) per iteration of `space`, its check n >= 0 deferred into the next kernel
    over `space` that reduces or reads a value back (the closed-form sum of an iota: one pass
    over the lengths, not two). Until the check has passed nothing reads the new space's
    bounds or layout: the first step that does runs it first (`tape.wait_for`; as the
    one-pass check of `_iota_lengths`)."""
    def fail() -> None:
        _iota_lengths(0, n)  # raises, naming the range

    def alone() -> None:
        effect(_iota_lengths, 0, n)

    child = Space.child(space, n)
    bad = ufunc_call(np.less, (Load(INT64, Buf(child.lengths), Idx()), _i64(0)))
    check = _defer_check(space, bad, fail, alone)
    tape.wait_for((child.layout, child.layout.bounds), partial(_before_use, check))
    note("iota range check deferred", f"n >= 0 over {space.name} is checked by the next "
         f"kernel over {space.name} (before anything reads {child.name}'s bounds)")
    return _iota_row(space, child, child.inner())


def _int64_at(v: Any, space: Space) -> Scalar:
    """An integer argument (traced or Python) as an int64 value of `space`."""
    if isinstance(v, Scalar):
        return Scalar(space, cast_to(lift(v, space).expr, INT64))
    return Scalar(space, _i64(int(v)))


def iota(n: Any) -> Row:
    return range_(0, n, 1)


def _counts(count: np.ndarray | int) -> np.ndarray | int:
    """The counts of sn.replicate, checked (a ValueError names a negative one)."""
    if np.any(np.asarray(count) < 0):
        raise ValueError(f"stax.nested: sn.replicate: negative count {int(np.min(count))}")
    return count


def replicate(n: Any, v: Any) -> Row:
    v = to_traced(v)
    space = deepest(n, v)
    count = _ints(n, space)
    count = effect(_counts, count) if isinstance(count, np.ndarray) else _counts(count)
    child = Space.child(space, count)
    note("map-of-replicate -> segmented replicate" if space.parent else "replicate",
         f"{child.describe()}: the value is replicated symbolically (gathered by segment "
         f"index)")
    try:
        return Row(child, lift(v, child))
    except NotImplementedError:
        raise NotImplementedError("stax.nested: sn.replicate of arrays of arrays is not "
                                  "supported (1-D arrays and top-level 2-D arrays are)") from None


def slice_row(row: Row, lo: Any, hi: Any, target: Space | None = None, step: int = 1) -> Row:
    """row[lo:hi:step] with Python's slice rules (negative bounds from the end, clamped; a
    negative step walks backwards), at `target` or the innermost space of the operands."""
    space = target or deepest(row, lo if isinstance(lo, Scalar) else None,
                              hi if isinstance(hi, Scalar) else None)
    base = row.space
    start = lift(Scalar(row.parent, base.start()), space)
    size = lift(Scalar(row.parent, base.length()), space)
    bounds = []
    for v in (lo, hi):
        if v is None:
            bounds.append(None)
            continue
        b = lift(to_traced(v), space)
        if b.dtype.kind not in "iu":
            raise TypeError(f"stax.nested: slice bounds must be integers, got {b.dtype}")
        bounds.append(record(_as_int64, materialize(b)))
    indices = record(_slice_indices, record(_as_int64, materialize(size)), *bounds, step)
    a, count = record(_item, indices, 0), record(_item, indices, 1)
    # Rows of one width sliced by constant bounds keep one width (regular).
    regular = base.width is not None and not any(isinstance(v, Scalar) for v in (lo, hi))
    if isinstance(row.elem, Row):
        if lo is None and hi is None and regular and step == 1:
            child = Space.child(space, static_width(base.layout))
            note("replicate free array", f"{child.describe()}")
            return Row(child, _replicate_regular(row.elem, base, child))
        raise NotImplementedError("stax.nested: slicing arrays of arrays is not supported")
    buf = _elements(row, "slicing")
    # A regular width is the slice's length on one row, also where `space` has no iteration
    # (its rows' counts are then empty, but the result keeps the width: shape (0, w)).
    width = len(range(*slice(lo, hi, step).indices(static_width(base.layout)))) if regular \
        else count
    child = Space.child(space, width)
    offset = lift(Scalar(space, _add(start.expr, Load(INT64, Buf(a), Idx()))), child).expr
    note("map-of-slice -> segmented gather" if target is None else
         "free array replicated -> segmented gather",
         f"{child.describe()}: element = row[start + lo + {step} * index in segment]")
    return Row(child, Scalar(child, Load(row.dtype, buf,
                                         _add(offset, _mul(_i64(step), child.inner())))))


def _item(pair: tuple[np.ndarray, np.ndarray], j: int) -> np.ndarray:
    return pair[j]


def _slice_indices(n: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None,
                   step: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of length n, Python's `slice(lo, hi, step).indices(n)`: the first index and
    the number of elements."""
    if step == 0:
        raise ValueError("slice step cannot be zero")

    def norm(v: np.ndarray | None, default: np.ndarray, low: np.ndarray | int,
             high: np.ndarray) -> np.ndarray:
        if v is None:
            return default
        return np.clip(np.where(v < 0, v + n, v), low, high)

    if step > 0:
        a, b = norm(lo, np.zeros_like(n), 0, n), norm(hi, n, 0, n)
        span, stride = b - a, step
    else:
        a, b = norm(lo, n - 1, -1, n - 1), norm(hi, np.full_like(n, -1), -1, n - 1)
        span, stride = a - b, -step
    return np.ascontiguousarray(a, dtype=np.int64), (np.maximum(span, 0) + stride - 1) // stride


def _replicate_regular(elem: Row, base: Space, child: Space) -> Row:
    """The regular rows of a top-level 2-D array, replicated over `child` (a copy of the
    array's outer dimension under each iteration): element (r, c) reads row r % rows."""
    if base.parent is None or base.parent.parent is not None:
        raise NotImplementedError("stax.nested: replicating arrays of arrays from inside a map")
    width = max(1, elem.space.width)
    inner = Space.child(child, elem.space.width)
    buf = _elements(elem, "replicating")
    row_of = ufunc_call(np.remainder, (ufunc_call(np.floor_divide, (Idx(), _i64(width))),
                                       _i64(max(1, static_width(base.layout)))))
    col = ufunc_call(np.remainder, (Idx(), _i64(width)))
    return Row(inner, Scalar(inner, Load(elem.dtype, buf, _add(_mul(row_of, _i64(width)), col))))


def _neg(e: Expr) -> Expr:
    return ufunc_call(np.negative, (e,))


def _any(space: Space, cond: Expr) -> bool:
    """Whether `cond` holds for some iteration of `space`: one fused parallel reduction
    (a check over the elements, without materializing them)."""
    if space.layout is None:
        return guard(_any_true, materialize(Scalar(space, cast_to(cond, BOOL))))
    from stax.nested.operator import make_operator
    flags = run_segreduce(space.layout, make_operator(np.logical_or, False, [BOOL]),
                          [cast_to(cond, BOOL)], f"check over {space.name}")[0]
    return guard(_any_true, flags)


@dataclass(frozen=True, eq=False)
class Check:
    """A deferred bounds check: `bad` must hold for no iteration of `space`; `fail` raises the
    error for the first iteration where it does. Loads it guards are clamped into their
    array meanwhile, so running ahead of it never reads out of bounds (or, for the range of
    an iota, the data it guards waits for it: `range_`). `alone`: how it runs when no kernel
    takes it (None: a reduction of `bad` over `space`, then `fail`)."""
    seq: int
    space: Space
    bad: Expr
    fail: Callable[[], None]
    alone: Callable[[], None] | None = None


def _defer_check(space: Space, bad: Expr, fail: Callable[[], None],
                 alone: Callable[[], None] | None = None) -> Check:
    """Run the check inside the next kernel over `space` that reduces or reads a value back
    (one pass fewer), or before the next value is read back otherwise (`materialize`),
    whichever comes first."""
    trace = _TRACE.get()
    assert trace is not None
    check = Check(next(trace.counter), space, bad, fail, alone)
    trace.checks.append(check)
    return check


def flush_checks(before: int | None = None) -> None:
    """Run the pending checks (those registered before `before`), in program order."""
    trace = _TRACE.get()
    if trace is None or not trace.checks:
        return
    due = [c for c in trace.checks if before is None or c.seq < before]
    trace.checks = [c for c in trace.checks if c not in due]
    for c in due:
        if c.alone is not None:
            c.alone()
        elif _any(c.space, c.bad):
            trace.checks = []  # raising: the later ones do not matter
            c.fail()
        trace.passed.add(c.seq)


def _before_use(check: Check) -> None:
    """The data `check` guards is about to be read: make sure the check holds."""
    trace = _TRACE.get()
    assert trace is not None
    if check in trace.checks:
        flush_checks(before=check.seq + 1)  # in program order, with the earlier ones
    elif check.seq not in trace.passed:  # taken by a kernel that reads that data
        check.alone()
        trace.passed.add(check.seq)


def _counted(space: Space) -> tuple[list[Check], list[Expr]]:
    """The pending checks over `space`, taken to run as counts inside a kernel over it (one
    int64 count per check, of the iterations where it fails: `raise_counted`)."""
    checks = _take_checks(space)
    return checks, [cast_to(c.bad, INT64) for c in checks]


def _raise_counted(checks: Sequence[Check], counts: Sequence[np.ndarray]) -> None:
    """Raise the error of the first check (in program order) whose count is not zero; an
    earlier check still pending reports first."""
    trace = _TRACE.get()
    assert trace is not None
    for c, count in zip(checks, counts, strict=True):
        if guard(_any_true, count):
            flush_checks(before=c.seq)
            trace.checks = []
            c.fail()
        trace.passed.add(c.seq)


def _take_checks(space: Space) -> list[Check]:
    """The pending checks over `space`, removed from the queue (a kernel fuses them)."""
    trace = _TRACE.get()
    if trace is None:
        return []
    mine = [c for c in trace.checks if c.space.layout is space.layout]
    trace.checks = [c for c in trace.checks if c.space.layout is not space.layout]
    return mine


def _is_empty_array(a: np.ndarray) -> bool:
    return a.size == 0


def index_row(row: Row, i: Any) -> Any:
    """row[i] (NumPy's negative indices; out of bounds is an IndexError, raised by a check
    fused into the next segmented reduction over the iterations when there is one)."""
    i = to_traced(i)
    if isinstance(i, Row):
        raise NotImplementedError("stax.nested: index a row with one integer at a time "
                                  "(use sn.map to gather)")
    space = deepest(row, i)
    idx = lift(i, space)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"stax.nested: row indices must be integers, got {idx.dtype}")
    base = row.space
    size = lift(Scalar(row.parent, base.length()), space)
    # out of bounds: the index (negatives counted from the end) outside [0, size), as one
    # unsigned comparison (a negative position, or an unsigned index past the int64 range,
    # is a huge unsigned number)
    unsigned = np.dtype("uint64")
    pos = cast_to(idx.expr, INT64)
    if idx.dtype.kind == "u":
        bad = ufunc_call(np.greater_equal, (cast_to(idx.expr, unsigned),
                                            cast_to(size.expr, unsigned)))
    else:
        pos = where(ufunc_call(np.less, (pos, _i64(0))), _add(pos, size.expr), pos)
        bad = ufunc_call(np.greater_equal, (cast_to(pos, unsigned),
                                            cast_to(size.expr, unsigned)))

    def fail() -> None:
        iv, nv = materialize(idx), materialize(size)
        j = int(np.argmax(materialize(Scalar(space, bad))))
        if int(iv[j]) > np.iinfo(np.int64).max:  # NumPy's error for such an index
            raise OverflowError(f"index {iv[j]} is too large for a C long (int64)")
        raise IndexError(f"index {iv[j]} is out of bounds for axis 0 with size {nv[j]}")

    start = lift(Scalar(row.parent, base.start()), space)
    flat = _add(start.expr, pos)
    inner = row.elem.space if isinstance(row.elem, Row) else None
    if inner is not None and inner.width is None:
        raise NotImplementedError("stax.nested: indexing a row of irregular arrays")
    buf = _elements(row.elem if inner is not None else row, "indexing")
    if guard(_is_empty_array, buf.array):
        if _any(space, bad):
            fail()
    else:
        _defer_check(space, bad, fail)
        # until the check has run, a bad index reads row 0 (which exists: the array is not
        # empty); a good one is in its row, which lies inside the array
        flat = where(bad, _i64(0), flat)
    note("map-of-index -> gather" if space.parent is not None else "index",
         f"row[i] read at start of row + i over {space.name}; the bounds check runs in "
         f"the next reduction over {space.name} (or on its own before a value is read)")
    if inner is not None:
        child = Space.child(space, inner.width)
        offset = lift(Scalar(space, _mul(flat, _i64(inner.width))), child).expr
        return Row(child, Scalar(child, Load(row.dtype, buf, _add(offset, child.inner()))))
    return Scalar(space, Load(row.dtype, buf, flat))


def concat(a: Any, b: Any) -> Row:
    ra, rb = as_row(a, "sn.concat"), as_row(b, "sn.concat")
    space = deepest(ra, rb)
    if ra.dtype != rb.dtype:
        rb = rb.astype(np.result_type(ra.dtype, rb.dtype))
        ra = ra.astype(rb.dtype)
    parts = []
    for r in (ra, rb):
        parts.append((_elements(r, "sn.concat"),
                      lift(Scalar(r.parent, r.space.start()), space),
                      lift(Scalar(r.parent, r.space.length()), space)))
    (buf_a, start_a, len_a), (buf_b, start_b, len_b) = parts
    regular = ra.space.width is not None and rb.space.width is not None
    child = Space.child(space, static_width(ra.space.layout) + static_width(rb.space.layout)
                        if regular
                        else materialize(Scalar(space, _add(len_a.expr, len_b.expr))))
    j = child.inner()
    la, sa, sb = (lift(v, child).expr for v in (len_a, start_a, start_b))
    at_a = _add(sa, j)
    if isinstance(at_a, Idx):  # a starts at 0 (the top level): a load at the element index
        # would be read for every lane, past the end of a; min(i, len(a)) is i where it is
        # read and makes it a guarded load (only the taken branch runs)
        at_a = ufunc_call(np.minimum, (j, la))
    elem = where(ufunc_call(np.less, (j, la)), Load(ra.dtype, buf_a, at_a),
                 Load(rb.dtype, buf_b, _add(sb, _sub(j, la))))
    note("map-of-concat -> segmented concat" if space.parent else "concat",
         f"{child.describe()}: element = i < len(a) ? a[i] : b[i - len(a)]")
    return Row(child, Scalar(child, elem))


def scatter(dest: Any, idx: Any, vals: Any) -> Row:
    """dest with dest[idx[j]] = vals[j]; indices outside dest are ignored (as in Futhark);
    duplicate indices leave one of the values (unspecified which)."""
    rd, ri, rv = (as_row(x, "sn.scatter") for x in (dest, idx, vals))
    space = deepest(rd, ri, rv)
    rd, ri, rv = (lift(r, space) for r in (rd, ri, rv))
    src = unify([ri, rv], "sn.scatter (indices and values)")
    ei = _scalar_elem(rehome(ri, src), "sn.scatter")
    ev = _scalar_elem(rehome(rv, src), "sn.scatter")
    if ei.dtype.kind not in "iu":
        raise TypeError(f"stax.nested: scatter indices must be integers, got {ei.dtype}")
    out = record(np.copy, materialize(_scalar_elem(rd, "sn.scatter")))
    start = lift(Scalar(space, rd.space.start()), src).expr
    size = lift(Scalar(space, rd.space.length()), src).expr
    i = cast_to(ei.expr, INT64)
    ok = ufunc_call(np.logical_and, (ufunc_call(np.greater_equal, (i, _i64(0))),
                                     ufunc_call(np.less, (i, size))))
    run_map(src.size, src.layout, [Store(out, cast_to(ev.expr, out.dtype), _add(start, i), ok)],
            f"scatter over {src.name}")
    note("map-of-scatter -> segmented scatter" if space.parent else "scatter",
         f"writes at start of row + index, out-of-range indices ignored ({src.describe()})")
    return Row(rd.space, Scalar(rd.space, Load(out.dtype, Buf(out), Idx())))


def cond(c: Any, then_fn: Callable[..., Any], else_fn: Callable[..., Any],
         args: tuple[Any, ...]) -> Any:
    c = to_traced(c)
    if not isinstance(c, Scalar):
        return then_fn(*args) if bool(c) else else_fn(*args)
    space = deepest(c, minimum=current())  # the branches may use the current iteration
    cm = materialize(Scalar(space, cast_to(lift(c, space).expr, BOOL)))
    taken = guard(_branches_taken, cm)
    if space.parent is None or taken != "both":
        taken = taken != "else"
        note("cond with a uniform condition -> one branch",
             f"all {len(cm)} iterations take the {'then' if taken else 'else'} branch")
        return then_fn(*args) if taken else else_fn(*args)
    branches = []
    for mask, fn, name in ((cm, then_fn, "then"), (record(np.logical_not, cm), else_fn, "else")):
        packed = Space.child(space, record(_as_int64, mask))
        packed.guarded = True
        with in_space(packed):
            r = fn(*lift(args, packed))
        branches.append((packed, [lift(x, packed) for x in (r if isinstance(r, tuple)
                                                             else (r,))]))
        note("cond -> branch packing", f"the {name} branch runs on its "
             f"{packed.size} of {space.size} iterations ({packed.name})")
    (pt, rt), (pf, rf) = branches
    if len(rt) != len(rf) or any(isinstance(x, Row) != isinstance(y, Row)
                                 for x, y in zip(rt, rf, strict=False)):
        raise TypeError("stax.nested: sn.cond branches return different kinds of values")
    merged = tuple(_merge(space, cm, pt, x, pf, y) for x, y in zip(rt, rf, strict=True))
    return merged if len(merged) > 1 else merged[0]


def _branches_taken(mask: np.ndarray) -> str:
    """"then" when every iteration takes the then branch (or there are none), "else" when
    every one takes the else branch, "both" otherwise."""
    if mask.all():
        return "then"
    return "both" if mask.any() else "else"


def _merge(space: Space, cm: np.ndarray, pt: Space, x: Value, pf: Space, y: Value) -> Value:
    """The results of the two packed branches, back in the iterations of `space`."""
    sel = Load(BOOL, Buf(cm), Idx())
    pos_t = Load(INT64, Buf(pt.layout.bounds), Idx())  # the iteration's place in its branch
    pos_f = Load(INT64, Buf(pf.layout.bounds), Idx())
    if isinstance(x, Scalar):
        bx, by = Buf(materialize(x)), Buf(materialize(y))
        return Scalar(space, where(sel, Load(x.dtype, bx, pos_t), Load(y.dtype, by, pos_f)))
    assert isinstance(y, Row)
    parts = []
    for row, pos in ((x, pos_t), (y, pos_f)):
        buf = _elements(row, "sn.cond branches returning")
        parts.append((buf, substitute(row.space.start(), {Idx: pos}),
                      substitute(row.space.length(), {Idx: pos})))
    (bx, sx, lx), (by, sy, ly) = parts
    lengths = materialize(Scalar(space, where(sel, lx, ly)))
    child = Space.child(space, lengths)
    seg = child.segment()
    j = child.inner()
    at = {Idx: seg}
    elem = where(Load(BOOL, Buf(cm), seg),
                 Load(x.dtype, bx, _add(substitute(sx, at), j)),
                 Load(y.dtype, by, _add(substitute(sy, at), j)))
    note("cond returning arrays -> segmented merge",
         f"{child.describe()}: each row is gathered from the branch its iteration took")
    return Row(child, Scalar(child, elem))


def loop(n: Any, body: Callable[[Any, Any], Any], init: Any) -> Any:
    n = to_traced(n)
    kind = n.dtype if isinstance(n, Scalar) else np.asarray(n).dtype
    if kind.kind not in "iu":  # a trip count is a size, as for sn.iota
        raise TypeError(f"stax.nested: sizes must be integers, got "
                        f"{kind if isinstance(n, (Scalar, np.generic)) else type(n).__name__}")
    if not isinstance(n, Scalar) or n.space.parent is None:
        count = guard(_first, materialize(n)) if isinstance(n, Scalar) else int(n)
        if current().parent is None:
            note("loop at the top level", f"{max(count, 0)} sequential iterations")
        else:
            note("map-of-loop -> loop interchange (uniform trip count)",
                 f"{max(count, 0)} iterations, each a map over {current().size} iterations")
        return _run_loop(count, body, init)
    space = n.space
    counts = record(_as_int64, materialize(n))
    uniform, count = guard(_trip_counts, counts)
    if uniform:
        note("map-of-loop -> loop interchange (uniform trip count)",
             f"{max(count, 0)} iterations, each a map over {space.size} iterations")
        return _run_loop(count, body, lift(init, space))
    note("map-of-loop -> active-set loop (irregular trip counts)",
         f"{count} rounds; round r runs the body on the iterations with r < n "
         f"(branch packing)")
    acc = materialized(lift(init, space))
    count_buf = Scalar(space, Load(INT64, Buf(counts), Idx()))
    for r in range(count):
        active = apply_ufunc(np.greater, count_buf, r)
        acc = materialized(cond(active, lambda a, r=r: body(r, a), lambda a: a, (acc,)))
    return acc


def _trip_counts(counts: np.ndarray) -> tuple[bool, int]:
    """(whether every iteration runs the same number of rounds, the largest number)."""
    if len(counts) == 0:
        return True, 0
    return bool(counts.min() == counts.max()), int(counts.max())


def _run_loop(count: int, body: Callable[[Any, Any], Any], acc: Any) -> Any:
    for r in range(max(count, 0)):
        acc = materialized(body(r, acc))
    return acc
