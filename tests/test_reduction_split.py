"""[VEC3, issue 9] Reductions over any set of axes read memory in order: a reduction over
contiguous axes and over axes beyond a kept one (`x.sum(axis=(0, 2))`) runs as a partial
reduction over the contiguous axes, then an outer reduction over the partial results
(`split_reduction`, rule `reduction_split` in explain). Every axis subset of 3-D and 4-D arrays,
C and Fortran order, transposed and strided inputs, each reduction function, fused producers and
consumers, shape-generic programs and every ISA level, against NumPy."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import make_array, run_sanitized

import stax
from stax.runtime.compiler import ISA_LEVELS, isa_level


def _subsets(ndim: int) -> list[tuple[int, ...]]:
    return [a for k in range(1, ndim + 1) for a in itertools.combinations(range(ndim), k)]


def _layouts(shape: tuple[int, ...], seed: int) -> dict[str, np.ndarray]:
    x = make_array(shape, "float64", seed=seed)
    t = make_array(shape[::-1], "float64", seed=seed + 1).T  # every axis reversed
    p = make_array((shape[1], shape[0], *shape[2:]), "float64", seed=seed + 2).swapaxes(0, 1)
    return {"C": x, "F": np.asfortranarray(x), "T": t, "swap01": p,
            "strided": make_array((shape[0], 2 * shape[1], *shape[2:]), "float64",
                                  seed=seed + 3)[:, ::2]}


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    return x.sum(axis=axes)


@pytest.mark.parametrize("shape", [(6, 5, 37), (3, 4, 5, 19)])
def test_every_axis_subset(shape: tuple[int, ...]) -> None:
    f = stax.jit(_sum)
    for name, x in _layouts(shape, 3).items():
        for axes in _subsets(len(shape)):
            got, want = f(x, axes), _sum(x, axes)
            assert got.shape == want.shape and got.dtype == want.dtype, (name, axes)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{name} {axes}")


def _all_fns(x: Any, m: Any, i: Any) -> Any:
    return (x.sum((0, 2)), x.prod((0, 2)), x.max((0, 2)), x.min((0, 3)), x.mean((1, 3)),
            m.any((0, 2)), m.all((0, 2)), i.sum((0, 2)), np.sqrt(x.var((0, 2))),
            (x * x).sum((0, 2), keepdims=True) + 1, x.sum((0, 2, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_functions_producers_consumers(dtype: str) -> None:
    shape = (5, 7, 33, 4)
    x = make_array(shape, dtype, seed=1, low=0.5, high=1.5)
    x[1, 2, 3, 0] = np.nan
    x[2, 4, 5, 1] = -np.inf
    m = make_array(shape, "bool", seed=2)
    m[:, 3] = True  # all() true in one output
    i = make_array(shape, "int32", seed=4, low=-2**31, high=2**31 - 1)  # wraps as NumPy's
    with np.errstate(invalid="ignore"):  # NumPy's var: inf - inf (Stax reads no FP status)
        want = _all_fns(x, m, i)
    got = stax.jit(_all_fns)(x, m, i)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-6 if dtype == "float32" else 1e-13,
                                   equal_nan=True)


def _explain(x: np.ndarray, axes: tuple[int, ...]) -> tuple[list[str], str]:
    """The lowering's rules and the report's text."""
    report = stax.explain(stax.jit(lambda a: a.sum(axis=axes)), x)
    return [d.rule for d in report.compilation.lowered.decisions], str(report)


def test_explain_shows_the_split() -> None:
    x = make_array((4, 6, 40), "float32")
    rules, text = _explain(x, (0, 2))
    assert rules == ["reduction_split", "reduction_result"]
    assert "reduction_split: partial sum over the contiguous axes (2,) first" in text
    assert "form: outer-reduction" in text
    # contiguous along axis 0: axis 0 first, then axis 2
    assert "partial sum over the contiguous axes (0,) first" in _explain(
        np.asfortranarray(x), (0, 2))[1]
    for axes in [(1, 2), (0, 1), (0, 1, 2), (1,)]:  # already in memory order: one reduction
        assert _explain(x, axes)[0] == ["reduction_result"]
    # a unit axis beyond the kept one: nothing to reduce there, one reduction
    assert _explain(make_array((4, 1, 40), "float32"), (1, 2))[0] == ["reduction_result"]


def test_empty_and_generic() -> None:
    f = stax.jit(_sum)
    for shape in [(0, 3, 5), (3, 0, 5), (3, 4, 0), (1, 3, 1)]:
        x = make_array(shape, "float32")
        np.testing.assert_array_equal(f(x, (0, 2)), _sum(x, (0, 2)))
    g = stax.jit(lambda a: a.sum((0, 2)), dynamic=True)
    for shape in [(5, 6, 70), (9, 3, 17), (2, 2, 2)]:
        x = make_array(shape, "float32", seed=shape[0])
        np.testing.assert_allclose(g(x), _sum(x, (0, 2)), rtol=1e-5)
    assert g.cache_info().generic == 1  # one shape-generic program for the three


@pytest.mark.parametrize("isa", ISA_LEVELS)
def test_isa_levels(isa: str) -> None:
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"{isa} not available here")
    x = make_array((5, 9, 70), "float32", seed=7)
    f = stax.jit(lambda a: (a.sum((0, 2)), a.max((0, 2))), isa=isa)
    got = f(x)
    np.testing.assert_allclose(got[0], x.sum((0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(got[1], x.max((0, 2)))


SANITIZED = """
import numpy as np, stax
x = np.random.default_rng(0).standard_normal((7, 5, 131)).astype(np.float32)
for a in (x, np.asfortranarray(x), x[:, ::2]):
    got = stax.jit(lambda v: (v.sum((0, 2)), v.max((0, 2)), (v * 2).mean((0, 2))))(a)
    want = (a.sum((0, 2)), a.max((0, 2)), (a * 2).mean((0, 2)))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)
print("sanitized ok")
"""


def test_clean_under_sanitizers(tmp_path: Path) -> None:
    run_sanitized(SANITIZED, tmp_path / "cache")
