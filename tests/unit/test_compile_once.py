"""[COMPILE] `once` (a cache whose first call runs once however many threads make it) and
`in_background` (the first build's probes started early): the pieces that let a first call's
probes compile while the program is lowered."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from stax.runtime.compiler import in_background, once


def test_concurrent_first_calls_run_once_and_share_the_result() -> None:
    runs: list[int] = []
    start = threading.Barrier(8)

    @once
    def probe(x: int) -> list[int]:
        runs.append(x)
        time.sleep(0.05)  # the other threads arrive while this runs
        return [x * 2]

    results: list[list[int]] = []

    def call() -> None:
        start.wait()
        results.append(probe(21))

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runs == [21]
    assert results == [[42]] * 8 and all(r is results[0] for r in results)
    assert probe(1) == [2] and runs == [21, 1]  # other arguments: their own entry


def test_exceptions_are_not_cached_and_cache_clear_forgets() -> None:
    calls = [0]

    @once
    def flaky() -> int:
        calls[0] += 1
        if calls[0] == 1:
            raise OSError("the first call fails")
        return calls[0]

    with pytest.raises(OSError, match="first call fails"):
        flaky()
    assert flaky() == 2 and flaky() == 2
    flaky.cache_clear()
    assert flaky() == 3


def test_in_background_runs_every_job_and_ignores_failures() -> None:
    done = threading.Event()
    ran: list[str] = []

    def fails() -> None:
        ran.append("fails")
        raise RuntimeError("ignored here: the caller's own call raises it")

    def works() -> None:
        ran.append("works")
        done.set()

    in_background(fails, works)
    assert done.wait(10)
    for t in threading.enumerate():
        if t.name == "stax-prepare":
            t.join(10)
    assert sorted(ran) == ["fails", "works"]


def test_a_fork_while_a_thread_computes_leaves_the_child_a_free_lock() -> None:
    inside, release = threading.Event(), threading.Event()

    @once
    def slow(x: int) -> int:
        if x == 1:
            inside.set()
            release.wait(10)
        return x + 1

    worker = threading.Thread(target=slow, args=(1,))
    worker.start()
    assert inside.wait(10)  # the worker holds the lock now
    pid = os.fork()
    if pid == 0:  # the child: no worker thread; its own first call must not wait for one
        signal.alarm(20)  # a lock left held would block it: killed, the test fails
        os._exit(0 if slow(2) == 3 else 1)
    release.set()
    worker.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
