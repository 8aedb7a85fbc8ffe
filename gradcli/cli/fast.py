"""The fast path: the two most common command lines without typer.

    gradcli grad "x^2 + 3x + 1" --at x=4           COMMAND EXPR (--at POINT)+
    gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o field.png

Building the typer application (importing typer and click, then introspecting every
command's options) is about a third of a one-point derivative's run time. These command
lines are recognised here and handed to the very same execution code with the commands'
own defaults. Anything else (any other option, ``--help``, a bare ``--grid``, an expression
or value starting with '-', ``--``) goes through typer, so this path never has to parse
or report options.
"""

from __future__ import annotations

from typing import Any

from .defaults import NUMERIC_DEFAULTS

#: commands whose only required input is the expression (vjp and jvp need one more option)
FAST_COMMANDS = ("eval", "grad", "jacobian", "hessian")


def fast_points(args: list[str]) -> list[str] | None:
    """The ``--at`` values if ``args`` is ``COMMAND EXPRESSION (--at POINT)+``, else None."""
    if len(args) < 4 or args[0] not in FAST_COMMANDS or args[1].startswith("-"):
        return None
    found = _values(args[2:], {"--at": "--at", "-a": "--at"})
    return found["--at"] if found is not None and found["--at"] else None


def _values(words: list[str], names: dict[str, str]) -> dict[str, list[str]] | None:
    """``--opt VALUE`` / ``--opt=VALUE`` pairs for the long or short ``names`` (short ->
    long); None at the first word that is anything else."""
    found: dict[str, list[str]] = {long: [] for long in set(names.values())}
    while words:
        word, long, value = words[0], None, ""
        if "=" in word and word.startswith("--") and word.split("=", 1)[0] in names:
            long, value, words = names[word.split("=", 1)[0]], word.split("=", 1)[1], words[1:]
        elif word in names and len(words) > 1:
            long, value, words = names[word], words[1], words[2:]
        if long is None or not value or value.startswith("-"):
            return None  # let click decide what a value starting with '-' means
        found[long].append(value)
    return found


def fast_plot(args: list[str]) -> tuple[list[str], str] | None:
    """(grid specs, output) if ``args`` is ``plot EXPR (--grid SPEC)* -o FILE``, else None."""
    if len(args) < 4 or args[0] != "plot" or args[1].startswith("-"):
        return None
    found = _values(args[2:], {"--grid": "--grid", "-g": "--grid", "--output": "--output",
                               "-o": "--output"})
    if found is None or len(found["--output"]) != 1:
        return None
    if any("=" not in spec for spec in found["--grid"]):
        return None  # a bare --grid is typer's (normalize_argv) business
    return found["--grid"], found["--output"][0]


def run_fast(args: list[str], points: list[str]) -> int:
    """Run the recognised command line exactly as the typer command would."""
    from .execute import Request, run_request

    options: dict[str, Any] = {**NUMERIC_DEFAULTS, "at": points, "grid": []}
    return run_request(Request(what=args[0], expression=args[1], **options))


def run_fast_plot(args: list[str], grid: list[str], output: str) -> int:
    """Run a recognised ``plot`` command line exactly as the typer command would."""
    from .plot_run import PLOT_DEFAULTS, run_plot

    return run_plot(args[1], output, grid, **PLOT_DEFAULTS)
