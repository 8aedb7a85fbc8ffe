"""Run ``gradcli plot``: resolve the grid, hand the options to ``gradcli.plot``, report.

Every drawing option declared in ``declare.PLOT_DRAWING`` arrives here by name, as typed,
and goes on to :func:`gradcli.plot.parse_options` under the same name: what each one means
(parsing, checks, defaults) lives in ``gradcli.plot.options``, so a new one needs its
declaration and its field there, nothing here. This only maps failures to exit statuses
and prints the notes. matplotlib (through ``gradcli.plot``) is imported only inside
:func:`run_plot`, and only by the writers that need it.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from gradcli.cli.messages import (
    ExitStatus,
    RuntimeProblem,
    UsageProblem,
    expression_warnings,
    option_words,
    say,
)
from gradcli.errors import render_references
from gradcli.lang import ExpressionWarning


def run_plot(what: str, expression: str, output: str | None, grid: list[str] | None,
             quiet: bool, max_points: int, at: list[str] | None = None,
             **drawing: Any) -> int:
    """Draw ``expression`` sampled on ``grid`` (bare or missing: the default grid) into
    ``output`` (``-`` or None with --preview: the terminal); return the exit status.
    ``at`` holds variables fixed, as beside any other command's --grid."""
    from gradcli.cli.command_request import held_values
    from gradcli.cli.grid_option import resolve_grid
    from gradcli.cli.row_writing import read_parameters
    from gradcli.execute import execute
    from gradcli.plot import parse_options
    from gradcli.plot.options import check_target
    from gradcli.request import Output, Request

    options = parse_options(**drawing)
    options.words = option_words  # the picture's captions name the command line's options
    if output is None and not options.preview:
        raise UsageProblem("plot needs -o FILE (.png .svg .pdf .html .gif .mp4), or "
                           "--preview (or -o -) for a preview in the terminal")
    if output not in (None, "-"):
        try:
            check_target(output)
        except OSError as exc:
            raise RuntimeProblem(_cannot_write(output, exc)) from None
    # matplotlib's own warnings (a glyph missing from the font, a layout it could not
    # fit) would reach stderr as Python tracebacks-in-miniature: gradcli's stderr carries
    # only its own lines. Expression warnings are still shown (the inner filter).
    with warnings.catch_warnings(), expression_warnings(quiet):
        warnings.filterwarnings("ignore")
        warnings.filterwarnings("always", category=ExpressionWarning)
        fixed = held_values(at or [])
        grid_dict = resolve_grid(expression, grid or [], quiet, force_default=not grid,
                                 held=fixed)
        request = Request(expression, what, grid=grid_dict, fixed=fixed,
                          max_points=max_points,
                          parameters=read_parameters(drawing, command=what),
                          output=Output(path=output, quiet=quiet))
        try:
            result = execute(request, stdout=sys.stdout, words=option_words)
        except OSError as exc:
            raise RuntimeProblem(_cannot_write(output or "-", exc)) from None
    if not quiet:
        for note in result.notes:  # parameter references in the command line's words
            say(f"note: {render_references(note, option_words)}")
        if result.nonfinite:
            n = result.nonfinite
            say(f"warning: {n:,} non-finite result value{'s' if n != 1 else ''} (nan or "
                "inf) in the picture: drawn blank, without arrows")
    return ExitStatus.OK


def _cannot_write(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return f"cannot write '{path}': {reason.lower()}{where}"
