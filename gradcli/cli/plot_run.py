"""Run ``gradcli plot``: check the options, sample the grid, draw, save.

Every drawing option declared in ``declare.PLOT_DRAWING`` arrives here by name and goes
on to :class:`gradcli.plot.PlotOptions` under the same name, so a new one needs its
declaration and its field there, nothing here. matplotlib (through ``gradcli.plot``) is
imported only inside :func:`run_plot`.
"""

from __future__ import annotations

from typing import Any

from .errors import ExitStatus, RuntimeProblem, expression_warnings


def run_plot(what: str, expression: str, output: str, grid: list[str] | None, quiet: bool,
             max_points: int, **drawing: Any) -> int:
    """Draw ``expression`` sampled on ``grid`` (bare or missing: the default grid) into
    ``output``; return the exit status."""
    from ..plot import PlotOptions, check_target, parse_size, plot_expression
    from .specs import resolve_grid

    try:
        check_target(output)
    except OSError as exc:
        raise RuntimeProblem(_cannot_write(output, exc)) from None
    drawing["arrows"] = drawing["arrows"] == "arrows"
    if drawing["size"] is not None:
        drawing["size"] = parse_size(drawing["size"])
    options = PlotOptions(**drawing)
    options.check()
    with expression_warnings(quiet):
        grid_dict = resolve_grid(expression, grid or [], quiet, force_default=not grid)
        try:
            plot_expression(expression, grid_dict, output, options, max_points=max_points)
        except OSError as exc:
            raise RuntimeProblem(_cannot_write(output, exc)) from None
    return ExitStatus.OK


def _cannot_write(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return f"cannot write '{path}': {reason.lower()}{where}"
