"""The interactive page (``-o field.html``): one self-contained file, plotly.js embedded.

The page is written directly, without importing plotly's Python package: the ``html``
extra (``pip install 'gradcli[html]'``) is only where plotly.js comes from. The traces are
built from the same numbers as the picture (the arrow lattice and robust scaling of
``arrows.py``, the colour scale of ``colors.py``, the curve breaks of ``breaks.py``), and
every hover label is text written here from the engine's columns: the point, f and each
partial, shortest round-trip floats, nothing recomputed in JavaScript. There are no random
ids or timestamps, so the same command writes the same bytes, and the page fetches
nothing.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError, ref
from gradcli.output.atomic import atomic_open
from gradcli.plot import breaks
from gradcli.plot.arrows import clip_note, fit_plane, plane_lattice, shown_lengths
from gradcli.plot.colors import color_scale, heat, heat_name, held_text, value_text
from gradcli.plot.data import Field
from gradcli.plot.layout import (
    choose_aspect,
    clamp_every,
    default_every,
    fit_arrows,
    json_numbers,
    lattice,
    short,
    y_range,
)
from gradcli.plot.marks_page import add_marks
from gradcli.plot.options import DEFAULT_FPS, MAX_CONTOUR_LEVELS, PlotOptions, contour_note

__all__ = ["write_page", "plotly_js", "hover_lines", "DIV_ID", "page_spec"]

DIV_ID = "gradcli-plot"
WIDTH, HEIGHT = 900, 720  # pixels: fixed, so arrows drawn in data units keep their shape
SLIDER_HEIGHT = 90  # pixels below the plot for an animation's play button and slider
MARGIN = dict(l=70, r=30, t=60, b=70)
CLIPPED = "#e6007e"
CONE_ARROWS = 10  # default cones per axis
MAX_PAGE_POINTS = 250_000  # points with hover text: about 40 MB of page at most
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]  # matplotlib's tab10, as the pictures use
PLOTLY_NAMES = {"viridis": ("Viridis", False), "RdBu_r": ("RdBu", True),
                "RdBu": ("RdBu", False), "cividis": ("Cividis", False)}


def plotly_js() -> str:
    """plotly.js from the installed plotly package (the ``html`` extra), or a clear error."""
    spec = importlib.util.find_spec("plotly")
    for where in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(where, "package_data", "plotly.min.js")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    raise EvaluationError("-o *.html embeds plotly.js, which is not installed: "
                          "pip install 'gradcli[html]'")


def _num(v: float) -> str:
    return repr(float(v))






def hover_lines(fl: Field, order: tuple[int, ...] | None = None,
                pick: tuple[np.ndarray, ...] | None = None) -> list[str]:
    """One hover label per grid point (or per point of the sub-grid ``pick``, one index
    array per axis), flattened in ``order`` of the axes (default C order): the point, the
    variables held fixed, then every column the engine computed, each value followed by
    its unit when it has one (``x = 2 m``)."""
    pick = pick or tuple(np.arange(len(c)) for c in fl.coords)
    coords = [c[i] for c, i in zip(fl.coords, pick, strict=True)]
    shape = tuple(len(c) for c in fl.coords)
    axes = order or tuple(range(len(shape)))
    grids = np.meshgrid(*coords, indexing="ij")
    units = getattr(fl, "units", {}) or {}

    def unit(name: str) -> str:  # " m" after a value with a unit (a pure number: none)
        text = units.get(name, "")
        return f" {text}" if text and text != "1" else ""

    parts = [[f"{n} = {r}{unit(n)}" for r in map(_num, np.transpose(g, axes).ravel()
                                                  .tolist())]
             for n, g in zip(fl.names, grids, strict=True)]
    held = "".join(f"<br>{n} = {_num(v) if np.ndim(v) == 0 else value_text(v)}{unit(n)} "
                   "(held)" for n, v in fl.held.items())
    for name, a in fl.columns.items():
        sub = np.broadcast_to(a, shape)[np.ix_(*pick)]
        parts.append([f"{name} = {r}{unit(name)}" for r in map(_num, np.transpose(sub, axes)
                                                               .ravel().tolist())])
    n = len(fl.names)
    return ["<br>".join(p[:n]) + held + "<br>" + "<br>".join(p[n:])
            for p in zip(*parts, strict=True)]


def _colorscale(name: str) -> tuple[Any, bool]:
    if name in PLOTLY_NAMES:
        return PLOTLY_NAMES[name]
    import matplotlib

    cmap = matplotlib.colormaps[name]
    steps = np.linspace(0, 1, 11)
    return [[float(s), "rgb({:.0f},{:.0f},{:.0f})".format(*(255 * np.array(cmap(s)[:3])))]
            for s in steps], False


def _arrow_lines(x: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray,
                 ratio: float) -> tuple[list[Any], list[Any]]:
    """Shaft and two barbs per arrow (pivot in the middle), as one line trace with gaps."""
    xs: list[Any] = []
    ys: list[Any] = []
    for px, py, du, dv in zip(x.tolist(), y.tolist(), u.tolist(), v.tolist(), strict=True):
        length = math.hypot(du, dv / ratio)
        if length == 0:
            continue
        ex, ey = du / length, dv / ratio / length
        tx, ty = px - du / 2, py - dv / 2
        hx, hy = px + du / 2, py + dv / 2
        head = 0.3 * length
        barbs = []
        for s in (0.42, -0.42):  # about 24 degrees either side of the shaft
            bx = ex * math.cos(s) - ey * math.sin(s)
            by = ex * math.sin(s) + ey * math.cos(s)
            barbs.append((hx - head * bx, hy - head * by * ratio))
        xs += [tx, hx, None, barbs[0][0], hx, barbs[1][0], None]
        ys += [ty, hy, None, barbs[0][1], hy, barbs[1][1], None]
    return xs, ys


def _axis_label(asked: str | None, default: str) -> str:
    """xlabel/ylabel as typed, else the default; escaped (plotly renders HTML)."""
    return html.escape(asked if asked is not None else default)


def _legend(layout: dict[str, Any], opts: PlotOptions) -> None:
    """legend: none hides it, outside puts it below the plot (auto: plotly's place)."""
    if opts.legend == "none":
        layout["showlegend"] = False
    elif opts.legend == "outside":
        layout["legend"] = {"orientation": "h", "y": -0.15, "yanchor": "top"}


def _title(fl: Field, opts: PlotOptions) -> str:
    if opts.title:
        return html.escape(opts.title)
    args = ", ".join(fl.names)
    return html.escape(f"f({args}) = {short(fl.expression, 80)}{held_text(fl)}")


def _plane(fl: Field, opts: PlotOptions, limits: Any = None
           ) -> tuple[list[Any], dict[str, Any], list[str]]:
    (x, y) = fl.coords[:2]
    dx, dy = x[1] - x[0], y[1] - y[0]
    xr, yr = x[-1] - x[0] + dx, y[-1] - y[0] + dy
    aspect, note = choose_aspect(fl.names, (abs(x[-1] - x[0]), abs(y[-1] - y[0])),
                                 opts.aspect)
    notes = [note] if note else []
    plot_w = WIDTH - MARGIN["l"] - MARGIN["r"] - 120  # the colorbar
    plot_h = HEIGHT - MARGIN["t"] - MARGIN["b"]
    ratio = 1.0 if aspect == "equal" else (yr / plot_h) / (xr / plot_w)
    hm = heat(fl, heat_name(fl, opts.color) or "magnitude")
    assert hm is not None
    scale = limits.colors if limits is not None and limits.colors is not None else \
        color_scale([hm.values], hm.signed, log=opts.log, vmin=opts.vmin, vmax=opts.vmax,
                    cmap=opts.cmap)
    colors, reverse = _colorscale(scale.cmap)
    lo, hi = scale.transform(np.array([scale.vmin, scale.vmax]))
    bar_label = opts.colorbar_label if opts.colorbar_label is not None else short(hm.label, 70)
    bar: dict[str, Any] = {"title": {"text": html.escape(bar_label),
                                     "side": "right"}}
    if scale.kind != "linear":
        ticks = np.unique(np.concatenate([np.linspace(scale.vmin, scale.vmax, 5), [0.0]]
                                         if scale.kind == "symlog" else
                                         [np.geomspace(scale.vmin, scale.vmax, 5)]))
        bar |= {"tickvals": json_numbers(scale.transform(ticks)),
                "ticktext": [f"{t:.3g}" for t in ticks]}
    text = hover_lines(fl, (1, 0))
    traces: list[Any] = [{
        "type": "heatmap", "x": json_numbers(x), "y": json_numbers(y),
        "z": json_numbers(scale.transform(hm.values).T), "zmin": float(lo),
        "zmax": float(hi), "colorscale": colors, "reversescale": reverse,
        "zsmooth": False, "colorbar": bar, "name": hm.name,
        "text": [text[j * len(x):(j + 1) * len(x)] for j in range(len(y))],
        "hovertemplate": "%{text}<extra></extra>"}]
    if opts.contour:
        traces.append(_contour_trace(fl, hm.values, opts.contour))
        if opts.contour > MAX_CONTOUR_LEVELS:
            notes.append(contour_note(opts.contour))
    if opts.stream:
        notes.append(f"{ref('stream')}: the page draws arrows (it has no streamlines)")
    if opts.arrows:
        lat = plane_lattice(fl, opts)
        notes += [lat.note] if lat.note else []
        arrows = fit_plane(fl, opts, lat, ratio,
                           None if limits is None else limits.lengths)
        fit = arrows.fit
        u, v = fit.u / fit.quiver_scale, fit.v / fit.quiver_scale
        for name, pick, color in (("arrows", ~fit.clipped, "black"),
                                  ("clipped", fit.clipped, CLIPPED)):
            if not pick.any():
                continue
            lx, ly = _arrow_lines(arrows.x[pick], arrows.y[pick], u[pick], v[pick], ratio)
            halo = {"color": "rgba(255,255,255,0.6)", "width": 3.2}  # shows on dark colours
            for line, shown in ((halo, False), ({"color": color, "width": 1.4},
                                                name == "clipped")):
                traces.append({"type": "scatter", "mode": "lines", "x": lx, "y": ly,
                               "line": line, "hoverinfo": "skip", "name": name,
                               "showlegend": shown})
        what = "|∇f|" if fl.kind == "scalar" else "|F|"
        caption = clip_note(fit, what, opts.words)
        if caption:  # the clipped arrows' legend entry says what they are
            traces[-1]["name"] = html.escape(caption)
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": _axis_label(opts.xlabel, fl.names[0])},
                  "range": [x[0] - dx / 2, x[-1] + dx / 2],
                  "constrain": "domain"},
        "yaxis": {"title": {"text": _axis_label(opts.ylabel, fl.names[1])},
                  "range": [y[0] - dy / 2, y[-1] + dy / 2],
                  "constrain": "domain"},
        "legend": {"orientation": "h", "y": -0.12}}
    if aspect == "equal":
        layout["yaxis"] |= {"scaleanchor": "x", "scaleratio": 1}
    return traces, layout, notes


