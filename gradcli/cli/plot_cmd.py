"""``gradcli plot``: the typer declaration of its options; ``plot_run`` does the work.

Kept thin and import-light: matplotlib (through ``gradcli.plot``) is imported inside the
command body only, so ``gradcli --help`` and the other commands never pay for it. The
defaults here must match ``plot_run.PLOT_DEFAULTS`` (a test checks they do); what each
option means is in ``gradcli.plot.options``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .options import Expr, Grid, MaxPoints, Quiet

Output = Annotated[str | None, typer.Option(
    "--output", "-o", metavar="FILE", show_default=False,
    help="The picture; its extension picks the format: .png .svg .pdf, .html (interactive, "
    "needs gradcli[html]), .gif .mp4 (with --animate); - previews in the terminal.")]


def plot(expression: Expr, output: Output = None, grid: Grid = None,
         every: Annotated[int | None, typer.Option(
             "--every", help="An arrow at every r-th grid point (default: about 20 along "
             "a curve, 25 per axis); clamped to at least 2 arrows per axis.",
             show_default=False)] = None,
         derivative: Annotated[bool, typer.Option(
             "--derivative", help="One variable: also draw f' (per component).")] = False,
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
             "--cmap", help="Colormap (default viridis; RdBu_r centred at 0 for divergence, "
             "curl and slices).", show_default=False)] = None,
         title: Annotated[str | None, typer.Option(
             "--title", help="Title above the plot.", show_default=False)] = None,
         dpi: Annotated[float, typer.Option("--dpi", help="Pixels per inch.")] = 100.0,
         size: Annotated[str | None, typer.Option(
             "--size", help="WIDTHxHEIGHT in inches (default 8x4.5 for a curve, 7x5.4 for "
             "a field).", show_default=False)] = None,
         aspect: Annotated[str | None, typer.Option(
             "--aspect", help="equal | auto (default: equal for two variables, auto when "
             "their ranges differ more than 10x).", show_default=False)] = None,
         scale: Annotated[float | None, typer.Option(
             "--scale", metavar="S", help="The magnitude drawn at full arrow length; longer "
             "arrows are clipped and drawn magenta (default: the 95th percentile, or the "
             "longest when no arrow is over twice that). E.g. --scale 2.",
             show_default=False)] = None,
         log: Annotated[bool, typer.Option(
             "--log", help="Logarithmic colours (a curve: y axis); symlog when the values "
             "are not all positive.")] = False,
         vmin: Annotated[float | None, typer.Option(
             "--vmin", help="Bottom of the colour scale, e.g. --vmin -1.",
             show_default=False)] = None,
         vmax: Annotated[float | None, typer.Option(
             "--vmax", help="Top of the colour scale, e.g. --vmax 1.",
             show_default=False)] = None,
         ylim: Annotated[str | None, typer.Option(
             "--ylim", metavar="LOW:HIGH", help="One variable: the y-range, e.g. --ylim "
             "-5:5 (default: the data's, from percentiles near poles).",
             show_default=False)] = None,
         slice: Annotated[str | None, typer.Option(
             "--slice", metavar="VAR=VALUE", help="A 3-D field: draw the plane VAR=VALUE, "
             "the component across it as colour, e.g. --slice z=0.",
             show_default=False)] = None,
         animate: Annotated[str | None, typer.Option(
             "--animate", metavar="VAR=START:STOP:FRAMES", help="Animate over VAR with a "
             "fixed colour scale, to -o NAME.gif or NAME.mp4, e.g. --animate t=0:2pi:48.",
             show_default=False)] = None,
         fps: Annotated[float, typer.Option(
             "--fps", help="Frames per second of an --animate movie.")] = 12.0,
         preview: Annotated[bool, typer.Option(
             "--preview", help="Also draw the picture in the terminal (colours and arrow "
             "glyphs; honours NO_COLOR).")] = False,
         quiet: Quiet = False, max_points: MaxPoints = 50_000_000) -> int:
    """A picture of the formula and its gradient: curves with tangent arrows (one
    variable), a heatmap with gradient arrows or streamlines (two), a slice or interactive
    cones (three), an animation, or a terminal preview."""
    from .plot_run import run_plot

    return run_plot(expression, output, list(grid or []), every=every,
                    derivative=derivative, normalize=normalize, stream=stream,
                    contour=contour, arrows=arrows, color=color, cmap=cmap, title=title,
                    dpi=dpi, size=size, aspect=aspect, scale=scale, log=log, vmin=vmin,
                    vmax=vmax, ylim=ylim, slice=slice, animate=animate, fps=fps,
                    preview=preview, quiet=quiet, max_points=max_points)
