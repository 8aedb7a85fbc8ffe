"""The library's entry points as a user calls them: ``gradcli.evaluate``, ``propagate``,
``critical``, ``descend`` and ``flow``, returning results that show themselves.

Why a module of its own: the numbers come from the evaluation layer, which must not
import the output layer, and how a result looks (an HTML table in Jupyter, a short
``repr``, ``to_pandas()``) is output (``gradcli.output.display``). These functions sit
above both: they call the evaluation and wrap what it returns in the display types,
which change nothing else (an evaluate result is still the dict of block arrays it always
was). ``gradcli.plot`` is the plot package's own (``gradcli.plot.picture``).

Parameters are the library's: ``at`` (held values, or the points), ``grid``
(``{"x": (start, stop, count)}``), ``points``, ``start`` (one point or a list of them)
and ``start_grid`` (a lattice of starts, ``{"x": (start, stop, count)}``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.evaluation import evaluate as _evaluate
from gradcli.output.display import EvaluatedView, PropagatedView, RowTable
from gradcli.request.binding import bind_grid
from gradcli.uncertainty.propagation import propagate as _propagate

__all__ = ["evaluate", "propagate", "critical", "descend", "flow"]


@contextmanager
def _warnings_kept() -> Iterator[list[str]]:
    """The expression's warnings raised inside the block, as the command line's
    ``warning: ...`` lines (each once), for the result's ``notes``; every warning is
    still issued to the caller as usual, after the block."""
    import warnings

    from gradcli.lang import ExpressionWarning

    kept: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield kept
    for w in caught:
        line = f"warning: {w.message}"
        if issubclass(w.category, ExpressionWarning) and line not in kept:
            kept.append(line)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _with_warnings(fn: Any) -> Any:
    """``fn``'s result with the expression's warnings first in its ``notes``, where the
    command line says them (before the notes of the run)."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with _warnings_kept() as kept:
            result = fn(*args, **kwargs)
        result.notes[:0] = kept
        return result

    return wrapped


@functools.wraps(_evaluate)
def evaluate(*args: Any, **kwargs: Any) -> EvaluatedView:
    with _warnings_kept() as kept:
        evaluated = _evaluate(*args, **kwargs)
    return EvaluatedView(evaluated, kept)


evaluate.__doc__ = (_evaluate.__doc__ or "") + """
    The result shows itself in Jupyter as the terminal's table (``_repr_html_``), has a
    short ``repr`` and ``to_pandas()``.
    """


@functools.wraps(_propagate)
def propagate(*args: Any, **kwargs: Any) -> PropagatedView:
    expression = args[0] if args else kwargs.get("expression", "")
    with _warnings_kept() as kept:
        propagated = _propagate(*args, **kwargs)
    propagated.notes[:0] = kept  # said first on the command line too
    return PropagatedView(propagated, f"propagate {expression}")


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


@_with_warnings
def critical(expression: str, grid: Mapping[str, Any] | None = None, *,
             points: Mapping[str, Any] | None = None,
             at: Mapping[str, Any] | None = None,
             max_points: int = DEFAULT_MAX_POINTS, track: str | None = None,
             units: Mapping[str, str] | None = None,
             to: Mapping[str, str] | None = None) -> RowTable:
    """The critical points of a scalar formula f (where ∇f = 0) or a vector field F
    (where F = 0), found by damped Newton from seeds and classified, as ``gradcli
    critical`` does: ``grid`` samples seeds and bounds the search box (``{"x": (-3, 3,
    13), "y": (-3, 3, 13)}``), or ``points`` gives seeds (``{"x": array, "y": array}``);
    ``at`` holds more variables fixed. Returns a :class:`RowTable` with the command's
    columns: the point, ``f``, ``|grad f|``, ``eig[i]`` (or ``|F|``, ``re[i]``,
    ``im[i]``), ``vec[i][k]``, ``type``; ``track="p"`` (a parameter held by ``at``) adds
    ``dx/dp``..., how each point moves with p. ``units``/``to`` as for ``evaluate``: the
    point in its variables' units, f in its own, the eigenvalues in unit(f)/unit(x)²."""
    from gradcli.fields.notes import critical_notes

    found, columns, box = critical_points(expression, grid, points=points, at=at,
                                          max_points=max_points, track=track, units=units,
                                          to=to)
    return RowTable(columns, f"critical points of {expression}",
                    _said(critical_notes(found, box)))


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


