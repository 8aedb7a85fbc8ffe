"""The terminal preview (``preview``, or ``-o -`` on a terminal): for work over SSH.

A plane is a grid of character cells coloured by the heatmap's scalar (the same scalar and
colour scale as the picture), with a direction glyph (→ ↗ ↑ ...) of the arrows every few
cells; a curve is drawn with line glyphs along f. It is as wide as the terminal (rich reads
the width and ``COLUMNS``). Under ``NO_COLOR``, or when the output is not a terminal, the
heat is shown with a character ramp instead of colours.
"""

from __future__ import annotations

import math
from typing import Any, TextIO

import numpy as np

from gradcli.plot import breaks
from gradcli.plot.colors import ColorScale, color_scale, heat, heat_name, held_text
from gradcli.plot.data import Field, flat_error
from gradcli.plot.layout import short, y_range
from gradcli.plot.options import PlotOptions

__all__ = ["preview", "GLYPHS", "RAMP"]

GLYPHS = "→↗↑↖←↙↓↘"  # by angle, counter-clockwise from +x in steps of 45 degrees
RAMP = " .:-=+*#%@"  # low to high, when there is no colour
PALETTES = {
    "viridis": ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"],
    "RdBu_r": ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
               "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"],
}
CURVE_ROWS = 16
STYLES = ["red", "blue", "green", "magenta", "cyan", "yellow"]  # a curve's colour
MARKS = "*o+x#%@="  # a curve's glyph when there is no colour to tell them apart
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # a basin's letter in the preview and its key
#: matplotlib's tab10, as the picture's basins
CATEGORIES = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
              "#7f7f7f", "#bcbd22", "#17becf"]
LEGEND = 24  # cells in the colour legend


def _rgb(hexes: list[str]) -> np.ndarray:
    return np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in hexes], dtype=float)


def _palette(name: str) -> np.ndarray:
    if name in PALETTES:
        return _rgb(PALETTES[name])
    import matplotlib

    return np.array([matplotlib.colormaps[name](s)[:3] for s in np.linspace(0, 1, 11)]) * 255


