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
    #: with units: the value's unit (the one it is computed in) and the adjoint's,
    #: unit(f)/unit(node); empty without units
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
    units (``units``/``to`` as for ``evaluate``, or values given with units), every node
    carries its unit and its adjoint's (``_NodeUnits``)."""
    physical = {k: v for k, v in (("units", units), ("to", to)) if v}
    prepared = prepare(expression, "eval", at=[point], **physical)
    units_of = None
    program = prepared.program
    if prepared.units is not None and getattr(prepared.units, "tree", None) is not None:
        # the same tree compiled again, each node told with its slot: its unit follows
        from gradcli.lang.compile import compile_expression

        units_of = _NodeUnits(prepared.units)
        program = compile_expression(prepared.units.tree, expression,
                                     prepared.binding.shapes, observe=units_of)
    rows, output, engine_nodes, regs = _graph(program, prepared.binding)
    if prepared.units is not None:
        by_node = units_of.by_node(regs) if units_of is not None else {}
        _label(rows, output, prepared.units, by_node, engine_nodes)
    return rows, output


class _NodeUnits:
    """The unit of every compiled node, as the compiler meets them (``observe``): the
    unit its value is computed in. The checked program computes in SI base units, so a
    variable is read in its own unit when that is coherent with them (m, s, V) and else
    in its base unit (cm -> m, mA -> A: the program's ``x*0.01`` is then in m); a number
    with a unit in the one ``variable_nodes`` recorded; every other node by the rules of
    the unit inference (a product's unit is the product of its parts' ...). Dimensions
    were checked before (``lang/units.infer``), so a sum takes its first dimensioned
    part's unit (``T + 273.15`` is in K)."""

    def __init__(self, units: Any) -> None:
        from gradcli.lang.units import _is_offset, _to_base, registry

        self.one = registry().Unit("")
        declared = getattr(units, "declared", units.variables)
        self.variables = {n: u if _to_base(u)[:2] == (1.0, 0.0) and not _is_offset(u)
                          else _to_base(u)[2] for n, u in declared.items()}
        self.constants = dict(getattr(units, "constants", {}) or {})
        self.steps = dict(units.steps)
        from gradcli.lang.units import CheckedRules

        self.rules = CheckedRules(self.variables, self.constants)
        #: slot id -> (slot, unit): the slot is kept so that its id stays its own
        self.of: dict[int, tuple[Any, Any]] = {}

    def __call__(self, node: Any, parts: list[Any], slot: Any) -> None:
        from gradcli.lang.ast import Ref

        step = self.steps.get(node.name) if isinstance(node, Ref) else None
        if step is not None and not isinstance(step, tuple):
            # a step's unit as the checked program computes it (a pure number given a
            # unit by the units parameter is that quantity, whatever its formula's own)
            had = self.of.get(id(slot))
            if had is None or isinstance(had[1], tuple) or \
                    had[1].dimensionality != step.dimensionality:
                self.of[id(slot)] = (slot, step)
            return
        if id(slot) in self.of:  # a variable again, a step, a call's inlined body
            return
        known = [self.of.get(id(p)) for p in parts]
        if any(k is None for k in known):
            return
        unit = self.rule(node, [k[1] for k in known])  # type: ignore[index]
        if unit is not None:
            self.of[id(slot)] = (slot, unit)

    def rule(self, node: Any, parts: list[Any]) -> Any:
        """The language's unit rules, without their checks (``lang.units.CheckedRules``)."""
        return self.rules.rule(node, parts)

    def by_node(self, regs: list[Any]) -> dict[int, Any]:
        """The unit of each engine node of a run (by the id of its ``grad_fn``), from
        the registers ``regs`` of the compiled program: each slot's tensor (a literal's
        component tensors, each with its own unit), the earliest step first (a step
        that hands on its input's tensor does not relabel it)."""
        from gradcli.engine.core import Tensor

        out: dict[int, Any] = {}
        for slot, unit in sorted(self.of.values(), key=lambda su: su[0].reg):
            if slot.reg < 0:
                continue
            value = regs[slot.reg]
            items = value if isinstance(value, list) else [value]
            units = unit if isinstance(unit, tuple) else (unit,) * len(items)
            for item, u in zip(items, units, strict=False):
                if isinstance(item, Tensor) and item.grad_fn is not None and \
                        not isinstance(u, tuple):
                    out.setdefault(id(item.grad_fn), u)
        return out


