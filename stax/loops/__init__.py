"""Python `for` loops over `range` inside jitted functions, compiled once per loop body.

`stax.jit` traces the user's function with `range` replaced (in a copy of its globals) by
`stax.loops.recognize.LoopRange`: a loop over two or more iterations yields ONE symbolic index
(a weak int64 tracer, like the Python int it stands for), and its body is traced twice — once to
find the loop-carried values (tracers assigned to or rebound by the body, found from the frame's
locals and from every tracer whose value the body replaced), once more with those values as
parameters. The body becomes its own Graph, compiled once (`stax.loops.runner`): when it needs
no NumPy extern call, a generated C driver runs all iterations (`for t ...: regions...; swap
carried buffers`) with no Python per iteration. In the outer Graph the loop is an extern call.

Slices with bounds affine in the loop indices and a fixed length that stay inside the array for
the whole range (`x[i:i+k]`, `A[1:-1, 2*t+1:2*t+9:2]`) become bounds-checked gathers
(`stax.loops.affine`). A slice whose length changes with the index (`L[i, :i]`, `A[i+1:, i]`,
`x[:k]`, or one NumPy clamps) is a masked full-length gather (`stax.loops.masked`): elementwise
operations carry the mask, sums/products/max/min and dot/matmul over the masked axis read masked
positions as the neutral element, `np.flip` reverses the valid part, and assignments into such
slices are masked `where`s. A reduction over such a slice stops at the slice's length at run time
(`stax.ir.prefix`, rule `masked_prefix`: O(length) work, not O(longest)); elementwise work on it
still runs full length under its mask. `for j in range(i)` with `i` an enclosing index is one
loop whose trip count is computed at run time; a nested loop with a C driver runs inside the
enclosing loop's driver (no Python per outer iteration), in its initial value's storage where
nothing after it reads the old version. `enumerate`, `zip` and `reversed` of ranges and arrays, and
`for row in a`, are loops too. Rows of invariant arrays read at the index (`x[t]`) are pointed at
by the C driver, not gathered. While a body is traced its reads and writes of carried arrays are
logged; `stax.poly.loop_legality` computes the loop-carried dependences with isl (parallel or
sequential, and why double buffering is legal), shown by `stax.explain`. A carried array
changed only by such assignments is updated in place by the driver (`stax.loops.stores`); a
loop whose iterations isl proves independent runs them on OpenMP threads.

A body that differs per iteration (a Python `if` on the index, a masked slice used in a way
that cannot stay exact, `break`/`return`, a list grown by the body, carried values changing
type) is unrolled when its trip count is at most `UNROLL_LIMIT`, else a `LoopError` names the
source line and the reason (a body that breaks runs with graph breaks, `stax.frontend.breaks`,
which stop after a few segments that differ per iteration). A trace unrolled past
`stax.frontend.trace.MAX_TRACE_OPS` ops (loops this module does not roll, `np.ndindex`) stops
there and the function runs in NumPy. Each loop's decisions are kept in `LoopRecord`s
(`stax.loops.records(jitted)`).
"""

from stax.loops.recognize import UNROLL_LIMIT, LoopError, LoopRecord, records, trace_with_loops

__all__ = ["UNROLL_LIMIT", "LoopError", "LoopRecord", "records", "trace_with_loops"]
