"""The loop-IR validator passes every program of the golden C++ dump (issue 16, helper S16).

`tools/dump_cpp.py`'s 155 programs (the corpus, the shape-generic programs, reductions, scans,
tiles, gathers, complex, float16, integers, forced forms, loops compiled once per body) run
through `stax.jit` with the backend's `build` replaced by a capture, so nothing is compiled;
every program lowering produces on the way (graph segments around breaks and loop bodies
included) is checked by `stax.ir.validate`, and the loop-IR printer prints each.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import stax.api
from stax.backends.cpu import CpuBackend
from stax.ir.printer import format_program
from stax.ir.validate import validate
from stax.loops import runner
from stax.lower import Lowered

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import dump_cpp  # noqa: E402


def test_every_dumped_program_is_valid_loop_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple[str, Lowered]] = []
    current = [""]

    def checking(lower: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Lowered:
            lowered = lower(*args, **kwargs)
            checked.append((current[0], lowered))
            return lowered
        return run

    monkeypatch.setattr(CpuBackend, "build", dump_cpp._capture)
    monkeypatch.setattr(stax.api, "isa_level", lambda forced=None: forced or "avx2")
    monkeypatch.setattr(stax.api, "lower", checking(stax.api.lower))
    monkeypatch.setattr(runner, "lower", checking(runner.lower))
    programs = dump_cpp.all_programs()
    emitted = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (fn, args, options) in programs.items():
            current[0] = name
            emitted += not dump_cpp.emitted(fn, args, options).startswith("// no module")
    assert len(programs) >= 150 and emitted >= 140
    assert len({name for name, _ in checked}) >= emitted  # each emitted module was lowered here
    problems = [f"{name}: {p}" for name, lowered in checked
                for p in validate(lowered.program)]
    assert problems == []
    for name, lowered in checked:
        text = format_program(lowered.program)
        assert all(node.name in text for node in lowered.program.nodes), name
