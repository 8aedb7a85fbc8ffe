"""``gradcli implicit``: the derivatives of y(x) defined by F(x, y) = 0 at points on the
curve (``gradcli.fields.implicit``), written as rows like every other command."""

from __future__ import annotations

from typing import Any

from gradcli.cli.commands.field_commands import _format, _request, _write
from gradcli.cli.messages import ExitStatus, UsageProblem, expression_warnings
from gradcli.fields.implicit import TOL, implicit_columns
from gradcli.lang.spec_text import parse_point


def _names(text: str | list[str] | None) -> list[str] | None:
    """``y,z`` (or repeated) -> ["y", "z"]; None when not given."""
    if not text:
        return None
    items = text if isinstance(text, list) else [text]
    return [n.strip() for item in items for n in item.split(",") if n.strip()]


def run_implicit(what: str, expression: str, solve_for: str, at: list[str],
                 wrt: list[str] | None, order: int, tol: float | None, fmt: str,
                 output: str | None, precision: int, quiet: bool,
                 units: list[str] | None = None, to: list[str] | None = None) -> int:
    """Check each --at point is on the curve, then write y's derivatives there."""
    _format(what, fmt, output)
    if not at:
        raise UsageProblem("give the point on the curve with --at, e.g. --at x=0.6,y=0.8")
    points = [parse_point(spec, "at") for spec in at]
    unknown = _names(solve_for) or []
    from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

    physical = {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to)) if g}
    with expression_warnings(quiet):
        columns: Any = implicit_columns(
            expression, unknown, points, order=order, tol=TOL if tol is None else tol,
            wrt=_names(wrt), **physical)
    variables = [c for c in columns if c in points[0]]
    _write(columns, _request(expression, fmt, output, precision, quiet, variables), what)
    return ExitStatus.OK
