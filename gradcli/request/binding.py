"""Where to evaluate: bind variables to a point list, a point table or a Cartesian grid.

A Binding gives each variable one array, shaped to broadcast against the batch shape:
``(N,)`` for points, the grid's shape for a grid, followed by the variable's own component
axes: ``(N, n)`` for an n-vector, ``(N, r, c)`` for a matrix. Grid variables are 1-D axes
shaped as ``numpy.ogrid`` does, so work on one variable is done once per axis value; a
value held fixed has unit batch axes (``(1, n)``), so work on it alone is done once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, Namer, ref, render_references  # noqa: F401 - the error it raises, importable beside it
from gradcli.lang import CONSTANTS
from gradcli.lang.spec_text import parse_constant  # noqa: F401 - read where points are bound

#: the most points one request may evaluate unless the caller raises it (``max_points=``):
#: above it a request is refused before anything is allocated
DEFAULT_MAX_POINTS = 50_000_000
MAX_GRID_AXES = 32  # numpy's dimension limit (32 before numpy 2)





@dataclass
class Binding:
    """Variables bound to values. ``values[name]`` is one array: the batch axes (each the
    batch's length or 1), then the variable's component axes ``shapes[name]``."""

    kind: str                                     # "points" or "grid"
    names: list[str]
    shapes: dict[str, tuple[int, ...]]
    values: dict[str, np.ndarray]
    batch_shape: tuple[int, ...]
    axes: list[str] = field(default_factory=list)  # grid variables that span an axis

    @property
    def size(self) -> int:
        return int(np.prod(self.batch_shape, dtype=np.int64))

    def block(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """The values restricted to rows ``start:stop`` of the batch's first axis."""
        if not self.batch_shape:
            return self.values
        return {name: v[start:stop] if v.ndim and v.shape[0] != 1 else v
                for name, v in self.values.items()}


def wrt_names(wrt: Any) -> list[str]:
    """``wrt=`` as a list of names: ``"x,y"``, or a list of names (each may hold commas,
    as a repeated command-line option gives them)."""
    if not isinstance(wrt, (str, list, tuple)):
        raise EvaluationError(f"wrt must be names, \"x,y\" or [\"x\", \"y\"], got "
                              f"{wrt!r:.40}")
    items = [w.strip() for part in ([wrt] if isinstance(wrt, str) else wrt)
             for w in str(part).split(",")]
    if not items or any(not w for w in items):
        shown = wrt if isinstance(wrt, str) else ",".join(str(w) for w in wrt)
        raise EvaluationError(f"{ref('wrt', text=repr(shown))}: give names separated by "
                              f"commas, e.g. {ref('wrt', text='x,y', python=repr('x,y'))}")
    return items


def unused_text(names: Sequence[str]) -> str:
    """What to say of bound names the formula does not use (a typo, or a leftover): a
    warning, since the run is still well defined."""
    quoted = ", ".join(f"'{n}'" for n in names)
    if len(names) == 1:
        return f"{quoted} is given a value but is not a variable of the formula"
    return f"{quoted} are given values but are not variables of the formula"


def warn_unused(names: Sequence[str]) -> None:
    """An ExpressionWarning naming the bound names the formula does not use (the CLI
    prints it as a ``warning:`` line)."""
    if names:
        import warnings

        from gradcli.lang import ExpressionWarning

        warnings.warn(ExpressionWarning(unused_text(names)), stacklevel=3)


def count_text(n: int) -> str:
    """A point count for a message: exact with separators, or 3 digits when absurdly large."""
    if n < 10**15:
        return f"{n:,}"
    if n < 10**300:
        return f"{float(n):.3g}"
    digits = str(n)  # float(n) overflows past 1e308
    return f"{digits[0]}.{digits[1:3]}e+{len(digits) - 1}"


def _check_names(names: Sequence[str]) -> None:
    for name in names:
        if name in CONSTANTS:
            raise EvaluationError(f"'{name}' is a constant ({CONSTANTS[name]:.6g}) and cannot "
                                  "be given a value; name the variable differently")








def _numeric(value: Any, what: str) -> Any:
    """``value`` with every string in it (a constant expression) replaced by its value."""
    if isinstance(value, str):
        return parse_constant(value, what)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (str, list, tuple))
                                                for v in value):
        return [_numeric(v, what) for v in value]
    return value


def _is_complex(raw: np.ndarray) -> bool:
    if raw.dtype.kind == "c":
        return True
    return raw.dtype == object and any(isinstance(v, (complex, np.complexfloating)) or
                                       (isinstance(v, np.ndarray) and v.dtype.kind == "c")
                                       for v in raw.flat)


