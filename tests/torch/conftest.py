"""Dynamo's caches are cleared after each test (each test compiles its own models)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _reset_dynamo() -> Iterator[None]:
    yield
    torch._dynamo.reset()
