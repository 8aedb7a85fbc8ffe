"""The typer application, generated from the declaration in ``definition.py``.

Each declared command becomes one typer command whose parameters are its declared options
(typer reads them from a generated signature); its body imports the module that does the
work and calls it. Only the command being run is generated (``build(only=...)``): the
others would cost their signature inspection on every start and are not needed.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import click
import typer
import typer.main

from gradcli._version import __version__
from gradcli.cli.calling import call
from gradcli.cli.definition import Command, Option, all_commands
from gradcli.cli.values import convert

# text options naming files: any name the file system allows (control characters too)
_PATHS = ("output", "points")
_TYPES = {"flag": bool, "text": str, "choice": str, "whole": int, "real": float}


class _Value(click.ParamType):
    """click's view of a declared value kind: converts with ``values.convert``."""

    def __init__(self, option: Option) -> None:
        self.option = option
        self.name = option.kind

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default, already a value
            return value
        try:
            return convert(self.option, value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list[Any]:
        """The declared choices (or suggestions) that start with what was typed."""
        from click.shell_completion import CompletionItem

        values = self.option.choices or self.option.suggest
        return [CompletionItem(v) for v in values if v.startswith(incomplete)]


def help_text(option: Option) -> str:
    """--help's text for ``option``: its help, then its example."""
    return f"{option.text} Example: {option.example}"


def _parameter(option: Option) -> inspect.Parameter:
    """The typed, annotated parameter typer reads ``option`` from."""
    kind: Any = _TYPES[option.kind]
    value = option.default_value
    if option.repeat or option.once:
        kind = list[str] | None
    elif value is None and not option.required:
        kind = kind | None
    extra: dict[str, Any] = {}
    if option.kind in ("choice", "whole", "real") or option.suggest or (
            option.kind == "text" and not (option.repeat or option.once)
            and option.name not in _PATHS):
        extra["click_type"] = _Value(option)
    shown: bool | str = value not in (None, False)
    info = typer.Option(
        *option.flags, help=help_text(option), metavar=option.metavar or None,
        show_default=option.shown_default or shown, **extra)
    default = inspect.Parameter.empty if option.required else value
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY,
                             annotation=Annotated[kind, info], default=default)


_EXPRESSION = inspect.Parameter(
    "expression", inspect.Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[str, typer.Argument(
        help='The formula, e.g. "x^2 + 3x + 1" or "[x*y, x-y]", or a program of steps and '
        'functions separated by ; or newlines ("m = x^2; y = m + x; 4*y"); @FILE reads it '
        'from a file of up to 1 MB (@- from stdin). One starting with - is read as the '
        'formula where no option is expected; else write it after --.',
        metavar="EXPRESSION", show_default=False)])


def command_function(command: Command) -> Callable[..., int]:
    """A function typer can register for ``command``: the expression, then the options."""
    def run(**options: Any) -> int:
        return call(command, options)

    expression = _EXPRESSION if command.expression_default is None else _EXPRESSION.replace(
        annotation=Annotated[str, typer.Argument(
            help="The formula.", metavar="[EXPRESSION]")], default=command.expression_default)
    params = [*([expression] if command.takes_expression else []),
              *map(_parameter, command.options)]
    run.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": int}
    run.__name__, run.__doc__ = command.name, command.help
    return run


def _examples(commands: tuple[str, ...]) -> str:
    """A help epilog listing example commands, kept as typed (no re-wrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  {c}" for c in commands)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gradcli {__version__}\n")
        raise typer.Exit(0)


def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Show the version and exit.")]
          = False) -> None:
    """gradcli: derivatives from the command line."""


def build(only: str | None = None, commands: Sequence[Command] | None = None
          ) -> click.Command:
    """The click command group for every declared command, or for ``only`` that one."""
    app = typer.Typer(
        name="gradcli", no_args_is_help=True, pretty_exceptions_enable=False,
        rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
        help="Derivatives, gradients, Jacobians and gradient-field pictures of a formula, "
        "from gradcli's own autograd engine. An expression may start with -; where it "
        "could be read as an option, give it after --.")
    # click >= 8.4 suggests a close command itself; typer's would say it a second time (set
    # as an attribute: older typer has no such argument, and adds no suggestion of its own)
    app.suggest_commands = not hasattr(click.exceptions, "NoSuchCommand")
    app.callback()(_root)
    if commands is None:
        from gradcli.cli.definition import command as declared

        one = declared(only) if only is not None else None
        commands = (one,) if one is not None else all_commands()
    for command in commands:
        if only is None or command.name == only:
            app.command(command.name, help=command.help,
                        epilog=_examples(command.examples))(command_function(command))
    return typer.main.get_command(app)
