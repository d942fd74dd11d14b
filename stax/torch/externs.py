"""ATen ops that PyTorch computes inside a Stax segment, as extern calls.

Convolutions, pooling and embedding bags have no Stax translation; run as eager ops between
segments they split a graph into several segments (a call each, and every value crossing a
boundary handed over through memory). As extern calls (the mechanism that runs NumPy's sort
or LAPACK on a program's buffers, through the runtime's `out=` hook,
`stax.runtime.externs.register_into`) they run inside the segment: the compiled program's
wrapper calls the PyTorch op on zero-copy tensors of its buffers, and PyTorch copies the
result into the node's buffer (max pooling computes it there, through its `out` overload; the
result tensor of a convolution or an embedding bag becomes the node's buffer itself).

Each tensor result is one extern node that computes the op: an op whose results the graph
uses several of is either recomputed per result (pooling: cheap), asked for one result per
call (`convolution_backward`'s output mask), or left to eager PyTorch (other ops).

Matrix products (`mm`, `bmm`, `addmm`, `baddbmm` in floating point) are extern calls too
(`matrix_product`): PyTorch's matmul (its BLAS, as eager's) on zero-copy tensors of the
buffers the operands are views of, the views (transposes, reshapes, expansions) replayed on
those tensors, written straight into the node's buffer (`out=`). Traced as Stax's own matmul,
an operand like `permute(w)` would be copied into a buffer of its own on every call (a strided
transpose; for a weight gradient `dy.T @ x` the copy of `dy` cost more than the product),
while BLAS reads a transposed matrix as it is. PyTorch's BLAS rather than NumPy's: the
OpenBLAS that NumPy wheels bring ran the transformer's and MLP's products 20-30% slower than
PyTorch's MKL on this machine (AVX-512; OpenBLAS picks its Haswell kernels).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.fx as fx
import torch.utils._pytree as pytree

from stax.frontend import functions
from stax.frontend import numpy_api as api
from stax.frontend.trace import Tracer
from stax.runtime import externs
from stax.torch.ops import TABLE

aten = torch.ops.aten

# op -> how the call for its result `j` is made (None: only a single used result is run).
_OneResult = Callable[[int, tuple[Any, ...]], tuple[Any, ...]]


def _recompute(j: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return args


def _conv_backward_mask(j: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """convolution_backward's last argument says which gradients it computes: one each."""
    if len(args) != 11:  # the output mask is not the last positional argument
        raise NotImplementedError(f"convolution_backward with {len(args)} arguments")
    return (*args[:-1], [k == j for k in range(3)])


EXTERN: dict[Any, _OneResult | None] = {
    aten.convolution.default: None,
    aten.convolution_backward.default: _conv_backward_mask,
    aten.max_pool2d_with_indices.default: _recompute,
    aten.max_pool2d_with_indices_backward.default: None,
    aten.avg_pool2d.default: None,
    aten.avg_pool2d_backward.default: None,
    aten._adaptive_avg_pool2d.default: None,
    aten._adaptive_avg_pool2d_backward.default: None,
    aten._embedding_bag.default: None,
    aten._embedding_bag_backward.default: None,
}


# [TORCH6] Convolutions whose result (at the input's height and width) is smaller run on NCHW
# tensors: see `_channels_last`.
CHANNELS_LAST_BYTES = 1 << 20


def _channels_last(args: list[Any], nhwc: bool) -> list[Any]:
    """oneDNN's 2-D convolution is several times faster on channels-last tensors (as
    Inductor lays them out): input and weight are converted for the call (the result is
    copied back into the NCHW buffer by the extern call anyway). Measured on 256x3x16x16
    float32 to 32 channels, one thread: 16 ms NCHW, 3.9 ms converting. [TORCH6] Not for
    small ones, where the conversions cost more than they save (one thread, CPU time,
    convolution and copy into an NCHW buffer, NCHW vs converted; 3x3 kernels on 16x16 images):
    3 -> 32 channels at batch 1 29 vs 69 us, batch 4 74 vs 140, batch 16 (512 KiB) 217 vs 420,
    batch 64 (2 MiB) 3693 vs 1588; 32 -> 64 channels at batch 4 (256 KiB) 528 vs 677. Where
    the result crosses in channels-last order (`nhwc`), always converted (an NCHW result
    would be transposed into that order: the CNN's inference step at batch 4 took 0.645 ms
    instead of 0.572)."""
    if len(args) != 9:
        return args
    x, w, *rest = args
    if x.dim() == 4 and not rest[4]:  # not transposed
        small = not nhwc and _small(x.shape, w.shape, x.element_size())
        layout = torch.contiguous_format if small else torch.channels_last
        x = x.contiguous(memory_format=layout)
        w = w.contiguous(memory_format=layout)
    return [x, w, *rest]


