"""Compiler driver: gcc + OpenMP, a disk cache keyed by the source hash, ctypes loading.

The cache lives in `$STAX_CACHE_DIR` or `~/.cache/stax`. Entries are written to a temporary
file and renamed into place, so two processes compiling the same kernel both succeed; an entry
that fails to load is rebuilt. ISA levels (seed 000 §8.1) are probed once per machine by
compiling and running a test program, widest first; `STAX_ISA` forces one.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ISA_LEVELS = ("avx512", "avx2", "scalar")
ISA_FLAGS = {
    "avx512": ["-march=x86-64-v4", "-mtune=native", "-mprefer-vector-width=512"],
    "avx2": ["-march=x86-64-v3", "-mtune=native"],
    "scalar": ["-march=x86-64", "-fno-tree-vectorize", "-fno-tree-slp-vectorize"],
}
ISA_PROBES = {
    "avx512": "#include <immintrin.h>\nint main(){__m512 a=_mm512_set1_ps(1.f);"
              "return (int)_mm512_reduce_add_ps(_mm512_add_ps(a,a))==32?0:1;}",
    "avx2": "#include <immintrin.h>\nint main(){__m256 a=_mm256_set1_ps(1.f);"
            "__m256 b=_mm256_fmadd_ps(a,a,a);float o[8];_mm256_storeu_ps(o,b);"
            "return o[0]==2.f?0:1;}",
    "scalar": "int main(){return 0;}",
}
BASE_FLAGS = ["-O3", "-fopenmp", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno",
              "-std=c++17", "-w"]
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                  "-fno-omit-frame-pointer", "-O1"]


class CompilerNotFound(RuntimeError):
    pass


class CompileError(RuntimeError):
    pass


def cache_dir() -> Path:
    path = Path(os.environ.get("STAX_CACHE_DIR") or Path.home() / ".cache" / "stax")
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise CompilerNotFound(
            "stax: no C++ compiler found (install g++, e.g. `apt-get install g++`, or set CXX)")
    return cxx


def sanitize_enabled() -> bool:
    return os.environ.get("STAX_SANITIZE") == "1"


@functools.cache
def _probe_isa(cache: str) -> str:
    marker = Path(cache) / "isa.txt"
    if marker.exists():
        level = marker.read_text().strip()
        if level in ISA_LEVELS:
            return level
    for level in ISA_LEVELS:
        if _runs(level):
            _atomic_write(marker, level.encode())
            return level
    return "scalar"


def _runs(level: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "probe.cpp", Path(tmp) / "probe"
        src.write_text(ISA_PROBES[level])
        flags = [f for f in ISA_FLAGS[level] if not f.startswith("-mtune")]
        built = subprocess.run([compiler(), *flags, str(src), "-o", str(exe)],
                               capture_output=True)
        if built.returncode != 0:
            return False
        return subprocess.run([str(exe)], capture_output=True).returncode == 0


def isa_level(forced: str | None = None) -> str:
    """The ISA level for kernels: `forced` (the isa= option) or `STAX_ISA` if set, else the
    widest one this machine runs. A forced level the machine cannot run is an error."""
    forced = forced or os.environ.get("STAX_ISA") or None
    if forced is None:
        return _probe_isa(str(cache_dir()))
    if forced not in ISA_LEVELS:
        raise ValueError(f"stax: ISA level {forced!r} is not one of {', '.join(ISA_LEVELS)}")
    best = _probe_isa(str(cache_dir()))
    if ISA_LEVELS.index(forced) < ISA_LEVELS.index(best):
        raise ValueError(f"stax: ISA level {forced!r} does not run on this machine "
                         f"(the widest it runs is {best!r})")
    return forced


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


@dataclass(frozen=True)
class Compiled:
    library: ctypes.CDLL
    path: Path
    cache_hit: bool


def compile_source(source: str, isa: str) -> Compiled:
    """Compile `source` to a shared library (or take it from the cache) and load it."""
    flags = BASE_FLAGS + ISA_FLAGS[isa] + (SANITIZE_FLAGS if sanitize_enabled() else [])
    key = hashlib.sha256("\0".join([source, *flags]).encode()).hexdigest()[:24]
    root = cache_dir()
    lib = root / f"stax_{key}.so"
    if lib.exists():
        try:
            with open(lib, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    raise OSError("not a shared library")
            return Compiled(ctypes.CDLL(str(lib)), lib, True)
        except OSError:
            lib.unlink(missing_ok=True)  # a corrupt entry: rebuild it
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        src = Path(tmp) / "kernel.cpp"
        src.write_text(source)
        out = Path(tmp) / "kernel.so"
        result = subprocess.run([compiler(), *flags, str(src), "-o", str(out), "-lmvec", "-lm"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise CompileError(f"stax: the C++ compiler failed on generated code "
                               f"(a bug in Stax):\n{result.stderr[-4000:]}")
        (root / f"stax_{key}.cpp").write_text(source)
        os.replace(out, lib)
    return Compiled(ctypes.CDLL(str(lib)), lib, False)
