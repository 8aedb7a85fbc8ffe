"""Evaluate on a Dask cluster: one task per gradcli block, calling the same block kernel.

Pointwise derivatives need no halo, so the batch is cut into the local path's blocks
(``runner.blocks_for``) and each block is one task of ``block_task``, which computes it
with ``runner.block_values``, the computation every local thread runs. Results are
therefore the local path's bit for bit.

What travels to a worker is a ``Job``: the expression as text and the request's numbers
(grid specs, vector, direction, dtype), plus, for a point set, that block's points. The
worker parses and compiles the text itself with gradcli's own parser (once per process
for a grid) and the task functions are this module's, referenced by name: no closure of
user code is pickled and nothing is ever ``eval``-ed. Workers need ``pip install
'gradcli[dask]'`` and nothing else.

Where results go is the sink's business (``runner.Sink``): a sink with a ``writer`` (the
``.zarr`` store) has each worker write its own block to the store, so the client never
holds the grid; any other sink receives the blocks on the client as they finish, which
is allowed only when the results fit in the client's memory. ``lazy_result`` builds the
same tasks as a dask.array graph instead (``gradcli.evaluate(..., scheduler=...)``).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation.addresses import read_scheduler_file, scheduler_address
from gradcli.evaluation.runner import (
    DEFAULT_BLOCK,
    ArraySink,
    Sink,
    block_values,
    blocks_for,
    own_arrays,
)
from gradcli.plan.blocks import Result
from gradcli.request.binding import count_text
from gradcli.support.allocator import keep_freed_memory

__all__ = ["Job", "block_task", "write_task", "blocks_task", "run_on_cluster",
           "lazy_result", "RETRIES", "ClusterError", "scheduler_address", "quiet_dask",
           "dashboard_link", "read_scheduler_file"]

RETRIES = 2  # a task that raises is tried again (a dead worker's tasks are rerun anyway)
_WINDOW_PER_WORKER = 4  # point-set tasks in flight per worker (their points travel along)


@dataclass(frozen=True)
class Job:
    """A request as text and numbers: everything a worker needs to prepare it."""

    request: Any  # the Request, without its points (``Request.for_worker``)
    key: str      # the same text for the same request
    #: the class of the prepared request (``evaluator.Prepared``): ``.of(request)``
    #: prepares it again on a worker (pickled by name, so this module imports no evaluator)
    prepared_as: Any = None

    @property
    def expression(self) -> str:
        return self.request.expression

    @property
    def what(self) -> str:
        return self.request.what

    def prepare(self, points: Mapping[str, Any] | None = None) -> Any:
        """Parse, bind and compile on this process (grid, or ``points``)."""
        request = self.request if points is None else \
            self.request.replace(grid=None, points=points)
        return self.prepared_as.of(request)


def job_for(prepared: Any) -> Job:
    """The Job of a prepared request (the client side)."""
    request = prepared.request.for_worker()
    return Job(request, repr(request), type(prepared))


_GRIDS: OrderedDict[str, tuple[Any, Any, set[int], Any]] = OrderedDict()
_GRIDS_LOCK = threading.Lock()


def _grid_state(job: Job) -> tuple[Any, Any, set[int], Any]:
    """A worker's prepared grid and its hoisted shared work, made once per process."""
    with _GRIDS_LOCK:
        if job.key in _GRIDS:
            _GRIDS.move_to_end(job.key)
            return _GRIDS[job.key]
        from gradcli.plan.kernels import hoist

        prepared = job.prepare()
        binding = prepared.binding
        shared = hoist(prepared.plan, binding.values, binding.axes[0]) \
            if binding.axes else None
        state = (prepared, shared, own_arrays(binding), prepared.layout)
        _GRIDS[job.key] = state
        while len(_GRIDS) > 4:
            _GRIDS.popitem(last=False)
        return state


def block_task(job: Job, start: int, stop: int,
               part: Mapping[str, Any] | None = None) -> list[Any]:
    """Rows ``start:stop`` of every result block (a Dask task). A grid's rows are cut
    from the grid; a point set's block arrives as ``part`` (its points)."""
    keep_freed_memory()  # as the local runner does: reused block temporaries stay mapped
    if part is None:
        prepared, shared, own, layout = _grid_state(job)
        return block_values(prepared.plan, prepared.binding, start, stop, shared,
                            prepared.dtype, own, layout)
    prepared = job.prepare(points=part)
    return block_values(prepared.plan, prepared.binding, 0, stop - start, None,
                        prepared.dtype, own_arrays(prepared.binding), prepared.layout)


