"""The fusion graph of a Schedule: ops grouped into kernels, buffers on edges, rejected fusions.

`fusion_graph` extracts the graph (plain data, tested against the Schedule); `graph_svg` lays
it out in layers (networkx's topological generations, ordered by the barycentre of each
kernel's predecessors, the Sugiyama heuristic) and draws it as inline SVG. Each kernel is a box
linking to its section of the page; each op a row in it. Programs with many ops draw kernels
collapsed (one row per kernel) and cap labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import networkx as nx

from stax.sched.fusion import FusionDecision
from stax.sched.scheduler import Schedule

COLLAPSE_OPS = 300  # more ops than this: kernels drawn as one row each
MAX_KERNELS_DRAWN = 400  # more kernels than this: the rest are listed, not drawn
MAX_REJECTED_DRAWN = 1000
LABEL_CHARS = 44

BOX_W, ROW_H, HEAD_H, GAP_X, GAP_Y, MARGIN, LEFT = 250, 18, 24, 60, 80, 20, 200


@dataclass(frozen=True)
class Kernel:
    id: str  # HTML id of its section
    title: str  # the plan's name, or "extern" for a call in the wrapper
    group: str  # the scheduler's group name (its members joined by "_")
    ops: tuple[str, ...]
    labels: tuple[str, ...]  # one per op: its source ops


@dataclass(frozen=True)
class Edge:
    src: str  # an op, or an input/constant buffer
    dst: str  # an op
    buffer: str
    nbytes: int
    local: bool  # never leaves its kernel


@dataclass(frozen=True)
class Rejected:
    src: str  # the last op of the first group
    dst: str  # the first op of the second group
    decision: FusionDecision


@dataclass(frozen=True)
class FusionGraph:
    kernels: tuple[Kernel, ...]  # in execution order
    sources: tuple[tuple[str, int], ...]  # input and constant buffers read, with bytes
    edges: tuple[Edge, ...]
    rejected: tuple[Rejected, ...]
    outputs: frozenset[str]  # ops whose buffer is a program output

    def kernel_of(self) -> dict[str, str]:
        return {op: k.id for k in self.kernels for op in k.ops}


def kernel_ids(schedule: Schedule) -> dict[str, str]:
    """Group name -> HTML id, `k0, k1, ...` in execution order."""
    return {g.name: f"k{i}" for i, g in enumerate(schedule.kernels)}


def fusion_graph(schedule: Schedule, plan_names: dict[str, str]) -> FusionGraph:
    """The graph of `schedule`; `plan_names` maps a group name to its kernel plan's name."""
    ids = kernel_ids(schedule)
    kernels = tuple(
        Kernel(ids[g.name], plan_names.get(g.name, "extern"), g.name,
               tuple(m.name for m in g.members),
               tuple(m.node.origin or m.node.kind for m in g.members))
        for g in schedule.kernels)
    buffers = schedule.program.buffer_map
    local = {lb.buffer for lb in schedule.local}
    writer: dict[str, str] = {}
    sources: dict[str, int] = {}
    edges = []
    for n in schedule.nodes:  # topological: the writer seen last is the one read
        for buf in n.node.read_buffers():
            src = writer.get(buf)
            if src is None:
                sources[buf] = buffers[buf].nbytes
                src = buf
            edges.append(Edge(src, n.name, buf, buffers[buf].nbytes, buf in local))
        writer[n.node.out] = n.name
    rejected = tuple(
        Rejected(r.first.split("_")[-1], r.second.split("_")[0], r)
        for r in schedule.fusion if isinstance(r, FusionDecision) and not r.accepted)
    outputs = frozenset(writer[b] for b in schedule.program.outputs if b in writer)
    return FusionGraph(kernels, tuple(sources.items()), tuple(edges), rejected, outputs)


# ---- layout and drawing ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Box:
    x: int
    y: int
    h: int


