"""The polyhedral layer (seed 002, seed 000 §7.7): dependences, schedule trees, the unified
legality check with counterexamples, transformations, scheduling and code generation."""

from stax.poly._isl import BudgetExceeded, PolyError
from stax.poly.autosched import auto_schedule
from stax.poly.check import BandInfo, Verdict, Violation, check
from stax.poly.codegen import Validation, codegen, validate
from stax.poly.deps import Dependences, dependences
from stax.poly.loop_program import PolyStatement, from_loop_program, verify_fusion
from stax.poly.model import Scop, Statement
from stax.poly.parse import parse_c
from stax.poly.transform import (
    Transformed,
    distribute,
    fuse,
    interchange,
    parallelepiped_tiling_legal,
    reverse,
    shift,
    skew,
    strip_mine,
    tile,
    wavefront,
)
from stax.poly.tree import ScheduleTree

fission = distribute

__all__ = [
    "PolyStatement",
    "Validation",
    "auto_schedule",
    "codegen",
    "from_loop_program",
    "validate",
    "verify_fusion",
    "BandInfo",
    "BudgetExceeded",
    "Dependences",
    "PolyError",
    "ScheduleTree",
    "Scop",
    "Statement",
    "Transformed",
    "Verdict",
    "Violation",
    "check",
    "dependences",
    "distribute",
    "fission",
    "fuse",
    "interchange",
    "parallelepiped_tiling_legal",
    "parse_c",
    "reverse",
    "shift",
    "skew",
    "strip_mine",
    "tile",
    "wavefront",
]
