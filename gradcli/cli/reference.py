"""The documentation's generated tables, rendered from the code (``make reference``).

    python -m gradcli.cli.reference docs/reference/*.md          # rewrite them in place
    python -m gradcli.cli.reference --check docs/reference/*.md  # exit 1 if out of date

A generated table sits between a line ``<!-- generated: KIND [ARGUMENT] -->`` and the
next ``<!-- generated: end -->``; everything else in a page is left as it is. Kinds:

* ``options GROUP``: the option table of a command group, from the declaration
  (``cli/definition.py``);
* ``functions``: the expression language's functions, aliases and constants, from the
  language's tables (which derive from the engine's rule table);
* ``formats``: every output format, from the format table (``output/formats.py``);
* ``columns``: every command's columns, one row per computation record (in the table's
  order, the built-ins in the CLI's words) and per other command.
* ``distributions``: propagate's input distributions, from their table
  (``uncertainty/distributions.py``).

So a list a user reads can never drift from the code: a test checks every page.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gradcli.cli.definition import Command, Option, all_commands

MARK = "<!-- generated: "
END = "<!-- generated: end -->"
_TITLES = {"numeric": "Options of the numeric commands", "graph": "Options of `graph`",
           "fields": "Options of the commands for where the field leads",
           "plot": "Options of `plot`"}


def _default(option: Option) -> str:
    if option.required:
        return "required"
    if option.shown_default is not None:
        return option.shown_default
    value = option.default_value
    if value is None:
        return "—"
    if option.kind == "flag":
        return "off"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:,}"
    return f"`{value}`"


def _cell(text: str) -> str:
    # `|` would end the cell and `A[0][1]` would read as a reference link
    return text.replace("|", "\\|").replace("[", "\\[")


def _flags(option: Option) -> str:
    names = ", ".join(f"`{f}`" for f in option.flags)
    return f"{names} {option.metavar}" if option.metavar else names


def helps(uses: Sequence[tuple[Command, Option]]) -> dict[str, list[str]]:
    """An option's help texts and the commands declaring each (one option name may mean
    something different per command: --wrt)."""
    out: dict[str, list[str]] = {}
    for command, variant in uses:
        out.setdefault(variant.text, []).append(command.name)
    return out


def _per_command(by_text: dict[str, list[str]]) -> str:
    """One text, or each text after the commands it is for."""
    if len(by_text) == 1:
        return next(iter(by_text))
    return "; ".join(f"{', '.join(names)}: {text.rstrip('.')}"
                     for text, names in by_text.items())


def _table(title: str, commands: Sequence[Command]) -> list[str]:
    rows: dict[str, list[tuple[Command, Option]]] = {}
    for command in commands:
        for option in command.options:
            rows.setdefault(option.name, []).append((command, option))
    everyone = len(commands)
    lines = [f"## {title}", "", "| option | " + ("commands | " if everyone > 1 else "")
             + "default | what it does | example |",
             "|---|---|---|---|" + ("---|" if everyone > 1 else "")]
    for uses in rows.values():
        option = uses[0][1]
        which = ("" if everyone == 1 else "all | " if len(uses) == everyone
                 else " ".join(f"`{c.name}`" for c, _ in uses) + " | ")
        defaults: dict[str, list[str]] = {}
        for command, variant in uses:
            defaults.setdefault(_default(variant), []).append(command.name)
        default, help_ = (_per_command(by_text) for by_text in (defaults, helps(uses)))
        lines.append(f"| {_flags(option)} | {which}{_cell(default)} | {_cell(help_)} "
                     f"| `{_cell(option.example)}` |")
    return [*lines, ""]


def groups(commands: Sequence[Command] | None = None) -> dict[str, list[Command]]:
    """The declared commands by group, in declaration order."""
    out: dict[str, list[Command]] = {}
    for command in all_commands() if commands is None else commands:
        out.setdefault(command.group, []).append(command)
    return out


def render_options(group: str, commands: Sequence[Command] | None = None) -> str:
    """The markdown option table of one command group."""
    members = groups(commands)[group]
    names = " ".join(f"`{c.name}`" for c in members)
    title = _TITLES.get(group, f"Options of {names}")
    return "\n".join(_table(f"{title} ({names})" if len(members) > 1 else title, members))


def render_functions() -> str:
    """The language's functions (from its table), aliases and constants, as markdown."""
    from gradcli.lang.names import ALIASES, CONSTANTS, FUNCTIONS

    kinds = {"elementwise": "elementwise", "binary": "elementwise, two arguments",
             "select": "select", "reduction": "vector or matrix to a scalar",
             "array": "vectors and matrices"}
    lines = ["| function | arguments | kind |", "|---|---|---|"]
    for name in sorted(FUNCTIONS):
        spec = FUNCTIONS[name]
        lines.append(f"| `{name}` | {spec.arity_text()} | {kinds.get(spec.kind, spec.kind)} |")
    aliases = ", ".join(f"`{a}` = `{c}`" for a, c in sorted(ALIASES.items()))
    constants = ", ".join(f"`{c}`" for c in CONSTANTS)
    return "\n".join([*lines, "", f"Aliases: {aliases}. Constants: {constants}.", ""])


