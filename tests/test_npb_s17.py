"""[NPB4] First calls of segmented functions (a `while` loop with a break per iteration:
npbench's channel_flow traced ~1,000 iterations of ~1,500 ops): the per-op tracing work made
cheaper keeps NumPy's results (the strides of a value found from the values it is computed
from only: tests/test_memory_order.py checks them in detail; segment keys; np.errstate set
inside)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from conftest import assert_matches

import stax
from stax.frontend.breaks import GraphBreakWarning


def run(fn: Any, calls: list[tuple[Any, ...]]) -> Any:
    """`stax.jit(fn)` on each call's arguments (copies), each result vs NumPy's."""
    jf = stax.jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphBreakWarning)
        for args in calls:
            assert_matches(jf(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]),
                           fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
    return jf


def relax(x: Any, y: Any) -> Any:
    """Steps until a convergence test (a break per iteration), each step's temporaries
    reshaped and written through (a copy or a view of them, as NumPy's reshape)."""
    t = x * 2.0
    u = np.sin(t) + y
    w = u.reshape(-1)
    k = 0
    while np.abs(t).sum() > 1e-2 * t.size and k < 12:
        u = np.sin(t) + y  # the operands' order decides u's layout
        w = u.reshape(-1)  # a copy where u is F-ordered, else a view
        w *= 0.5
        v = (t - 1)[1:].reshape(-1)  # a slice's reshape: a copy where not contiguous
        v[...] = 0.25
        s = t * 3.0  # t's layout (F where t is): its reshape a copy
        z = s.reshape(-1)
        z += 1.0  # reaches s only when a view
        t = u * 0.5 + t[..., ::-1] * 0.1 + s * 0.01
        k += 1
    return t, u, w, k


def test_while_loop_with_a_break_per_iteration_keeps_numpys_layouts() -> None:
    c = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    f = np.asfortranarray(c)
    jf = run(relax, [(c, np.ones((3, 4))), (c.T, np.ones((3, 4)).T), (f, np.full((3, 1), 0.5)),
                     (np.arange(24.0).reshape(4, 6)[:, ::2] / 8, np.ones(3, np.float32)),
                     (np.zeros((0, 3)).T, np.zeros((3, 1))), (c * 0.0, c),
                     (np.array([[3.0]]), np.array(2.0)), (c, np.ones((3, 4)))])
    assert jf.replay_info().replayed >= 1  # the repeated signature replayed its tape


def noisy(x: Any, d: Any) -> Any:
    """np.errstate set inside around a division, and a break after it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = x / d
    total = 0.0
    for _ in range(3):
        if np.isfinite(q).all():
            total += 1.0
        q = np.where(np.isfinite(q), q, 0.0) + 1.0
    return q, total


def test_errstate_set_inside_a_segmented_function() -> None:
    x = np.array([1.0, -2.0, 0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # NumPy's division warns on neither
        run(noisy, [(x, np.array([2.0, 0.0, 0.0, 1.0])), (x, np.array([2.0, 0.0, 0.0, 1.0])),
                    (x, np.ones(4)), (x[:0], np.ones(0)), (x[::-2], np.zeros(2))])
