"""0-d results come back as NumPy returns them: a NumPy scalar from a reduction, a ufunc, an
integer index, np.dot/np.median/np.linalg.det; a 0-d ndarray from np.copy, np.where, np.array,
x[...], np.full(()), np.tensordot; x.copy()/x.reshape(())/x.astype()/x.T keep their operand's
kind (a scalar's are scalars, a 0-d array's are arrays). Cold and warm calls alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax

VECTOR: dict[str, Callable[[Any], Any]] = {
    "sum": lambda x: x.sum(), "mean": lambda x: np.mean(x), "argmax": lambda x: x.argmax(),
    "median": lambda x: np.median(x), "percentile": lambda x: np.percentile(x, 30),
    "dot": lambda x: np.dot(x, x), "matmul_operator": lambda x: x @ x,
    "inner": lambda x: np.inner(x, x), "det": lambda x: np.linalg.det(np.outer(x[:2], x[:2])
                                                                      + np.eye(2)),
    "index": lambda x: x[-1], "searchsorted": lambda x: np.searchsorted(x, 3.5),
    "interp": lambda x: np.interp(2.5, x, 2 * x), "nanmax": lambda x: np.nanmax(x),
    "sum_astype": lambda x: x.sum().astype(np.float32), "sum_copy": lambda x: x.sum().copy(),
    "sum_reshape": lambda x: x.sum().reshape(()),
    "where": lambda x: np.where(x.sum() > 3, 1.0, 2.0),
    "np_copy": lambda x: np.copy(x.sum()), "array": lambda x: np.array(x.sum()),
    "asarray": lambda x: np.asarray(x.max()), "full": lambda x: np.full((), x[0]),
    "tensordot": lambda x: np.tensordot(x, x, 1), "cov": lambda x: np.cov(x),
    "slice_reshape": lambda x: x[:1].reshape(()), "ellipsis": lambda x: x[:1].reshape(())[...],
    "tuple": lambda x: (x.min(), np.copy(x.max()), x[:2]),
}
ZERO_D: dict[str, Callable[[Any], Any]] = {
    "ufunc": lambda z: z + 1, "sqrt": lambda z: np.sqrt(z), "method_copy": lambda z: z.copy(),
    "np_copy": lambda z: np.copy(z), "T": lambda z: z.T, "astype": lambda z: z.astype(np.float32),
    "squeeze": lambda z: np.squeeze(z), "where": lambda z: np.where(z > 1, z, 0.0),
    "item": lambda z: z[()], "ellipsis": lambda z: z[...] * 1,
}


def kinds(result: Any) -> Any:
    if isinstance(result, tuple):
        return tuple(map(kinds, result))
    return type(result), np.asarray(result).dtype


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_zero_d_results(name: str) -> None:
    fn, x = VECTOR[name], np.array([1.0, 4.0, 2.0, 8.0, 5.0, 7.0])
    want = fn(x.copy())
    jitted = stax.jit(fn)
    for _ in range(3):  # cold, then warm calls
        got = jitted(x.copy())
        assert kinds(got) == kinds(want)
        for g, w in zip(*((r if isinstance(r, tuple) else (r,)) for r in (got, want)),
                        strict=True):
            np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_zero_d_argument_results(name: str, dtype: str) -> None:
    fn, z = ZERO_D[name], np.array(2, dtype=dtype)
    want = fn(z.copy())
    jitted = stax.jit(fn)
    for _ in range(3):
        got = jitted(z.copy())
        assert kinds(got) == kinds(want)
        np.testing.assert_array_equal(got, want)


def test_returned_zero_d_array_is_writable_and_fresh() -> None:
    z = np.array(3.0)
    got = stax.jit(lambda z: np.copy(z))(z)
    got[...] = 5.0  # an ndarray, as NumPy's: writable, not the argument
    assert z == 3.0 and got == 5.0
