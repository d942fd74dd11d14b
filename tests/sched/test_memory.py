"""Tests of the memory planning stage (seed 000 §7.5–§7.6).

References are hand computations, a straightforward re-simulation of Definition 7.5 written here
independently of the module, brute force over all topological orders of tiny graphs, and the
bounds of Proposition 7.4.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stax.sched.memory import CANDIDATES, MemBuffer, MemNode, MemoryPlan, plan_memory
from stax.sched.pool import PoolBlock, plan_pool

Buffers = Mapping[str, MemBuffer]


def buffers(*specs: tuple[str, int, str] | tuple[str, int, str, str]) -> dict[str, MemBuffer]:
    """(name, nbytes, kind[, dtype]) -> the buffer table; dtype defaults to f32."""
    table = {}
    for name, nbytes, kind, *dtype in specs:
        table[name] = MemBuffer(name, nbytes, dtype[0] if dtype else "f32", kind)
    return table


def node(name: str, reads: str, writes: str, inplace: Sequence[tuple[str, str]] = ()) -> MemNode:
    return MemNode(name, tuple(reads.split()), tuple(writes.split()), tuple(inplace))


# ---- independent references -------------------------------------------------------------------


def ref_lifetimes(nodes: Sequence[MemNode], bufs: Buffers) -> dict[str, tuple[int, int]]:
    """Definition 7.5 read literally: def = first writer (inputs: 0), last = last user (outputs:
    the end); inputs nobody reads are not live."""
    spans = {}
    for name, buf in bufs.items():
        steps = [t for t, n in enumerate(nodes) if name in n.reads or name in n.writes]
        if not steps:
            continue
        writes = [t for t, n in enumerate(nodes) if name in n.writes]
        first = 0 if buf.kind == "input" else min(writes)
        spans[name] = (first, len(nodes) - 1 if buf.kind == "output" else max(steps))
    return spans


def ref_peak(nodes: Sequence[MemNode], bufs: Buffers) -> int:
    spans = ref_lifetimes(nodes, bufs)
    return max(
        (
            sum(bufs[b].nbytes for b, (d, last) in spans.items() if d <= t <= last)
            for t in range(len(nodes))
        ),
        default=0,
    )


def replay(nodes: Sequence[MemNode]) -> tuple[dict[str, tuple], dict[str, tuple[str, ...]]]:
    """What each node reads (buffer, writer of that version) and each buffer's writer sequence:
    two orders compute the same thing exactly when both agree (RAW, WAR and WAW respected)."""
    version: dict[str, str] = {}
    seen = {}
    writers: dict[str, tuple[str, ...]] = {}
    for n in nodes:
        seen[n.name] = tuple((b, version.get(b, "")) for b in n.reads)
        for b in n.writes:
            version[b] = n.name
            writers[b] = writers.get(b, ()) + (n.name,)
    return seen, writers


def valid_orders(nodes: Sequence[MemNode]) -> list[tuple[MemNode, ...]]:
    reference = replay(nodes)
    return [p for p in itertools.permutations(nodes) if replay(p) == reference]


def reordered(nodes: Sequence[MemNode], plan: MemoryPlan) -> list[MemNode]:
    by_name = {n.name: n for n in nodes}
    return [by_name[name] for name in plan.order]


# ---- random schedules ---------------------------------------------------------------------------


@st.composite
def schedules(draw: st.DrawFn, max_nodes: int = 12) -> tuple[list[MemNode], dict[str, MemBuffer]]:
    """Random DAGs: each node reads earlier buffers and writes a new one; some also overwrite an
    earlier intermediate in place; some declare an in-place pair; sizes from a small set so that
    storage can be reused."""
    sizes = st.sampled_from([0, 64, 100, 128, 200])
    dtypes = st.sampled_from(["f32", "f32", "i64"])
    bufs = {f"x{k}": MemBuffer(f"x{k}", draw(sizes), "f32", "input") for k in range(2)}
    written: list[str] = []
    nodes = []
    for k in range(draw(st.integers(1, max_nodes))):
        pool = list(bufs)
        reads = tuple(dict.fromkeys(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))))
        kind = draw(st.sampled_from(["intermediate", "intermediate", "output"]))
        new = f"b{k}"
        bufs[new] = MemBuffer(new, draw(sizes), draw(dtypes), kind)
        writes = (new,)
        if written and draw(st.integers(0, 4)) == 0:
            writes += (draw(st.sampled_from(written)),)
        inplace = tuple((r, new) for r in reads if draw(st.booleans()))
        nodes.append(MemNode(f"op{k}", reads, writes, inplace))
        written.append(new)
    return nodes, bufs


# ---- hand-made graphs -------------------------------------------------------------------------


def test_chain_lifetimes_and_peak_by_hand() -> None:
    bufs = buffers(
        ("x", 100, "input"),
        ("a", 200, "intermediate"),
        ("b", 300, "intermediate"),
        ("y", 50, "output"),
        ("unused", 999, "input"),
    )
    nodes = [node("op0", "x", "a"), node("op1", "a", "b"), node("op2", "b", "y")]
    plan = plan_memory(nodes, bufs)
    # step 0: x + a = 300; step 1: a + b = 500; step 2: b + y = 350
    assert plan.timeline() == [(0, "op0", 300), (1, "op1", 500), (2, "op2", 350)]
    assert plan.peak_bytes == 500
    assert dict(plan.lifetimes) == {"x": (0, 0), "a": (0, 1), "b": (1, 2), "y": (2, 2)}
    assert dict(plan.last_use) == {"x": "op0", "a": "op1", "b": "op2", "y": "op2"}
    assert dict(plan.frees_after) == {"op0": ("x",), "op1": ("a",), "op2": ("b",)}


def test_inputs_live_from_step_zero_and_outputs_to_the_end() -> None:
    bufs = buffers(
        ("x", 10, "input"), ("y", 1, "output"), ("a", 100, "intermediate"), ("z", 1, "output")
    )
    nodes = [node("op0", "", "y"), node("op1", "x", "a"), node("op2", "a", "z")]
    plan = plan_memory(nodes, bufs)
    assert plan.lifetimes["x"] == (0, plan.order.index("op1"))
    assert plan.lifetimes["y"][1] == plan.lifetimes["z"][1] == 2


def test_reordering_two_branches_by_hand() -> None:
    # original: a1, b1 both alive while a2 is made: 1000 + 1000 + 10 = 2010
    # finishing one branch first: a2 + b1 + b2 = 1020 at worst
    bufs = buffers(
        ("x", 0, "input"),
        ("a1", 1000, "intermediate"),
        ("b1", 1000, "intermediate"),
        ("a2", 10, "intermediate"),
        ("b2", 10, "intermediate"),
        ("y", 1, "output"),
    )
    nodes = [
        node("op0", "x", "a1"),
        node("op1", "x", "b1"),
        node("op2", "a1", "a2"),
        node("op3", "b1", "b2"),
        node("op4", "a2 b2", "y"),
    ]
    plan = plan_memory(nodes, bufs)
    assert plan.candidates["original"] == 2010
    assert plan.candidates["lpmf"] == 1020
    assert plan.peak_bytes == 1020 and plan.chosen != "original"
    assert plan.rule == "least_peak"


def test_ties_keep_the_original_order() -> None:
    bufs = buffers(("x", 8, "input"), ("a", 8, "intermediate"), ("b", 8, "output"))
    nodes = [node("op0", "x", "a"), node("op1", "a", "b")]
    plan = plan_memory(nodes, bufs)
    assert plan.chosen == "original" and plan.order == ("op0", "op1")
    assert plan.rule == "keep_original"
    assert set(plan.candidates) == set(CANDIDATES)


def test_overwrite_runs_after_every_reader_of_the_old_version() -> None:
    # op2 rewrites a in place; op1 must still read the version op0 wrote
    bufs = buffers(
        ("x", 0, "input"),
        ("a", 100, "intermediate"),
        ("r", 1000, "intermediate"),
        ("y", 1, "output"),
    )
    nodes = [
        node("op0", "x", "a"),
        node("op1", "a", "r"),
        node("op2", "x", "a"),
        node("op3", "a r", "y"),
    ]
    plan = plan_memory(nodes, bufs)
    for order in plan.candidate_orders.values():
        assert order.index("op1") < order.index("op2") < order.index("op3")
    assert plan.lifetimes["a"] == (0, 3)


def test_reuse_through_the_free_pool() -> None:
    bufs = buffers(
        ("x", 100, "input"),
        ("a", 100, "intermediate"),
        ("b", 100, "intermediate"),
        ("c", 100, "intermediate"),
        ("d", 100, "intermediate"),
        ("y", 4, "output"),
    )
    nodes = [
        node("op0", "x", "a"),
        node("op1", "a", "b"),
        node("op2", "b", "c"),
        node("op3", "c", "d"),
        node("op4", "d", "y"),
    ]
    plan = plan_memory(nodes, bufs)
    assert [(r.new, r.old) for r in plan.reuses] == [("c", "a"), ("d", "b")]
    assert str(plan.reuses[0]) == "c = a; del a  # reuse"
    assert plan.planned_peak_bytes <= plan.peak_bytes


def test_reuse_declined_when_holding_storage_would_raise_the_peak() -> None:
    # a is freed after step 1; c (same key) comes at step 3; step 2 is already the peak
    bufs = buffers(
        ("x", 0, "input"),
        ("a", 100, "intermediate"),
        ("b", 120, "intermediate"),
        ("g", 1000, "intermediate"),
        ("c", 100, "intermediate"),
        ("y", 1, "output"),
    )
    nodes = [
        node("op0", "x", "a"),
        node("op1", "a", "b"),
        node("op2", "b", "g"),
        node("op3", "g", "c"),
        node("op4", "c", "y"),
    ]
    plan = plan_memory(nodes, bufs)
    assert plan.peak_bytes == 1120
    assert plan.reuses == ()
    assert [(d.rule, d.new, d.old) for d in plan.declined] == [("reuse_exceeds_peak", "c", "a")]


def inplace_case(a: tuple[int, str, str], b: tuple[int, str], pair: bool, later_read: bool):
    a_bytes, a_dtype, a_kind = a
    bufs = {
        "x": MemBuffer("x", 0, "f32", "input"),
        "a": MemBuffer("a", a_bytes, a_dtype, a_kind),
        "b": MemBuffer("b", b[0], b[1], "intermediate"),
        "y": MemBuffer("y", 1, "f32", "output"),
    }
    nodes = ([] if a_kind == "input" else [node("op0", "x", "a")]) + [
        node("op1", "a", "b", [("a", "b")] if pair else []),
        node("op2", "b a" if later_read else "b", "y"),
    ]
    if a_kind == "input":
        del bufs["x"]
    return plan_memory(nodes, bufs)


@pytest.mark.parametrize(
    ("a", "b", "pair", "later_read", "allowed"),
    [
        ((100, "f32", "intermediate"), (100, "f32"), True, False, True),
        ((100, "f32", "intermediate"), (90, "f32"), True, False, True),  # slightly smaller
        ((100, "f32", "intermediate"), (100, "f32"), False, False, False),  # not proven
        ((100, "f32", "intermediate"), (100, "f32"), True, True, False),  # a read again
        ((100, "f32", "intermediate"), (100, "i32"), True, False, False),  # dtype
        ((100, "f32", "intermediate"), (101, "f32"), True, False, False),  # larger
        ((100, "f32", "intermediate"), (40, "f32"), True, False, False),  # much smaller
        ((100, "f32", "input"), (100, "f32"), True, False, False),  # the caller's storage
    ],
)
def test_inplace_only_when_allowed(a, b, pair, later_read, allowed) -> None:
    plan = inplace_case(a, b, pair, later_read)
    assert [(r.new, r.old) for r in plan.inplace] == ([("b", "a")] if allowed else [])
    assert bool(plan.declined) == (pair and not allowed)
    if allowed:  # a and b share a's storage at op1; at op2 it is held beside y
        assert plan.peak_bytes == 100 + b[0]
        assert plan.planned_peak_bytes == 100 + 1


def test_describe_shows_timeline_peak_reuses_and_pool() -> None:
    bufs = buffers(
        ("x", 100, "input"),
        ("a", 100, "intermediate"),
        ("b", 100, "intermediate"),
        ("c", 100, "intermediate"),
        ("y", 4, "output"),
    )
    nodes = [
        node("op0", "x", "a"),
        node("op1", "a", "b"),
        node("op2", "b", "c"),
        node("op3", "c", "y"),
    ]
    text = plan_memory(nodes, bufs, pool=True).describe()
    assert "<- peak" in text and "c = a; del a  # reuse" in text
    assert "pool: 200 B for 3 intermediates" in text and "M* 200 B" in text


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([node("op0", "zz", "a")], "unknown buffer zz"),
        ([node("op0", "a", "a")], "reads a before any node writes it"),
        ([node("op0", "x", "x")], "writes input x"),
        ([node("op0", "x", "a"), node("op0", "a", "y")], "two nodes are named 'op0'"),
        ([node("op0", "x", "a")], "output buffer y is never written"),
    ],
)
def test_errors_name_the_problem(nodes, message) -> None:
    bufs = buffers(("x", 1, "input"), ("a", 1, "intermediate"), ("y", 1, "output"))
    with pytest.raises(ValueError, match=message):
        plan_memory(nodes, bufs)


# ---- properties over random graphs -------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(schedules(max_nodes=14))
def test_candidates_are_topological_and_never_worse(case) -> None:
    nodes, bufs = case
    plan = plan_memory(nodes, bufs)
    by_name = {n.name: n for n in nodes}
    for name, order in plan.candidate_orders.items():
        steps = [by_name[n] for n in order]
        assert sorted(order) == sorted(by_name) and replay(steps) == replay(nodes)
        assert plan.candidates[name] == ref_peak(steps, bufs)
    assert plan.order == plan.candidate_orders[plan.chosen]
    assert plan.peak_bytes == ref_peak(reordered(nodes, plan), bufs)
    assert plan.peak_bytes == min(plan.candidates.values()) <= plan.candidates["original"]
    assert plan.candidates["original"] == ref_peak(nodes, bufs)
    assert dict(plan.lifetimes) == ref_lifetimes(reordered(nodes, plan), bufs)


@settings(max_examples=40, deadline=None)
@given(schedules(max_nodes=6))
def test_simulation_matches_brute_force_over_all_orders(case) -> None:
    nodes, bufs = case
    orders = valid_orders(nodes)
    for order in orders:
        plan = plan_memory(order, bufs)
        assert plan.candidates["original"] == ref_peak(order, bufs)
        assert replay(reordered(nodes, plan)) == replay(nodes)  # still one of the valid orders
    assert plan_memory(nodes, bufs).peak_bytes >= min(ref_peak(o, bufs) for o in orders)


def storage_slots(plan: MemoryPlan) -> dict[str, list[str]]:
    """Storage owner -> the buffers that occupy it, following the reuse records."""
    owner: dict[str, str] = {}
    for record in sorted(plan.reuses + plan.inplace, key=lambda r: plan.lifetimes[r.new][0]):
        owner[record.new] = owner.get(record.old, record.old)
    slots: dict[str, list[str]] = {}
    for name in plan.lifetimes:
        slots.setdefault(owner.get(name, name), []).append(name)
    return slots


@settings(max_examples=150, deadline=None)
@given(schedules(max_nodes=16))
def test_reuse_shares_storage_only_between_disjoint_lifetimes(case) -> None:
    nodes, bufs = case
    plan = plan_memory(nodes, bufs)
    steps = reordered(nodes, plan)
    shared_step = {(r.new, r.old): plan.lifetimes[r.new][0] for r in plan.inplace}
    for r in plan.reuses:
        # keyed by storage size: `old` may itself sit in a larger in-place storage
        assert bufs[r.new].dtype == bufs[r.old].dtype
        assert bufs[r.new].nbytes >= bufs[r.old].nbytes
        assert bufs[r.old].kind == "intermediate"
    for r in plan.inplace:
        step = shared_step[(r.new, r.old)]
        assert (r.old, r.new) in steps[step].inplace_ok
        assert plan.lifetimes[r.old][1] == step and bufs[r.old].kind == "intermediate"
    slots = storage_slots(plan)
    held = [0] * len(nodes)
    for owner, members in slots.items():
        for u, v in itertools.combinations(members, 2):
            (du, lu), (dv, lv) = plan.lifetimes[u], plan.lifetimes[v]
            if du <= lv and dv <= lu:  # overlapping lifetimes: only an in-place pair, one step
                assert (
                    shared_step.get((u, v), shared_step.get((v, u))) == max(du, dv) == min(lu, lv)
                )
        first = min(plan.lifetimes[m][0] for m in members)
        last = max(plan.lifetimes[m][1] for m in members)
        for t in range(first, last + 1):
            held[t] += bufs[owner].nbytes
    assert max(held, default=0) == plan.planned_peak_bytes <= plan.peak_bytes


def assert_pool_layout_sound(blocks: Sequence[PoolBlock]) -> None:
    layout = plan_pool(blocks)
    for u, v in itertools.combinations(blocks, 2):
        if u.first <= v.last and v.first <= u.last:
            ou, ov = layout.offsets[u.name], layout.offsets[v.name]
            assert ou + u.nbytes <= ov or ov + v.nbytes <= ou, (u, v, layout)
    for b in blocks:
        assert layout.offsets[b.name] + b.nbytes <= layout.size
    assert layout.live_peak <= layout.size <= sum(b.nbytes for b in blocks)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([1, 8, 16, 24, 64, 100]), st.integers(0, 20), st.integers(0, 6)),
        max_size=25,
    )
)
def test_pool_offsets_never_overlap_for_overlapping_lifetimes(specs) -> None:
    assert_pool_layout_sound(
        [
            PoolBlock(f"b{k}", size, first, first + length)
            for k, (size, first, length) in enumerate(specs)
        ]
    )


@settings(max_examples=60, deadline=None)
@given(schedules(max_nodes=16))
def test_pool_of_a_plan(case) -> None:
    nodes, bufs = case
    plan = plan_memory(nodes, bufs, pool=True)
    assert plan.pool is not None
    pooled = [n for n in plan.lifetimes if bufs[n].kind == "intermediate"]
    assert set(plan.pool.offsets) == set(pooled)
    assert_pool_layout_sound([PoolBlock(n, bufs[n].nbytes, *plan.lifetimes[n]) for n in pooled])


# ---- Proposition 7.4 ----------------------------------------------------------------------------


def vertex_separation(vertices: Sequence[str], edges: Sequence[tuple[str, str]]) -> int:
    """vs(H) by brute force over all linear orders of the vertices."""
    best = len(vertices)
    for pi in itertools.permutations(vertices):
        worst = 0
        for i in range(1, len(pi) + 1):
            prefix = set(pi[:i])
            worst = max(
                worst,
                sum(
                    any(
                        (u == a and b not in prefix) or (u == b and a not in prefix)
                        for a, b in edges
                    )
                    for u in prefix
                ),
            )
        best = min(best, worst)
    return best


@pytest.mark.parametrize(
    "edges",
    [
        [("u", "v"), ("v", "w")],  # path P3
        [("c", "l1"), ("c", "l2"), ("c", "l3")],  # star K1,3
        [("p", "q"), ("q", "r"), ("r", "s")],  # path P4
        [("u", "v"), ("v", "w"), ("u", "w")],  # triangle
    ],
)
def test_proposition_7_4_bounds(edges) -> None:
    vertices = list(dict.fromkeys(v for e in edges for v in e))
    K = len(edges) + 1
    bufs = {"ext": MemBuffer("ext", 0, "f32", "input")}
    nodes = []
    for u in vertices:
        bufs[u] = MemBuffer(u, K, "f32", "intermediate")
        nodes.append(node(f"n_{u}", "ext", u))
    for a, b in edges:
        bufs[f"{a}{b}"] = MemBuffer(f"{a}{b}", 1, "f32", "output")
        nodes.append(node(f"e_{a}{b}", f"{a} {b}", f"{a}{b}"))
    vs = vertex_separation(vertices, edges)
    best = min(ref_peak(order, bufs) for order in valid_orders(nodes))
    assert K * (vs + 1) <= best <= K * (vs + 1) + len(edges)
    assert plan_memory(nodes, bufs).peak_bytes >= best


# ---- scaling -----------------------------------------------------------------------------------


def synthetic(n: int, fan_in: int) -> tuple[list[MemNode], dict[str, MemBuffer]]:
    """A chain (fan_in=1) or a graph whose node k reads b(k-1) and b(k//2) ... (fan_in=2)."""
    bufs = {"x": MemBuffer("x", 64, "f32", "input")}
    nodes = []
    for k in range(n):
        reads = (
            ("x",) if k == 0 else tuple(dict.fromkeys(f"b{j}" for j in [k - 1, k // 2][:fan_in]))
        )
        kind = "output" if k == n - 1 else "intermediate"
        bufs[f"b{k}"] = MemBuffer(f"b{k}", 64 * (1 + k % 7), "f32", kind)
        nodes.append(MemNode(f"op{k}", reads, (f"b{k}",), ((reads[0], f"b{k}"),)))
    return nodes, bufs


@pytest.mark.parametrize("fan_in", [1, 2])
def test_five_thousand_nodes_plan(fan_in: int) -> None:
    """Scale (not speed: that is measured in benchmarks/sched_scaling.py): a valid plan."""
    nodes, bufs = synthetic(5000, fan_in)
    plan = plan_memory(nodes, bufs)
    assert sorted(plan.order) == sorted(n.name for n in nodes)
    assert plan.peak_bytes <= plan.candidates["original"]
