"""What a backend needs to emit a loop driver: one loop body's regions and the pointer table
its driver function keeps (`Backend.emit_loops`; the CPU one: `stax.backends.cpu.loop_driver`).

The driver `stax_loop<suffix>(void** bufs, int64_t start, int64_t step, int64_t n,
int32_t* flags, int32_t team)` runs `n` iterations: each writes the index (`start + it*step`)
into its slot, points the row slots at their rows, calls the regions with the buffers of their
`region_params`, writes the in-place stores and swaps the double-buffered carried values.
Every buffer is a slot of `bufs` (`width` pointers per table; storage handed over between
buffers shares a slot). `team` > 1: the iterations are independent and run on up to `team`
OpenMP threads, thread `t` with its own table `bufs + t*width`.

A nested loop whose body has a C driver of its own runs inside the enclosing driver
(`NestedCall`): at its place among the regions, the enclosing driver points the inner driver's
tables at its buffers (the inner carried values at the loop's result buffers, its invariants at
the buffers it reads), copies the initial values in (not where a result buffer is its initial
value's own: the enclosing body's carried array, read by nothing else, updated in place), and
calls the inner `stax_loop` with the trip count of its range at run time.

A driver whose carried values and invariants are few (`LoopDriver.entry`) also gets
`stax_entry<suffix>(void* table, void* shared..., const int64_t* launch, int32_t* flags)`, a
region-shaped function that `stax.runtime.fast`'s compiled `run` calls from Python: it points
every table's shared slots at the buffers it is given and calls the driver with `launch`'s
start, step, trip count and team (no ctypes call, no Python per pointer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from stax.backends.base import KernelRegion
from stax.ir.program import Buffer
from stax.loops.stores import Store
from stax.runtime.fast import MAX_ARGS


@dataclass(frozen=True)
class RowSlot:
    """Slot `slot` points at row `const + coef*index` of the invariant array in `source`."""

    slot: int
    source: int
    const: int
    coef: int
    nbytes: int  # bytes per row


@dataclass(frozen=True)
class CarriedSlot:
    """One carried value: its buffer's slot (the iteration reads it), `output` the slot of its
    next version (double-buffered: swapped with `source` after each iteration; None: updated
    in place), and the stores written into `output` (or `source` when None): after the
    regions, or (`before`: an index into `LoopDriver.nested`) just before that nested loop."""

    source: int
    dtype: np.dtype
    nbytes: int
    output: int | None
    stores: tuple[Store, ...]
    before: int | None = None


@dataclass(frozen=True)
class NestedCall:
    """A nested loop run by its own driver `stax_loop<suffix>` before region `before` (after
    the last: `len(regions)`). Slot `table` holds the inner pointer tables (`team` tables of
    `width` pointers, then the team size to launch). `shared`: (inner slot, outer slot) of
    the inner carried values and invariants; `copies`: (from, to, bytes) outer slots, the
    initial values copied into the result buffers; `bounds`: start, stop, step, each an int or
    the outer slot of a 0-d int64; `stores`: (outer slot, dtype, store) written into result
    buffers after the copies, before the call (`stax.loops.stores.Before`)."""

    suffix: str
    before: int
    table: int
    width: int
    team: int
    shared: tuple[tuple[int, int], ...]
    copies: tuple[tuple[int, int, int], ...]
    bounds: tuple[tuple[str, int], ...]  # ("int", value) or ("slot", slot)
    stores: tuple[tuple[int, np.dtype, Store], ...] = ()


@dataclass(frozen=True)
class LoopDriver:
    """One loop body's regions and its driver's pointer table (names end in `suffix`)."""

    suffix: str
    regions: tuple[KernelRegion, ...]
    buffers: Mapping[str, Buffer]
    slots: Mapping[str, int]  # buffer -> its slot in a pointer table
    width: int  # pointers per table
    index: int  # slot of the 0-d int64 loop index
    rows: tuple[RowSlot, ...]
    carried: tuple[CarriedSlot, ...]
    inputs: tuple[int, ...]  # slots of the body's inputs, in order (the stores' index inputs)
    outputs: tuple[int, ...]  # slots of the body's outputs, in order (the stored values)
    team: int
    nested: tuple[NestedCall, ...] = ()

    @property
    def shared(self) -> tuple[int, ...]:
        """Slots of the carried values and invariants: one buffer for every table."""
        return self.inputs[1:len(self.inputs) - len(self.rows)]

    @property
    def entry(self) -> bool:
        """Whether the module has `stax_entry<suffix>`: the table, the shared buffers and the
        launch values fit the fast call's arguments."""
        return len(self.shared) + 2 <= MAX_ARGS
