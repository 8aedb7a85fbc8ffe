"""Paths and surfaces drawn over the field (``path``, ``disc``, ``box``, ``surface``,
``ball``): the curves and surfaces ``gradcli integrate`` integrates along and through.

numpy only. The specs are read by ``gradcli.fields.integrate``'s own parsers (the one
grammar: ``t: [cos(t), sin(t)], t=0:2pi``, ``u,v: [x, y, z], u=0:1, v=0:1``, ``cx,cy,R``,
``x0:x1,y0:y1``, ``cx,cy,cz,R``), and the points are the engine's values of the spec's
vector at evenly spaced parameters (never numpy running the user's text). The number of
points is fixed, so a spec's cost is bounded whatever it says: ``PATH_SAMPLES`` along a
path (the last one at the range's end, so a closed path closes), ``SURFACE_SAMPLES`` along
each side of a surface's (u, v) rectangle, and at most ``MAX_TRACED`` of them in a picture.

A path's components pair with the drawn variables in order (two over a plane; three over
a 3-D field's page); a surface has three and is drawn over a 3-D field's page only. Each
path shows its orientation (the sign of a circulation or flux) by a start marker and an
arrowhead at its end, along its last step; a surface by a cone along its normal
r_u × r_v at the centre of its (u, v) rectangle (outward on a ball's sphere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref

__all__ = ["Traced", "trace", "check_specs", "PATH_SAMPLES", "SURFACE_SAMPLES",
           "MAX_TRACED", "PATH_KINDS", "SURFACE_KINDS"]

#: points along each path: 400 steps (a smooth curve at any picture size)
PATH_SAMPLES = 401
#: points along each side of a surface's (u, v) rectangle
SURFACE_SAMPLES = 41
#: the most paths and surfaces in one picture
MAX_TRACED = 8
#: the options that draw a path (a region's boundary for disc and box) or a surface
PATH_KINDS = ("path", "disc", "box")
SURFACE_KINDS = ("surface", "ball")


@dataclass
class Traced:
    """One path or surface as drawn. ``kind`` is the option's parameter name (path, disc,
    box, surface, ball) and ``spec`` its text; ``params`` the spec's parameters and
    ``samples`` their values (one array per parameter); ``points`` a path's (N, d)
    points, or a surface's (3, Nu, Nv) coordinates; ``normal`` a surface's (centre,
    r_u × r_v there)."""

    kind: str
    spec: str
    params: tuple[str, ...]
    samples: tuple[np.ndarray, ...]
    points: np.ndarray
    closed: bool = False
    normal: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def surface(self) -> bool:
        return self.kind in SURFACE_KINDS

    @property
    def label(self) -> str:
        """The legend's text: the option's name and the spec as given."""
        from gradcli.plot.layout import short

        return f"{self.kind} {short(self.spec, 48)}"


def given(opts: Any) -> list[tuple[str, str]]:
    """(parameter, spec) of every path and surface the options ask for, in kind order."""
    return [(kind, spec) for kind in (*PATH_KINDS, *SURFACE_KINDS)
            for spec in getattr(opts, kind)]


def check_specs(values: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The options' specs as tuples (a list as typed, or one string from Python), each
    read once by its parser so a bad one fails before anything is computed."""
    from gradcli.fields.integrate import ball_surface, parse_path, parse_surface, region_path

    out: dict[str, tuple[str, ...]] = {}
    for kind in (*PATH_KINDS, *SURFACE_KINDS):
        value = values.get(kind)
        specs = () if value is None else (value,) if isinstance(value, str) else tuple(value)
        for spec in specs:
            if not isinstance(spec, str):
                raise EvaluationError(f"{ref(kind)} takes its spec as text, got "
                                      f"{type(spec).__name__}")
            if kind == "path":
                parse_path(spec)
            elif kind == "surface":
                parse_surface(spec)
            elif kind == "ball":
                ball_surface(spec)
            else:
                region_path(kind, spec)
        out[kind] = specs
    total = sum(len(s) for s in out.values())
    if total > MAX_TRACED:
        raise EvaluationError(f"{total} paths and surfaces: a picture draws at most "
                              f"{MAX_TRACED}")
    return out


