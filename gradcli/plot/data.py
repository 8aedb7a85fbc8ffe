"""The numbers behind a picture: one ``gradcli.evaluate`` call per plot, no matplotlib here.

A plot samples a formula on a grid of one, two or three variables (any others held fixed,
one of them possibly animated) and needs the values and every partial the engine computes:
the gradient of a scalar formula, the Jacobian of a vector-valued one (for divergence,
curl and the hover text of the interactive page). All derivatives come from the engine,
never from finite differences, so the arrows are exactly what ``gradcli grad`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation import DEFAULT_MAX_POINTS, prepare
from gradcli.lang import Vector, parse
from gradcli.lang.spec_text import split_top
from gradcli.plot.options import COLOR_FIELDS, KERNEL_COLORS

__all__ = ["Field", "compute_field", "sampled_names", "MAX_CURVES", "flat_error"]

MAX_CURVES = 12  # components of a vector-valued formula drawn as curves of one variable


@dataclass
class Field:
    """A formula sampled on a grid: coordinates, values and engine derivatives.

    Arrays are grid shaped with the first grid variable on the first axis (``(nx,)``,
    ``(nx, ny)`` or ``(nx, ny, nz)``; an animated field has one more, last axis for its
    frames), and every coordinate axis is increasing.
    """

    expression: str
    names: tuple[str, ...]  # the sampled variables, one per axis of the picture
    coords: tuple[np.ndarray, ...]
    held: dict[str, Any]  # values held fixed: numbers, or vectors and matrices (at)
    kind: str  # "curve" (one variable), "scalar" or "vector" (two or three)
    values: tuple[np.ndarray, ...]  # (f,) or one per component: curves, [u, v], [u, v, w]
    grad: tuple[np.ndarray, ...] = ()  # curves: df[i]/dx per component; scalars: per axis
    columns: dict[str, np.ndarray] = field(default_factory=dict)  # every result column
    labels: tuple[str, ...] = ()  # curves: each component's formula
    normal: np.ndarray | None = None  # a slice: the field's component across the plane
    slice_name: str | None = None
    frames: np.ndarray | None = None  # an animation: the animated variable's values
    animated: str | None = None
    taylor: tuple[float, np.ndarray] | None = None  # a curve's expansion point, coefficients
    units: dict[str, str] = field(default_factory=dict)  # column -> physical unit, if any

    def axis_label(self, name: str) -> str:
        """``x [m]`` for a variable or column with a unit, else the name."""
        unit = self.units.get(name, "")
        return f"{name} [{unit}]" if unit else name

    def polynomial(self, order: int) -> np.ndarray:
        """The Taylor polynomial of ``order`` at the expansion point, over the curve's x."""
        if self.taylor is None:
            raise ValueError("no Taylor coefficients")
        at, coefficients = self.taylor
        h = self.coords[0] - at
        total = np.zeros_like(h)
        for c in coefficients[:order + 1][::-1]:  # Horner
            total = total * h + c
        return total
    marks: Any = None  # critical points, paths, flows, basins drawn on top (marks.Marks)
    #: the variables a vector field's components pair with for div and curl (the drawn
    #: ones; all three, in grid order, for a slice of a 3-D field)
    pairs: tuple[str, ...] = ()

    def divergence(self) -> np.ndarray:
        """div F, by the ``div`` computation's kernel (``color divergence``)."""
        return self.columns["div"]

    def curl(self) -> np.ndarray:
        """The curl across the drawn plane, by the ``curl`` computation's kernel
        (``color curl``): ∂v/∂x − ∂u/∂y."""
        return self.columns["curl"]

    def laplacian(self) -> np.ndarray:
        """∇²f over the drawn axes, by the ``laplacian`` computation's kernel."""
        return self.columns["laplacian"]

    def jacobian(self) -> list[np.ndarray]:
        """Every derivative column the engine computed (the scale of their round-off)."""
        return [a for name, a in self.columns.items() if name.startswith("d")]

    def magnitude(self) -> np.ndarray:
        """|F| for a vector field, |∇f| for a scalar one (over the drawn axes); with
        components in compatible but different units (x in cm, y in m), in the first
        component's unit (``magnitude_unit``)."""
        parts = self.values if self.kind == "vector" else self.grad
        weights = self._magnitude_weights()
        if weights is not None:
            parts = tuple(w * p for w, p in zip(weights, parts, strict=True))
        return np.sqrt(sum(p * p for p in parts))

    def _magnitude_columns(self) -> list[str]:
        return [f"df/d{n}" for n in self.names[:len(self.grad)]] if self.kind == "scalar" \
            else [f"f[{i}]" for i in range(len(self.values))]

    def _magnitude_weights(self) -> np.ndarray | None:
        """The factors taking each component to the first one's unit (None: no units,
        one unit, or dimensions that differ)."""
        texts = [self.units.get(c, "") for c in self._magnitude_columns()]
        if not self.units or len(set(texts)) <= 1:
            return None
        from gradcli.evaluation.request_units import norm_factors
        from gradcli.lang.units import registry

        try:
            return norm_factors([registry().Unit(t) for t in texts])
        except Exception:  # a unit text pint does not read back: no common unit claimed
            return None

    def magnitude_unit(self) -> str:
        """The unit |F| or |∇f| is shown in: the components' one unit, or the first
        one's when they are compatible; empty when they differ in dimension."""
        texts = [self.units.get(c, "") for c in self._magnitude_columns()]
        if len(set(texts)) == 1 or self._magnitude_weights() is not None:
            return texts[0] if texts else ""
        return ""

    def arrows(self) -> tuple[np.ndarray, ...]:
        """The drawn vectors: the gradient of a scalar, the field itself otherwise."""
        return self.grad if self.kind == "scalar" else self.values

    def frame(self, k: int) -> Field:
        """Frame ``k`` of an animated field, as a still field with the variable held."""
        if self.frames is None or self.animated is None:
            raise ValueError("not an animated field")
        take = lambda a: a[..., k]
        return replace(self, held={**self.held, self.animated: float(self.frames[k])},
                       values=tuple(map(take, self.values)), grad=tuple(map(take, self.grad)),
                       columns={n: take(a) for n, a in self.columns.items()},
                       normal=None if self.normal is None else take(self.normal),
                       frames=None, animated=None)


