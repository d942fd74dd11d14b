"""Expressions of the loop IR: quasi-affine index expressions and node bodies.

`Index` is a canonical sum `c0*a0 + c1*a1 + ... + k` over atoms (loop variables, `floor(e/d)`,
`e mod d`, and bounds-checked indirect indices from gathers). Constructors simplify with the
loop ranges, so `128*(i // 128) + i % 128` is `i` and `(128*i0 + i1) // 128` is `i0` when
`0 <= i1 < 128`: equal accesses compare equal.

Body expressions (`Load`, `Const`, `Call`, `IndexValue`) are frozen dataclasses with cached
hashes; lowering shares subexpressions, so they form DAGs that codegen prints with CSE.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stax.ir.sym import Sym, surely
from stax.ops.table import may_set_flags

Ranges = Mapping[str, int]


class _Cached:
    """Structural equality with a hash computed once (expression DAGs share children)."""

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((type(self).__name__,) + tuple(
                getattr(self, name) for name, f in self.__dataclass_fields__.items()
                if f.compare))
            object.__setattr__(self, "_hash", h)
        return h


# ---- index expressions ---------------------------------------------------------------------

@dataclass(frozen=True, eq=True)
class Var(_Cached):
    name: str

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name


def _divisor(d: int | Sym) -> str:
    return f"({d})" if isinstance(d, Sym) else str(d)  # a product of sizes, parenthesized


@dataclass(frozen=True, eq=True)
class FloorDiv(_Cached):
    arg: Index
    div: int
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__

    def __str__(self) -> str:
        return f"({self.arg}) // {_divisor(self.div)}"


@dataclass(frozen=True, eq=True)
class Mod(_Cached):
    arg: Index
    div: int
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__

    def __str__(self) -> str:
        return f"({self.arg}) % {_divisor(self.div)}"


@dataclass(frozen=True, eq=True)
class Indirect(_Cached):
    """An index read from data (gather): negative values wrap once, out of range is an error."""

    expr: Expr
    size: int
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__

    def __str__(self) -> str:
        return f"indirect<{self.size}>"


Atom = Var | FloorDiv | Mod | Indirect


def _atom_key(a: Atom) -> tuple[int, str, bytes]:
    """The order of an index's terms: variables, divisions, remainders, gathers; by printed
    text, then by structure (two gathers print alike; a variable is its name): the same in
    every process, so the same program prints the same source (one compile-cache key)."""
    order = {Var: 0, FloorDiv: 1, Mod: 2, Indirect: 3}[type(a)]
    return order, str(a), b"" if order == 0 else structural_key(a)


def _parts(node: Any) -> tuple[Any, ...]:
    """What `node`'s structure is made of: child nodes and plain values, in field order."""
    if isinstance(node, Index):
        return (*(x for term in node.terms for x in term), node.const)
    if isinstance(node, Const):
        return (node.bits, node.dtype)
    if isinstance(node, Call):
        return (node.fn, node.dtype, *node.args)
    return tuple(getattr(node, name) for name, f in node.__dataclass_fields__.items()
                 if f.compare)


def structural_key(node: Any) -> bytes:
    """A canonical digest of an index or body expression's structure (16 bytes): equal for
    equal structures in any process and allocation order, unlike `id()` or `hash()` of
    strings. Memoized on each node, computed without recursion: linear in the size of a
    shared DAG."""
    stack = [node]
    while stack:
        top = stack[-1]
        if "_key" in top.__dict__:
            stack.pop()
            continue
        pending = [p for p in _parts(top) if isinstance(p, _Cached) and "_key" not in p.__dict__]
        if pending:
            stack.extend(pending)
            continue
        digest = hashlib.blake2b(type(top).__name__.encode(), digest_size=16)
        for p in _parts(top):
            digest.update(p.__dict__["_key"] if isinstance(p, _Cached) else repr(p).encode())
            digest.update(b"\0")
        object.__setattr__(top, "_key", digest.digest())
        stack.pop()
    return node.__dict__["_key"]


