"""Stax: trace NumPy programs, fuse them, run them as generated C++ kernels.

`stax.exp`, `stax.where`, `stax.sum`, ... are NumPy's own functions: called on traced arrays
inside a jitted function they dispatch to Stax (NEP 13/18); outside, they are NumPy.
"""

import numpy as _np

from stax.api import clear_caches, jit
from stax.explain import explain
from stax.frontend.numpy_api import FUNCTIONS as _FUNCTIONS
from stax.frontend.numpy_api import UFUNCS as _UFUNCS

_NAMES = sorted(set(_UFUNCS) | {f.__name__ for f in _FUNCTIONS})
globals().update({name: getattr(_np, name) for name in _NAMES if hasattr(_np, name)})

__all__ = ["clear_caches", "explain", "jit", *_NAMES]
