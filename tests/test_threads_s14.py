"""[THREADS, issue 9 item 3] A region's launch team counts the cores this process may run on
(its affinity), not the machine's: pinned to fewer cores than the machine has, an idle-looking
load must not open a team larger than the pinned cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, os, sys
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # before stax: one core
    import numpy as np
    import stax
    from stax.tiling import threads

    class Idle:  # a load sample of the caller alone
        at, runnable = float("inf"), 1

        def sample(self):
            return 1

    threads._load = Idle()
    out = {"cores": threads.CORES, "team": threads.team(2)}
    if sys.argv[1] == "run":  # a kernel planned for 2 threads runs on the pinned core
        rng = np.random.default_rng(0)
        x = rng.standard_normal((301, 97)).astype(np.float32)
        y = rng.standard_normal((97, 301)).astype(np.float32).T  # a transposed input
        f = stax.jit(lambda a, b: (np.exp(a - b) * 2.0).sum(axis=1) + a[:, ::3].max(axis=1))
        want = (np.exp(x - y) * 2.0).sum(axis=1) + x[:, ::3].max(axis=1)
        got = f(x, y)
        out["close"] = bool(np.allclose(got, want, rtol=1e-5, atol=1e-5))
        out["shape"] = list(got.shape)
    print(json.dumps(out))
""")


def _child(mode: str) -> dict[str, object]:
    env = dict(os.environ, OMP_NUM_THREADS="2", STAX_PARALLEL_MIN_NS="0")
    done = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.fast
def test_pinned_process_counts_its_own_cores() -> None:
    got = _child("count")
    assert got == {"cores": 1, "team": 1}


def test_parallel_plan_on_a_pinned_core_matches_numpy() -> None:
    got = _child("run")
    assert got == {"cores": 1, "team": 1, "close": True, "shape": [301]}
