"""Jitted functions on Dask arrays, on a real `LocalCluster`, against NumPy."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import assert_matches

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import stax  # noqa: E402
from stax.dask import call, explain  # noqa: E402


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _data(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layernorm(x: Any, w: Any, b: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def colstats(x: Any) -> Any:
    return x.mean(0), x.var(0), x.std(0, ddof=1), x.max(0), x.sum()


def chain(x: Any, y: Any, s: float) -> Any:
    return np.tanh(x * s + y) * np.exp(-(y * y)) - np.abs(x)


def cumsums(x: Any) -> Any:
    return np.cumsum(x, axis=0) * 0.5, np.cumsum(x, axis=1)


def stencil(x: Any) -> Any:
    return x[2:, 1:-1] + x[:-2, 1:-1] - 2.0 * x[1:-1, 1:-1]


def mixed(x: Any, w: Any) -> Any:
    h = softmax(x * w) + np.cumsum(x, axis=0)
    centered = h - h.mean(0)
    return centered / (centered.std(0) + 1.0), np.abs(centered).max()


CASES = [
    ("chain", chain, lambda: (_data((1000, 48)), _data((1000, 48), seed=1), 0.7),
     (300, 48)),
    ("softmax", softmax, lambda: (_data((1000, 64)),), (300, 64)),
    ("layernorm", layernorm, lambda: (_data((777, 32)), _data((32,), seed=1),
                                      _data((32,), seed=2)), (250, 32)),
    ("colstats", colstats, lambda: (_data((1000, 40)),), (256, 40)),
    ("colstats-2d", colstats, lambda: (_data((600, 90), "float64"),), (200, 40)),
    ("cumsum", cumsums, lambda: (_data((500, 30), "float64"),), (128, 16)),
    ("stencil", stencil, lambda: (_data((300, 40), "float64"),), (100, 40)),
    ("mixed", mixed, lambda: (_data((700, 24)), _data((24,), seed=3)), (200, 24)),
]


@pytest.mark.parametrize("name,fn,make,chunks", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy_on_a_cluster(client: Any, name: str, fn: Any, make: Any,
                                    chunks: tuple[int, ...]) -> None:
    args = make()
    want = fn(*(a.copy() if isinstance(a, np.ndarray) else a for a in args))
    dargs = tuple(da.from_array(a, chunks=chunks) if isinstance(a, np.ndarray) and a.ndim == 2
                  else a for a in args)
    lazy = stax.jit(fn)(*dargs)
    leaves = lazy if isinstance(lazy, tuple) else (lazy,)
    assert all(isinstance(r, da.Array) for r in leaves)
    got = client.compute(lazy, sync=True)
    got = tuple(np.asarray(g) for g in got) if isinstance(want, tuple) else np.asarray(got)
    want = tuple(np.asarray(w) for w in want) if isinstance(want, tuple) else np.asarray(want)
    assert_matches(got, want, rtol=2e-5 if args[0].dtype == np.float32 else 1e-10, atol=1e-5)


def test_blocks_run_stax_programs(client: Any) -> None:
    x = da.from_array(_data((400, 16)), chunks=(100, 16))
    names = {k[0] if isinstance(k, tuple) else k for k in stax.jit(softmax)(x).dask}
    assert any(n.startswith("stax-softmax") for n in names)


def test_explain_names_each_cross_block_step() -> None:
    x = da.from_array(_data((400, 16)), chunks=(100, 16))
    text = explain(stax.jit(colstats), x)
    assert "tree-reduce" in text and "reduces across the chunks of axis [0]" in text
    assert "0 ops" not in text
    assert "tree-reduce" not in explain(stax.jit(softmax), x)
    assert "local (a stencil window along chunked axis 0 (halo 2))" in \
        explain(stax.jit(stencil), x)
    two = da.from_array(_data((400, 16)), chunks=(100, 8))  # both axes sliced: Dask's slicing
    assert "dask (slices axis 0 across chunks)" in explain(stax.jit(stencil), two)


def stencils(x: Any) -> Any:
    d = x[1:] - x[:-1]
    return (d.sum(0), np.abs(x[3:] * x[:-3]).max(), np.cumsum(x[1:] + x[:-1], axis=1),
            np.transpose(x[1:] * 2), (x[2:] > x[:-2]).all(0), d[:, 1:] * d[:, :-1],
            d.argmax(0), (x[2:] * x[:-2]).argmin())  # arg-reductions of windows: Dask's


@pytest.mark.parametrize("chunks", [(1, 24), (2, 24), (3, 24), (50, 24), (119, 24), (64, 8)])
def test_stencils_with_halos_match_numpy(chunks: tuple[int, int]) -> None:
    x = _data((120, 24), "float64", seed=4)
    x[5, 3] = np.nan
    got = stax.jit(stencils)(da.from_array(x, chunks=chunks))
    assert_matches(tuple(np.asarray(g) for g in da.compute(*got, scheduler="sync")),
                   stencils(x), atol=1e-12)


def test_threaded_scheduler() -> None:
    x = _data((500, 20), "float64")
    got = stax.jit(layernorm)(da.from_array(x, chunks=(120, 20)), np.ones(20), np.zeros(20))
    assert_matches(got.compute(scheduler="threads"), layernorm(x, np.ones(20), np.zeros(20)),
                   atol=1e-12)


def test_integer_and_bool_data() -> None:
    x = np.arange(-300, 300, dtype=np.int32).reshape(60, 10)

    def f(x: Any) -> Any:
        return (x * 3 - 1).sum(0), (x > 0).any(0), (x % 7).max()
    got = stax.jit(f)(da.from_array(x, chunks=(25, 10)))
    assert_matches(tuple(np.asarray(g) for g in da.compute(*got, scheduler="sync")), f(x))


def test_empty_and_one_chunk() -> None:
    x = _data((0, 8))
    got = stax.jit(softmax)(da.from_array(x, chunks=(4, 8)))
    assert got.compute(scheduler="sync").shape == (0, 8)
    y = _data((10, 8))
    assert_matches(stax.jit(colstats)(da.from_array(y))[1].compute(scheduler="sync"),
                   y.var(0))


def test_unknown_chunks_are_refused() -> None:
    x = da.from_array(_data((100, 4)), chunks=(25, 4))
    masked = x[x[:, 0] > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        stax.jit(softmax)(masked)


def test_assignment_into_a_dask_argument_is_refused() -> None:
    def f(x: Any) -> Any:
        x[0] = 1.0
        return x
    with pytest.raises(NotImplementedError, match="Dask arrays are immutable"):
        stax.jit(f)(da.from_array(_data((10, 4)), chunks=(5, 4)))


def mlp(x: Any, w: Any) -> Any:
    return np.maximum(x @ w, 0).sum(1), x.argmax(0), np.argmin(x, axis=1), (x.T @ x).sum()


@pytest.mark.parametrize("chunks", [(64, 40), (64, 16)])
def test_matmul_and_arg_reductions(chunks: tuple[int, int]) -> None:
    x, w = _data((300, 40), "float64"), _data((40, 16), "float64", seed=1)
    got = stax.jit(mlp)(da.from_array(x, chunks=chunks), w)
    assert_matches(tuple(np.asarray(g) for g in da.compute(*got, scheduler="sync")),
                   mlp(x, w), atol=1e-10)
    steps = call(stax.jit(mlp), (da.from_array(x, chunks=chunks), w)).steps
    kinds = [s.kind for s in steps if s.op.kind == "matmul"]
    assert kinds == ["local" if chunks[1] == 40 else "dask", "dask"]  # x @ w, then x.T @ x


def test_a_graph_break_is_a_clear_error() -> None:
    def f(x: Any) -> Any:
        if x.sum() > 0:  # Python control flow on array values
            return x + 1
        return x - 1
    with pytest.raises(NotImplementedError, match="graph break"):
        stax.jit(f)(da.from_array(_data((10, 4)), chunks=(5, 4)))


def _dies_once(block: np.ndarray, marker: str) -> np.ndarray:
    """Kills its worker process the first time it runs on data (Dask then retries); Dask's
    own calls on empty blocks (to infer the output type) pass through."""
    if block.size and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return block


def test_a_worker_dying_mid_computation_changes_nothing(client: Any, tmp_path: Any) -> None:
    x = _data((400, 16))
    flaky = da.from_array(x, chunks=(100, 16)).map_blocks(
        _dies_once, str(tmp_path / "died"), dtype=x.dtype, meta=np.empty((0, 0), x.dtype))
    got = client.compute(stax.jit(layernorm)(flaky, np.ones(16, np.float32),
                                             np.zeros(16, np.float32)), sync=True)
    assert (tmp_path / "died").exists()
    assert_matches(np.asarray(got), layernorm(x, np.ones(16, np.float32),
                                              np.zeros(16, np.float32)), rtol=2e-5, atol=1e-5)


# ---- reductions across chunks in one pass: partials, var by count/mean/M2, arg-reductions ----

def stats(x: Any) -> Any:
    return (x.mean(0), x.var(0), x.std(0, ddof=1), x.min(0), x.argmax(0), np.argmin(x, axis=0),
            x.argmax(), x.argmin(keepdims=True), np.argmax(x, axis=1))


def _stats_data(dtype: str) -> np.ndarray:
    """Ties across blocks, NaN in two blocks of one column, infinities, a constant column."""
    x = np.random.default_rng(5).integers(-20, 20, (250, 12)).astype(dtype)
    x[:, 1] = 3
    x[10, 2] = x[150, 2] = 99  # the largest value of column 2 twice, in different blocks
    x[40, 4] = x[5, 4] = -99
    if x.dtype.kind == "f":
        x[200, 0] = x[3, 0] = np.nan
        x[:, 5] = -np.inf
        x[130, 6] = np.nan  # a later block's NaN beats every value of the earlier blocks
    return x


@pytest.mark.parametrize("dtype,chunks", [
    ("float32", (64, 12)),  # ragged row chunks
    ("float64", (64, 5)),  # chunked along both axes (ragged columns)
    ("int32", (100, 12)),
    ("float64", ((0, 100, 0, 150), (12,))),  # empty blocks
])
def test_statistics_and_arg_reductions_across_chunks(client: Any, dtype: str,
                                                     chunks: Any) -> None:
    x = _stats_data(dtype)
    with np.errstate(invalid="ignore"):
        want = stats(x)
    got = client.compute(stax.jit(stats)(da.from_array(x, chunks=chunks)), sync=True)
    assert_matches(tuple(np.asarray(g) for g in got), want,
                   rtol=2e-5 if dtype == "float32" else 1e-12, atol=1e-12)


def colstats3(x: Any) -> Any:
    return x.mean(0), x.var(0), x.max(0)


def test_column_statistics_read_each_block_once() -> None:
    from dask.highlevelgraph import HighLevelGraph

    x = da.from_array(_data((1000, 40)), chunks=(256, 40))
    lazy = stax.jit(colstats3)(x)
    graph = HighLevelGraph.merge(*(a.dask for a in lazy))
    readers = [name for name, deps in graph.dependencies.items() if x.name in deps]
    assert len(readers) == 1 and readers[0].startswith("stax-colstats3-partials-sum-moment-max")
    assert len(graph.layers[readers[0]]) == x.numblocks[0]  # one program per block
    text = explain(stax.jit(colstats3), x)
    assert "count/mean/M2 partials" in text
    # four reductions (the mean's sum twice: inside var with keepdims) share the pass
    assert text.count("one pass over the blocks with sum(v0), moment(v0), max(v0)") == 4


def test_explain_says_where_dask_rechunks() -> None:
    def flatten(x: Any) -> Any:
        return x.reshape(-1) * 2.0
    x = _data((100, 8), "float64")
    dx = da.from_array(x, chunks=(30, 4))
    assert "reshapes chunked axes; Dask rechunks here" in explain(stax.jit(flatten), dx)
    assert_matches(stax.jit(flatten)(dx).compute(scheduler="sync"), flatten(x))


def test_threads_per_task_share_the_cores(client: Any) -> None:
    from stax.dask import default_threads

    want = max(1, (os.cpu_count() or 1) // 2)  # 2 workers x 1 thread on this host
    assert default_threads() == want
    x = da.from_array(_data((40, 4)), chunks=(10, 4))
    assert f"Stax threads per block task: {want} (the cores per Dask task thread" in \
        explain(stax.jit(softmax), x)
    assert "threads per block task: 3 (as given" in explain(stax.jit(softmax, threads=3), x)


def test_unsupported_dtypes_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="dtype datetime64"):
        stax.jit(colstats3)(da.from_array(np.ones((6, 2), "datetime64[s]"), chunks=(3, 2)))
    z = da.from_array(np.ones((6, 2), np.complex64), chunks=(3, 2))
    with pytest.raises(NotImplementedError, match="argmax of complex values"):
        stax.jit(lambda z: z.argmax(0))(z)


def test_reductions_of_3d_blocks_over_several_chunked_axes() -> None:
    def f(x: Any) -> Any:
        return x.var(), x.std(axis=(0, 2), ddof=2), x.argmax(2), x.argmin(1), x.mean(1)
    x = _data((20, 9, 6), "float64", seed=6)
    x[3, :, 2] = 5.0  # ties along axes 1 and 2 across blocks
    got = stax.jit(f)(da.from_array(x, chunks=(7, 4, 3)))
    assert_matches(tuple(np.asarray(g) for g in da.compute(*got, scheduler="sync")), f(x),
                   atol=1e-12)
