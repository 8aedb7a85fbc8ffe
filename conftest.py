"""Every example on a page is a test: README.md and docs/**/*.md, collected by sybil.

Two kinds of block run:

* ```` ```console ```` blocks: each ``$ command`` line (continued by a trailing ``\\``) runs in
  bash from a fresh temporary directory holding a copy of ``docs/examples/``, with this
  venv's ``gradcli`` first on PATH, a 100-column terminal and no colour. What the command
  prints must
  equal the lines under it; a line ``...`` stands for any number of lines. stdout and
  stderr go to one pipe, as in a terminal, so notes on stderr stand where a user sees them.
* ```` ```python ```` blocks: run in one namespace per page (so later blocks see earlier
  names); a block written as a doctest (``>>>``) compares what it prints.

Other blocks (``sh``, ``text``, no language) are shown, not run: they are for commands that
need a cluster, a notebook or a file the page does not ship.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser

ROOT = Path(__file__).resolve().parent
EXAMPLES = ROOT / "docs" / "examples"
ELLIPSIS = "..."


def split_console(text: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of a console block, each with the lines it should print."""
    runs: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            raise ValueError(f"console block: expected a '$ ' line, found {line!r}")
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        expected: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        runs.append((command, expected))
    return runs


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-for-line equality, where a line ``...`` in ``expected`` stands for any lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == ELLIPSIS:
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0] == head and matches(rest, actual[1:])


def _trimmed(lines: list[str]) -> list[str]:
    """Lines without trailing spaces, and without blank lines at the end."""
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GRADCLI_", "DASK_")) and k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(COLUMNS="100", LINES="40", NO_COLOR="1", TERM="dumb", LC_ALL="C.UTF-8",
               PYTHONIOENCODING="utf-8")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def run_console(example: Example) -> str | None:
    """Run a console block's commands in a fresh directory; a failure message or None."""
    with tempfile.TemporaryDirectory(prefix="gradcli-doc-") as tmp:
        if EXAMPLES.is_dir():
            shutil.copytree(EXAMPLES, tmp, dirs_exist_ok=True)
        for command, expected in split_console(example.parsed):
            done = subprocess.run(["bash", "-c", command], cwd=tmp, env=_environment(),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=120)
            actual = done.stdout.splitlines()
            if not matches(_trimmed(expected), _trimmed(actual)):
                return (f"\n$ {command}\nexpected:\n" + "\n".join(expected)
                        + f"\nprinted (exit {done.returncode}):\n" + "\n".join(actual))
    return None


def _enter_scratch(namespace: dict) -> None:
    """Python blocks run in a fresh directory too (a page that writes a file writes it
    there), with this venv's ``gradcli`` on PATH as for console blocks."""
    scratch = tempfile.mkdtemp(prefix="gradcli-doc-")
    if EXAMPLES.is_dir():
        shutil.copytree(EXAMPLES, scratch, dirs_exist_ok=True)
    path_before = os.environ.get("PATH", "")
    namespace["_docs_cwd"] = (os.getcwd(), scratch, path_before)
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + path_before
    os.chdir(scratch)


def _leave_scratch(namespace: dict) -> None:
    before, scratch, path = namespace.pop("_docs_cwd")
    os.environ["PATH"] = path
    os.chdir(before)
    shutil.rmtree(scratch, ignore_errors=True)


pytest_collect_file = Sybil(
    parsers=[CodeBlockParser(language="console", evaluator=run_console),
             PythonCodeBlockParser()],
    patterns=["*.md"],
    # pages only: the example inputs and the test suite's own notes are not pages
    excludes=["docs/examples/*", "tests/*", "tests/*/*"],
    setup=_enter_scratch,
    teardown=_leave_scratch,
).pytest()
