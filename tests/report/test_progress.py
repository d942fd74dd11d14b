"""Progress bars: drawn on a terminal, silent on a pipe or with STAX_QUIET=1, erased at the end;
compiles of large programs show one."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import stax
import stax.api
from stax.report.progress import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_that_is_erased_at_the_end(monkeypatch) -> None:
    monkeypatch.delenv("STAX_QUIET", raising=False)
    out = Terminal()
    with progress("work", 2, out) as bar:
        bar.advance("one")
        bar.advance("two")
    text = out.getvalue()
    assert "work [" in text and "2/2 two" in text
    assert text.endswith("\r\x1b[K")  # the line is cleared


@pytest.mark.parametrize("case", ["pipe", "quiet", "not wanted"])
def test_silent_cases(monkeypatch, case: str) -> None:
    monkeypatch.delenv("STAX_QUIET", raising=False)
    if case == "quiet":
        monkeypatch.setenv("STAX_QUIET", "1")
    out = io.StringIO() if case == "pipe" else Terminal()
    with progress("work", 3, out, when=case != "not wanted") as bar:
        for _ in range(3):
            bar.advance()
    assert out.getvalue() == ""


def test_compiling_a_large_program_shows_progress(monkeypatch) -> None:
    monkeypatch.delenv("STAX_QUIET", raising=False)
    monkeypatch.setattr(stax.api, "PROGRESS_MIN_OPS", 1)  # any program counts as large
    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(stax.jit(lambda a: a * 3 + 1)(x), x * 3 + 1)
    assert "stax: compiling" in err.getvalue() and "3/3 compiled" in err.getvalue()


def test_poly_auto_schedule_shows_progress(monkeypatch) -> None:
    from stax import poly

    monkeypatch.delenv("STAX_QUIET", raising=False)
    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    scop = poly.parse_c((Path(__file__).parents[1] / "poly" / "kernels" / "jacobi-1d.c")
                        .read_text())
    tree = poly.auto_schedule(scop)
    assert poly.check(scop, tree).legal
    assert "stax poly: auto-schedule" in err.getvalue() and "3/3 done" in err.getvalue()
