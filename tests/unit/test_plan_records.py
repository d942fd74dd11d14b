"""Plan decisions as records (compiler-free): every decision of a kernel plan — threads,
parallel depth, form, tile and outer-block sizes, short-row lanes, kernel-local buffers, merged
axes — has a rule name and the value decided; explain's lines are rendered from them."""

from __future__ import annotations

import numpy as np

from stax.api import _as_array, trace
from stax.lower import lower
from stax.sched.scheduler import schedule
from stax.tiling.plan import TILE_COLS, TILE_ROWS, KernelPlan, plan_kernel

X = np.linspace(0, 1, 256 * 192).reshape(256, 192)


def plans(fn, *args, threads: int = 4, form: str | None = None) -> list[KernelPlan]:
    arrays = [_as_array(a) for a in args]
    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays]
    sched = schedule(lower(trace(fn, args).graph, strides).program)
    out = []
    for k, g in enumerate(sched.kernels):
        local = {lb.buffer: lb.extent for lb in sched.local if lb.kernel == g.name}
        out.append(plan_kernel(f"kernel{k}", [m.node for m in g.members], g.depth,
                               threads=threads, vectorize=True, local=local, form=form))
    return out


def by_rule(plan: KernelPlan) -> dict[str, object]:
    values = {d.rule: d.value for d in plan.decisions}
    assert len(values) == len(plan.decisions), "one record per rule"
    assert plan.notes == tuple(str(d) for d in plan.decisions)
    return values


def test_tiled_form_records_its_tile() -> None:
    (plan,) = plans(lambda x: x.T + x, X[:192, :192].copy())
    got = by_rule(plan)
    assert got["form"] == "tiled" == plan.form
    assert got["tile"] == f"{TILE_ROWS}x{TILE_COLS}"
    assert got["parallel_depth"] == plan.parallel_depth
    assert "outer_block" not in got


def test_outer_reduction_records_its_block() -> None:
    (plan,) = plans(lambda x: x.sum(0), X)
    got = by_rule(plan)
    assert got["form"] == "outer-reduction" == plan.form
    assert got["outer_block"] == plan.outer_block
    assert isinstance(plan.outer_block, int) and plan.outer_block % 16 == 0
    assert "tile" not in got
    assert not any("blocks of" in str(d) for d in plan.decisions if d.rule == "form")


def test_thread_decision_is_a_record() -> None:
    (big,) = plans(lambda x: np.exp(x), X, threads=4)
    (tiny,) = plans(lambda x: x + 1, X[:2, :3].copy(), threads=4)
    assert by_rule(big)["threads"] == big.threads
    assert by_rule(tiny)["threads"] == tiny.threads == 1
    assert by_rule(tiny)["parallel_depth"] == 0


def test_forced_forms_and_kernel_local_buffers() -> None:
    (scalar,) = plans(lambda x: x * 2, X, form="scalar")
    assert by_rule(scalar)["form"] == "scalar"
    (softmax,) = plans(lambda x: np.exp(x - x.max(1, keepdims=True)).sum(1), X)
    local = [(d.subject, d.value) for d in softmax.decisions if d.rule == "kernel_local"]
    assert local == list(softmax.local) and len(local) == 1
    assert {"form", "parallel_depth", "threads"} <= {d.rule for d in softmax.decisions}


def test_tiled_form_with_a_short_last_axis_runs_narrow_vectors() -> None:
    """A transpose with 30 float32 columns: every tile's compute loop is 30 elements long, on
    32-byte vectors (8 lanes; at full width 14 of the 30 would run scalar); 192 columns of
    float64 (1536 bytes) keep the full width."""
    (short,) = plans(lambda x, y: x.T + y, np.ones((30, 300), np.float32),
                     np.ones((300, 30), np.float32))
    assert short.form == "tiled" and short.simd_lanes == 8 == by_rule(short)["simd_lanes"]
    (wide,) = plans(lambda x: x.T + x, X[:192, :192].copy())
    assert wide.form == "tiled" and wide.simd_lanes == 0