def _said(notes: list[str]) -> list[str]:
    """The fields' notes (the command line prints the same lines) in the library's names."""
    from gradcli.errors import render_references

    return [render_references(line) for line in notes]


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


@_with_warnings
def descend(expression: str, start: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
            = None, *, start_grid: Mapping[str, Any] | None = None,
            at: Mapping[str, Any] | None = None, method: str = "gd", steps: int | None = None,
            tol: float | None = None, every: int = 1, max_points: int = DEFAULT_MAX_POINTS,
            units: Mapping[str, str] | None = None, to: Mapping[str, str] | None = None,
            **hyper: Any) -> RowTable:
    """Descent paths of a scalar f from ``start`` (``{"x": -1.2, "y": 1}`` or a list of
    points) or from every point of ``start_grid``, as ``gradcli descend`` runs them:
    ``method`` (gd, momentum, adam, adamw, rmsprop, newton) with torch.optim's
    hyper-parameters by name (``lr=``, ``momentum=``, ``betas=``...), at most ``steps``
    updates (default 1000), stopping where |grad f| <= ``tol``, recording every
    ``every``-th step. Returns a :class:`RowTable` with the command's columns (``run``
    with several starts, ``step``, the point, ``f``, ``|grad f|``); its ``notes`` say
    why the runs stopped. ``units``/``to`` as for ``evaluate``: the path in its variables'
    units, f in its own, |grad f| in unit(f)/unit(x)."""
    from gradcli.evaluation.request_units import critical_units
    from gradcli.fields import defaults
    from gradcli.fields.notes import descend_notes
    from gradcli.fields.rows import descend_rows

    held = dict(at or {})
    steps = defaults.STEPS if steps is None else _whole(steps, "steps", 0)
    every = _whole(every, "every", 1)
    starts = _starts(start, start_grid, held, max_points, units)
    path, function, chosen = descend_paths(expression, starts, held, method=method,
                                           steps=steps, tol=tol, every=every,
                                           max_points=max_points, units=units, to=to,
                                           **hyper)
    many = len(starts) > 1 or starts.lattice
    rows = critical_units(descend_rows(path, many), function)
    return RowTable(rows, f"descend ({method}) on {expression}",
                    _said(descend_notes(path, tol, steps, chosen.maximize)))


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


