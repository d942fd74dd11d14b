"""The HTML explain page, parsed and checked against the Schedule and the memory plan."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import stax
from stax.report.graph import COLLAPSE_OPS, fusion_graph, graph_svg
from stax.report.page import explain_to_html
from stax.report.timeline import timeline_svg
from stax.sched.fusion import FusionDecision
from stax.sched.memory import MemBuffer


def program(x, w):
    c = np.cumsum(x, 1)
    d = np.exp(c)  # written in place of c (a single pointwise kernel between two scans)
    e = np.exp(x - x.max(-1, keepdims=True))  # fused softmax rows, kernel-local buffers
    s = e / e.sum(-1, keepdims=True)
    return np.cumsum(d, 1) + np.cumsum(d, 0) + s, (x @ w).T + 1  # extern matmul, transpose


ARGS = (np.linspace(-1, 1, 16 * 32, dtype=np.float32).reshape(16, 32),
        np.linspace(0, 1, 32 * 16, dtype=np.float32).reshape(32, 16))


class Elements(HTMLParser):
    """Every start tag as (tag, attributes, classes, text inside it up to the next tag)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], set[str]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a, set(a.get("class", "").split())))

    def find(self, tag: str, cls: str = "") -> list[dict[str, str]]:
        return [a for t, a, c in self.elements if t == tag and (not cls or cls in c)]


@pytest.fixture(scope="module")
def report():
    return stax.explain(program, *ARGS)


@pytest.fixture(scope="module")
def page(report) -> str:
    return report.to_html()


@pytest.fixture(scope="module")
def parsed(page) -> Elements:
    return Elements(page)


def test_the_program_still_matches_numpy() -> None:
    got = stax.jit(program)(*ARGS)
    want = program(*ARGS)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_kernels_and_ops_match_the_schedule(report, parsed: Elements) -> None:
    kernels = report.schedule.kernels
    links = parsed.find("a", "kernel-link")
    assert [a["data-group"] for a in links] == [g.name for g in kernels]
    ids = [a["data-kernel"] for a in links]
    ops = {a["data-op"]: a["data-kernel"] for a in parsed.find("g", "op")}
    assert ops == {m.name: ids[i] for i, g in enumerate(kernels) for m in g.members}
    sections = parsed.find("details", "kernel-section")
    assert [s["id"] for s in sections] == ids  # each box links to its section
    assert all(a["href"] == f"#{a['data-kernel']}" for a in links)


def test_edges_are_the_buffers_read(report, parsed: Elements) -> None:
    program_ = report.schedule.program
    nbytes = {b.name: b.nbytes for b in program_.buffers}
    writer: dict[str, str] = {}
    want = set()
    for n in program_.nodes:  # the program order: each read names the latest writer
        for buf in n.read_buffers():
            want.add((writer.get(buf, buf), n.name, buf, str(nbytes[buf])))
        writer[n.out] = n.name
    got = {(a["data-src"], a["data-dst"], a["data-buffer"], a["data-bytes"])
           for a in parsed.find("g", "edge")}
    assert got == want
    local = {a["data-buffer"] for a in parsed.find("g", "local")}
    assert local == {lb.buffer for lb in report.schedule.local} != set()


def test_every_rejected_fusion_is_drawn(report, parsed: Elements) -> None:
    rejected = [(r.first, r.second, r.rule, str(r.round)) for r in report.schedule.fusion
                if isinstance(r, FusionDecision) and not r.accepted]
    assert len(rejected) > 5
    drawn = [(a["data-first"], a["data-second"], a["data-rule"], a["data-round"])
             for a in parsed.find("g", "rejected")]
    assert drawn == rejected


def test_rejected_fusions_carry_their_reason(report, page: str) -> None:
    first = next(r for r in report.schedule.fusion
                 if isinstance(r, FusionDecision) and not r.accepted)
    assert html.escape(f"cannot fuse {first.first} with {first.second}: {first.reason}") in page
    assert "stroke-dasharray" in page  # drawn dashed


def test_timeline_matches_the_memory_plan(report, parsed: Elements) -> None:
    plan = report.schedule.memory
    (svg,) = parsed.find("svg", "memory-timeline")
    assert int(svg["data-peak"]) == plan.peak_bytes
    assert int(svg["data-planned-peak"]) == plan.planned_peak_bytes
    bars = parsed.find("rect", "live")
    assert [int(b["data-live"]) for b in bars] == list(plan.live_bytes)
    assert max(int(b["data-live"]) for b in bars) == plan.peak_bytes
    assert {int(b["data-step"]) for b in parsed.find("rect", "peak")} == {
        s for s, live in enumerate(plan.live_bytes) if live == plan.peak_bytes}
    lifetimes = {a["data-buffer"]: (int(a["data-first"]), int(a["data-last"]))
                 for a in parsed.find("g", "lifetime")}
    assert lifetimes == dict(plan.lifetimes)
    marks = {a["data-buffer"]: a["data-mark"] for a in parsed.find("g", "lifetime")
             if a["data-mark"]}
    assert marks == {r.new: "reuse" for r in plan.reuses} | {r.new: "inplace"
                                                              for r in plan.inplace}
    assert "inplace" in marks.values() and "reuse" in marks.values()


def test_kernel_sections_show_loops_and_highlighted_code(report, page: str) -> None:
    plans = report.compilation.program.plans
    for plan in plans:
        section = page[page.index(f'<summary>{plan.name} — '):]
        section = section[: section.index("</details>")]
        assert f"form {plan.form}" in section
        assert 'class="code"' in section and "<span" in section  # Pygments markup
        assert html.escape(f"// {plan.name}:") in section
        for d in plan.decisions:
            assert html.escape(d.rule) in section
        if plan.parallel_depth:
            assert 'class="role parallel"' in section
    assert "matmul call in the wrapper" in page
    extern = page[page.index("<summary>extern — "):]
    assert "(extern, BLAS)" in extern[: extern.index("</details>")]  # the wrapper's call line


