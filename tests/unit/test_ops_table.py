"""Compiler-free tests of the op table (stax.ops): every entry complete, the generated flag enum
and messages are what the runtime header and the wrapper use, dtype rules are NumPy's, the
decompositions compute the op, and the scattered tables are gone (lookups into the table)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from stax import ops
from stax.api import trace
from stax.backends.cpu import cpp
from stax.frontend import numpy_api
from stax.graph import SUPPORTED_DTYPES
from stax.runtime import wrapper
from stax.tiling.plan import TRANSCENDENTAL

ROOT = Path(cpp.__file__).resolve().parents[3]


def test_every_entry_is_complete() -> None:
    for op in ops.ELEMENTWISE:
        assert isinstance(op.ufunc, np.ufunc), op.name
        assert op.cost in ("cheap", "costly", "transcendental"), op.name
        assert op.cpp.float, op.name
        assert op.domain.low < op.domain.high, op.name
        assert all(f in {flag.name for flag in ops.FLAGS} for f in op.flags), op.name
        assert ops.by_ufunc(op.ufunc) is op
        assert ops.by_name(op.name) is op
        for alias in op.aliases:
            assert getattr(np, alias) is op.ufunc and ops.by_name(alias) is op
    for r in ops.REDUCTIONS:
        assert r.combine in {op.name for op in ops.ELEMENTWISE}, r.name
        if r.ufunc is not None:
            assert ops.by_name(r.combine).ufunc is r.ufunc
            assert r.identity == r.ufunc.identity, r.name
    for s in ops.SCANS:
        assert ops.by_name(s.combine).ufunc is s.ufunc and s.identity == s.ufunc.identity


def test_dispatch_is_by_ufunc_object() -> None:
    assert numpy_api.UFUNCS == ops.ufunc_names()
    assert ops.by_ufunc(np.matmul) is None and ops.by_ufunc([]) is None
    with pytest.raises(KeyError):
        ops.by_name("not_an_op")


def test_flag_enum_is_generated_into_the_header() -> None:
    header = (ROOT / "stax/backends/cpu/runtime_header.h").read_text()
    assert "enum StaxFlag {" not in header  # only the generated one exists
    assert ops.flag_enum_cpp() in cpp.HEADER
    enum = dict(re.findall(r"STAX_(\w+) = (\d+)", ops.flag_enum_cpp()))
    assert enum == {**{f.name: str(k) for k, f in enumerate(ops.FLAGS)},
                    "ANY_FLAG": str(ops.ANY_FLAG)}
    used = set(re.findall(r"\bSTAX_([A-Z_]+)\b", header)) - {
        "SIMD_MATH1", "SIMD_MATH2", "FLAG_ENUM", "CMATH", "HIDDEN", "LANES"}  # E16, F16X macros
    assert used <= set(enum), used - set(enum)


def test_wrapper_flags_are_the_table() -> None:
    assert wrapper.ANY_FLAG == ops.ANY_FLAG
    for flag in ops.FLAGS:  # a warning follows np.errstate through one of NumPy's categories
        assert (flag.errstate in wrapper.FPE) == issubclass(flag.kind, Warning), flag


def test_costs_are_the_table() -> None:
    assert {op.name for op in ops.ELEMENTWISE if op.cost == "transcendental"} == TRANSCENDENTAL
    assert not {"MATH", "INFIX", "HELPERS", "FLAGGED"} & set(vars(cpp))


DTYPES = [d for d in SUPPORTED_DTYPES]


@pytest.mark.parametrize("op", ops.ELEMENTWISE, ids=lambda op: op.name)
def test_dtype_rule_is_numpys(op: ops.Elementwise) -> None:
    """Traced dtypes are `resolve_dtypes` of NumPy: a traced call's result dtype equals the
    dtype NumPy's own call returns, for every supported dtype combination."""
    combos = [(d,) * op.nin for d in DTYPES] + ([(a, b) for a in DTYPES[::3] for b in DTYPES[1::3]]
                                                 if op.nin == 2 else [])
    for combo in combos:
        args = [np.ones(2, d) for d in combo]
        try:
            loop = op.ufunc.resolve_dtypes(tuple(combo) + (None,))
        except TypeError:
            continue
        if any(d not in SUPPORTED_DTYPES for d in loop):
            continue
        want = loop[-1]
        traced = trace(lambda *a, op=op: op.ufunc(*a), tuple(args))
        assert traced.graph.outputs[0].dtype == want, (op.name, combo)
        with np.errstate(all="ignore"):
            assert op.ufunc(*args).dtype == want


def _decomposition_namespace() -> dict[str, object]:
    names = {op.name: op.ufunc for op in ops.ELEMENTWISE}
    return {**names, "where": np.where}


@pytest.mark.parametrize("op", [op for op in ops.ELEMENTWISE if op.decomposition],
                         ids=lambda op: op.name)
def test_decompositions_compute_the_op(op: ops.Elementwise) -> None:
    rng = np.random.default_rng(0)
    lo, hi = max(op.domain.low, 0.1), op.domain.high  # positive: pow/log decompositions
    if op.name in ("negative", "absolute", "isnan", "isfinite", "square", "hypot", "logaddexp"):
        lo = op.domain.low
    x, y = rng.uniform(lo, hi, 50), rng.uniform(lo, hi, 50)
    if op.name in ("floor_divide", "remainder"):
        y = np.where(np.abs(y) < 0.5, 1.5, y)
    if op.name == "invert":
        x = rng.integers(-100, 100, 50)
    env = {**_decomposition_namespace(), "x": x, "y": y}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = eval(op.decomposition, {"__builtins__": {}}, env)  # noqa: S307 - our own table
        want = op.ufunc(*(x, y)[: op.nin])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)
