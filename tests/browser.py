"""Headless Chromium for the browser tests: Debian's Chromium (the OS package), driven by the
Python package playwright pointed at it (Playwright's own browser download is not used).

Without Chromium or playwright a test that asks for the browser skips, naming what to
install; with GRADCLI_REQUIRE_BROWSER=1 (``make test-browser``) that is a failure instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
REQUIRED = os.environ.get("GRADCLI_REQUIRE_BROWSER") == "1"


def missing(reason: str) -> NoReturn:
    """Skip (or, under GRADCLI_REQUIRE_BROWSER=1, fail) for ``reason``."""
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


def chromium_path() -> str | None:
    """Debian's Chromium (package chromium), or GRADCLI_CHROMIUM."""
    for candidate in (os.environ.get("GRADCLI_CHROMIUM"), shutil.which("chromium"),
                      "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def chromium_context(profile: Path, viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A persistent Chromium context over a fresh ``profile`` folder, headless, with the
    network features off; skips (or fails) naming what is missing. For a fixture to
    ``yield from``."""
    path = chromium_path()
    if path is None:
        missing("Chromium not found: install the OS package (apt-get install chromium), "
                "or run make test-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the Python package playwright is not installed: pip install playwright "
                "(make test-browser installs it)")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=path, headless=True, args=CHROMIUM_ARGS,
            viewport=viewport or {"width": 960, "height": 760})
        yield context
        context.close()