def _layout(graph: FusionGraph, kernels: Sequence[Kernel], collapsed: bool
            ) -> dict[str, _Box]:
    """Boxes for sources and kernels: layers by topological generation, each layer ordered by
    the mean position of its predecessors (one downward barycentre sweep)."""
    owner = graph.kernel_of()
    dag = nx.DiGraph()
    dag.add_nodes_from(f"src:{b}" for b, _ in graph.sources)
    dag.add_nodes_from(k.id for k in kernels)
    drawn = set(dag)
    for e in graph.edges:
        a = owner.get(e.src, f"src:{e.src}")
        b = owner[e.dst]
        if a != b and a in drawn and b in drawn:
            dag.add_edge(a, b)
    height = {k.id: HEAD_H + (0 if collapsed else ROW_H * len(k.ops)) + 6 for k in kernels}
    boxes: dict[str, _Box] = {}
    order: dict[str, float] = {}
    y = MARGIN
    for layer in nx.topological_generations(dag):
        layer.sort(key=lambda v: (sum(order[p] for p in dag.predecessors(v)) /
                                  max(dag.in_degree(v), 1), v))
        h = max(height.get(v, HEAD_H) for v in layer)
        for i, v in enumerate(layer):
            order[v] = i
            boxes[v] = _Box(LEFT + i * (BOX_W + GAP_X), y, height.get(v, HEAD_H))
        y += h + GAP_Y
    return boxes


