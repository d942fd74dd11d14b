"""`stax.explain(...).to_html(path)`: one self-contained HTML page (inline SVG, CSS and a few
lines of script; nothing fetched) with the fusion graph, the memory timeline, each kernel's loop
structure and highlighted C++, the schedule tree and legality verdict (`verify=True`), and the
text report. `explain_to_html` also writes a page when the function fails to compile, showing
where it failed."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from stax.report.graph import fusion_graph, graph_svg, human_bytes, kernel_ids
from stax.report.kernels import CODE_CSS, code_html, kernel_snippets, loop_html, loop_tree
from stax.report.timeline import timeline_svg
from stax.report.tree import tree_svg
from stax.sched.fusion import FusionDecision
from stax.sched.memory import MemBuffer

if TYPE_CHECKING:
    from stax.explain import Report

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("stax.report", "."),
                          autoescape=True, undefined=jinja2.StrictUndefined)
STAX_DIR = str(Path(__file__).resolve().parent.parent)


def render(report: Report, title: str = "") -> str:
    """The page for `report` (a `stax.explain` Report)."""
    schedule = report.schedule
    plans = {tuple(n.name for n in p.nodes): p for p in report.compilation.program.plans}
    plan_of = {g.name: plans.get(tuple(m.name for m in g.members)) for g in schedule.kernels}
    names = {g: p.name for g, p in plan_of.items() if p is not None}
    graph = fusion_graph(schedule, names)
    ids = kernel_ids(schedule)
    memory = schedule.memory
    buffers = {b.name: MemBuffer(b.name, b.nbytes, b.dtype.name,
                                 "input" if b.kind in ("input", "const") else b.kind)
               for b in schedule.program.buffers}
    titles = {g.name: names.get(g.name, "extern") for g in schedule.kernels}
    rejected = sum(1 for r in schedule.fusion if isinstance(r, FusionDecision) and not r.accepted)
    c = report.compilation
    summary = [("ops", len(schedule.nodes)), ("kernels", len(schedule.kernels)),
               ("rejected fusions", rejected), ("peak M*", human_bytes(memory.peak_bytes)),
               ("compile time", f"{c.seconds * 1000:.0f} ms")]
    if report.gap is not None:
        summary.append(("greedy vs exact", f"{report.gap.greedy_cost - report.gap.optimal_cost}"
                                           " B gap"))
    kernels = []
    snippets = kernel_snippets(report.code)
    for g in schedule.kernels:
        plan = plan_of[g.name]
        members = ", ".join(f"{m.name} ({m.node.origin or m.node.kind})" for m in g.members)
        if plan is None:
            node = g.members[0].node
            kernels.append({
                "id": ids[g.name], "group": g.name, "title": "extern", "ops": members,
                "headline": f"{node.fn} call in the wrapper", "loops": "", "decisions": [],
                "code": Markup(code_html(_wrapper_lines(report.wrapper, node.name, node.out),
                                         python=True))})
            continue
        kernels.append({
            "id": ids[g.name], "group": g.name, "title": plan.name, "ops": members,
            "headline": f"form {plan.form}, parallel depth {plan.parallel_depth}, "
                        f"{len(g.members)} op{'s' if len(g.members) > 1 else ''}",
            "loops": Markup(loop_html(loop_tree(plan))),
            "decisions": [(d.rule, d.text) for d in plan.decisions],
            "code": Markup(code_html(snippets.get(plan.name, report.code)))})
    return _ENV.get_template("page.html.j2").render(
        title=title or _title(c.traced), failure=None, nested=None, summary=summary,
        breaks=[str(b) for b in report.breaks],
        graph_svg=Markup(graph_svg(graph)),
        timeline_svg=Markup(timeline_svg(memory, buffers, titles)),
        peak=human_bytes(memory.peak_bytes), peak_bytes=f"{memory.peak_bytes:,}",
        planned=human_bytes(memory.planned_peak_bytes), chosen=memory.chosen,
        chosen_reason=memory.reason, kernels=kernels,
        verification=_verification(report.verification), code_css=Markup(CODE_CSS),
        text=str(report))


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    source: str
    user: bool  # outside the stax package


def render_failure(title: str, error: BaseException) -> str:
    """A page saying that compiling `title` failed, with the traceback (user frames marked)."""
    frames = [Frame(f.filename, f.lineno or 0, f.name, (f.line or "").strip(),
                    not str(Path(f.filename).resolve()).startswith(STAX_DIR))
              for f in traceback.extract_tb(error.__traceback__)]
    user = [f for f in frames if f.user and f.function != "explain_to_html"]
    at = f"{user[-1].file}:{user[-1].line} in {user[-1].function}" if user else ""
    failure = {"kind": type(error).__name__, "message": str(error), "frames": frames, "at": at}
    text = "".join(traceback.format_exception(error))
    return _ENV.get_template("page.html.j2").render(
        title=title, failure=failure, nested=None, code_css=Markup(CODE_CSS), text=text)


def render_nested(explanation: Any, title: str) -> str:
    """The page for a nested program's explanation (`stax.nested.explain`): its source, the
    flattening rules applied in order, and each segmented kernel's C++."""
    run = explanation.run
    kernels = [{"id": f"n{j}", "kind": k.kind, "summary": k.summary,
                "code": Markup(code_html(k.body.strip()))}
               for j, k in enumerate(run.kernels)]
    nested = {"source": Markup(code_html(explanation.source, python=True)),
              "rules": list(run.rules), "kernels": kernels}
    return _ENV.get_template("page.html.j2").render(
        title=title, failure=None, nested=nested, code_css=Markup(CODE_CSS),
        text=str(explanation))


def explain_to_html(path: str | Path | None, fn: Callable[..., Any], *args: Any,
                    **options: Any) -> tuple[str, bool]:
    """`stax.explain(fn, *args, **options).to_html(path)`, or, when compiling fails, a page
    showing where. Returns (the page, whether it compiled); writes it to `path` if given."""
    from stax.explain import Report, explain

    title = getattr(fn, "__qualname__", None) or repr(fn)
    try:
        report = explain(fn, *args, **options)
        page = render(report, title) if isinstance(report, Report) else render_nested(report,
                                                                                     title)
        ok = True
    except Exception as e:  # any failure of tracing or compiling becomes the page's content
        page, ok = render_failure(title, e), False
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page, ok


def _title(traced: Any) -> str:
    return f"{len(traced.graph.ops)} graph ops"


def _wrapper_lines(wrapper: str, node: str, buffer: str) -> str:
    """The wrapper's lines that allocate `buffer` and make the extern call of `node`."""
    lines = [line.strip() for line in wrapper.splitlines()
             if line.strip().startswith(f"{buffer} = ") or f"# {node}:" in line]
    return "\n".join(lines) or wrapper


def _verification(verdict: Any) -> dict[str, Any] | None:
    if verdict is None:
        return None
    legal = getattr(verdict, "legal", None)
    tree = getattr(verdict, "tree", None)
    headline = ("legal: the fused order respects every dependence" if legal else
                "not verified" if legal is None else "ILLEGAL: the fused order violates "
                "dependences")
    return {"legal": bool(legal), "headline": headline, "text": str(verdict),
            "tree": Markup(tree_svg(tree, legal)) if tree is not None else ""}
