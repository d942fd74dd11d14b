"""Issue 10 item 2: a kernel region takes any number of buffers. Past MANY_ARGS it is called
through one array of their addresses (ctypes refuses more than 1024 arguments: an unrolled
npbench kernel, scattering_self_energies, had 1950)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from corpus.test_corpus_wild9 import damped_oscillator_euler as _euler

import stax
from stax.backends import MANY_ARGS
from stax.runtime import wrapper as runtime_wrapper
from stax.runtime.fast import fastcall


def _total(*xs: Any) -> Any:
    acc = xs[0]
    for x in xs[1:]:
        acc = acc * 0.5 + x
    return acc


# Past MANY_ARGS both counts take the array of addresses; 1100 (past ctypes' 1024) only with
# static shapes: the shape-generic trace of 1100 arguments took 343 s of CI's ~65 min.
@pytest.mark.parametrize(("count", "dynamic"), [(MANY_ARGS + 5, False), (1100, False),
                                                (MANY_ARGS + 5, True)])
def test_regions_with_many_buffers(count: int, dynamic: bool) -> None:
    rng = np.random.default_rng(count)
    dtypes = [np.float64, np.float32, np.int32, np.int16]
    xs = [rng.integers(-9, 9, 5).astype(dtypes[k % 4]) for k in range(count)]
    xs[3] = xs[3][::-1]  # a strided argument among them
    f = stax.jit(_total, dynamic=dynamic)
    for call in range(2):  # the first call and a warm one
        args = xs if call == 0 else [x * 2 for x in xs]
        got, want = f(*args), _total(*args)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    if dynamic:  # another length through the generic program
        args = [np.resize(x, 9) for x in xs]
        np.testing.assert_allclose(f(*args), _total(*args), rtol=1e-12)


def test_constant_buffers_pass_addresses_taken_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region called through ctypes (without the C fast call) gets its constants' addresses
    taken when the wrapper is built (they do not move), the others' at each call. The
    function stores rows of Python scalars: each is a constant array of the program."""
    monkeypatch.setattr(runtime_wrapper, "fastcall", lambda: None)
    f = stax.jit(_euler)
    for steps in (30, 30, 7):
        np.testing.assert_array_equal(f(1.0, 0.0, 0.05, steps), _euler(1.0, 0.0, 0.05, steps))
    (wrapper,) = {comp.program.wrapper for comp in f.cache.values() if "const" in
                  comp.program.wrapper and "_address" in comp.program.wrapper}
    call = next(line for line in wrapper.splitlines() if "region0(" in line)
    assert "const" in call and ".ctypes.data" in call  # the output's address, per call
    assert not any(".ctypes.data" in a for a in call.split(", ") if a.startswith("const"))


@pytest.mark.skipif(fastcall() is None, reason="no fast call (STAX_FASTCALL=0 or no headers)")
def test_many_buffers_called_by_the_fast_call() -> None:
    """[CALL] A region of more buffers than the C fast call passes directly runs through it
    with its entry taking their addresses (no ctypes call, no .ctypes.data per buffer)."""
    f = stax.jit(_euler)
    for steps in (30, 30):
        np.testing.assert_array_equal(f(1.0, 0.0, 0.05, steps), _euler(1.0, 0.0, 0.05, steps))
    (source,) = {comp.program.wrapper for comp in f.cache.values()}
    call = next(line for line in source.splitlines() if "region0_ptr" in line
                and "run(" in line)
    assert call.count(", ") > MANY_ARGS and ".ctypes" not in source
