"""CSV output of a command line read back as numbers, for tests in any folder.

``ok(cli, *argv)`` runs a command with the ``cli`` fixture (``conftest.py``), asserts exit 0
and returns the header and the rows as floats.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable


def table(text: str) -> tuple[list[str], list[list[float]]]:
    """A CSV text's header and its rows as floats."""
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], [[float(c) for c in r] for r in rows[1:]]


def ok(cli: Callable[..., tuple[int, str, str]], *argv: str) -> tuple[list[str], list[list[float]]]:
    """Run ``argv``; it must succeed; return its CSV table."""
    status, out, err = cli(*argv)
    assert status == 0, err
    return table(out)
