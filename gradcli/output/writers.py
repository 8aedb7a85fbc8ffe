"""The rows writers and streaming sinks named by the format table (``formats.py``).

Each writer is ``writer(columns, request) -> notes``: ``columns`` a Result or a mapping of
column name to array, ``request`` a :class:`~gradcli.output.formats.WriteRequest`. Each
imports its format's module only when called. A result of the evaluation (with an
``origin``) goes to ``.nc``/``.zarr`` as a gridded dataset; a plain table of rows (the
rows of ``critical``, ``descend``, ``flow``, ``taylor``) as a table over a ``row``
dimension whose columns keep their dtypes (integers stay integers).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcli.errors import OutputError
from gradcli.output.atomic import atomic_open, atomic_path
from gradcli.output.formats import WriteRequest

ROW = "row"


def _out(request: WriteRequest) -> Any:
    return request.stdout if request.stdout is not None else sys.stdout


def write_text(text: str, request: WriteRequest) -> list[str]:
    """Text content (a polynomial, formulas, a graph's source) to ``request.path``
    atomically, or to standard output."""
    if request.path is not None:
        with atomic_open(request.path, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        _out(request).write(text)
    return []


def write_table(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """A rich table on the terminal, or (with a path) a text file as wide as the table."""
    from rich.console import Console

    from gradcli.output.table import hidden_columns_note, render_table

    kwargs = {"precision": request.precision, "max_rows": request.max_rows,
              "title": request.title, "notes": list(request.notes)}
    if request.path is not None:
        with atomic_open(request.path, "w", encoding="utf-8") as fh:
            renderable, _ = render_table(columns, **kwargs)
            Console(file=fh, width=10_000, no_color=True, force_terminal=False).print(renderable)
        return []
    console = request.console if request.console is not None else Console(file=_out(request))
    renderable, hidden = render_table(columns, width=console.width, **kwargs)
    console.print(renderable)
    return [hidden_columns_note(hidden)] if hidden else []


def write_csv_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """CSV to the path (atomically) or to standard output."""
    from gradcli.output.csv_writer import write_csv, write_csv_path

    if request.path is None:
        write_csv(_out(request), columns, progress=request.progress)
    else:
        write_csv_path(request.path, columns, progress=request.progress)
    return []


def _meta(request: WriteRequest) -> dict[str, Any]:
    return {"expression": request.expression, "variables": list(request.variables),
            "notes": list(request.notes)}


def write_json_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """One JSON document to the path (atomically) or to standard output."""
    from gradcli.output.json_writer import write_json, write_json_path

    if request.path is None:
        write_json(_out(request), columns, progress=request.progress, **_meta(request))
    else:
        write_json_path(request.path, columns, progress=request.progress, **_meta(request))
    return []


def write_jsonl_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """JSON Lines (one object per row) to the path (atomically) or standard output."""
    from gradcli.output.jsonl_writer import write_jsonl

    if request.path is None:
        write_jsonl(_out(request), columns, progress=request.progress)
    else:
        with atomic_open(request.path, "wb") as fh:
            write_jsonl(fh, columns, progress=request.progress)
    return []


def write_npz_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """One array per block (integer columns stay integers)."""
    from gradcli.output.npz_writer import write_npz

    write_npz(_path(request), columns)
    return []


def write_npy_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """One record array over the batch, one field per block (text as unicode)."""
    from gradcli.output._columns import checked
    from gradcli.output.npz_writer import full_array, member_dtype

    result = checked(columns)
    fields = [(b.name, member_dtype(result, b), b.shape) for b in result.blocks]
    records = np.empty(result.batch_shape, dtype=np.dtype(fields))
    for block in result.blocks:
        records[block.name] = full_array(result, block)
    with atomic_open(_path(request), "wb") as fh:
        np.save(fh, records, allow_pickle=False)
    return []


def _path(request: WriteRequest) -> str:
    if request.path is None:  # the table says these need a file; write() checks first
        raise ValueError(f"{request.fmt} output needs a file")
    return os.fspath(request.path)


def _is_plain_table(columns: Mapping[str, Any], request: WriteRequest) -> bool:
    """True for rows that are not an evaluation's result (no origin): a table of rows."""
    return request.origin is None and getattr(columns, "origin", None) is None


def rows_dataset(columns: Mapping[str, Any], title: str = "", history: str = "") -> Any:
    """A table of rows as an ``xarray.Dataset`` over one ``row`` dimension: each scalar
    column a variable of its own dtype (text as strings), names as CF names with the
    column's name in ``long_name``; the global attributes of every gradcli dataset."""
    import xarray as xr

    from gradcli.lang.units import cf_text
    from gradcli.output._columns import as_arrays
    from gradcli.output.cf import cf_name, global_attrs, unique_name

    layout = getattr(columns, "layout", None)
    unit_of = {c: b.unit for b in getattr(layout, "blocks", ()) if b.unit
               for c in b.column_names()}
    data = {}
    taken = {ROW.lower()}
    for name, values in as_arrays(columns).items():
        arr = np.asarray(values)
        # unique ignoring case (CF §2.3): u(f) is u_f_, U(f) U_f__2
        key = unique_name(cf_name(name), taken)
        if arr.dtype == object:
            arr = arr.astype(str)
        attrs = {"long_name": name}
        if name in unit_of:  # CF's units attribute, in UDUNITS-2 spelling
            attrs["units"] = cf_text(unit_of[name])
        data[key] = ((ROW,), arr.reshape(-1), attrs)
    ds = xr.Dataset(data, attrs=global_attrs(title, history))
    for name in ds.variables:
        ds.variables[name].encoding["_FillValue"] = None
        if ds.variables[name].dtype.kind == "U":
            ds.variables[name].encoding["dtype"] = str
    return ds


def write_nc_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """NetCDF-4: an evaluation's result on its grid or points, a table over ``row``."""
    path = _path(request)
    if not _is_plain_table(columns, request):
        from gradcli.output.netcdf_writer import write_netcdf

        write_netcdf(path, columns, request.origin, request.history)
        return []
    ds = rows_dataset(columns, request.expression, request.history)
    try:
        with atomic_path(path) as tmp:
            ds.to_netcdf(tmp, mode="w", engine="h5netcdf")
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
    return []


def write_zarr_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """A Zarr store, complete only at the end (``zarr_store``): the gridded layout of an
    evaluation's result, or a table over ``row``."""
    path = _path(request)
    if not _is_plain_table(columns, request):
        from gradcli.output.zarr_sink import write_zarr
        from gradcli.plan.blocks import as_result

        return write_zarr(path, as_result(columns), request.origin, request.history,
                          overwrite=request.overwrite)
    import shutil
    import tempfile

    from gradcli.output.zarr_store import ROOT, Destination

    ds = rows_dataset(columns, request.expression, request.history)
    dest = Destination(path, request.overwrite)
    scratch = tempfile.mkdtemp(prefix=".gradcli-zarr-")
    try:
        import warnings

        with warnings.catch_warnings():  # zarr's note that consolidated metadata is not in
            warnings.simplefilter("ignore")  # the v3 spec: gradcli's stores always have it
            ds.to_zarr(scratch, mode="w", zarr_format=3, consolidated=True)
        dest.begin()
        dest.put_tree(scratch, skip_root=True)
        with open(os.path.join(scratch, ROOT), "rb") as fh:
            dest.finish(fh.read())
    except BaseException:
        dest.abort()
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [f"note: replaced the older store at {path}: {dest.replaced}"] if dest.replaced \
        else []


def write_parquet_rows(columns: Mapping[str, Any], request: WriteRequest) -> list[str]:
    """Parquet: the CSV's columns with their dtypes; the expression as its title."""
    from gradcli.output.parquet_writer import write_parquet

    title = request.origin.expression if request.origin is not None else request.expression
    write_parquet(_path(request), columns, title=title, history=request.history,
                  progress=request.progress)
    return []


def stream_sink(request: WriteRequest) -> Any:
    """The evaluation sink writing ``.npz``/``.npy`` as blocks of rows arrive."""
    from gradcli.output.stream_sink import StreamSink

    return StreamSink(_path(request), request.fmt)


def zarr_sink(request: WriteRequest) -> Any:
    """The evaluation sink writing a Zarr store as blocks of rows arrive."""
    from gradcli.output.zarr_sink import ZarrSink

    return ZarrSink(_path(request), request.origin, request.history,
                    overwrite=request.overwrite)


def jsonl_sink(request: WriteRequest) -> Any:
    """The evaluation sink writing JSON Lines, in row order, as blocks arrive."""
    from gradcli.output.jsonl_writer import JsonlSink

    return JsonlSink(request.path, _out(request))
