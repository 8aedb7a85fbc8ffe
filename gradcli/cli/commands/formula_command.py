"""``--formula``: print a command's derivatives as formulas instead of computing values.

``gradcli.formula`` does the work; this module reads the options it shares with the
numeric commands (``--at`` for vector lengths, ``--wrt``, ``--direction``, ``--order``,
``--unit-vector``, ``--memory``), refuses the ones that only make sense for values, and writes
the lines: one ``name = formula`` per line (text), one flat JSON object, or LaTeX; ``-o``
writes them atomically.

Exit statuses: 2 for a request with no formula (bad input, as everywhere); 1 when the
formulas are past a limit on their size: a closed form too long to print (it is not a
result: the note goes to stderr, nothing to stdout or to ``-o``), or more to build than the
memory budget or the output's bound allows.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from gradcli.cli.inputs import read_array
from gradcli.cli.messages import RuntimeProblem, UsageProblem, writing_stdout
from gradcli.output import formats as _format_table

#: the options --formula reads; any other given a value of its own is refused (it
#: concerns values: points, checks, digits, dtype, where to compute)
_FORMULA_OPTIONS = {"expression", "fmt", "output", "quiet", "at", "wrt", "direction", "unit",
                    "order", "vector", "memory"}
#: what -o's extension means for formulas
#: the formulas' formats by extension, from the format table
_FILES = {ext: f.name for f in _format_table.holding((_format_table.FORMULA,))
          for ext in f.extensions}
#: the library's parameter names, as the command line spells them
_FLAGS = [(re.compile(r"\bwrt\b"), "--wrt"), (re.compile(r"\bdirection\b"), "--direction"),
          (re.compile(r"^at names"), "--at names"), (re.compile(r"\border=(\d+)"), r"--order \1"),
          (re.compile(r"form='program'"), "--formula program"),
          (re.compile(r"\bmemory="), "--memory"),
          (re.compile(r"ask for the program form"), "--formula program prints it")]


def _flags(message: str) -> str:
    for pattern, flag in _FLAGS:
        message = pattern.sub(flag, message)
    return message


def _labels(expression: str, at: list[dict[str, Any]]) -> list[str]:
    """The names a column's derivatives may name: variables, their components, steps."""
    import numpy as np

    from gradcli.lang import Assign, parse, walk

    tree = parse(expression)
    names = {v.name for v in walk(tree) if getattr(v, "name", None) and isinstance(
        v.name, str)} | {n for n in (at[0] if at else {})}
    labels = set(names) | {s.name for s in walk(tree) if isinstance(s, Assign)}
    for name, value in (at[0] if at else {}).items():
        labels |= {f"{name}[{i}]" for i in range(int(np.size(value)))}
    return sorted(labels)


def run_formula(what: str, form: str | None, **options: Any) -> int:
    """Print (or write) the formulas of ``what``; return the exit status."""
    from gradcli.errors import EvaluationError
    from gradcli.execute import execute
    from gradcli.formulas.derivative_formulas import whats
    from gradcli.lang.formula_printer import TooLarge, TooLong, latex_name
    from gradcli.lang.spec_text import parse_point
    from gradcli.request import Output, Request

    fmt, output = options.get("fmt", "auto"), options.get("output")
    if form is None:
        raise UsageProblem("-f latex writes formulas: add --formula")
    if what not in whats():
        raise UsageProblem(f"{what} has no --formula")
    from gradcli.cli.definition import BY_NAME

    for option in BY_NAME[what].options:
        value = options.get(option.name)
        if option.name not in _FORMULA_OPTIONS and value not in (None, False, []) and \
                value != option.default_value:
            flag = option.flags[0]
            raise UsageProblem(f"{flag} concerns values; --formula prints formulas: drop {flag}")
    if output:
        ext = os.path.splitext(output)[1].lower()
        if ext not in _FILES:
            raise UsageProblem(f"--formula writes {', '.join(_FILES)} files, not '{output}'")
        if fmt not in ("auto", _FILES[ext]):
            raise UsageProblem(f"--format {fmt} contradicts the extension of '{output}'")
        fmt = _FILES[ext]
    if fmt in ("auto", "table"):
        fmt = "text"
    if fmt not in ("text", "json", "latex"):
        raise UsageProblem(f"--formula prints text, json or latex, not {fmt}")
    if form == "program" and fmt != "text":
        raise UsageProblem("--formula program prints the program as text: drop -f")
    at = [parse_point(spec, files=read_array) for spec in options.get("at") or []]
    parameters: dict[str, Any] = {"computation": what,
                                  "form": "latex" if fmt == "latex" else form,
                                  "wrt": options.get("wrt") or None,
                                  "unit": bool(options.get("unit"))}
    from gradcli.request.parameters import TABLE

    for name in ("direction", "vector"):  # read as the numeric commands read them
        if options.get(name) is not None:
            parameters[name] = TABLE[name].read(options[name], read_array)
    if options.get("order") is not None:
        parameters["order"] = options["order"]
    request = Request(options["expression"], "formula", at=at or None, parameters=parameters,
                      memory=options.get("memory"), output=Output(fmt, output))
    try:
        result = execute(request)
    except TooLarge as exc:
        raise RuntimeProblem(_flags(str(exc))) from None
    except EvaluationError as exc:
        raise UsageProblem(_flags(str(exc))) from None
    if isinstance(result, str):
        text = result + "\n"
    else:
        long = [name for name, value in result.items() if isinstance(value, TooLong)]
        if long:  # not a result: nothing is printed or written
            more = f" (and {len(long) - 1:,} more)" if len(long) > 1 else ""
            raise RuntimeProblem(f"{long[0]}{more}: {_flags(result[long[0]])}")
        if fmt == "json":
            text = json.dumps(result, ensure_ascii=False) + "\n"
        else:
            labels = _labels(options["expression"], at)
            lines = []
            for name, value in result.items():
                column = "/" in name or name.split("[")[0] in ("laplacian", "div", "curl",
                                                               "jvp")
                shown = latex_name(name, labels) if fmt == "latex" and column else name
                lines.append(f"{shown} = {value}")
            text = "".join(line + "\n" for line in lines)
    from contextlib import nullcontext

    from gradcli.output import write_text

    with writing_stdout() if not output else nullcontext():  # the format table's writer
        write_text(text, fmt=fmt, path=output, stdout=sys.stdout)
    return 0
