"""[CLIFF3, issue 9] Row scans run several rows in step (`scan_chains`: independent dependence
chains, each row's elements in order; [SCAN] the rows a share of the rows apart, an odd number
from CHAIN_ODD on): results equal NumPy's bit for bit (same operations in the same order per
row) over dtypes, NaN/inf/-0.0, row counts around the block and the odd distance (tails, fewer
chains), one column, empty, strided/transposed/Fortran inputs, 3-d, threads and every ISA
level."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import make_array, run_sanitized

import stax
from stax.backends.cpu.cpp import CHAIN_ODD
from stax.runtime.compiler import ISA_LEVELS, isa_level
from stax.tiling.plan import SCAN_CHAINS


def _rows(x: Any) -> Any:
    return (np.cumsum(x, axis=-1), np.cumprod(x, axis=-1), np.maximum.accumulate(x, axis=-1),
            np.minimum.accumulate(x, axis=-1))


def _same(got: Any, want: Any) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)  # bit for bit: each row summed in NumPy's order
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))  # -0.0 kept


def _specials(rows: int, cols: int, dtype: str, seed: int) -> np.ndarray:
    x = make_array((rows, cols), dtype, seed=seed, low=-3, high=3)
    if dtype.startswith("float") and rows > 5 and cols > 3:
        x[1, 2] = np.nan  # one chain of a block NaN, its neighbours not
        x[2, :3] = (-0.0, -0.0, 0.0)  # a leading -0.0 stays -0.0 in cumsum
        x[3, 0] = np.inf
        x[4, 1] = -np.inf
        x[5, 3] = 0.0  # 0 * inf in cumprod after row 3's inf
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8",
                                   "bool"])
@pytest.mark.parametrize("rows", [1, SCAN_CHAINS - 1, SCAN_CHAINS, 2 * SCAN_CHAINS + 3])
def test_rows_in_step_equal_numpy(dtype: str, rows: int) -> None:
    x = _specials(rows, 37, dtype, seed=rows)
    with np.errstate(all="ignore"):
        want = _rows(x)
        _same(stax.jit(_rows)(x), want)
        _same(stax.jit(_rows)(np.asfortranarray(x)), want)


# [SCAN] rows per chain just below and at CHAIN_ODD (even, made odd: the last chain shorter),
# odd already, and a distance that leaves the last chain one row
ODD_ROWS = [SCAN_CHAINS * (CHAIN_ODD - 1), SCAN_CHAINS * CHAIN_ODD,
            SCAN_CHAINS * CHAIN_ODD + 1, SCAN_CHAINS * (CHAIN_ODD + 2) + 1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("rows", ODD_ROWS)
def test_rows_a_share_apart_equal_numpy(dtype: str, rows: int) -> None:
    x = _specials(rows, 19, dtype, seed=rows)
    if dtype.startswith("float"):
        x[rows - 1, 5] = np.nan  # the last chain's last row
        x[rows // 2, 0] = -0.0
    with np.errstate(all="ignore"):
        _same(stax.jit(_rows)(x), _rows(x))
        _same(stax.jit(_rows)(x[::-1, 1:]), _rows(x[::-1, 1:]))  # negative row stride


def test_one_column_empty_strided_transposed_3d() -> None:
    x = _specials(13, 29, "float32", seed=1)
    with np.errstate(all="ignore"):
        for a in (x[:, :1], x[:0], x[:, :0], x[::2, ::3], x.T, x.reshape(13, 29, 1)[..., 0],
                  make_array((3, 7, 40), "float64", seed=2),
                  make_array((3, 40, 7), "float64", seed=3).transpose(0, 2, 1)):
            _same(stax.jit(_rows)(a), _rows(a))


def test_shape_generic() -> None:
    """A generic kernel (symbolic rows): whole blocks and the tail decided at run time."""
    fn = stax.jit(_rows, dynamic=True)
    for rows, cols in ((13, 40), (3, 7), (SCAN_CHAINS * 5, 9), (1, 5), (0, 4), (9, 0),
                       *((rows, 6) for rows in ODD_ROWS)):
        x = make_array((rows, cols), "float32", seed=rows + cols)
        _same(fn(x), _rows(x))


def test_fused_value_and_complex() -> None:
    x = _specials(11, 50, "float32", seed=4)
    with np.errstate(all="ignore"):
        def fn(a: Any) -> Any:
            return np.cumsum(a * 2 - 1, axis=1), np.maximum.accumulate(np.abs(a), axis=1)

        _same(stax.jit(fn)(x), fn(x))
        z = (x + 1j * x[::-1]).astype(np.complex64)[:, :9]
        got = stax.jit(lambda a: (np.cumsum(a, 1), np.cumprod(a, 1)))(z)
        np.testing.assert_array_equal(got[0], np.cumsum(z, 1))
        # a complex product rounds unlike NumPy's (as before the chains): close, not equal
        np.testing.assert_allclose(got[1], np.cumprod(z, 1), rtol=1e-5)


def test_the_plan_records_it() -> None:
    x = make_array((64, 100), "float32", seed=5)
    text = str(stax.explain(lambda a: np.maximum.accumulate(a, axis=1), x))
    assert f"{SCAN_CHAINS} rows of x0 (64) scanned together" in text
    assert f"{SCAN_CHAINS} rows of x0 in step, 17 apart" in text  # the kernel's comment
    ints = str(stax.explain(lambda a: np.cumsum(a, axis=1), x.astype(np.int64)))
    assert "scanned together" not in ints  # an integer add is no long chain


@pytest.mark.usefixtures("always_parallel")
def test_threads() -> None:
    # blocks per thread, a tail, fewer rows than blocks, chains an odd number of rows apart
    for rows in (2 * SCAN_CHAINS, 50, 3, *ODD_ROWS):
        x = _specials(rows, 300, "float64", seed=rows)
        with np.errstate(all="ignore"):
            _same(stax.jit(_rows, threads=2)(x), _rows(x))
            y = make_array((2, rows, 70), "float32", seed=6)
            _same(stax.jit(_rows, threads=2)(y), _rows(y))


@pytest.mark.parametrize("isa", ISA_LEVELS)
def test_every_isa_level(isa: str) -> None:
    if ISA_LEVELS.index(isa) < ISA_LEVELS.index(isa_level()):
        pytest.skip(f"this CPU lacks {isa}")
    x = _specials(9, 65, "float32", seed=7)
    with np.errstate(all="ignore"):
        _same(stax.jit(_rows, isa=isa, threads=1)(x), _rows(x))


SANITIZED = """
import numpy as np, stax
rng = np.random.default_rng(0)
f = lambda a: (np.cumsum(a, 1), np.cumprod(a, 1), np.maximum.accumulate(a, 1))
for dtype in ("float32", "float64", "float16"):
    for rows, cols in ((1, 5), (3, 1), (4, 33), (9, 17), (13, 2)):
        x = rng.standard_normal((rows, cols)).astype(dtype)
        for got, want in zip(stax.jit(f)(x), f(x)):
            assert np.array_equal(got, want, equal_nan=True), (dtype, rows, cols)
print("sanitized ok")
"""


def test_clean_under_sanitizers(tmp_path: Path) -> None:
    run_sanitized(SANITIZED, tmp_path / "cache")