def real_array(value: Any, what: str, dtype: Any = np.float64) -> np.ndarray:
    """``value`` as a real array of ``dtype``, or an EvaluationError that starts with
    ``what``: complex numbers are refused (numpy would silently keep the real part), as
    are values too large for a float (``10**400``) and things that are not numbers.
    A ragged nesting is a ValueError for the caller's own message."""
    raw = np.asarray(value)
    if _is_complex(raw):
        raise EvaluationError(f"{what}: complex numbers are not supported, got "
                              f"{value!r:.60}")
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError:
        raise EvaluationError(f"{what}: a value is too large for a float, got "
                              f"{value!r:.60}") from None
    except TypeError:
        raise EvaluationError(f"{what}: expected numbers, got {value!r:.60}") from None


def _as_value(name: str, value: Any, dtype: np.dtype) -> np.ndarray:
    """A variable's value at one point: a number, a vector or a matrix, as an array."""
    value = _numeric(value, f"variable '{name}'")
    try:
        raw = np.asarray(value)
        if raw.dtype == object and any(v is None for v in raw.flat):
            raise TypeError  # numpy reads None as nan: a missing value would pass unseen
        arr = real_array(value, f"variable '{name}'", dtype)
    except EvaluationError:
        raise
    except (TypeError, ValueError):
        raise EvaluationError(f"variable '{name}': expected a number, a vector or a matrix of "
                              f"numbers, got {value!r:.60}") from None
    if arr.ndim > 2:
        raise EvaluationError(f"variable '{name}': only numbers, vectors and matrices are "
                              f"supported, got a value of shape {arr.shape}")
    if arr.size == 0:
        raise EvaluationError(f"variable '{name}' is empty (shape {arr.shape})")
    return arr


def point_list(at: Any) -> list[Mapping[str, Any]]:
    """``at=`` as a list of points: one point as a mapping, or a sequence of them.

    Anything else is a TypeError that says what ``at=`` takes.
    """
    if isinstance(at, Mapping):
        return [at]
    if isinstance(at, Sequence) and not isinstance(at, (str, bytes)):
        points = list(at)
        bad = next((p for p in points if not isinstance(p, Mapping)), None)
        if bad is None:
            return points
        got = f"a list holding {type(bad).__name__}"
    else:
        got = type(at).__name__
    raise TypeError('at= takes one point as a dict, {"x": 1.0}, or a list of such dicts, '
                    f'[{{"x": 0.0}}, {{"x": 1.0}}]; got {got}')


def bind_points(at: Sequence[Mapping[str, Any]], dtype: np.dtype) -> Binding:
    """Bind a list of points, each a mapping from variable name to a number, a vector or a
    matrix."""
    if not at:
        raise EvaluationError("no points given")
    names = list(at[0])
    _check_names(names)
    columns: dict[str, list[np.ndarray]] = {n: [] for n in names}
    shapes: dict[str, tuple[int, ...]] = {}
    for i, point in enumerate(at):
        if list(point) != names:
            raise EvaluationError(
                f"point {i + 1} binds {', '.join(point) or 'nothing'}, but point 1 binds "
                f"{', '.join(names)}: every point must bind the same variables in one order")
        for name, value in point.items():
            arr = _as_value(name, value, dtype)
            if shapes.setdefault(name, arr.shape) != arr.shape:
                raise EvaluationError(f"variable '{name}' has shape {arr.shape} at point {i + 1} "
                                      f"but {shapes[name]} at point 1")
            columns[name].append(arr)
    values = {n: np.stack(columns[n]) for n in names}
    return Binding("points", names, shapes, values, (len(at),))


def bind_table(points: Mapping[str, Any], dtype: np.dtype) -> Binding:
    """Bind columns of values: ``{"x": array (N,), (N, n) or (N, r, c), ...}``."""
    names = list(points)
    if not names:
        raise EvaluationError("no variables given")
    _check_names(names)
    values, shapes, n = {}, {}, None
    for name in names:
        try:
            arr = real_array(points[name], f"column '{name}'", dtype)
        except EvaluationError:
            raise
        except (TypeError, ValueError):
            raise EvaluationError(f"column '{name}' must hold numbers") from None
        if arr.ndim not in (1, 2, 3) or 0 in arr.shape[1:]:
            raise EvaluationError(f"column '{name}' must be 1-D (2-D for a vector variable, "
                                  f"3-D for a matrix), got shape {arr.shape}")
        if n is None:
            n = arr.shape[0]
        if arr.shape[0] != n:
            raise EvaluationError(f"column '{name}' has {arr.shape[0]} values, others {n}")
        shapes[name] = arr.shape[1:]
        values[name] = arr
    return Binding("points", names, shapes, values, (int(n or 0),))


