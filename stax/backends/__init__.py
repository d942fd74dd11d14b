"""Backends: code generators behind one interface (`Backend`, `stax.backends.base`).

`get_backend(name)` gives the backend `stax.jit(..., backend=name)` compiles with; "cpu" (C++
with OpenMP and SIMD, `stax.backends.cpu`) is the default and, today, the only one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from stax.backends.base import (
    MANY_ARGS,
    MANY_ARGS_SUFFIX,
    Backend,
    FusionRules,
    KernelRegion,
    region_params,
)


def _cpu() -> Backend:
    from stax.backends.cpu import CpuBackend  # imported on first use: no C++ printer otherwise

    return CpuBackend()


# name -> factory; one instance per name (backends hold no per-compilation state)
FACTORIES: dict[str, Callable[[], Backend]] = {"cpu": _cpu}
DEFAULT = "cpu"


def get_backend(name: str) -> Backend:
    """The backend registered as `name`; an unknown name is a ValueError naming the known
    ones."""
    if not isinstance(name, str) or name not in FACTORIES:
        raise ValueError(f"stax.jit: unknown backend {name!r} (known: {', '.join(FACTORIES)})")
    return _instance(name)


@functools.cache
def _instance(name: str) -> Backend:
    return FACTORIES[name]()


__all__ = ["DEFAULT", "FACTORIES", "MANY_ARGS", "MANY_ARGS_SUFFIX", "Backend", "FusionRules",
           "KernelRegion", "get_backend", "region_params"]
