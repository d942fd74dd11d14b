"""[HUNT, s9] Python ints that NEP 50 narrows to a smaller integer dtype (`uint8_image + k`,
`int8 * k`) take the warm path (`Jitted.fast`) with their bounds checked on each call; such
calls took the cold path every time before (~20 us instead of ~1 us: `benchmarks/corpus.py
--corpus wild7`, uint8_plus_python_int). Out-of-range values still raise NumPy's OverflowError,
also once warm, and in-range ones equal NumPy's results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stax


def _shift(x: Any, k: Any, m: Any) -> Any:
    return x + k, x * k, x - m


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint32"])
def test_narrowed_ints_are_checked_on_the_warm_path(dtype: str) -> None:
    info = np.iinfo(dtype)
    x = np.arange(6).astype(dtype)
    fn = stax.jit(_shift)
    values = (1, 0, int(info.max), int(info.min), int(info.max) + 1, int(info.min) - 1, 3)
    for k in values:
        for args in ((x, k, 2), (x, 2, k)):
            try:
                want = _shift(*args)
            except OverflowError:
                with pytest.raises(OverflowError, match="out of bounds"):
                    fn(*args)
                continue
            for g, w in zip(fn(*args), want, strict=True):
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g, w)
    assert fn.cache_info().compiles == 1
    assert len(fn.fast) == 1  # every in-range call after the first ran warm
