"""Output layer: tables, CSV/JSON/NPZ/NetCDF/Zarr/Parquet writers and atomic files.

Why a single ``write`` entry point: the CLI only decides the format (from
``--format`` or the ``-o`` extension) and hands over the result columns; all
knowledge of file formats, atomic replacement and error messages lives here.
Importing this package loads only numpy (rich is imported when a table is
rendered).

Formats are the records of the one format table, ``formats.py`` (name, extensions, extra,
whether a file is needed, whether rows stream, the writer); ``write`` dispatches on it and
``sink_for`` gives a format's streaming sink. ``FORMATS`` and ``FILE_FORMATS`` are read
from it.

What is written is a ``gradcli.plan.blocks.Result`` (blocks: one array per
derivative block, text columns carried through from a points file) or any mapping of
column name to array. CSV, JSON and tables show one scalar column per component of a
block (``df/dx[0]``); ``.npz`` stores each block as one array (``df/dx``, shape (..., n)).
A writer for another format (NetCDF, Zarr, Parquet) takes the same Result: ``blocks``
gives each block's name, kind and component shape, ``arrays`` its array, and
``batch_shape`` the points' or the grid's shape.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from gradcli.errors import OutputError
from gradcli.output._columns import count_nonfinite, row_count
from gradcli.output.atomic import atomic_open, atomic_path

# writers are imported when first used, so a one-point CSV does not pay for JSON/NPZ
_LAZY = {
    "csv_header": "csv_writer", "write_csv": "csv_writer", "write_csv_path": "csv_writer",
    "write_json": "json_writer", "write_json_path": "json_writer",
    "NpyStream": "npz_writer", "write_npz": "npz_writer",
    "write_netcdf": "netcdf_writer", "write_parquet": "parquet_writer",
    "write_zarr": "zarr_sink", "ZarrSink": "zarr_sink", "to_xarray": "dataset",
}


__all__ = [
    "FORMATS",
    "FILE_FORMATS",
    "OutputError",
    "write_text",
    "NpyStream",
    "atomic_open",
    "atomic_path",
    "count_nonfinite",
    "csv_header",
    "require_format",
    "row_count",
    "sink_for",
    "to_xarray",
    "write",
    "write_csv",
    "write_csv_path",
    "write_json",
    "write_json_path",
    "write_netcdf",
    "write_npz",
    "write_parquet",
    "write_zarr",
    "ZarrSink",
]


def __dir__() -> list[str]:
    return sorted(__all__)


def _row_formats() -> tuple[str, ...]:
    from gradcli.output import formats

    return tuple(f.name for f in formats.holding((formats.ROWS,)))


def require_format(fmt: str) -> None:
    """Raise ``MissingExtra`` (exit 2, naming the extra) when ``fmt`` needs an optional
    dependency that is not installed: check before evaluating, not after."""
    from gradcli.output import formats

    formats.require(fmt)


def _request(fmt: str, path: str | os.PathLike[str] | None, **meta: Any) -> Any:
    from gradcli.output.formats import WriteRequest

    return WriteRequest(fmt=fmt, path=None if path is None else os.fspath(path), **meta)


def sink_for(fmt: str, path: str | os.PathLike[str] | None, *, stdout: TextIO | None = None,
             origin: Any = None, history: str = "", overwrite: bool = False) -> Any:
    """An evaluation sink writing format ``fmt`` as rows are computed (the format table's
    ``sink``), or None for a format that is written from the whole result."""
    from gradcli.output import formats

    record = formats.get(fmt)
    if not record.streams or record.sink is None:
        return None
    request = _request(fmt, path, stdout=stdout, origin=origin, history=history,
                       overwrite=overwrite)
    return formats.resolve(record.sink)(request)


def write_text(text: str, *, fmt: str, path: str | os.PathLike[str] | None = None,
               stdout: TextIO | None = None) -> list[str]:
    """Write text content (taylor's polynomial, formulas, a graph's source) in format
    ``fmt`` through its record's ``text`` writer (the format table); return notes."""
    from gradcli.output import formats

    record = formats.get(fmt)
    if record.text is None:
        raise ValueError(f"the {fmt} format holds no text")
    return formats.resolve(record.text)(text, _request(fmt, path, stdout=stdout))


def write(
    result_columns: Mapping[str, Any],
    *,
    fmt: str,
    path: str | os.PathLike[str] | None = None,
    expression: str = "",
    variables: Sequence[str] = (),
    notes: Sequence[str] | None = None,
    precision: int = 6,
    stdout: TextIO | None = None,
    console: Any = None,
    max_rows: int = 40,
    title: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    origin: Any = None,
    history: str = "",
    overwrite: bool = False,
) -> list[str]:
    """Write a result in format ``fmt`` (a rows format of the format table,
    ``gradcli.output.formats``) to ``path`` (atomically) or to stdout; return the notes
    the user should see on stderr (a table too wide for the terminal says how many
    columns it could not show).

    ``result_columns`` is a Result (blocks) or a mapping of column name to array.
    ``stdout`` defaults to ``sys.stdout``; ``console`` (a rich Console) is used
    for tables on stdout and created on demand.  ``precision`` and
    ``max_rows`` affect tables only: files always hold exact values.
    ``progress(rows written, total rows)`` follows CSV, JSON and Parquet writing.
    ``origin`` (``gradcli.evaluation.Origin``: dimensions, labels, the expression) and
    ``history`` (the command line) describe a ``.nc``/``.zarr``/``.parquet`` file.
    ``overwrite`` lets a ``.zarr`` store replace an older one holding entries gradcli did
    not write.
    Raises ValueError for an unknown format or a file format without a path,
    MissingExtra when the format's extra is not installed, and OutputError when the file
    cannot be written.
    """
    from gradcli.output import formats

    record = formats.FORMATS.get(fmt)
    if record is None or formats.ROWS not in record.holds or record.writer is None:
        raise ValueError(f"unknown output format '{fmt}': use one of "
                         f"{', '.join(_row_formats())}")
    if record.file_only and path is None:
        ext = record.extensions[0] if record.extensions else f".{fmt}"
        raise ValueError(f"{fmt} output needs a file: give a path such as out{ext}")
    formats.require(fmt)
    request = _request(fmt, path, stdout=stdout if stdout is not None else sys.stdout,
                       expression=expression, variables=list(variables),
                       notes=list(notes or ()), precision=precision, console=console,
                       max_rows=max_rows, title=title, progress=progress, origin=origin,
                       history=history or "", overwrite=overwrite)
    return list(formats.resolve(record.writer)(result_columns, request) or [])


def __getattr__(name: str) -> Any:
    if name == "FORMATS":  # read from the table each time: formats can be registered
        return _row_formats()
    if name == "FILE_FORMATS":  # binary or a directory: never stdout
        from gradcli.output import formats

        return tuple(f.name for f in formats.holding((formats.ROWS,)) if f.file_only)
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
