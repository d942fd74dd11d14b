"""[H9, issue 9] The launch-time team size: the cores no other thread runs on, from a sampled
count of runnable threads (faked here), and the plan's reason naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stax.tiling import threads
from stax.tiling.threads import launch_team


@pytest.mark.parametrize(("planned", "runnable", "cores", "want"), [
    (2, 1, 2, 2),  # idle machine: the caller alone
    (2, 2, 2, 1),  # one other busy thread: it keeps its core
    (2, 3, 2, 1),  # two busy processes on two cores (the case): serial
    (2, 40, 2, 1),
    (8, 4, 8, 5),  # three others busy: five cores left
    (4, 1, 8, 4),  # never more than planned
    (1, 1, 8, 1),
    (4, 0, 4, 4),  # a count without the caller: as idle
])
def test_launch_team(planned: int, runnable: int, cores: int, want: int) -> None:
    assert launch_team(planned, runnable, cores) == want


def test_load_samples_the_runnable_field_at_most_every_sample_period(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "loadavg"
    fake.write_text("0.50 0.40 0.30 3/120 4242\n")
    # a sample period no pause of a loaded machine outlasts (5 ms did: the test was flaky)
    monkeypatch.setattr(threads, "SAMPLE_SECONDS", 3600.0)
    load = threads._Load(str(fake))
    assert load.sample() == 3
    fake.write_text("0.50 0.40 0.30 1/120 4243\n")
    assert load.sample() == 3  # within SAMPLE_SECONDS: the last sample
    monkeypatch.setattr(threads, "SAMPLE_SECONDS", -1.0)
    assert load.sample() == 1
    fake.write_text("garbage\n")
    assert load.sample() == 1  # unreadable: as idle
    assert threads._Load(str(tmp_path / "missing")).sample() == 1  # no procfs: as idle


def test_team_uses_the_sample_and_the_core_count(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "loadavg"
    fake.write_text("4.00 4.00 4.00 3/200 77\n")  # the caller and two busy processes
    monkeypatch.setattr(threads, "_load", threads._Load(str(fake)))
    monkeypatch.setattr(threads, "CORES", 2)
    assert threads.team(2) == 1
    monkeypatch.setattr(threads, "CORES", 16)
    assert threads.team(8) == 8


def test_plan_reason_names_the_launch_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "1000")
    threads.crossover.cache_clear()
    try:
        pays, why = threads.worth_parallel(10**8, 0)
        assert pays and "at launch, a team of the cores idle then" in why
        pays, why = threads.worth_parallel(8, 0)
        assert not pays and "at launch" not in why
    finally:
        threads.crossover.cache_clear()


SPIN_PROBE = """
import ctypes, os, sys
if sys.argv[1] == "first":
    ctypes.CDLL("libgomp.so.1")  # as `import torch` does before stax
from stax.tiling import threads
print(threads.SPINNING, os.environ["OMP_WAIT_POLICY"])
"""


@pytest.mark.parametrize(("order", "policy", "want"), [
    ("first", None, "True passive"),  # loaded before stax, default policy: spinning, said so
    ("first", "active", "False active"),  # the user's choice: not reported
    ("after", None, "False passive"),  # stax first: its policy applies
])
def test_a_runtime_loaded_before_stax_is_detected(order: str, policy: str | None,
                                                  want: str) -> None:
    """[CLIFF3] libgomp reads OMP_WAIT_POLICY once, when loaded: a process that loaded it before
    importing stax keeps spinning workers; stax detects that at import."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", SPIN_PROBE, order], env=env, check=True,
                         capture_output=True, text=True).stdout.split("\n")[0]
    assert out == want


def test_plan_reason_names_spinning_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAX_PARALLEL_MIN_NS", "1000")
    monkeypatch.setattr(threads, "SPINNING", True)
    threads.crossover.cache_clear()
    try:
        pays, why = threads.worth_parallel(10**8, 0)
        assert pays and "set OMP_WAIT_POLICY=passive, or import stax first" in why
        assert "spin" not in threads.worth_parallel(8, 0)[1]  # serial: no workers
    finally:
        threads.crossover.cache_clear()
