"""A command line read straight from the declaration, without building the typer app.

Building the typer application costs importing typer and click (and what they import for
shell completion) and inspecting a generated signature: about as much as gradcli's own
modules, on every run. A numeric command whose words are all plain (declared flags, their
values, the expression) is read here instead, into the very keywords typer would pass;
anything else (``--help``, a mistyped or repeated option, a value its kind refuses, a
missing required option, combined short flags) returns None, and the typer application
reads the line, so every message and exit status stays typer's and click's.
"""

from __future__ import annotations

from typing import Any

from gradcli.cli.definition import Command


def read(command: Command, args: list[str]) -> dict[str, Any] | None:
    """The keywords of ``command``'s run function for ``args`` (the words after the
    command's name, rewritten by ``argv.rewrite``), or None when typer must read them."""
    from gradcli.cli.values import convert

    by_flag = {f: o for o in command.options for f in o.flags}
    given: dict[str, Any] = {}
    expression: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            rest = args[i + 1:]
            if len(rest) != 1 or expression is not None:
                return None
            expression = rest[0]
            break
        if word.startswith("-") and word != "-":
            flag, eq, text = word.partition("=") if word.startswith("--") else (word, "", "")
            option = by_flag.get(flag)
            if option is None or option.name in ("expression",):
                return None
            if option.kind == "flag":
                if eq:
                    return None
                given[option.name] = True
            else:
                if not eq:
                    if i + 1 >= len(args):
                        return None
                    i += 1
                    text = args[i]
                try:
                    value = convert(option, text)
                except ValueError:
                    return None
                if option.repeat or option.once:
                    given.setdefault(option.name, []).append(value)
                elif option.name in given:
                    return None  # typer says what happens to a repeated option
                else:
                    given[option.name] = value
        elif expression is None:
            expression = word
        else:
            return None
        i += 1
    if expression is None:
        return None
    for option in command.options:
        if option.name in given:
            continue
        if option.required:
            return None
        given[option.name] = None if option.repeat or option.once else option.default_value
    return {"expression": expression, **given}
