"""[LAYOUT] Outputs laid out as NumPy lays out its results (`stax.lower`, rule `k_order`):
elementwise results of Fortran-ordered or transposed inputs keep their order, so the result's
strides equal NumPy's; values always equal NumPy's (computed in the test). Covers float32,
float64, int32, 2-d and 3-d, mixed layouts (C wins), broadcast rows and columns, slices with
steps, axes of size 1, empty and 0-d arrays, NaN, generic (symbolic) programs, outputs
recycled across calls, the inference pool and a value that is an output and read again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.runtime import wrapper


def _fortran(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.asfortranarray(make_array(shape, dtype, seed=seed))


def _same(f: Any, fn: Any, *args: np.ndarray, **tol: float) -> None:
    got, want = f(*args), fn(*args)
    assert_matches(got, want, **tol)
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        assert np.asarray(g).strides == np.asarray(w).strides, (fn.__name__, args[0].shape)


def center(x: Any) -> Any:
    return x - x.mean(1, keepdims=True)


def normalize(x: Any) -> Any:
    return x / x.sum(1, keepdims=True)


def scale_where(x: Any) -> Any:
    return np.where(x > 0, x * 2, np.float32(-1))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [center, normalize, scale_where])
def test_fortran_inputs_give_fortran_results(fn: Any, dtype: str) -> None:
    f = stax.jit(fn)
    for shape in [(17, 43), (300, 260), (1, 9), (9, 1), (0, 5)]:
        x = _fortran(shape, dtype, seed=shape[0])
        _same(f, fn, x, rtol=2e-5 if dtype == "float32" else 1e-12)
        if x.size and min(shape) > 1:
            assert f(x).flags.f_contiguous and not f(x).flags.c_contiguous


def test_k_order_recorded_in_explain() -> None:
    x = _fortran((16, 24))
    text = str(stax.explain(center, x))
    assert "k_order" in text and "axes (1, 0) in memory" in text
    assert_matches(stax.jit(center)(x), center(x), rtol=2e-5)


def test_integer_nan_and_transposes() -> None:
    def int_ops(x: Any) -> Any:
        return x * 3 + (x >> 1)

    def t_add(x: Any, y: Any) -> Any:
        return np.exp(x.T) + y.T

    def perm3(x: Any) -> Any:
        return x.transpose(2, 0, 1) * 2

    xi = _fortran((13, 21), "int32")
    _same(stax.jit(int_ops), int_ops, xi)
    x, y = make_array((21, 13), "float32", seed=1), make_array((21, 13), "float32", seed=2)
    x[3, 4], y[5, 6] = np.nan, np.inf
    _same(stax.jit(t_add), t_add, x, y, rtol=1e-5)  # exp within 4 ulp, then a sum
    _same(stax.jit(perm3), perm3, make_array((3, 5, 7), "float64"))


def test_mixed_and_broadcast_operands() -> None:
    def add(x: Any, y: Any) -> Any:
        return x + y

    f = stax.jit(add)
    xf, xc = _fortran((11, 19)), make_array((11, 19), "float32", seed=3)
    _same(f, add, xf, xc)  # conflicting layouts: C order (NumPy)
    _same(f, add, xc, xf)
    _same(f, add, xf, make_array((19,), "float32"))  # a broadcast row: Fortran
    _same(f, add, make_array((11, 1), "float32"), make_array((1, 19), "float32"))  # C
    _same(f, add, _fortran((3, 1, 5)), np.float32(2) * np.ones((3, 1, 5), np.float32, "F"))


def test_slices_casts_and_views() -> None:
    def strided(x: Any) -> Any:
        return x[:, ::2] * 2, x[::-1].astype(np.float64)

    def view(x: Any) -> Any:
        return x.T

    _same(stax.jit(strided), strided, _fortran((10, 14)))
    _same(stax.jit(view), view, make_array((10, 14), "float32"))  # a dense copy like x.T
    _same(stax.jit(view), view, _fortran((10, 14)))


def test_output_read_again_and_zero_d() -> None:
    def both(x: Any) -> Any:
        y = np.exp(x) * 2
        return y, y.sum(0), (y * y).max()

    def scalar(x: Any) -> Any:
        return x * 2

    _same(stax.jit(both), both, _fortran((20, 30)), rtol=2e-5)
    _same(stax.jit(scalar), scalar, np.ones((), np.float32))


def test_generic_program_keeps_the_layout() -> None:
    def t_add(x: Any) -> Any:
        return x.T + 1

    f = stax.jit(t_add, dynamic=True)
    for shape in [(5, 7), (40, 3), (64, 130)]:
        _same(f, t_add, make_array(shape, "float32", seed=shape[1]))


def test_recycled_outputs_and_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs past a page are recycled once dropped (since CLIFF: outputs malloc would map
    afresh; here every output past a page): a kept result is never overwritten."""
    monkeypatch.setattr(wrapper, "RECYCLE_MMAP_BYTES", wrapper.RECYCLE_MIN_BYTES)
    for options in ({}, {"pool": True}):
        f = stax.jit(center, **options)
        x1, x2 = _fortran((256, 300), seed=1), _fortran((256, 300), seed=2)
        kept = f(x1)
        for _ in range(3):
            _same(f, center, x2, rtol=2e-5)
        assert_matches(kept, center(x1), rtol=2e-5)
        assert kept.flags.f_contiguous


def test_fortran_elementwise_runs_one_contiguous_loop() -> None:
    """The kernel of an F-ordered result of F-ordered operands runs its loops in the output's
    memory order (plan rule loop_order): merged into one contiguous loop."""
    def tanh2(x: Any) -> Any:
        return np.tanh(x) * 2 + 1

    f, x = stax.jit(tanh2), _fortran((40, 70))
    _same(f, tanh2, x, rtol=2e-5)  # (float32 tanh: AVX2's libmvec is ~9 ulp from NumPy's)
    (plan,) = f.compile(x).program.plans
    assert any(d.rule == "loop_order" for d in plan.decisions)
    assert len(plan.nodes[0].ranges) == 1
