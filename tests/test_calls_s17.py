"""Warm calls of functions whose one result is an argument or one NumPy view of it (issue 9
item 4: `stax.api._one_view`, no write_back steps): each call returns a view of *its own*
argument, as NumPy does, for every layout and for views taken by one op or by several."""

from __future__ import annotations

import numpy as np
import pytest

import stax

VIEWS = [lambda x: x, lambda x: x[::2], lambda x: x.T, lambda x: x[1:3],
         lambda x: x.reshape(-1), lambda x: x[..., None], lambda x: x.T[::-1]]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("layout", ["c", "transposed", "strided"])
def test_each_warm_call_views_its_own_argument(view, layout) -> None:
    f = stax.jit(view)

    def make(seed: int) -> np.ndarray:
        base = np.random.default_rng(seed).standard_normal((6, 8))
        return {"c": base, "transposed": base.T, "strided": base[::2, ::-1]}[layout]

    for seed in range(4):  # cold, then warm calls with new arrays of one signature
        x = make(seed)
        expected = view(x.copy())
        try:
            got = f(x)
        except Exception as e:  # a reshape NumPy cannot view: NumPy's own error or copy
            with pytest.raises(type(e)):
                view(x)
            continue
        assert type(got) is type(expected) and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert np.shares_memory(got, x) == np.shares_memory(view(x), x)
        if np.shares_memory(got, x):
            want = view(x)  # (the stride of an axis of extent 1 is never used)
            assert [s for s, n in zip(got.strides, got.shape, strict=True) if n > 1] == \
                [s for s, n in zip(want.strides, want.shape, strict=True) if n > 1]
            x[...] = seed + 7.0  # writes to the argument show through the result
            assert np.all(got == seed + 7.0)


def test_zero_d_view_result_is_a_numpy_scalar() -> None:
    f = stax.jit(lambda x: x[()])
    for value in (1.5, -2.0):
        x = np.array(value)
        got = f(x)
        assert type(got) is type(x[()]) and got == value
