"""Run ``gradcli plot``: check the options, sample the grid, draw, save. No typer here, so
the one-command fast path (``fast.py``) and the typer command share this one body."""

from __future__ import annotations

from typing import Any

from .errors import RuntimeProblem, UsageProblem

#: plot's option defaults (the typer declaration in plot_cmd.py uses the same values)
PLOT_DEFAULTS: dict[str, Any] = {
    "every": None, "derivative": False, "normalize": False, "stream": False, "contour": 0,
    "arrows": "arrows", "color": None, "cmap": None, "title": None, "dpi": 100.0,
    "size": None, "aspect": None, "quiet": False, "max_points": 50_000_000,
}


def run_plot(expression: str, output: str, grid: list[str], *, every: int | None,
             derivative: bool, normalize: bool, stream: bool, contour: int, arrows: str,
             color: str | None, cmap: str | None, title: str | None, dpi: float,
             size: str | None, aspect: str | None, quiet: bool, max_points: int) -> int:
    """Draw ``expression`` sampled on ``grid`` (bare or missing: the default grid) into
    ``output``; return the exit status."""
    if arrows not in ("arrows", "none"):
        raise UsageProblem(f"--arrows must be arrows or none, got '{arrows}'")
    if color is not None and color not in ("magnitude", "divergence", "curl"):
        raise UsageProblem(f"--color must be magnitude, divergence or curl, got '{color}'")
    from ..plot import PlotOptions, check_target, parse_size, plot_expression

    try:
        check_target(output)
    except OSError as exc:
        raise RuntimeProblem(_cannot_write(output, exc)) from None
    options = PlotOptions(every=every, derivative=derivative, normalize=normalize,
                          stream=stream, contour=contour, arrows=arrows == "arrows",
                          color=color, cmap=cmap, title=title, dpi=dpi,
                          size=parse_size(size) if size is not None else None,
                          aspect=aspect)
    options.check()
    from .execute import resolve_grid

    grid_dict = resolve_grid(expression, grid, quiet, force_default=not grid)
    try:
        plot_expression(expression, grid_dict, output, options, max_points=max_points)
    except OSError as exc:
        raise RuntimeProblem(_cannot_write(output, exc)) from None
    return 0


def _cannot_write(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return f"cannot write '{path}': {reason.lower()}{where}"
