"""A polyhedral schedule tree (`stax.poly.tree`) drawn as an SVG tree (a tidy layout: leaves
left to right, each parent centred over its children)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

NODE_W, NODE_H, GAP_X, GAP_Y, MARGIN = 190, 34, 16, 34, 10
MAX_NODES = 500


@dataclass(frozen=True)
class _Drawn:
    kind: str
    label: str
    detail: str  # the full text, as a tooltip
    children: tuple[_Drawn, ...]


def _describe(node: Any) -> _Drawn:
    kind = type(node).__name__
    kids = tuple(getattr(node, "children", ())) or (
        (node.child,) if getattr(node, "child", None) is not None else ())
    if kind == "Band":
        flags = "".join("c" if c else "-" for c in node.coincident)
        label = f"band ({'permutable' if node.permutable else 'not permutable'}) [{flags}]"
        detail = str(node.schedule)
    elif kind == "Filter":
        detail = str(node.filter)
        label = "filter " + ", ".join(sorted({s.split("[")[0].strip(" {;") for s in
                                              detail.split(";")}))
    elif kind == "Mark":
        label = detail = f"mark {node.name}"
    elif kind == "Context":
        label, detail = "context", str(node.context)
    else:
        label = detail = kind.lower()
    return _Drawn(kind.lower(), label, detail, tuple(_describe(k) for k in kids))


def tree_svg(tree: Any, legal: bool | None) -> str:
    """`tree` a ScheduleTree; `legal` the verdict (None: not checked)."""
    root = _Drawn("domain", "domain", str(tree.domain), (_describe(tree.root),))
    placed: list[tuple[_Drawn, float, int]] = []
    edges: list[tuple[float, int, float, int]] = []
    next_leaf = [0.0]

    def place(node: _Drawn, depth: int) -> float:
        if len(placed) >= MAX_NODES:
            return next_leaf[0]
        if not node.children:
            x = next_leaf[0]
            next_leaf[0] += 1
        else:
            xs = [place(c, depth + 1) for c in node.children]
            x = (xs[0] + xs[-1]) / 2
            edges.extend((x, depth, cx, depth + 1) for cx in xs)
        placed.append((node, x, depth))
        return x

    place(root, 0)

    def px(x: float) -> float:
        return MARGIN + x * (NODE_W + GAP_X)

    def py(depth: int) -> int:
        return MARGIN + depth * (NODE_H + GAP_Y)

    parts = [f'<line x1="{px(x1) + NODE_W / 2}" y1="{py(d1) + NODE_H}" '
             f'x2="{px(x2) + NODE_W / 2}" y2="{py(d2)}"/>' for x1, d1, x2, d2 in edges]
    for node, x, depth in placed:
        label = node.label if len(node.label) <= 30 else node.label[:29] + "…"
        parts.append(f'<g class="tnode {node.kind}" data-kind="{node.kind}"><rect x="{px(x)}" '
                     f'y="{py(depth)}" width="{NODE_W}" height="{NODE_H}" rx="5"/>'
                     f'<text x="{px(x) + 6}" y="{py(depth) + 21}">{escape(label)}</text>'
                     f"<title>{escape(node.detail)}</title></g>")
    width = px(next_leaf[0]) + MARGIN
    height = py(max((d for _, _, d in placed), default=0)) + NODE_H + MARGIN
    verdict = "" if legal is None else f' data-legal="{int(legal)}"'
    return (f'<svg class="schedule-tree" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}"{verdict}>{"".join(parts)}</svg>')
