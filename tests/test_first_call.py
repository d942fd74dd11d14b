"""[COMPILE] First-call compile time: ISA probes without intrinsics headers, the runtime header
precompiled once (a verified cache entry; a damaged one is rebuilt, never used), and the
probes started in the background by a first call that still gives NumPy's result and leaves
no half-built file behind."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stax.backends.cpu.backend import PRECOMPILED
from stax.runtime import compiler
from stax.runtime.compiler import ISA_CPU_FLAGS, ISA_LEVELS, compile_source, precompile

PROGRAM = PRECOMPILED + textwrap.dedent("""
    extern "C" void stax_scale(const double* x, double* out, long n) {
        for (long i = 0; i < n; i++) out[i] = std::exp(x[i]) * 2.0 + stax_abs(x[i]);
    }
    """)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STAX_CACHE_DIR", str(root))
    compiler._fallback_dir.cache_clear()
    compiler._precompile.cache_clear()
    yield root
    compiler._precompile.cache_clear()


def _run(library: Any, x: np.ndarray) -> np.ndarray:
    import ctypes

    out = np.empty_like(x)
    library.stax_scale(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
                       ctypes.c_long(x.size))
    return out


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    seen: list[list[str]] = []
    real = subprocess.run

    def spy(cmd: list[str], *a: Any, **k: Any) -> Any:
        seen.append([str(c) for c in cmd])
        return real(cmd, *a, **k)

    monkeypatch.setattr(compiler.subprocess, "run", spy)
    return seen


@pytest.mark.parametrize("level", ISA_LEVELS)
def test_each_isa_probe_runs_where_the_cpu_has_the_level(level: str) -> None:
    _, flags = compiler._cpu_identity()
    if flags is not None and not ISA_CPU_FLAGS[level] <= flags:
        pytest.skip(f"this CPU lacks {level}")
    assert compiler._runs(level)


def test_a_precompiled_header_builds_the_same_program(cache: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.linspace(-3, 3, 37)
    want = np.exp(x) * 2.0 + np.abs(x)
    plain = compile_source(PROGRAM, "scalar")  # no header precompiled yet: parsed
    np.testing.assert_allclose(_run(plain.library, x), want, rtol=1e-14)
    gch = precompile(PRECOMPILED, "scalar")
    assert gch is not None and gch.path.parent == cache
    assert gch.path.stat().st_mode & 0o077 == 0
    seen = _compiles(monkeypatch)
    other = PROGRAM.replace("2.0", "2.5")  # another module: built with the header
    built = compile_source(other, "scalar", PRECOMPILED)
    assert not built.cache_hit and any("-include" in cmd for cmd in seen)
    np.testing.assert_allclose(_run(built.library, x), np.exp(x) * 2.5 + np.abs(x),
                               rtol=1e-14)
    seen.clear()  # a module that does not start with the header: the whole text
    alone = compile_source(PROGRAM.replace("2.0", "3.0"), "scalar", "#include <cmath>\n")
    assert not any("-include" in cmd for cmd in seen)
    np.testing.assert_allclose(_run(alone.library, x), np.exp(x) * 3.0 + np.abs(x),
                               rtol=1e-14)
    assert not list(cache.glob("build-*"))


def test_a_damaged_precompiled_header_is_rebuilt_not_used(cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    verified = precompile(PRECOMPILED, "scalar")
    assert verified is not None
    gch = verified.path
    damaged = gch.read_bytes()[: gch.stat().st_size // 2]
    gch.unlink()  # as another process would: a new file under the name
    gch.write_bytes(damaged)
    os.chmod(gch, 0o600)
    x = np.linspace(-3, 3, 5)
    seen = _compiles(monkeypatch)  # replaced after it was verified: the text is parsed
    built = compile_source(PROGRAM.replace("2.0", "5.0"), "scalar", PRECOMPILED)
    assert seen and not any("-include" in cmd for cmd in seen)
    np.testing.assert_allclose(_run(built.library, x), np.exp(x) * 5.0 + np.abs(x),
                               rtol=1e-14)
    compiler._precompile.cache_clear()
    again = precompile(PRECOMPILED, "scalar")  # verified against its hash: rebuilt
    assert again is not None and again.path == gch and len(gch.read_bytes()) > len(damaged)
    built = compile_source(PROGRAM.replace("2.0", "4.0"), "scalar", PRECOMPILED)
    np.testing.assert_allclose(_run(built.library, x), np.exp(x) * 4.0 + np.abs(x),
                               rtol=1e-14)


def test_a_first_call_in_a_fresh_cache(tmp_path: Path) -> None:
    """A fresh process and cache: the probes and the header compile in the background while
    the first program compiles; its result is NumPy's, and when the process has exited the
    cache holds each probe's entry and no half-built file."""
    root = tmp_path / "fresh"
    script = textwrap.dedent("""
        import numpy as np, stax
        x = np.linspace(-2, 2, 3000).reshape(3, 1000)
        got = stax.jit(lambda a: np.exp(a - a.max(1, keepdims=True)).sum(1))(x)
        np.testing.assert_allclose(got, np.exp(x - x.max(1, keepdims=True)).sum(1),
                                   rtol=1e-12)
        print("ok")
        """)
    env = dict(os.environ, STAX_CACHE_DIR=str(root))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tempfile.gettempdir())
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
    names = [p.name for p in root.iterdir()]
    assert not [n for n in names if n.startswith("build-")], names
    assert any(n.startswith("isa-") for n in names) and "parallel.json" in names
    assert any(n.endswith(".h.gch") for n in names) and any(n.endswith(".c") for n in names)
