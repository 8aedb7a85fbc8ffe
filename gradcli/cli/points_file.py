"""``--points FILE`` (``-`` for stdin): a CSV whose header names the variables.

- A column named after a variable of the expression binds it; ``x[0]``, ``x[1]``, ... make
  a vector variable ``x``, ``A[0][0]``, ``A[0][1]``, ... a matrix variable ``A``. Every
  other column (ids, labels, other measurements, variables the expression does not use)
  is carried through to the output as text, exactly as written, before the variable
  columns, so results can be joined back.
- A UTF-8 byte-order mark and CRLF line ends are fine; cells may be quoted (RFC 4180);
  blank lines are skipped. A value of a variable's column that is not a number is an error
  naming the file, the line and the column.
- Reading is bounded (``reading.BoundedReader``): a line over 32 MiB, bytes that are not
  text, or more rows than ``--max-points`` stop it with an error while reading.

Speed: the file is read in chunks of a few MiB, parsed on a thread per core. A chunk
without quotes is split with whole-array byte comparisons and its numbers converted by
``decimals.parse_decimals``; anything unusual in a chunk (quotes, whitespace-only lines, a
cell that is not a plain number) sends that chunk through Python's ``csv`` module and
``float()``, which also give the precise error.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from ..evaluation import EvaluationError
from ..evaluation.allocator import keep_freed_memory
from ..evaluation.binding import count_text
from ..evaluation.runner import default_threads, ordered_map
from .decimals import WIDTH, parse_decimals
from .reading import MAX_LINE, BoundedReader

__all__ = ["read_points", "PointsTable"]

_COLUMN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
_BLANK_RUNS = re.compile(rb"\n\n+")
_PAD = bytes(WIDTH)
_CHUNK = 1 << 19  # bytes per chunk: its parsing temporaries stay in the caches


@dataclass
class PointsTable:
    """What a points file binds: the variables (``(N,)`` or ``(N, k)`` arrays, for
    ``points=``) and the carried text columns (object arrays of str, for ``carry=``)."""

    variables: dict[str, np.ndarray] = field(default_factory=dict)
    carried: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class _Columns:
    """The header's columns: which bind variables, which are carried."""

    names: list[str]
    numeric: list[int]                # columns of variables, in variable order
    carried: list[int]                # the others, in file order
    variables: dict[str, list[int]]   # variable -> its columns (components in order)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # variable -> its shape


def _classify(header: list[str], names: Collection[str], label: str) -> _Columns:
    seen: dict[str, int] = {}
    parts: dict[str, list[tuple[tuple[int, ...], int]]] = {}
    carried = []
    for col, h in enumerate(header):
        if h in seen:
            raise EvaluationError(f"{label}: header column {col + 1} '{h}' appears twice "
                                  f"(first as column {seen[h] + 1})")
        seen[h] = col
        m = _COLUMN.fullmatch(h)
        if m is None or m.group(1) not in names:
            carried.append(col)
            continue
        index = tuple(int(k) for k in _INDEX.findall(m.group(2)))
        parts.setdefault(m.group(1), []).append((index, col))
    variables, shapes = {}, {}
    for name, cols in parts.items():
        cols.sort()
        depth = {len(k) for k, _ in cols}
        if len(depth) > 1:
            raise EvaluationError(f"{label}: '{name}' has columns of different kinds "
                                  f"({', '.join(header[c] for _, c in cols[:3])}): give "
                                  f"{name}, {name}[i] or {name}[i][j] columns")
        shape = tuple(max(k[d] for k, _ in cols) + 1 for d in range(depth.pop()))
        if [k for k, _ in cols] != list(np.ndindex(*shape)):
            want = ", ".join(name + "".join(f"[{i}]" for i in k) for k in
                             list(np.ndindex(*shape))[:2])
            raise EvaluationError(f"{label}: columns of '{name}' must be {want}, ... without "
                                  "gaps")
        variables[name] = [c for _, c in cols]
        shapes[name] = shape
    numeric = [c for cols in variables.values() for c in cols]
    return _Columns(header, numeric, carried, variables, shapes)


