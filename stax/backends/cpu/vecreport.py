"""Which loops of generated C++ g++ vectorized, and why not (issue 9, item 1).

`#pragma omp simd` is a request g++ may drop without a word (Stax compiles with `-w`). This
module compiles a source once more with `-fopt-info-vec-loop-all` and assigns every remark to the
innermost `for` loop whose lines contain it (remarks on a `#pragma omp simd reduction` line
belong to OpenMP's helper loops for the reduction lanes, outside every loop, and are dropped).
`stax.explain` and the vectorization test read the result.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from stax.backends.cpu.cpp import vector_blocker
from stax.runtime.compiler import (
    BASE_FLAGS,
    ISA_FLAGS,
    CompilerNotFound,
    compiler,
    compiler_identity,
    object_flags,
)
from stax.tiling.plan import KernelPlan

_REMARK = re.compile(r"^[^:\s]+\.cpp:(\d+):\d+: (optimized|missed): (.*)$")
_LIBRARY_CALL = re.compile(r"distributed: split to 0 loops and \d+ library calls")
_FUNCTION = re.compile(r'^extern "C" void (\w+)\(')


@dataclass(frozen=True)
class LoopReport:
    function: str  # the C++ function (region) holding the loop
    line: int  # line of the `for` in the source
    code: str  # the `for` statement
    marked: bool  # Stax asked for vectorization (`omp simd`)
    vectorized: bool
    reason: str  # g++'s first "not vectorized" remark, or how it was vectorized

    @property
    def key(self) -> str:
        return f"{self.function}:{self.line}"


@dataclass
class _Loop:
    function: str
    line: int
    code: str
    marked: bool
    depth: int
    end: int = 0
    inner: bool = True


def innermost_loops(cpp: str) -> list[_Loop]:
    """Innermost `for` loops with their line ranges, from brace depth (the printer opens a
    loop's body on the `for` line and closes it on a line of its own or the same line)."""
    loops: list[_Loop] = []
    open_: list[_Loop] = []
    depth = 0
    function = ""
    previous = ""
    for number, text in enumerate(cpp.splitlines(), start=1):
        match = _FUNCTION.match(text)
        if match:
            function = match.group(1)
        stripped = text.strip()
        if stripped.startswith("for ("):
            for loop in open_:
                loop.inner = False
            marked = previous.startswith("#pragma omp") and " simd" in previous
            loop = _Loop(function, number, stripped.rstrip("{ ").strip(), marked, depth)
            open_.append(loop)
            loops.append(loop)
        depth += text.count("{") - text.count("}")
        while open_ and depth <= open_[-1].depth:
            open_.pop().end = number
        previous = stripped
    return [loop for loop in loops if loop.inner and loop.function]  # not the header's


def remarks_available() -> bool:
    """Whether the C++ compiler gives GCC's vectorizer remarks (-fopt-info): GCC, not clang."""
    try:
        return "Free Software Foundation" in compiler_identity()
    except CompilerNotFound:
        return False


@lru_cache(maxsize=32)
def vector_report(cpp: str, isa: str) -> tuple[LoopReport, ...]:
    """Compile `cpp` at ISA level `isa` with g++'s vectorizer remarks; one entry per innermost
    loop (one compile, object code discarded; the last sources' reports are kept)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, remarks = Path(tmp) / "kernels.cpp", Path(tmp) / "remarks.txt"
        src.write_text(cpp)
        flags = object_flags(BASE_FLAGS) + ISA_FLAGS[isa]
        subprocess.run([compiler(), *flags, "-c", str(src), "-o", str(Path(tmp) / "k.o"),
                        f"-fopt-info-vec-loop-all={remarks}"], check=True, capture_output=True)
        text = remarks.read_text() if remarks.exists() else ""  # g++ writes none: no loops
    loops = innermost_loops(cpp)
    found: dict[int, list[tuple[str, str]]] = {}
    for row in text.splitlines():
        match = _REMARK.match(row)
        if not match:
            continue
        line, kind, message = int(match.group(1)), match.group(2), match.group(3)
        owner = [k for k, loop in enumerate(loops) if loop.line <= line <= loop.end]
        if owner:
            found.setdefault(owner[-1], []).append((kind, message))
    out = []
    for k, loop in enumerate(loops):
        remarks_ = found.get(k, [])
        # [G9] a loop g++ replaced whole by memcpy/memset (a row copy) counts as vectorized
        done = [m for kind, m in remarks_ if kind == "optimized" and (
            "loop vectorized" in m or _LIBRARY_CALL.search(m))]
        missed = [m for kind, m in remarks_ if kind == "missed" and "not vectorized" in m]
        if done:
            reason = done[0]
        elif missed:
            reason = missed[0]
        else:
            reason = "no vectorizer remark (the loop was unrolled or not considered)"
        out.append(LoopReport(loop.function, loop.line, loop.code, loop.marked, bool(done),
                              reason))
    return tuple(out)


def describe(loops: Sequence[LoopReport]) -> str:
    """[VEC] `stax.explain`'s section: a count, then each innermost loop, whether Stax marked
    it `omp simd`, whether g++ vectorized it, and g++'s reason."""
    done = sum(loop.vectorized for loop in loops)
    missed = sum(loop.marked and not loop.vectorized for loop in loops)
    lines = [f"{done} of {len(loops)} innermost loops vectorized; marked `omp simd` and left "
             f"scalar by g++: {missed}"]
    for loop in loops:
        mark = "omp simd" if loop.marked else "not marked"
        state = "vectorized" if loop.vectorized else "SCALAR"
        lines.append(f"  {loop.function} line {loop.line} `{loop.code}`: {mark}, {state}: "
                     f"{loop.reason}")
    return "\n".join(lines)


def vectorization_text(cpp: str, plans: Sequence[KernelPlan], isa: str) -> str:
    """[VEC] `stax.explain`'s section: the kernels whose loops Stax leaves unmarked (rule
    vector_blocker, with its reason), then g++'s verdict on each innermost loop."""
    if isa == "scalar":
        return "none: the scalar ISA level compiles with -fno-tree-vectorize"
    blocked = [f"{p.name}: its loops carry no `omp simd`: {reason} (rule vector_blocker)"
               for p in plans
               if (reason := vector_blocker(n.body for n in p.nodes if n.body is not None))]
    if not remarks_available():
        return "\n".join([*blocked, "g++ remarks not available: the C++ compiler is not GCC "
                          "(no -fopt-info)"])
    return "\n".join([*blocked, describe(vector_report(cpp, isa))])
