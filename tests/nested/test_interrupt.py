"""Issue 8 item 10 for the segmented kernels of stax.nested: Ctrl-C during a long segmented
reduction raises KeyboardInterrupt at the call (each chunk polls the armed call's flag word)
and the next call computes the right result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from conftest import process_cpu_seconds

CHILD = textwrap.dedent("""
    import json, signal, sys, time
    import numpy as np
    import stax.nested as sn

    signal.alarm(240)
    # as a terminal's foreground process: a runner started in the background (`cmd &`) has
    # SIGINT ignored, which children inherit and Python then leaves ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def sines(v):
        v = v * 1.5
        for _ in range(48):
            v = np.sin(v)
        return v

    @sn.jit
    def heavy(r):
        return sn.map(lambda row: sn.reduce(np.add, 0.0, sines(row)), r)

    small = sn.Ragged(np.linspace(-1, 1, 1000), np.array([400, 0, 600]))
    want = [sines(v).sum() for v in (small.values[:400], small.values[:0], small.values[400:])]
    assert np.allclose(heavy(small), want)
    n = 40_000_000
    big = sn.Ragged(np.linspace(-1, 1, n), np.full(n // 1000, 1000))
    print("ready", flush=True)
    start = time.monotonic()
    try:
        heavy(big)
        out = {"finished": time.monotonic() - start}
    except KeyboardInterrupt:
        out = {"caught": time.process_time()}
    out["correct_after"] = bool(np.allclose(heavy(small), want))
    print(json.dumps(out), flush=True)
""")


def test_ctrl_c_stops_a_segmented_kernel() -> None:
    env = dict(os.environ, OMP_NUM_THREADS="2")
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", child.stderr.read() if child.stderr else line
    time.sleep(0.3)  # the kernel is running (it takes seconds)
    sent = process_cpu_seconds(child.pid)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=240)
    result = json.loads(out.strip().splitlines()[-1])
    assert "caught" in result, (result, err[-2000:])
    assert result["caught"] - sent < 1.0  # CPU seconds (two threads) run after SIGINT
    assert result["correct_after"]
