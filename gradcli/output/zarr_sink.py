"""Stream a result into a Zarr v3 store, block by block while evaluating.

The store has xarray's layout (``dimension_names``, a ``coordinates`` attribute, the CF
plan of ``cf.py``), so ``xarray.open_zarr`` reads it with its coordinates. Data variables
are chunked along the evaluation's blocks (the rows of one block of the first axis, the
other axes whole), so each block is written by the worker that computed it, in any order,
without reading anything back; a 10,000 x 10,000 grid never needs more memory than a few
blocks. Result chunks are stored uncompressed: float64 derivatives of smooth functions
shrink by under 10 % with zstd, at a fraction of the write speed (docs/DESIGN.md).

The metadata is made by zarr itself in a scratch directory (with the consolidated root
document), copied to the destination before the chunks, and the root document goes last:
see ``zarr_store`` for why that makes the write atomic.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.errors import OutputError
from gradcli.evaluation.extras import require
from gradcli.evaluation.origin import Origin
from gradcli.evaluation.runner import DEFAULT_BLOCK, blocks_for, column_reader
from gradcli.output import interrupt
from gradcli.output.cf import DatasetPlan, DataVar, gather, plan_dataset
from gradcli.output.zarr_store import ROOT, Destination, is_url, open_store
from gradcli.plan.blocks import Layout, Result

__all__ = ["ZarrSink", "ChunkWriter", "write_zarr"]


@dataclass
class ChunkWriter:
    """Writes rows of every data variable into an existing store; picklable, so Dask
    workers write their own blocks (it carries names and column numbers, no code)."""

    location: str
    variables: list[DataVar]
    shape: tuple[int, ...]
    dtype: str
    layout: Layout

    def write(self, start: int, stop: int, values: Sequence[Any]) -> int:
        """Write rows ``start:stop`` (``values[i]``: block i of the layout); return how
        many of the values written are nan or inf."""
        rows = (stop - start,) + self.shape[1:] if self.shape else ()
        column = column_reader(self.layout, values)
        if not _still_there(self.location, self.variables[0].name if self.variables else ""):
            # the run was stopped and its store removed: a chunk written now would bring
            # the directory back (a Dask task still running when the client gave up)
            raise OutputError(self.location, "the store being written was removed")
        bad = 0
        for var in self.variables:
            data = np.require(gather(var, column, rows, self.dtype),
                              requirements="C")  # (ascontiguousarray makes 0-d arrays 1-d)
            bad += data.size - int(np.count_nonzero(np.isfinite(data)))
            _put(_array(self.location, var.name), slice(start, stop) if self.shape else (),
                 data)
        return bad


def _still_there(location: str, name: str) -> bool:
    """Whether the store being written at ``location`` still exists (its first array's
    metadata, for a URL one request per block)."""
    if not is_url(location):
        return os.path.isdir(location)
    if not name:
        return True
    try:
        import fsspec

        fs, path = fsspec.core.url_to_fs(location)
        return bool(fs.exists(f"{path.rstrip('/')}/{name}/{ROOT}"))
    except Exception:  # noqa: BLE001 - cannot tell: let the write itself say what is wrong
        return True


_OPEN: dict[tuple[str, str], Any] = {}
_OPEN_LOCK = threading.Lock()


def _put(target: Any, where: Any, data: np.ndarray) -> None:
    """``target[where] = data``; a 0-d array is given as its value (zarr cannot merge a
    0-d array into a 0-d chunk it has read back)."""
    target[where] = data[()] if data.ndim == 0 else data


def _array(location: str, name: str) -> Any:
    """The zarr array ``name`` of the store at ``location``, opened once per process."""
    key = (location, name)
    with _OPEN_LOCK:
        if key not in _OPEN:
            import zarr

            _OPEN[key] = zarr.open_array(open_store(location), path=name, mode="r+",
                                         zarr_format=3)
        return _OPEN[key]


def _forget(location: str) -> None:
    with _OPEN_LOCK:
        for key in [k for k in _OPEN if k[0] == location]:
            del _OPEN[key]


class ZarrSink:
    """An evaluation sink (``gradcli.evaluation.runner.Sink``) writing a ``.zarr`` store to
    a path or an fsspec URL. ``block_size`` is the points per block, which the runner
    takes from the sink so that every block fills whole chunks."""

    sequential = False

    def __init__(self, destination: str, origin: Origin | None = None, history: str = "",
                 block_size: int | None = None, overwrite: bool = False) -> None:
        self.destination = destination
        self.overwrite = overwrite
        self.origin, self.history = origin, history
        self.block_size = block_size or DEFAULT_BLOCK
        # no size given: the runner sizes the blocks from the memory budget and sets
        # block_size to match before open (the chunks are the blocks' rows)
        self.budgeted = block_size is None
        self.nonfinite = 0
        self.plan: DatasetPlan | None = None
        self._lock = threading.Lock()
        # Blocks are written from the runner's threads: abort waits for the writes under
        # way and refuses later ones, or a chunk written after the removal would bring a
        # partial store back.
        self._writing = threading.Condition()
        self._under_way = 0
        self._aborted = False
        self._dest: Destination | None = None
        self._root = b""
        self._inputs: Result | None = None
        self.writer: ChunkWriter | None = None

    def open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
             inputs: Result) -> None:
        """Create the store's metadata and coordinates; no result chunk exists yet."""
        require("zarr")
        self._inputs = inputs
        self.plan = plan = plan_dataset(layout, inputs, self.origin, self.history)
        self._dest = Destination(self.destination, self.overwrite)
        try:
            location = self._dest.begin()
            rows = blocks_for(shape, self.block_size)[0]
            # zarr does its work in its own event-loop thread: a signal must not leave
            # that work running (and warning) after this thread has moved on
            with interrupt.holding():
                self._root = _skeleton(self._dest, plan, rows[1] - rows[0], np.dtype(dtype))
            self.writer = ChunkWriter(location, plan.variables, tuple(shape),
                                      np.dtype(dtype).str, layout)
        except BaseException as err:
            self.abort()
            raise _as_output_error(self.destination, err) from err

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        """Write rows ``start:stop`` of every data variable."""
        assert self.writer is not None
        with self._writing:
            if self._aborted:
                return  # the run has failed: nothing more goes into the store
            self._under_way += 1
        try:
            if threading.current_thread() is threading.main_thread():
                with interrupt.holding():  # zarr's loop thread must not write on alone
                    bad = self.writer.write(start, stop, values)
            else:
                bad = self.writer.write(start, stop, values)
        except BaseException as err:
            self._finished_one()
            self.abort()
            raise _as_output_error(self.destination, err) from err
        self._finished_one()
        self.add_nonfinite(bad)

    def _finished_one(self) -> None:
        with self._writing:
            self._under_way -= 1
            self._writing.notify_all()

    @property
    def notes(self) -> list[str]:
        """What the user should be told: which older store this one replaced."""
        replaced = self._dest.replaced if self._dest is not None else ""
        return [f"note: replaced the older store at {self.destination}: {replaced}"] \
            if replaced else []

    def add_nonfinite(self, count: int) -> None:
        """Count non-finite values written elsewhere (by Dask workers)."""
        with self._lock:
            self.nonfinite += count

    def result(self) -> Result:
        """Write the root document last (the store is complete) and return the inputs."""
        assert self._dest is not None and self._inputs is not None
        try:
            self._dest.finish(self._root)
        except BaseException as err:
            self.abort()
            raise _as_output_error(self.destination, err) from err
        if self.writer is not None:
            _forget(self.writer.location)
        return self._inputs

    def abort(self) -> None:
        """Remove the partial store, once no block is being written into it."""
        with self._writing:
            self._aborted = True
            self._writing.wait_for(lambda: self._under_way == 0, timeout=60)
        if self.writer is not None:
            _forget(self.writer.location)
        if self._dest is not None:
            self._dest.abort()


