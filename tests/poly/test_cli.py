"""`stax poly ...` through stax.cli.main."""

from __future__ import annotations

from pathlib import Path

import pytest

from stax.cli import main

KERNELS = Path(__file__).parent / "kernels"
SEIDEL = str(KERNELS / "seidel-2d.c")


def test_deps_prints_distances(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["poly", "deps", str(KERNELS / "jacobi-1d.c")]) == 0
    out = capsys.readouterr().out
    assert "RAW:" in out and "(1, -1)" in out


def test_check_reports_a_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["poly", "check", SEIDEL, "--schedule", "{ S0[t,i,j] -> [t, j, i] }"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("illegal") and "dependence S0(" in out
    pluto = "{ S0[t,i,j] -> [t, t+i, 2t+i+j] }"
    assert main(["poly", "check", SEIDEL, "--schedule", pluto]) == 0
    assert "permutable" in capsys.readouterr().out


def test_schedule_codegen_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["poly", "schedule", SEIDEL]) == 0
    assert "band" in capsys.readouterr().out
    pluto = "{ S0[t,i,j] -> [t, t+i, 2t+i+j] }"
    assert main(["poly", "codegen", SEIDEL, "--schedule", pluto, "--tile", "4,4,4"]) == 0
    assert "floord" in capsys.readouterr().out
    args = ["poly", "validate", SEIDEL, "--schedule", pluto, "--param", "n=8"]
    assert main([*args, "--param", "tsteps=3"]) == 0
    assert capsys.readouterr().out.startswith("OK")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", SEIDEL, "--schedule", "{ S0[t,i] -> [t, i] }"], "3 iterators"),
        (["check", SEIDEL, "--schedule", "{ S9[t,i,j] -> [t, i, j] }"], "unknown statement 'S9'"),
        (["codegen", SEIDEL, "--schedule", "{ S0[t,i,j] -> [t, j, i] }"], "illegal"),
        (["codegen", SEIDEL, "--tile", "4,4"], "illegal"),
        (["validate", SEIDEL, "--schedule", "{ S0[t,i,j] -> [t,i,j] }"], "parameter"),
        (["deps", "/nonexistent.c"], "No such file"),
    ],
)
def test_errors_are_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["poly", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("stax poly")


def test_parse_error_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text("for (i = 0; i < N; i++)\n  A[i] = 1;\nwhile (x) { A[0] = 2; }\n")
    assert main(["poly", "deps", str(bad)]) == 2
    assert "line 3" in capsys.readouterr().err