def _small(x: Any, w: Any, itemsize: int) -> bool:
    """Whether a 2-D convolution of input and weight shapes `x`, `w` has a result (at the
    input's height and width) under `CHANNELS_LAST_BYTES`."""
    return x[0] * w[0] * x[2] * x[3] * itemsize < CHANNELS_LAST_BYTES


def _nchw_result(args: tuple[Any, ...], nhwc: bool) -> bool:
    """[TORCH7] Whether a convolution (on Stax's arrays `args`) computes its result as the
    node's NCHW value: a small 2-D one in a training graph (`_channels_last`). That result
    becomes the node's buffer (`_RETURNED`) instead of being copied into it: the copy took
    15-20 us of the CNN's training step at batch 4."""
    x, w = args[0], args[1]
    return not nhwc and len(args) == 9 and x.ndim == 4 and not args[6] and \
        _small(x.shape, w.shape, np.dtype(x.dtype).itemsize)


def _channels_last_input(args: list[Any], nhwc: bool) -> list[Any]:
    """Max pooling too (same values and indices; measured 26 ms NCHW, 7 ms converting to
    channels-last, on 256x32x16x16 float32, one thread)."""
    x, *rest = args
    return [x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x, *rest]


# op -> a change to its arguments made on every call (given whether the result crosses in
# channels-last order)
_PREPARE: dict[Any, Callable[[list[Any], bool], list[Any]]] = {
    aten.convolution.default: _channels_last,
    aten.max_pool2d_with_indices.default: _channels_last_input,
}


def used_results(node: fx.Node, n: int) -> list[int]:
    """The results of `node` (of `n`) that the graph reads."""
    if n == 1:
        return [0]
    return sorted({u.args[1] for u in node.users if u.target is operator.getitem})


def refused(node: fx.Node, n: int) -> str | None:
    """Why `node`, an op of `EXTERN`, stays an eager op (None: it runs as extern calls)."""
    used = used_results(node, n)
    if len(used) > 1 and EXTERN[node.target] is None:
        return f"{len(used)} of its results are used (an extern call computes one)"
    if any(u.target is not operator.getitem for u in node.users) and n > 1:
        return "its result tuple is used whole"
    return None


class _Slot:
    """Where the `index`-th array goes in the op's arguments (`nhwc`: the array holds the
    4-D tensor's axes in channels-last order, permuted back for the call)."""

    def __init__(self, index: int, nhwc: bool = False) -> None:
        self.index = index
        self.nhwc = nhwc

    def __repr__(self) -> str:
        return f"<array {self.index}{' nhwc' if self.nhwc else ''}>"


# Ops whose 4-D tensors cross into and out of Stax in channels-last order (in inference
# graphs: `GraphRunner.channels_last`): oneDNN computes them channels-last (`_PREPARE`), so
# the NCHW value Stax works on is a transpose of a buffer in that order. Elementwise work
# between them (batch norm, ReLU) then runs over the buffers in their own order, and no
# call converts its input or its result (at batch 256 the conversions of the CNN's
# activations cost more than the convolution).
_NHWC = frozenset((aten.convolution.default, aten.convolution_backward.default,
                   aten.max_pool2d_with_indices.default,
                   aten.max_pool2d_with_indices_backward.default, aten.avg_pool2d.default,
                   aten.avg_pool2d_backward.default, aten._adaptive_avg_pool2d.default,
                   aten._adaptive_avg_pool2d_backward.default))
