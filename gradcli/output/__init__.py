"""Output layer: tables, CSV/JSON/NPZ/NetCDF/Zarr/Parquet writers and atomic files.

Why a single ``write`` entry point: the CLI only decides the format (from
``--format`` or the ``-o`` extension) and hands over the result columns; all
knowledge of file formats, atomic replacement and error messages lives here.
Importing this package loads only numpy (rich is imported when a table is
rendered).

Formats: ``table`` (rich, stdout or a text file), ``csv``, ``json``, and the file-only
``npz``, ``nc`` (NetCDF-4), ``zarr`` (a Zarr v3 store: a directory or an fsspec URL) and
``parquet``; the last three need the ``data`` extra (``evaluation.extras``). ``.npy`` is
refused by ``format_from_extension``: one array cannot carry several named columns; use
``.npz``, or ``NpyStream`` directly for a single huge column.

What is written is a ``gradcli.evaluation.blocks.Result`` (blocks: one array per
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

from ._columns import count_nonfinite, row_count
from .atomic import OutputError, atomic_open, atomic_path

# writers are imported when first used, so a one-point CSV does not pay for JSON/NPZ
_LAZY = {
    "csv_header": "csv_writer", "write_csv": "csv_writer", "write_csv_path": "csv_writer",
    "write_json": "json_writer", "write_json_path": "json_writer",
    "NpyStream": "npz_writer", "write_npz": "npz_writer",
    "write_netcdf": "netcdf_writer", "write_parquet": "parquet_writer",
    "write_zarr": "zarr_sink", "ZarrSink": "zarr_sink", "to_xarray": "dataset",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "FORMATS",
    "FILE_FORMATS",
    "OutputError",
    "NpyStream",
    "atomic_open",
    "atomic_path",
    "count_nonfinite",
    "csv_header",
    "format_from_extension",
    "require_format",
    "row_count",
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

FORMATS = ("table", "csv", "json", "npz", "nc", "zarr", "parquet")
FILE_FORMATS = ("npz", "nc", "zarr", "parquet")  # binary or a directory: never stdout
_EXTENSIONS = {".csv": "csv", ".json": "json", ".npz": "npz", ".nc": "nc", ".zarr": "zarr",
               ".parquet": "parquet"}
_SUGGESTED = ".csv, .json, .npz, .nc, .zarr or .parquet"


def require_format(fmt: str) -> None:
    """Raise ``MissingExtra`` (exit 2, naming the extra) when ``fmt`` needs an optional
    dependency that is not installed: check before evaluating, not after."""
    if fmt in ("nc", "zarr", "parquet"):
        from ..evaluation.extras import require

        require(fmt)


def format_from_extension(path: str | os.PathLike[str]) -> str:
    """Output format implied by a file name: ``.csv``, ``.json``, ``.npz``, ``.nc``,
    ``.zarr`` (also an fsspec URL) or ``.parquet``.

    Raises ValueError for anything else (the message suggests the valid ones).
    """
    ext = os.path.splitext(os.fspath(path).rstrip("/"))[1]
    fmt = _EXTENSIONS.get(ext.lower())
    if fmt is not None:
        return fmt
    if ext.lower() == ".npy":
        raise ValueError(
            f"unknown output extension '.npy': use .npz (one array per result block), {_SUGGESTED}"
        )
    if not ext:
        raise ValueError(
            f"output file '{os.fspath(path)}' has no extension: use {_SUGGESTED}"
        )
    raise ValueError(f"unknown output extension '{ext}': use {_SUGGESTED}")


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
    """Write a result in format ``fmt`` to ``path`` (atomically) or to stdout; return
    the notes the user should see on stderr (a table too wide for the terminal says how
    many columns it could not show).

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
    notes = list(notes or ())
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format '{fmt}': use one of {', '.join(FORMATS)}")
    if fmt in FILE_FORMATS:
        if path is None:
            raise ValueError(f"{fmt} output needs -o FILE")
        return _write_file(fmt, os.fspath(path), result_columns, origin, history or "",
                           expression, progress, overwrite)
    out = stdout if stdout is not None else sys.stdout
    meta = {"expression": expression, "variables": list(variables), "notes": notes}
    if fmt == "table":
        from rich.console import Console

        from .table import hidden_columns_note, render_table

        kwargs = {"precision": precision, "max_rows": max_rows, "title": title, "notes": notes}
        if path is not None:  # a file is as wide as the table
            with atomic_open(path, "w", encoding="utf-8") as fh:
                renderable, _ = render_table(result_columns, **kwargs)
                Console(file=fh, width=10_000, no_color=True,
                        force_terminal=False).print(renderable)
            return []
        console = console if console is not None else Console(file=out)
        renderable, hidden = render_table(result_columns, width=console.width, **kwargs)
        console.print(renderable)
        return [hidden_columns_note(hidden)] if hidden else []
    if fmt == "csv":
        from .csv_writer import write_csv, write_csv_path

        if path is None:
            write_csv(out, result_columns, progress=progress)
        else:
            write_csv_path(path, result_columns, progress=progress)
        return []
    from .json_writer import write_json, write_json_path

    if path is None:
        write_json(out, result_columns, progress=progress, **meta)  # type: ignore[arg-type]
    else:
        write_json_path(path, result_columns, progress=progress, **meta)
    return []


def _write_file(fmt: str, path: str, columns: Mapping[str, Any], origin: Any, history: str,
                expression: str, progress: Callable[[int, int], None] | None,
                overwrite: bool = False) -> list[str]:
    """The file-only formats: one writer each; return the notes for the user."""
    require_format(fmt)
    if fmt == "npz":
        from .npz_writer import write_npz

        write_npz(path, columns)
    elif fmt == "nc":
        from .netcdf_writer import write_netcdf

        write_netcdf(path, columns, origin, history)
    elif fmt == "zarr":
        from ..evaluation.blocks import as_result
        from .zarr_sink import write_zarr

        return write_zarr(path, as_result(columns), origin, history, overwrite=overwrite)
    else:
        from .parquet_writer import write_parquet

        title = origin.expression if origin is not None else expression
        write_parquet(path, columns, title=title, history=history, progress=progress)
    return []
