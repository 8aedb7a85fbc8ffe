"""The documentation site builds with --strict (a broken link, a missing page or an
unknown anchor fails), and the README stays a page that fits on a screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs build --strict over docs/ succeeds and writes every page of the nav."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-d", str(tmp_path / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    for page in ("index.html", "tutorial/index.html", "getting-started/index.html",
                 "reference/commands/index.html", "samples/index.html", "security/index.html"):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Five examples" in home and 'href="tutorial/"' in home


def test_the_readme_fits_on_a_screen() -> None:
    """At most 200 lines, with the Quickstart's two commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make demo\nmake test" in text
