"""``gradcli plot``: the typer declaration of its options; ``plot_run`` does the work.

Kept thin and import-light: matplotlib (through ``gradcli.plot``) is imported inside the
command body only, so ``gradcli --help`` and the other commands never pay for it. The
defaults here must match ``plot_run.PLOT_DEFAULTS`` (a test checks they do).
"""

from __future__ import annotations

from typing import Annotated

import typer

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
    from .plot_run import run_plot

    return run_plot(expression, output, list(grid or []), every=every, derivative=derivative,
                    normalize=normalize, stream=stream, contour=contour, arrows=arrows,
                    color=color, cmap=cmap, title=title, dpi=dpi, size=size, aspect=aspect,
                    quiet=quiet, max_points=max_points)


