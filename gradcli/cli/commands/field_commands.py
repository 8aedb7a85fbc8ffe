"""``gradcli critical``, ``descend`` and ``flow``: options in, the field's answer out.

The work is ``gradcli.fields``; this reads the start points, seeds and held
values, hands them over, writes the rows through the output layer and says on stderr why
the runs stopped. A descent or trajectory that stops being finite exits 1 (its rows up to
and including the non-finite one are still written).
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from typing import Any

import numpy as np

from gradcli.cli.command_request import held_values
from gradcli.cli.grid_option import resolve_grid
from gradcli.cli.messages import (
    ExitStatus,
    UsageProblem,
    expression_warnings,
    note,
    writing_stdout,
)
from gradcli.cli.progress import RunProgress, wanted
from gradcli.cli.row_writing import output_part, read_parameters, said, write_rows
from gradcli.execute import execute
from gradcli.lang import free_variables, parse
from gradcli.lang.spec_text import parse_grid, parse_point
from gradcli.request import Request


def _starts(expression: str, start: list[str], start_grid: list[str],
            held: dict[str, Any]) -> dict[str, Any]:
    """The starts of --from or --from-grid as the request's parameters: ``start`` (a list
    of points) or ``start_grid`` (``{name: (start, stop, count)}``; ``y=0`` there is an
    axis of one value: every start has y = 0)."""
    if start and start_grid:
        raise UsageProblem("use --from (points) or --from-grid (a lattice), not both")
    if start:
        points = [parse_point(spec, "start") for spec in start]
        clash = next((n for n in points[0] if n in held), None)
        if clash is not None:
            raise UsageProblem(f"'{clash}' is given by --from and by --at: give only one of "
                               "them")
        return {"start": points}
    if not start_grid:
        names = free_variables(parse(expression))
        example = ",".join(f"{n}={i + 1}" for i, n in enumerate(names)) or "x=1"
        raise UsageProblem(f"no start given: add --from {example} (repeat for more), or a "
                           f"lattice with --from-grid {names[0] if names else 'x'}=-1:1:11")
    axes: dict[str, tuple[float, float, int]] = {}
    for spec in start_grid:
        name, value = parse_grid(spec, "start_grid")
        if value is None:
            raise UsageProblem(f"--from-grid '{spec}': give start:stop:count, e.g. "
                               f"--from-grid {name}=-1:1:11")
        if name in axes or name in held:
            raise UsageProblem(f"'{name}' is given twice (by --from-grid or --at)")
        axes[name] = value if isinstance(value, tuple) else (value, value, 1)
    return {"start_grid": axes}


#: how each command binds a variable, for the unbound-variable message
_UNBOUND = {
    "critical": "sample it with --grid {name}=START:STOP:COUNT, or hold it fixed with "
                "--at {name}=VALUE",
    "starts": "give it a start in --from (...,{name}=VALUE) or --from-grid, or hold it "
              "fixed with --at {name}=VALUE",
}


def run_critical(what: str, expression: str, grid: list[str], points: str | None,
                 at: list[str], max_points: int, track: str | None = None,
                 units: list[str] | None = None, to: list[str] | None = None,
                 **writing: Any) -> int:
    """Find, classify and write the critical points seeded by --grid or --points: the
    options' text read into one Request (the library's parameters; ``writing``, the
    output options, its output part), run by the executor
    (``fields.paths.critical_request``, which ``gradcli.critical`` runs too)."""
    out_part = output_part(what, writing)
    quiet = out_part.quiet
    if grid and points:
        raise UsageProblem("use only one of --grid and --points (--at beside either holds "
                           "a variable fixed)")
    held = held_values(at)
    with expression_warnings(quiet):
        seeds: dict[str, Any] = {}
        if points:
            from gradcli.cli.points_file import read_points

            table = read_points(points, free_variables(parse(expression)), max_points)
            if not table.variables:
                raise UsageProblem(f"--points {points}: no column names a variable of the "
                                   "formula")
            seeds["points"] = table.variables
        else:
            if not grid:
                raise UsageProblem("no seeds given: add --grid x=-3:3:13 (one per variable: "
                                   "its box is searched) or --points FILE.csv")
            spec = resolve_grid(expression, grid, quiet, held=held)
            if not any(isinstance(v, tuple) for v in spec.values()):
                raise UsageProblem("critical needs at least one variable sampled by --grid "
                                   "(start:stop:count)")
            seeds["grid"] = spec
        request = Request(expression, what, fixed=held, max_points=max_points,
                          parameters=read_parameters({"track": track}, units, to),
                          output=out_part, **seeds)
        out = execute(request, unbound=_UNBOUND["critical"])
    for line in said(out.notes):
        note(line, quiet)
    write_rows(out.columns, request, out.facts.get("variables", ()))
    return ExitStatus.OK


def run_descend(what: str, expression: str, start: list[str], start_grid: list[str],
                at: list[str], method: str, steps: int, tol: float | None, every: int,
                max_points: int, units: list[str] | None = None,
                to: list[str] | None = None, **options: Any) -> int:
    """Descend from every start; write the path rows; report why the runs stopped. The
    options' text is read into one Request (the output options its output part, the rest
    of ``options`` the optimiser's hyper-parameters), run by the executor
    (``fields.paths.descend_request``, which ``gradcli.descend`` runs too)."""
    out_part = output_part(what, options)
    hyper, quiet, chosen_fmt, output = options, out_part.quiet, out_part.format, out_part.path
    held = held_values(at)
    with expression_warnings(quiet):
        starts = _starts(expression, start, start_grid, held)
        count = len(starts.get("start") or []) or int(np.prod(
            [n for _, _, n in (starts.get("start_grid") or {}).values()]))
        many = count > 1 or "start_grid" in starts
        # one run's rows come in order: a stream to standard output gets each as it is made
        streaming = chosen_fmt == "jsonl" and not output and not many
        request = Request(expression, what, fixed=held, max_points=max_points,
                          parameters=read_parameters({**starts, "method": method, "steps": steps,
                                            "tol": tol, "every": every, **hyper}, units, to,
                                                     what),
                          output=out_part)
        with RunProgress(wanted(quiet, count * steps * 4, False)) as bar, \
                writing_stdout() if streaming else nullcontext():
            out = execute(request, unbound=_UNBOUND["starts"],
                          progress=bar.stage("descending"),
                          recording=(lambda function: _JsonlRows(function.columns))
                          if streaming else None)
    stops = said(out.notes)
    if not streaming:
        write_rows(out.columns, request, out.facts.get("variables", ()), stops)
    diverged = out.facts["diverged"]
    for line in stops:  # a divergence is said even with --quiet: the status is 1
        note(line, quiet and not diverged)
    return ExitStatus.FAIL if diverged else ExitStatus.OK


class _JsonlRows:
    """Writes one descent's recorded rows (step, the variables, f, |grad f|) to standard
    output as JSON Lines while it runs, flushed row by row."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns

    def __call__(self, rows: tuple) -> None:
        from gradcli.output.jsonl_writer import write_jsonl

        ids, k, P, f, gn = rows
        table: dict[str, Any] = {"step": np.full(len(ids), k, dtype=np.int64)}
        table |= {c: np.asarray(P[j]) for j, c in enumerate(self.columns)}
        table["f"], table["|grad f|"] = np.asarray(f), np.asarray(gn)
        write_jsonl(sys.stdout, table)


