"""Progress bars for long compiles (programs of thousands of ops, the exact fusion solver): on
a terminal only, and never when `STAX_QUIET=1`.

    with progress("stax: compiling", total=3) as bar:
        ...; bar.advance("lowered")

The bar is redrawn in place on stderr and erased when done, so it leaves no trace in logs or
in output captured from a pipe (which is not a terminal, so nothing is drawn at all).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

WIDTH = 28
MIN_INTERVAL = 0.1  # seconds between redraws
PROGRESS_MIN_OPS = 1000  # programs at least this large show a bar while they compile


def enabled(stream: TextIO) -> bool:
    return os.environ.get("STAX_QUIET", "") != "1" and stream.isatty()


class Progress:
    def __init__(self, label: str, total: int, stream: TextIO, when: bool = True) -> None:
        self.label, self.total, self.stream = label, max(total, 1), stream
        self.done = 0
        self.drawn_at = 0.0
        self.on = when and enabled(stream)

    def advance(self, stage: str = "", steps: int = 1) -> None:
        self.done = min(self.done + steps, self.total)
        now = time.monotonic()
        if self.on and (now - self.drawn_at >= MIN_INTERVAL or self.done == self.total):
            self.drawn_at = now
            filled = WIDTH * self.done // self.total
            bar = "#" * filled + "." * (WIDTH - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {stage}\x1b[K")
            self.stream.flush()

    def close(self) -> None:
        if self.on and self.drawn_at:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@contextmanager
def progress(label: str, total: int, stream: TextIO | None = None, when: bool = True
             ) -> Iterator[Progress]:
    """A bar of `total` steps on `stream` (stderr), drawn only `when` and on a terminal."""
    bar = Progress(label, total, sys.stderr if stream is None else stream, when)
    try:
        yield bar
    finally:
        bar.close()
