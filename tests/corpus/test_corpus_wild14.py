"""A fourteenth wave of the wild corpus (s16 HUNT9): ordinary NumPy programs in styles the first
thirteen waves use least — numerical methods (RK4/Euler steppers over a module-level right-hand
side, Newton and bisection with `while abs(f) > tol`, fixed-point iterations, Jacobi and
Gauss-Seidel sweeps, trapezoid/Simpson by hand, np.gradient with spacing, np.interp with
left/right/period, polyfit/polyval, np.convolve/correlate modes); object-oriented code (a class
holding arrays with methods and properties, dataclasses, closures over arrays,
functools.partial, helper functions returning tuples); Python building blocks (list
comprehensions into np.array/np.stack, zip/enumerate over rows, dicts of arrays, *args and
**kwargs, default arguments, small recursion, generators fed to sum); NumPy helpers
(np.vectorize, apply_along_axis, piecewise, select, the nan* family, average with weights, cov
with aweights/ddof, einsum with '...', tensordot axes forms, kron, block, array_split,
moveaxis/swapaxes/rollaxis, squeeze/expand_dims with tuples, as_strided reads, linalg over
stacks); random numbers drawn inside the function with a seed; integer and bit work
(bitwise_*, shifts, popcount by hand, packbits, gcd/lcm, floor_divide/mod/divmod with
negatives); dtype work (astype chains, result_type, finfo/iinfo, can_cast); 0-d and empty
inputs throughout.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild14 [names]` prints each function's class.

Counts (126 functions): on main f08a70d 100 compiled, 20 break, 6 FAIL — two wrong results (a
loop over rows whose body rebinds an object's attribute, `self.n += 1`, compiled once from two
traces: welford_class; `rng.shuffle` of a traced array swapping rows through views:
rng_shuffle_rows), a traced scalar as a dict key (TypeError), a whole-function break inside
NumPy's float() conversion turned into ValueError, a 0-d array returned as a scalar
(np.vectorize), np.piecewise of a 0-d array (IndexError); after HUNT9 102 compiled, 24 break,
0 FAIL (see benchmarks/RESULTS.md, "Sixteenth wave, coverage (HUNT9)", for what still breaks).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints

CASES14: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES14)


def pos(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.uniform(0.5, 2.0, shape)


def u8(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.integers(0, 256, shape).astype(np.uint8)


def spd(r: np.random.Generator, n: int) -> np.ndarray:
    a = r.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# ---- numerical methods ----------------------------------------------------------------------

def decay(t, y):
    return -0.5 * y + np.sin(t)


def oscillator(t, y):
    return np.array([y[1], -y[0] - 0.1 * y[1]])


@case(lambda r: (normal(r, 4), 0.1), lambda r: (normal(r, 1), 0.01))
def rk4_fixed_steps(y0, h):
    y, t = y0.copy(), 0.0
    for _ in range(10):
        k1 = decay(t, y)
        k2 = decay(t + h / 2, y + h / 2 * k1)
        k3 = decay(t + h / 2, y + h / 2 * k2)
        k4 = decay(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
    return y, t


@case(lambda r: (np.array([1.0, 0.0]), 0.05),)
def euler_oscillator_trajectory(y0, h):
    traj = [y0]
    for i in range(20):
        traj.append(traj[-1] + h * oscillator(i * h, traj[-1]))
    return np.array(traj), np.stack(traj)[:, 0].max()


def rk4_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 2, y + h / 2 * k1)
    k3 = f(t + h / 2, y + h / 2 * k2)
    k4 = f(t + h, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


@case(lambda r: (np.array([0.5, -0.2]), 0.1), lambda r: (np.array([0.0, 0.0]), 0.2))
def rk4_generic_stepper(y0, h):
    ys = np.empty((8, 2))
    y = y0
    for i in range(8):
        y = rk4_step(oscillator, i * h, y, h)
        ys[i] = y
    return ys


@case(lambda r: (pos(r, 5),), lambda r: (np.array([4.0]),), lambda r: (np.empty(0),))
def newton_sqrt_vectorized(a):
    x = np.ones_like(a)
    for _ in range(30):
        x = 0.5 * (x + a / x)
    return x, np.abs(x * x - a).max(initial=0.0)


@case(lambda r: (2.0,), lambda r: (10.0,), lambda r: (0.5,))
def newton_scalar_while(a):
    x = a
    it = 0
    while abs(x * x - a) > 1e-12 and it < 50:
        x = x - (x * x - a) / (2 * x)
        it += 1
    return x, it


@case(lambda r: (0.0, 2.0), lambda r: (-1.0, 3.0))
def bisection_while(lo, hi):
    f = lambda x: x ** 3 - x - 1  # noqa: E731
    while hi - lo > 1e-10:
        mid = 0.5 * (lo + hi)
        if f(lo) * f(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


@case(lambda r: (normal(r, 6),), lambda r: (np.zeros(1),))
def fixed_point_cos(x0):
    x = x0.copy()
    for _ in range(60):
        x_new = np.cos(x)
        if np.max(np.abs(x_new - x)) < 1e-12:
            break
        x = x_new
    return x


@case(lambda r: (spd(r, 5), normal(r, 5)), lambda r: (spd(r, 1), normal(r, 1)))
def jacobi_iteration(A, b):
    D = np.diag(A)
    R = A - np.diagflat(D)
    x = np.zeros_like(b)
    for _ in range(40):
        x = (b - R @ x) / D
    return x, np.linalg.norm(A @ x - b)


@case(lambda r: (spd(r, 4), normal(r, 4)), lambda r: (spd(r, 2), normal(r, 2)))
def gauss_seidel_sweeps(A, b):
    n = len(b)
    x = np.zeros(n)
    for _ in range(25):
        for i in range(n):
            s = A[i, :i] @ x[:i] + A[i, i + 1:] @ x[i + 1:]
            x[i] = (b[i] - s) / A[i, i]
    return x


@case(lambda r: (normal(r, 10, 10),), lambda r: (normal(r, 3, 3),))
def laplace_jacobi_grid(u0):
    u = u0.copy()
    for _ in range(15):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


@case(lambda r: (normal(r, 9), 0.5), lambda r: (normal(r, 2), 1.0))
def gradient_with_spacing(y, dx):
    return np.gradient(y, dx), np.gradient(y, dx, edge_order=1), np.gradient(y)


@case(lambda r: (np.sort(pos(r, 7).cumsum()), normal(r, 7)),)
def gradient_nonuniform(x, y):
    return np.gradient(y, x), np.gradient(y, x, edge_order=2)


@case(lambda r: (normal(r, 6, 5),), lambda r: (normal(r, 3, 3).T,))
def gradient_2d_axis(f):
    gx = np.gradient(f, axis=1)
    gy, gx2 = np.gradient(f, 2.0, 0.5)
    return gx, gy, gx2


@case(lambda r: (np.linspace(0, 1, 11), normal(r, 11)),
      lambda r: (np.linspace(0, 1, 2), normal(r, 2)))
def trapezoid_by_hand(x, y):
    dx = np.diff(x)
    return np.sum(dx * (y[1:] + y[:-1]) / 2), (dx * 0.5 * (y[1:] + y[:-1])).cumsum()


@case(lambda r: (normal(r, 9), 0.25), lambda r: (normal(r, 3), 1.0))
def simpson_by_hand(y, h):
    return h / 3 * (y[0] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum() + y[-1])


@case(lambda r: (normal(r, 5, 9),), lambda r: (normal(r, 1, 3),))
def trapz_rows_axis(Y):
    x = np.linspace(0.0, 2.0, Y.shape[1])
    dx = x[1] - x[0]
    return dx * (Y[:, 1:] + Y[:, :-1]).sum(axis=1) / 2


@case(lambda r: (r.uniform(-1, 6, 12),), lambda r: (np.array([-5.0, 10.0, 2.5]),),
      lambda r: (np.empty(0),))
def interp_left_right(xq):
    xp = np.array([0.0, 1.0, 2.5, 5.0])
    fp = np.array([1.0, 3.0, -1.0, 0.0])
    return np.interp(xq, xp, fp), np.interp(xq, xp, fp, left=-9.0, right=9.0)


@case(lambda r: (r.uniform(-400, 400, 10),), lambda r: (np.array([0.0]),))
def interp_periodic_angles(deg):
    xp = np.array([0.0, 90.0, 180.0, 270.0])
    fp = np.array([0.0, 1.0, 0.0, -1.0])
    return np.interp(deg, xp, fp, period=360)


@case(lambda r: (np.linspace(0, 3, 12), normal(r, 12)),)
def polyfit_polyval(x, noise):
    y = 2.0 * x ** 2 - x + 0.5 + 0.01 * noise
    c = np.polyfit(x, y, 2)
    return c, np.polyval(c, x), np.polyval(c, 1.5)


@case(lambda r: (normal(r, 12), normal(r, 3)), lambda r: (normal(r, 3), normal(r, 3)),
      lambda r: (normal(r, 2), normal(r, 5)))
def convolve_correlate_modes(a, v):
    return (np.convolve(a, v), np.convolve(a, v, mode="same"), np.convolve(a, v, mode="valid"),
            np.correlate(a, v), np.correlate(a, v, "full"), np.correlate(a, v, mode="same"))


@case(lambda r: (ints(r, -5, 5, 8), ints(r, -2, 3, 3)),)
def convolve_ints(a, v):
    return np.convolve(a, v), np.convolve(a.astype(np.int32), v.astype(np.int8), "same")


@case(lambda r: (normal(r, 30),), lambda r: (normal(r, 5),))
def autocorrelation_normalized(x):
    x = x - x.mean()
    ac = np.correlate(x, x, mode="full")[len(x) - 1:]
    return ac / ac[0]


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (np.zeros(3), np.ones(3)))
def secant_roots_elementwise(a, b):
    f = lambda x: np.tanh(x) - 0.3  # noqa: E731
    x0, x1 = a, b + 0.5
    for _ in range(12):
        f0, f1 = f(x0), f(x1)
        den = np.where(f1 == f0, 1.0, f1 - f0)
        x0, x1 = x1, np.where(f1 == f0, x1, x1 - f1 * (x1 - x0) / den)
    return x1


@case(lambda r: (np.linspace(0.0, 1.0, 8), 0.01, 5), lambda r: (np.zeros(3), 0.1, 0))
def heat_explicit_steps(u0, r_, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] += r_ * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 4),))
def power_iteration(v0):
    A = np.diag(np.arange(1.0, len(v0) + 1)) + 0.1
    v = v0 / np.linalg.norm(v0)
    for _ in range(50):
        w = A @ v
        v = w / np.linalg.norm(w)
    return v @ A @ v


@case(lambda r: (np.array([1.0, -3.0, 2.0]),), lambda r: (np.array([1.0, 0.0, -4.0]),))
def quadratic_roots(c):
    a, b, c0 = c
    disc = b * b - 4 * a * c0
    sq = np.sqrt(disc)
    return np.array([(-b - sq) / (2 * a), (-b + sq) / (2 * a)]), np.sort(np.roots(c))


# ---- classes, dataclasses, closures ---------------------------------------------------------

class Grid:
    def __init__(self, n, h):
        self.x = np.arange(n) * h
        self.h = h

    @property
    def midpoints(self):
        return 0.5 * (self.x[1:] + self.x[:-1])

    def integrate(self, f):
        return self.h * (f[1:] + f[:-1]).sum() / 2


@case(lambda r: (normal(r, 9), 0.1), lambda r: (normal(r, 2), 1.0))
def class_grid_methods(f, h):
    g = Grid(len(f), h)
    return g.integrate(f), g.midpoints, g.integrate(g.x ** 2)


@dataclass
class Params:
    alpha: float
    beta: float = 2.0

    def apply(self, x):
        return self.alpha * x + self.beta


@case(lambda r: (normal(r, 5), 0.5), lambda r: (normal(r, 0), 1.0))
def dataclass_params(x, a):
    p = Params(a)
    q = Params(alpha=-a, beta=0.0)
    return p.apply(x), q.apply(p.apply(x)), p.beta


class RunningStats:
    def __init__(self, shape):
        self.n = 0
        self.mean = np.zeros(shape)
        self.m2 = np.zeros(shape)

    def push(self, x):
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self.m2 += d * (x - self.mean)

    def var(self):
        return self.m2 / max(self.n - 1, 1)


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 1, 2),))
def welford_class(rows):
    s = RunningStats(rows.shape[1])
    for row in rows:
        s.push(row)
    return s.mean, s.var(), s.n


class Layer:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0.0)


@case(lambda r: (normal(r, 4, 3), normal(r, 3, 5), normal(r, 5, 2)),
      lambda r: (normal(r, 1, 3), normal(r, 3, 5), normal(r, 5, 2)))
def callable_layers(x, w1, w2):
    layers = [Layer(w1, 0.1), Layer(w2, -0.1)]
    for layer in layers:
        x = layer(x)
    return x


def make_scaler(mu, sd):
    def scale(x):
        return (x - mu) / sd
    return scale


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 2, 1),))
def closure_over_arrays(X):
    scale = make_scaler(X.mean(axis=0), X.std(axis=0) + 1e-9)
    return scale(X), scale(X[:1])


def huber(x, delta=1.0):
    a = np.abs(x)
    return np.where(a <= delta, 0.5 * x * x, delta * (a - 0.5 * delta))


@case(lambda r: (normal(r, 8),), lambda r: (np.array(2.0),))
def functools_partial(x):
    h2 = functools.partial(huber, delta=2.0)
    return h2(x), huber(x), functools.partial(np.clip, a_min=-0.5, a_max=0.5)(x)


def stats_tuple(x):
    return x.min(), x.max(), x.mean()


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 1),))
def tuple_unpacking_helper(X):
    lo, hi, mu = stats_tuple(X)
    (a, b, c), (d, e, f) = stats_tuple(X[0]), stats_tuple(X[:, 0])
    return (X - lo) / (hi - lo + 1e-12), mu, a + d, b - e, c * f


def weighted(*arrays, weights=None, **kw):
    w = np.ones(len(arrays)) if weights is None else np.asarray(weights)
    total = sum(wi * a for wi, a in zip(w, arrays, strict=True))
    return total / w.sum() if kw.get("normalize", True) else total


@case(lambda r: (normal(r, 4), normal(r, 4), normal(r, 4)),
      lambda r: (normal(r, 1), normal(r, 1), normal(r, 1)))
def star_args_kwargs(a, b, c):
    return weighted(a, b, c), weighted(a, b, weights=[1.0, 3.0]), weighted(a, c, normalize=False)


def smooth(x, k=3, mode="same"):
    return np.convolve(x, np.ones(k) / k, mode=mode)


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 3),))
def default_arguments(x):
    return smooth(x), smooth(x, 2), smooth(x, k=3, mode="valid")


def det_recursive(A):
    if A.shape[0] == 1:
        return A[0, 0]
    return sum((-1) ** j * A[0, j] * det_recursive(np.delete(np.delete(A, 0, 0), j, 1))
               for j in range(A.shape[0]))


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 1, 1),), lambda r: (normal(r, 4, 4),))
def recursive_determinant(A):
    return det_recursive(A), np.linalg.det(A)


def merge_sorted(a, b):
    out = np.empty(len(a) + len(b))
    out[:len(a)] = a
    out[len(a):] = b
    return np.sort(out)


def merge_sort(x):
    if len(x) <= 2:
        return np.sort(x)
    m = len(x) // 2
    return merge_sorted(merge_sort(x[:m]), merge_sort(x[m:]))


@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 1),))
def recursive_merge_sort(x):
    return merge_sort(x)


# ---- Python building blocks -----------------------------------------------------------------

@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 1, 3),))
def comprehension_rows(X):
    norms = np.array([np.sqrt((row ** 2).sum()) for row in X])
    scaled = np.stack([row / n for row, n in zip(X, norms, strict=True)])
    return norms, scaled, np.vstack([X[i] * i for i in range(len(X))])


@case(lambda r: (normal(r, 6, 2),), lambda r: (normal(r, 2, 2),))
def enumerate_rows_running(X):
    best, best_i = -np.inf, -1
    for i, row in enumerate(X):
        s = row.sum()
        if s > best:
            best, best_i = s, i
    return best, best_i


@case(lambda r: (normal(r, 8), normal(r, 8)), lambda r: (normal(r, 1), normal(r, 1)))
def dict_of_arrays(a, b):
    cols = {"a": a, "b": b, "sum": a + b}
    cols["ratio"] = cols["a"] / (np.abs(cols["b"]) + 1)
    return {k: v.mean() for k, v in cols.items()}, sorted(cols)


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 1),))
def generator_into_sum(x):
    return sum(x[i] * x[i + 1] for i in range(len(x) - 1)), sum(v * v for v in x)


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 2, 1),))
def list_of_columns_then_column_stack(X):
    cols = [X[:, j] for j in range(X.shape[1])]
    cols.append(sum(cols))
    return np.column_stack(cols), np.array(cols).T.shape


@case(lambda r: (normal(r, 5), 3), lambda r: (normal(r, 2), 1))
def nested_lists_to_array(x, k):
    rows = [[x[i] ** p for p in range(k)] for i in range(len(x))]
    return np.array(rows), np.asarray(rows, dtype=np.float32).sum(axis=0)


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def python_max_min_over_array(x):
    return max(x), min(x), sorted(x)[:2], abs(x[0]), round(float(x[0]), 3)


@case(lambda r: (ints(r, 0, 4, 10),), lambda r: (ints(r, 0, 1, 1),))
def group_by_dict(keys):
    vals = np.arange(len(keys), dtype=float)
    out = {}
    for k in range(4):
        out[k] = vals[keys == k].sum()
    return out


@case(lambda r: (normal(r, 3), normal(r, 3)), lambda r: (normal(r, 0), normal(r, 0)))
def zip_pairs_into_array(a, b):
    pairs = list(zip(a, b, strict=True))
    return np.array([x * y for x, y in pairs]), np.array(pairs)


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 3, 1),))
def tuple_of_shape_unpack(X):
    n, m = X.shape
    *_, last = X.shape
    out = np.empty((m, n))
    for i in range(n):
        out[:, i] = X[i]
    return out, last, X.size


# ---- NumPy helpers ---------------------------------------------------------------------------

@case(lambda r: (normal(r, 6),), lambda r: (np.array(0.5),), lambda r: (normal(r, 0),))
def vectorize_python_func(x):
    f = np.vectorize(lambda v: v * v if v > 0 else -v)
    return f(x)


@case(lambda r: (ints(r, -3, 3, 5),), lambda r: (ints(r, 0, 1, 1),))
def vectorize_otypes(x):
    f = np.vectorize(lambda v: 1.5 * v if v % 2 else v // 2, otypes=[float])
    return f(x)


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 2),))
def apply_along_axis_rows(X):
    return (np.apply_along_axis(lambda r: r.max() - r.min(), 1, X),
            np.apply_along_axis(np.sort, 0, X), np.apply_along_axis(lambda c: c[::-1], 0, X))


@case(lambda r: (r.uniform(-2, 2, 9),), lambda r: (np.array([0.0]),), lambda r: (np.array(1.5),))
def piecewise_functions(x):
    return (np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]),
            np.piecewise(x, [x < -1, (x >= -1) & (x < 1)], [0.0, lambda v: v, 1.0]))


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 0),))
def select_with_default(x):
    return (np.select([x < -0.5, x > 0.5], [x * 2, x ** 2], default=np.nan),
            np.select([x > 0], [1], 0))


@case(lambda r: (normal(r, 5, 4),), lambda r: (np.full((2, 2), np.nan),))
def nan_family(X):
    Y = X.copy()
    Y[::2, 1] = np.nan
    return (np.nanmean(Y, axis=0), np.nanstd(Y, axis=1, ddof=1), np.nansum(Y),
            np.nanmax(Y, axis=1), np.nancumsum(Y, axis=0), np.nanprod(Y, axis=1))


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 1, 3),))
def nanargmax_nanpercentile(X):
    Y = X.copy()
    Y[0, 0] = np.nan
    return (np.nanargmax(Y, axis=0), np.nanargmin(Y), np.nanpercentile(Y, 25, axis=0),
            np.nanmedian(Y, axis=1), np.nanquantile(Y, [0.1, 0.9]))


@case(lambda r: (normal(r, 5, 3), pos(r, 5)), lambda r: (normal(r, 1, 2), pos(r, 1)))
def average_with_weights(X, w):
    avg, sw = np.average(X, axis=0, weights=w, returned=True)
    return avg, sw, np.average(X[:, 0], weights=w), np.average(X, axis=1)


@case(lambda r: (normal(r, 3, 10), pos(r, 10)), lambda r: (normal(r, 2, 3), pos(r, 3)))
def cov_aweights_ddof(X, w):
    return (np.cov(X, aweights=w), np.cov(X, ddof=0), np.cov(X.T, rowvar=False),
            np.cov(X[0], X[1]), np.corrcoef(X))


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 1, 3),))
def ptp_and_ranges(X):
    return np.ptp(X), np.ptp(X, axis=0), np.ptp(X, axis=1, keepdims=True), X.max(0) - X.min(0)


@case(lambda r: (normal(r, 2, 3, 4), normal(r, 4, 5)),
      lambda r: (normal(r, 1, 1, 4), normal(r, 4, 1)))
def einsum_ellipsis(A, B):
    return (np.einsum("...ij,jk->...ik", A, B), np.einsum("...i->...", A),
            np.einsum("...ii->...i", A[..., :3, :3]) if A.shape[-2] >= 3 else A.sum(-1),
            np.einsum("bij->", A), np.einsum("ij...->...ij", A))


@case(lambda r: (normal(r, 4, 4), normal(r, 4)), lambda r: (normal(r, 1, 1), normal(r, 1)))
def einsum_many(A, v):
    return (np.einsum("ii", A), np.einsum("ii->i", A), np.einsum("ij,j", A, v),
            np.einsum("i,i", v, v), np.einsum("i,j->ij", v, v), np.einsum("ji", A),
            np.einsum(A, [0, 1], v, [1], [0]))


@case(lambda r: (normal(r, 3, 4, 5), normal(r, 4, 5, 2)),
      lambda r: (normal(r, 1, 4, 5), normal(r, 4, 5, 1)))
def tensordot_axes_forms(A, B):
    return (np.tensordot(A, B, axes=2), np.tensordot(A, B, axes=([1, 2], [0, 1])),
            np.tensordot(A[0], A[0], axes=0).shape, np.tensordot(A[:, 0], B[0], axes=1),
            np.tensordot(A, B[0], axes=((2,), (0,))))


@case(lambda r: (normal(r, 2, 3), ints(r, 0, 3, 2, 2)),
      lambda r: (normal(r, 1, 1), ints(r, 0, 3, 1, 2)))
def kron_outer_inner(A, B):
    return np.kron(A, B), np.kron(np.eye(2), A), np.outer(A, B), np.inner(A, A), np.kron(A[0], B[0])


@case(lambda r: (normal(r, 2, 2), normal(r, 2, 3)), lambda r: (normal(r, 1, 1), normal(r, 1, 2)))
def block_matrices(A, B):
    n, m = A.shape[0], B.shape[1]
    return (np.block([[A, B], [np.zeros((m, n)), np.eye(m)]]), np.block([A, B]),
            np.block([[A], [B[:, :A.shape[1]]]]))


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 3),), lambda r: (normal(r, 0),))
def array_split_pieces(x):
    parts = np.array_split(x, 3)
    return [p.sum() for p in parts], [len(p) for p in parts], np.split(x, [2, 5])


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 2, 2),))
def split_axis_and_hsplit(X):
    a, b = np.split(X, 2, axis=1)
    top, bottom = np.vsplit(X, 2)
    return a - b, top + bottom, np.hsplit(X, [1])


@case(lambda r: (normal(r, 2, 3, 4),), lambda r: (normal(r, 1, 1, 1),))
def axes_moving(A):
    return (np.moveaxis(A, 0, -1), np.moveaxis(A, [0, 1], [-1, -2]), np.swapaxes(A, 0, 2),
            np.rollaxis(A, 2), np.rollaxis(A, 2, 1), A.transpose(1, 0, 2))


@case(lambda r: (normal(r, 1, 4, 1),), lambda r: (normal(r, 1, 1, 1),))
def squeeze_expand_tuples(A):
    return (np.squeeze(A, axis=(0, 2)), np.expand_dims(A[0, :, 0], axis=(0, 2)),
            np.squeeze(A, axis=0), np.expand_dims(A, (-1, 0)).shape, np.atleast_2d(A[0, 0, 0]),
            np.atleast_3d(A[0, :, 0]).shape, np.atleast_1d(A.sum()))


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 3), 3))
def as_strided_windows(x, w):
    from numpy.lib.stride_tricks import as_strided
    n = len(x) - w + 1
    v = as_strided(x, shape=(n, w), strides=(x.strides[0], x.strides[0]), writeable=False)
    return v.sum(axis=1), v.max(axis=1)


@case(lambda r: (spd(r, 3)[None].repeat(4, 0) + normal(r, 4, 3, 3) * 0.1, normal(r, 4, 3)),
      lambda r: (spd(r, 2)[None], normal(r, 1, 2)))
def linalg_over_stacks(A, b):
    return (np.linalg.det(A), np.linalg.inv(A), np.linalg.solve(A, b[..., None])[..., 0],
            np.linalg.norm(A, axis=(1, 2)), np.linalg.eigvalsh(A + A.transpose(0, 2, 1)))


@case(lambda r: (normal(r, 4), normal(r, 3)), lambda r: (normal(r, 1), normal(r, 2)))
def meshgrid_ij_xy(x, y):
    X, Y = np.meshgrid(x, y, indexing="ij")
    U, V = np.meshgrid(x, y)
    return X * Y, U + V, X.shape, U.shape, np.meshgrid(x, y, sparse=True, indexing="ij")[1]


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 0),))
def frompyfunc_object(x):
    f = np.frompyfunc(lambda a: a * 2.0, 1, 1)
    return f(x).astype(float)


@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def diag_tricks(A):
    d = np.zeros(min(A.shape))
    np.fill_diagonal(A[:, :len(d)], 0.0)
    return A, np.diag(A, 1), np.trace(A, offset=-1), np.diag_indices(3)[0]


# ---- random numbers inside ------------------------------------------------------------------

@case(lambda r: (8, 0), lambda r: (1, 5), lambda r: (0, 1))
def rng_inside_normal(n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 2.0, n), rng.uniform(size=(n, 2)), rng.integers(0, 10, n)


@case(lambda r: (normal(r, 10), 3), lambda r: (normal(r, 2), 4))
def rng_permutation_choice(x, seed):
    rng = np.random.default_rng(seed)
    p = rng.permutation(len(x))
    return x[p], rng.choice(x, 3), rng.choice(len(x), size=2, replace=False)


@case(lambda r: (normal(r, 12, 2), 42), lambda r: (normal(r, 3, 2), 0))
def bootstrap_means(X, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(X), size=(20, len(X)))
    return X[idx].mean(axis=1).std(axis=0)


@case(lambda r: (20, 7),)
def random_walk_seeded(n, seed):
    rng = np.random.default_rng(seed)
    steps = rng.choice([-1, 1], size=n)
    return np.cumsum(steps), rng.standard_normal(3)


@case(lambda r: (normal(r, 8, 3), 1), lambda r: (normal(r, 2, 3), 2))
def rng_shuffle_rows(X, seed):
    rng = np.random.default_rng(seed)
    Y = X.copy()
    rng.shuffle(Y)
    return Y, rng.random(2)


@case(lambda r: (5, 11),)
def legacy_seed_random(n, seed):
    np.random.seed(seed)
    return np.random.rand(n), np.random.randn(2, 2), np.random.randint(0, 5, n)


@case(lambda r: (normal(r, 6), 3),)
def dropout_mask_seeded(x, seed):
    rng = np.random.default_rng(seed)
    keep = rng.random(x.shape) > 0.5
    return np.where(keep, x / 0.5, 0.0)


# ---- integers and bits ----------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 2 ** 31, 8, dtype="uint32"),),
      lambda r: (np.array([0, 1, 2 ** 32 - 1], np.uint32),))
def popcount_by_hand(x):
    c = np.zeros_like(x)
    v = x.copy()
    for _ in range(32):
        c += v & 1
        v >>= 1
    return c


@case(lambda r: (ints(r, 0, 2 ** 16, 6, dtype="uint64"),), lambda r: (np.array([0], np.uint64),))
def popcount_swar(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@case(lambda r: (ints(r, -100, 100, 8, dtype="int32"), 3), lambda r: (np.array([-1], np.int32), 0))
def bitwise_ops(a, s):
    return (np.bitwise_and(a, 0xF), np.bitwise_or(a, 1 << s), np.bitwise_xor(a, -1),
            np.left_shift(a, s), np.right_shift(a, s), np.invert(a), a & ~a)


@case(lambda r: (u8(r, 10),),
      lambda r: (np.zeros(3, np.uint8),), lambda r: (np.zeros(0, np.uint8),))
def packbits_roundtrip(b):
    bits = np.unpackbits(b)
    return np.packbits(bits), np.packbits(bits, bitorder="little"), bits.reshape(-1, 8).sum(1)


@case(lambda r: (ints(r, 1, 60, 8), ints(r, 1, 60, 8)),
      lambda r: (np.array([0, 0, 12]), np.array([0, 5, -18])))
def gcd_lcm_arrays(a, b):
    return np.gcd(a, b), np.lcm(a, b), np.gcd.reduce(a), np.lcm.reduce(np.abs(b) % 7 + 1)


@case(lambda r: (ints(r, -9, 9, 10), 4), lambda r: (ints(r, -9, 9, 10, dtype="int8"), -3))
def floor_mod_negatives(a, d):
    q, m = np.divmod(a, d)
    return (np.floor_divide(a, d), np.mod(a, d), np.remainder(a, -d), np.fmod(a, d), q, m,
            q * d + m)


@case(lambda r: (normal(r, 7) * 5, 1.5), lambda r: (np.array([-0.0, 3.0]), -2.0))
def float_floor_divmod(x, d):
    return np.floor_divide(x, d), np.mod(x, d), np.divmod(x, d), x % d, np.fmod(x, d)


@case(lambda r: (ints(r, 0, 256, 6, dtype="uint8"),), lambda r: (np.array([255], np.uint8),))
def bit_reverse_uint8(b):
    v = b.copy()
    v = ((v & 0xF0) >> 4) | ((v & 0x0F) << 4)
    v = ((v & 0xCC) >> 2) | ((v & 0x33) << 2)
    v = ((v & 0xAA) >> 1) | ((v & 0x55) << 1)
    return v


@case(lambda r: (ints(r, 0, 16, 6),), lambda r: (np.array([0]),))
def bits_to_matrix(x):
    bits = (x[:, None] >> np.arange(4)) & 1
    return bits, (bits * (1 << np.arange(4))).sum(axis=1), np.count_nonzero(bits, axis=1)


@case(lambda r: (ints(r, 0, 2 ** 20, 5),), lambda r: (np.array([1, 2, 3, 1024]),))
def is_power_of_two(x):
    return (x > 0) & ((x & (x - 1)) == 0), np.log2(np.maximum(x, 1)).astype(int)


@case(lambda r: (ints(r, -128, 128, 8, dtype="int8"),), lambda r: (np.array([127, -128], np.int8),))
def int8_wraparound(a):
    return a + a, a * 3, -a, np.abs(a), a.astype(np.uint8), (a.astype(np.int16) * 3).astype(np.int8)


@case(lambda r: (ints(r, 0, 1000, 6), 7), lambda r: (np.array([0]), 1))
def modular_exponent_loop(base, m):
    result = np.ones_like(base)
    b = base % m
    e = 13
    while e > 0:
        if e & 1:
            result = result * b % m
        b = b * b % m
        e >>= 1
    return result


# ---- dtype work ----------------------------------------------------------------------------

@case(lambda r: (normal(r, 6) * 300,), lambda r: (np.array([1e10, -1e10, np.nan]),))
def astype_chains(x):
    y = x.astype(np.float32).astype(np.int64)
    return (x.astype(np.int32, copy=True).astype(np.float16),
            np.clip(x, -128, 127).astype(np.int8), y.astype(bool).astype(np.uint8),
            x.round().astype(np.int64) if np.isfinite(x).all() else 0)


@case(lambda r: (ints(r, 0, 10, 4, dtype="int16"), normal(r, 4, dtype="float32")),
      lambda r: (np.array([1], np.uint8), np.array([0.5], np.float16)))
def result_type_dispatch(a, b):
    rt = np.result_type(a, b)
    out = np.empty(a.shape, dtype=rt)
    out[:] = a + b
    return out, str(rt), str(np.promote_types(a.dtype, np.int32))


@case(lambda r: (normal(r, 5, dtype="float32"),), lambda r: (normal(r, 3),),
      lambda r: (normal(r, 2, dtype="float16"),))
def finfo_in_code(x):
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).tiny
    return np.abs(x) < 10 * eps, np.maximum(np.abs(x), tiny), np.finfo(x.dtype).max > 1e30


@case(lambda r: (ints(r, -500, 500, 6),), lambda r: (np.array([0]),))
def iinfo_saturate(a):
    info = np.iinfo(np.int8)
    return np.clip(a, info.min, info.max).astype(np.int8), info.bits, np.iinfo(a.dtype).max


@case(lambda r: (ints(r, 0, 9, 4, dtype="int32"),), lambda r: (normal(r, 4),))
def can_cast_branch(a):
    if np.can_cast(a.dtype, np.int64):
        return a.astype(np.int64) * 2
    return np.floor(a).astype(np.int64)


@case(lambda r: (normal(r, 4),), lambda r: (ints(r, 0, 9, 3, dtype="uint16"),))
def dtype_kind_branch(x):
    if x.dtype.kind == "f":
        return x * 0.5, x.dtype.itemsize
    if np.issubdtype(x.dtype, np.integer):
        return x // 2, x.dtype.itemsize
    return x, 0


@case(lambda r: (normal(r, 4),), lambda r: (normal(r, 3, dtype="float32"),))
def view_as_ints(x):
    bits = x.view(np.int64 if x.dtype == np.float64 else np.int32)
    return bits, np.signbit(x) == (bits < 0)


@case(lambda r: (ints(r, 0, 100, 5, dtype="uint8"), 2), lambda r: (np.array([255], np.uint8), 255))
def nep50_python_scalars(a, k):
    return a + 1, a * 2, a - k, (a / 3).dtype, a + np.int64(1), a.astype(np.int16) - 300


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def complex_from_real(x):
    z = x + 1j * x[::-1]
    return np.abs(z), np.angle(z), z.real.dtype, (z * z.conj()).real, np.iscomplexobj(z)


# ---- shapes, 0-d and empty ------------------------------------------------------------------

@case(lambda r: (np.array(3.0),), lambda r: (np.array(-1.5),))
def zero_d_everything(s):
    return (s + 1, s.sum(), np.exp(s), s[()], s.reshape(1), np.atleast_1d(s), s.item(),
            np.where(s > 0, s, 0), s.ndim)


@case(lambda r: (np.empty((0, 3)),), lambda r: (np.empty((4, 0)),))
def empty_reductions(X):
    return (X.sum(axis=0), X.sum(axis=1), X.max(axis=0, initial=-np.inf), X.mean(axis=0)
            if X.shape[0] else X.sum(axis=0), np.cumsum(X, axis=1), X.T @ X, X.any(), X.all())


@case(lambda r: (np.empty(0),), lambda r: (normal(r, 1),))
def empty_or_single_stats(x):
    if x.size == 0:
        return 0.0, 0.0
    return float(x.mean()), float(x.std())


@case(lambda r: (normal(r, 4, 1),), lambda r: (normal(r, 1, 1),))
def column_vector_broadcast(c):
    r_ = c.T
    return c + r_, c * r_, (c - r_).ravel(), np.broadcast_to(c, (4, 4)).sum(0)


@case(lambda r: (normal(r, 2, 3, 4),), lambda r: (normal(r, 0, 3, 4),))
def reshape_minus_one_paths(A):
    return A.reshape(-1, 4), A.reshape(A.shape[0], -1), A.ravel(order="F"), A.flatten()[::2]


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def nested_functions_shadowing(x):
    def step(v, k=2):
        return v * k

    def twice(v):
        return step(step(v))

    y = twice(x)
    x = y + 1
    return x, step(x, k=0.5)


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def lambda_list_map(x):
    fs = [np.sin, np.cos, lambda v: v ** 2, np.abs]
    return np.array([f(x) for f in fs]), list(map(np.sum, [x, 2 * x]))


@case(lambda r: (normal(r, 4, 4), 2), lambda r: (normal(r, 2, 2), 0))
def matrix_power_loop(A, k):
    M = np.eye(len(A))
    for _ in range(k):
        M = M @ A
    return M, np.linalg.matrix_power(A, k)


@case(lambda r: (normal(r, 8), 0.3), lambda r: (normal(r, 1), 0.9))
def ema_python_loop(x, a):
    out = np.empty_like(x)
    s = x[0]
    for i in range(len(x)):
        s = a * x[i] + (1 - a) * s
        out[i] = s
    return out


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (normal(r, 1), normal(r, 1)))
def conditional_scalar_python(a, b):
    total = 0.0
    for x, y in zip(a, b, strict=True):
        if x > y:
            total += x - y
        elif x < y - 1:
            total -= 1
    return total


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def triangular_solve_loop(A):
    L = np.tril(A) + 5 * np.eye(len(A))
    b = np.arange(1.0, len(A) + 1)
    x = np.zeros_like(b)
    for i in range(len(b)):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x, np.allclose(L @ x, b)


@case(lambda r: (ints(r, 0, 5, 12),), lambda r: (np.array([3]),))
def counts_with_python_dict(labels):
    d = {}
    for v in labels.tolist():
        d[v] = d.get(v, 0) + 1
    return d, np.bincount(labels)


@case(lambda r: (normal(r, 3, 3),), lambda r: (normal(r, 2, 2),))
def matrix_exp_taylor(A):
    E = np.eye(len(A))
    term = np.eye(len(A))
    for k in range(1, 15):
        term = term @ A / k
        E = E + term
    return E


@case(lambda r: (normal(r, 8), 3), lambda r: (normal(r, 4), 4))
def topk_by_argsort(x, k):
    idx = np.argsort(x)[::-1][:k]
    return idx, x[idx], np.sort(x)[-k:][::-1]


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def cumulative_tricks(x):
    return (np.cumprod(1 + 0.01 * x), np.maximum.accumulate(x), np.minimum.accumulate(x[::-1]),
            np.add.reduce(x), np.multiply.outer(x[:3], x[:2]), np.add.accumulate(x))


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (normal(r, 1), normal(r, 1)))
def clip_where_out(a, b):
    out = np.empty_like(a)
    np.clip(a, -0.5, 0.5, out=out)
    res = np.zeros_like(a)
    np.multiply(a, b, out=res, where=a > 0)
    return out, res, np.maximum(a, b, out=np.empty_like(a))


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 1), normal(r, 1)))
def isclose_allclose(a, b):
    return (np.isclose(a, a + 1e-10), np.allclose(a, b), np.isclose(a, b, atol=1.0),
            np.array_equal(a, a.copy()), np.array_equiv(a[:1], a[:1].repeat(3)))


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def insert_delete_append(X):
    return (np.insert(X, 1, 0.0, axis=1), np.delete(X, 0, axis=1), np.append(X, X[:1], axis=0),
            np.insert(X.ravel(), [0, 2], [-1.0, -2.0]))


@case(lambda r: (normal(r, 3), normal(r, 3)),
      lambda r: (np.array([1.0, 0, 0]), np.array([0, 1.0, 0])))
def cross_dot_angle(a, b):
    c = np.cross(a, b)
    cosang = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    return c, np.arccos(np.clip(cosang, -1, 1)), np.dot(c, a)


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 2),))
def sign_tricks(x):
    return np.sign(x), np.copysign(1.0, x), np.heaviside(x, 0.5), np.sign(x).astype(int) * 2


@case(lambda r: (normal(r, 6, 2),), lambda r: (normal(r, 1, 2),))
def sort_rows_by_column(X):
    order = np.argsort(X[:, 1])
    return X[order], X[np.lexsort((X[:, 0], X[:, 1] > 0))], np.sort(X, axis=0)[::-1]


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def rank_transform(x):
    ranks = np.empty(len(x), dtype=int)
    ranks[np.argsort(x)] = np.arange(len(x))
    return ranks, ranks / max(len(x) - 1, 1)


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 4),))
def histogram_density(x):
    h, e = np.histogram(x, bins=4, density=True)
    c, _ = np.histogram(x, bins=[-3, -1, 0, 1, 3])
    return h, e, c, (h * np.diff(e)).sum()


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 1),))
def linspace_logspace_geomspace(x):
    n = len(x)
    return (np.linspace(x.min(), x.max(), n), np.logspace(0, 2, n), np.geomspace(1, 1000, n),
            np.linspace(0, 1, n, endpoint=False), np.linspace(0, 1, n, retstep=True)[1])


@case(lambda r: (normal(r, 5), 2), lambda r: (normal(r, 3), 0))
def tile_repeat_pad(x, k):
    return (np.tile(x, 2), np.tile(x, (2, 1)), np.repeat(x, 2), np.repeat(x[:2], [1, 3]),
            np.pad(x, (k, 1), constant_values=(0.0, 9.0)))


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 1, 1),))
def triu_indices_use(A):
    iu = np.triu_indices(len(A), k=1)
    il = np.tril_indices_from(A)
    return A[iu], A[il].sum(), np.triu(A, 1) + np.triu(A, 1).T + np.diag(np.diag(A))


@case(lambda r: (normal(r, 5, 3),), lambda r: (normal(r, 1, 1),))
def unravel_argmax_2d(A):
    i, j = np.unravel_index(np.argmax(A), A.shape)
    return i, j, A[i, j], np.ravel_multi_index((i, j), A.shape)


@pytest.mark.parametrize("name", sorted(CASES14))
def test_wild14_function_matches_numpy(name: str) -> None:
    run_case(name, CASES14, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES14, warm=True, views=True, warns=True)
