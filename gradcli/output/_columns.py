"""Rows of a result for the row-oriented writers (CSV, JSON, tables), chunk by chunk.

Why: a result is stored as blocks (``gradcli.plan.blocks``), and grid variables as
broadcastable axes (shape (100, 1) and (1, 50)) to save memory. Row writers need the
scalar columns in column order, expanded to the batch and in C order (first axis
slowest), without ever materialising the whole grid: ``RowChunks`` hands them out in
bounded chunks of rows, one slab per run of consecutive components of a block.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.plan.blocks import RESULT, TEXT, Block, Result, as_result

__all__ = ["as_arrays", "grid_shape", "row_count", "take_rows", "count_nonfinite",
           "block_slab", "RowChunks", "Run", "CHUNK_ROWS", "checked"]

CHUNK_ROWS = 65536


def checked(columns: Mapping[str, Any]) -> Result:
    """``columns`` as a Result whose blocks are real numbers or text (TypeError otherwise)."""
    result = as_result(columns)
    for block in result.blocks:
        arr = np.asarray(result.arrays[block.name])
        if block.kind == TEXT:
            continue
        if arr.dtype.kind == "c":
            raise TypeError(f"column '{block.name}' is complex; only real values can be "
                            "written")
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"column '{block.name}' has non-numeric dtype {arr.dtype}")
    return result


def as_arrays(columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The scalar columns, in order, as arrays (numbers or text)."""
    result = checked(columns)
    return {name: np.asarray(result[name]) for name in result}


def grid_shape(columns: Mapping[str, Any]) -> tuple[int, ...]:
    """The batch shape every column broadcasts to (ValueError if they do not)."""
    return as_result(columns).batch_shape


def row_count(columns: Mapping[str, Any]) -> int:
    """Number of output rows: the size of the broadcast batch."""
    return int(np.prod(grid_shape(columns), dtype=np.int64))


def block_slab(arr: Any, batch: tuple[int, ...], block: Block, start: int,
               stop: int) -> np.ndarray:
    """Rows ``start:stop`` (flat, C order) of a block array as ``(rows, components)``: a
    view when the array is full size, else a copy of just those rows."""
    arr = np.asarray(arr)
    full = batch + block.shape
    if arr.shape == full and arr.flags.c_contiguous:
        return arr.reshape(-1, block.size)[start:stop]
    if not block.shape:
        return np.broadcast_to(arr, batch).flat[start:stop].reshape(-1, 1)
    arr = arr.reshape((1,) * (len(full) - arr.ndim) + arr.shape)
    idx = np.unravel_index(np.arange(start, stop), batch) if batch else ()
    index = tuple(i if arr.shape[d] != 1 else 0 for d, i in enumerate(idx))
    rows = np.broadcast_to(arr[index] if index else arr, (stop - start,) + block.shape)
    return rows.reshape(stop - start, block.size)


@dataclass
class Run:
    """Components ``first:first+count`` of one block, adjacent in column order."""

    block: Block
    array: Any
    first: int
    count: int

    @property
    def text(self) -> bool:
        return self.block.kind == TEXT

    def slab(self, batch: tuple[int, ...], start: int, stop: int) -> np.ndarray:
        """(rows, count) values of this run for rows ``start:stop``."""
        whole = block_slab(self.array, batch, self.block, start, stop)
        return whole[:, self.first:self.first + self.count]


