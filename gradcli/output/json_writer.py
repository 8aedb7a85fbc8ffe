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
* rows are written in 64K blocks, one row per line, so memory stays bounded.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import BinaryIO, TextIO

import numpy as np

from ._columns import CHUNK_ROWS, iter_blocks
from ._floatfmt import format_rows
from .atomic import atomic_open

__all__ = ["write_json", "write_json_path", "dumps_json"]


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def write_json(
    file: TextIO | BinaryIO,
    columns: Mapping[str, np.ndarray],
    *,
    expression: str = "",
    variables: Sequence[str] = (),
    notes: Sequence[str] = (),
    chunk_rows: int = CHUNK_ROWS,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write the result as one JSON object to an open text/binary file; return rows.
    ``progress(rows written, total rows)`` follows the writing."""
    binary = not isinstance(file, io.TextIOBase) and (
        isinstance(file, io.BufferedIOBase | io.RawIOBase) or "b" in str(getattr(file, "mode", ""))
    )

    def put(chunk: str | bytes) -> None:
        if isinstance(chunk, str):
            file.write(chunk.encode("utf-8") if binary else chunk)  # type: ignore[arg-type]
        else:
            file.write(chunk if binary else chunk.decode("ascii"))  # type: ignore[arg-type]

    put(
        "{"
        f'"expression": {_dump(str(expression))}, '
        f'"variables": {_dump([str(v) for v in variables])}, '
        f'"columns": {_dump([str(c) for c in columns])}, '
        f'"notes": {_dump([str(n) for n in notes])}, '
        '"rows": ['
    )
    rows = 0
    for block in iter_blocks(columns, chunk_rows, progress):
        body = format_rows(block, quote_nonfinite=True)
        # "a,b\nc,d\n" -> "\n[a,b],\n[c,d]"
        put((b",\n[" if rows else b"\n[") + body[:-1].replace(b"\n", b"],\n[") + b"]")
        rows += block.shape[0]
    put("\n]}\n")
    return rows


def write_json_path(
    path: str | os.PathLike[str],
    columns: Mapping[str, np.ndarray],
    **meta: object,
) -> int:
    """Write JSON to ``path`` atomically (OutputError on failure); return rows."""
    with atomic_open(path, "wb") as fh:
        return write_json(fh, columns, **meta)  # type: ignore[arg-type]


def dumps_json(columns: Mapping[str, np.ndarray], **meta: object) -> str:
    """The JSON document as a string (small results, tests)."""
    buf = io.StringIO()
    write_json(buf, columns, **meta)  # type: ignore[arg-type]
    return buf.getvalue()
