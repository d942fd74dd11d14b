"""Core ATen operators as the NumPy expressions Stax traces.

Each entry maps an ATen overload to a function of (`Out`, args, kwargs) that computes the op
on Stax tracers (or concrete NumPy values for constants) with NumPy functions. The
interpreter in `stax.torch.graph` casts every result to the dtype PyTorch gives the node and
refuses a result whose shape differs from PyTorch's, so an entry only has to get the values
right; an op missing here runs through eager PyTorch (a per-op fallback).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

aten = torch.ops.aten


@dataclass(frozen=True)
class Out:
    """What PyTorch says a node produces: one (shape, dtype) per tensor result."""

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[np.dtype, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.shapes[0]

    @property
    def dtype(self) -> np.dtype:
        return self.dtypes[0]


OpFn = Callable[..., Any]
TABLE: dict[Any, OpFn] = {}


def _register(*names: str) -> Callable[[OpFn], OpFn]:
    def deco(fn: OpFn) -> OpFn:
        for name in names:
            packet, _, overload = name.partition(".")
            TABLE[getattr(getattr(aten, packet), overload or "default")] = fn
        return fn
    return deco


def _axes(dims: Sequence[int] | int | None, ndim: int) -> tuple[int, ...] | None:
    """ATen's dim lists: None or [] reduce every axis."""
    if dims is None:
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:
        return None
    return tuple(d % max(ndim, 1) for d in dims)


# ---------------------------------------------------------------- elementwise
_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "atan2": np.arctan2, "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "pow": np.power,
    "hypot": np.hypot, "copysign": np.copysign,
}


def _present(names: Sequence[str]) -> list[str]:
    """The overload names among `names` that this PyTorch has."""
    found = []
    for name in names:
        packet, _, overload = name.partition(".")
        if hasattr(aten, packet) and hasattr(getattr(aten, packet), overload or "default"):
            found.append(name)
    return found


for _name, _ufunc in _BINARY.items():
    def _binary(out: Out, a: Any, b: Any, *, alpha: Any = 1, _f: Any = _ufunc) -> Any:
        if _f is np.power and out.dtype.kind != "f":  # PyTorch raises for negative powers
            raise NotImplementedError("integer pow (PyTorch refuses negative exponents)")
        return _f(a, b if alpha == 1 else b * alpha)
    _register(*_present([f"{_name}.{o}" for o in (
        "Tensor", "Scalar", "Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor", "default")]))(
        _binary)


@_register("div.Tensor", "div.Scalar")
def _div(out: Out, a: Any, b: Any) -> Any:
    return np.true_divide(a, b)


def _float_only(out: Out, what: str) -> None:
    """PyTorch raises ZeroDivisionError for integer division by zero where Stax gives 0 with
    NumPy's warning: integer division stays with PyTorch."""
    if out.dtype.kind != "f":
        raise NotImplementedError(f"integer {what} (PyTorch raises on division by zero)")


@_register("div.Tensor_mode", "div.Scalar_mode")
def _div_mode(out: Out, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
    if rounding_mode is None:
        return np.true_divide(a, b)
    _float_only(out, "division")
    if rounding_mode == "floor":  # Python's floored division, as PyTorch computes it
        return np.floor_divide(a, b)
    return np.trunc(np.true_divide(a, b))


@_register(*_present(["remainder.Tensor", "remainder.Scalar", "remainder.Scalar_Tensor"]))
def _remainder(out: Out, a: Any, b: Any) -> Any:
    _float_only(out, "remainder")
    return np.remainder(a, b)


_UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "round": np.rint, "sign": np.sign,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "logical_not": np.logical_not, "bitwise_not": np.invert, "reciprocal": np.reciprocal,
    "signbit": np.signbit,
}
for _name, _ufunc in _UNARY.items():
    _register(*_present([f"{_name}.default"]))(
        lambda out, a, _f=_ufunc: _f(a))