_TO_NHWC, _TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


# Modules holding PyTorch's Python bindings of ATen ops (`torch.convolution` and the like).
_BINDINGS = (torch._C._VariableFunctions, torch._C._nn)


def bound(op: Any) -> Callable[..., Any]:
    """[TORCH10] `op` called through PyTorch's Python binding of the same name where that is
    the same op: an ATen op's default overload whose only other overload is `out` (the binding
    picks the overload from the arguments: without `out=`, the default); else `op` itself.
    The OpOverload's call costs more: a 4x3x16x16 float32 convolution to 32 channels took
    147 us as `aten.convolution.default` (139 through its `_op`), 112 us as `torch.convolution`
    (one thread, CPU time, median of 25 x 200 calls, load 16); the CNN's inference step at
    batch 4 (three process pairs, alternated): 542/490/558 -> 515/443/546 us."""
    if not isinstance(op, torch._ops.OpOverload) or op._overloadname != "default":
        return op
    packet = op.overloadpacket
    if not set(packet.overloads()) <= {"default", "out"}:
        return op
    return next((getattr(m, packet.__name__) for m in _BINDINGS if hasattr(m, packet.__name__)), op)


def _tensor(a: np.ndarray) -> torch.Tensor:
    """A tensor on `a`'s memory (a copy only for read-only or negatively strided arrays).
    [TORCH9] `from_numpy` refuses negative strides itself (ValueError): checking the strides
    first took 1.3 us per array of every extern call, 0.8 us without (one thread, CPU time)."""
    if a.flags.writeable:
        try:
            return torch.from_numpy(a)
        except ValueError:  # a negative stride
            pass
    return torch.from_numpy(a.copy())


def extern_call(node: fx.Node, args: tuple[Any, ...], kwargs: dict[str, Any],
                channels_last: bool,
                results_meta: list[tuple[tuple[int, ...] | None, np.dtype] | None]) -> Any:
    """`node` as extern calls on Stax tracers: its result, or a tuple with None for the
    results the graph does not use. `results_meta`: each result's shape (None when
    symbolic) and dtype, or None for a result PyTorch does not compute. `channels_last`:
    4-D tensors of `_NHWC` ops cross in channels-last order."""
    n = len(results_meta)
    used = [j for j in used_results(node, n) if results_meta[j] is not None]
    one_result = EXTERN[node.target]
    nhwc = channels_last and node.target in _NHWC
    arrays: list[Any] = []
    metas = node.meta.get("val")
    dtypes = [m.dtype if isinstance(m, torch.Tensor) else None
              for m in (metas if isinstance(metas, (tuple, list)) else [metas])]

    def slot(x: Any) -> Any:
        if isinstance(x, (Tracer, np.ndarray)):
            flip = nhwc and x.ndim == 4
            arrays.append(np.transpose(x, _TO_NHWC) if flip else x)
            return _Slot(len(arrays) - 1, flip)
        return x

    template_args, template_kwargs = pytree.tree_map(slot, (tuple(args), dict(kwargs)))
    results: list[Any] = [None] * n
    for j in used:
        shape, dtype = results_meta[j]  # type: ignore[misc]
        if shape is None:
            raise NotImplementedError(f"{node.target}: symbolic result shape")
        if node.target is aten.convolution_backward.default and j == 2 and not nhwc:
            # The bias gradient: the output gradient summed over all axes but the channels,
            # by Stax (fused with the batch norm backward's sums over the same tensor)
            # instead of a second convolution_backward call.
            grad = args[0]
            results[j] = np.sum(grad, axis=(0, *range(2, grad.ndim))).astype(dtype)
            continue
        call_args = template_args if one_result is None else one_result(j, template_args)
        flip = nhwc and len(shape) == 4
        routine = _routine(node.target, call_args, template_kwargs, None if n == 1 else j,
                           flip, dtypes)
        spelled = ", ".join([*map(repr, call_args),
                             *(f"{k}={v!r}" for k, v in sorted(template_kwargs.items()))])
        name = f"torch:{node.target}({spelled})" + ("" if n == 1 else f"[{j}]") + (
            " nhwc" if flip else "")
        if node.target in _RETURNED and (flip or _RETURNED[node.target](args, nhwc)):
            key = externs.register_sized(name, _returning(routine, flip), dtype)
        else:
            key = externs.register_into(name, routine)
        if flip:
            result = _extern_node(key, arrays, tuple(shape[d] for d in _TO_NHWC), dtype)
            results[j] = np.transpose(result, _TO_NCHW)
        else:
            results[j] = _extern_node(key, arrays, shape, dtype)
    return results[0] if n == 1 else tuple(results)


