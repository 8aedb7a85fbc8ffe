"""Build a matplotlib Figure from a sampled Field, with the object API only (no pyplot).

One grid variable: f (or each component of a vector) as a line, broken at poles and jumps,
with tangent arrows (1, f'(x)). Two: a heatmap with gradient arrows or streamlines, or a
vector field [u, v] drawn as arrows/streamlines over its magnitude, divergence or curl; a
slice of a 3-D field paints the component across the slice. The base (curve or heatmap)
is drawn first, then each wanted entry of ``OVERLAYS`` in order: that table is the one
place where things drawn on top (arrows, contours, streamlines, later Taylor polynomials,
critical points or paths) are declared. ``build_figure`` returns what it drew (``Drawn``)
so tests can check the data, not the pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, Normalize, SymLogNorm
from matplotlib.figure import Figure

from ..evaluation import EvaluationError
from . import breaks
from .arrows import CURVE_ARROWS, clip_note, fit_plane, plane_lattice
from .colors import ColorScale, Heat, color_scale, heat, heat_name, held_text, short
from .data import Field, flat_error
from .layout import (
    CURVE_PERCENTILE,
    Box,
    choose_aspect,
    clamp_every,
    default_every,
    fit_arrows,
    lattice,
    normalized,
    place,
    y_range,
)
from .marks import wanted as marks_wanted
from .marks import with_marks
from .options import MAX_CONTOUR_LEVELS, PlotOptions, contour_note

__all__ = ["Drawn", "Limits", "build_figure", "check_cmap", "OVERLAYS", "Canvas",
           "plane_box", "CLIPPED"]

CURVE_SIZE, PLANE_SIZE = (8.0, 4.5), (7.0, 5.4)
CLIPPED = "#e6007e"  # clipped arrows: magenta, on no default colormap


@dataclass
class Drawn:
    """The artists a figure holds, the numbers behind them, and notes for stderr."""

    ax: Any
    lines: list[Any] = field(default_factory=list)
    quiver: Any = None
    clipped_quiver: Any = None
    stream: Any = None
    image: Any = None
    contour: Any = None
    colorbar: Any = None
    every: int | None = None
    heat: np.ndarray | None = None  # the heatmap's scalar, grid shaped (x on axis 0)
    colors: ColorScale | None = None
    arrows: Any = None  # the ArrowFit: full length, which arrows were clipped
    caption: Any = None
    caption_text: str | None = None  # says which arrows were clipped, under the axes
    notes: list[str] = field(default_factory=list)  # for stderr


@dataclass
class Limits:
    """Scales fixed from outside (all frames of an animation share them)."""

    colors: ColorScale | None = None
    lengths: np.ndarray | None = None  # displayed arrow lengths over every frame
    ylim: tuple[float, float] | None = None


@dataclass
class Canvas:
    """What an overlay draws with: the figure, the axes, the field and the choices."""

    fig: Figure
    ax: Any
    cax: Any
    field: Field
    opts: PlotOptions
    box: Box
    drawn: Drawn
    limits: Limits
    heat: Heat | None = None
    extent: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 1.0)


def check_cmap(name: str) -> None:
    """Reject an unknown colormap name with a hint (EvaluationError, exit 2)."""
    if name not in matplotlib.colormaps:
        raise EvaluationError(f"unknown colormap '{name}': try viridis, magma, inferno, "
                              "cividis, RdBu_r or coolwarm")


def _finite(a: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(a), a, np.nan)


def mpl_norm(scale: ColorScale) -> Normalize:
    """The matplotlib normalisation for a ColorScale."""
    if scale.kind == "log":
        return LogNorm(scale.vmin, scale.vmax)
    if scale.kind == "symlog":
        return SymLogNorm(scale.linthresh, vmin=scale.vmin, vmax=scale.vmax, base=10)
    return Normalize(scale.vmin, scale.vmax)


def build_figure(field_: Field, options: PlotOptions | None = None,
                 limits: Limits | None = None) -> tuple[Figure, Drawn]:
    """Draw ``field_`` on a new Agg-backed Figure; return it and what was drawn."""
    opts = options or PlotOptions()
    opts.check(len(field_.names))
    if len(field_.names) == 3:
        raise flat_error(field_)
    if field_.marks is None and marks_wanted(opts):
        field_ = with_marks(field_, opts)
    if opts.cmap is not None:
        check_cmap(opts.cmap)
    size = opts.size or (CURVE_SIZE if field_.kind == "curve" else PLANE_SIZE)
    fig = Figure(figsize=size, dpi=opts.dpi)
    FigureCanvasAgg(fig)
    base = "curve" if field_.kind == "curve" else "plane"
    draw = _draw_curve if base == "curve" else _draw_plane
    canvas = draw(fig, field_, opts, size, limits or Limits())
    for overlay in OVERLAYS:
        if overlay.kind in ("any", base) and overlay.wanted(opts):
            overlay.draw(canvas)
    drawn = canvas.drawn
    if opts.title:
        drawn.ax.set_title(opts.title)
    if drawn.caption_text:
        drawn.caption = fig.text(0.01, 0.012, drawn.caption_text, fontsize="small",
                                 color="0.2", ha="left", va="bottom")
    return fig, drawn


def _curve_ylim(fl: Field, opts: PlotOptions, limits: Limits) -> tuple[tuple[float, float],
                                                                        str | None]:
    if limits.ylim is not None:
        return limits.ylim, None
    return y_range([*fl.values, *(fl.grad if opts.derivative else ())], opts.ylim, opts.log)


def _draw_curve(fig: Figure, fl: Field, opts: PlotOptions, size: tuple[float, float],
                limits: Limits) -> Canvas:
    name, x = fl.names[0], fl.coords[0]
    ylim, note = _curve_ylim(fl, opts, limits)
    aspect = opts.aspect or "auto"
    spans = (x[-1] - x[0], ylim[1] - ylim[0])
    box = place(size, aspect, *spans, False, bool(opts.title))
    if opts.arrows and not opts.log and _tangent_fit(fl, opts, box, ylim)[1].clipped.any():
        box = place(size, aspect, *spans, False, bool(opts.title), caption=True)
    ax = fig.add_axes(box.axes)
    drawn = Drawn(ax, notes=[note] if note else [])
    many = len(fl.values) > 1
    for i, (f, label) in enumerate(zip(fl.values, fl.labels, strict=True)):
        xs, fs = breaks.broken_line(x, f, breaks.curve_breaks(fl, i))
        color = f"C{i}" if many else "tab:red"
        text = f"f[{i}]({name}) = {short(label, 40)}" if many else \
            f"f({name}) = {short(label)}{held_text(fl)}"
        drawn.lines += ax.plot(xs, fs, color=color, lw=1.5, zorder=2, label=text)
    if opts.log:
        scale = color_scale(list(fl.values), False, log=True)
        if scale.kind == "log":
            ax.set_yscale("log")
        else:
            ax.set_yscale("symlog", linthresh=scale.linthresh)
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(*ylim)
    ax.set_aspect(aspect)
    ax.set_xlabel(name)
    ax.set_ylabel(f"f({name}) = {short(fl.expression, 50)}{held_text(fl)}")
    return Canvas(fig, ax, None, fl, opts, box, drawn, limits)


def _derivative(c: Canvas) -> None:
    fl, name, many = c.field, c.field.names[0], len(c.field.values) > 1
    x = fl.coords[0]
    for i, df in enumerate(fl.grad):
        label = f"f[{i}]'({name}) = df[{i}]/d{name}" if many else f"f'({name}) = df/d{name}"
        xs, ds = breaks.broken_line(x, df, breaks.curve_breaks(fl, i))
        c.drawn.lines += c.ax.plot(xs, ds, color=f"C{i}" if many else "tab:blue", lw=1.2,
                                   ls="--", zorder=2, label=label)


def _tangent_fit(fl: Field, opts: PlotOptions, box: Box, ylim: tuple[float, float]
                 ) -> tuple[tuple[np.ndarray, np.ndarray], Any, int, str | None]:
    """Tangent arrow positions and their fit, every, and the --every note."""
    x = fl.coords[0]
    every, note = clamp_every(opts.every or default_every(len(x), CURVE_ARROWS), (len(x),))
    idx = lattice(len(x), every)
    lo, hi = ylim
    ratio = box.ratio(x[-1] - x[0], hi - lo)
    px, py, u, v = [], [], [], []
    for f, df in zip(fl.values, fl.grad, strict=True):
        keep = idx[np.isfinite(f[idx]) & np.isfinite(df[idx]) & (f[idx] >= lo) & (f[idx] <= hi)]
        px.append(x[keep])
        py.append(f[keep])
        u.append(np.ones(len(keep)))
        v.append(df[keep].astype(float))
    px, py, u, v = (np.concatenate(a) for a in (px, py, u, v))
    if opts.normalize:
        u, v = normalized(u, v, ratio)
    fit = fit_arrows(u, v, (x[1] - x[0]) * every, ratio,
                     None if opts.normalize else opts.scale, percentile=CURVE_PERCENTILE)
    return (px, py), fit, every, note


def _tangents(c: Canvas) -> None:
    """Tangent arrows (1, f'(x)) on top of the curve: black with a white halo, so they
    show on the line; clipped ones (near poles) in magenta."""
    fl, opts, ax = c.field, c.opts, c.ax
    if opts.log:
        c.drawn.notes.append("no tangent arrows on a --log axis (they are straight "
                             "only on linear axes)")
        return
    (px, py), fit, every, note = _tangent_fit(fl, opts, c.box, ax.get_ylim())
    if note:
        c.drawn.notes.append(note)
    style = dict(angles="xy", scale_units="xy", scale=fit.quiver_scale, pivot="mid",
                 zorder=4, width=0.0035, edgecolor="white", linewidth=0.6)
    plain = ~fit.clipped
    c.drawn.quiver = ax.quiver(px[plain], py[plain], fit.u[plain], fit.v[plain], color="k",
                               **style)
    if fit.clipped.any():
        c.drawn.clipped_quiver = ax.quiver(px[fit.clipped], py[fit.clipped],
                                           fit.u[fit.clipped], fit.v[fit.clipped],
                                           color=CLIPPED, **style)
        c.drawn.caption_text = clip_note(fit, "slope")
    c.drawn.arrows = fit
    c.drawn.every = every


def _taylor(c: Canvas) -> None:
    """The Taylor polynomials at the --taylor point, dashed, over f; the y-range stays f's
    (their blow-up away from the point is cut at the axes), and the point is marked."""
    fl, name = c.field, c.field.names[0]
    assert fl.taylor is not None
    at, coefficients = fl.taylor
    for i, order in enumerate(c.opts.taylor_orders()):
        c.drawn.lines += c.ax.plot(fl.coords[0], fl.polynomial(order), color=f"C{i}",
                                   lw=1.3, ls="--", zorder=3,
                                   label=f"Taylor polynomial of order {order} at "
                                   f"{name} = {at:g}")
    c.ax.plot([at], [coefficients[0]], "o", color="k", ms=5, zorder=5)


def _legend(c: Canvas) -> None:
    if len(c.drawn.lines) > 1:  # one curve is named by the y label
        c.ax.legend(loc="best", fontsize="small")


def plane_box(fl: Field, opts: PlotOptions, size: tuple[float, float],
              caption: bool = False) -> tuple[Box, str, tuple[float, ...], str | None]:
    """The axes layout of a plane: box, aspect, extent and the aspect note."""
    (x, y) = fl.coords[:2]
    dx, dy = x[1] - x[0], y[1] - y[0]
    extent = (x[0] - dx / 2, x[-1] + dx / 2, y[0] - dy / 2, y[-1] + dy / 2)
    xr, yr = extent[1] - extent[0], extent[3] - extent[2]
    aspect, note = choose_aspect(fl.names, (abs(x[-1] - x[0]), abs(y[-1] - y[0])),
                                 opts.aspect)
    has_cbar = heat_name(fl, opts.color) is not None or opts.stream or opts.arrows
    box = place(size, aspect, xr, yr, has_cbar, bool(opts.title), caption)
    return box, aspect, extent, note


def _draw_plane(fig: Figure, fl: Field, opts: PlotOptions, size: tuple[float, float],
                limits: Limits) -> Canvas:
    box, aspect, extent, note = plane_box(fl, opts, size)
    if opts.arrows and not opts.stream and not opts.normalize:
        lat = plane_lattice(fl, opts)
        fit = fit_plane(fl, opts, lat, box.ratio(extent[1] - extent[0],
                                                 extent[3] - extent[2]), limits.lengths).fit
        if fit.clipped.any():  # room for the caption that says so
            box = plane_box(fl, opts, size, caption=True)[0]
    ax = fig.add_axes(box.axes)
    cax = fig.add_axes(box.cbar) if box.cbar is not None else None
    drawn = Drawn(ax, notes=[note] if note else [])
    hm = heat(fl, heat_name(fl, opts.color))
    c = Canvas(fig, ax, cax, fl, opts, box, drawn, limits, hm, extent)
    if hm is not None:
        scale = limits.colors or color_scale([hm.values], hm.signed, log=opts.log,
                                             vmin=opts.vmin, vmax=opts.vmax, cmap=opts.cmap)
        label = short(hm.label, int(box.height / 0.085))  # what fits along the colorbar
        drawn.image = ax.imshow(_finite(hm.values).T, origin="lower", extent=extent,
                                cmap=scale.cmap, norm=mpl_norm(scale), aspect=aspect,
                                zorder=0, interpolation="nearest")
        drawn.colorbar = fig.colorbar(drawn.image, cax=cax, label=label)
        drawn.heat, drawn.colors = hm.values, scale
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_aspect(aspect)
    ax.set_xlabel(fl.names[0])
    ax.set_ylabel(fl.names[1])
    return c


def _bare_label(fl: Field) -> str:
    return f"|F|, F = {short(fl.expression)}{held_text(fl)}"


def _contour(c: Canvas) -> None:
    fl, hm = c.field, c.heat
    if hm is not None and hm.name == "basins":  # the basins are labels: contour f itself
        target = fl.values[0]
    else:
        target = hm.values if hm is not None else fl.magnitude()
    vals = target[np.isfinite(target)]
    if vals.size == 0 or vals.min() == vals.max():
        return
    count = min(c.opts.contour, MAX_CONTOUR_LEVELS)
    if count < c.opts.contour:
        c.drawn.notes.append(contour_note(c.opts.contour))
    levels = np.linspace(vals.min(), vals.max(), count + 2)[1:-1]
    lines = "white" if hm is not None else "0.35"  # light on a heatmap, else gray
    (x, y) = fl.coords[:2]
    c.drawn.contour = c.ax.contour(x, y, _finite(target).T, levels=levels, colors=lines,
                                   linewidths=0.8, alpha=0.85, zorder=1)
    if c.drawn.colorbar is not None:
        c.drawn.colorbar.add_lines(c.drawn.contour)


def _stream(c: Canvas) -> None:
    fl, opts = c.field, c.opts
    (x, y), (u, v) = fl.coords[:2], fl.arrows()[:2]
    by_magnitude = c.heat is None
    color = fl.magnitude().T if by_magnitude else "k"
    cmap = opts.cmap or "viridis"
    c.drawn.stream = c.ax.streamplot(x, y, np.ma.masked_invalid(u.T),
                                     np.ma.masked_invalid(v.T), color=color, cmap=cmap,
                                     density=1.3, linewidth=0.9, arrowsize=1.0, zorder=2)
    if by_magnitude:
        c.drawn.colorbar = c.fig.colorbar(c.drawn.stream.lines, cax=c.cax,
                                          label=short(_bare_label(fl), int(c.box.height / 0.085)))


def _contrast(rgba: np.ndarray) -> np.ndarray:
    """Black arrows on light colors, white on dark ones (and black where nothing is)."""
    luminance = rgba[:, :3] @ np.array([0.2126, 0.7152, 0.0722])
    dark = (luminance < 0.4) & (rgba[:, 3] > 0)
    return np.where(dark[:, None], [[1.0, 1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0, 1.0]])


def _plane_arrows(c: Canvas) -> None:
    fl, opts, drawn = c.field, c.opts, c.drawn
    lat = plane_lattice(fl, opts)
    if lat.note:
        drawn.notes.append(lat.note)
    ext = c.extent
    arrows = fit_plane(fl, opts, lat, c.box.ratio(ext[1] - ext[0], ext[3] - ext[2]),
                       c.limits.lengths)
    px, py, fit = arrows.x, arrows.y, arrows.fit
    common = dict(angles="xy", scale_units="xy", scale=fit.quiver_scale, pivot="mid",
                  zorder=3)
    plain, cut = ~fit.clipped, fit.clipped
    if c.heat is None:  # a bare vector field: color the arrows by magnitude
        mag = np.hypot(*(lat.take(a) for a in fl.arrows()[:2])).ravel()[arrows.ok]
        drawn.quiver = c.ax.quiver(px[plain], py[plain], fit.u[plain], fit.v[plain],
                                   mag[plain], cmap=opts.cmap or "viridis",
                                   clim=(float(mag.min()), float(mag.max())) if mag.size
                                   else None, **common)
        drawn.colorbar = c.fig.colorbar(drawn.quiver, cax=c.cax,
                                        label=short(_bare_label(fl),
                                                    int(c.box.height / 0.085)))
    else:
        under = drawn.image.cmap(drawn.image.norm(lat.take(c.heat.values).ravel()[arrows.ok]))
        drawn.quiver = c.ax.quiver(px[plain], py[plain], fit.u[plain], fit.v[plain],
                                   color=_contrast(under[plain]), **common)
    if cut.any():
        drawn.clipped_quiver = c.ax.quiver(px[cut], py[cut], fit.u[cut], fit.v[cut],
                                           color=CLIPPED, edgecolor="white", linewidth=0.5,
                                           **common)
        what = "|∇f|" if fl.kind == "scalar" else "|F|"
        drawn.caption_text = clip_note(fit, what)
    drawn.arrows = fit
    drawn.every = lat.every


@dataclass(frozen=True)
class Overlay:
    """Something drawn over the base picture: for which plots (``curve``, ``plane`` or
    ``any``), when the options want it, and how."""

    name: str
    kind: str
    wanted: Callable[[PlotOptions], bool]
    draw: Callable[[Canvas], None]


def _marks(name: str) -> Callable[[Canvas], None]:
    """An overlay of marks_draw.py, imported when first drawn."""
    def draw(c: Canvas) -> None:
        from . import marks_draw

        getattr(marks_draw, name)(c)

    return draw


#: drawn in this order, each over the ones before (basins first: they recolour the heatmap
#: that the arrows take their contrast from)
OVERLAYS: list[Overlay] = [
    Overlay("basins", "plane", lambda o: o.basins, _marks("draw_basins")),
    Overlay("contour", "plane", lambda o: o.contour > 0, _contour),
    Overlay("stream", "plane", lambda o: o.stream, _stream),
    Overlay("arrows", "plane", lambda o: o.arrows and not o.stream, _plane_arrows),
    Overlay("derivative", "curve", lambda o: o.derivative, _derivative),
    Overlay("tangents", "curve", lambda o: o.arrows, _tangents),
    Overlay("taylor", "curve", lambda o: o.taylor is not None, _taylor),
    Overlay("legend", "curve", lambda o: True, _legend),
    Overlay("flows", "plane", lambda o: bool(o.flow_from), _marks("draw_flows")),
    Overlay("paths", "any", lambda o: bool(o.path_from), _marks("draw_paths")),
    Overlay("critical", "any", lambda o: o.mark_critical, _marks("draw_critical")),
    Overlay("marks legend", "any", marks_wanted, _marks("draw_legend")),
]
