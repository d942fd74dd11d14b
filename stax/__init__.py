"""Stax: trace NumPy programs, fuse them, run them as generated C++ kernels."""

from stax.api import jit

__all__ = ["jit"]
