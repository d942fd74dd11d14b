"""Augmented assignment through indexing, constant-filled arrays, batched matmul."""

from __future__ import annotations

import numpy as np
import pytest

import stax


def augmented(x):
    y = x.copy()
    y[0] += 1
    y[:, 1] *= 3
    y[1:, ::2] -= y[:-1, ::2]
    return y


def test_augmented_assignment_through_an_index() -> None:
    x = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(stax.jit(augmented)(x), augmented(x))


def test_augmented_assignment_into_an_argument_reaches_the_caller() -> None:
    def f(x):
        x[1:] -= 5
        return x.sum()

    a, b = np.arange(6.0), np.arange(6.0)
    assert stax.jit(f)(a) == f(b)
    np.testing.assert_array_equal(a, b)


def through_views(x):
    y = x.copy()
    y[0][1] = 50  # chained indexing writes into y
    y.T[2] = -1  # through a transpose
    v = y[1:, ::2]
    v += 100  # an in-place operator on a view changes y
    w = y.reshape(-1)
    w[3] = 7  # through a reshape; v now shows it too
    u = y[2]
    y[2, 0] = -5  # a view taken earlier shows later assignments to its base
    return y, v, w, u


def test_assignment_through_views_reaches_the_base() -> None:
    x = np.arange(20.0).reshape(4, 5)
    for got, want in zip(stax.jit(through_views)(x), through_views(x.copy()), strict=True):
        np.testing.assert_array_equal(got, want)


def test_assignment_through_views_of_an_argument_reaches_the_caller() -> None:
    def f(x):
        x[0][0] = 9
        x.T[1] += 1
        return x.sum()

    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)
    assert stax.jit(f)(a) == f(b)
    np.testing.assert_array_equal(a, b)


def test_assignment_into_a_broadcast_view_is_read_only() -> None:
    def f(x):
        v = np.broadcast_to(x, (3, *x.shape))
        v[0] = 1
        return v

    with pytest.raises(ValueError, match="read-only"):
        stax.jit(f)(np.ones((2, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_constant_filled_like(dtype) -> None:
    def f(a):
        return (np.zeros_like(a), np.ones_like(a, dtype=np.float64), np.full_like(a, 7),
                np.zeros_like(a, shape=(2, 3)))

    a = np.arange(12).reshape(3, 4).astype(dtype)
    for got, want in zip(stax.jit(f)(a), f(a), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_batched_matmul_broadcasts_like_numpy() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))

    def f(a, b):
        return a @ b, np.matmul(a, a.transpose(0, 2, 1)) + 1.0

    for got, want in zip(stax.jit(f)(a, b), f(a, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="matmul"):
        stax.jit(lambda a: a @ a)(np.ones((2, 3)))


def test_scalar_arguments_used_as_python_values_specialize_the_trace() -> None:
    traces = []

    def f(x, axis, n, flag, scale):
        traces.append(1)
        y = x.sum(axis=axis) * scale  # `scale` stays a runtime value
        z = x.reshape(n, -1)[: n // 2]  # `n` and `axis` are needed as Python ints
        return (y if flag else -y), z

    jitted = stax.jit(f)
    x = np.arange(24.0).reshape(4, 6)
    for args in [(0, 2, True, 1.5), (0, 2, True, 2.5), (1, 3, False, 1.5), (0, 2, True, 3.0)]:
        for got, want in zip(jitted(x, *args), f(x, *args), strict=True):
            np.testing.assert_array_equal(got, want)
    assert len(traces) == 4 + 2  # four reference runs, two traces
    assert jitted.static == {1, 2, 3}


def test_array_values_cannot_steer_python_control_flow() -> None:
    with pytest.raises(TypeError, match="np.where"):
        stax.jit(lambda x: x if x.sum() > 0 else -x, strict=True)(np.ones(3))
