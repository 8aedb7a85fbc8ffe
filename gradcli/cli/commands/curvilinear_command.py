"""``grad``, ``div``, ``curl`` and ``laplacian`` with ``--coords``: the points read as for
every numeric command, the operator in the chosen coordinates
(``gradcli.fields.curvilinear``), the rows written like the field commands'."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.cli.commands.field_commands import _request, _write
from gradcli.cli.messages import ExitStatus, UsageProblem, expression_warnings, say
from gradcli.fields.curvilinear import curvilinear_columns, parse_coords

#: numeric options that change how the Cartesian computation runs, not taken here
_NOT_WITH_COORDS = {"check": "--check", "scheduler": "--scheduler",
                    "scheduler_file": "--scheduler-file", "norm": "--norm",
                    "wrt": "--wrt"}


def run_coords(what: str, coords: str, form: str | None, **options: Any) -> int:
    """One numeric command line with --coords: its rows, or (--formula) its formulas."""
    from gradcli.cli.commands.numeric_commands import build_request

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
        where = {k: v for k, v in (("at", req.at), ("grid", req.grid),
                                   ("points", req.points), ("fixed", req.fixed))
                 if v is not None}
        columns = curvilinear_columns(req.expression, what, coords, where)
    first = next(i for i, c in enumerate(columns) if c == "f" or c.startswith("f["))
    variables = list(columns)[:first]
    _write(columns, _request(req.expression, options["fmt"], options.get("output"),
                             options["precision"], options.get("quiet", False), variables),
           what)
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
