"""Where paths and trajectories start: a list of points, or a lattice of them.

``start`` points ``x=-1.2,y=1`` (one per run) are a list of points, bound as ``at``
binds them (every point names the same variables, in one order; a vector variable
``v=[0,1]`` gives the columns ``v[0]``, ``v[1]``). A start grid ``x=a:b:n``, ``y=...`` is
the lattice of every combination, first variable slowest, as a ``grid`` orders rows.
Either way the starts are an array (N, n) over the input columns, with an example value
per variable for ``FieldFunction``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request.binding import bind_points, count_text

__all__ = ["Starts", "from_points", "from_lattice"]


@dataclass
class Starts:
    """``X`` (N, n): one start per row; ``variables``: each variable's value at the first
    start (its shape is what matters); ``lattice``: whether they came from a lattice."""

    variables: dict[str, Any]
    X: np.ndarray
    lattice: bool = False
    #: the units the start values brought (``x=1 m`` for a variable with no declared unit)
    units: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.X)


def from_points(points: Sequence[Mapping[str, Any]],
                units: Mapping[str, Any] | None = None) -> Starts:
    """Starts from a list of points (each a mapping of variables to numbers or vectors). A
    value given with a unit (``x=1 m``, a pint Quantity) is converted to its variable's
    unit in ``units``; a variable with none takes the value's unit (``Starts.units``)."""
    from gradcli.evaluation.request_units import has_unit, split_units

    found: dict[str, str] = {}
    if any(has_unit(value) for point in points for value in point.values()):
        from gradcli.lang.units import parse_unit

        declared = {name: parse_unit(unit, f"the unit of '{name}'")
                    for name, unit in (units or {}).items()}
        points = split_units(list(points), declared)
        found = {name: str(unit) for name, unit in declared.items()
                 if name not in (units or {})}
    binding = bind_points(list(points), np.dtype(np.float64))
    n = binding.size
    X = np.concatenate([np.broadcast_to(v, (n,) + v.shape[1:]).reshape(n, -1)
                        for v in (binding.values[name] for name in binding.names)], axis=1)
    first = dict(points[0])
    return Starts(first, X, units=found)


def from_lattice(axes: Mapping[str, tuple[float, float, int]], max_points: int) -> Starts:
    """Starts on the lattice of ``axes`` (name -> (start, stop, count)), first slowest."""
    if not axes:
        raise EvaluationError(f"{ref('start_grid')} needs at least one variable, e.g. "
                              f"{ref('start_grid', text='x=-2:2:11', python='{x: (-2, 2, 11)}')}")
    total = 1
    for name, (a, b, n) in axes.items():
        if not (np.isfinite(a) and np.isfinite(b)):
            raise EvaluationError(f"{ref('start_grid', name, name)}: bounds must be finite")
        total *= int(n)
    if total > max_points:
        raise EvaluationError(f"{ref('start_grid')} makes {count_text(total)} starts, over the "
                              f"limit of {max_points:,}; raise it with {ref('max_points')}")
    lines = [np.linspace(a, b, int(n)) for a, b, n in axes.values()]
    X = np.stack([g.reshape(-1) for g in np.meshgrid(*lines, indexing="ij")], axis=1)
    return Starts({name: float(line[0]) for name, line in zip(axes, lines, strict=True)},
                  X, lattice=True)
