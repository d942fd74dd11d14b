"""Stax: trace NumPy programs, fuse them, run them as generated C++ kernels."""
