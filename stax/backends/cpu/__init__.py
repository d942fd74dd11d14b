"""The CPU backend: C++ with OpenMP and SIMD pragmas, compiled by g++ (`CpuBackend`)."""

from stax.backends.cpu.backend import CpuBackend

__all__ = ["CpuBackend"]
