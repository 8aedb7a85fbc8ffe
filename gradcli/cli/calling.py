"""Run a command with its options as read from the command line (by typer, or directly
by ``direct.read``): one list per repeated option, a once-only option given once, a
program read from its file (unless --no-files), then the command's body, imported only
now."""

from __future__ import annotations

import importlib
from typing import Any

from gradcli.cli.definition import Command
from gradcli.cli.files import allow_files
from gradcli.cli.messages import UsageProblem

#: the session (``gradcli repl``) whose lines are being run, if any: it checks what each
#: line's command is handed and puts its definitions in front of the expression
SESSION: Any = None


def call(command: Command, options: dict[str, Any]) -> int:
    """Run ``command`` with ``options`` (the expression and one value per declared option);
    return its exit status."""
    for option in command.options:
        value = options[option.name]
        if option.repeat:
            options[option.name] = value or []
        elif option.once:  # collected as a list so that a second use can be refused
            if value and len(value) > 1:
                raise UsageProblem(f"{option.flags[0]} is given {len(value)} times: "
                                   "give it once")
            options[option.name] = value[0] if value else None
    allow_files(not options.pop("no_files", False))  # --no-files, else $GRADCLI_NO_FILES
    if SESSION is not None:
        SESSION.prepare(command, options)
    expression = options.get("expression")
    if isinstance(expression, str) and expression.startswith("@"):
        if expression == "@-" and options.get("points") == "-":
            raise UsageProblem("@- and --points - both read standard input: give one of "
                               "them as a file")
        from gradcli.cli.inputs import read_program  # a program file: read within its bounds

        options["expression"] = read_program(expression)
    module, _, name = command.run.partition(":")
    target = getattr(importlib.import_module(module), name)
    return int(target(command.name, **options))
