"""``.nc`` output: NetCDF-4 through xarray and h5netcdf, atomically.

The dataset is ``dataset.to_dataset``'s (the CF plan of ``cf.py``). No timestamps are
written anywhere (h5py does not record HDF5 object times unless asked), so the same
command writes the same bytes. nan and inf are stored as IEEE values: no ``_FillValue``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gradcli.errors import OutputError
from gradcli.evaluation.extras import require
from gradcli.evaluation.origin import Origin
from gradcli.output.atomic import atomic_path
from gradcli.output.dataset import to_dataset

__all__ = ["write_netcdf"]


def write_netcdf(path: str | os.PathLike[str], result: Mapping[str, Any],
                 origin: Origin | None = None, history: str = "") -> None:
    """Write ``result`` (a Result or a mapping of columns) to ``path`` as NetCDF-4."""
    require("nc")
    ds = to_dataset(result, origin, history)
    try:
        with atomic_path(path) as tmp:
            ds.to_netcdf(tmp, mode="w", engine="h5netcdf")
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
