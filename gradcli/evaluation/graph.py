"""The computation graph of an expression at one point, for ``gradcli graph``.

Runs the compiled program once on leaf tensors, then one reverse sweep with every
intermediate tensor retaining its gradient: each node's value and adjoint ∂f/∂node come
straight from the engine (the seeds' staged computation, x=3: m=9, y=12, p=48).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.core import Tensor, raw
from ..engine.forward import graph_nodes
from ..engine.grad_mode import enable_grad, quiet
from ..lang.compile import _flatten
from . import EvaluationError, prepare


@dataclass
class GraphNode:
    """One row: an id, the operation, its inputs (ids or constants), value and adjoint."""

    id: str
    op: str
    inputs: list[str]
    value: float
    adjoint: float | None
    params: dict[str, Any] = field(default_factory=dict)


def _number(v: Any) -> str:
    return f"{float(np.asarray(v).reshape(-1)[0]):g}"


def build_graph(expression: str, point: dict[str, Any]) -> tuple[list[GraphNode], str]:
    """Nodes in evaluation order (variables first) and the id of the output node."""
    prepared = prepare(expression, "eval", at=[point])
    if prepared.program.shape != ():
        raise EvaluationError("graph needs a scalar-valued expression (adjoints are ∂f/∂node)")
    binding = prepared.binding
    leaves: list[tuple[str, Tensor]] = []
    env: dict[str, Any] = {}
    for col, var, k in binding.column_names():
        t = Tensor._make(binding.components[var][0 if k is None else k].reshape(())) \
            .requires_grad_()
        leaves.append((col, t))
        if k is None:
            env[var] = t
        else:
            env.setdefault(var, []).append(t)
    with enable_grad(), quiet():
        out = _flatten(prepared.program.run(env))[0]
    if not isinstance(out, Tensor) or out.grad_fn is None:
        rows = [GraphNode(col, "leaf", [], float(t.arr), 0.0) for col, t in leaves]
        rows.append(GraphNode("f", "constant", [], float(raw(out)), 1.0))
        return rows, "f"
    nodes = graph_nodes([out])
    tensors = [n.out_ref() for n in nodes]
    for t in tensors:
        t.retain_grad()
    out.backward(retain_graph=True)
    ids: dict[int, str] = {id(t): col for col, t in leaves}
    rows = [GraphNode(col, "leaf", [], float(t.arr), _adjoint(t)) for col, t in leaves]
    for i, (node, t) in enumerate(zip(nodes, tensors, strict=True), start=1):
        ids[id(node)] = f"n{i}"
        inputs = []
        for a in node.saved or ():
            if isinstance(a, Tensor):
                inputs.append(ids.get(id(a.grad_fn) if a.grad_fn is not None else id(a),
                                      _number(a.arr)))
            else:
                inputs.append(_number(a))
        params = {k: v for k, v in node.params.items() if v is not None}
        inputs += [_number(v) for v in params.values() if isinstance(v, (int, float))]
        rows.append(GraphNode(f"n{i}", node.name(), inputs, float(t.arr), _adjoint(t), params))
    return rows, f"n{len(nodes)}"


def _adjoint(t: Tensor) -> float:
    return 0.0 if t.grad is None else float(t.grad.arr)
