"""grad, div, curl and the Laplacian in polar, cylindrical and spherical coordinates.

The variables are the coordinates (r, θ for polar; r, φ, z for cylindrical; r, θ, φ for
spherical, θ the polar angle from +z and φ the azimuth, as ISO 80000-2), and a vector
field's components are physical ones, in the orthonormal basis (ê_r, ê_θ, ê_φ): the
textbook form. Every operator is the orthogonal-coordinates formula with the scale
factors (Lamé coefficients) h_i, each written once below as text of the language:

    grad_i f    = (1/h_i)·∂_i f
    div F       = (1/H)·Σ_i ∂_i(H/h_i·F_i),                       H = h_1·h_2·h_3
    curl F      = (1/(h_j·h_k))·(∂_j(h_k·F_k) - ∂_k(h_j·F_j))      (i, j, k) cyclic
                  (2-D: (1/(h_1·h_2))·(∂_1(h_2·F_2) - ∂_2(h_1·F_1)))
    laplacian f = (1/H)·Σ_i ∂_i(H/h_i²·∂_i f)

The derivatives ∂_i of the formula come from the engine (its gradient, Jacobian or
Hessian by the coordinates, at the points given), and so do those of the coefficients
(H/h_i, h_i, H/h_i²: one Jacobian of them at the same points); the products are expanded
by the product rule. Nothing goes through Cartesian coordinates, so a point on an axis
(r = 0, or sin θ = 0 where H = 0) gives what the formulas give there: nan or ±inf where
1/H is met (the conventions page says so), the limit only where no division by 0 occurs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request import Outcome, Request


@dataclass(frozen=True)
class System:
    """A coordinate system: its coordinates' default names and its scale factors as text
    over ``{0}``, ``{1}``, ``{2}`` (the coordinates in order)."""

    names: tuple[str, ...]
    scale: tuple[str, ...]
    what: str


SYSTEMS: dict[str, System] = {
    "polar": System(("r", "theta"), ("1", "{0}"), "r ≥ 0, θ the angle from +x"),
    "cylindrical": System(("r", "phi", "z"), ("1", "{0}", "1"),
                          "r ≥ 0 from the z axis, φ the azimuth from +x, z"),
    "spherical": System(("r", "theta", "phi"), ("1", "{0}", "{0}*sin({1})"),
                        "r ≥ 0, θ from +z (0 to π), φ the azimuth from +x (ISO 80000-2)"),
}
def parse_coords(text: str) -> tuple[str, tuple[str, ...]]:
    """``spherical`` or ``spherical:rho,t,p`` -> (system, coordinate names)."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if name not in SYSTEMS:
        raise EvaluationError(f"{ref('coords', text=repr(text))}: unknown coordinate system "
                              f"'{name}' (one of {', '.join(SYSTEMS)})")
    system = SYSTEMS[name]
    if not rest:
        return name, system.names
    names = tuple(n.strip() for n in rest.split(","))
    if len(names) != len(system.names) or not all(n.isidentifier() for n in names) or \
            len(set(names)) != len(names):
        raise EvaluationError(f"{ref('coords', text=repr(text))}: {name} needs "
                              f"{len(system.names)} different names, as in "
                              f"{name}:{','.join(system.names)}")
    return name, names


