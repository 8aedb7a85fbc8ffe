"""Where a field leads, one request at a time: ``critical``, ``descend`` and ``flow``.

The one path of each for every front end: the library functions (``gradcli.critical``...)
and the commands build a :class:`~gradcli.request.Request` (``what`` ``critical``,
``descend`` or ``flow``; the seeds or starts, held values in ``fixed``, the rest in
``parameters`` by the library's names) and ``gradcli.execute`` runs it here
(:func:`critical_request`, :func:`descend_request`, :func:`flow_request`), returning an
:class:`~gradcli.request.Outcome`: the rows, a title and the notes (parameter
references in them, for each front end to name in its own words). A front end adds only
context that changes no value: ``unbound`` (its hint for a variable left unbound),
``progress`` and ``recording`` (the command's live JSON Lines rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request import Outcome, Request
from gradcli.request.binding import DEFAULT_MAX_POINTS, bind_grid

__all__ = ["critical_request", "descend_request", "flow_request", "critical_points",
           "descend_paths", "flow_paths"]


def _axes(grid: Mapping[str, Any], parameter: str,
          max_points: int) -> tuple[dict[str, tuple[float, float, int]], dict[str, Any]]:
    """A grid's sampled axes ``{name: (start, stop, count)}`` and its held values, read
    and checked as ``gradcli.evaluate`` reads a grid (strings such as ``"2pi"`` too)."""
    if not isinstance(grid, Mapping):
        raise TypeError(f"{parameter}= takes a mapping such as {{'x': (-2, 2, 11)}}, "
                        f"not {type(grid).__name__}")
    binding = bind_grid(grid, np.dtype(np.float64), max_points)
    axes: dict[str, tuple[float, float, int]] = {}
    held: dict[str, Any] = {}
    for name in grid:
        values = np.asarray(binding.values[name])
        if isinstance(grid[name], (tuple, list)):
            line = values.reshape(-1)
            axes[name] = (float(line[0]), float(line[-1]), int(line.size))
        else:
            held[name] = float(values.reshape(-1)[0])
    return axes, held


def _whole(value: Any, name: str, least: int) -> int:
    """A count parameter: a whole number >= ``least`` (``1e3`` is one), else an error
    naming it."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise EvaluationError(f"{name} must be a whole number >= {least}, got {value!r:.40}")
    return int(value)


def _held(at: Mapping[str, Any] | None, *given: Mapping[str, Any]) -> dict[str, Any]:
    """``at``'s values, none of them also given another way."""
    held = dict(at or {})
    for other in given:
        clash = next((n for n in other if n in held), None)
        if clash is not None:
            raise EvaluationError(f"'{clash}' is given twice (held by "
                                  f"{ref('at', clash)} and sampled or started elsewhere): "
                                  "give it once")
    return held


