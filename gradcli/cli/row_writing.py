"""How a command writes an application's rows: the format chosen (and its extra checked)
before the work, then the outcome written with the request's output part, and the
library's notes said in the command line's words.

Shared by the commands whose applications return rows (``critical``, ``descend``,
``flow``, ``implicit``, ``integrate``, the curvilinear operators, ``propagate``).
"""

from __future__ import annotations

import sys
from typing import Any

from gradcli.cli.definition import BY_NAME
from gradcli.cli.format_choice import choose_format
from gradcli.cli.messages import note, notes_for, option_words, writing_stdout
from gradcli.request import Output, Request

__all__ = ["chosen_format", "write_rows", "said", "read_parameters", "output_part"]


def chosen_format(command: str, fmt: str, output: str | None) -> str:
    """The format ``command`` writes (``cli.format_choice``), its extra checked now: before
    the work, not after it."""
    from gradcli.output import require_format

    chosen = choose_format(BY_NAME[command], fmt, output)
    require_format(chosen)
    return chosen


def write_rows(columns: Any, request: Request, variables: Any = (),
               after: list[str] | tuple[str, ...] = ()) -> None:
    """Write ``columns`` with ``request``'s output part (format, path, precision, history);
    a JSON document's ``notes`` hold every note of the run, ``after`` (said once the rows
    are written) included."""
    from gradcli import output

    o = request.output
    with writing_stdout():
        notes = output.write(columns, fmt=o.format, path=o.path,
                             expression=request.expression, variables=list(variables),
                             notes=notes_for(o.format, (), after), precision=o.precision,
                             stdout=sys.stdout, history=o.history, **(o.extras or {}))
    for line in notes:
        note(line, o.quiet)


def said(notes: list[str]) -> list[str]:
    """The library's notes (parameter references in them) in the command line's words."""
    from gradcli.errors import render_references

    return [render_references(line, option_words) for line in notes]


def read_parameters(given: dict[str, Any], units: list[str] | None = None,
                    to: list[str] | None = None, command: str | None = None
                    ) -> dict[str, Any]:
    """A request's parameters from a command's options: those given (None, an empty list
    of a repeated option, or with
    ``command`` the option's declared default, is "not given": the library's default is
    the same), ``units`` and ``to`` read by the parameter table's syntax (``--unit x=m``)."""
    from gradcli.request.parameters import TABLE

    defaults = {} if command is None else {
        option.name: option.default_value for option in BY_NAME[command].options}
    out = {name: value for name, value in given.items() if value is not None
           and not (isinstance(value, list) and not value)
           and not (name in defaults and value == defaults[name])}
    out |= {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to)) if g}
    return out


#: the output part's own options, by the keyword a body receives
_OUTPUT = ("fmt", "output", "precision", "overwrite", "quiet")


def output_part(command: str, options: dict[str, Any], history: str = "",
                choose: bool = True) -> Output:
    """The request's output part from ``command``'s declared options, taken out of
    ``options`` (a body's keywords): ``fmt`` (the format chosen from it and ``output``'s
    extension, its extra checked now), ``output``, ``precision``, ``overwrite``, ``quiet``
    and every option declared ``to_writer`` (into ``extras``, by the writer's keyword), so
    that a new output option is its declaration and nothing in the bodies. ``choose``
    False leaves the format as given (the numeric commands choose it from the plan)."""
    declared = {o.name: o for o in BY_NAME[command].options}
    given = {name: options.pop(name) for name in list(options)
             if name in _OUTPUT or getattr(declared.get(name), "to_writer", None)}
    extras = {declared[n].to_writer: v for n, v in given.items()
              if n not in _OUTPUT and v is not None}
    fmt = given.get("fmt") or "auto"
    if choose:
        fmt = chosen_format(command, fmt, given.get("output"))
    return Output(fmt, given.get("output"), given.get("precision", 6),
                  bool(given.get("overwrite")), history, bool(given.get("quiet")),
                  extras or None)
