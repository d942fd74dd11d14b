"""Compiler-free checks of A2's pieces: matmul's result shape from shapes alone, the structural
key of compiled segments, and that traced functions build graphs without graph breaks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stax.api import trace
from stax.frontend.breaks import structural_key
from stax.frontend.numpy_api import matmul_shape

SHAPES = [(3,), (4,), (3, 4), (4, 5), (2, 3, 4), (1, 4, 5), (5, 2, 4, 3), (2, 1, 3, 4), (0, 4),
          (4, 0), (2, 0, 3, 4)]


@pytest.mark.parametrize(("sa", "sb"), list(itertools.product(SHAPES, SHAPES)))
def test_matmul_shape_is_numpys(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    try:
        want: object = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    except ValueError as e:
        with pytest.raises(ValueError, match="matmul: ") as info:
            matmul_shape(sa, sb)
        assert str(info.value) == f"matmul: {e}"
        return
    assert matmul_shape(sa, sb) == want


def test_huge_matmul_traces_without_running() -> None:
    # 10^5 x 10^5 float64 operands would be 80 GB: only shapes are involved while tracing.
    big = np.lib.stride_tricks.as_strided(np.zeros(1), (100_000, 100_000), (0, 0))
    assert matmul_shape(big.shape, big.shape) == (100_000, 100_000)


def test_structural_key_ignores_ids_and_sees_constants() -> None:
    x = np.ones((2, 3))

    def keyed(fn: object) -> tuple[object, ...]:
        return structural_key(trace(fn, (x,)).graph)

    assert keyed(lambda a: a * 2 + 1) == keyed(lambda a: a * 2 + 1)
    assert keyed(lambda a: a * 2 + 1) != keyed(lambda a: a * 2 + 2)
    assert keyed(lambda a: a + 0.0) != keyed(lambda a: a + -0.0)
    assert keyed(lambda a: a + np.arange(3.0)) != keyed(lambda a: a + np.arange(3.0) * 2)


def test_creation_functions_trace_into_the_graph() -> None:
    def fn(a: np.ndarray) -> np.ndarray:
        z = np.zeros((2, 4))
        z[:, 1:] = a
        return np.asarray(z)

    graph = trace(fn, (np.ones((2, 3)),)).graph
    assert [op.kind for op in graph.ops].count("setitem") == 1
    assert type(np.zeros(1)) is np.ndarray
