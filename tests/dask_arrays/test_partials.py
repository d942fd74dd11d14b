"""The partials of reductions across chunks and their combination (`stax.dask.partials`),
without a compiler or a cluster: block partials computed by NumPy on random splits of an
array, merged by the combine/aggregate steps in random tree shapes, against NumPy on the
whole array."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches
from hypothesis import given, settings
from hypothesis import strategies as st

from stax.dask.partials import Combine, Partial, block_partial

KINDS = ("sum", "max", "min", "moment", "argmax", "argmin")


def _whole(kind: str, x: np.ndarray) -> np.ndarray:
    """NumPy's result over axis 0 (moment: the sum of squared deviations, var * n)."""
    if kind == "moment":
        return (x.var(0) * x.shape[0]).astype(x.dtype)
    return getattr(np, kind)(x, axis=0, keepdims=True).reshape(1, -1)


@st.composite
def split_arrays(draw: st.DrawFn) -> tuple[np.ndarray, list[int], list[int]]:
    """A small float or int array with ties, NaN and infinities, split into row blocks
    (some empty), and the sizes of the groups a tree's first level merges."""
    rows = draw(st.integers(1, 24))
    dtype = draw(st.sampled_from(["float64", "float32", "int32"]))
    pool = [0.0, 1.0, -1.0, 2.5] if dtype == "int32" else \
        [0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf]
    x = np.array(draw(st.lists(st.sampled_from(pool), min_size=rows * 3, max_size=rows * 3)),
                 dtype=dtype).reshape(rows, 3)
    cuts = sorted(draw(st.lists(st.integers(0, rows), max_size=5)))
    groups = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    return x, cuts, groups


@settings(max_examples=150, deadline=None)
@given(split_arrays(), st.sampled_from(KINDS))
def test_combined_partials_match_numpy(case: tuple[np.ndarray, list[int], list[int]],
                                       kind: str) -> None:
    x, cuts, groups = case
    if kind == "moment":  # of floats (a trace casts integers first), finite (else NaN)
        x = np.nan_to_num(x.astype(np.float64) if x.dtype.kind != "f" else x,
                          nan=0.5, posinf=3.0, neginf=-3.0)
    want = _whole(kind, x)
    part = Partial(kind, (0,), want.dtype)
    bounds = [0, *cuts, x.shape[0]]
    blocks = [tuple(block_partial(part, x[a:b], np.array([a, 0]), x.shape))
              for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    level, i = [], 0  # a first level of combines over consecutive groups, then the aggregate
    for g in groups:
        if i < len(blocks):
            level.append(Combine((part,), final=False)(blocks[i:i + g]))
            i += g
    if i < len(blocks):
        level.append(Combine((part,), final=False)(blocks[i:]))
    (got,) = Combine((part,), final=True)([level])
    if kind == "moment":
        assert_matches(got.reshape(-1), want, rtol=1e-5 if x.dtype == np.float32 else 1e-9,
                       atol=1e-9)
    else:
        assert_matches(got, want)


def test_argmax_rules_across_blocks() -> None:
    """NaN wins (the first NaN), else the largest value, ties to the first occurrence; an
    empty block never wins, even against -inf."""
    part = Partial("argmax", (0,), np.dtype(np.int64))
    cases = {
        "tie across blocks": ([[1.0, 5.0]], [[5.0, 0.0]], 1),
        "nan in the later block": ([[9.0, 1.0]], [[np.nan, np.nan]], 2),
        "-inf only, empty first": ([[]], [[-np.inf, -np.inf]], 0),
    }
    for name, (first, second, want) in cases.items():
        a = np.array(first, dtype=np.float64).reshape(-1, 1)
        b = np.array(second, dtype=np.float64).reshape(-1, 1)
        pa = tuple(block_partial(part, a, np.array([0, 0]), (a.size + b.size, 1)))
        pb = tuple(block_partial(part, b, np.array([a.shape[0], 0]), (a.size + b.size, 1)))
        for order in ([pa, pb], [pb, pa]):  # the merge does not depend on the order
            (got,) = Combine((part,), final=True)(order)
            assert int(got[0, 0]) == want, name
            assert want == int(np.argmax(np.concatenate([a, b])[:, 0]))


def test_flat_argmin_of_blocks_of_a_2d_grid() -> None:
    x = np.array([[3, 1, 7], [1, 0, 0], [5, 0, 9]], dtype=np.int16)
    part = Partial("argmin", (0, 1), np.dtype(np.int64), flat=True)
    blocks = [tuple(block_partial(part, x[r:r + 2, c:c + 2], np.array([r, c]), x.shape))
              for r in (0, 2) for c in (0, 2)]
    (got,) = Combine((part,), final=True)([blocks[:2], blocks[2:]])
    assert int(got.reshape(())) == int(np.argmin(x)) == 4


@pytest.mark.parametrize("kind", ["sum", "any"])
def test_several_partials_in_one_tuple(kind: str) -> None:
    x = np.arange(12.0).reshape(6, 2) - 4
    parts = (Partial(kind, (0,), np.dtype(bool if kind == "any" else x.dtype)),
             Partial("moment", (0,), x.dtype), Partial("argmin", (0,), np.dtype(np.int64)))
    blocks = [tuple(a for p in parts for a in block_partial(p, x[r:r + 2], np.array([r, 0]),
                                                             x.shape)) for r in (0, 2, 4)]
    got = Combine(parts, final=True)(blocks)
    want = (getattr(np, kind)(x, 0, keepdims=True), (x.var(0) * 6).reshape(1, 2),
            np.argmin(x, 0, keepdims=True))
    assert_matches(got, want)
