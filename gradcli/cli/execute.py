"""From command-line options to columns on the screen or in a file.

Options in (point specs, format, output), ``gradcli.evaluation`` does the work, the output
layer writes; ``--check`` compares the derivatives with central differences.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..evaluation import Prepared, prepare
from ..evaluation.specs import parse_point, parse_vector
from ..lang import free_variables, parse
from .declare import BY_NAME, CHECK_TOLERANCE
from .errors import ExitStatus, UsageProblem, expression_warnings, say, writing_stdout
from .formats import choose_format
from .inputs import read_array
from .progress import RunProgress, wanted
from .specs import resolve_grid


@dataclass
class Request:
    """Everything a numeric command was asked to do: one field per declared option."""

    what: str
    expression: str
    at: list[str]
    grid: list[str]
    points: str | None
    fmt: str
    output: str | None
    precision: int
    strict: bool
    quiet: bool
    max_points: int
    dtype: str
    # declared by some numeric commands only
    check: bool = False
    check_tol: float | None = None
    vector: str | None = None
    direction: str | None = None
    unit: bool = False
    norm: bool = False
    wrt: list[str] | None = None
    order: int | None = None
    polynomial: bool = False
    scheduler: str | None = None
    scheduler_file: str | None = None
    scheduler_timeout: float = 10.0
    overwrite: bool = False


def run_numeric(what: str, **options: Any) -> int:
    """The body of every numeric command (``declare.py`` routes them here)."""
    request = Request(what=what, **options)
    with expression_warnings(request.quiet):
        return run_request(request)


def _no_points_message(expression: str) -> str:
    try:
        names = free_variables(parse(expression))
    except Exception:  # noqa: BLE001 - the real parse error is reported later
        names = []
    example_at = ",".join(f"{n}={i + 1}" for i, n in enumerate(names)) or "x=1"
    example_grid = " ".join(f"--grid {n}=0:1:11" for n in names) or "--grid x=0:1:11"
    return (f'no points given: add --at "{example_at}" for one point, {example_grid} for '
            "a grid, --points FILE.csv, or a bare --grid for a default grid")


def _held(specs: list[str]) -> dict[str, Any]:
    """``--at`` beside ``--grid``/``--points``: the values it holds fixed, merged."""
    fixed: dict[str, Any] = {}
    for spec in specs:
        for name, value in parse_point(spec, files=read_array).items():
            if name in fixed:
                raise UsageProblem(f"--at '{name}' is given twice")
            fixed[name] = value
    return fixed


def build(req: Request) -> Prepared:
    """Parse the point options and prepare the evaluation."""
    if req.check_tol is not None and not req.check:
        raise UsageProblem("--check-tol sets the tolerance of --check: add --check")
    if req.grid and req.points:
        raise UsageProblem("use only one of --grid and --points (--at beside either holds "
                           "a variable fixed)")
    kwargs: dict[str, Any] = {}
    if req.grid or req.points:
        kwargs["fixed"] = fixed = _held(req.at)
        if req.grid:
            kwargs["grid"] = resolve_grid(req.expression, req.grid, req.quiet, held=fixed)
        else:
            from .points_file import read_points  # its parser's tables: only for --points

            table = read_points(req.points or "", free_variables(parse(req.expression)),
                                req.max_points)
            kwargs["points"] = points = table.variables
            kwargs["carry"] = table.carried
            both = next((n for n in fixed if n in points), None)
            if both is not None:
                raise UsageProblem(f"'{both}' is given by --at and by --points: give only "
                                   "one of them")
    elif req.at:
        kwargs["at"] = [parse_point(spec, files=read_array) for spec in req.at]
    elif free_variables(parse(req.expression)):
        raise UsageProblem(_no_points_message(req.expression))
    else:
        kwargs["at"] = [{}]  # a constant needs no point: evaluate it once
    if req.vector is not None:
        kwargs["vector"] = parse_vector(req.vector, files=read_array)
    if req.direction is not None:
        kwargs["direction"] = parse_point(req.direction, "--direction", files=read_array)
    if req.wrt:
        kwargs["wrt"] = [name.strip() for spec in req.wrt for name in spec.split(",")]
    return prepare(req.expression, req.what, dtype=req.dtype, max_points=req.max_points,
                   order=req.order, norm=req.norm, unit=req.unit, **kwargs)


def run_request(req: Request) -> int:
    """Run one numeric command end to end; return the exit status."""
    from .. import output

    prepared = build(req)
    fmt = choose_format(BY_NAME[req.what], req.fmt, req.output)
    if req.what == "taylor":
        return run_taylor(req, prepared, fmt)
    if fmt in ("npz", "nc", "zarr", "parquet") and not req.output:
        raise UsageProblem(f"{fmt} output needs a file: add -o out.{fmt}")
    if fmt == "npy" and req.check:
        raise UsageProblem("--check needs the results in memory: use -o with .npz, .csv "
                           "or .json")
    output.require_format(fmt)  # a missing extra is said now, not after the evaluation
    scheduler = _scheduler(req)
    if scheduler and req.check:
        raise UsageProblem("--check computes central differences in this process: drop "
                           "--check, or --scheduler (and GRADCLI_SCHEDULER)")
    history = command_line(req)
    values = prepared.binding.size * max(1, prepared.layout.size())
    to_file = bool(req.output) or not sys.stdout.isatty()
    with RunProgress(wanted(req.quiet, values, fmt in ("csv", "json") and to_file)) as bar, \
            _cluster(scheduler, req.scheduler_timeout, req.quiet) as client:
        stream = None
        if fmt in ("npz", "npy") and not req.check:
            from ..output.stream_sink import StreamSink

            stream = StreamSink(req.output or "", fmt)
        elif fmt == "zarr" and not req.check:
            from ..output.zarr_sink import ZarrSink

            stream = ZarrSink(req.output or "", prepared.origin(history), history,
                              overwrite=req.overwrite)
        columns = prepared.run(stream, progress=bar.stage("computing"), client=client)
        status = _run_check(prepared, columns, req) if req.check else ExitStatus.OK
        if stream is not None:
            bad = stream.nonfinite
            for note in [] if req.quiet else getattr(stream, "notes", []):
                say(note)
        else:
            with writing_stdout():
                notes = output.write(
                    columns, fmt=fmt, path=req.output, expression=req.expression,
                    variables=list(prepared.binding.names), notes=_notes(prepared),
                    precision=req.precision, stdout=sys.stdout,
                    progress=bar.stage(f"writing {req.output or 'standard output'}"),
                    origin=prepared.origin(history), history=history,
                    overwrite=req.overwrite)
            if not req.quiet:
                for note in notes:
                    say(note)
            bad = output.count_nonfinite(columns, results_only=True)
    return _nonfinite_status(bad, req) or status


def run_taylor(req: Request, prepared: Prepared, fmt: str) -> int:
    """``taylor``: the per-point coefficients as one row per multi-index, or (with
    ``--polynomial``) the polynomial at each point as text, one line per point."""
    from .. import output
    from ..evaluation.taylor_table import long_table, polynomials
    from ..lang import MAX_LENGTH

    if req.polynomial and (fmt != "text" if req.output else req.fmt != "auto"):
        raise UsageProblem("--polynomial writes text: leave out -f, or write to -o FILE.txt")
    if fmt == "text" and not req.polynomial:
        raise UsageProblem("a .txt file holds the Taylor polynomial: add --polynomial")
    if fmt == "npz" and not req.output:
        raise UsageProblem("npz output needs a file: add -o out.npz")
    with _cluster(_scheduler(req), req.scheduler_timeout, req.quiet) as client:
        result = prepared.run(client=client)
    bad = output.count_nonfinite(result, results_only=True)
    if req.polynomial:
        lines = polynomials(result, prepared.plan)
        text = "".join(line + "\n" for line in lines)
        if req.output:
            with output.atomic_open(req.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            with writing_stdout():
                sys.stdout.write(text)
        longest = max((len(line) for line in lines), default=0)
        if longest > MAX_LENGTH and not req.quiet:
            say(f"note: the polynomial is {longest:,} characters long, over the "
                f"{MAX_LENGTH:,} gradcli reads back as an expression")
    else:
        table = long_table(result, prepared.plan)
        with writing_stdout():
            notes = output.write(table, fmt=fmt, path=req.output,
                                 expression=req.expression,
                                 variables=list(prepared.binding.names),
                                 precision=req.precision, stdout=sys.stdout)
        if not req.quiet:
            for note in notes:
                say(note)
    return _nonfinite_status(bad, req)


def _nonfinite_status(bad: int, req: Request) -> int:
    if bad:
        if not req.quiet or req.strict:
            say(f"warning: {bad:,} non-finite result value{'s' if bad != 1 else ''} "
                "(nan or inf) in the output")
        if req.strict:
            return ExitStatus.FAIL
    return ExitStatus.OK


def _scheduler(req: Request) -> str | None:
    """The scheduler to run on: --scheduler, --scheduler-file, $GRADCLI_SCHEDULER, then
    Dask's own scheduler-address ($DASK_SCHEDULER_ADDRESS); None: this process."""
    if req.scheduler and req.scheduler_file:
        raise UsageProblem("use only one of --scheduler and --scheduler-file")
    from ..evaluation.addresses import scheduler_address

    return scheduler_address(req.scheduler, req.scheduler_file, os.environ)


