"""Stream results straight to ``.npz``/``.npy`` files, block by block, in bounded memory.

A 10,000 × 10,000 gradient is 2.4 GB of outputs; written as the blocks arrive, the process
never holds more than a few blocks. Everything goes to temporary files first and is renamed
at the end, so an interrupted run leaves nothing behind.

- ``.npz``: one array per column (variables included), grid-shaped, as ``write_npz``.
- ``.npy``: one structured array of records, one field per column (``np.load(p)["df/dx"]``),
  grid-shaped.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from .atomic import OutputError, atomic_path
from .npz_writer import NpyStream, assemble_npz

# Past this many columns the part files are reopened per block instead of held open, so a
# Jacobian with thousands of columns does not run out of file descriptors.
_MAX_OPEN_PARTS = 64


class StreamSink:
    """An evaluation sink (``open``/``write``/``result``) that writes files sequentially.

    ``variables`` maps the variables' own columns to arrays broadcastable to the batch
    (grid axes or point columns); they are written alongside the results.
    """

    sequential = True  # blocks must arrive in order

    def __init__(self, path: str, fmt: str, variables: dict[str, np.ndarray]) -> None:
        if fmt not in ("npz", "npy"):
            raise ValueError(f"streaming supports npz and npy, not {fmt}")
        self.path, self.fmt, self.variables = path, fmt, variables
        self.shape: tuple[int, ...] = ()
        self._streams: dict[str, NpyStream] = {}
        self._record: NpyStream | None = None
        self._dir: str | None = None
        self._atomic: Any = None
        self._tmp_path: str | None = None
        self.columns: list[str] = []
        self._pending: dict[str, Any] = {}
        self._pending_range: tuple[int, int] | None = None
        self.nonfinite = 0  # non-finite result values written so far

    def _guarded(self, step: Any, *args: Any) -> Any:
        """Run one step; on any failure remove every partial file and report the failure
        against the user's path (the part files are an implementation detail)."""
        try:
            return step(*args)
        except OutputError as err:
            self.abort()
            raise OutputError(self.path, err.reason) from err
        except OSError as err:
            self.abort()
            raise OutputError.from_oserror(self.path, err) from err
        except BaseException:
            self.abort()
            raise

    def open(self, columns: list[str], shape: tuple[int, ...], dtype: np.dtype) -> None:
        """Create the temporary files for ``columns`` of a batch of ``shape``."""
        self._guarded(self._open, columns, shape, dtype)

    def write(self, column: str, start: int, stop: int, block: Any) -> None:
        """Buffer one column's block; a block row range is flushed once all its columns
        have arrived (the runner delivers them together, in order)."""
        self._guarded(self._write, column, start, stop, block)

    def result(self) -> dict[str, Any]:
        """Finish the files and return the variables (results live only on disk)."""
        return self._guarded(self._result)

    def _open(self, columns: list[str], shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.columns = [*self.variables, *columns]
        target_dir = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(target_dir):
            raise OutputError(self.path, "No such file or directory")
        if self.fmt == "npz":
            try:
                self._dir = tempfile.mkdtemp(prefix=".gradcli-parts-", dir=target_dir)
            except OSError as err:
                raise OutputError.from_oserror(self.path, err) from err
            keep_open = len(self.columns) <= _MAX_OPEN_PARTS
            for i, name in enumerate(self.columns):
                part = os.path.join(self._dir, f"{i}.npy")
                self._streams[name] = NpyStream(part, shape, dtype, keep_open=keep_open)
        else:
            self._atomic = atomic_path(self.path)
            self._tmp_path = self._atomic.__enter__()
            self._dtype = np.dtype([(name, dtype) for name in self.columns])
            self._record = NpyStream(self._tmp_path, shape, self._dtype)

    def _variable_block(self, name: str, start: int, stop: int, block_shape: tuple) -> Any:
        arr = self.variables[name]
        if arr.ndim and arr.shape[0] != 1:
            arr = arr[start:stop]
        return np.broadcast_to(arr, block_shape)

    def _write(self, column: str, start: int, stop: int, block: Any) -> None:
        block_shape = (stop - start,) + self.shape[1:] if self.shape else ()
        if self._pending_range != (start, stop):
            self._pending, self._pending_range = {}, (start, stop)
        if block is None:
            block = np.zeros(block_shape)
        else:
            self.nonfinite += int(block.size - np.count_nonzero(np.isfinite(block)))
        self._pending[column] = block
        if len(self._pending) + len(self.variables) < len(self.columns):
            return
        for name in self.variables:
            self._pending[name] = self._variable_block(name, start, stop, block_shape)
        if self.fmt == "npz":
            for name in self.columns:
                self._streams[name].write(self._pending[name])
        else:
            rec = np.empty(block_shape, dtype=self._dtype)
            for name in self.columns:
                rec[name] = self._pending[name]
            assert self._record is not None
            self._record.write(rec)
        self._pending = {}

    def _result(self) -> dict[str, Any]:
        if self.fmt == "npz":
            for s in self._streams.values():
                s.close()
            members = {name: self._streams[name].path for name in self.columns}
            assemble_npz(self.path, members, remove=True)
            self._cleanup()
        else:
            assert self._record is not None
            self._record.close()
            atomic, self._atomic = self._atomic, None
            atomic.__exit__(None, None, None)
        return dict(self.variables)

    def abort(self) -> None:
        """Remove every partial file (after an error or Ctrl-C)."""
        for s in self._streams.values():
            s.abort()
        if self._record is not None:
            self._record.abort()
        if self._atomic is not None:
            try:
                self._atomic.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            except BaseException:  # noqa: BLE001 - cleanup must not mask the first error
                pass
            self._atomic = None
        self._cleanup()

    def _cleanup(self) -> None:
        if self._dir is not None:
            for name in os.listdir(self._dir):
                try:
                    os.unlink(os.path.join(self._dir, name))
                except OSError:
                    pass
            try:
                os.rmdir(self._dir)
            except OSError:
                pass
            self._dir = None
