"""JSON Lines output: one JSON object per row, keyed by the column names, in column order.

    {"x": 0.0, "y": 1.0, "f": 1.0, "df/dx": 0.0}

With physical units, every object ends with the same ``units`` object as JSON's (column
block -> unit), so each row read alone still says its units; without units it is absent.

Numbers are the CSV's texts (the shortest that read back exactly in the column's dtype;
integers as integers); nan and inf are the strings ``"nan"``, ``"inf"``, ``"-inf"``, the
rule of the JSON output; carried text columns are JSON strings. Lines are written and
flushed a chunk of rows at a time, and :class:`JsonlSink` writes them as the evaluation
produces them, so a pipe sees the first rows before a long run ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO, TextIO

import numpy as np

from gradcli.errors import OutputError
from gradcli.output._columns import CHUNK_ROWS, RowChunks
from gradcli.output.atomic import atomic_path
from gradcli.output.csv_writer import _plain, _writer
from gradcli.plan.blocks import Layout, Result

__all__ = ["write_jsonl", "jsonl_lines", "JsonlSink"]

_NL = 10


def _numeric_cells(rows: RowChunks, start: int, stop: int) -> list[list[bytes]]:
    """The numeric columns' cells of rows ``start:stop``, column by column."""
    kinds = rows.kinds
    if not kinds:
        return []
    block = rows.numbers(start, stop)
    n = stop - start
    if n * len(kinds) <= 4096:
        return [[_plain(v, True, kind) for v in block[:, j].tolist()]
                for j, kind in enumerate(kinds)]
    from gradcli.output._floatfmt import format_rows

    # every field ends in a newline: the text splits into the cells, row by row
    flat = format_rows(block, sep=_NL, end=_NL, quote_nonfinite=True,
                       kinds=kinds).split(b"\n")[:-1]
    k = len(kinds)
    return [flat[j::k] for j in range(k)]


def _objects(block: np.ndarray, keys: list[bytes], kinds: list[str]) -> bytes:
    """Lines ``{key: value, ...}`` of a block of numbers, laid out in one byte canvas per
    sub-block (the key, then the number's field, NUL-padded) and compacted by dropping the
    NULs: the CSV's vectorised formatter with the keys around its fields."""
    from gradcli.output._floatfmt import FIELD, SEP, format_fields

    n, k = block.shape
    width = max(len(key) for key in keys)
    size = 1 + width + FIELD + 1  # "{" or NUL, the key, the field and its separator, "\n"
    prefix = np.zeros((k, 1 + width), dtype=np.uint8)
    prefix[0, 0] = ord("{")
    for j, key in enumerate(keys):
        prefix[j, 1:1 + len(key)] = np.frombuffer(key, dtype=np.uint8)
    out = []
    for r0 in range(0, n, 16384):
        part = block[r0:r0 + 16384]
        canvas = np.zeros((part.shape[0], k, size), dtype=np.uint8)
        canvas[:, :, :1 + width] = prefix
        for j in range(k):
            format_fields(part[:, j], canvas[:, j, 1 + width:1 + width + FIELD], True,
                          kinds[j])
        canvas[:, :, 1 + width + SEP] = ord(",")
        canvas[:, -1, 1 + width + SEP] = ord("}")
        canvas[:, -1, -1] = ord("\n")
        flat = canvas.reshape(-1)
        out.append(flat[flat != 0].tobytes())
    return b"".join(out)


def units_key(names: Sequence[str]) -> str:
    """The key of the units object on each line: ``units``, or ``@units`` when a column
    is itself named ``units``."""
    return "@units" if "units" in names else "units"


def _with_units(lines: bytes, rows: RowChunks) -> bytes:
    """``lines`` with the units object (block -> unit, as JSON's) closing every object,
    when some column has a unit; unchanged otherwise. Values are JSON-escaped, so a raw
    ``}`` followed by a newline byte ends a line and nothing else."""
    from gradcli.output._columns import column_units

    units = column_units(rows.result)
    if not units or not lines:
        return lines
    tail = (", " + json.dumps(units_key(rows.names)) + ": "
            + json.dumps(units, ensure_ascii=False) + "}\n").encode("utf-8")
    return lines.replace(b"}\n", tail)


def jsonl_lines(rows: RowChunks, start: int, stop: int) -> bytes:
    """The lines of rows ``start:stop`` (each with the columns' units when they have
    some: see :func:`_with_units`)."""
    return _with_units(_plain_lines(rows, start, stop), rows)


