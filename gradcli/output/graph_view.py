"""Render ``gradcli graph`` results as a terminal table, JSON, or Graphviz DOT source."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def _num(v: Any, precision: int) -> str:
    """A node's value: a number, or a vector or matrix shown as brackets (at most 6
    entries, then the shape)."""
    if v is None:
        return ""
    if not isinstance(v, list):
        return f"{v:.{precision}g}"
    flat = _flat(v)
    shown = ", ".join(f"{x:.{precision}g}" for x in flat[:6])
    shape = [len(v)] + ([len(v[0])] if v and isinstance(v[0], list) else [])
    more = f", … ({' × '.join(map(str, shape))})" if len(flat) > 6 else ""
    return f"[{shown}{more}]"


def _flat(v: Any) -> list[float]:
    return [x for item in v for x in _flat(item)] if isinstance(v, list) else [v]


def _units(node: Any) -> dict[str, str]:
    """A node's ``unit`` and ``adjoint_unit`` keys, only when it has a unit."""
    unit = getattr(node, "unit", "")
    return {"unit": unit, "adjoint_unit": node.adjoint_unit} if unit else {}


def _with_unit(text: str, unit: str) -> str:
    return f"{text} {unit}" if unit and unit != "1" else text


def graph_json(expression: str, point: dict[str, Any], nodes: list[Any], output: str,
               notes: Sequence[str] = ()) -> str:
    """Strict JSON: {"expression", "point", "output", "nodes": [{id, op, inputs, value,
    adjoint[, unit, adjoint_unit]}], "notes"} (units only on nodes that have one);
    non-finite numbers become the strings "nan", "inf", "-inf";
    ``notes`` are what the command says beside it (the expression's warnings)."""
    def clean(v: Any) -> Any:
        if isinstance(v, list):
            return [clean(item) for item in v]
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return v

    doc = {
        "expression": expression,
        "point": {k: clean(v) if not isinstance(v, list) else v for k, v in point.items()},
        "output": output,
        "nodes": [{"id": n.id, "op": n.op, "inputs": n.inputs, "value": clean(n.value),
                   "adjoint": clean(n.adjoint)} | _units(n) for n in nodes],
        "notes": [str(n) for n in notes],
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def graph_dot(expression: str, nodes: list[Any], output: str, precision: int) -> str:
    """Graphviz source: one box per node (operation, value, adjoint), edges from inputs."""
    esc = lambda s: s.replace('"', '\\"')  # noqa: E731 - DOT's only special character here
    lines = ["digraph gradcli {", "  rankdir=LR;", f'  label="{esc(expression)}";',
             '  node [shape=box, fontname="monospace"];']
    ids = {n.id for n in nodes}
    for n in nodes:
        label = (f"{n.id}: {n.op}\\nvalue = "
                 f"{_with_unit(_num(n.value, precision), getattr(n, 'unit', ''))}\\n"
                 f"adjoint = "
                 f"{_with_unit(_num(n.adjoint, precision), getattr(n, 'adjoint_unit', ''))}")
        style = ", style=bold" if n.id == output else ""
        lines.append(f'  "{esc(n.id)}" [label="{esc(label)}"{style}];')
        for i, src in enumerate(n.inputs):
            if src in ids:
                lines.append(f'  "{esc(src)}" -> "{esc(n.id)}";')
            else:
                const = f"{n.id}_c{i}"
                lines.append(f'  "{const}" [label="{esc(src)}", shape=plaintext];')
                lines.append(f'  "{const}" -> "{esc(n.id)}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_table(expression: str, nodes: list[Any], output: str, precision: int) -> Any:
    """A rich table: node, operation, inputs, value, adjoint ∂f/∂node. Every text is
    plain (``Text``), never rich markup: ``sum([x, y])`` keeps its brackets."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"computation graph of {expression}"), title_justify="left")
    for name, just in (("node", "left"), ("operation", "left"), ("inputs", "left"),
                       ("value", "right"), ("adjoint ∂f/∂node", "right")):
        table.add_column(name, justify=just)  # type: ignore[arg-type]
    for n in nodes:
        mark = " (f)" if n.id == output else ""
        table.add_row(*map(Text, (
            n.id + mark, n.op, ", ".join(n.inputs),
            _with_unit(_num(n.value, precision), getattr(n, "unit", "")),
            _with_unit(_num(n.adjoint, precision), getattr(n, "adjoint_unit", "")))))
    return table
