"""Issue 8 item 7: inputs whose meaning a plain-array kernel would change (masked arrays,
np.matrix, other ndarray subclasses) are refused with a TypeError; np.memmap reads as an
ndarray; Python scalars used in `if`/comparisons specialize (README)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import assert_matches

import stax


class Tagged(np.ndarray):
    pass


def test_masked_array_is_refused() -> None:
    x = np.ma.masked_array([1000.0, 2.0, 5.0], mask=[True, False, False])
    with pytest.raises(TypeError, match="masked arrays are not supported.*filled"):
        stax.jit(lambda a: a.sum())(x)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_matrix_is_refused() -> None:
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="np.matrix is not supported"):
        stax.jit(lambda a: a * a)(m)


def test_other_subclasses_are_refused() -> None:
    with pytest.raises(TypeError, match="ndarray subclass Tagged.*np.asarray"):
        stax.jit(lambda a: a + 1)(np.zeros(3).view(Tagged))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_memmap_reads_as_an_array(tmp_path: Path, dtype: str) -> None:
    mm = np.memmap(tmp_path / "data", dtype=dtype, mode="w+", shape=(4, 5))
    mm[:] = np.arange(20, dtype=dtype).reshape(4, 5)
    f = stax.jit(lambda a: (a * 2).sum(0))
    got = f(mm)
    assert type(got) is np.ndarray
    assert_matches(got, (np.asarray(mm) * 2).sum(0))


def _branchy(x, n):
    if n == 0:
        return x
    if n > 2.5:
        return x - n
    return x * n


@pytest.mark.parametrize("values", [(0, 2, 3, 0, -1), (0.0, 2.5, 3.5, 0.0)])
def test_python_scalars_in_if_specialize(values: tuple[float, ...]) -> None:
    f = stax.jit(_branchy)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for n in values:
        assert_matches(f(x, n), _branchy(x, n))
    assert_matches(f(x[:, ::2], values[1]), _branchy(x[:, ::2], values[1]))  # strided


def test_python_scalar_comparison_as_a_value() -> None:
    f = stax.jit(lambda x, n: x + (n == 0))
    x = np.arange(4)
    assert_matches(f(x, 0), x + True)
    assert_matches(f(x, 5), x + False)