def _cap(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class _Anchor:
    box: _Box
    row_y: int  # the middle of the op's row (the box's head for sources and collapsed kernels)
    slot: int  # the op's index in its kernel


def graph_svg(graph: FusionGraph) -> str:
    n_ops = sum(len(k.ops) for k in graph.kernels)
    collapsed = n_ops > COLLAPSE_OPS
    kernels = graph.kernels[:MAX_KERNELS_DRAWN]
    boxes = _layout(graph, kernels, collapsed)
    anchor: dict[str, _Anchor] = {}
    parts: list[str] = []
    for b, nbytes in graph.sources:
        box = boxes[f"src:{b}"]
        anchor[b] = _Anchor(box, box.y + HEAD_H // 2, 0)
        parts.append(
            f'<g class="source" data-buffer="{escape(b)}"><rect x="{box.x}" y="{box.y}" '
            f'width="{BOX_W}" height="{HEAD_H}" rx="11"/><text x="{box.x + BOX_W // 2}" '
            f'y="{box.y + 16}" text-anchor="middle">{escape(b)} · {human_bytes(nbytes)}</text></g>')
    for k in kernels:
        box = boxes[k.id]
        title = f"{k.title} · {len(k.ops)} op{'s' if len(k.ops) > 1 else ''}"
        rows = []
        for i, (op, label) in enumerate(zip(k.ops, k.labels, strict=True)):
            y = box.y + HEAD_H + i * ROW_H
            anchor[op] = _Anchor(box, box.y + HEAD_H // 2 if collapsed else y + ROW_H // 2, i)
            out = ' class="output"' if op in graph.outputs else ""
            text = "" if collapsed else (
                f'<text{out} x="{box.x + 8}" '
                f'y="{y + 13}">{escape(_cap(f"{op}: {label}"))}</text>'
                f'<title>{escape(f"{op}: {label}")}</title>')
            rows.append(f'<g class="op" data-op="{op}" data-kernel="{k.id}">{text}</g>')
        parts.append(
            f'<a href="#{k.id}" class="kernel-link" data-kernel="{k.id}" '
            f'data-group="{escape(k.group)}"><g class="kernel"><rect x="{box.x}" y="{box.y}" '
            f'width="{BOX_W}" height="{box.h}" rx="6"/><text class="head" x="{box.x + 8}" '
            f'y="{box.y + 16}">{escape(_cap(title))}</text>{"".join(rows)}'
            f"<title>{escape(k.group)}</title></g></a>")
    labelled: set[tuple[int, int, int, int, str]] = set()
    edges = [_edge_svg(e, anchor[e.src], anchor[e.dst], labelled) for e in graph.edges
             if e.src in anchor and e.dst in anchor]
    seen: dict[tuple[int, int, int, int], int] = {}
    label_rows: set[tuple[int, int]] = set()
    rejected = [_rejected_svg(r, anchor[r.src], anchor[r.dst], seen, label_rows)
                for r in graph.rejected[:MAX_REJECTED_DRAWN]
                if r.src in anchor and r.dst in anchor]
    width = max((b.x + BOX_W for b in boxes.values()), default=0) + MARGIN + 140
    height = max((b.y + b.h for b in boxes.values()), default=0) + MARGIN
    notes = []
    if len(graph.kernels) > MAX_KERNELS_DRAWN:
        notes.append(f"{len(graph.kernels) - MAX_KERNELS_DRAWN} more kernels are not drawn "
                     "(see the text report)")
    if len(graph.rejected) > MAX_REJECTED_DRAWN:
        notes.append(f"{len(graph.rejected) - MAX_REJECTED_DRAWN} more rejected fusions are "
                     "not drawn (see the fusion log)")
    if collapsed:
        notes.append(f"{n_ops} ops: kernels are drawn collapsed")
    svg = (f'<svg class="fusion-graph" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" data-collapsed="{int(collapsed)}">'
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
           f'</defs>{"".join(rejected)}{"".join(edges)}{"".join(parts)}</svg>')
    return svg + "".join(f'<p class="note">{escape(n)}</p>' for n in notes)


def _key(a: _Box, b: _Box) -> tuple[int, int, int, int]:
    return a.x, a.y, b.x, b.y


def _edge_svg(e: Edge, src: _Anchor, dst: _Anchor,
              labelled: set[tuple[int, int, int, int, str]]) -> str:
    """Between kernels: from the bottom of the source's box to the top of the reader's box, one
    label per (boxes, buffer); inside a kernel: an arc on the box's right side."""
    label = f"{e.buffer} · {human_bytes(e.nbytes)}"
    data = (f'data-src="{escape(e.src)}" data-dst="{e.dst}" data-buffer="{escape(e.buffer)}" '
            f'data-bytes="{e.nbytes}"')
    if src.box == dst.box:
        right = src.box.x + BOX_W
        bend = right + 24 + min(abs(dst.row_y - src.row_y) // 3, 40)
        path = (f"M{right},{src.row_y} C{bend},{src.row_y} {bend},{dst.row_y} "
                f"{right},{dst.row_y}")
        lx, ly = bend - 6, (src.row_y + dst.row_y) // 2 + 4
    else:
        x1, y1 = src.box.x + BOX_W // 2, src.box.y + src.box.h
        x2, y2 = dst.box.x + 24 + min(dst.slot, 12) * 16, dst.box.y
        if y2 <= y1:  # a reader in the same layer (never for a DAG layout; kept safe)
            y1 = src.box.y
        mid = (y1 + y2) // 2
        path = f"M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}"
        lx, ly = (x1 + x2) // 2 + 4, mid
    key = (*_key(src.box, dst.box), e.buffer)
    text = "" if key in labelled else f'<text x="{lx}" y="{ly}">{escape(label)}</text>'
    labelled.add(key)
    cls = "edge local" if e.local else "edge"
    return (f'<g class="{cls}" {data}><path d="{path}" marker-end="url(#arrow)"/>{text}'
            f"<title>{escape(label)}{' (kernel-local)' if e.local else ''}</title></g>")


def _rejected_svg(r: Rejected, src: _Anchor, dst: _Anchor,
                  seen: dict[tuple[int, int, int, int], int],
                  label_rows: set[tuple[int, int]]) -> str:
    """A dashed arc on the left of the boxes between the two groups' ops; arcs between the
    same boxes fan out, and only the first is labelled (each has its reason as a tooltip);
    labels move down until they do not overlap another one (`label_rows`: (x, y // 12))."""
    key = _key(src.box, dst.box)
    n = seen.get(key, 0)
    seen[key] = n + 1
    bend = min(src.box.x, dst.box.x) - 30 - min(n, 10) * 6
    path = (f"M{src.box.x},{src.row_y} C{bend},{src.row_y} {bend},{dst.row_y} "
            f"{dst.box.x},{dst.row_y}")
    d = r.decision
    tip = f"round {d.round}: cannot fuse {d.first} with {d.second}: {d.reason}"
    text = ""
    if not n:
        y = (src.row_y + dst.row_y) // 2
        while (bend, y // 12) in label_rows or (bend, y // 12 + 1) in label_rows:
            y += 12
        label_rows.add((bend, y // 12))
        text = (f'<text x="{bend - 4}" y="{y}" text-anchor="end">'
                f"{escape(_cap(d.rule, 24))}</text>")
    return (f'<g class="rejected" data-first="{escape(d.first)}" data-second="{escape(d.second)}"'
            f' data-rule="{escape(d.rule)}" data-round="{d.round}"><path d="{path}"/>{text}'
            f"<title>{escape(tip)}</title></g>")
