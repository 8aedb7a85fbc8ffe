"""Fixtures shared by every test folder.

``cli`` runs the command line in process, as the console script would (``main(argv)``),
and returns ``(status, stdout, stderr)``: tests read what a user sees, exactly, without a
subprocess per command. Putting this file in ``tests/`` also puts ``tests/`` on
``sys.path`` (pytest's default import mode), so the helper modules beside it
(``awkward.py``, ``formula_random.py``) import by name from every folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from gradcli.cli.main import main


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``cli("grad", "x^2", "--at", "x=3")`` or ``cli([...])``: run one command line in
    process; return its exit status, its stdout and its stderr (both read and cleared)."""

    def run(*argv: str | Sequence[str]) -> tuple[int, str, str]:
        if len(argv) == 1 and not isinstance(argv[0], str):
            args = list(argv[0])
        else:
            args = list(argv)
        status = main(args)
        out, err = capsys.readouterr()
        return status, out, err

    return run
