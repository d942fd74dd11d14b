"""`parse_c`: an affine C loop nest (PolyBench style) to a `Scop`, through pycparser.

The affine subset: `for` loops with affine bounds (min/max allowed) and constant steps, affine
`if`s (with `else`), and statements that are assignments (`=`, `+=`, ...), `++`/`--`, calls, or
initialised scalar declarations. Subscripts are affine in the enclosing iterators and the
parameters (free symbols of bounds, conditions and subscripts). Statements are `S0, S1, ...` in
textual order unless a C label names them. Calls to unknown functions are pure.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import islpy as isl
from pycparser import c_ast, c_generator, c_parser
from pycparser.plyparser import ParseError

from stax.poly._isl import PolyError, multi_union_pw_aff, set_, union_map, with_params
from stax.poly.model import Scop, Statement
from stax.poly.tree import Band, Filter, Leaf, Node, ScheduleTree, Sequence

#: C math functions that `validate` takes from <math.h> instead of defining them.
MATH_FUNCTIONS = frozenset("sqrt exp log pow fabs sin cos tan tanh floor ceil fmax fmin".split())
_WRAPPER = "void __stax_kernel(void) { "
_UNSUPPORTED = {
    c_ast.While: "while loop",
    c_ast.DoWhile: "do-while loop",
    c_ast.Switch: "switch",
    c_ast.Break: "break",
    c_ast.Continue: "continue",
    c_ast.Goto: "goto",
    c_ast.Return: "return",
}


def parse_c(source: str) -> Scop:
    """Parse an affine C loop nest or kernel function into a `Scop`."""
    body = _kernel_body(_strip_preprocessor(source))
    walker = _Walker()
    items = walker.block(body.block_items or [], _Scope())
    if not walker.statements:
        raise PolyError("the program has no statements")
    return walker.scop(items)


def _strip_preprocessor(source: str) -> str:
    """Blank comments and `#` lines, keeping line numbers."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    source = re.sub(r"/\*.*?\*/|//[^\n]*", blank, source, flags=re.S)
    return re.sub(r"^[ \t]*#[^\n]*", blank, source, flags=re.M)


def _kernel_body(text: str) -> c_ast.Compound:
    """The body of the first function with a loop, or of the text wrapped into a function."""
    errors: list[ParseError] = []
    for candidate in (text, _WRAPPER + text + "\n}"):
        try:
            unit = c_parser.CParser().parse(candidate)
        except ParseError as err:
            errors.append(err)
            continue
        funcs = [n for n in unit.ext if isinstance(n, c_ast.FuncDef)]
        for f in funcs:
            if _contains_loop(f.body) or f.decl.name == "__stax_kernel":
                return f.body
    if not errors:
        raise PolyError("no function with a loop nest in the program")
    best = max(errors, key=_error_line)
    message = re.sub(r"^[^:]*:\d+:(\d+:)?\s*", "", str(best))
    raise PolyError(f"parse error at line {_error_line(best)}: {message}")


def _error_line(err: ParseError) -> int:
    m = re.search(r":(\d+):", str(err))
    return int(m.group(1)) if m else 0


def _contains_loop(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.For) or any(_contains_loop(c) for _, c in node.children())


@dataclass(frozen=True)
class _Loop:
    iterator: str
    sign: int


@dataclass(frozen=True)
class _Scope:
    """What encloses a statement: loops (outermost first) and affine constraints."""

    loops: tuple[_Loop, ...] = ()
    constraints: tuple[str, ...] = ()

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(loop.iterator for loop in self.loops)


@dataclass
class _Stmt:
    name: str
    scope: _Scope
    reads: list[tuple[str, tuple[str, ...]]]
    writes: list[tuple[str, tuple[str, ...]]]
    body: str
    line: int


# A schedule item: a statement index or a loop (iterator sign, items below).
_Item = int | tuple[_Loop, list["_Item"]]