@_with_warnings
def flow(expression: str, start: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
         = None, *, start_grid: Mapping[str, Any] | None = None,
         at: Mapping[str, Any] | None = None, t: Any = None, method: str = "rk4",
         every: int = 1, tol: float | None = None, box: Mapping[str, Any] | None = None,
         rtol: float | None = None, atol: float | None = None,
         max_points: int = DEFAULT_MAX_POINTS, units: Mapping[str, str] | None = None,
         to: Mapping[str, str] | None = None) -> RowTable:
    """Trajectories x' = F(x) of a vector field (or -grad f of a scalar f) from ``start``
    or ``start_grid``, as ``gradcli flow`` integrates them: over the times ``t``
    (``(t0, t1, count)`` or ``"0:20:2001"``; default 0 to 10, 1001 times) by ``method``
    (rk4, euler, dopri5 with ``rtol``/``atol``), recording every ``every``-th time; a run
    ends where |F| <= ``tol`` or where it leaves ``box`` (``{"x": (-5, 5)}``). Returns a
    :class:`RowTable` with the command's columns (``run`` with several starts, ``t``,
    the point, ``|F|``). ``units``/``to`` as for ``evaluate``, and ``units={"t": "s"}``
    the time's: each component of F must be in unit(x)/unit(t) or convertible to it
    (without t's unit, the time's unit is unit(x)/unit(F))."""
    from gradcli.fields import defaults
    from gradcli.fields.flow import TimeGrid
    from gradcli.fields.rows import flow_rows
    from gradcli.fields.starts import parse_times

    if method != "dopri5" and (rtol is not None or atol is not None):
        raise EvaluationError(f"rtol and atol are dopri5's tolerances: add "
                              f"{ref('method', python=repr('dopri5'))}")
    held = dict(at or {})
    every = _whole(every, "every", 1)
    if t is not None and not isinstance(t, str):  # (t0, t1, count): read as the text is
        if not isinstance(t, (tuple, list)) or len(t) != 3:
            raise EvaluationError(f"{ref('t', python='(0, 10, 1001)')} takes (start, "
                                  f"stop, count) or text such as '0:20:2001', not {t!r:.40}")
        t = ":".join(str(v) for v in t)
    times = defaults.TIMES if t is None else parse_times(t)
    grid = TimeGrid.of(times)
    starts = _starts(start, start_grid, held, max_points, units)
    paths = flow_paths(expression, starts, held, grid, method=method, every=every, tol=tol,
                       box=dict(box) if box is not None else None, rtol=rtol, atol=atol,
                       max_points=max_points, units=units, to=to)
    from gradcli.fields.notes import flow_notes

    many = len(starts) > 1 or starts.lattice
    notes, diverged = flow_notes(paths, tol, many, method, grid.t0, grid.t1)
    from gradcli.evaluation.request_units import flow_units

    return RowTable(flow_units(flow_rows(paths, many), paths.function, paths.time),
                    f"flow ({method}) of {expression}",
                    _said(notes + ([diverged] if diverged else [])))


def implicit(expression: str, solve_for: str | Sequence[str],
             at: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
             wrt: str | Sequence[str] | None = None, order: int = 1,
             tol: float | None = None, max_points: int = DEFAULT_MAX_POINTS,
             units: Mapping[str, str] | None = None,
             to: Mapping[str, str] | None = None) -> RowTable:
    """The derivatives of y(x) defined by F(x, y) = 0, as ``gradcli implicit``: ``at`` is
    a point on the curve giving every variable (or a list of points, or a mapping of
    equal-length arrays), ``solve_for`` the unknowns (``"y"``, or ``"y,z"`` for a
    system ``[F1, F2]``), ``wrt`` the independent variables (default: the others),
    ``order`` the highest d^k y/dx^k (one independent variable), ``tol`` how far from 0
    |F| may be (1e-9), ``max_points`` the most points, ``units``/``to`` physical units
    (dy/dx in unit(y)/unit(x)). Returns a :class:`RowTable`: the variables, ``|F|``,
    ``dy/dx``...
    """
    from gradcli.fields.implicit import TOL, implicit_columns

    def names(value: Any) -> list[str] | None:
        if value is None:
            return None
        items = [value] if isinstance(value, str) else list(value)
        return [n.strip() for item in items for n in str(item).split(",") if n.strip()]

    if isinstance(at, Mapping):
        sizes = {np.size(v) for v in at.values()}
        if any(np.ndim(v) > 1 for v in at.values()) or len(sizes) > 1:
            raise EvaluationError(f"{ref('at')}: one number per variable, or arrays of one "
                                  "length (one point each)")
        count = sizes.pop() if sizes else 1
        if count > max_points:
            raise EvaluationError(f"{count:,} points, over the limit of {max_points:,} "
                                  f"({ref('max_points')})")
        points = [{n: np.ravel(v)[i] if np.ndim(v) else v for n, v in at.items()}
                  for i in range(count if any(np.ndim(v) for v in at.values()) else 1)]
    else:
        points = [dict(p) for p in at]
    columns = implicit_columns(expression, names(solve_for) or [], points, order=order,
                               tol=TOL if tol is None else tol, wrt=names(wrt),
                               max_points=max_points, units=units, to=to)
    return RowTable(columns, f"implicit derivatives of {', '.join(names(solve_for) or [])} "
                    f"in {expression}")


