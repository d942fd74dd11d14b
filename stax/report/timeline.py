"""The memory timeline of a MemoryPlan as inline SVG: live bytes per step (Definition 7.5) as
bars with the peak M* and the planned storage peak as lines, and each buffer's lifetime as a bar,
reuses and in-place writes marked."""

from __future__ import annotations

from html import escape

from stax.report.graph import human_bytes
from stax.sched.memory import MemBuffer, MemoryPlan

CHART_H, STEP_W, LEFT, TOP, ROW_H = 160, 48, 190, 40, 16
MAX_STEPS_DRAWN = 2000
MAX_LIFETIMES_DRAWN = 300


def timeline_svg(plan: MemoryPlan, buffers: dict[str, MemBuffer], titles: dict[str, str]
                 ) -> str:
    """`buffers` gives each buffer's kind and bytes; `titles` each kernel's display name."""
    steps = plan.timeline()[:MAX_STEPS_DRAWN]
    step_w = max(4, min(STEP_W, 1200 // max(len(steps), 1)))
    scale = CHART_H / max(plan.peak_bytes, 1)
    parts = []
    for step, node, live in steps:
        h = round(live * scale)
        x = LEFT + step * step_w
        peak = " peak" if live == plan.peak_bytes else ""
        tip = f"step {step}: {titles.get(node, node)} · {live:,} B live"
        parts.append(f'<rect class="live{peak}" data-step="{step}" data-live="{live}" '
                     f'x="{x + 1}" y="{TOP + CHART_H - h}" width="{step_w - 2}" height="{h}">'
                     f"<title>{escape(tip)}</title></rect>")
    right = LEFT + len(steps) * step_w
    lines = [("peak-line", plan.peak_bytes, "M*"),
             ("planned-line", plan.planned_peak_bytes, "planned")]
    if plan.planned_peak_bytes == plan.peak_bytes:
        lines = [("peak-line", plan.peak_bytes, "M* = planned")]
    for cls, value, label in lines:
        y = TOP + CHART_H - round(value * scale)
        parts.append(f'<g class="{cls}" data-bytes="{value}"><line x1="{LEFT}" y1="{y}" '
                     f'x2="{right}" y2="{y}"/><text x="{LEFT - 6}" y="{y + 4}" '
                     f'text-anchor="end">{label} {human_bytes(value)}</text></g>')
    marks = {r.new: ("reuse", f"reuses the storage of {r.old}: {r.reason}")
             for r in plan.reuses}
    marks |= {r.new: ("inplace", f"written in place of {r.old}: {r.reason}")
              for r in plan.inplace}
    lifetimes = list(plan.lifetimes.items())[:MAX_LIFETIMES_DRAWN]
    y0 = TOP + CHART_H + 24
    for row, (name, (first, last)) in enumerate(lifetimes):
        y = y0 + row * ROW_H
        buf = buffers[name]
        mark, why = marks.get(name, ("", ""))
        tip = (f"{name}: {buf.kind}, {buf.nbytes:,} B, live steps {first}..{last}"
               + (f"; {why}" if why else ""))
        glyph = {"reuse": " ↺", "inplace": " ✎"}.get(mark, "")
        parts.append(
            f'<g class="lifetime {buf.kind} {mark}" data-buffer="{escape(name)}" '
            f'data-first="{first}" data-last="{last}" data-mark="{mark}">'
            f'<text x="{LEFT - 6}" y="{y + 11}" text-anchor="end">{escape(name)}{glyph}</text>'
            f'<rect x="{LEFT + first * step_w + 1}" y="{y + 2}" '
            f'width="{(last - first + 1) * step_w - 2}" height="{ROW_H - 4}"/>'
            f"<title>{escape(tip)}</title></g>")
    height = y0 + len(lifetimes) * ROW_H + 10
    width = max(right + 40, 720)
    notes = []
    if len(plan.order) > MAX_STEPS_DRAWN:
        notes.append(f"only the first {MAX_STEPS_DRAWN} of {len(plan.order)} steps are drawn")
    if len(plan.lifetimes) > MAX_LIFETIMES_DRAWN:
        notes.append(f"{len(plan.lifetimes) - MAX_LIFETIMES_DRAWN} more lifetimes not drawn")
    svg = (f'<svg class="memory-timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" data-peak="{plan.peak_bytes}" '
           f'data-planned-peak="{plan.planned_peak_bytes}" data-steps="{len(plan.order)}">'
           f'<text x="{LEFT}" y="18">live bytes per step · lifetimes below '
           f'(↺ reuse, ✎ in place)</text>{"".join(parts)}</svg>')
    return svg + "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
