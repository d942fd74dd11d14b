"""The compiled per-call entry point (fastcall.c, issue 9 item 4), built on first use into the
verified kernel cache and imported as an extension module. None when it cannot be built (no
Python headers, no compiler) or with STAX_FASTCALL=0: the wrapper then calls through ctypes."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import numpy as np

from stax.runtime.compiler import CacheError, CompileError, CompilerNotFound, compile_object

SOURCE = Path(__file__).with_name("fastcall.c")
MAX_ARGS = 16  # fastcall.c's MAX_ARGS: regions with more arguments are called through ctypes


def _load(path: str) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader("stax_fastcall", path)
    spec = importlib.util.spec_from_file_location("stax_fastcall", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@functools.cache
def fastcall() -> ModuleType | None:
    include = Path(sysconfig.get_paths()["include"])
    if os.environ.get("STAX_FASTCALL") == "0" or not (include / "Python.h").exists():
        return None
    flags = ["-O2", "-shared", "-fPIC", "-w", f"-I{include}", f"-I{np.get_include()}",
             f"-DSTAX_PYTHON={sys.hexversion}", f"-DSTAX_NUMPY={np.__version__!r}",
             "-x", "c"]  # the source that follows is C
    try:
        module, _, _ = compile_object(SOURCE.read_text(), flags, [], _load, suffix=".c")
    except (CompileError, CacheError, CompilerNotFound, ImportError):
        return None
    return module