def write_task(job: Job, start: int, stop: int, part: Mapping[str, Any] | None,
               writer: Any) -> int:
    """Compute a block and write it with ``writer`` (the store's ChunkWriter); return how
    many values written were nan or inf."""
    return int(writer.write(start, stop, block_task(job, start, stop, part)))


def blocks_task(job: Job, start: int, stop: int, part: Mapping[str, Any] | None,
                layout: Any, rows: tuple[int, ...]) -> dict[str, np.ndarray]:
    """A block's rows as one array per result block (for the lazy dask.array graph)."""
    prepared = job.prepare(points=part) if part is not None else _grid_state(job)[0]
    sink = ArraySink()
    sink.open(layout, rows, prepared.dtype, Result(layout.subset([]), {}, rows))
    sink.write(0, stop - start, block_task(job, start, stop, part))
    return sink.arrays


def _part(prepared: Any, start: int, stop: int) -> dict[str, np.ndarray] | None:
    """A point set's rows ``start:stop`` as ``points=`` arrays; None for a grid."""
    binding = prepared.binding
    if binding.kind == "grid":
        return None
    n = stop - start
    values = binding.block(start, stop)
    held = prepared.request.fixed or {}  # travel in the Job, not with each block
    return {name: np.broadcast_to(values[name], (n,) + binding.shapes[name]).copy()
            for name in binding.names if name not in held}


def physical_memory() -> int:
    """Bytes of memory on this machine."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 << 30


def _check_fits(prepared: Any) -> None:
    """Results gathered on the client must fit in half its memory."""
    columns = prepared.layout.size()
    need = prepared.binding.size * columns * prepared.dtype.itemsize
    limit = physical_memory() // 2
    if need > limit:
        raise EvaluationError(
            f"the results ({count_text(prepared.binding.size)} points x {columns} columns, "
            f"{need / 2**30:.3g} GiB) do not fit in half of this machine's memory "
            f"({limit / 2**30:.3g} GiB): with {ref('scheduler')}, write them to a Zarr store that "
            "every worker can reach: -o FILE.zarr (or an fsspec URL such as "
            "s3://bucket/field.zarr)")


def run_on_cluster(prepared: Any, sink: Sink, client: Any,
                   progress: Callable[[int, int], None] | None = None,
                   memory: Any = None) -> Result:
    """Run every block of ``prepared`` as a task on ``client``'s cluster into ``sink``;
    each task's block fits the memory budget ``memory`` on its worker."""
    from distributed import as_completed

    from gradcli.evaluation.runner import row_ranges
    from gradcli.plan.kernels import rows_per_block
    from gradcli.request.budget import memory_budget

    binding = prepared.binding
    shape = binding.batch_shape
    budgeted = getattr(sink, "budgeted", False)
    fixed = None if budgeted else getattr(sink, "block_size", None)
    if fixed:
        ranges = blocks_for(shape, fixed)
    else:
        rows = rows_per_block(prepared.plan, binding, memory_budget(memory), 1,
                              most_points=DEFAULT_BLOCK)
        ranges = row_ranges(shape, rows)
        if budgeted:
            sink.block_size = rows * (int(np.prod(shape[1:], dtype=np.int64)) if shape else 1)
    sink.open(prepared.layout, shape, prepared.dtype, prepared.inputs)
    writer = getattr(sink, "writer", None)
    if writer is None:
        _check_fits(prepared)
    job = job_for(prepared)
    token = _token()
    address = getattr(getattr(client, "scheduler", None), "address", None) or "the cluster"
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    window = len(ranges) if binding.kind == "grid" else _WINDOW_PER_WORKER * workers
    where: dict[str, int] = {}
    futures: list[Any] = []

    def submit(i: int) -> Any:
        start, stop = ranges[i]
        key = f"gradcli-{prepared.plan.what}-{token}-{i}"
        args = (job, start, stop, _part(prepared, start, stop))
        fut = (client.submit(write_task, *args, writer, key=key, retries=RETRIES, pure=False)
               if writer is not None else
               client.submit(block_task, *args, key=key, retries=RETRIES, pure=False))
        where[fut.key] = i
        futures.append(fut)
        return fut

    try:
        queue = as_completed([submit(i) for i in range(min(window, len(ranges)))])
        following, done, next_row = len(futures), 0, 0
        waiting: dict[int, Any] = {}  # a sequential sink's blocks that came early
        for fut in queue:
            i = where.pop(fut.key)
            value = fut.result()
            fut.release()
            if writer is not None:
                sink.add_nonfinite(value)  # type: ignore[attr-defined]
            elif getattr(sink, "sequential", False):
                waiting[i] = value
                while next_row in waiting:
                    sink.write(*ranges[next_row], waiting.pop(next_row))
                    next_row += 1
            else:
                sink.write(*ranges[i], value)
            done += 1
            if following < len(ranges):
                queue.add(submit(following))
                following += 1
            if progress:
                progress(done, len(ranges))
        return sink.result()
    except BaseException as err:
        # Stop the tasks and wait for those already running before removing anything:
        # a task that finished after the cleanup would write its chunks back.
        prefix = f"gradcli-{prepared.plan.what}-{token}-"
        try:
            _cancel_and_wait(client, futures, prefix)
        except KeyboardInterrupt:  # asked again: clean up now
            pass
        abort = getattr(sink, "abort", None)
        if abort is not None:
            abort()
        if isinstance(err, Exception) and not isinstance(err, EvaluationError) and \
                _is_dask_failure(err):
            raise ClusterError(_lost_message(client, address, err)) from None
        raise


