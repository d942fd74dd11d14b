"""The loop driver behind the backend seam: `stax.loops` emits no C++ itself (it describes a
driver, `stax.loops.driver.LoopDriver`; the backend's `emit_loops` prints it)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import stax
from stax.backends import get_backend
from stax.backends.base import Backend
from stax.loops import runner

LOOPS = Path(stax.__file__).parent / "loops"


def test_no_module_of_stax_loops_imports_the_cpu_backend():
    for path in LOOPS.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in names if m.startswith("stax.backends.cpu")], path


def test_a_backend_without_loop_drivers_says_so():
    class Bare(get_backend("cpu").__class__):
        name = "bare"
        emit_loops = Backend.emit_loops

    with pytest.raises(NotImplementedError, match="bare"):
        Bare().emit_loops([])


def prefix_sums(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def test_the_driver_source_explain_shows_is_the_backends(monkeypatch):
    modules: list[str] = []
    backend = get_backend("cpu")
    real = type(backend).emit_loops

    def spy(self, drivers):
        module, parts = real(self, drivers)
        modules.append(module)
        return module, parts

    monkeypatch.setattr(type(backend), "emit_loops", spy)
    x = np.arange(7.0)
    fn = stax.jit(prefix_sums)
    np.testing.assert_array_equal(fn(x), prefix_sums(x))
    assert len(modules) == 1 and "stax_loop" in modules[0]
    body = next(b for b in runner.BODIES.values() if b.source and b.source in modules[0])
    assert body.source.rstrip().endswith("}") and "extern \"C\" void stax_loop" in body.source
