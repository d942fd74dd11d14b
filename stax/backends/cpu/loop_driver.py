"""C++ of loop drivers (issue 10): a loop body's regions and `stax_loop<suffix>`, the function
that runs all its iterations in one call (`stax.loops.driver.LoopDriver` describes it;
`stax.loops.runner` binds and calls it).

    for (it = 0; it < n; ++it) { *index = start + it*step; rows; region0(...); ...; stores;
                                 swap(in_k, out_k); }

(early stores: those a nested loop reads are written just before its call, not at the end.)

One iteration's kernels run on the threads their plans chose; with `team` > 1 the iterations
themselves run on an OpenMP team, each thread a block of them (a static schedule) with its own
pointer table, inside a team of one that it opens once (the regions' orphaned `omp single`s
bind to it; one nested team per iteration cost more than a small body's work). After an
in-order loop a carried value whose last version sits in the other buffer of its pair is copied
back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from stax.backends.base import region_params
from stax.backends.cpu.cpp import ctype, print_module, print_region
from stax.ops.table import flag_index

if TYPE_CHECKING:
    from stax.loops.driver import LoopDriver, NestedCall
    from stax.loops.stores import Form, Store

INCLUDES = "#include <algorithm>\n#include <cstring>\n#include <utility>\n#include <omp.h>\n"


def emit_loops(drivers: Sequence[LoopDriver]) -> tuple[str, tuple[str, ...]]:
    """One C++ module holding every driver (one g++ run), and each driver's part of it."""
    parts = tuple(driver_source(d) for d in drivers)
    return print_module([], {}) + INCLUDES + "\n".join(parts), parts


def driver_source(d: LoopDriver) -> str:
    """The body's regions and its `stax_loop<suffix>`."""
    buffers = d.buffers
    stores = any(c.stores for c in d.carried) or any(c.stores for c in d.nested)
    if d.team > 1:
        head = ["    #pragma omp parallel num_threads(team)  // the cores idle now, at most "
                f"{d.team}",
                "    {",
                f"    void** b = bufs + (int64_t)omp_get_thread_num() * {d.width};",
                "    // this thread's block of iterations (a static schedule), in a team of this "
                "one thread:",
                "    // the regions' orphaned `omp single`s bind to it (one such team per thread, "
                "not per iteration)",
                "    const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();",
                "    const int64_t first = n / threads * me + std::min<int64_t>(me, n % threads);",
                "    const int64_t last = first + n / threads + (me < n % threads);",
                "    #pragma omp parallel num_threads(1)",
                "    {",
                "    for (int64_t it = first; it < last; ++it) {",
                "        if (stax_interrupted(flags)) break;  // Ctrl-C [A8]",
                *(["        bool failed = false;"] if stores else [])]
    else:
        head = [f"    void* b[{d.width}];",
                f"    for (int k = 0; k < {d.width}; ++k) b[k] = bufs[k];",
                *(["    bool failed = false;"] if stores else []),
                "    for (int64_t it = 0; it < n; ++it) {",
                "        if (stax_interrupted(flags)) break;  // Ctrl-C [A8]"]
    lines = [f"extern \"C\" void stax_loop{d.suffix}(void** bufs, int64_t start, int64_t step, "
             "int64_t n, int32_t* flags, int32_t team) {", *head,
             f"        *(int64_t*)b[{d.index}] = start + it * step;"]
    for r in d.rows:  # rows of invariant arrays at the index: pointers, no gather
        lines.append(f"        b[{r.slot}] = (char*)b[{r.source}] + ({r.const} + {r.coef} * "
                     f"(start + it * step)) * {r.nbytes};")
    values = [f"b[{s}]" for s in d.outputs]
    indices = {k: f"b[{s}]" for k, s in enumerate(d.inputs)}

    def stores_before(j: int | None) -> list[str]:
        """The stores written before nested loop `j` (None: after the regions)."""
        out = []
        for c in d.carried:
            if c.stores and c.before == j:
                # before a nested loop: into the buffer the loop starts from (its own)
                target = f"b[{c.source if c.output is None or j is not None else c.output}]"
                out += store_code(c.stores, target, ctype(c.dtype), values, indices, "        ")
                if d.team == 1:
                    out.append("        if (failed) break;  // a store out of bounds: IndexError")
        return out

    def nested_before(k: int) -> list[str]:
        return [line for j, call in enumerate(d.nested) if call.before == k
                for line in [*stores_before(j), *(f"        {x}" for x in nested_code(call, [
                    line for slot, dtype, store in call.stores for line in store_code(
                        [store], f"b[{slot}]", ctype(dtype), values, indices, "    ")]))]]

    for k, region in enumerate(d.regions):
        lines += nested_before(k)
        args = [f"({ctype(buffers[p].dtype)}*)b[{d.slots[p]}]"
                for p in region_params(region.plans)]
        lines.append(f"        {region.name}({', '.join([*args, 'flags'])});")
    lines += nested_before(len(d.regions))
    lines += stores_before(None)
    for c in d.carried:
        if c.output is not None:
            lines.append(f"        std::swap(b[{c.source}], b[{c.output}]);")
    lines.append("    }")
    if d.team > 1:
        lines += ["    }", "    }"]
    else:
        for c in d.carried:
            lines.append(f"    if (b[{c.source}] != bufs[{c.source}]) "
                         f"std::memcpy(bufs[{c.source}], b[{c.source}], {c.nbytes});")
    lines.append("}")
    declared = [f"extern \"C\" void stax_loop{c.suffix}(void**, int64_t, int64_t, int64_t, "
                "int32_t*, int32_t);" for c in d.nested]
    return "\n\n".join([*(print_region(r.name, r.plans, buffers, r.aliased)
                          for r in d.regions), "\n".join([*declared, *lines]),
                         *([entry_code(d)] if d.entry else [])]) + "\n"


