"""An expression as a function of some of its variables, replayed fast for a batch of points.

Critical points, descent paths and flows evaluate one formula, and its derivatives, at the
same number of points over and over: thousands of Newton or optimiser steps, four RK4
stages per time step. ``FieldFunction`` parses, binds and compiles the expression once
(through ``prepare``, so errors read as everywhere else), then traces its value and
derivatives with ``engine.trace`` for the batch size in use and replays the recorded
program on arrays at every step. The derivatives are the evaluation kernels' (reverse
mode per point: ``grad``, ``jacobian``, and ``hessian`` as reverse over reverse), and
``engine_values`` computes the same numbers through ``gradcli.evaluate``'s own path, to
settle what a replay cannot (see ``engine.trace``).

Points are given as an array ``X`` of shape (n, N): one row per input column (the
variables' components, in order), one column per point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.engine.rules_array import stack
from gradcli.engine.rules_axes import take
from gradcli.engine.trace import Traced, trace, with_derivatives
from gradcli.errors import EvaluationError, ref
from gradcli.evaluation.evaluator import MAX_SWEEP_OPS, prepare
from gradcli.lang import ExpressionError, Var, parse, walk
from gradcli.plan.blocks import Block
from gradcli.request.binding import count_text, unused_text, warn_unused

__all__ = ["FieldFunction"]

_CACHED = 8  # traced programs kept per function (orders x batch sizes)


def _inputs(prepared: Any, held: Mapping[str, Any]
            ) -> tuple[list[str], dict[str, tuple[int, ...]], Callable[[Sequence[Any]], Any]]:
    """The free input columns of a prepared request, each free variable's component shape
    (() for a scalar), and the function from one value per free column to the program's
    environment (held variables as constants).

    The one place that knows how the compiler takes its variables (one array per
    variable, the batch axis first, then its component axes): a vector or matrix
    variable's columns are stacked by a recorded ``stack``, so that derivatives by each
    column go through it.
    """
    plan = prepared.plan
    slots: list[Any] = []  # per variable: its free columns' (first, count), or a constant
    columns: list[str] = []
    shapes: dict[str, tuple[int, ...]] = {}
    for name, shape in plan.variables:
        if name in held:
            value = np.asarray(prepared.binding.values[name], dtype=np.float64)
            slots.append((name, value.reshape((-1,) + shape)[0]))
            continue
        names = Block.template([name, shape]).column_names()
        slots.append((name, (len(columns), len(names), shape)))
        columns.extend(names)
        shapes[name] = shape

    def env(leaves: Sequence[Any]) -> Any:
        out = {}
        for name, slot in slots:
            if not isinstance(slot, tuple):
                out[name] = slot
                continue
            first, count, shape = slot
            if not shape:
                out[name] = leaves[first]
                continue
            parts = list(leaves[first:first + count])
            for k, n in enumerate(reversed(shape)):  # the last axis first: rows, then A
                parts = [stack(*parts[i:i + n], dim=-1 - k) for i in range(0, len(parts), n)]
            out[name] = parts[0]
        return out

    return columns, shapes, env


def _check_bound(expression: str, names: list[str], hint: str) -> None:
    """An unbound variable as an error at its place, with ``hint`` (``{name}`` filled in)
    saying how this command binds one."""
    tree = parse(expression)
    used = {node.name for node in walk(tree) if isinstance(node, Var)}
    unused = [n for n in names if n not in used]
    for node in walk(tree):
        if isinstance(node, Var) and node.name not in names:
            also = f"; {unused_text(unused)}" if unused else ""
            raise ExpressionError(f"variable '{node.name}' is not bound", expression, node.pos,
                                  hint=hint.format(name=node.name) + also)
    warn_unused(unused)


class FieldFunction:
    """``expression`` as a function of the variables named in ``variables`` (a mapping
    of each to an example value: a number, or a list for a vector variable), with the
    variables of ``held`` fixed at their values.

    ``columns`` names the input components (``x``, ``y``, ``v[0]`` ...); ``kind`` is
    ``scalar`` for a scalar formula and ``vector`` for one with a component per input
    (a vector field F: Rⁿ → Rⁿ); anything else is ``other``.
    """

    def __init__(self, expression: str, variables: Mapping[str, Any],
                 held: Mapping[str, Any] | None = None, *,
                 unbound: str = "give it a value, or hold it fixed with "
                 + ref("at", "{name}", "{name}=VALUE"),
                 units: Mapping[str, Any] | None = None,
                 to: Mapping[str, Any] | None = None) -> None:
        held = dict(held or {})
        both = next((n for n in variables if n in held), None)
        if both is not None:
            raise EvaluationError(f"'{both}' is both a start variable and held fixed: "
                                  "give it only one way")
        _check_bound(expression, [*variables, *held], unbound)
        self.expression = expression
        self.held = held
        self.variables = list(variables)
        #: physical units (the parameter table's units and to), passed to every prepare
        self.physical = {k: v for k, v in (("units", units), ("to", to)) if v}
        prepared = prepare(expression, "eval", at={**variables, **held}, **self.physical)
        self.units = prepared.units  # evaluation/request_units.py's Units, None without units
        self.program = prepared.program
        self.shape: tuple[int, ...] = prepared.program.shape
        self.columns, self.shapes, self._env = _inputs(prepared, held)
        n = len(self.columns)
        if self.shape == ():
            self.kind = "scalar"
        elif len(self.shape) == 1 and self.shape[0] == n:
            self.kind = "vector"
        else:
            self.kind = "other"
        self._cache: dict[tuple[int, int], Traced] = {}
        #: with units, the factors taking each component of ∇f (a scalar f) or of F (a
        #: field) to the first one's unit, so that |grad f| and |F| are in that unit
        #: (x in cm and y in m: ∂f/∂y in unit(f)/m is counted in unit(f)/cm); None
        #: without units, when they are all 1, or when the components' dimensions differ
        self.norm_weights: np.ndarray | None = None
        if self.units is not None and self.kind in ("scalar", "vector"):
            from gradcli.evaluation.request_units import norm_factors, residual_units

            weights = norm_factors(residual_units(self))
            if weights is not None and not np.all(weights == 1.0):
                self.norm_weights = weights

    @property
    def n(self) -> int:
        """The number of input components."""
        return len(self.columns)

    def _call(self, *leaves: Any) -> list[Any]:
        values = self.program.flat(self.program.run(self._env(leaves)))
        return [take(v, key=idx) if shape else v
                for v, (_, shape) in zip(values, self.program.outputs, strict=True)
                for idx in np.ndindex(*shape)]

    def traced(self, order: int, points: int) -> Traced:
        """The recorded program of the value and its derivatives up to ``order`` for a
        batch of ``points`` points (traced on first use, then kept)."""
        key = (order, points)
        if key not in self._cache:
            self._check_work(order)
            fn = self._call if order == 0 else with_derivatives(self._call, order)
            examples = [np.zeros(points) for _ in self.columns]
            if len(self._cache) >= _CACHED:  # batches that shrank: the oldest goes
                del self._cache[next(iter(self._cache))]
            self._cache[key] = trace(fn, *examples, batch_ndim=1)
        return self._cache[key]

    def _check_work(self, order: int) -> None:
        """Refuse derivatives that would take hours to record (a Hessian of a long vector:
        one sweep per component), as ``prepare`` refuses them for the other commands."""
        outputs = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        sweeps = 0 if order == 0 else outputs * (1 + self.n) if order == 2 else outputs
        work = sweeps * max(1, self.program.op_count)
        if work > MAX_SWEEP_OPS:
            raise EvaluationError(
                f"the derivatives here need {count_text(sweeps)} sweeps over "
                f"{count_text(self.program.op_count)} operations, over the limit of "
                f"{MAX_SWEEP_OPS:,} operations per point: use fewer vector components")

    def outputs(self, X: np.ndarray, order: int) -> list[np.ndarray]:
        """Every output of the order-``order`` program at the points ``X`` (n, N), each
        broadcast to (N,) (an identically zero derivative is an array of zeros). Call
        inside ``grad_mode.quiet()``."""
        N = X.shape[1]
        got = self.traced(order, N).replay(list(X))
        return [o if getattr(o, "shape", None) == (N,) else
                np.zeros(N) if o is None else np.broadcast_to(o, (N,)) for o in got]

    def value(self, X: np.ndarray) -> np.ndarray:
        """f (N,) for a scalar formula, F (m, N) for a vector one."""
        outs = self.outputs(X, 0)
        return outs[0] if self.kind == "scalar" else np.stack(outs)

    def gradient(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f (N,) and ∇f (n, N) of a scalar formula."""
        outs = self.outputs(X, 1)
        return outs[0], np.stack(outs[1:])

    def hessian(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """f (N,), ∇f (n, N) and the Hessian (n, n, N) of a scalar formula."""
        n = self.n
        outs = self.outputs(X, 2)
        return (outs[0], np.stack(outs[1:1 + n]),
                np.stack(outs[1 + n:]).reshape(n, n, -1))

    def jacobian(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F (m, N) and its Jacobian (m, n, N) of a vector formula."""
        m, n = self.shape[0], self.n
        outs = self.outputs(X, 1)
        return np.stack(outs[:m]), np.stack(outs[m:]).reshape(m, n, -1)

    def engine_values(self, X: np.ndarray, what: str) -> dict[str, np.ndarray]:
        """``gradcli.evaluate``'s own columns (``what``: eval, grad, jacobian, hessian) at
        the points ``X`` (n, N): the answer a replay is checked against."""
        points: dict[str, Any] = {}
        j = 0
        for variable, shape in self.shapes.items():
            size = int(np.prod(shape, dtype=np.int64))
            points[variable] = X[j:j + size].T.reshape((-1,) + shape)
            j += size
        result = prepare(self.expression, what, points=points, fixed=self.held,
                         **self.physical).run()
        return {name: np.asarray(result[name]) for name in result}
