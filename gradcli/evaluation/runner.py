"""Blocked, multi-threaded execution of a Plan over a Binding, into preallocated outputs.

The batch is cut along its first axis into blocks of about ``block_size`` points (small
enough that a block's temporaries stay in cache) and the blocks run on a thread pool:
numpy releases the GIL inside its loops, so two cores really work in parallel. Each block
writes its slice of every output column, so memory stays bounded by the outputs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .allocator import keep_freed_memory
from .binding import Binding
from .kernels import Plan, compute_block, full_size_ops, hoist

# 2 MiB per float64 array: a block's temporaries stay in the L2/L3 caches, and each block
# holds enough numpy work that two threads rarely wait on the GIL (measured on W2, W3, W6:
# 2^18 beat 2^16 by 1.1-1.7x with two threads).
DEFAULT_BLOCK = 1 << 18


class Sink(Protocol):
    """Where result columns go: arrays in memory, or files written block by block."""

    def open(self, columns: list[str], shape: tuple[int, ...], dtype: np.dtype) -> None: ...

    def write(self, column: str, start: int, stop: int, block: Any) -> None: ...

    def result(self) -> dict[str, Any]: ...


class ArraySink:
    """Preallocated in-memory outputs; blocks broadcast straight into their slices."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._kept: set[int] = set()

    def open(self, columns: list[str], shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.arrays = {c: np.empty(shape, dtype=dtype) for c in columns}

    def write(self, column: str, start: int, stop: int, block: Any) -> None:
        target = self.arrays[column]
        if self._adoptable(target, block):
            self.arrays[column] = block  # the whole result, freshly made: keep, don't copy
            self._kept.add(id(block))
            return
        view = target[start:stop] if target.ndim else target[...]
        view[...] = 0.0 if block is None else block

    def _adoptable(self, target: np.ndarray, block: Any) -> bool:
        return (isinstance(block, np.ndarray) and block.shape == target.shape
                and block.dtype == target.dtype and block.base is None
                and block.flags.c_contiguous and block.flags.writeable
                and id(block) not in self._kept)

    def result(self) -> dict[str, Any]:
        return self.arrays


def _output_bound(plan: Plan, binding: Binding) -> bool:
    """True when every full-size array of a block is an output (sin(x)*cos(y)): one block
    over the whole grid then allocates nothing but the outputs, which it keeps uncopied.

    Only for grids of two or more sampled axes, where work on the other axes stays small;
    on a point set or a 1-D grid every operation is full-size.
    """
    shape = binding.batch_shape
    if binding.kind != "grid" or len(binding.axes) < 2 or plan.what == "hessian":
        return False
    rows = min(2, shape[0])
    size = rows * int(np.prod(shape[1:], dtype=np.int64))
    return full_size_ops(plan, binding.block(0, rows), size) <= len(plan.outputs)


class Cancelled(Exception):
    """Raised inside workers once the run has been interrupted."""


def default_threads() -> int:
    """One worker per available core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def blocks_for(shape: tuple[int, ...], block_size: int) -> list[tuple[int, int]]:
    """Row ranges along the first axis, each about ``block_size`` points."""
    if not shape:
        return [(0, 1)]
    rows = shape[0]
    per_row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    step = max(1, block_size // max(per_row, 1))
    return [(r, min(r + step, rows)) for r in range(0, rows, step)]


def run(plan: Plan, binding: Binding, sink: Sink, *, dtype: np.dtype,
        threads: int | None = None, block_size: int | None = None,
        progress: Callable[[int, int], None] | None = None) -> None:
    """Evaluate every block and write it into ``sink``.

    Array sinks are written by the workers themselves (disjoint slices); a sink marked
    ``sequential`` (a file stream) gets the blocks in order from this thread, with a
    bounded number of blocks in flight so memory stays bounded too.
    """
    shape = binding.batch_shape
    columns = plan.columns()
    blocks = blocks_for(shape, block_size or DEFAULT_BLOCK)
    if len(blocks) > 1 and isinstance(sink, ArraySink) and _output_bound(plan, binding):
        blocks = [(0, shape[0])]
    if len(blocks) > 1:  # block temporaries are reused: keep them off the page-fault path
        keep_freed_memory()
    stop = threading.Event()
    sequential = getattr(sink, "sequential", False)
    # the variables' own arrays (for points, the caller's: f = x returns x) reach sinks as
    # views, so no sink can keep one as a result
    inputs = {id(c) for comps in binding.components.values() for c in comps}
    try:
        sink.open(columns, shape, dtype)
        shared = None
        if binding.kind == "grid" and binding.axes and len(blocks) > 1:
            shared = hoist(plan, binding.components, binding.axes[0])

        def compute(bounds: tuple[int, int]) -> dict[str, Any]:
            if stop.is_set():
                raise Cancelled
            start, end = bounds
            values = compute_block(plan, binding.block(start, end), shared)
            block_shape = (end - start,) + shape[1:] if shape else ()
            out = {}
            for col in columns:
                v = values.get(col)
                if v is None or (isinstance(v, np.ndarray) and v.shape == block_shape
                                 and v.dtype == dtype and id(v) not in inputs):
                    out[col] = v  # already the block's own array: a sink may keep it
                else:
                    out[col] = np.broadcast_to(np.asarray(v, dtype=dtype), block_shape)
            return out

        def emit(bounds: tuple[int, int], values: dict[str, Any]) -> None:
            for col in columns:
                sink.write(col, bounds[0], bounds[1], values[col])

        def work(bounds: tuple[int, int]) -> None:
            emit(bounds, compute(bounds))

        n_threads = min(threads or default_threads(), len(blocks))
        if n_threads <= 1:
            for i, b in enumerate(blocks):
                work(b)
                if progress:
                    progress(i + 1, len(blocks))
        elif sequential:
            _run_ordered(blocks, compute, emit, n_threads, progress)
        else:
            _run_pool(blocks, work, n_threads, progress)
    except BaseException:
        stop.set()
        abort = getattr(sink, "abort", None)
        if abort is not None:
            abort()
        raise


def _run_pool(blocks: list[tuple[int, int]], work: Callable[[tuple[int, int]], None],
              n_threads: int, progress: Callable[[int, int], None] | None) -> None:
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="gradcli")
    try:
        pending = {pool.submit(work, b) for b in blocks}
        done_count = 0
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
            for fut in done:
                fut.result()  # re-raise a worker's error here
            done_count += len(done)
            if progress and done:
                progress(done_count, len(blocks))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_ordered(blocks: list[tuple[int, int]], compute: Callable[[tuple[int, int]], Any],
                 emit: Callable[[tuple[int, int], Any], None], n_threads: int,
                 progress: Callable[[int, int], None] | None) -> None:
    from concurrent.futures import ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="gradcli")
    window = 2 * n_threads
    try:
        queue = [pool.submit(compute, b) for b in blocks[:window]]
        for i, b in enumerate(blocks):
            fut = queue.pop(0)
            while True:  # wait in short steps so Ctrl-C is seen promptly
                done, _ = wait([fut], timeout=0.1)
                if done:
                    break
            emit(b, fut.result())
            if i + window < len(blocks):
                queue.append(pool.submit(compute, blocks[i + window]))
            if progress:
                progress(i + 1, len(blocks))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
