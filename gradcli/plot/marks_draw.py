"""The matplotlib overlays of ``marks.py``: basins, critical points, paths and flows.

Each function draws one kind of mark on a ``figures.Canvas`` and is one entry of
``figures.OVERLAYS``; ``legend`` gathers every labelled mark into one legend at the end.
Basins recolour the base heatmap (categorical colours, the colorbar naming each basin's
point), so they are drawn before the arrows, which pick black or white by the colour
under them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap

from gradcli.plot.layout import short
from gradcli.plot.marks import point_text

#: ``figures.Canvas``, which calls these drawers (it imports this module)
Canvas = Any

__all__ = ["draw_basins", "draw_critical", "draw_paths", "draw_flows", "draw_legend",
           "draw_traced", "TRACED_COLORS", "MARKERS", "basin_colors", "saddle_segments",
           "DIRECTION_LENGTH"]

#: type -> (marker, colour): minima point down, maxima up, saddles are crosses; a field's
#: stable points are blue, unstable red
MARKERS = {
    "minimum": ("v", "#1f77b4"), "maximum": ("^", "#d62728"), "saddle": ("X", "#ff7f0e"),
    "degenerate": ("D", "#9467bd"),
    "stable node": ("o", "#1f77b4"), "unstable node": ("o", "#d62728"),
    "stable focus": ("P", "#1f77b4"), "unstable focus": ("P", "#d62728"),
    "center": ("*", "#2ca02c"),
}
#: matplotlib's tab20 in the order tab10 then its light halves: distinct basins first
_TAB20 = [*range(0, 20, 2), *range(1, 20, 2)]


def basin_colors(k: int) -> list[tuple[float, float, float, float]]:
    """``k`` distinct colours for basins (tab20, then hues)."""
    import matplotlib

    if k <= 20:
        tab = matplotlib.colormaps["tab20"]
        return [tab(i) for i in _TAB20[:k]]
    return [matplotlib.colormaps["hsv"](i / k) for i in range(k)]


def draw_basins(c: Canvas) -> None:
    basins = c.field.marks.basins
    image, bar = c.drawn.image, c.drawn.colorbar
    if basins is None or image is None or bar is None:  # none found: f is drawn (a note)
        return
    k = len(basins.points)
    image.set_cmap(ListedColormap(basin_colors(k)))
    image.set_norm(BoundaryNorm(np.arange(k + 1) - 0.5, k))
    bar.update_normal(image)
    bar.set_ticks(np.arange(k))
    bar.set_ticklabels([short(point_text(p, 3), 24) for p in basins.points],
                       fontsize="small")
    bar.set_label(f"basin ({basins.method})")
    c.ax.scatter(basins.points[:, 0], basins.points[:, 1], marker="*", s=280, c="white",
                 edgecolors="black", linewidths=1.0, zorder=5.5)


def draw_critical(c: Canvas) -> None:
    found = c.field.marks.critical
    curve = c.field.kind == "curve"
    for kind, (marker, color) in MARKERS.items():
        pick = found.types == kind
        if not pick.any():
            continue
        x = found.X[pick, 0]
        y = found.f[pick] if curve else found.X[pick, 1]
        c.ax.scatter(x, y, marker=marker, s=90, c=color, edgecolors="black", linewidths=0.8,
                     zorder=6, label=f"{kind} ({int(pick.sum())})")
    if not curve:
        _saddle_directions(c)


#: half-length of a saddle's direction lines, as a fraction of the axes' smaller side
DIRECTION_LENGTH = 0.06
#: stable directions blue, unstable red, as the markers of stable and unstable points
DIRECTION_COLORS = {"stable": "#1f77b4", "unstable": "#d62728"}


def saddle_segments(c: Canvas) -> list[tuple[str, np.ndarray]]:
    """(``stable`` or ``unstable``, 2x2 ends) of the short line through each saddle along
    each eigenvector, as long on screen in every direction. A field's stable directions
    have eigenvalue < 0 (the flow comes in along them); for a scalar f they are those of
    the gradient-descent flow, x' = -grad f: the Hessian's positive eigenvalues."""
    found = c.field.marks.critical
    if found is None or found.vec is None:
        return []
    (x0, x1), (y0, y1) = c.ax.get_xlim(), c.ax.get_ylim()
    span = np.array([x1 - x0, y1 - y0])
    w, h = c.box.width, c.box.height
    half = max(0.3, DIRECTION_LENGTH * min(w, h))  # inches: clear of the marker
    out = []
    for p in np.flatnonzero(found.types == "saddle"):
        for i in range(found.vec.shape[1]):
            v = found.vec[p, i]
            if not np.isfinite(v).all():
                continue
            lam = float(np.real(found.eig[p, i]))
            sinks = lam > 0 if found.kind == "scalar" else lam < 0
            shown = v / span * np.array([w, h])  # inches per unit of v
            d = v * half / float(np.hypot(*shown))
            ends = np.array([found.X[p] - d, found.X[p] + d])
            out.append(("stable" if sinks else "unstable", ends))
    return out


def _saddle_directions(c: Canvas) -> None:
    labelled: set[str] = set()
    for which, ends in saddle_segments(c):
        label = f"{which} direction" if which not in labelled else None
        labelled.add(which)
        c.ax.plot(ends[:, 0], ends[:, 1], color="white", lw=4.0, alpha=0.7, zorder=5.8,
                  solid_capstyle="butt")
        line, = c.ax.plot(ends[:, 0], ends[:, 1], color=DIRECTION_COLORS[which], lw=2.0,
                          zorder=5.9, solid_capstyle="butt", label=label)
        line.set_gid(f"{which} direction")  # found again by tests and by the SVG's ids


def draw_paths(c: Canvas) -> None:
    curve = c.field.kind == "curve"
    i = 0
    for method, path in c.field.marks.paths:
        for r in np.unique(path.run):
            rows = path.run == r
            x = path.X[rows, 0]
            y = path.f[rows] if curve else path.X[rows, 1]
            i += 1
            color = f"C{i % 10}"
            # each path a little thinner than the one before: paths that share a stretch
            # (a valley floor) stay visible side by side
            c.ax.plot(x, y, color=color, lw=max(1.0, 2.8 - 0.6 * (i - 1)), zorder=5,
                      marker="." if len(x) < 60 else None, ms=3,
                      label=f"{method} from {point_text(path.X[rows][0])}")
            c.ax.plot(x[:1], y[:1], marker="o", ms=8, mfc="white", mec=color, mew=1.8,
                      zorder=6)
            c.ax.plot(x[-1:], y[-1:], marker="X", ms=9, mfc=color, mec="white", mew=1.0,
                      zorder=6)


def draw_flows(c: Canvas) -> None:
    flows = c.field.marks.flows
    for i, r in enumerate(np.unique(flows.run)):
        rows = flows.run == r
        x, y = flows.X[rows, 0], flows.X[rows, 1]
        label = f"flow, t = {flows.t[rows][0]:g} to {flows.t[rows][-1]:g}" if i == 0 else None
        c.ax.plot(x, y, color="white", lw=3.0, alpha=0.6, zorder=4)  # a halo on any colour
        c.ax.plot(x, y, color="black", lw=1.3, zorder=5, label=label)
        c.ax.plot(x[:1], y[:1], marker="o", ms=6, mfc="white", mec="black", zorder=6)
        if len(x) > 1:
            c.ax.annotate("", xy=(x[-1], y[-1]), xytext=(x[-2], y[-2]), zorder=6,
                          arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 1.3})


#: the colours of path, disc and box, in order (black first, on a white halo: clear
#: on every colour map, the diverging ones of curl and divergence too)
TRACED_COLORS = ["#000000", "#ff7f0e", "#e377c2", "#17becf", "#bcbd22", "#9467bd",
                 "#8c564b", "#2ca02c"]


def draw_traced(c: Canvas) -> None:
    """Each path over the plane with a white halo, a hollow start marker and an
    arrowhead at its end along its last step (the orientation of a circulation). The
    line's gid is ``traced-K`` and the arrow's ``traced-K-direction`` (K from 1), found
    again by tests and by the SVG's ids."""
    for k, drawn in enumerate(m for m in c.field.marks.traced if not m.surface):
        x, y = drawn.points[:, 0], drawn.points[:, 1]
        color = TRACED_COLORS[k % len(TRACED_COLORS)]
        c.ax.plot(x, y, color="white", lw=4.0, alpha=0.7, zorder=5.1, solid_capstyle="round")
        line, = c.ax.plot(x, y, color=color, lw=2.0, zorder=5.2, label=drawn.label)
        line.set_gid(f"traced-{k + 1}")
        c.ax.plot(x[:1], y[:1], marker="o", ms=7, mfc="white", mec=color, mew=1.8,
                  zorder=5.3)
        ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
        if len(ok) > 1:
            end, before = ok[-1], ok[-2]
            arrow = c.ax.annotate("", xy=(x[end], y[end]), xytext=(x[before], y[before]),
                                  zorder=5.4, arrowprops={
                                      "arrowstyle": "-|>", "color": color, "lw": 2.0,
                                      "mutation_scale": 22, "shrinkA": 0, "shrinkB": 0})
            arrow.set_gid(f"traced-{k + 1}-direction")
            if arrow.arrow_patch is not None:  # what the SVG draws
                arrow.arrow_patch.set_gid(f"traced-{k + 1}-direction")


def draw_legend(c: Canvas) -> None:
    # the legend itself is placed by figures.put_legend, after every overlay
    if c.field.marks.notes:
        c.drawn.notes.extend(c.field.marks.notes)
