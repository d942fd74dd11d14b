"""An eighth wave of the wild corpus (s10 HUNT3): short programs in the styles of the Pythran
NumPy benchmark suite (serge-sans-paille/numpy-benchmarks, probed by
benchmarks/numpy_benchmarks.py), written in our own words with their own inputs: NumPy's
creation functions imported by name (`from numpy import zeros`), arrays made in the function
and written through a reshape or ravel (their layout is NumPy's K order: of F-ordered inputs a
reshape copies), views of arguments written through and returned, periodic wrapping by mask
assignment, run-length grouping over sorted unsigned ints, nearest-symbol decisions over
complex data in a loop, an adaptive complex filter updating an argument in a loop, grids by
broadcast assignment, and Python `max` of a Python float and a reduction (a graph break by
design: NumPy's result is a Python float or a NumPy scalar depending on the data).

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild8 [names]` prints each function's class.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from numpy import empty, ones, power, tanh, zeros

from corpus.test_corpus_wild import main, normal, run_case, wild

CASES8: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES8)


def fortran(r: np.random.Generator, *shape: int, dtype: str = "float64") -> np.ndarray:
    return np.asfortranarray(normal(r, *shape, dtype=dtype))


@case(lambda r: (normal(r, 4, 3, 2), normal(r, 3, 5)),
      lambda r: (normal(r, 2, 1, 3, dtype="float32"), normal(r, 1, 4, dtype="float32")),
      lambda r: (normal(r, 0, 2, 2), normal(r, 2, 3)))
def names_imported_from_numpy(a, w):
    # `zeros`, `ones`, `empty` imported by name: traced arrays filled in a loop (was a break)
    sq = lambda v: 1 - power(tanh(v), 2)  # noqa: E731
    out = zeros((a.shape[0], a.shape[1], w.shape[1]), dtype=a.dtype)
    for k in range(w.shape[1]):
        out[:, :, k] = sq(a[:, :, 0]) * w[:, k] + ones(a.shape[1], a.dtype)
    scratch = empty(a.shape[2])
    scratch[:] = 2.0
    return out, scratch


@case(lambda r: (normal(r, 4, 6), normal(r, 4, 6)),
      lambda r: (fortran(r, 5, 3), fortran(r, 5, 3)),
      lambda r: (normal(r, 6, 4).T, normal(r, 4, 6)),
      lambda r: (fortran(r, 3, 4, dtype="float32"), normal(r, 4)),
      lambda r: (normal(r, 0, 3).T, normal(r, 3, 1)))
def temporaries_written_through(x, y):
    t = np.abs(x) + 1  # F-ordered for F-ordered x (NumPy's K order): its reshape copies
    flat = t.reshape(-1)
    flat[::2] = 0
    s = x * y
    r = s.ravel()
    r += 1
    u = (x - y)[1:].reshape(-1)
    u[...] = -1
    return t, flat, s, r, u


@case(lambda r: (normal(r, 5, 4),), lambda r: (fortran(r, 4, 3),),
      lambda r: (normal(r, 3, 6)[:, ::2],), lambda r: (np.zeros((2, 0)),))
def views_written_and_returned(x):
    top = x[1:]
    top *= 2
    tr = x.T
    tr[0, 0] = -7
    row = x[::-1][:, :1]
    row += 3
    flat = x.T.reshape(-1)  # a view of an F-ordered x, else a copy
    if flat.size:
        flat[0] = 100
    return top, tr, row, flat


@case(lambda r: (np.arange(0.0, 6.0, 0.5), 4),
      lambda r: (np.linspace(-3, 9, 13, dtype=np.float32), 3),
      lambda r: (np.zeros(0), 2))
def periodic_minimum_image(p, box):
    d = p[:, None] - p[None, :]
    d[d > box / 2] -= box
    d[d < -box / 2] += box
    dist = np.sqrt(d ** 2 + (0.5 * d) ** 2)
    dist[dist == 0] = -1
    return dist, d


@case(lambda r: (np.sort(r.integers(0, 6, 40).astype(np.uint32)),),
      lambda r: (np.array([3, 3, 3], np.uint32),),
      lambda r: (np.sort(r.integers(-5, 5, 17)),))
def run_lengths_of_sorted(v):
    change = np.concatenate(([1], np.diff(v)))
    starts = np.concatenate((np.where(change)[0], [len(v)]))
    return v[starts[:-1]], np.diff(starts)


@case(lambda r: (normal(r, 20) + 1j * normal(r, 20), normal(r, 4) + 1j * normal(r, 4)),
      lambda r: (np.array([1 + 1j, -1 - 1j, 0j]), np.array([1 + 0j, -1 + 0j])))
def nearest_symbols(e, symbols):
    out = np.zeros(e.shape[0], dtype=e.dtype)
    for i in range(e.shape[0]):
        out[i] = symbols[np.argmin(np.abs(e[i] - symbols) ** 2)]
    return out


@case(lambda r: (normal(r, 2, 40) + 1j * normal(r, 2, 40),
                 np.eye(2)[:, :, None] * np.array([0, 1, 0]), 1e-3, 2))
def adaptive_filter(e, taps, mu, step):
    pols, n = e.shape
    width = taps.shape[-1]
    count = (n // step // width - 1) * width
    err = np.zeros((pols, n), dtype=np.complex128)
    for k in range(pols):
        for i in range(count):
            window = e[:, i * step:i * step + width]
            est = np.sum(window * np.conj(taps[k]))
            err[k, i] = (1.0 - abs(est) ** 2) * est
            taps[k] += mu * np.conj(err[k, i]) * window
    return err, taps


@case(lambda r: (np.arange(0, 1, 1 / 7),), lambda r: (np.zeros(0),),
      lambda r: (np.linspace(0, 1, 5, dtype=np.float32),))
def grid_by_broadcast_assignment(x):
    n = x.shape[0]
    z = np.zeros((n, n, 3), x.dtype)
    z[:, :, 0] = x.reshape(-1, 1)
    z[:, :, 1] = x
    z[..., 2] = x[:, None] * x
    return z.reshape(n * n, 3)


@case(lambda r: (normal(r, 6, 5, 3),), lambda r: (np.full((3, 3, 3), 0.25),))
def scaled_laplacian(image):
    out = np.abs(4 * image[1:-1, 1:-1] - image[:-2, 1:-1] - image[2:, 1:-1]
                 - image[1:-1, :-2] - image[1:-1, 2:])
    top = max(1.0, np.max(out)) + 1e-9  # a Python float or a NumPy scalar: a break
    out /= top
    return out


@pytest.mark.parametrize("name", sorted(CASES8))
def test_wild8_function_matches_numpy(name: str) -> None:
    run_case(name, CASES8, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES8, warm=True, views=True, warns=True)
