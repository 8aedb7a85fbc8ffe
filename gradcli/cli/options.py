"""The command-line options the commands share, declared once (typer ``Annotated`` types)."""

from __future__ import annotations

from typing import Annotated

import typer

from .defaults import NUMERIC_DEFAULTS


def _option(*names: str, help: str, metavar: str | None = None,  # noqa: A002 - typer's name
            show_default: bool = True, **bounds: int) -> typer.models.OptionInfo:
    return typer.Option(*names, help=help, metavar=metavar, show_default=show_default,
                        **bounds)


Expr = Annotated[str, typer.Argument(
    help='The formula, e.g. "x^2 + 3x + 1" or "[x*y, x-y]".', show_default=False,
    metavar="EXPRESSION")]
At = Annotated[list[str] | None, _option(
    "--at", "-a", metavar="POINT", show_default=False,
    help='One point, e.g. "x=1,y=pi/2" or "x=[0,1,2]"; repeat for more.')]
Grid = Annotated[list[str] | None, _option(
    "--grid", "-g", metavar="SPEC", show_default=False,
    help="start:stop:count per variable, e.g. x=0:2pi:100; z=0.5 holds z fixed; a bare "
    "--grid samples the other variables on -5:5.")]
Points = Annotated[str | None, _option(
    "--points", "-p", metavar="FILE", show_default=False,
    help="CSV file (or - for stdin) whose header names the variables.")]
Fmt = Annotated[str, _option(
    "--format", "-f", metavar="FORMAT",
    help="auto | table | csv | json | npz (auto: a table on a terminal, CSV otherwise).")]
Out = Annotated[str | None, _option(
    "--output", "-o", metavar="FILE", show_default=False,
    help="Write to FILE; the format follows its extension (.csv .json .npz .npy).")]
Precision = Annotated[int, _option("--precision", metavar="DIGITS", min=1, max=17,
                                   help="Significant digits in tables.")]
Strict = Annotated[bool, _option("--strict", help="Exit 1 if any result is nan or inf.")]
Quiet = Annotated[bool, _option("--quiet", "-q", help="No notes on stderr.")]
MaxPoints = Annotated[int, _option("--max-points", metavar="N", min=0,
                                   help="Refuse more points than this.")]
Dtype = Annotated[str, _option("--dtype", metavar="DTYPE", help="float64 or float32.")]
Check = Annotated[bool, _option(
    "--check", help="Also compute central differences; report the largest discrepancy on "
    "stderr, exit 1 above --check-tol.")]
CheckTol = Annotated[float, _option("--check-tol", metavar="TOL",
                                    help="Relative tolerance for --check.")]
Vector = Annotated[str, _option(
    "--vector", "-v", metavar="V", show_default=False,
    help='v shaped like f: "1,0", or "[[1,0],[0,1]]" for a matrix.')]
Direction = Annotated[str, _option(
    "--direction", "-d", metavar="U", show_default=False,
    help='The tangent u, e.g. "x=1,y=0" (variables not named: 0).')]

_TYPES = {"at": At, "grid": Grid, "points": Points, "fmt": Fmt, "output": Out,
          "precision": Precision, "strict": Strict, "quiet": Quiet, "max_points": MaxPoints,
          "dtype": Dtype}
#: (name, type, default) of the options every numeric command takes, in --help order
NUMERIC = [(name, _TYPES[name], default) for name, default in NUMERIC_DEFAULTS.items()]
