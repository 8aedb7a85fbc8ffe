"""Inputs named with ``@``: a program from a file (``gradcli grad @loss.gc``, ``@-`` for
stdin) and a vector or matrix from a file (``--at x=@vec.npy``, ``x=@vec.csv``).

Both are read within stated bounds and fail with one clear message past them: a program
through ``reading.BoundedReader`` (at most 1 MiB, text only; its errors point into the
file with the line and column), a text vector through the same reader and
``numpy.loadtxt``, a ``.npy`` file after its header says it is a
numeric array of at most :data:`MAX_ARRAY_BYTES` (no pickles, whatever the file holds).
"""

from __future__ import annotations

import io
import os

import numpy as np

from gradcli.cli.files import check_file
from gradcli.cli.points_file import quote_cell
from gradcli.cli.reading import BoundedReader, size_text
from gradcli.errors import EvaluationError
from gradcli.lang import MAX_FILE, ProgramText
from gradcli.support.allocator import keep_freed_memory
from gradcli.support.threads import default_threads, ordered_map

__all__ = ["MAX_ARRAY_BYTES", "read_array", "read_program"]

#: the ending of a program file's name (``gradcli grad @loss.gc``)
PROGRAM_SUFFIX = ".gc"
#: the largest vector or matrix file (.npy data, or .csv text): 2^26 float64 values
MAX_ARRAY_BYTES = 1 << 29
_CHUNK = 1 << 22  # bytes per chunk handed to the parser
_TEXT = (".csv", ".txt")


def read_program(reference: str) -> ProgramText:
    """The program ``@FILE`` names (``@-``: standard input), at most 1 MiB of text."""
    path = reference[1:]
    source = "stdin" if path == "-" else path
    if not path:
        raise EvaluationError("'@' needs a file name: gradcli grad @loss.gc (or @- for "
                              "standard input)")
    check_file(f"'{reference}'", path)
    if path != "-" and not path.endswith(PROGRAM_SUFFIX):
        # only a file meant as a program is read (and quoted in messages): '@/etc/passwd'
        # or '@secret.txt' would otherwise be parsed and shown back line by line
        raise EvaluationError(f"'{reference}': a program file's name ends in "
                              f"{PROGRAM_SUFFIX} (or give @- for standard input)")
    with BoundedReader(path, label=f"program {source}", max_bytes=MAX_FILE) as reader:
        return ProgramText(reader.read_text(), source)


def read_array(path: str, what: str) -> np.ndarray:
    """The vector or matrix in ``path``: ``.npy`` (numpy's format, numbers only), or text
    (``.csv``, ``.txt``): one value per line for a vector, rows of comma-separated values
    for a matrix (one row of values is a vector too). ``what`` names the option in
    messages (``--at x``)."""
    label = f"{what}=@{path}"
    check_file(label, path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return _read_npy(path, label)
    if ext not in _TEXT:
        raise EvaluationError(f"{label}: a vector file is .npy, .csv or .txt, not "
                              f"'{ext or path}'")
    return _read_text(path, label)


def _read_npy(path: str, label: str) -> np.ndarray:
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise EvaluationError(f"{label}: no such file") from None
    except OSError as exc:
        raise EvaluationError(f"{label}: cannot read: {exc.strerror or exc}") from None
    with fh:
        try:
            version = np.lib.format.read_magic(fh)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(fh)
        except (ValueError, OSError) as exc:
            raise EvaluationError(f"{label}: not a .npy file ({exc})") from None
        if dtype.kind not in "biuf" or dtype.hasobject:
            raise EvaluationError(f"{label}: holds {dtype}, not numbers")
        if len(shape) not in (1, 2) or 0 in shape:
            raise EvaluationError(f"{label}: holds an array of shape {shape}: a vector or a "
                                  "matrix is needed")
        count = int(np.prod(shape, dtype=np.int64))
        if count * dtype.itemsize > MAX_ARRAY_BYTES:
            raise EvaluationError(f"{label}: {count:,} values, over the limit of "
                                  f"{size_text(MAX_ARRAY_BYTES)} for a vector file")
        data = np.fromfile(fh, dtype=dtype, count=count)
    if data.size != count:
        raise EvaluationError(f"{label}: the file ends after {data.size:,} of its {count:,} "
                              "values")
    return data.reshape(shape, order="F" if fortran else "C").astype(np.float64, copy=False)


def _read_text(path: str, label: str) -> np.ndarray:
    """Chunks of lines parsed on a thread per core, as the points reader does."""
    rows: list[np.ndarray] = []
    width = None
    keep_freed_memory()  # each chunk's temporaries are reused, not page-faulted in again
    with BoundedReader(path, label=label, max_bytes=MAX_ARRAY_BYTES,
                       read_size=_CHUNK) as reader:
        items = ((reader.first_line, chunk) for chunk in reader.chunks())
        for first, (values, chunk_width) in ordered_map(
                lambda item: (item[0], _parse(item[1], item[0], label)), items,
                default_threads()):
            if values.size == 0:
                continue
            if width is not None and chunk_width != width:
                raise EvaluationError(f"{label}: from line {first:,} the rows have "
                                      f"{chunk_width} values, before {width}")
            width = chunk_width
            rows.append(values)
    if width is None:
        raise EvaluationError(f"{label}: the file holds no values")
    table = np.concatenate(rows).reshape(-1, width)
    return table[:, 0] if width == 1 else table[0] if table.shape[0] == 1 else table


def _parse(chunk: bytes, first_line: int, label: str) -> tuple[np.ndarray, int]:
    """The numbers of whole lines of text, and how many there are per line:
    ``numpy.loadtxt``'s C parser, or, for a chunk it refuses, ``float()`` line by line,
    which accepts what it accepts and names the line of a bad value."""
    if not chunk or chunk.isspace():
        return np.empty(0), 0
    try:
        table = np.loadtxt(io.TextIOWrapper(io.BytesIO(chunk), encoding="utf-8"),
                           delimiter=",", comments=None, ndmin=2, dtype=np.float64,
                           quotechar=None)
    except ValueError:
        return _parse_lines(chunk, first_line, label)
    return table.reshape(-1), table.shape[1]


def _parse_lines(chunk: bytes, first_line: int, label: str) -> tuple[np.ndarray, int]:
    """``_parse`` in Python: blank lines skipped, each line as wide as the first."""
    values: list[float] = []
    width, first = 0, 0
    for i, line in enumerate(chunk.decode("utf-8").split("\n")):
        if not line.strip():
            continue
        fields = line.split(",")
        if not width:
            width, first = len(fields), first_line + i
        elif len(fields) != width:
            raise EvaluationError(f"{label}: line {first_line + i:,} has {len(fields)} "
                                  f"values, line {first:,} has {width}")
        for field in fields:
            try:
                values.append(float(field))
            except ValueError:
                raise EvaluationError(f"{label}: line {first_line + i:,}: "
                                      f"{quote_cell(field, width)} is not a number") from None
    return np.array(values, dtype=np.float64), width