@_register("rsqrt.default")
def _rsqrt(out: Out, a: Any) -> Any:
    return 1 / np.sqrt(a)


@_register("sigmoid.default")
def _sigmoid(out: Out, a: Any) -> Any:
    return 1 / (1 + np.exp(-a))


@_register("relu.default")
def _relu(out: Out, a: Any) -> Any:
    return np.maximum(a, 0)


# erf for float32 without an erf in Stax's NumPy frontend: the Maclaurin series below 0.5
# (truncation error < 1e-9 relative) and Numerical Recipes' Chebyshev fit of erfc (fractional
# error < 1.2e-7) above; float64 erf keeps PyTorch's (per-op fallback).
_TAYLOR = (1.0, -1 / 3, 1 / 10, -1 / 42, 1 / 216, -1 / 1320, 1 / 9360)
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
         -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erf_parts(x: Any) -> tuple[Any, Any]:
    """erf(x) by the series (exact where |x| < 0.5) and erfc(|x|) by the Chebyshev fit."""
    z = np.abs(x)
    x2 = x * x
    series = np.float32(0.0)
    for c in reversed(_TAYLOR):
        series = series * x2 + np.float32(c)
    t = 1 / (1 + np.float32(0.5) * z)
    poly = np.float32(0.0)
    for c in reversed(_ERFC[1:]):
        poly = (poly + np.float32(c)) * t
    return x * series * np.float32(1.1283791670955126), \
        t * np.exp(-z * z + np.float32(_ERFC[0]) + poly)


def erf32(x: Any) -> Any:
    small, erfc = _erf_parts(x)
    return np.where(np.abs(x) < 0.5, small, np.sign(x) * (1 - erfc))


def _one_plus_erf32(x: Any) -> Any:
    """1 + erf(x) without cancellation for negative x (erfc(-x))."""
    small, erfc = _erf_parts(x)
    return np.where(np.abs(x) < 0.5, 1 + small, np.where(x > 0, 2 - erfc, erfc))


@_register("erf.default")
def _erf(out: Out, a: Any) -> Any:
    if out.dtype != np.float32:
        raise NotImplementedError(f"erf in {out.dtype} (only float32 is approximated)")
    return erf32(a)


@_register("gelu.default")
def _gelu(out: Out, a: Any, approximate: str = "none") -> Any:
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)))
    if out.dtype != np.float32:
        raise NotImplementedError(f"gelu in {out.dtype} (erf is approximated in float32 only)")
    return 0.5 * a * _one_plus_erf32(a * np.float32(0.7071067811865476))