def _extern_into(key: str, into: Callable[..., None], arrays: list[Any],
                 shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """An extern node running `into(*arrays, out=buffer)`, which writes the node's buffer
    itself (the runtime's `out=` hook: no result array handed back and copied)."""
    return _extern_node(externs.register_into(key, into), arrays, shape, dtype)


def _extern_node(key: str, arrays: list[Any], shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """The extern node calling the routine registered under `key` on `arrays`."""
    builder = api.find_builder(arrays)
    values = tuple(api.to_value(builder, functions.traced(a, arrays)) for a in arrays)
    return api.wrap(builder, builder.add("extern", values, tuple(shape), dtype, fn=key))


def _filler(template: Any) -> Callable[[list[torch.Tensor]], Any]:
    """A function putting the call's tensors into `template`'s slots (made once, at trace
    time: the call runs every time the program runs)."""
    if isinstance(template, _Slot):
        if template.nhwc:
            index = template.index
            return lambda tensors: tensors[index].permute(_TO_NCHW)
        return operator.itemgetter(template.index)
    if isinstance(template, (list, tuple)) and any(
            isinstance(leaf, _Slot) for leaf in pytree.tree_leaves(
                template, is_leaf=lambda x: isinstance(x, _Slot))):
        parts = [_filler(t) for t in template]
        kind = type(template)
        return lambda tensors: kind(part(tensors) for part in parts)
    return lambda tensors: template


# Ops computed straight into the node's buffer through their `out` overload (their other
# results into scratch tensors) instead of copied there: max pooling of 256x32x16x16
# channels-last float32, one thread, CPU time: 1.33 ms with the copy, 1.07 ms into the
# buffer. (Embedding bag's `out` overload copies internally: no faster than the copy.)
# [TORCH8] The pooling backwards' results are as large as the pooled input: the plain overload
# allocates and zero-fills a new tensor (>= 128 KiB: fresh mmap'd pages on every call) that is
# then copied; cnn training at batch 4 (4x32x16x16 float32, one thread): 66-200 us per call
# through the copy, 11 us into the (recycled) buffer.
_OUT_OVERLOADS = {
    aten.max_pool2d_with_indices.default: aten.max_pool2d_with_indices.out,
    aten.max_pool2d_with_indices_backward.default:
        aten.max_pool2d_with_indices_backward.grad_input,
    aten.avg_pool2d_backward.default: aten.avg_pool2d_backward.grad_input}
# Ops whose result tensor becomes the node's buffer itself (the runtime's returned-array
# hook, `register_sized`; their `out` overloads copy internally): the copy of a 256x32x16x16
# float32 convolution result took 0.85 ms of the call's 2.1 ms, of the 2048x256 embedding
# bag (mean of 8 rows) 0.1-0.3 ms of 0.7 (CPU time, one thread); [TORCH4] of the embedding
# bag's dense weight gradient (1000x256 float32, a new zero-filled tensor on every call)
# 80-100 us of the backward's 110-130 at batch 8. op -> whether, besides when its result
# crosses in channels-last order, given its arrays and whether 4-D tensors cross in that
# order (not a training graph's convolution computed channels-last: its NCHW result would be
# copied anyway; into the node's buffer, which is recycled, rather than into a new tensor).
_RETURNED: dict[Any, Callable[[tuple[Any, ...], bool], bool]] = {
    aten.convolution.default: _nchw_result,
    aten._embedding_bag.default: lambda args, nhwc: True,
    aten._embedding_bag_backward.default: lambda args, nhwc: True}


def _routine(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any], j: int | None,
             nhwc: bool, dtypes: list[torch.dtype | None]) -> Callable[..., Any]:
    """The call: its result (the `j`-th; `dtypes`: each result's), with its axes in
    channels-last order if `nhwc`, written into the node's buffer (`out`) by the op's `out`
    overload, else copied there by PyTorch; without `out`, the result tensor itself."""
    fill_args = [_filler(a) for a in args]
    fill_kwargs = {k: _filler(v) for k, v in kwargs.items()}
    prepare = _PREPARE.get(op, lambda a, nhwc: a)
    out_op = _OUT_OVERLOADS.get(op) if None not in dtypes else None
    call = bound(op)
    names = [a.name for a in out_op._schema.arguments if a.is_out] if out_op else []

    def destination(out: np.ndarray) -> torch.Tensor:
        dest = torch.from_numpy(out)
        return dest.permute(_TO_NCHW) if nhwc else dest

    def into(*arrays: np.ndarray, out: np.ndarray | None = None) -> Any:
        tensors = [_tensor(a) for a in arrays]
        call_args = prepare([f(tensors) for f in fill_args], nhwc)
        call_kwargs = {k: f(tensors) for k, f in fill_kwargs.items()}
        dest = None if out is None else destination(out)  # made once: from_numpy costs
        if out_op is None or dest is None:
            result = call(*call_args, **call_kwargs)
        else:
            outs = {name: dest if k == (j or 0) else torch.empty(0, dtype=dtype)
                    for k, (name, dtype) in enumerate(zip(names, dtypes, strict=True))}
            result = out_op(*call_args, **call_kwargs, **outs)
        result = result if j is None else result[j]
        if dest is None:
            return result
        if out_op is not None and result.data_ptr() == dest.data_ptr():
            if result.stride() == dest.stride():
                return None  # written in place
            result = result.clone()  # the op laid out the buffer otherwise
        dest.copy_(result)
        return None
    return into


def _returning(routine: Callable[..., Any], nhwc: bool) -> Callable[..., np.ndarray]:
    """`routine`'s result tensor as the node's array itself (in channels-last order if `nhwc`),
    made C-contiguous by PyTorch where it is not."""
    def give(*arrays: np.ndarray) -> np.ndarray:
        result = routine(*arrays)
        return (result.permute(_TO_NHWC) if nhwc else result).contiguous().numpy()
    return give


# ---------------------------------------------------------------- matrix products
# op -> the position of its first operand (the second follows it).
PRODUCTS: dict[Any, int] = {aten.mm.default: 0, aten.bmm.default: 0, aten.addmm.default: 1,
                            aten.baddbmm.default: 1}
# Views replayed on an operand's buffer (NumPy functions of `stax.torch.ops.TABLE`).
_REPLAYED = frozenset((aten.view.default, aten._unsafe_view.default, aten.reshape.default,
                       aten.permute.default, aten.t.default, aten.transpose.int,
                       aten.expand.default, aten.unsqueeze.default, aten.squeeze.dim,
                       aten.squeeze.dims, aten.squeeze.default, aten.select.int,
                       aten.slice.Tensor, aten.alias.default))
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_Link = tuple[Any, tuple[Any, ...], dict[str, Any]]  # a view: op, its other arguments, kwargs


def _view_chain(operand: fx.Node, values: dict[fx.Node, Any]) -> tuple[fx.Node, list[_Link]]:
    """The node whose value `operand` is a view of (within `values`), and the views from it
    to `operand`, first view first."""
    chain: list[_Link] = []
    node = operand
    while node.target in _REPLAYED and node.args and isinstance(node.args[0], fx.Node) \
            and node.args[0] in values and not any(
                isinstance(a, fx.Node) for a in pytree.tree_leaves((node.args[1:], node.kwargs))):
        chain.append((node.target, tuple(node.args[1:]), dict(node.kwargs)))
        node = node.args[0]
    return node, chain[::-1]


_TRANSPOSES = frozenset((aten.permute.default, aten.t.default, aten.transpose.int))
_RESHAPES = frozenset((aten.view.default, aten._unsafe_view.default, aten.reshape.default,
                       aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
                       aten.squeeze.default))


def _replay(chain: list[_Link], shape: tuple[int, ...]
            ) -> tuple[Callable[[torch.Tensor], torch.Tensor], tuple[int, ...]]:
    """The views of `chain` as one function of a tensor of `shape`, and the shape it makes
    (worked out by the table's NumPy functions on a probe: raises where NumPy spells a view
    otherwise). Each view becomes a tensor method with its arguments worked out here,
    consecutive transposes one: the call runs on every product, and an ATen op's dispatch
    costs several microseconds."""
    array: Any = np.broadcast_to(np.zeros((), np.float32), shape)  # a probe: no memory
    steps: list[tuple[str, Any]] = []
    for op, args, kwargs in chain:
        result = TABLE[op](None, array, *args, **kwargs)
        if op in _TRANSPOSES:
            order = list(range(array.ndim))
            if op is aten.permute.default:
                order = [d % array.ndim for d in args[0]]
            elif op is aten.transpose.int:
                d0, d1 = args[0] % array.ndim, args[1] % array.ndim
                order[d0], order[d1] = order[d1], order[d0]
            else:
                order.reverse()
            if steps and steps[-1][0] == "transpose":  # two transposes compose
                before = steps.pop()[1]
                order = [before[d] for d in order]
            steps.append(("transpose", tuple(order)))
        elif op in _RESHAPES:
            steps.append(("reshape", result.shape))
        elif op is aten.expand.default:
            steps.append(("expand", result.shape))
        elif op is not aten.alias.default:
            steps.append(("aten", (op, args, kwargs)))
        array = result
    steps = [s for s in steps if s != ("transpose", tuple(range(len(s[1]))))]

    def replay(t: torch.Tensor) -> torch.Tensor:
        for kind, arg in steps:
            if kind == "transpose":
                t = t.permute(arg)
            elif kind == "reshape":
                t = t.reshape(arg)
            elif kind == "expand":
                t = t.expand(arg)
            else:
                op, args, kwargs = arg
                t = op(t, *args, **kwargs)
        return t
    return replay, tuple(array.shape)


def _spell(chain: list[_Link]) -> str:
    return "".join(f".{op.__name__}{args!r}{kwargs or ''}" for op, args, kwargs in chain)


def matrix_product(node: fx.Node, values: dict[fx.Node, Any], shape: tuple[int, ...] | None,
                   dtype: np.dtype) -> Any | None:
    """The matrix product of `node` (an op of `PRODUCTS`; for addmm/baddbmm without the bias)
    as an extern call of PyTorch's matmul on the buffers its operands are views of, or None
    (Stax's own matmul then traces it): integer or mixed dtypes, symbolic shapes."""
    first = PRODUCTS[node.target]
    operands = node.args[first:first + 2]
    if shape is None or dtype not in _FLOATS or not all(
            isinstance(o, fx.Node) and o in values for o in operands):
        return None
    bases, replays, spelled = [], [], []
    for operand in operands:
        base, chain = _view_chain(operand, values)
        value = values[base]
        if getattr(value, "dtype", None) != dtype:
            return None
        try:  # the views on a probe of the base's shape (no memory): PyTorch's shape?
            replay, replayed = _replay(chain, tuple(value.shape))
            ok = replayed == tuple(values[operand].shape)
        except Exception:  # noqa: BLE001 - a view NumPy spells otherwise: no replay
            ok = False
        if not ok:
            base, chain = operand, []
            replay, _ = _replay(chain, tuple(values[operand].shape))
        bases.append(values[base])
        replays.append(replay)
        spelled.append(f"{tuple(bases[-1].shape)}{_spell(chain)}")  # the replay's shape
    left, right = replays

    def into(a: np.ndarray, b: np.ndarray, *, out: np.ndarray) -> None:
        torch.matmul(left(_tensor(a)), right(_tensor(b)), out=torch.from_numpy(out))

    return _extern_into(f"torch.matmul[{spelled[0]} @ {spelled[1]}]", into, bases, shape, dtype)
