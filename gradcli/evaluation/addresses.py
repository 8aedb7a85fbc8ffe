"""Which Dask scheduler a run uses, from the conventions Dask users already follow.

Kept apart from ``cluster`` so that deciding "no cluster" (the common case) costs a few
dictionary look-ups and no import of the cluster machinery or of dask.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gradcli.errors import EvaluationError

__all__ = ["scheduler_address", "read_scheduler_file"]


def scheduler_address(given: str | None, scheduler_file: str | None,
                      environ: Mapping[str, str]) -> str | None:
    """Which scheduler to use, first found: ``given``; the address in ``scheduler_file``;
    ``GRADCLI_SCHEDULER``; Dask's own ``scheduler-address`` setting
    (``DASK_SCHEDULER_ADDRESS`` or a Dask configuration file), read as ``distributed``
    reads it. None: compute in this process."""
    if given:
        return given
    if scheduler_file:
        return read_scheduler_file(scheduler_file)
    if environ.get("GRADCLI_SCHEDULER"):
        return environ["GRADCLI_SCHEDULER"]
    if environ.get("DASK_SCHEDULER_ADDRESS"):
        return environ["DASK_SCHEDULER_ADDRESS"]
    if _dask_configured(environ):
        try:
            import dask.config
        except ImportError:
            return None
        address = dask.config.get("scheduler-address", None)
        return str(address) if address else None
    return None


def _dask_configured(environ: Mapping[str, str]) -> bool:
    """Whether Dask could hold a setting (a configuration file or a DASK_ variable):
    looked up without importing dask, which a plain local run never needs."""
    import sys

    if any(k.startswith("DASK_") for k in environ):
        return True
    places = [os.path.join(os.path.expanduser("~"), ".config", "dask"), "/etc/dask",
              os.path.join(sys.prefix, "etc", "dask")]
    return any(os.path.isdir(p) and os.listdir(p) for p in places)


_SCHEDULER_FILE_LIMIT = 1 << 20


def read_scheduler_file(path: str) -> str:
    """The scheduler's address from a scheduler file (JSON with an ``address``, as
    Dask's scheduler writes it when asked to, as dask-jobqueue and dask-mpi do)."""
    import json

    try:
        with open(path, "rb") as fh:
            data = fh.read(_SCHEDULER_FILE_LIMIT + 1)
    except OSError as err:
        raise EvaluationError(f"cannot read the scheduler file '{path}': "
                              f"{err.strerror or err}") from None
    if len(data) > _SCHEDULER_FILE_LIMIT:
        raise EvaluationError(f"the scheduler file '{path}' is over 1 MiB: not a scheduler "
                              "file")
    try:
        info = json.loads(data)
    except ValueError:
        raise EvaluationError(f"the scheduler file '{path}' is not JSON: not a scheduler "
                              "file") from None
    address = info.get("address") if isinstance(info, dict) else None
    if not isinstance(address, str) or not address:
        raise EvaluationError(f"the scheduler file '{path}' has no \"address\": not a "
                              "scheduler file")
    return address