def run_flow(what: str, expression: str, start: list[str], start_grid: list[str],
             at: list[str], t: str | None, method: str, every: int, max_points: int,
             tol: float | None = None, box: str | None = None, rtol: float | None = None,
             atol: float | None = None, units: list[str] | None = None,
             to: list[str] | None = None, **writing: Any) -> int:
    """Integrate from every start over the time grid; write the rows; say why runs ended
    early and, for dopri5, the steps it took. The options' text is read into one
    Request, run by the executor (``fields.paths.flow_request``, which ``gradcli.flow``
    runs too)."""
    from gradcli.fields import defaults
    from gradcli.fields.flow import MAX_TIMES
    from gradcli.lang.spec_text import parse_box, parse_times

    out_part = output_part(what, writing)
    quiet = out_part.quiet
    held = held_values(at)
    times = parse_times(t, MAX_TIMES) if t is not None else defaults.TIMES
    bounds = parse_box(box) if box is not None else None
    with expression_warnings(quiet):
        starts = _starts(expression, start, start_grid, held)
        count = len(starts.get("start") or []) or int(np.prod(
            [n for _, _, n in (starts.get("start_grid") or {}).values()]))
        request = Request(expression, what, fixed=held, max_points=max_points,
                          parameters=read_parameters({**starts, "t": times, "method": method,
                                            "every": every, "tol": tol, "box": bounds,
                                            "rtol": rtol, "atol": atol}, units, to),
                          output=out_part)
        with RunProgress(wanted(quiet, count * times[2] * 4, False)) as bar:
            out = execute(request, unbound=_UNBOUND["starts"],
                          progress=bar.stage("integrating"))
    notes = said(out.notes)
    diverged = out.facts["diverged"]
    write_rows(out.columns, request, out.facts.get("variables", ()),
               notes + ([diverged] if diverged else []))
    for line in notes:
        note(line, quiet)
    if diverged:  # said even with --quiet: the status is 1
        note(diverged)
        return ExitStatus.FAIL
    return ExitStatus.OK
