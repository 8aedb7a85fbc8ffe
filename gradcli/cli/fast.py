"""The one-point fast path: ``gradcli grad "x^2 + 3x + 1" --at x=4`` without typer.

Building the typer application (importing typer and click, then introspecting every
command's options) is about a third of a one-point derivative's run time. The most common
command line, a numeric command with an expression and nothing but ``--at`` points, is
recognised here and handed to the very same request and execution path with the commands'
own defaults. Anything else (any other option, ``--help``, an expression or value starting
with '-', ``--``) goes through typer, so this path never has to parse or report options.
"""

from __future__ import annotations

from typing import Any

from .defaults import NUMERIC_DEFAULTS

#: commands whose only required input is the expression (vjp and jvp need one more option)
FAST_COMMANDS = ("eval", "grad", "jacobian", "hessian")
_AT = ("--at", "-a")


def fast_points(args: list[str]) -> list[str] | None:
    """The ``--at`` values if ``args`` is ``COMMAND EXPRESSION (--at POINT)+``, else None."""
    if len(args) < 4 or args[0] not in FAST_COMMANDS or args[1].startswith("-"):
        return None
    points, rest = [], args[2:]
    while rest:
        word = rest[0]
        if word.startswith("--at="):
            value, rest = word[len("--at="):], rest[1:]
        elif word in _AT and len(rest) > 1:
            value, rest = rest[1], rest[2:]
        else:
            return None
        if not value or value.startswith("-"):
            return None  # let click decide what a value starting with '-' means
        points.append(value)
    return points


def run_fast(args: list[str], points: list[str]) -> int:
    """Run the recognised command line exactly as the typer command would."""
    from .execute import Request, run_request

    options: dict[str, Any] = {**NUMERIC_DEFAULTS, "at": points, "grid": []}
    return run_request(Request(what=args[0], expression=args[1], **options))