def curvilinear(expression: str, what: str, coords: str, *,
                at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
                grid: Mapping[str, Any] | None = None,
                points: Mapping[str, Any] | None = None,
                fixed: Mapping[str, Any] | None = None) -> RowTable:
    """``what`` (``grad``, ``div``, ``curl`` or ``laplacian``) in polar, cylindrical or
    spherical coordinates, as ``gradcli WHAT --coords COORDS``: the variables are the
    coordinates (``"spherical"``: r, theta, phi with theta from +z; ``"spherical:rho,t,p"``
    renames them), a field's components and the results are physical ones (orthonormal
    basis). ``at``, ``grid``, ``points`` and ``fixed`` mean what they mean for
    ``evaluate``. Returns a :class:`RowTable`: the variables, ``f`` (or ``f[i]``), then
    ``grad_r``..., ``div``, ``curl``/``curl_r``... or ``laplacian``, one row per point."""
    from gradcli.fields.curvilinear import curvilinear_columns

    where = {k: v for k, v in (("at", at), ("grid", grid), ("points", points),
                               ("fixed", fixed)) if v is not None}
    return RowTable(curvilinear_columns(expression, what, coords, where),
                    f"{what} of {expression} in {coords} coordinates")


def integrate(expression: str, path: str | None = None, *, disc: str | None = None,
              box: str | None = None, surface: str | None = None, ball: str | None = None,
              flux: bool = False, check: str | None = None,
              tol: float | None = None, wrt: str | Sequence[str] | None = None,
              at: Mapping[str, Any] | None = None, units: Mapping[str, str] | None = None,
              to: Mapping[str, str] | None = None) -> RowTable:
    """A line integral, as ``gradcli integrate``: the work ∫F·dr of a field ``[P, Q(, R)]``
    along ``path`` (``"t: [cos(t), sin(t)], t=0:2pi"``; its circulation when closed), the
    integral ∫f ds of a scalar f, or with ``flux=True`` the flux of a plane field through
    the path; ``disc="cx,cy,R"`` or ``box="x0:x1,y0:y1"`` take that region's
    counter-clockwise boundary as the path, and ``check="green"`` adds the area integral
    of Green's theorem; ``surface="u,v: [x, y, z], u=0:1, v=0:1"`` (or ``ball=
    "cx,cy,cz,R"``, its sphere outward) gives the flux of a field [P, Q, R] through it,
    and ``check="divergence"`` (a ball) the volume integral of div F; ``check="stokes"``
    (a surface) gives the circulation around its boundary and the flux of curl F. ``tol`` is the
    quadrature's relative tolerance (1e-10), ``wrt`` the field's variables the path's
    components pair with (x, y, z), ``at`` holds others fixed, ``units``/``to`` physical
    units (the result in unit(F)·unit(x), a surface's flux unit(F)·unit(x)²; the path's
    parameter is a pure number). Returns a one-row
    :class:`RowTable` with the result and its error estimate."""
    from gradcli.fields.integrate import TOL, integrate_columns

    names = None if wrt is None else [n.strip() for n in (
        wrt.split(",") if isinstance(wrt, str) else wrt)]
    columns, notes = integrate_columns(expression, path, disc=disc, box=box,
                                       surface=surface, ball=ball, flux=flux,
                                       check=check, tol=TOL if tol is None else tol,
                                       wrt=names, fixed=at, units=units, to=to)
    return RowTable(columns, f"integral of {expression}", _said(notes))
