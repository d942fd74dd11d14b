"""Session 17, lead: warm calls of functions whose one result is an argument or one NumPy view
of it (issue 9 item 4: `stax.api._result_maker`, no write_back steps): each call returns a view of
*its own* argument, as NumPy does, for every layout and for views taken by one op or by several;
assignment through a 0-d boolean index (`x[x > 0.5] = ...` of a 0-d x raised IndexError)."""

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


def _masked_update(x):
    m = x > 0.5
    x[m] = x[m] ** 1.5
    return x


def _flagged_fill(x, y):
    b = y.sum() > 0
    x[b] = 7
    return x * 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_assignment_through_a_zero_d_boolean_index(dtype) -> None:
    update, fill = stax.jit(_masked_update), stax.jit(_flagged_fill)
    for value in (0.7, 0.2, 3.0, -1.0):  # selected and not, over warm calls
        x = np.array(value).astype(dtype)
        expected = _masked_update(x.copy())
        got = update(x)
        assert got.dtype == expected.dtype and got.shape == expected.shape == ()
        np.testing.assert_allclose(got, expected, rtol=1e-6)  # (pow: an ulp from NumPy's)
        np.testing.assert_allclose(x, expected, rtol=1e-6)  # the argument mutated as NumPy
    for sign in (1, -1, 0):
        for x in (np.arange(6).astype(dtype).reshape(2, 3), np.arange(6).astype(dtype)[::2]):
            y = np.full(4, sign, dtype)
            mine = x.copy()
            expected = _flagged_fill(x.copy(), y)
            got = fill(mine, y)
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(mine, np.where(sign > 0, 7, x).astype(dtype))
