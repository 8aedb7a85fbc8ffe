"""CSV output: header of column names, then one line per (broadcast) row.

Format (why: must be exact and fast for million-row grids):

* lines end with ``\\n``; fields are separated by ``,``;
* names and text cells containing ``,``, ``"``, CR or LF are quoted per RFC 4180
  (``"a,b"``; inner quotes doubled); other text is written as it is;
* numbers are written exactly like Python's ``repr(float)`` -- the shortest
  text that reads back bit-identically with ``float()`` (``0.1``, ``29.0``,
  ``1e-05``, ``-0.0``); non-finite values are ``nan``, ``inf``, ``-inf``;
* integer columns are written as integers (``3``); float32 columns get the shortest
  text that reads back as the same float32 (``-0.35017547``); bool columns as floats;
* rows are produced in chunks of 64K, formatted on a thread per core and written in
  order, so memory stays bounded by a few chunks.

The digits come from the vectorised formatter in ``_floatfmt``: the polars and pyarrow
writers print other texts for the same floats (``1e-6``, ``0.000019758...``, ``0``), and
numpy's own float-to-text cast is several times slower (benchmarks/RESULTS.md). A column
that repeats a few values over the rows (a grid variable's axis) is formatted once and
copied.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO, TextIO

import numpy as np

from gradcli.output._columns import CHUNK_ROWS, RowChunks
from gradcli.output.atomic import atomic_open
from gradcli.support.allocator import keep_freed_memory
from gradcli.support.threads import default_threads, ordered_map

__all__ = ["csv_header", "csv_cell", "spreadsheet_safe", "write_csv", "write_csv_path",
           "RowFormatter"]

_SMALL = 4096  # below this many values, repr() beats building the vectorised tables


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` with a leading ``'`` if a spreadsheet would read it as a formula (it
    starts with ``= + - @``, a tab or CR and is not a number), as OWASP advises for CSV
    meant for spreadsheets; other text, and numbers such as ``-2``, unchanged."""
    if not text.startswith(_FORMULA_START):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text


