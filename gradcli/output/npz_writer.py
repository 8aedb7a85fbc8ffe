"""NPZ output: one array per column, grid-shaped, keys = column names exactly.

Why not ``np.savez``: its keyword interface cannot take names such as
``file`` and it needs whole arrays in memory.  Here each column is broadcast
to the full grid shape and streamed into its own ``NAME.npy`` zip member
(ZIP_STORED, zip64), so ``np.load(path)["df/dx"]`` works: ``np.load`` maps
member ``df/dx.npy`` back to key ``df/dx``.  Names are used verbatim (``/``,
``[``, ``]``, spaces and non-ASCII are all fine); no escaping is applied.

For outputs bigger than memory, ``NpyStream`` writes a single ``.npy`` file
block by block and ``assemble_npz`` zips finished ``.npy`` files into an
``.npz`` by streaming copy.  All public writers are atomic.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import numpy as np
from numpy.lib import format as npformat

from ._columns import as_arrays, grid_shape
from .atomic import OutputError, atomic_open, atomic_path

__all__ = ["write_npz", "NpyStream", "assemble_npz"]

_COPY_BUFSIZE = 1 << 20


def _header(shape: tuple[int, ...], dtype: np.dtype[Any]) -> dict[str, Any]:
    return {"descr": npformat.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}


def _write_header(fh: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    try:
        npformat.write_array_header_1_0(fh, _header(shape, dtype))
    except ValueError:  # header longer than 64K: needs format 2.0
        npformat.write_array_header_2_0(fh, _header(shape, dtype))


def write_npz(path: str | os.PathLike[str], columns: Mapping[str, np.ndarray]) -> None:
    """Write each column, broadcast to the common grid shape, to ``path`` atomically."""
    arrays = as_arrays(columns)
    shape = grid_shape(arrays)
    with atomic_open(path, "wb") as fh, zipfile.ZipFile(
        fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True
    ) as zf:
        for name, col in arrays.items():
            full = np.broadcast_to(col, shape)
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                # write_array streams non-contiguous (broadcast) arrays in buffered chunks
                npformat.write_array(member, full, allow_pickle=False)


class NpyStream:
    """Write a ``.npy`` file of known (shape, dtype) from consecutive C-order blocks.

    Usage::

        with NpyStream("f.npy", (1000, 1000)) as s:
            for block in blocks:        # any shapes; sizes must add up
                s.write(block)

    ``close()`` checks that exactly ``prod(shape)`` elements were written and
    raises OutputError otherwise; on any failure the file is removed.

    ``keep_open=False`` reopens the file for each block instead of holding a descriptor:
    thousands of streams at once (one per column of a large Jacobian) would otherwise run
    out of file descriptors.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        shape: tuple[int, ...],
        dtype: np.dtype[Any] | type = np.float64,
        *,
        keep_open: bool = True,
    ) -> None:
        self.path = os.fspath(path)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.expected = int(np.prod(self.shape, dtype=np.int64))
        self.written = 0
        self.closed = False
        self._fh: Any = None
        try:
            fh = open(self.path, "wb")
            _write_header(fh, self.shape, self.dtype)
            if keep_open:
                self._fh = fh
            else:
                fh.close()
        except OSError as err:
            raise OutputError.from_oserror(self.path, err) from err

    def write(self, block: np.ndarray) -> None:
        """Append a block (flattened in C order, cast to the stream's dtype)."""
        arr = np.ascontiguousarray(block, dtype=self.dtype).reshape(-1)
        if self.written + arr.size > self.expected:
            self.abort()
            raise OutputError(self.path, f"more than the declared {self.expected} elements")
        try:
            if self._fh is not None:
                self._fh.write(arr.data)
            else:
                with open(self.path, "ab") as fh:
                    fh.write(arr.data)
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
            if self._fh is not None:
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
            if self._fh is not None:
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


def assemble_npz(
    path: str | os.PathLike[str],
    members: Mapping[str, str | os.PathLike[str]],
    *,
    remove: bool = False,
) -> None:
    """Zip existing ``.npy`` files into ``path`` (key -> npy path), atomically.

    Data is copied in 1 MiB pieces (ZIP_STORED, zip64), so memory stays
    bounded.  With ``remove=True`` the source files are deleted afterwards.
    """
    try:
        with atomic_path(path) as tmp, zipfile.ZipFile(
            tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True
        ) as zf:
            for name, src in members.items():
                try:
                    fin = open(src, "rb")
                except OSError as err:
                    reason = f"cannot read '{os.fspath(src)}': {err.strerror}"
                    raise OutputError(path, reason) from err
                with fin, zf.open(f"{name}.npy", "w", force_zip64=True) as out:
                    shutil.copyfileobj(fin, out, _COPY_BUFSIZE)
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
    if remove:
        for src in members.values():
            try:
                os.unlink(src)
            except OSError:
                pass
