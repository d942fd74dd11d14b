"""[COV] Slices of index-dependent length feeding products and reductions (npbench covariance
and correlation: `cov[i, i:M] = data[:, i] @ data[:, i:M]`): the outer-reduction form reads
the masked slice's clamped positions contiguously in the blocks where no clamp bites
(`clamp_free`) and stops at the stores' count (`stored_prefix`); compared with NumPy over
dtypes, strided, transposed and Fortran-ordered inputs, empty ranges, lengths 0 and 1, a
value read elsewhere too (full length: blocks the clamp bites), and under the sanitizers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_sanitized

import stax

from .test_masked import correlation, covariance
from .test_store_stops import _body


def column_tails(A, y):
    for i in range(A.shape[1]):
        y[i:] += A[:, i:].sum(axis=0) * 0.5
    return y


def tail_products(A, v):
    out = np.zeros(A.shape[1])
    for i in range(A.shape[1]):
        out[i] = (v @ A[:, i:]).sum()  # a masked row of products read whole: full length
    return out


def _data(n: int, m: int, dtype: str, layout: str) -> np.ndarray:
    a = np.random.default_rng(n * 31 + m).random((n, 2 * m) if layout == "strided" else
                                                 (m, n) if layout == "transposed" else (n, m))
    a = a[:, ::2] if layout == "strided" else a.T if layout == "transposed" else a
    a = np.asfortranarray(a) if layout == "fortran" else a
    return a.astype(dtype) if a.dtype != dtype else a


def _tol(dtype: str) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}


@pytest.mark.parametrize("layout", ["c", "strided", "transposed", "fortran"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_covariance_and_correlation_equal_numpy(dtype: str, layout: str) -> None:
    m = 40 if layout == "c" else 9
    data = _data(23, m, dtype, layout)
    for fn in (covariance, correlation):
        got_data, want_data = data.copy(order="K"), data.copy(order="K")
        got = stax.jit(fn)(m, np.float64(23), got_data)
        want = fn(m, np.float64(23), want_data)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, **_tol(dtype))
        np.testing.assert_allclose(got_data, want_data, **_tol(dtype))  # data is centered


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of no rows, 0/0: as NumPy
@pytest.mark.parametrize("m,n", [(0, 5), (1, 5), (2, 1), (3, 0)])
def test_empty_ranges_and_short_slices(m: int, n: int) -> None:
    data = np.random.default_rng(m).random((n, m))
    for fn in (covariance, correlation):
        got = stax.jit(fn)(m, np.float64(n), data.copy())
        want = fn(m, np.float64(n), data.copy())
        np.testing.assert_allclose(got, want, equal_nan=True)


def test_covariance_reads_the_slice_contiguously() -> None:
    data = _data(23, 40, "float64", "c")
    stax.jit(covariance)(40, np.float64(23), data.copy())
    body = _body(covariance, 4)
    body.compile()
    assert "stored_prefix" in body.source  # blocks up to the stores' count
    assert "bool stax_free" in body.source  # clamp_free: the unclamped branch
    assert "block < stax_xstop_" in body.source
    assert "kernel0: stored_prefix" in body.decision  # records, shown by stax.explain
    assert "kernel0: clamp_free: 1 clamped" in body.decision


@pytest.mark.parametrize("n", [0, 1, 7, 40, 300])  # 300: blocks work-shared (`omp for`)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_column_tails_and_tail_products_equal_numpy(n: int, dtype: str) -> None:
    a = _data(n + 3, n, dtype, "c")
    y = np.linspace(0, 1, n).astype(dtype)
    np.testing.assert_allclose(stax.jit(column_tails)(a, y.copy()), column_tails(a, y.copy()),
                               **_tol(dtype))
    v = np.linspace(1, 2, n + 3).astype(dtype)
    np.testing.assert_allclose(stax.jit(tail_products)(a, v), tail_products(a, v),
                               **_tol(dtype))


def test_sanitized(tmp_path: Path) -> None:
    program = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
""" + textwrap.dedent("""
    import numpy as np, stax
    from loops.test_clamp_free import column_tails
    from loops.test_masked import covariance
    for m in (1, 40):
        data = np.random.default_rng(m).random((7, m))
        np.testing.assert_allclose(stax.jit(covariance)(m, np.float64(7), data.copy()),
                                   covariance(m, np.float64(7), data.copy()), rtol=1e-10)
        y = np.zeros(m)
        np.testing.assert_allclose(stax.jit(column_tails)(data, y.copy()),
                                   column_tails(data, y.copy()), rtol=1e-10)
    print("sanitized ok")
    """)
    run_sanitized(program, tmp_path / "cache", timeout=900)
