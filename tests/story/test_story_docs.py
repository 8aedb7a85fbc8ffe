"""The documentation site builds with --strict, and a warning fails it (a broken link, a
missing page or an unknown anchor); the built site works where users open it, from disk
with no network: menu links open pages and search finds words. The README stays a page
that fits on a screen."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import chromium_context

ROOT = Path(__file__).resolve().parents[2]
# How `make docs` builds: without --quiet, which hides warnings from --strict's count
BUILD = [sys.executable, "-m", "mkdocs", "build", "--strict"]
ENV = dict(os.environ, NO_MKDOCS_2_WARNING="1")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*BUILD, "-f", str(config), "-d", str(site)], cwd=config.parent,
                          env=ENV, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The site, built once for the tests of this file (the build takes 10 s to a minute)."""
    site = tmp_path_factory.mktemp("docs") / "site"
    return _build(ROOT / "mkdocs.yml", site), site


@pytest.fixture
def site(built) -> Path:
    done, path = built
    if done.returncode != 0:
        pytest.fail(f"the site did not build:\n{done.stderr}")
    return path


def test_the_site_builds_strictly_without_a_warning(built) -> None:
    """mkdocs build --strict over docs/ succeeds, says no warning, and writes every page of
    the nav as a file that names its links' .html files (from disk a directory link opens
    a listing)."""
    done, site = built
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stdout + done.stderr, done.stderr
    for page in ("index.html", "tutorial.html", "getting-started.html",
                 "reference/commands.html", "samples/index.html", "security.html",
                 "search/search_index.js"):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Five examples" in home and 'href="tutorial.html"' in home
    # nothing a page loads comes from the network (fonts, the search worker's shim)
    remote = re.compile(r'<(?:script|img|iframe)[^>]*\ssrc="(?:https?:)?//|'
                        r'<link[^>]*\shref="(?:https?:)?//')
    loading = [p.name for p in site.rglob("*.html") if remote.search(p.read_text("utf-8"))]
    assert loading == []


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The same command over a page with a broken image link (as ../../samples/X.png was):
    the build fails and names the link. The project's validation settings, nothing else."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n![a picture](../../samples/nowhere.png)\n",
                                   encoding="utf-8")
    small = {"site_name": "broken", "docs_dir": "docs", "strict": config["strict"],
             "validation": config["validation"], "theme": {"name": "material"}}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small), encoding="utf-8")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "WARNING" in done.stderr and "nowhere.png" in done.stderr, done.stderr


def test_make_docs_builds_as_this_file_does() -> None:
    """`make docs` runs the same strict build, without --quiet (which let four broken image
    links pass)."""
    done = subprocess.run(["make", "-n", "--no-print-directory", "docs"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    line = next(x for x in done.stdout.splitlines() if "mkdocs build" in x)
    assert "build --strict" in line and "--quiet" not in line.split() and \
        "-q" not in line.split(), line


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:
    yield from chromium_context(tmp_path_factory.mktemp("chromium-profile"),
                                {"width": 1280, "height": 900})


def test_the_site_navigates_and_searches_from_disk(site: Path, browser) -> None:
    """Opened as file://.../index.html, as the README says: the menu link opens the
    tutorial (not a directory listing), search for retain_graph lists the tutorial, and
    nothing is fetched from anywhere but the disk."""
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto((site / "index.html").as_uri())
    page.locator("nav.md-nav--primary").get_by_role(
        "link", name="Tutorial: autograd from the command line").click()
    page.wait_for_url("**/tutorial.html")
    heading = page.locator("h1").first.inner_text().rstrip("¶")  # ¶: the permalink
    assert heading == "Tutorial: autograd from the command line"
    page.locator("input.md-search__input").click()
    page.keyboard.type("retain_graph", delay=20)  # typed: search listens to key events
    page.wait_for_selector(".md-search-result__item", timeout=30_000)
    meta = page.locator(".md-search-result__meta").inner_text()
    assert "matching document" in meta, meta
    first = page.locator(".md-search-result__item").first
    assert "retain_graph" in first.inner_text()
    assert first.locator("a").first.get_attribute("href").split("#")[0].endswith(
        "tutorial.html")
    assert errors == []
    assert [url for url in requests if not url.startswith("file://")] == []


def test_the_readme_fits_on_a_screen() -> None:
    """At most 200 lines, with the Quickstart's two commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make demo\nmake test" in text
