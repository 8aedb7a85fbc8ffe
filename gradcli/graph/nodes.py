"""The computation graph of an expression or program at one point, for ``gradcli graph``.

Runs the compiled program once on leaf tensors, then one reverse sweep with every
intermediate tensor retaining its gradient: each node's value and adjoint ∂f/∂node come
straight from the engine. A node a program names (``m = x^2``) is shown under its name,
the others as ``n1``, ``n2``...: the seeds' staged computation ``m = x^2; y = m + x;
p = 4*y`` at x = 3 gives m = 9, y = 12, p = 48 with adjoints 4, 4, 1, and x 28. A vector
or matrix node's value and adjoint are lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.engine.core import Tensor, raw
from gradcli.engine.forward import graph_nodes
from gradcli.engine.grad_mode import enable_grad, quiet
from gradcli.errors import EvaluationError, ref
from gradcli.evaluation.evaluator import prepare
from gradcli.request import Outcome, Request

Value = float | list[Any]


@dataclass
class GraphNode:
    """One row: an id, the operation, its inputs (ids or constants), value and adjoint
    (numbers, or nested lists for vector and matrix nodes)."""

    id: str
    op: str
    inputs: list[str]
    value: Value
    adjoint: Value | None
    params: dict[str, Any] = field(default_factory=dict)
    #: with units: the value's unit and the adjoint's, unit(f)/unit(node) (empty for a
    #: node whose unit is not known: an unnamed intermediate one)
    unit: str = ""
    adjoint_unit: str = ""


def _value(v: Any) -> Value:
    arr = np.asarray(raw(v), dtype=float)
    return float(arr) if arr.ndim == 0 else arr.tolist()


def _constant(v: Any) -> str:
    """A constant input as text: the number, or a short vector (``[1, 2, 3, …]``)."""
    arr = np.asarray(raw(v), dtype=float).reshape(-1)
    if arr.size == 1:
        return f"{arr[0]:g}"
    shown = ", ".join(f"{a:g}" for a in arr[:4])
    return f"[{shown}{', …' if arr.size > 4 else ''}]"


# structural parameters of a primitive, not inputs a reader wants to see
_STRUCTURAL = ("dim", "keepdim", "key", "shape", "axes", "reverse", "comp", "ndim")


def build_graph(expression: str, point: dict[str, Any], *,
                units: dict[str, str] | None = None,
                to: dict[str, str] | None = None) -> tuple[list[GraphNode], str]:
    """Nodes in evaluation order (variables first) and the id of the output node. With
    units (``units``/``to`` as for ``evaluate``, or values given with units), each
    variable, named step and the output carries its unit and its adjoint's."""
    physical = {k: v for k, v in (("units", units), ("to", to)) if v}
    prepared = prepare(expression, "eval", at=[point], **physical)
    rows, output = _graph(prepared)
    if prepared.units is not None:
        _label(rows, output, prepared.units)
    return rows, output


def _label(rows: list[GraphNode], output: str, units: Any) -> None:
    """Each row's unit and its adjoint's: a variable in its declared unit; a named step
    in the SI base units it is computed in (the checked expression computes in them); the
    output in f's unit. Unnamed intermediate nodes have none that is known here."""
    from gradcli.evaluation.request_units import _delta
    from gradcli.lang.units import _to_base, unit_text

    declared = getattr(units, "declared", units.variables)
    f = units.outputs.get("f") or next(iter(units.outputs.values()), None)
    known = {n: u for n, u in declared.items()}
    known |= {n: _to_base(u)[2] for n, u in units.steps.items()}
    if f is not None:
        known[output] = f
    for row in rows:
        unit = known.get(row.id)
        if unit is None:
            continue
        row.unit = unit_text(unit) or "1"
        if f is not None:
            row.adjoint_unit = unit_text(_delta(f) / _delta(unit)) or "1"


def _graph(prepared: Any) -> tuple[list[GraphNode], str]:
    """The rows and the output id of a prepared scalar program at its one point."""
    program = prepared.program
    if program.shape != ():
        raise EvaluationError("graph needs a scalar-valued expression (adjoints are ∂f/∂node)")
    binding = prepared.binding
    leaves = {name: Tensor._make(binding.values[name][0]).requires_grad_()
              for name in binding.names}
    with enable_grad(), quiet():
        regs = program.run_all(leaves)
    out = program.value(regs, program.result)
    if not isinstance(out, Tensor) or out.grad_fn is None:
        rows = [GraphNode(n, "leaf", [], _value(t), 0.0) for n, t in leaves.items()]
        rows.append(GraphNode("f", "constant", [], _value(out), 1.0))
        return rows, "f"
    names: dict[int, str] = {}
    for name, slot in program.named.items():
        step = program.value(regs, slot)
        if isinstance(step, Tensor) and step.grad_fn is not None:
            names.setdefault(id(step.grad_fn), name)
    nodes = graph_nodes([out])
    tensors = [n.out_ref() for n in nodes]
    for t in tensors:
        t.retain_grad()
    out.backward(retain_graph=True)
    ids: dict[int, str] = {id(t): name for name, t in leaves.items()}
    rows = [GraphNode(n, "leaf", [], _value(t), _adjoint(t)) for n, t in leaves.items()]
    unnamed = 0
    for node, t in zip(nodes, tensors, strict=True):
        if id(node) not in names:
            unnamed += 1
        ids[id(node)] = names.get(id(node), f"n{unnamed}")
        inputs = []
        for a in node.saved or ():
            if isinstance(a, Tensor):
                inputs.append(ids.get(id(a.grad_fn) if a.grad_fn is not None else id(a),
                                      _constant(a.arr)))
            else:
                inputs.append(_constant(a))
        params = {k: v for k, v in node.params.items() if v is not None}
        inputs += [_constant(v) for k, v in params.items()
                   if isinstance(v, (int, float)) and k not in _STRUCTURAL]
        rows.append(GraphNode(ids[id(node)], node.name(), inputs, _value(t), _adjoint(t),
                              params))
    return rows, ids[id(nodes[-1])]


def _adjoint(t: Tensor) -> Value:
    return _value(np.zeros_like(t.arr)) if t.grad is None else _value(t.grad.arr)


def graph_request(request: Request, **_: Any) -> Outcome:
    """``graph`` (``gradcli.execute``): the graph at the one point ``at`` (a point, or a
    list of one), ``parameters`` ``units`` and ``to``. The Outcome's ``columns`` are the
    nodes in evaluation order; ``facts``: ``output`` (the output node's id) and ``point``."""
    at = request.at
    points = [at] if isinstance(at, Mapping) else list(at or [])
    if len(points) != 1:
        raise EvaluationError(f"graph needs exactly one point: "
                              f"{ref('at', text='x=3', python=repr({'x': 3}))}")
    p = request.parameters or {}
    nodes, output = build_graph(request.expression, dict(points[0]), units=p.get("units"),
                                to=p.get("to"))
    return Outcome(nodes, f"graph of {request.expression}",
                   facts={"output": output, "point": dict(points[0])})
