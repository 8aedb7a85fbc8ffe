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

from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.evaluation import evaluate as _evaluate
from gradcli.execute import execute
from gradcli.output.display import EvaluatedView, PropagatedView, RowTable
from gradcli.request import Request
from gradcli.uncertainty.propagation import propagate as _propagate

__all__ = ["evaluate", "propagate", "formula", "critical", "descend", "flow", "implicit",
           "curvilinear", "integrate"]


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
    import inspect

    given = inspect.signature(_propagate).bind(*args, **kwargs).arguments
    expression, at = given.pop("expression"), given.pop("at", None)
    with _warnings_kept() as kept:
        propagated = execute(Request(expression, "propagate", at=at, parameters=given))
    propagated.notes[:0] = kept  # said first on the command line too
    return PropagatedView(propagated, f"propagate {expression}")


def formula(expression: str, what: str = "grad", wrt: Any = None, form: str = "expr", *,
            at: Any = None, direction: Any = None, order: int | None = None,
            unit: bool = False, vector: Any = None, memory: Any = None) -> Any:
    """The derivatives ``what`` computes, as text in gradcli's language: ``{column name:
    formula}`` (``form="latex"``: LaTeX; ``form="program"``: grad's backward program as
    one text). The parameters are those of
    :func:`gradcli.formulas.derivative_formulas.formula`; the request runs through the
    executor, as ``--formula`` does (the symbolic algebra is imported only then)."""
    return execute(Request(expression, "formula", at=at, memory=memory,
                           parameters=_given(computation=what, wrt=wrt, form=form,
                                             direction=direction, order=order, unit=unit,
                                             vector=vector)))


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
    out = execute(Request(expression, "critical", grid=grid, points=points, fixed=at,
                          max_points=max_points,
                          parameters=_given(track=track, units=units, to=to)))
    return RowTable(out.columns, out.title, _said(out.notes))


def _given(**parameters: Any) -> dict[str, Any]:
    """A request's parameters: those given (None is "not given")."""
    return {name: value for name, value in parameters.items() if value is not None}


def _said(notes: list[str]) -> list[str]:
    """The fields' notes (the command line prints the same lines) in the library's names."""
    from gradcli.errors import render_references

    return [render_references(line) for line in notes]


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
    out = execute(Request(expression, "descend", fixed=at, max_points=max_points,
                          parameters=_given(start=start, start_grid=start_grid,
                                            method=method, steps=steps, tol=tol,
                                            every=every, units=units, to=to, **hyper)))
    return RowTable(out.columns, out.title, _said(out.notes))


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
    out = execute(Request(expression, "flow", fixed=at, max_points=max_points,
                          parameters=_given(start=start, start_grid=start_grid, t=t,
                                            method=method, every=every, tol=tol, box=box,
                                            rtol=rtol, atol=atol, units=units, to=to)))
    diverged = out.facts.get("diverged")
    return RowTable(out.columns, out.title, _said(out.notes + ([diverged] if diverged else [])))


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
    out = execute(Request(expression, "implicit", at=at, max_points=max_points,
                          parameters=_given(solve_for=solve_for, wrt=wrt, order=order,
                                            tol=tol, units=units, to=to)))
    return RowTable(out.columns, out.title)


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
    out = execute(Request(expression, "curvilinear", at=at, grid=grid, points=points,
                          fixed=fixed, parameters={"operator": what, "coords": coords}))
    return RowTable(out.columns, out.title)


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
    out = execute(Request(expression, "integrate", fixed=at,
                          parameters=_given(path=path, disc=disc, box=box, surface=surface,
                                            ball=ball, flux=flux or None, check=check,
                                            tol=tol, wrt=wrt, units=units, to=to)))
    return RowTable(out.columns, out.title, _said(out.notes))
