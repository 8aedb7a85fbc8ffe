"""``grad``, ``div``, ``curl`` and ``laplacian`` with ``--coords``: the points read as for
every numeric command, the operator in the chosen coordinates
(``gradcli.fields.curvilinear``), the rows written like the field commands'."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.cli.messages import ExitStatus, UsageProblem, expression_warnings, say
from gradcli.cli.row_writing import chosen_format, write_rows
from gradcli.execute import execute
from gradcli.fields.curvilinear import parse_coords
from gradcli.request import Output, Request

#: numeric options that change how the Cartesian computation runs, not taken here
_NOT_WITH_COORDS = {"check": "--check", "scheduler": "--scheduler",
                    "scheduler_file": "--scheduler-file", "norm": "--norm",
                    "wrt": "--wrt"}


def run_coords(what: str, coords: str, form: str | None, **options: Any) -> int:
    """One numeric command line with --coords: its rows, or (--formula) its formulas."""
    from gradcli.cli.command_request import build_request

    for name, flag in _NOT_WITH_COORDS.items():
        if options.get(name):
            raise UsageProblem(f"{flag} does not go with --coords (the coordinates are the "
                               "variables --coords names)")
    if options.get("dtype") not in (None, "float64"):
        raise UsageProblem("--coords computes in float64: drop --dtype")
    if form is not None:
        return _formulas(what, coords, form, options)
    with expression_warnings(options.get("quiet", False)):
        req = build_request(what, options)
        request = Request(req.expression, "curvilinear", at=req.at, grid=req.grid,
                          points=req.points, fixed=req.fixed, max_points=req.max_points,
                          parameters={"operator": what, "coords": coords},
                          output=Output(chosen_format(what, options["fmt"],
                                                      options.get("output")),
                                        options.get("output"), options["precision"],
                                        quiet=options.get("quiet", False)))
        out = execute(request)
    columns, variables = out.columns, out.facts["variables"]
    write_rows(columns, request, variables)
    bad = sum(int((~np.isfinite(v)).sum()) for k, v in columns.items() if k not in variables
              and k != "f" and not k.startswith("f["))
    if bad and (not options.get("quiet") or options.get("strict")):
        say(f"warning: {bad:,} non-finite result value{'s' if bad != 1 else ''} (nan or inf) "
            "in the output (on an axis the formulas divide by 0)")
    return ExitStatus.FAIL if bad and options.get("strict") else ExitStatus.OK


def _formulas(what: str, coords: str, form: str, options: dict[str, Any]) -> int:
    """--formula with --coords: one 'name = formula' line per column, as text."""
    import sys

    from gradcli.cli.messages import writing_stdout
    from gradcli.fields.curvilinear import curvilinear_formulas

    if form != "expr":
        raise UsageProblem("--coords prints the operator's formulas: --formula, not "
                           f"--formula {form}")
    if options.get("fmt") not in ("auto", "text", "table") or options.get("output"):
        raise UsageProblem("--formula with --coords prints text: drop -f and -o")
    parse_coords(coords)
    lines = [f"{k} = {v}" for k, v in
             curvilinear_formulas(options["expression"], what, coords).items()]
    with writing_stdout():
        sys.stdout.write("".join(line + "\n" for line in lines))
    return ExitStatus.OK