class ClusterError(Exception):
    """The cluster failed during a run (its scheduler went away, a task was lost): a
    runtime failure, not bad input."""


#: how long an interrupted run waits for its running tasks before cleaning up
CANCEL_WAIT = 30.0


def _running_keys(prefix: str, dask_worker: Any = None) -> list[str]:
    """The keys starting with ``prefix`` a worker is executing (run on each worker):
    a cancelled task keeps running in its thread until its function returns."""
    state = getattr(dask_worker, "state", None)
    tasks = list(getattr(state, "executing", ())) + list(getattr(state, "long_running", ()))
    return [str(ts.key) for ts in tasks if str(ts.key).startswith(prefix)]


def _cancel_and_wait(client: Any, futures: list[Any], prefix: str,
                     wait: float = CANCEL_WAIT) -> None:
    """Cancel ``futures`` and wait (at most ``wait`` seconds) until no worker runs one of
    them; a lost scheduler ends the wait at once (its workers' tasks find their store
    gone and write nothing: ``ChunkWriter.write``)."""
    import time

    try:
        client.cancel(futures, force=True)
    except Exception:  # noqa: BLE001 - the scheduler is gone: nothing to cancel
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            running = client.run(_running_keys, prefix, on_error="ignore")
        except Exception:  # noqa: BLE001
            return
        if not any(running.values()):
            return
        time.sleep(0.05)


def _is_dask_failure(err: BaseException) -> bool:
    """An error raised by distributed itself (a lost scheduler or worker, a cancelled
    or lost future), as opposed to one of gradcli's, raised inside a task."""
    from gradcli.errors import OutputError

    if isinstance(err, (OutputError, MemoryError)):
        return False
    module = type(err).__module__
    return module.startswith(("distributed", "tornado", "asyncio", "concurrent")) or \
        isinstance(err, (OSError, TimeoutError))


def _lost_message(client: Any, address: str, err: BaseException) -> str:
    status = getattr(client, "status", "")
    if status in ("closed", "closing", "connecting") or "CommClosed" in type(err).__name__:
        return (f"the Dask scheduler at {address} went away during the run; nothing was "
                "written")
    text = str(err).splitlines()[0] if str(err) else ""
    return (f"the Dask cluster at {address} failed during the run "
            f"({type(err).__name__}{': ' + text if text else ''}); nothing was written")


def _token() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


