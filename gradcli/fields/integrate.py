"""Line integrals and flux: ∫F·dr (work; the circulation on a closed path), ∫f ds, and the
flux ∮F·n ds of a plane field through a closed curve, by adaptive Gauss–Kronrod.

A path is ``t: [x(t), y(t)(, z(t))], t=LO:HI``: its components pair with the field's
variables (x, y, z, or ``wrt``). r(t) and r'(t) come from the engine (the path's Jacobian
by t at the quadrature nodes), F at r(t) from the engine too. The quadrature is
QUADPACK's G7-K15 rule (Piessens et al., 1983), adaptive: the interval with the largest
error estimate |K15 - G7| is halved until the estimates sum to at most ``tol`` times the
integral's size (relative), or ``MAX_INTERVALS`` intervals are used (then a note says
the tolerance was not reached). The error column is that sum: for a smooth integrand a
generous bound (K15 is far more accurate than the G7 it is compared with).

``check`` green (on a disc or a box, whose counter-clockwise boundary is the path)
computes the other side of Green's theorem, ∬ (∂Q/∂x - ∂P/∂y) dA for the circulation or
∬ div F dA for the flux, by the same rule on rectangles in (ρ, φ) for a disc and in
(x, y) for a box, each cell split in two along its longest side where its estimate is
largest. Through a parametric surface r(u, v) the flux is ∬ F·(r_u × r_v) du dv (r_u, r_v
from the engine), on cells in (u, v); ``check`` divergence over a ball integrates div F
on cells in (ρ, θ, φ) (the tensor rule in three dimensions), the divergence theorem's
other side; ``check`` stokes on a surface over a (u, v) rectangle compares the
circulation around the image of the rectangle's boundary with the flux of curl F.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request import Outcome, Request

#: the fields a surface integral evaluates: computation -> (its columns' name, takes wrt)
_SURFACE_FIELDS = {"eval": ("f", False), "curl": ("curl", True)}

# G7-K15 on [-1, 1] (QUADPACK's qk15): the Kronrod nodes, their weights, and the
# Gauss weights of the 7 nodes among them (every other one, and 0)
_XK = np.array([0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                0.207784955007898467600689403773245, 0.0])
_WK = np.array([0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                0.204432940075298892414161999234649, 0.209482141084727828012999174891714])
_WG = np.array([0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                0.381830050505118944950369775488975, 0.417959183673469387755102040816327])
NODES = np.concatenate([-_XK[:-1], [0.0], _XK[:-1][::-1]])  # 15 nodes, ascending
KRONROD = np.concatenate([_WK[:-1], [_WK[-1]], _WK[:-1][::-1]])
GAUSS = np.zeros(15)
GAUSS[1:14:2] = np.concatenate([_WG[:-1], [_WG[-1]], _WG[:-1][::-1]])
#: the most intervals (cells, for a double integral; a tenth of that for a triple one)
#: before giving up on the tolerance
MAX_INTERVALS = 2000
MAX_CELLS = 4000
TOL = 1e-10


def adaptive(fn: Callable[[np.ndarray], np.ndarray], a: float, b: float, tol: float,
             limit: int = MAX_INTERVALS) -> tuple[float, float, int, bool]:
    """∫_a^b fn(t) dt: (value, error estimate, intervals, converged). ``fn`` takes an
    array of t and returns the integrand there; each round evaluates the 15 nodes of
    every new interval at once."""
    intervals = np.array([[a, b]], dtype=float)
    values, errors = _rule(fn, intervals)
    while True:
        total, error = float(values.sum()), float(errors.sum())
        if error <= tol * max(abs(total), float(np.abs(values).sum()) * 1e-3, 1e-300) or \
                not math.isfinite(error):
            return total, error, len(intervals), math.isfinite(error)
        if len(intervals) >= limit:
            return total, error, len(intervals), False
        # halve the worst intervals, at most as many as keep within the limit
        count = min(max(1, len(intervals) // 4), limit - len(intervals))
        worst = np.argsort(errors)[::-1][:count]
        keep = np.setdiff1d(np.arange(len(intervals)), worst)
        lo, hi = intervals[worst, 0], intervals[worst, 1]
        mid = 0.5 * (lo + hi)
        new = np.concatenate([np.stack([lo, mid], 1), np.stack([mid, hi], 1)])
        new_values, new_errors = _rule(fn, new)
        intervals = np.concatenate([intervals[keep], new])
        values = np.concatenate([values[keep], new_values])
        errors = np.concatenate([errors[keep], new_errors])


def _rule(fn: Callable[[np.ndarray], np.ndarray], intervals: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """K15 on each interval and |K15 - G7|."""
    half = 0.5 * (intervals[:, 1] - intervals[:, 0])
    centre = 0.5 * (intervals[:, 1] + intervals[:, 0])
    t = centre[:, None] + half[:, None] * NODES[None, :]
    y = np.asarray(fn(t.ravel()), dtype=float).reshape(t.shape)
    k = (y * KRONROD).sum(axis=1) * half
    g = (y * GAUSS).sum(axis=1) * half
    return k, np.abs(k - g)


def adaptive2(fn: Callable[..., np.ndarray], box: Sequence[float], tol: float,
              limit: int | None = None, atol: float = 0.0) -> tuple[float, float, int, bool]:
    """∫ fn over the box ``(lo₀, hi₀, lo₁, hi₁, ...)`` (two or three dimensions) by the
    tensor G7-K15 rule on cells, the worst ones halved along their longest side, until
    the estimates sum to ``tol`` of the result or to ``atol`` (the other side's size, for a
    theorem's check: an integral that is 0 up to rounding has no relative accuracy)."""
    cells = np.array([box], dtype=float)
    if limit is None:  # a 3-D cell costs 15³ evaluations
        limit = MAX_CELLS if len(box) == 4 else MAX_CELLS // 10
    values, errors = _rule_cells(fn, cells)
    while True:
        total, error = float(values.sum()), float(errors.sum())
        if error <= max(tol * max(abs(total), float(np.abs(values).sum()) * 1e-3, 1e-300),
                        atol) or not math.isfinite(error):
            return total, error, len(cells), math.isfinite(error)
        if len(cells) >= limit:
            return total, error, len(cells), False
        count = min(max(1, len(cells) // 4), limit - len(cells))
        worst = np.argsort(errors)[::-1][:count]
        keep = np.setdiff1d(np.arange(len(cells)), worst)
        c = cells[worst]
        widths = c[:, 1::2] - c[:, 0::2]
        axis = np.argmax(widths, axis=1)
        rows = np.arange(len(c))
        mid = 0.5 * (c[rows, 2 * axis] + c[rows, 2 * axis + 1])
        first, second = c.copy(), c.copy()
        first[rows, 2 * axis + 1] = mid
        second[rows, 2 * axis] = mid
        new = np.concatenate([first, second])
        new_values, new_errors = _rule_cells(fn, new)
        cells = np.concatenate([cells[keep], new])
        values = np.concatenate([values[keep], new_values])
        errors = np.concatenate([errors[keep], new_errors])


def _rule_cells(fn: Callable[..., np.ndarray], cells: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The tensor K15 rule on each cell, and |K15⊗... - G7⊗...|."""
    d = cells.shape[1] // 2
    half = 0.5 * (cells[:, 1::2] - cells[:, 0::2])  # (c, d)
    centre = 0.5 * (cells[:, 1::2] + cells[:, 0::2])
    grids = np.meshgrid(*([NODES] * d), indexing="ij")  # d arrays of (15,)*d
    points = [centre[:, a, None] + half[:, a, None] * grids[a].ravel()[None, :]
              for a in range(d)]
    y = np.asarray(fn(*(p.ravel() for p in points)), dtype=float).reshape(len(cells), -1)
    wk = np.ones(1)
    wg = np.ones(1)
    for _ in range(d):
        wk, wg = np.outer(wk, KRONROD).ravel(), np.outer(wg, GAUSS).ravel()
    volume = np.prod(half, axis=1)
    k, g = (y @ wk) * volume, (y @ wg) * volume
    return k, np.abs(k - g)


# --- paths and regions --------------------------------------------------------------------
def parse_path(text: str) -> tuple[str, str, float, float]:
    """``t: [cos(t), sin(t)], t=0:2pi`` -> (parameter, vector text, lo, hi)."""
    from gradcli.lang.spec_text import parse_constant, split_top

    name, colon, rest = text.partition(":")
    name = name.strip()
    parts = split_top(rest, ",") if colon else []
    where = ref("path", text=repr(text))
    if not name.isidentifier() or len(parts) < 2:
        raise EvaluationError(f"{where}: write the path as 't: [x(t), y(t)], t=0:2pi'")
    last = parts[-1].strip()
    bound, eq, span = last.partition("=")
    ends = split_top(span, ":") if eq else []
    if bound.strip() != name or len(ends) != 2:
        raise EvaluationError(f"{where}: end it with the parameter's range, {name}=LO:HI")
    lo, hi = (parse_constant(e, f"{where} {name}") for e in ends)
    if not all(isinstance(v, float) and math.isfinite(v) for v in (lo, hi)) or lo == hi:
        raise EvaluationError(f"{where}: the range {name}={span.strip()} needs two different "
                              "finite ends")
    return name, ",".join(parts[:-1]).strip(), float(lo), float(hi)


def region_path(kind: str, text: str) -> tuple[str, float, float, dict[str, Any]]:
    """A disc ``cx,cy,R`` or a box ``x0:x1,y0:y1`` as its counter-clockwise boundary:
    (path text over t, lo, hi, the region)."""
    from gradcli.lang.spec_text import parse_constant, split_top

    where = ref(kind, text=repr(text))
    parts = [p.strip() for p in split_top(text, ",")]
    if kind == "disc":
        if len(parts) != 3:
            raise EvaluationError(f"{where}: give the centre and radius, cx,cy,R")
        cx, cy, radius = (parse_constant(p, where) for p in parts)
        if not all(isinstance(v, float) and math.isfinite(v) for v in (cx, cy, radius)) or \
                radius <= 0:
            raise EvaluationError(f"{where}: a finite centre and a radius > 0")
        path = f"[({cx!r}) + ({radius!r})*cos(t), ({cy!r}) + ({radius!r})*sin(t)]"
        return path, 0.0, 2 * math.pi, {"disc": (cx, cy, radius)}
    ends = [split_top(p, ":") for p in parts]
    if len(parts) != 2 or any(len(e) != 2 for e in ends):
        raise EvaluationError(f"{where}: give the sides, x0:x1,y0:y1")
    (x0, x1), (y0, y1) = ([parse_constant(v, where) for v in e] for e in ends)
    if not all(isinstance(v, float) and math.isfinite(v) for v in (x0, x1, y0, y1)) or \
            x0 >= x1 or y0 >= y1:
        raise EvaluationError(f"{where}: finite sides, each low end first")
    return "", 0.0, 4.0, {"box": (x0, x1, y0, y1)}


def _box_boundary(box: tuple[float, float, float, float], t: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The box's boundary at t in [0, 4] (one side per unit, counter-clockwise) and its
    derivative: straight sides, so r' is a constant per side."""
    x0, x1, y0, y1 = box
    side = np.minimum(np.floor(t), 3).astype(int)
    s = t - side
    xs = np.choose(side, [x0 + (x1 - x0) * s, np.full_like(s, x1), x1 - (x1 - x0) * s,
                          np.full_like(s, x0)])
    ys = np.choose(side, [np.full_like(s, y0), y0 + (y1 - y0) * s, np.full_like(s, y1),
                          y1 - (y1 - y0) * s])
    dx = np.choose(side, [np.full_like(s, x1 - x0), np.zeros_like(s), np.full_like(s, x0 - x1),
                          np.zeros_like(s)])
    dy = np.choose(side, [np.zeros_like(s), np.full_like(s, y1 - y0), np.zeros_like(s),
                          np.full_like(s, y0 - y1)])
    return np.stack([xs, ys]), np.stack([dx, dy])


def _quiet_evaluate(expression: str, what: str, **kwargs: Any) -> Any:
    from gradcli.evaluation.evaluator import evaluate
    from gradcli.lang import ExpressionWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExpressionWarning)
        return evaluate(expression, what, **kwargs)


def integrate_columns(expression: str, path: str | None = None, *, disc: str | None = None,
                      box: str | None = None, surface: str | None = None,
                      ball: str | None = None, flux: bool = False, check: str | None = None,
                      tol: float = TOL, wrt: Sequence[str] | None = None,
                      fixed: Mapping[str, Any] | None = None,
                      units: Mapping[str, Any] | None = None,
                      to: Mapping[str, Any] | None = None) -> tuple[Any, list[str]]:
    """The columns of ``gradcli integrate`` (one row) and its notes: along a ``path``
    (or the boundary of a ``disc`` or ``box``), or through a ``surface`` (or the sphere
    bounding a ``ball``). With ``units`` (the field's variables' units; the path's or
    surface's parameters are pure numbers) the field is evaluated in its units and every
    column is in unit(F)·unit(x) (a path; a surface's flux unit(F)·unit(x)²); ``to``
    converts a column (or the field's, ``f``)."""
    from gradcli.lang import free_variables, parse

    given = [k for k, v in (("path", path), ("disc", disc), ("box", box),
                            ("surface", surface), ("ball", ball)) if v is not None]
    if len(given) != 1:
        raise EvaluationError(f"give one of {ref('path')}, {ref('disc')}, {ref('box')}, "
                              f"{ref('surface')} or {ref('ball')}")
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise EvaluationError(f"{ref('tol')} must be between 0 and 1 (relative)")
    if surface is not None or ball is not None:
        return surface_columns(expression, surface, ball=ball, check=check, tol=tol, wrt=wrt,
                               fixed=fixed, units=units, to=to)
    if check not in (None, "green"):
        raise EvaluationError(f"{ref('check', text=repr(check))}: a path checks green (over "
                              f"a {ref('disc')} or {ref('box')}); divergence is for a "
                              f"{ref('ball')}")
    fixed = dict(fixed or {})
    tree = parse(expression)
    if disc is not None or box is not None:
        text, lo, hi, region = region_path("disc" if disc is not None else "box",
                                           disc if disc is not None else box or "")
        name = "t"
    else:
        assert path is not None
        name, text, lo, hi = parse_path(path)
        region = {}
        if check is not None:
            raise EvaluationError(f"{ref('check')} green needs the region the path bounds: "
                                  f"give {ref('disc')} or {ref('box')} instead of "
                                  f"{ref('path')}")
    if text:
        path_tree = parse(text)
        extra = [v for v in free_variables(path_tree) if v != name and v not in fixed]
        if extra:
            raise EvaluationError(f"{ref('path')}: '{extra[0]}' has no value (the path may "
                                  f"use only {name} and the values held fixed)")
        dims = len(getattr(path_tree, "items", ()))
    else:
        dims = 2
    if dims not in (2, 3):
        raise EvaluationError(f"{ref('path')}: a path is a bracket of 2 or 3 components, "
                              "[x(t), y(t)] or [x(t), y(t), z(t)]")
    names = list(wrt) if wrt else ["x", "y", "z"][:dims]
    if len(names) != dims:
        raise EvaluationError(f"{ref('wrt')} names {len(names)} variables for a path of "
                              f"{dims} components")
    unknown = [v for v in free_variables(tree) if v not in names and v not in fixed]
    if unknown:
        raise EvaluationError(f"'{unknown[0]}' has no value: the field's variables are "
                              f"{', '.join(names)} (the path's components, in order; "
                              f"{ref('wrt')} names others), and others are held with "
                              f"{ref('at')}")
    vector = len(getattr(tree, "items", ())) if type(tree).__name__ == "Vector" else 0
    physical, unit = _physical(expression, names, fixed, units, to, 1, bool(vector))
    if vector and vector != dims:
        raise EvaluationError(f"a field of {vector} components along a path of {dims}")
    if flux and (dims != 2 or not vector):
        raise EvaluationError(f"{ref('flux')} is the flux of a plane field [P, Q] through a "
                              "curve in the plane")
    if check and not vector:
        raise EvaluationError(f"{ref('check')} green compares the circulation or flux of a "
                              "field [P, Q]")
    count = [0]

    def curve(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not text:
            return _box_boundary(region["box"], t)
        got = _quiet_evaluate(text, "jacobian", points={name: t}, fixed=fixed, wrt=[name])
        r = np.stack([np.broadcast_to(got[f"f[{i}]"], t.shape) for i in range(dims)])
        dr = np.stack([np.broadcast_to(got[f"df[{i}]/d{name}"], t.shape)
                       for i in range(dims)])
        return r, dr

    def field(r: np.ndarray) -> np.ndarray:
        count[0] += r.shape[1]
        got = _quiet_evaluate(expression, "eval", points=dict(zip(names, r, strict=True)),
                              fixed=fixed, **physical)
        if vector:
            return np.stack([np.broadcast_to(got[f"f[{i}]"], r.shape[1:])
                             for i in range(dims)])
        return np.broadcast_to(got["f"], r.shape[1:])

    def integrand(t: np.ndarray) -> np.ndarray:
        r, dr = curve(t)
        F = field(r)
        if not vector:
            return F * np.sqrt((dr * dr).sum(axis=0))
        if flux:
            return F[0] * dr[1] - F[1] * dr[0]
        return (F * dr).sum(axis=0)

    with np.errstate(all="ignore"):
        value, error, pieces, done = adaptive(integrand, lo, hi, tol)
    r0, _ = curve(np.array([lo, hi]))
    closed = bool(np.allclose(r0[:, 0], r0[:, 1], rtol=1e-12, atol=1e-12))
    label = "integral" if not vector else "flux" if flux else \
        "circulation" if closed else "work"
    out: dict[str, np.ndarray] = {label: np.array([value]), "error": np.array([error])}
    notes = [] if done else [f"note: the error estimate {error:.3g} is above "
                             f"{ref('tol', text=f'{tol:g}')} of the value {value:.3g} after "
                             f"{pieces:,} "
                             "intervals (a singular or oscillating integrand?)"]
    if check:
        what = "div" if flux else "curl"
        if not closed:
            raise EvaluationError(f"{ref('check')} green: the path is not closed")

        def density(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            got = _quiet_evaluate(expression, what, points=dict(zip(names, (x, y),
                                                                    strict=True)),
                                  fixed=fixed, **physical, wrt=names)
            return np.broadcast_to(np.asarray(got[what], dtype=float), x.shape)

        if "disc" in region:
            cx, cy, radius = region["disc"]

            def polar(rho: np.ndarray, phi: np.ndarray) -> np.ndarray:
                return density(cx + rho * np.cos(phi), cy + rho * np.sin(phi)) * rho

            cell = (0.0, radius, 0.0, 2 * math.pi)
            with np.errstate(all="ignore"):
                other, other_error, _, done2 = adaptive2(polar, cell, tol,
                                                         atol=tol * abs(value))
        else:
            x0, x1, y0, y1 = region["box"]
            with np.errstate(all="ignore"):
                other, other_error, _, done2 = adaptive2(density, (x0, x1, y0, y1), tol,
                                                         atol=tol * abs(value))
        out["green"] = np.array([other])
        out["green_error"] = np.array([other_error])
        if not done2:
            notes.append(f"note: the area integral's estimate {other_error:.3g} is above "
                         f"{ref('tol', text=f'{tol:g}')} of its value {other:.3g}")
    return _labelled(out, unit, to), notes


def _physical(expression: str, names: Sequence[str], fixed: Mapping[str, Any],
              units: Mapping[str, Any] | None, to: Mapping[str, Any] | None, power: int,
              vector: bool) -> tuple[dict[str, Any], Any]:
    """The units to evaluate the field with (the parameter table's ``units`` and ``to``
    of its output) and the integral's unit, unit(F)·unit(x)^power (None without units).
    The variables the path or surface runs over must share one unit, and a field's
    components too: their products are summed."""
    if not units and not to:
        return {}, None
    from gradcli.evaluation.request_units import _delta
    from gradcli.fields.function import FieldFunction

    outputs_to = {k: v for k, v in (to or {}).items() if k == "f" or k.startswith("f[")}
    physical = {k: v for k, v in (("units", units), ("to", outputs_to)) if v}
    function = FieldFunction(expression, {n: 0.0 for n in names}, fixed, **physical)
    if function.units is None:
        return physical, None
    from gradcli.lang.units import unit_text

    xs = {str(_delta(function.units.of(n))): _delta(function.units.of(n)) for n in names}
    if len(xs) > 1:
        raise EvaluationError(f"{ref('units')}: the variables {', '.join(names)} the "
                              f"integral runs over must share one unit (here "
                              f"{' and '.join(unit_text(u) or '1' for u in xs.values())})")
    outs = {str(u): u for u in function.units.outputs.values()}
    if len(outs) > 1:
        raise EvaluationError(f"{ref('units')}: the field's components must share one unit "
                              f"to be summed (here "
                              f"{' and '.join(unit_text(u) or '1' for u in outs.values())}; "
                              f"{ref('to', text='f[i]=UNIT')} converts one)")
    del vector  # a scalar's and a field's integral alike: unit(f)·unit(x)^power
    return physical, next(iter(outs.values())) * next(iter(xs.values())) ** power


def _labelled(out: dict[str, np.ndarray], unit: Any, to: Mapping[str, Any] | None) -> Any:
    """The integral's columns with their unit (all share it: the value, its error
    estimate and the other side of a theorem), those of ``to`` converted."""
    if unit is None:
        return out
    from dataclasses import replace

    from gradcli.errors import UnitError
    from gradcli.lang.units import parse_unit, registry, unit_text
    from gradcli.plan.blocks import as_result

    per = dict.fromkeys(out, unit)
    for name, wanted in (to or {}).items():
        if name == "f" or name.startswith("f["):
            continue
        if name not in out:
            raise EvaluationError(f"{ref('to', text=name)}: no result column '{name}' "
                                  f"(columns: {', '.join(out)})")
        try:
            target = parse_unit(wanted, f"the unit for {name}")
            out[name] = registry().Quantity(out[name], unit).to(target).magnitude
        except UnitError as exc:
            raise EvaluationError(str(exc)) from None
        except Exception:
            raise EvaluationError(f"{name} is in {unit_text(unit) or '1'}, which cannot be "
                                  f"converted to {wanted}") from None
        per[name] = target
        error = f"{name}_error" if name != next(iter(out)) else "error"
        if error in out and error not in (to or {}):  # an estimate goes with its value
            out[error] = registry().Quantity(out[error], unit).to(target).magnitude
            per[error] = target
    result = as_result(out)
    result.layout = replace(result.layout, blocks=[
        replace(b, unit=unit_text(per[b.name]) or "1") for b in result.layout.blocks],
        _names=None)
    return result


# --- surfaces ---------------------------------------------------------------------------------
def parse_surface(text: str) -> tuple[tuple[str, str], str, tuple[float, float, float, float]]:
    """``u,v: [x, y, z], u=0:pi, v=0:2pi`` -> ((u, v), vector text, (u0, u1, v0, v1))."""
    from gradcli.lang.spec_text import parse_constant, split_top

    head, colon, rest = text.partition(":")
    params = tuple(p.strip() for p in head.split(","))
    parts = split_top(rest, ",") if colon else []
    where = ref("surface", text=repr(text))
    if len(params) != 2 or not all(p.isidentifier() for p in params) or len(parts) < 3:
        raise EvaluationError(f"{where}: write the surface as 'u,v: [x(u,v), y(u,v), "
                              "z(u,v)], u=0:pi, v=0:2pi'")
    ranges: list[float] = []
    for name, part in zip(params, parts[-2:], strict=True):
        bound, eq, span = part.partition("=")
        ends = split_top(span, ":") if eq else []
        if bound.strip() != name or len(ends) != 2:
            raise EvaluationError(f"{where}: end it with the ranges {params[0]}=LO:HI, "
                                  f"{params[1]}=LO:HI")
        lo, hi = (parse_constant(e, f"{where} {name}") for e in ends)
        if not all(isinstance(v, float) and math.isfinite(v) for v in (lo, hi)) or lo >= hi:
            raise EvaluationError(f"{where}: the range of {name} needs two finite ends, the "
                                  "lower first")
        ranges += [float(lo), float(hi)]
    return (params[0], params[1]), ",".join(parts[:-2]).strip(), (
        ranges[0], ranges[1], ranges[2], ranges[3])


def ball_surface(text: str) -> tuple[tuple[str, str], str, tuple[float, float, float, float],
                                     tuple[float, float, float, float]]:
    """A ball ``cx,cy,cz,R`` as its bounding sphere, outward: ((u, v), the surface's
    vector text, the (u, v) box, (cx, cy, cz, R))."""
    from gradcli.lang.spec_text import parse_constant, split_top

    parts = [p.strip() for p in split_top(text, ",")]
    where = ref("ball", text=repr(text))
    values = [parse_constant(p, where) for p in parts] if len(parts) == 4 else []
    if len(values) != 4 or not all(isinstance(v, float) and math.isfinite(v)
                                   for v in values) or values[3] <= 0:
        raise EvaluationError(f"{where}: give the centre and a radius > 0, cx,cy,cz,R")
    cx, cy, cz, radius = values
    shape = (f"[({cx!r}) + ({radius!r})*sin(u)*cos(v), ({cy!r}) + ({radius!r})*sin(u)*"
             f"sin(v), ({cz!r}) + ({radius!r})*cos(u)]")
    return ("u", "v"), shape, (0.0, math.pi, 0.0, 2 * math.pi), (cx, cy, cz, radius)


def surface_columns(expression: str, surface: str | None = None, *, ball: str | None = None,
                    check: str | None = None, tol: float = TOL,
                    wrt: Sequence[str] | None = None,
                    fixed: Mapping[str, Any] | None = None,
                    units: Mapping[str, Any] | None = None,
                    to: Mapping[str, Any] | None = None) -> tuple[Any, list[str]]:
    """The flux ∬ F·(r_u × r_v) du dv of a field [P, Q, R] through a parametric surface
    (or the sphere bounding ``ball`` = "cx,cy,cz,R", outward), and with ``check=
    "divergence"`` the volume integral of div F over the ball: (columns, notes)."""
    from gradcli.lang import free_variables, parse

    fixed = dict(fixed or {})
    if (surface is None) == (ball is None):
        raise EvaluationError(f"give one of {ref('surface')} or {ref('ball')}")
    if check not in (None, "divergence", "stokes"):
        raise EvaluationError(f"{ref('check', text=repr(check))}: a surface checks stokes "
                              "(its boundary) or divergence (over a ball)")
    if check == "stokes" and surface is None:
        raise EvaluationError(f"{ref('check')} stokes needs a {ref('surface')} with a "
                              "boundary (a sphere has none)")
    if ball is not None:
        params, text, box, (cx, cy, cz, radius) = ball_surface(ball)
    else:
        assert surface is not None
        params, text, box = parse_surface(surface)
        if check == "divergence":
            raise EvaluationError(f"{ref('check')} divergence needs the region the surface "
                                  f"bounds: give {ref('ball')} instead of {ref('surface')}")
    tree, shape_tree = parse(expression), parse(text)
    if type(shape_tree).__name__ != "Vector" or len(shape_tree.items) != 3:
        raise EvaluationError(f"{ref('surface')}: a surface is a bracket of 3 components")
    extra = [v for v in free_variables(shape_tree) if v not in params and v not in fixed]
    if extra:
        raise EvaluationError(f"{ref('surface')}: '{extra[0]}' has no value")
    names = list(wrt) if wrt else ["x", "y", "z"]
    if len(names) != 3:
        raise EvaluationError(f"{ref('wrt')} names {len(names)} variables for a surface in "
                              "space")
    if type(tree).__name__ != "Vector" or len(tree.items) != 3:
        raise EvaluationError("the flux through a surface is of a field [P, Q, R]")
    # Stokes' two sides are F·dr and (curl F)·dS: unit(F)·unit(x); a flux unit(F)·unit(x)²
    physical, unit = _physical(expression, names, fixed, units, to,
                               1 if check == "stokes" else 2, True)
    unknown = [v for v in free_variables(tree) if v not in names and v not in fixed]
    if unknown:
        raise EvaluationError(f"'{unknown[0]}' has no value: the field's variables are "
                              f"{', '.join(names)}, and others are held with {ref('at')}")

    def frame(u: np.ndarray, v: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
        """r(u, v), r_u and r_v, from the engine."""
        got = _quiet_evaluate(text, "jacobian", points={params[0]: u, params[1]: v},
                              fixed=fixed, wrt=list(params))
        r = [np.broadcast_to(got[f"f[{i}]"], u.shape) for i in range(3)]
        ru = np.stack([np.broadcast_to(got[f"df[{i}]/d{params[0]}"], u.shape)
                       for i in range(3)])
        rv = np.stack([np.broadcast_to(got[f"df[{i}]/d{params[1]}"], u.shape)
                       for i in range(3)])
        return r, ru, rv

    def field_at(r: list, what: str = "eval") -> np.ndarray:
        """F (``eval``, columns f[i]) or curl F (``curl``, columns curl[i]) at the points r."""
        key, wrt = _SURFACE_FIELDS[what]
        got = _quiet_evaluate(expression, what, points=dict(zip(names, r, strict=True)),
                              fixed=fixed, **physical, **({"wrt": names} if wrt else {}))
        return np.stack([np.broadcast_to(got[f"{key}[{i}]"], r[0].shape) for i in range(3)])

    def integrand(u: np.ndarray, v: np.ndarray, what: str = "eval") -> np.ndarray:
        r, ru, rv = frame(u, v)
        return (field_at(r, what) * np.cross(ru, rv, axis=0)).sum(axis=0)

    if check == "stokes":
        out, notes = _stokes(box, frame, field_at, integrand, tol)
        return _labelled(out, unit, to), notes
    with np.errstate(all="ignore"):
        value, error, _, done = adaptive2(integrand, box, tol)
    out: dict[str, np.ndarray] = {"flux": np.array([value]), "error": np.array([error])}
    notes = [] if done else [f"note: the error estimate {error:.3g} is above "
                             f"{ref('tol', text=f'{tol:g}')} "
                             f"of the value {value:.3g}"]
    if check:
        def density(rho: np.ndarray, theta: np.ndarray, phi: np.ndarray) -> np.ndarray:
            x = cx + rho * np.sin(theta) * np.cos(phi)
            y = cy + rho * np.sin(theta) * np.sin(phi)
            z = cz + rho * np.cos(theta)
            got = _quiet_evaluate(expression, "div", points=dict(zip(names, (x, y, z),
                                                                     strict=True)),
                                  fixed=fixed, **physical, wrt=names)
            div = np.broadcast_to(np.asarray(got["div"], dtype=float), rho.shape)
            return div * rho * rho * np.sin(theta)

        with np.errstate(all="ignore"):
            other, other_error, _, done2 = adaptive2(
                density, (0.0, radius, 0.0, math.pi, 0.0, 2 * math.pi), tol,
                atol=tol * abs(value))
        out["divergence"], out["divergence_error"] = np.array([other]), np.array([other_error])
        if not done2:
            notes.append(f"note: the volume integral's estimate {other_error:.3g} is above "
                         f"{ref('tol', text=f'{tol:g}')} of its value {other:.3g}")
    return _labelled(out, unit, to), notes


def _stokes(box: tuple[float, float, float, float], frame: Callable, field_at: Callable,
            integrand: Callable, tol: float) -> tuple[dict, list[str]]:
    """Stokes' theorem on a surface over the rectangle ``box`` of (u, v): the circulation
    of F around the image of the rectangle's boundary (counter-clockwise in (u, v), so
    that it turns about r_u × r_v by the right-hand rule), dr/dt = r_u·u' + r_v·v', and
    the flux of curl F through the surface."""
    u0, u1, v0, v1 = box

    def boundary(t: np.ndarray) -> np.ndarray:
        side = np.minimum(np.floor(t), 3).astype(int)
        s = t - side
        u = np.choose(side, [u0 + (u1 - u0) * s, np.full_like(s, u1), u1 - (u1 - u0) * s,
                             np.full_like(s, u0)])
        v = np.choose(side, [np.full_like(s, v0), v0 + (v1 - v0) * s, np.full_like(s, v1),
                             v1 - (v1 - v0) * s])
        du = np.choose(side, [np.full_like(s, u1 - u0), np.zeros_like(s),
                              np.full_like(s, u0 - u1), np.zeros_like(s)])
        dv = np.choose(side, [np.zeros_like(s), np.full_like(s, v1 - v0), np.zeros_like(s),
                              np.full_like(s, v0 - v1)])
        r, ru, rv = frame(u, v)
        return (field_at(r) * (ru * du + rv * dv)).sum(axis=0)

    with np.errstate(all="ignore"):
        value, error, pieces, done = adaptive(boundary, 0.0, 4.0, tol)
        other, other_error, _, done2 = adaptive2(
            lambda u, v: integrand(u, v, "curl"), box, tol, atol=tol * abs(value))
    out = {"circulation": np.array([value]), "error": np.array([error]),
           "stokes": np.array([other]), "stokes_error": np.array([other_error])}
    notes = [] if done else [f"note: the error estimate {error:.3g} is above "
                             f"{ref('tol', text=f'{tol:g}')} "
                             f"of the value {value:.3g} after {pieces:,} intervals"]
    if not done2:
        notes.append(f"note: the flux of the curl's estimate {other_error:.3g} is above "
                     f"{ref('tol', text=f'{tol:g}')} of its value {other:.3g}")
    return out, notes


def integrate_request(request: Request, **_: Any) -> Outcome:
    """``integrate`` (``gradcli.execute``): ``parameters`` ``path``, ``disc``, ``box``,
    ``surface``, ``ball``, ``flux``, ``check``, ``tol``, ``wrt`` (names, or text
    ``"x,y"``), ``units``, ``to``; ``fixed`` held. One row: the result, its error
    estimate (and with ``check`` the other side's)."""
    p = dict(request.parameters or {})
    wrt = p.get("wrt")
    names = None if wrt is None else [n.strip() for part in (
        [wrt] if isinstance(wrt, str) else wrt) for n in str(part).split(",") if n.strip()]
    tol = p.get("tol")
    columns, notes = integrate_columns(
        request.expression, p.get("path"), disc=p.get("disc"), box=p.get("box"),
        surface=p.get("surface"), ball=p.get("ball"), flux=bool(p.get("flux")),
        check=p.get("check"), tol=TOL if tol is None else tol, wrt=names or None,
        fixed=request.fixed, units=p.get("units"), to=p.get("to"))
    return Outcome(columns, f"integral of {request.expression}", notes)