@dataclass
class _Walker:
    statements: list[_Stmt] = field(default_factory=list)
    params: set[str] = field(default_factory=set)
    functions: dict[str, int] = field(default_factory=dict)

    # -- control ------------------------------------------------------------------------------
    def block(self, nodes: list[c_ast.Node], scope: _Scope) -> list[_Item]:
        items: list[_Item] = []
        for node in nodes:
            items.extend(self.node(node, scope, label=None))
        return items

    def node(self, node: c_ast.Node, scope: _Scope, label: str | None) -> list[_Item]:
        line = _line(node)
        if isinstance(node, c_ast.Label):
            return self.node(node.stmt, scope, node.name)
        if label is not None and not _is_statement(node):
            raise PolyError(f"line {line}: label '{label}' must name a statement")
        if isinstance(node, c_ast.Compound):
            return self.block(node.block_items or [], scope)
        if isinstance(node, c_ast.For):
            return self.loop(node, scope)
        if isinstance(node, c_ast.If):
            cond = self.condition(node.cond, scope)
            items = self.node(node.iftrue, _constrain(scope, cond), None)
            if node.iffalse is not None:
                items += self.node(node.iffalse, _constrain(scope, f"not ({cond})"), None)
            return items
        if isinstance(node, c_ast.EmptyStatement | c_ast.Pragma):
            return []
        if isinstance(node, c_ast.DeclList):
            return [i for d in node.decls for i in self.node(d, scope, label)]
        if isinstance(node, c_ast.Decl):
            if node.init is None or isinstance(node.type, c_ast.FuncDecl):
                return []
            if not isinstance(node.type, c_ast.TypeDecl):
                raise PolyError(f"line {line}: unsupported initialised declaration '{node.name}'")
            assign = c_ast.Assignment("=", c_ast.ID(node.name), node.init, coord=node.coord)
            return [self.statement(assign, scope, label)]
        if _is_statement(node):
            return [self.statement(node, scope, label)]
        what = _UNSUPPORTED.get(type(node), type(node).__name__)
        raise PolyError(
            f"line {line}: unsupported construct '{what}' "
            "(the affine subset has for loops, ifs and assignments)"
        )

    def loop(self, node: c_ast.For, scope: _Scope) -> list[_Item]:
        line = _line(node)
        iterator, lower = self.loop_init(node.init, scope, line)
        if iterator in scope.iterators:
            raise PolyError(f"line {line}: loop iterator '{iterator}' is already in use")
        step = _loop_step(node.next, iterator, line)
        if node.cond is None:
            raise PolyError(f"line {line}: a for loop needs a condition")
        inner = _Scope((*scope.loops, _Loop(iterator, 1 if step > 0 else -1)), scope.constraints)
        bound = self.condition(node.cond, inner)
        first = f"{iterator} >= {lower}" if step > 0 else f"{iterator} <= {lower}"
        constraints = [first, bound]
        if abs(step) > 1:
            constraints.append(f"({iterator} - ({lower})) mod {abs(step)} = 0")
        inner = _constrain(inner, *constraints)
        items = self.node(node.stmt, inner, None)
        return [(inner.loops[-1], items)] if items else []

    def loop_init(self, init: c_ast.Node | None, scope: _Scope, line: int) -> tuple[str, str]:
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init:
            return init.decls[0].name, self.affine(init.decls[0].init, scope)
        if (
            isinstance(init, c_ast.Assignment)
            and init.op == "="
            and isinstance(init.lvalue, c_ast.ID)
        ):
            return init.lvalue.name, self.affine(init.rvalue, scope)
        raise PolyError(f"line {line}: a for loop must start with 'iterator = affine expression'")

    # -- affine expressions --------------------------------------------------------------------
    def affine(self, expr: c_ast.Node, scope: _Scope) -> str:
        return _Affine(self, scope).text(expr)

    def condition(self, expr: c_ast.Node, scope: _Scope) -> str:
        ops = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("&&", "||"):
            joiner = " and " if expr.op == "&&" else " or "
            parts = (self.condition(expr.left, scope), self.condition(expr.right, scope))
            return "(" + joiner.join(f"({p})" for p in parts) + ")"
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ops:
            left, right = self.affine(expr.left, scope), self.affine(expr.right, scope)
            return f"({left}) {ops[expr.op]} ({right})"
        if isinstance(expr, c_ast.UnaryOp) and expr.op == "!":
            return f"not ({self.condition(expr.expr, scope)})"
        raise PolyError(
            f"line {_line(expr)}: condition '{_code(expr)}' is not an affine comparison"
        )

    # -- statements ----------------------------------------------------------------------------
    def statement(self, node: c_ast.Node, scope: _Scope, label: str | None) -> int:
        index = len(self.statements)
        name = label or f"S{index}"
        if any(s.name == name for s in self.statements):
            raise PolyError(f"line {_line(node)}: two statements are named '{name}'")
        stmt = _Stmt(name, scope, [], [], _body_text(node, scope.iterators), _line(node))
        _Accesses(self, stmt).visit(node, read=True)
        self.statements.append(stmt)
        return index

    # -- the scop ------------------------------------------------------------------------------
    def scop(self, items: list[_Item]) -> Scop:
        written = {a for s in self.statements for a, _ in s.writes}
        for s in self.statements:
            for a, _ in s.writes:
                if a in self.params:
                    raise PolyError(
                        f"line {s.line}: '{a}' is written but used in a bound or subscript"
                    )
                if a in s.scope.iterators:
                    raise PolyError(f"line {s.line}: the statement writes loop iterator '{a}'")
        # identifiers only read and also used as parameters are parameter values, not memory
        for s in self.statements:
            s.reads = [(a, sub) for a, sub in s.reads if a in written or a not in self.params]
        _check_ranks(self.statements)
        prefix = with_params(sorted(self.params), "")
        statements = tuple(_statement(s, prefix) for s in self.statements)
        tree = ScheduleTree(
            _union_domain(statements), _tree(items, self.statements, statements, prefix)
        )
        return Scop(statements, tree, tuple(sorted(self.params)), tuple(self.functions.items()))