@_register("clamp.default", "clamp.Tensor")
def _clamp(out: Out, a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    if min is not None:
        a = np.maximum(a, min)
    if max is not None:
        a = np.minimum(a, max)
    return a


TABLE[torch.ops.prims.fma.default] = lambda out, a, b, c: a * b + c  # AdamW (foreach)


@_register("where.self")
def _where(out: Out, c: Any, a: Any, b: Any) -> Any:
    return np.where(c, a, b)


# ---------------------------------------------------------------- reductions
@_register("sum.dim_IntList", "sum.default")
def _sum(out: Out, a: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
         ) -> Any:
    return np.sum(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=out.dtype)


@_register("mean.dim", "mean.default")
def _mean(out: Out, a: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
          ) -> Any:
    return np.mean(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@_register("prod.dim_int", "prod.default")
def _prod(out: Out, a: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
          ) -> Any:
    return np.prod(a, axis=_axes(dim, a.ndim), keepdims=keepdim, dtype=out.dtype)


@_register("amax.default")
def _amax(out: Out, a: Any, dim: Any = (), keepdim: bool = False) -> Any:
    return np.max(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@_register("amin.default")
def _amin(out: Out, a: Any, dim: Any = (), keepdim: bool = False) -> Any:
    return np.min(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@_register("any.default", "any.dim", "any.dims")
def _any(out: Out, a: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return np.any(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@_register("all.default", "all.dim", "all.dims")
def _all(out: Out, a: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return np.all(a, axis=_axes(dim, a.ndim), keepdims=keepdim)


@_register("argmax.default")
def _argmax(out: Out, a: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return np.argmax(np.reshape(a, (-1,)), keepdims=keepdim and a.ndim > 0)
    return np.argmax(a, axis=dim, keepdims=keepdim)


@_register("argmin.default")
def _argmin(out: Out, a: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        return np.argmin(np.reshape(a, (-1,)), keepdims=keepdim and a.ndim > 0)
    return np.argmin(a, axis=dim, keepdims=keepdim)


@_register("var.correction")
def _var(out: Out, a: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
         ) -> Any:
    return np.var(a, axis=_axes(dim, a.ndim), ddof=1 if correction is None else correction,
                  keepdims=keepdim)


@_register("var_mean.correction")
def _var_mean(out: Out, a: Any, dim: Any = None, *, correction: Any = None,
              keepdim: bool = False) -> Any:
    return (_var(out, a, dim, correction=correction, keepdim=keepdim),
            np.mean(a, axis=_axes(dim, a.ndim), keepdims=keepdim))


@_register("cumsum.default")
def _cumsum(out: Out, a: Any, dim: int, *, dtype: Any = None) -> Any:
    return np.cumsum(a, axis=dim, dtype=out.dtype)


@_register("cumprod.default")
def _cumprod(out: Out, a: Any, dim: int, *, dtype: Any = None) -> Any:
    return np.cumprod(a, axis=dim, dtype=out.dtype)


# ---------------------------------------------------------------- composite ops kept by ATen
@_register("_softmax.default")
def _softmax(out: Out, a: Any, dim: int, half_to_float: bool) -> Any:
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


@_register("_log_softmax.default")
def _log_softmax(out: Out, a: Any, dim: int, half_to_float: bool) -> Any:
    shifted = a - np.max(a, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


@_register("native_layer_norm.default")
def _layer_norm(out: Out, a: Any, shape: Sequence[int], weight: Any, bias: Any, eps: float
                ) -> Any:
    axes = tuple(range(a.ndim - len(shape), a.ndim))
    mean = np.mean(a, axis=axes, keepdims=True)
    centered = a - mean
    rstd = 1 / np.sqrt(np.mean(centered * centered, axis=axes, keepdims=True) + eps)
    y = centered * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


def _channel(v: Any, ndim: int) -> Any:
    """A per-channel vector shaped to broadcast against an (N, C, ...) tensor."""
    return np.reshape(v, (-1,) + (1,) * (ndim - 2))


@_register("_native_batch_norm_legit_functional.default")
def _batch_norm_train(out: Out, a: Any, weight: Any, bias: Any, running_mean: Any,
                      running_var: Any, training: bool, momentum: float, eps: float) -> Any:
    if not training:
        raise NotImplementedError("batch norm with training=False in the functional form")
    axes = (0, *range(2, a.ndim))
    n = a.size // a.shape[1]
    mean = np.mean(a, axis=axes)
    centered = a - _channel(mean, a.ndim)
    var = np.mean(centered * centered, axis=axes)
    rstd = 1 / np.sqrt(var + eps)
    y = _affine(centered * _channel(rstd, a.ndim), weight, bias)
    new_mean = running_mean * (1 - momentum) + mean * momentum
    new_var = running_var * (1 - momentum) + var * (momentum * n / max(n - 1, 1))
    return y, mean, rstd, new_mean, new_var


def _affine(y: Any, weight: Any, bias: Any) -> Any:
    if weight is not None:
        y = y * _channel(weight, y.ndim)
    if bias is not None:
        y = y + _channel(bias, y.ndim)
    return y


@_register("_native_batch_norm_legit_no_training.default")
def _batch_norm_eval(out: Out, a: Any, weight: Any, bias: Any, running_mean: Any,
                     running_var: Any, momentum: float, eps: float) -> Any:
    rstd = 1 / np.sqrt(running_var + eps)
    y = _affine((a - _channel(running_mean, a.ndim)) * _channel(rstd, a.ndim), weight, bias)
    return (y, *(np.zeros(s, d) for s, d in zip(out.shapes[1:], out.dtypes[1:], strict=True)))


# ---------------------------------------------------------------- linear algebra (extern BLAS)
def _same_dtypes(*operands: Any) -> None:
    """PyTorch's matrix products refuse mixed dtypes (NumPy would promote): such a node
    runs in eager PyTorch, which raises its own error."""
    if len({o.dtype for o in operands if hasattr(o, "dtype")}) > 1:
        raise NotImplementedError("a matrix product of mixed dtypes")


@_register("mm.default", "bmm.default", "matmul.default")
def _mm(out: Out, a: Any, b: Any) -> Any:
    _same_dtypes(a, b)
    return a @ b


@_register("addmm.default")
def _addmm(out: Out, bias: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    _same_dtypes(bias, a, b)
    return with_bias(a @ b, bias, beta=beta, alpha=alpha)


def with_bias(prod: Any, bias: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """addmm's and baddbmm's `beta * bias + alpha * prod` (a zero beta ignores the bias,
    NaN included, as PyTorch does)."""
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (bias if beta == 1 else bias * beta)


@_register("baddbmm.default")
def _baddbmm(out: Out, bias: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    return _addmm(out, bias, a, b, beta=beta, alpha=alpha)


# ---------------------------------------------------------------- views and layout
@_register("view.default", "_unsafe_view.default", "reshape.default", "view_copy.default")
def _view(out: Out, a: Any, shape: Sequence[int]) -> Any:
    return np.reshape(a, tuple(shape))


@_register("permute.default", "permute_copy.default")
def _permute(out: Out, a: Any, dims: Sequence[int]) -> Any:
    return np.transpose(a, tuple(d % a.ndim for d in dims))


@_register("t.default")
def _t(out: Out, a: Any) -> Any:
    return np.transpose(a)


@_register("transpose.int")
def _transpose(out: Out, a: Any, d0: int, d1: int) -> Any:
    return np.swapaxes(a, d0, d1)


@_register("expand.default", "expand_copy.default")
def _expand(out: Out, a: Any, shape: Sequence[int], *, implicit: bool = False) -> Any:
    lead = len(shape) - a.ndim
    return np.broadcast_to(a, tuple(a.shape[i - lead] if s == -1 else s
                                    for i, s in enumerate(shape)))


@_register("unsqueeze.default")
def _unsqueeze(out: Out, a: Any, dim: int) -> Any:
    return np.expand_dims(a, dim % (a.ndim + 1))


@_register("squeeze.dim", "squeeze.dims", "squeeze.default")
def _squeeze(out: Out, a: Any, dim: Any = None) -> Any:
    dims = range(a.ndim) if dim is None else [dim] if isinstance(dim, int) else dim
    # PyTorch leaves a named dimension alone unless its size is 1.
    return np.reshape(a, tuple(n for i, n in enumerate(a.shape)
                               if not (n == 1 and any(i == d % a.ndim for d in dims))))


@_register("slice.Tensor", "slice_copy.Tensor")
def _slice(out: Out, a: Any, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Any:
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


@_register("select.int", "select_copy.int")
def _select(out: Out, a: Any, dim: int, index: int) -> Any:
    if not -a.shape[dim] <= index < a.shape[dim]:
        raise IndexError(f"select(): index {index} out of range for size {a.shape[dim]}")
    idx: list[Any] = [slice(None)] * a.ndim
    idx[dim] = index
    return a[tuple(idx)]


@_register("alias.default", "clone.default", "lift_fresh_copy.default")
def _clone(out: Out, a: Any, *, memory_format: Any = None) -> Any:
    return a


@_register("_to_copy.default")
def _to_copy(out: Out, a: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None, non_blocking: bool = False, memory_format: Any = None
             ) -> Any:
    if device is not None and torch.device(device).type != "cpu":
        raise NotImplementedError(f"a copy to device {device}")
    return a  # the interpreter casts every result to PyTorch's dtype


@_register("copy.default")
def _copy(out: Out, dst: Any, src: Any, non_blocking: bool = False) -> Any:
    return np.broadcast_to(src, dst.shape)


@_register("cat.default")
def _cat(out: Out, tensors: Sequence[Any], dim: int = 0) -> Any:
    # PyTorch skips 1-D empty tensors in cat (a legacy rule); NumPy would refuse them.
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return np.concatenate(kept, axis=dim) if kept else np.zeros(out.shape, out.dtype)


@_register("split_with_sizes.default")
def _split_with_sizes(out: Out, a: Any, sizes: Sequence[int], dim: int = 0) -> Any:
    starts = np.cumsum([0, *sizes])
    return tuple(_slice(out, a, dim, int(starts[k]), int(starts[k + 1]))
                 for k in range(len(sizes)))


@_register("slice_scatter.default")
def _slice_scatter(out: Out, a: Any, src: Any, dim: int = 0, start: int | None = None,
                   end: int | None = None, step: int = 1) -> Any:
    """`a` with its slice along `dim` replaced by `src` (the backward of slicing): the parts
    of `a` before and after the slice around `src`."""
    if step != 1:
        raise NotImplementedError("slice_scatter with a step")
    dim %= a.ndim
    first, last, _ = slice(start, end).indices(a.shape[dim])
    parts = [_slice(out, a, dim, 0, first), np.broadcast_to(src, _sliced(a.shape, dim, first,
                                                                         max(first, last))),
             _slice(out, a, dim, max(first, last), None)]
    kept = [p for p in parts if p.shape[dim]]
    return np.concatenate(kept, axis=dim) if kept else np.zeros(out.shape, out.dtype)


def _sliced(shape: tuple[int, ...], dim: int, first: int, last: int) -> tuple[int, ...]:
    return (*shape[:dim], last - first, *shape[dim + 1:])


# ---------------------------------------------------------------- gathers and creation
@_register("index.Tensor")
def _index(out: Out, a: Any, indices: Sequence[Any]) -> Any:
    if any(i is not None and i.dtype == np.bool_ for i in indices):
        raise NotImplementedError("boolean mask indexing (data-dependent shape)")
    return a[tuple(slice(None) if i is None else i for i in indices)]


@_register("index_select.default")
def _index_select(out: Out, a: Any, dim: int, index: Any) -> Any:
    return np.take(a, index, axis=dim)


@_register("embedding.default")
def _embedding(out: Out, weight: Any, indices: Any, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    return np.take(weight, indices, axis=0)


@_register("gather.default")
def _gather(out: Out, a: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:
    if index.shape[:dim] + index.shape[dim + 1:] != a.shape[:dim] + a.shape[dim + 1:]:
        raise NotImplementedError("gather with an index smaller than the input")
    return np.take_along_axis(a, index, axis=dim)


# Creation ops depend on no tensor's values: PyTorch evaluates them while Stax traces, and
# the result enters the Stax program as a constant (empty ones as zeros, so that equal
# programs stay equal in the compile cache).
CREATION = frozenset(getattr(getattr(aten, p), o) for p, o in (
    ("full", "default"), ("zeros", "default"), ("ones", "default"),
    ("scalar_tensor", "default"), ("new_full", "default"), ("new_zeros", "default"),
    ("new_ones", "default"), ("full_like", "default"), ("zeros_like", "default"),
    ("ones_like", "default"), ("arange", "default"), ("arange", "start"),
    ("arange", "start_step")))
EMPTY = frozenset((aten.empty.memory_format, aten.new_empty.default, aten.empty_like.default,
                   aten.empty_strided.default))
