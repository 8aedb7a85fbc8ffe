"""The worker process: one computation at a time, ended by the server when it runs late.

Why a process: a formula can take as long as its user makes it (``sum`` over a huge
vector, a 10⁷-point grid within the limits), and Python cannot stop a thread in the middle
of a numpy call. Ending a process can; the server then starts a fresh worker from the
fork server, which already holds gradcli imported (``PRELOAD``), in a few milliseconds.

The worker applies the page's rules once, when it starts: no file is read (the
``--no-files`` policy), the working memory is the budget (``GRADCLI_MEMORY``), and its
address space is capped at the budget plus the fixed overhead, so a request that would
take more fails with MemoryError in the worker instead of swapping the machine. It ends
by itself when the server's process is gone.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from typing import Any

__all__ = ["serve", "PRELOAD"]

#: the modules the fork server imports once, so that each worker starts warm
PRELOAD = ["gradcli.cli.explore.compute", "gradcli.plot.data", "gradcli.lang.formula_printer",
           "gradcli.formulas.derivative_formulas",
           "gradcli.graph.nodes", "gradcli.api", "gradcli.cli.messages",
           "gradcli.cli.grid_option"]


def _watch(server_pid: int) -> None:
    """End this process when the server's is gone (it was killed: nothing reads our
    answers, and no computation may be left running)."""
    while True:
        time.sleep(0.5)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # pragma: no cover - the pid was reused by another user
            os._exit(0)


def _cap_memory(budget: int) -> None:
    """Cap the data segment (the heap and anonymous mappings: numpy's arrays) at what the
    process holds now plus the budget and the fixed overhead (``budget.FIXED_OVERHEAD``)."""
    import resource

    from gradcli.request.budget import FIXED_OVERHEAD

    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            data = next(int(line.split()[1]) * 1024 for line in handle
                        if line.startswith("VmData:"))
    except (OSError, StopIteration, ValueError):
        return
    limit = data + budget + FIXED_OVERHEAD
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - not permitted here: the budget
        pass                       # checks still refuse what is known to be too big


def serve(connection: Any, server_pid: int, memory: int, cap: bool = True) -> None:
    """Answer requests from ``connection`` until it closes: each a (kind, payload) pair,
    each answer (status, JSON bytes)."""
    from gradcli.cli.explore.compute import handle
    from gradcli.cli.files import allow_files
    from gradcli.request.budget import ENV

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    os.environ[ENV] = str(memory)
    os.environ["GRADCLI_NO_FILES"] = "1"
    allow_files(False)
    threading.Thread(target=_watch, args=(server_pid,), daemon=True).start()
    if cap:
        _cap_memory(memory)
    while True:
        try:
            kind, payload = connection.recv()
        except (EOFError, OSError):
            return
        try:
            status, body = handle(kind, payload)
        except MemoryError:
            status, body = 400, {"error": "gradcli: error: out of memory: use fewer grid "
                                 "points (a smaller resolution) or a larger --memory",
                                 "kind": "memory"}
        try:
            text = json.dumps(body, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False).encode("utf-8")
        except ValueError as exc:  # a non-finite number left unconverted: a bug, said so
            status, text = 500, json.dumps({"error": f"gradcli: internal error: {exc}",
                                            "kind": "internal"}).encode("utf-8")
        try:
            connection.send((status, text))
        except (EOFError, OSError):
            return
