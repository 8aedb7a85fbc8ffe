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

Speed: the file is read in chunks of 2 MiB, each parsed by a native CSV parser:
pyarrow's (multi-threaded C++) when the ``data`` extra is installed, else ``numpy.loadtxt``;
both round correctly, as ``float()`` does. Anything unusual in a chunk (quotes,
whitespace-only lines, a cell that is not a plain number) sends that chunk through
Python's ``csv`` module and ``float()``, which also give the precise error.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from gradcli.cli.files import check_file
from gradcli.cli.reading import MAX_LINE, BoundedReader
from gradcli.errors import EvaluationError
from gradcli.request.binding import count_text

__all__ = ["read_points", "PointsTable"]

_COLUMN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
_CHUNK = 1 << 21  # bytes per chunk: measured fastest with pyarrow, and a small peak
_ARROW_FROM = 8 << 20  # file size from which pyarrow's parser is worth its import
# a native parser: a chunk's numeric columns, and its carried cells (None: split them)
_Native = Callable[[bytes], tuple[np.ndarray, np.ndarray | None]]


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
    numbers: list[np.ndarray]        # per variable: (rows, its columns)
    text: np.ndarray                 # (rows, len(carried)) of str
    size: int = 0                    # bytes of text it came from

    @classmethod
    def of(cls, cols: _Columns, numbers: np.ndarray, text: np.ndarray) -> _Chunk:
        """A chunk from its (rows, len(numeric)) numbers, split by variable."""
        spans = np.cumsum([0] + [len(m) for m in cols.variables.values()]).tolist()
        return cls(len(numbers), [numbers[:, a:b] for a, b in zip(spans[:-1], spans[1:],
                                                                   strict=True)], text)


class _Parser:
    """Parses chunks of data lines (whole lines, LF ends) into a _Chunk.

    A chunk goes to a native parser first (pyarrow's CSV reader when it is installed,
    else ``numpy.loadtxt``), both correctly rounded, as ``float()`` is. A chunk either
    refuses (a cell that is not a number, a short row, a blank-looking line, quotes) goes
    through Python's ``csv`` module and ``float()``, which accept exactly what they
    accepted before and name the line and column of a bad value.
    """

    def __init__(self, columns: _Columns, label: str, size: int) -> None:
        self.cols, self.label = columns, label
        self.width = len(columns.names)
        self.pick = itemgetter(*columns.carried) if columns.carried else None
        # pyarrow's import (~0.2 s) pays off only on a large file
        big = size >= _ARROW_FROM
        self.native = (big and _arrow_parser(columns)) or _loadtxt_parser(columns)

    def __call__(self, item: tuple[int, bytes]) -> _Chunk:
        first_line, chunk = item
        if chunk and not chunk.endswith(b"\n"):
            chunk += b"\n"
        fast = None if b'"' in chunk or not chunk or chunk.isspace() else self._fast(chunk)
        part = fast if fast is not None else self._general(chunk, first_line)
        part.size = len(chunk)
        return part

    def _fast(self, chunk: bytes) -> _Chunk | None:
        """The native parser's reading, or None when this chunk needs the careful path."""
        try:
            numbers, text = self.native(chunk)
        except (ValueError, ArithmeticError):  # pyarrow's ArrowInvalid is a ValueError
            return None
        if text is None and self.pick is None:
            text = np.empty((numbers.shape[0], 0), dtype=object)
        elif text is None:
            lines = chunk.decode("utf-8").split("\n")
            text = self._text([line.split(",") for line in lines if line])
        if text.shape[0] != numbers.shape[0]:
            return None
        return _Chunk.of(self.cols, numbers, text)

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
        return _Chunk.of(self.cols, np.array(numbers, dtype=np.float64).reshape(
            len(rows), len(numeric)), self._text(rows))


def quote_cell(cell: str, fields: int) -> str:
    """A bad cell of a file without a header (a vector file) for a message: quoted when
    its line has other fields too, so that a message quotes at most that one token and
    never a whole line of a file that may not be data at all (``x=@secret.txt``). (A
    points file's cells are quoted: its header named a variable, so it is data.)"""
    return f"'{cell.strip()}'" if fields > 1 else "the line's only value"


