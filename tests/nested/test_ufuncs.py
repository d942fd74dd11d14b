"""Every ufunc of the op table works in nested code (its C++ is the main kernels'), against the
reference interpreter: per dtype, one map computing every op that accepts it (one kernel)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from nested.helpers import assert_same
from stax.nested.expr import BINARY, DTYPES, UNARY


def _accepting(names: frozenset[str], dtype: np.dtype) -> list[np.ufunc]:
    """The ufuncs NumPy has a loop for with operands of `dtype` (giving a dtype nested code
    supports)."""
    found = []
    for name in sorted(names):
        ufunc = getattr(np, name)
        try:
            loop = ufunc.resolve_dtypes((dtype,) * ufunc.nin + (None,))
        except TypeError:
            continue
        if any(d.name not in DTYPES for d in loop):  # float16 (np.sqrt of uint8)
            continue
        found.append(ufunc)
    return found


VALUES = {
    "float64": np.array([-0.0, 0.0, 1.5, -2.25, 0.3, np.nan, np.inf, -np.inf, 7.0, 1e-3]),
    "float32": np.array([-0.0, 0.5, 1.5, -2.25, 0.3, np.nan, np.inf, 3.0, -7.0, 2.0],
                        np.float32),
    "int64": np.array([0, 1, -1, 7, -8, 100, 3, -5, 2, 63]),
    "uint8": np.array([0, 1, 2, 7, 8, 100, 3, 255, 2, 6], np.uint8),
    "bool": np.array([True, False, True, True, False, False, True, False, True, False]),
}
SECOND = {  # the other operand of binary ops: no integer to a negative power
    "float64": np.array([0.0, -0.0, 2.0, 0.5, -3.0, 1.0, np.inf, 2.0, np.nan, -1e-3]),
    "float32": np.array([0.0, -0.0, 2.0, 0.5, -3.0, 1.0, np.inf, 2.0, np.nan, 4.0], np.float32),
    "int64": np.array([0, 3, 2, 0, 5, 7, 1, 2, 9, 1]),
    "uint8": np.array([0, 3, 2, 0, 5, 7, 1, 2, 9, 1], np.uint8),
    "bool": np.array([False, False, True, False, True, False, True, True, False, True]),
}


@pytest.mark.parametrize("dtype", list(VALUES))
def test_every_table_ufunc_matches_the_interpreter(dtype: str) -> None:
    unary = _accepting(UNARY, np.dtype(dtype))
    binary = _accepting(BINARY, np.dtype(dtype))
    assert len(unary) + len(binary) >= 20

    def every(a: Any, b: Any) -> Any:
        return sn.map(lambda x, y: tuple(f(x) for f in unary) + tuple(f(x, y) for f in binary),
                      a, b)

    a, b = VALUES[dtype], SECOND[dtype]
    with np.errstate(all="ignore"):  # flags are tested in test_errstate.py
        got = sn.jit(every)(a, b)
        want = sn.interpret(every, a, b)
    assert_same(got, want)
    names = [f.__name__ for f in (*unary, *binary)]
    for name, g, w in zip(names, got, want, strict=True):  # and the sign of each zero
        # (but fmax/fmin's choice between -0.0 and 0.0: NumPy's float64 scalars keep the
        # first, float32 scalars and its vector loops the second, as the kernels)
        if w.dtype.kind == "f" and name not in ("fmax", "fmin"):
            zeros = w == 0
            np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]))