class _Affine:
    """C expression to isl quasi-affine text, naming the construct that is not affine."""

    def __init__(self, walker: _Walker, scope: _Scope) -> None:
        self.walker, self.scope = walker, scope

    def text(self, expr: c_ast.Node) -> str:
        return self.convert(expr)[0]

    def convert(self, e: c_ast.Node) -> tuple[str, int | None]:
        """The isl text and, for a constant, its value."""
        if isinstance(e, c_ast.Constant) and e.type in ("int", "long", "unsigned int"):
            value = int(e.value.rstrip("uUlL"), 0)
            return str(value), value
        if isinstance(e, c_ast.ID):
            if e.name not in self.scope.iterators:
                self.walker.params.add(e.name)
            return e.name, None
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
            text, value = self.convert(e.expr)
            if e.op == "+":
                return text, value
            return f"-({text})", None if value is None else -value
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*", "/", "%"):
            (lt, lv), (rt, rv) = self.convert(e.left), self.convert(e.right)
            if e.op in ("+", "-"):
                value = None if lv is None or rv is None else lv + rv if e.op == "+" else lv - rv
                return f"({lt}) {e.op} ({rt})", value
            if e.op == "*" and (lv is not None or rv is not None):
                value = None if lv is None or rv is None else lv * rv
                return (f"{lv}*({rt})" if lv is not None else f"{rv}*({lt})"), value
            if e.op in ("/", "%") and rv is not None and rv > 0:
                if e.op == "/":
                    return f"floor(({lt})/{rv})", None if lv is None else lv // rv
                return f"({lt}) mod {rv}", None if lv is None else lv % rv
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and e.args:
            name, args = e.name.name.lower(), [self.text(a) for a in e.args.exprs]
            if name in ("min", "max") and len(args) == 2:
                return f"{name}({args[0]}, {args[1]})", None
            if name in ("floord", "ceild") and len(args) == 2:
                fn = "floor" if name == "floord" else "ceil"
                return f"{fn}(({args[0]})/({args[1]}))", None
        if isinstance(e, c_ast.Cast):
            return self.convert(e.expr)
        raise PolyError(f"line {_line(e)}: '{_code(e)}' is not an affine expression")


class _Accesses(c_ast.NodeVisitor):
    """Collects the reads and writes of one statement."""

    def __init__(self, walker: _Walker, stmt: _Stmt) -> None:
        self.walker, self.stmt = walker, stmt

    def visit(self, node: c_ast.Node, read: bool = True) -> None:  # type: ignore[override]
        if isinstance(node, c_ast.Assignment):
            self.access(node.lvalue, write=True, read=node.op != "=")
            self.visit(node.rvalue)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            self.access(node.expr, write=True, read=True)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("&", "*", "sizeof"):
            raise PolyError(f"line {_line(node)}: unsupported operator '{node.op}' in a statement")
        elif isinstance(node, c_ast.ArrayRef | c_ast.ID):
            self.access(node, write=False, read=True)
        elif isinstance(node, c_ast.FuncCall):
            if not isinstance(node.name, c_ast.ID):
                raise PolyError(f"line {_line(node)}: unsupported call '{_code(node)}'")
            args = node.args.exprs if node.args else []
            name = node.name.name
            if name not in MATH_FUNCTIONS:
                if self.walker.functions.setdefault(name, len(args)) != len(args):
                    raise PolyError(
                        f"line {_line(node)}: '{name}' is called with {len(args)} arguments "
                        f"here and {self.walker.functions[name]} before"
                    )
            for a in args:
                self.visit(a)
        elif isinstance(node, c_ast.StructRef):
            raise PolyError(f"line {_line(node)}: unsupported struct access '{_code(node)}'")
        else:
            for _, child in node.children():
                self.visit(child)

    def access(self, node: c_ast.Node, write: bool, read: bool) -> None:
        subscripts: list[c_ast.Node] = []
        base = node
        while isinstance(base, c_ast.ArrayRef):
            subscripts.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID):
            raise PolyError(f"line {_line(node)}: unsupported access '{_code(node)}'")
        if not subscripts and base.name in self.stmt.scope.iterators:
            if write:
                raise PolyError(
                    f"line {_line(node)}: the statement writes loop iterator '{base.name}'"
                )
            return
        subs = tuple(_Affine(self.walker, self.stmt.scope).text(s) for s in subscripts)
        if read:
            self.stmt.reads.append((base.name, subs))
        if write:
            self.stmt.writes.append((base.name, subs))


