"""Comparison of compiled nested results with the reference interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from conftest import assert_matches

import stax.nested as sn


def as_ragged(x: Any) -> sn.Ragged:
    if isinstance(x, sn.Ragged):
        return x
    x = np.asarray(x)
    if x.ndim == 1 and x.size == 0:  # a map over no rows: the interpreter cannot tell
        return sn.Ragged(x, np.zeros(0, dtype=np.int64))
    return sn.Ragged(x.reshape(-1, *x.shape[2:]), np.full(x.shape[0], x.shape[1]))


def assert_same(got: Any, want: Any) -> None:
    """Same structure, dtype and values; a regular array and a Ragged with equal rows are the
    same value (the compiled side decides regularity statically, the interpreter by the
    data)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
        return
    if isinstance(got, sn.Ragged) or isinstance(want, sn.Ragged):
        g, w = as_ragged(got), as_ragged(want)
        assert_matches(g.lengths, w.lengths)
        assert_matches(g.values, w.values)
        return
    assert_matches(got, want)


def check(fn: Any, *args: Any, jitted: sn.Jitted | None = None) -> Any:
    """Run fn compiled (`jitted`, or a new sn.jit of fn) and interpreted; assert they agree,
    on the call that flattens and records and on a second call (which replays the recorded
    program when there is one); return the compiled result."""
    f = jitted or sn.jit(fn)
    got = f(*args)
    want = sn.interpret(fn, *args)
    assert_same(got, want)
    assert_same(f(*args), want)
    return got


def run_at_isa(script: str, isa: str, tmp_path: Path) -> str:
    """Run `script` (Python, importing from tests/) in a subprocess with STAX_ISA=isa and its
    own compile cache under tmp_path; assert it succeeds and return its stdout."""
    tests = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, STAX_ISA=isa, STAX_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([tests, *sys.path]))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=600, cwd=tests)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout
