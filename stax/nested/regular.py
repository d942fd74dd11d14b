"""Regular nests through the main pipeline: reductions, scans and maps over uniform layouts.

Work over rows of equal length (a `Layout.uniform`: k segments of W elements, e.g. the rows
of a 2-D argument) is plain NumPy code over a (k, W) array, so it does not become a segmented
kernel: the element expression (`stax.nested.expr`) is written back as NumPy code over (k, W)
arrays (`x[i]` -> the (k, W) view of x, `x[s]` -> `x[:, None]`, a gather `x[e]` -> `x[e]`,
ufunc calls -> the ufuncs, `where`, casts), and that function is compiled by `stax.jit`: the
Graph, its fusion rules, memory planning and kernels, the same pipeline as any NumPy program
(issue 12, item 4: regular nests stay regular). Three flattening rules use it:

- "map-of-reduce -> regular reduction (main pipeline)": `op(ne, op.reduce(v, axis=1))`;
- "map-of-scan -> regular scan (main pipeline)": `op.accumulate(v, axis=1)`, each prefix
  folded from the neutral element as the segmented scan does (`_accumulated`);
- "map over regular rows -> elementwise program (main pipeline)": the values of a map over
  the rows, materialized as the (k, W) result of the expression.

The operator of a reduction or scan is a single-component ufunc (np.add, np.multiply,
np.maximum, np.minimum) on integers or floats; there is no pending bounds check; the layout
is not empty; some element of the rows is loaded at the element index (the (k, W) view gives
the shape). Anything else (tuple or traced Python operators, an index or segment number used
as a value, an empty layout) stays a segmented kernel. Float sums and products are
reassociated as NumPy's own reductions and scans are (`op(ne, ...)` folds ne last).
The result of a step is the program's own array (no copy into a separate buffer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stax.api import jit
from stax.explain import explain
from stax.nested import tape
from stax.nested.expr import Arg, Buf, Call, Const, Expr, Idx, Load, Seg, ufunc_call
from stax.nested.kernels import KernelRecord, empty_layout, log_kernel, settle
from stax.nested.spec import Layout, Operator

UFUNCS = {f"np.{u.__name__}": u for u in (np.add, np.multiply, np.maximum, np.minimum)}
_ROWS, _FLAT = "rows", "flat"  # how the program receives a buffer: its (k, W) view, or 1-D

Param = tuple[Buf, str]


def _ufunc(op: Operator) -> np.ufunc | None:
    """The ufunc `op` is, when it is exactly `ufunc(a0, b0)` on one integer or float."""
    ufunc = UFUNCS.get(op.name)
    if ufunc is None or len(op.dtypes) != 1 or op.dtypes[0].kind not in "iuf":
        return None
    dt = op.dtypes[0]
    return ufunc if op.combine[0] == ufunc_call(ufunc, (Arg(dt, "a0"), Arg(dt, "b0"))) else None


def _segment(e: Expr, width: int | None = None) -> bool:
    """Whether `e` is the segment index: `Seg`, or i // W (a uniform layout's, when `width`
    is given: how a value of the enclosing level is replicated over regular rows)."""
    return isinstance(e, Seg) or (
        isinstance(e, Call) and e.fn == "floor_divide" and isinstance(e.args[0], Idx)
        and isinstance(e.args[1], Const) and e.args[1].value == (width or e.args[1].value))


def _params(e: Expr, width: int, out: dict[tuple[int, str], Param],
            branch: bool = False) -> bool:
    """Collect the buffers `e` reads and how (into `out`); False when `e` is not written
    back: the element or segment index used as a value, an operator argument, or a gather
    in a branch of a `where` (`branch`: the kernels read it only where the branch is taken,
    np.where computes both, and the index may be out of bounds elsewhere, e.g. the packed
    iterations of an active-set loop)."""
    if isinstance(e, Const):
        return True
    if isinstance(e, Load):
        if isinstance(e.index, Idx):
            out.setdefault((id(e.buf.array), _ROWS), (e.buf, _ROWS))
            return True
        out.setdefault((id(e.buf.array), _FLAT), (e.buf, _FLAT))
        if _segment(e.index, width) or isinstance(e.index, Const):
            return True  # in bounds (the kernels read these in every lane too)
        return not branch and _params(e.index, width, out)
    if isinstance(e, Call):
        return all(_params(a, width, out, branch or (e.fn == "where" and j > 0))
                   for j, a in enumerate(e.args))
    return False


def _numpy(e: Expr, env: dict[tuple[int, str], Any]) -> Any:
    """`e` as NumPy code over the program's arguments (traced by stax.jit)."""
    if isinstance(e, Const):
        return np.asarray(e.value, e.dtype)[()]
    if isinstance(e, Load):
        if isinstance(e.index, Idx):
            return env[id(e.buf.array), _ROWS]
        flat = env[id(e.buf.array), _FLAT]
        if _segment(e.index):
            return flat[:, None]
        if isinstance(e.index, Const):
            return flat[int(e.index.value)]
        return flat[_numpy(e.index, env)]
    assert isinstance(e, Call)
    args = [_numpy(a, env) for a in e.args]
    if e.fn == "cast":
        return args[0].astype(e.dtype)
    v = np.where(*args) if e.fn == "where" else getattr(np, e.fn)(*args)
    return v if v.dtype == e.dtype else v.astype(e.dtype)


