"""The op table: one definition per elementwise op, reduction and scan, holding every fact.

Frontend dispatch (the ufunc objects themselves are the keys), the dtype rule (NumPy's own
`ufunc.resolve_dtypes`), the recompute cost used by lowering and planning, the kernel error
flags, the C++ spelling, reduction/scan identity and combine rules, a decomposition into other
ops (for a backend that lacks the op) and the test domain all come from here. The C++ flag enum
in the runtime header and the Python flag messages of the wrapper are generated from `FLAGS`.
Adding an op (say `scipy.special.erf`) is one `Elementwise(...)` entry below.
"""

from stax.ops.table import (
    ANY_FLAG,
    ELEMENTWISE,
    FLAGS,
    PARTS,
    REDUCTIONS,
    SCANS,
    Cpp,
    Domain,
    Elementwise,
    Flag,
    Part,
    Reduction,
    Scan,
    by_name,
    by_ufunc,
    flag_enum_cpp,
    flag_index,
    part,
    scan,
    ufunc_names,
)

__all__ = [
    "ANY_FLAG", "ELEMENTWISE", "FLAGS", "PARTS", "REDUCTIONS", "SCANS", "Cpp", "Domain",
    "Elementwise",
    "Flag", "Part", "Reduction", "Scan", "by_name", "by_ufunc", "flag_enum_cpp", "flag_index",
    "part", "scan", "ufunc_names",
]
