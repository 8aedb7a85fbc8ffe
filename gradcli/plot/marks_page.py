"""The interactive page's version of ``marks.py``: plotly traces for critical points,
descent paths and flows, and categorical colours for basins.

Hover labels are text written here from the computed numbers (shortest round-trip
floats), as the rest of the page's are.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from gradcli.plot.data import Field
from gradcli.plot.marks import point_text

__all__ = ["add_marks"]

#: type -> (plotly marker symbol, colour), as the picture's marks_draw.MARKERS
SYMBOLS = {
    "minimum": ("triangle-down", "#1f77b4"), "maximum": ("triangle-up", "#d62728"),
    "saddle": ("x", "#ff7f0e"), "degenerate": ("diamond", "#9467bd"),
    "stable node": ("circle", "#1f77b4"), "unstable node": ("circle", "#d62728"),
    "stable focus": ("cross", "#1f77b4"), "unstable focus": ("cross", "#d62728"),
    "center": ("star", "#2ca02c"),
}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _num(v: float) -> str:
    return repr(float(v))


def _line(fl: Field, X: np.ndarray, f: np.ndarray | None) -> tuple[list, list]:
    """Plot coordinates of points of the field: (x, y) on a plane, (x, f) on a curve."""
    if fl.kind == "curve":
        return X[:, 0].tolist(), np.asarray(f, dtype=float).tolist()
    return X[:, 0].tolist(), X[:, 1].tolist()


def add_marks(fl: Field, traces: list[dict[str, Any]]) -> None:
    """Append the marks' traces to ``traces`` and recolour a basins heatmap (in place)."""
    marks = fl.marks
    if marks is None:
        return
    names = fl.names
    traces += _traced(fl)
    if marks.basins is not None and traces and traces[0].get("type") == "heatmap":
        _basins(traces[0], marks.basins)
        pts = marks.basins.points
        traces.append({"type": "scatter", "mode": "markers", "name": "basin points",
                       "x": pts[:, 0].tolist(), "y": pts[:, 1].tolist(),
                       "marker": {"symbol": "star", "size": 16, "color": "white",
                                  "line": {"color": "black", "width": 1}},
                       "hoverinfo": "skip"})
    i = 0
    for method, path in marks.paths:
        for r in np.unique(path.run):
            rows = path.run == r
            x, y = _line(fl, path.X[rows], path.f[rows])
            text = [f"step {int(k)}<br>" + "<br>".join(
                f"{n} = {_num(v)}" for n, v in zip(names, p, strict=True))
                + f"<br>f = {_num(fv)}<br>|grad f| = {_num(g)}"
                for k, p, fv, g in zip(path.step[rows], path.X[rows], path.f[rows],
                                       path.gnorm[rows], strict=True)]
            i += 1
            traces.append({"type": "scatter", "mode": "lines+markers",
                           "name": html.escape(f"{method} from "
                                               f"{point_text(path.X[rows][0])}"),
                           "x": x, "y": y, "text": text,
                           "line": {"color": PALETTE[i % 10], "width": 2},
                           "marker": {"size": 3}, "hovertemplate": "%{text}<extra></extra>"})
    if marks.flows is not None:
        flows = marks.flows
        for i, r in enumerate(np.unique(flows.run)):
            rows = flows.run == r
            x, y = flows.X[rows, 0].tolist(), flows.X[rows, 1].tolist()
            text = [f"t = {_num(t)}<br>{names[0]} = {_num(a)}<br>{names[1]} = {_num(b)}"
                    for t, a, b in zip(flows.t[rows], x, y, strict=True)]
            traces.append({"type": "scatter", "mode": "lines", "name": "flow",
                           "showlegend": i == 0, "x": x, "y": y, "text": text,
                           "line": {"color": "black", "width": 1.5},
                           "hovertemplate": "%{text}<extra></extra>"})
    if marks.critical is not None:
        found = marks.critical
        for kind, (symbol, color) in SYMBOLS.items():
            pick = found.types == kind
            if not pick.any():
                continue
            x, y = _line(fl, found.X[pick], None if found.f is None else found.f[pick])
            text = [f"{kind}<br>" + "<br>".join(f"{n} = {_num(v)}"
                                                for n, v in zip(names, p, strict=True))
                    for p in found.X[pick]]
            traces.append({"type": "scatter", "mode": "markers",
                           "name": f"{kind} ({int(pick.sum())})", "x": x, "y": y,
                           "text": text, "hovertemplate": "%{text}<extra></extra>",
                           "marker": {"symbol": symbol, "size": 12, "color": color,
                                      "line": {"color": "black", "width": 1}}})
        if fl.kind != "curve":
            traces += _saddle_directions(fl, found)


#: stable directions blue, unstable red, as in the picture (marks_draw.DIRECTION_COLORS)
DIRECTIONS = {"stable": "#1f77b4", "unstable": "#d62728"}


