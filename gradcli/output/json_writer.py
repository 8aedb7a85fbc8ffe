"""JSON output: strict, standard JSON (no NaN/Infinity tokens).

Schema::

    {"expression": "x**2 + y", "variables": ["x", "y"],
     "columns": ["x", "y", "f", "df/dx"],
     "notes": ["..."],
     "rows": [[0.0, 1.0, 1.0, 0.0], ...]}

* each row lists the column values in ``columns`` order (grids in C order);
* finite numbers use the shortest round-trip text (``repr(float)``), so
  ``json.loads`` returns bit-identical floats;
* **non-finite values are the strings "nan", "inf" and "-inf"** because JSON
  has no such numbers (``json.loads(s, parse_constant=...)`` never fires and
  strict parsers accept the output); readers must map them back, e.g.
  ``float(v)`` works for both numbers and these strings;
* text columns (carried through from a points file) are JSON strings;
* rows are written in 64K chunks, one row per line, so memory stays bounded.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO, TextIO

from gradcli.output._columns import CHUNK_ROWS, RowChunks
from gradcli.output.atomic import atomic_open
from gradcli.output.csv_writer import RowFormatter, _writer
from gradcli.support.allocator import keep_freed_memory
from gradcli.support.threads import default_threads, ordered_map

__all__ = ["write_json", "write_json_path", "dumps_json"]


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def write_json(
    file: TextIO | BinaryIO,
    columns: Mapping[str, Any],
    *,
    expression: str = "",
    variables: Sequence[str] = (),
    notes: Sequence[str] = (),
    chunk_rows: int = CHUNK_ROWS,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write the result as one JSON object to an open text/binary file; return rows."""
    from gradcli.output._columns import column_units

    rows = RowChunks(columns, chunk_rows)
    units = column_units(rows.result)
    put = _writer(file)
    put((
        "{"
        f'"expression": {_dump(str(expression))}, '
        f'"variables": {_dump([str(v) for v in variables])}, '
        f'"columns": {_dump(rows.names)}, '
        f'"notes": {_dump([str(n) for n in notes])}, '
        + (f'"units": {_dump(units)}, ' if units else "")
        + '"rows": ['
    ).encode())
    fmt = RowFormatter(rows, json=True)
    if rows.total > chunk_rows:  # chunk temporaries are reused, not page-faulted in again
        keep_freed_memory()
    ranges = list(rows.chunks())
    workers = 1 if len(ranges) < 2 else (threads or default_threads())
    for (start, stop), body in zip(ranges, ordered_map(fmt, ranges, workers),
                                      strict=True):
        if body.startswith(b"["):  # rows of text and numbers: already bracketed
            body = body[:-1].replace(b"]\n[", b"],\n[")
        else:  # "a,b\nc,d\n" -> "[a,b],\n[c,d]"
            body = b"[" + body[:-1].replace(b"\n", b"],\n[") + b"]"
        put((b",\n" if start else b"\n") + body)
        if progress:
            progress(stop, rows.total)
    put(b"\n]}\n")
    return rows.total


def write_json_path(
    path: str | os.PathLike[str],
    columns: Mapping[str, Any],
    **meta: Any,
) -> int:
    """Write JSON to ``path`` atomically (OutputError on failure); return rows."""
    with atomic_open(path, "wb") as fh:
        return write_json(fh, columns, **meta)


def dumps_json(columns: Mapping[str, Any], **meta: Any) -> str:
    """The JSON document as a string (small results, tests)."""
    buf = io.StringIO()
    write_json(buf, columns, **meta)
    return buf.getvalue()
