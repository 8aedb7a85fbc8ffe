"""Turn every failure into one clear message on stderr and an exit status; no tracebacks."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import IntEnum
from typing import Any


class ExitStatus(IntEnum):
    """gradcli's exit statuses, a contract with scripts that call it."""

    OK = 0
    FAIL = 1         # a runtime failure: I/O, --check above tolerance, --strict
    USAGE = 2        # bad usage or input: expression, points, options
    INTERRUPT = 130  # Ctrl-C (SIGTERM and SIGHUP: 128 + their number)


class UsageProblem(Exception):
    """Bad input noticed by the CLI itself (exit 2)."""


class RuntimeProblem(Exception):
    """A failure while running (exit 1)."""


# C0/C1 control characters (ESC, BEL, CR, ...) that would drive the terminal if echoed.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# A message's own continuation lines (a formula and its caret, indented two spaces, then
# "error: ...") are kept; any other newline came from user text (a CSV header, a file name)
# and is shown escaped.
_STRAY_NEWLINE = re.compile(r"\n(?!  |error: )")


def printable(message: str) -> str:
    """``message`` with user-supplied control characters shown as escapes, never sent raw."""
    message = _STRAY_NEWLINE.sub(r"\\n", message.rstrip("\n"))
    return _CONTROL.sub(lambda m: "\n" if m.group() == "\n" else f"\\x{ord(m.group()):02x}",
                        message)


def say(message: str) -> None:
    """Write one message to stderr (the CLI's only channel for errors and notes).

    Messages quote what the user typed; :func:`printable` keeps escape sequences in that
    text from reaching the terminal.
    """
    try:
        sys.stdout.flush()  # keep stdout's rows before the note when both go to a terminal
    except (OSError, ValueError):
        pass
    sys.stderr.write(printable(message) + "\n")
    sys.stderr.flush()


#: every note and warning of the command being run, in the order made, also those that
#: --quiet keeps off stderr: what a JSON output's "notes" hold (``notes_for``)
_NOTES: list[str] = []


def note(message: str, quiet: bool = False) -> None:
    """A note or warning of the command: kept for the output's ``notes`` and said on
    stderr (unless ``quiet``). The one channel for both, so they cannot disagree."""
    _NOTES.append(printable(message))
    if not quiet:
        say(message)


def notes_for(fmt: str, own: Sequence[str] = (), after: Sequence[str] = ()) -> list[str]:
    """The notes a written result holds: a table shows its ``own`` (a vjp's shapes) under
    it, as it always did, while stderr says the rest beside it; a JSON document holds
    every note of the run: its ``own``, those said so far, then ``after``, the notes that
    will be said once the output is written (a non-finite count, why runs stopped)."""
    if fmt != "json":
        return list(own)
    return [*own, *_NOTES, *(printable(a) for a in after)]


def _start_notes() -> None:
    _NOTES.clear()


@contextmanager
def expression_warnings(quiet: bool) -> Iterator[None]:
    """Show each different :class:`~gradcli.lang.ExpressionWarning` raised inside this
    block once, as a ``warning:`` line on stderr (none with ``quiet``): the expression is
    parsed more than once, and each parse warns again."""
    import warnings

    from gradcli.lang import ExpressionWarning

    shown: set[str] = set()
    others = warnings.showwarning

    def show(message: Any, category: type, *args: Any, **kwargs: Any) -> None:
        if not issubclass(category, ExpressionWarning):
            others(message, category, *args, **kwargs)
        elif str(message) not in shown:
            shown.add(str(message))
            note(f"warning: {message}", quiet)

    with warnings.catch_warnings():
        warnings.simplefilter("always", ExpressionWarning)
        warnings.showwarning = show
        yield


@contextmanager
def writing_stdout() -> Iterator[None]:
    """Writes to standard output inside this block that fail (``> /dev/full``) become one
    clear I/O error; a closed pipe (``| head``) passes through to end the run quietly."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise RuntimeProblem(f"cannot write to standard output: {exc.strerror or exc}") from exc


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: the command line being run (set by ``main``): the out-of-memory advice depends on it
COMMAND_LINE: list[str] = []
#: outputs written block by block, whose results never sit in memory whole
_STREAMED = (".npz", ".npy", ".zarr")


def _needed(exc: MemoryError) -> str:
    """numpy's own account of the allocation that failed, shortened: ' (7.45 GiB for an
    array of shape (1000000000,))'."""
    found = re.search(r"allocate (\S+ \S+) for an array with shape (\([^)]*\))", str(exc))
    return f" ({found.group(1)} for an array of shape {found.group(2)})" if found else ""


def _option(args: list[str], *flags: str) -> str | None:
    for i, a in enumerate(args):
        for flag in flags:
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a[len(flag) + 1:]
    return None


def memory_advice(args: list[str]) -> str:
    """What needed the memory, and what would reduce it, for the command in ``args``."""
    command = args[0] if args else ""
    output = _option(args, "-o", "--output") or ""
    if command == "plot":
        return ("drawing the picture needs the grid's values in memory: use fewer grid "
                "points (--grid x=A:B:N with a smaller N), fewer arrows (--every) or fewer "
                "contour levels")
    if command == "flow":
        return ("the trajectories' rows are kept in memory until written: write fewer with "
                "--every K, use fewer starts, or end runs early with --tol or --box")
    if command == "descend":
        return ("the paths' rows are kept in memory until written: write fewer with --every "
                "K, or use fewer starts")
    if command == "critical":
        return ("every seed is iterated at once: use fewer seeds (a coarser --grid, or fewer "
                "--points rows)")
    if output.lower().endswith(_STREAMED):
        return ("the results are streamed to the file, so the blocks needed it: lower "
                "--memory (smaller blocks) or use fewer points")
    return ("the results are kept in memory whole for this format: write them block by block "
            "with -o out.npz (or .npy, .zarr), use fewer points, or lower --memory")


