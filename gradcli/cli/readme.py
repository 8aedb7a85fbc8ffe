"""The README's option tables, rendered from the declaration (``make readme``).

    python -m gradcli.cli.readme README.md           # rewrite the tables in place
    python -m gradcli.cli.readme --check README.md   # exit 1 if they are out of date

The tables sit between :data:`BEGIN` and :data:`END`; everything else in the file is
left as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .declare import Command, Option, all_commands

BEGIN = "<!-- options: generated from gradcli/cli/declare.py by `make readme` -->"
END = "<!-- options: end -->"
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
    return text.replace("|", "\\|")


def _flags(option: Option) -> str:
    names = ", ".join(f"`{f}`" for f in option.flags)
    return f"{names} {option.metavar}" if option.metavar else names


def helps(uses: Sequence[tuple[Command, Option]]) -> dict[str, list[str]]:
    """An option's help texts and the commands declaring each (one option name may mean
    something different per command: --wrt)."""
    out: dict[str, list[str]] = {}
    for command, variant in uses:
        out.setdefault(variant.help, []).append(command.name)
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
    lines = [f"#### {title}", "", "| option | " + ("commands | " if everyone > 1 else "")
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


def render(commands: Sequence[Command] | None = None) -> str:
    """The markdown of every option table, markers included."""
    groups: dict[str, list[Command]] = {}
    for command in all_commands() if commands is None else commands:
        groups.setdefault(command.group, []).append(command)
    lines = [BEGIN, ""]
    for group, members in groups.items():
        names = " ".join(f"`{c.name}`" for c in members)
        title = _TITLES.get(group, f"Options of {names}")
        lines += _table(f"{title} ({names})" if len(members) > 1 else title, members)
    return "\n".join([*lines, END])


def updated(text: str) -> str:
    """``text`` (a README) with its option tables replaced by freshly rendered ones."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + render() + text[end:]


def main(argv: list[str]) -> int:
    """Rewrite (or with ``--check``, verify) the tables of the file named in ``argv``."""
    check = "--check" in argv
    path = next(a for a in argv if a != "--check")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    new = updated(text)
    if check:
        if new != text:
            sys.stderr.write(f"{path}: option tables are out of date: run make readme\n")
            return 1
        return 0
    if new != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
