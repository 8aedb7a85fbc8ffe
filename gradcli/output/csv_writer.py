"""CSV output: header of column names, then one line per (broadcast) row.

Format (why: must be exact and fast for million-row grids):

* lines end with ``\\n``; fields are separated by ``,``;
* column names containing ``,``, ``"``, CR or LF are quoted per RFC 4180
  (``"a,b"``; inner quotes doubled);
* numbers are written exactly like Python's ``repr(float)`` -- the shortest
  text that reads back bit-identically with ``float()`` (``0.1``, ``29.0``,
  ``1e-05``, ``-0.0``); non-finite values are ``nan``, ``inf``, ``-inf``;
* integer/bool columns are written as floats (``3.0``); float32 columns are
  widened to float64 first (exact, so they round-trip too);
* rows are produced and written in blocks of 64K, so memory stays bounded.

The digits come from the vectorised formatter in ``_floatfmt`` (several
times faster than ``np.savetxt(fmt='%.17g')``; see benchmarks/csv_speed.py).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping
from typing import BinaryIO, TextIO

import numpy as np

from ._columns import CHUNK_ROWS, iter_blocks
from .atomic import atomic_open

__all__ = ["csv_header", "write_csv", "write_csv_path"]


def _quote(name: str) -> str:
    if any(ch in name for ch in ',"\r\n'):
        return '"' + name.replace('"', '""') + '"'
    return name


def csv_header(names: Iterable[str]) -> str:
    """The header line (with trailing newline) for the given column names."""
    return ",".join(_quote(str(n)) for n in names) + "\n"


def write_csv(
    file: TextIO | BinaryIO,
    columns: Mapping[str, np.ndarray],
    *,
    chunk_rows: int = CHUNK_ROWS,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write ``columns`` as CSV to an open text or binary file; return the row count.

    Text files receive ``str`` (ASCII digits, UTF-8-safe names); binary files
    receive UTF-8 bytes. ``progress(rows written, total rows)`` follows the writing.
    """
    text = isinstance(file, io.TextIOBase) or not _is_binary(file)
    header = csv_header(columns.keys())
    file.write(header if text else header.encode("utf-8"))  # type: ignore[arg-type]
    rows = 0
    for block in iter_blocks(columns, chunk_rows, progress):
        if block.size <= _SMALL:
            data = _format_small(block)
        else:
            from ._floatfmt import format_rows  # its tables cost ~10 ms to import

            data = format_rows(block)
        file.write(data.decode("ascii") if text else data)  # type: ignore[arg-type]
        rows += block.shape[0]
    return rows


_SMALL = 4096  # below this many values, repr() beats building the vectorised tables


def _format_small(block: np.ndarray) -> bytes:
    """The same text as ``format_rows`` (Python's repr of each float), for a few rows."""
    rows = np.asarray(block, dtype=np.float64).tolist()
    return "".join(",".join(map(repr, row)) + "\n" for row in rows).encode("ascii")


def _is_binary(file: object) -> bool:
    mode = getattr(file, "mode", "")
    return isinstance(file, io.BufferedIOBase | io.RawIOBase) or "b" in str(mode)


def write_csv_path(
    path: str | os.PathLike[str],
    columns: Mapping[str, np.ndarray],
    *,
    chunk_rows: int = CHUNK_ROWS,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write CSV to ``path`` atomically (OutputError on failure); return the row count."""
    with atomic_open(path, "wb") as fh:
        return write_csv(fh, columns, chunk_rows=chunk_rows, progress=progress)
