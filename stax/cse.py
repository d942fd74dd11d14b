"""Common-subexpression elimination on the Graph (issue 9, item 2): identical ops on identical
inputs (elementwise ops, casts, views, reductions, scans, ...) are computed once.

`x.var(0), x.mean(0)` traces two `sum(x, axis=0)`; after this pass both uses read one value,
so lowering sees one reduction with two consumers instead of two reductions. A pure function:
Graph in, Graph out. Ops whose result is a graph output stay (NumPy returns distinct arrays,
which the caller may mutate independently); their inputs are still shared. `x * x` becomes
`square(x)`: one consumer of x, not two.
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


def eliminate_common_subexpressions(graph: Graph) -> tuple[Graph, int]:
    """The graph with duplicate ops removed, and how many were removed."""
    outputs = {v.id for v in graph.outputs}
    rename: dict[int, Value] = {}
    seen: dict[tuple[Any, ...], Value] = {}
    ops: list[Op] = []
    for op in graph.ops:
        inputs = tuple(rename.get(v.id, v) for v in op.inputs)
        if op.kind == "elementwise" and op.attrs == (("fn", "multiply"),) and \
                len(inputs) == 2 and inputs[0] == inputs[1] and op.out.dtype != np.dtype(bool):
            # x * x reads x once: one consumer, so lowering may recompute x in this op
            op, inputs = replace(op, attrs=(("fn", "square"),)), inputs[:1]
        key = _key(op, inputs)
        if key is not None and key in seen and op.out.id not in outputs:
            rename[op.out.id] = seen[key]
            continue
        if key is not None:
            seen.setdefault(key, op.out)
        ops.append(op if inputs == op.inputs else replace(op, inputs=inputs))
    removed = len(graph.ops) - len(ops)
    if not removed:
        return graph, 0
    return Graph(graph.inputs, tuple(ops),
                 tuple(rename.get(v.id, v) for v in graph.outputs)), removed
