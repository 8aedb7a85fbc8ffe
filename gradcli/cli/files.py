"""Which files the command line may read: the ``--no-files`` policy.

Arguments can name files (``@loss.gc``, ``--at x=@vec.npy``, ``--vector @v.csv``,
``--points data.csv``). A service that passes other people's text to gradcli must not let
that text read the server's files, so ``--no-files`` (or ``GRADCLI_NO_FILES=1`` in the
environment) turns every such read into an error before the file is opened. Standard
input (``@-``, ``--points -``) is the caller's own stream and is still read.

Kept free of heavy imports: the app sets the policy on every run.
"""

from __future__ import annotations

import os

__all__ = ["allow_files", "files_allowed", "check_file", "ENV"]

ENV = "GRADCLI_NO_FILES"
_state = {"allowed": True}


def allow_files(allowed: bool) -> None:
    """Set this run's policy: ``allowed`` unless the environment turns files off
    (``GRADCLI_NO_FILES`` set to anything but empty or ``0``)."""
    _state["allowed"] = allowed and os.environ.get(ENV, "").strip() in ("", "0")


def files_allowed() -> bool:
    """Whether arguments may name files to read in this run."""
    return _state["allowed"]


def check_file(label: str, path: str) -> None:
    """An EvaluationError (exit 2) if ``path`` is a file and files are turned off; stdin
    (``-``) is always allowed. ``label`` says which argument named it."""
    if path == "-" or _state["allowed"]:
        return
    from gradcli.errors import EvaluationError

    raise EvaluationError(f"{label}: reading files is turned off (--no-files or {ENV}=1); "
                          "give the values on the command line or on standard input")
