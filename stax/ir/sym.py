"""Symbolic sizes (issue 11, seed 003): integers that stand for any size satisfying guards.

A shape-generic trace gives each input dimension that is neither 0 nor 1 a symbol (`s0`,
`s1`, ...) whose *hint* is the size seen on that call. A `Sym` is a polynomial with integer
coefficients over symbols and derived atoms (`s0 // 2`, `s1 % 4`); arithmetic builds new
polynomials, so strides, sizes and byte counts stay symbolic and are evaluated at launch.

Every question the compiler asks about a size (`n == 1`, `n > 16`, `int(n)`) is answered in
one of three ways, as torch's ShapeEnv does:
- decided from what every shape of the program class satisfies (each symbol is at least 2),
  with no guard;
- decided by the hint and recorded as a *guard* (`s0*s1 > 65536`): the compiled program
  serves a later shape only when all its guards hold for it, so a decision taken on the hint
  can never give a wrong result on another shape;
- `int(n)` (the size needed as a plain Python int) specializes: a guard `s0 == 2048`.

Decisions that only affect speed (a cost model's estimate) read `hint(n)` and record nothing.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

SYM_MIN = 2  # every symbol stands for a size >= 2 (sizes 0 and 1 are part of the cache key)

Monomial = tuple[str, ...]  # sorted atom names, with repetition: s0*s0*s1 is ("s0","s0","s1")


@dataclass
class ShapeEnv:
    """The symbols of one generic trace: their hints, derived atoms, guards and
    specializations."""

    hints: dict[str, int] = field(default_factory=dict)
    # Derived atoms: name -> (operator, numerator, divisor) for `//` and `%`.
    derived: dict[str, tuple[str, Sym | int, Sym | int]] = field(default_factory=dict)
    guards: list[tuple[str, Sym, int]] = field(default_factory=list)  # (op, lhs, rhs const)
    specialized: dict[str, int] = field(default_factory=dict)  # symbol -> value, by int()
    # Sizes that heuristics read through `hint` while planning a tiling variant for other
    # shapes (`assume`); guards are always decided on the traced sizes.
    assumed: dict[str, int] | None = None
    _seen: set[tuple[str, Any, int]] = field(default_factory=set)
    # [DYN16] Data-dependent sizes (`d0`, `d1`, ...): the length of a result computed at run
    # time (`x[mask]`, `np.unique`), bound by the wrapper from the array the extern call
    # returns -> what computes it. Their hints are the traced upper bounds (or a stand-in);
    # [COMPACT] they may be 0 or 1 (`_least`): a decision that needs more is guarded, the
    # wrapper checks their guards once they are bound, and a call that fails one runs in NumPy.
    data: dict[str, str] = field(default_factory=dict)

    def symbol(self, hint: int) -> Sym:
        name = f"s{len(self.hints) - len(self.data)}"
        self.hints[name] = int(hint)
        return Sym(((((name,), 1),)), self)

    def data_symbol(self, hint: int, what: str) -> Sym:
        """[DYN16] A size known only once `what` has run (the hint is for heuristics and the
        decisions guards record, checked when it is bound)."""
        name = f"d{len(self.data)}"
        self.data[name] = what
        self.hints[name] = max(int(hint), SYM_MIN)
        return Sym(((((name,), 1),)), self)

    def atoms_of(self, x: Sym | int) -> set[str]:
        """The symbols `x` is computed from (through derived atoms too)."""
        if not isinstance(x, Sym):
            return set()
        out: set[str] = set()
        for mono, _ in x.terms:
            for name in mono:
                if name in self.hints:
                    out.add(name)
                else:
                    _, num, div = self.derived[name]
                    out |= self.atoms_of(num) | self.atoms_of(div)
        return out

    def data_guards(self) -> list[tuple[str, Sym, int]]:
        """[DYN16] The guards on data-dependent sizes (checked by the wrapper once bound)."""
        return [g for g in self.guards if self.atoms_of(g[1]) & set(self.data)]

    def value_of(self, name: str, values: Mapping[str, int]) -> int:
        if name in values:
            return values[name]
        how, num, div = self.derived[name]
        n, d = evaluate(num, values), evaluate(div, values)
        return n // d if how == "//" else n % d

    def guard(self, op: str, lhs: Sym, rhs: int, result: bool) -> None:
        """Record `lhs op rhs` (as it holds for the hints when `result`, else its negation)."""
        if not result:
            op = _NEGATE[op]
        key = (op, lhs.terms, rhs)
        if key not in self._seen:
            self._seen.add(key)
            self.guards.append((op, lhs, rhs))

    @contextmanager
    def assume(self, values: Mapping[str, int]) -> Iterator[None]:
        """Heuristics (`hint`) see `values` instead of the traced sizes meanwhile."""
        old, self.assumed = self.assumed, dict(values)
        try:
            yield
        finally:
            self.assumed = old

    def check(self, values: Mapping[str, int]) -> bool:
        """Do all guards hold for these symbol values?"""
        # [DYN16] checked by the wrapper, once bound. Compared by their terms: `in` on the
        # tuples would compare the Syms symbolically, recording guards while we iterate them.
        data = {(op, lhs.terms, rhs) for op, lhs, rhs in self.data_guards()}
        return all(_OPS[op](evaluate(lhs, values), rhs) for op, lhs, rhs in self.guards
                   if (op, lhs.terms, rhs) not in data)

    def fit(self, values: Mapping[str, int]) -> dict[str, int] | None:
        """`values` (a representative shape to plan a tiling variant for) repaired to satisfy
        the guards where a simple repair does: a symbol guarded equal to another
        (`s1 - s2 == 0`, e.g. `x.T + y`) takes the other's value, one guarded equal to a
        constant (`s0 == 9`) that value, and if a guard still fails the free sizes are moved
        apart (`s0 != s1`: 4096 and 4097). None when the guards still fail: a shape this
        program never serves. Without the repair every representative shape of `x.T + y`
        failed `s1 == s2` and its tiled variant was never compiled."""
        equal: dict[str, Sym | int] = {}  # symbol -> what it equals (another symbol or a value)
        for op, lhs, rhs in self.guards:
            linear = [(m[0], c) for m, c in lhs.terms if len(m) == 1 and m[0] in self.hints]
            const = sum(c for m, c in lhs.terms if m == ())
            if op != "==" or len(linear) + (const != 0) != len(lhs.terms):
                continue
            if len(linear) == 1 and (rhs - const) % linear[0][1] == 0:
                equal[linear[0][0]] = (rhs - const) // linear[0][1]
            elif len(linear) == 2 and not const and rhs == 0 and \
                    {linear[0][1], linear[1][1]} == {1, -1}:
                first, second = sorted((linear[0][0], linear[1][0]), key=list(self.hints).index)
                equal[second] = Sym((((first,), 1),), self)
        for spread in range(3):  # 0: as given; then free sizes apart by 1, 2, ... x spread
            fitted = {s: v + spread * k for k, (s, v) in enumerate(values.items())}
            for name in self.hints:  # in trace order: what a symbol equals comes before it
                if name in equal:
                    fitted[name] = evaluate(equal[name], fitted)
            if self.check(fitted):
                return fitted
        return None

    def guard_text(self) -> list[str]:
        return [f"{lhs} {op} {rhs}" for op, lhs, rhs in self.guards]

    @property
    def fully_specialized(self) -> bool:
        """No symbol, or every symbol pinned to its hint: the program serves one shape only."""
        return set(self.specialized) >= set(self.hints) - set(self.data)


_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge}
_NEGATE = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_SWAP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def evaluate(x: Sym | int, values: Mapping[str, int]) -> int:
    """The value of `x` for symbol values `values` (derived atoms computed, `values` unchanged)."""
    if not isinstance(x, Sym):
        return x
    derived: dict[str, int] = {}
    total = 0
    for mono, coef in x.terms:
        prod = coef
        for name in mono:
            v = values.get(name)
            if v is None:
                v = derived.get(name)
                if v is None:
                    v = derived[name] = x.env.value_of(name, values)
            prod *= v
        total += prod
    return total


def hint(x: Sym | int) -> int:
    """The size on the call that was traced, or the one assumed while planning a variant
    (for heuristics only: records no guard)."""
    if not isinstance(x, Sym):
        return int(x)
    return evaluate(x, x.env.assumed if x.env.assumed is not None else x.env.hints)


def traced(x: Sym | int) -> int:
    """The size on the call that was traced (what guards are decided on)."""
    return evaluate(x, x.env.hints) if isinstance(x, Sym) else int(x)


def is_sym(x: Any) -> bool:
    return isinstance(x, Sym)


def data_atoms_in(obj: Any, seen: set[int] | None = None) -> set[str]:
    """[DYN16] The data-dependent sizes anything (a loop-IR node, its expressions, a shape)
    refers to: a walk over tuples and dataclass fields."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, int, float, bool, type(None), np.dtype)):
        return set()
    seen.add(id(obj))
    if isinstance(obj, Sym):
        return obj.env.atoms_of(obj) & set(obj.env.data)
    if isinstance(obj, (tuple, list)):
        items: Iterable[Any] = obj
    elif hasattr(obj, "__dataclass_fields__"):
        items = (getattr(obj, f) for f in obj.__dataclass_fields__)
    else:
        return set()
    out: set[str] = set()
    for item in items:
        out |= data_atoms_in(item, seen)
    return out