@dataclass(frozen=True, eq=True)
class Index(_Cached):
    terms: tuple[tuple[Atom, int], ...] = ()
    const: int = 0
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__

    @staticmethod
    def var(name: str) -> Index:
        return Index(((Var(name), 1),))

    @staticmethod
    def of(terms: Mapping[Atom, int] | list[tuple[Atom, int]], const: int = 0) -> Index:
        acc: dict[Atom, int] = {}
        for atom, coef in (terms.items() if isinstance(terms, Mapping) else terms):
            acc[atom] = acc.get(atom, 0) + coef
        const += _recombine(acc)
        items = sorted(((a, c) for a, c in acc.items() if c != 0), key=lambda t: _atom_key(t[0]))
        return Index(tuple(items), const if isinstance(const, Sym) else int(const))

    def __add__(self, other: Index | int) -> Index:
        if isinstance(other, (int, Sym)):
            return Index(self.terms, self.const + other)
        return Index.of(list(self.terms) + list(other.terms), self.const + other.const)

    def __sub__(self, other: Index | int) -> Index:
        return self + (other * -1 if isinstance(other, Index) else -other)

    def __mul__(self, k: int) -> Index:
        if k == 0:
            return Index()
        return Index(tuple((a, c * k) for a, c in self.terms), self.const * k)

    def variables(self) -> set[str]:
        out: set[str] = set()
        for atom, _ in self.terms:
            if isinstance(atom, Var):
                out.add(atom.name)
            elif isinstance(atom, (FloorDiv, Mod)):
                out |= atom.arg.variables()
            else:
                out |= expr_variables(atom.expr)
        return out

    def coef(self, name: str) -> int:
        for atom, c in self.terms:
            if isinstance(atom, Var) and atom.name == name:
                return c
        return 0

    def is_linear_in(self, name: str) -> bool:
        """True when `name` occurs only as a plain term (not inside floor/mod/indirect)."""
        return all(isinstance(a, Var) or name not in Index(((a, 1),)).variables()
                   for a, _ in self.terms)

    def substitute(self, mapping: Mapping[str, Index]) -> Index:
        result = Index((), self.const)
        for atom, c in self.terms:
            if isinstance(atom, Var):
                result = result + (mapping.get(atom.name, Index(((atom, 1),))) * c)
            elif isinstance(atom, FloorDiv):
                result = result + Index(((FloorDiv(atom.arg.substitute(mapping), atom.div), c),))
            elif isinstance(atom, Mod):
                result = result + Index(((Mod(atom.arg.substitute(mapping), atom.div), c),))
            else:
                result = result + Index(((atom, c),))
        return result

    def __str__(self) -> str:
        parts = []
        for atom, c in self.terms:
            s = str(atom)
            unit = c if isinstance(c, int) and c in (1, -1) else 0
            parts.append(s if unit == 1 else f"-{s}" if unit == -1 else f"{c}*{s}")
        if isinstance(self.const, Sym) or self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")


def _recombine(acc: dict[Atom, int]) -> int:
    """`d*c*(e // d) + c*(e % d)` is `c*e`: merge such pairs in place; return the constant."""
    const = 0
    for atom in [a for a in acc if isinstance(a, Mod)]:
        fd = FloorDiv(atom.arg, atom.div)
        c = acc.get(atom, 0)
        if c and acc.get(fd, 0) == c * atom.div:
            del acc[atom]
            del acc[fd]
            for a2, c2 in atom.arg.terms:
                acc[a2] = acc.get(a2, 0) + c2 * c
            const += atom.arg.const * c
    return const


def bounds(index: Index, ranges: Ranges) -> tuple[int, int]:
    """Inclusive lower and upper bounds of `index` over the loop ranges."""
    lo = hi = index.const
    for atom, c in index.terms:
        alo, ahi = atom_bounds(atom, ranges)
        lo += min(c * alo, c * ahi)
        hi += max(c * alo, c * ahi)
    return lo, hi


def atom_bounds(atom: Atom, ranges: Ranges) -> tuple[int, int]:
    if isinstance(atom, Var):
        return 0, max(ranges[atom.name] - 1, 0)
    if isinstance(atom, FloorDiv):
        lo, hi = bounds(atom.arg, ranges)
        return lo // atom.div, hi // atom.div
    if isinstance(atom, Mod):
        lo, hi = bounds(atom.arg, ranges)
        if lo >= 0 and hi < atom.div:
            return lo, hi
        return 0, atom.div - 1
    return 0, atom.size - 1