@dataclass
class _Chunk:
    rows: int
    numbers: np.ndarray              # (rows, len(numeric))
    text: np.ndarray                 # (rows, len(carried)) of str


class _Parser:
    """Parses chunks of data lines (whole lines, LF ends) into a _Chunk."""

    def __init__(self, columns: _Columns, label: str) -> None:
        self.cols, self.label = columns, label
        self.width = len(columns.names)
        self.pick = itemgetter(*columns.carried) if columns.carried else None

    def __call__(self, item: tuple[int, bytes]) -> _Chunk:
        first_line, chunk = item
        if chunk and not chunk.endswith(b"\n"):
            chunk += b"\n"
        fast = self._fast(chunk)
        return fast if fast is not None else self._general(chunk, first_line)

    def _fast(self, chunk: bytes) -> _Chunk | None:
        """Whole-array parsing, or None when this chunk needs the careful path."""
        if b'"' in chunk:
            return None
        if chunk.startswith(b"\n") or b"\n\n" in chunk:
            chunk = _BLANK_RUNS.sub(b"\n", chunk).lstrip(b"\n")
        if not chunk:  # blank lines only: no rows (as a header alone)
            return self._general(chunk, 0)
        data = _PAD + chunk
        buf = np.frombuffer(data, dtype=np.uint8)
        seps = np.flatnonzero((buf == 44) | (buf == 10))
        rows = chunk.count(b"\n")
        if seps.size != rows * self.width:
            return None
        ends = seps.reshape(rows, self.width)
        if not (buf[ends[:, -1]] == 10).all():  # then every other separator is a comma
            return None
        numbers = np.empty((rows, len(self.cols.numeric)), dtype=np.float64)
        if self.cols.numeric:
            lengths = np.diff(seps, prepend=WIDTH - 1) - 1
            if self.cols.numeric != list(range(self.width)):  # carried or permuted columns
                ends, lengths = ends[:, self.cols.numeric], lengths.reshape(rows, -1)[
                    :, self.cols.numeric]
            values, ok = parse_decimals(data, ends.reshape(-1), lengths.reshape(-1))
            if not ok.all():
                bad = np.flatnonzero(~ok)
                e = ends.reshape(-1)[bad]
                s = (e - lengths.reshape(-1)[bad]).tolist()
                try:
                    values[bad] = [float(data[a:b]) for a, b in zip(s, e.tolist(), strict=True)]
                except ValueError:
                    return None  # the careful path names the cell
            numbers[:] = values.reshape(rows, -1)
        lines = chunk.decode("utf-8").split("\n")[:-1] if self.pick else []
        return _Chunk(rows, numbers, self._text([line.split(",") for line in lines]))

    def _text(self, rows: list[list[str]]) -> np.ndarray:
        """The carried cells of ``rows`` as a (rows, carried) array of str."""
        out = np.empty((len(rows), len(self.cols.carried)), dtype=object)
        if self.pick is not None and rows:
            picked = list(map(self.pick, rows))
            if len(self.cols.carried) == 1:
                out[:, 0] = picked
            else:
                out[...] = picked
        return out

    def _general(self, chunk: bytes, first_line: int) -> _Chunk:
        """Python's csv module and float(): any quoting, and precise errors."""
        reader = csv.reader(io.StringIO(chunk.decode("utf-8"), newline=""))
        rows, numbers = [], []
        numeric = self.cols.numeric
        try:
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                line = first_line + reader.line_num - 1
                if len(row) != self.width:
                    raise EvaluationError(f"{self.label}: line {line:,} has {len(row)} "
                                          f"fields, the header has {self.width}")
                values = []
                for j in numeric:
                    try:
                        values.append(float(row[j]))
                    except ValueError:
                        raise EvaluationError(
                            f"{self.label}: line {line:,}, column '{self.cols.names[j]}': "
                            f"'{row[j].strip()}' is not a number") from None
                numbers.append(values)
                rows.append(row)
        except csv.Error as exc:
            raise EvaluationError(f"{self.label}: line {first_line + reader.line_num - 1:,}: "
                                  f"{exc}") from None
        return _Chunk(len(rows), np.array(numbers, dtype=np.float64).reshape(
            len(rows), len(numeric)), self._text(rows))