def is_data(x: Any) -> bool:
    """[DYN16] A size computed from a data-dependent one (known only mid-call): structural
    choices take the form that serves every size rather than record a guard on it."""
    return isinstance(x, Sym) and bool(x.env.atoms_of(x) & set(x.env.data))


class Sym:
    """A symbolic integer: `sum(coef * prod(atoms))`, never a plain constant (those are ints)."""

    __slots__ = ("terms", "env", "_hash")

    def __init__(self, terms: tuple[tuple[Monomial, int], ...], env: ShapeEnv) -> None:
        self.terms = terms
        self.env = env
        self._hash = hash(terms)

    # ---- construction ------------------------------------------------------------------------
    @staticmethod
    def make(acc: Mapping[Monomial, int], env: ShapeEnv) -> Sym | int:
        items = tuple(sorted((m, c) for m, c in acc.items() if c))
        if not items:
            return 0
        if len(items) == 1 and items[0][0] == ():
            return items[0][1]
        return Sym(items, env)

    def _acc(self) -> dict[Monomial, int]:
        return dict(self.terms)

    @staticmethod
    def _terms_of(x: Sym | int) -> Iterable[tuple[Monomial, int]]:
        return x.terms if isinstance(x, Sym) else (((), int(x)),)

    def _other(self, other: Any) -> Sym | int | float | None:
        """An operand: sizes and integers as they are; a float makes the size a plain
        (specialized) value; anything else is not ours."""
        if isinstance(other, (Sym, int)):
            return other
        if isinstance(other, np.integer):
            return int(other)
        if isinstance(other, (float, np.floating)):
            return float(other)
        return None

    def __add__(self, other: Any) -> Sym | int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if isinstance(o, float):
            return _specialize(self, "a size in float arithmetic") + o
        acc = self._acc()
        for m, c in Sym._terms_of(o):
            acc[m] = acc.get(m, 0) + c
        return Sym.make(acc, self.env)

    __radd__ = __add__

    def __neg__(self) -> Sym | int:
        return Sym.make({m: -c for m, c in self.terms}, self.env)

    def __sub__(self, other: Any) -> Sym | int:
        o = self._other(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other: Any) -> Sym | int:
        o = self._other(other)
        return NotImplemented if o is None else (-self) + o

    def __mul__(self, other: Any) -> Sym | int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if isinstance(o, float):
            return _specialize(self, "a size in float arithmetic") * o
        acc: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in Sym._terms_of(o):
                m = tuple(sorted(m1 + m2))
                acc[m] = acc.get(m, 0) + c1 * c2
        return Sym.make(acc, self.env)

    __rmul__ = __mul__

    def _divide(self, other: Sym | int, how: str) -> Sym | int:
        quotient = exact_quotient(self, other)
        if quotient is not None:
            return quotient if how == "//" else 0
        if not self >= 0:  # derived atoms are printed with C's `/` and `%`: operands >= 0
            if isinstance(other, Sym) or _decide(self, "<=") is not True:
                return _specialize(self, "a division of a size that may be negative") \
                    // other if how == "//" else _specialize(self, "a size modulo") % other
            floor = -((-self + (other - 1)) // other)  # -(ceil(-x / d)), with -x >= 0
            return floor if how == "//" else self - other * floor
        if isinstance(other, int) and other > 0 and how == "%":
            # drop the terms divisible by the divisor: (4*s0 + s1) % 4 == s1 % 4
            rest = {m: c for m, c in self.terms if c % other}
            if len(rest) < len(self.terms):
                reduced = Sym.make(rest, self.env)
                return reduced % other if isinstance(reduced, Sym) else reduced % other
        divisor = f"({other})" if isinstance(other, Sym) else str(other)
        key = f"({self} {'/' if how == '//' else '%'} {divisor})"  # C syntax: sizes are >= 0
        if key not in self.env.derived:
            self.env.derived[key] = (how, self, other)
        return Sym((((key,), 1),), self.env)

    def __floordiv__(self, other: Any) -> Sym | int:
        if not isinstance(other, (Sym, int)):
            return NotImplemented
        if isinstance(other, int) and other <= 0:
            return _specialize(self, "a division by a non-positive int") // other
        return self._divide(other, "//")

    def __rfloordiv__(self, other: Any) -> Sym | int:
        if not isinstance(other, int):
            return NotImplemented
        if other == 0:
            return 0
        return other // _specialize(self, "an int divided by a size")

    def __mod__(self, other: Any) -> Sym | int:
        if not isinstance(other, (Sym, int)):
            return NotImplemented
        if isinstance(other, int) and other <= 0:
            return _specialize(self, "a modulo by a non-positive int") % other
        return self._divide(other, "%")

    def __rmod__(self, other: Any) -> Sym | int:
        if not isinstance(other, int):
            return NotImplemented
        if other == 0:
            return 0
        return other % _specialize(self, "an int modulo a size")

    def __truediv__(self, other: Any) -> float:  # a Python float of a size: specialized
        return _specialize(self, "a size divided with /") / (
            _specialize(other, "a size divided with /") if isinstance(other, Sym) else other)

    def __rtruediv__(self, other: Any) -> float:
        return other / _specialize(self, "a size divided with /")

    def __pos__(self) -> Sym:
        return self

    def __abs__(self) -> Sym | int:
        return self if self >= 0 else -self

    # ---- questions -----------------------------------------------------------------------------
    def _compare(self, op: str, other: Any) -> bool:
        if isinstance(other, float):
            if not math.isfinite(other):  # every size compares with inf/NaN as 0 does
                return _OPS[op](0, other)
            if other != math.floor(other):  # sizes are ints: n < 2.5 is n <= 2, n > 2.5 n > 2
                if op in ("==", "!="):
                    return op == "!="
                op = "<=" if op in ("<", "<=") else ">"
            other = math.floor(other)
        if not isinstance(other, (Sym, int)):
            return NotImplemented  # type: ignore[return-value]
        diff = self - other
        if isinstance(diff, int):
            return _OPS[op](diff, 0)
        decided = _decide(diff, op)
        if decided is not None:
            return decided
        # normalize `c + rest op 0` to `rest op -c`
        const = dict(diff.terms).get((), 0)
        lhs = diff - const
        assert isinstance(lhs, Sym)
        result = _OPS[op](traced(diff), 0)
        diff.env.guard(op, lhs, -const, result)
        return result

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        if isinstance(other, Sym) and other.terms == self.terms:
            return True
        if not isinstance(other, (Sym, int, float)):
            return NotImplemented
        return self._compare("==", other)

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other: Any) -> bool:
        return self._compare("<", other)

    def __le__(self, other: Any) -> bool:
        return self._compare("<=", other)

    def __gt__(self, other: Any) -> bool:
        return self._compare(">", other)

    def __ge__(self, other: Any) -> bool:
        return self._compare(">=", other)

    def __bool__(self) -> bool:
        return self != 0

    def __hash__(self) -> int:
        return self._hash

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """`np.sqrt(x.shape[-1])`: a traced value computed at launch while a function is
        traced (the frontend's hook), else the ufunc of the specialized sizes."""
        if UFUNC_HOOK is not None and method == "__call__":
            result = UFUNC_HOOK(ufunc, inputs, kwargs)
            if result is not NotImplemented:
                return result
        plain = [_specialize(v, f"np.{ufunc.__name__} of a size") if isinstance(v, Sym) else v
                 for v in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)

    def __index__(self) -> int:
        return _specialize(self, "a size needed as a Python int")

    __int__ = __index__

    def __float__(self) -> float:
        return float(_specialize(self, "a size needed as a Python float"))

    # ---- printing ------------------------------------------------------------------------------
    def __str__(self) -> str:
        parts = []
        for mono, coef in self.terms:
            factors = [f"{coef}"] if coef != 1 or not mono else []
            factors += list(mono)
            text = "*".join(factors)
            parts.append(text)
        text = " + ".join(parts).replace("+ -", "- ")
        return f"({text})" if len(parts) > 1 else text  # safe inside a product, in C too

    def __repr__(self) -> str:
        return str(self)

    def __format__(self, spec: str) -> str:
        if spec.endswith(","):  # an explain line's `{n:,}`: the size as text
            return str(self)
        return format(str(self), spec)


