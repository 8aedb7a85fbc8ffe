"""``gradcli graph``: the computation graph at one point as a table, JSON or DOT."""

from __future__ import annotations

import sys

from ..evaluation.graph import build_graph
from ..evaluation.specs import parse_point
from .errors import UsageProblem, writing_stdout


def run_graph(expression: str, at: list[str], fmt: str, output: str | None,
              precision: int) -> int:
    """Build the graph at the single ``--at`` point and print or write it."""
    from ..output import atomic_open, graph_view

    if len(at) != 1:
        raise UsageProblem('graph needs exactly one point: --at "x=3"')
    fmt = fmt.lower()
    if fmt not in ("table", "json", "dot"):
        raise UsageProblem(f"graph --format must be table, json or dot, got '{fmt}'")
    point = parse_point(at[0])
    nodes, out = build_graph(expression, point)
    if fmt == "table":
        if output:
            raise UsageProblem("graph writes a table only to the terminal: use -f json or "
                               "-f dot with -o")
        from rich.console import Console

        with writing_stdout():
            Console().print(graph_view.graph_table(expression, nodes, out, precision))
        return 0
    text = (graph_view.graph_json(expression, point, nodes, out) if fmt == "json"
            else graph_view.graph_dot(expression, nodes, out, precision))
    if output:
        with atomic_open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        with writing_stdout():
            sys.stdout.write(text)
    return 0