def lazy_result(prepared: Any) -> Result:
    """The result as dask arrays (the inputs stay numpy): the same blocks, names and
    shapes as the local path, computed by the tasks of ``blocks_task`` when asked."""
    import dask
    import dask.array as da

    binding, layout = prepared.binding, prepared.layout
    shape = binding.batch_shape
    job, token = job_for(prepared), _token()
    arrays: dict[str, list[Any]] = {b.name: [] for b in layout.blocks}
    for i, (start, stop) in enumerate(blocks_for(shape, DEFAULT_BLOCK)):
        rows = (stop - start,) + shape[1:] if shape else ()
        task = dask.delayed(blocks_task, pure=True)(
            job, start, stop, _part(prepared, start, stop), layout, rows,
            dask_key_name=f"gradcli-{prepared.plan.what}-{token}-{i}")
        for block in layout.blocks:
            arrays[block.name].append(da.from_delayed(task[block.name], rows + block.shape,
                                                      dtype=prepared.dtype))
    lazy = {name: (parts[0] if not shape else da.concatenate(parts, axis=0))
            for name, parts in arrays.items()}
    inputs = prepared.inputs
    from gradcli.plan.blocks import Layout

    return Result(Layout.concat(inputs.layout, layout), {**inputs.arrays, **lazy},
                  inputs.batch_shape)


# --- connecting --------------------------------------------------------------------------

DEFAULT_TIMEOUT = 10.0
_KEPT: dict[str, Any] = {}  # clients kept for lazy results, by scheduler; closed at exit
_CLOSERS: list[Callable[[], None]] = []


def parse_local(spec: str) -> int | None:
    """``local`` -> the number of cores, ``local:N`` -> N; None for an address."""
    if spec != "local" and not spec.startswith("local:"):
        return None
    count = spec.partition(":")[2]
    if not count:
        from gradcli.support.threads import default_threads

        return default_threads()
    if not count.isdigit() or not 1 <= int(count) <= 1024:
        raise EvaluationError(f"{ref('scheduler', text=repr(spec))}: local:N needs a number "
                              "of worker "
                              "processes from 1 to 1024, e.g. local:2")
    most, why = local_worker_limit()
    if int(count) > most:
        raise EvaluationError(f"scheduler '{spec}': this machine can run at most {most} "
                              f"local worker{'s' if most != 1 else ''} ({why}); use "
                              f"local:{most} or fewer, or a scheduler's address")
    return int(count)


#: the memory a local worker process takes before any work (interpreter, numpy, Dask)
WORKER_MEMORY = 256 << 20


def local_worker_limit() -> tuple[int, str]:
    """The most local worker processes worth starting, and why: one per usable core (more
    only wait for a core, each with its own interpreter's memory; two on a one-core
    machine, so a cluster can be tried anywhere), and no more than the free memory holds
    at :data:`WORKER_MEMORY` each."""
    from gradcli.support.threads import default_threads

    cores = max(2, default_threads())
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        free = None
    by_memory = max(1, free // WORKER_MEMORY) if free else cores
    if by_memory < cores:
        return by_memory, f"{free / (1 << 30):.1f} GiB free, {WORKER_MEMORY >> 20} MiB each"
    return cores, f"{default_threads()} usable core{'s' if default_threads() != 1 else ''}"


def connect(scheduler: Any, timeout: float = DEFAULT_TIMEOUT) -> tuple[Any, Callable[[], None]]:
    """A ``distributed.Client`` for ``scheduler`` (an address such as
    ``tcp://host:8786``, ``local[:N]`` for a LocalCluster of N worker processes, or a
    Client) and the function that closes what was started here."""
    from gradcli.evaluation.extras import require

    require("dask")
    import time

    from distributed import Client, LocalCluster

    if not isinstance(scheduler, str):
        return scheduler, lambda: None
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise EvaluationError(f"the scheduler timeout must be a number of seconds > 0, "
                              f"got {timeout}")
    workers = parse_local(scheduler)
    if workers is not None:
        # one thread per worker process: each task is one block on one core, as locally;
        # the HTTP server on a free port, so a second cluster never warns about 8787
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=_silence_level())
        client = Client(cluster, timeout=timeout)

        def close_local() -> None:
            client.close()
            cluster.close()

        return client, close_local
    _check_scheme(scheduler)
    started = time.monotonic()
    client = _start_client(Client, scheduler, timeout)
    try:  # the whole start, workers included, within the one timeout
        _check_workers(client, scheduler, max(0.1, timeout - (time.monotonic() - started)))
    except BaseException:
        _close(client)
        raise
    return client, lambda: _close(client)


