"""Gradient-field pictures: ``gradcli plot`` and its Python twin ``plot_expression``.

Imported only by the plot command (it pulls in matplotlib, Agg backend, no pyplot). The
numbers come from ``gradcli.evaluate`` (``data.py``), the Figure is built from arrays
(``figures.py``) and saved reproducibly and atomically (``render.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from ..engine.grad_mode import quiet
from .data import Field, compute_field
from .figures import Drawn, build_figure, check_cmap, default_every, lattice
from .options import PlotOptions, image_format, parse_size
from .render import check_target, save_figure, stable_rc

__all__ = ["plot_expression", "compute_field", "build_figure", "save_figure", "Field",
           "Drawn", "PlotOptions", "image_format", "parse_size", "lattice", "default_every",
           "check_target"]


def plot_expression(expression: str, grid: Mapping[str, Any], path: str | None = None,
                    options: PlotOptions | None = None, *,
                    max_points: int = 50_000_000) -> tuple[Any, Drawn]:
    """Sample ``expression`` on ``grid``, draw it and (if ``path``) save it.

    Checks everything cheap first (extension, directory, options, colormap) so a bad
    request fails before any work. Returns the Figure and what was drawn on it.
    """
    opts = options or PlotOptions()
    fmt = check_target(path) if path is not None else None
    opts.check()
    if opts.cmap is not None:
        check_cmap(opts.cmap)
    field_ = compute_field(expression, grid, color=opts.color, max_points=max_points)
    # nan/inf samples (log(x) at x <= 0) are left blank, not reported as warnings
    with stable_rc(), quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fig, drawn = build_figure(field_, opts)
        if path is not None:
            save_figure(fig, path, fmt, opts.dpi)
    return fig, drawn
