"""One progress bar on stderr for a whole run: computing, then writing.

Shown only on a terminal (stderr), never with ``-q``, and only for runs long enough to
need one; rich is imported only then.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

#: result values (points × columns) past which computing, or writing them as text, takes
#: long enough to show a bar
COMPUTE_VALUES = 20_000_000
WRITE_VALUES = 2_000_000


def _terminal() -> bool:
    return sys.stderr.isatty()


def _bar() -> Any:
    from rich.console import Console
    from rich.progress import Progress

    return Progress(transient=True, console=Console(stderr=True))


def wanted(quiet: bool, values: int, writes_text: bool) -> bool:
    """Whether a run making ``values`` result values (and writing them as CSV/JSON when
    ``writes_text``) shows a bar."""
    if quiet or not _terminal():
        return False
    return values >= COMPUTE_VALUES or (writes_text and values >= WRITE_VALUES)


class RunProgress:
    """The bar of one run (or nothing when not ``shown``); use it as a context manager."""

    def __init__(self, shown: bool) -> None:
        self.bar = _bar() if shown else None

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def stage(self, description: str) -> Callable[[int, int], None] | None:
        """A new line of the bar; returns its ``update(done, total)`` (None: no bar)."""
        if self.bar is None:
            return None
        bar, task = self.bar, self.bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return update
