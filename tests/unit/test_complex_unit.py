"""complex64/complex128 in the op table and the C++ printer, without a compiler (E16)."""

from __future__ import annotations

import numpy as np
import pytest

from stax import ops
from stax.backends.cpu import cpp

COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))


def numpy_has_complex_loop(op: ops.Elementwise) -> bool:
    try:
        op.ufunc.resolve_dtypes((COMPLEX[1],) * op.nin + (None,))
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("op", ops.ELEMENTWISE, ids=lambda op: op.name)
def test_complex_spelling_exactly_where_numpy_has_a_loop(op: ops.Elementwise) -> None:
    """An op NumPy computes on complex numbers has a complex spelling; one NumPy refuses has
    none (and asking for it raises rather than falling back to the float spelling)."""
    assert (op.cpp.complex is not None) == numpy_has_complex_loop(op)
    if op.cpp.complex is None:
        with pytest.raises(NotImplementedError):
            op.cpp.template("c")
    else:
        assert op.cpp.template("c") == op.cpp.complex


def test_c_types_and_constants() -> None:
    assert cpp.ctype(COMPLEX[0]) == "stax_complex64"
    assert cpp.ctype(COMPLEX[1]) == "stax_complex128"
    assert cpp.const_str(1.5 - 2j, COMPLEX[0]) == "stax_complex64(1.5f, -2.0f)"
    assert cpp.const_str(complex(np.inf, np.nan), COMPLEX[1]) == (
        "stax_complex128(std::numeric_limits<double>::infinity(), "
        "std::numeric_limits<double>::quiet_NaN())")
    assert "struct stax_complex" in cpp.HEADER


def test_parts_are_not_ufuncs() -> None:
    assert [p.name for p in ops.PARTS] == ["real", "imag"]
    assert ops.part("real") is not None and ops.part("real").numpy is np.real
    assert ops.part("add") is None
