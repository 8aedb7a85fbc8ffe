"""``gradcli plot``: options in, ``gradcli.plot`` draws, a png/svg/pdf out.

Kept thin and import-light: matplotlib (through ``gradcli.plot``) is imported inside the
command body only, so ``gradcli --help`` and the other commands never pay for it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .errors import RuntimeProblem, UsageProblem
from .options import Expr, Grid, MaxPoints, Quiet

Output = Annotated[str, typer.Option(
    "--output", "-o", metavar="FILE", show_default=False,
    help="The picture; its extension picks the format: .png .svg .pdf.")]


def plot(expression: Expr, output: Output, grid: Grid = None,
         every: Annotated[int | None, typer.Option(
             "--every", help="An arrow at every r-th grid point (default: about 20 along "
             "a curve, 25 per axis).", show_default=False)] = None,
         derivative: Annotated[bool, typer.Option(
             "--derivative", help="One variable: also draw f' as a second line.")] = False,
         normalize: Annotated[bool, typer.Option(
             "--normalize", help="Unit arrows: direction only.")] = False,
         stream: Annotated[bool, typer.Option(
             "--stream", help="Streamlines instead of arrows.")] = False,
         contour: Annotated[int, typer.Option(
             "--contour", help="Overlay N contour lines of the heatmap.")] = 0,
         arrows: Annotated[str, typer.Option(
             "--arrows", help="arrows | none.")] = "arrows",
         color: Annotated[str | None, typer.Option(
             "--color", help="Vector fields: magnitude | divergence | curl as the heatmap "
             "(from the engine's Jacobian).", show_default=False)] = None,
         cmap: Annotated[str | None, typer.Option(
             "--cmap", help="Colormap (default viridis; RdBu_r centred at 0 for divergence "
             "and curl).", show_default=False)] = None,
         title: Annotated[str | None, typer.Option(
             "--title", help="Title above the plot.", show_default=False)] = None,
         dpi: Annotated[float, typer.Option("--dpi", help="Pixels per inch.")] = 100.0,
         size: Annotated[str | None, typer.Option(
             "--size", help="WIDTHxHEIGHT in inches (default 8x4.5 for a curve, 7x5.4 for "
             "a field).", show_default=False)] = None,
         aspect: Annotated[str | None, typer.Option(
             "--aspect", help="equal | auto (default: equal for two variables).",
             show_default=False)] = None,
         quiet: Quiet = False, max_points: MaxPoints = 50_000_000) -> int:
    """A picture of the formula and its gradient: a curve with tangent arrows (one
    variable), a heatmap with gradient arrows or streamlines (two), or a vector field."""
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

    grid_dict = resolve_grid(expression, list(grid or []), quiet, force_default=not grid)
    try:
        plot_expression(expression, grid_dict, output, options, max_points=max_points)
    except OSError as exc:
        raise RuntimeProblem(_cannot_write(output, exc)) from None
    return 0


def _cannot_write(path: str, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return f"cannot write '{path}': {reason.lower()}{where}"
