"""Turn every failure into one clear message on stderr and an exit status; no tracebacks.

2: bad usage or input (expression, points, options); 1: runtime failure (I/O, --check,
--strict); 130: interrupted (Ctrl-C).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPT = 0, 1, 2, 130


class UsageProblem(Exception):
    """Bad input noticed by the CLI itself (exit 2)."""


class RuntimeProblem(Exception):
    """A failure while running (exit 1)."""


def say(message: str) -> None:
    """Write one message to stderr (the CLI's only channel for errors and notes)."""
    try:
        sys.stdout.flush()  # keep stdout's rows before the note when both go to a terminal
    except (OSError, ValueError):
        pass
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def guarded(fn: Callable[[], Any], debug: bool) -> int:
    """Call ``fn`` and map its outcome to an exit status, printing errors on stderr."""
    import click

    try:
        status = fn()
        return int(status or 0)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        say("gradcli: interrupted")
        return EXIT_INTERRUPT
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx is not None else "gradcli"
        say(f"gradcli: error: {exc.format_message()} (see '{cmd} --help')")
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        return report(exc)


def report(exc: Exception) -> int:
    """Print one message for a failure and return its exit status.

    The error classes are imported here, on failure, so a successful run never pays for
    importing the layers it did not use.
    """
    from ..evaluation import EvaluationError
    from ..lang import ExpressionError
    from ..output import OutputError

    if isinstance(exc, ExpressionError):
        say(exc.render())
        return EXIT_USAGE
    if isinstance(exc, (EvaluationError, UsageProblem)):
        say(f"gradcli: error: {exc}")
        return EXIT_USAGE
    if isinstance(exc, (OutputError, RuntimeProblem)):
        say(f"gradcli: error: {exc}")
        return EXIT_FAIL
    if isinstance(exc, MemoryError):
        say("gradcli: error: out of memory: use fewer points (--max-points) or write to "
            "a file with -o out.npz")
        return EXIT_FAIL
    say(f"gradcli: internal error: {type(exc).__name__}: {exc} (run with --debug for "
        "a traceback)")
    return EXIT_FAIL