_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")


def _check_scheme(address: str) -> None:
    """A clear refusal for an address this process cannot use (before any connection)."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        return  # host:port: distributed reads it as tcp://
    if scheme not in _SCHEMES:
        raise EvaluationError(f"the scheduler address '{address}' has an unknown scheme "
                              f"'{scheme}': a Dask scheduler's address is tcp://HOST:PORT "
                              "(or tls://, ws://, wss://), or local:N")
    if scheme == "inproc" and not _inproc_here(rest):
        raise EvaluationError(f"the scheduler address '{address}' is an inproc:// address, "
                              "which exists only inside the Python process that made the "
                              "scheduler: from that process pass its distributed.Client as "
                              "scheduler=, otherwise use the scheduler's tcp:// address")
    if scheme == "ucx":
        import importlib.util

        if importlib.util.find_spec("distributed_ucxx") is None:
            raise EvaluationError(f"the scheduler address '{address}' needs UCX "
                                  "(pip install distributed-ucxx), which is not installed: "
                                  "use the scheduler's tcp:// address")
    if scheme == "tls":
        import dask.config

        if not dask.config.get("distributed.comm.tls.ca-file", None):
            raise EvaluationError(f"the scheduler address '{address}' needs Dask's TLS "
                                  "configuration (distributed.comm.tls.ca-file, "
                                  ".client.cert and .client.key), which is not set")


def _inproc_here(address: str) -> bool:
    """Whether an in-process scheduler listens at ``inproc://address`` in this process."""
    try:
        from distributed.comm.inproc import global_manager

        return global_manager.get_listener_for(address) is not None
    except Exception:  # noqa: BLE001 - a malformed address: not here
        return False


def _start_client(client_class: Any, address: str, timeout: float) -> Any:
    """``Client(address)`` within ``timeout`` seconds in all: a server that accepts the
    connection and never answers as a scheduler (an HTTP server, a silent listener) would
    otherwise hold the handshake for ever. The attempt runs in a daemon thread; one that
    outlives the timeout closes its client if it ever gets one."""
    outcome: dict[str, Any] = {}
    abandoned = threading.Event()

    def attempt() -> None:
        try:
            client = client_class(address, timeout=timeout)
        except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = err
            return
        outcome["client"] = client
        if abandoned.is_set():
            _close(client)

    thread = threading.Thread(target=attempt, name="gradcli-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive() or not outcome:
        abandoned.set()
        if "client" in outcome:
            _close(outcome["client"])
        raise EvaluationError(f"cannot reach the Dask scheduler at {address} within "
                              f"{timeout:g} s (the scheduler timeout): nothing there answered "
                              "as a Dask scheduler")
    err = outcome.get("error")
    if err is None:
        return outcome["client"]
    first = str(err).splitlines()[0] if str(err) else type(err).__name__
    if address.startswith(("ws://", "wss://")) and not isinstance(err, TimeoutError):
        # tornado's "Non-websocket response" (or "HTTP 404: Not Found") names its own
        # exception, not what answered: ask the server once more, as plain HTTP
        found = _http_answer(address, timeout)
        if found:
            raise EvaluationError(f"cannot connect to the Dask scheduler at {address}: "
                                  f"{found} answered there, not a Dask scheduler's "
                                  "WebSocket endpoint") from None
    if isinstance(err, (OSError, TimeoutError)):
        raise EvaluationError(f"cannot reach the Dask scheduler at {address} within "
                              f"{timeout:g} s (the scheduler timeout): {first}") from None
    if isinstance(err, Exception):
        raise EvaluationError(f"cannot connect to the Dask scheduler at {address}: "
                              f"{type(err).__name__}: {first}") from None
    raise err


def _http_answer(address: str, timeout: float) -> str | None:
    """What a ``ws://``/``wss://`` address answers to a plain HTTP GET of its path, said
    in a few words: ``an HTTP server (SimpleHTTP/0.6 Python/3.12.3) with "200 OK"``;
    None when nothing answers as HTTP. Only the status line and the Server header are
    read (at most 64 KiB of headers), within ``timeout`` seconds."""
    import http.client
    import ssl
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
        if not host:
            return None
        if parts.scheme == "wss":
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            conn: Any = http.client.HTTPSConnection(host, port, timeout=min(timeout, 5.0),
                                                    context=context)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=min(timeout, 5.0))
        try:
            conn.request("GET", parts.path or "/", headers={"Connection": "close"})
            response = conn.getresponse()
            status, reason = response.status, response.reason
            server = response.getheader("Server")
        finally:
            conn.close()
    except (OSError, http.client.HTTPException, ValueError):
        return None
    shown = _CONTROL.sub("?", f"{status} {reason}".strip())[:80]
    who = f" ({_CONTROL.sub('?', server)[:80]})" if server else ""
    return f'an HTTP server{who} with "{shown}"'


