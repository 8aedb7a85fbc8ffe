"""``gradcli implicit``: the derivatives of y(x) defined by F(x, y) = 0 at points on the
curve (``gradcli.fields.implicit``), written as rows like every other command."""

from __future__ import annotations

from typing import Any

from gradcli.cli.messages import ExitStatus, UsageProblem, expression_warnings
from gradcli.cli.row_writing import output_part, read_parameters, write_rows
from gradcli.execute import execute
from gradcli.lang.spec_text import parse_point
from gradcli.request import Request


def _names(text: str | list[str] | None) -> list[str] | None:
    """``y,z`` (or repeated) -> ["y", "z"]; None when not given."""
    if not text:
        return None
    items = text if isinstance(text, list) else [text]
    return [n.strip() for item in items for n in item.split(",") if n.strip()]


def run_implicit(what: str, expression: str, solve_for: str, at: list[str],
                 wrt: list[str] | None, order: int, tol: float | None,
                 units: list[str] | None = None, to: list[str] | None = None,
                 **writing: Any) -> int:
    """Check each --at point is on the curve, then write y's derivatives there: one
    Request, run by the executor (``fields.implicit.implicit_request``, which
    ``gradcli.implicit`` runs too); ``writing``, the output options, its output part."""
    out_part = output_part(what, writing)
    quiet = out_part.quiet
    if not at:
        raise UsageProblem("give the point on the curve with --at, e.g. --at x=0.6,y=0.8")
    points = [parse_point(spec, "at") for spec in at]
    request = Request(expression, what, at=points,
                      parameters=read_parameters(
                          {"solve_for": _names(solve_for) or [], "wrt": _names(wrt),
                           "order": order, "tol": tol}, units, to),
                      output=out_part)
    with expression_warnings(quiet):
        out = execute(request)
    write_rows(out.columns, request, out.facts["variables"])
    return ExitStatus.OK
