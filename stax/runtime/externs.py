"""NumPy routines run by a compiled program's wrapper as extern calls (like matmul's BLAS call).

The frontend registers each routine under a key that spells it out (`np.sort(axis=1)`); a
LoopProgram's extern node names the key; the wrapper calls `EXTERNS[key](*inputs, out=buffer)`.
The key is deterministic, so compiled segments and the structural cache see equal programs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

EXTERNS: dict[str, Callable[..., Any]] = {}
# [DYN16] Keys of routines that return their result (its length depends on the data): the
# wrapper binds the data-dependent size from it instead of allocating the node's buffer.
SIZED: set[str] = set()


def register(key: str, routine: Callable[..., Any], output: int | None = None) -> str:
    """`routine(*arrays)` (its `output`-th result when it returns several) is written into the
    node's buffer; NumPy's own errors and warnings come through unchanged."""

    def call(*arrays: np.ndarray, out: np.ndarray) -> None:
        result = routine(*arrays)
        np.copyto(out, result if output is None else result[output], casting="unsafe")

    EXTERNS.setdefault(key, call)
    return key


def register_into(key: str, routine: Callable[..., None]) -> str:
    """[H13] The official `out=` hook: `routine(*arrays, out=buffer)` writes the result into
    the node's buffer itself (as NumPy's `out=` does: no result array, no copy). The key is
    the caller's, spelled out as for `register`; a key registered once keeps its routine."""
    EXTERNS.setdefault(key, routine)
    return key


def register_sized(key: str, routine: Callable[..., Any], dtype: np.dtype) -> str:
    """[DYN16] `routine(*arrays)` returns the node's array itself, whose length the wrapper
    reads (`x[mask]`, `np.unique`): C-contiguous, of the traced dtype (spelled in `key`)."""
    def call(*arrays: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(routine(*arrays), dtype=dtype)

    EXTERNS.setdefault(key, call)
    SIZED.add(key)
    return key
