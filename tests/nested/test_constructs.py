"""Every nested construct, compiled by flattening, against the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches, make_array

import stax
import stax.nested as sn
from nested.helpers import check

NS = np.array([5, 0, 3, 1, 7, 0, 2])
RAGGED = sn.Ragged.from_list([[1.5, -2.0, 3.0], [], [4.0], [np.nan, 1.0], [0.5, 0.25, 8.0, -1.0]])
RAGGED_I = sn.Ragged.from_list([[3, 1, 2], [], [7], [5, 5, 0, 1], [9]], dtype=np.int32)


def test_issue_example() -> None:
    def f(ns):
        return sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: i + 2, sn.iota(n))), ns)
    assert_matches(sn.jit(f)(np.array([5, 7])), np.array([20, 35]))
    assert_matches(f(np.array([5, 7])), np.array([20, 35]))
    check(f, NS)
    check(f, np.array([], dtype=np.int64))


def test_map_iota_is_ragged() -> None:
    got = check(lambda ns: sn.map(sn.iota, ns), NS)
    assert isinstance(got, sn.Ragged)
    assert got.to_list() == [list(range(n)) for n in NS]


def test_seed_nested_examples() -> None:
    xss = np.arange(12, dtype=np.int32).reshape(3, 4)
    # map (\xs -> let y = reduce (+) 0 xs; let zs = map (+y) xs in zs) xss
    got = check(lambda a: sn.map(lambda xs: sn.map(lambda x: x + sn.reduce(np.add, 0, xs), xs),
                                 a), xss)
    assert isinstance(got, np.ndarray) and got.shape == (3, 4)  # regular stays regular
    check(lambda a: sn.map(lambda xs: xs + xs.sum(), a), RAGGED_I)


@pytest.mark.parametrize("x", [RAGGED, RAGGED_I], ids=["float", "int32"])
def test_reductions_and_scans_per_row(x: sn.Ragged) -> None:
    check(lambda r: sn.map(lambda row: sn.reduce(np.add, 0, row), r), x)
    check(lambda r: sn.map(lambda row: sn.reduce(np.maximum, -np.inf if x.dtype.kind == "f"
                                                 else np.int32(-(2**31)), row), r), x)
    check(lambda r: sn.map(lambda row: sn.scan(np.add, 0, row), r), x)
    check(lambda r: sn.map(lambda row: sn.scan(lambda a, b: a * b, 1, row * 2), r), x)
    check(lambda r: sn.map(lambda row: row.cumsum(), r), x)
    check(lambda r: sn.map(lambda row: sn.length(row), r), x)


def test_softmax_rows() -> None:
    def softmax(r):
        return sn.map(lambda row: np.exp(row - row.max()) / np.exp(row - row.max()).sum(), r)
    x = sn.Ragged.from_list([[1.0, 2.0, 3.0], [0.5], [-1.0, 4.0]], dtype=np.float32)
    got = check(softmax, x)
    assert_matches(got[0], np.exp([1.0, 2, 3]).astype(np.float32) / np.exp([1.0, 2, 3]).sum(
        dtype=np.float32), rtol=1e-6)
    with pytest.raises(ValueError, match="zero-size array"):
        sn.jit(softmax)(RAGGED)


def test_free_variables_replicated() -> None:
    scale = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    check(lambda r, s: sn.map(lambda row, k: sn.map(lambda v: v * k + s.sum(), row), r, s),
          RAGGED, scale)
    # a map over a free array (an argument, a closure, an iota of a constant) inside a map
    # whose body uses the outer element: the free array is replicated, never hoisted
    check(lambda ns: sn.map(lambda n: sn.map(lambda v: v + n, ns), ns), NS)
    check(lambda ns, xs: sn.map(lambda n: sn.map(lambda v: v * 10 + n, xs), ns), NS,
          np.array([1, 2]))
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: i + n, sn.iota(3)), ns), NS)
    two_d = np.arange(6).reshape(2, 3)
    check(lambda ns: sn.map(lambda n: sn.map(lambda row: row.sum() * n, two_d), ns), NS)
    # three levels: an outer value used in the innermost map
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.reduce(
        np.add, 0, sn.map(lambda j: j * n + i, sn.iota(i + 1))), sn.iota(n)), ns), NS)


def test_csr_spmv() -> None:
    indptr_rows = sn.Ragged.from_list([[0, 2], [], [1], [0, 1, 2]])
    vals = sn.Ragged.from_list([[1.0, 2.0], [], [3.0], [4.0, 5.0, 6.0]])
    x = np.array([10.0, 20.0, 30.0])

    def spmv(cols, vs, x):
        return sn.map(lambda c, v: sn.reduce(np.add, 0.0, sn.map(lambda j, a: a * x[j], c, v)),
                      cols, vs)
    got = check(spmv, indptr_rows, vals, x)
    assert_matches(got, np.array([70.0, 0.0, 60.0, 40 + 100 + 180.0]))


def test_range_replicate_concat_slice_index() -> None:
    check(lambda ns: sn.map(lambda n: sn.range(n, 3 * n, 2), ns), NS)
    check(lambda ns: sn.map(lambda n: sn.range(10, n, -3), ns), NS)
    # bounds from two different levels (start from the outer map, stop from the inner)
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.reduce(
        np.add, 0, sn.range(n, n + i, 1)), sn.iota(n)), ns), NS)
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.range(n, n + 2 * i, 2).sum(),
                                             sn.iota(2)), ns), NS)
    check(lambda ns: sn.map(lambda n: sn.replicate(n, n * 1.5), ns), NS)
    check(lambda ns: sn.map(lambda n: sn.concat(sn.iota(n), sn.replicate(2, n)), ns), NS)
    check(lambda r: sn.map(lambda row: sn.concat(row, row * 2), r), RAGGED)
    check(lambda r: sn.map(lambda row: row[1:sn.length(row)], r),
          sn.Ragged.from_list([[1, 2, 3], [4], [5, 6]]))
    check(lambda r: sn.map(lambda row: row[0] + row[-1], r), sn.Ragged.from_list(
        [[1, 2, 3], [4], [5, 6]]))
    check(lambda ns: sn.map(lambda n: sn.iota(n + 4)[n // 2:n + 1], ns), NS)
    # Python's slice rules: negative bounds, bounds past the end, empty slices
    check(lambda ns: sn.map(lambda n: sn.iota(n)[n - 7:-1], ns), NS)
    check(lambda ns: sn.map(lambda n: sn.iota(n)[2:n * 3], ns), NS)
    check(lambda ns: sn.map(lambda n: sn.iota(n)[n:1], ns), NS)
    check(lambda ns: sn.map(lambda n: sn.iota(5)[n % 5], ns), NS)  # regular inner array


def test_scatter() -> None:
    check(lambda ns: sn.map(lambda n: sn.scatter(sn.replicate(n, 0), sn.iota(2) * 2,
                                                 sn.replicate(2, n)), ns), NS)
    check(lambda d: sn.scatter(d, np.array([3, -1, 0, 9]), np.array([7, 8, 9, 10])),
          np.arange(5))


def test_cond_branch_packing() -> None:
    def f(ns):
        return sn.map(lambda n: sn.cond(n % 2 == 0,
                                        lambda m: sn.reduce(np.add, 0, sn.iota(m)),
                                        lambda m: m * 100, n), ns)
    check(f, NS)
    check(f, np.array([2, 4]))  # one branch taken everywhere
    check(f, np.array([], dtype=np.int64))
    # the untaken branch would index out of bounds: packing must not run it there
    r = sn.Ragged.from_list([[1, 2], [], [3]])
    check(lambda r: sn.map(lambda row: sn.cond(sn.length(row) > 0, lambda x: x[0],
                                               lambda x: -1, row), r), r)
    check(lambda x: sn.cond(x > 0, lambda: x * 2, lambda: x - 1), 3)
    # branches returning arrays of different lengths: rows gathered from the taken branch
    check(lambda ns: sn.map(lambda n: sn.cond(n % 2 == 1, lambda: sn.iota(n) * 10,
                                              lambda: sn.replicate(2, n)), ns), NS)
    check(lambda r, ns: sn.map(lambda row, n: sn.cond(n > 2, lambda: row[1:] * n,
                                                      lambda: sn.concat(row, row)), r, ns),
          RAGGED_I, np.array([3, 1, 0, 5, 2]))
    # a condition computed from an outer value, branches using the inner iteration
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.cond(
        ns.sum() > 10, lambda: i + n, lambda: i - n), sn.iota(n)), ns), NS)
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.cond(
        n % 2 == 0, lambda: i + n, lambda: i * n), sn.iota(n)), ns), NS)
    # a branch using an outer value through its closure still runs only where taken
    check(lambda ns: sn.map(lambda n: sn.cond(n > 1, lambda: sn.iota(n)[1], lambda: -n), ns),
          NS)


def test_loops() -> None:
    def uniform(ns):
        return sn.map(lambda n: sn.loop(3, lambda i, acc: acc * 2 + i + n, n), ns)

    def irregular(ns):
        return sn.map(lambda n: sn.loop(n, lambda i, acc: (acc[0] + i, acc[1] * 2),
                                        (0, 1)), ns)
    check(uniform, NS)
    check(irregular, NS)
    # trip count from the outer map, body using the inner iteration
    check(lambda ns: sn.map(lambda n: sn.map(lambda i: sn.loop(n, lambda r, a: a * 2 + i, 1),
                                             sn.iota(3)), ns), NS)
    check(lambda n: sn.loop(n, lambda i, acc: acc + i, 0), 5)


def test_regular_nests_stay_regular() -> None:
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    got = check(lambda a: sn.map(lambda row: row / row.sum(), a), a)
    assert isinstance(got, np.ndarray) and got.shape == (4, 6)
    run = sn.jit(lambda a: sn.map(lambda row: row / row.sum(), a)).run(a)[1]
    assert [k.kind for k in run.kernels] == ["main pipeline"] * 2  # the sum, the map: test_regular
    assert not any(r[0].startswith("map-of-iota") for r in run.rules)
    # a reduction the main pipeline does not take (a Python operator) keeps uniform segments
    check(lambda a: sn.map(lambda row: sn.reduce(lambda x, y: x + y, 0.0, row), a), a)
    run = sn.jit(lambda a: sn.map(lambda row: sn.reduce(lambda x, y: x + y, 0.0, row), a)).run(a)[1]
    reductions = [k for k in run.kernels if k.kind == "segreduce"]
    assert reductions and all("#define OFF(s) ((s) * W)" in k.source for k in reductions)
    got = check(lambda a: sn.map(lambda row: sn.map(lambda v: v * 2, row), a), a)
    assert got.shape == (4, 6)
    check(lambda a: sn.map(lambda row: sn.reduce(np.add, 0, row), a), a.T)  # strided input


def test_results_do_not_alias_arguments() -> None:
    x = np.arange(5)
    got = sn.jit(lambda x: sn.map(lambda v: v, x))(x)
    got[0] = 99
    assert x[0] == 0
    r = sn.Ragged.from_list([[1, 2], [3]])
    out = sn.jit(lambda r: sn.map(lambda row: row, r))(r)
    assert not np.may_share_memory(out.values, r.values)
    with pytest.raises(ValueError, match="read-only"):
        out.values[0] = 99  # a Ragged, argument or result, is immutable
    assert r.values[0] == 1 and out.values[0] == 1


def test_tuple_results_and_argmax() -> None:
    def argmax(r):
        def best(a, b):
            take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
            return np.where(take_b, b[0], a[0]), np.where(take_b, b[1], a[1])
        return sn.map(lambda row: sn.reduce(best, (np.int32(-(2**31)), np.int64(-1)),
                                            (row, sn.iota(sn.length(row)))), r)
    got = check(argmax, RAGGED_I)
    assert_matches(got[1], np.array([0, -1, 0, 0, 0]))
    check(lambda r: sn.map(lambda row: (row.sum(), row * 2), r), RAGGED_I)


def test_numpy_functions_on_rows() -> None:
    check(lambda r: sn.map(lambda row: (np.sum(row), np.cumsum(row), np.where(row > 2, row, 0)),
                           r), RAGGED_I)
    check(lambda r: sn.map(lambda row: np.sqrt(np.abs(row)).astype(np.float32), r), RAGGED)


def test_explain() -> None:
    def f(ns):
        return sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: i + 2, sn.iota(n))), ns)
    text = str(sn.explain(f, np.array([5, 7])))
    for part in ("== Nested program ==", "sn.iota(n)", "map-of-iota -> segiota",
                 "map-of-reduce -> segreduce", "segreduce of an affine element -> closed form",
                 "== Flat program",
                 "#pragma omp"):
        assert part in text, part
    assert str(stax.explain(sn.jit(f), np.array([5, 7]))) == text  # the hook in stax.explain
    float_text = str(sn.explain(lambda ns: sn.map(lambda n: sn.reduce(np.add, 0.0, sn.map(
        lambda i: i + 2.0, sn.iota(n))), ns), np.array([5, 7])))
    assert "map-of-reduce -> segreduce" in float_text and "segreduce np.add" in float_text
    loop_text = str(sn.explain(lambda ns: sn.map(
        lambda n: sn.loop(n, lambda i, acc: acc + i, 0), ns), np.array([1, 3])))
    assert "map-of-loop -> active-set loop" in loop_text and "cond -> branch packing" in \
        loop_text


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_dtypes_and_ufuncs(dtype: str) -> None:
    values = make_array((23,), dtype, seed=3)
    x = sn.Ragged(values, [4, 0, 7, 1, 0, 11])
    check(lambda r: sn.map(lambda row: (row.sum(), sn.length(row), row.cumsum()), r), x)
    if dtype == "bool":
        check(lambda r: sn.map(lambda row: sn.reduce(np.logical_or, False, row ^ True), r), x)
        return
    check(lambda r: sn.map(lambda row: sn.reduce(np.minimum, np.inf if dtype[0] == "f"
                                                 else np.iinfo(dtype).max, row * 2 - 1), r), x)
    check(lambda r: sn.map(lambda row: np.where(row > 0, row // 2, -row % 3) + np.abs(row), r),
          x)
    check(lambda r: sn.map(lambda row: np.maximum(row, 1) ** 2 / (row.sum() + 0.5), r), x)


def test_zero_d_and_python_scalar_arguments() -> None:
    check(lambda n: sn.iota(n), np.array(4))
    check(lambda n, m: sn.reduce(np.add, 0, sn.range(n, m, 2)), 3, np.int64(11))
    check(lambda x, c: sn.map(lambda v: v * c, x), np.arange(4.0), 2.5)
    check(lambda n: sn.replicate(n, 7), 0)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_nan_and_inf() -> None:
    x = sn.Ragged.from_list([[np.nan, 1.0], [np.inf, -np.inf], [2.0, np.nan, 3.0], [-np.inf]])
    check(lambda r: sn.map(lambda row: (row.max(), row.min(), row.sum()), r), x)
    check(lambda r: sn.map(lambda row: sn.reduce(np.fmax, -np.inf, row), r), x)
    check(lambda r: sn.map(lambda row: np.isnan(row) | np.isinf(row), r), x)


def test_byte_order_and_layouts() -> None:
    big = np.arange(10, dtype=">i8")
    check(lambda x: sn.map(lambda v: sn.reduce(np.add, 0, sn.iota(v % 4)) + v, x), big)
    assert_matches(sn.segreduce(np.add, 0, None, big, lengths=[3, 7]), np.array([3, 42]))
    x = np.arange(30.0).reshape(5, 6)[::2, 1::2]  # strided, not contiguous
    check(lambda a: sn.map(lambda row: row.cumsum(), a), x)


def test_rows_with_regular_inner_dims() -> None:
    points = sn.Ragged(np.arange(24.0).reshape(8, 3) - 7.0, [3, 0, 1, 4])
    got = check(lambda r: sn.map(lambda row: sn.map(lambda p: p * 2.0, row), r), points)
    assert isinstance(got, sn.Ragged) and got.values.shape == (8, 3)
    check(lambda r: sn.map(lambda row: sn.map(lambda p: np.sqrt((p * p).sum()), row), r),
          points)
    check(lambda r: sn.map(lambda row: sn.map(lambda p: p[0] - p[2], row), r), points)


def test_each_construct_records_its_rule() -> None:
    ns = np.array([3, 0, 2])
    cases = {
        "map-of-scan -> segscan": lambda ns: sn.map(lambda n: sn.scan(np.add, 0, sn.iota(n)),
                                                    ns),
        "map-of-replicate -> segmented replicate": lambda ns: sn.map(
            lambda n: sn.replicate(n, n), ns),
        "map-of-concat -> segmented concat": lambda ns: sn.map(
            lambda n: sn.concat(sn.iota(n), sn.iota(n)), ns),
        "map-of-slice -> segmented gather": lambda ns: sn.map(lambda n: sn.iota(n)[1:], ns),
        "map-of-index -> gather": lambda ns: sn.map(lambda n: sn.iota(n + 1)[n], ns),
        "map-of-scatter -> segmented scatter": lambda ns: sn.map(
            lambda n: sn.scatter(sn.iota(n), sn.iota(1), sn.replicate(1, n)), ns),
        "cond -> branch packing": lambda ns: sn.map(
            lambda n: sn.cond(n > 0, lambda: n, lambda: -n), ns),
        "map-of-loop -> loop interchange (uniform trip count)": lambda ns: sn.map(
            lambda n: sn.loop(2, lambda i, a: a + i, n), ns),
        "map-of-loop -> active-set loop (irregular trip counts)": lambda ns: sn.map(
            lambda n: sn.loop(n, lambda i, a: a + i, n), ns),
        "free array replicated -> segmented gather": lambda ns: sn.map(
            lambda n: sn.map(lambda v: v + n, ns), ns),
    }
    for rule, fn in cases.items():
        check(fn, ns)
        rules = [r for r, _ in sn.jit(fn).run(ns)[1].rules]
        assert rule in rules, (rule, rules)
