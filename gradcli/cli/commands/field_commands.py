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

from gradcli.cli.commands.numeric_commands import held_values
from gradcli.cli.definition import BY_NAME
from gradcli.cli.format_choice import choose_format
from gradcli.cli.grid_option import resolve_grid
from gradcli.cli.messages import (
    ExitStatus,
    UsageProblem,
    expression_warnings,
    note,
    notes_for,
    writing_stdout,
)
from gradcli.cli.progress import RunProgress, wanted
from gradcli.fields.rows import descend_rows, flow_rows
from gradcli.lang import free_variables, parse
from gradcli.lang.spec_text import parse_grid, parse_point


def _starts(expression: str, start: list[str], start_grid: list[str], held: dict[str, Any],
            max_points: int, units: list[str] | None = None) -> Any:
    """The starts of --from or --from-grid (``y=0`` there is an axis of one value: every
    start has y = 0)."""
    from gradcli.fields.starts import from_lattice, from_points

    if start and start_grid:
        raise UsageProblem("use --from (points) or --from-grid (a lattice), not both")
    if start:
        points = [parse_point(spec, "start") for spec in start]
        clash = next((n for n in points[0] if n in held), None)
        if clash is not None:
            raise UsageProblem(f"'{clash}' is given by --from and by --at: give only one of "
                               "them")
        from gradcli.request.parameters import TABLE  # --unit: the table's syntax

        return from_points(points, TABLE["units"].read(units, None) if units else None)
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
    return from_lattice(axes, max_points)


def _format(command: str, fmt: str, output: str | None) -> str:
    """The format ``command`` writes (``cli.format_choice``), its extra checked now: before the
    work, not after it."""
    from gradcli.output import require_format

    chosen = choose_format(BY_NAME[command], fmt, output)
    require_format(chosen)
    return chosen


def _write(columns: dict[str, Any], req: dict[str, Any], command: str,
           after: list[str] | tuple[str, ...] = ()) -> None:
    """Write the rows; a JSON document's ``notes`` hold every note of the run, ``after``
    (said once the rows are written) included."""
    from gradcli import output

    fmt = _format(command, req["fmt"], req["output"])
    with writing_stdout():
        notes = output.write(columns, fmt=fmt, path=req["output"],
                             expression=req["expression"], variables=req["variables"],
                             notes=notes_for(fmt, (), after),
                             precision=req["precision"], stdout=sys.stdout,
                             history=req.get("history", ""))
    for line in notes:
        note(line, req["quiet"])


def _said(notes: list[str]) -> list[str]:
    """The library's notes (``evaluation.fields.notes``) in the command line's words."""
    from gradcli.cli.messages import option_words
    from gradcli.errors import render_references

    return [render_references(line, option_words) for line in notes]


#: how each command binds a variable, for the unbound-variable message
_UNBOUND = {
    "critical": "sample it with --grid {name}=START:STOP:COUNT, or hold it fixed with "
                "--at {name}=VALUE",
    "starts": "give it a start in --from (...,{name}=VALUE) or --from-grid, or hold it "
              "fixed with --at {name}=VALUE",
}


def run_critical(what: str, expression: str, grid: list[str], points: str | None,
                 at: list[str], fmt: str, output: str | None, precision: int, quiet: bool,
                 max_points: int, track: str | None = None,
                 units: list[str] | None = None, to: list[str] | None = None) -> int:
    """Find, classify and write the critical points seeded by --grid or --points: the
    options' text read into the library's parameters, then the library's one path
    (``gradcli.api.critical_points``, which ``gradcli.critical`` runs too)."""
    from gradcli.api import critical_points

    _format(what, fmt, output)
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
        from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

        for name, given in (("units", units), ("to", to)):
            if given:
                seeds[name] = TABLE[name].read(given, None)
        found, columns, box = critical_points(expression, at=held, max_points=max_points,
                                              track=track, unbound=_UNBOUND["critical"],
                                              **seeds)
    from gradcli.fields.notes import critical_notes

    for line in _said(critical_notes(found, box)):
        note(line, quiet)
    _write(columns, _request(expression, fmt, output, precision, quiet, found.columns),
           what)
    return ExitStatus.OK


def _request(expression: str, fmt: str, output: str | None, precision: int, quiet: bool,
             variables: list[str]) -> dict[str, Any]:
    return {"expression": expression, "fmt": fmt, "output": output, "precision": precision,
            "quiet": quiet, "variables": variables}


