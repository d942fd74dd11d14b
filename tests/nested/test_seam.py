"""The segmented kernels sit behind the Backend seam (issue 16): stax.nested describes them
(`stax.nested.spec`), the backend prints, builds and runs them; and the bounds check of a
gather (one unsigned comparison) at the edges of every index dtype."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from nested.helpers import check
from stax import backends
from stax.backends.base import Backend
from stax.backends.cpu import CpuBackend
from stax.nested import kernels, spec

X = np.arange(5.0)


def _gather(c: Any, x: np.ndarray) -> Any:
    return sn.map(lambda j: x[j] * 2.0, c)


def _gather_sum(c: sn.Ragged, x: np.ndarray) -> np.ndarray:
    return sn.map(lambda row: sn.reduce(np.add, 0.0, sn.map(lambda j: x[j], row)), c)


def test_nested_package_emits_no_cpp() -> None:
    package = pathlib.Path(sn.__file__).parent
    for path in package.glob("*.py"):
        text = path.read_text()
        for marker in ("#pragma", 'extern "C"', "#include", "int64_t"):
            assert marker not in text, f"{path.name} holds C++ ({marker})"


def test_kernels_are_built_by_the_named_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type] = []

    class Counting(CpuBackend):
        name = "counting"

        def segmented_kernel(self, kernel: object) -> object:
            seen.append(type(kernel))
            return super().segmented_kernel(kernel)

    monkeypatch.setitem(backends.FACTORIES, "counting", Counting)
    monkeypatch.setattr(kernels, "BACKEND", "counting")
    cols = sn.Ragged(np.array([0, 4, -1, 2]), np.array([1, 0, 3]))
    check(_gather_sum, cols, X)
    assert seen and all(t in (spec.SegReduceKernel, spec.ChainKernel) for t in seen), seen


def test_a_backend_without_segmented_kernels_says_so() -> None:
    class Bare(Backend):
        name = "bare"
        fusion_rules = plan = emit = build = None  # type: ignore[assignment]

    with pytest.raises(NotImplementedError, match="'bare' has no segmented kernels"):
        Bare().segmented_kernel(spec.MapKernel(None, (), False))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "uint64"])
def test_gather_bounds_at_the_edges_of_the_index_dtype(dtype: str) -> None:
    info = np.iinfo(dtype)
    good = [v for v in (0, 4, -1, -5) if info.min <= v <= info.max]
    check(_gather, np.array(good, dtype=dtype), X)
    f = sn.jit(_gather)
    for bad in (5, -6, info.max, info.min):
        if bad in (5, -6) and not info.min <= bad <= info.max or bad == 0:
            continue
        idx = np.array([0, bad], dtype=dtype)
        with pytest.raises((IndexError, OverflowError)) as want:
            sn.interpret(_gather, idx, X)
        with pytest.raises(want.type, match=f"index {bad} is"):
            f(idx, X)


def _wide(idx: np.ndarray, arrays: tuple[np.ndarray, ...]) -> Any:
    return sn.map(lambda j: sum(a[j] for a in arrays), idx)


def test_kernels_with_more_arguments_than_the_fast_call_takes() -> None:
    rng = np.random.default_rng(5)
    arrays = tuple(rng.normal(size=7) for _ in range(17))  # 17 loads + indices + result
    check(_wide, np.array([0, 6, -1, 3]), arrays)


def test_kernels_run_through_ctypes_without_the_fast_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from stax.backends.cpu import segmented

    monkeypatch.setattr(segmented, "fastcall", lambda: None)
    segmented._load.cache_clear()  # entries made from here on call through ctypes
    monkeypatch.setattr(kernels, "CHUNKS", 3)
    try:
        cols = sn.Ragged(np.array([0, 4, -1, 2, 3]), np.array([2, 0, 3]))
        check(_gather_sum, cols, X)
        with pytest.raises(IndexError, match="index 5 is out of bounds"):
            sn.jit(_gather_sum)(sn.Ragged(np.array([5]), np.array([1])), X)
    finally:
        segmented._load.cache_clear()
