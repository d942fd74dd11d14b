"""The HTML page in a real browser (headless Chromium driven by Playwright): it renders without
console errors, and clicking a kernel in the fusion graph opens the section with its code.
Skipped when Playwright or a Chromium binary is missing (`apt-get install chromium` and
`pip install playwright`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import stax

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary installed")


def softmax_and_transpose(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), x.T * 2, np.cumsum(x, 0)


def test_page_renders_and_a_click_on_a_kernel_shows_its_code(tmp_path: Path) -> None:
    x = np.linspace(-2, 2, 64 * 32, dtype=np.float32).reshape(64, 32)
    report = stax.explain(softmax_and_transpose, x, verify=True)
    path = tmp_path / "report.html"
    report.to_html(path)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            assert page.locator("svg.fusion-graph").is_visible()
            assert page.locator("svg.memory-timeline").is_visible()
            links = page.locator("a.kernel-link")
            assert links.count() == len(report.schedule.kernels)
            last = links.nth(links.count() - 1)
            kernel = last.get_attribute("data-kernel")
            code = page.locator(f"#{kernel} .kernel-code")
            assert not code.is_visible()  # sections start closed
            last.click()
            code.wait_for(state="visible", timeout=5000)
            assert page.locator(f"#{kernel}").get_attribute("open") is not None
            assert "kernel" in code.inner_text() or "=" in code.inner_text()
            assert page.locator(f'a.kernel-link.selected[data-kernel="{kernel}"]').count() == 1
            page.locator("#text-report summary").click()
            assert "== Fusion log ==" in page.locator("#text-report pre").inner_text()
        finally:
            browser.close()
    assert errors == []
