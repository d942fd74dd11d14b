"""Shape-generic programs (issue 11): symbolic sizes, guards, dynamic=, cache_info()."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stax
from stax.ir.sym import ShapeEnv, c_expr, slice_indices


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def column_stats(x):
    return x.sum(0), x.var(0), x.max(0)


def transpose_add(x):
    return x.T + 2 * x


def _check(got, expected, rtol=2e-5, atol=1e-5):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def _shapes(rng: np.random.Generator, n: int, square: bool = False) -> list[tuple[int, int]]:
    out = []
    for _ in range(n):
        rows = int(rng.choice([2, 3, 7, 64, 129, 1000])) if rng.random() < 0.3 else \
            int(rng.integers(2, 400))
        cols = rows if square else int(rng.integers(2, 600))
        out.append((rows, cols))
    return out


@pytest.mark.parametrize("name", ["softmax", "layernorm", "column_stats", "transpose_add"])
def test_one_generic_program_serves_fifty_shapes(name):
    fn = {"softmax": softmax, "layernorm": layernorm, "column_stats": column_stats,
          "transpose_add": transpose_add}[name]
    f = stax.jit(fn)
    rng = np.random.default_rng(11)
    for rows, cols in _shapes(rng, 50, square=name == "transpose_add"):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        args = (x, rng.standard_normal(cols).astype(np.float32),
                rng.standard_normal(cols).astype(np.float32)) if name == "layernorm" else (x,)
        _check(f(*args), fn(*args), rtol=1e-4, atol=1e-4)
    info = f.cache_info()
    assert info.calls == 50
    assert info.compiles <= 2, (info, f.not_generic)
    assert info.generic == 1


def test_dynamic_true_is_generic_from_the_first_call_and_false_never():
    x = np.random.default_rng(0).standard_normal((5, 9))
    generic, special = stax.jit(softmax, dynamic=True), stax.jit(softmax, dynamic=False)
    for rows in (5, 6, 30):
        a = np.ascontiguousarray(np.resize(x, (rows, 9)))
        _check(generic(a), softmax(a))
        _check(special(a), softmax(a))
    assert generic.cache_info()[:4] == (3, 1, 1, 3)  # calls, compiles, generic, shapes kept
    assert special.cache_info()[:4] == (3, 3, 0, 0)
    with pytest.raises(ValueError, match="dynamic must be"):
        stax.jit(softmax, dynamic="yes")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8])
def test_dtypes_and_integer_division_by_a_symbolic_count(dtype):
    def f(x):
        return x.mean(0), x.sum(1) // 3, x * x.shape[1] - x.shape[0] // 2

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(1)
    for shape in [(4, 5), (17, 3), (2, 2), (100, 31)]:
        x = (rng.standard_normal(shape) * 20).astype(dtype)
        _check(g(x), f(x))
    assert g.cache_info().compiles == 1


def test_sizes_zero_and_one_are_their_own_classes():
    def f(x, y):
        return (x + y).sum(0), np.tanh(x) * 2

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(2)
    shapes = [(5, 7), (1, 7), (5, 1), (0, 7), (6, 8), (1, 1), (9, 3), (1, 4), (0, 0)]
    for shape in shapes:
        x = rng.standard_normal(shape)
        y = rng.standard_normal(shape[1:])
        _check(g(x, y), f(x, y))
    info = g.cache_info()
    assert info.compiles == len({tuple(d if d < 2 else -1 for d in s) for s in shapes})


def test_a_guard_that_fails_compiles_again():
    def f(x):
        return x[2:-3] * 2 + x[:5].sum()  # the slices' lengths depend on the size

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(3)
    for n in (40, 50, 4, 3, 2, 6, 41):
        x = rng.standard_normal(n)
        _check(g(x), f(x))
    assert g.cache_info().compiles >= 2  # short arrays break the guards of the first
    assert g.cache_info().generic == g.cache_info().compiles


def test_broadcasting_between_symbols_is_guarded():
    def f(x, y):
        return x * y + 1

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(4)
    for a, b in [((6, 4), (4,)), ((3, 9), (9,)), ((5, 5), (5,)), ((8, 2), (2,))]:
        x, y = rng.standard_normal(a), rng.standard_normal(b)
        _check(g(x, y), f(x, y))
    with pytest.raises(ValueError, match="broadcast"):
        g(rng.standard_normal((6, 4)), rng.standard_normal(5))


def test_strided_inputs_are_specialized_once_then_generic_on_copies():
    # the first strided shape keeps a program specialized to its strides; later shapes of the
    # class share one generic program that reads C-contiguous copies; axes in another memory
    # order (transposes, Fortran order) stay specialized, their results laid out as NumPy's
    g = stax.jit(softmax, dynamic=True)
    rng = np.random.default_rng(5)
    specialized = set()  # the signatures of the views in another memory order
    for shape in [(6, 10), (12, 8), (7, 7), (30, 9), (5, 40)]:
        base = rng.standard_normal(shape)
        for view in (base[:, ::2], base[::-1, ::-3], base[1:, 1:]):
            _check(g(view), softmax(view))
        for view in (base.T, np.asfortranarray(base)):
            got = g(view)
            specialized.add((view.shape, view.strides))
            _check(got, softmax(view))
            assert got.strides == softmax(view).strides
    assert g.cache_info().generic == 1
    assert g.cache_info().compiles == 2 + len(specialized)


@pytest.mark.parametrize("dynamic", [None, True])
def test_strided_argument_mutated_or_returned_stays_specialized(dynamic):
    def f(x, y):
        x += y  # the caller's strided array must change
        return x

    g = stax.jit(f, dynamic=dynamic)
    rng = np.random.default_rng(6)
    for n in [5, 9, 13, 9]:
        base, y = rng.standard_normal((n, 8)), rng.standard_normal(4)
        want_x = base[:, ::2].copy()
        want = f(want_x, y)
        view = base[:, ::2]
        got = g(view, y)
        assert got is view
        np.testing.assert_array_equal(view, want)
    assert g.cache_info().generic == 0
    assert "strided argument" in next(iter(g.not_generic.values()))


def test_sizes_needed_as_python_ints_stay_correct():
    def f(x):
        out = np.zeros(x.shape[0] + 1)  # a shape built from a size: specialized
        out[1:] = np.cumsum(x)
        return out

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(6)
    for n in (5, 9, 5, 13):
        x = rng.standard_normal(n)
        _check(g(x), f(x))


def test_scalar_arguments_and_reshapes():
    def f(x, s):
        rows = x.reshape(x.shape[0], -1)
        return rows.sum(1) * s, x.reshape(-1)[::2]

    g = stax.jit(f, dynamic=True)
    rng = np.random.default_rng(7)
    for shape in [(4, 3, 2), (5, 2, 6), (3, 3, 3)]:
        x = rng.standard_normal(shape)
        _check(g(x, 1.5), f(x, 1.5))


def test_symbolic_arithmetic_and_c_text():
    env = ShapeEnv()
    n, m = env.symbol(300), env.symbol(70)
    assert n * m - n > 0 and not env.guards  # decided for every size >= 2
    assert c_expr(-(-n // 64)) == "((63 + s0) / 64)"
    assert (4 * n + m) % 4 == m % 4
    assert slice_indices(slice(1, -1), n)[3] == n - 2
    assert env.guard_text() == ["s0 > 2"]  # x[1:-1] is not empty
    assert n > 100 and env.guard_text()[-1] == "s0 > 100"
    assert env.check({"s0": 101, "s1": 2}) and not env.check({"s0": 100, "s1": 2})
    assert int(m) == 70 and env.specialized == {"s1": 70}


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(0, 40), axis=st.sampled_from([0, 1, -1]))
def test_random_shapes_against_numpy(rows, cols, axis):
    x = np.random.default_rng(rows * 41 + cols).standard_normal((rows, cols))
    x[x > 2.5] = np.nan if rows % 3 == 0 else np.inf
    expected = _RANDOM_FN(x, axis)
    _check(_RANDOM(x, axis), expected, rtol=1e-9, atol=1e-12)


def _random_fn(x, axis):
    return np.cumsum(x, axis=axis) - x.sum(axis=axis, keepdims=True), np.abs(x[::-1]).sum()


_RANDOM_FN = _random_fn
_RANDOM = stax.jit(_random_fn, dynamic=True)


@pytest.mark.parametrize("name", ["transpose_add", "softmax", "column_stats"])
def test_every_tiling_variant_gives_numpys_result(name):
    fn = {"softmax": softmax, "column_stats": column_stats, "transpose_add": transpose_add}[name]
    f = stax.jit(fn, dynamic=True)
    rng = np.random.default_rng(8)
    f(rng.standard_normal((9, 9)).astype(np.float32))
    program = next(iter(f.cache.values())).program
    used = set()
    shapes = [(2, 2), (3, 17), (17, 3), (16, 16), (33, 65), (200, 3), (3, 5000), (700, 700),
              (1500, 1500), (5000, 4), (4, 20000), (5000, 16), (5000, 10)]
    for rows, cols in shapes:
        if name == "transpose_add":
            cols = rows
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        _check(f(x), fn(x), rtol=1e-4, atol=1e-4)
        if program.tiling_key is not None:
            used.add(program.tiling_key(rows, cols))
    if program.tiling_key is not None:  # every variant of the module was run
        assert used == set(range(len(program.variants)))


@pytest.mark.parametrize(("name", "form"), [("transpose_add", "tiled"),
                                            ("column_stats", "outer-reduction"),
                                            ("transpose_add", "vectorized")])
def test_each_form_is_correct_at_every_size(name, form):
    """A variant planned for large sizes may run on small ones (the solver memoizes per size
    class): every form must be right at any size, below its tile or block too."""
    fn = {"column_stats": column_stats, "transpose_add": transpose_add}[name]
    f = stax.jit(fn, dynamic=True, form=form)
    rng = np.random.default_rng(9)
    for n in (40, 2, 3, 15, 16, 17, 33, 300):
        x = rng.standard_normal((n, n if name == "transpose_add" else n + 7)).astype(np.float32)
        _check(f(x), fn(x), rtol=1e-4, atol=1e-4)
    assert f.cache_info().compiles == 1


def _views(x, step, start):
    flat = x.reshape(-1)[start::step]
    rows = x.reshape(x.shape[0], -1)[:, ::step].sum(1)
    turned = x.transpose(2, 0, 1).reshape(-1, x.shape[1]) * 2
    return flat, rows, turned[::-1]


_VIEWS = {(step, start): stax.jit(_views, dynamic=True) for step in (1, 2, 3) for start in (0, 1)}


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)),
       step=st.sampled_from([1, 2, 3]), start=st.sampled_from([0, 1]))
def test_reshapes_strides_and_divisions_by_sizes(shape, step, start):
    """Floor divisions and remainders by products of sizes (reshapes of symbolic shapes)."""
    x = np.random.default_rng(sum(shape)).standard_normal(shape)
    _check(_VIEWS[step, start](x, step, start), _views(x, step, start), rtol=1e-12, atol=1e-12)


def test_numpy_functions_of_sizes_stay_generic():
    def attention(q, k):
        s = q @ k.T / np.sqrt(q.shape[-1])
        return softmax(s), np.log(np.float64(2.0)) * k.shape[0]

    f = stax.jit(attention, dynamic=True)
    rng = np.random.default_rng(10)
    for n, d in ((5, 8), (7, 16), (3, 3), (9, 2)):
        q, k = rng.standard_normal((n, d)), rng.standard_normal((n + 1, d))
        _check(f(q, k), attention(q, k), rtol=1e-12, atol=1e-12)
    assert f.cache_info().compiles == 1 and f.cache_info().generic == 1


def test_python_floats_of_sizes_are_specialized_never_stale():
    """`float(y.shape[0])` is a Python value: the program is pinned to that size (a generic
    program once returned the traced size for other sizes)."""
    def f(y):
        return np.full((1, y.shape[1]), float(y.shape[0])), y * (1.0 / y.shape[0])

    g = stax.jit(f)
    for n in (232, 256, 100, 256, 7):
        y = np.ones((n, 3))
        _check(g(y), f(y), rtol=0, atol=0)


@pytest.mark.parametrize("bound", [2.5, 3.5, 3.0, float("inf")])
@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_sizes_compared_with_floats_guard_exactly(op, bound):
    import operator

    fn = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
          "==": operator.eq, "!=": operator.ne}[op]
    for traced_size in (2, 3, 4):
        env = ShapeEnv()
        n = env.symbol(traced_size)
        assert fn(n, bound) == fn(traced_size, bound)
        for other in range(2, 7):  # the guard admits exactly the sizes deciding alike
            assert env.check({"s0": other}) == (fn(other, bound) == fn(traced_size, bound))


def _transpose_other(x, y):
    return x.T + y


def test_transpose_of_one_input_added_to_another_every_variant():
    """`x.T + y`: the sizes of x and y are guarded equal; the tiled variant (planned for sizes
    made to satisfy those guards) and the vectorized one both give NumPy's result, partial
    tiles and sizes below a tile included."""
    f = stax.jit(_transpose_other, dynamic=True)
    rng = np.random.default_rng(12)
    f(rng.standard_normal((30, 7)).astype(np.float32), rng.standard_normal((7, 30)).astype(
        np.float32))
    program = next(iter(f.cache.values())).program
    assert len(program.variants) >= 2
    used = set()
    for rows, cols in [(2, 3), (7, 30), (17, 33), (16, 257), (100, 531), (531, 100), (3, 4099),
                       (5, 200000)]:
        x = rng.standard_normal((cols, rows)).astype(np.float32)
        y = rng.standard_normal((rows, cols)).astype(np.float32)
        _check(f(x, y), _transpose_other(x, y))
        used.add(program.tiling_key(cols, rows, rows, cols))
    assert used == set(range(len(program.variants)))
    assert f.cache_info().compiles == 1


def _row_stats(x):
    return x.sum(-1), x.max(-1), x.argmax(-1), x.argmin(-1), softmax(x)


def test_reductions_either_side_of_one_chunk():
    """A generic row reduction reduces a row of at most one chunk in one loop and longer rows
    in chunks (cascade): both paths, at the boundary, with NaN and inf."""
    f = stax.jit(_row_stats, dynamic=True)
    rng = np.random.default_rng(13)
    for cols in (3, 10, 4095, 4096, 4097, 8193):
        x = rng.standard_normal((3, cols)).astype(np.float32)
        x[1, cols // 2] = np.nan
        x[2, cols - 1] = np.inf
        with np.errstate(invalid="ignore"):  # inf - inf in the softmax, as NumPy has it
            _check(f(x), _row_stats(x), rtol=1e-4, atol=1e-5)
    assert f.cache_info().compiles == 1


def _column_total(x, w):
    return (x * w).sum(0), (x * w).sum()


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 70), cols=st.integers(0, 1100),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_warm_generic_calls_at_one_shape(rows, cols, dtype):
    """[GOVH] A generic program's warm call at a shape it ran before takes the entry bound to
    that shape (sizes and tiling key computed once; no frame while its buffers are small): the
    first and the warm calls give NumPy's results, a 0-d one as a NumPy scalar; the per-shape
    entry exists exactly where its buffers are small."""
    f = _WARM.setdefault(dtype, stax.jit(_column_total, dynamic=True))
    rng = np.random.default_rng(rows * 1000 + cols)
    x = rng.standard_normal((rows, cols)).astype(dtype)
    w = rng.standard_normal(cols).astype(dtype)
    if x.size:
        x.flat[rng.integers(x.size)] = np.nan
    expected = _column_total(x, w)
    for _ in range(3):  # compiles or runs, then warm calls
        got = f(x, w)
        assert type(got[1]) is type(expected[1])
        _check(got, expected, rtol=1e-4, atol=1e-4)
    at_shape = f.cache[f.key((x, w))].program.at_shape
    if rows > 1 and cols > 1:  # sizes 0 and 1 are classes of their own
        small = cols * np.dtype(dtype).itemsize < 4096
        assert at_shape is not None and (at_shape(x, w) is not None) == small


_WARM: dict[type, object] = {}


def _take_twice(x, i):
    return np.take(x, i) * 2.0


def test_warm_generic_call_raises_the_kernels_error_and_recovers():
    """[GOVH] A kernel's error on the per-shape entry (its flags on the C stack) raises as on
    the framed call, and the next call at that shape is correct."""
    f = stax.jit(_take_twice, dynamic=True)
    x = np.arange(10.0)
    for n in (3, 5, 3):
        i = np.arange(n) % 10
        for _ in range(2):
            np.testing.assert_array_equal(f(x, i), _take_twice(x, i))
        bad = i.copy()
        bad[-1] = 10
        with pytest.raises(IndexError, match="out of bounds"):
            f(x, bad)
        np.testing.assert_array_equal(f(x, i), _take_twice(x, i))
    assert f.cache_info().compiles == 1


def test_warm_entries_of_ever_new_shapes_are_bounded(monkeypatch):
    """[GEN] A serving loop with ever-new shapes keeps at most MAX_SHAPES of them warm (the least
    recently used dropped); a dropped shape is served again by its generic program (no compile)
    with NumPy's result."""
    monkeypatch.setattr(stax.api, "MAX_SHAPES", 8)
    f = stax.jit(layernorm, dynamic=True)
    rng = np.random.default_rng(5)
    cols = 50  # not a batch size (a guard s0 != s1 would give a second program)
    g, b = rng.standard_normal(cols), rng.standard_normal(cols)
    batches = [int(n) for n in rng.permutation(np.arange(2, 40))[:30]]
    for _round in range(2):
        for n in batches:
            x = rng.standard_normal((n, cols))
            for _ in range(2):  # the first call at a shape and a warm one
                _check(f(x, g, b), layernorm(x, g, b))
            info = f.cache_info()
            assert info.currsize <= 8 and info.maxsize == 8 and len(f.fast) <= 8
            assert len(f.cache) == info.currsize  # (only generic programs' shapes)
        assert f.cache_info().compiles == 1 and f.cache_info().generic == 1
    assert f.cache_info().currsize == 8
    recent = list(f.shapes)
    x = rng.standard_normal((batches[-8], cols))  # the least recently used of those kept
    assert f.compile(x, g, b) is f.generic[next(iter(f.generic))][0]  # (not the warm path)
    assert list(f.shapes) == recent[1:] + recent[:1]
    x = rng.standard_normal((45, cols))  # a new shape drops the least recent one
    _check(f(x, g, b), layernorm(x, g, b))
    assert list(f.shapes)[:-1] == recent[2:] + recent[:1] and len(f.shapes) == 8
    assert f.cache_info().compiles == 1
    f.clear_cache()
    assert f.cache_info().currsize == 0