def _bound(where: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    at = where.get("at")
    for point in ([at] if isinstance(at, Mapping) else at or []):
        names |= set(point)
    for key in ("grid", "points", "fixed"):
        names |= set(where.get(key) or {})
    return names


def _evaluate(expression: str, what: str, names: Sequence[str], quiet_names: set[str],
              where: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """gradcli.evaluate by the coordinates; the coordinates (and the user's variables, for
    the coefficients) that the formula does not use are bound without a warning."""
    from gradcli.evaluation.evaluator import evaluate
    from gradcli.lang import ExpressionWarning, free_variables, parse

    used = set(free_variables(parse(expression)))
    with warnings.catch_warnings():
        if _bound(where) - used <= quiet_names:
            warnings.simplefilter("ignore", ExpressionWarning)
        result = evaluate(expression, what, wrt=list(names), **where)
    shape = np.broadcast_shapes(*(np.shape(v) for v in result.values()))
    return {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in result.items()}


def curvilinear_columns(expression: str, what: str, coords: str,
                        where: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The columns of the operator ``what`` in the coordinates ``coords``: the variables,
    the formula's value (``f`` or ``f[i]``), then ``grad_r``, ``grad_theta``... (named for
    the coordinates), ``div``, ``curl`` (2-D) or ``curl_r``..., or ``laplacian``; one row
    per point (``where``: ``at``, ``grid``, ``points`` and ``fixed``, as
    ``gradcli.evaluate``)."""
    from gradcli.lang import Vector, free_variables, parse

    operator = OPERATORS.get(what)
    if operator is None:
        raise EvaluationError(f"{ref('coords')} applies to {', '.join(OPERATORS)}, not {what}")
    system_name, names = parse_coords(coords)
    system = SYSTEMS[system_name]
    n = len(names)
    tree = parse(expression)  # its own errors first, on the text as typed
    missing = [c for c in names if c not in _bound(where)]
    if missing:
        raise EvaluationError(f"a point in {system_name} coordinates gives "
                              f"{', '.join(names)}: add {missing[0]} (as {ref('at')}, "
                              f"{ref('grid')} or {ref('points')})")
    variables = list(dict.fromkeys([*free_variables(tree), *names]))
    quiet_names = set(variables)
    h = [s.format(*names) for s in system.scale]
    H = "*".join(f"({t})" for t in h)
    zero = " + ".join(f"0*{v}" for v in variables)

    def coefficients(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The values (m, N) and the Jacobian (m, n, N) of texts over the coordinates."""
        got = _evaluate(f"[{', '.join(texts)}] + ({zero})", "jacobian", names, quiet_names,
                        where)
        m = len(texts)
        values = np.stack([got[f"f[{i}]"].ravel() for i in range(m)])
        jac = np.stack([np.stack([got[f"df[{i}]/d{q}"].ravel() for q in names])
                        for i in range(m)])
        return values, jac

    at = _Numbers(expression, names, h, H, coefficients,
                  lambda of: _evaluate(expression, of, names, quiet_names, where))
    if operator.scalar:
        if isinstance(tree, Vector):
            raise EvaluationError(f"{what} {ref('coords')} takes a scalar formula f")
        got = at.evaluate("grad")
        at.D = np.stack([got[f"df/d{q}"].ravel() for q in names])  # ∂_i f
        at.out = {v: got[v].ravel() for v in got if v in variables}
        at.out["f"] = got["f"].ravel()
        return operator.columns(at)
    got = at.evaluate("jacobian")
    if f"f[{n - 1}]" not in got or f"f[{n}]" in got or "f" in got:
        raise EvaluationError(f"{what} {ref('coords', text=system_name)} takes a field of "
                              f"{n} components [{', '.join('F_' + q for q in names)}] "
                              "(physical components, in the orthonormal basis)")
    at.F = np.stack([got[f"f[{i}]"].ravel() for i in range(n)])
    at.J = np.stack([np.stack([got[f"df[{i}]/d{q}"].ravel() for q in names])
                     for i in range(n)])
    at.out = {v: got[v].ravel() for v in got if v in variables}
    for i in range(n):
        at.out[f"f[{i}]"] = at.F[i]
    return operator.columns(at)


@dataclass
class _Numbers:
    """What an operator's columns are made from: the coordinates, the scale factors h_i
    and H as text, ``coefficients`` (values and Jacobian of texts at the points),
    ``evaluate`` (the formula's computation by the coordinates), the formula's ∂_i f (a
    scalar) or F and its Jacobian J (a field), and the columns so far."""

    expression: str
    names: tuple[str, ...]
    h: list[str]
    H: str
    coefficients: Callable[[list[str]], tuple[np.ndarray, np.ndarray]]
    evaluate: Callable[[str], dict[str, np.ndarray]]
    D: Any = None
    F: Any = None
    J: Any = None
    out: dict[str, np.ndarray] = field(default_factory=dict)


def _grad_columns(at: _Numbers) -> dict[str, np.ndarray]:
    hv, _ = at.coefficients(at.h)
    with np.errstate(all="ignore"):
        for i, q in enumerate(at.names):
            at.out[f"grad_{q}"] = at.D[i] / hv[i]
    return at.out


def _laplacian_columns(at: _Numbers) -> dict[str, np.ndarray]:
    second = at.evaluate("hessian")
    D2 = np.stack([second[f"d2f/d{q}d{q}"].ravel() for q in at.names])
    K, dK = at.coefficients([f"{at.H}/({t})^2" for t in at.h])
    Hv, _ = at.coefficients([at.H])
    with np.errstate(all="ignore"):
        total = sum(K[i] * D2[i] + dK[i, i] * at.D[i] for i in range(len(at.names)))
        at.out["laplacian"] = total / Hv[0]
    return at.out


def _div_columns(at: _Numbers) -> dict[str, np.ndarray]:
    G, dG = at.coefficients([at.H + f"/({t})" for t in at.h])
    Hv, _ = at.coefficients([at.H])
    with np.errstate(all="ignore"):
        total = sum(G[i] * at.J[i, i] + dG[i, i] * at.F[i] for i in range(len(at.names)))
        at.out["div"] = total / Hv[0]
    return at.out


def _curl_columns(at: _Numbers) -> dict[str, np.ndarray]:
    hv, dh = at.coefficients(at.h)
    F, J = at.F, at.J

    def d_of_product(k: int, j: int) -> np.ndarray:
        """∂_j(h_k·F_k) by the product rule."""
        return hv[k] * J[k, j] + dh[k, j] * F[k]

    with np.errstate(all="ignore"):
        if len(at.names) == 2:
            at.out["curl"] = (d_of_product(1, 0) - d_of_product(0, 1)) / (hv[0] * hv[1])
            return at.out
        for i, q in enumerate(at.names):
            j, k = (i + 1) % 3, (i + 2) % 3
            at.out[f"curl_{q}"] = (d_of_product(k, j) - d_of_product(j, k)) / (hv[j] * hv[k])
    return at.out


def _partials(text: str, names: Sequence[str]) -> list[str]:
    """∂text/∂q for each coordinate q, as formulas ("0" where text does not use q)."""
    from gradcli.formulas.derivative_formulas import formula

    got = formula(text, "grad")
    return [got.get(f"df/d{q}", "0") if isinstance(got, dict) else "0" for q in names]


def _simplified(text: str, avoid: set[str]) -> str:
    """``text`` through the formula printer's simplifier: the derivative of s·text by a
    new variable s is text itself, simplified."""
    from gradcli.formulas.derivative_formulas import formula

    s = next(n for n in ("s", "s_", "s__", "s___") if n not in avoid)
    got = formula(f"{s}*({text})", "grad", wrt=[s])
    return str(got[f"df/d{s}"]) if isinstance(got, dict) else text


def curvilinear_formulas(expression: str, what: str, coords: str) -> dict[str, str]:
    """The formulas of the operator ``what`` in the coordinates ``coords`` (the
    ``formula`` parameter): the columns of :func:`curvilinear_columns` after the values,
    each the orthogonal-coordinates formula (module docstring) with the formula's partials
    and the scale factors put in, then simplified."""
    from gradcli.formulas.derivative_formulas import formula
    from gradcli.lang import Program, Vector, free_variables, parse, to_text

    operator = OPERATORS.get(what)
    if operator is None:
        raise EvaluationError(f"{ref('coords')} applies to {', '.join(OPERATORS)}, not {what}")
    system_name, names = parse_coords(coords)
    system = SYSTEMS[system_name]
    tree = parse(expression)
    if isinstance(tree, Program):
        raise EvaluationError(f"{ref('formula')} with coordinates takes one formula, not a "
                              "program with steps")
    h = [s.format(*names) for s in system.scale]
    n = len(names)
    at = _Texts(expression, names, h, "*".join(f"({t})" for t in h),
                set(free_variables(tree)) | set(names))
    if operator.scalar:
        if isinstance(tree, Vector):
            raise EvaluationError(f"{what} {ref('coords')} takes a scalar formula f")
        first = formula(expression, "grad")
        at.D = [first.get(f"df/d{q}", "0") for q in names] if isinstance(first, dict) else \
            ["0"] * n
        return operator.formulas(at)
    if not isinstance(tree, Vector) or len(tree.items) != n:
        raise EvaluationError(f"{what} {ref('coords', text=system_name)} takes a field of "
                              f"{n} components [{', '.join('F_' + q for q in names)}]")
    at.F = [to_text(item) for item in tree.items]
    jac = formula(expression, "jacobian")
    at.J = [[jac.get(f"df[{i}]/d{q}", "0") if isinstance(jac, dict) else "0" for q in names]
            for i in range(n)]
    return operator.formulas(at)


@dataclass
class _Texts:
    """What an operator's formulas are made from: as :class:`_Numbers`, in text (the
    names ``avoid`` are the formula's and the coordinates')."""

    expression: str
    names: tuple[str, ...]
    h: list[str]
    H: str
    avoid: set[str]
    D: Any = None
    F: Any = None
    J: Any = None


def _grad_formulas(at: _Texts) -> dict[str, str]:
    return {f"grad_{q}": _simplified(f"({at.D[i]})/({at.h[i]})", at.avoid)
            for i, q in enumerate(at.names)}


def _laplacian_formulas(at: _Texts) -> dict[str, str]:
    from gradcli.formulas.derivative_formulas import formula

    second = formula(at.expression, "hessian")
    D2 = [second.get(f"d2f/d{q}d{q}", "0") if isinstance(second, dict) else "0"
          for q in at.names]
    K = [f"{at.H}/({t})^2" for t in at.h]
    dK = [_partials(k, at.names)[i] for i, k in enumerate(K)]
    terms = [f"({K[i]})*({D2[i]}) + ({dK[i]})*({at.D[i]})" for i in range(len(at.names))]
    return {"laplacian": _simplified(f"({' + '.join(terms)})/({at.H})", at.avoid)}


def _div_formulas(at: _Texts) -> dict[str, str]:
    G = [at.H + f"/({t})" for t in at.h]
    dG = [_partials(g, at.names)[i] for i, g in enumerate(G)]
    terms = [f"({G[i]})*({at.J[i][i]}) + ({at.F[i]})*({dG[i]})"
             for i in range(len(at.names))]
    return {"div": _simplified(f"({' + '.join(terms)})/({at.H})", at.avoid)}


def _curl_formulas(at: _Texts) -> dict[str, str]:
    h, F, J = at.h, at.F, at.J
    dh = [_partials(t, at.names) for t in h]

    def d_of_product(k: int, j: int) -> str:
        return f"({h[k]})*({J[k][j]}) + ({F[k]})*({dh[k][j]})"

    if len(at.names) == 2:
        return {"curl": _simplified(f"({d_of_product(1, 0)} - ({d_of_product(0, 1)}))/"
                                    f"(({h[0]})*({h[1]}))", at.avoid)}
    out: dict[str, str] = {}
    for i, q in enumerate(at.names):
        j, k = (i + 1) % 3, (i + 2) % 3
        out[f"curl_{q}"] = _simplified(f"({d_of_product(k, j)} - ({d_of_product(j, k)}))/"
                                       f"(({h[j]})*({h[k]}))", at.avoid)
    return out


@dataclass(frozen=True)
class Operator:
    """An operator in curvilinear coordinates: whether it takes a scalar formula f (else
    a field of one component per coordinate), and its columns and formulas."""

    scalar: bool
    columns: Callable[[_Numbers], dict[str, np.ndarray]]
    formulas: Callable[[_Texts], dict[str, str]]


#: the operators that take the ``coords`` parameter: adding one is one record here
OPERATORS: dict[str, Operator] = {
    "grad": Operator(True, _grad_columns, _grad_formulas),
    "div": Operator(False, _div_columns, _div_formulas),
    "curl": Operator(False, _curl_columns, _curl_formulas),
    "laplacian": Operator(True, _laplacian_columns, _laplacian_formulas),
}


def curvilinear_request(request: Request, **_: Any) -> Outcome:
    """The curvilinear operators (``gradcli.execute``): ``parameters`` ``operator``
    (grad, div, curl or laplacian) and ``coords``; ``at``, ``grid``, ``points`` and
    ``fixed`` as for ``evaluate``. ``facts["variables"]``: the coordinates' columns."""
    p = dict(request.parameters or {})
    operator, coords = p.get("operator"), p.get("coords")
    where = {k: v for k, v in (("at", request.at), ("grid", request.grid),
                               ("points", request.points), ("fixed", request.fixed))
             if v is not None}
    columns = curvilinear_columns(request.expression, operator, coords, where)
    first = next((i for i, c in enumerate(columns) if c == "f" or c.startswith("f[")),
                 len(columns))
    return Outcome(columns, f"{operator} of {request.expression} in {coords} coordinates",
                   facts={"variables": list(columns)[:first]})