def _as_output_error(destination: str, err: BaseException) -> BaseException:
    if isinstance(err, OSError) and not isinstance(err, OutputError):
        return OutputError.from_oserror(destination, err)
    return err


def _skeleton(dest: Destination, plan: DatasetPlan, chunk_rows: int, dtype: np.dtype) -> bytes:
    """Make every array's metadata with zarr in a scratch directory, copy it (and the
    coordinates' values) to the destination, and return the consolidated root document,
    which the caller writes last."""
    import tempfile

    import zarr
    from zarr.storage import LocalStore

    batch = plan.batch_shape
    chunks = (chunk_rows,) + batch[1:] if batch else ()
    with tempfile.TemporaryDirectory(prefix="gradcli-zarr-") as scratch, \
            warnings.catch_warnings():
        # zarr warns that string arrays and consolidated metadata are not yet in the v3
        # spec; xarray writes both the same way
        warnings.simplefilter("ignore")
        group = zarr.create_group(LocalStore(scratch), attributes=plan.attrs, zarr_format=3)
        for c in plan.coords:
            text = c.values.dtype.kind in "OUST"
            along = batch and c.dims[:len(plan.dims)] == plan.dims  # a point set's values
            group.create_array(
                name=c.name, shape=c.values.shape,
                chunks=(chunks + c.values.shape[len(batch):]) if along else c.values.shape,
                dtype=str if text else c.values.dtype, dimension_names=list(c.dims),
                attributes=c.attrs, fill_value="" if text else np.nan)
        for v in plan.variables:
            attrs = dict(v.attrs)
            coordinates = plan.coordinates_of(v)
            if coordinates:
                attrs["coordinates"] = " ".join(coordinates)
            group.create_array(name=v.name, shape=batch + v.extra, chunks=chunks + v.extra,
                               dtype=dtype, dimension_names=list(v.dims), attributes=attrs,
                               fill_value=np.nan, compressors=None)
        zarr.consolidate_metadata(LocalStore(scratch))
        dest.put_tree(scratch)
        with open(os.path.join(scratch, ROOT), "rb") as fh:
            root = fh.read()
        for c in plan.coords:
            text = c.values.dtype.kind in "OUST"
            _put(_array(dest.location, c.name), (),
                 np.asarray(c.values, dtype=object) if text else c.values)
    return root


def write_zarr(destination: str, result: Result, origin: Origin | None = None,
               history: str = "", block_size: int | None = None,
               overwrite: bool = False) -> list[str]:
    """Write an in-memory result (its input and result blocks) as a ``.zarr`` store;
    ``overwrite`` replaces an older store even if it holds entries gradcli did not write.
    Return the notes for the user (the older store replaced)."""
    from gradcli.output.dataset import split_result

    inputs, layout, _ = split_result(result)
    sink = ZarrSink(destination, origin, history, block_size, overwrite)
    shape = tuple(result.batch_shape)
    dtypes = [np.asarray(a).dtype for n, a in result.arrays.items() if n not in inputs.arrays]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    sink.open(layout, shape, dtype, inputs)
    for start, stop in blocks_for(shape, sink.block_size):
        sink.write(start, stop, [_rows(result.arrays[b.name], shape + b.shape, start, stop)
                                 for b in layout.blocks])
    sink.result()
    return sink.notes


def _rows(arr: Any, shape: tuple[int, ...], start: int, stop: int) -> Any:
    full = np.broadcast_to(np.asarray(arr), shape)
    return full[start:stop] if shape else full
