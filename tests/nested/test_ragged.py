"""sn.Ragged: the seed's segmented representation of [[1], [2, 3], [4, 5, 6]]."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches

import stax.nested as sn


def test_seed_representation() -> None:
    r = sn.Ragged.from_list([[1], [2, 3], [4, 5, 6]])
    assert_matches(r.values, np.array([1, 2, 3, 4, 5, 6]))
    assert_matches(r.flags, np.array([True, True, False, True, False, False]))
    assert_matches(r.lengths, np.array([1, 2, 3]))
    assert_matches(r.offsets, np.array([0, 1, 3]))
    assert_matches(r.segment_ids, np.array([0, 1, 1, 2, 2, 2]))
    assert_matches(r.inner_index, np.array([0, 0, 1, 0, 1, 2]))
    assert len(r) == 3
    assert_matches(r[1], np.array([2, 3]))
    assert_matches(r[-1], np.array([4, 5, 6]))
    assert r.to_list() == [[1], [2, 3], [4, 5, 6]]


def test_empty_rows_and_inner_dims() -> None:
    r = sn.Ragged(np.arange(12.0).reshape(6, 2), [0, 2, 0, 3, 1, 0])
    assert r.to_list() == [[], [[0, 1], [2, 3]], [], [[4, 5], [6, 7], [8, 9]], [[10, 11]], []]
    assert_matches(r.flags, np.array([True, False, True, False, False, True]))
    assert_matches(r.segment_ids, np.array([1, 1, 3, 3, 3, 4]))
    assert_matches(r.inner_index, np.array([0, 1, 0, 1, 2, 0]))
    assert r[0].shape == (0, 2)
    assert sn.Ragged.from_list([[[1, 2]], []]).values.shape == (1, 2)
    empty = sn.Ragged.from_list([])
    assert len(empty) == 0 and empty.to_list() == [] and empty.flags.size == 0
    assert sn.Ragged.from_list([[1, 2], [3]]) == sn.Ragged([1, 2, 3], [2, 1])
    assert sn.Ragged.from_list([[1, 2], [3]]) != sn.Ragged([1, 2, 3], [1, 2])


def test_bad_ragged() -> None:
    with pytest.raises(ValueError, match="sum to 3 but there are 2"):
        sn.Ragged([1, 2], [1, 2])
    with pytest.raises(ValueError, match=">= 0"):
        sn.Ragged([1, 2], [3, -1])
    with pytest.raises(TypeError, match="integers"):
        sn.Ragged([1, 2], [1.0, 1.0])
    with pytest.raises(IndexError, match="out of bounds"):
        sn.Ragged([1, 2], [1, 1])[2]
    with pytest.raises(ValueError, match="inner shapes"):
        sn.Ragged.from_list([[[1, 2]], [[1, 2, 3]]])


def test_ragged_is_immutable_and_owns_its_arrays() -> None:
    """Compiled programs trust a Ragged's row bounds: its arrays cannot be written through it,
    and it does not share them with (or freeze) the arrays it was built from."""
    values, lengths = np.arange(6.0), np.array([1, 2, 3])
    r = sn.Ragged(values, lengths)
    for a in (r.values, r.lengths, r.offsets, r.bounds, r[1]):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 99
    assert values.flags.writeable and lengths.flags.writeable  # the caller's arrays
    assert not np.may_share_memory(r.values, values)
    assert not np.may_share_memory(r.lengths, lengths)
    lengths[0], values[0] = 4, -1.0  # the caller changes its arrays: r does not see it
    assert r.to_list() == [[0.0], [1.0, 2.0], [3.0, 4.0, 5.0]]
    f = sn.jit(lambda r: sn.map(lambda row: sn.reduce(np.add, 0.0, row), r))
    assert_matches(f(r), np.array([0.0, 3.0, 12.0]))
    frozen = np.arange(3)
    frozen.flags.writeable = False  # a read-only input is fine too, and stays as it was
    assert sn.Ragged(frozen, [3]).to_list() == [[0, 1, 2]] and not frozen.flags.writeable
    iotas = sn.jit(lambda ns: sn.map(sn.iota, ns))(np.array([2, 0, 3]))
    gathered = sn.seggather(r, sn.Ragged([0, -1, 2], [1, 1, 1]))
    assert iotas.to_list() == [[0, 1], [], [0, 1, 2]]
    assert gathered.to_list() == [[0.0], [2.0], [5.0]]
    for out in (iotas, gathered):
        with pytest.raises(ValueError, match="read-only"):
            out.lengths[0] = 99
