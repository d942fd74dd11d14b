"""Python loops in jitted functions (issue 10): compile time and run time vs trip count.

For three kernels (1-D Jacobi, explicit Euler, exponential moving average) and trip counts
10, 100, 1,000, 10,000: Stax's first call (trace + compile + run, fresh compile cache), its
steady-state run time, NumPy's, and Numba `@njit`'s (its first call excluded), measured side by
side in one run. One command prints the table:

    python benchmarks/loops.py            # full sizes
    python benchmarks/loops.py --smoke    # small sizes, trip counts 10 and 100

With `--stencils`, a third table ([POLY], issue 10 item 3) times stencil time loops at sizes
beyond L2: Stax with its time loop skewed and tiled by the polyhedral layer
(`stax.poly.loop_nest`), Stax with the rolled driver (tiling off), NumPy and Numba. With
`--threads N` ([POLY2]) it times, on N threads, the tiled nest with parallel tiles vs the
rolled driver vs the tiled nest on one thread (wall clock: the CPU clock adds the threads').
With `--seidel TxN ...` ([SEIDEL]) it times npbench's seidel-2d (its own code: row store,
column loop): Stax's choice, the tiled wavefront, the rolled drivers, NumPy, Numba.

A second table times the kernels whose slices change length with the index or that store
elements at the index (trisolv, durbin, cholesky, lu, ludcmp, trmm, gramschmidt as npbench
writes them) against NumPy and Numba at several matrix orders.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np


def jacobi_1d(a, steps):
    b = a.copy()
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
    return a


@numba.njit(cache=False)
def jacobi_1d_numba(a, steps):
    b = a.copy()
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
    return a


def euler(y, dt, steps):
    for _ in range(steps):
        y = y + dt * (-0.5 * y + np.sin(y))
    return y


@numba.njit(cache=False)
def euler_numba(y, dt, steps):
    for _ in range(steps):
        y = y + dt * (-0.5 * y + np.sin(y))
    return y


def ema(x, alpha, steps):
    s = x[0] * 0.0
    for t in range(steps):
        s = alpha * x[t] + (1 - alpha) * s
    return s


@numba.njit(cache=False)
def ema_numba(x, alpha, steps):
    s = x[0] * 0.0
    for t in range(steps):
        s = alpha * x[t] + (1 - alpha) * s
    return s


def jacobi_2d(u, steps):
    for _ in range(steps):
        new = u.copy()
        new[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                 + u[1:-1, 2:])
        u = new
    return u


def heat_3d(a, b, steps):
    for _ in range(steps):
        b[1:-1, 1:-1, 1:-1] = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                        + a[:-2, 1:-1, 1:-1])
                               + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                          + a[1:-1, :-2, 1:-1])
                               + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * a[1:-1, 1:-1, 1:-1]
                                          + a[1:-1, 1:-1, :-2])
                               + a[1:-1, 1:-1, 1:-1])
        a[1:-1, 1:-1, 1:-1] = 0.5 * (b[1:-1, 1:-1, 1:-1] + a[1:-1, 1:-1, 1:-1])
    return a


def seidel_rows(a, steps):
    """Gauss-Seidel style sweeps over rows (npbench's seidel-2d without its column loop)."""
    for _ in range(steps):
        for i in range(1, a.shape[0] - 1):
            a[i, 1:-1] = (a[i - 1, :-2] + a[i - 1, 1:-1] + a[i - 1, 2:] + a[i, 1:-1]
                          + a[i + 1, :-2] + a[i + 1, 1:-1] + a[i + 1, 2:]) / 7.0
    return a


def rolled_drivers(fn: Callable[..., Any], make: Callable[[], tuple[Any, ...]]
                   ) -> Callable[..., Any]:
    """`stax.jit(fn)` compiled (by a first call) with the rolled C drivers: no loop nest of
    the polyhedral layer."""
    import stax
    from stax.poly import loop_nest

    plan_nest = loop_nest.plan_nest
    loop_nest.plan_nest = lambda *_: loop_nest.NestPlan("rolled_driver", "forced")
    try:
        rolled = stax.jit(fn)
        rolled(*make())
    finally:
        loop_nest.plan_nest = plan_nest
    return rolled


def seidel_row(seidel_2d: Callable[..., Any], tsteps: int, n: int, repeat: int,
               clock: Callable[[], float]) -> str:
    """[SEIDEL] npbench's seidel-2d (its kernel): Stax as it decides (the sweep's nest in its
    original order), the tiled wavefront forced, the rolled drivers forced (no SCoP), NumPy, Numba
    (`@njit` of the same function; npbench's own numba_n adds fastmath). Stax's results are
    NumPy's bit for bit."""
    import stax
    from stax.poly import loop_nest

    a = np.random.default_rng(0).random((n, n))
    make = lambda: (tsteps, n, a.copy())  # noqa: E731
    fresh_cache()
    chosen = stax.jit(seidel_2d)
    start = clock()
    args = make()
    chosen(*args)
    first = clock() - start
    want = make()
    seidel_2d(*want)
    assert np.array_equal(args[2], want[2])
    min_bytes, loop_nest.MIN_BYTES, loop_nest.TILE_SWEEPS = loop_nest.MIN_BYTES, 0, True
    tiled = stax.jit(seidel_2d)
    tiled(*make())
    loop_nest.MIN_BYTES, loop_nest.TILE_SWEEPS = min_bytes, False
    rolled = rolled_drivers(seidel_2d, make)
    strict, fast = numba.njit(seidel_2d), numba.njit(fastmath=True)(seidel_2d)
    strict(*make())
    fast(*make())
    t = [best(f, make, repeat if f is not seidel_2d or n <= 200 else 1, clock)
         for f in (chosen, tiled, rolled, seidel_2d, strict, fast)]
    return (f"{first * 1e3:>10.1f} " + " ".join(f"{x * 1e3:>9.2f}" for x in t) +
            f" {t[2] / t[0]:>11.2f} {t[3] / t[0]:>11.2f} {t[0] / t[4]:>11.2f} {t[0] / t[5]:>11.2f}")


jacobi_2d_numba = numba.njit(cache=False)(jacobi_2d)
seidel_rows_numba = numba.njit(cache=False)(seidel_rows)
heat_3d_numba = numba.njit(cache=False)(heat_3d)


def stencils(trips: int, scale: float) -> list[tuple[str, Callable[..., Any], Callable[..., Any],
                                                     Callable[[], tuple[Any, ...]]]]:
    rng = np.random.default_rng(0)
    a1 = rng.random(int(2_000_000 * scale))
    a2 = rng.random((int(1500 * scale ** 0.5),) * 2)
    a3 = rng.random((int(120 * scale ** (1 / 3)),) * 3)
    return [
        (f"jacobi-1d {a1.shape[0]}", jacobi_1d, jacobi_1d_numba, lambda: (a1.copy(), trips)),
        (f"jacobi-2d {a2.shape[0]}^2", jacobi_2d, jacobi_2d_numba, lambda: (a2.copy(), trips)),
        (f"heat-3d {a3.shape[0]}^3", heat_3d, heat_3d_numba,
         lambda: (a3.copy(), a3.copy(), trips)),
        (f"seidel-rows {a2.shape[0]}^2", seidel_rows, seidel_rows_numba,
         lambda: (a2.copy(), trips)),
    ]


def stencil_row(fn: Callable[..., Any], numba_fn: Callable[..., Any],
                make: Callable[[], tuple[Any, ...]], repeat: int,
                clock: Callable[[], float]) -> str:
    """Tiled (first call with an empty cache, checked against NumPy) and rolled Stax, NumPy,
    Numba; the polyhedral layer's rule for the loop."""
    import stax
    from stax.loops import records
    from stax.poly import loop_nest

    fresh_cache()
    loop_nest.TILE_SWEEPS = True  # measured here: the decision keeps sweeps rolled
    tiled = stax.jit(fn)
    start = clock()
    got = tiled(*make())
    first = clock() - start
    np.testing.assert_allclose(got, fn(*make()), rtol=1e-12)
    rule = records(tiled)[-1].body.nest.split("]")[0].split("[")[1]  # the outermost loop
    loop_nest.TILE_SWEEPS = False
    rolled = rolled_drivers(fn, make)
    numba_fn(*make())  # compile
    t = [best(f, make, repeat, clock) for f in (tiled, rolled, fn, numba_fn)]
    return (f"{first * 1e3:>10.1f} {t[0] * 1e3:>9.2f} {t[1] * 1e3:>9.2f} {t[2] * 1e3:>9.2f} "
            f"{t[3] * 1e3:>9.2f} {t[1] / t[0]:>12.2f} {t[2] / t[0]:>11.2f} "
            f"{t[0] / t[3]:>11.2f}  {rule}")


def threads_row(fn: Callable[..., Any], make: Callable[[], tuple[Any, ...]], repeat: int,
                clock: Callable[[], float]) -> str:
    """[POLY2] The tiled nest on OMP_NUM_THREADS threads (parallel tiles), the rolled driver on
    as many, the tiled nest on one thread, NumPy: interleaved samples of each."""
    import stax
    from stax.loops import records
    from stax.poly import loop_nest

    threads = os.environ.get("OMP_NUM_THREADS", "")
    widths, loop_nest.PARALLEL_WIDTHS = loop_nest.PARALLEL_WIDTHS, {2, 3, 4}  # measured here
    loop_nest.TILE_SWEEPS = True
    parallel = stax.jit(fn)
    parallel(*make())
    rule = records(parallel)[-1].body.nest.split("]")[0].split("[")[1]
    rolled = rolled_drivers(fn, make)
    os.environ["OMP_NUM_THREADS"] = "1"  # read when the nest is planned
    serial = stax.jit(fn)
    serial(*make())
    os.environ["OMP_NUM_THREADS"] = threads
    loop_nest.TILE_SWEEPS, loop_nest.PARALLEL_WIDTHS = False, widths
    t = [min(best(f, make, 1, clock) for _ in range(repeat))
         for f in (parallel, rolled, serial, fn)]
    return (f"{t[0] * 1e3:>9.2f} {t[1] * 1e3:>9.2f} {t[2] * 1e3:>9.2f} {t[3] * 1e3:>9.2f} "
            f"{t[1] / t[0]:>12.2f} {t[2] / t[0]:>12.2f}  {rule}")


# ---- slices whose length depends on the index (npbench's PolyBench forms, masked in Stax) ----

def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


def lu(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def ludcmp(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha
    return B


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


# Numba's np.dot needs SciPy (not installed here): the same loops with each dot product
# written as a sum of products.
@numba.njit(cache=False)
def trisolv_numba(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - np.sum(L[i, :i] * x[:i])) / L[i, i]
    return x


@numba.njit(cache=False)
def durbin_numba(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.sum(np.flip(r[:k]) * y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


@numba.njit(cache=False)
def cholesky_numba(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.sum(A[i, :j] * A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.sum(A[i, :i] * A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


@numba.njit(cache=False)
def lu_numba(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= np.sum(A[i, :j] * A[:j, j])
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= np.sum(A[i, :i] * A[:i, j])
    return A


@numba.njit(cache=False)
def ludcmp_numba(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= np.sum(A[i, :j] * A[:j, j])
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= np.sum(A[i, :i] * A[:i, j])
    for i in range(A.shape[0]):
        y[i] = b[i] - np.sum(A[i, :i] * y[:i])
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - np.sum(A[i, i + 1:] * x[i + 1:])) / A[i, i]
    return x, y


@numba.njit(cache=False)
def trmm_numba(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.sum(A[i + 1:, i] * B[i + 1:, j])
    B *= alpha
    return B


@numba.njit(cache=False)
def gramschmidt_numba(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.sum(A[:, k] * A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.sum(Q[:, k] * A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def masked_kernels(n: int) -> list[tuple[str, Callable[..., Any], Callable[..., Any],
                                         Callable[[], tuple[Any, ...]]]]:
    rng = np.random.default_rng(0)
    low = np.tril(rng.random((n, n))) + n * np.eye(n)
    b = rng.random(n)
    r = rng.random(n) / n
    m = rng.random((n, n))
    spd = m @ m.T + n * np.eye(n)
    return [
        ("trisolv", trisolv, trisolv_numba, lambda: (low, np.zeros(n), b)),
        ("durbin", durbin, durbin_numba, lambda: (r,)),
        ("cholesky", cholesky, cholesky_numba, lambda: (spd.copy(),)),
        ("lu", lu, lu_numba, lambda: (spd.copy(),)),
        ("ludcmp", ludcmp, ludcmp_numba, lambda: (spd.copy(), b)),
        ("trmm", trmm, trmm_numba, lambda: (1.5, m, low.T.copy())),
        ("gramschmidt", gramschmidt, gramschmidt_numba, lambda: (m + np.eye(n),)),
    ]


@numba.njit(cache=False)
def floyd_warshall_numba(path):  # npbench's numba_n (Numba has no ufunc.outer)
    for k in range(path.shape[0]):
        for i in range(path.shape[0]):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])
    return path


@numba.njit(cache=False)
def products_numba(data, first):  # [COV] data[:, i] @ data[:, i + first:] per i, row by row
    n, m = data.shape
    out = np.zeros((m, m), dtype=data.dtype)
    for i in range(m):
        for k in range(n):
            for j in range(i + first, m):
                out[i, j] += data[k, i] * data[k, j]
    return out


@numba.njit(cache=False)
def covariance_numba(M, float_n, data):  # npbench's numba_n, its `@` without BLAS (no scipy)
    data -= np.sum(data, axis=0) / float_n
    cov = products_numba(data, 0) / (float_n - 1.0)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M]
    return cov


@numba.njit(cache=False)
def correlation_numba(M, float_n, data):  # as covariance_numba
    mean = np.sum(data, axis=0) / float_n
    stddev = np.sqrt(np.sum((data - mean) ** 2, axis=0) / float_n)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = products_numba(data, 1)
    for i in range(M):
        corr[i, i] = 1.0
        corr[i + 1:M, i] = corr[i, i + 1:M]
    return corr


def npbench_kernels(path: str | None) -> list[tuple[str, Callable[..., Any], Callable[..., Any],
                                                    Callable[[], tuple[Any, ...]]]]:
    """npbench's adi, seidel-2d, floyd-warshall, covariance and correlation (its NumPy code
    and inputs, presets S and M; adi also at N = 400, 5 steps); Numba runs the same code
    (floyd-warshall: npbench's Numba version, row by row; [COV] covariance and correlation:
    npbench's `numba_n` versions, their products written as loops: Numba's `@` needs
    SciPy). Empty when npbench is not found."""
    import importlib

    from npbench_probe import load, locate

    root = locate(path, Path(tempfile.mkdtemp(prefix="loops-npbench-")))
    if root is None:
        return []
    out = []
    for name, presets in (("adi", ("S", "M", (5, 400))), ("seidel_2d", ("S", "M")),
                          ("floyd_warshall", ("S", "M")), ("covariance", ("S", "M")),
                          ("correlation", ("S", "M"))):
        for preset in presets:
            loaded = load(root, name, "S" if isinstance(preset, tuple) else preset, {})
            assert loaded is not None
            kernel, data, names = loaded
            if isinstance(preset, tuple):  # adi's TSTEPS, N
                data.update(TSTEPS=preset[0], N=preset[1], u=importlib.import_module(
                    "npbench.benchmarks.polybench.adi.adi").initialize(preset[1]))
            args = [data[a] for a in names]
            size = "x".join(str(data[a]) for a in ("TSTEPS", "M", "N") if a in data) or \
                str(args[0].shape[0])
            fast = {"floyd_warshall": floyd_warshall_numba, "covariance": covariance_numba,
                    "correlation": correlation_numba}.get(name) or numba.njit(cache=False)(kernel)
            out.append((f"{name} {size}", kernel, fast,
                        lambda args=args: tuple(a.copy() if isinstance(a, np.ndarray) else a
                                                for a in args)))
    return out


def kernels(n: int, trips: int) -> list[tuple[str, Callable[..., Any], Callable[..., Any],
                                             Callable[[], tuple[Any, ...]]]]:
    rng = np.random.default_rng(0)
    a = rng.random(n)
    y = rng.random(n)
    rows = rng.random((trips, n))
    return [
        ("jacobi-1d", jacobi_1d, jacobi_1d_numba, lambda: (a.copy(), trips)),
        ("euler", euler, euler_numba, lambda: (y, 0.001, trips)),
        ("ema (rows)", ema, ema_numba, lambda: (rows, 0.1, trips)),
    ]


def fresh_cache() -> None:
    """An empty compile cache but for what a machine builds once, not once per function: its
    probes (ISA level, parallel crossover), the per-call entry module (fast call) and the
    precompiled runtime header (each process builds or loads them once)."""
    os.environ["STAX_CACHE_DIR"] = tempfile.mkdtemp(prefix="stax-loops-bench-")
    from stax.backends.cpu.backend import PRECOMPILED
    from stax.runtime.compiler import isa_level, precompile
    from stax.runtime.fast import fastcall
    from stax.tiling.threads import crossover
    isa_level()
    crossover()
    fastcall()
    precompile(PRECOMPILED, isa_level())


def cpu_seconds() -> float:
    """This process's CPU time (ns resolution) and its finished children's (the compiler's
    runs; os.times counts them in clock ticks, 10 ms)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


CLOCKS = {"wall": time.perf_counter, "cpu": cpu_seconds}


def best(fn: Callable[..., Any], make: Callable[[], tuple[Any, ...]], repeat: int,
         clock: Callable[[], float]) -> float:
    """Seconds per call, best of `repeat` samples; a sample of a short call times a batch of
    calls (each on fresh arguments, made before the clock starts) of about 2 ms."""
    args = make()
    start = time.perf_counter()
    fn(*args)
    batch = max(1, min(2000, int(2e-3 / max(time.perf_counter() - start, 1e-7))))
    times = []
    for _ in range(repeat):
        calls = [make() for _ in range(batch)]
        start = clock()
        for args in calls:
            fn(*args)
        times.append((clock() - start) / batch)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, trip counts 10, 100")
    parser.add_argument("--n", type=int, default=None, help="array length")
    parser.add_argument("--orders", type=int, nargs="*", default=None,
                        help="matrix orders of the second table (only that table)")
    parser.add_argument("--kernels", nargs="*", default=None,
                        help="only the kernels of these names (npbench's: adi, seidel_2d, ...)")
    parser.add_argument("--stencils", type=int, nargs="?", const=50, default=None,
                        help="only the stencil table: tiled vs rolled at this trip count")
    parser.add_argument("--threads", type=int, default=None,
                        help="only the stencil table on this many threads: parallel tiles vs "
                             "the rolled driver vs tiles on one thread (use --clock wall)")
    parser.add_argument("--threads-steps", type=int, default=50,
                        help="time steps of the --threads table")
    parser.add_argument("--seidel", nargs="*", default=None, metavar="TxN",
                        help="npbench's seidel-2d at these TSTEPS x N (its S M L paper "
                             "presets: 8x50 15x100 40x200 100x400)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="array sizes of the stencil table, relative to the default")
    parser.add_argument("--npbench", default=None,
                        help="npbench's checkout (default: as npbench_probe.py finds it)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="cpu: process CPU time (with the compiler's, for first calls), "
                             "steadier than wall time on a loaded machine")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    n = args.n or (256 if args.smoke else 10_000)
    trip_counts = (10, 100) if args.smoke else (10, 100, 1000, 10_000)
    repeat = 2 if args.smoke else 3

    if args.stencils is not None:
        print(f"stencils beyond L2, {args.stencils} time steps; times in ms ({args.clock} clock;"
              f" load average {os.getloadavg()[0]:.2f}); first call = trace + isl + compile + "
              "run, empty cache")
        print(f"{'kernel':<18} {'first call':>10} {'tiled':>9} {'rolled':>9} {'numpy':>9} "
              f"{'numba':>9} {'rolled/tiled':>12} {'numpy/tiled':>11} {'tiled/numba':>11}  rule")
        for name, fn, numba_fn, make in stencils(args.stencils, args.scale):
            print(f"{name:<18} " + stencil_row(fn, numba_fn, make, repeat, clock), flush=True)
        return
    if args.seidel is not None:
        print(f"npbench seidel-2d (TSTEPS x N), ms ({args.clock} clock; load average "
              f"{os.getloadavg()[0]:.2f}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')})")
        print(f"{'size':<10} {'first call':>10} {'stax':>9} {'tiled':>9} {'rolled':>9} "
              f"{'numpy':>9} {'numba':>9} {'numba fm':>9} {'rolled/stax':>11} "
              f"{'numpy/stax':>11} {'stax/numba':>11} {'stax/nb fm':>11}")
        from npbench_probe import load, locate

        root = locate(args.npbench, Path(tempfile.mkdtemp(prefix="loops-npbench-")))
        loaded = load(root, "seidel_2d", "S", {}) if root is not None else None
        if loaded is None:
            raise SystemExit("--seidel needs npbench's checkout (--npbench PATH)")
        for size in args.seidel:
            tsteps, n = (int(x) for x in size.split("x"))
            print(f"{size:<10} " + seidel_row(loaded[0], tsteps, n, repeat, clock), flush=True)
        return
    if args.threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before OpenMP starts
        print(f"stencils beyond L2 on {args.threads} threads, {args.threads_steps} time steps; "
              f"ms ({args.clock} clock; load average {os.getloadavg()[0]:.2f})")
        print(f"{'kernel':<18} {'tiled par':>9} {'rolled':>9} {'tiled 1t':>9} {'numpy':>9} "
              f"{'rolled/par':>12} {'tiled1t/par':>12}  rule")
        for name, fn, _, make in stencils(args.threads_steps, args.scale):
            print(f"{name:<18} " + threads_row(fn, make, repeat, clock), flush=True)
        return
    print(f"n = {n}; times in ms ({args.clock} clock; load average {os.getloadavg()[0]:.2f}); "
          "first call = trace + compile + run with an empty cache (the machine's one-time "
          "probes, fast call and precompiled header excluded); first-run = first call less one "
          "warm run")
    header = (f"{'first call':>10} {'first-run':>9} {'stax':>9} {'numpy':>9} {'numba':>9} "
              f"{'numpy/stax':>10} {'stax/numba':>10}")
    print(f"{'kernel':<12} {'trips':>6} {header}  loop")
    for trips in trip_counts if args.orders is None else ():
        for name, fn, numba_fn, make in kernels(n, trips):
            if args.kernels is not None and name not in args.kernels:
                continue
            print(f"{name:<12} {trips:>6} " +
                  row(fn, numba_fn, make, repeat, clock, dict(rtol=1e-9)))
    sizes = args.orders or ((16, 64) if args.smoke else (64, 256, 1000))
    print("\nslices of index-dependent length (masked full-length form); n = matrix order")
    print(f"{'kernel':<12} {'n':>6} {header}  loops")
    for size in sizes:
        for name, fn, numba_fn, make in masked_kernels(size):
            if args.kernels is None or name in args.kernels:
                print(f"{name:<12} {size:>6} " +  # atol: rounding near 0
                      row(fn, numba_fn, make, repeat, clock, dict(rtol=1e-8, atol=1e-12)))
    if args.orders is not None:
        return
    print("\nnpbench's adi, seidel-2d, floyd-warshall, covariance, correlation (TSTEPS x N, "
          "M x N, or N)")
    print(f"{'kernel':<19} {header}  loops")
    for name, fn, numba_fn, make in npbench_kernels(args.npbench):
        if args.kernels is None or name.split(" ")[0] in args.kernels:
            print(f"{name:<19} " + row(fn, numba_fn, make, repeat, clock, dict(rtol=1e-8)))


def row(fn: Callable[..., Any], numba_fn: Callable[..., Any],
        make: Callable[[], tuple[Any, ...]], repeat: int, clock: Callable[[], float],
        tolerance: dict[str, float]) -> str:
    """One kernel's figures: Stax's first call with an empty cache (checked against NumPy),
    then Stax, NumPy and Numba (its first call excluded), and how Stax ran the loops."""
    import stax
    from stax.loops import records

    fresh_cache()
    jitted = stax.jit(fn)
    args, want_args = make(), make()
    start = clock()
    got = jitted(*args)
    first = clock() - start
    want = fn(*want_args)  # npbench's seidel-2d and floyd-warshall return None: the arguments
    for g, w in zip((got, *args), (want, *want_args), strict=True):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, **tolerance)
    numba_fn(*make())  # compile
    t_stax = best(jitted, make, repeat, clock)
    t_numpy = best(fn, make, repeat, clock)
    t_numba = best(numba_fn, make, repeat, clock)
    how = "; ".join("C" if r.compiled and "one C call" in r.decision else
                    "compiled, Python loop" if r.compiled else "unrolled"
                    for r in records(jitted))
    return (f"{first * 1e3:>10.1f} {(first - t_stax) * 1e3:>9.1f} {t_stax * 1e3:>9.3f} "
            f"{t_numpy * 1e3:>9.3f} {t_numba * 1e3:>9.3f} {t_numpy / t_stax:>10.2f} "
            f"{t_stax / t_numba:>10.2f}  {how}")


if __name__ == "__main__":
    main()
