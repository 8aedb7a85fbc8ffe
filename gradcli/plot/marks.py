"""Where the field leads, for the pictures: critical points, descent paths, flows, basins.

numpy only: the numbers come from ``gradcli.fields`` (the same code as
``gradcli critical``, ``descend`` and ``flow``), computed once per picture and kept on
the Field (``Field.marks``) for every backend to draw: the overlays of ``figures.py``
(``marks_draw.py``) and the interactive page (``marks_page.py``).

* ``mark_critical``: seeds are the plot's grid (at most 50 per axis, 400 along a curve),
  the box is the plot's.
* ``path_from``: one descent per point and ``method``, every step kept.
* ``flow_from``: RK4 over ``t`` (a scalar f flows along −∇f).
* ``basins``: a descent from every grid point (newton unless ``method`` says
  otherwise); each point takes the label of the critical point nearest its end, when that
  is within 2 % of the box's diagonal (else it has none: drawn blank). The critical
  points come from the grid's seeds and the descents' ends, so a minimum just outside
  the box still names its basin.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.fields.critical import CriticalPoints, find_critical
from gradcli.fields.descend import Path, descend, row_limit
from gradcli.fields.flow import Trajectories, integrate
from gradcli.fields.function import FieldFunction
from gradcli.fields.starts import from_points
from gradcli.plot.data import Field
from gradcli.plot.options import PlotOptions
from gradcli.plot.traced import Traced, given, trace

__all__ = ["Marks", "Basins", "with_marks", "point_text", "wanted", "MAX_BASIN_POINTS"]

SEEDS_PER_AXIS, CURVE_SEEDS = 50, 400
MAX_BASIN_POINTS = 250_000
BASIN_TOL = 0.02


@dataclass
class Basins:
    """``labels``: the grid's shape, the index of the point each grid point's descent
    reaches (nan: none); ``points`` (K, 2) those points; ``method`` the optimiser."""

    labels: np.ndarray
    points: np.ndarray
    method: str


@dataclass
class Marks:
    """What is drawn on top of the base picture (each None when not asked for)."""

    critical: CriticalPoints | None = None
    paths: list[tuple[str, Path]] = field(default_factory=list)  # (method, its paths)
    flows: Trajectories | None = None
    basins: Basins | None = None
    traced: list[Traced] = field(default_factory=list)  # path, surface, ... (traced.py)
    notes: list[str] = field(default_factory=list)


def wanted(opts: PlotOptions) -> bool:
    """Whether the options ask for any of these overlays."""
    return bool(opts.mark_critical or opts.path_from or opts.flow_from or opts.basins
                or given(opts))


def point_text(p: np.ndarray, digits: int = 4) -> str:
    """``(3, 2)``: a point for a legend, ``digits`` significant digits."""
    return "(" + ", ".join(f"{v:.{digits}g}" for v in np.asarray(p, dtype=float) + 0.0) + ")"


def with_marks(fl: Field, opts: PlotOptions,
               max_points: int = DEFAULT_MAX_POINTS) -> Field:
    """``fl`` with its ``marks`` computed for ``opts`` (``fl`` itself when none are asked)."""
    if not wanted(opts):
        return fl
    marks = Marks(traced=trace(fl.names, fl.held, opts))
    for drawn in marks.traced:
        bad = int(np.count_nonzero(~np.isfinite(drawn.points)))
        if bad:
            marks.notes.append(f"--{drawn.kind} {drawn.spec}: {bad:,} non-finite "
                               "coordinates (drawn with gaps)")
    if not (opts.mark_critical or opts.path_from or opts.flow_from or opts.basins):
        return replace(fl, marks=marks)
    function = FieldFunction(fl.expression, {n: float(c[0]) for n, c in
                                             zip(fl.names, fl.coords, strict=True)}, fl.held)
    if opts.mark_critical:
        if fl.kind == "curve" and len(fl.values) > 1:
            raise EvaluationError(f"{ref('mark_critical')} marks the critical points of one scalar "
                                  "f(x); this formula has several components")
        marks.critical = _critical(fl, function)
        if not len(marks.critical):
            marks.notes.append(f"{ref('mark_critical')}: no critical points inside the picture")
    if opts.path_from:
        if function.kind != "scalar":
            raise EvaluationError(f"{ref('path_from')} descends a scalar f; for a vector "
                                  f"field's trajectories use {ref('flow_from')}")
        starts = _starts(fl, opts.path_from, "path_from")
        for settings in opts.descents("gd"):
            row_limit(len(starts), opts.steps, 1, max_points)
            path = descend(function, starts, settings, steps=opts.steps, tol=opts.tol)
            marks.paths.append((settings.method, path))
            for r in np.flatnonzero(path.stop == "diverged"):
                marks.notes.append(f"{ref('path_from', text=point_text(starts[r]))} by "
                                   f"{settings.method}:"
                                   f" diverged at step {int(path.stop_step[r])} (drawn up to "
                                   "there)")
    if opts.flow_from:
        times = opts.times()
        starts = _starts(fl, opts.flow_from, "flow_from")
        marks.flows = integrate(function, starts, times)
        for r in np.flatnonzero(marks.flows.diverged):
            marks.notes.append(f"{ref('flow_from', text=point_text(starts[r]))}: leaves the finite "
                               f"numbers at t = {marks.flows.t_end[r]:g}")
    if opts.basins:
        if function.kind != "scalar":
            raise EvaluationError(f"{ref('basins')} colours where descent on a scalar f "
                                  "leads; this formula is a vector field")
        marks.basins = _basins(fl, function, opts)
        if not len(marks.basins.points):
            marks.basins = None
            marks.notes.append(f"{ref('basins')}: no descent from the grid ends at a critical "
                               f"point (drawn without basins; try more {ref('steps')} or "
                               f"another {ref('method')})")
    return replace(fl, marks=marks)


def _box(fl: Field) -> tuple[np.ndarray, np.ndarray]:
    ends = np.array([[c[0], c[-1]] for c in fl.coords], dtype=float)
    return ends.min(axis=1), ends.max(axis=1)


def _seeds(fl: Field) -> np.ndarray:
    most = CURVE_SEEDS if len(fl.names) == 1 else SEEDS_PER_AXIS
    axes = [c[np.unique(np.linspace(0, len(c) - 1, min(len(c), most)).round().astype(int))]
            for c in fl.coords]
    return np.stack([g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")], axis=1)


def _critical(fl: Field, function: FieldFunction) -> CriticalPoints:
    return find_critical(function, _seeds(fl), _box(fl))


def _starts(fl: Field, points: tuple[dict[str, Any], ...], flag: str) -> np.ndarray:
    for p in points:
        if set(p) != set(fl.names):
            want = ",".join(f"{n}=..." for n in fl.names)
            raise EvaluationError(f"{ref(flag, text=','.join(p))}: give a value for each "
                                  f"drawn variable and no other: {ref(flag, text=want)}")
    return from_points([{n: p[n] for n in fl.names} for p in points]).X


def _distinct(points: np.ndarray) -> np.ndarray:
    """``points`` without repeats at 8 significant digits (descents that end together)."""
    if not len(points):
        return points
    _, first = np.unique(np.round(points, 8), axis=0, return_index=True)
    return points[np.sort(first)]


def _basins(fl: Field, function: FieldFunction, opts: PlotOptions) -> Basins:
    shape = tuple(len(c) for c in fl.coords)
    total = int(np.prod(shape))
    if total > MAX_BASIN_POINTS:
        raise EvaluationError(f"{ref('basins')} runs a descent from each of the {total:,} "
                              f"grid points, over {MAX_BASIN_POINTS:,}: use a coarser "
                              f"{ref('grid')}")
    settings = opts.descent("newton")
    grid = np.stack([g.reshape(-1) for g in np.meshgrid(*fl.coords, indexing="ij")], axis=1)
    path = descend(function, grid, settings, steps=opts.steps, tol=opts.tol,
                   every=max(opts.steps, 1))
    ends = path.ends()
    ok = (path.stop != "diverged") & np.isfinite(ends).all(axis=1)
    found = find_critical(function, _seeds(fl), more_seeds=_distinct(ends[ok]))
    labels = np.full(total, np.nan)
    lo, hi = _box(fl)
    if len(found) and ok.any():
        dist = np.sqrt(((ends[ok][:, None, :] - found.X[None, :, :]) ** 2).sum(axis=2))
        near = dist.argmin(axis=1)
        close = dist[np.arange(len(near)), near] <= BASIN_TOL * float(np.hypot.reduce(hi - lo))
        used, index = np.unique(near[close], return_inverse=True)
        picked = np.flatnonzero(ok)[close]
        labels[picked] = index
        points = found.X[used]
    else:
        points = np.zeros((0, len(fl.names)))
    return Basins(labels.reshape(shape), points, settings.method)