#: control characters a server could put in its status line or Server header
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _close(client: Any) -> None:
    """Close a client without waiting long for a scheduler that may be gone."""
    try:
        client.close(timeout=2)
    except Exception:  # noqa: BLE001 - the scheduler is gone: nothing more to close
        pass


def _silence_level() -> int:
    import logging

    return logging.CRITICAL + 10


def quiet_dask() -> None:
    """Keep Dask's own log lines and warnings off stderr (the CLI's stderr is gradcli's:
    a failure of the cluster is reported as one line by gradcli instead)."""
    import logging
    import warnings

    try:
        import distributed  # noqa: F401 - its loggers and handlers exist from its import on
    except ImportError:  # connecting says which extra is missing
        return

    level = _silence_level()
    prefixes = ("distributed", "dask", "tornado", "bokeh")
    names = [n for n in list(logging.root.manager.loggerDict) if n.startswith(prefixes)]
    for name in {*prefixes, *names}:
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for handler in logger.handlers:
            handler.setLevel(level)  # a child logger made later still reaches these
    for module in prefixes:
        warnings.filterwarnings("ignore", module=module)


def dashboard_link(client: Any) -> str:
    """The cluster's dashboard address ('' when it has none)."""
    try:
        return str(client.dashboard_link or "")
    except Exception:  # noqa: BLE001 - no dashboard (bokeh missing, disabled)
        return ""


def worker_version() -> str:
    """gradcli's version on this process (run on every worker before any task)."""
    from gradcli._version import __version__

    return __version__


def _check_workers(client: Any, scheduler: str, timeout: float) -> None:
    """At least one worker, and every worker runs this gradcli: else a clear error now
    rather than tasks that wait forever or fail one by one."""
    from gradcli._version import __version__

    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError, ValueError):
        raise EvaluationError(f"the Dask scheduler at {scheduler} has no workers (waited "
                              f"{timeout:g} s): start some with 'dask worker {scheduler}'"
                              ) from None
    try:
        versions = client.run(worker_version)
    except Exception as err:  # noqa: BLE001 - a worker that cannot import gradcli
        raise EvaluationError(f"a worker of {scheduler} cannot run gradcli ({err}): pip "
                              "install 'gradcli[dask]' on every worker") from None
    other = {addr: v for addr, v in versions.items() if v != __version__}
    if other:
        addr, version = next(iter(other.items()))
        raise EvaluationError(f"worker {addr} runs gradcli {version}, this is "
                              f"{__version__}: install the same version everywhere")


def shared_client(scheduler: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """A client for lazy results, kept (and reused for the same ``scheduler``) until the
    interpreter exits: the results are computed after ``evaluate`` has returned."""
    if not isinstance(scheduler, str):
        return scheduler
    client = _KEPT.get(scheduler)
    if client is not None and client.status == "running":
        return client
    client, close = connect(scheduler, timeout)
    if not _KEPT:
        import atexit

        atexit.register(_close_kept)
    _KEPT[scheduler] = client
    _CLOSERS.append(close)
    return client


def _close_kept() -> None:
    for close in reversed(_CLOSERS):
        try:
            close()
        except Exception:  # noqa: BLE001 - the interpreter is exiting
            pass
