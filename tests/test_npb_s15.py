"""[NPB2] npbench-style breaks in Python loops: a loop over a 1-d traced array whose body has a
data-dependent `if` compiles its body once (the element's position is a traced index) and warm
calls replay it; a loop of scalar work between breaks runs in NumPy. Results vs NumPy."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
from stax.frontend import breaks
from stax.frontend.breaks import GraphBreakWarning


def signed_sum(points: Any, a: Any) -> Any:
    """A loop over a 1-d array with a branch on each element (npbench contour_integral)."""
    total = np.zeros_like(a)
    for z in points:
        term = a * z
        if abs(z) < 1.0:
            term = -term
        total += term
    return total


def in_numpy(jf: Any, args: tuple[Any, ...]) -> bool:
    return any("runs in NumPy from now on" in str(b) for b in jf.breaks.get(jf.key(args), []))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_branch_per_element_compiles_the_body_once(dtype: str) -> None:
    jf = stax.jit(signed_sum)
    a = make_array((4, 5), "float64", seed=1)
    calls = [make_array((9,), dtype, seed=2, low=-2, high=2),
             make_array((9,), dtype, seed=2, low=-2, high=2),  # replayed
             make_array((9,), dtype, seed=3, low=-2, high=2),  # other branches: guards fail
             make_array((9,), dtype, seed=4, low=-2, high=2)[::-1],  # strided
             make_array((0,), dtype)]  # no iteration
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for points in calls:
            assert_matches(jf(points, a), signed_sum(points, a),
                           rtol=1e-6 if dtype == "float32" else None)
    assert not in_numpy(jf, (calls[0], a))
    assert jf.segment_counts[jf.key((calls[0], a))][2] >= 1  # a warm call replayed the tape


def test_elements_are_numpy_scalars_and_rows_stay_views() -> None:
    def fn(x: Any, m: Any) -> Any:
        kinds = []
        for v in x:  # a NumPy scalar: `v += 1` leaves x alone
            if v > 0:
                v += 1
                kinds.append(np.ndim(v * 2))
        for row in m:  # a view: the write reaches m
            if row.sum() > 0:
                row[0] = -1.0
        return x, m, kinds

    x, m = make_array((6,), "float64", seed=5), make_array((4, 3), "float64", seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        got = stax.jit(fn)(x.copy(), m.copy())
    assert_matches(got, fn(x.copy(), m.copy()))


def test_a_loop_of_scalar_work_between_breaks_runs_in_numpy() -> None:
    """A bit-serial checksum (npbench crc16): a break per bit, each segment a few scalar
    operations; past MAX_SCALAR_RUNS the function runs in NumPy, with NumPy's result."""
    def checksum(data: Any) -> Any:
        crc = 0xFFFF
        for b in data:
            byte = b & 0xFF
            for _ in range(8):
                if (crc & 1) ^ (byte & 1):
                    crc = (crc >> 1) ^ 0x8408
                else:
                    crc >>= 1
                byte >>= 1
        return crc

    jf = stax.jit(checksum)
    data = make_array((40,), "uint8", seed=7, low=0, high=255)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for _ in range(2):
            assert jf(data) == checksum(data)
    assert in_numpy(jf, (data,))
    assert any(f"more than {breaks.MAX_SCALAR_RUNS} compiled segments of scalar work" in str(b)
               for b in jf.breaks[jf.key((data,))])


@pytest.mark.parametrize("uncut", [breaks.MAX_UNCUT_OPS, 3])
def test_scalar_decisions_keep_the_program_whole(monkeypatch: pytest.MonkeyPatch,
                                                  uncut: int) -> None:
    """A decision on 0-d values computed from arguments (`t = 2 * s`, `x.sum()`) is computed
    alone and the traced program goes on uncut; with a small MAX_UNCUT_OPS it is cut as
    before. The values Python decided on are the ones later array work uses."""
    monkeypatch.setattr(breaks, "MAX_UNCUT_OPS", uncut)

    def fn(x: Any, w: Any) -> Any:
        total = x.sum()
        out = w / total if total > 0 else w * total
        for s in x:
            t = s * 2.0
            if t > 0.5:
                out = out + w * t
            elif t < -1:
                out = np.sqrt(out * out + t * t)
        return out, total

    jf = stax.jit(fn)
    w = make_array((3, 4), "float64", seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for seed in (9, 9, 10):
            x = make_array((7,), "float64", seed=seed, low=-1, high=1)
            assert_matches(jf(x, w), fn(x, w))
    assert not in_numpy(jf, (x, w))


def test_a_value_python_already_saw_is_not_computed_again() -> None:
    def fn(x: Any) -> Any:
        s = (x * x).sum()
        record = np.ndarray(3)  # a NumPy array: storing into it converts s
        record[0], record[1] = float(s), s
        record[2] = s * 2 if s > 1 else s
        return record, x / s

    x = make_array((5,), "float64", seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        assert_matches(stax.jit(fn)(x), fn(x))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_ndarray_constructor_makes_a_traced_array(dtype: str) -> None:
    """`np.ndarray(shape, dtype)` (npbench vadv, nbody) is np.empty's traced array, so
    stores of traced values into it compile; every other use of np.ndarray is NumPy's."""
    def fn(x: Any) -> Any:
        col = np.ndarray(x.shape, dtype=x.dtype)  # uninitialized, then fully written
        col[:, 0] = x[:, 0] * 2
        for k in range(1, x.shape[1]):
            col[:, k] = col[:, k - 1] + x[:, k]
        energy = np.ndarray(2)
        energy[0], energy[1] = x.sum(), (x * x).sum()
        fortran = np.ndarray((2, 3), x.dtype, order="F")
        fortran[...] = x[:2, :3]
        fixed = np.ndarray((3,), np.float64, np.arange(4.0), 8)  # NumPy's: over a buffer
        return col, energy, fortran, fixed, isinstance(col, np.ndarray)

    x = make_array((4, 5), dtype, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphBreakWarning)
        got = stax.jit(fn)(x)
    want = fn(x)
    assert_matches(got, want, rtol=1e-5 if dtype == "float32" else None)
    assert got[2].flags.f_contiguous and want[2].flags.f_contiguous
