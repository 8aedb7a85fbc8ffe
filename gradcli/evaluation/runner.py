"""Blocked, multi-threaded execution of a Plan over a Binding, into a sink.

The batch is cut along its first axis into row ranges of about ``block_size`` points (small
enough that their temporaries stay in cache) and the ranges run on a thread pool: numpy
releases the GIL inside its loops, so two cores really work in parallel. Each range writes
its rows of every result block (``blocks.py``) into the sink, so memory stays bounded by
the outputs. The pools themselves are ``support/threads.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any, Protocol

import numpy as np

from gradcli.plan.assemble import input_result, result_layout
from gradcli.plan.blocks import Layout, Result
from gradcli.plan.kernels import Plan, compute_block, full_size_ops, hoist, rows_per_block
from gradcli.request.binding import Binding
from gradcli.request.budget import memory_budget
from gradcli.support.allocator import keep_freed_memory
from gradcli.support.threads import default_threads, ordered_map, run_pool

# 2 MiB per float64 array: a block's temporaries stay in the L2/L3 caches, and each block
# holds enough numpy work that two threads rarely wait on the GIL (measured on W2, W3, W6:
# 2^18 beat 2^16 by 1.1-1.7x with two threads).
DEFAULT_BLOCK = 1 << 18


class Sink(Protocol):
    """Where result blocks go: arrays in memory, or files written block by block.

    ``open`` gets the result layout (its blocks, and the order of their scalar columns),
    the batch shape, the dtype, and the inputs (carried text columns and the variables'
    own blocks, already complete). ``write`` gets rows ``start:stop`` of the batch's first
    axis: ``values[i]`` is block i of the layout, an array of the rows' batch shape followed
    by the block's component shape, or None for an identically zero block. ``result``
    returns the inputs and whatever results the sink keeps in memory. A sink with
    ``sequential = True`` gets the row ranges in order from one thread; others are written
    by the workers concurrently.
    """

    def open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
             inputs: Result) -> None: ...

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None: ...

    def result(self) -> Result: ...


class ArraySink:
    """Preallocated in-memory outputs; blocks broadcast straight into their slices."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._kept: set[int] = set()
        self._layout = Layout([])
        self._inputs: Result | None = None
        self._batched = True

    def open(self, layout: Layout, shape: tuple[int, ...], dtype: np.dtype,
             inputs: Result) -> None:
        self._layout, self._inputs = layout, inputs
        self._batched = bool(shape)
        self.arrays = {b.name: np.empty(shape + b.shape, dtype=dtype) for b in layout.blocks}

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        for block, value in zip(self._layout.blocks, values, strict=True):
            target = self.arrays[block.name]
            if self._adoptable(target, value):
                self.arrays[block.name] = value  # the whole result, freshly made: keep it
                self._kept.add(id(value))
                continue
            view = target[start:stop] if self._batched else target[...]
            view[...] = 0.0 if value is None else value

    def _adoptable(self, target: np.ndarray, block: Any) -> bool:
        return (isinstance(block, np.ndarray) and block.shape == target.shape
                and block.dtype == target.dtype and block.base is None
                and block.flags.c_contiguous and block.flags.writeable
                and id(block) not in self._kept)

    def result(self) -> Result:
        """The inputs' blocks, then the computed ones."""
        inputs = self._inputs
        if inputs is None:
            return Result(self._layout, self.arrays, ())
        return Result(Layout.concat(inputs.layout, self._layout),
                      {**inputs.arrays, **self.arrays}, inputs.batch_shape)


def _output_bound(plan: Plan, binding: Binding) -> bool:
    """True when every full-size array of a block is an output (sin(x)*cos(y)): one block
    over the whole grid then allocates nothing but the outputs, which it keeps uncopied.

    Only for grids of two or more sampled axes, where work on the other axes stays small;
    on a point set or a 1-D grid every operation is full-size.
    """
    shape = binding.batch_shape
    if binding.kind != "grid" or len(binding.axes) < 2 or plan.computation.blocked:
        return False
    rows = min(2, shape[0])
    size = rows * int(np.prod(shape[1:], dtype=np.int64))
    return full_size_ops(plan, binding.block(0, rows), size) <= len(plan.outputs)


