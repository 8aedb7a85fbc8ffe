"""NPZ output: one array per block, keys = block names exactly.

A scalar column (``f``, ``df/dy``, a scalar variable) is one array of the batch's shape (the
grid's shape for a grid, ``(N,)`` for N points); a block with component axes is one array
with them trailing: ``df/dx`` ``(..., n)`` for a vector variable x, ``d2f/dxdy``
``(..., n, m)``. Text columns carried from a points file are unicode arrays (``<U``), so
``np.load`` reads every member without pickle.

Why not ``np.savez``: its keyword interface cannot take names such as ``file`` and it needs
whole arrays in memory. Here each block is broadcast to its full shape and streamed into its
own ``NAME.npy`` zip member (ZIP_STORED, zip64) by ``zipfile`` and numpy's own ``.npy``
header writer, so ``np.load(path)["df/dx"]`` works: ``np.load`` maps member ``df/dx.npy``
back to key ``df/dx``. Names are used verbatim (``/``, ``[``, ``]``, spaces and non-ASCII are
all fine); no escaping is applied. ``NpyStream`` writes a single ``.npy`` file block by
block (the ``.npy`` record output). All public writers are atomic.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import numpy as np
from numpy.lib import format as npformat

from gradcli.errors import OutputError
from gradcli.output._columns import checked
from gradcli.output.atomic import atomic_open
from gradcli.plan.blocks import TEXT, Block, Result

__all__ = ["write_npz", "NpyStream", "npz_archive", "write_block", "write_member",
           "full_array", "member_dtype"]

_PIECE = 1 << 22  # bytes per write when streaming a member


def write_header(fh: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    """numpy's ``.npy`` header for an array of ``shape`` and ``dtype``."""
    header = {"descr": npformat.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    try:
        npformat.write_array_header_1_0(fh, header)
    except ValueError:  # header longer than 64K: needs format 2.0
        npformat.write_array_header_2_0(fh, header)


def member_dtype(result: Result, block: Block, dtype: Any = None) -> np.dtype[Any]:
    """The dtype a block is stored with: unicode wide enough for a text block's longest
    cell, else ``dtype`` (default: the array's own)."""
    arr = np.asarray(result.arrays[block.name])
    if block.kind == TEXT:
        longest = max((len(str(v)) for v in arr.reshape(-1).tolist()), default=0)
        return np.dtype(f"<U{max(1, longest)}")
    return np.dtype(dtype) if dtype is not None else arr.dtype


def full_array(result: Result, block: Block) -> np.ndarray:
    """The block broadcast to ``batch + block.shape`` (a view; not materialised)."""
    arr = np.asarray(result.arrays[block.name])
    return np.broadcast_to(arr, result.batch_shape + block.shape)


def _pieces(full: np.ndarray, dtype: np.dtype[Any]) -> Iterator[bytes | memoryview]:
    """The bytes of ``full`` as ``dtype``, C order, a few MiB of rows at a time."""
    if full.ndim == 0:
        yield np.asarray(full, dtype=dtype).tobytes()
        return
    per_row = max(1, int(np.prod(full.shape[1:], dtype=np.int64)) * dtype.itemsize)
    step = max(1, _PIECE // per_row)
    for r0 in range(0, full.shape[0], step):
        rows = np.ascontiguousarray(full[r0:r0 + step], dtype=dtype)
        yield memoryview(rows.reshape(-1).view(np.uint8))


def write_member(zf: zipfile.ZipFile, name: str, shape: tuple[int, ...], dtype: np.dtype[Any],
                 data: Iterable[bytes | memoryview]) -> None:
    """One ``NAME.npy`` member: numpy's header, then ``data`` (the C-order bytes)."""
    with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
        write_header(member, shape, dtype)
        for piece in data:
            member.write(piece)


@contextmanager
def npz_archive(path: str | os.PathLike[str]) -> Iterator[zipfile.ZipFile]:
    """An ``.npz`` archive written atomically to ``path`` (ZIP_STORED, zip64)."""
    with atomic_open(path, "wb") as fh, zipfile.ZipFile(
        fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True
    ) as zf:
        yield zf


def write_block(zf: zipfile.ZipFile, result: Result, block: Block) -> None:
    """One in-memory block of ``result`` as a member, broadcast to its full shape."""
    full = full_array(result, block)
    dtype = member_dtype(result, block)
    write_member(zf, block.name, full.shape, dtype, _pieces(full, dtype))


def write_npz(path: str | os.PathLike[str], columns: Mapping[str, Any]) -> None:
    """Write each block (a Result's, or each column of a plain mapping), broadcast to the
    batch, to ``path`` atomically."""
    result = checked(columns)
    with npz_archive(path) as zf:
        for block in result.blocks:
            write_block(zf, result, block)


class NpyStream:
    """Write a ``.npy`` file of known (shape, dtype) from consecutive C-order blocks.

    Usage::

        with NpyStream("f.npy", (1000, 1000)) as s:
            for block in blocks:        # any shapes; sizes must add up
                s.write(block)

    ``close()`` checks that exactly ``prod(shape)`` elements were written and
    raises OutputError otherwise; on any failure the file is removed.
    """

    def __init__(self, path: str | os.PathLike[str], shape: tuple[int, ...],
                 dtype: np.dtype[Any] | type = np.float64) -> None:
        self.path = os.fspath(path)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.expected = int(np.prod(self.shape, dtype=np.int64))
        self.written = 0
        self.closed = False
        try:
            self._fh: Any = open(self.path, "wb")
            write_header(self._fh, self.shape, self.dtype)
        except OSError as err:
            raise OutputError.from_oserror(self.path, err) from err

    def write(self, block: np.ndarray) -> None:
        """Append a block (flattened in C order, cast to the stream's dtype)."""
        arr = np.ascontiguousarray(block, dtype=self.dtype).reshape(-1)
        if self.written + arr.size > self.expected:
            self.abort()
            raise OutputError(self.path, f"more than the declared {self.expected} elements")
        try:
            self._fh.write(arr.data)
        except OSError as err:
            self.abort()
            raise OutputError.from_oserror(self.path, err) from err
        self.written += arr.size

    def close(self) -> None:
        """Finish the file; OutputError if the element count is wrong."""
        if self.closed:
            return
        if self.written != self.expected:
            self.abort()
            raise OutputError(
                self.path, f"got {self.written} elements, expected {self.expected}"
            )
        try:
            self._fh.close()
        except OSError as err:
            self.abort()
            raise OutputError.from_oserror(self.path, err) from err
        self.closed = True

    def abort(self) -> None:
        """Close and delete the partial file."""
        if self.closed:
            return
        self.closed = True
        try:
            self._fh.close()
        except OSError:
            pass
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def __enter__(self) -> NpyStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
