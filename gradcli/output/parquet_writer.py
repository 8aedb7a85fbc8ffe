"""``.parquet`` output through pyarrow: the CSV's table, typed and columnar.

Point tables and flattened grids (rows in C order, first grid variable slowest, as in
CSV) with the same column names as CSV; numbers keep their dtype (float64 or float32)
and carried text columns stay strings, so pandas and polars read back every value bit
for bit. Rows are written a row group at a time, so a grid is never expanded whole. The
file's key-value metadata holds ``title`` (the expression), ``source`` and ``history``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gradcli.errors import OutputError
from gradcli.evaluation.extras import require
from gradcli.output._columns import RowChunks
from gradcli.output.atomic import atomic_path
from gradcli.output.cf import global_attrs

__all__ = ["write_parquet"]

ROW_GROUP = 1 << 20


def write_parquet(path: str | os.PathLike[str], columns: Mapping[str, Any], *,
                  title: str = "", history: str = "",
                  progress: Callable[[int, int], None] | None = None) -> None:
    """Write the scalar columns of ``columns`` (a Result or a mapping) to ``path``."""
    require("parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = RowChunks(columns, chunk_rows=ROW_GROUP)
    fields = []
    for run in rows.runs:
        kind = pa.string() if run.text else pa.from_numpy_dtype(np.asarray(run.array).dtype)
        names = run.block.column_names()[run.first:run.first + run.count]
        unit = {b"units": run.block.unit.encode("utf-8")} if run.block.unit else None
        fields += [pa.field(name, kind, nullable=False, metadata=unit) for name in names]
    meta = {k: v for k, v in global_attrs(title, history).items() if k != "Conventions"}
    schema = pa.schema(fields, metadata=meta)
    try:
        with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
            for start, stop in rows.chunks():
                arrays = []
                for run in rows.runs:
                    slab = run.slab(rows.batch, start, stop)
                    for k in range(run.count):
                        col = slab[:, k] if run.text else np.ascontiguousarray(slab[:, k])
                        arrays.append(pa.array(col, type=fields[len(arrays)].type))
                writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
                if progress:
                    progress(stop, rows.total)
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
