"""``gradcli integrate``: a line integral, circulation or flux along a path
(``gradcli.fields.integrate``), with Green's theorem's other side by ``--check green``;
one row, written like the field commands'."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.cli.command_request import held_values
from gradcli.cli.messages import ExitStatus, expression_warnings, say
from gradcli.cli.row_writing import output_part, read_parameters, said, write_rows
from gradcli.execute import execute
from gradcli.request import Request


def run_integrate(what: str, expression: str, path: str | None, disc: str | None,
                  box: str | None, surface: str | None, ball: str | None, flux: bool,
                  check: str | None, tol: float | None, wrt: list[str] | None, at: list[str],
                  units: list[str] | None = None, to: list[str] | None = None,
                  **writing: Any) -> int:
    """Integrate; write the row; with --check green, say whether both sides agree within
    their error estimates (exit 1 if not). ``writing``: the output options, the request's
    output part."""
    out_part = output_part(what, writing)
    quiet = out_part.quiet
    names = [n.strip() for spec in wrt or [] for n in spec.split(",") if n.strip()] or None
    request = Request(expression, what, fixed=held_values(at),
                      parameters=read_parameters(
                          {"path": path, "disc": disc, "box": box, "surface": surface,
                           "ball": ball, "flux": flux or None, "check": check, "tol": tol,
                           "wrt": names}, units, to),
                      output=out_part)
    with expression_warnings(quiet):
        out = execute(request)
    columns = out.columns
    write_rows(columns, request)
    if not quiet:
        for line in said(out.notes):
            say(line)
    if check is None:
        return ExitStatus.OK
    first = next(iter(columns))
    other = check
    a, ea = float(columns[first][0]), float(columns["error"][0])
    b, eb = float(columns[other][0]), float(columns[f"{other}_error"][0])
    gap = abs(a - b)
    allowed = ea + eb + 8 * np.finfo(float).eps * max(abs(a), abs(b))
    theorem, side = {"green": ("Green's theorem", "area integral"),
                     "divergence": ("the divergence theorem", "volume integral"),
                     "stokes": ("Stokes' theorem", "flux of the curl")}[check]
    if gap <= allowed:
        if not quiet:
            say(f"check: {theorem} holds: the two sides differ by {gap:.3g}, within their "
                f"error estimates ({ea:.3g} + {eb:.3g})")
        return ExitStatus.OK
    say(f"check: FAILED: the {first} and the {side} differ by {gap:.3g}, more than their "
        f"error estimates ({ea:.3g} + {eb:.3g})")
    return ExitStatus.FAIL
