"""[TOPK] The per-row top-k forms users write, recognized while tracing:

- `np.sort(x, axis)[..., -k:]` (the k largest, ascending) and `np.sort(x, axis)[..., :k]`
  (the k smallest), recognized at the slice: NumPy's result is exact (the sorted values);
- `np.sort(np.partition(x, kth, axis)[..., -k:], axis)` (kth n - k or n - k - 1; `[..., :k]`
  with kth k - 1 or k), recognized at the sort: the slice holds the k largest (smallest) in an
  order NumPy leaves unspecified, so the form is taken only where a sort follows, which makes
  the result independent of that order. A partition slice read otherwise (summed, indexed,
  returned) stays NumPy's partition: its order is NumPy's own.

`np.argpartition(x, -k)[..., -k:]` is not recognized: which indices of tied values it picks
is NumPy's introselect's choice, which a heap does not reproduce.

Each becomes one extern call of `stax.runtime.topk.select` on x (a heap of k per row) for k up
to MAX_K, x of a dtype it takes; the sort or partition of the whole rows is then unused (a
`x.sort()` of the slice still writes the sorted k back into the partition, as NumPy's does).
-0.0 and 0.0 are equal in the order: where they tie at the k-th place, which of them is kept
may differ from NumPy's (whose unstable sort does not specify it either).
"""

from __future__ import annotations

import functools

from stax.frontend import numpy_api as api
from stax.frontend.functions import _spelled
from stax.frontend.trace import Builder, Tracer
from stax.graph import Value
from stax.runtime import externs, topk

# Larger k: sorting or partitioning the rows (NumPy's) is as fast as a heap of k.
MAX_K = 64


def selected_slice(view: Tracer, axis: int | None, routine: str) -> Tracer | None:
    """The top-k extern call `view` equals, when it is a slice of the result of `routine`
    ("np.sort" or "np.partition", which records `along`: its name, axis and kth) along
    `axis` (None: the routine's) keeping the first or last k (<= MAX_K) elements of that axis
    and every element of the others; else None."""
    view.check_fresh()
    b, parent = view.builder, view.parent
    sliced = b.producer(view.value.id)
    if (
        parent is None
        or sliced is None
        or sliced[1].kind != "slice"
        or sliced[1].inputs != (parent.value,)
    ):
        return None
    made = b.producer(parent.value.id)
    along = dict(made[1].attrs).get("along") if made is not None else None
    if along is None or along[0] != routine or axis is not None and along[1] != axis:
        return None
    x, (_, ax, kths) = made[1].inputs[0], along
    shape, starts, steps = parent.shape, sliced[1].attr("starts"), sliced[1].attr("steps")
    k, n = view.shape[ax], shape[ax]
    if (
        any(type(s) is not int for s in (*shape, *view.shape))
        or any(s != 1 for s in steps)
        or any(starts[d] or view.shape[d] != shape[d] for d in range(len(shape)) if d != ax)
        or not 0 < k <= MAX_K
        or x.dtype not in topk.DTYPES
    ):
        return None
    largest = starts[ax] + k == n
    if not largest and starts[ax] != 0:
        return None
    # a partition puts kth in place, the smaller before it, the larger after it
    if routine == "np.partition" and not set(kths) & (
        {starts[ax], starts[ax] - 1} if largest else {k, k - 1}
    ):
        return None
    form = (
        f"np.sort(np.partition(x, kth={list(kths)}, axis={ax})[slice], axis={ax})"
        if routine == "np.partition"
        else f"np.sort(x, axis={ax})[slice]"
    )
    why = (
        f"{form}: the {k} {'largest' if largest else 'smallest'} along axis {ax}, ascending; "
        f"a heap of {k} per row (no {routine} of the rows)"
    )
    return _topk(b, x, tuple(view.shape), ax, k, largest, why)


def _topk(
    b: Builder, x: Value, shape: tuple[int, ...], axis: int, k: int, largest: bool, why: str
) -> Tracer:
    """The extern call of `stax.runtime.topk.select` on `x`; `why` (the form recognized, for
    `stax.explain`'s graph) is its attribute `topk`."""
    kwargs = {"axis": axis, "k": k, "largest": largest}
    key = externs.register_into(
        _spelled("stax.topk", kwargs), functools.partial(topk.select, **kwargs)
    )
    return api.wrap(b, b.add("extern", (x,), shape, x.dtype, fn=key, topk=why))