def _saddle_directions(fl: Field, found: Any) -> list[dict[str, Any]]:
    """A short line through each saddle along each eigenvector, 6 % of the plane's
    smaller side each way as the page shows it: blue the stable directions (a field's
    negative eigenvalues, a scalar's positive ones: gradient descent comes in along
    them), red the unstable ones."""
    from gradcli.plot.layout import choose_aspect

    if found.vec is None:
        return []
    (x, y) = fl.coords[:2]
    span = np.array([abs(x[-1] - x[0]), abs(y[-1] - y[0])])
    aspect, _ = choose_aspect(fl.names, (float(span[0]), float(span[1])), None)
    shown = span if aspect == "equal" else np.array([1.0, 1.0]) * span.max()
    half = 0.06 * float(min(shown))
    lines: dict[str, tuple[list[Any], list[Any]]] = {"stable": ([], []), "unstable": ([], [])}
    for p in np.flatnonzero(found.types == "saddle"):
        for i in range(found.vec.shape[1]):
            v = found.vec[p, i]
            if not np.isfinite(v).all():
                continue
            lam = float(np.real(found.eig[p, i]))
            which = "stable" if (lam > 0 if found.kind == "scalar" else lam < 0) else \
                "unstable"
            d = v / span * shown  # on screen, then back to data units of length ``half``
            d = v * half / float(np.hypot(*d))
            xs, ys = lines[which]
            xs += [float(found.X[p, 0] - d[0]), float(found.X[p, 0] + d[0]), None]
            ys += [float(found.X[p, 1] - d[1]), float(found.X[p, 1] + d[1]), None]
    return [{"type": "scatter", "mode": "lines", "name": f"{which} direction", "x": xs,
             "y": ys, "line": {"color": DIRECTIONS[which], "width": 2.5},
             "hoverinfo": "skip"} for which, (xs, ys) in lines.items() if xs]


def _basins(heatmap: dict[str, Any], basins: Any) -> None:
    """A stepped colour scale (one colour per basin) and the colorbar naming the points."""
    k = len(basins.points)
    if k == 0:
        return
    colors = [PALETTE[i % 10] for i in range(k)]
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / k, color], [(i + 1) / k, color]]
    labels = np.asarray(basins.labels, dtype=float).T
    heatmap |= {"z": np.where(np.isfinite(labels), labels, None).tolist(),
                "zmin": -0.5, "zmax": k - 0.5, "colorscale": scale, "reversescale": False,
                "colorbar": {"title": {"text": f"basin ({basins.method})", "side": "right"},
                             "tickvals": list(range(k)),
                             "ticktext": [point_text(p, 3) for p in basins.points]}}


def _traced(fl: Field) -> list[dict[str, Any]]:
    """path, disc, box as lines (in space over a 3-D field) with a start marker and
    an arrowhead at the end along the last step; surface and ball as a translucent
    surface with a cone along r_u x r_v at its centre. Each trace's ``meta`` names what it
    draws (``traced-K``, ``traced-K-start``, ``traced-K-direction``), for tests."""
    from gradcli.plot.layout import json_numbers
    from gradcli.plot.marks_draw import TRACED_COLORS

    out: list[dict[str, Any]] = []
    space = len(fl.names) == 3
    for k, drawn in enumerate(fl.marks.traced):
        color = TRACED_COLORS[k % len(TRACED_COLORS)]
        gid, name = f"traced-{k + 1}", html.escape(drawn.label)
        if drawn.surface:
            x, y, z = (json_numbers(a) for a in drawn.points)
            out.append({"type": "surface", "name": name, "meta": gid, "x": x, "y": y, "z": z,
                        "opacity": 0.45, "showscale": False, "showlegend": True,
                        "colorscale": [[0, color], [1, color]], "hoverinfo": "skip"})
            assert drawn.normal is not None
            centre, normal = drawn.normal
            out.append({"type": "cone", "name": "normal", "meta": f"{gid}-direction",
                        "x": [float(centre[0])], "y": [float(centre[1])],
                        "z": [float(centre[2])], "u": [float(normal[0])],
                        "v": [float(normal[1])], "w": [float(normal[2])], "anchor": "tail",
                        "sizemode": "scaled", "sizeref": 0.6, "showscale": False,
                        "colorscale": [[0, color], [1, color]], "hoverinfo": "skip"})
            continue
        coords = {a: json_numbers(drawn.points[:, i])
                  for i, a in enumerate("xyz"[:len(fl.names)])}
        param = drawn.params[0]
        text = [f"{param} = {_num(t)}" for t in drawn.samples[0]]
        kind = "scatter3d" if space else "scatter"
        out.append({"type": kind, "mode": "lines", "name": name, "meta": gid, **coords,
                    "text": text, "hovertemplate": "%{text}<extra></extra>",
                    "line": {"color": color, "width": 4 if space else 3}})
        out.append({"type": kind, "mode": "markers", "name": "start", "meta": f"{gid}-start",
                    "showlegend": False, **{a: v[:1] for a, v in coords.items()},
                    "marker": {"size": 8 if not space else 5, "color": "white",
                               "line": {"color": color, "width": 2}}, "hoverinfo": "skip"})
        ok = np.flatnonzero(np.isfinite(drawn.points).all(axis=1))
        if len(ok) < 2:
            continue
        end, before = drawn.points[ok[-1]], drawn.points[ok[-2]]
        if space:  # a cone at the end along the last step
            step = end - before
            step = step / (float(np.linalg.norm(step)) or 1.0)
            out.append({"type": "cone", "name": "direction", "meta": f"{gid}-direction",
                        "x": [float(end[0])], "y": [float(end[1])], "z": [float(end[2])],
                        "u": [float(step[0])], "v": [float(step[1])], "w": [float(step[2])],
                        "anchor": "tip", "sizemode": "scaled", "sizeref": 0.25,
                        "showscale": False, "colorscale": [[0, color], [1, color]],
                        "hoverinfo": "skip"})
        else:  # an arrow marker at the end, turned along the step from the point before
            out.append({"type": "scatter", "mode": "markers", "name": "direction",
                        "meta": f"{gid}-direction", "showlegend": False,
                        "x": [float(before[0]), float(end[0])],
                        "y": [float(before[1]), float(end[1])],
                        "marker": {"symbol": "arrow", "angleref": "previous",
                                   "size": [0, 18], "color": color,
                                   "line": {"color": color, "width": 1}},
                        "hoverinfo": "skip"})
    return out