def _grid_ref(name: str, text: str, python: str) -> str:
    """A reference to the grid parameter with one variable's value (``ref``): the CLI
    shows ``grid x=0:1:11``, the library ``grid={'x': (0, 1, 11)}``."""
    return ref("grid", text=f"{name}={text}", python=f"{{{name!r}: {python}}}")


def sampled_names(grid: Mapping[str, Any]) -> list[str]:
    """The grid variables that are sampled (start, stop, count), in the order given."""
    return [n for n, v in grid.items() if isinstance(v, (tuple, list))]


def _check_grid(grid: Mapping[str, Any], slice_: tuple[str, float] | None,
                animate: tuple[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """The grid to evaluate (slice held, animation sampled last) and the drawn axes."""
    names = sampled_names(grid)
    for n in names:
        start, stop, count = grid[n]
        if int(count) < 2:
            raise EvaluationError(f"{ref('grid', key=n)}: a plot needs at least 2 points per "
                                  "variable")
        if start == stop:
            given = ref("grid", text=f"{n}={start:g}:{stop:g}:{int(count)}",
                        python=f"{{{n!r}: ({start:g}, {stop:g}, {int(count)})}}")
            raise EvaluationError(f"{given}: start and "
                                  f"stop are equal, so there is no range to draw; give "
                                  f"two different ends, e.g. {n}={start:g}:{start + 1:g}")
    grid = dict(grid)
    if slice_ is not None:
        name, value = slice_
        if name not in names:
            raise EvaluationError(f"{ref('slice', text=f'{name}={value:g}')}: {name} must be "
                                  "one of the sampled grid variables, e.g. "
                                  f"{_grid_ref(name, '-1:1:21', '(-1, 1, 21)')} "
                                  f"{ref('slice', text=f'{name}=0')}")
        if len(names) != 3:
            raise EvaluationError(f"{ref('slice')} draws one plane of a 3-D field: it needs three "
                                  f"sampled grid variables, this plot has {len(names)}")
        lo, hi = sorted(grid[name][:2])
        if not lo <= value <= hi:
            raise EvaluationError(f"{ref('slice', text=f'{name}={value:g}')} is outside the "
                                  f"grid's range {lo:g} to {hi:g}")
        grid[name] = value
        names.remove(name)
    if not names:
        raise EvaluationError("plot needs one, two or three sampled variables, e.g. "
                              f"{_grid_ref('x', '0:2pi:100', '(0, 2*pi, 100)')} (or a bare "
                              f"{ref('grid')})")
    if len(names) > 3:
        held = " ".join(_grid_ref(n, "VALUE", "VALUE") for n in names[3:])
        raise EvaluationError(
            f"plot draws up to three grid variables, but {len(names)} are sampled "
            f"({', '.join(names)}): hold the others fixed with {held}, "
            f"e.g. {_grid_ref(names[-1], '0.5', '0.5')}")
    if animate is not None:
        name, spec = animate
        if name in grid:
            raise EvaluationError(f"{ref('animate', key=name)}: {name} is also given with "
                                  f"{ref('grid')}; give it only once")
        grid[name] = spec
    return grid, names


def _curve_labels(expression: str, count: int) -> tuple[str, ...]:
    """Each component's own formula: as typed for a bracket literal (``[sin(x), x^2]``),
    else the whole formula indexed."""
    text = expression.strip()
    if isinstance(parse(text), Vector) and text.startswith("[") and text.endswith("]"):
        parts = [p.strip() for p in split_top(text[1:-1], ",")]
        if len(parts) == count:
            return tuple(parts)
    return tuple(f"{text}[{i}]" for i in range(count))


def _kind(shape: tuple[int, ...], n: int, sliced: bool) -> str:
    if n == 1 and (shape == () or (len(shape) == 1 and 1 <= shape[0] <= MAX_CURVES)):
        return "curve"
    if shape == ():
        return "scalar"
    if shape == (3,) and (n == 3 or sliced) or shape == (2,) and n == 2 and not sliced:
        return "vector"
    if n == 1:
        raise EvaluationError(f"plot of one variable needs a scalar formula or a vector of "
                              f"up to {MAX_CURVES} components (one curve each), but this "
                              f"one has shape {shape}")
    want = {2: "[u, v]", 3: "[u, v, w]"}[n if not sliced else 3]
    raise EvaluationError(f"plot needs a scalar formula or a {len(want.split(','))}-component "
                          f"field {want} here, but this one has shape {shape}")


#: which color each kind of field takes (from the one list, ``options.COLOR_FIELDS``)
FIELD_COLORS = {kind: tuple(c for c, kinds in COLOR_FIELDS.items() if kind in kinds)
                for kind in ("vector", "scalar")}


def _check_color(color: str | None, kind: str) -> None:
    if color is None or color in FIELD_COLORS.get(kind, ()):
        return
    if kind == "curve":
        raise EvaluationError(f"{ref('color')} needs two grid variables (a heatmap)")
    if kind == "scalar":
        raise EvaluationError(f"{ref('color', text=color)} is for vector fields [u, v]; a "
                              f"scalar f takes {ref('color', text='magnitude')} (|∇f|) or "
                              "laplacian (∇²f), or is drawn as a heatmap of f itself")
    raise EvaluationError(f"{ref('color', text=color)} is for a scalar f; a vector field "
                          f"takes {ref('color', text='magnitude')}, divergence or curl")


def _kernel_color(expression: str, grid: Mapping[str, Any], fixed: Mapping[str, Any],
                  color: str, names: list[str], sampled: list[str],
                  slice_: tuple[str, float] | None, max_points: int) -> dict[str, Any]:
    """The color quantity by its computation (the kernel ``gradcli div``, ``curl`` or
    ``laplacian`` runs), over the drawn axes: the field's components pair with the drawn
    variables (all three for a slice of a 3-D field, whose curl is then the component
    across the plane). The Laplacian adds its pure second partials (``d2f/dx2``), the
    scale its round-off is measured against."""
    what = KERNEL_COLORS[color]
    # a slice's field pairs with every sampled variable; the Laplacian sums over the drawn two
    wrt = sampled if slice_ is not None and color != "laplacian" else names[:2]
    got = prepare(expression, what, grid=grid, fixed=fixed, wrt=wrt,
                  max_points=max_points).run()
    if color == "curl" and len(wrt) == 3:
        return {"curl": got[f"curl[{wrt.index(slice_[0])}]"] if slice_ else got["curl[2]"]}
    out = {what: got[what]}
    if color == "laplacian":
        for n in names[:2]:  # the same jets, one axis at a time
            second = prepare(expression, "diff", grid=grid, fixed=fixed, wrt=n, order=2,
                             max_points=max_points).run()
            out[f"d2f/d{n}2"] = second[f"d2f/d{n}2"]
    return out


def check_arrow_units(fl: Field) -> None:
    """Arrows share one length scale: their components (df/dx, df/dy; or u, v) need one
    unit, else the picture is refused with the reason."""
    unit_of, names = fl.units, fl.names
    if not unit_of or len(names) < 2 or fl.kind not in ("scalar", "vector"):
        return
    comps = [f"df/d{n}" for n in names[:2]] if fl.kind == "scalar" else ["f[0]", "f[1]"]
    found = [(c, unit_of.get(c, "")) for c in comps]
    if len({u for _, u in found}) > 1:
        (a, ua), (b, ub) = found[0], found[1]
        raise EvaluationError(f"arrows share one length scale, but {a} is in {ua or '1'} and "
                              f"{b} in {ub or '1'}: give the drawn variables one unit, or "
                              f"draw without arrows ({ref('arrows', text='none')})")


def _check_picture_memory(points: int) -> None:
    """Refuse a grid whose picture would not fit the memory budget (``GRADCLI_MEMORY``):
    a picture holds every grid point's values, gradient and colours at once."""
    from gradcli.plot.options import PICTURE_BYTES_PER_POINT
    from gradcli.request.budget import memory_budget, size_text

    budget = memory_budget()
    need = points * PICTURE_BYTES_PER_POINT
    if need > budget:
        most = budget // PICTURE_BYTES_PER_POINT
        raise EvaluationError(f"a picture of {points:,} grid points needs about "
                              f"{size_text(need)}, over the memory budget of "
                              f"{size_text(budget)} (GRADCLI_MEMORY): at most {most:,} points "
                              f"(about {int(most ** 0.5):,} per axis on a plane); use a "
                              f"coarser {ref('grid')}")


def compute_field(expression: str, grid: Mapping[str, Any], *, color: str | None = None,
                  slice_: tuple[str, float] | None = None,
                  animate: tuple[str, Any] | None = None,
                  taylor: tuple[str, float, int] | None = None,
                  max_points: int = DEFAULT_MAX_POINTS,
                  fixed: Mapping[str, Any] | None = None,
                  units: Mapping[str, str] | None = None,
                  to: Mapping[str, str] | None = None) -> Field:
    """Sample ``expression`` on ``grid`` with every derivative the plot can show; raise
    EvaluationError/ExpressionError for what cannot be drawn. ``color laplacian`` adds the
    pure second partials along the drawn axes (``d2f/dx2``, ...: ∇²f is their sum); a
    ``taylor`` of (variable, point, order) adds a curve's Taylor coefficients there.
    ``fixed`` holds more variables at one value each, as ``evaluate``'s (numbers, vectors
    or matrices: ``sum(v)*x`` with v = [1, 2], ``x @ A @ x``)."""
    fixed = dict(fixed or {})
    sampled = sampled_names(grid)
    grid, names = _check_grid(grid, slice_, animate)
    physical = {k: v for k, v in (("units", units), ("to", to)) if v}
    probe = prepare(expression, "eval", grid=grid, fixed=fixed, max_points=max_points,
                    **physical)
    _check_picture_memory(probe.binding.size)
    shape = probe.program.shape
    kind = _kind(shape, len(names), slice_ is not None)
    _check_color(color, kind)
    prepared = prepare(expression, "grad" if shape == () else "jacobian", grid=grid,
                       fixed=fixed, max_points=max_points, **physical)
    unit_of = {b.name: b.unit for b in [*prepared.inputs.blocks, *prepared.layout.blocks]
               if b.unit}
    cols = dict(prepared.run())
    if color in KERNEL_COLORS:
        cols.update(_kernel_color(expression, grid, fixed, color, names, sampled, slice_,
                                  max_points))
    expansion = _taylor(expression, grid, names, kind, shape, taylor, fixed) if taylor \
        else None
    inputs = set(prepared.inputs.layout.column_names())
    axes = [*names, *([animate[0]] if animate is not None else [])]
    coords = [np.asarray(cols[n], dtype=float).reshape(-1) for n in axes]
    full = tuple(len(c) for c in coords)
    results = {k: np.broadcast_to(np.asarray(v, dtype=float), full)
               for k, v in cols.items() if k not in inputs}
    # make every drawn axis increasing (a grid like x=1:0:11 is drawn left to right anyway)
    for axis, c in enumerate(coords[:len(names)]):
        if c[0] > c[-1]:
            results = {k: np.flip(a, axis) for k, a in results.items()}
            coords[axis] = c[::-1]
    held: dict[str, Any] = {n: float(v) for n, v in grid.items() if n not in axes}
    held.update(fixed)
    sliced = slice_[0] if slice_ is not None else None
    labels: tuple[str, ...] = ()
    normal = None
    if kind == "curve":
        count = shape[0] if shape else 1
        comps = ["f"] if not shape else [f"f[{i}]" for i in range(count)]
        values = tuple(results[c] for c in comps)
        grad = tuple(results[f"d{c}/d{names[0]}"] for c in comps)
        labels = (expression.strip(),) if not shape else _curve_labels(expression, count)
    elif kind == "scalar":
        values = (results["f"],)
        grad = tuple(results[f"df/d{n}"] for n in names)
        normal = results[f"df/d{sliced}"] if sliced else None
    else:
        values = tuple(results[f"f[{i}]"] for i in range(shape[0]))
        grad = ()
        if sliced:
            values, normal = values[:2], values[2]
    return Field(expression.strip(), tuple(names), tuple(coords[:len(names)]), held, kind,
                 values, grad, results, labels, normal, sliced,
                 coords[-1] if animate is not None else None,
                 animate[0] if animate is not None else None, expansion,
                 pairs=tuple(sampled if slice_ is not None else names[:2]), units=unit_of)


def _taylor(expression: str, grid: Mapping[str, Any], names: list[str], kind: str,
            shape: tuple[int, ...], taylor: tuple[str, float, int],
            fixed: Mapping[str, Any]) -> tuple[float, np.ndarray]:
    """A curve's Taylor coefficients at the point, the other variables held as drawn."""
    name, at, order = taylor
    if len(names) != 1:
        raise EvaluationError(f"{ref('taylor')} draws Taylor polynomials over a curve: it "
                              f"needs one grid variable, this plot has {len(names)}")
    if name != names[0]:
        raise EvaluationError(f"{ref('taylor', text=f'{name}={at:g}')}: expand in the grid "
                              f"variable, e.g. {ref('taylor', text=f'{names[0]}={at:g}')}")
    if kind != "curve" or len(shape) != 0:
        raise EvaluationError(f"{ref('taylor')} draws the Taylor polynomials of a scalar f, not of "
                              "each component of a vector")
    if not np.isfinite(at):
        raise EvaluationError(f"{ref('taylor', key=name)}: the point must be finite")
    lo, hi = sorted(float(v) for v in grid[name][:2])
    if not lo <= at <= hi:  # its polynomials and marked point would be off the picture
        raise EvaluationError(f"{ref('taylor', text=f'{name}={at:g}')} is outside the grid's range "
                              f"{lo:g} to {hi:g}")
    point = {n: v for n, v in grid.items() if not isinstance(v, (tuple, list))} | {name: at}
    got = prepare(expression, "taylor", at=point, fixed=fixed, order=order, wrt=name).run()
    return float(at), np.asarray(got.arrays["coefficient"], dtype=float).reshape(-1)


def flat_error(fl: Field) -> EvaluationError:
    """A 3-D field has no flat picture: say what to do instead."""
    z = fl.names[2]
    return EvaluationError(
        f"{', '.join(fl.names)} are all sampled: a 3-D field has no flat picture; add "
        f"{ref('slice', text=f'{z}=VALUE')} to draw one plane (the component across it as "
        "colour), or "
        "write -o field.html for interactive 3-D cones")
