"""Views, joins, scans, gathers, matmul, copies and mutation inside jitted functions."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax


def check(fn: Callable[..., Any], *args: Any, rtol: float | None = None, **options: Any) -> None:
    """stax.jit(fn) (fused and unfused) gives NumPy's result on copies of `args`."""
    want = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    for opts in ({**options}, {**options, "fuse": False}):
        got = stax.jit(fn, **opts)(*(a.copy() if isinstance(a, np.ndarray) else a
                                     for a in args))
        assert_matches(got, want, rtol=rtol)


X3 = make_array((4, 5, 6), "float64", seed=1)
X2 = make_array((6, 8), "float32", seed=2)
I2 = make_array((6, 8), "int64", seed=3)

VIEWS: dict[str, Callable[[Any], Any]] = {
    "T": lambda x: x.T + 0,
    "transpose_axes": lambda x: np.transpose(x, (1, 2, 0)) * 2,
    "transpose_method": lambda x: x.transpose(2, 0, 1) - 1,
    "swapaxes": lambda x: np.swapaxes(x, 0, 2) + x.swapaxes(0, 2),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1) * 3,
    "moveaxis_multi": lambda x: np.moveaxis(x, [0, 1], [-1, 0]) + 1,
    "reshape": lambda x: x.reshape(20, 6) + 1,
    "reshape_neg1": lambda x: np.reshape(x, (-1, 3)) * 2,
    "reshape_T": lambda x: x.T.reshape(6, 20) + 0,
    "reshape_sliced": lambda x: x[:, 1:4, ::2].reshape(-1) * 1,
    "reshape_of_reversed": lambda x: x[::-1, :, ::-1].reshape(4, 30) + 0,
    "ravel": lambda x: x.ravel() + 0,
    "ravel_T": lambda x: np.ravel(x.transpose(1, 0, 2)) + 0,
    "flatten": lambda x: x.flatten(),
    "slice_steps": lambda x: x[1::2, ::-1, 4:1:-2] + 0,
    "slice_neg": lambda x: x[::-1, -2:, -1::-3] * 1,
    "int_index": lambda x: x[2, :, -1] + x[-1, 0, 0],
    "none_ellipsis": lambda x: x[None, ..., None, 2] + 0,
    "ellipsis_mid": lambda x: x[1, ..., 3] + x[..., 0, None].sum(),
    "broadcast_to": lambda x: np.broadcast_to(x[:, :1, :], (3, 4, 5, 6)) + 0,
    "expand_dims": lambda x: np.expand_dims(x, 1) + np.expand_dims(x, (0, -1)).sum(),
    "squeeze": lambda x: np.squeeze(x[:, :1, None, :]) + x[:1].squeeze(axis=0)[0],
    "mT": lambda x: x.mT + 0,
    "empty_slice": lambda x: x[2:2] + 1,
    "chain": lambda x: x.T[::2].reshape(3, 20)[:, ::-1].T + 0,
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views(name: str) -> None:
    check(VIEWS[name], X3)


def test_views_return_bare_view() -> None:
    # returning a view of the argument (no arithmetic) must give the same values
    check(lambda x: (x.T, x[::2], x.reshape(-1), x[None]), X2)


def test_view_of_noncontiguous_argument() -> None:
    check(lambda x: (x.T.reshape(-1), x[:, ::-1] + 1, x.ravel()), X2[::-1, ::2])


JOINS: dict[str, Callable[..., Any]] = {
    "concat0": lambda a, b: np.concatenate([a, b]),
    "concat1": lambda a, b: np.concatenate((a, b, a), axis=1),
    "concat_none": lambda a, b: np.concatenate([a, b.T], axis=None),
    "concat_mixed": lambda a, b: np.concatenate([a, b.astype(np.int32)], axis=-1),
    "stack0": lambda a, b: np.stack([a, b]),
    "stack_last": lambda a, b: np.stack([a, b, a * 2], axis=-1),
    "stack1": lambda a, b: np.stack((a, b), axis=1) + 1,
}


@pytest.mark.parametrize("name", list(JOINS))
def test_joins(name: str) -> None:
    a = make_array((5, 5), "float32", seed=4)
    b = make_array((5, 5), "float32", seed=5)
    check(JOINS[name], a, b)


