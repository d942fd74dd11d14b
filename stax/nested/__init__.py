"""Nested data parallelism over ragged arrays (seed 004: Futhark's full flattening).

    import stax.nested as sn
    sn.map(lambda n: sn.reduce(np.add, 0, sn.map(lambda i: i + 2, sn.iota(n))),
           np.array([5, 7]))                       # [20, 35]
"""

from stax.nested.api import (
    Explanation,
    Jitted,
    concat,
    cond,
    explain,
    interpret,
    iota,
    jit,
    length,
    loop,
    map,
    range,
    reduce,
    replicate,
    scan,
    scatter,
)
from stax.nested.primitives import (
    expresum,
    exscan,
    partition,
    repiota,
    seggather,
    segiota,
    segreduce,
    segscan,
    segscatter,
)
from stax.nested.ragged import Ragged

__all__ = [
    "Explanation", "Jitted", "Ragged", "concat", "cond", "explain", "expresum", "exscan",
    "interpret", "iota", "jit", "length", "loop", "map", "partition", "range", "reduce",
    "repiota", "replicate", "scan", "scatter", "segiota", "seggather", "segreduce", "segscan",
    "segscatter",
]
