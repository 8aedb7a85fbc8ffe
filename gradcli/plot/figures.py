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

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, Normalize, SymLogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator

from gradcli.errors import EvaluationError, ref
from gradcli.plot import breaks
from gradcli.plot.arrows import CURVE_ARROWS, clip_note, fit_plane, plane_lattice
from gradcli.plot.colors import (
    SMOOTH_LINSCALE,
    ColorScale,
    Heat,
    color_scale,
    curve_linthresh,
    heat,
    heat_name,
    held_text,
    short,
)
from gradcli.plot.data import Field, flat_error
from gradcli.plot.layout import (
    BOTTOM,
    CAPTION,
    CBAR_LABELS,
    CBAR_PAD,
    CBAR_WIDTH,
    CURVE_PERCENTILE,
    LEFT,
    RIGHT,
    TOP,
    TOP_TITLE,
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
from gradcli.plot.marks import wanted as marks_wanted
from gradcli.plot.marks import with_marks
from gradcli.plot.marks_draw import (
    draw_basins,
    draw_critical,
    draw_flows,
    draw_legend,
    draw_paths,
    draw_traced,
)
from gradcli.plot.options import MAX_CONTOUR_LEVELS, PlotOptions, contour_note, typed
from gradcli.plot.traced import given

__all__ = ["Drawn", "Limits", "build_figure", "check_cmap", "check_texts", "OVERLAYS",
           "Canvas", "plane_box", "CLIPPED"]

CURVE_SIZE, PLANE_SIZE = (8.0, 4.5), (7.0, 5.4)
#: a plane without size: its axes take about this many square inches in the data's own
#: shape (equal aspect), at most MAX_AXES inches wide and high, so the figure follows the
#: data instead of framing a strip in a blank canvas
PLANE_AREA, MAX_AXES, AUTO_AXES = 22.0, (10.0, 7.0), (5.6, 4.2)
LABEL_INCH = 0.085  # inches per character of a label at the default font size
LEGEND_PAD = 0.08  # inches between the legend below the axes and what is above it
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
    legend: Any = None  # the legend (inside the axes, or the figure's below them)
    crop: bool = False  # saved cropped to its content (no size: the figure is the data's)
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
    full_label: str | None = None  # a label cut to fit: the title shows it whole


def check_cmap(name: str) -> None:
    """Reject an unknown colormap name with a hint (EvaluationError, exit 2)."""
    if name not in matplotlib.colormaps:
        raise EvaluationError(f"unknown colormap '{name}': try viridis, magma, inferno, "
                              "cividis, RdBu_r or coolwarm")


#: the options whose text matplotlib draws, and so reads as mathtext between $ signs
TEXTS = ("title", "xlabel", "ylabel", "colorbar_label")


def check_texts(opts: PlotOptions) -> None:
    """Reject a title or label whose $...$ is not valid mathtext (matplotlib would fail
    while saving) with a one-line EvaluationError; ``\\$`` is a literal dollar sign."""
    from matplotlib.cbook import is_math_text
    from matplotlib.mathtext import MathTextParser

    for name in TEXTS:
        text = getattr(opts, name)
        if text is None or not is_math_text(text):
            continue
        try:
            MathTextParser("path").parse(text)
        except ValueError as exc:
            reason = str(exc).strip().splitlines()[-1].split(" (at char")[0].strip()
            raise EvaluationError(f"{ref(name, text=typed(text))}: the text between $ signs "
                                  f"is not valid mathtext ({reason}); write \\$ for a dollar "
                                  "sign") from None


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
    check_texts(opts)
    size = opts.size or (CURVE_SIZE if field_.kind == "curve" else plane_size(field_, opts))
    fig = Figure(figsize=size, dpi=opts.dpi)
    FigureCanvasAgg(fig)
    base = "curve" if field_.kind == "curve" else "plane"
    draw = _draw_curve if base == "curve" else _draw_plane
    canvas = draw(fig, field_, opts, size, limits or Limits())
    for overlay in OVERLAYS:
        if overlay.kind in ("any", base) and overlay.wanted(opts):
            overlay.draw(canvas)
    drawn = canvas.drawn
    # cropped to its content, unless size asked for an exact canvas
    drawn.crop = opts.size is None
    title = opts.title or canvas.full_label
    if title:
        drawn.ax.set_title(_wrap(title, canvas.box.width))
    put_legend(canvas)
    if drawn.caption_text:
        drawn.caption = fig.text(0.01, 0.054 / fig.get_figheight(), drawn.caption_text,
                                 fontsize="small", color="0.2", ha="left", va="bottom")
    return fig, drawn


def _wrap(text: str, width: float) -> str:
    """``text`` in lines that fit ``width`` inches (a title never runs off the figure)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(20, int(width / LABEL_INCH)),
                                   break_long_words=True)) or text


def plane_size(fl: Field, opts: PlotOptions, caption: bool = False) -> tuple[float, float]:
    """The figure size of a plane drawn without size: axes of PLANE_AREA square inches in
    the data's shape (equal aspect; AUTO_AXES on auto aspect), within MAX_AXES, plus the
    margins, the colour bar and a title or caption line."""
    (x, y) = fl.coords[:2]
    xr = abs(x[-1] - x[0]) * len(x) / max(len(x) - 1, 1)  # the extent: half a cell each side
    yr = abs(y[-1] - y[0]) * len(y) / max(len(y) - 1, 1)
    aspect, _ = choose_aspect(fl.names, (abs(x[-1] - x[0]), abs(y[-1] - y[0])), opts.aspect)
    if aspect == "equal" and xr > 0 and yr > 0:
        shape = yr / xr
        w = min(MAX_AXES[0], (PLANE_AREA / shape) ** 0.5)
        h = w * shape
        if h > MAX_AXES[1]:
            h = MAX_AXES[1]
            w = h / shape
    else:
        w, h = AUTO_AXES
    has_cbar = heat_name(fl, opts.color) is not None or opts.stream or opts.arrows
    extra = CBAR_PAD + CBAR_WIDTH + CBAR_LABELS if has_cbar else 0.0
    cut = _label_cut(fl, opts, h)
    title = opts.title or (_colorbar_text(fl, opts) if cut else None)
    lines = _wrap(title, w).count("\n") + 1 if title else 0
    top = TOP_TITLE + (lines - 1) * 0.2 if lines else TOP
    return (w + LEFT + RIGHT + extra, h + BOTTOM + top + (CAPTION if caption else 0.0))


def _colorbar_text(fl: Field, opts: PlotOptions) -> str | None:
    if opts.colorbar_label is not None:
        return opts.colorbar_label
    hm_name = heat_name(fl, opts.color)
    if hm_name is not None:
        hm = heat(fl, hm_name, full=True)
        return hm.label if hm is not None else None
    if opts.stream or opts.arrows:
        return _bare_label(fl, full=True)
    return None


def _label_cut(fl: Field, opts: PlotOptions, height: float) -> bool:
    text = _colorbar_text(fl, opts)
    return text is not None and len(text) > int(height / LABEL_INCH)


def put_legend(c: Canvas) -> float:
    """Place the legend of everything labelled (legend): ``auto`` puts a curve's on its
    emptiest spot (matplotlib's "best") and a plane's below the axes, since a heatmap
    has no empty spot; ``outside`` puts it below the axes, growing the figure by its
    height; ``none`` draws none. Returns the inches added below."""
    handles, labels = c.ax.get_legend_handles_labels()
    if c.opts.legend == "none" or not handles:
        return 0.0
    if c.field.kind == "curve" and len(handles) < 2 and c.field.marks is None:
        return 0.0  # one curve is named by the y label
    inside = c.opts.legend == "auto" and c.field.kind == "curve"
    if inside:
        c.drawn.legend = c.ax.legend(loc="best", fontsize="small", framealpha=0.85)
        return 0.0
    fig = c.fig
    renderer = fig.canvas.get_renderer()
    fw, fh = fig.get_figwidth(), fig.get_figheight()
    legend = None
    for ncol in range(len(handles), 0, -1):  # as many columns as fit the figure's width
        if legend is not None:
            legend.remove()
        legend = fig.legend(handles, labels, loc="upper center", ncol=ncol,
                            fontsize="small", frameon=False, borderaxespad=0.0)
        if legend.get_window_extent(renderer).width / fig.dpi <= fw - 0.1:
            break
    assert legend is not None
    c.drawn.legend = legend
    need = legend.get_window_extent(renderer).height / fig.dpi + LEGEND_PAD
    # the x axis's lowest text (tick labels, label) in inches; the caption keeps its line
    label_bottom = c.ax.get_tightbbox(renderer).y0 / fig.dpi
    room = label_bottom - (CAPTION if c.drawn.caption_text else 0.0)
    grow = max(0.0, need - room)
    if grow > 0:
        positions = [(a, a.get_position().bounds) for a in fig.axes]
        fig.set_size_inches(fw, fh + grow)
        for a, (x0, y0, w, h) in positions:  # the same place in inches, moved up by grow
            a.set_position((x0, (y0 * fh + grow) / (fh + grow), w, h * fh / (fh + grow)))
    top = (label_bottom + grow - LEGEND_PAD) / (fh + grow)
    legend.set_bbox_to_anchor((0.5, top), transform=fig.transFigure)
    return grow


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
    ylabel = opts.ylabel if opts.ylabel is not None else f"f({name}) = {fl.expression}" \
        f"{held_text(fl)}"
    titled = bool(opts.title) or len(ylabel) > size[1] / LABEL_INCH
    box = place(size, aspect, *spans, False, titled)
    if opts.arrows and not opts.log and _tangent_fit(fl, opts, box, ylim)[1].clipped.any():
        box = place(size, aspect, *spans, False, titled, caption=True)
    ax = fig.add_axes(box.axes)
    drawn = Drawn(ax, notes=[note] if note else [])
    many = len(fl.values) > 1
    for i, (f, label) in enumerate(zip(fl.values, fl.labels, strict=True)):
        xs, fs = breaks.broken_line(x, f, breaks.curve_breaks(fl, i))
        color = f"C{i}" if many else "tab:red"
        text = f"f[{i}]({name}) = {short(label, 40)}" if many else \
            f"f({name}) = {short(label)}{held_text(fl)}"
        drawn.lines += ax.plot(xs, fs, color=color, lw=1.5, zorder=2, label=text)
    ax.set_xlim(x[0], x[-1])
    if opts.log:
        scale = color_scale(list(fl.values), False, log=True)
        if scale.kind == "log":
            ax.set_yscale("log")
        else:
            ax.set_ylim(*ylim)
            _symlog_axis(ax, curve_linthresh(list(fl.values)), name)
    ax.set_ylim(*ylim)
    ax.set_aspect(aspect)
    ax.set_xlabel(opts.xlabel if opts.xlabel is not None else fl.axis_label(name))
    funit = next((fl.units[k] for k in ("f", "f[0]") if k in fl.units), "")
    ylabel = opts.ylabel if opts.ylabel is not None else f"f({name}) = {fl.expression}" \
        f"{held_text(fl)}" + (f" [{funit}]" if funit else "")
    fits = max(12, int(box.height / LABEL_INCH))
    ax.set_ylabel(short(ylabel, fits))
    full = ylabel if len(ylabel) > fits and not opts.title else None
    return Canvas(fig, ax, None, fl, opts, box, drawn, limits, full_label=full)


def _symlog_axis(ax: Any, t: float, name: str) -> None:
    """A smooth symlog y axis (no kink where a curve enters the linear part), with the
    linear band |f| < t shaded and labelled on the picture."""
    from matplotlib.transforms import blended_transform_factory

    ax.set_yscale("symlog", linthresh=t, linscale=SMOOTH_LINSCALE)
    lo, hi = ax.get_ylim()
    top = math.log10(max(abs(lo), abs(hi), t))
    # 0 and the decades clear of the band (whose edges would print on top of 0)
    first = math.floor(math.log10(t)) + 1
    step = max(1, math.ceil((top - first + 1) / 6))
    decades = [10.0 ** k for k in range(first, math.floor(top) + 1, step)]
    ax.yaxis.set_major_locator(FixedLocator(sorted(
        [0.0, *(d for d in decades if d <= hi), *(-d for d in decades if -d >= lo)])))
    ax.axhspan(-t, t, color="0.93", zorder=0, lw=0)
    ax.text(0.995, 0.0, f"linear for |f({name})| < {t:.3g}, logarithmic beyond",
            transform=blended_transform_factory(ax.transAxes, ax.transData), ha="right",
            va="center", fontsize="x-small", color="0.35", zorder=1)


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
    """Tangent arrow positions and their fit, every, and the every note."""
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
        c.drawn.notes.append(f"no tangent arrows on a {ref('log')} axis (they are straight "
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
        c.drawn.caption_text = clip_note(fit, "slope", c.opts.words)
    c.drawn.arrows = fit
    c.drawn.every = every


def _taylor(c: Canvas) -> None:
    """The Taylor polynomials at the taylor point, dashed, over f; the y-range stays f's
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
    titled = bool(opts.title) or _label_cut(fl, opts, size[1] - BOTTOM - TOP_TITLE)
    box = place(size, aspect, xr, yr, has_cbar, titled, caption)
    return box, aspect, extent, note


def _draw_plane(fig: Figure, fl: Field, opts: PlotOptions, size: tuple[float, float],
                limits: Limits) -> Canvas:
    box, aspect, extent, note = plane_box(fl, opts, size)
    if opts.arrows and not opts.stream and not opts.normalize:
        lat = plane_lattice(fl, opts)
        fit = fit_plane(fl, opts, lat, box.ratio(extent[1] - extent[0],
                                                 extent[3] - extent[2]), limits.lengths).fit
        if fit.clipped.any():  # room for the caption that says so
            if opts.size is None:
                size = plane_size(fl, opts, caption=True)
                fig.set_size_inches(*size)
            box = plane_box(fl, opts, size, caption=True)[0]
    ax = fig.add_axes(box.axes)
    cax = fig.add_axes(box.cbar) if box.cbar is not None else None
    drawn = Drawn(ax, notes=[note] if note else [])
    hm = heat(fl, heat_name(fl, opts.color), full=True)
    c = Canvas(fig, ax, cax, fl, opts, box, drawn, limits, hm, extent)
    if hm is not None:
        scale = limits.colors or color_scale([hm.values], hm.signed, log=opts.log,
                                             vmin=opts.vmin, vmax=opts.vmax, cmap=opts.cmap)
        label = _cbar_label(c, hm.label)
        drawn.image = ax.imshow(_finite(hm.values).T, origin="lower", extent=extent,
                                cmap=scale.cmap, norm=mpl_norm(scale), aspect=aspect,
                                zorder=0, interpolation="nearest")
        drawn.colorbar = fig.colorbar(drawn.image, cax=cax, label=label)
        drawn.heat, drawn.colors = hm.values, scale
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_aspect(aspect)
    ax.set_xlabel(opts.xlabel if opts.xlabel is not None else fl.axis_label(fl.names[0]))
    ax.set_ylabel(opts.ylabel if opts.ylabel is not None else fl.axis_label(fl.names[1]))
    return c


def _cbar_label(c: Canvas, label: str) -> str:
    """The colour bar's label (colorbar_label, else ``label``) cut to what fits along
    it; when cut (and there is no title) the title shows it whole."""
    text = c.opts.colorbar_label if c.opts.colorbar_label is not None else label
    fits = max(8, int(c.box.height / LABEL_INCH))
    if len(text) > fits and not c.opts.title:
        c.full_label = text
    return short(text, fits)


def _bare_label(fl: Field, full: bool = False) -> str:
    return f"|F|, F = {fl.expression if full else short(fl.expression)}{held_text(fl)}"


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
                                          label=_cbar_label(c, _bare_label(fl, full=True)))


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
                                        label=_cbar_label(c, _bare_label(fl, full=True)))
    else:
        under = drawn.image.cmap(drawn.image.norm(lat.take(c.heat.values).ravel()[arrows.ok]))
        drawn.quiver = c.ax.quiver(px[plain], py[plain], fit.u[plain], fit.v[plain],
                                   color=_contrast(under[plain]), **common)
    if cut.any():
        drawn.clipped_quiver = c.ax.quiver(px[cut], py[cut], fit.u[cut], fit.v[cut],
                                           color=CLIPPED, edgecolor="white", linewidth=0.5,
                                           **common)
        what = "|∇f|" if fl.kind == "scalar" else "|F|"
        drawn.caption_text = clip_note(fit, what, c.opts.words)
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


#: drawn in this order, each over the ones before (basins first: they recolour the heatmap
#: that the arrows take their contrast from)
OVERLAYS: list[Overlay] = [
    Overlay("basins", "plane", lambda o: o.basins, draw_basins),
    Overlay("contour", "plane", lambda o: o.contour > 0, _contour),
    Overlay("stream", "plane", lambda o: o.stream, _stream),
    Overlay("arrows", "plane", lambda o: o.arrows and not o.stream, _plane_arrows),
    Overlay("derivative", "curve", lambda o: o.derivative, _derivative),
    Overlay("tangents", "curve", lambda o: o.arrows, _tangents),
    Overlay("taylor", "curve", lambda o: o.taylor is not None, _taylor),
    Overlay("flows", "plane", lambda o: bool(o.flow_from), draw_flows),
    Overlay("traced", "plane", lambda o: bool(given(o)), draw_traced),
    Overlay("paths", "any", lambda o: bool(o.path_from), draw_paths),
    Overlay("critical", "any", lambda o: o.mark_critical, draw_critical),
    Overlay("marks legend", "any", marks_wanted, draw_legend),
]
