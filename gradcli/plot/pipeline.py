"""One plot request end to end: check, sample, draw to the format the output asks for.

``run_plot_request`` is what ``gradcli plot`` calls: everything cheap is checked before any
number is computed (the extension, the directory, the options, the colormap, whether the
html extra or ffmpeg is there, whether a 3-D field can go to the format), then the field is
sampled once and handed to the writer for the format: matplotlib for png/svg/pdf, the page
writer for html, the animation writer for gif/mp4, rich for the preview. Only the writer
that runs is imported, so ``-o field.html`` never loads matplotlib.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError, ref
from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.plot.data import Field, compute_field, flat_error, sampled_names
from gradcli.plot.marks import with_marks
from gradcli.plot.options import PlotOptions, check_target, output_kind
from gradcli.request import Request

__all__ = ["PlotResult", "run_plot_request", "plot_request", "nonfinite_count"]


@dataclass
class PlotResult:
    """What a plot run produced: the field, notes for stderr, non-finite result count."""

    field: Field
    notes: list[str] = field(default_factory=list)
    nonfinite: int = 0


def nonfinite_count(fl: Field) -> int:
    """nan/inf cells among the results the engine computed (not the coordinates)."""
    return sum(int(a.size - np.count_nonzero(np.isfinite(a))) for a in fl.columns.values())


def taylor_request(options: PlotOptions) -> tuple[str, float, int] | None:
    """(variable, point, highest order) of ``taylor`` and ``order``, or None."""
    if options.taylor is None:
        return None
    name, at = options.taylor
    return name, at, max(options.taylor_orders())


def _precheck(grid: Mapping[str, Any], options: PlotOptions, kind: str | None) -> None:
    """Refuse a 3-D field for a flat format before anything is computed."""
    names = sampled_names(grid)
    if options.slice is not None:
        return  # compute_field checks the slice, and a slice is flat
    if len(names) == 3 and kind == "html" and options.animate is not None:
        raise EvaluationError(f"{ref('animate')} with -o *.html draws one or two grid "
                              "variables; a 3-D field's page has no slider: add "
                              f"{ref('slice', text='VAR=VALUE')}")
    flat = kind in ("image", "gif", "mp4") or (options.preview and kind is None)
    if len(names) == 3 and flat:
        stub = Field("", tuple(names), (), {}, "scalar", ())
        raise flat_error(stub)


def run_plot_request(expression: str, grid: Mapping[str, Any], output: str | None,
                     options: PlotOptions, *, max_points: int = DEFAULT_MAX_POINTS,
                     stdout: TextIO | None = None,
                     fixed: Mapping[str, Any] | None = None) -> PlotResult:
    """Draw ``expression`` on ``grid`` into ``output`` (a file, ``-`` for the terminal
    preview, or None with ``options.preview``); return notes and the non-finite count.
    ``fixed`` holds variables at values (numbers, vectors, matrices) for every point."""
    options.check()
    preview = options.preview or output == "-"
    fmt = check_target(output) if output not in (None, "-") else None
    kind = output_kind(fmt, options) if fmt is not None else None
    if fmt is None and not preview:
        raise EvaluationError("plot needs -o FILE (.png .svg .pdf .html .gif .mp4), or "
                              f"{ref('preview')} (or -o -) for a preview in the terminal")
    if options.animate is not None and fmt is None:
        raise EvaluationError(f"{ref('animate')} writes a movie or a page with a slider: "
                              "add -o "
                              "NAME.gif, NAME.mp4 or NAME.html")
    if kind == "html":
        from gradcli.plot.html import plotly_js

        plotly_js()
    if fmt == "mp4":
        from gradcli.plot.animate import check_ffmpeg

        check_ffmpeg()
    if options.cmap is not None:
        from gradcli.plot.figures import check_cmap

        check_cmap(options.cmap)
    if kind in ("image", "gif", "mp4"):  # matplotlib draws the texts: check them first
        from gradcli.plot.figures import check_texts

        check_texts(options)
    _precheck(grid, options, kind)
    if options.taylor is not None and preview:
        raise EvaluationError(f"{ref('taylor')} is drawn in pictures (-o .png .svg .pdf "
                              ".html), not in the terminal preview")
    fl = compute_field(expression, grid, color=options.color, slice_=options.slice,
                       animate=options.animate, taylor=taylor_request(options),
                       max_points=max_points, fixed=fixed, units=options.units, to=options.to)
    options.check(len(fl.names))
    if options.arrows and not options.stream:
        from gradcli.plot.data import check_arrow_units

        check_arrow_units(fl)
    fl = with_marks(fl, options, max_points)
    result = PlotResult(fl, nonfinite=nonfinite_count(fl))
    if fl.marks is not None and kind != "image":  # a picture's notes come with what it drew
        result.notes += fl.marks.notes
    # nan/inf samples (log(x) at x <= 0) are left blank; their count is reported instead
    with quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if kind == "image":
            from gradcli.plot.figures import build_figure
            from gradcli.plot.render import save_figure, stable_rc

            with stable_rc():
                fig, drawn = build_figure(fl, options)
                assert output is not None and fmt is not None
                save_figure(fig, output, fmt, options.dpi, crop=drawn.crop)
            result.notes += drawn.notes
        elif kind == "html":
            from gradcli.plot.html import write_page

            assert output is not None
            result.notes += write_page(fl, options, output)
        elif kind in ("gif", "mp4"):
            from gradcli.plot.animate import write_movie

            assert output is not None
            result.notes += write_movie(fl, options, output, kind)
        if preview:
            from gradcli.plot.terminal import preview as show

            show(fl if fl.frames is None else fl.frame(0), options, stdout or sys.stdout)
    return result


def plot_request(request: Request, *, stdout: TextIO | None = None, words: Any = None,
                 **_: Any) -> PlotResult:
    """``plot`` (``gradcli.execute``): the field on ``grid`` with ``fixed`` held, drawn
    to the request's output path (``-`` or None with ``preview``: the terminal); the
    drawing options are its ``parameters``, by their declared names, as typed
    (``color="magnitude"``, ``size="7x5"``). ``words`` names parameters in a front end's
    words on the picture (the command line's flags)."""
    from gradcli.plot.options import parse_options

    options = parse_options(**dict(request.parameters or {}))
    if words is not None:
        options.words = words
    return run_plot_request(request.expression, dict(request.grid or {}),
                            request.output.path, options, max_points=request.max_points,
                            stdout=stdout, fixed=dict(request.fixed or {}))
