"""`Ragged`: an irregular array in the segmented representation (only the outer dimension is
segmented; rows may have regular inner dimensions)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np


class Ragged:
    """k rows of lengths `lengths` stored back to back in `values` (shape (sum(lengths),
    *inner)). The seed's auxiliary vectors are computed on demand by compiled kernels:
    `offsets` (start of each row), `flags` (true where a non-empty row starts), `segment_ids`
    (the row of each element) and `inner_index` (the position of each element in its row).

    A Ragged is immutable: it holds its own copies of the arrays it is built from, and gives
    them out read-only (`r.lengths[0] = 1` is NumPy's ValueError), since compiled programs
    trust the row bounds computed here."""

    __slots__ = ("_bounds", "lengths", "values")

    def __init__(self, values: Any, lengths: Any) -> None:
        values = np.array(values, order="C")  # copies: the caller's array stays its own
        lengths = np.asarray(lengths)
        if values.ndim == 0:
            raise ValueError("Ragged: values must have at least one dimension")
        if lengths.ndim != 1:
            raise ValueError(f"Ragged: lengths must be 1-D, got shape {lengths.shape}")
        if lengths.size and lengths.dtype.kind not in "iu":
            raise TypeError(f"Ragged: lengths must be integers, got {lengths.dtype}")
        lengths = np.array(lengths, dtype=np.int64, order="C")
        if lengths.size and lengths.min() < 0:
            raise ValueError(f"Ragged: row lengths must be >= 0, got {int(lengths.min())}")
        bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        if bounds[-1] != len(values):
            raise ValueError(f"Ragged: the row lengths sum to {int(bounds[-1])} but there are "
                             f"{len(values)} values")
        self._hold(values, lengths, bounds)

    def _hold(self, values: np.ndarray, lengths: np.ndarray, bounds: np.ndarray) -> None:
        self.values, self.lengths, self._bounds = _frozen(values), _frozen(lengths), _frozen(bounds)

    @classmethod
    def trusted(cls, values: np.ndarray, lengths: np.ndarray, bounds: np.ndarray) -> Ragged:
        """A Ragged from parts known to be consistent (int64 lengths >= 0 and their bounds,
        summing to len(values)) that no one else writes to: what compiled programs and the
        segmented primitives return, without re-checking or copying."""
        out = cls.__new__(cls)
        out._hold(values, lengths, bounds)
        return out

    @staticmethod
    def from_list(rows: Sequence[Any], dtype: Any = None) -> Ragged:
        """Rows given as sequences (or arrays) of equal inner shape."""
        arrays = [np.asarray(r, dtype=dtype) for r in rows]
        if any(a.ndim == 0 for a in arrays):
            raise ValueError("Ragged.from_list: every row must be a sequence")
        inner = {a.shape[1:] for a in arrays if a.shape[0]}
        if len(inner) > 1:
            raise ValueError(f"Ragged.from_list: rows have different inner shapes {inner}")
        shape = inner.pop() if inner else ()
        if dtype is None:  # empty rows (float64 by default) do not decide the dtype
            filled = [a for a in arrays if a.size]
            dtype = np.result_type(*filled) if filled else np.float64
        values = (np.concatenate([a.reshape(-1, *shape) for a in arrays]).astype(dtype)
                  if arrays else np.empty((0, *shape), dtype=dtype))
        return Ragged(values, [a.shape[0] for a in arrays])

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def bounds(self) -> np.ndarray:
        """The k+1 row boundaries (`offsets` followed by the total)."""
        return self._bounds

    @property
    def offsets(self) -> np.ndarray:
        """Start of each row in `values` (the exclusive prefix sum of `lengths`)."""
        return self._bounds[:-1]

    @property
    def flags(self) -> np.ndarray:
        from stax.nested.primitives import lengths_to_flags
        return lengths_to_flags(self.lengths)

    @property
    def segment_ids(self) -> np.ndarray:
        from stax.nested.primitives import repiota
        return repiota(self.lengths)

    @property
    def inner_index(self) -> np.ndarray:
        from stax.nested.primitives import segiota
        return segiota(self.lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        k = len(self.lengths)
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"Ragged indices must be integers, got {type(i).__name__}")
        if not -k <= i < k:
            raise IndexError(f"row {i} is out of bounds for a Ragged with {k} rows")
        i = int(i) % k
        return self.values[self._bounds[i]:self._bounds[i + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def to_list(self) -> list[Any]:
        return [row.tolist() for row in self]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ragged) and self.dtype == other.dtype
                and np.array_equal(self.lengths, other.lengths)
                and np.array_equal(self.values, other.values, equal_nan=self.dtype.kind == "f"))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Ragged({self.to_list()}, dtype={self.dtype})"


def _frozen(a: np.ndarray) -> np.ndarray:
    """`a` itself when read-only, else a read-only view of it (the array `a` stays writeable
    to whoever holds it)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view
