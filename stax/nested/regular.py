"""Regular nests through the main pipeline: a segmented reduction over a uniform layout.

A map of a reduce over rows of equal length (a `Layout.uniform`: k segments of W elements, e.g.
the rows of a 2-D argument) is a plain reduction along the last axis of a (k, W) array. Such a
reduction does not become a segmented kernel: its element expression (`stax.nested.expr`) is
written back as NumPy code over (k, W) arrays (`x[i]` -> the (k, W) view of x, `x[s]` ->
`x[:, None]`, a gather `x[e]` -> `x[e]`, ufunc calls -> the ufuncs, `where`, casts) followed by
`op.reduce(axis=1)`, and that function is compiled by `stax.jit`: the Graph, its fusion rules,
memory planning and kernels, the same pipeline as any NumPy program (issue 12, item 4's first
step; the flattening rule "map-of-reduce -> regular reduction (main pipeline)").

It applies to a single-component ufunc operator (np.add, np.multiply, np.maximum, np.minimum) on
integers or floats, with no pending bounds check, over a non-empty layout, when some element of
the reduced rows is loaded at the element index (the (k, W) view gives the shape); anything else
(tuple or traced Python operators, an index or segment number used as a value, an empty layout)
stays a segmented kernel. The result is `op(ne, op.reduce(v, axis=1))`: the fold from the
neutral element that the segmented kernel computes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stax.api import jit
from stax.explain import explain
from stax.nested import tape
from stax.nested.expr import Arg, Buf, Call, Const, Expr, Idx, Load, Seg, ufunc_call
from stax.nested.kernels import KernelRecord, alloc, empty_layout, log_kernel
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


def _params(e: Expr, width: int, out: dict[tuple[int, str], Param]) -> bool:
    """Collect the buffers `e` reads and how (into `out`); False when `e` is not written
    back: the element or segment index used as a value, or an operator argument."""
    if isinstance(e, Const):
        return True
    if isinstance(e, Load):
        if isinstance(e.index, Idx):
            out.setdefault((id(e.buf.array), _ROWS), (e.buf, _ROWS))
            return True
        out.setdefault((id(e.buf.array), _FLAT), (e.buf, _FLAT))
        return (_segment(e.index, width) or isinstance(e.index, Const)
                or _params(e.index, width, out))
    if isinstance(e, Call):
        return all(_params(a, width, out) for a in e.args)
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


def _program(ufunc: np.ufunc, ne: Const, elem: Expr, params: list[Param]) -> Callable[..., Any]:
    """The reduction as a NumPy function of the parameters, compiled by `stax.jit`."""
    dt = ne.dtype
    keys = [(id(b.array), kind) for b, kind in params]

    def regular_reduction(*arrays: Any) -> Any:
        v = _numpy(elem, dict(zip(keys, arrays, strict=True)))
        typed = {"dtype": dt} if ufunc in (np.add, np.multiply) else {}  # no int promotion
        return ufunc(np.asarray(ne.value, dt)[()], ufunc.reduce(v, axis=1, **typed))

    regular_reduction.__qualname__ = f"regular_{ufunc.__name__}_reduction"
    return jit(regular_reduction)


class _Run:
    """The recorded step: the parameters as views (rows: the layout's (k, W)), the compiled
    program, its result copied into `out` (one element per segment)."""

    def __init__(self, program: Callable[..., Any], kinds: tuple[str, ...]) -> None:
        self.program = program
        self.kinds = kinds

    def views(self, layout: Layout, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        n, k = layout.n, layout.k
        return [a[:n].reshape(k, -1) if kind == _ROWS else a
                for a, kind in zip(arrays, self.kinds, strict=True)]

    def __call__(self, layout: Layout, out: np.ndarray, *arrays: np.ndarray) -> None:
        out[...] = self.program(*self.views(layout, arrays))


def segreduce(layout: Layout, op: Operator, elems: Sequence[Expr],
              summary: str) -> list[np.ndarray] | None:
    """The segmented reduction of `elems` over `layout` computed by the main pipeline, or
    None where it does not apply (the caller runs a segmented kernel)."""
    ufunc = _ufunc(op)
    found: dict[tuple[int, str], Param] = {}
    if (layout.width is None or ufunc is None or len(elems) != 1
            or not _params(elems[0], layout.width, found)
            or all(kind != _ROWS for _, kind in found.values()) or empty_layout(layout, "n")):
        return None
    params = list(found.values())
    run = _Run(_program(ufunc, op.ne[0], elems[0], params), tuple(kind for _, kind in params))
    arrays = [b.array for b, _ in params]
    try:  # compiles it (cached for the call below)
        report = explain(run.program, *run.views(layout, arrays))
    except NotImplementedError:  # something the main pipeline does not compile
        return None
    out = alloc(layout, "k", op.dtypes[0])
    tape.effect(run, layout, out, *arrays)
    log_kernel(KernelRecord("main pipeline", summary, report.compilation.program.cpp,
                            report.code))
    return [out]
