"""Graph IR: values with shape and dtype, ops with attributes (like a jaxpr).

A Graph is produced by tracing (`stax.frontend`) and consumed by lowering (`stax.lower`).
Everything here is immutable; a transformation builds a new Graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# float16: stored as the header's stax_half (its bits), computed as float32 and rounded per
# op. Complex: the runtime header's stax_complex (NumPy's arithmetic) [E16].
SUPPORTED_DTYPES = tuple(
    np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                          "uint64", "float16", "float32", "float64", "complex64", "complex128")
)


class Shaped:
    """Size and bytes derived from `shape` and `dtype` (graph values and loop-IR buffers)."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # a symbolic size stays symbolic (stax.ir.sym)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


@dataclass(frozen=True)
class Value(Shaped):
    """One array value of the program: `v3: float32[64,128]`."""

    id: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"v{self.id}"

    def typestr(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class Op:
    """`out = kind[attrs](*inputs)`.

    Kinds: input, const, elementwise(fn), cast(dtype), reduce(fn, axes, keepdims, dtype),
    transpose(perm), reshape(shape), slice(starts, steps), broadcast(shape),
    concatenate(axis), scan(fn, axis), gather(axis) (take_along_axis form),
    take(axis), setitem(index), matmul, where.
    """

    kind: str
    inputs: tuple[Value, ...]
    out: Value
    attrs: tuple[tuple[str, Any], ...] = ()

    def attr(self, name: str) -> Any:
        for k, v in self.attrs:
            if k == name:
                return v
        raise KeyError(f"op {self.kind} has no attribute {name!r}")

    def __str__(self) -> str:
        args = ", ".join(str(v) for v in self.inputs)
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attrs)
        inner = ", ".join(s for s in (args, attrs) if s)
        return f"{self.out}: {self.out.typestr()} = {self.kind}({inner})"


@dataclass(frozen=True)
class Graph:
    inputs: tuple[Value, ...]
    ops: tuple[Op, ...]
    outputs: tuple[Value, ...]
    # [SEL] records (with a rule name) of the rewrites applied after tracing, for explain
    rewrites: tuple[Any, ...] = ()

    def producer(self) -> dict[int, Op]:
        return {op.out.id: op for op in self.ops}

    def users(self) -> dict[int, list[Op]]:
        users: dict[int, list[Op]] = {}
        for op in self.ops:
            for v in op.inputs:
                users.setdefault(v.id, []).append(op)
        return users

    def __str__(self) -> str:
        head = ", ".join(f"{v}: {v.typestr()}" for v in self.inputs)
        body = "\n".join(f"  {op}" for op in self.ops if op.kind != "input")
        outs = ", ".join(str(v) for v in self.outputs)
        return f"graph({head}):\n{body}\n  return ({outs})"