def entry_code(d: LoopDriver) -> str:
    """`stax_entry<suffix>`, called like a region by the fast call (`stax.runtime.fast`): the
    shared buffers' pointers into every table, then the driver."""
    params = ", ".join(["void* table", *(f"void* s{k}" for k in range(len(d.shared))),
                        "const int64_t* launch", "int32_t* flags"])
    return "\n".join([
        f"extern \"C\" void stax_entry{d.suffix}({params}) {{",
        "    void** bufs = (void**)table;  // launch: start, step, trip count, team",
        f"    for (int64_t t = 0; t < {d.width * d.team}; t += {d.width}) {{",
        *(f"        bufs[t + {slot}] = s{k};" for k, slot in enumerate(d.shared)),
        "    }",
        f"    stax_loop{d.suffix}(bufs, launch[0], launch[1], launch[2], flags, "
        "(int32_t)launch[3]);",
        "}"])


def nested_code(c: NestedCall, stores: Sequence[str] = ()) -> list[str]:
    """A nested loop's driver called at its place: its tables pointed at this driver's
    buffers, the initial values copied into the result buffers, then `stores` (C++ writing
    the loop's leading stores into them), its trip count computed from the range's bounds;
    an error flag raised inside leaves this loop too."""
    tables = c.width * c.team
    lines = [f"{{  // nested loop: stax_loop{c.suffix}",
             f"    void** t = (void**)b[{c.table}];",
             f"    for (int64_t k = 0; k < {tables}; k += {c.width}) {{",
             *(f"        t[k + {inner}] = b[{outer}];" for inner, outer in c.shared),
             "    }",
             *(f"    if (b[{to}] != b[{src}]) std::memcpy(b[{to}], b[{src}], {nbytes});"
               for src, to, nbytes in c.copies),
             *stores]
    for name, (kind, value) in zip(("lo", "hi", "st"), c.bounds, strict=True):
        lines.append(f"    const int64_t {name} = " +
                     (f"{value}LL;" if kind == "int" else f"*(const int64_t*)b[{value}];"))
    lines += ["    const int64_t trips = st > 0 ? (hi > lo ? (hi - lo + st - 1) / st : 0)"
              " : (lo > hi ? (lo - hi - st - 1) / -st : 0);",
              f"    stax_loop{c.suffix}(t, lo, st, trips, flags, (int32_t)(intptr_t)t[{tables}]);",
              "    if (__atomic_load_n(&flags[STAX_ANY_FLAG], __ATOMIC_RELAXED)) break;",
              "}"]
    return lines


def store_code(stores: Sequence[Store], target: str, ctype: str, value_ptr: Sequence[str],
               index_ptr: Mapping[int, str], indent: str) -> list[str]:
    """C++ writing the stores into `target` (a `ctype*` expression): offsets computed from the
    body's 0-d index inputs (`index_ptr`: input position -> its pointer expression), bounds
    checked (an IndexError flag, the iteration loop left, nothing written)."""
    def expr(form: Form) -> str:
        terms = [f"{a}LL * *(const int64_t*){index_ptr[p]}" for p, a in form[1]]
        return " + ".join([f"{form[0]}LL", *terms])

    bad = f"(1 << {flag_index('INDEX_OUT_OF_BOUNDS')})"
    lines: list[str] = []
    for s in stores:
        body = [f"{indent}{{  // {s.describe('store')}"]
        strides = [1] * len(s.axes)
        for k in range(len(s.axes) - 2, -1, -1):
            strides[k] = strides[k + 1] * max(s.axes[k + 1].n, 1)
        vstrides = [1] * len(s.shape)
        for k in range(len(s.shape) - 2, -1, -1):
            vstrides[k] = vstrides[k + 1] * max(s.shape[k + 1], 1)
        checks, loops, offset, voffset, d = [], [], [], [], 0
        for k, ax in enumerate(s.axes):
            body.append(f"{indent}    int64_t o{k} = {expr(ax.start)};")
            if ax.count is None:
                assert ax.stop is not None
                body.append(f"{indent}    o{k} = std::min<int64_t>(o{k}, {ax.n});")
                body.append(f"{indent}    const int64_t c{k} = std::max<int64_t>(std::min<int64_t>"
                            f"({expr(ax.stop)}, {ax.n}) - o{k} + {ax.step - 1}, "
                            f"{ax.step - 1}) / {ax.step};")
            else:
                body.append(f"{indent}    const int64_t c{k} = {ax.count};")
            body.append(f"{indent}    const int64_t l{k} = o{k} + (c{k} - 1) * {ax.step};")
            checks.append(f"(c{k} > 0 && (std::min(o{k}, l{k}) < 0 || std::max(o{k}, l{k}) >= "
                          f"{ax.n}))")
            if ax.at:
                offset.append(f"o{k} * {strides[k]}")
                continue
            if s.shape[d] != 1:
                checks.append(f"c{k} > {s.shape[d]}")
                voffset.append(f"p{k} * {vstrides[d]}")
            loops.append(f"for (int64_t p{k} = 0; p{k} < c{k}; ++p{k})")
            offset.append(f"(o{k} + p{k} * {ax.step}) * {strides[k]}")
            d += 1
        body.append(f"{indent}    if ({' || '.join(checks) or 'false'}) "
                    f"{{ stax_raise(flags, {bad}); failed = true; }}")
        body.append(f"{indent}    else {' '.join(loops)}")
        body.append(f"{indent}        (({ctype}*){target})[{' + '.join(offset) or '0'}] = "
                    f"(({ctype}*){value_ptr[s.value]})[{' + '.join(voffset) or '0'}];")
        body.append(f"{indent}}}")
        lines += body
    return lines

