"""Which format a command writes: the ``-o`` extension decides, ``-f`` may only agree.

Every command declares the kinds of content it writes (``Command.writes``); the format
table (``gradcli.output.formats``) gives their formats and extensions, so one rule serves
them all: the extension picks the format; an explicit ``-f`` that contradicts it is an
error naming both; a file without an extension needs ``-f`` (``-f csv -o /dev/stdout``);
any other extension is an error; messages list every accepted extension; a format that
needs a file (``npz``) without ``-o`` is an error naming the extension to use.

The docs' table of formats is rendered from the same table by ``cli/reference.py``.
"""

from __future__ import annotations

import os
import sys

from gradcli.cli.definition import Command
from gradcli.cli.messages import UsageProblem
from gradcli.output import formats as format_table


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