def critical_points(expression: str, grid: Mapping[str, Any] | None = None, *,
                    points: Mapping[str, Any] | None = None,
                    at: Mapping[str, Any] | None = None,
                    max_points: int = DEFAULT_MAX_POINTS, track: str | None = None,
                    unbound: str | None = None, units: Mapping[str, str] | None = None,
                    to: Mapping[str, str] | None = None) -> tuple[Any, Any, Any]:
    """The one path of ``critical``, for this library function and for the command
    (which reads its options' text into these parameters first): the seeds from ``grid``
    or ``points``, the search, the rows (with ``track``'s ``dx/dp`` columns), and (the
    points found, the rows, the search box or None). ``unbound`` is the hint for a
    variable left unbound (a front end's words)."""
    from gradcli.fields.critical import find_critical
    from gradcli.fields.function import FieldFunction
    from gradcli.fields.rows import critical_rows
    from gradcli.fields.starts import from_lattice

    hint: dict[str, Any] = {} if unbound is None else {"unbound": unbound}
    hint |= {k: v for k, v in (("units", units), ("to", to)) if v}

    if (grid is None) == (points is None):
        raise EvaluationError(f"give one of {ref('grid')} (seeds on a lattice, and the "
                              f"search box) or {ref('points')} (seeds)")
    held = dict(at or {})
    if grid is not None:
        axes, more = _axes(grid, "grid", max_points)
        if not axes:
            raise EvaluationError(f"critical needs at least one variable sampled by "
                                  f"{ref('grid', python=repr({'x': (-3, 3, 13)}))}")
        held = _held(at, axes) | more
        starts = from_lattice(axes, max_points)
        function = FieldFunction(expression, starts.variables, held, **hint)
        ends = np.array([v[:2] for v in axes.values()], dtype=float)
        seeds, box = starts.X, (ends.min(axis=1), ends.max(axis=1))
    else:
        assert points is not None
        arrays = {n: np.asarray(v, dtype=float) for n, v in points.items()}
        sizes = {len(a) for a in arrays.values()}
        if not arrays or len(sizes) != 1 or 0 in sizes:
            raise EvaluationError(f"{ref('points')} needs one or more columns of the same "
                                  "length, at least one seed each")
        if sum(len(a) for a in arrays.values()) > max_points * len(arrays):
            raise EvaluationError(f"more seeds than {ref('max_points')}")
        held = _held(at, arrays)
        first = {n: a[0].tolist() for n, a in arrays.items()}
        function = FieldFunction(expression, first, held, **hint)
        seeds = np.column_stack([a.reshape(len(a), -1) for a in arrays.values()])
        box = None
    found = find_critical(function, seeds, box)
    columns = critical_rows(found, function.n)
    if track is not None:  # dx*/dp by the implicit function theorem
        from gradcli.fields.implicit import tracking_columns

        kinds = columns.pop("type")  # the text column stays last
        columns |= tracking_columns(expression, found.kind, found.columns, found.X, held,
                                    track)
        columns["type"] = kinds
    from gradcli.evaluation.request_units import critical_units

    return found, critical_units(columns, function), box


def _starts(start: Any, start_grid: Mapping[str, Any] | None, held: Mapping[str, Any],
            max_points: int, units: Mapping[str, Any] | None = None) -> Any:
    from gradcli.fields.starts import from_lattice, from_points

    if (start is None) == (start_grid is None):
        raise EvaluationError(f"give one of {ref('start', python=repr({'x': 1, 'y': 1}))} "
                              f"(a point or a list of points) or "
                              f"{ref('start_grid', python=repr({'x': (-2, 2, 5)}))}")
    if start is not None:
        points = [start] if isinstance(start, Mapping) else list(start)
        if not points or not all(isinstance(p, Mapping) for p in points):
            raise TypeError("start= takes a point {'x': 1, 'y': 2} or a list of them")
        if len(points) > max_points:
            raise EvaluationError(f"{len(points):,} starts, over {ref('max_points')}")
        _held(held, points[0])
        return from_points(points, units)
    assert start_grid is not None
    axes, fixed = _axes(start_grid, "start_grid", max_points)
    if fixed:  # a value alone in a lattice is an axis of one value, as on the command line
        axes |= {n: (v, v, 1) for n, v in fixed.items()}
    _held(held, axes)
    return from_lattice(axes, max_points)


def descend_paths(expression: str, starts: Any, held: Mapping[str, Any], *,
                  method: str = "gd", steps: int, tol: float | None = None, every: int = 1,
                  max_points: int = DEFAULT_MAX_POINTS, unbound: str | None = None,
                  progress: Any = None, recording: Any = None,
                  units: Mapping[str, str] | None = None, to: Mapping[str, str] | None = None,
                  **hyper: Any) -> tuple[Any, Any, Any]:
    """The one path of ``descend``, for this library function and for the command (which
    reads its options' text into ``starts`` and ``held`` first): the optimiser's
    settings, the row bound, the function (a scalar f), the descent; returns (the paths,
    the function, the settings). ``recording(function)`` may give a callable that gets
    each recorded row as it is made (the command's stream); ``unbound`` is the hint for a
    variable left unbound (a front end's words)."""
    from gradcli.fields.descend import descend as run_descend
    from gradcli.fields.descend import row_limit
    from gradcli.fields.function import FieldFunction
    from gradcli.fields.optim import settings

    chosen = settings(method, **hyper)
    row_limit(len(starts), steps, every, max_points)
    units = {**getattr(starts, "units", {}), **(units or {})}
    hint: dict[str, Any] = {} if unbound is None else {"unbound": unbound}
    hint |= {k: v for k, v in (("units", units), ("to", to)) if v}
    function = FieldFunction(expression, starts.variables, held, **hint)
    if function.kind != "scalar":
        raise EvaluationError(f"descend needs a scalar formula f, but this one has shape "
                              f"{function.shape}: a vector field's trajectories are "
                              "gradcli flow")
    path = run_descend(function, starts.X, chosen, steps=steps, tol=tol, every=every,
                       progress=progress,
                       recorded=recording(function) if recording is not None else None)
    return path, function, chosen


