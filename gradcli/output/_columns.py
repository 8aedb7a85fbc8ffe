"""Helpers shared by the writers: broadcasting result columns into row blocks.

Why: grid results keep the variables' own columns as broadcastable axes
(shape (100, 1) and (1, 50)) to save memory.  Writers must expand them to the
common grid shape and emit rows in C order (first axis slowest) without ever
materialising the whole grid, so rows are produced in bounded-size blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

__all__ = ["as_arrays", "grid_shape", "row_count", "iter_blocks", "take_rows", "count_nonfinite"]

CHUNK_ROWS = 65536


def as_arrays(columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Return the columns as numpy arrays (real numbers only)."""
    out = {}
    for name, col in columns.items():
        arr = np.asarray(col)
        if arr.dtype.kind == "c":
            raise TypeError(f"column '{name}' is complex; only real values can be written")
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"column '{name}' has non-numeric dtype {arr.dtype}")
        out[name] = arr
    return out


def grid_shape(columns: Mapping[str, np.ndarray]) -> tuple[int, ...]:
    """The common broadcast shape of all columns (ValueError if incompatible)."""
    shapes = [np.shape(c) for c in columns.values()]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else (0,)
    except ValueError as err:
        raise ValueError(f"result columns have incompatible shapes {shapes}") from err


def row_count(columns: Mapping[str, np.ndarray]) -> int:
    """Number of output rows: the size of the broadcast grid."""
    return int(np.prod(grid_shape(columns), dtype=np.int64))


def _flat_slice(col: np.ndarray, shape: tuple[int, ...], start: int, stop: int) -> np.ndarray:
    if col.shape == shape and col.flags.c_contiguous:
        return col.reshape(-1)[start:stop]
    return np.broadcast_to(col, shape).flat[start:stop]


def iter_blocks(
    columns: Mapping[str, np.ndarray], chunk_rows: int = CHUNK_ROWS,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[np.ndarray]:
    """Yield (rows, ncols) float64 blocks covering all rows in C order; after the consumer
    is done with each block, ``progress(rows done, total rows)`` is called."""
    arrays = list(as_arrays(columns).values())
    shape = grid_shape(columns)
    total = int(np.prod(shape, dtype=np.int64))
    for start in range(0, total, chunk_rows):
        stop = min(total, start + chunk_rows)
        block = np.empty((stop - start, len(arrays)), dtype=np.float64)
        for j, col in enumerate(arrays):
            block[:, j] = _flat_slice(col, shape, start, stop)
        yield block
        if progress is not None:
            progress(stop, total)


def take_rows(columns: Mapping[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """Values of each column at the given flat (C-order) row indices."""
    shape = grid_shape(columns)
    rows = np.asarray(rows, dtype=np.intp)
    if shape == ():  # a grid with no sampled axis is one row; unravel_index needs an axis
        return {name: np.broadcast_to(col, rows.shape) for name, col in as_arrays(columns).items()}
    index = np.unravel_index(rows, shape)
    return {name: np.broadcast_to(col, shape)[index] for name, col in as_arrays(columns).items()}


def count_nonfinite(columns: Mapping[str, np.ndarray]) -> int:
    """Number of NaN/±inf cells in the broadcast output table (vectorised).

    Each element of a broadcast column appears ``grid_size / column_size`` times,
    so the count is computed on the small arrays without expanding the grid.
    """
    arrays = as_arrays(columns)
    total = row_count(arrays)
    count = 0
    for col in arrays.values():
        if col.dtype.kind != "f" or col.size == 0:
            continue
        bad = int(col.size - np.count_nonzero(np.isfinite(col)))
        count += bad * (total // col.size)
    return count