SCANS: dict[str, Callable[[Any], Any]] = {
    "cumsum0": lambda x: np.cumsum(x, axis=0),
    "cumsum1": lambda x: x.cumsum(axis=1),
    "cumsum_none": lambda x: np.cumsum(x),
    "cumprod1": lambda x: np.cumprod(x, axis=1),
    "cumprod_none": lambda x: x.cumprod(),
    "cumsum_T": lambda x: np.cumsum(x.T, axis=-1),
    "cumsum_expr": lambda x: np.cumsum(x * 2 + 1, axis=1) / (1 + x.cumsum(axis=0) ** 2),
}


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("name", list(SCANS))
def test_scans(name: str, dtype: str) -> None:
    x = make_array((5, 7), dtype, seed=6, low=-2, high=2)
    if dtype in ("float32", "float64"):
        x = make_array((5, 7), dtype, seed=6, low=0.5, high=1.5)
    fn = SCANS[name]
    with np.errstate(all="ignore"):
        want = fn(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = stax.jit(fn)(x)
    assert_matches(got, want, rtol=1e-5 if dtype == "float32" else None)


def test_large_cumsum_rows() -> None:
    x = make_array((3, 10000), "float64", seed=7)
    check(lambda x: np.cumsum(x, axis=1), x, rtol=1e-10)


def test_take_along_axis() -> None:
    x = make_array((5, 7), "float64", seed=8)
    idx = np.argsort(x, axis=1)
    check(lambda x, i: np.take_along_axis(x, i, axis=1), x, idx)
    check(lambda x, i: np.take_along_axis(x, i, axis=0), x, np.argsort(x, axis=0)[:3])
    check(lambda x, i: np.take_along_axis(x, i, axis=1) * 2, x, idx[:, :1].astype(np.int32))
    neg = -1 - idx  # negative indices are valid
    check(lambda x, i: np.take_along_axis(x, i, axis=1), x, neg)


def test_take_along_axis_of_argmax() -> None:
    def fn(x: Any) -> Any:
        i = np.argmax(x, axis=1)[:, None]
        return np.take_along_axis(x, i, axis=1)

    check(fn, make_array((6, 9), "float32", seed=9))


GATHERS: dict[str, Callable[..., Any]] = {
    "x[i]": lambda x, i: x[i],
    "x[:, i]": lambda x, i: x[:, i] + 0,
    "x[i, 2]": lambda x, i: x[i, 2],
    "take0": lambda x, i: np.take(x, i, axis=0),
    "take1": lambda x, i: np.take(x, i, axis=1),
    "take_none": lambda x, i: np.take(x, i),
    "take_method": lambda x, i: x.take(i, axis=-1),
}


@pytest.mark.parametrize("name", list(GATHERS))
def test_gathers(name: str) -> None:
    x = make_array((6, 8), "int32", seed=10)
    i = np.array([[0, 5], [-1, 3], [2, 2]], dtype=np.int64)
    check(GATHERS[name], x, i)


def test_gather_with_list_and_constant_index() -> None:
    x = make_array((6, 8), "float64", seed=11)
    check(lambda x: x[[0, 2, -1]] + x[np.array([1, 1, 0])], x)


MATMULS: dict[str, tuple[Callable[..., Any], tuple[int, ...], tuple[int, ...]]] = {
    "matmul": (lambda a, b: np.matmul(a, b), (5, 7), (7, 3)),
    "@": (lambda a, b: a @ b, (5, 7), (7, 3)),
    "dot": (lambda a, b: np.dot(a, b), (5, 7), (7, 3)),
    "dot_method": (lambda a, b: a.dot(b), (5, 7), (7, 3)),
    "matvec": (lambda a, b: a @ b, (5, 7), (7,)),
    "vecmat": (lambda a, b: a @ b, (7,), (7, 3)),
    "vecvec": (lambda a, b: a @ b, (7,), (7,)),
    "@T": (lambda a, b: a.T @ b.T, (7, 5), (3, 7)),
    "@expr": (lambda a, b: np.exp(a) @ (b * 2) + 1, (5, 7), (7, 3)),
    "@sliced": (lambda a, b: a[::2] @ b[:, ::-1], (5, 7), (7, 3)),
}


MATMUL_CASES = [(n, d) for n in MATMULS for d in ("float32", "float64")] + [
    (n, "int64") for n in ("matmul", "vecvec", "@T")]


@pytest.mark.parametrize(("name", "dtype"), MATMUL_CASES)
def test_matmul(name: str, dtype: str) -> None:
    fn, sa, sb = MATMULS[name]
    a, b = make_array(sa, dtype, seed=12), make_array(sb, dtype, seed=13)
    check(fn, a, b, rtol=1e-4 if dtype == "float32" else 1e-12)


def test_matmul_mixed_dtypes() -> None:
    a, b = make_array((4, 3), "float32", seed=14), make_array((3, 2), "int32", seed=15)
    check(lambda a, b: a @ b, a, b)


def test_copy() -> None:
    check(lambda x: x.copy(), X2)
    check(lambda x: np.copy(x) * 2, X2)
    check(lambda x: x.T.copy(), X2)


def test_copy_then_mutate_leaves_original() -> None:
    def fn(x: Any) -> Any:
        y = x.copy()
        y[0] = 100.0
        return x + 0, y

    check(fn, X2)


SETITEMS: dict[str, Callable[[Any], Any]] = {
    "item": lambda x: _set(x, (0, 1), 5.0),
    "row": lambda x: _set(x, 2, -1.0),
    "slice": lambda x: _set(x, (slice(1, 4), slice(None, None, 2)), 7.0),
    "neg_step": lambda x: _set(x, (slice(None), slice(None, None, -3)), 0.5),
    "array_value": lambda x: _set(x, slice(0, 2), np.arange(8, dtype=np.float32)),
    "broadcast_value": lambda x: _set(x, (slice(None), slice(0, 1)), 3.0),
    "traced_value": lambda x: _set(x, (slice(None, 3)), x[3:] * 2),
    "ellipsis": lambda x: _set(x, (Ellipsis, 0), 9.0),
    "twice": lambda x: _set(_set(x, 0, 1.0), (slice(None), 0), 2.0),
}


def _set(x: Any, index: Any, value: Any) -> Any:
    x[index] = value
    return x


@pytest.mark.parametrize("name", list(SETITEMS))
def test_setitem_on_copy(name: str) -> None:
    def fn(x: Any) -> Any:
        y = x.copy()
        y = SETITEMS[name](y)
        return y * 1

    check(fn, X2)


def test_setitem_on_intermediate() -> None:
    def fn(x: Any) -> Any:
        y = x * 2
        y[1:3] = 0
        y[:, -1] = y[:, 0]
        return y.sum(axis=0), y

    check(fn, X2)


def test_setitem_into_argument_mutates_caller() -> None:
    def fn(x: Any) -> Any:
        x[0, :] = 42.0
        x[:, 1] = x[:, 2] * 2
        return x.sum()

    a_np, a_st = X2.copy(), X2.copy()
    want = fn(a_np)
    got = stax.jit(fn)(a_st)
    assert_matches(got, want, rtol=1e-5)
    assert_matches(a_st, a_np)


def test_setitem_into_argument_no_return() -> None:
    def fn(x: Any, y: Any) -> None:
        x[1:3] = y

    a_np, a_st = X2.copy(), X2.copy()
    y = make_array((8,), "float32", seed=16)
    fn(a_np, y)
    res = stax.jit(fn)(a_st, y)
    assert res is None
    assert_matches(a_st, a_np)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_inplace_operators_mutate_caller(dtype: str) -> None:
    def fn(x: Any, y: Any) -> Any:
        x += 1
        x *= y
        return x - 1

    a_np, a_st = make_array((5, 6), dtype, seed=17), make_array((5, 6), dtype, seed=17)
    y = make_array((6,), dtype, seed=18)
    want = fn(a_np, y)
    got = stax.jit(fn)(a_st, y)
    assert_matches(got, want)
    assert_matches(a_st, a_np)


def test_inplace_on_local_does_not_touch_argument() -> None:
    def fn(x: Any) -> Any:
        y = x * 1
        y -= 3
        y /= 2
        return y

    a = X2.copy()
    check(fn, a)
    stax.jit(fn)(a)
    assert_matches(a, X2)


def test_inplace_true_divide_on_int_argument_raises() -> None:
    def fn(x: Any) -> Any:
        x /= 2
        return x

    with pytest.raises(TypeError):
        fn(I2.copy())
    with pytest.raises(TypeError):
        stax.jit(fn)(I2.copy())


def test_ufunc_out_argument() -> None:
    def fn(x: Any) -> Any:
        y = x * 1
        np.exp(x, out=y)
        np.add(y, 1, out=y)
        return y

    check(fn, X2, rtol=1e-6)


def test_returned_structures() -> None:
    def fn(x: Any) -> Any:
        return {"a": x + 1, "b": [x.sum(), (x.T, x.max(axis=0))]}

    want = fn(X2)
    got = stax.jit(fn)(X2)
    assert isinstance(got, dict) and isinstance(got["b"], list) and isinstance(got["b"][1], tuple)
    assert_matches(got, want)


def test_returned_argument_is_not_aliased() -> None:
    x = X2.copy()
    y = stax.jit(lambda x: x)(x)
    assert_matches(y, X2)


def test_repeated_signature_reuses_compilation() -> None:
    f = stax.jit(lambda x: x * 2)
    f(X2)
    comp = f.compile(X2)
    f(X2 + 1)
    assert f.compile(X2 + 1) is comp
    assert_matches(f(X2 + 1), (X2 + 1) * 2)
