"""From command-line options to columns on the screen or in a file.

Options in (point specs, format, output), ``gradcli.evaluation`` does the work, the output
layer writes; ``--check`` compares the derivatives with central differences.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np

from gradcli.cli.definition import BY_NAME, check_tolerance
from gradcli.cli.format_choice import choose_format
from gradcli.cli.grid_option import resolve_grid
from gradcli.cli.inputs import read_array
from gradcli.cli.messages import (
    ExitStatus,
    UsageProblem,
    expression_warnings,
    note,
    notes_for,
    writing_stdout,
)
from gradcli.cli.progress import RunProgress, wanted
from gradcli.evaluation import Prepared, Request, prepare_request
from gradcli.lang import free_variables, parse
from gradcli.lang.spec_text import parse_point
from gradcli.request import Output


def run_numeric(what: str, **options: Any) -> int:
    """The body of every numeric command (``definition.py`` routes them here): the options as
    declared become one Request, which is run; with --formula, the formulas instead."""
    form = options.pop("formula", None)
    coords = options.pop("coords", None)
    if coords is not None:  # curvilinear coordinates: their own module
        from gradcli.cli.commands.curvilinear_command import run_coords

        return run_coords(what, coords, form, **options)
    if form is not None or options.get("fmt") == "latex":
        from gradcli.cli.commands.formula_command import (
            run_formula,  # --formula: formulas, not values
        )

        return run_formula(what, form, **options)
    with expression_warnings(options.get("quiet", False)):
        return run_request(build_request(what, options))


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
    return request.replace(output=Output(
        o.get("fmt") or "auto", o.get("output"), o.get("precision", 6),
        bool(o.get("overwrite")), command_line(request), bool(o.get("quiet"))))


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


def build(req: Request) -> Prepared:
    """Prepare the evaluation of a command line's Request (computing nothing yet)."""
    return prepare_request(req)


def run_request(req: Request) -> int:
    """Run one numeric command end to end (prepared, then run by the executor into the
    format's sink or written whole with the request's output part); return the exit
    status."""
    from gradcli import output
    from gradcli.execute import execute
    from gradcli.request.budget import memory_budget

    memory_budget(req.memory)  # a bad size is refused before any work
    prepared = build(req)
    fmt = choose_format(BY_NAME[req.what], req.output.format, req.output.path)
    req = req.replace(output=req.output.replace(format=fmt))
    o = req.output
    if prepared.plan.computation.shown is not None:  # its own table (taylor's long one)
        return run_shown(req, prepared)
    output.require_format(fmt)  # a missing extra is said now, not after the evaluation
    if req.scheduler and req.option("check"):
        raise UsageProblem("--check computes central differences in this process: drop "
                           "--check, or --scheduler (and GRADCLI_SCHEDULER)")
    values = prepared.binding.size * max(1, prepared.layout.size())
    to_file = bool(o.path) or not sys.stdout.isatty()
    with RunProgress(wanted(o.quiet, values, fmt in ("csv", "json") and to_file)) as bar, \
            _cluster(req.scheduler, req.scheduler_timeout, o.quiet) as client:
        # a streaming format gets the rows as they are computed (--check needs them all)
        stream = None if req.option("check") else output.sink_for(
            fmt, o.path, stdout=sys.stdout, origin=prepared.origin(o.history),
            history=o.history, overwrite=o.overwrite)
        to_stdout = stream is not None and not o.path
        with writing_stdout() if to_stdout else nullcontext():
            columns = execute(req, prepared=prepared, sink=stream,
                              progress=bar.stage("computing"), client=client).result
        status = _run_check(prepared, columns, req) if req.option("check") else ExitStatus.OK
        if stream is not None:
            bad = stream.nonfinite
            for line in getattr(stream, "notes", []):
                note(line, o.quiet)
        else:
            bad = output.count_nonfinite(columns, results_only=True)
            after = _nonfinite_notes(bad)
            with writing_stdout():
                notes = output.write(
                    columns, fmt=fmt, path=o.path, expression=req.expression,
                    variables=list(prepared.binding.names),
                    notes=notes_for(fmt, _notes(prepared), after),
                    precision=o.precision, stdout=sys.stdout,
                    progress=bar.stage(f"writing {o.path or 'standard output'}"),
                    origin=prepared.origin(o.history), history=o.history,
                    overwrite=o.overwrite)
            for line in notes:
                note(line, o.quiet)
    return _nonfinite_status(bad, req) or status