def guarded(fn: Callable[[], Any], debug: bool) -> int:
    """Call ``fn`` and map its outcome to an exit status, printing errors on stderr."""
    from gradcli.output import interrupt

    _start_notes()  # a session runs many commands in one process
    interrupt.unsaid()
    try:
        status = int(fn() or 0)
        interrupt.finished()  # the work is done: a signal now has nothing to stop
    except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
        _silence_stdout()
        return ExitStatus.FAIL
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except Exception as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, KeyboardInterrupt):  # click's Abort wrapping the signal
            return _interrupted(cause)
        if interrupt.last_signal() is not None:
            # a C extension (matplotlib's pybind11 conversions) turned the interrupt into
            # an error of its own: the run was stopped by the signal all the same
            return _interrupted(interrupt.Interrupted(interrupt.last_signal() or 2))
        click_status = _click_outcome(exc)
        if click_status is None:
            if debug:
                raise
            return report(exc)
        status = click_status
    if status == ExitStatus.INTERRUPT:  # typer and click turn Ctrl-C into a status or Abort
        return _interrupted(interrupt.Interrupted(interrupt.last_signal() or 2))
    return status


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Say that a signal stopped the run; the status is 128 + its number (130 for
    SIGINT, 143 for SIGTERM, 129 for SIGHUP), as a shell reports a signal's death."""
    from gradcli.output import interrupt

    interrupt.finished()
    signum = getattr(exc, "signum", 2)
    if interrupt.said():  # reported already (by the session's line the signal stopped)
        return 128 + signum
    say("gradcli: interrupted" if signum == 2 else
        f"gradcli: interrupted by {getattr(exc, 'name', signum)}")
    return 128 + signum


def _click_outcome(exc: Exception) -> int | None:
    """The exit status for click's own exceptions (None for any other). click is looked
    up, not imported: a failure before the application was built cannot be click's."""
    click = sys.modules.get("click")
    if click is None:
        return None
    if isinstance(exc, click.exceptions.Exit):
        return int(exc.exit_code)
    if isinstance(exc, click.exceptions.Abort):
        return ExitStatus.INTERRUPT
    if isinstance(exc, click.UsageError):
        cmd = exc.ctx.command_path if exc.ctx is not None else "gradcli"
        say(f"gradcli: error: {exc.format_message()} (see '{cmd} --help')")
        return ExitStatus.USAGE
    return None


def report(exc: Exception) -> int:
    """Print one message for a failure and return its exit status.

    The error classes are imported here, on failure, so a successful run never pays for
    importing the layers it did not use.
    """
    from gradcli.errors import EvaluationError
    from gradcli.lang import ExpressionError
    from gradcli.output import OutputError

    if isinstance(exc, ExpressionError):
        say(exc.render(option_words))
        return ExitStatus.USAGE
    if isinstance(exc, EvaluationError):
        say(f"gradcli: error: {exc.render(option_words)}")
        return ExitStatus.USAGE
    if isinstance(exc, UsageProblem):
        say(f"gradcli: error: {exc}")
        return ExitStatus.USAGE
    if isinstance(exc, OutputError) and hasattr(exc, "entries"):  # a store not all ours
        say(f"gradcli: error: cannot write '{exc.path}': {exc.why}: add --overwrite to "
            "replace it anyway")
        return ExitStatus.FAIL
    if isinstance(exc, (OutputError, RuntimeProblem)):
        say(f"gradcli: error: {exc}")
        return ExitStatus.FAIL
    if type(exc).__name__ == "ClusterError":  # gradcli.evaluation.cluster's, not imported
        say(f"gradcli: error: {exc}")
        return ExitStatus.FAIL
    if isinstance(exc, MemoryError):
        say(f"gradcli: error: out of memory{_needed(exc)}: {memory_advice(COMMAND_LINE)}")
        return ExitStatus.FAIL
    say(f"gradcli: internal error: {type(exc).__name__}: {exc} (run with --debug for "
        "a traceback)")
    return ExitStatus.FAIL


def option_words(parameter: str, key: str, text: str, python: str = "",
                 flags: Mapping[str, str] | None = None) -> str:
    """A library parameter reference in an error message, in the command line's words:
    the option declared for that parameter (``cli/definition.py``, the one table of flags)
    and what was typed (``--grid x=0:1:0``, ``--wrt x``, ``--max-points``). ``flags``
    overrides the declaration for a command whose option of that parameter has another
    name (``critical``'s seeds are ``grid``; ``descend --from-grid`` parses grid specs)."""
    from gradcli.cli.definition import flag_of

    if parameter.startswith("-"):  # already an option's name
        flag = parameter
    else:
        flag = (flags or {}).get(parameter) or flag_of(parameter)
    return flag + (f" {text}" if text else f" {key}" if key else "")


def usage_words(exc: Exception, flags: Mapping[str, str] | None = None) -> str:
    """An error's message as the command line shows it (EvaluationError in flags)."""
    render = getattr(exc, "render", None)
    if render is None:
        return str(exc)
    return render(lambda p, k, t, py: option_words(p, k, t, py, flags))
