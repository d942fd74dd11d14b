"""Coverage fixes of session 14 (HUNT7, from tests/corpus/test_corpus_wild12.py), each tested
against NumPy computed in the test."""

from __future__ import annotations

import warnings

import numpy as np

import stax
from stax.frontend.breaks import GraphBreakWarning


def test_layout_attributes_are_numpys() -> None:
    """[HUNT7] `.strides`, `.flags`, `.base` of a traced array were read from a break's C-ordered
    copy: `np.broadcast_to(x, s).strides[0]` was 8 (NumPy: 0), a transposed argument's
    `flags.c_contiguous` True. The function now runs in NumPy, as NumPy answers."""
    def fn(x):
        b = np.broadcast_to(x, (3, *x.shape))
        return (b.sum(axis=0), b.strides, x.flags.c_contiguous, x.flags.f_contiguous,
                x[::2].strides, x.T.base is None, x.sum())

    base = np.arange(12.0).reshape(3, 4)
    jitted = stax.jit(fn)
    for x in (base, base.T, base[:, ::2], np.zeros((0, 2), np.int8), np.arange(5)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphBreakWarning)
            got = jitted(x)
        want = fn(x)
        for g, w in zip(got, want, strict=True):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)
