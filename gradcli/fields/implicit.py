"""Implicit differentiation: the derivatives of y(x) defined by F(x, y) = 0.

By the implicit function theorem, where F(x₀, y₀) = 0 and ∂F/∂y is invertible, F = 0
defines y as a function of x near x₀ with dy/dx = -(∂F/∂y)⁻¹·∂F/∂x: one equation and one
unknown (a curve), one equation in several x (a surface, ∂y/∂xⱼ each), or a system of m
equations in m unknowns y (``[F1, F2]``). The partials are the engine's (one Jacobian per
point, through ``FieldFunction``), never differences.

Higher orders (one x): y(x₀ + t) = y₀ + y₁t + y₂t² + ... makes F(x₀ + t, y(t)) vanish
to every order. Taylor mode gives that series' coefficient k with y_k still 0, c_k; y_k
enters coefficient k only as ∂F/∂y·y_k, so y_k = -(∂F/∂y)⁻¹·c_k, and dᵏy/dxᵏ = k!·y_k.
One Taylor sweep of order k per k, over every point at once (the recorded forward pass
is per point along its first axis).

A point is checked to be on the curve (max |Fᵢ| <= ``tol``) and ∂F/∂y to be invertible
there (for one equation |∂F/∂y| > 1e-12·|∇F|; for a system its condition number below
1e12): otherwise the curve is not a graph of y over x there, and the message says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request import Outcome, Request
from gradcli.request.binding import DEFAULT_MAX_POINTS

#: the default tolerance on |F| at the point (the point's own rounding leaves ~1e-16·scale)
TOL = 1e-9
#: the highest order of implicit derivative (each order is a Taylor sweep)
MAX_ORDER = 30
#: the largest condition number of ∂F/∂y taken as invertible
MAX_CONDITION = 1e12


def _names(expression: str) -> list[str]:
    from gradcli.lang import free_variables, parse

    return list(free_variables(parse(expression)))


def _point_text(names: Sequence[str], X: np.ndarray, i: int) -> str:
    return ", ".join(f"{n}={X[j, i]:.12g}" for j, n in enumerate(names))


def implicit_columns(expression: str, solve_for: Sequence[str],
                     points: Sequence[Mapping[str, Any]], order: int = 1,
                     tol: float = TOL, wrt: Sequence[str] | None = None,
                     max_points: int = DEFAULT_MAX_POINTS,
                     units: Mapping[str, Any] | None = None,
                     to: Mapping[str, Any] | None = None) -> Any:
    """The columns of ``gradcli implicit``: the point's variables, ``|F|`` and the
    derivative of each unknown by each independent variable (``dy/dx``; with one
    independent variable and ``order`` k also ``d2y/dx2`` ... ``dky/dxk``), one row per
    point of ``points`` (each giving every variable of the formula a number). The
    independent variables are ``wrt`` (the others held at the point's values), by default
    every variable that is not an unknown. More than ``max_points`` points is an error.

    ``units`` (variable -> unit) and ``to`` (column -> unit) are the parameter table's:
    F's terms are checked to agree, and the rows say each column's unit (dy/dx in
    unit(y)/unit(x), dᵏy/dxᵏ in unit(y)/unit(x)ᵏ, |F| in unit(F)); a point's values may
    carry their unit (``V=24.79 L``)."""
    from gradcli.fields.function import FieldFunction

    unknown = list(solve_for)
    if not unknown:
        raise EvaluationError(f"name the unknown with {ref('solve_for', python=repr('y'))}")
    if len(set(unknown)) != len(unknown):
        raise EvaluationError(f"{ref('solve_for')} names a variable twice")
    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= MAX_ORDER:
        raise EvaluationError(f"{ref('order')} must be a whole number from 1 to {MAX_ORDER}")
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
        raise EvaluationError(f"{ref('tol')} must be a finite number >= 0")
    names = _names(expression)
    for n in unknown + list(wrt or ()):
        if n not in names:
            raise EvaluationError(f"'{n}' is not a variable of the formula (its variables: "
                                  f"{', '.join(names) or 'none'})")
    if wrt is not None and set(wrt) & set(unknown):
        raise EvaluationError(f"{ref('wrt')} names an unknown: differentiate by the other "
                              "variables")
    free = list(wrt) if wrt else [n for n in names if n not in unknown]
    if not free:
        raise EvaluationError("every variable of the formula is an unknown: nothing to "
                              "differentiate by (the formula needs a variable besides "
                              f"the unknowns {', '.join(unknown)})")
    if order > 1 and len(free) > 1:
        raise EvaluationError(f"{ref('order')} above 1 needs one independent variable; "
                              f"here there are {len(free)} ({', '.join(free)}): name one "
                              f"with {ref('wrt', python=repr(free[0]))} (the others are "
                              "held at the point's values)")
    if not points:
        raise EvaluationError(f"give the point on the curve with {ref('at')}")
    if len(points) > max_points:
        raise EvaluationError(f"{len(points):,} points, over the limit of {max_points:,} "
                              f"({ref('max_points')})")
    declared: dict[str, Any] = {}
    if units or to or any(_has_unit(v) for p in points[:8] for v in p.values()):
        from gradcli.errors import UnitError
        from gradcli.evaluation.request_units import split_units
        from gradcli.lang.units import parse_unit

        try:
            declared = {n: parse_unit(u, f"the unit of '{n}'") for n, u in
                        (units or {}).items()}
            points = [split_units(p, declared) for p in points]
        except UnitError as exc:
            raise EvaluationError(str(exc)) from None
    X = np.empty((len(names), len(points)))
    for i, point in enumerate(points):
        for j, n in enumerate(names):
            if n not in point:
                raise EvaluationError(f"the point needs a value of '{n}' (it is on the curve "
                                      f"only with every variable given: {', '.join(names)})")
            value = point[n]
            if np.ndim(value) != 0 or not np.isfinite(float(value)):
                raise EvaluationError(f"'{n}' must be a finite number here")
            X[j, i] = float(value)
        extra = [n for n in point if n not in names]
        if extra:
            raise EvaluationError(f"'{extra[0]}' is not a variable of the formula")
    outputs_to = {k: v for k, v in (to or {}).items() if k == "f" or k.startswith("f[")}
    function = FieldFunction(expression, {n: 0.0 for n in names}, units=declared or None,
                             to=outputs_to or None)
    count = 1 if function.shape == () else function.shape[0]
    if len(function.shape) > 1 or count != len(unknown):
        raise EvaluationError(
            f"{count} equation{'s' if count != 1 else ''} and {len(unknown)} unknown"
            f"{'s' if len(unknown) != 1 else ''} ({', '.join(unknown)}): a system F = 0 "
            "needs as many equations [F1, F2, ...] as unknowns")
    from gradcli.engine.grad_mode import quiet

    with quiet(), np.errstate(all="ignore"):
        if function.shape == ():
            F, G = function.gradient(X)
            F, J = F[None], G[None]
        else:
            F, J = function.jacobian(X)
    residual = np.max(np.abs(F), axis=0)
    off = np.flatnonzero(~(residual <= tol))
    if off.size:
        i = off[0]
        raise EvaluationError(f"the point {_point_text(names, X, i)} is not on the curve "
                              f"F = 0: |F| = {residual[i]:.3g} > {ref('tol')} {tol:g}")
    iy, ix = [names.index(n) for n in unknown], [names.index(n) for n in free]
    Jy, Jx = J[:, iy, :].transpose(2, 0, 1), J[:, ix, :].transpose(2, 0, 1)  # (N, m, ·)
    _check_invertible(Jy, J, names, unknown, free, X)
    slopes = -np.linalg.solve(Jy, Jx)  # (N, m, k)
    out: dict[str, np.ndarray] = {n: X[j].copy() for j, n in enumerate(names)}
    out["|F|"] = residual
    for a, y in enumerate(unknown):
        for b, x in enumerate(free):
            out[f"d{y}/d{x}"] = slopes[:, a, b]
    if order > 1:
        higher = _higher(function, X, Jy, slopes[:, :, 0], ix[0], iy, order)
        for a, y in enumerate(unknown):
            for q in range(2, order + 1):
                out[f"d{q}{y}/d{free[0]}{q}"] = higher[q][:, a]
    if function.units is None:
        return out
    return _with_units(out, function.units, unknown, free,
                       {k: v for k, v in (to or {}).items() if k not in outputs_to})


def _has_unit(value: Any) -> bool:
    from gradcli.evaluation.request_units import _quantity

    return not isinstance(value, (int, float, np.ndarray)) and _quantity(value) is not None


def _with_units(columns: dict[str, np.ndarray], units: Any, unknown: list[str],
                free: list[str], to: Mapping[str, Any]) -> Any:
    """The rows with each column's unit: a variable's declared unit, |F| in F's unit
    (when every equation has one), dy/dx in unit(y)/unit(x) and dᵏy/dxᵏ in
    unit(y)/unit(x)ᵏ whatever F's unit (it cancels); a column of ``to`` converted."""
    from dataclasses import replace

    from gradcli.errors import UnitError
    from gradcli.evaluation.request_units import _delta
    from gradcli.lang.units import parse_unit, registry, unit_text
    from gradcli.plan.blocks import as_result

    declared = getattr(units, "declared", units.variables)
    per = {n: declared[n] for n in columns if n in declared}
    outs = {str(u): u for u in units.outputs.values()}
    if len(outs) == 1:
        per["|F|"] = next(iter(outs.values()))
    for y in unknown:
        for x in free:
            per[f"d{y}/d{x}"] = _delta(units.of(y)) / _delta(units.of(x))
            for q in range(2, MAX_ORDER + 1):
                per[f"d{q}{y}/d{x}{q}"] = _delta(units.of(y)) / _delta(units.of(x)) ** q
    for name, wanted in to.items():
        if name not in columns:
            raise EvaluationError(f"{ref('to', text=name)}: no result column '{name}' "
                                  f"(columns: {', '.join(columns)})")
        try:
            target = parse_unit(wanted, f"the unit for {name}")
            columns[name] = registry().Quantity(columns[name], per.get(
                name, registry().Unit(""))).to(target).magnitude
        except UnitError as exc:
            raise EvaluationError(str(exc)) from None
        except Exception:
            raise EvaluationError(f"{name} is in {unit_text(per.get(name)) or '1'}, which "
                                  f"cannot be converted to {wanted}") from None
        per[name] = target
    result = as_result(columns)
    blocks = [replace(b, unit=unit_text(per[b.name]) or "1") if b.name in per else b
              for b in result.layout.blocks]
    result.layout = replace(result.layout, blocks=blocks, _names=None)
    return result


def _check_invertible(Jy: np.ndarray, J: np.ndarray, columns: list[str], unknown: list[str],
                      free: list[str], X: np.ndarray) -> None:
    """∂F/∂y must be invertible at every point: otherwise say where it is not."""
    m = Jy.shape[1]
    if m == 1:
        scale = np.max(np.abs(J[0]), axis=0)
        bad = ~(np.abs(Jy[:, 0, 0]) > 1e-12 * scale)
    else:
        with np.errstate(all="ignore"):
            bad = ~(np.linalg.cond(Jy) < MAX_CONDITION)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = f"dF/d{unknown[0]} = 0" if m == 1 else \
            f"dF/d({', '.join(unknown)}) is singular"
        raise EvaluationError(
            f"at {_point_text(columns, X, i)} {what}: the curve is not the graph of a "
            f"function {', '.join(unknown)}({', '.join(free)}) there (a vertical tangent, a "
            "cusp or a crossing), so it has no derivative by the implicit function theorem")


def _higher(function: Any, X: np.ndarray, Jy: np.ndarray, y1: np.ndarray, ix: int,
            iy: list[int], order: int) -> dict[int, np.ndarray]:
    """dᵠy/dxᵠ for q = 2..order (x the input ``ix``, the unknowns ``iy``, the others
    constant):
    the coefficient c_q of F(x₀ + t, y₀ + y₁t + ... + y_{q-1}t^{q-1}) by one Taylor sweep
    of order q, then y_q = -(∂F/∂y)⁻¹·c_q."""
    from gradcli.engine.core import Tensor
    from gradcli.engine.grad_mode import enable_grad, quiet
    from gradcli.engine.taylor import Jets

    leaves = [Tensor(np.array(row)).requires_grad_() for row in X]
    with enable_grad(), quiet(), np.errstate(all="ignore"):
        outputs = function._call(*leaves)  # one output per equation, per point
        jets = Jets(leaves, outputs)
        coefficients = [y1]  # y_1, y_2, ... (N, m)
        result: dict[int, np.ndarray] = {}
        for q in range(2, order + 1):
            seeds: list[Any] = [None] * len(leaves)  # the others: constant
            seeds[ix] = [1.0] + [None] * (q - 1)  # x(t) = x₀ + t
            for a, j in enumerate(iy):
                seeds[j] = [c[:, a] for c in coefficients] + [None]
            got = jets.sweep(seeds, q)
            rhs = np.stack([np.zeros(X.shape[1]) if s is None or s[q] is None else
                            np.broadcast_to(np.asarray(s[q], dtype=float), X.shape[1])
                            for s in got], axis=1)  # (N, m)
            yq = -np.linalg.solve(Jy, rhs[:, :, None])[:, :, 0]
            coefficients.append(yq)
            result[q] = yq * math.factorial(q)
    return result


def tracking_columns(expression: str, kind: str, columns: Sequence[str], X: np.ndarray,
                     held: Mapping[str, Any], track: str) -> dict[str, np.ndarray]:
    """How each critical point x* moves with the held parameter ``track``: ``dx/dp`` per
    variable, by the implicit function theorem on ∇f(x*, p) = 0 (a field: F(x*, p) = 0),
    dx*/dp = -(∂G/∂x)⁻¹·∂G/∂p with G = ∇f (the Hessian's blocks) or F (the Jacobian's).
    ``X`` is (N, n), one critical point per row; nan where ∂G/∂x is singular (a degenerate
    point does not move smoothly)."""
    from gradcli.evaluation.evaluator import evaluate

    if track not in held:
        raise EvaluationError(f"{ref('track', text=track)}: '{track}' must be a parameter "
                              f"held fixed with {ref('at')} (the point moves as it changes)")
    if np.ndim(held[track]) != 0 or any("[" in c for c in columns):
        raise EvaluationError(f"{ref('track')} needs scalar variables and a scalar parameter")
    names = list(columns)
    n, count = len(names), X.shape[0]
    out = {f"d{c}/d{track}": np.full(count, np.nan) for c in names}
    if not count:
        return out
    points = {c: X[:, j] for j, c in enumerate(names)}
    points[track] = np.full(count, float(held[track]))
    fixed = {k: v for k, v in held.items() if k != track}
    wrt = [*names, track]
    with np.errstate(all="ignore"):
        if kind == "scalar":
            got = evaluate(expression, "hessian", points=points, fixed=fixed or None, wrt=wrt)
            block = np.array([[np.broadcast_to(got[f"d2f/d{a}d{b}"], count) for b in wrt]
                              for a in names]).transpose(2, 0, 1)
        else:
            got = evaluate(expression, "jacobian", points=points, fixed=fixed or None,
                           wrt=wrt)
            block = np.array([[np.broadcast_to(got[f"df[{i}]/d{b}"], count) for b in wrt]
                              for i in range(n)]).transpose(2, 0, 1)
        A, b = block[:, :, :n], block[:, :, n]
        ok = np.linalg.cond(A) < MAX_CONDITION
        if ok.any():
            d = -np.linalg.solve(A[ok], b[ok][:, :, None])[:, :, 0]
            for j, c in enumerate(names):
                out[f"d{c}/d{track}"][ok] = d[:, j]
    return out


def implicit_request(request: Request, **_: Any) -> Outcome:
    """``implicit`` (``gradcli.execute``): ``at`` a point on the curve giving every
    variable (or a list of points, or a mapping of equal-length arrays); ``parameters``
    ``solve_for`` (the unknowns), ``wrt``, ``order``, ``tol``, ``units``, ``to``."""
    p = dict(request.parameters or {})

    def names(value: Any) -> list[str] | None:
        if value is None:
            return None
        items = [value] if isinstance(value, str) else list(value)
        return [n.strip() for item in items for n in str(item).split(",") if n.strip()]

    at, max_points = request.at, request.max_points
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
        points = [dict(point) for point in at or []]
    unknown = names(p.get("solve_for")) or []
    tol = p.get("tol")
    columns = implicit_columns(request.expression, unknown, points,
                               order=p.get("order", 1), tol=TOL if tol is None else tol,
                               wrt=names(p.get("wrt")), max_points=max_points,
                               units=p.get("units"), to=p.get("to"))
    variables = [c for c in columns if points and c in points[0]]
    return Outcome(columns, f"implicit derivatives of {', '.join(unknown)} in "
                   f"{request.expression}", facts={"variables": variables})