def _components(text: str, kind: str, spec: str, params: tuple[str, ...],
                held: Mapping[str, Any]) -> int:
    """How many components the spec's bracket has; its variables must be its
    parameters or values held fixed."""
    from gradcli.lang import free_variables, parse

    tree = parse(text)
    where = ref(kind, text=repr(spec))
    if type(tree).__name__ != "Vector":
        raise EvaluationError(f"{where}: the points are a bracket [x, y] or [x, y, z]")
    extra = [v for v in free_variables(tree) if v not in params and v not in held]
    if extra:
        raise EvaluationError(f"{where}: '{extra[0]}' has no value (the spec may use only "
                              f"{', '.join(params)} and the values held fixed)")
    return len(tree.items)


def _values(text: str, what: str, points: dict[str, np.ndarray], held: Mapping[str, Any],
            shape: tuple[int, ...], **kwargs: Any) -> dict[str, np.ndarray]:
    from gradcli.fields.integrate import _quiet_evaluate

    got = _quiet_evaluate(text, what, points=points, fixed=dict(held), **kwargs)
    return {k: np.array(np.broadcast_to(np.asarray(v, dtype=float), shape))
            for k, v in got.items() if k.startswith(("f[", "df["))}


def _path(kind: str, spec: str, names: tuple[str, ...], held: Mapping[str, Any]) -> Traced:
    from gradcli.fields.integrate import _box_boundary, parse_path, region_path

    if kind == "path":
        param, text, lo, hi = parse_path(spec)
    else:
        text, lo, hi, region = region_path(kind, spec)
        param = "t"
    t = np.linspace(lo, hi, PATH_SAMPLES)
    if kind == "box":  # straight sides: the engine has nothing to add
        points = _box_boundary(region["box"], t)[0].T
    else:
        dims = _components(text, kind, spec, (param,), held)
        if dims != len(names):
            raise EvaluationError(
                f"{ref(kind, text=repr(spec))}: {dims} components over a field of "
                f"{len(names)} drawn variables ({', '.join(names)}): they pair in order")
        got = _values(text, "eval", {param: t}, held, t.shape)
        points = np.stack([got[f"f[{i}]"] for i in range(dims)], axis=1)
    if points.shape[1] != len(names):
        raise EvaluationError(f"{ref(kind, text=repr(spec))}: a region of the plane over a "
                              f"field of {len(names)} drawn variables")
    ends = points[[0, -1]]
    closed = bool(np.isfinite(ends).all() and np.allclose(ends[0], ends[1], rtol=1e-12,
                                                          atol=1e-12))
    return Traced(kind, spec, (param,), (t,), points, closed)


def _surface(kind: str, spec: str, names: tuple[str, ...], held: Mapping[str, Any]
             ) -> Traced:
    from gradcli.fields.integrate import ball_surface, parse_surface

    if len(names) != 3:
        raise EvaluationError(f"{ref(kind)} is drawn over a field of three grid variables "
                              f"(the page's cones); this plot has {len(names)}")
    if kind == "ball":
        params, text, box, _ = ball_surface(spec)
    else:
        params, text, box = parse_surface(spec)
    if _components(text, kind, spec, params, held) != 3:
        raise EvaluationError(f"{ref(kind, text=repr(spec))}: a surface is a bracket of 3 "
                              "components")
    u = np.linspace(box[0], box[1], SURFACE_SAMPLES)
    v = np.linspace(box[2], box[3], SURFACE_SAMPLES)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    got = _values(text, "eval", {params[0]: uu.ravel(), params[1]: vv.ravel()}, held,
                  (uu.size,))
    points = np.stack([got[f"f[{i}]"].reshape(uu.shape) for i in range(3)])
    # the orientation: r_u x r_v from the engine at the rectangle's centre
    mid = {params[0]: np.array([0.5 * (box[0] + box[1])]),
           params[1]: np.array([0.5 * (box[2] + box[3])])}
    jac = _values(text, "jacobian", mid, held, (1,), wrt=list(params))
    centre = np.array([jac[f"f[{i}]"][0] for i in range(3)])
    ru = np.array([jac[f"df[{i}]/d{params[0]}"][0] for i in range(3)])
    rv = np.array([jac[f"df[{i}]/d{params[1]}"][0] for i in range(3)])
    return Traced(kind, spec, params, (u, v), points, normal=(centre, np.cross(ru, rv)))


def trace(names: tuple[str, ...], held: Mapping[str, Any], opts: Any) -> list[Traced]:
    """Every path and surface of ``opts`` over a field of the drawn variables ``names``,
    with ``held`` the values held fixed (the spec may use them)."""
    return [(_surface if kind in SURFACE_KINDS else _path)(kind, spec, names, held)
            for kind, spec in given(opts)]
