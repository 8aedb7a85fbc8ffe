"""Run ``gradcli plot``: resolve the grid, hand the options to ``gradcli.plot``, report.
No typer here, so the one-command fast path (``fast.py``) and the typer command share this
one body. What each option means (parsing, checks, defaults) lives in
``gradcli.plot.options``; this only maps failures to exit statuses and prints the notes."""

from __future__ import annotations

import sys
from typing import Any

from ..plot.options import OPTION_DEFAULTS
from .errors import RuntimeProblem, UsageProblem, say

#: plot's option defaults besides the expression, grid and output: the drawing options'
#: own (gradcli.plot.options), quiet and max-points (the typer declaration in plot_cmd.py
#: uses the same values)
PLOT_DEFAULTS: dict[str, Any] = {**OPTION_DEFAULTS, "quiet": False, "max_points": 50_000_000}


def run_plot(expression: str, output: str | None, grid: list[str], *, quiet: bool,
             max_points: int, **drawing: Any) -> int:
    """Draw ``expression`` sampled on ``grid`` (bare or missing: the default grid) into
    ``output``; ``drawing`` are the drawing options as typed. Return the exit status."""
    from ..plot import parse_options, run_plot_request
    from ..plot.options import check_target

    options = parse_options(**drawing)
    if output is None and not options.preview:
        raise UsageProblem("plot needs -o FILE (.png .svg .pdf .html .gif .mp4), or "
                           "--preview (or -o -) for a preview in the terminal")
    if output not in (None, "-"):
        try:
            check_target(output)
        except OSError as exc:
            raise RuntimeProblem(_cannot_write(output, exc)) from None
    from .execute import resolve_grid

    grid_dict = resolve_grid(expression, grid, quiet, force_default=not grid)
    try:
        result = run_plot_request(expression, grid_dict, output, options,
                                  max_points=max_points, stdout=sys.stdout)
    except OSError as exc:
        raise RuntimeProblem(_cannot_write(output or "-", exc)) from None
    if not quiet:
        for note in result.notes:
            say(f"note: {note}")
        if result.nonfinite:
            n = result.nonfinite
            say(f"warning: {n:,} non-finite result value{'s' if n != 1 else ''} (nan or "
                "inf) in the picture: drawn blank, without arrows")
    return 0


def _cannot_write(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return f"cannot write '{path}': {reason.lower()}{where}"