def floordiv(e: Index, d: int, ranges: Ranges) -> Index:
    if d == 1:
        return e
    quotient = [(a, c // d) for a, c in e.terms if c % d == 0]
    rest = Index.of([(a, c) for a, c in e.terms if c % d], e.const % d)
    base = Index.of(quotient, e.const // d)
    lo, hi = bounds(rest, ranges)
    if 0 <= lo and hi < d:
        return base
    if lo // d == hi // d:
        return base + lo // d
    return base + Index(((FloorDiv(rest, d), 1),))


def mod(e: Index, d: int, ranges: Ranges) -> Index:
    if d == 1:
        return Index()
    rest = Index.of([(a, c) for a, c in e.terms if c % d], e.const % d)
    lo, hi = bounds(rest, ranges)
    if 0 <= lo and hi < d:
        return rest
    if lo // d == hi // d:
        return rest - (lo // d) * d
    return Index(((Mod(rest, d), 1),))


def drop_unit_vars(index: Index, ranges: Ranges) -> Index:
    """Variables with extent 1 are always 0."""
    units = {v: Index() for v in index.variables() if surely(ranges.get(v, 2), "<=", 1)}
    return index.substitute(units) if units else index


# ---- body expressions ------------------------------------------------------------------------

@dataclass(frozen=True, eq=True)
class Load(_Cached):
    buf: str
    index: Index
    dtype: np.dtype
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__


@dataclass(frozen=True, eq=True)
class Const(_Cached):
    """A constant. Equality is by bit pattern, so `-0.0` and `0.0` (or two NaNs) are told
    apart and shared correctly."""

    value: Any = field(compare=False)
    dtype: np.dtype
    bits: bytes = field(init=False, repr=False)
    _hash: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bits", np.asarray(self.value, self.dtype).tobytes())

    __hash__ = _Cached.__hash__


@dataclass(frozen=True, eq=True)
class IndexValue(_Cached):
    """The value of an index expression, as int64 (used by concatenation and assignment)."""

    index: Index
    dtype: np.dtype = np.dtype(np.int64)
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__


@dataclass(frozen=True, eq=True)
class Call(_Cached):
    """`fn(*args)`: a NumPy ufunc name, `cast`, `where`, or `select` (a guarded choice whose
    branches are evaluated lazily, so a branch may hold loads valid only under its guard)."""

    fn: str
    args: tuple[Expr, ...]
    dtype: np.dtype
    _hash: int | None = field(default=None, compare=False, repr=False)

    __hash__ = _Cached.__hash__


Expr = Load | Const | Call | IndexValue


def walk(expr: Expr) -> list[Expr]:
    """All distinct subexpressions, children before parents."""
    seen: set[int] = set()
    order: list[Expr] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        e, done = stack.pop()
        if done:
            order.append(e)
            continue
        if id(e) in seen:
            continue
        seen.add(id(e))
        stack.append((e, True))
        for child in children(e):
            stack.append((child, False))
    return order


def children(e: Expr) -> list[Expr]:
    kids: list[Expr] = []
    if isinstance(e, Call):
        kids.extend(e.args)
    index = e.index if isinstance(e, (Load, IndexValue)) else None
    if index is not None:
        kids.extend(_indirect_exprs(index))
    return kids


def _indirect_exprs(index: Index) -> list[Expr]:
    out: list[Expr] = []
    for atom, _ in index.terms:
        if isinstance(atom, Indirect):
            out.append(atom.expr)
        elif isinstance(atom, (FloorDiv, Mod)):
            out.extend(_indirect_exprs(atom.arg))
    return out


def gathers(expr: Expr) -> bool:
    """Does `expr` read through an index from data (bounds-checked: it may raise)?"""
    return any(isinstance(e, (Load, IndexValue)) and _indirect_exprs(e.index) for e in walk(expr))


def may_flag(e: Call) -> bool:
    """Whether the C++ of `e` may set an error flag (`stax.ops.table.may_set_flags`)."""
    return may_set_flags(e.fn, [a.dtype for a in e.args], e.dtype)


def sets_flags(expr: Expr) -> bool:
    """[FUZZ2] Does `expr` hold an op that may set an error flag (it may raise or warn)?"""
    return any(isinstance(e, Call) and may_flag(e) for e in walk(expr))


def expr_variables(expr: Expr) -> set[str]:
    out: set[str] = set()
    for e in walk(expr):
        if isinstance(e, (Load, IndexValue)):
            out |= e.index.variables()
    return out


def loads(expr: Expr) -> list[Load]:
    return [e for e in walk(expr) if isinstance(e, Load)]


def op_count(expr: Expr) -> int:
    return sum(1 for e in walk(expr) if isinstance(e, Call))
