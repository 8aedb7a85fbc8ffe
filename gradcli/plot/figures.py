"""Build a matplotlib Figure from a sampled Field, with the object API only (no pyplot).

One grid variable: f as a line with tangent arrows (1, f'(x)). Two: a heatmap of f with
gradient arrows or streamlines, or a vector field [u, v] drawn as arrows/streamlines over
its magnitude, divergence or curl. Arrows are in data coordinates (``angles='xy'``,
``scale_units='xy'``) so they are perpendicular to contour lines on equal axes, and scaled
so the longest one fills 0.9 of the spacing between arrows. ``build_figure`` returns what it
drew (``Drawn``) so tests can check the data, not the pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from ..evaluation import EvaluationError
from .data import Field
from .layout import arrow_scale, default_every, lattice, normalized, place
from .options import PlotOptions

__all__ = ["Drawn", "build_figure", "lattice", "default_every", "check_cmap"]

CURVE_SIZE, PLANE_SIZE = (8.0, 4.5), (7.0, 5.4)
CURVE_ARROWS, PLANE_ARROWS = 20, 25  # default arrows along the curve / per axis


@dataclass
class Drawn:
    """The artists a figure holds, and the numbers behind its colors."""

    ax: Any
    lines: list[Any] = field(default_factory=list)
    quiver: Any = None
    stream: Any = None
    image: Any = None
    contour: Any = None
    colorbar: Any = None
    every: int | None = None
    heat: np.ndarray | None = None  # the heatmap's scalar, grid shaped (x on axis 0)


def check_cmap(name: str) -> None:
    """Reject an unknown colormap name with a hint (EvaluationError, exit 2)."""
    if name not in matplotlib.colormaps:
        raise EvaluationError(f"unknown colormap '{name}': try viridis, magma, inferno, "
                              "cividis, RdBu_r or coolwarm")


def _finite(a: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(a), a, np.nan)


def _range(*arrays: np.ndarray) -> tuple[float, float]:
    vals = np.concatenate([np.ravel(a)[np.isfinite(np.ravel(a))] for a in arrays])
    if vals.size == 0:
        raise EvaluationError("nothing to draw: f is nan or inf at every grid point")
    lo, hi = float(vals.min()), float(vals.max())
    return (lo, hi) if hi > lo else (lo - 1.0, hi + 1.0)


def _held(field_: Field) -> str:
    if not field_.held:
        return ""
    return " (" + ", ".join(f"{n} = {v:g}" for n, v in field_.held.items()) + ")"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def build_figure(field_: Field, options: PlotOptions | None = None) -> tuple[Figure, Drawn]:
    """Draw ``field_`` on a new Agg-backed Figure; return it and what was drawn."""
    opts = options or PlotOptions()
    opts.check(len(field_.names))
    if opts.cmap is not None:
        check_cmap(opts.cmap)
    size = opts.size or (CURVE_SIZE if field_.kind == "curve" else PLANE_SIZE)
    fig = Figure(figsize=size, dpi=opts.dpi)
    FigureCanvasAgg(fig)
    if field_.kind == "curve":
        drawn = _draw_curve(fig, field_, opts, size)
    else:
        drawn = _draw_plane(fig, field_, opts, size)
    if opts.title:
        drawn.ax.set_title(opts.title)
    return fig, drawn


def _draw_curve(fig: Figure, fl: Field, opts: PlotOptions, size: tuple[float, float]) -> Drawn:
    name, x = fl.names[0], fl.coords[0]
    f, df = fl.values[0], fl.grad[0]
    lo, hi = _range(f, df) if opts.derivative else _range(f)
    pad = 0.08 * (hi - lo)
    ylim = (lo - pad, hi + pad)
    aspect = opts.aspect or "auto"
    box = place(size, aspect, x[-1] - x[0], ylim[1] - ylim[0], False, bool(opts.title))
    ax = fig.add_axes(box.axes)
    drawn = Drawn(ax)
    expr = _short(fl.expression)
    drawn.lines += ax.plot(x, _finite(f), color="tab:red", lw=1.5, zorder=1,
                           label=f"f({name}) = {expr}{_held(fl)}")
    if opts.derivative:
        drawn.lines += ax.plot(x, _finite(df), color="tab:blue", lw=1.2, ls="--", zorder=1,
                               label=f"f'({name}) = df/d{name}")
        ax.legend(loc="best", fontsize="small")
    if opts.arrows:
        every = opts.every or default_every(len(x), CURVE_ARROWS)
        idx = lattice(len(x), every)
        idx = idx[np.isfinite(f[idx]) & np.isfinite(df[idx])]  # no arrow where f is nan
        ratio = box.ratio(x[-1] - x[0], ylim[1] - ylim[0])
        u, v = np.ones(len(idx)), df[idx].astype(float)
        if opts.normalize:
            u, v = normalized(u, v, ratio)
        scale = arrow_scale(u, v, (x[1] - x[0]) * every, ratio)
        drawn.quiver = ax.quiver(x[idx], f[idx], u, v, angles="xy", scale_units="xy",
                                 scale=scale, pivot="mid", color="k", zorder=3,
                                 width=0.06 / max(20, len(idx)))
        drawn.every = every
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(*ylim)
    ax.set_aspect(aspect)
    ax.set_xlabel(name)
    ax.set_ylabel(f"f({name})")
    return drawn


def _norm(heat: np.ndarray, signed: bool) -> Normalize:
    """Linear colors; for a signed field, symmetric limits so 0 is the map's white middle
    and equal magnitudes of either sign get equally strong colors."""
    lo, hi = _range(heat)
    if signed:
        m = max(abs(lo), abs(hi))
        return Normalize(-m, m)
    return Normalize(lo, hi)


def _contrast(rgba: np.ndarray) -> np.ndarray:
    """Black arrows on light colors, white on dark ones (and black where nothing is)."""
    luminance = rgba[:, :3] @ np.array([0.2126, 0.7152, 0.0722])
    dark = (luminance < 0.4) & (rgba[:, 3] > 0)
    return np.where(dark[:, None], [[1.0, 1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0, 1.0]])


def _heat(fl: Field, color: str | None) -> tuple[np.ndarray | None, str, bool]:
    """The scalar under the arrows, its colorbar label, and whether it is signed."""
    x, y = fl.names
    expr, held = _short(fl.expression), _held(fl)
    if fl.kind == "scalar":
        return fl.values[0], f"f({x}, {y}) = {expr}{held}", False
    if color == "magnitude":
        return fl.magnitude(), f"|F|, F = {expr}{held}", False
    if color == "divergence":
        return fl.divergence(), f"div F = ∂u/∂{x} + ∂v/∂{y}, F = {expr}{held}", True
    if color == "curl":
        return fl.curl(), f"curl F = ∂v/∂{x} − ∂u/∂{y}, F = {expr}{held}", True
    return None, f"|F|, F = {expr}{held}", False


def _draw_plane(fig: Figure, fl: Field, opts: PlotOptions, size: tuple[float, float]) -> Drawn:
    (xn, yn), (x, y) = fl.names, fl.coords
    dx, dy = x[1] - x[0], y[1] - y[0]
    extent = (x[0] - dx / 2, x[-1] + dx / 2, y[0] - dy / 2, y[-1] + dy / 2)
    xr, yr = extent[1] - extent[0], extent[3] - extent[2]
    aspect = opts.aspect or "equal"
    heat, label, signed = _heat(fl, opts.color)
    by_magnitude = heat is None  # a bare vector field: color the arrows themselves
    has_cbar = heat is not None or opts.stream or opts.arrows
    box = place(size, aspect, xr, yr, has_cbar, bool(opts.title))
    ax = fig.add_axes(box.axes)
    cax = fig.add_axes(box.cbar) if box.cbar is not None else None
    drawn = Drawn(ax)
    cmap = opts.cmap or ("RdBu_r" if signed else "viridis")
    label = _short(label, int(box.height / 0.085))  # what fits along the colorbar
    if heat is not None:
        drawn.image = ax.imshow(_finite(heat).T, origin="lower", extent=extent, cmap=cmap,
                                norm=_norm(heat, signed), aspect=aspect, zorder=0)
        drawn.colorbar = fig.colorbar(drawn.image, cax=cax, label=label)
        drawn.heat = heat
    if opts.contour:
        target = heat if heat is not None else fl.magnitude()
        lo, hi = _range(target)
        levels = np.linspace(lo, hi, opts.contour + 2)[1:-1]
        lines = "white" if heat is not None else "0.35"  # light on a heatmap, else gray
        drawn.contour = ax.contour(x, y, _finite(target).T, levels=levels, colors=lines,
                                   linewidths=0.8, alpha=0.85, zorder=1)
        if drawn.colorbar is not None:
            drawn.colorbar.add_lines(drawn.contour)
    u, v = fl.grad if fl.kind == "scalar" else fl.values
    if opts.stream:
        color = fl.magnitude().T if by_magnitude else "k"
        drawn.stream = ax.streamplot(x, y, np.ma.masked_invalid(u.T),
                                     np.ma.masked_invalid(v.T), color=color, cmap=cmap,
                                     density=1.3, linewidth=0.9, arrowsize=1.0, zorder=2)
        if by_magnitude:
            drawn.colorbar = fig.colorbar(drawn.stream.lines, cax=cax, label=label)
    elif opts.arrows:
        every = opts.every or default_every(max(len(x), len(y)), PLANE_ARROWS)
        ix, iy = lattice(len(x), every), lattice(len(y), every)
        px, py = np.meshgrid(x[ix], y[iy], indexing="ij")
        su, sv = u[np.ix_(ix, iy)], v[np.ix_(ix, iy)]
        ratio = box.ratio(xr, yr)
        if opts.normalize:
            su, sv = normalized(su, sv, ratio)
        scale = arrow_scale(su, sv, min(dx * every, dy * every / ratio), ratio)
        common = dict(angles="xy", scale_units="xy", scale=scale, pivot="mid", zorder=3)
        ok = (np.isfinite(su) & np.isfinite(sv)).ravel()  # no arrow where f is nan
        args = [a.ravel()[ok] for a in (px, py, su, sv)]
        if by_magnitude:
            mag = fl.magnitude()[np.ix_(ix, iy)].ravel()[ok]
            drawn.quiver = ax.quiver(*args, mag, cmap=cmap, **common)
            drawn.colorbar = fig.colorbar(drawn.quiver, cax=cax, label=label)
        else:
            under = drawn.image.cmap(drawn.image.norm(heat[np.ix_(ix, iy)].ravel()[ok]))
            drawn.quiver = ax.quiver(*args, color=_contrast(under), **common)
        drawn.every = every
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_aspect(aspect)
    ax.set_xlabel(xn)
    ax.set_ylabel(yn)
    return drawn
