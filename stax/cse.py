"""Common-subexpression elimination on the Graph (issue 9, item 2): identical ops on identical
inputs (elementwise ops, casts, views, reductions, scans, ...) are computed once.

`x.var(0), x.mean(0)` traces two `sum(x, axis=0)`; after this pass both uses read one value,
so lowering sees one reduction with two consumers instead of two reductions. A pure function:
Graph in, Graph out. Ops whose result is a graph output stay (NumPy returns distinct arrays,
which the caller may mutate independently); their inputs are still shared.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from stax.graph import Graph, Op, Value

# kinds never merged: each input is its own argument; constant arrays carry data
UNIQUE_KINDS = frozenset({"input", "constant_array"})


def _hashable(x: Any) -> Any:
    """A hashable key for an attribute value, or raise TypeError (then the op is kept).
    Floats compare by bits: -0.0 and 0.0 differ, NaN equals itself."""
    if isinstance(x, (float, np.floating)):
        return ("f", type(x).__name__, np.float64(x).tobytes())
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(_hashable(v) for v in x))
    if isinstance(x, np.ndarray):
        raise TypeError("array attribute")
    hash(x)
    return (type(x).__name__, x)


def _key(op: Op, inputs: tuple[Value, ...]) -> tuple[Any, ...] | None:
    if op.kind in UNIQUE_KINDS:
        return None
    try:
        attrs = _hashable(op.attrs)
    except TypeError:
        return None
    return (op.kind, tuple(v.id for v in inputs), attrs, op.out.shape, op.out.dtype.str)


def _canonical(op: Op, fresh: int) -> list[Op]:
    """Rewrites that make equal computations look equal: `x * x` -> `square(x)` (x read once:
    one consumer, so lowering may recompute x inside the op); a reduction with keepdims ->
    the reduction without, then a reshape (so `x.sum(0, keepdims=True)` and `x.sum(0)` meet)."""
    if op.kind == "elementwise" and op.attrs == (("fn", "multiply"),) and \
            len(op.inputs) == 2 and op.inputs[0] == op.inputs[1] and \
            op.out.dtype != np.dtype(bool):
        return [replace(op, inputs=op.inputs[:1], attrs=(("fn", "square"),))]
    if op.kind == "reduce" and op.attr("keepdims"):
        axes = op.attr("axes")
        shape = tuple(s for k, s in enumerate(op.inputs[0].shape) if k not in axes)
        flat = Value(fresh, shape, op.out.dtype)
        attrs = tuple((k, False if k == "keepdims" else v) for k, v in op.attrs)
        return [replace(op, out=flat, attrs=attrs),
                Op("reshape", (flat,), op.out, (("shape", op.out.shape),))]
    return [op]


def eliminate_common_subexpressions(graph: Graph) -> tuple[Graph, int]:
    """The graph with duplicate ops removed, and how many were removed."""
    outputs = {v.id for v in graph.outputs}
    rename: dict[int, Value] = {}
    seen: dict[tuple[Any, ...], Value] = {}
    ops: list[Op] = []
    fresh = max([v.id for op in graph.ops for v in (*op.inputs, op.out)]
                + [v.id for v in graph.inputs], default=0) + 1
    for original in graph.ops:
        inputs = tuple(rename.get(v.id, v) for v in original.inputs)
        rewritten = _canonical(replace(original, inputs=inputs), fresh)
        fresh += len(rewritten) - 1
        for op in rewritten:
            inputs = tuple(rename.get(v.id, v) for v in op.inputs)
            key = _key(op, inputs)
            if key is not None and key in seen and op.out.id not in outputs:
                rename[op.out.id] = seen[key]
                continue
            if key is not None:
                seen.setdefault(key, op.out)
            ops.append(op if inputs == op.inputs else replace(op, inputs=inputs))
    if not rename and len(ops) == len(graph.ops) and all(
            a is b for a, b in zip(ops, graph.ops, strict=True)):
        return graph, 0
    return Graph(graph.inputs, tuple(ops),
                 tuple(rename.get(v.id, v) for v in graph.outputs)), len(rename)