def _colors(fraction: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """RGB (0-255) for positions 0..1 along the palette; nan -> -1 (no colour)."""
    pos = np.clip(np.nan_to_num(fraction, nan=0.0), 0, 1) * (len(palette) - 1)
    lo = np.minimum(pos.astype(int), len(palette) - 2)
    t = (pos - lo)[..., None]
    rgb = palette[lo] * (1 - t) + palette[lo + 1] * t
    return np.where(np.isnan(fraction)[..., None], -1.0, rgb)


def glyph(u: float, v: float) -> str:
    """The arrow character closest to the direction (u, v); · for no direction."""
    if not (math.isfinite(u) and math.isfinite(v)):
        return " "
    if u == 0 and v == 0:
        return "·"
    return GLYPHS[round(math.atan2(v, u) / (math.pi / 4)) % 8]


def _style(rgb: np.ndarray, text_dark: bool | None = None) -> str:
    if rgb[0] < 0:
        return ""
    r, g, b = (int(round(c)) for c in rgb)
    fg = "" if text_dark is None else ("black " if text_dark else "white ")
    return f"{fg}on rgb({r},{g},{b})"


def _plane(fl: Field, opts: PlotOptions, width: int, colour: bool) -> list[Any]:
    from rich.text import Text

    (x, y) = fl.coords[:2]
    hm = heat(fl, heat_name(fl, opts.color) or "magnitude")
    assert hm is not None
    scale: ColorScale = color_scale([hm.values], hm.signed, log=opts.log, vmin=opts.vmin,
                                    vmax=opts.vmax, cmap=opts.cmap)
    cols = max(10, width - 2)  # the terminal's width, each cell its nearest grid point
    xr, yr = float(x[-1] - x[0]), float(y[-1] - y[0])
    aspect = opts.aspect or ("equal" if max(xr, yr) <= 10 * min(xr, yr) else "auto")
    rows = round(cols * yr / xr / 2) if aspect == "equal" else 20
    rows = max(4, min(rows, 48))
    ix = np.round(np.linspace(0, len(x) - 1, cols)).astype(int)
    iy = np.round(np.linspace(len(y) - 1, 0, rows)).astype(int)  # top row: largest y
    basins = hm.name == "basins" and fl.marks is not None and fl.marks.basins is not None
    frac = scale.fraction(hm.values[np.ix_(ix, iy)])
    palette = _palette(scale.cmap)
    rgb = _colors(frac, palette)
    if basins:  # categories, not a ramp: a colour and a letter per basin
        index = hm.values[np.ix_(ix, iy)]
        k = len(fl.marks.basins.points)
        cats = _rgb([CATEGORIES[i % len(CATEGORIES)] for i in range(k)])
        safe = np.nan_to_num(index, nan=0).astype(int)
        rgb = np.where(np.isnan(index)[..., None], -1.0, cats[safe])
    u, v = (a[np.ix_(ix, iy)] for a in fl.arrows()[:2])
    ratio = (yr / rows) / (xr / cols) / 2  # a character cell is about twice as tall as wide
    traced = _traced_cells(fl, x, y, cols, rows, ratio)
    lines = [Text(f"{hm.label}   {fl.names[0]}: {x[0]:.4g} … {x[-1]:.4g}{_unit(fl, 0)} →   "
                  f"{fl.names[1]}: {y[0]:.4g} … {y[-1]:.4g}{_unit(fl, 1)} ↑", style="bold")]
    for r in range(rows):
        line = Text()
        for c in range(cols):
            arrow = opts.arrows and c % 3 == 1 and r % 2 == 0
            ch = glyph(float(u[c, r]), float(v[c, r]) / ratio) if arrow else None
            ch = traced.get((c, r), ch)
            if colour:
                lum = rgb[c, r] @ np.array([0.2126, 0.7152, 0.0722]) / 255
                line.append(ch or " ", style=_style(rgb[c, r], bool(lum > 0.45)))
            elif basins:
                b = index[c, r]
                line.append(ch or (" " if np.isnan(b) else _letter(int(b))))
            else:
                f = frac[c, r]
                line.append(ch or (" " if np.isnan(f) else RAMP[int(f * (len(RAMP) - 1))]))
        lines.append(line)
    if basins:
        return [*lines, *_basin_key(fl, cats, colour, width)]
    legend = Text(f"{scale.vmin:.3g} ")
    steps = np.linspace(0, 1, LEGEND)
    for s, c in zip(steps, _colors(steps, palette), strict=True):
        legend.append(" " if colour else RAMP[int(s * (len(RAMP) - 1))],
                      style=_style(c) if colour else "")
    legend.append(f" {scale.vmax:.3g}" + ("" if scale.kind == "linear" else f" ({scale.kind})"))
    return [*lines, legend]


def _traced_cells(fl: Field, x: np.ndarray, y: np.ndarray, cols: int, rows: int,
                  ratio: float) -> dict[tuple[int, int], str]:
    """The cells of each ``path`` (``•``, its start ``o``) and its end's direction glyph."""
    cells: dict[tuple[int, int], str] = {}
    for drawn in fl.marks.traced if fl.marks is not None else ():
        if drawn.surface:
            continue
        p = drawn.points[np.isfinite(drawn.points).all(axis=1)]
        if len(p) < 2:
            continue
        c = np.round((p[:, 0] - x[0]) / (x[-1] - x[0]) * (cols - 1)).astype(int)
        r = np.round((y[-1] - p[:, 1]) / (y[-1] - y[0]) * (rows - 1)).astype(int)
        inside = (c >= 0) & (c < cols) & (r >= 0) & (r < rows)
        for ci, ri in zip(c[inside], r[inside], strict=True):
            cells[(int(ci), int(ri))] = "•"
        if inside[0]:
            cells[(int(c[0]), int(r[0]))] = "o"
        if inside[-1]:
            step = p[-1] - p[-2]
            cells[(int(c[-1]), int(r[-1]))] = glyph(float(step[0]), float(step[1]) / ratio)
    return cells


def _letter(i: int) -> str:
    return LETTERS[i % len(LETTERS)]


def _basin_key(fl: Field, cats: np.ndarray, colour: bool, width: int) -> list[Any]:
    """The basins' key: each basin's colour (or letter) and the minimum it leads to, as
    the picture's colour bar names them; wrapped to the terminal's width."""
    from rich.text import Text

    from gradcli.plot.marks import point_text

    basins = fl.marks.basins
    lines, line = [], Text(f"basin ({basins.method}):")
    for i, p in enumerate(basins.points):
        entry = f" {_letter(i)} {point_text(p, 3)}"
        if len(line) + len(entry) + 2 > width and len(line) > 0:
            lines.append(line)
            line = Text()
        line.append(" ")
        if colour:
            line.append(f" {_letter(i)} ", style=_style(cats[i], True))
            line.append(f" {point_text(p, 3)}")
        else:
            line.append(entry[1:])
        line.append(" ")
    line.rstrip()
    lines.append(line)
    return lines


def _sample(x: np.ndarray, a: np.ndarray, at: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``a`` at the positions ``at``, linear between grid points (a small grid fills the
    terminal's width); nan where a break (pole, jump) lies between the two neighbours."""
    j = np.clip(np.searchsorted(x, at, side="right") - 1, 0, len(x) - 2)
    t = (at - x[j]) / (x[j + 1] - x[j])
    with np.errstate(invalid="ignore"):
        out = a[j] * (1 - t) + a[j + 1] * t
    near = np.isin(j, gaps)
    exact = np.isclose(t, 0.0) | np.isclose(t, 1.0)
    out = np.where(np.isclose(t, 1.0), a[j + 1], np.where(np.isclose(t, 0.0), a[j], out))
    return np.where(near & ~exact, np.nan, out)


def _curve(fl: Field, opts: PlotOptions, width: int, colour: bool) -> list[Any]:
    from rich.text import Text

    x, name = fl.coords[0], fl.names[0]
    cols = max(10, width - 13 - len(name))  # the terminal's width, whatever the grid's size
    many = len(fl.values) > 1
    # what is drawn: f (or each f[i]) and, with derivative, f' dashed in the picture
    series = [(f, df, f"f[{i}] = {short(label, 30)}" if many else f"f({name})", i)
              for i, (f, df, label) in enumerate(zip(fl.values, fl.grad, fl.labels,
                                                     strict=True))]
    if opts.derivative:
        series += [(df, None, f"f[{i}]'({name})" if many else f"f'({name})", i)
                   for i, df in enumerate(fl.grad)]
    (lo, hi), _ = y_range([s[0] for s in series], opts.ylim)
    at = np.linspace(x[0], x[-1], cols)
    grid = [[(" ", "")] * cols for _ in range(CURVE_ROWS)]
    per_col, per_row = (x[-1] - x[0]) / max(cols - 1, 1), (hi - lo) / CURVE_ROWS
    # without colour every curve has its own glyph; with colour, line glyphs in its colour
    own = not colour and len(series) > 1
    keys = []
    for n, (f, df, label, i) in enumerate(series):
        gaps = breaks.curve_breaks(fl, i)
        fs = _sample(x, f, at, gaps)
        slopes = _sample(x, df, at, gaps) if df is not None else np.gradient(fs, at)
        style = STYLES[n % len(STYLES)] if colour else ""
        mark = MARKS[n % len(MARKS)] if own else None
        for c in range(cols):
            if not (np.isfinite(fs[c]) and lo <= fs[c] <= hi):
                continue
            r = min(CURVE_ROWS - 1, int((hi - fs[c]) / (hi - lo) * CURVE_ROWS))
            slope = slopes[c] * per_col / per_row / 2 if np.isfinite(slopes[c]) else 0.0
            ch = mark or ("│" if abs(slope) > 2.5 else "─" if abs(slope) < 0.4
                          else "╱" if slope > 0 else "╲")
            grid[r][c] = (ch, style)
        keys.append((mark or "─", style, label))
    lines = [Text(f"f({name}) = {short(fl.expression, 60)}{held_text(fl)}", style="bold")]
    for r, row in enumerate(grid):
        label = f"{hi:>10.4g} " if r == 0 else f"{lo:>10.4g} " if r == CURVE_ROWS - 1 \
            else " " * 11
        line = Text(label)
        for ch, style in row:
            line.append(ch, style=style)
        lines.append(line)
    left, right = f"{x[0]:.4g}", f"{x[-1]:.4g}"
    gap = max(2, cols - len(left) - len(right))  # the two ends never run together
    lines.append(Text(" " * 11 + left + " " * gap + right + f" {name}"))
    if len(keys) > 1:
        legend = Text(" " * 11)
        for n, (mark, style, label) in enumerate(keys):
            legend.append(f"{mark} {label}" + ("  " if n < len(keys) - 1 else ""),
                          style=style)
        lines.append(legend)
    return lines


def _unit(fl: Field, axis: int) -> str:
    """`` m`` after an axis's range when its variable has a unit (``x: 0 … 1 m``)."""
    unit = getattr(fl, "units", {}).get(fl.names[axis], "")
    return f" {unit}" if unit else ""


def preview(fl: Field, opts: PlotOptions, stream: TextIO) -> None:
    """Print the preview of ``fl`` to ``stream`` with rich."""
    from rich.console import Console

    if len(fl.names) == 3:
        raise flat_error(fl)
    console = Console(file=stream, highlight=False, soft_wrap=True)
    colour = console.color_system is not None and not console.no_color
    draw = _curve if fl.kind == "curve" else _plane
    for line in draw(fl, opts, console.width, colour):
        if not colour:  # blank cells carry no background: no trailing spaces to copy
            line.rstrip()
        console.print(line, no_wrap=True, overflow="crop")
