"""The package's layering, checked the way a reviewer checks it: by grep.

- No code decides by a computation's name (``what == "grad"``): what differs between
  computations is a field of their records (or a function a record names), so adding a
  computation is one record, never a new branch elsewhere.
- The library (plot/, lang/, the request's stages request/, plan/ and evaluation/, the
  applications uncertainty/, fields/, graph/ and formulas/, the engine and the error
  classes) never spells a command-line flag: it names its parameters, and its messages
  name them through ``ref`` so that each front end says them in its own words. The
  parameter table (request/parameters.py) is the one exception: it declares the flags the
  CLI's options are made from.

Each test is the grep itself (over the package's files, not compiled caches), with the
allowed places listed, so a new hit fails here with its file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import gradcli

PACKAGE = Path(gradcli.__file__).parent

#: files allowed to branch on a computation's name (a computation's own code): none today
WHAT_ALLOWED: set[str] = set()
#: the library's rooms: everything below the front ends (the CLI and its explorer), less
#: output/, whose format table describes the CLI's -f choices
LIBRARY = ["engine", "errors.py", "lang", "request", "plan", "evaluation", "uncertainty",
           "fields", "graph", "formulas", "plot"]
#: files of the library allowed to spell a flag: the parameter table
FLAGS_ALLOWED = {"request/parameters.py"}


def _grep(pattern: str, folders: list[str], allowed: set[str]) -> list[str]:
    """``grep -rn pattern`` over the package's source files under ``folders``, less the
    ``allowed`` files: ``path:line: text`` for each hit."""
    found = re.compile(pattern)
    hits = []
    for folder in folders:
        root = PACKAGE / folder
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            name = path.relative_to(PACKAGE).as_posix()
            if name in allowed:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            hits += [f"{name}:{i}: {line.strip()}"
                     for i, line in enumerate(text.splitlines(), 1) if found.search(line)]
    return hits


def test_no_code_branches_on_a_computations_name():
    assert _grep(r"what ==", ["."], WHAT_ALLOWED) == []


def test_the_library_names_parameters_not_flags():
    assert _grep(r"--[a-z]", LIBRARY, FLAGS_ALLOWED) == []


def test_the_greps_find_what_they_look_for():
    # the allowed file really spells flags, and a branch on the name would be found: the
    # two greps above are not vacuous
    assert _grep(r"--[a-z]", ["request"], set()) != []
    assert re.search(r"what ==", 'if what == "grad":')