def csv_cell(text: str) -> str:
    """One field, quoted per RFC 4180 when it holds a comma, a quote, CR or LF."""
    if any(ch in text for ch in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_header(names: Iterable[str]) -> str:
    """The header line (with trailing newline) for the given column names."""
    return ",".join(csv_cell(str(n)) for n in names) + "\n"


class RowFormatter:
    """Text of the rows of one chunk, for CSV (``json=False``) or JSON rows.

    Numeric columns go through ``_floatfmt`` (JSON spells nan/inf as strings); text
    columns are quoted per format. A numeric column whose array is much smaller than the
    rows it covers is formatted once, here, and its fields copied into each chunk.
    """

    def __init__(self, rows: RowChunks, *, json: bool = False) -> None:
        self.rows, self.json = rows, json
        self.segments: list[tuple[bool, list[int]]] = []  # (is text, run indices)
        for i, run in enumerate(rows.runs):
            if self.segments and self.segments[-1][0] == run.text:
                self.segments[-1][1].append(i)
            else:
                self.segments.append((run.text, [i]))
        self.fixed: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # run -> (fields, index)
        numeric = [r for r in rows.runs if not r.text]
        col = 0
        for run in numeric:
            arr = np.asarray(run.array)
            if run.count == 1 and run.block.size == 1 and 0 < 8 * arr.size <= rows.total:
                from gradcli.output._floatfmt import field_table

                self.fixed[col] = (field_table(arr, json),
                                   np.arange(arr.size).reshape(arr.shape))
            col += run.count

    def __call__(self, bounds: tuple[int, int]) -> bytes:
        start, stop = bounds
        parts = [self._text(runs, start, stop) if text else self._numbers(start, stop)
                 for text, runs in self.segments]
        if len(parts) == 1 and isinstance(parts[0], bytes):
            return parts[0]
        lines = [p.split(b"\n")[:-1] if isinstance(p, bytes) else p for p in parts]
        if self.json:
            return b"".join(b"[" + b",".join(cells) + b"]\n" for cells in zip(*lines, strict=True))
        return b"".join(b",".join(cells) + b"\n" for cells in zip(*lines, strict=True))

    def _numbers(self, start: int, stop: int) -> bytes:
        kinds = self.rows.kinds
        if (stop - start) * len(self.rows.names) <= _SMALL:
            return b"".join(b",".join(_plain(v, self.json, k) for v, k in zip(row, kinds,
                                                                              strict=True))
                            + b"\n" for row in self.rows.numbers(start, stop).tolist())
        block = self.rows.numbers(start, stop, skip=self.fixed)
        from gradcli.output._floatfmt import format_rows  # its tables cost ~10 ms to import

        fixed = {j: fields[np.broadcast_to(index, self.rows.batch).flat[start:stop]]
                 for j, (fields, index) in self.fixed.items()}
        return format_rows(block, quote_nonfinite=self.json, fixed=fixed, kinds=kinds)

    def _text(self, runs: list[int], start: int, stop: int) -> list[bytes]:
        cols = [self._cells(self.rows.runs[i], start, stop) for i in runs]
        rows = zip(*cols, strict=True)
        if self.json:
            import json

            return [json.dumps(row, ensure_ascii=False, separators=(",", ":"))[1:-1]
                    .encode("utf-8") for row in rows]
        out = []
        for row in rows:
            line = ",".join(row)
            if line.count(",") != len(row) - 1 or '"' in line or "\n" in line or "\r" in line:
                line = ",".join(csv_cell(c) for c in row)
            out.append(line.encode("utf-8"))
        return out


    def _cells(self, run: Any, start: int, stop: int) -> list[str]:
        """A text column's cells of rows ``start:stop`` (one slice for a column of points)."""
        arr = run.array
        if isinstance(arr, np.ndarray) and arr.shape == self.rows.batch == (arr.size,):
            return arr[start:stop].tolist()
        return run.slab(self.rows.batch, start, stop)[:, 0].tolist()


def _plain(v: float, json: bool, kind: str = "f") -> bytes:
    if kind == "i":
        return str(int(v)).encode()
    text = str(np.float32(v)) if kind == "f4" else repr(v)
    return f'"{text}"'.encode() if json and text in ("nan", "inf", "-inf") else text.encode()


def write_csv(
    file: TextIO | BinaryIO,
    columns: Mapping[str, Any],
    *,
    chunk_rows: int = CHUNK_ROWS,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write ``columns`` (a Result or a mapping of columns) as CSV to an open text or
    binary file; return the row count.

    Text files receive ``str`` (UTF-8-safe), binary files UTF-8 bytes. ``progress(done,
    total)`` is called with the rows written so far.
    """
    rows = RowChunks(columns, chunk_rows)
    put = _writer(file)
    put(csv_header(rows.headers).encode("utf-8"))
    fmt = RowFormatter(rows)
    if rows.total > chunk_rows:  # chunk temporaries are reused, not page-faulted in again
        keep_freed_memory()
    ranges = list(rows.chunks())
    workers = 1 if len(ranges) < 2 else (threads or default_threads())
    for (_, stop), data in zip(ranges, ordered_map(fmt, ranges, workers), strict=True):
        put(data)
        if progress:
            progress(stop, rows.total)
    return rows.total


def _writer(file: TextIO | BinaryIO) -> Callable[[bytes], Any]:
    """A function writing bytes to ``file``, decoding them for a text file."""
    mode = getattr(file, "mode", "")
    binary = not isinstance(file, io.TextIOBase) and (
        isinstance(file, io.BufferedIOBase | io.RawIOBase) or "b" in str(mode))
    if binary:
        return file.write  # type: ignore[return-value]
    return lambda data: file.write(data.decode("utf-8"))  # type: ignore[arg-type]


def write_csv_path(
    path: str | os.PathLike[str],
    columns: Mapping[str, Any],
    *,
    chunk_rows: int = CHUNK_ROWS,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write CSV to ``path`` atomically (OutputError on failure); return the row count."""
    with atomic_open(path, "wb") as fh:
        return write_csv(fh, columns, chunk_rows=chunk_rows, threads=threads,
                         progress=progress)
