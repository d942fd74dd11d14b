"""Code generation through isl's AST generator, and translation validation with gcc.

`codegen` prints C loops for a legal schedule, one macro call per statement instance, with an
OpenMP pragma on the outermost parallel loop of each nest (carried through a `parallel` mark,
notes/islpy.md trap 9). `validate` compiles the original and the transformed program, runs both
on the same deterministic inputs and compares every array bit for bit.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FsPath

import islpy as isl

from stax.poly._isl import PolyError, budget, maps_of, set_, with_params
from stax.poly.check import ScheduleLike, Verdict, as_tree, check
from stax.poly.model import Scop
from stax.poly.transform import tile as tile_band
from stax.poly.tree import Band, Mark, Node, ScheduleTree, children, with_children

PARALLEL_MARK = "parallel"
_PRELUDE = """\
#include <math.h>
#include <stdio.h>
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
"""


def codegen(
    scop: Scop,
    schedule: ScheduleLike | None = None,
    lang: str = "c",
    tile: Sequence[int] | None = None,
) -> str:
    """C code of `scop` under `schedule` (default: the original), optionally with its outermost
    band tiled by `tile` sizes. Raises PolyError for an illegal schedule or tiling."""
    if lang != "c":
        raise PolyError(f"unsupported target language '{lang}' (only 'c')")
    verdict = _legal_verdict(scop, schedule, tile)
    macros = "".join(
        f"#define {s.name}({', '.join(s.iterators)}) {s.body}\n"
        for s in scop.statements
        if s.body is not None
    )
    return macros + _loops(scop, verdict.tree)


def _legal_verdict(
    scop: Scop, schedule: ScheduleLike | None, tile: Sequence[int] | None
) -> Verdict:
    tree = scop.schedule if schedule is None else as_tree(scop, schedule)
    if tile:
        bands = tree.bands()
        if not bands:
            raise PolyError("cannot tile: the schedule has no band")
        result = tile_band(scop, tree, bands[0][0], tile)
        verdict = result.verdict
        what = f"tiling by {list(tile)}"
    else:
        verdict, what = check(scop, tree), "the schedule"
    if not verdict.legal:
        raise PolyError(f"{what} is illegal: {verdict.violations[0]}")
    return verdict


def _loops(scop: Scop, tree: ScheduleTree) -> str:
    marked = ScheduleTree(tree.domain, _mark_parallel(tree.root))
    context = isl.Set.universe(scop.domain.params().get_space())
    with budget(what="code generation"):
        ast = isl.AstBuild.from_context(context).node_from_schedule(marked.to_isl())
    lines = ast.to_C_str().splitlines()
    out: list[str] = []
    for k, line in enumerate(lines):
        if line.strip() == f"// {PARALLEL_MARK}":
            following = lines[k + 1].lstrip() if k + 1 < len(lines) else ""
            if following.startswith("for "):
                out.append(line.replace(f"// {PARALLEL_MARK}", "#pragma omp parallel for"))
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _mark_parallel(node: Node) -> Node:
    """Put a `parallel` mark above the first coincident member on each path (split there)."""
    if isinstance(node, Band) and any(node.coincident):
        k = node.coincident.index(True)
        members = [node.member(i) for i in range(node.n_member)]
        inner = node.child
        if k + 1 < node.n_member:
            inner = Band(
                _product(members[k + 1 :]), inner, node.permutable, node.coincident[k + 1 :]
            )
        loop = Mark(PARALLEL_MARK, Band(_product([members[k]]), inner, node.permutable, (True,)))
        if k == 0:
            return loop
        return Band(_product(members[:k]), loop, node.permutable, node.coincident[:k])
    return with_children(node, [_mark_parallel(c) for c in children(node)])


def _product(members: list[isl.UnionPwAff]) -> isl.MultiUnionPwAff:
    out = isl.MultiUnionPwAff.from_union_pw_aff(members[0])
    for upa in members[1:]:
        out = out.flat_range_product(isl.MultiUnionPwAff.from_union_pw_aff(upa))
    return out


@dataclass(frozen=True)
class Validation:
    """Whether the transformed program computed the same arrays as the original."""

    ok: bool
    message: str
    original: str
    transformed: str


def validate(
    scop: Scop,
    schedule: ScheduleLike,
    params: Mapping[str, int],
    tile: Sequence[int] | None = None,
    timeout_s: float = 60.0,
) -> Validation:
    """Run the original and the transformed program (gcc, OpenMP) and compare every array."""
    missing = [p for p in scop.params if p not in params]
    if missing:
        raise PolyError(f"validate needs a value for parameter(s) {', '.join(missing)}")
    if any(s.body is None for s in scop.statements):
        raise PolyError("validate needs statement bodies: build the scop with parse_c")
    transformed_loops = codegen(scop, schedule, tile=tile)
    original_loops = codegen(scop)
    decls = _declarations(scop, params)
    original = _program(decls, original_loops)
    transformed = _program(decls, transformed_loops)
    difference = _compare(
        _run(original, "original", timeout_s), _run(transformed, "transformed", timeout_s)
    )
    return Validation(difference is None, difference or "same results", original, transformed)


def _compare(expected: list[str], got: list[str]) -> str | None:
    """None when equal, else the first differing element."""
    for a, b in zip(expected, got, strict=False):
        if a != b:
            name, index, value = a.split()
            return f"{name}[{index}] (flat) differs: original {value}, transformed {b.split()[2]}"
    if len(expected) != len(got):
        return "the programs printed different numbers of elements"
    return None


def _declarations(scop: Scop, params: Mapping[str, int]) -> str:
    fixed = " and ".join(f"{p} = {params[p]}" for p in scop.params)
    context = set_(with_params(scop.params, f"{{ : {fixed or 'true'} }}"))
    lines = [f"static const long {p} = {params[p]};" for p in scop.params]
    fill, dump = [], []
    accesses = scop.reads.union(scop.writes).intersect_domain(scop.domain).intersect_params(context)
    footprints = {}
    for m in maps_of(accesses):
        name = m.get_tuple_name(isl.dim_type.out)
        footprints[name] = footprints[name].union(m.range()) if name in footprints else m.range()
    for k, (name, elems) in enumerate(sorted(footprints.items())):
        extents = []
        for d in range(elems.dim(isl.dim_type.set)):
            low, high = elems.dim_min_val(d).to_python(), elems.dim_max_val(d).to_python()
            if low < 0:
                raise PolyError(f"validate: array {name} is accessed at index {low} < 0")
            extents.append(high + 1)
        size = 1
        for e in extents:
            size *= e
        lines.append(f"static double {name}{''.join(f'[{e}]' for e in extents)};")
        fill.append(
            f"  for (long k = 0; k < {size}; k++) ((double *)&{name})[k] = "
            f"1.0 + ((k * 37 + {k * 11}) % 101) / 101.0;"
        )
        dump.append(
            f'  for (long k = 0; k < {size}; k++) printf("{name} %ld %a\\n", k, '
            f"((double *)&{name})[k]);"
        )
    for k, (fn, arity) in enumerate(scop.functions):
        args = ", ".join(f"double a{j}" for j in range(arity)) or "void"
        terms = "".join(f" + a{j} * {0.5 / (j + 1)!r}" for j in range(arity))
        lines.append(f"static double {fn}({args}) {{ return {0.1 * (k + 1)!r}{terms}; }}")
    lines.append("static void init(void) {\n" + "\n".join(fill) + "\n}")
    lines.append("static void dump(void) {\n" + "\n".join(dump) + "\n}")
    return "\n".join(lines) + "\n"


def _program(declarations: str, loops: str) -> str:
    return (
        _PRELUDE
        + declarations
        + "int main(void) {\n  init();\n  {\n"
        + loops
        + "  }\n  dump();\n  return 0;\n}\n"
    )


def _run(program: str, what: str, timeout_s: float) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="stax-poly-") as tmp:
        src, exe = FsPath(tmp) / f"{what}.c", FsPath(tmp) / what
        src.write_text(program)
        cc = subprocess.run(
            [
                "gcc",
                "-O1",
                "-std=gnu99",
                "-ffp-contract=off",
                "-fopenmp",
                "-w",
                str(src),
                "-o",
                str(exe),
                "-lm",
            ],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if cc.returncode != 0:
            raise PolyError(f"gcc failed on the {what} program:\n{cc.stderr[:2000]}")
        run = subprocess.run(
            [str(exe)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={"OMP_NUM_THREADS": "2"},
        )
        if run.returncode != 0:
            raise PolyError(f"the {what} program failed with exit code {run.returncode}")
        return run.stdout.splitlines()
