"""Interruption by a signal, and the moment an output becomes complete.

Why: the exit status must say what is on disk. A run interrupted before its output was
moved into place exits 128 + the signal's number and leaves nothing; once the output is
complete (renamed over its target), a signal that arrives has nothing left to interrupt,
and the run ends with the status of its work. ``SIGTERM`` (``timeout``, ``kill``,
systemd, ``docker stop``, batch schedulers) and ``SIGHUP`` (a closed terminal) are treated
like ``SIGINT``: each raises :class:`Interrupted`, a ``KeyboardInterrupt``, so every
cleanup path that handles Ctrl-C handles them too.

The console script installs :func:`handler` (:func:`install`); a library caller keeps
Python's own handling, and :func:`holding`, :func:`committed` and :func:`raise_pending`
then change nothing.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["Interrupted", "install", "holding", "committed", "finished", "raise_pending",
           "begin", "said", "unsaid", "HANDLED", "last_signal"]

#: the signals the console script turns into :class:`Interrupted`
HANDLED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """The run was stopped by ``signum``; the exit status is 128 + ``signum``."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def name(self) -> str:
        """The signal's name (``SIGTERM``)."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover - every handled signal has a name
            return f"signal {self.signum}"


class _State:
    hold = 0              # > 0: inside a commit, a signal is kept for later
    done = False          # an output is complete (or the run finished): nothing to stop
    pending: int | None = None
    installed = False     # the console script's handler is in place
    raised: int | None = None  # the signal of the last Interrupted raised
    said = False          # the interrupt of this run was reported on stderr


_STATE = _State()


def handler(signum: int, frame: FrameType | None) -> None:
    """The console script's handler of SIGINT, SIGTERM and SIGHUP."""
    if _STATE.hold or _STATE.done:
        _STATE.pending = _STATE.pending or signum
        return
    _STATE.raised = signum
    raise Interrupted(signum)


def last_signal() -> int | None:
    """The signal that interrupted the run (None: none did, or not the console script).
    typer turns the interrupt into an exit status, losing which signal it was."""
    return _STATE.raised


def _unraisable(hook: Any) -> Any:
    """A ``sys.unraisablehook`` that keeps an interrupt raised where Python cannot
    propagate it (a ``__del__``, a weakref callback inside h5py or zarr) instead of
    printing an ``Exception ignored`` fragment; the run raises it at its next check."""
    def unraisable(info: Any) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            _STATE.pending = _STATE.pending or getattr(info.exc_value, "signum",
                                                       signal.SIGINT)
            return
        hook(info)
    return unraisable


def install() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP in this process (the console script only).

    A signal the parent set to be ignored stays ignored (``nohup`` ignores SIGHUP, a shell
    starts background jobs with SIGINT ignored), as every well-behaved tool does."""
    for signum in HANDLED:
        try:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue
            signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main thread: leave Python's handling
            return
    _STATE.installed = True
    sys.unraisablehook = _unraisable(sys.unraisablehook)


def raise_pending() -> None:
    """Raise the interrupt that arrived where it could not be raised, if one did."""
    if _STATE.pending is not None and not _STATE.done and not _STATE.hold:
        signum, _STATE.pending = _STATE.pending, None
        _STATE.raised = signum
        raise Interrupted(signum)


@contextmanager
def holding() -> Iterator[None]:
    """Keep signals that arrive inside this block (the rename that completes an output);
    raised on leaving it unless :func:`committed` was called inside."""
    _STATE.hold += 1
    try:
        yield
    finally:
        _STATE.hold -= 1
    raise_pending()


def committed() -> None:
    """The output is complete on disk: a later signal no longer interrupts the run."""
    if _STATE.installed:
        _STATE.done = True


def finished() -> None:
    """The command has finished its work: a signal from now on changes nothing (until
    :func:`begin`)."""
    if _STATE.installed:
        _STATE.done = True


def said() -> bool:
    """Whether this run's interrupt was reported already; the first call says no and
    marks it (one "interrupted" line, however many layers see the signal)."""
    first = not _STATE.said
    _STATE.said = True
    return not first


def unsaid() -> None:
    """A run starts: its interrupt, if one comes, is not reported yet."""
    _STATE.said = False


def begin() -> None:
    """A new run starts in this process (a session's next line): signals interrupt
    again, as they did before the last run finished. A signal that arrived since that
    run finished (kept, since it had nothing left to stop) is raised now."""
    _STATE.done = False
    _STATE.raised = None
    _STATE.said = False
    _STATE.hold = 0
    raise_pending()
