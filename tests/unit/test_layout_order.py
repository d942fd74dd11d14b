"""[LAYOUT] NumPy's layout of elementwise results (`stax.lower.ufunc_order`, `memory_order`)
against NumPy's own: the strides the rules predict for the result of `np.add` / `np.where` on
operands of many layouts (C, Fortran, transposed 3-d, slices with steps and negative steps,
broadcast rows, columns and scalars, axes of size 1) equal the strides of NumPy's result."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stax.ir.program import ordered_strides
from stax.lower import memory_order, ufunc_order

pytestmark = pytest.mark.fast


def _elements(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def _predicted(shape: tuple[int, ...], *operands: np.ndarray) -> tuple[int, ...]:
    """The result strides in bytes the rules predict (operands broadcast to `shape`, as the
    traced graph's broadcast ops do: a broadcast axis has stride 0)."""
    ins = [_elements(np.broadcast_to(a, shape)) for a in operands]
    return tuple(s * 8 for s in ordered_strides(shape, ufunc_order(ins, shape)))


def _layouts(shape: tuple[int, ...]) -> list[np.ndarray]:
    """float64 arrays of `shape` in every axis order, and strided/reversed slices of them."""
    out = []
    for perm in itertools.permutations(range(len(shape))):
        base = np.zeros(tuple(shape[p] for p in perm))
        inv = tuple(np.argsort(perm))
        out.append(base.transpose(inv))
        big = np.zeros(tuple(2 * shape[p] for p in perm)).transpose(inv)
        out.append(big[tuple(slice(None, None, 2) for _ in shape)])
        out.append(big[tuple(slice(None, n) for n in shape)][::-1])
    return out


@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 5), (3, 1, 5), (1, 6), (6, 1), (2, 3, 1, 4)])
def test_unary_and_binary_results_match_numpy(shape: tuple[int, ...]) -> None:
    arrays = _layouts(shape)
    for a in arrays:
        assert _predicted(shape, a, np.zeros(())) == np.add(a, 1.0).strides, a.strides
    for a, b in itertools.product(arrays[:8], arrays[:8]):
        assert _predicted(shape, a, b) == np.add(a, b).strides, (a.strides, b.strides)


def test_broadcast_operands_match_numpy() -> None:
    f = np.asfortranarray(np.zeros((6, 8)))
    col, row = np.zeros((6, 1)), np.zeros(8)
    for ops in [(f, col), (f, row), (col, row), (row, col), (f, row, col), (f.T.copy().T, col)]:
        shape = np.broadcast_shapes(*(a.shape for a in ops))
        want = np.where(*ops).strides if len(ops) == 3 else np.add(*ops).strides
        assert _predicted(shape, *ops) == want


def test_memory_order_of_views() -> None:
    """A copy of a returned view laid out in `memory_order` has the view's strides where the
    view is dense (NumPy returns the view itself), else those of NumPy's K-order copy."""
    for a in _layouts((3, 4, 5)) + _layouts((3, 1, 5)) + _layouts((1, 4)):
        order = memory_order(_elements(a), a.shape)
        dense = min(a.strides) > 0 and a.base is not None and a.base.size == a.size
        want = a.strides if dense else np.copy(a, order="K").strides
        assert tuple(s * 8 for s in ordered_strides(a.shape, order)) == want, a.strides
