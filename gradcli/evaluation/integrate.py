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

``--check green`` (on a disc or a box, whose counter-clockwise boundary is the path)
computes the other side of Green's theorem, ∬ (∂Q/∂x - ∂P/∂y) dA for the circulation or
∬ div F dA for the flux, by the same rule on rectangles in (ρ, φ) for a disc and in
(x, y) for a box, each cell split in two along its longer side where its estimate is
largest.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .binding import EvaluationError, ref

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
#: the most intervals (cells, for a double integral) before giving up on the tolerance
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


def adaptive2(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], box: Sequence[float],
              tol: float, limit: int = MAX_CELLS) -> tuple[float, float, int, bool]:
    """∬ fn(u, v) du dv over the rectangle box = (u0, u1, v0, v1) by the tensor G7-K15
    rule on cells, the worst ones halved along their longer side."""
    cells = np.array([box], dtype=float)
    values, errors = _rule2(fn, cells)
    while True:
        total, error = float(values.sum()), float(errors.sum())
        if error <= tol * max(abs(total), float(np.abs(values).sum()) * 1e-3, 1e-300) or \
                not math.isfinite(error):
            return total, error, len(cells), math.isfinite(error)
        if len(cells) >= limit:
            return total, error, len(cells), False
        count = min(max(1, len(cells) // 4), limit - len(cells))
        worst = np.argsort(errors)[::-1][:count]
        keep = np.setdiff1d(np.arange(len(cells)), worst)
        c = cells[worst]
        along_u = (c[:, 1] - c[:, 0]) >= (c[:, 3] - c[:, 2])
        mu, mv = 0.5 * (c[:, 0] + c[:, 1]), 0.5 * (c[:, 2] + c[:, 3])
        first = np.where(along_u[:, None], np.stack([c[:, 0], mu, c[:, 2], c[:, 3]], 1),
                         np.stack([c[:, 0], c[:, 1], c[:, 2], mv], 1))
        second = np.where(along_u[:, None], np.stack([mu, c[:, 1], c[:, 2], c[:, 3]], 1),
                          np.stack([c[:, 0], c[:, 1], mv, c[:, 3]], 1))
        new = np.concatenate([first, second])
        new_values, new_errors = _rule2(fn, new)
        cells = np.concatenate([cells[keep], new])
        values = np.concatenate([values[keep], new_values])
        errors = np.concatenate([errors[keep], new_errors])


def _rule2(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], cells: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    hu, hv = 0.5 * (cells[:, 1] - cells[:, 0]), 0.5 * (cells[:, 3] - cells[:, 2])
    cu, cv = 0.5 * (cells[:, 1] + cells[:, 0]), 0.5 * (cells[:, 3] + cells[:, 2])
    u = cu[:, None, None] + hu[:, None, None] * NODES[None, :, None]
    v = cv[:, None, None] + hv[:, None, None] * NODES[None, None, :]
    u, v = np.broadcast_arrays(u, v)
    y = np.asarray(fn(u.ravel(), v.ravel()), dtype=float).reshape(u.shape)
    k = np.einsum("cij,i,j->c", y, KRONROD, KRONROD) * hu * hv
    g = np.einsum("cij,i,j->c", y, GAUSS, GAUSS) * hu * hv
    return k, np.abs(k - g)


# --- paths and regions --------------------------------------------------------------------
def parse_path(text: str) -> tuple[str, str, float, float]:
    """``t: [cos(t), sin(t)], t=0:2pi`` -> (parameter, vector text, lo, hi)."""
    from .binding import parse_constant
    from .spec_text import split_top

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
    from .binding import parse_constant
    from .spec_text import split_top

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
    from ..lang import ExpressionWarning
    from .evaluator import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExpressionWarning)
        return evaluate(expression, what, **kwargs)


def integrate_columns(expression: str, path: str | None = None, *, disc: str | None = None,
                      box: str | None = None, flux: bool = False, check: str | None = None,
                      tol: float = TOL, wrt: Sequence[str] | None = None,
                      fixed: Mapping[str, Any] | None = None) -> tuple[dict, list[str]]:
    """The columns of ``gradcli integrate`` (one row) and its notes."""
    from ..lang import free_variables, parse

    if sum(x is not None for x in (path, disc, box)) != 1:
        raise EvaluationError(f"give one of {ref('path')}, {ref('disc')} or {ref('box')}")
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise EvaluationError(f"{ref('tol')} must be between 0 and 1 (relative)")
    if check not in (None, "green"):
        raise EvaluationError(f"{ref('check', text=repr(check))}: this build checks green "
                              "(a plane region); stokes and divergence need surfaces")
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
                              fixed=fixed)
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
    notes = [] if done else [f"note: the error estimate {error:.3g} is above --tol "
                             f"{tol:g} of the value {value:.3g} after {pieces:,} "
                             "intervals (a singular or oscillating integrand?)"]
    if check:
        what = "div" if flux else "curl"
        if not closed:
            raise EvaluationError("--check green: the path is not closed")

        def density(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            got = _quiet_evaluate(expression, what, points=dict(zip(names, (x, y),
                                                                    strict=True)),
                                  fixed=fixed, wrt=names)
            return np.broadcast_to(np.asarray(got[what], dtype=float), x.shape)

        if "disc" in region:
            cx, cy, radius = region["disc"]

            def polar(rho: np.ndarray, phi: np.ndarray) -> np.ndarray:
                return density(cx + rho * np.cos(phi), cy + rho * np.sin(phi)) * rho

            cell = (0.0, radius, 0.0, 2 * math.pi)
            with np.errstate(all="ignore"):
                other, other_error, _, done2 = adaptive2(polar, cell, tol)
        else:
            x0, x1, y0, y1 = region["box"]
            with np.errstate(all="ignore"):
                other, other_error, _, done2 = adaptive2(density, (x0, x1, y0, y1), tol)
        out["green"] = np.array([other])
        out["green_error"] = np.array([other_error])
        if not done2:
            notes.append(f"note: the area integral's estimate {other_error:.3g} is above "
                         f"--tol {tol:g} of its value {other:.3g}")
    return out, notes
