"""A readable text form of the loop IR (`LoopProgram`), shown by `stax.explain`.

Each buffer on one line (dtype, shape, strides, kind), then each node as its loop nest and the
store it performs:

    op1 = pointwise for x0 < 64, x1 < 128:
      t0 = exp(subtract(primals_1[128*x0 + x1], buf1[x0]))
      buf2[128*x0 + x1] = t0

Subexpressions used more than once in a body are bound to temporaries `t0, t1, ...` (bodies are
DAGs: printing them as trees could grow exponentially).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from stax.ir.expr import (
    Call,
    Const,
    Expr,
    FloorDiv,
    Index,
    IndexValue,
    Indirect,
    Load,
    Mod,
    Var,
    children,
    walk,
)
from stax.ir.program import Buffer, LoopProgram, Node, rvars, xvars


def format_buffer(b: Buffer) -> str:
    shape = ", ".join(map(str, b.shape))
    return f"{b.name}: {b.dtype.name}[{shape}] strides {b.strides} {b.kind}"


def format_node(node: Node) -> str:
    loops = [f"{v} < {r}" for v, r in zip(xvars(len(node.ranges)), node.ranges, strict=True)]
    reduce = [f"{v} < {r}" for v, r in zip(rvars(len(node.reduction_ranges)),
                                            node.reduction_ranges, strict=True)]
    head = node.kind + (f"[{node.fn}]" if node.fn else "")
    nest = f" for {', '.join(loops)}" if loops else ""
    if reduce:
        nest += f" reducing {', '.join(reduce)}"
    lines = [f"{node.name} = {head}{nest}:" + (f"  # {node.origin}" if node.origin else "")]
    if node.kind == "extern":
        lines.append(f"  {node.out} = {node.fn}({', '.join(node.extern_inputs)})")
        return "\n".join(lines)
    assert node.body is not None, f"{node.name}: a {node.kind} node without a body"
    temps, value = _bind(node.body)
    lines += [f"  {name} = {text}" for name, text in temps]
    lines.append(f"  {node.out}[{format_index(node.out_index)}] = {value}")
    return "\n".join(lines)


def format_program(program: LoopProgram) -> str:
    lines = ["buffers:"]
    lines += [f"  {format_buffer(b)}" for b in program.buffers]
    lines.append(f"inputs: {', '.join(program.inputs) or '()'}")
    lines.append(f"outputs: {', '.join(program.outputs) or '()'}")
    lines += [format_node(n) for n in program.nodes]
    return "\n".join(lines)


def format_index(index: Index, texts: dict[int, str] | None = None) -> str:
    """`c*atom + ... + k`; a gather prints the text of its index expression (from `texts` when
    the enclosing body already bound it)."""
    parts = []
    for atom, c in index.terms:
        s = _format_atom(atom, texts or {})
        parts.append(s if c == 1 else f"-{s}" if c == -1 else f"{c}*{s}")
    if index.const or not parts:
        parts.append(str(index.const))
    return " + ".join(parts).replace("+ -", "- ")


def _format_atom(atom: Var | FloorDiv | Mod | Indirect, texts: dict[int, str]) -> str:
    if isinstance(atom, Var):
        return atom.name
    if isinstance(atom, FloorDiv):
        return f"({format_index(atom.arg, texts)}) // {atom.div}"
    if isinstance(atom, Mod):
        return f"({format_index(atom.arg, texts)}) % {atom.div}"
    return f"checked<{atom.size}>({texts.get(id(atom.expr)) or format_expr(atom.expr)})"


def format_expr(expr: Expr) -> str:
    """One expression, with temporaries for shared subexpressions as `let t0 = ...; ...`."""
    temps, value = _bind(expr)
    return "".join(f"let {name} = {text}; " for name, text in temps) + value


def _bind(expr: Expr) -> tuple[list[tuple[str, str]], str]:
    order = walk(expr)  # children first
    uses: Counter[int] = Counter(id(c) for e in order for c in children(e))
    names: dict[int, str] = {}
    texts: dict[int, str] = {}
    temps: list[tuple[str, str]] = []
    for e in order:
        text = _format_one(e, texts)
        if uses[id(e)] > 1 and isinstance(e, Call):
            names[id(e)] = f"t{len(temps)}"
            temps.append((names[id(e)], text))
            text = names[id(e)]
        texts[id(e)] = text
    return temps, texts[id(expr)]


def _format_one(e: Expr, texts: dict[int, str]) -> str:
    if isinstance(e, Load):
        return f"{e.buf}[{format_index(e.index, texts)}]"
    if isinstance(e, Const):
        return _const_text(e)
    if isinstance(e, IndexValue):
        return f"index({format_index(e.index, texts)})"
    args = ", ".join(texts[id(a)] for a in e.args)
    return f"{e.fn}<{e.dtype.name}>({args})" if e.fn == "cast" else f"{e.fn}({args})"


def _const_text(c: Const) -> str:
    value = np.asarray(c.value, c.dtype)[()]
    return f"{value!r}" if c.dtype.kind in "biu" else f"{value.item()!r}:{c.dtype.name}"
