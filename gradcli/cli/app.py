"""The typer application: one thin command per computation.

The numeric commands differ only in what they compute and in one or two options, so each
is declared as one entry (name, help, examples, extra options) and built by
``numeric_command``; ``execute.py`` turns the options into a request for
``gradcli.evaluate`` and hands the columns to the output layer.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
import typer.main

from .. import __version__
from .options import NUMERIC, Check, CheckTol, Direction, Expr, Out, Precision, Vector

app = typer.Typer(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
    help="Derivatives, gradients, Jacobians and gradient-field pictures of a formula, from "
    "gradcli's own autograd engine.")


def examples(*commands: str) -> str:
    """A help epilog listing example commands, kept as typed (no re-wrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  {c}" for c in commands)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gradcli {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Show the version and exit.")]
          = False) -> None:
    """gradcli: derivatives from the command line."""


def numeric_command(what: str, doc: str, extra: list[tuple[str, Any, Any]]) -> Callable:
    """A command function for ``what`` taking the expression, the shared options and
    ``extra`` ones; typer reads its options from the signature built here."""
    def command(**options: Any) -> int:
        from . import execute  # imported on use: `gradcli --help` does not need it

        options["at"] = options["at"] or []
        options["grid"] = options["grid"] or []
        return execute.run_request(execute.Request(what=what, **options))

    P = inspect.Parameter
    params = [P("expression", P.POSITIONAL_OR_KEYWORD, annotation=Expr)]
    for name, kind, default in [*NUMERIC, *extra]:
        params.append(P(name, P.POSITIONAL_OR_KEYWORD, annotation=kind,
                        default=default if default is not ... else P.empty))
    params.sort(key=lambda p: p.default is not P.empty)  # required ones first
    command.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": int}
    command.__name__, command.__doc__ = what, doc
    return command


CHECK = [("check", Check, False), ("check_tol", CheckTol, 1e-6)]
COMMANDS = [
    ("eval", "Values of the formula: column f (f[i] for a vector, f[i][j] for a matrix).",
     [], ['gradcli eval "x^2 + 3x + 1" --at x=4',
          'gradcli eval "[x*y, x-y]" --grid x=0:1:3 --grid y=0:1:3 -f json']),
    ("grad", "Gradient of a scalar formula: f, then df/dx for each variable.", CHECK,
     ['gradcli grad "x^2 + 3x + 1" --at x=4',
      'gradcli grad "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o grad.csv',
      'gradcli grad "sin(x)*cos(y)" --grid']),
    ("jacobian", "Every derivative: the values, then df[i]/dx per component and variable.",
     CHECK, ['gradcli jacobian "[-x^3, 5x]" --at x=0 --at x=1 --at x=2',
             'gradcli jacobian "[sum(x), sum(x^2)]" --at "x=[0,1,2,3]"']),
    ("vjp", "Vector-Jacobian product vᵀJ (PyTorch's backward(gradient=v)): vjp/dx per "
     "variable.", [("vector", Vector, ...)],
     ['gradcli vjp "[-x^3, 5x]" --vector "1,0" --at x=1']),
    ("jvp", "Jacobian-vector product J·u by forward mode: jvp (jvp[i] for a vector f).",
     [("direction", Direction, ...)],
     ['gradcli jvp "sin(x)*cos(y)" --direction "x=1,y=0" --at x=1,y=2']),
    ("hessian", "Second derivatives of a scalar formula: f, then d2f/dadb for every "
     "ordered pair.", [("check", Check, False), ("check_tol", CheckTol, 1e-4)],
     ['gradcli hessian "x^2*y + y^3" --at x=1,y=2']),
]
for _what, _doc, _extra, _examples in COMMANDS:
    app.command(_what, epilog=examples(*_examples))(numeric_command(_what, _doc, _extra))


@app.command(epilog=examples(
    'gradcli graph "4*(x^2 + x)" --at x=3',
    'gradcli graph "sin(x)*y" --at x=1,y=2 -f dot | dot -Tpng > g.png'))
def graph(expression: Expr,
          at: Annotated[list[str] | None, typer.Option(
              "--at", "-a", metavar="POINT", help='The point, e.g. "x=3".',
              show_default=False)] = None,
          fmt: Annotated[str, typer.Option(
              "--format", "-f", metavar="FORMAT", help="table | json | dot (Graphviz).")]
          = "table",
          output: Out = None, precision: Precision = 6) -> int:
    """The computation graph at one point: each node's operation, inputs, value and
    adjoint ∂f/∂node."""
    from .graph_cmd import run_graph

    return run_graph(expression, at or [], fmt, output, precision)


def _register_plot() -> None:
    from .plot_cmd import plot  # its matplotlib import happens inside the command

    app.command(epilog=examples(
        'gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o field.png',
        'gradcli plot "sin(x)" --grid x=0:2pi:100 --derivative -o sin.svg',
        'gradcli plot "[-y, x]" --grid x=-2:2:41 --grid y=-2:2:41 --color curl -o curl.png',
    ))(plot)


_register_plot()


def run_app(args: list[str], debug: bool = False) -> int:
    """Run the app on ``args``; map every failure to a one-line message and a status."""
    from .errors import guarded

    def call() -> Any:
        command = typer.main.get_command(app)
        argv = protect_expression(command, args)
        return command.main(args=argv, prog_name="gradcli", standalone_mode=False)

    return guarded(call, debug)
def protect_expression(group: Any, args: list[str]) -> list[str]:
    """Let an expression start with '-' (``gradcli grad "-x^2" --at x=3``).

    click would read ``-x^2`` as an option; a word starting with '-' that is no option of
    the command, standing where the expression goes, is moved behind ``--``.
    """
    import click

    if not args or args[0] not in getattr(group, "commands", {}):
        return args
    command = group.commands[args[0]]
    takes_value, flags = set(), {"--help", "-h"}
    for param in command.params:
        if isinstance(param, click.Option):
            names = [*param.opts, *param.secondary_opts]
            (flags if param.is_flag else takes_value).update(names)
    out, moved, i, positional = [args[0]], None, 1, False
    while i < len(args):
        word = args[i]
        if word == "--":
            return args
        if word in takes_value:
            out.extend(args[i:i + 2])
            i += 2
            continue
        is_option = (word in flags or word.split("=", 1)[0] in takes_value
                     or (word[:2] in takes_value and not word.startswith("--")))
        looks_negated = word.startswith("-") and not word.startswith("--") and len(word) > 1
        if looks_negated and not is_option and moved is None and not positional:
            moved = word
        else:
            positional = positional or not word.startswith("-")
            out.append(word)
        i += 1
    return out + ["--", moved] if moved is not None else out


def _register_plot() -> None:
    from .plot_cmd import plot

    app.command(
        epilog=examples(
            'gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o field.png',
            'gradcli plot "sin(x)" --grid x=0:2pi:100 --derivative -o sin.svg',
            'gradcli plot "[-y, x]" --grid x=-2:2:41 --grid y=-2:2:41 --color curl -o curl.png',
        )
    )(plot)


_register_plot()