def bind_grid(grid: Mapping[str, Any], dtype: np.dtype, max_points: int) -> Binding:
    """Bind a Cartesian grid: ``{"x": (start, stop, count), "z": value}``."""
    _check_names(list(grid))
    axes = [n for n, v in grid.items() if isinstance(v, (tuple, list))]
    if len(axes) > MAX_GRID_AXES:
        raise EvaluationError(f"the grid samples {len(axes)} variables; at most "
                              f"{MAX_GRID_AXES} can span an axis (hold others fixed with "
                              f"{ref('grid', text='name=VALUE', python='{name: VALUE}')}, or "
                              f"use {ref('points', python='...')})")
    counts = []
    for name in axes:
        spec = grid[name]
        if len(spec) != 3:
            raise EvaluationError(f"grid '{name}' needs (start, stop, count), got {spec!r}")
        count = _numeric(spec[2], f"grid '{name}'")
        if isinstance(count, (int, np.integer)) and not isinstance(count, bool):
            whole = count >= 1  # an int is exact however large: the limit below says so
        else:
            whole = isinstance(count, (float, np.floating)) and float(count).is_integer() \
                and count >= 1
        if not whole:
            raise EvaluationError(f"grid '{name}': the count must be a whole number >= 1, "
                                  f"got {count}")
        counts.append(int(count))
    total = 1
    for c in counts:
        total *= c
    if total > max_points:
        raise EvaluationError(
            f"the grid has {count_text(total)} points, over the limit of {max_points:,}; "
            f"raise it with {ref('max_points')}")
    if total >= 2**62:  # numpy cannot even describe such an array
        raise EvaluationError(f"the grid has {count_text(total)} points, more than any "
                              "array can hold")
    shape = tuple(counts)
    values, shapes = {}, {}
    for name, spec in grid.items():
        shapes[name] = ()
        if name in axes:
            start, stop = (_bound(v, name) for v in spec[:2])
            if not (np.isfinite(start) and np.isfinite(stop)):
                raise EvaluationError(f"grid '{name}': bounds must be finite")
            view = [1] * len(shape)
            view[axes.index(name)] = shape[axes.index(name)]
            axis = np.linspace(start, stop, shape[axes.index(name)], dtype=dtype)
            values[name] = axis.reshape(view)
        else:
            value = real_array(_numeric(spec, f"grid '{name}'"), f"grid '{name}'", dtype)
            if value.ndim:
                raise EvaluationError(f"grid '{name}' must be a number or (start, stop, count)")
            values[name] = value.reshape((1,) * len(shape))
    return Binding("grid", list(grid), shapes, values, shape, axes)


def _bound(value: Any, name: str) -> float:
    """A grid bound: one real number."""
    arr = real_array(_numeric(value, f"grid '{name}'"), f"grid '{name}'")
    if arr.ndim:
        raise EvaluationError(f"grid '{name}': a bound must be a number, got {value!r:.60}")
    return float(arr)


def hold(binding: Binding, fixed: Mapping[str, Any], dtype: np.dtype) -> Binding:
    """``binding`` with the variables of ``fixed`` held at one value (a number or a vector)
    at every point: ``points=`` with ``fixed={"y": 2}`` evaluates every row at y = 2."""
    if not fixed:
        return binding
    names = list(fixed)
    _check_names(names)
    shapes, values = dict(binding.shapes), dict(binding.values)
    for name in names:
        if name in binding.shapes:
            raise EvaluationError(f"variable '{name}' is held fixed and also given "
                                  f"{'on the grid' if binding.kind == 'grid' else 'per point'}"
                                  ": give it one way")
        arr = _as_value(name, fixed[name], dtype)
        shapes[name] = arr.shape
        if binding.kind == "points" and not arr.shape:  # a read-only view: no per-row copy
            values[name] = np.broadcast_to(arr, binding.batch_shape)
        else:  # unit batch axes: work on it alone is done once, not per point
            values[name] = arr.reshape((1,) * len(binding.batch_shape) + arr.shape)
    return replace(binding, names=[*binding.names, *names], shapes=shapes, values=values)


def check_limit(binding: Binding, max_points: int) -> None:
    """Refuse point sets over ``max_points`` before anything large is allocated."""
    if binding.size > max_points:
        raise EvaluationError(
            f"{count_text(binding.size)} points is over the limit of {max_points:,}; raise it with "
            f"{ref('max_points')}")
