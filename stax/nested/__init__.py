"""Nested data parallelism over ragged arrays (seed 004: Futhark's full flattening).

    import stax.nested as sn
    sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: i + 2, sn.iota(n))),
           np.array([5, 7]))                       # [20, 35]

- `Ragged` (ragged.py): the segmented representation (values, lengths, offsets, flags,
  segment_ids, inner_index).
- Segmented primitives on NumPy arrays (primitives.py): segscan, segreduce, exscan/expresum,
  segiota, repiota, seggather, segscatter, partition; parallel kernels for any associative
  operator (ufuncs, or Python functions of two values traced to expressions, tuples
  included; operators that branch in Python fall back to a per-segment Python loop).
  kernels.py decides which kernels run (described in spec.py); the backend prints, builds
  and runs them (`Backend.segmented_kernel`; CPU: stax/backends/cpu/segmented.py, C++ with
  OpenMP).
- Nested operations (api.py): map, reduce, scan, iota, range, replicate, concat, slicing and
  indexing rows, cond, loop, scatter, length, and NumPy ufuncs/methods on traced values.
  `sn.jit` flattens them (flatten.py); outside it, and under `sn.interpret`, they run the
  reference semantics one iteration at a time (interp.py).
- `sn.explain(f, *args)` (also `stax.explain` on an `sn.jit` function): the nested program,
  the flattening rules applied, the flat program (kernels in launch order), the recorded
  program later calls replay, and the kernels' C++.
- `sn.jit` flattens once per call signature (per argument: array or Ragged, dtype, rank,
  inner dimensions; scalars by value) and records the flat program (tape.py); later calls
  replay it on their own data, whatever its sizes: one generated straight-line Python function
  of the steps something reads (dead-step elimination: e.g. bounds no kernel reads are not
  recomputed; checks and kernels always run) calling the kernels, its arrays of 128 KiB or
  more recycled from earlier calls once the caller dropped them (no fresh pages per call).
  Decisions the flattener took from the data (a branch all iterations take, trip counts,
  empty inputs, a failed bounds check, len() of an argument) are guards checked on replay;
  a different value flattens again (up to 4 programs are kept per signature). Arrays a
  function reads from its closure or globals are captured when the program is recorded.
  `f.cache_info()` counts calls, flattenings, replays and calls that cannot be replayed
  (an operator with Python control flow; `f.unreplayable` says why).

What flattens and what stays sequential: every map level becomes one flat iteration space,
so maps of maps, of reductions/scans (segreduce/segscan), of iota/range/replicate/slices/
concat (segmented spaces computed from segment and in-segment indices), of indexing (gathers)
and of scatter run as parallel kernels over all inner elements; cond packs each branch's
iterations; a loop with a uniform trip count is interchanged (the loop runs outside, each
round a flat parallel step), an irregular one runs max(n) rounds over the active iterations.
Sequential by design: the scalar code of one element (fused into one expression per value,
vectorization avoidance), the rounds of a loop, and the combination of the per-thread partial
results of a segmented kernel. Operators written with Python control flow run sequentially in
Python (correct, slow).
Across kernels (each recorded in explain): a segmented reduction is deferred and runs in one
kernel with the later kernels over the same segments that read its result per segment
(segment-local fusion: a softmax is one pass over each row); an index's bounds check is a
count reduced inside the next reduction over its iterations (the load is clamped meanwhile);
an int64 sum of an element affine in the element index (sum of iota) is a closed form per
segment, exact in wrapping arithmetic.
Regular nests stay regular (regular.py): over rows of one length (a 2-D argument's rows) a
reduction, a scan (ufunc operators) and the values of a map are NumPy programs over the
(k, W) array, compiled by `stax.jit` (the main pipeline), not segmented kernels.
Element code is spelled by the op table (stax.ops), so the kernels' values and error flags
are the main kernels': integer // and % by zero, float -> integer casts of NaN/inf, integer **
of a negative exponent warn or raise as `np.errstate` says, on every call (a warm call's C
replay gives way to the Python replay, which reports them); float operations give NumPy's
values without its floating-point warnings, as in `stax.jit`.
Not supported: results that are ragged arrays of ragged arrays, loops whose state holds arrays
when trip counts differ between iterations, reductions, slices, gathers or replicates of
arrays whose elements are irregular arrays, and slice steps that are traced values.
"""

from stax.nested.api import (
    Explanation,
    Jitted,
    concat,
    cond,
    explain,
    interpret,
    iota,
    jit,
    length,
    loop,
    map,
    range,
    reduce,
    replicate,
    scan,
    scatter,
)
from stax.nested.primitives import (
    expresum,
    exscan,
    partition,
    repiota,
    seggather,
    segiota,
    segreduce,
    segscan,
    segscatter,
)
from stax.nested.ragged import Ragged

__all__ = [
    "Explanation", "Jitted", "Ragged", "concat", "cond", "explain", "expresum", "exscan",
    "interpret", "iota", "jit", "length", "loop", "map", "partition", "range", "reduce",
    "repiota", "replicate", "scan", "scatter", "segiota", "seggather", "segreduce", "segscan",
    "segscatter",
]
