"""From command-line options to columns on the screen or in a file.

Options in (point specs, format, output), ``gradcli.evaluation`` does the work, the output
layer writes; ``--check`` compares the derivatives with central differences.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from gradcli.cli.command_request import build_request
from gradcli.cli.definition import BY_NAME, check_tolerance
from gradcli.cli.format_choice import choose_format
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
                    overwrite=o.overwrite, **(o.extras or {}))
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
                                 history=o.history, **(o.extras or {}))
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