#: engine operations whose result is in their first input's unit (a sum, a stack, a
#: reshape), for the nodes a step makes beyond its own (a reduction's partial sums)
_SAME_UNIT = ("Add", "Sub", "Neg", "Stack", "Sum", "Cat", "Index", "Reshape", "View",
              "Expand", "Clone", "Mean", "Transpose", "Permute", "Squeeze", "Unsqueeze",
              "Select", "Max", "Min", "Abs", "Take", "Broadcast", "Norm")


def _label(rows: list[GraphNode], output: str, units: Any, by_node: dict[int, Any],
           engine_nodes: dict[str, Any]) -> None:
    """Each row's unit and its adjoint's, unit(f)/unit(node): a variable in its declared
    unit; the output in f's unit; a named step in the unit it is computed in; every other
    node in the unit its value is computed in (``_NodeUnits``), or, for a node no step
    of the program names (a sum's partial sums), its first input's when the operation
    keeps it. ``by_node`` gives units by engine node (``_NodeUnits.by_node``),
    ``engine_nodes`` each row's engine node by row id."""
    from gradcli.evaluation.request_units import _delta
    from gradcli.lang.units import _to_base, unit_text

    declared = getattr(units, "declared", units.variables)
    f = units.outputs.get("f") or next(iter(units.outputs.values()), None)
    from gradcli.lang.units import registry

    one = registry().Unit("")
    # a variable in its declared unit; one given none is a pure number
    known = {r.id: declared.get(r.id, one) for r in rows if r.op == "leaf"}
    known = {n: u for n, u in known.items() if u is not None}
    for row in rows:
        if row.id in known:
            continue
        node = engine_nodes.get(row.id)
        unit = by_node.get(id(node)) if node is not None else None
        if unit is None and row.id in units.steps and \
                not isinstance(units.steps[row.id], tuple):
            unit = _to_base(units.steps[row.id])[2]
        if unit is None and any(row.op.startswith(k) for k in _SAME_UNIT):
            unit = next((known[i] for i in row.inputs if i in known), None)
        if unit is not None:
            known[row.id] = unit
    if f is not None:
        known[output] = f
    for row in rows:
        unit = known.get(row.id)
        if unit is None:
            continue
        row.unit = unit_text(unit) or "1"
        if f is not None:
            row.adjoint_unit = unit_text(_delta(f) / _delta(unit)) or "1"


def _graph(program: Any, binding: Any
           ) -> tuple[list[GraphNode], str, dict[str, Any], list[Any]]:
    """The rows and the output id of a compiled scalar program at its one point, each
    row's engine node by row id, and the run's registers."""
    if program.shape != ():
        raise EvaluationError("graph needs a scalar-valued expression (adjoints are ∂f/∂node)")
    leaves = {name: Tensor._make(binding.values[name][0]).requires_grad_()
              for name in binding.names}
    with enable_grad(), quiet():
        regs = program.run_all(leaves)
    out = program.value(regs, program.result)
    if not isinstance(out, Tensor) or out.grad_fn is None:
        rows = [GraphNode(n, "leaf", [], _value(t), 0.0) for n, t in leaves.items()]
        rows.append(GraphNode("f", "constant", [], _value(out), 1.0))
        return rows, "f", {}, regs
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
    by_id: dict[str, Any] = {}
    unnamed = 0
    for node, t in zip(nodes, tensors, strict=True):
        if id(node) not in names:
            unnamed += 1
        ids[id(node)] = names.get(id(node), f"n{unnamed}")
        by_id[ids[id(node)]] = node
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
    return rows, ids[id(nodes[-1])], by_id, regs


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
