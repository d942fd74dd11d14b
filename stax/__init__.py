"""Stax: trace NumPy programs, fuse them, run them as generated C++ kernels."""

from stax.api import jit
from stax.explain import explain

__all__ = ["explain", "jit"]
