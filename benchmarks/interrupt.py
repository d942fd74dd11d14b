"""Issue 8 item 10 figures in one run: time from SIGINT to KeyboardInterrupt during a long
kernel (median and max of several tries; threads 1 and 2; a flat elementwise kernel, strip-mined,
and a row kernel), and what arming a call for Ctrl-C costs per call.

    python benchmarks/interrupt.py            # the table (run on a quiet machine)
    python benchmarks/interrupt.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import signal
import statistics
import tempfile
import threading
import time
import timeit

os.environ.setdefault("STAX_CACHE_DIR", tempfile.mkdtemp(prefix="stax-bench-"))

import numpy as np  # noqa: E402

import stax  # noqa: E402
from stax.runtime.fast import fastcall  # noqa: E402


def chain(a: np.ndarray) -> np.ndarray:
    b = np.sin(np.sin(np.sin(np.sin(a * 1.5) + 0.25)))
    return np.sin(np.sin(np.sin(np.sin(b) - 0.5)))


def rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sin(a[:, None] * b).sum(1)


def _kick(delay: float, sent: list[float]) -> None:
    time.sleep(delay)
    sent.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)


def latencies(call: object, tries: int, delay: float) -> list[float]:
    """Seconds from SIGINT (sent `delay` s into the call) to KeyboardInterrupt at the call."""
    out = []
    for _ in range(tries):
        sent: list[float] = []
        timer = threading.Thread(target=_kick, args=(delay, sent))
        timer.start()
        try:
            call()  # type: ignore[operator]
        except KeyboardInterrupt:
            out.append(time.perf_counter() - sent[0])
        timer.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    tries, n, side = (3, 4_000_000, 6_000) if quick else (15, 40_000_000, 40_000)
    print("| kernel | threads | whole call (s) | SIGINT -> KeyboardInterrupt, median (ms) "
          "| max (ms) |")
    print("|---|---|---|---|---|")
    x = np.linspace(-2, 2, n, dtype=np.float32)
    a, b = np.linspace(-1, 1, side), np.linspace(0, 3, side)
    for threads in (1, 2):
        f = stax.jit(chain, threads=threads)
        g = stax.jit(rows, threads=threads)
        for name, fn, args in ((f"chain of 8 sin, {n:.0e} float32", f, (x,)),
                               (f"rows of sin(a_i b_j), {side}^2", g, (a, b))):
            call = functools.partial(fn, *args)
            call()
            whole = min(timeit.repeat(call, number=1, repeat=2))
            lat = latencies(call, tries, delay=min(0.3, whole / 3))
            assert len(lat) == tries, "a call ended before its SIGINT"
            print(f"| {name} | {threads} | {whole:.2f} | {statistics.median(lat) * 1e3:.2f} | "
                  f"{max(lat) * 1e3:.2f} |")
    module = fastcall()
    if module is not None:
        flags = (ctypes.c_int32 * 8)()
        address = ctypes.addressof(flags)

        def armed() -> None:
            module.disarm(address, module.arm(address))

        def plain() -> None:
            len(flags)
            len(flags)

        number = 20_000 if quick else 200_000
        cost = (min(timeit.repeat(armed, number=number, repeat=7))
                - min(timeit.repeat(plain, number=number, repeat=7))) / number
        print(f"\narming a call (fastcall's arm + disarm, less two empty calls): "
              f"{cost * 1e9:.0f} ns per call")
    h = stax.jit(lambda v: v + 1)
    small = np.arange(10.0)
    h(small)
    warm = min(timeit.repeat(lambda: h(small), number=20_000, repeat=7)) / 20_000
    print(f"warm call of a jitted x + 1 on 10 float64: {warm * 1e6:.2f} us")


if __name__ == "__main__":
    main()
