"""Bad input: clear errors with NumPy's (or Futhark's) wording, compiled and interpreted."""

from __future__ import annotations

import numpy as np
import pytest

import stax.nested as sn

BOTH = pytest.mark.parametrize("run", [sn.interpret, lambda f, *a: sn.jit(f)(*a)],
                               ids=["interpret", "jit"])


@BOTH
def test_invalid_ranges(run) -> None:
    with pytest.raises(ValueError, match=r"^Range 0\.\.1\.\.<-2 is invalid$"):
        run(lambda: sn.iota(-2))
    with pytest.raises(ValueError, match=r"Range 0\.\.1\.\.<-2 is invalid"):
        run(lambda ns: sn.map(sn.iota, ns), np.array([3, -2, 1]))
    with pytest.raises(ValueError, match=r"Range 5\.\.6\.\.<0 is invalid"):
        run(lambda: sn.range(5, 0, 1))
    with pytest.raises(ValueError, match=r"Range 1\.\.1\.\.<4 is invalid"):
        run(lambda: sn.range(1, 4, 0))
    with pytest.raises(ValueError, match=r"Range 0\.\.-1\.\.>3 is invalid"):
        run(lambda: sn.range(0, 3, -1))
    with pytest.raises(ValueError, match="negative count -1"):
        run(lambda ns: sn.map(lambda n: sn.replicate(n - 2, n), ns), np.array([3, 1]))


@BOTH
def test_map_errors(run) -> None:
    with pytest.raises(ValueError, match="different lengths"):
        run(lambda a, b: sn.map(lambda x, y: x + y, a, b), np.arange(3), np.arange(4))
    r1 = sn.Ragged.from_list([[1, 2], [3]])
    r2 = sn.Ragged.from_list([[1], [2, 3]])
    with pytest.raises(ValueError, match="different lengths"):
        run(lambda a, b: sn.map(lambda x, y: sn.map(lambda u, v: u + v, x, y), a, b), r1, r2)
    with pytest.raises(TypeError, match="needs arrays"):
        run(lambda n: sn.map(lambda x: x, n), 3)


@BOTH
def test_operator_errors(run) -> None:
    xs = np.arange(4)
    with pytest.raises(TypeError, match="not binary"):
        run(lambda x: sn.reduce(np.negative, 0, x), xs)
    with pytest.raises(TypeError, match="not binary"):
        run(lambda x: sn.reduce(lambda a, b, c: a, 0, x), xs)
    with pytest.raises(TypeError, match="neutral element 0.5"):
        run(lambda x: sn.reduce(np.add, 0.5, x), xs)
    with pytest.raises(TypeError, match="neutral element"):
        run(lambda x: sn.scan(np.add, (0, 0), x), xs)


@BOTH
def test_index_errors(run) -> None:
    r = sn.Ragged.from_list([[1, 2], [3]])
    with pytest.raises(IndexError, match="index 1 is out of bounds for axis 0 with size 1"):
        run(lambda r: sn.map(lambda row: row[1], r), r)
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        run(lambda r: sn.map(lambda row: row[-3], r), r)


def test_sizes_must_be_integers() -> None:
    with pytest.raises(TypeError, match="sizes must be integers"):
        sn.jit(lambda x: sn.map(sn.iota, x))(np.array([1.5, 2.0]))
    with pytest.raises(TypeError, match="needs arrays"):
        sn.jit(lambda x: sn.map(lambda v: sn.concat(v, v), x))(np.arange(3))


def test_jit_only_errors() -> None:
    with pytest.raises(TypeError, match="not lists"):
        sn.jit(lambda x: x)([1, 2])
    with pytest.raises(TypeError, match="sn.cond"):
        sn.jit(lambda ns: sn.map(lambda n: n if n > 0 else -n, ns))(np.arange(3))
    with pytest.raises(NotImplementedError, match="ragged arrays of ragged arrays"):
        sn.jit(lambda ns: sn.map(lambda n: sn.map(sn.iota, sn.iota(n)), ns))(np.arange(3))
    with pytest.raises(TypeError, match="not supported"):
        sn.jit(lambda x: sn.map(lambda v: v, x))(np.array(["a"]))


def test_empty_everywhere() -> None:
    e = np.array([], dtype=np.int64)
    empty_rows = sn.Ragged.from_list([[], [], []], dtype=np.float64)
    for fn, arg in ((lambda ns: sn.map(sn.iota, ns), e),
                    (lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns), e),
                    (lambda r: sn.map(lambda row: row.sum(), r), empty_rows),
                    (lambda r: sn.map(lambda row: row.cumsum(), r), empty_rows),
                    (lambda r: sn.map(lambda row: sn.reduce(np.add, 0.0, row), r),
                     sn.Ragged.from_list([], dtype=np.float64))):
        got = sn.jit(fn)(arg)
        want = sn.interpret(fn, arg)
        from nested.helpers import assert_same
        assert_same(got, want)