def flow_paths(expression: str, starts: Any, held: Mapping[str, Any], grid: Any, *,
               method: str = "rk4", every: int = 1, tol: float | None = None,
               box: Mapping[str, Any] | None = None, rtol: float | None = None,
               atol: float | None = None, max_points: int = DEFAULT_MAX_POINTS,
               unbound: str | None = None, progress: Any = None,
               units: Mapping[str, str] | None = None,
               to: Mapping[str, str] | None = None) -> Any:
    """The one path of ``flow``, for this library function and for the command (which
    reads its options' text into ``starts``, ``held``, the time grid and ``box`` first):
    the row bound, the field function, the integration; returns the trajectories (with
    units, ``.function`` and ``.time``, the time's unit, for ``units.flow_units``).
    ``unbound`` is the hint for a variable left unbound (a front end's words); ``units``
    may give the time's unit as ``t`` (unless t is a variable)."""
    from gradcli.fields import defaults
    from gradcli.fields.flow import integrate
    from gradcli.fields.function import FieldFunction

    rows = len(starts) * ((grid.n - 1) // every + 2)
    if rows > max_points:
        raise EvaluationError(f"{len(starts):,} runs × {grid.n:,} times would write up to "
                              f"{rows:,} rows, over the limit of {max_points:,}: write "
                              f"fewer with {ref('every', text='K', python='K')}, or raise "
                              f"{ref('max_points')}")
    hint: dict[str, Any] = {} if unbound is None else {"unbound": unbound}
    units = {**getattr(starts, "units", {}), **(units or {})}
    time_unit = units.pop("t", None) if "t" not in [*starts.variables, *held] else None
    hint |= {k: v for k, v in (("units", units), ("to", to)) if v}
    function = FieldFunction(expression, starts.variables, held, **hint)
    time = None
    if function.units is not None or time_unit is not None:
        from gradcli.evaluation.request_units import flow_time

        if function.units is None:
            raise EvaluationError("flow: the time has a unit but the variables have none: "
                                  "give theirs too (units, e.g. x=m)")
        from gradcli.evaluation.request_units import norm_factors, variable_units

        function.scale, time = flow_time(function, time_unit)
        # F's components are now in unit(x_i)/unit(t): |F| in the first one's
        function.speed_weights = norm_factors(variable_units(function))
    paths = integrate(function, starts.X, grid, method=method, every=every, tol=tol,
                      box=box, progress=progress,
                      rtol=defaults.RTOL if rtol is None else rtol,
                      atol=defaults.ATOL if atol is None else atol)
    paths.function, paths.time = function, time
    return paths


def critical_request(request: Request, *, unbound: str | None = None,
                     **_: Any) -> Outcome:
    """``critical``: the seeds of ``grid`` (and its box) or ``points``, ``fixed`` held,
    ``parameters`` ``track``, ``units``, ``to``."""
    from gradcli.fields.notes import critical_notes

    p = dict(request.parameters or {})
    found, columns, box = critical_points(
        request.expression, request.grid, points=request.points, at=request.fixed,
        max_points=request.max_points, track=p.get("track"), unbound=unbound,
        units=p.get("units"), to=p.get("to"))
    return Outcome(columns, f"critical points of {request.expression}",
                   critical_notes(found, box), facts={"variables": found.columns})


def descend_request(request: Request, *, unbound: str | None = None, progress: Any = None,
                    recording: Any = None, **_: Any) -> Outcome:
    """``descend``: ``parameters`` ``start`` or ``start_grid``, ``method``, ``steps``,
    ``tol``, ``every``, ``units``, ``to`` and the optimiser's hyper-parameters by name
    (``lr``, ``momentum``...); ``fixed`` held. ``facts["diverged"]``: a run stopped being
    finite."""
    from gradcli.evaluation.request_units import critical_units
    from gradcli.fields import defaults
    from gradcli.fields.notes import descend_notes
    from gradcli.fields.rows import descend_rows

    p = dict(request.parameters or {})
    held = dict(request.fixed or {})
    method = p.pop("method", None) or "gd"
    steps = p.pop("steps", None)
    steps = defaults.STEPS if steps is None else _whole(steps, "steps", 0)
    every = _whole(p.pop("every", 1), "every", 1)
    tol, units, to = p.pop("tol", None), p.pop("units", None), p.pop("to", None)
    starts = _starts(p.pop("start", None), p.pop("start_grid", None), held,
                     request.max_points, units)
    path, function, chosen = descend_paths(
        request.expression, starts, held, method=method, steps=steps, tol=tol, every=every,
        max_points=request.max_points, unbound=unbound, progress=progress,
        recording=recording, units=units, to=to, **p)
    many = len(starts) > 1 or starts.lattice
    rows = None if recording is not None else critical_units(descend_rows(path, many),
                                                             function)
    return Outcome(rows, f"descend ({method}) on {request.expression}",
                   descend_notes(path, tol, steps, chosen.maximize),
                   facts={"variables": path.columns,
                          "diverged": bool((path.stop == "diverged").any())})


def flow_request(request: Request, *, unbound: str | None = None, progress: Any = None,
                 **_: Any) -> Outcome:
    """``flow``: ``parameters`` ``start`` or ``start_grid``, ``t`` (``(t0, t1, count)``
    or ``"0:20:2001"``), ``method``, ``every``, ``tol``, ``box``, ``rtol``, ``atol``,
    ``units``, ``to``; ``fixed`` held. ``facts["diverged"]``: the line saying a run
    stopped being finite, or None."""
    from gradcli.evaluation.request_units import flow_units
    from gradcli.fields import defaults
    from gradcli.fields.flow import MAX_TIMES, TimeGrid
    from gradcli.fields.notes import flow_notes
    from gradcli.fields.rows import flow_rows
    from gradcli.lang.spec_text import parse_times

    p = dict(request.parameters or {})
    method = p.get("method") or "rk4"
    rtol, atol, t, box = p.get("rtol"), p.get("atol"), p.get("t"), p.get("box")
    if method != "dopri5" and (rtol is not None or atol is not None):
        raise EvaluationError(f"{ref('rtol') if rtol is not None else ref('atol')} sets "
                              f"dopri5's tolerance: add "
                              f"{ref('method', text='dopri5', python=repr('dopri5'))}")
    held = dict(request.fixed or {})
    every = _whole(p.get("every", 1), "every", 1)
    if t is not None and not isinstance(t, str):  # (t0, t1, count): read as the text is
        if not isinstance(t, (tuple, list)) or len(t) != 3:
            raise EvaluationError(f"{ref('t', python='(0, 10, 1001)')} takes (start, "
                                  f"stop, count) or text such as '0:20:2001', not {t!r:.40}")
        t = ":".join(str(v) for v in t)
    grid = TimeGrid.of(defaults.TIMES if t is None else parse_times(t, MAX_TIMES))
    units, to, tol = p.get("units"), p.get("to"), p.get("tol")
    starts = _starts(p.get("start"), p.get("start_grid"), held, request.max_points, units)
    paths = flow_paths(request.expression, starts, held, grid, method=method, every=every,
                       tol=tol, box=dict(box) if box is not None else None, rtol=rtol,
                       atol=atol, max_points=request.max_points, unbound=unbound,
                       progress=progress, units=units, to=to)
    many = len(starts) > 1 or starts.lattice
    notes, diverged = flow_notes(paths, tol, many, method, grid.t0, grid.t1)
    return Outcome(flow_units(flow_rows(paths, many), paths.function, paths.time),
                   f"flow ({method}) of {request.expression}", notes,
                   facts={"variables": paths.columns, "diverged": diverged})
