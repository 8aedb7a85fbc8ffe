"""Which format a command writes: the ``-o`` extension decides, ``-f`` may only agree.

Every command declares the kinds of content it writes (``Command.writes``); the format
table (``gradcli.output.formats``) gives their formats and extensions, so one rule serves
them all: the extension picks the format; an explicit ``-f`` that contradicts it is an
error naming both; a file without an extension needs ``-f`` (``-f csv -o /dev/stdout``);
any other extension is an error; messages list every accepted extension; a format that
needs a file (``npz``) without ``-o`` is an error naming the extension to use.

:func:`markdown` renders the format table as the docs' page (``docs/reference/formats.md``:
``python -m gradcli.cli.formats docs/reference/formats.md`` writes it).
"""

from __future__ import annotations

import os
import sys

from ..output import formats as format_table
from .declare import Command
from .errors import UsageProblem


def choose_format(command: Command, fmt: str, output: str | None) -> str:
    """The format ``command`` writes for ``-f fmt`` (``auto`` if not given) and ``-o``."""
    if not output:
        if fmt == "auto":
            return command.auto[0] if sys.stdout.isatty() else command.auto[1]
        record = format_table.FORMATS.get(fmt)
        if record is not None and record.file_only:
            ext = record.extensions[0] if record.extensions else f".{fmt}"
            raise UsageProblem(f"{fmt} output needs a file: add -o out{ext}")
        return fmt
    files = dict(command.files)
    ext = os.path.splitext(output.rstrip("/"))[1]  # a directory store: field.zarr/
    by_ext = files.get(ext.lower())
    if by_ext is None:
        accepted = ", ".join(files)
        if ext and fmt != "auto":
            raise UsageProblem(f"--format {fmt} contradicts the extension of '{output}' "
                               f"({command.name} writes {accepted})")
        if ext:
            raise UsageProblem(f"unknown output extension '{ext}': use {accepted}")
        if fmt == "auto":
            raise UsageProblem(f"output file '{output}' has no extension: use {accepted} "
                               "(or name the format with -f)")
        return fmt  # -f names the format of a file without an extension (/dev/stdout)
    if fmt not in ("auto", by_ext):
        raise UsageProblem(f"--format {fmt} contradicts the extension of '{output}' ({ext} "
                           f"means {by_ext}): drop -f or change the extension")
    return by_ext


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The table as a Markdown page (``docs/reference/formats.md`` is this text)."""
    lines = [
        "# Output formats",
        "",
        "<!-- generated from gradcli/output/formats.py by "
        "`python -m gradcli.cli.formats docs/reference/formats.md`: do not edit -->",
        "",
        "Every format gradcli writes, from the one table of formats in "
        "`gradcli/output/formats.py`. With `-o FILE` the extension picks the format; "
        "`-f NAME` names it (for standard output, or a file without an extension). A "
        "command writes every format that holds what it produces.",
        "",
        "| format | extensions | holds | needs a file | streams | extra | what it is |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in format_table.FORMATS.values():
        exts = " ".join(f"`{e}`" for e in f.extensions) or "—"
        extra = f"`gradcli[{f.extra}]`" if f.extra else "—"
        lines.append(f"| `{f.name}` | {exts} | {', '.join(f.holds)} | "
                     f"{'yes' if f.file_only else 'no'} | {'yes' if f.streams else 'no'} | "
                     f"{extra} | {_cell(f.summary)} |")
    lines += ["", "What each kind of content is:", ""]
    lines += [f"- **{kind}**: {text}" for kind, text in format_table.KINDS.items()]
    lines += [
        "", "## Adding a format", "",
        "One record and its writer. `writer(columns, request)` gets the result (a "
        "`Result` or a mapping of column name to array) and a `WriteRequest` (`path`, or "
        "`stdout` when it is None, and the result's description); it returns the notes "
        "for stderr. Every command that writes what the record holds then accepts it "
        "with `-f` and `-o`, lists it in `--help`, and `gradcli.output.write` writes "
        "it:", "",
        "```python",
        "from gradcli.output import formats",
        "",
        "def write_tsv(columns, request):",
        "    ...",
        "    return []",
        "",
        'formats.register(formats.Format("tsv", (".tsv",), (formats.ROWS,),',
        '                                 "Tab-separated values.", writer=write_tsv))',
        "```", "",
        "A format that streams also names a `sink` factory: `sink(request)` returns an "
        "evaluation sink (`open`, `write(start, stop, values)`, `result`, `abort`) that "
        "writes rows as the blocks are computed. A format needing an optional "
        "dependency names its `extra` and the `modules` to check before any work.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write the Markdown page to the file named in ``argv`` (``--check``: exit 1 if it
    differs)."""
    check = "--check" in argv
    path = next(a for a in argv if a != "--check")
    text = markdown()
    if check:
        with open(path, encoding="utf-8") as fh:
            if fh.read() != text:
                sys.stderr.write(f"{path}: out of date: run python -m gradcli.cli.formats "
                                 f"{path}\n")
                return 1
        return 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