class Cancelled(Exception):
    """Raised inside workers once the run has been interrupted."""


def blocks_for(shape: tuple[int, ...], block_size: int) -> list[tuple[int, int]]:
    """Row ranges along the first axis, each about ``block_size`` points."""
    if not shape:
        return [(0, 1)]
    rows = shape[0]
    per_row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    step = max(1, block_size // max(per_row, 1))
    return [(r, min(r + step, rows)) for r in range(0, rows, step)]


def row_ranges(shape: tuple[int, ...], rows: int) -> list[tuple[int, int]]:
    """Ranges of ``rows`` rows along the first axis (one range for no batch)."""
    if not shape:
        return [(0, 1)]
    return [(r, min(r + rows, shape[0])) for r in range(0, shape[0], max(1, rows))]


def own_arrays(binding: Binding) -> set[int]:
    """The ids of the variables' own arrays: for points, the caller's (f = x returns x),
    so they reach sinks as views and no sink can keep one as a result."""
    return {id(v) for v in binding.values.values()}


def block_values(plan: Plan, binding: Binding, start: int, end: int, shared: Any,
                 dtype: np.dtype, own: set[int], layout: Layout | None = None) -> list[Any]:
    """Rows ``start:end`` of every result block (``plan.blocks()`` order): the block
    kernel's arrays at the rows' batch shape followed by the block's component shape, or
    None for an identically zero block. The one computation of a block, on a thread here
    or on a Dask worker."""
    shape = binding.batch_shape
    values = compute_block(plan, binding.block(start, end), shared)
    rows = (end - start,) + shape[1:] if shape else ()
    out = []
    for block, v in zip((layout or result_layout(plan)).blocks, values, strict=True):
        full = rows + block.shape
        if v is None or (isinstance(v, np.ndarray) and v.shape == full
                         and v.dtype == dtype and id(v) not in own):
            out.append(v)  # already the block's own array: a sink may keep it
        else:
            out.append(np.broadcast_to(np.asarray(v, dtype=dtype), full))
    return out


def column_reader(layout: Layout, values: Sequence[Any]) -> Callable[[int], Any]:
    """For writers that think in scalar columns (a CF variable is a set of them):
    ``column(i)`` is scalar column i of the layout, a view into its block's values (None
    for an identically zero block)."""
    order = layout.scalar_order()

    def column(i: int) -> Any:
        b, k = order[i]
        v = values[b]
        shape = layout.blocks[b].shape
        if v is None or not shape:
            return v
        return np.asarray(v)[(Ellipsis, *np.unravel_index(k, shape))]

    return column


def run(plan: Plan, binding: Binding, sink: Sink, *, dtype: np.dtype,
        threads: int | None = None, block_size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        layout: Layout | None = None, inputs: Result | None = None,
        memory: Any = None) -> None:
    """Evaluate every block of rows and write it into ``sink``.

    ``layout`` groups the plan's columns into blocks (default: ``result_layout``);
    ``inputs`` are the blocks handed to the sink as they are (default: the variables').
    Array sinks are written by the workers themselves (disjoint slices); a sink marked
    ``sequential`` (a file stream) gets the rows in order from this thread, with a
    bounded number of row ranges in flight so memory stays bounded too. ``memory`` is the
    budget (``budget.memory_budget``) the blocks' rows are chosen for, unless
    ``block_size`` (points per block) or the sink fixes them.
    """
    shape = binding.batch_shape
    layout = layout or result_layout(plan)
    # a sink may fix the block size: a Zarr store's chunks are the blocks' rows, so every
    # block must fill whole chunks
    sequential = getattr(sink, "sequential", False)
    wanted = threads or default_threads()
    budget = memory_budget(memory)
    budgeted = getattr(sink, "budgeted", False)  # a sink whose chunks follow the blocks
    fixed = block_size or (None if budgeted else getattr(sink, "block_size", None))
    if fixed:
        ranges = blocks_for(shape, fixed)
    else:
        kept = binding.size * sum(b.size for b in layout.blocks) * np.dtype(dtype).itemsize \
            if isinstance(sink, ArraySink) else 0
        rows = rows_per_block(plan, binding, budget, wanted,
                              window=2 * wanted if sequential else 0, kept=kept,
                              most_points=DEFAULT_BLOCK)
        ranges = row_ranges(shape, rows)
        if budgeted:
            sink.block_size = rows * (int(np.prod(shape[1:], dtype=np.int64)) if shape else 1)
    if len(ranges) > 1 and isinstance(sink, ArraySink) and _output_bound(plan, binding):
        ranges = [(0, shape[0])]
    if len(ranges) > 1:  # block temporaries are reused: keep them off the page-fault path
        keep_freed_memory()
    stop = threading.Event()
    own = own_arrays(binding)
    try:
        sink.open(layout, shape, dtype, inputs or input_result(binding))
        if _by_rows(plan, binding, sink, dtype, budget):
            _hessian_by_rows(plan, binding, sink, dtype, budget, progress)
            return
        shared = None
        if binding.kind == "grid" and binding.axes and len(ranges) > 1:
            shared = hoist(plan, binding.values, binding.axes[0])

        def compute(bounds: tuple[int, int]) -> list[Any]:
            if stop.is_set():
                raise Cancelled
            return block_values(plan, binding, bounds[0], bounds[1], shared, dtype, own,
                                layout)

        def emit(bounds: tuple[int, int], values: list[Any]) -> None:
            sink.write(bounds[0], bounds[1], values)

        def work(bounds: tuple[int, int]) -> None:
            emit(bounds, compute(bounds))

        n_threads = min(wanted, len(ranges))
        if n_threads <= 1:
            for i, b in enumerate(ranges):
                work(b)
                if progress:
                    progress(i + 1, len(ranges))
        elif sequential:
            with closing(ordered_map(compute, ranges, n_threads)) as results:
                for i, (b, values) in enumerate(zip(ranges, results, strict=True)):
                    emit(b, values)
                    if progress:
                        progress(i + 1, len(ranges))
        else:
            run_pool(ranges, work, n_threads, progress)
    except BaseException:
        stop.set()
        abort = getattr(sink, "abort", None)
        if abort is not None:
            abort()
        raise


def _by_rows(plan: Plan, binding: Binding, sink: Sink, dtype: np.dtype, budget: int) -> bool:
    """Whether to compute a one-point Hessian row by row into the sink (a computation
    whose record ``streams``): its result is more than a quarter of the budget and the
    sink takes pieces of a block."""
    if not plan.computation.streams or binding.size != 1 or not getattr(sink, "parts", False):
        return False
    n = sum(int(np.prod(s, dtype=np.int64)) for _, s in plan.targets)
    return n * n * np.dtype(dtype).itemsize > budget // 4


def _hessian_by_rows(plan: Plan, binding: Binding, sink: Any, dtype: np.dtype, budget: int,
                     progress: Callable[[int, int], None] | None) -> None:
    """A one-point Hessian streamed by rows: for each target a, rows i0:i1 of every block
    (a, b), as many rows at a time as a quarter of the budget holds (a row's sweep and its
    copies take about as much again), written into the sink piece by piece."""
    from gradcli.plan.kernels import compute_block

    sizes = [int(np.prod(s, dtype=np.int64)) for _, s in plan.targets]
    shapes = [s for _, s in plan.targets]
    n, itemsize = len(sizes), np.dtype(dtype).itemsize
    per = max(1, int(budget // (4 * sum(sizes) * itemsize)))
    parts = [(a, i0, min(na, i0 + per)) for a, na in enumerate(sizes) for i0 in range(0, na, per)]
    lead = binding.batch_shape
    for done, (a, i0, i1) in enumerate(parts):
        values = compute_block(plan, binding.values, None, (a, i0, i1))
        if done == 0:
            sink.write_part(0, 0, np.broadcast_to(np.asarray(values[0], dtype=dtype), lead))
        for b in range(n):
            v = values[1 + b]
            full = lead + (i1 - i0,) + shapes[b]
            piece = np.zeros(full, dtype=dtype) if v is None else \
                np.broadcast_to(np.asarray(v, dtype=dtype), full)
            sink.write_part(1 + a * n + b, i0 * sizes[b], piece)
        if progress:
            progress(done + 1, len(parts))
