"""The typer application: one thin command per computation.

Each command only declares its options; ``execute.py`` turns them into a request for
``gradcli.evaluate`` and hands the columns to the output layer.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
import typer.main

from .. import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Derivatives, gradients, Jacobians and gradient-field pictures of a "
    "formula, from gradcli's own autograd engine.",
)

Expr = Annotated[
    str,
    typer.Argument(
        help='The formula, e.g. "x^2 + 3x + 1" or "[x*y, x-y]".',
        show_default=False,
        metavar="EXPRESSION",
    ),
]
At = Annotated[
    list[str] | None,
    typer.Option(
        "--at",
        "-a",
        metavar="POINT",
        help='One point, e.g. "x=1,y=pi/2" or "x=[0,1,2]"; repeat for more.',
        show_default=False,
    ),
]
Grid = Annotated[
    list[str] | None,
    typer.Option(
        "--grid",
        "-g",
        metavar="SPEC",
        help="start:stop:count per variable, e.g. x=0:2pi:100; z=0.5 holds z "
        "fixed; a bare --grid samples the other variables on -5:5.",
        show_default=False,
    ),
]
Points = Annotated[
    str | None,
    typer.Option(
        "--points",
        "-p",
        metavar="FILE",
        help="CSV file (or - for stdin) whose header names the variables.",
        show_default=False,
    ),
]
Fmt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="auto | table | csv | json | npz (auto: a table on a terminal, CSV otherwise).",
    ),
]
Out = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write to FILE; the format follows its extension (.csv .json .npz .npy).",
        show_default=False,
    ),
]
Precision = Annotated[
    int, typer.Option("--precision", metavar="DIGITS", help="Significant digits in tables.")
]
Strict = Annotated[bool, typer.Option("--strict", help="Exit 1 if any result is nan or inf.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No notes on stderr.")]
MaxPoints = Annotated[
    int, typer.Option("--max-points", metavar="N", help="Refuse more points than this.")
]
Dtype = Annotated[str, typer.Option("--dtype", metavar="DTYPE", help="float64 or float32.")]
Check = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Also compute central differences; report the largest discrepancy on "
        "stderr, exit 1 above --check-tol.",
    ),
]
CheckTol = Annotated[
    float, typer.Option("--check-tol", metavar="TOL", help="Relative tolerance for --check.")
]


def examples(*commands: str) -> str:
    """A help epilog listing example commands, kept as typed (no re-wrapping)."""
    return "\b\nExamples:\n" + "\n".join(f"  {c}" for c in commands)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gradcli {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """gradcli: derivatives from the command line."""


def _common(
    what: str,
    expression: str,
    at: list[str] | None,
    grid: list[str] | None,
    points: str | None,
    fmt: str,
    output: str | None,
    precision: int,
    strict: bool,
    quiet: bool,
    max_points: int,
    dtype: str,
    check: bool = False,
    check_tol: float = 1e-6,
    vector: str | None = None,
    direction: str | None = None,
) -> int:
    from . import execute  # imported on use: `gradcli --help` does not need it

    req = execute.Request(
        what,
        expression,
        at or [],
        grid or [],
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        check,
        check_tol,
        vector,
        direction,
    )
    return execute.run_request(req)


@app.command(
    "eval",
    epilog=examples(
        'gradcli eval "x^2 + 3x + 1" --at x=4',
        'gradcli eval "[x*y, x-y]" --grid x=0:1:3 --grid y=0:1:3 -f json',
    ),
)
def eval_(
    expression: Expr,
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
) -> int:
    """Values of the formula: column f (f[i] for a vector, f[i][j] for a matrix)."""
    return _common(
        "eval",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
    )


@app.command(
    epilog=examples(
        'gradcli grad "x^2 + 3x + 1" --at x=4',
        'gradcli grad "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o grad.csv',
        'gradcli grad "sin(x)*cos(y)" --grid',
    )
)
def grad(
    expression: Expr,
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
    check: Check = False,
    check_tol: CheckTol = 1e-6,
) -> int:
    """Gradient of a scalar formula: f, then df/dx for each variable."""
    return _common(
        "grad",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        check,
        check_tol,
    )


@app.command(
    epilog=examples(
        'gradcli jacobian "[-x^3, 5x]" --at x=0 --at x=1 --at x=2',
        'gradcli jacobian "[sum(x), sum(x^2)]" --at "x=[0,1,2,3]"',
    )
)
def jacobian(
    expression: Expr,
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
    check: Check = False,
    check_tol: CheckTol = 1e-6,
) -> int:
    """Every derivative: the values, then df[i]/dx per component and variable."""
    return _common(
        "jacobian",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        check,
        check_tol,
    )


@app.command(epilog=examples('gradcli vjp "[-x^3, 5x]" --vector "1,0" --at x=1'))
def vjp(
    expression: Expr,
    vector: Annotated[
        str,
        typer.Option(
            "--vector",
            "-v",
            metavar="V",
            help='v shaped like f: "1,0", or "[[1,0],[0,1]]" for a matrix.',
            show_default=False,
        ),
    ],
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
) -> int:
    """Vector-Jacobian product vᵀJ (PyTorch's backward(gradient=v)): vjp/dx per variable."""
    return _common(
        "vjp",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        vector=vector,
    )


@app.command(epilog=examples('gradcli jvp "sin(x)*cos(y)" --direction "x=1,y=0" --at x=1,y=2'))
def jvp(
    expression: Expr,
    direction: Annotated[
        str,
        typer.Option(
            "--direction",
            "-d",
            metavar="U",
            help='The tangent u, e.g. "x=1,y=0" (unnamed variables: 0).',
            show_default=False,
        ),
    ],
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
) -> int:
    """Jacobian-vector product J·u by forward mode: jvp (jvp[i] for a vector f)."""
    return _common(
        "jvp",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        direction=direction,
    )


@app.command(epilog=examples('gradcli hessian "x^2*y + y^3" --at x=1,y=2'))
def hessian(
    expression: Expr,
    at: At = None,
    grid: Grid = None,
    points: Points = None,
    fmt: Fmt = "auto",
    output: Out = None,
    precision: Precision = 6,
    strict: Strict = False,
    quiet: Quiet = False,
    max_points: MaxPoints = 50_000_000,
    dtype: Dtype = "float64",
    check: Check = False,
    check_tol: CheckTol = 1e-4,
) -> int:
    """Second derivatives of a scalar formula: f, then d2f/dadb for every ordered pair."""
    return _common(
        "hessian",
        expression,
        at,
        grid,
        points,
        fmt,
        output,
        precision,
        strict,
        quiet,
        max_points,
        dtype,
        check,
        check_tol,
    )


@app.command(
    epilog=examples(
        'gradcli graph "4*(x^2 + x)" --at x=3',
        'gradcli graph "sin(x)*y" --at x=1,y=2 -f dot | dot -Tpng > g.png',
    )
)
def graph(
    expression: Expr,
    at: At = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="table | json | dot (Graphviz source).")
    ] = "table",
    output: Out = None,
    precision: Precision = 6,
) -> int:
    """The computation graph at one point: each node's operation, inputs, value and
    adjoint ∂f/∂node."""
    from .graph_cmd import run_graph

    return run_graph(expression, at or [], fmt, output, precision)


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
