"""Index terms are ordered by structure, never by address (issue 16, helper S16).

Gather terms (`Indirect` atoms) were ordered by `id()` of their expression, so the same program
could print different C++ from run to run (compile-cache misses) and two equal indices built in
different orders compared unequal. `structural_key` is a digest of the structure, memoized per
node and linear in a shared DAG.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from stax.ir.expr import Call, Const, Index, Indirect, Load, structural_key

I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)


def gather(buf: str, var: str = "x0") -> Indirect:
    return Indirect(Load(buf, Index.var(var), I64), 10)


def test_equal_structures_have_equal_keys_in_any_allocation_order() -> None:
    a1, b1 = gather("i"), gather("j")
    junk = [gather(f"k{n}") for n in range(100)]  # shift the addresses of what follows
    b2, a2 = gather("j"), gather("i")
    assert junk and a1 is not a2 and structural_key(a1) == structural_key(a2)
    assert structural_key(a1) != structural_key(b1)
    assert Index.of([(a1, 10), (b1, 1)]) == Index.of([(b2, 1), (a2, 10)])
    assert Index.of([(a1, 10), (b1, 1)]).terms == Index.of([(b2, 1), (a2, 10)]).terms


def test_keys_tell_apart_what_prints_alike() -> None:
    assert str(gather("i")) == str(gather("j"))  # both print `indirect<10>`
    assert structural_key(gather("i")) != structural_key(gather("i", "x1"))
    assert structural_key(Const(0.0, F64)) != structural_key(Const(-0.0, F64))
    assert structural_key(Const(1, I64)) != structural_key(Const(1, F64))
    x = Load("a", Index.var("x0"), F64)
    assert structural_key(Call("add", (x, x), F64)) != structural_key(Call("multiply", (x, x),
                                                                            F64))


def test_a_deep_shared_dag_is_keyed_in_linear_time() -> None:
    """2^5000 paths, 5001 nodes: no recursion, no blow-up."""
    e = Load("a", Index.var("x0"), F64)
    for _ in range(5000):
        e = Call("add", (e, e), F64)
    f = Load("a", Index.var("x0"), F64)
    for _ in range(5000):
        f = Call("add", (f, f), F64)
    assert structural_key(e) == structural_key(f) and len(structural_key(e)) == 16


PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    from stax.api import trace
    from stax.backends import get_backend
    from stax.lower import lower
    from stax.runtime.wrapper import emit_module
    from stax.sched.scheduler import schedule

    junk = [object() for _ in range(int(sys.argv[1]))]  # other addresses in each run

    def gathers(x, i, j, k):
        return x[i, j] + 2.0 * x[j, k] - x[k, i] * x[i, i]

    x = np.arange(20.0).reshape(4, 5)
    i, j, k = np.array([0, 3, 1]), np.array([4, -1, 2]), np.array([1, 2, 3])
    graph = trace(gathers, (x, i, j, k)).graph
    program = lower(graph, [(5, 1), (1,), (1,), (1,)]).program
    module = emit_module(schedule(program), get_backend("cpu"), threads=4, vectorize=True)
    sys.stdout.write(module.source)
""")


def emitted(seed: str, junk: int) -> str:
    env = {"PYTHONHASHSEED": seed, "STAX_PARALLEL_MIN_NS": "20000"}
    result = subprocess.run([sys.executable, "-c", PROGRAM, str(junk)], capture_output=True,
                            text=True, timeout=120, env={**_base_env(), **env}, check=True)
    return result.stdout


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}


def test_the_same_gather_program_prints_the_same_cpp_in_fresh_processes() -> None:
    first, second = emitted("1", 10), emitted("2", 5000)
    assert "region0" in first and first.count("STAX_") > 0
    assert first == second
