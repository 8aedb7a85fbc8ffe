"""From command-line options to columns on the screen or in a file.

Options in (point specs, format, output), ``gradcli.evaluation`` does the work, the output
layer writes. Defaults are chosen here when the user has not said (a bare ``--grid``) and
announced on stderr in the syntax the user could have typed.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from ..evaluation import Prepared, prepare
from ..evaluation.specs import parse_grid, parse_point, parse_vector
from ..lang import free_variables, parse
from .errors import EXIT_FAIL, EXIT_OK, UsageProblem, say, writing_stdout
from .main import BARE_GRID

DEFAULT_RANGE = (-5.0, 5.0)


@dataclass
class Request:
    """Everything a numeric command was asked to do."""

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
    check: bool = False
    check_tol: float = 1e-6
    vector: str | None = None
    direction: str | None = None


def _fmt_number(v: float) -> str:
    return f"{v:g}"


def resolve_grid(expression: str, specs: list[str], quiet: bool,
                 force_default: bool = False) -> dict[str, Any]:
    """Grid entries from ``--grid`` specs; a bare ``--grid`` (or ``force_default``) samples
    every other free variable on -5:5 (101 points each for up to two variables, 21 for
    more), announced on stderr unless ``quiet``."""
    grid: dict[str, Any] = {}
    bare = force_default
    for spec in specs:
        if spec == BARE_GRID:
            bare = True
            continue
        name, value = parse_grid(spec)
        if name in grid:
            raise UsageProblem(f"--grid '{name}' is given twice")
        grid[name] = value
    if bare:
        names = free_variables(parse(expression))
        missing = sorted(n for n in names if n not in grid)  # x before y: x is horizontal
        sampled = len(missing) + sum(isinstance(v, tuple) for v in grid.values())
        count = 101 if sampled <= 2 else 21  # variables held fixed are not sampled
        for name in missing:
            grid[name] = (DEFAULT_RANGE[0], DEFAULT_RANGE[1], count)
        if missing and not quiet:
            lo, hi = (_fmt_number(v) for v in DEFAULT_RANGE)
            say("using " + " ".join(f"--grid {n}={lo}:{hi}:{count}" for n in missing))
    return grid


def _no_points_message(expression: str) -> str:
    try:
        names = free_variables(parse(expression))
    except Exception:  # noqa: BLE001 - the real parse error is reported later
        names = []
    example_at = ",".join(f"{n}={i + 1}" for i, n in enumerate(names)) or "x=1"
    example_grid = " ".join(f"--grid {n}=0:1:11" for n in names) or "--grid x=0:1:11"
    return (f'no points given: add --at "{example_at}" for one point, {example_grid} for '
            "a grid, --points FILE.csv, or a bare --grid for a default grid")


def build(req: Request) -> Prepared:
    """Parse the point options and prepare the evaluation."""
    given = sum(bool(x) for x in (req.at, req.grid, req.points))
    if given == 0 and not free_variables(parse(req.expression)):
        req.at = [""]  # a constant needs no point: evaluate it once
    elif given == 0:
        raise UsageProblem(_no_points_message(req.expression))
    if given > 1:
        raise UsageProblem("use only one of --at, --grid and --points")
    kwargs: dict[str, Any] = {}
    if req.at:
        kwargs["at"] = [parse_point(spec) if spec else {} for spec in req.at]
    elif req.grid:
        kwargs["grid"] = resolve_grid(req.expression, req.grid, req.quiet)
    else:
        from .points_file import read_points  # its parser's tables: only for --points

        table = read_points(req.points or "", free_variables(parse(req.expression)),
                            req.max_points)
        kwargs["points"], kwargs["carry"] = table.variables, table.carried
    if req.vector is not None:
        kwargs["vector"] = parse_vector(req.vector)
    if req.direction is not None:
        kwargs["direction"] = parse_point(req.direction, "--direction")
    if req.dtype not in ("float64", "float32"):
        raise UsageProblem(f"--dtype must be float64 or float32, got '{req.dtype}'")
    if not (math.isfinite(req.check_tol) and req.check_tol >= 0):
        raise UsageProblem(f"--check-tol must be a finite number >= 0, got {req.check_tol}")
    return prepare(req.expression, req.what, dtype=req.dtype, max_points=req.max_points,
                   **kwargs)


def _progress(prepared: Prepared) -> Any:
    """A rich progress bar on stderr, for runs big enough to take over about a second."""
    work = prepared.binding.size * max(1, len(prepared.plan.columns()))
    if work < 20_000_000 or not sys.stderr.isatty():
        return None, None
    from rich.progress import Progress

    bar = Progress(transient=True, console=_stderr_console())
    task = bar.add_task("evaluating", total=None)
    bar.start()

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, update


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def run_request(req: Request) -> int:
    """Run one numeric command end to end; return the exit status."""
    from .. import output

    prepared = build(req)
    fmt = _choose_format(req)
    bar, update = _progress(prepared)
    stream = None
    if fmt in ("npz", "npy") and not req.check:
        from ..output.stream_sink import StreamSink

        stream = StreamSink(req.output or "", fmt)
    try:
        columns = prepared.run(stream, progress=update)
    finally:
        if bar is not None:
            bar.stop()
    status = _run_check(prepared, columns, req) if req.check else EXIT_OK
    if stream is not None:
        bad = stream.nonfinite
    else:
        with writing_stdout():
            output.write(columns, fmt=fmt, path=req.output, expression=req.expression,
                         variables=list(prepared.binding.names), notes=_notes(prepared),
                         precision=req.precision, stdout=sys.stdout)
        bad = output.count_nonfinite(columns, results_only=True)
    if bad:
        if not req.quiet or req.strict:
            say(f"warning: {bad:,} non-finite result value{'s' if bad != 1 else ''} "
                "(nan or inf) in the output")
        if req.strict:
            return EXIT_FAIL
    return status


def _choose_format(req: Request) -> str:
    from .. import output

    fmt = req.fmt.lower()
    if fmt not in ("auto", "table", "csv", "json", "npz"):
        raise UsageProblem(f"--format must be auto, table, csv, json or npz, got '{req.fmt}'")
    if req.output:
        try:
            by_ext = ("npy" if req.output.lower().endswith(".npy")
                      else output.format_from_extension(req.output))
        except ValueError as exc:
            if fmt in ("csv", "json", "npz"):  # an explicit format names the target's format
                return fmt                       # (e.g. -f csv -o /dev/stdout)
            raise UsageProblem(str(exc).replace("use .npz", "use .npz, .npy")) from None
        if by_ext == "npy" and req.check:
            raise UsageProblem("--check needs the results in memory: use -o with .npz, .csv "
                               "or .json")
        if fmt not in ("auto", by_ext):
            raise UsageProblem(f"--format {fmt} does not match the extension of "
                               f"'{req.output}' ({by_ext})")
        return by_ext
    if fmt == "npz":
        raise UsageProblem("npz output needs a file: add -o out.npz")
    if fmt == "auto":
        return "table" if sys.stdout.isatty() else "csv"
    return fmt


def _notes(prepared: Prepared) -> list[str]:
    plan = prepared.plan
    if plan.what != "vjp":
        return []
    m, n = len(plan.outputs), len(plan.inputs)
    v_shape = prepared.program.shape or "()"
    return [f"shapes per point: v {v_shape} (like f), J ({m}, {n}) = outputs × inputs, "
            f"vᵀJ ({n},): one vjp/d column per input"]


def _run_check(prepared: Prepared, columns: dict[str, Any], req: Request) -> int:
    from ..evaluation.check import finite_difference_check

    worst_abs, worst_rel = finite_difference_check(prepared, columns)
    say(f"check: central differences differ by at most {worst_abs:.3g} (absolute), "
        f"{worst_rel:.3g} (relative); tolerance {req.check_tol:g}")
    if worst_rel > req.check_tol:
        say("check: FAILED: the discrepancy is above --check-tol")
        return EXIT_FAIL
    return EXIT_OK

