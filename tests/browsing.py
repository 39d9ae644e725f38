"""What the browser tests share: Debian's Chromium (required in CI, skipped without it
elsewhere), a built site served from 127.0.0.1, and one Chromium per test module."""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_chromium() -> None:
    """Skip the calling test module without Chromium; fail it when CI requires the browser."""
    if CHROMIUM.exists():
        return
    if os.environ.get("MEMSITE_REQUIRE_BROWSER"):  # .ci/run sets it: CI must not skip these
        pytest.fail(
            "MEMSITE_REQUIRE_BROWSER is set but /usr/bin/chromium is missing", pytrace=False
        )
    pytest.skip("Chromium is not installed at /usr/bin/chromium", allow_module_level=True)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` served over HTTP from 127.0.0.1; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