def _identity(ufunc: np.ufunc, ne: Const) -> bool:
    """Whether op(ne, x) == x for every x of ne's dtype, bit for bit (float sums: -0.0)."""
    dt, value = ne.dtype, ne.value
    if ufunc is np.multiply:
        return value == 1
    if ufunc is np.add:
        return value == 0 and (dt.kind != "f" or bool(np.signbit(value)))
    low, high = (-np.inf, np.inf) if dt.kind == "f" else (np.iinfo(dt).min, np.iinfo(dt).max)
    return value == (low if ufunc is np.maximum else high)


def _accumulated(ufunc: np.ufunc, ne: Const, v: Any, reduce: bool) -> Any:
    """The fold from `ne` along the rows: `op(ne, op.reduce(v, axis=1))` or, for a scan,
    each prefix folded from ne. A scan from an identity is `op.accumulate(v, axis=1)` alone,
    and a float sum from +0.0 the accumulation of `v + 0.0` (no -0.0 element: a prefix sum is
    then never -0.0, and the sums from -0.0 equal those from +0.0), both fused by the main
    pipeline into the scan's loads; any other ne costs a pass over the result."""
    dt = ne.dtype
    typed = {"dtype": dt} if ufunc in (np.add, np.multiply) else {}  # no integer promotion
    first = np.asarray(ne.value, dt)[()]
    if not reduce and _identity(ufunc, ne):
        return ufunc.accumulate(v, axis=1, **typed)
    if not reduce and ufunc is np.add and dt.kind == "f" and ne.value == 0:
        return ufunc.accumulate(v + first, axis=1, **typed)
    folded = (ufunc.reduce if reduce else ufunc.accumulate)(v, axis=1, **typed)
    return ufunc(first, folded)


class _Run:
    """The recorded step: the compiled program on the parameters as views (rows: the
    layout's (k, W)); its result flat and contiguous in `dtype` (one element per segment for
    a reduction, per element for a scan or a map)."""

    def __init__(self, program: Callable[..., Any], kinds: tuple[str, ...],
                 dtype: np.dtype) -> None:
        self.program = program
        self.kinds = kinds
        self.dtype = dtype

    def views(self, layout: Layout, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        n, k = layout.n, layout.k
        return [a[:n].reshape(k, -1) if kind == _ROWS else a
                for a, kind in zip(arrays, self.kinds, strict=True)]

    def __call__(self, layout: Layout, *arrays: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self.program(*self.views(layout, arrays)),
                                    self.dtype).reshape(-1)


def _route(layout: Layout, elems: Sequence[Expr], name: str, dtype: np.dtype,
           body: Callable[[list[Any]], Any], summary: str) -> np.ndarray | None:
    """`body` (NumPy code over the values of `elems` as (k, W) arrays) compiled by stax.jit
    and run over `layout` as a recorded step; None where the main pipeline does not apply:
    an irregular layout, an element not written back, no element loaded at the element
    index (nothing gives the (k, W) shape), no elements, or a program it does not compile."""
    found: dict[tuple[int, str], Param] = {}
    if (layout.width is None or not all(_params(e, layout.width, found) for e in elems)
            or all(kind != _ROWS for _, kind in found.values()) or empty_layout(layout, "n")):
        return None
    params = list(found.values())
    keys = [(id(b.array), kind) for b, kind in params]

    def program(*arrays: Any) -> Any:
        env = dict(zip(keys, arrays, strict=True))
        return body([_numpy(e, env) for e in elems])

    program.__qualname__ = name
    run = _Run(jit(program), tuple(kind for _, kind in params), dtype)
    arrays = [b.array for b, _ in params]
    settle(arrays)  # results of deferred reductions are computed before the program reads them
    try:  # compiles it (cached for the run below)
        report = explain(run.program, *run.views(layout, arrays))
    except NotImplementedError:  # something the main pipeline does not compile
        return None
    log_kernel(KernelRecord("main pipeline", summary, report.compilation.program.cpp,
                            report.code))
    return tape.record(run, layout, *arrays)


def segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
              summary: str) -> list[np.ndarray] | None:
    """The segmented reduction of `elems` over `layout` computed by the main pipeline, or
    None where it does not apply (the caller runs a segmented kernel)."""
    return _folded(layout, op, elems, summary, reduce=True)


def segscan(layout: Layout, op: Operator, elems: Sequence[Expr],
            summary: str) -> list[np.ndarray] | None:
    """The inclusive segmented scan of `elems` over `layout` (`op.accumulate(axis=1)` from
    ne) computed by the main pipeline, or None where it does not apply."""
    return _folded(layout, op, elems, summary, reduce=False)


def _folded(layout: Layout, op: Operator, elems: Sequence[Expr], summary: str,
            reduce: bool) -> list[np.ndarray] | None:
    ufunc = _ufunc(op)
    if ufunc is None or len(elems) != 1:
        return None
    ne = op.ne[0]
    out = _route(layout, elems, f"regular_{ufunc.__name__}_{'reduction' if reduce else 'scan'}",
                 op.dtypes[0], lambda v: _accumulated(ufunc, ne, v[0], reduce), summary)
    return None if out is None else [out]


def map_(layout: Layout, value: Expr, summary: str) -> np.ndarray | None:
    """The values of `value` at every element of `layout` (regular rows) computed by the
    main pipeline as one elementwise program over (k, W) arrays, or None where it does not
    apply (the caller runs a map kernel)."""
    return _route(layout, [value], "regular_map", value.dtype, lambda v: v[0], summary)
