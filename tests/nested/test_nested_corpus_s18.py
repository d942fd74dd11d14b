"""A corpus of nested programs a user would write (RAGGED3, session 18): every construct
composed with the others at depth 2 and 3, sizes from enclosing values, empty rows everywhere,
regular inner dimensions, tuple operators that do not commute, Python-function operators,
ufuncs inside maps, cond inside loop inside map, scatter with repeated indices, slices with
bounds out of range, and int32/int64/float32/float64/bool data. Each program is compiled
(`sn.jit`, first call and replay) and compared with `sn.interpret` (`check`) AND with a plain
Python reference written with lists, since the interpreter could share a bug."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stax.nested as sn
from nested.helpers import check

NS = np.array([4, 0, 3, 1, 6, 0, 2], dtype=np.int64)
NS32 = NS.astype(np.int32)
EMPTY = np.array([], dtype=np.int64)
RF_ROWS = [[], [1.5, -2.0, 3.0], [], [4.0], [0.5, 0.25, 8.0, -1.0], []]
RF = sn.Ragged.from_list(RF_ROWS, dtype=np.float64)
RF32 = sn.Ragged.from_list(RF_ROWS, dtype=np.float32)
RI_ROWS = [[3, -1, 2], [], [7], [5, 5, 0, -4], [], [9, 2]]
RI = sn.Ragged.from_list(RI_ROWS, dtype=np.int64)
RI32 = sn.Ragged.from_list(RI_ROWS, dtype=np.int32)
RB_ROWS = [[True, False, True], [], [False], [True, True]]
RB = sn.Ragged.from_list(RB_ROWS, dtype=np.bool_)
ALL_EMPTY = sn.Ragged.from_list([[], [], []], dtype=np.int64)
# rows with a regular inner dimension (each element a pair)
R2_ROWS = [[[1, 2], [3, 4]], [], [[5, -6]], [[0, 1], [2, 3], [4, 5]]]
R2 = sn.Ragged(
    np.array([p for r in R2_ROWS for p in r], dtype=np.int64).reshape(-1, 2),
    [len(r) for r in R2_ROWS],
)
M2 = np.arange(12, dtype=np.float64).reshape(3, 4) - 5.0


def _plain(x: Any) -> Any:
    """A compiled or interpreted result as nested Python lists of Python scalars."""
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    if isinstance(x, sn.Ragged):
        return [_plain(np.asarray(r)) for r in x]
    return np.asarray(x).tolist()


def _same(got: Any, want: Any, rel: float) -> bool:
    if isinstance(want, (list, tuple)):
        return (
            isinstance(got, (list, tuple))
            and len(got) == len(want)
            and all(_same(g, w, rel) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, float) or isinstance(got, float):
        if math.isnan(want):
            return math.isnan(got)
        return math.isclose(got, want, rel_tol=rel, abs_tol=rel)
    return type(got) is type(want) and got == want


def run(fn: Callable[..., Any], ref: Any, *args: Any, rel: float = 1e-12) -> Any:
    """Compiled == interpreted (check: values and dtypes, first call and replay) and compiled
    == the plain Python reference `ref` (lists; bools, ints and floats by type)."""
    got = check(fn, *args)
    plain = _plain(got)
    assert _same(plain, ref, rel), f"compiled {plain} != reference {ref}"
    return got


def rows(x: sn.Ragged) -> list[list[Any]]:
    return [list(np.asarray(r).tolist()) for r in x]


def i32(v: int) -> int:
    """v wrapped to int32 (the reference of int32 arithmetic)."""
    return (v + 2**31) % 2**32 - 2**31


# -- depth 2: iota/range/replicate/concat/slices inside maps, sizes from the element -----------


def test_map_iota_and_sum() -> None:
    run(lambda ns: sn.map(sn.iota, ns), [list(range(n)) for n in NS], NS)
    run(
        lambda ns: sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n) * n), ns),
        [sum(i * n for i in range(n)) for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(
            lambda n: sn.reduce(np.add, np.int32(0), sn.iota(n).astype(np.int32)), ns
        ),
        [sum(range(n)) for n in NS.tolist()],
        NS32,
    )


def test_map_range_steps_from_enclosing_values() -> None:
    run(
        lambda ns: sn.map(lambda n: sn.range(-n, n, 2), ns),
        [list(range(-n, n, 2)) for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(lambda n: sn.range(n, -1, -1) * 3, ns),
        [[3 * v for v in range(n, -1, -1)] for n in NS.tolist()],
        NS,
    )
    # step from the element too (start < stop, step > 0 for every element)
    run(
        lambda ns: sn.map(lambda n: sn.range(0, 10, n + 1), ns),
        [list(range(0, 10, n + 1)) for n in NS.tolist()],
        NS,
    )


def test_map_replicate_and_concat() -> None:
    run(
        lambda ns: sn.map(lambda n: sn.replicate(n, n % 2 == 0), ns),
        [[n % 2 == 0] * n for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(lambda n: sn.concat(sn.replicate(n % 3, -1), sn.iota(n)), ns),
        [[-1] * (n % 3) + list(range(n)) for n in NS.tolist()],
        NS,
    )
    run(
        lambda r: sn.map(lambda row: sn.concat(row, sn.scan(np.add, 0.0, row)), r),
        [row + list(np.cumsum(row).tolist()) for row in RF_ROWS],
        RF,
    )
    run(
        lambda r: sn.map(lambda row: sn.concat(row[1:], row[:1]), r),
        [row[1:] + row[:1] for row in RI_ROWS],
        RI32,
    )


def test_map_slices_with_traced_bounds_out_of_range() -> None:
    """Python's (NumPy's) slice rules: bounds past either end are clamped."""
    run(
        lambda ns: sn.map(lambda n: sn.iota(n)[n - 10 : n + 10], ns),
        [list(range(n))[n - 10 : n + 10] for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(lambda n: sn.iota(n)[-n - 5 : -1], ns),
        [list(range(n))[-n - 5 : -1] for n in NS.tolist()],
        NS,
    )
    run(
        lambda r, ks: sn.map(lambda row, k: row[k : k + 2], r, ks),
        [row[k : k + 2] for row, k in zip(RI_ROWS, [5, -1, 0, 2, -7, 1], strict=True)],
        RI,
        np.array([5, -1, 0, 2, -7, 1]),
    )
    run(
        lambda r: sn.map(lambda row: row[sn.length(row) // 2 :], r),
        [row[len(row) // 2 :] for row in RF_ROWS],
        RF,
    )
    run(lambda r: sn.map(lambda row: row[::2], r), [row[::2] for row in RF_ROWS], RF)
    run(lambda r: sn.map(lambda row: row[::-1], r), [row[::-1] for row in RI_ROWS], RI)


def test_map_index_rows_guarded_by_cond() -> None:
    run(
        lambda r: sn.map(
            lambda row: sn.cond(sn.length(row) > 0, lambda: row[-1], lambda: np.float64(-99.0)), r
        ),
        [row[-1] if row else -99.0 for row in RF_ROWS],
        RF,
    )
    run(
        lambda r, ks: sn.map(
            lambda row, k: sn.cond(
                sn.length(row) > 0, lambda: row[k % sn.length(row)], lambda: np.int64(0)
            ),
            r,
            ks,
        ),
        [row[k % len(row)] if row else 0 for row, k in zip(RI_ROWS, range(6), strict=True)],
        RI,
        np.arange(6),
    )


# -- ufuncs inside maps --------------------------------------------------------------------------


def test_ufuncs_inside_maps() -> None:
    run(
        lambda r: sn.map(lambda row: np.where(row > 0, np.exp(-row), row * 2.0), r),
        [[math.exp(-v) if v > 0 else v * 2.0 for v in row] for row in RF_ROWS],
        RF,
    )
    run(
        lambda r: sn.map(lambda row: sn.map(lambda v: (v // 3, v % 3, v > 1), row), r),
        (
            [[v // 3 for v in row] for row in RI_ROWS],
            [[v % 3 for v in row] for row in RI_ROWS],
            [[v > 1 for v in row] for row in RI_ROWS],
        ),
        RI,
    )
    run(
        lambda r: sn.map(lambda row: (row * 1.5).astype(np.int32), r),
        [[int(v * 1.5) for v in row] for row in RF_ROWS],
        RF32,
    )
    run(
        lambda r: sn.map(lambda row: np.sqrt(np.abs(row)).astype(np.float32), r),
        [[math.sqrt(abs(v)) for v in row] for row in RF_ROWS],
        RF,
        rel=1e-6,
    )
    run(
        lambda r: sn.map(lambda row: np.minimum(row, 2) + np.maximum(row, -1), r),
        [[min(v, 2) + max(v, -1) for v in row] for row in RI_ROWS],
        RI32,
    )


def test_bool_rows() -> None:
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.logical_or, False, row), r),
        [any(row) for row in RB_ROWS],
        RB,
    )
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.logical_and, True, row), r),
        [all(row) for row in RB_ROWS],
        RB,
    )
    run(
        lambda r: sn.map(lambda row: sn.scan(np.logical_xor, False, row), r),
        [[bool(sum(row[: j + 1]) % 2) for j in range(len(row))] for row in RB_ROWS],
        RB,
    )
    run(
        lambda r: sn.map(lambda row: row.astype(np.int64).sum(), r),
        [sum(row) for row in RB_ROWS],
        RB,
    )
    run(
        lambda r: sn.map(lambda row: np.logical_not(row), r),
        [[not v for v in row] for row in RB_ROWS],
        RB,
    )


def test_int32_wrapping_and_division() -> None:
    big = sn.Ragged.from_list([[2**30, 2**30, 5], [], [-(2**31), -1]], dtype=np.int32)
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.add, np.int32(0), row), r),
        [i32(sum(row)) for row in big.to_list()],
        big,
    )
    run(
        lambda r: sn.map(lambda row: sn.scan(np.add, np.int32(0), row), r),
        [[i32(sum(row[: j + 1])) for j in range(len(row))] for row in big.to_list()],
        big,
    )
    neg = sn.Ragged.from_list([[-7, 7, -1], [], [3]], dtype=np.int32)
    run(
        lambda r: sn.map(
            lambda row: sn.map(lambda v: (v // np.int32(2), v % np.int32(-3)), row), r
        ),
        (
            [[v // 2 for v in row] for row in neg.to_list()],
            [[v % -3 for v in row] for row in neg.to_list()],
        ),
        neg,
    )


# -- reductions and scans: Python-function and tuple operators, non-commutative -----------------


def _affine(a: tuple, b: tuple) -> tuple:
    """Composition of x -> a0 * x + a1 then b: associative, not commutative."""
    return a[0] * b[0], a[1] * b[0] + b[1]


def _affine_ref(pairs: list[tuple[int, int]]) -> tuple[int, int]:
    acc = (1, 0)
    for p in pairs:
        acc = (acc[0] * p[0], acc[1] * p[0] + p[1])
    return acc


def test_tuple_operator_affine_composition_per_row() -> None:
    def f(r):
        return sn.map(lambda row: sn.reduce(_affine, (1, 0), (row % 3 + 1, row)), r)

    want = [_affine_ref([(v % 3 + 1, v) for v in row]) for row in RI_ROWS]
    run(f, ([w[0] for w in want], [w[1] for w in want]), RI)

    def g(r):
        return sn.map(lambda row: sn.scan(_affine, (1, 0), (row % 3 + 1, row))[1], r)

    run(
        g,
        [
            [_affine_ref([(v % 3 + 1, v) for v in row[: j + 1]])[1] for j in range(len(row))]
            for row in RI_ROWS
        ],
        RI,
    )


def test_tuple_operator_argmax_leftmost() -> None:
    def argmax(a: tuple, b: tuple) -> tuple:
        take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return np.where(take, b[0], a[0]), np.where(take, b[1], a[1])

    def f(r):
        return sn.map(
            lambda row: sn.reduce(argmax, (-np.inf, np.int64(-1)), (row, sn.iota(sn.length(row)))),
            r,
        )

    ties = sn.Ragged.from_list([[1.0, 3.0, 3.0, 0.0], [], [2.0], [5.0, 5.0]])

    def ref(rs: list[list[float]]) -> tuple[list[float], list[int]]:
        best = [(max(r), r.index(max(r))) if r else (-math.inf, -1) for r in rs]
        return [b[0] for b in best], [b[1] for b in best]

    run(f, ref(RF_ROWS), RF)
    run(f, ref(ties.to_list()), ties)


def test_python_operator_last_nonzero_and_matrix_product() -> None:
    def last_nonzero(a, b):
        return np.where(b != 0, b, a)

    run(
        lambda r: sn.map(lambda row: sn.scan(last_nonzero, 0, row * (row % 2)), r),
        [
            [
                next((u * (u % 2) for u in reversed(row[: j + 1]) if u * (u % 2) != 0), 0)
                for j in range(len(row))
            ]
            for row in RI_ROWS
        ],
        RI,
    )

    def matmul2(a, b):  # 2x2 integer matrices as 4-tuples (row-major)
        return (
            a[0] * b[0] + a[1] * b[2],
            a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2],
            a[2] * b[1] + a[3] * b[3],
        )

    def fib_like(ns):
        return sn.map(
            lambda n: sn.reduce(
                matmul2,
                (1, 0, 0, 1),
                (sn.replicate(n, 1), sn.iota(n) + 1, sn.replicate(n, 1), sn.replicate(n, 0)),
            )[1],
            ns,
        )

    def ref(n: int) -> int:
        m = (1, 0, 0, 1)
        for i in range(n):
            m = matmul2(m, (1, i + 1, 1, 0))
        return m[1]

    run(fib_like, [ref(n) for n in NS.tolist()], NS)


def test_python_operator_with_branch_runs_sequentially() -> None:
    def clamp_add(a, b):  # branches in Python: not traceable, runs per segment in Python
        return a + b if a + b < 10 else 10

    f = sn.jit(lambda r: sn.map(lambda row: sn.reduce(clamp_add, 0, row), r))
    got = run(
        lambda r: sn.map(lambda row: sn.reduce(clamp_add, 0, row), r),
        [_clamped(row) for row in RI_ROWS],
        RI,
    )
    assert _plain(f(RI)) == _plain(got)
    assert f.unreplayable


def _clamped(row: list[int]) -> int:
    acc = 0
    for v in row:
        acc = acc + v if acc + v < 10 else 10
    return acc


def test_float32_and_float64_reductions_of_maps() -> None:
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.maximum, np.float32(-np.inf), row * 2), r),
        [max([2 * v for v in row], default=-math.inf) for row in RF_ROWS],
        RF32,
        rel=1e-6,
    )
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.minimum, np.inf, np.exp(row)), r),
        [min([math.exp(v) for v in row], default=math.inf) for row in RF_ROWS],
        RF,
    )
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.multiply, 1.0, row), r),
        [math.prod(row) for row in RF_ROWS],
        RF,
    )
    nan_rows = sn.Ragged.from_list([[1.0, np.nan, 2.0], [], [np.inf, -np.inf], [3.0]])
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.maximum, -np.inf, row), r),
        [math.nan, -math.inf, math.inf, 3.0],
        nan_rows,
    )
    run(
        lambda r: sn.map(lambda row: sn.scan(np.add, 0.0, row), r),
        [[1.0, math.nan, math.nan], [], [math.inf, math.nan], [3.0]],
        nan_rows,
    )


# -- cond: branch packing, arrays out of branches, inside maps -----------------------------------


def test_cond_inside_map_returning_scalars_and_arrays() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.cond(n % 2 == 0, lambda: sn.reduce(np.add, 0, sn.iota(n)), lambda: -n), ns
        ),
        [sum(range(n)) if n % 2 == 0 else -n for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(
            lambda n: sn.cond(n > 2, lambda: sn.iota(n), lambda: sn.replicate(n, 7)), ns
        ),
        [list(range(n)) if n > 2 else [7] * n for n in NS.tolist()],
        NS,
    )
    run(
        lambda r: sn.map(
            lambda row: sn.cond(sn.length(row) > 1, lambda x: x * 2, lambda x: x - 1, row), r
        ),
        [[v * 2 for v in row] if len(row) > 1 else [v - 1 for v in row] for row in RI_ROWS],
        RI,
    )


def test_cond_in_inner_map_closing_over_both_levels() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.map(
                lambda i: sn.cond(
                    i < n // 2, lambda: i * n, lambda: sn.reduce(np.add, 0, sn.iota(i))
                ),
                sn.iota(n),
            ),
            ns,
        ),
        [[i * n if i < n // 2 else sum(range(i)) for i in range(n)] for n in NS.tolist()],
        NS,
    )


def test_nested_cond() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.cond(
                n > 1, lambda: sn.cond(n > 3, lambda: n * 100, lambda: n * 10), lambda: n - 1
            ),
            ns,
        ),
        [(n * 100 if n > 3 else n * 10) if n > 1 else n - 1 for n in NS.tolist()],
        NS,
    )


def test_cond_uniform_outside_maps() -> None:
    run(
        lambda x, c: sn.cond(
            c > 0, lambda: sn.map(lambda v: v + 1, x), lambda: sn.map(lambda v: v - 1, x)
        ),
        [v + 1 for v in NS.tolist()],
        NS,
        1,
    )
    run(
        lambda x, c: sn.cond(
            c > 0, lambda: sn.map(lambda v: v + 1, x), lambda: sn.map(lambda v: v - 1, x)
        ),
        [v - 1 for v in NS.tolist()],
        NS,
        -1,
    )


# -- loop: uniform and irregular trip counts, cond inside loop inside map ----------------------


def test_cond_inside_loop_inside_map() -> None:
    def f(ns):
        return sn.map(
            lambda n: sn.loop(
                n, lambda i, a: sn.cond(i % 2 == 0, lambda: a + i, lambda: a * 2), np.int64(1)
            ),
            ns,
        )

    def ref(n: int) -> int:
        a = 1
        for i in range(n):
            a = a + i if i % 2 == 0 else a * 2
        return a

    run(f, [ref(n) for n in NS.tolist()], NS)


def test_loop_uniform_trip_count_with_reduce_body() -> None:
    def f(r):
        return sn.map(
            lambda row: sn.loop(3, lambda i, a: a * 0.5 + sn.reduce(np.add, 0.0, row * i), 0.0), r
        )

    def ref(row: list[float]) -> float:
        a = 0.0
        for i in range(3):
            a = a * 0.5 + sum(v * i for v in row)
        return a

    run(f, [ref(row) for row in RF_ROWS], RF)


def test_loop_with_tuple_state() -> None:
    def f(ns):
        return sn.map(
            lambda n: sn.loop(n, lambda i, s: (s[1], s[0] + s[1]), (np.int64(0), np.int64(1))), ns
        )

    def fib(n: int) -> tuple[int, int]:
        a, b = 0, 1
        for _ in range(n):
            a, b = b, a + b
        return a, b

    run(f, ([fib(n)[0] for n in NS.tolist()], [fib(n)[1] for n in NS.tolist()]), NS)


def test_loop_inside_inner_map_depth_3() -> None:
    def f(ns):
        return sn.map(
            lambda n: sn.reduce(
                np.add,
                0,
                sn.map(lambda i: sn.loop(i, lambda j, a: a + j * n, np.int64(0)), sn.iota(n)),
            ),
            ns,
        )

    run(f, [sum(sum(j * n for j in range(i)) for i in range(n)) for n in NS.tolist()], NS)


def test_loop_with_array_state_uniform() -> None:
    def f(x):
        return sn.loop(3, lambda i, acc: sn.map(lambda v: v * 2 + i, acc), x)

    def ref(v: int) -> int:
        for i in range(3):
            v = v * 2 + i
        return v

    run(f, [ref(v) for v in NS.tolist()], NS)


# -- scatter ---------------------------------------------------------------------------------


def _scatter_ok(got: list[Any], dest: list[Any], idx: list[int], vals: list[Any]) -> bool:
    """sn.scatter's contract: positions no index names keep dest; a position named once gets
    its value; a position named several times gets one of its values (which one is
    unspecified, as in Futhark); out-of-range (and negative) indices are ignored."""
    written: dict[int, list[Any]] = {}
    for i, v in zip(idx, vals, strict=True):
        if 0 <= i < len(dest):
            written.setdefault(i, []).append(v)
    return len(got) == len(dest) and all(
        g in written.get(j, [d]) for j, (g, d) in enumerate(zip(got, dest, strict=True))
    )


def test_scatter_repeated_and_out_of_range_indices() -> None:
    idx, vals = [1, 3, 1, 9, -1, 3, 1], [10, 20, 30, 40, 50, 60, 70]
    got = sn.jit(lambda d, i, v: sn.scatter(d, i, v))(
        np.zeros(5, dtype=np.int64), np.array(idx), np.array(vals)
    )
    assert got.dtype == np.int64 and _scatter_ok(got.tolist(), [0] * 5, idx, vals)
    # per row: every row scatters into itself, indices repeating within the row
    got = sn.jit(
        lambda r: sn.map(lambda row: sn.scatter(row, sn.iota(sn.length(row)) % 2, row * 10), r)
    )(RI)
    assert isinstance(got, sn.Ragged) and got.dtype == np.int64
    for g, row in zip(rows(got), RI_ROWS, strict=True):
        assert _scatter_ok(g, row, [j % 2 for j in range(len(row))], [v * 10 for v in row])
    # without duplicates the result is determined: compiled == interpreted == reference
    run(
        lambda r: sn.map(
            lambda row: sn.scatter(row, sn.iota(sn.length(row))[::-1] - 1, row * 10), r
        ),
        [
            _scatter_ref(row, [j - 1 for j in range(len(row))][::-1], [v * 10 for v in row])
            for row in RI_ROWS
        ],
        RI,
    )


def test_scatter_sizes_from_enclosing_values() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.scatter(sn.replicate(n, -1), sn.iota(n)[::-1] // 2, sn.iota(n)), ns
        ),
        [
            _scatter_ref([-1] * n, [j // 2 for j in range(n)][::-1], list(range(n)))
            for n in NS.tolist()
        ],
        NS,
    )


def _scatter_ref(dest: list[int], idx: list[int], vals: list[int]) -> list[int]:
    out = list(dest)
    for i, v in zip(idx, vals, strict=True):
        if 0 <= i < len(out):
            out[i] = v
    return out


# -- depth 3 ---------------------------------------------------------------------------------


def test_depth3_map_map_reduce_iota() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.map(lambda i: sn.reduce(np.add, 0, sn.iota(i + 1) * n), sn.iota(n)), ns
        ),
        [[sum(j * n for j in range(i + 1)) for i in range(n)] for n in NS.tolist()],
        NS,
    )
    run(
        lambda ns: sn.map(
            lambda n: sn.reduce(
                np.maximum,
                -1,
                sn.map(lambda i: sn.reduce(np.add, 0, sn.range(i, n, 1)), sn.iota(n)),
            ),
            ns,
        ),
        [max([sum(range(i, n)) for i in range(n)], default=-1) for n in NS.tolist()],
        NS,
    )


def test_depth3_scan_of_inner_reductions() -> None:
    run(
        lambda r: sn.map(
            lambda row: sn.scan(
                np.add, 0, sn.map(lambda v: sn.reduce(np.add, 0, sn.iota(np.abs(v))), row)
            ),
            r,
        ),
        [list(np.cumsum([sum(range(abs(v))) for v in row]).tolist()) for row in RI_ROWS],
        RI,
    )


def test_depth3_free_arrays_at_every_level() -> None:
    w = np.array([1.0, -2.0, 0.5])

    def f(r):
        return sn.map(
            lambda row: sn.map(lambda v: sn.reduce(np.add, 0.0, sn.map(lambda u: u * v, w)), row), r
        )

    run(f, [[sum(u * v for u in w.tolist()) for v in row] for row in RF_ROWS], RF)


def test_depth3_cond_inside_inner_map_with_inner_iota() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.reduce(
                np.add,
                0,
                sn.map(
                    lambda i: sn.cond(
                        i % 2 == 1, lambda: sn.reduce(np.add, 0, sn.iota(i) * n), lambda: i
                    ),
                    sn.iota(n),
                ),
            ),
            ns,
        ),
        [
            sum(sum(j * n for j in range(i)) if i % 2 == 1 else i for i in range(n))
            for n in NS.tolist()
        ],
        NS,
    )


def test_depth3_slice_of_scan_of_map() -> None:
    run(
        lambda ns: sn.map(
            lambda n: sn.scan(np.add, 0, sn.map(lambda i: i * i, sn.iota(n)))[1:], ns
        ),
        [list(np.cumsum([i * i for i in range(n)]).tolist())[1:] for n in NS.tolist()],
        NS,
    )


def test_depth3_concat_of_two_inner_maps() -> None:
    run(
        lambda r: sn.map(
            lambda row: sn.concat(
                sn.map(lambda v: v * 2, row), sn.map(lambda i: i - 1, sn.iota(sn.length(row)))
            ),
            r,
        ),
        [[v * 2 for v in row] + [i - 1 for i in range(len(row))] for row in RI_ROWS],
        RI,
    )


def test_zip_of_row_and_its_scan_depth2() -> None:
    run(
        lambda r: sn.map(lambda row: sn.map(lambda a, b: a - b, row, sn.scan(np.add, 0, row)), r),
        [[a - b for a, b in zip(row, np.cumsum(row).tolist(), strict=True)] for row in RI_ROWS],
        RI,
    )


# -- regular inner dimensions and regular nests ------------------------------------------------


def test_rows_with_regular_inner_dimension() -> None:
    run(
        lambda r: sn.map(lambda row: sn.map(lambda p: p[0] * p[1], row), r),
        [[p[0] * p[1] for p in row] for row in R2_ROWS],
        R2,
    )
    run(
        lambda r: sn.map(lambda row: sn.reduce(np.add, 0, sn.map(lambda p: p.sum(), row)), r),
        [sum(sum(p) for p in row) for row in R2_ROWS],
        R2,
    )
    run(lambda r: sn.map(lambda row: sn.length(row), r), [len(row) for row in R2_ROWS], R2)


def test_regular_2d_nests() -> None:
    run(
        lambda m: sn.map(lambda row: sn.scan(np.add, 0.0, row), m),
        [list(np.cumsum(r).tolist()) for r in M2.tolist()],
        M2,
    )
    run(
        lambda m: sn.map(lambda row: sn.map(lambda v: np.where(v > 0, v, 0.0), row), m),
        [[max(v, 0.0) for v in r] for r in M2.tolist()],
        M2,
    )
    run(
        lambda m: sn.map(lambda row: sn.reduce(np.add, 0.0, row * row), m),
        [sum(v * v for v in r) for r in M2.tolist()],
        M2,
    )
    run(
        lambda m, ns: sn.map(lambda row, n: sn.reduce(np.add, 0.0, row[:n]), m, ns),
        [sum(r[:n]) for r, n in zip(M2.tolist(), [2, 0, 9], strict=True)],
        M2,
        np.array([2, 0, 9]),
    )


def test_map_over_iota_of_constant_inside_map() -> None:
    run(
        lambda ns: sn.map(lambda n: sn.map(lambda i: i * n, sn.iota(3)), ns),
        [[i * n for i in range(3)] for n in NS.tolist()],
        NS,
    )


# -- empty everywhere --------------------------------------------------------------------------


@pytest.mark.parametrize("arg", [EMPTY, np.zeros(4, dtype=np.int64)], ids=["no-rows", "zeros"])
def test_empty_everywhere_iota_programs(arg: np.ndarray) -> None:
    ns = arg.tolist()
    run(
        lambda ns: sn.map(
            lambda n: sn.reduce(
                np.add, 0, sn.map(lambda i: sn.reduce(np.add, 0, sn.iota(i)), sn.iota(n))
            ),
            ns,
        ),
        [0] * len(ns),
        arg,
    )
    run(lambda ns: sn.map(lambda n: sn.scan(np.add, 0, sn.iota(n)), ns), [[]] * len(ns), arg)
    run(lambda ns: sn.map(lambda n: sn.concat(sn.iota(n), sn.iota(n)), ns), [[]] * len(ns), arg)
    run(lambda ns: sn.map(lambda n: sn.loop(n, lambda i, a: a + i, n), ns), ns, arg)


def test_all_rows_empty() -> None:
    run(lambda r: sn.map(lambda row: sn.reduce(np.add, 0, row * 2), r), [0, 0, 0], ALL_EMPTY)
    run(lambda r: sn.map(lambda row: sn.scan(np.maximum, -5, row), r), [[], [], []], ALL_EMPTY)
    run(lambda r: sn.map(lambda row: sn.concat(row, row), r), [[], [], []], ALL_EMPTY)
    run(lambda r: sn.map(lambda row: row[1:3], r), [[], [], []], ALL_EMPTY)


# -- reductions over the outer level ---------------------------------------------------------


def test_reduce_of_map_results() -> None:
    run(
        lambda ns: sn.reduce(np.add, 0, sn.map(lambda n: sn.reduce(np.add, 0, sn.iota(n)), ns)),
        sum(sum(range(n)) for n in NS.tolist()),
        NS,
    )
    run(
        lambda r: sn.scan(np.maximum, -np.inf, sn.map(lambda row: sn.reduce(np.add, 0.0, row), r)),
        list(np.maximum.accumulate([sum(row) for row in RF_ROWS]).tolist()),
        RF,
    )
    run(
        lambda r: sn.reduce(
            _affine, (1, 0), (sn.map(sn.length, r) + 1, sn.map(lambda row: row.sum(), r))
        ),
        _affine_ref([(len(row) + 1, sum(row)) for row in RI_ROWS]),
        RI,
    )


# -- top-level arrays (the outermost level has one iteration) ----------------------------------


def test_top_level_concat_and_growing_loop_state() -> None:
    run(lambda n: sn.concat(sn.iota(1), sn.iota(2)), [0, 0, 1], 4)
    run(lambda n: sn.concat(sn.iota(0), sn.iota(n) * 2), [0, 2, 4, 6], 4)
    run(lambda n: sn.concat(sn.iota(n), sn.iota(0)), [0, 1, 2, 3], 4)
    run(lambda x: sn.concat(x, x[::-1]), [1.5, -2.0, -2.0, 1.5], np.array([1.5, -2.0]))
    run(lambda x: sn.concat(x, np.exp(x)), [], np.array([], dtype=np.float32))
    run(
        lambda n: sn.loop(n, lambda i, acc: sn.concat(acc, sn.iota(i)), sn.iota(0)),
        [j for i in range(4) for j in range(i)],
        4,
    )
    run(
        lambda ns: sn.map(
            lambda n: sn.reduce(
                np.add, 0, sn.loop(n, lambda i, acc: sn.concat(acc, sn.iota(1) + i), sn.iota(0))
            ),
            ns,
        ),
        [sum(range(n)) for n in NS.tolist()],
        NS,
    )


def test_inner_regular_results_with_empty_rows() -> None:
    """Rows of fixed-shape results, some rows empty (the interpreter once returned float64
    here: its empty inner map lost the body's shape)."""
    run(
        lambda r: sn.map(lambda row: sn.map(lambda v: sn.iota(3) + v, row), r),
        [[[v + j for j in range(3)] for v in row] for row in RI_ROWS],
        RI,
    )
    run(
        lambda r: sn.map(lambda row: sn.map(lambda p: sn.scan(np.add, 0, p), row), r),
        [[[p[0], p[0] + p[1]] for p in row] for row in R2_ROWS],
        R2,
    )
    run(
        lambda ns: sn.map(lambda n: sn.map(lambda i: sn.replicate(2, i * 0.5), sn.iota(n)), ns),
        [[[i * 0.5] * 2 for i in range(n)] for n in NS.tolist()],
        NS,
    )


# -- bad input: clear errors, compiled and interpreted -----------------------------------------

BOTH = pytest.mark.parametrize(
    "go", [sn.interpret, lambda f, *a: sn.jit(f)(*a)], ids=["interpret", "jit"]
)


@BOTH
def test_bad_sizes_and_ranges_at_depth(go: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match=r"^Range 0\.\.1\.\.<-2 is invalid$"):
        go(
            lambda ns: sn.map(
                lambda n: sn.map(lambda i: sn.reduce(np.add, 0, sn.iota(i - 2)), sn.iota(n)), ns
            ),
            NS,
        )
    with pytest.raises(ValueError, match=r"Range 4\.\.5\.\.<2 is invalid"):
        go(lambda ns: sn.map(lambda n: sn.range(n, 2, 1), ns), NS)
    with pytest.raises(ValueError, match=r"Range 0\.\.0\.\.<4 is invalid"):
        go(lambda ns: sn.map(lambda n: sn.range(0, n, n - n), ns), NS)
    with pytest.raises(ValueError, match="negative count -3"):
        go(lambda ns: sn.map(lambda n: sn.replicate(n - 3, 1), ns), NS)
    for fn, arg in (
        (lambda n: sn.iota(2.5), 3),
        (lambda n: sn.replicate(np.float32(2), n), 3),
        (lambda n: sn.loop(2.0, lambda i, a: a + 1, n), 3),
        (lambda ns: sn.map(lambda n: sn.loop(n * 0.5, lambda i, a: a + 1, n), ns), NS),
        (lambda ns: sn.map(lambda n: sn.range(0, n * 1.0, 1), ns), NS),
    ):
        with pytest.raises(TypeError, match="sizes must be integers, got float"):
            go(fn, arg)


@BOTH
def test_bad_operators_and_neutral_elements_in_maps(go: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match="not binary"):
        go(lambda r: sn.map(lambda row: sn.reduce(lambda a, b, c: a, 0, row), r), RI)
    with pytest.raises(TypeError, match="np.divmod is not binary"):
        go(lambda r: sn.map(lambda row: sn.scan(np.divmod, 0, row), r), RI)
    with pytest.raises(TypeError, match="must be a NumPy ufunc or a function"):
        go(lambda r: sn.map(lambda row: sn.reduce(3, 0, row), r), RI)
    with pytest.raises(TypeError, match=r"neutral element 0\.5 \(float\) does not match .* int64"):
        go(lambda r: sn.map(lambda row: sn.reduce(np.add, 0.5, row), r), RI)
    with pytest.raises(TypeError, match="neutral element '0'"):
        go(lambda r: sn.map(lambda row: sn.reduce(np.add, "0", row), r), RI)
    with pytest.raises(TypeError, match=r"neutral element 0 \(int\) does not match .* bool"):
        go(lambda r: sn.map(lambda row: sn.reduce(np.logical_or, 0, row), r), RB)
    with pytest.raises(TypeError, match="1 component"):
        go(lambda r: sn.map(lambda row: sn.scan(_affine, (0,), (row, row)), r), RI)
    with pytest.raises(TypeError, match="returns 1 value"):
        go(
            lambda r: sn.map(
                lambda row: sn.reduce(lambda a, b: (a[0] + b[0],), (0, 0), (row, row)), r
            ),
            RI,
        )


@BOTH
def test_mismatched_lengths_at_depth(go: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="different lengths"):
        go(lambda ns: sn.map(lambda n: sn.map(lambda a, b: a + b, sn.iota(n), sn.iota(2)), ns), NS)
    with pytest.raises(ValueError, match="different lengths"):
        go(lambda ns: sn.map(lambda n: sn.scatter(sn.iota(n), sn.iota(2), sn.iota(3)), ns), NS)
    with pytest.raises(ValueError, match="different lengths"):
        go(lambda r, ks: sn.map(lambda row, k: row + k, r, ks), RI, NS)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 3"):
        go(lambda ns, d: sn.map(lambda n: d[n], ns), NS, np.array([1.5, 2.5, 3.5]))


def test_reductions_over_every_axis_of_rows_of_pairs() -> None:
    """NumPy's row.sum()/prod()/max()/min() of a row whose elements are pairs reduce every
    axis (refused before: 'sn.reduce over arrays of arrays')."""
    run(lambda r: sn.map(lambda row: row.sum(), r), [sum(map(sum, row)) for row in R2_ROWS], R2)
    run(
        lambda r: sn.map(lambda row: row.prod(), r),
        [math.prod(v for p in row for v in p) for row in R2_ROWS],
        R2,
    )
    full = sn.Ragged(R2.values.astype(np.int32), [1, 3, 2])
    pairs = full.values.tolist()
    full_rows = [pairs[:1], pairs[1:4], pairs[4:]]
    run(
        lambda r: sn.map(lambda row: (row.max(), row.min(), row.sum()), r),
        (
            [max(v for p in row for v in p) for row in full_rows],
            [min(v for p in row for v in p) for row in full_rows],
            [sum(v for p in row for v in p) for row in full_rows],
        ),
        full,
    )
    with pytest.raises(ValueError, match="zero-size array"):
        sn.jit(lambda r: sn.map(lambda row: row.max(), r))(R2)
