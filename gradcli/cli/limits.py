"""Every bound a user can meet, read from the constants that enforce it.

``limits_table()`` is the table of ``docs/reference/limits.md`` (a test keeps the page equal
to it); ``python -m gradcli.cli.limits`` prints it.
"""

from __future__ import annotations

__all__ = ["limits", "limits_table"]


def _n(value: int) -> str:
    return f"{value:,}"


def limits() -> list[tuple[str, str, str]]:
    """(what is bounded, the bound, how to change it or what happens) for every bound."""
    from gradcli.cli.calibration_files import MAX_READINGS_BYTES, MAX_READINGS_COLUMNS
    from gradcli.cli.commands.repl_command import HISTORY_BYTES, HISTORY_LINES, MAX_DEFINITIONS
    from gradcli.cli.commands.repl_command import MAX_LINE as SESSION_LINE
    from gradcli.cli.definition import BY_NAME
    from gradcli.cli.explore.server import MAX_BODY, MAX_CONNECTIONS
    from gradcli.cli.inputs import MAX_ARRAY_BYTES
    from gradcli.cli.reading import MAX_LINE
    from gradcli.evaluation.cluster import WORKER_MEMORY
    from gradcli.fields.flow import MAX_ATTEMPTS, MAX_TIMES
    from gradcli.lang.compile import MAX_CALLS, MAX_STEPS
    from gradcli.lang.formula_printer import LONG_RATIO, LONG_TEXT, MAX_OUTPUT
    from gradcli.lang.parser import MAX_DEPTH, MAX_LENGTH
    from gradcli.lang.program import MAX_FILE
    from gradcli.lang.symbolic import MAX_TEXT, MEMO_STEPS, NODE_STEPS, STEP_BYTES, TEXT_STEP
    from gradcli.output.cf import MAX_CARRIED
    from gradcli.plot.html import MAX_PAGE_POINTS
    from gradcli.plot.layout import MAX_ARROWS_PER_AXIS
    from gradcli.plot.options import (
        MAX_CONTOUR_LEVELS,
        MAX_FRAMES,
        MAX_PIXELS_PER_SIDE,
        PICTURE_BYTES_PER_POINT,
    )
    from gradcli.plot.traced import MAX_TRACED, PATH_SAMPLES, SURFACE_SAMPLES
    from gradcli.request.binding import DEFAULT_MAX_POINTS, MAX_GRID_AXES
    from gradcli.request.budget import DEFAULT_MEMORY, ENV, FIXED_OVERHEAD, MIN_MEMORY, size_text

    steps = BY_NAME["descend"].option("steps").high
    return [
        ("Working memory (the budget)", size_text(DEFAULT_MEMORY),
         f"--memory SIZE or {ENV}=SIZE (at least {size_text(MIN_MEMORY)}); blocks of points "
         "are sized so every thread's fits"),
        ("Memory outside the budget", size_text(FIXED_OVERHEAD),
         "the interpreter, numpy and loaded modules; the inputs; results kept whole for "
         "table, CSV, JSON, .nc and .parquet output"),
        ("Points of one run", _n(DEFAULT_MAX_POINTS),
         "--max-points N; refused before anything is allocated"),
        ("Grid axes", _n(MAX_GRID_AXES), "numpy's dimension limit"),
        ("Expression length", f"{_n(MAX_LENGTH)} characters", "longer: a program file"),
        ("Nesting depth of an expression", _n(MAX_DEPTH), ""),
        ("Program file (@FILE)", size_text(MAX_FILE), ""),
        ("Program steps once functions are inlined", _n(MAX_STEPS),
         "compiled in time linear in the program's size"),
        ("Functions calling functions", f"{_n(MAX_CALLS)} levels", ""),
        ("Array file (x=@v.npy, --vector @v.npy)", size_text(MAX_ARRAY_BYTES), ""),
        ("Line of a points file", size_text(MAX_LINE), ""),
        ("Line of a session (gradcli repl)", f"{_n(SESSION_LINE)} bytes",
         "longer lines are refused as they are read; the session goes on"),
        ("Definitions of a session", f"{_n(MAX_DEFINITIONS)} characters in all",
         "the session's own limit (a program file's size); a definition past it is "
         "refused when typed"),
        ("Session history", f"{_n(HISTORY_LINES)} lines",
         f"at most the file's last {size_text(HISTORY_BYTES)} is read; only a regular file "
         "is read or replaced"),
        ("Readings file (propagate --readings)", size_text(MAX_READINGS_BYTES),
         f"at most {_n(MAX_READINGS_COLUMNS)} variables"),
        ("Carried text columns in a .nc or .zarr output", _n(MAX_CARRIED),
         "more are refused (CSV, JSON and .npz carry any number)"),
        ("descend steps", _n(steps), "--steps N"),
        ("flow times (--t START:STOP:COUNT)", _n(MAX_TIMES),
         "computed as the steps go: a count costs nothing until its rows are written"),
        ("dopri5 step attempts per run", _n(MAX_ATTEMPTS),
         "the run ends, said on stderr, as when its step stops advancing"),
        ("Picture grid points", f"budget / {PICTURE_BYTES_PER_POINT} B",
         f"refused with the most points that fit "
         f"({_n(DEFAULT_MEMORY // PICTURE_BYTES_PER_POINT)} at the default budget)"),
        ("Picture size", f"{_n(MAX_PIXELS_PER_SIDE)} pixels per side", "--size, --dpi"),
        ("Arrows", f"{MAX_ARROWS_PER_AXIS} per axis", "--every is raised, with a note"),
        ("Contour levels", _n(MAX_CONTOUR_LEVELS), "more are drawn as this many, with a note"),
        ("Animation frames", _n(MAX_FRAMES), "--animate t=A:B:N"),
        ("Points of an HTML page", _n(MAX_PAGE_POINTS), "each has a hover label"),
        ("Paths and surfaces over a picture (plot --path, --surface, ...)", _n(MAX_TRACED),
         f"more are refused; a path is drawn at {PATH_SAMPLES} points, a surface at "
         f"{SURFACE_SAMPLES}x{SURFACE_SAMPLES}"),
        ("Work of building formulas (--formula)", f"budget / {STEP_BYTES} B steps",
         f"{_n(DEFAULT_MEMORY // STEP_BYTES)} at the default budget; a step: a term, factor "
         f"or argument handled, {TEXT_STEP} characters of text; a new subexpression "
         f"{NODE_STEPS}, a derivative kept {MEMO_STEPS} (each shared subexpression is "
         "made once); past it one line, exit 1"),
        ("One formula (--formula)", f"{_n(MAX_TEXT)} characters",
         f"at most {LONG_RATIO} times the backward program when over "
         f"{_n(LONG_TEXT)}, nested at most {MAX_DEPTH} levels; past it one line "
         "(--formula program may be shorter), exit 1"),
        ("All the formulas of one command (--formula)", f"{_n(MAX_OUTPUT)} characters",
         "every column, each component of a vector counted (a program file holds them); "
         "past it one line, exit 1"),
        ("Local Dask workers (--scheduler local:N)", "the usable cores",
         f"and {size_text(WORKER_MEMORY)} of free memory each; more are refused"),
        ("gradcli explore: one computation's time",
         f"{BY_NAME['explore'].option('request_timeout').default:g} s",
         "--request-timeout SECONDS; the computation is stopped, the next request works"),
        ("gradcli explore: a request's body", size_text(MAX_BODY), "refused unread (413)"),
        ("gradcli explore: connections served at once", _n(MAX_CONNECTIONS),
         "more are closed; one computation runs at a time"),
    ]


def limits_table() -> str:
    """The bounds as a Markdown table."""
    lines = ["| What | Bound | How to change it, or what happens |", "|---|---|---|"]
    lines += [f"| {what} | {bound} | {note} |" for what, bound, note in limits()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(limits_table(), end="")