class RowChunks:
    """A result's rows in chunks: ``runs`` in column order, ``chunks()`` the row ranges."""

    def __init__(self, columns: Mapping[str, Any], chunk_rows: int = CHUNK_ROWS) -> None:
        self.result = checked(columns)
        self.batch = self.result.batch_shape
        self.total = int(np.prod(self.batch, dtype=np.int64))
        self.chunk_rows = chunk_rows
        blocks = self.result.blocks
        self.runs = [Run(blocks[i], self.result.arrays[blocks[i].name], first, count)
                     for i, first, count in self.result.layout.runs()]
        self.names = list(self.result.layout.column_names())
        #: the header of each column: ``name [unit]`` where its block has a unit
        units = [blocks[i].unit for i, _, count in self.result.layout.runs()
                 for _ in range(count)]
        self.headers = [f"{n} [{u}]" if u else n for n, u in zip(self.names, units,
                                                                    strict=True)] \
            if any(units) else self.names
        #: how each numeric column is written (``_floatfmt.column_kind``): integers stay
        #: integers and float32 values get float32's shortest text
        self.kinds = [_kind(np.asarray(r.array).dtype) for r in self.runs if not r.text
                      for _ in range(r.count)]

    def chunks(self) -> Iterator[tuple[int, int]]:
        """Row ranges of at most ``chunk_rows`` rows covering every row."""
        for start in range(0, self.total, self.chunk_rows):
            yield start, min(self.total, start + self.chunk_rows)

    def numbers(self, start: int, stop: int, skip: Container[int] = ()) -> np.ndarray:
        """Every numeric column of rows ``start:stop`` as one (rows, k) float64 array;
        columns whose index is in ``skip`` are left unset."""
        runs = [r for r in self.runs if not r.text]
        out = np.empty((stop - start, sum(r.count for r in runs)), dtype=np.float64)
        j = 0
        for r in runs:
            if not (r.count == 1 and j in skip):
                out[:, j:j + r.count] = r.slab(self.batch, start, stop)
            j += r.count
        return out


def _kind(dtype: np.dtype) -> str:
    if dtype.kind in "iu":
        return "i"
    return "f4" if dtype == np.float32 else "f"


def take_rows(columns: Mapping[str, Any], rows: np.ndarray) -> dict[str, np.ndarray]:
    """Values of each scalar column at the given flat (C-order) row indices."""
    result = checked(columns)
    batch = result.batch_shape
    rows = np.asarray(rows, dtype=np.intp)
    out = {}
    for block in result.blocks:
        arr = np.asarray(result.arrays[block.name])
        full = np.broadcast_to(arr, batch + block.shape)
        picked = full[np.unravel_index(rows, batch)] if batch else \
            np.broadcast_to(full, rows.shape + block.shape)
        flat = picked.reshape(len(rows), block.size)
        for k, name in enumerate(block.column_names()):
            out[name] = flat[:, k]
    return {name: out[name] for name in result}


def count_nonfinite(columns: Mapping[str, Any], *, results_only: bool = False) -> int:
    """Number of NaN/±inf cells in the broadcast output table (vectorised).

    Each element of a broadcast array appears ``batch_size / its_size`` times, so the count
    is computed on the small arrays without expanding the grid. Text is never counted;
    with ``results_only``, neither are the variables' own columns (the inputs).
    """
    result = as_result(columns)
    total = int(np.prod(result.batch_shape, dtype=np.int64))
    count = 0
    for block in result.blocks:
        if block.kind == TEXT or (results_only and block.kind != RESULT):
            continue
        arr = np.asarray(result.arrays[block.name])
        if arr.dtype.kind != "f" or arr.size == 0:
            continue
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        count += bad * (total * block.size // arr.size)
    return count


def column_headers(columns: Mapping[str, Any], names: list[str]) -> list[str]:
    """The headers of ``names`` (columns of ``columns``): ``name [unit]`` where the
    column's block has a unit (``Block.unit``), the bare name otherwise."""
    layout = getattr(columns, "layout", None)
    if layout is None or not any(b.unit for b in layout.blocks):
        return names
    unit: dict[str, str] = {}
    for block in layout.blocks:
        if block.unit:
            unit.update(dict.fromkeys(block.column_names(), block.unit))
    return [f"{n} [{unit[n]}]" if n in unit else n for n in names]


def column_units(columns: Mapping[str, Any]) -> dict[str, str]:
    """Each block with a unit -> its unit (JSON's ``units`` object, ``.units``)."""
    layout = getattr(columns, "layout", None)
    return {b.name: b.unit for b in getattr(layout, "blocks", ()) if b.unit}
