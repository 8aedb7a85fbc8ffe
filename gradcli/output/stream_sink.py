"""Stream results straight to ``.npz``/``.npy`` files, block of rows by block of rows.

A 10,000 × 10,000 gradient is 2.4 GB of outputs; written as the rows arrive, the process
never holds more than a few blocks of rows. Everything goes to temporary files first and
is renamed at the end, so an interrupted run leaves nothing behind.

- ``.npz``: one array per result block (as ``write_npz``). While evaluating, each block's
  rows are written at their place in one unnamed spool file (``os.pwrite``, from the
  worker threads, in any order); at the end ``zipfile`` copies each block from the spool
  into its member, after numpy's header. Two files are opened however many columns there
  are; the spool disappears with the process whatever happens.
- ``.npy``: one structured array of records, one field per block (``np.load(p)["df/dx"]``
  is ``(..., n)`` for a vector x), batch-shaped, written in order.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from gradcli.errors import OutputError
from gradcli.output.atomic import atomic_path
from gradcli.output.npz_writer import (
    NpyStream,
    full_array,
    member_dtype,
    npz_archive,
    write_block,
    write_member,
)
from gradcli.plan.blocks import Layout, Result

_COPY = 1 << 22  # bytes per copy from the spool into the zip


class StreamSink:
    """An evaluation sink (see ``gradcli.evaluation.runner.Sink``) writing a file."""

    def __init__(self, path: str, fmt: str) -> None:
        if fmt not in ("npz", "npy"):
            raise ValueError(f"streaming supports npz and npy, not {fmt}")
        self.path, self.fmt = path, fmt
        self.sequential = fmt == "npy"  # records are appended in order; npz writes anywhere
        self.nonfinite = 0  # non-finite result values written so far
        self._lock = threading.Lock()
        self._layout = Layout([])
        self._inputs: Result | None = None
        self._spool: Any = None
        self._offsets: list[int] = []
        self._record: NpyStream | None = None
        self._atomic: Any = None
        self._shape: tuple[int, ...] = ()

    def _guarded(self, step: Any, *args: Any, abort: bool = True) -> Any:
        """Run one step; on any failure report it against the user's path (the spool is an
        implementation detail) and, with ``abort``, remove every partial file."""
        try:
            return step(*args)
        except OutputError as err:
            if abort:
                self.abort()
            raise OutputError(self.path, err.reason) from err
        except OSError as err:
            if abort:
                self.abort()
            raise OutputError.from_oserror(self.path, err) from err
        except BaseException:
            if abort:
                self.abort()
            raise

    def open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
             inputs: Result) -> None:
        """Create the temporary file for a result of ``layout`` over a batch of ``shape``."""
        self._guarded(self._open, layout, shape, dtype, inputs)

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        """Write rows ``start:stop`` of every result block.

        A failure here does not abort: other workers may be writing to the spool at that
        moment, and closing it under them would turn their writes into a second error
        (a bad file descriptor) that could be reported instead of this one. The runner
        calls :meth:`abort` once every worker has stopped.
        """
        self._guarded(self._write, start, stop, values, abort=False)

    @property
    def parts(self) -> bool:
        """Whether :meth:`write_part` works: a result of one point written piece by piece
        (a wide Hessian by rows); only the .npz spool has a place for each piece."""
        return self.fmt == "npz"

    def write_part(self, index: int, first: int, values: np.ndarray) -> None:
        """Write components ``first:first + values.size`` (flat, C order) of block ``index``
        of a one-point result."""
        def put() -> None:
            arr = np.ascontiguousarray(values, dtype=self._dtype)
            bad = arr.size - int(np.count_nonzero(np.isfinite(arr)))
            _pwrite_all(self._spool.fileno(), arr,
                        self._offsets[index] + first * self._dtype.itemsize)
            with self._lock:
                self.nonfinite += bad

        self._guarded(put, abort=False)

    def result(self) -> Result:
        """Finish the file and return the inputs (the results live only on disk)."""
        return self._guarded(self._result)

    def _open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
              inputs: Result) -> None:
        self._layout, self._inputs, self._shape, self._dtype = layout, inputs, shape, dtype
        target_dir = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(target_dir):
            raise OutputError(self.path, "No such file or directory")
        rows = int(np.prod(shape, dtype=np.int64))
        if self.fmt == "npz":
            import tempfile

            self._spool = tempfile.TemporaryFile(dir=target_dir, prefix=".gradcli-spool-")
            offset = 0
            for block in layout.blocks:
                self._offsets.append(offset)
                offset += rows * block.size * dtype.itemsize
            return
        fields = [(b.name, member_dtype(inputs, b, None), b.shape) for b in inputs.blocks]
        fields += [(b.name, dtype, b.shape) for b in layout.blocks]
        self._records = np.dtype(fields)
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        self._record = NpyStream(tmp, shape, self._records)

    def _block_values(self, start: int, stop: int, values: Sequence[Any]) -> Iterator[
            tuple[int, np.ndarray]]:
        """(block index, rows start:stop of the block as a C-contiguous array)."""
        rows = (stop - start,) + self._shape[1:] if self._shape else ()
        for i, (block, value) in enumerate(zip(self._layout.blocks, values, strict=True)):
            if value is None:
                value = np.zeros((), dtype=self._dtype)
            yield i, np.ascontiguousarray(np.broadcast_to(value, rows + block.shape),
                                          dtype=self._dtype)

    def _write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        bad = 0
        per_row = int(np.prod(self._shape[1:], dtype=np.int64)) if self._shape else 1
        if self.fmt == "npz":
            fd = self._spool.fileno()
            for i, arr in self._block_values(start, stop, values):
                bad += arr.size - int(np.count_nonzero(np.isfinite(arr)))
                row_bytes = per_row * self._layout.blocks[i].size * self._dtype.itemsize
                _pwrite_all(fd, arr, self._offsets[i] + start * row_bytes)
        else:
            assert self._inputs is not None and self._record is not None
            rows = (stop - start,) + self._shape[1:] if self._shape else ()
            rec = np.empty(rows, dtype=self._records)
            for block in self._inputs.blocks:
                full = full_array(self._inputs, block)
                rec[block.name] = full[start:stop] if self._shape else full
            for i, arr in self._block_values(start, stop, values):
                bad += arr.size - int(np.count_nonzero(np.isfinite(arr)))
                rec[self._layout.blocks[i].name] = arr
            self._record.write(rec)
        with self._lock:
            self.nonfinite += bad

    def _result(self) -> Result:
        assert self._inputs is not None
        if self.fmt == "npz":
            self._assemble()
        else:
            assert self._record is not None
            self._record.close()
            atomic, self._atomic = self._atomic, None
            atomic.__exit__(None, None, None)
        return self._inputs

    def _assemble(self) -> None:
        inputs = self._inputs
        assert inputs is not None
        rows = int(np.prod(self._shape, dtype=np.int64))
        fd = self._spool.fileno()
        with npz_archive(self.path) as zf:
            for block in inputs.blocks:
                write_block(zf, inputs, block)
            for block, offset in zip(self._layout.blocks, self._offsets, strict=True):
                size = rows * block.size * self._dtype.itemsize
                write_member(zf, block.name, self._shape + block.shape, self._dtype,
                             _spooled(fd, offset, size))
        self._spool.close()
        self._spool = None

    def abort(self) -> None:
        """Remove every partial file (after an error or Ctrl-C)."""
        if self._spool is not None:
            try:
                self._spool.close()
            except OSError:
                pass
            self._spool = None
        if self._record is not None:
            self._record.abort()
        if self._atomic is not None:
            try:
                self._atomic.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            except BaseException:  # noqa: BLE001 - cleanup must not mask the first error
                pass
            self._atomic = None


def _pwrite_all(fd: int, arr: np.ndarray, offset: int) -> None:
    view = memoryview(arr.reshape(-1).view(np.uint8))
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _spooled(fd: int, offset: int, size: int) -> Iterator[bytes]:
    end = offset + size
    while offset < end:
        piece = os.pread(fd, min(_COPY, end - offset), offset)
        if not piece:
            raise OSError(0, "the spool file ended early")
        yield piece
        offset += len(piece)