def test_page_is_self_contained(page: str) -> None:
    without_ns = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in without_ns and "https://" not in without_ns
    parsed = Elements(page)
    assert not parsed.find("link") and not [a for _, a, _ in parsed.elements if "src" in a]


def text_report(page: str) -> str:
    start = page.index('<pre class="text">', page.index('id="text-report"'))
    return html.unescape(page[start + len('<pre class="text">'): page.index("</pre>", start)])


def test_text_report_is_included_unchanged(report, page: str) -> None:
    assert text_report(page) == str(report)


def test_repr_html_and_to_html_path(report, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert report.to_html(out) == out.read_text(encoding="utf-8")
    (frame,) = Elements(report._repr_html_()).find("iframe")  # isolated from the notebook
    assert frame["srcdoc"] == report.to_html()


def test_verify_draws_the_schedule_tree_with_the_verdict() -> None:
    def rows(x):
        return x / x.sum(-1, keepdims=True)

    report = stax.explain(rows, ARGS[0], verify=True)
    parsed = Elements(report.to_html())
    (tree,) = parsed.find("svg", "schedule-tree")
    assert report.verification.legal and tree["data-legal"] == "1"
    kinds = [a["data-kind"] for a in parsed.find("g", "tnode")]
    assert "band" in kinds and "domain" in kinds


def test_a_function_that_fails_to_trace_still_gets_a_page(tmp_path: Path) -> None:
    def broken(x):
        y = x + 1
        return y.no_such_method()

    out = tmp_path / "f.html"
    page, ok = explain_to_html(out, broken, ARGS[0])
    assert not ok and out.read_text(encoding="utf-8") == page
    assert "AttributeError" in page and "no_such_method" in page
    at = page[page.index('class="failed-at">'):]
    assert f"{Path(__file__).name}:" in at[:300] and "in broken" in at[:300]
    user = Elements(page).find("li", "user")
    assert user  # the user's frame is marked


def test_cli_html(tmp_path: Path) -> None:
    src = tmp_path / "prog.py"
    src.write_text("import numpy as np\n\ndef f(x):\n    return np.exp(x).sum(-1)\n\n"
                   "def g(x):\n    return x.no_such_method()\n")
    out = tmp_path / "out.html"
    ok = subprocess.run([sys.executable, "-m", "stax", "explain", f"{src}:f", "--shapes", "8x16",
                         "--html", str(out)], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert Elements(out.read_text(encoding="utf-8")).find("a", "kernel-link")
    bad = subprocess.run([sys.executable, "-m", "stax", "explain", f"{src}:g", "--html",
                          str(out)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "compilation failed" in bad.stderr
    assert "prog.py:7 in g" in out.read_text(encoding="utf-8")


def test_thousands_of_ops_render_collapsed() -> None:
    """A chain of 2,000 ops (scheduled, not compiled: the graph and timeline need no C++)."""
    from stax.api import _as_array, trace
    from stax.lower import lower
    from stax.sched.scheduler import schedule

    def chain(x):
        for k in list(range(1000)):  # a list: unrolled (a range loop compiles once, H)
            x = np.cumsum(x * (1.0 + k * 1e-6), 0)  # scans are never fused: 2 ops per step
        return x

    a = _as_array(np.ones(8))
    program_ = lower(trace(chain, (a,)).graph, [(1,)]).program
    sched = schedule(program_)
    assert len(sched.nodes) > COLLAPSE_OPS
    graph = fusion_graph(sched, {})
    svg = graph_svg(graph)
    parsed = Elements(svg)
    assert parsed.find("svg", "fusion-graph")[0]["data-collapsed"] == "1"
    assert "kernels are not drawn" in svg or len(parsed.find("a", "kernel-link")) == len(
        sched.kernels)
    assert len(svg) < 5_000_000
    buffers = {b.name: MemBuffer(b.name, b.nbytes, b.dtype.name,
                                 "input" if b.kind == "input" else b.kind)
               for b in program_.buffers}
    timeline = timeline_svg(sched.memory, buffers, {})
    assert f'data-peak="{sched.memory.peak_bytes}"' in timeline


def test_a_nested_program_shows_its_flattening_steps(tmp_path: Path) -> None:
    import stax.nested as sn

    def f(ns):
        return sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: i + 2, sn.iota(n))), ns)

    ns = np.array([5, 7])
    np.testing.assert_array_equal(sn.jit(f)(ns), [sum(i + 2 for i in range(n)) for n in ns])
    explanation = sn.explain(f, ns)
    page, ok = explain_to_html(tmp_path / "n.html", sn.jit(f), ns)
    assert ok
    steps = page[page.index('<ol class="flattening">'):page.index("</ol>")]
    assert [html.escape(r) in steps for r, _ in explanation.run.rules] == [True] * len(
        explanation.run.rules)
    assert "map-of-reduce -&gt; segreduce" in steps
    sections = Elements(page).find("details", "kernel-section")
    assert len(sections) == len(explanation.run.kernels) > 0
    # each kernel shows its own code, not the backend's shared prelude
    shown = html.unescape(re.sub("<[^>]+>", "", page[page.index('class="kernel-section'):]))
    assert "STAX_NESTED_SIMD_MATH" not in shown
    assert text_report(page) == str(explanation)
