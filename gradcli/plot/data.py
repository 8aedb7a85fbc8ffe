"""The numbers behind a picture: one ``gradcli.evaluate`` call per plot, no matplotlib here.

A plot samples a formula on a grid of one or two variables (any others held fixed) and
needs, depending on its kind, the values, the gradient (scalar formulas) or the Jacobian
(two-component vector fields, for divergence and curl). All derivatives come from the
engine, never from finite differences, so the arrows are exactly what ``gradcli grad``
prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..evaluation import DEFAULT_MAX_POINTS, EvaluationError, prepare

__all__ = ["Field", "compute_field", "sampled_names"]

COLORS = ("magnitude", "divergence", "curl")


@dataclass
class Field:
    """A formula sampled on a grid: coordinates, values and engine derivatives.

    Arrays are grid shaped with the first grid variable on the first axis (``(nx,)`` or
    ``(nx, ny)``), and every coordinate axis is increasing.
    """

    expression: str
    names: tuple[str, ...]
    coords: tuple[np.ndarray, ...]
    held: dict[str, float]
    kind: str  # "curve" (one variable), "scalar" (two variables) or "vector" ([u, v])
    values: tuple[np.ndarray, ...]  # (f,) for a scalar, (u, v) for a vector field
    grad: tuple[np.ndarray, ...] = ()  # (df/dx[, df/dy]) for a scalar formula
    jacobian: dict[str, np.ndarray] = field(default_factory=dict)  # "df[0]/dx" ... if asked

    def divergence(self) -> np.ndarray:
        """∂u/∂x + ∂v/∂y from the engine's Jacobian."""
        x, y = self.names
        return self.jacobian[f"df[0]/d{x}"] + self.jacobian[f"df[1]/d{y}"]

    def curl(self) -> np.ndarray:
        """∂v/∂x − ∂u/∂y (the scalar curl in the plane) from the engine's Jacobian."""
        x, y = self.names
        return self.jacobian[f"df[1]/d{x}"] - self.jacobian[f"df[0]/d{y}"]

    def magnitude(self) -> np.ndarray:
        """|F| for a vector field, |∇f| for a scalar one."""
        parts = self.values if self.kind == "vector" else self.grad
        return np.sqrt(sum(p * p for p in parts))


def sampled_names(grid: Mapping[str, Any]) -> list[str]:
    """The grid variables that are sampled (start, stop, count), in the order given."""
    return [n for n, v in grid.items() if isinstance(v, (tuple, list))]


def _check_grid(grid: Mapping[str, Any]) -> list[str]:
    names = sampled_names(grid)
    if not names:
        raise EvaluationError("plot needs one or two sampled variables, e.g. "
                              "--grid x=0:2pi:100 (or a bare --grid)")
    if len(names) > 2:
        held = " ".join(f"--grid {n}=VALUE" for n in names[2:])
        raise EvaluationError(
            f"plot draws one or two grid variables, but {len(names)} are sampled "
            f"({', '.join(names)}): hold the others fixed with {held}, "
            f"e.g. --grid {names[-1]}=0.5")
    for n in names:
        if int(grid[n][2]) < 2:
            raise EvaluationError(f"--grid {n}: a plot needs at least 2 points per variable")
    return names


def compute_field(expression: str, grid: Mapping[str, Any], *, color: str | None = None,
                  max_points: int = DEFAULT_MAX_POINTS) -> Field:
    """Sample ``expression`` on ``grid`` with what the plot needs (values, gradient or
    Jacobian); raise EvaluationError/ExpressionError for what cannot be drawn."""
    names = _check_grid(grid)
    if color is not None and color not in COLORS:
        raise EvaluationError(f"unknown --color '{color}': use {', '.join(COLORS)}")
    base = prepare(expression, "eval", grid=grid, max_points=max_points)
    shape = base.program.shape
    held = {n: float(v) for n, v in grid.items() if n not in names}
    if shape == ():
        kind = "curve" if len(names) == 1 else "scalar"
        if color is not None:
            raise EvaluationError("--color is for vector fields [u, v]; a scalar formula "
                                  "is drawn as a heatmap of f itself")
        cols = prepare(expression, "grad", grid=grid, max_points=max_points).run()
        values = (cols["f"],)
        grads = tuple(cols[f"df/d{n}"] for n in names)
        jac: dict[str, np.ndarray] = {}
    elif shape == (2,) and len(names) == 2:
        kind, grads = "vector", ()
        need_jac = color in ("divergence", "curl")
        cols = (prepare(expression, "jacobian", grid=grid, max_points=max_points).run()
                if need_jac else base.run())
        values = (cols["f[0]"], cols["f[1]"])
        jac = {k: v for k, v in cols.items() if k.startswith("df[")} if need_jac else {}
    elif len(names) == 1:
        raise EvaluationError(f"plot of one variable needs a scalar formula, but this one "
                              f"has shape {shape}: plot [u, v] over two grid variables")
    else:
        raise EvaluationError(f"plot needs a scalar formula or a 2-component field [u, v], "
                              f"but this one has shape {shape}")
    coords = tuple(np.asarray(cols[n], dtype=float).reshape(-1) for n in names)
    arrays = [np.broadcast_to(np.asarray(a, dtype=float), tuple(len(c) for c in coords))
              for a in (*values, *grads, *jac.values())]
    # make every axis increasing (a grid like x=1:0:11 is drawn left to right anyway)
    for axis, c in enumerate(coords):
        if len(c) > 1 and c[0] > c[-1]:
            arrays = [np.flip(a, axis) for a in arrays]
            coords = (*coords[:axis], c[::-1], *coords[axis + 1:])
    nv, ng = len(values), len(grads)
    return Field(expression.strip(), tuple(names), coords, held, kind,
                 tuple(arrays[:nv]), tuple(arrays[nv:nv + ng]),
                 dict(zip(jac, arrays[nv + ng:], strict=True)))
