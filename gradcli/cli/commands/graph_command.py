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
from gradcli.cli.row_writing import read_parameters
from gradcli.execute import execute
from gradcli.lang.spec_text import parse_point
from gradcli.request import Output, Request


def run_graph(what: str, expression: str, at: list[str] | None, fmt: str,
              output: str | None, precision: int, quiet: bool,
              units: list[str] | None = None, to: list[str] | None = None) -> int:
    """Build the graph at the single ``--at`` point (one Request, run by the executor:
    ``graph.nodes.graph_request``) and write it with the request's output part."""
    from gradcli import output as writers
    from gradcli.output import graph_view

    if not at or len(at) != 1:
        raise UsageProblem('graph needs exactly one point: --at "x=3"')
    fmt = choose_format(BY_NAME[what], fmt, output)
    from gradcli.cli.inputs import read_array

    request = Request(expression, what, at=[parse_point(at[0], files=read_array)],
                      parameters=read_parameters({}, units, to),
                      output=Output(fmt, output, precision, quiet=quiet))
    with expression_warnings(quiet):
        out = execute(request)
    nodes, root, point = out.columns, out.facts["output"], out.facts["point"]
    o = request.output
    if o.format == "table":
        from rich.console import Console

        table = graph_view.graph_table(expression, nodes, root, o.precision)
        if o.path:
            with writers.atomic_open(o.path, "w", encoding="utf-8") as fh:
                Console(file=fh, width=10_000, no_color=True, force_terminal=False).print(table)
            return ExitStatus.OK
        with writing_stdout():
            Console().print(table)
        return ExitStatus.OK
    text = (graph_view.graph_json(expression, point, nodes, root, notes_for(o.format))
            if o.format == "json"
            else graph_view.graph_dot(expression, nodes, root, o.precision))
    from contextlib import nullcontext

    with writing_stdout() if not o.path else nullcontext():  # the format table's writer
        writers.write_text(text, fmt=o.format, path=o.path, stdout=sys.stdout)
    return ExitStatus.OK