def _is_statement(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.Assignment | c_ast.UnaryOp | c_ast.FuncCall | c_ast.Decl)


def _constrain(scope: _Scope, *constraints: str) -> _Scope:
    return _Scope(scope.loops, scope.constraints + constraints)


def _loop_step(node: c_ast.Node | None, iterator: str, line: int) -> int:
    step: int | None = None
    if isinstance(node, c_ast.UnaryOp) and _is_id(node.expr, iterator):
        step = {"++": 1, "p++": 1, "--": -1, "p--": -1}.get(node.op)
    elif isinstance(node, c_ast.Assignment) and _is_id(node.lvalue, iterator):
        rhs = node.rvalue
        if node.op in ("+=", "-=") and isinstance(rhs, c_ast.Constant):
            step = int(rhs.value, 0) * (1 if node.op == "+=" else -1)
        elif (
            node.op == "="
            and isinstance(rhs, c_ast.BinaryOp)
            and rhs.op in ("+", "-")
            and _is_id(rhs.left, iterator)
            and isinstance(rhs.right, c_ast.Constant)
        ):
            step = int(rhs.right.value, 0) * (1 if rhs.op == "+" else -1)
    if not step:
        raise PolyError(f"line {line}: the loop step must add a nonzero constant to '{iterator}'")
    return step


def _is_id(node: c_ast.Node, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


def _line(node: c_ast.Node) -> int:
    return node.coord.line if node.coord is not None else 0


def _code(node: c_ast.Node) -> str:
    return c_generator.CGenerator().visit(node)


def _body_text(node: c_ast.Node, iterators: tuple[str, ...]) -> str:
    """C text of the statement with every iterator parenthesised, fit for a macro body."""
    node = copy.deepcopy(node)
    for n in _walk(node):
        if isinstance(n, c_ast.ID) and n.name in iterators:
            n.name = f"({n.name})"
    return _code(node)


def _walk(node: c_ast.Node):  # noqa: ANN202 - generator of nodes
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _check_ranks(statements: list[_Stmt]) -> None:
    ranks: dict[str, tuple[int, int]] = {}
    for s in statements:
        for array, subs in s.reads + s.writes:
            rank, line = ranks.setdefault(array, (len(subs), s.line))
            if rank != len(subs):
                raise PolyError(
                    f"line {s.line}: '{array}' has {len(subs)} subscripts here "
                    f"and {rank} at line {line}"
                )


def _tuple(s: _Stmt) -> str:
    return f"{s.name}[{', '.join(s.scope.iterators)}]"


def _statement(s: _Stmt, prefix: str) -> Statement:
    cond = " and ".join(f"({c})" for c in s.scope.constraints)
    domain = set_(f"{prefix}{{ {_tuple(s)}{' : ' + cond if cond else ''} }}")

    def accesses(pairs: list[tuple[str, tuple[str, ...]]]) -> isl.UnionMap:
        parts = [f"{_tuple(s)} -> {a}[{', '.join(subs)}]" for a, subs in pairs]
        umap = union_map(prefix + "{ " + "; ".join(parts) + " }")
        return umap.intersect_domain(isl.UnionSet.from_set(domain))

    return Statement(
        s.name, s.scope.iterators, domain, accesses(s.reads), accesses(s.writes), s.body, s.line
    )


def _union_domain(statements: tuple[Statement, ...]) -> isl.UnionSet:
    out = isl.UnionSet.from_set(statements[0].domain)
    for s in statements[1:]:
        out = out.union(isl.UnionSet.from_set(s.domain))
    return out


def _tree(items: list[_Item], raw: list[_Stmt], stmts: tuple[Statement, ...], prefix: str) -> Node:
    """The original schedule: a band per loop, a sequence where a block has several items."""

    def indices(item: _Item) -> list[int]:
        return [item] if isinstance(item, int) else [i for it in item[1] for i in indices(it)]

    def node(item: _Item) -> Node:
        if isinstance(item, int):
            return Leaf()
        loop, below = item
        sign = "" if loop.sign > 0 else "-"
        parts = [f"{_tuple(raw[i])} -> [({sign}{loop.iterator})]" for i in indices(item)]
        band = multi_union_pw_aff(prefix + "[{ " + "; ".join(parts) + " }]")
        child = block(below)
        if isinstance(child, Band):  # a perfect nest is one band
            return Band(band.flat_range_product(child.schedule), child.child)
        return Band(band, child)

    def block(block_items: list[_Item]) -> Node:
        if len(block_items) == 1:
            return node(block_items[0])
        filters = []
        for item in block_items:
            dom = _union_domain(tuple(stmts[i] for i in indices(item)))
            filters.append(Filter(dom, node(item)))
        return Sequence(tuple(filters))

    return block(items)
