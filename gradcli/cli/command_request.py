"""A command line's Request: the declared options of a numeric command read into the
library's parameters (where, held values, each computation parameter by its declaration,
the scheduler) with the output part (format, path, precision, overwrite, the command line
as history). Shared by the numeric commands, the curvilinear operators and, for the held
values of ``--at``, every command that samples a grid."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcli.cli.definition import BY_NAME
from gradcli.cli.format_choice import choose_format
from gradcli.cli.grid_option import resolve_grid
from gradcli.cli.inputs import read_array
from gradcli.cli.messages import UsageProblem
from gradcli.cli.row_writing import output_part
from gradcli.lang import free_variables, parse
from gradcli.lang.spec_text import parse_point
from gradcli.request import Request

__all__ = ["build_request", "held_values", "read_parameters", "command_line"]


def _no_points_message(expression: str) -> str:
    try:
        names = free_variables(parse(expression))
    except Exception:  # noqa: BLE001 - the real parse error is reported later
        names = []
    example_at = ",".join(f"{n}={i + 1}" for i, n in enumerate(names)) or "x=1"
    example_grid = " ".join(f"--grid {n}=0:1:11" for n in names) or "--grid x=0:1:11"
    return (f'no points given: add --at "{example_at}" for one point, {example_grid} for '
            "a grid, --points FILE.csv, or a bare --grid for a default grid")


def held_values(specs: list[str]) -> dict[str, Any]:
    """``--at`` beside ``--grid``/``--points``: the values it holds fixed, merged."""
    fixed: dict[str, Any] = {}
    for spec in specs:
        for name, value in parse_point(spec, files=read_array).items():
            if name in fixed:
                raise UsageProblem(f"--at '{name}' is given twice")
            fixed[name] = value
    return fixed


def _spreadsheet_safe(carried: dict[str, Any]) -> dict[str, Any]:
    """--csv-safe: carried names and cells a spreadsheet would run as formulas, escaped."""
    from gradcli.output.csv_writer import spreadsheet_safe

    return {spreadsheet_safe(name): np.array([spreadsheet_safe(c) for c in col.tolist()],
                                             dtype=object)
            for name, col in carried.items()}


def build_request(what: str, options: Mapping[str, Any]) -> Request:
    """The Request of a numeric command line: the options' text read into the library's
    parameters (where, held values, the computation's parameters); every option as given
    stays in ``options`` (output, format, --check, and for the history line)."""
    o = dict(options)
    expression = o.pop("expression")
    at, grid, points = o.get("at") or [], o.get("grid") or [], o.get("points")
    if o.get("check_tol") is not None and not o.get("check"):
        raise UsageProblem("--check-tol sets the tolerance of --check: add --check")
    if grid and points:
        raise UsageProblem("use only one of --grid and --points (--at beside either holds "
                           "a variable fixed)")
    where: dict[str, Any] = {}
    if grid or points:
        where["fixed"] = fixed = held_values(at)
        if grid:
            where["grid"] = resolve_grid(expression, grid, o.get("quiet", False), held=fixed)
        else:
            from gradcli.cli.points_file import (
                read_points,  # its parser's tables: only for --points
            )

            table = read_points(points or "", free_variables(parse(expression)),
                                o["max_points"], check_carried=_carried_bound(what, o))
            where["points"] = table.variables
            where["carry"] = _spreadsheet_safe(table.carried) if o.get("csv_safe") else \
                table.carried
            both = next((n for n in fixed if n in table.variables), None)
            if both is not None:
                raise UsageProblem(f"'{both}' is given by --at and by --points: give only "
                                   "one of them")
    elif at:
        where["at"] = [parse_point(spec, files=read_array) for spec in at]
    elif free_variables(parse(expression)):
        raise UsageProblem(_no_points_message(expression))
    else:
        where["at"] = [{}]  # a constant needs no point: evaluate it once
    parameters = read_parameters(what, o)
    scheduler = _scheduler(o.get("scheduler"), o.get("scheduler_file"))
    request = Request(expression, what, dtype=o.get("dtype"), max_points=o["max_points"],
                      parameters=parameters, scheduler=scheduler,
                      scheduler_timeout=o.get("scheduler_timeout", 10.0),
                      threads=o.get("threads"), memory=o.get("memory"),
                      options={"expression": expression, **o}, **where)
    return request.replace(output=output_part(what, dict(o), command_line(request),
                                              choose=False))


def read_parameters(what: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The computation's parameters from their options' text, each read by its declaration
    (``parameters.Parameter.read``: ``--vector "1,0"``, ``--direction x=1``, ``--wrt x,y``)."""
    from gradcli.plan.computations import computation
    from gradcli.request.parameters import TABLE

    out: dict[str, Any] = {}
    for name in computation(what).parameters:
        p, text = TABLE[name], options.get(name)
        if not p.given(text) or (isinstance(text, list) and not text):
            continue
        out[name] = p.read(text, read_array) if p.read is not None else text
    return out


def _carried_bound(what: str, options: Mapping[str, Any]) -> Any:
    """The output's bound on carried columns, checked from the points file's header: a
    dataset (.nc, .zarr) holds at most ``cf.MAX_CARRIED``; other formats any number."""
    from gradcli.output.cf import DATASET_FORMATS, check_carried
    from gradcli.plan.computations import computation

    if computation(what).shown is not None:  # writes its own table, not the points' rows
        return None
    try:
        fmt = choose_format(BY_NAME[what], options.get("fmt") or "auto",
                            options.get("output"))
    except UsageProblem:  # a bad -f/-o is said where the format is chosen for the write
        return None
    return check_carried if fmt in DATASET_FORMATS else None


def _scheduler(scheduler: str | None, scheduler_file: str | None) -> str | None:
    """The scheduler to run on: --scheduler, --scheduler-file, $GRADCLI_SCHEDULER, then
    Dask's own scheduler-address ($DASK_SCHEDULER_ADDRESS); None: this process."""
    if scheduler and scheduler_file:
        raise UsageProblem("use only one of --scheduler and --scheduler-file")
    if scheduler_file:  # a file an argument names: refused under --no-files like the rest
        from gradcli.cli.files import check_file

        check_file(f"--scheduler-file {scheduler_file}", scheduler_file)
    from gradcli.evaluation.addresses import scheduler_address

    return scheduler_address(scheduler, scheduler_file, os.environ)


def command_line(req: Request) -> str:
    """The command as it could be typed again, for a file's ``history``: the command, the
    expression, then every option given (declared order), quoted for a POSIX shell."""
    import shlex

    typed = req.option("expression", req.expression)
    source = getattr(typed, "source", None)  # a program read from a file
    expression = typed if source is None else "@-" if source == "stdin" else \
        f"@{source}"
    words = ["gradcli", req.what, expression]
    for option in BY_NAME[req.what].options:
        value = req.option(option.name)
        if value is None or value == [] or value is False or value == option.default_value:
            continue
        flag = option.flags[0]
        if option.kind == "flag":
            words.append(flag)
        elif option.repeat:
            for item in value:
                words += [flag] if item == option.bare else [flag, str(item)]
        else:
            words += [flag, str(value)]
    return shlex.join(words)