def run_shown(req: Request, prepared: Prepared) -> int:
    """A computation that shows its own table (its record's ``shown``: taylor's
    per-point coefficients as one row per multi-index), or (taylor's ``--polynomial``)
    the polynomial at each point as text, one line per point."""
    from gradcli import output
    from gradcli.execute import execute
    from gradcli.lang import MAX_LENGTH
    from gradcli.plan.taylor_table import polynomials

    o = req.output
    to_text = (o.format != "text" if o.path
               else req.option("fmt") not in ("auto", "text"))
    if req.option("polynomial") and to_text:
        raise UsageProblem("--polynomial writes text: leave out -f, or write to -o FILE.txt")
    if o.format == "text" and not req.option("polynomial"):
        raise UsageProblem("a .txt file holds the Taylor polynomial: add --polynomial")
    output.require_format(o.format)  # a missing extra is said now, not after the evaluation
    with _cluster(req.scheduler, req.scheduler_timeout, o.quiet) as client:
        evaluated = execute(req, prepared=prepared, client=client)
    result = evaluated.result
    bad = output.count_nonfinite(result, results_only=True)
    after = _nonfinite_notes(bad)
    if req.option("polynomial"):
        lines = polynomials(result, prepared.plan)
        text = "".join(line + "\n" for line in lines)
        with writing_stdout() if not o.path else nullcontext():
            output.write_text(text, fmt="text", path=o.path, stdout=sys.stdout)
        longest = max((len(line) for line in lines), default=0)
        if longest > MAX_LENGTH:
            note(f"note: the polynomial is {longest:,} characters long, over the "
                 f"{MAX_LENGTH:,} gradcli reads back as an expression", o.quiet)
    else:
        table = evaluated.rows()
        with writing_stdout():
            notes = output.write(table, fmt=o.format, path=o.path,
                                 expression=req.expression,
                                 variables=list(prepared.binding.names),
                                 notes=notes_for(o.format, (), after),
                                 precision=o.precision, stdout=sys.stdout,
                                 history=o.history)
        for line in notes:
            note(line, o.quiet)
    return _nonfinite_status(bad, req)


def _nonfinite_notes(bad: int) -> list[str]:
    """The warning said after the output when it holds nan or inf (SECURITY.md §5)."""
    from gradcli.evaluation.origin import nonfinite_notes

    return nonfinite_notes(bad)


def _nonfinite_status(bad: int, req: Request) -> int:
    for line in _nonfinite_notes(bad):
        note(line, req.option("quiet") and not req.option("strict"))
    if bad and req.option("strict"):
        return ExitStatus.FAIL
    return ExitStatus.OK


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


@contextmanager
def _cluster(scheduler: str | None, timeout: float, quiet: bool = False) -> Iterator[Any]:
    """A Dask client for ``--scheduler`` (None: compute in this process), closed (and a
    ``local:N`` cluster stopped) when the command ends. Dask's own logs stay off stderr;
    the dashboard's address is a note."""
    if not scheduler:
        yield None
        return
    from gradcli.evaluation.cluster import connect, dashboard_link, quiet_dask

    quiet_dask()
    client, close = connect(scheduler, timeout)
    link = dashboard_link(client)
    if link:
        note(f"note: Dask dashboard: {link}", quiet)
    try:
        yield client
    finally:
        close()


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


def _notes(prepared: Prepared) -> list[str]:
    from gradcli.evaluation.origin import shape_notes

    return shape_notes(prepared)


def _entries(n: int) -> str:
    """``1 entry``, ``6 entries``."""
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _run_check(prepared: Prepared, columns: dict[str, Any], req: Request) -> int:
    """``--check``: report the engine's largest gap to central differences; exit 1 when it
    is above the tolerance (by default the command's for its dtype) or where only one of
    the two is finite."""
    from gradcli.evaluation.check import finite_difference_check

    tolerance = (req.option("check_tol") if req.option("check_tol") is not None
                 else check_tolerance(req.what, req.dtype))
    found = finite_difference_check(prepared, columns)
    if found.compared:
        note(f"check: central differences differ by at most {found.worst_abs:.3g} (absolute), "
             f"{found.worst_rel:.3g} (relative) over {_entries(found.compared)}; "
             f"tolerance {tolerance:g}")
    else:
        note("check: no comparable entries")
    status = ExitStatus.OK
    if found.not_comparable:
        note(f"check: {_entries(found.not_comparable)} not comparable (non-finite in one "
             "of them)")
        status = ExitStatus.FAIL
    if found.both_nonfinite:
        note(f"check: {_entries(found.both_nonfinite)} not comparable (non-finite in "
             "both, but not the same value)")
        status = ExitStatus.FAIL
    if found.worst_rel > tolerance:
        note("check: FAILED: the discrepancy is above --check-tol")
        status = ExitStatus.FAIL
    return status

