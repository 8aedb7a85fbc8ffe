"""``gradcli graph``: the computation graph at one point as a table, JSON or DOT."""

from __future__ import annotations

import sys

from gradcli.cli.definition import BY_NAME
from gradcli.cli.format_choice import choose_format
from gradcli.cli.messages import (
    ExitStatus,
    UsageProblem,
    expression_warnings,
    notes_for,
    writing_stdout,
)
from gradcli.graph.nodes import build_graph
from gradcli.lang.spec_text import parse_point


def run_graph(what: str, expression: str, at: list[str] | None, fmt: str,
              output: str | None, precision: int, quiet: bool,
              units: list[str] | None = None, to: list[str] | None = None) -> int:
    """Build the graph at the single ``--at`` point and print or write it."""
    from gradcli.output import atomic_open, graph_view

    if not at or len(at) != 1:
        raise UsageProblem('graph needs exactly one point: --at "x=3"')
    fmt = choose_format(BY_NAME[what], fmt, output)
    from gradcli.cli.inputs import read_array

    point = parse_point(at[0], files=read_array)
    with expression_warnings(quiet):
        from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

        physical = {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to))
                    if g}
        nodes, out = build_graph(expression, point, **physical)
    if fmt == "table":
        from rich.console import Console

        table = graph_view.graph_table(expression, nodes, out, precision)
        if output:
            with atomic_open(output, "w", encoding="utf-8") as fh:
                Console(file=fh, width=10_000, no_color=True, force_terminal=False).print(table)
            return ExitStatus.OK
        with writing_stdout():
            Console().print(table)
        return ExitStatus.OK
    text = (graph_view.graph_json(expression, point, nodes, out, notes_for(fmt))
            if fmt == "json"
            else graph_view.graph_dot(expression, nodes, out, precision))
    from contextlib import nullcontext

    from gradcli.output import write_text

    with writing_stdout() if not output else nullcontext():  # the format table's writer
        write_text(text, fmt=fmt, path=output, stdout=sys.stdout)
    return ExitStatus.OK