def _contour_trace(fl: Field, values: np.ndarray, count: int) -> dict[str, Any]:
    """``count`` contour lines of the heatmap, evenly spaced inside its range, as the
    picture draws them."""
    vals = values[np.isfinite(values)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
    count = min(count, MAX_CONTOUR_LEVELS)
    step = (hi - lo) / (count + 1) or 1.0
    return {"type": "contour", "x": json_numbers(fl.coords[0]),
            "y": json_numbers(fl.coords[1]), "z": json_numbers(values.T),
            "contours": {"coloring": "lines", "start": lo + step, "end": hi - step / 2,
                         "size": step},
            "line": {"color": "white", "width": 1}, "showscale": False,
            "hoverinfo": "skip", "name": "contours"}


def _curve(fl: Field, opts: PlotOptions, limits: Any = None
           ) -> tuple[list[Any], dict[str, Any], list[str]]:
    x, name = fl.coords[0], fl.names[0]
    many = len(fl.values) > 1
    text = np.array(hover_lines(fl), dtype=object)
    traces: list[Any] = []
    for i, (f, df) in enumerate(zip(fl.values, fl.grad, strict=True)):
        cut = breaks.curve_breaks(fl, i)
        label = f"f[{i}] = {short(fl.labels[i], 40)}" if many else f"f({name})"
        for series, what, dash in ((f, label, "solid"), (df, f"d{label.split(' ')[0]}/d"
                                                         f"{name}", "dash")):
            xs, ys = breaks.broken_line(x, series, cut)
            hover = np.insert(text, cut + 1, None) if cut.size else text
            traces.append({"type": "scatter", "mode": "lines", "name": html.escape(what),
                           "x": json_numbers(xs), "y": json_numbers(ys),
                           "line": {"color": PALETTE[i % 10],
                                    "dash": dash, "width": 2 if dash == "solid" else 1.5},
                           "text": hover.tolist(), "hovertemplate": "%{text}<extra></extra>"})
    if fl.taylor is not None:  # the taylor polynomials, dashed; the y-range stays f's
        at = fl.taylor[0]
        for i, order in enumerate(opts.taylor_orders()):
            traces.append({"type": "scatter", "mode": "lines", "x": json_numbers(x),
                           "y": json_numbers(fl.polynomial(order)),
                           "name": f"Taylor polynomial of order {order} at {name} = {at:g}",
                           "line": {"color": PALETTE[(i + 1) % 10], "dash": "dot",
                                    "width": 1.5}, "hoverinfo": "skip"})
    ylim, note = y_range([*fl.values, *fl.grad], opts.ylim, opts.log)
    if limits is not None and limits.ylim is not None:  # every frame's, fixed
        ylim, note = limits.ylim, None
    notes = [note] if note else []
    yaxis: dict[str, Any] = {"title": {"text": _axis_label(
        opts.ylabel, f"f({name}) = {short(fl.expression, 50)}")}, "range": list(ylim)}
    if opts.log:
        if min(float(np.nanmin(np.where(np.isfinite(a), a, np.nan))) for a in fl.values) > 0:
            yaxis |= {"type": "log", "range": [math.log10(ylim[0]), math.log10(ylim[1])]}
        else:
            notes.append(f"{ref('log')}: the page has no symlog axis; drawn on a linear one")
    layout = {"xaxis": {"title": {"text": _axis_label(opts.xlabel, name)},
                        "range": [x[0], x[-1]]}, "yaxis": yaxis,
              "hovermode": "closest"}
    return traces, layout, notes


def _cones(fl: Field, opts: PlotOptions) -> tuple[list[Any], dict[str, Any], list[str]]:
    counts = tuple(len(c) for c in fl.coords)
    every, note = clamp_every(opts.every or default_every(max(counts), CONE_ARROWS), counts)
    idx = [lattice(n, every) for n in counts]
    pick = np.ix_(*idx)
    pts = np.meshgrid(*(c[i] for c, i in zip(fl.coords, idx, strict=True)), indexing="ij")
    vecs = [a[pick] for a in fl.arrows()]
    ok = np.logical_and.reduce([np.isfinite(v) for v in vecs]).ravel()
    pts = [p.ravel()[ok] for p in pts]
    vecs = [v.ravel()[ok] for v in vecs]
    norm = np.sqrt(sum(v * v for v in vecs))
    spacing = min(float(c[1] - c[0]) for c in fl.coords) * every
    # the 2-D rule on the cone lengths: percentile scale, longer ones clipped
    fit = fit_arrows(norm, np.zeros_like(norm), spacing, 1.0, opts.scale)
    with quiet():
        shrink = np.where(norm > 0, fit.u / np.where(norm > 0, norm, 1), 0) / fit.quiver_scale
    text = np.array(hover_lines(fl, pick=tuple(idx)), dtype=object)[ok]
    traces = []
    for name, sel, colors in (("cones", ~fit.clipped, "Viridis"),
                              ("clipped", fit.clipped, [[0, CLIPPED], [1, CLIPPED]])):
        if not sel.any():
            continue
        traces.append({
            "type": "cone", "name": name, "sizemode": "raw", "anchor": "center",
            "x": json_numbers(pts[0][sel]), "y": json_numbers(pts[1][sel]),
            "z": json_numbers(pts[2][sel]),
            "u": json_numbers((vecs[0] * shrink)[sel]),
            "v": json_numbers((vecs[1] * shrink)[sel]),
            "w": json_numbers((vecs[2] * shrink)[sel]), "colorscale": colors,
            "showscale": False, "text": text[sel].tolist(),
            "hovertemplate": "%{text}<extra></extra>"})
    spans = [float(c[-1] - c[0]) for c in fl.coords]
    mode = "data" if max(spans) <= 10 * min(spans) else "cube"
    what = "|∇f|" if fl.kind == "scalar" else "|F|"
    notes = [note] if note else []
    caption = clip_note(fit, what, opts.words)
    scene = {f"{a}axis": {"title": {"text": n}} for a, n in zip("xyz", fl.names, strict=True)}
    layout = {"scene": scene | {"aspectmode": mode},
              "annotations": [{"text": html.escape(caption or f"cone length ∝ {what}"),
                               "showarrow": False, "xref": "paper", "yref": "paper",
                               "x": 0, "y": 0, "xanchor": "left"}]}
    return traces, layout, notes


def check_page_size(fl: Field) -> None:
    """A 2-D or 1-D page carries a hover label for every grid point of every frame: refuse
    grids whose page would be too big to open (3-D pages show only the cones' lattice)."""
    if len(fl.names) == 3:
        return
    points = int(np.prod([len(c) for c in fl.coords]))
    if fl.frames is not None and points * len(fl.frames) > MAX_PAGE_POINTS:
        raise EvaluationError(
            f"-o *.html: {points:,} grid points in each of {len(fl.frames)} frames is too "
            f"many for a page (each gets a hover label; at most {MAX_PAGE_POINTS:,} in "
            f"all): use a coarser {ref('grid')} or fewer {ref('animate')} frames")
    if points > MAX_PAGE_POINTS:
        raise EvaluationError(f"-o *.html: {points:,} grid points is too many for a page "
                              f"(each gets a hover label; at most {MAX_PAGE_POINTS:,}): "
                              f"use a coarser {ref('grid')}, e.g. 500 points per axis")


def page_spec(fl: Field, opts: PlotOptions) -> tuple[dict[str, Any], list[str]]:
    """The plotly figure (data, layout, config) for ``fl`` and the notes for stderr."""
    check_page_size(fl)
    if fl.frames is not None:
        return _animated_spec(fl, opts)
    build = _curve if fl.kind == "curve" else _cones if len(fl.names) == 3 else _plane
    traces, layout, notes = build(fl, opts)
    add_marks(fl, traces)
    _legend(layout, opts)
    layout |= {"title": {"text": _title(fl, opts)}, "width": WIDTH, "height": HEIGHT,
               "margin": MARGIN, "template": None, "font": {"family": "sans-serif"}}
    config = {"displaylogo": False, "responsive": False,
              "modeBarButtonsToRemove": ["sendDataToCloud"]}
    return {"data": traces, "layout": layout, "config": config}, notes


def _animated_spec(fl: Field, opts: PlotOptions) -> tuple[dict[str, Any], list[str]]:
    """A page with a play button and a slider over the animated variable: one plotly frame
    per value, every frame's traces built as a still's with the colour scale, arrow
    lengths and y-range fixed over all frames, and hover labels from the engine's columns
    at that frame (the animated variable shown as held)."""
    if len(fl.names) == 3:
        raise EvaluationError(f"{ref('animate')} with -o *.html draws one or two grid "
                              "variables; a 3-D field's page has no slider: add "
                              f"{ref('slice', text='VAR=VALUE')}")
    assert fl.frames is not None and fl.animated is not None
    limits = _page_limits(fl, opts)
    build = _curve if fl.kind == "curve" else _plane
    frames, notes, layout = [], [], {}
    for k in range(len(fl.frames)):
        still = fl.frame(k)
        traces, still_layout, still_notes = build(still, opts, limits)
        add_marks(still, traces)
        name = f"frame {k}"  # unique, whatever the values print as
        frames.append({"name": name, "data": traces,
                       "layout": {"title": {"text": _title(still, opts)}}})
        if k == 0:
            layout, notes = still_layout, still_notes
    _legend(layout, opts)
    fps = DEFAULT_FPS if opts.fps is None else opts.fps
    play = {"frame": {"duration": round(1000 / fps), "redraw": True},
            "transition": {"duration": 0}, "fromcurrent": True, "mode": "immediate"}
    jump = {"frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0},
            "mode": "immediate"}
    layout |= {
        "title": {"text": frames[0]["layout"]["title"]["text"]},
        "width": WIDTH, "height": HEIGHT + SLIDER_HEIGHT,
        "margin": MARGIN | {"b": MARGIN["b"] + SLIDER_HEIGHT},
        "template": None, "font": {"family": "sans-serif"},
        "updatemenus": [{"type": "buttons", "direction": "left", "showactive": False,
                         "x": 0.1, "y": 0, "xanchor": "right", "yanchor": "top",
                         "pad": {"t": 75, "r": 10},
                         "buttons": [{"label": "Play", "method": "animate",
                                      "args": [None, play]},
                                     {"label": "Pause", "method": "animate",
                                      "args": [[None], jump]}]}],
        "sliders": [{"active": 0, "x": 0.1, "len": 0.9, "y": 0, "xanchor": "left",
                     "yanchor": "top", "pad": {"t": 50, "b": 10},
                     "currentvalue": {"prefix": f"{fl.animated} = ", "xanchor": "right"},
                     "steps": [{"label": f"{v:.4g}", "method": "animate",
                                "args": [[f["name"]], jump]}
                               for v, f in zip(fl.frames.tolist(), frames, strict=True)]}]}
    config = {"displaylogo": False, "responsive": False,
              "modeBarButtonsToRemove": ["sendDataToCloud"]}
    return {"data": frames[0]["data"], "layout": layout, "frames": frames,
            "config": config}, notes


@dataclass
class PageLimits:
    """What every frame of an animated page shares: the colour scale, the arrows'
    displayed lengths over all frames (one arrow scale) and a curve's y-range."""

    colors: Any = None
    lengths: np.ndarray | None = None
    ylim: tuple[float, float] | None = None


def _page_limits(fl: Field, opts: PlotOptions) -> PageLimits:
    if fl.kind == "curve":
        return PageLimits(ylim=y_range([*fl.values, *fl.grad], opts.ylim, opts.log)[0])
    hm = heat(fl, heat_name(fl, opts.color) or "magnitude")
    assert hm is not None
    limits = PageLimits(colors=color_scale([hm.values], hm.signed, log=opts.log,
                                           vmin=opts.vmin, vmax=opts.vmax, cmap=opts.cmap))
    if opts.arrows and not opts.normalize:
        first = fl.frame(0)
        limits.lengths = shown_lengths(fl, plane_lattice(first, opts), page_ratio(first, opts))
    return limits


def page_ratio(fl: Field, opts: PlotOptions) -> float:
    """y data units per x data unit on the page's plane (as _plane computes it)."""
    (x, y) = fl.coords[:2]
    if fl.kind == "curve":
        return 1.0
    dx, dy = x[1] - x[0], y[1] - y[0]
    xr, yr = x[-1] - x[0] + dx, y[-1] - y[0] + dy
    aspect, _ = choose_aspect(fl.names, (abs(x[-1] - x[0]), abs(y[-1] - y[0])), opts.aspect)
    plot_w = WIDTH - MARGIN["l"] - MARGIN["r"] - 120
    plot_h = HEIGHT - MARGIN["t"] - MARGIN["b"]
    return 1.0 if aspect == "equal" else (yr / plot_h) / (xr / plot_w)


def _script_safe(text: str) -> str:
    return (text.replace("</", "<\\/").replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029"))


def write_page(fl: Field, opts: PlotOptions, path: str) -> list[str]:
    """Write the page for ``fl`` to ``path`` atomically; return the notes for stderr."""
    js = plotly_js()
    spec, notes = page_spec(fl, opts)
    data = _script_safe(json.dumps(spec, separators=(",", ":"), ensure_ascii=False,
                                   allow_nan=False))
    title = html.escape(f"gradcli: {short(fl.expression, 80)}")
    # a page with frames passes the whole figure (data, layout, frames, config) at once
    call = f'Plotly.newPlot("{DIV_ID}", spec);' if "frames" in spec else \
        f'Plotly.newPlot("{DIV_ID}", spec.data, spec.layout, spec.config);'
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n"
        "<style>body{margin:0;font-family:sans-serif;background:#fff}</style>\n"
        f"<script>{js}</script>\n</head>\n<body>\n<div id=\"{DIV_ID}\"></div>\n"
        f"<script>\nconst spec = {data};\n"
        f"{call}\n"
        "</script>\n</body>\n</html>\n")
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(page)
    return notes
