"""The compiled per-call entry point (fastcall.c, issue 9 item 4), built on first use into the
verified kernel cache and imported as an extension module. None when it cannot be built (no
Python headers, no compiler) or with STAX_FASTCALL=0: the wrapper then calls through ctypes.

It also makes kernels interruptible by Ctrl-C (issue 8 item 10, see fastcall.c): calls on
Python's main thread are armed, and a SIGINT stops the kernel between chunks of its outer loop
and raises KeyboardInterrupt. Calls through ctypes are armed by `interruptible`. Without the
module (STAX_FASTCALL=0, no Python headers) kernels run to their end, as before."""

from __future__ import annotations

import _signal
import contextlib
import ctypes
import importlib.machinery
import importlib.util
import os
import signal
import sys
import sysconfig
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

from stax.ops import ANY_FLAG
from stax.runtime.compiler import (
    CacheError,
    CompileError,
    CompilerNotFound,
    compile_object,
    once,
)

SOURCE = Path(__file__).with_name("fastcall.c")
MAX_ARGS = 16  # fastcall.c's MAX_ARGS: the most arguments a function called by `run` takes
# [CALL] `run` with more arrays than MAX_ARGS (at most MAX_MANY) calls a region's entry taking
# one array of their addresses (stax.backends.MANY_ARGS is MAX_ARGS: a region with more
# arguments has that entry); regions with more than MAX_MANY are called through ctypes
MAX_MANY = 1024


def _load(path: str) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader("stax_fastcall", path)
    spec = importlib.util.spec_from_file_location("stax_fastcall", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@once  # [COMPILE] may be started in the background (CpuBackend.prepare)
def fastcall() -> ModuleType | None:
    include = Path(sysconfig.get_paths()["include"])
    if os.environ.get("STAX_FASTCALL") == "0" or not (include / "Python.h").exists():
        return None
    from stax.backends.base import MANY_ARGS  # (a module the runtime's importers load)

    flags = ["-O2", "-shared", "-fPIC", "-w", f"-I{include}", f"-I{np.get_include()}",
             f"-DSTAX_PYTHON={sys.hexversion}", f"-DSTAX_NUMPY={np.__version__!r}",
             f"-DSTAX_ANY_FLAG={ANY_FLAG}", f"-DSTAX_MANY_ARGS={MANY_ARGS}",
             f"-DMAX_MANY={MAX_MANY}", "-x", "c"]  # the source that follows is C
    try:
        module, _, _ = compile_object(SOURCE.read_text(), flags, [], _load, suffix=".c")
    except (CompileError, CacheError, CompilerNotFound, ImportError):
        return None
    _setup(module)
    os.register_at_fork(after_in_child=lambda: _setup(module))  # the forking thread is main
    return module


def disjoint(arrays: Sequence[object], i: int) -> bool:
    """[LOOPS] Whether the array `arrays[i]` shares no memory with the other arrays among
    `arrays` by np.may_share_memory's bounds test (False may still be disjoint element by
    element; other objects are skipped): one C call when the fast call is built."""
    module = fastcall.ready()
    if module is not None:
        return bool(module.disjoint(arrays, i))
    a = arrays[i]
    return not any(k != i and isinstance(o, np.ndarray) and np.may_share_memory(a, o)
                   for k, o in enumerate(arrays))


def _setup(module: ModuleType) -> None:
    # _signal.getsignal: signal.getsignal wraps it in an enum lookup that raises and catches
    # ValueError for a function handler (1.4 us per call)
    module.setup(threading.main_thread().ident, _signal.getsignal, signal.default_int_handler,
                 int(signal.SIGINT))


_gomp: ctypes.CDLL | None = None


def _openmp() -> ctypes.CDLL | None:
    """The libgomp the kernel libraries loaded (None until one is loaded)."""
    global _gomp
    if _gomp is None:
        try:
            _gomp = ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
        except OSError:
            return None
    return _gomp


@contextlib.contextmanager
def interruptible(flags: int, team: int = 0) -> Iterator[None]:
    """Arm a kernel call made through ctypes with the flag buffer at address `flags`: Ctrl-C
    stops the kernel and raises KeyboardInterrupt when the block ends. `team` > 0 [H9]: the
    calling thread's OpenMP thread count during the call (as fastcall's run sets it)."""
    module = fastcall()
    token = None if module is None else module.arm(flags)
    gomp = _openmp() if team > 0 else None
    restore = gomp.omp_get_max_threads() if gomp is not None else 0
    if gomp is not None:
        gomp.omp_set_num_threads(team)
    try:
        yield
    finally:
        if gomp is not None:
            gomp.omp_set_num_threads(restore)
        if token is not None:
            module.disarm(flags, token)  # type: ignore[union-attr]
