"""The ``gradcli`` console script: argv in, exit status out, never a traceback.

Exit status (:class:`~gradcli.cli.messages.ExitStatus`): 0 success, 2 bad usage or input,
1 runtime failure (I/O, --check, --strict), 128 + the signal's number when SIGINT (130),
SIGTERM (143) or SIGHUP (129) stopped the run before its output was complete.
``--debug`` anywhere on the command line shows tracebacks.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from gradcli.cli import messages as errors
from gradcli.cli.definition import command as declared_command
from gradcli.cli.messages import ExitStatus, guarded

USAGE = """\
gradcli: derivatives, gradients, Jacobians and gradient-field pictures of a formula.

Usage: gradcli COMMAND EXPRESSION [--at POINT | --grid SPEC ... | --points FILE] [OPTIONS]

Examples:
  gradcli grad "x^2 + 3x + 1" --at x=4
  gradcli grad "sin(x)*cos(y)" --grid
  gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o field.png

Commands: {names}   (gradcli COMMAND --help)
"""

#: set by the shell's completion script when it asks for completions (typer's name for it)
COMPLETE_VAR = "_GRADCLI_COMPLETE"


def run(args: list[str]) -> int:
    """Parse ``args`` with the typer application and run the command they name."""
    from gradcli.cli.argv import rewrite

    command = declared_command(args[0]) if args else None
    if command is not None and COMPLETE_VAR not in os.environ:
        words = rewrite(command, args[1:])
        if command.group == "numeric":  # a plain line needs no typer (see direct.py)
            from gradcli.cli.direct import read

            options = read(command, words)
            if options is not None:
                from gradcli.cli.calling import call

                return call(command, options)
        from gradcli.cli.app import build

        group, args = build(only=command.name), [args[0], *words]
    elif COMPLETE_VAR in os.environ and (completing := _completing()) is not None:
        from gradcli.cli.app import build

        group = build(only=completing)  # a command's options or values: that command alone
    else:  # --help, --version, a mistyped command, command names: every command is needed
        from gradcli.cli.app import build

        group = build()
    return group.main(args=args, prog_name="gradcli", standalone_mode=False)


def _completing() -> str | None:
    """The command whose options or values a shell asks to complete (bash and zsh pass the
    words typed so far in COMP_WORDS), or None while the command name itself is typed."""
    words = os.environ.get("COMP_WORDS", "").split()
    cword = int(os.environ.get("COMP_CWORD", "0") or 0)
    if len(words) >= 2 and cword >= 2 and declared_command(words[1]) is not None:
        return words[1]
    return None


def _quiet_deprecations() -> None:
    """A library's deprecation notices are for its developers: gradcli's stderr carries only
    gradcli's own lines. Dropped where they are shown, not by a filter, since a library may
    put its own filter first (numcodecs does, for its crc32c notice, on import)."""
    import warnings

    show = warnings.showwarning

    def shown(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if not issubclass(category, (DeprecationWarning, PendingDeprecationWarning)):
            show(message, category, *args, **kwargs)

    warnings.showwarning = shown


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return (or, as a console script, exit with) its status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the console script owns its process's signals; a caller's are its own
        from gradcli.output import interrupt

        interrupt.install()
        _quiet_deprecations()
    if not args and COMPLETE_VAR not in os.environ:
        from gradcli.cli.definition import all_commands

        sys.stdout.write(USAGE.format(names=" ".join(c.name for c in all_commands())))
        status = ExitStatus.OK
    else:
        debug = "--debug" in args
        args = [a for a in args if a != "--debug"]
        errors.COMMAND_LINE[:] = args
        status = guarded(lambda: run(args), debug)
    if argv is None:
        _exit(status)
    return status


def _exit(status: int) -> None:
    """End the console script with ``status``, skipping the interpreter's teardown.

    By now every file is closed, every worker thread joined and every progress bar
    stopped; what is left is unloading numpy, typer and the rest module by module, which
    would add a fifth to the run time of a small command (benchmarks/RESULTS.md). The
    standard streams are flushed first, so nothing written is lost.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the run already said what it could
            status = status or ExitStatus.FAIL
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    main()