def run_descend(what: str, expression: str, start: list[str], start_grid: list[str],
                at: list[str], method: str, steps: int, tol: float | None, every: int,
                fmt: str, output: str | None, precision: int, quiet: bool, max_points: int,
                units: list[str] | None = None, to: list[str] | None = None,
                **hyper: Any) -> int:
    """Descend from every start; write the path rows; report why the runs stopped. The
    options' text is read into the library's parameters, then the library's one path runs
    (``gradcli.api.descend_paths``, which ``gradcli.descend`` runs too)."""
    from gradcli.api import descend_paths

    _format(what, fmt, output)
    held = held_values(at)
    with expression_warnings(quiet):
        starts = _starts(expression, start, start_grid, held, max_points, units)
        many = len(starts) > 1 or starts.lattice
        chosen_fmt = _format(what, fmt, output)
        # one run's rows come in order: a stream to standard output gets each as it is made
        streaming = chosen_fmt == "jsonl" and not output and not many
        with RunProgress(wanted(quiet, len(starts) * steps * 4, False)) as bar, \
                writing_stdout() if streaming else nullcontext():
            from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

            physical = {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to))
                        if g}
            path, function, chosen = descend_paths(
                expression, starts, held, method=method, steps=steps, tol=tol, every=every,
                **physical,
                max_points=max_points, unbound=_UNBOUND["starts"],
                progress=bar.stage("descending"),
                recording=(lambda function: _JsonlRows(function.columns)) if streaming
                else None, **hyper)
    from gradcli.fields.notes import descend_notes

    stops = _said(descend_notes(path, tol, steps, chosen.maximize))
    if not streaming:
        from gradcli.evaluation.request_units import critical_units

        _write(critical_units(descend_rows(path, many), function),
               _request(expression, fmt, output, precision, quiet, path.columns), what,
               stops)
    diverged = path.stop == "diverged"
    for line in stops:  # a divergence is said even with --quiet: the status is 1
        note(line, quiet and not diverged.any())
    return ExitStatus.FAIL if diverged.any() else ExitStatus.OK


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
             at: list[str], t: str | None, method: str, every: int, fmt: str,
             output: str | None, precision: int, quiet: bool, max_points: int,
             tol: float | None = None, box: str | None = None, rtol: float | None = None,
             atol: float | None = None, units: list[str] | None = None,
             to: list[str] | None = None) -> int:
    """Integrate from every start over the time grid; write the rows; say why runs ended
    early and, for dopri5, the steps it took. The options' text is read into the
    library's parameters, then the library's one path runs (``gradcli.api.flow_paths``,
    which ``gradcli.flow`` runs too)."""
    from gradcli.api import flow_paths
    from gradcli.fields import defaults
    from gradcli.fields.flow import TimeGrid
    from gradcli.fields.starts import parse_times

    _format(what, fmt, output)
    if method != "dopri5":
        given = "--rtol" if rtol is not None else "--atol" if atol is not None else None
        if given:
            raise UsageProblem(f"{given} sets dopri5's tolerance: add --method dopri5")
    held = held_values(at)
    grid = TimeGrid.of(parse_times(t) if t is not None else defaults.TIMES)
    bounds = _parse_box(box) if box is not None else None
    with expression_warnings(quiet):
        starts = _starts(expression, start, start_grid, held, max_points, units)
        with RunProgress(wanted(quiet, len(starts) * grid.n * 4, False)) as bar:
            from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

            physical = {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to))
                        if g}
            paths = flow_paths(expression, starts, held, grid, method=method, every=every,
                               tol=tol, box=bounds, rtol=rtol, atol=atol, **physical,
                               max_points=max_points, unbound=_UNBOUND["starts"],
                               progress=bar.stage("integrating"))
    from gradcli.fields.notes import flow_notes

    many = len(starts) > 1 or starts.lattice
    notes, diverged = flow_notes(paths, tol, many, method, grid.t0, grid.t1)
    notes = _said(notes)
    from gradcli.evaluation.request_units import flow_units

    _write(flow_units(flow_rows(paths, many), paths.function, paths.time),
           _request(expression, fmt, output, precision, quiet, paths.columns), what,
           notes + ([diverged] if diverged else []))
    for line in notes:
        note(line, quiet)
    if diverged:  # said even with --quiet: the status is 1
        note(diverged)
        return ExitStatus.FAIL
    return ExitStatus.OK


def _parse_box(text: str) -> dict[str, tuple[float, float]]:
    """``--box x=-5:5,y=-5:5`` -> {"x": (-5.0, 5.0), "y": (-5.0, 5.0)}."""
    from gradcli.lang.spec_text import parse_constant, split_top

    out: dict[str, tuple[float, float]] = {}
    for part in split_top(text, ","):
        name, eq, rest = part.partition("=")
        name = name.strip()
        ends = split_top(rest, ":") if eq else []
        if not name or len(ends) != 2:
            raise UsageProblem(f"--box '{text}': expected NAME=LOW:HIGH per variable, e.g. "
                               "--box x=-5:5,y=-5:5")
        low, high = (parse_constant(e, f"--box {name}") for e in ends)
        if not all(isinstance(v, float) and np.isfinite(v) for v in (low, high)) or \
                low >= high:
            raise UsageProblem(f"--box {name}={rest}: two finite bounds, the lower first")
        if name in out:
            raise UsageProblem(f"--box names '{name}' twice")
        out[name] = (low, high)
    return out