def _plain_lines(rows: RowChunks, start: int, stop: int) -> bytes:
    if rows.kinds and len(rows.kinds) == len(rows.names) and (stop - start) > 256:
        keys = [(b"" if j == 0 else b" ") + json.dumps(str(name), ensure_ascii=False)
                .encode("utf-8") + b": " for j, name in enumerate(rows.names)]
        return _objects(rows.numbers(start, stop), keys, rows.kinds)
    numeric = iter(_numeric_cells(rows, start, stop))
    columns: list[list[bytes]] = []
    for run in rows.runs:
        if run.text:
            cells = run.slab(rows.batch, start, stop)
            for k in range(run.count):
                columns.append([json.dumps(str(c), ensure_ascii=False).encode("utf-8")
                                for c in cells[:, k].tolist()])
        else:
            columns += [next(numeric) for _ in range(run.count)]
    keys = [json.dumps(str(name), ensure_ascii=False).encode("utf-8") + b": "
            for name in rows.names]
    return b"".join(b"{" + b", ".join(k + v for k, v in zip(keys, row, strict=True)) + b"}\n"
                    for row in zip(*columns, strict=True))


def write_jsonl(file: TextIO | BinaryIO, columns: Mapping[str, Any], *,
                chunk_rows: int = CHUNK_ROWS,
                progress: Callable[[int, int], None] | None = None) -> int:
    """Write ``columns`` as JSON Lines to an open file, flushing each chunk; return the
    row count."""
    rows = RowChunks(columns, chunk_rows)
    put = _writer(file)
    flush = getattr(file, "flush", None)
    for start, stop in rows.chunks():
        put(jsonl_lines(rows, start, stop))
        if flush is not None:
            flush()
        if progress:
            progress(stop, rows.total)
    return rows.total


class JsonlSink:
    """An evaluation sink (``gradcli.evaluation.runner``) writing JSON Lines in row order
    as blocks of rows arrive: to ``stdout`` (flushed per block), or atomically to
    ``path`` (a temporary file renamed at the end; removed on failure or interruption)."""

    sequential = True

    def __init__(self, path: str | None, stdout: TextIO | BinaryIO) -> None:
        self.path, self.stdout = path, stdout
        self.nonfinite = 0
        self._atomic: Any = None
        self._fh: Any = None
        self._put: Callable[[bytes], Any] = _writer(stdout)
        self._layout = Layout([])
        self._inputs: Result | None = None
        self._shape: tuple[int, ...] = ()

    def open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
             inputs: Result) -> None:
        """Start the output for a result of ``layout`` over a batch of ``shape``."""
        self._layout, self._inputs, self._shape, self._dtype = layout, inputs, shape, dtype
        if self.path is not None:
            self._atomic = atomic_path(self.path)
            tmp = self._atomic.__enter__()
            try:
                self._fh = open(tmp, "wb")  # noqa: SIM115 - closed in result() or abort()
            except OSError as err:
                self.abort()
                raise OutputError.from_oserror(self.path, err) from err
            self._put = self._fh.write

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        """Write rows ``start:stop`` (of the batch's first axis) of every block."""
        assert self._inputs is not None
        rows = (stop - start,) + self._shape[1:] if self._shape else ()
        arrays: dict[str, Any] = {}
        for block in self._inputs.blocks:
            full = np.broadcast_to(np.asarray(self._inputs.arrays[block.name]),
                                   self._shape + block.shape)
            arrays[block.name] = full[start:stop] if self._shape else full
        bad = 0
        for block, value in zip(self._layout.blocks, values, strict=True):
            arr = np.broadcast_to(np.zeros((), self._dtype) if value is None else value,
                                  rows + block.shape)
            bad += arr.size - int(np.count_nonzero(np.isfinite(arr)))
            arrays[block.name] = arr
        names = [b.name for b in self._inputs.blocks] + [b.name for b in self._layout.blocks]
        layout = self._inputs.layout.subset([b.name for b in self._inputs.blocks])
        part = Result(Layout([*layout.blocks, *self._layout.blocks]),
                      {n: arrays[n] for n in names}, rows)
        chunk = RowChunks(part)
        try:
            for a, b in chunk.chunks():
                self._put(jsonl_lines(chunk, a, b))
            if self._fh is None:
                flush = getattr(self.stdout, "flush", None)
                if flush is not None:
                    flush()
        except OSError as err:
            if self.path is None:
                raise
            raise OutputError.from_oserror(self.path, err) from err
        self.nonfinite += bad

    def result(self) -> Result:
        """Finish the file (renamed into place) and return the inputs."""
        assert self._inputs is not None
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError as err:
                self.abort()
                raise OutputError.from_oserror(self.path or "", err) from err
            self._fh = None
            atomic, self._atomic = self._atomic, None
            atomic.__exit__(None, None, None)
        return self._inputs

    def abort(self) -> None:
        """Remove the partial file (after an error or Ctrl-C)."""
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
            self._fh = None
        if self._atomic is not None:
            try:
                self._atomic.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            except BaseException:  # noqa: BLE001 - cleanup must not mask the first error
                pass
            self._atomic = None