def _records(chunks: Iterable[bytes], reader: BoundedReader, rest: bytes,
             first: int) -> Iterable[tuple[int, bytes]]:
    """(first line number, chunk) of the data: ``rest`` (the header chunk's data lines),
    then the reader's chunks. A quoted cell may span lines: a chunk that ends inside quotes
    keeps its last record for the next chunk."""
    pending, line = rest, first
    for chunk in chunks:
        if pending:
            pending += chunk
        else:
            pending, line = chunk, reader.first_line
        cut = _record_end(pending)
        if cut == len(pending):
            yield line, pending
            pending = b""
        elif cut:
            yield line, pending[:cut]
            line += pending.count(b"\n", 0, cut)
            pending = pending[cut:]
        if len(pending) > reader.max_line:
            raise EvaluationError(f"{reader.label}: a quoted cell from line {line:,} runs over "
                                  "the limit for one line")
    if pending:
        yield line, pending


def _record_end(chunk: bytes) -> int:
    """The end of the last whole record (just after a newline outside quotes)."""
    if b'"' not in chunk:
        return len(chunk)
    quotes = np.cumsum(np.frombuffer(chunk, dtype=np.uint8) == 34)
    newlines = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
    outside = newlines[quotes[newlines] % 2 == 0]
    return int(outside[-1]) + 1 if outside.size else 0


def read_points(source: str, names: Collection[str], max_points: int, *,
                max_line: int = MAX_LINE, threads: int | None = None) -> PointsTable:
    """Read a points CSV (``"-"`` for stdin) for an expression whose variables are
    ``names``: the columns naming them bind them; all others are carried as text."""
    label = f"--points {'stdin' if source == '-' else source}"
    keep_freed_memory()  # each chunk's temporaries are reused, not page-faulted in again
    with BoundedReader(source, label=label, max_line=max_line, read_size=_CHUNK) as reader:
        chunks = reader.chunks()
        header_line, rest, first = _header(chunks, reader)
        header = [h.strip() for h in next(csv.reader([header_line.decode("utf-8")]))]
        cols = _classify(header, names, label)
        if not cols.variables:
            raise EvaluationError(
                f"{label}: no column names a variable of the expression "
                f"({', '.join(sorted(names)) or 'it has none'}); columns: "
                f"{', '.join(header[:10])}{', ...' if len(header) > 10 else ''}")
        parser = _Parser(cols, label)
        parts: list[_Chunk] = []
        total = 0
        items = _records(chunks, reader, rest, first)
        workers = threads or default_threads()
        for part in ordered_map(parser, items, workers):
            total += part.rows
            if total > max_points:
                raise EvaluationError(f"{label}: at least {count_text(total)} points, over the "
                                      f"limit of {max_points:,}; raise it with --max-points")
            parts.append(part)
    table = PointsTable()
    if cols.carried:
        text = (np.concatenate([p.text for p in parts]) if parts
                else np.empty((0, len(cols.carried)), dtype=object))
        for j, col in enumerate(cols.carried):
            table.carried[header[col]] = text[:, j]
    pos = 0
    for name, members in cols.variables.items():
        span = slice(pos, pos + len(members))
        values = np.concatenate([p.numbers[:, span] for p in parts]) if parts else \
            np.empty((0, len(members)))
        table.variables[name] = values.reshape((len(values),) + cols.shapes[name])
        pos += len(members)
    return table


def _header(chunks: Any, reader: BoundedReader) -> tuple[bytes, bytes, int]:
    """The first non-blank line, the rest of its chunk, and the line number after it."""
    for chunk in chunks:
        line = reader.first_line
        pos = 0
        while pos < len(chunk):
            end = chunk.find(b"\n", pos)
            end = len(chunk) if end < 0 else end
            if chunk[pos:end].strip():
                return chunk[pos:end], chunk[end + 1:], line + 1
            pos, line = end + 1, line + 1
    raise EvaluationError(f"{reader.label}: empty file (expected a header naming the "
                          "variables)")
