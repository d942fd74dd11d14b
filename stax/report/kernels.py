"""Per kernel: its loop structure (shared loops, parallel and vector axes, form) and its C++."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, PythonLexer

from stax.tiling.plan import KernelPlan

FORMATTER = HtmlFormatter(cssclass="code", nowrap=False)
CODE_CSS = FORMATTER.get_style_defs(".code")
_KERNEL_MARK = re.compile(r"^\s*// (kernel\d+): ")


@dataclass(frozen=True)
class Loop:
    var: str
    extent: int
    role: str  # "parallel", "simd", "tiled", "" (serial)
    children: tuple[Loop | str, ...]  # nested loops, or statements (node names)


def loop_tree(plan: KernelPlan) -> tuple[Loop | str, ...]:
    """The kernel's loop nest: shared outer loops (the first `parallel_depth` run by OpenMP
    threads), then each node's own loops; the innermost loop of each node carries `omp simd`
    unless the form is scalar."""
    vector = plan.form != "scalar"
    inner: list[Loop | str] = []
    for node in plan.nodes:
        own = [(f"x{k}", r) for k, r in enumerate(node.ranges)][plan.shared_depth:]
        own += [(f"r{k}", r) for k, r in enumerate(node.reduction_ranges)]
        body: tuple[Loop | str, ...] = (f"{node.name}: {node.origin or node.kind}",)
        for i, (var, extent) in enumerate(reversed(own)):
            role = "simd" if vector and i == 0 else ""
            if plan.form == "tiled" and i < 2:
                role = "tiled" + (" simd" if i == 0 else "")
            body = (Loop(var, extent, role, body),)
        inner.extend(body)
    tree: tuple[Loop | str, ...] = tuple(inner)
    for depth in reversed(range(plan.shared_depth)):
        role = "parallel" if depth < plan.parallel_depth else ""
        tree = (Loop(f"x{depth}", plan.nodes[0].ranges[depth], role, tree),)
    return tree


def loop_html(tree: tuple[Loop | str, ...]) -> str:
    items = []
    for item in tree:
        if isinstance(item, str):
            items.append(f'<li class="stmt">{escape(item)}</li>')
            continue
        role = f' <span class="role {item.role.split()[0]}">{item.role}</span>' if item.role \
            else ""
        items.append(f'<li><code>for {item.var} &lt; {item.extent}</code>{role}'
                     f"{loop_html(item.children)}</li>")
    return f'<ul class="loops">{"".join(items)}</ul>'


def kernel_snippets(cpp: str) -> dict[str, str]:
    """Each kernel's lines of the generated C++ (from its `// kernelN:` comment to the next
    kernel's, or the end of its function), dedented; one pass over the text."""
    lines = cpp.splitlines()
    starts = [(i, m.group(1)) for i, line in enumerate(lines)
              if (m := _KERNEL_MARK.match(line))]
    out = {}
    for start, name in starts:
        end = start + 1
        while end < len(lines) and not _KERNEL_MARK.match(lines[end]) and \
                not lines[end].lstrip().startswith(("if (stax_bad)", 'extern "C"')):
            end += 1
        indent = min(len(s) - len(s.lstrip()) for s in lines[start:end] if s.strip())
        out[name] = "\n".join(s[indent:] for s in lines[start:end])
    return out


def code_html(code: str, python: bool = False) -> str:
    return highlight(code, PythonLexer() if python else CppLexer(), FORMATTER)
