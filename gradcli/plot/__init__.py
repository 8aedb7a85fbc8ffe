"""Gradient-field pictures: ``gradcli plot`` and its Python twin ``plot_expression``.

Imported only by the plot command. The numbers come from ``gradcli.evaluate``
(``data.py``); what every backend shares (arrow lattice and robust scaling, colour scales,
curve breaks) is numpy only (``arrows.py``, ``layout.py``, ``colors.py``, ``breaks.py``);
the backends are matplotlib (``figures.py``, saved by ``render.py``, animated by
``animate.py``), the interactive page (``html.py``) and the terminal preview
(``terminal.py``). matplotlib is imported on first use of a name that needs it, so the
page and the preview never load it.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any

from gradcli.engine.grad_mode import quiet
from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.plot.data import Field, compute_field
from gradcli.plot.layout import default_every, lattice
from gradcli.plot.options import (
    OPTION_DEFAULTS,
    PlotOptions,
    check_target,
    image_format,
    parse_options,
    parse_size,
)
from gradcli.plot.pipeline import PlotResult, run_plot_request, taylor_request

__all__ = ["plot_expression", "compute_field", "build_figure", "save_figure", "Field",
           "Drawn", "PlotOptions", "image_format", "parse_size", "lattice", "default_every",
           "check_target", "parse_options", "run_plot_request", "PlotResult",
           "OPTION_DEFAULTS", "Limits"]

# names whose modules import matplotlib: loaded when first asked for
_LAZY = {"build_figure": "figures", "Drawn": "figures", "Limits": "figures",
         "check_cmap": "figures", "save_figure": "render"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plot_expression(expression: str, grid: Mapping[str, Any], path: str | None = None,
                    options: PlotOptions | None = None, *,
                    max_points: int = DEFAULT_MAX_POINTS) -> tuple[Any, Any]:
    """Sample ``expression`` on ``grid``, draw it as a matplotlib Figure and (if ``path``)
    save it as png/svg/pdf. Returns the Figure and what was drawn on it (``Drawn``)."""
    from gradcli.plot.figures import build_figure, check_cmap
    from gradcli.plot.render import save_figure, stable_rc

    opts = options or PlotOptions()
    fmt = check_target(path) if path is not None else None
    opts.check()
    if opts.cmap is not None:
        check_cmap(opts.cmap)
    field_ = compute_field(expression, grid, color=opts.color, slice_=opts.slice,
                           taylor=taylor_request(opts), max_points=max_points,
                           units=opts.units, to=opts.to)
    with stable_rc(), quiet():
        fig, drawn = build_figure(field_, opts)
        if path is not None:
            save_figure(fig, path, fmt, opts.dpi, crop=drawn.crop)
    return fig, drawn


class _PlotPackage(types.ModuleType):
    """``gradcli.plot`` is this package and, called, ``gradcli.plot(expression, grid=...,
    at=..., **options)`` (``picture.plot``): one name for the command's Python twin,
    whichever of the two was imported first (importing a submodule sets the package as
    ``gradcli``'s attribute ``plot``)."""

    def __call__(self, expression: str, grid: Mapping[str, Any] | None = None,
                 at: Mapping[str, Any] | None = None, **options: Any) -> Any:
        from gradcli.plot.picture import plot

        return plot(expression, grid, at, **options)


sys.modules[__name__].__class__ = _PlotPackage
