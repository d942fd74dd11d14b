"""Fuzzing the legality check against running code and an independent Python model.

Random small SCoPs (one or two statements in a 2-d loop nest, stencil-like accesses) and random
unimodular or tiled schedules: whatever `check` calls legal must compute the original's arrays
(`validate`), and every counterexample of an illegal verdict must be a real conflict (same
element, one access a write) whose source the schedule places at or after its sink, as
recomputed here in plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import event, given, settings
from hypothesis import strategies as st

from stax import poly

Offset = tuple[int, int]
N = 6


@dataclass(frozen=True)
class Stmt:
    write: tuple[str, Offset]
    reads: tuple[tuple[str, Offset], ...]


def ref(access: tuple[str, Offset]) -> str:
    array, (di, dj) = access
    return f"{array}[i + {di}][j + {dj}]"


def source(stmts: tuple[Stmt, ...]) -> str:
    body = "".join(
        f"    {ref(s.write)} = f{k}({', '.join(ref(r) for r in s.reads)});\n"
        for k, s in enumerate(stmts)
    )
    return f"for (i = 1; i < N - 1; i++)\n  for (j = 1; j < N - 1; j++) {{\n{body}  }}\n"


offsets = st.tuples(st.integers(-1, 1), st.integers(-1, 1))
accesses = st.tuples(st.sampled_from("AB"), offsets)
stmts = st.lists(
    st.builds(Stmt, accesses, st.lists(accesses, min_size=1, max_size=2).map(tuple)),
    min_size=1,
    max_size=2,
).map(tuple)
elementary = st.sampled_from(
    [
        ((0, 1), (1, 0)),
        ((1, 0), (1, 1)),
        ((1, 0), (-1, 1)),
        ((1, 0), (2, 1)),
        ((1, 1), (0, 1)),
        ((-1, 0), (0, 1)),
        ((1, 0), (0, -1)),
        ((1, 0), (0, 1)),
    ]
)


def product(ms: list) -> tuple[tuple[int, int], tuple[int, int]]:
    out = ((1, 0), (0, 1))
    for m in ms:
        out = tuple(
            tuple(sum(m[r][k] * out[k][c] for k in range(2)) for c in range(2)) for r in range(2)
        )
    return out  # type: ignore[return-value]


def times(matrix, tiles, k: int, i: int, j: int) -> tuple[int, ...]:  # noqa: ANN001
    rows = tuple(a * i + b * j for a, b in matrix)
    tile = tuple(r // t for r, t in zip(rows, tiles, strict=True)) if tiles else ()
    return (*tile, *rows, k)


def schedule_text(matrix, tiles, n: int) -> str:  # noqa: ANN001
    rows = [f"{a}*i + {b}*j".replace("+ -", "- ") for a, b in matrix]
    tile = [f"floor(({r})/{t})" for r, t in zip(rows, tiles, strict=True)] if tiles else []
    return (
        "{ "
        + "; ".join(f"S{k}[i, j] -> [{', '.join([*tile, *rows, str(k)])}]" for k in range(n))
        + " }"
    )


def elements(s: Stmt, i: int, j: int) -> list[tuple[str, tuple[int, int], bool]]:
    def at(access: tuple[str, Offset], write: bool) -> tuple[str, tuple[int, int], bool]:
        array, (di, dj) = access
        return array, (i + di, j + dj), write

    return [at(s.write, True)] + [at(r, False) for r in s.reads]


@settings(max_examples=40, deadline=None)
@given(stmts, st.lists(elementary, min_size=1, max_size=3), st.sampled_from([(), (2, 3)]))
def test_check_agrees_with_execution_and_with_python(
    program: tuple[Stmt, ...], factors: list, tiles: tuple[int, ...]
) -> None:
    scop = poly.parse_c(source(program))
    matrix = product(factors)
    text = schedule_text(matrix, tiles, len(program))
    verdict = poly.check(scop, text)
    event("legal" if verdict.legal else "illegal")
    if verdict.legal:
        assert poly.validate(scop, text, {"N": N}).ok
        return
    for v in verdict.violations:
        (n,) = [value for name, value in v.params if name == "N"]
        k_src, k_dst = int(v.source[1:]), int(v.sink[1:])
        (i0, j0), (i1, j1) = v.source_instance, v.sink_instance
        assert all(1 <= x < n - 1 for x in (i0, j0, i1, j1))
        conflict = any(
            a == b and e == f and (w or x)
            for a, e, w in elements(program[k_src], i0, j0)
            for b, f, x in elements(program[k_dst], i1, j1)
        )
        assert conflict, f"{v} is not a conflict"
        assert (i0, j0, k_src) < (i1, j1, k_dst), f"{v} is not in original order"
        src_time, dst_time = (
            times(matrix, tiles, k_src, i0, j0),
            times(matrix, tiles, k_dst, i1, j1),
        )
        assert (v.source_time, v.sink_time) == (src_time, dst_time)
        assert src_time >= dst_time
