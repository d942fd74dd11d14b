"""A tenth wave of the wild corpus (s12 HUNT5): ordinary NumPy programs in styles the first nine
waves use least — Python structure around the arrays (helper functions calling each other,
tuple state threaded through ODE steppers, `while` loops with a data-dependent stop on graphs,
`functools.reduce`, `zip`/`enumerate` over rows, list comprehensions stacked back, `math`
functions of Python scalars, dicts of parameters), and NumPy functions used with their rarer
keywords: ufuncs with `where=` and `out=` together, reductions with `dtype=`/`keepdims=`/
`where=`, `np.select`/`np.piecewise`/`np.vectorize`/`np.apply_along_axis`, `np.diff(prepend=,
append=)`, `np.trapezoid`, `np.isclose`, `np.round(decimals=)` including negative ones,
`divmod` of negatives, bit operations and integer wrap-around, complex arithmetic,
`np.unique(return_inverse=, axis=)`, `np.lexsort`, `argpartition` kNN, `ufunc.reduceat` and
`ufunc.outer`, `np.histogram2d`, stride tricks, `np.errstate` around divisions.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild10 [names]` prints each function's class.

Counts (112 functions): on main 6b03e55 82 compiled, 26 break, 4 FAIL — writes through `A.flat`
were lost (a graph break's flatiter over a copy), np.positive returned the caller's array, NaNs
of complex numbers were not skipped by np.nansum/nanmean/nanvar/nanstd, and `np.errstate`
inside the function was ignored for integer and cast flags (ERR's 6aba51f fixed that one); after
the fixes 89 compiled, 23 break, 0 FAIL (np.apply_along_axis, np.vander, np.c_, np.nanprod/
nancumsum, np.fabs compile). Still breaks: Python control flow on values (`while
frontier.any()`, np.allclose / np.array_equal as Python bools), a NumPy constant indexed by a
traced scalar (`iu[0][best]`), `np.logical_and.reduce([m1, m2])` of a list (NumPy converts
it), ndarray.strides / as_strided, np.unique(axis=), np.histogram2d, np.geomspace,
np.sort_complex, np.real_if_close, np.iscomplexobj, np.vectorize, data-dependent lengths of
size 1 and bincount lengths, float() of traced values.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, prices, run_case, wild
from corpus.test_corpus_wild9 import ints

CASES10: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES10)


# ---- finance --------------------------------------------------------------------------------

@case(lambda r: (prices(r, 60),), lambda r: (prices(r, 2).astype("float32"),),
      lambda r: (np.array([100.0]),))
def max_drawdown_duration(p):
    peak = np.maximum.accumulate(p)
    dd = p / peak - 1.0
    under = dd < 0
    starts = np.diff(under.astype(np.int8), prepend=0, append=0)
    return dd.min(), np.count_nonzero(starts == 1), np.abs(starts).sum() // 2


@case(lambda r: (normal(r, 40) * 0.01, 0.2), lambda r: (normal(r, 1, dtype="float32"), 0.5))
def ewma_volatility_loop(ret, lam):
    var = ret[0] ** 2
    out = np.empty_like(ret)
    for t, x in enumerate(ret):
        var = lam * var + (1 - lam) * x * x
        out[t] = math.sqrt(252) * np.sqrt(var)
    return out


@case(lambda r: (prices(r, 30), 5), lambda r: (prices(r, 6).astype("float32"), 6))
def rolling_sharpe_by_cumsum(p, w):
    r = np.diff(np.log(p))
    c1 = np.cumsum(np.insert(r, 0, 0.0))
    c2 = np.cumsum(np.insert(r * r, 0, 0.0))
    s1 = c1[w:] - c1[:-w]
    s2 = c2[w:] - c2[:-w]
    mu = s1 / w
    sd = np.sqrt(np.maximum(s2 / w - mu * mu, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, mu / sd, 0.0)


@case(lambda r: (prices(r, 25), 4), lambda r: (prices(r, 4), 4))
def rolling_extremes_windows(p, w):
    win = np.lib.stride_tricks.sliding_window_view(p, window_shape=w)
    hi = win.max(axis=-1)
    lo = win.min(axis=-1)
    pos = (p[w - 1:] - lo) / np.where(hi > lo, hi - lo, 1.0)
    return np.round(pos, decimals=3), win.argmax(axis=1)


@case(lambda r: (r.uniform(0.01, 0.2, 10), 1000.0, 12), lambda r: (np.array([0.05]), 1.0, 1))
def loan_schedules(rates, principal, months):
    i = rates / 12
    pay = principal * i / (1 - (1 + i) ** -months)
    bal = np.full_like(rates, principal)
    paid_interest = np.zeros_like(rates)
    for _ in range(months):
        interest = bal * i
        paid_interest += interest
        bal -= pay - interest
    return pay, np.round(bal, 6), paid_interest


@case(lambda r: (normal(r, 50, 4) * 0.01, np.array([0.4, 0.3, 0.2, 0.1])),
      lambda r: (normal(r, 3, 2, dtype="float32") * 0.01, np.array([0.5, 0.5], "float32")))
def portfolio_var_cvar(R, w):
    port = R @ w
    q = np.quantile(port, 0.05, method="lower")
    tail = port[port <= q]
    return q, tail.mean(), np.percentile(port, [1, 50, 99], method="nearest")


@case(lambda r: (ints(r, 0, 3, 30), normal(r, 30)), lambda r: (np.array([1, 1]), np.ones(2)))
def signal_positions_pnl(sig, ret):
    pos = np.select([sig == 0, sig == 1], [-1.0, 0.0], default=1.0)
    held = np.roll(pos, 1)
    held[0] = 0.0
    pnl = held * ret
    turnover = np.abs(np.diff(pos, prepend=0.0))
    return pnl.cumsum(), turnover.sum(dtype=np.float32)


# ---- physics and ODE steppers with tuple state ----------------------------------------------

def _rhs(state: tuple, k: float) -> tuple:
    x, v = state
    return v, -k * x


@case(lambda r: (normal(r, 5), normal(r, 5), 0.01, 30),
      lambda r: (np.array([1.0]), np.array([0.0]), 0.1, 3))
def rk2_tuple_state(x0, v0, dt, n):
    state = (x0, v0)
    for _ in range(n):
        k1 = _rhs(state, 2.0)
        mid = tuple(s + 0.5 * dt * d for s, d in zip(state, k1, strict=True))
        k2 = _rhs(mid, 2.0)
        state = tuple(s + dt * d for s, d in zip(state, k2, strict=True))
    x, v = state
    return x, v, 0.5 * v ** 2 + x ** 2


@case(lambda r: (r.uniform(-1, 1, (6, 2)), r.uniform(-1, 1, (6, 2)), 0.01, 10),
      lambda r: (np.zeros((1, 2)), np.ones((1, 2)), 0.5, 2))
def leapfrog_particles_in_box(pos, vel, dt, steps):
    pos = pos.copy()
    vel = vel.copy()
    for _ in range(steps):
        vel -= 0.5 * dt * pos
        pos += dt * vel
        hit = np.abs(pos) > 1.0
        vel[hit] *= -1.0
        pos = np.clip(pos, -1.0, 1.0)
        vel -= 0.5 * dt * pos
    return pos, vel, (vel ** 2).sum(axis=1, keepdims=True)


@case(lambda r: (np.linspace(0, 1, 21) ** 2, 0.05), lambda r: (np.zeros(3), 1.0),
      lambda r: (np.linspace(0, 1, 9).astype("float32"), 0.125))
def trapezoid_and_simpson(y, dx):
    t = np.trapezoid(y, dx=dx)
    x = np.arange(y.size) * dx
    t2 = np.trapezoid(y, x)
    cum = np.concatenate(([0.0], np.cumsum((y[1:] + y[:-1]) * dx / 2)))
    return t, t2, cum


@case(lambda r: (normal(r, 16, 16),), lambda r: (normal(r, 3, 5).T,),
      lambda r: (normal(r, 4, 4, dtype="float32"),))
def field_gradient_magnitude(phi):
    gy, gx = np.gradient(phi, 0.5, 2.0)
    mag = np.hypot(gx, gy)
    div = np.gradient(gx, axis=1) + np.gradient(gy, axis=0)
    return mag, div, np.unravel_index(np.argmax(mag), mag.shape)


@case(lambda r: (np.ones(20), 0.4, 25), lambda r: (np.zeros(3), 0.1, 2))
def heat_rod_fixed_ends(u, alpha, steps):
    u = u.astype(np.float64)
    u[0], u[-1] = 0.0, 0.0
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (0.1, 0.0, 1.0, 200), lambda r: (0.5, 1.0, 0.0, 5))
def pendulum_scalar_loop(theta, omega, g, n):
    dt = 0.01
    ts = np.zeros(n)
    for i in range(n):
        omega -= g * math.sin(theta) * dt
        theta += omega * dt
        ts[i] = theta
    return ts, np.abs(ts).max()


@case(lambda r: (r.uniform(0, 1, (8, 3)),), lambda r: (r.uniform(0, 1, (2, 3)),))
def center_of_mass_and_inertia(p):
    m = np.linspace(1, 2, p.shape[0])
    com = np.average(p, axis=0, weights=m)
    d = p - com
    I = np.einsum("i,ij,ik->jk", m, d, d)
    evals = np.linalg.eigvalsh(np.trace(I) * np.eye(3) - I)
    return com, evals


# ---- clustering and nearest neighbours ------------------------------------------------------

@case(lambda r: (normal(r, 30, 2), normal(r, 3, 2)),
      lambda r: (normal(r, 4, 2, dtype="float32"), normal(r, 4, 2, dtype="float32")))
def kmeans_two_iterations(X, C):
    for _ in range(2):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        lab = d.argmin(axis=1)
        counts = np.bincount(lab, minlength=C.shape[0])
        sums = np.zeros_like(C)
        np.add.at(sums, lab, X)
        C = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
    return C, lab


@case(lambda r: (normal(r, 20, 3), normal(r, 5, 3), 3),
      lambda r: (normal(r, 4, 2), normal(r, 1, 2), 1))
def knn_argpartition(train, query, k):
    d = np.linalg.norm(query[:, None] - train[None], axis=-1)
    idx = np.argpartition(d, k - 1, axis=1)[:, :k]
    nd = np.take_along_axis(d, idx, axis=1)
    order = np.argsort(nd, axis=1, kind="stable")
    return np.take_along_axis(nd, order, axis=1)


@case(lambda r: (ints(r, 0, 4, 25), normal(r, 25, 2)),
      lambda r: (np.zeros(3, int), np.ones((3, 2))))
def knn_majority_vote(labels, X):
    d = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    np.fill_diagonal(d, np.inf)
    nn = np.argsort(d, axis=1)[:, :2]
    votes = labels[nn]
    counts = np.apply_along_axis(np.bincount, 1, votes, minlength=4)
    return counts.argmax(axis=1)


@case(lambda r: (normal(r, 12, 2),), lambda r: (normal(r, 2, 2),))
def single_linkage_min_distance(P):
    diff = np.subtract.outer(P[:, 0], P[:, 0]) ** 2 + np.subtract.outer(P[:, 1], P[:, 1]) ** 2
    iu = np.triu_indices(P.shape[0], k=1)
    dd = np.sqrt(diff[iu])
    best = np.argmin(dd)
    return dd[best], iu[0][best], iu[1][best]


# ---- graphs on adjacency matrices -----------------------------------------------------------

def _ring(n: int) -> np.ndarray:
    a = np.zeros((n, n), dtype=bool)
    idx = np.arange(n)
    a[idx, (idx + 1) % n] = True
    return a | a.T


@case(lambda r: (_ring(8), 0), lambda r: (r.uniform(size=(7, 7)) < 0.3, 2),
      lambda r: (np.zeros((1, 1), bool), 0))
def bfs_levels_while(adj, src):
    n = adj.shape[0]
    level = np.full(n, -1)
    level[src] = 0
    frontier = np.zeros(n, dtype=bool)
    frontier[src] = True
    d = 0
    while frontier.any():
        d += 1
        nxt = adj[frontier].any(axis=0) & (level < 0)
        level[nxt] = d
        frontier = nxt
    return level


@case(lambda r: (r.uniform(size=(6, 6)) < 0.4,), lambda r: (np.eye(3, dtype=bool),))
def transitive_closure_matmul(adj):
    reach = adj | np.eye(adj.shape[0], dtype=bool)
    for _ in range(adj.shape[0]):
        reach = (reach.astype(np.int32) @ reach.astype(np.int32)) > 0
    return reach, reach.sum(axis=1)


@case(lambda r: (r.uniform(0, 1, (5, 5)),), lambda r: (np.array([[0.0, 1.0], [1.0, 0.0]]),))
def pagerank_power_iteration(W):
    n = W.shape[0]
    out_deg = W.sum(axis=1, keepdims=True)
    P = np.divide(W, out_deg, out=np.full_like(W, 1.0 / n), where=out_deg > 0)
    r = np.full(n, 1.0 / n)
    for _ in range(30):
        r = 0.15 / n + 0.85 * (r @ P)
    return r / r.sum()


@case(lambda r: (r.uniform(1, 9, (5, 5)),), lambda r: (np.full((2, 2), np.inf),))
def floyd_warshall_outer(D):
    D = D.copy()
    np.fill_diagonal(D, 0)
    for k in range(D.shape[0]):
        D = np.minimum(D, np.add.outer(D[:, k], D[k, :]))
    return D


@case(lambda r: (r.uniform(size=(9, 9)) < 0.25,), lambda r: (np.zeros((2, 2), bool),))
def degree_statistics(adj):
    sym = adj | adj.T
    np.fill_diagonal(sym, False)
    deg = sym.sum(axis=0)
    vals, inverse, counts = np.unique(deg, return_inverse=True, return_counts=True)
    tri = np.trace(np.linalg.matrix_power(sym.astype(np.int64), 3)) // 6
    return vals, counts, inverse, tri


# ---- image morphology and masks -------------------------------------------------------------

def _shifts(m: np.ndarray) -> list[np.ndarray]:
    p = np.pad(m, 1, constant_values=False)
    return [p[1 + dy:p.shape[0] - 1 + dy, 1 + dx:p.shape[1] - 1 + dx]
            for dy in (-1, 0, 1) for dx in (-1, 0, 1)]


@case(lambda r: (r.uniform(size=(10, 12)) < 0.5,), lambda r: (np.ones((1, 1), bool),),
      lambda r: ((r.uniform(size=(6, 5)) < 0.5).T,))
def dilate_erode_open(mask):
    dil = functools.reduce(np.logical_or, _shifts(mask))
    ero = functools.reduce(np.logical_and, _shifts(mask))
    opened = functools.reduce(np.logical_or, _shifts(ero))
    return dil, ero, opened, (dil & ~ero).sum()


@case(lambda r: (r.integers(0, 256, (9, 9), dtype=np.uint8),),
      lambda r: (r.integers(0, 256, (2, 3), dtype=np.uint8),))
def median3_edge_pad(im):
    p = np.pad(im, 1, mode="edge")
    stack = np.stack([p[i:i + im.shape[0], j:j + im.shape[1]] for i in range(3) for j in range(3)])
    return np.median(stack, axis=0).astype(np.uint8), np.sort(stack, axis=0)[4]


@case(lambda r: (r.integers(0, 256, (8, 8), dtype=np.uint8), 3),
      lambda r: (r.integers(0, 256, (4, 6), dtype=np.uint8)[:, ::2], 1))
def local_contrast_integral(im, k):
    ii = np.pad(im.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    h, w = im.shape
    ys = np.clip(np.arange(h) - k, 0, h)
    ye = np.clip(np.arange(h) + k + 1, 0, h)
    xs = np.clip(np.arange(w) - k, 0, w)
    xe = np.clip(np.arange(w) + k + 1, 0, w)
    box = ii[ye][:, xe] - ii[ys][:, xe] - ii[ye][:, xs] + ii[ys][:, xs]
    area = np.outer(ye - ys, xe - xs)
    mean = box / area
    return np.clip(im + (im - mean), 0, 255).astype(np.uint8)


@case(lambda r: (r.integers(0, 256, (6, 7, 3), dtype=np.uint8),),
      lambda r: (r.integers(0, 256, (1, 2, 3), dtype=np.uint8),))
def hsv_value_saturation(rgb):
    f = rgb.astype(np.float32) / 255
    v = f.max(axis=2)
    c = v - f.min(axis=2)
    s = np.divide(c, v, out=np.zeros_like(v), where=v != 0)
    hue_idx = np.argmax(f, axis=2)
    return v, s, hue_idx, np.packbits(s > 0.5, axis=-1)


@case(lambda r: (r.integers(0, 4, (7, 7)),), lambda r: (np.zeros((3, 3), np.int64),))
def label_boundaries(lab):
    edge = np.zeros(lab.shape, dtype=bool)
    edge[:-1, :] |= lab[:-1, :] != lab[1:, :]
    edge[:, :-1] |= lab[:, :-1] != lab[:, 1:]
    ids, areas = np.unique(lab, return_counts=True)
    perim = np.bincount(lab[edge], minlength=ids.max() + 1)[ids]
    return edge, areas, perim


@case(lambda r: (r.uniform(0, 1, (12, 12)),), lambda r: (r.uniform(0, 1, (5, 3)).T,))
def rot_flip_augment(im):
    outs = [np.rot90(im, k) for k in range(4)] + [np.flipud(im), np.fliplr(im)]
    return [o.sum(axis=0)[:2] for o in outs], np.rot90(im, -1, axes=(1, 0))


# ---- data wrangling -------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 3, 20), ints(r, 0, 4, 20), normal(r, 20)),
      lambda r: (np.array([1, 0, 1]), np.array([2, 2, 1]), np.array([1.0, 2.0, 3.0])))
def groupby_two_keys_lexsort(a, b, v):
    order = np.lexsort((b, a))
    keys = np.stack([a[order], b[order]], axis=1)
    new = np.ones(len(order), dtype=bool)
    new[1:] = np.any(keys[1:] != keys[:-1], axis=1)
    starts = np.flatnonzero(new)
    sums = np.add.reduceat(v[order], starts)
    return keys[starts], sums


@case(lambda r: (ints(r, 0, 5, 12, 2),), lambda r: (np.array([[1, 2], [1, 2], [0, 0]]),))
def unique_rows_inverse(P):
    rows, inv, cnt = np.unique(P, axis=0, return_inverse=True, return_counts=True)
    return rows, inv.ravel(), cnt, rows[inv.ravel()] - P


@case(lambda r: (normal(r, 15),), lambda r: (np.array([2.0, 2.0, 1.0, np.nan]),),
      lambda r: (np.zeros(0),))
def stable_ranks_and_ties(x):
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size, dtype=np.intp)
    ranks[order] = np.arange(x.size)
    sx = x[order]
    tie = np.r_[True, sx[1:] != sx[:-1]] if x.size else np.zeros(0, bool)
    dense = np.cumsum(tie) - 1
    return ranks, dense[np.argsort(order)]


@case(lambda r: (np.repeat(ints(r, 0, 4, 8), ints(r, 1, 4, 8)),), lambda r: (np.array([7]),),
      lambda r: (np.zeros(0, np.int64),))
def run_length_encode(v):
    if v.size == 0:
        return v, np.zeros(0, np.int64)
    change = np.flatnonzero(np.diff(v)) + 1
    starts = np.concatenate(([0], change))
    lengths = np.diff(np.append(starts, v.size))
    return v[starts], lengths


@case(lambda r: (np.where(r.uniform(size=15) < 0.3, np.nan, normal(r, 15)),),
      lambda r: (np.array([np.nan, np.nan, 1.0]),))
def forward_fill_maximum_accumulate(x):
    ok = ~np.isnan(x)
    idx = np.where(ok, np.arange(x.size), 0)
    np.maximum.accumulate(idx, out=idx)
    filled = x[idx]
    return filled, np.nansum(x), np.nanmean(x) if ok.any() else np.nan


@case(lambda r: (normal(r, 6, 4),), lambda r: (np.array([[np.nan, 1.0], [2.0, np.nan]]),),
      lambda r: (normal(r, 3, 3, dtype="float32"),))
def nan_family_axes(X):
    with np.errstate(invalid="ignore"):
        return (np.nanmax(X, axis=0), np.nanmin(X, axis=1, keepdims=True),
                np.nanargmax(np.nan_to_num(X, nan=-np.inf), axis=1), np.nancumsum(X, axis=0),
                np.nanprod(X), np.nanvar(X, axis=0, ddof=0), np.nanmedian(X, axis=1))


@case(lambda r: (normal(r, 10),), lambda r: (np.array([0.1 + 0.2, 0.3, np.nan, np.inf]),))
def isclose_dedupe(x):
    s = np.sort(x)
    dup = np.isclose(s[1:], s[:-1], rtol=1e-6, atol=1e-9)
    keep = np.r_[True, ~dup]
    return s[keep], np.isclose(x, 0.3, equal_nan=True), np.allclose(x, x)


@case(lambda r: (normal(r, 20) * 100,),
      lambda r: (np.array([-2.5, -1.5, 0.5, 1.5, 2.5, 1234.5678]),),
      lambda r: (normal(r, 4, dtype="float32") * 1000,))
def rounding_family(x):
    return (np.round(x, 2), np.round(x, -1), np.around(x), np.rint(x), np.fix(x),
            np.trunc(x), np.floor(x).astype(np.int32), np.ceil(x / 10) * 10)


@case(lambda r: (ints(r, -50, 50, 16), ints(r, 1, 7, 16)),
      lambda r: (np.array([-7, 7, -7, 7]), np.array([2, 2, -2, -2])),
      lambda r: (ints(r, -100, 100, 5, dtype="int8"), np.array([3, -3, 4, -4, 5], "int8")))
def floor_mod_negatives(a, b):
    q, m = np.divmod(a, b)
    return q, m, a // b, a % b, np.fmod(a, b), np.remainder(a, -b), q * b + m == a


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 1),))
def apply_along_axis_custom(X):
    def spread(row):
        return np.array([row.max() - row.min(), np.median(row)])
    return np.apply_along_axis(spread, 1, X), np.apply_along_axis(np.sort, 0, X)


@case(lambda r: (normal(r, 12),), lambda r: (np.array([0.0, -1.0, 5.0]),))
def vectorize_python_branch(x):
    def f(v):
        return v * v if v > 0 else -v
    return np.vectorize(f)(x), np.vectorize(f, otypes=[np.float64])(x[:0])


@case(lambda r: (np.linspace(-3, 3, 25),), lambda r: (np.array([-1.0, 0.0, 1.0]),),
      lambda r: (np.linspace(-2, 2, 7).astype("float32"),))
def piecewise_hinge(x):
    y = np.piecewise(x, [x < -1, (x >= -1) & (x < 1), x >= 1],
                     [lambda t: -1 - 0.5 * (t + 1), lambda t: t, lambda t: 1 + 0.5 * (t - 1)])
    z = np.piecewise(x, [x < 0], [0.0, lambda t: t ** 2])
    return y, z


@case(lambda r: (normal(r, 30),), lambda r: (np.array([np.nan, 1.0]),))
def select_buckets_with_nan(x):
    conds = [np.isnan(x), x < -1, x < 0, x < 1]
    labels = np.select(conds, [-1, 0, 1, 2], default=3)
    return labels, np.bincount(labels + 1, minlength=6)


@case(lambda r: (ints(r, 0, 10, 40),), lambda r: (np.array([3, 3, 3]),))
def one_arg_where_and_nonzero(v):
    (idx,) = np.where(v == v.max())
    nz = np.nonzero(v % 2)[0]
    return idx, nz, np.flatnonzero(v > 5).size, v[nz].sum()


@case(lambda r: (normal(r, 8), normal(r, 8)), lambda r: (np.zeros(1), np.ones(1)))
def covariance_manual_vs_numpy(a, b):
    C = np.cov(a, b)
    X = np.stack([a, b])
    Xc = X - X.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        manual = Xc @ Xc.T / (a.size - 1)
        return C, manual, np.corrcoef(a, b)[0, 1]


@case(lambda r: (normal(r, 100), normal(r, 100)),
      lambda r: (np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.5, 1.0])))
def histogram2d_joint(x, y):
    H, xe, ye = np.histogram2d(x, y, bins=4, range=[[-2, 2], [-2, 2]])
    return H, H.sum(), xe


# ---- keywords of ufuncs and reductions ------------------------------------------------------

@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 0, 3),),
      lambda r: (normal(r, 4, 4, dtype="float32").T,))
def reductions_dtype_keepdims_where(X):
    pos = X > 0
    return (X.sum(axis=0, dtype=np.float32), X.mean(axis=1, keepdims=True),
            np.sum(X, where=pos, axis=1, keepdims=True), np.max(X, axis=0, where=pos,
                                                                initial=-np.inf),
            np.prod(X, dtype=np.float64), np.count_nonzero(pos, axis=1), np.all(pos, axis=0),
            np.any(X < -1, axis=1, keepdims=True))


@case(lambda r: (normal(r, 10), normal(r, 10)), lambda r: (np.zeros(2), np.zeros(2)))
def ufunc_where_out(a, b):
    out = np.full(a.shape, -1.0)
    np.divide(a, b, out=out, where=b != 0)
    res = np.zeros_like(a)
    np.sqrt(a, out=res, where=a >= 0)
    np.negative(res, out=res, where=a < -1)
    return out, res


@case(lambda r: (ints(r, 0, 200, 10, dtype="uint8"),),
      lambda r: (np.array([255, 1, 128], "uint8"),))
def uint8_wraparound(v):
    s = v + v
    d = v - 200
    m = v * 3
    return s, d, m, v.sum(), v.sum(dtype=np.uint8), np.cumsum(v, dtype=np.uint8), -v


@case(lambda r: (ints(r, -2**31, 2**31 - 1, 8, dtype="int32"),),
      lambda r: (np.array([2**31 - 1, -2**31], "int32"),))
def int32_overflow_family(v):
    return (v + np.int32(1), v * 2, np.abs(v), v.astype(np.int16), v.prod(), v.sum(),
            np.cumprod(v[:3]))


@case(lambda r: (ints(r, 0, 2**32, 10, dtype="uint32"),),
      lambda r: (np.array([0, 1, 2**32 - 1], "uint32"),))
def bit_ops_uint32(v):
    pop = np.zeros_like(v)
    x = v.copy()
    for _ in range(32):
        pop += x & 1
        x >>= 1
    return (pop, np.bitwise_count(v), v ^ (v >> 1), ~v, v << 3, np.bitwise_and.reduce(v),
            np.bitwise_or.reduce(v), np.bitwise_xor.accumulate(v))


@case(lambda r: (ints(r, -100, 100, 9, dtype="int16"), 3),
      lambda r: (np.array([-1, 1, -32768], "int16"), 15))
def shifts_and_signs_int16(v, k):
    return v >> k, v << 1, np.right_shift(v, 1), v & 0xFF, np.sign(v), np.invert(v), -v


@case(lambda r: (r.uniform(size=12) < 0.5, r.uniform(size=12) < 0.5),
      lambda r: (np.array([True]), np.array([False])))
def boolean_algebra(p, q):
    return (p & q, p | q, p ^ q, ~p, np.logical_xor(p, q), p.sum(), (p > q), np.invert(q),
            p.astype(int) - q, np.logical_and.reduce([p, q, ~p]))


# ---- complex --------------------------------------------------------------------------------

@case(lambda r: (normal(r, 16) + 1j * normal(r, 16),),
      lambda r: ((normal(r, 3) + 1j * normal(r, 3)).astype("complex64"),),
      lambda r: (np.array([0j, 1 + 0j, -1j]),))
def complex_polar_ops(z):
    r, th = np.abs(z), np.angle(z)
    back = r * np.exp(1j * th)
    return (np.conj(z) * z, np.angle(z, deg=True), back.real, z.imag.sum(), np.sqrt(z),
            np.sort_complex(z), z ** 2, np.real_if_close(z * np.conj(z)))


@case(lambda r: (8,), lambda r: (1,))
def dft_matrix_roundtrip(n):
    k = np.arange(n)
    F = np.exp(-2j * np.pi * np.outer(k, k) / n)
    x = np.cos(2 * np.pi * k / n) + 0.5
    X = F @ x
    back = (np.conj(F) @ X) / n
    return np.round(X, 9), np.allclose(back.real, x), np.abs(back.imag).max()


@case(lambda r: (np.array([1.0, -3.0, 2.0]),), lambda r: (np.array([1.0, 0.0, 1.0]),))
def quadratic_roots_complex(c):
    a, b, cc = c
    disc = (b * b - 4 * a * cc).astype(complex)
    r1 = (-b + np.sqrt(disc)) / (2 * a)
    r2 = (-b - np.sqrt(disc)) / (2 * a)
    return np.sort_complex(np.array([r1, r2])), np.polyval(c, r1)


# ---- Python structure around arrays ---------------------------------------------------------

def _standardize(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=0)) / x.std(axis=0)


def _poly_features(x: np.ndarray, deg: int) -> np.ndarray:
    return np.stack([x ** d for d in range(deg + 1)], axis=-1)


@case(lambda r: (normal(r, 30, 2), normal(r, 30)), lambda r: (normal(r, 5, 2), normal(r, 5)))
def ridge_with_helpers(X, y):
    Z = _standardize(X)
    F = np.concatenate([_poly_features(Z[:, j], 2) for j in range(Z.shape[1])], axis=1)
    A = F.T @ F + 0.1 * np.eye(F.shape[1])
    w = np.linalg.solve(A, F.T @ y)
    return w, np.mean((F @ w - y) ** 2)


@case(lambda r: ([normal(r, 4) for _ in range(3)],), lambda r: ([np.ones(2)],))
def list_of_arrays_reduce(parts):
    total = functools.reduce(np.add, parts)
    prod = functools.reduce(lambda a, b: a * b, parts)
    stacked = np.array(parts)
    return total, prod, stacked.shape, sum(p.sum() for p in parts)


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 1, 3, dtype="float32"),))
def rows_zip_enumerate(M):
    norms = [float(np.linalg.norm(row)) for row in M]
    out = np.zeros_like(M)
    for i, (row, nrm) in enumerate(zip(M, norms, strict=True)):
        out[i] = row / nrm if nrm > 0 else row
    return out, max(norms), np.array(norms)


@case(lambda r: ({"scale": 2.0, "shift": -1.0, "power": 3}, normal(r, 7)),
      lambda r: ({"scale": 0.5, "shift": 0.0, "power": 1}, np.zeros(0)))
def params_dict(cfg, x):
    y = cfg["scale"] * x + cfg["shift"]
    return y ** cfg["power"], {"mean": y.mean() if y.size else 0.0, "n": y.size}


@case(lambda r: (normal(r, 10), 1e-8), lambda r: (np.array([4.0, 9.0]), 1e-12))
def newton_sqrt_while(a, tol):
    x = np.maximum(np.abs(a), 1.0)
    it = 0
    while True:
        nx = 0.5 * (x + np.abs(a) / x)
        it += 1
        if np.max(np.abs(nx - x)) < tol or it > 50:
            break
        x = nx
    return nx, it


@case(lambda r: (r.uniform(0.5, 4.0, 6),), lambda r: (np.array([1.0]),))
def bisection_vectorized(c):
    lo = np.zeros_like(c)
    hi = np.maximum(c, 1.0)
    for _ in range(40):
        mid = (lo + hi) / 2
        f = mid ** 3 - c
        lo = np.where(f < 0, mid, lo)
        hi = np.where(f < 0, hi, mid)
    return (lo + hi) / 2, np.cbrt(c)


@case(lambda r: (normal(r, 9),), lambda r: (np.arange(3.0),))
def recursive_halving_sum(x):
    def rsum(v):
        if v.size <= 2:
            return v.sum()
        h = v.size // 2
        return rsum(v[:h]) + rsum(v[h:])
    return rsum(x), math.isclose(rsum(x), x.sum(), abs_tol=1e-9)


@case(lambda r: (normal(r, 4, 4),), lambda r: (np.eye(2) * 3,))
def matrix_functions(A):
    S = A @ A.T + np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    det = np.linalg.det(S)
    sign, logdet = np.linalg.slogdet(S)
    inv = np.linalg.inv(S)
    return L, np.isclose(det, sign * np.exp(logdet)), inv @ S, np.linalg.norm(A, ord="fro")


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 2)), lambda r: (normal(r, 1, 1), normal(r, 1, 1)))
def block_kron_tensordot(A, B):
    M = np.block([[A @ B, np.zeros((A.shape[0], A.shape[0]))], [np.ones((2, 2)), np.eye(2, 3)]]
                 ) if A.shape[0] == 3 else np.kron(A, B)
    T = np.tensordot(A, B, axes=([1], [0]))
    return M, T, np.tensordot(A, A, axes=2), np.vander(A[:, 0], 3)


@case(lambda r: (normal(r, 20), 3), lambda r: (normal(r, 3), 3))
def diff_orders_and_ediff(x, n):
    return (np.diff(x, n=2), np.diff(x, n=n, prepend=[0.0, 0.0], append=x[-1]),
            np.ediff1d(x, to_begin=-1, to_end=[9, 9]), np.diff(x > 0))


@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 2, 3),), lambda r: (normal(r, 3, 3).T,))
def triangles_and_masks(A):
    up = np.triu(A, k=1)
    lo = np.tril(A, k=-1)
    i, j = np.tril_indices_from(A) if A.shape[0] == A.shape[1] else np.tril_indices(2)
    return up + lo.T, A[i, j].sum(), np.tri(3, 4, k=1, dtype=int), np.diag(A, k=1)


@case(lambda r: (ints(r, 0, 6, 20), normal(r, 20)), lambda r: (np.array([0, 0]), np.ones(2)))
def reduceat_segments_sorted(g, v):
    order = np.argsort(g, kind="stable")
    gs = g[order]
    starts = np.r_[0, np.flatnonzero(gs[1:] != gs[:-1]) + 1]
    return (gs[starts], np.maximum.reduceat(v[order], starts),
            np.minimum.reduceat(v[order], starts), np.add.reduceat(np.ones_like(v), starts))


@case(lambda r: (normal(r, 7), normal(r, 5)), lambda r: (np.zeros(1), np.zeros(2)))
def outer_family(a, b):
    return (np.multiply.outer(a, b), np.maximum.outer(a, b), np.equal.outer(a > 0, b > 0),
            np.subtract.outer(a, a).diagonal(), np.power.outer(np.abs(a), 2))


@case(lambda r: (normal(r, 8, 3),), lambda r: (normal(r, 1, 3),), lambda r: (normal(r, 0, 3),))
def inplace_slices_rows(X):
    Y = X.copy()
    Y[::2] *= -1
    Y[:, 1:] -= Y[:, :1]
    Y[Y < -1] = -1
    Y[..., -1] += np.arange(Y.shape[0])
    Y.T[0] /= 2
    return Y


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 2, 2, dtype="float32"),))
def errstate_log_divide(X):
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.log(X)
        R = 1.0 / X
    return np.nan_to_num(L, nan=0.0, neginf=-1e3), np.where(np.isfinite(R), R, 0.0)


@case(lambda r: (normal(r, 12), 4), lambda r: (normal(r, 3), 5))
def as_strided_frames(x, w):
    n = max(x.size - w + 1, 0)
    frames = np.lib.stride_tricks.as_strided(x, shape=(n, w), strides=(x.strides[0],) * 2,
                                             writeable=False)
    return frames.sum(axis=1), frames @ np.hanning(w)


# ---- second batch: dtype and value corners inside ordinary programs -------------------------

@case(lambda r: (ints(r, -100, 100, 12, dtype="int8"),),
      lambda r: (np.array([True, False, True]),),
      lambda r: (ints(r, 0, 255, 6, dtype="uint8").reshape(2, 3),),
      lambda r: (np.zeros(0, "int16"),))
def accumulation_dtypes(v):
    return (np.cumsum(v), np.cumprod(v), v.sum(), np.add.reduce(v, axis=None), v.prod(),
            v.mean(), v.mean(dtype=np.float32), np.sum(v, dtype=np.int8), v.max(initial=0))


@case(lambda r: (ints(r, -5, 5, 8, dtype="int8"),), lambda r: (ints(r, 0, 9, 3, dtype="uint16"),),
      lambda r: (np.array([1, 2], "int32"),), lambda r: (np.array([True, False]),))
def transcendental_of_ints(v):
    return np.sqrt(np.abs(v)), np.exp(v / 4), np.log1p(np.abs(v)), v / 3, np.float_power(v, 2)


@case(lambda r: (np.array([15, 25, -15, 149, -251]),),
      lambda r: (ints(r, -999, 999, 6, dtype="int32"),),
      lambda r: (np.array([0.5, 1.5, 2.675, -0.125], "float16"),))
def round_integers_negative_decimals(v):
    return np.round(v, -1), np.round(v, -2), np.around(v, 1), np.round(v)


@case(lambda r: (ints(r, -8, 8, 6), ints(r, -2, 3, 6)),
      lambda r: (np.array([2, 0]), np.array([-1, 0])))
def integer_powers(a, b):
    return a ** np.abs(b), np.power(a, 2), a ** 0, np.power(a.astype(float), b), a ** b


@case(lambda r: (r.uniform(size=5) < 0.5, r.uniform(size=5) < 0.5),
      lambda r: (np.array([True]), np.array([True])))
def bool_subtract_refused(p, q):
    same = p == q
    return same, p + q, p * q, p - q


@case(lambda r: (ints(r, 0, 50, 6, dtype="uint64"),), lambda r: (np.array([2**63, 1], "uint64"),))
def uint64_mixing(v):
    return v + 1, v * 2, v // 3, v + np.int64(1), v - 1, v.astype(np.float64), v.sum()


@case(lambda r: (ints(r, 0, 50, 6, dtype="uint64"),))
def uint64_negative_literal(v):
    return v + -1


@case(lambda r: (ints(r, -10, 10, 7, dtype="int32"), 40),
      lambda r: (np.array([1, -1, -2**31], "int32"),
                 31), lambda r: (ints(r, 0, 200, 4, dtype="uint8"), 9))
def wide_shifts(v, k):
    return v << k, v >> k, np.left_shift(v, 33), np.right_shift(v, 33), v << np.arange(v.size)


@case(lambda r: (r.uniform(-3e9, 3e9, 8),),
      lambda r: (np.array([np.nan, np.inf, -np.inf, 1e20, -1.5]),))
def float_to_int_casts(x):
    with np.errstate(invalid="ignore"):
        return x.astype(np.int32), x.astype(np.int64), x.astype(np.uint8), x.astype(np.int8)


@case(lambda r: (np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 5.5]), -2.0),
      lambda r: (normal(r, 9, dtype="float32"), 0.0))
def float_floor_mod_corners(x, d):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x // d, x % d, np.fmod(x, d), np.divmod(x, 3.0), np.floor_divide(x, -np.inf),
                x % np.inf)


@case(lambda r: (normal(r, 10),), lambda r: (np.array([np.nan, -0.0, 0.0, 1.0, np.nan, -np.inf]),))
def sort_unique_nan_negzero(x):
    return (np.sort(x), np.argsort(x, kind="stable"), np.unique(x),
            np.searchsorted(np.sort(x), 0.0),
            np.maximum.reduce(x), np.fmax.reduce(x), np.nanmax(x) if (~np.isnan(x)).any() else 0.0)


@case(lambda r: (normal(r, 7) + 1j * normal(r, 7),),
      lambda r: (np.array([0j, np.inf + 0j, 1 + 1j], "complex64"),))
def complex_corners(z):
    with np.errstate(all="ignore"):
        return (np.sign(z), z / 0, np.abs(z), np.exp(z), np.log(z), z.conjugate(), np.var(z),
                np.std(z), np.sum(z), np.cumprod(z), np.isfinite(z), z.real.dtype)


@case(lambda r: (ints(r, 0, 10, 12),), lambda r: (np.array([4, 4, 4, 4]),),
      lambda r: (np.array([3], "int32"),))
def quantile_methods_on_ints(v):
    return tuple(np.quantile(v, [0.1, 0.5, 0.9], method=m) for m in
                 ("linear", "lower", "higher", "nearest", "midpoint", "median_unbiased"))


@case(lambda r: (normal(r, 5),), lambda r: (np.zeros(0),))
def empty_reductions_errors(x):
    with np.errstate(invalid="ignore"):
        return np.median(x), x.mean(), x.max()


@case(lambda r: (normal(r, 5), np.zeros(5)), lambda r: (normal(r, 3), np.array([1.0, -1.0, 0.0])))
def average_zero_weights(x, w):
    return np.average(x, weights=w)


@case(lambda r: (5, 2.0), lambda r: (1, 10.0), lambda r: (0, 3.0))
def spaced_grids(n, top):
    a, step = np.linspace(0, top, n, endpoint=False, retstep=True)
    return (a, step, np.logspace(0, 2, n), np.geomspace(1, top, n + 1), np.arange(0, top, 0.3),
            np.linspace(0, 10, n, dtype=int), np.arange(n, dtype=np.float32) * 0.1)


@case(lambda r: (ints(r, 0, 200, 8, dtype="uint8"), 300),
      lambda r: (ints(r, 0, 200, 3, dtype="uint8"),
                 -1), lambda r: (ints(r, 0, 200, 3, dtype="uint8"), 2.5))
def uint8_with_python_scalars(im, k):
    return im + k, im * k, np.clip(im, 10, k), np.where(im > 100, im, k)


@case(lambda r: (ints(r, -9, 9, 10), 0), lambda r: (ints(r, -9, 9, 4, dtype="int8"), 3))
def int_division_by_scalar_zero(v, d):
    return v // d, v % d, np.divmod(v, d)[1], v / d if d else v * 1.0


@case(lambda r: (normal(r, 4, 3).astype("float16"),),
      lambda r: (np.array([60000.0, 1e-8, -0.0], "float16"),))
def float16_pipeline(h):
    s = h.sum()
    m = h.mean(axis=0)
    c = np.cumsum(h)
    return s, m, c, (h * h).max(), h.astype(np.float32).std(), np.round(h, 1)


@case(lambda r: (ints(r, 0, 4, 5, 3),), lambda r: (np.zeros((0, 3), int),))
def argmax_empty_and_ties(A):
    return A.argmax(axis=1), np.argmin(A, axis=0), np.argmax(A)


@case(lambda r: (normal(r, 6), normal(r, 6)),
      lambda r: (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
      lambda r: (normal(r, 3), normal(r, 4)))
def equality_helpers(a, b):
    return (np.array_equal(a, b), np.array_equal(a, a, equal_nan=True), np.isclose(a, b, atol=10),
            np.array_equiv(a[:1], a[:1].copy()))


@case(lambda r: (normal(r, 8),), lambda r: (np.array([np.nan, 0.0, -2.0, np.inf]),))
def sign_family(x):
    return (np.sign(x), np.signbit(x), np.copysign(1.0, x), np.heaviside(x, 0.5), np.abs(x),
            np.positive(x), np.fabs(x), np.sign(x.astype(np.float32)))


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 3, 3)[::2, ::-1],))
def real_imag_views(A):
    z = A + 1j * A[:, ::-1]
    re = A.real
    re[0] = 0
    return re, np.imag(A), z.real * 2, np.iscomplexobj(z), np.conj(A)


# ---- third batch: indexing, ufunc methods and linear algebra corners -----------------------

@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 3, 3).T,))
def mixed_fancy_indexing(A):
    rows = np.array([0, 2, -1])
    cols = np.array([1, 0])
    return (A[:, [0, 2]], A[rows][:, cols], A[rows[:, None], cols], A[..., None].shape,
            A[None, ..., 1], A[[0, 1], [1, 2]], A[1:, [0]], A[::-1, ::2])


@case(lambda r: (normal(r, 6), np.array([7, -8, 2])), lambda r: (normal(r, 4), np.array([1, 5])))
def take_modes(x, idx):
    return (np.take(x, idx, mode="wrap"), np.take(x, idx, mode="clip"),
            np.take(x, idx % x.size), x.take(np.array([[0, 1], [1, 0]])))


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 2),))
def index_out_of_bounds(x):
    return x[np.array([0, 7])]


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 2, 2),))
def flat_iterator_writes(A):
    B = A.copy()
    B.flat[::3] = -1.0
    B.flat[[0, -1]] = 9.0
    return B, A.flat[2], A.T.flat[1:4] if A.size > 3 else A.ravel()


@case(lambda r: (r.uniform(size=7) < 0.5,), lambda r: (np.array([True, True]),))
def bool_ufunc_methods(m):
    return (np.add.accumulate(m), np.cumsum(m), np.multiply.reduce(m), np.add.reduce(m),
            np.logical_or.accumulate(m), np.maximum.accumulate(m), m.mean(), m.std(),
            np.sum(m, dtype=bool))


@case(lambda r: (normal(r, 5),), lambda r: (np.array([1.0, np.nan, 3.0]),),
      lambda r: (normal(r, 1),))
def unusual_reductions(x):
    return (np.subtract.reduce(x), np.divide.reduce(np.abs(x) + 1), np.logaddexp.reduce(x),
            np.maximum.accumulate(x), np.fmin.reduce(x), np.minimum.reduce(x), np.hypot.reduce(x))


@case(lambda r: (ints(r, -100, 100, 4, 4, dtype="int8"),),
      lambda r: (ints(r, 0, 256, 3, 3, dtype="uint8"),))
def small_int_matmul_einsum(A):
    return (A @ A, np.einsum("ii->i", A), np.einsum("ij->", A), np.einsum("ij,jk->ik", A, A),
            np.dot(A[0], A[1]), np.trace(A), A.T @ A[:, 0])


@case(lambda r: (r.uniform(size=(3, 3)) < 0.5, r.uniform(size=(3, 2)) < 0.5))
def bool_matmul(A, B):
    return A @ B, np.dot(A, B), A.astype(int) @ B


@case(lambda r: (normal(r, 4, 3),), lambda r: (ints(r, -5, 5, 3, 3),))
def norms_variety(A):
    return (np.linalg.norm(A), np.linalg.norm(A, ord=np.inf), np.linalg.norm(A, ord=1),
            np.linalg.norm(A, axis=0, ord=1), np.linalg.norm(A, axis=1, ord=np.inf),
            np.linalg.norm(A, axis=1, keepdims=True), np.linalg.norm(A[0], ord=0),
            np.linalg.norm(A, ord=-np.inf))


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def outer_of_matrices_and_vectors(A):
    return np.outer(A, A[0]), np.inner(A, A), np.vdot(A, A), np.matmul(A[0], A.T), A[0] @ A.T @ A


@case(lambda r: (ints(r, -100, 100, 6, dtype="int8"), 100),
      lambda r: (ints(r, 0, 50, 3, dtype="int8"), 200))
def int8_python_int_overflow(v, k):
    return v + k


@case(lambda r: (normal(r, 5), 2), lambda r: (np.ones(1), 1), lambda r: (np.ones(3), 5))
def ddof_corners(x, ddof):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.std(x, ddof=ddof), np.var(x, ddof=ddof),
                np.cov(x, ddof=ddof) if x.size > ddof else 0.0)


@case(lambda r: (normal(r, 4, 6),), lambda r: (np.asfortranarray(normal(r, 3, 4)),),
      lambda r: (normal(r, 5, 2)[::2],))
def scans_over_axes(A):
    return (np.cumsum(A, axis=0), np.cumprod(A, axis=1), np.maximum.accumulate(A, axis=1),
            np.diff(A, axis=0), np.argsort(A, axis=0, kind="stable"), np.sort(A, axis=None))


@case(lambda r: (normal(r, 3, 4),), lambda r: (np.zeros((2, 0)),))
def put_along_axis_and_friends(A):
    B = A.copy()
    if A.size:
        idx = np.argmax(A, axis=1)[:, None]
        np.put_along_axis(B, idx, 0.0, axis=1)
    C = A.copy()
    np.copyto(C, 1.0, where=A < 0)
    D = A.copy()
    np.putmask(D, D > 0, -D)
    return B, C, D


@case(lambda r: (normal(r, 10), normal(r, 10)),
      lambda r: (np.array([np.nan, 1.0]), np.array([2.0, np.nan])))
def clip_with_arrays(x, y):
    lo = np.minimum(x, y)
    hi = np.maximum(x, y)
    return (np.clip(x * 2, lo, hi), np.clip(x, None, 0.5), np.clip(x, y, None), np.fmin(x, y),
            np.fmax(x, y))


@case(lambda r: (normal(r, 5, 3),), lambda r: (np.zeros((0, 3)),))
def concat_stack_variants(A):
    return (np.r_[A[0], A[-1]] if A.shape[0] else np.zeros(0), np.c_[A, A[:, :1]],
            np.append(A, A[:1], axis=0), np.insert(A, 1, 7.0, axis=1), np.delete(A, 0, axis=1),
            np.split(A, [1], axis=1)[1], np.array_split(A.ravel(), 4)[-1])


@case(lambda r: (normal(r, 5).astype("float32"), 0.1), lambda r: (np.ones(2, "float32"), 1e40))
def float32_with_python_floats(x, a):
    return x * a, x + 0.1, x / 3, np.float64(2) * x, x ** 2.0, (x * a).dtype


@case(lambda r: (normal(r, 8) + 1j * normal(r, 8), r.uniform(size=8) < 0.3),
      lambda r: (np.array([1 + 1j, 2 - 1j]), np.array([False, True])))
def complex_signal_with_dropouts(z, lost):
    z = np.where(lost, np.nan, z)
    return (np.nansum(z), np.nanmean(z), np.nanvar(z), np.nanstd(z), np.nancumsum(z),
            np.nanprod(np.abs(z)))


@pytest.mark.parametrize("name", sorted(CASES10))
def test_wild10_function_matches_numpy(name: str) -> None:
    run_case(name, CASES10, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES10, warm=True, views=True, warns=True)
