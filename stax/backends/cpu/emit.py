"""Structured C++: statements, comments, pragmas, blocks and loops as objects, rendered by one
printer that owns the indentation (issue 16 item 3).

The kernel printers (`stax.backends.cpu.cpp`) build these objects through an `Emitter`: a
statement is added where the printer stands, `with e.loop(...)` / `with e.block(...)` open a
block whose body is what is added inside. Blocks are immutable once closed; `render` turns a
tree into lines, four spaces per level.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

INDENT = "    "


@dataclass(frozen=True)
class Stmt:
    """One line of C++ as written (a statement, a declaration, a one-line block)."""

    text: str


@dataclass(frozen=True)
class Comment:
    text: str


@dataclass(frozen=True)
class Pragma:
    """`#pragma <text>` standing alone (an `omp barrier`); pragmas that apply to a block are
    the block's own."""

    text: str


@dataclass(frozen=True)
class Block:
    """`head { body }` (a bare `{ body }` without a head), after its `#pragma`s; with
    `orelse`, `head { body } else { orelse }`; `tail` follows the closing brace (the `;` of a
    lambda's definition)."""

    head: str
    body: tuple[Code, ...]
    pragmas: tuple[str, ...] = ()
    orelse: tuple[Code, ...] | None = None
    tail: str = ""


@dataclass(frozen=True)
class For:
    """`for (int64_t var = lo; var < hi; var += step) { body }` after its `#pragma`s."""

    var: str
    lo: str
    hi: str
    body: tuple[Code, ...]
    pragmas: tuple[str, ...] = ()
    step: str = "1"

    @property
    def head(self) -> str:
        v = self.var
        return f"for (int64_t {v} = {self.lo}; {v} < {self.hi}; {v} += {self.step})"


Code = Stmt | Comment | Pragma | Block | For


def render(code: Iterable[Code], depth: int = 0) -> list[str]:
    """The lines of `code`, its top level indented `depth` levels."""
    out: list[str] = []
    for c in code:
        _render(c, depth, out)
    return out


def _render(c: Code, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    if isinstance(c, Stmt):
        out.append(pad + c.text)
    elif isinstance(c, Comment):
        out.append(f"{pad}// {c.text}")
    elif isinstance(c, Pragma):
        out.append(f"{pad}#pragma {c.text}")
    else:
        out.extend(f"{pad}#pragma {p}" for p in c.pragmas)
        out.append(f"{pad}{c.head} {{" if c.head else f"{pad}{{")
        out.extend(render(c.body, depth + 1))
        if isinstance(c, Block) and c.orelse is not None:
            out.append(f"{pad}}} else {{")
            out.extend(render(c.orelse, depth + 1))
        out.append(f"{pad}}}{c.tail if isinstance(c, Block) else ''}")


class Emitter:
    """Collects code in program order; `loop` and `block` nest what is added inside them."""

    def __init__(self) -> None:
        self._open: list[list[Code]] = [[]]

    @property
    def code(self) -> tuple[Code, ...]:
        assert len(self._open) == 1, "a block is still open"
        return tuple(self._open[0])

    def add(self, *code: Code) -> None:
        self._open[-1].extend(code)

    def stmt(self, *texts: str) -> None:
        self.add(*map(Stmt, texts))

    def comment(self, text: str) -> None:
        self.add(Comment(text))

    def pragma(self, text: str) -> None:
        self.add(Pragma(text))

    @contextmanager
    def _body(self) -> Iterator[list[Code]]:
        self._open.append([])
        try:
            yield self._open[-1]
        finally:
            self._open.pop()

    @contextmanager
    def block(self, head: str = "", pragmas: Sequence[str] = (), tail: str = "") -> Iterator[None]:
        with self._body() as body:
            yield
        self.add(Block(head, tuple(body), tuple(pragmas), tail=tail))

    @contextmanager
    def loop(self, var: str, lo: object, hi: object, *, step: object = 1,
             pragmas: Sequence[str] = ()) -> Iterator[None]:
        with self._body() as body:
            yield
        self.add(For(var, str(lo), str(hi), tuple(body), tuple(pragmas), str(step)))