def render_formats() -> str:
    """Every output format of the format table, and what each kind of content is."""
    from gradcli.output import formats

    lines = ["| format | extensions | holds | needs a file | streams | extra | what it is |",
             "|---|---|---|---|---|---|---|"]
    for f in formats.FORMATS.values():
        exts = " ".join(f"`{e}`" for e in f.extensions) or "—"
        extra = f"`gradcli[{f.extra}]`" if f.extra else "—"
        lines.append(f"| `{f.name}` | {exts} | {', '.join(f.holds)} | "
                     f"{'yes' if f.file_only else 'no'} | {'yes' if f.streams else 'no'} | "
                     f"{extra} | {_cell(f.summary)} |")
    lines += ["", "What each kind of content is:", ""]
    lines += [f"- **{kind}**: {text}" for kind, text in formats.KINDS.items()]
    return "\n".join([*lines, ""])


def render_columns() -> str:
    """"Commands and their columns": each command's rows (``Command.columns``)."""
    lines = ["| command | columns after the variables | notes |", "|---|---|---|"]
    for command in all_commands():
        for shown, columns, notes in command.columns:
            cells = (shown if "`" in shown else f"`{shown}`", columns, notes)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join([*lines, ""])


def render_distributions() -> str:
    """propagate's input distributions (their table), with parameters and u."""
    from gradcli.uncertainty.distributions import DISTRIBUTIONS

    lines = ["| `--dist NAME=` | JCGM 101 | what it is, and its standard uncertainty u |",
             "|---|---|---|"]
    for d in DISTRIBUTIONS.values():
        lines.append(f"| `{d.usage}` | {d.clause} | {_cell(d.text)} |")
    return "\n".join([*lines, ""])


def render(kind: str, argument: str = "") -> str:
    """The markdown of one generated block, by its kind."""
    if kind == "columns":
        return render_columns()
    if kind == "options":
        return render_options(argument)
    if kind == "functions":
        return render_functions()
    if kind == "formats":
        return render_formats()
    if kind == "distributions":
        return render_distributions()
    raise ValueError(f"unknown generated block kind {kind!r}")


def updated(text: str) -> str:
    """``text`` (a page) with every generated block rendered afresh."""
    out, rest = [], text
    while MARK in rest:
        start = rest.index(MARK)
        head_end = rest.index("-->", start) + 3
        words = rest[start + len(MARK):head_end - 3].split()
        if words == ["end"]:
            raise ValueError("a generated block ends before it begins")
        end = rest.index(END, head_end)
        out += [rest[:head_end], "\n\n", render(*words), "\n", END]
        rest = rest[end + len(END):]
    return "".join(out) + rest


def main(argv: list[str]) -> int:
    """Rewrite (or with ``--check``, verify) the generated blocks of the files in ``argv``."""
    check = "--check" in argv
    stale = 0
    for path in (a for a in argv if a != "--check"):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        new = updated(text)
        if new == text:
            continue
        if check:
            sys.stderr.write(f"{path}: generated tables are out of date: run make reference\n")
            stale = 1
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(new)
    return stale


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
