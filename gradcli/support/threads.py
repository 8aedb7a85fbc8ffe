"""Thread pools for numpy work: numpy releases the GIL inside its loops, so threads use
every core without copying arrays between processes.

``run_pool`` runs independent blocks in any order (the evaluation runner); ``ordered_map``
brings results back in order with a bounded window (file streams, the CSV and JSON writers,
the points reader). Both wait in short steps so Ctrl-C is seen promptly, and shut their
pool down (cancelling what has not started) on any exit. Imports nothing from gradcli.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TypeVar

__all__ = ["default_threads", "ordered_map", "run_pool"]


def default_threads() -> int:
    """One worker per available core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def run_pool(blocks: list[tuple[int, int]], work: Callable[[tuple[int, int]], None],
             n_threads: int, progress: Callable[[int, int], None] | None) -> None:
    """Run ``work`` on every block on ``n_threads`` threads, in any order; the first
    error raised by a worker is raised here, and ``progress(done, total)`` is called as
    blocks finish."""
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


T = TypeVar("T")
R = TypeVar("R")


def ordered_map(fn: Callable[[T], R], items: Iterable[T], threads: int) -> Iterator[R]:
    """``map(fn, items)`` on a pool of ``threads`` threads, results in order.

    At most ``2 * threads`` items are in flight, so memory stays bounded by a few results
    however many items there are; waiting is done in short steps so Ctrl-C is seen
    promptly. With one thread, a plain ``map``.
    """
    if threads <= 1:
        yield from map(fn, items)
        return
    from concurrent.futures import ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gradcli")
    window = 2 * threads
    it = iter(items)
    try:
        queue = [pool.submit(fn, x) for x in islice(it, window)]
        while queue:
            fut = queue.pop(0)
            while not wait([fut], timeout=0.1)[0]:
                pass
            result = fut.result()
            nxt = next(it, _END)
            if nxt is not _END:
                queue.append(pool.submit(fn, nxt))  # type: ignore[arg-type]
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_END = object()