@contextmanager
def _cluster(scheduler: str | None, timeout: float, quiet: bool = False) -> Iterator[Any]:
    """A Dask client for ``--scheduler`` (None: compute in this process), closed (and a
    ``local:N`` cluster stopped) when the command ends. Dask's own logs stay off stderr;
    the dashboard's address is a note."""
    if not scheduler:
        yield None
        return
    from ..evaluation.cluster import connect, dashboard_link, quiet_dask

    quiet_dask()
    client, close = connect(scheduler, timeout)
    link = dashboard_link(client)
    if link and not quiet:
        say(f"note: Dask dashboard: {link}")
    try:
        yield client
    finally:
        close()


def command_line(req: Request) -> str:
    """The command as it could be typed again, for a file's ``history``: the command, the
    expression, then every option given (declared order), quoted for a POSIX shell."""
    import shlex

    source = getattr(req.expression, "source", None)  # a program read from a file
    expression = req.expression if source is None else "@-" if source == "stdin" else \
        f"@{source}"
    words = ["gradcli", req.what, expression]
    for option in BY_NAME[req.what].options:
        value = getattr(req, option.name, None)
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
    plan = prepared.plan
    if plan.what != "vjp":
        return []
    m = int(np.prod(prepared.program.shape))
    n = sum(int(np.prod(shape)) for _, shape in plan.targets)
    v_shape = prepared.program.shape or "()"
    return [f"shapes per point: v {v_shape} (like f), J ({m}, {n}) = outputs × inputs, "
            f"vᵀJ ({n},): one vjp/d column per input"]


def _run_check(prepared: Prepared, columns: dict[str, Any], req: Request) -> int:
    """``--check``: report the engine's largest gap to central differences; exit 1 when it
    is above the tolerance (by default the command's for its dtype) or where only one of
    the two is finite."""
    from ..evaluation.check import finite_difference_check

    tolerance = (req.check_tol if req.check_tol is not None
                 else CHECK_TOLERANCE[req.what][req.dtype])
    found = finite_difference_check(prepared, columns)
    say(f"check: central differences differ by at most {found.worst_abs:.3g} (absolute), "
        f"{found.worst_rel:.3g} (relative); tolerance {tolerance:g}")
    status = ExitStatus.OK
    if found.not_comparable:
        say(f"check: {found.not_comparable} entries not comparable (non-finite in one of them)")
        status = ExitStatus.FAIL
    if found.both_nonfinite:
        say(f"check: {found.both_nonfinite} entries not comparable (non-finite in both, "
            "but not the same value)")
        status = ExitStatus.FAIL
    if found.worst_rel > tolerance:
        say("check: FAILED: the discrepancy is above --check-tol")
        status = ExitStatus.FAIL
    return status

