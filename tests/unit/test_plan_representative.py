"""Representative sizes of a generic program's tiling variants (issue 11, compiler-free):
`ShapeEnv.fit` repairs a representative shape so that the program's guards hold (sizes guarded
equal made equal, sizes guarded distinct moved apart), else None; the tiled variant of
`x.T + y` (its two inputs' sizes are guarded equal) is planned."""

from __future__ import annotations

import numpy as np

from stax.api import _as_array, trace
from stax.backends import DEFAULT, get_backend
from stax.ir.sym import ShapeEnv
from stax.lower import lower
from stax.runtime.wrapper import emit_module
from stax.sched.scheduler import schedule


def test_fit_makes_guarded_equal_sizes_equal() -> None:
    env = ShapeEnv()
    a, b, c, d = (env.symbol(h) for h in (100, 10, 10, 100))
    env.guard("==", b - c, 0, True)
    env.guard("==", a - d, 0, True)
    env.guard("!=", a - b, 0, True)
    wanted = {"s0": 1 << 20, "s1": 4, "s2": 4, "s3": 4}
    assert not env.check(wanted)
    assert env.fit(wanted) == {"s0": 1 << 20, "s1": 4, "s2": 4, "s3": 1 << 20}
    fitted = env.fit(dict.fromkeys(env.hints, 4096))  # s0 != s1: moved apart
    assert fitted is not None and env.check(fitted)
    assert fitted["s0"] != fitted["s1"] and fitted["s1"] == fitted["s2"]
    assert fitted["s0"] == fitted["s3"]


def test_fit_takes_pinned_values_and_refuses_what_never_holds() -> None:
    env = ShapeEnv()
    n, m = env.symbol(9), env.symbol(300)
    env.guard("==", n, 9, True)  # int(n): pinned
    env.guard("<=", 4 * m, 131072, True)  # a kernel-local row fits the stack
    assert env.fit({"s0": 4096, "s1": 16}) == {"s0": 9, "s1": 16}
    assert env.fit({"s0": 4, "s1": 1 << 20}) is None
    assert env.fit({"s0": 2, "s1": 2}) == {"s0": 9, "s1": 2}


def test_transpose_of_one_input_added_to_another_gets_a_tiled_variant() -> None:
    def transpose_add(x, y):
        return x.T + y

    args = (np.ones((100000, 10), np.float32), np.ones((10, 100000), np.float32))
    env = ShapeEnv()
    traced = trace(transpose_add, args, env=env)
    strides = [tuple(s // a.itemsize for s in a.strides) for a in map(_as_array, args)]
    sched = schedule(lower(traced.graph, strides).program)
    module = emit_module(sched, get_backend(DEFAULT), threads=2, vectorize=True)
    forms = [[p.form for p in v.plans.values()] for v in module.variants]
    assert forms[0] == ["tiled"]  # [GEN] 10 rows: tiled from TILE_MIN_ROWS (8) rows on
    assert ["vectorized"] in forms[1:]  # rows of 4 (a representative): vectorized