def _arrow_parser(columns: _Columns) -> _Native | None:
    """pyarrow's CSV reader on one chunk (multi-threaded, in C++), when pyarrow is
    installed (the ``data`` extra). Quoting is off (chunks with quotes take the careful
    path), no cell is read as null (an empty cell is not a number), rows must have the
    header's width."""
    try:
        import pyarrow as pa
        from pyarrow import csv as pacsv
    except ImportError:
        return None
    names = [f"c{i}" for i in range(len(columns.names))]
    numeric = [names[c] for c in columns.numeric]
    carried = [names[c] for c in columns.carried]
    types = {n: pa.float64() for n in numeric} | {n: pa.string() for n in carried}
    read = pacsv.ReadOptions(column_names=names, block_size=_CHUNK, use_threads=False)
    parse = pacsv.ParseOptions(quote_char=False, ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(column_types=types, null_values=[],
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)

    pool = pa.system_memory_pool()  # freed at once; mimalloc keeps arenas of its own

    def native(chunk: bytes) -> tuple[np.ndarray, np.ndarray | None]:
        table = pacsv.read_csv(pa.py_buffer(chunk), read_options=read, parse_options=parse,
                               convert_options=convert, memory_pool=pool)
        numbers = np.empty((table.num_rows, len(numeric)), dtype=np.float64)
        for j, name in enumerate(numeric):
            numbers[:, j] = _floats(table.column(name))
        text = np.empty((table.num_rows, len(carried)), dtype=object)
        for j, name in enumerate(carried):
            text[:, j] = table.column(name).to_pylist()
        return numbers, text

    return native


def _floats(column: Any) -> np.ndarray:
    """A float64 column of a pyarrow table as numpy, from its buffers (``to_numpy`` would
    import pandas, some 60 MB, just to check for it)."""
    parts = [np.frombuffer(chunk.buffers()[1], dtype=np.float64, count=len(chunk),
                           offset=8 * chunk.offset) for chunk in column.chunks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _loadtxt_parser(columns: _Columns) -> _Native:
    """``numpy.loadtxt`` (its C parser) on one chunk, for the numeric columns; the
    carried cells are split by the caller. Rows must have the header's width."""
    numeric, width = columns.numeric, len(columns.names)

    def native(chunk: bytes) -> tuple[np.ndarray, np.ndarray | None]:
        numbers = np.loadtxt(io.TextIOWrapper(io.BytesIO(chunk), encoding="utf-8"),
                             delimiter=",", comments=None, usecols=numeric, ndmin=2,
                             dtype=np.float64, quotechar=None)
        if chunk.count(b",") != (width - 1) * numbers.shape[0]:
            raise ValueError("a row of another width")  # the careful path names it
        return numbers.reshape(-1, len(numeric)), None

    return native


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
                max_line: int = MAX_LINE,
                check_carried: Callable[[int], None] | None = None) -> PointsTable:
    """Read a points CSV (``"-"`` for stdin) for an expression whose variables are
    ``names``: the columns naming them bind them; all others are carried as text.
    ``check_carried(count)`` is called with the number of carried columns as soon as the
    header is read, before any row (the output's own bound on them)."""
    label = f"--points {'stdin' if source == '-' else source}"
    check_file(label, source)
    with BoundedReader(source, label=label, max_line=max_line, read_size=_CHUNK) as reader:
        chunks = reader.chunks()
        header_line, rest, first = _header(chunks, reader)
        header = [h.strip() for h in next(csv.reader([header_line.decode("utf-8")]))]
        cols = _classify(header, names, label)
        if not cols.variables:
            # the header's names, when it has several (a one-column "header" may be any
            # line of any file: it is not shown)
            shown = [h for h in header if _COLUMN.fullmatch(h)] if len(header) > 1 else []
            listed = (f"; columns: {', '.join(shown[:10])}{', ...' if len(shown) > 10 else ''}"
                      if shown else f"; the header has {len(header):,} column"
                      f"{'s' if len(header) != 1 else ''}")
            raise EvaluationError(
                f"{label}: no column names a variable of the expression "
                f"({', '.join(sorted(names)) or 'it has none'}){listed}")
        if check_carried is not None:
            check_carried(len(cols.carried))
        parser = _Parser(cols, label, reader.size())
        numbers = [_Growing(len(m)) for m in cols.variables.values()]
        text: list[np.ndarray] = []
        total = 0
        items = _records(chunks, reader, rest, first)
        for part in map(parser, items):
            total += part.rows
            if total > max_points:
                raise EvaluationError(f"{label}: at least {count_text(total)} points, over the "
                                      f"limit of {max_points:,}; raise it with --max-points")
            if part.rows and not numbers[0].rows:
                # a file's size and its first rows foretell its row count: the arrays are
                # made that large once, rather than grown by copies
                expect = int(1.05 * reader.size() * part.rows / max(part.size, 1))
                for grow in numbers:
                    grow.reserve(min(expect, max_points))
            for grow, values in zip(numbers, part.numbers, strict=True):
                grow.add(values)
            if cols.carried:
                text.append(part.text)
    table = PointsTable()
    if cols.carried:
        joined = (np.concatenate(text) if text
                  else np.empty((0, len(cols.carried)), dtype=object))
        for j, col in enumerate(cols.carried):
            table.carried[header[col]] = joined[:, j]
    for grow, (name, shape) in zip(numbers, cols.shapes.items(), strict=True):
        values = grow.done()
        table.variables[name] = values.reshape((len(values),) + shape)
    return table


class _Growing:
    """A (rows, width) float64 array filled chunk by chunk. Its capacity doubles with
    ``ndarray.resize`` (``realloc``: for large arrays ``mremap``, which moves no data), and
    capacity not yet written takes no memory, so the peak stays near the values' size
    rather than twice it, as joining a list of pieces would need."""

    def __init__(self, width: int) -> None:
        self.buf = np.empty((1024, width), dtype=np.float64)
        self.rows = 0

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` rows in all."""
        if rows > len(self.buf):
            try:
                self.buf.resize((rows, self.buf.shape[1]), refcheck=False)
            except MemoryError:  # an estimate only: grow as rows come instead
                pass

    def add(self, values: np.ndarray) -> None:
        need = self.rows + len(values)
        if need > len(self.buf):
            self.buf.resize((max(need, 2 * len(self.buf)), self.buf.shape[1]), refcheck=False)
        self.buf[self.rows:need] = values
        self.rows = need

    def done(self) -> np.ndarray:
        self.buf.resize((self.rows, self.buf.shape[1]), refcheck=False)
        return self.buf


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