def exact_quotient(num: Sym | int, div: Sym | int) -> Sym | int | None:
    """`num / div` when it is a polynomial (every term divisible), else None."""
    if isinstance(div, int):
        if div == 0:
            return None
        if isinstance(num, int):
            return num // div if num % div == 0 else None
        if all(c % div == 0 for _, c in num.terms):
            return Sym.make({m: c // div for m, c in num.terms}, num.env)
        return None
    if len(div.terms) != 1:
        return None if num != div else 1
    (dm, dc), = div.terms
    acc: dict[Monomial, int] = {}
    for m, c in Sym._terms_of(num):
        rest = list(m)
        for name in dm:
            if name not in rest:
                return None
            rest.remove(name)
        if c % dc:
            return None
        acc[tuple(rest)] = c // dc
    return Sym.make(acc, div.env)


def _decide(diff: Sym, op: str) -> bool | None:
    """Decide `diff op 0` for every shape of the class (symbols >= SYM_MIN, derived atoms
    >= 0), or None."""
    lo = _lower_bound(diff)
    hi = _lower_bound(-diff)  # type: ignore[arg-type]
    hi = None if hi is None else -hi
    if lo is not None and lo > 0:
        return op in ("!=", ">", ">=")
    if lo is not None and lo == 0 and op in (">=", "<"):
        return op == ">="
    if hi is not None and hi < 0:
        return op in ("!=", "<", "<=")
    if hi is not None and hi == 0 and op in ("<=", ">"):
        return op == "<="
    return None


def _lower_bound(x: Sym | int) -> int | None:
    """A lower bound over every shape of the class, or None. Each negative term must be
    dominated by a positive term whose monomial contains its own: `c2*m*m'` with `m' >= 2**k`
    is at least `c2*2**k*m`, so `s0*s1 - s0` is at least `s0` (>= 2)."""
    if isinstance(x, int):
        return x
    pos = {m: Fraction(c) for m, c in x.terms if c > 0 or not m}
    for m, c in sorted(((m, c) for m, c in x.terms if c < 0 and m), key=lambda t: len(t[0])):
        need = Fraction(-c)
        for m2 in sorted(pos, key=len, reverse=True):
            rest = _minus(m2, m)
            if rest is None or not rest or pos[m2] <= 0:
                continue
            scale = Fraction(math.prod(_least(n, x.env) for n in rest))
            if scale == 0:
                continue
            take = min(need, pos[m2] * scale)  # the part of c2*m2 that covers c*m
            pos[m2] -= take / scale
            need -= take
            if need == 0:
                break
        if need:
            return None
    total = Fraction(0)
    for mono, coef in pos.items():
        total += coef * math.prod(_least(n, x.env) for n in mono)
    return math.floor(total)


def _least(name: str, env: ShapeEnv) -> int:
    """The least value of an atom: SYM_MIN for an input size, 0 for a derived atom and for a
    data-dependent size ([COMPACT]: a selection may be empty or hold one element; a decision
    that needs more is taken on the hint and guarded, and the wrapper checks the guard)."""
    return SYM_MIN if name in env.hints and name not in env.data else 0


def _minus(big: Monomial, small: Monomial) -> Monomial | None:
    """The factors of `big` left after removing `small`, or None if `small` does not divide."""
    rest = list(big)
    for name in small:
        if name not in rest:
            return None
        rest.remove(name)
    return tuple(rest)


# Set by the frontend: applies a NumPy ufunc to sizes as traced values (None: no trace active).
UFUNC_HOOK: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None


def _specialize(x: Sym, why: str) -> int:
    """Pin `x` to its traced size (a guard `x == value`)."""
    value = traced(x)
    x.env.guard("==", x, value, True)
    for mono, _ in x.terms:
        for name in mono:
            if name in x.env.hints:
                x.env.specialized.setdefault(name, x.env.hints[name])
    return value


def c_expr(x: Sym | int) -> str:
    """C++ text for a size: symbols are the kernel's `const int64_t s0` parameters."""
    return _text(x, "/")


def _text(x: Sym | int, floor_div: str) -> str:
    """A size as C (`floor_div` "/": operands are >= 0) or Python ("//") text."""
    if isinstance(x, int):
        return str(x)
    parts = []
    for mono, coef in x.terms:
        factors = [str(coef) if coef >= 0 else f"({coef})"] if coef != 1 or not mono else []
        factors += [_atom_text(x.env, n, floor_div) for n in mono]
        parts.append("*".join(factors))
    return "(" + " + ".join(parts) + ")" if len(parts) > 1 else parts[0]


def _atom_text(env: ShapeEnv, name: str, floor_div: str) -> str:
    if name in env.hints:
        return name
    how, num, div = env.derived[name]
    divisor = f"({_text(div, floor_div)})" if isinstance(div, Sym) else str(div)
    return f"({_text(num, floor_div)} {floor_div if how == '//' else '%'} {divisor})"


def as_size(x: Any) -> Sym | int:
    """A size given by the program (an int, a NumPy integer, or a symbolic size)."""
    return x if isinstance(x, Sym) else operator.index(x)


def is_size(x: Any) -> bool:
    return isinstance(x, (int, Sym)) or hasattr(x, "__index__") and not hasattr(x, "shape")


def broadcast_shapes(*shapes: tuple[Sym | int, ...]) -> tuple[Sym | int, ...]:
    """NumPy's broadcasting over sizes that may be symbolic (a symbol is never 1; two
    different symbols broadcast when they are equal: a guard)."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Sym | int] = []
    for k in range(ndim):
        dims = [s[len(s) - ndim + k] for s in shapes if len(s) - ndim + k >= 0]
        size: Sym | int = 1
        for d in dims:
            if isinstance(d, int) and d == 1:
                continue
            if isinstance(size, int) and size == 1:
                size = d
            elif not d == size:
                raise ValueError(
                    "shape mismatch: objects cannot be broadcast to a single shape.  "
                    "Mismatch is between " + " and ".join(map(str, shapes)))
        out.append(size)
    return tuple(out)


def slice_indices(slc: slice, n: Sym | int) -> tuple[Sym | int, Sym | int, int, Sym | int]:
    """`slice.indices(n)` and the element count, for a size that may be symbolic."""
    if isinstance(n, int):
        start, stop, step = slc.indices(n)
        return start, stop, step, len(range(start, stop, step))
    step = 1 if slc.step is None else operator.index(slc.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    lower, upper = (0, n) if step > 0 else (-1, n - 1)

    def clamp(x: Any, default: Sym | int) -> Sym | int:
        if x is None:
            return default
        x = as_size(x)
        if x < 0:
            x = x + n
            return lower if x < lower else x
        return upper if x > upper else x

    start = clamp(slc.start, lower if step > 0 else upper)
    stop = clamp(slc.stop, upper if step > 0 else lower)
    span = stop - start if step > 0 else start - stop
    count = (span + abs(step) - 1) // abs(step) if span > 0 else 0
    return start, stop, step, count


def env_of(shapes: Iterable[Iterable[Any]]) -> ShapeEnv | None:
    """The ShapeEnv of the first symbolic size among `shapes`, or None (all concrete)."""
    for shape in shapes:
        for d in shape:
            if isinstance(d, Sym):
                return d.env
    return None


def py_expr(x: Sym | int) -> str:
    """Python text for a size (the generated wrapper evaluates it at launch)."""
    return _text(x, "//")


def py_shape(shape: Iterable[Sym | int]) -> str:
    items = [py_expr(d) for d in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def known_empty(shape: tuple[Any, ...]) -> bool:
    """Is an extent of `shape` a known 0 (a symbolic one may be 0 only at run time)?"""
    return any(type(n) is int and n == 0 for n in shape)


def surely(a: Sym | int, op: str, b: Sym | int) -> bool:
    """[COMPACT] `a op b` for every shape of the class, decided with no guard (False when it
    depends on the sizes): for choices correct either way, such as keeping a loop over a
    dimension that may be 1 (a data-dependent size may be 0 or 1) or hoisting nothing out of a
    loop that may run zero times."""
    diff = a - b
    return _OPS[op](diff, 0) if isinstance(diff, int) else _decide(diff, op) is True


def same_size(a: Sym | int, b: Sym | int) -> bool:
    """Equal for every shape (no guard): for decisions where "equal" only enables an
    optimization, such as fusing loops over the same range."""
    diff = a - b
    return isinstance(diff, int) and diff == 0
