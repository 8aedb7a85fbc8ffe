"""Optional dependencies: which extra a feature needs, checked before any work starts.

``.nc``, ``.zarr`` and ``.parquet`` need the ``data`` extra (xarray, h5netcdf, zarr,
pyarrow); a Dask scheduler needs the ``dask`` extra. A missing one is a usage error (exit 2)
that names the extra to install, raised before the evaluation so a long run never ends in
it.
"""

from __future__ import annotations

import importlib

from gradcli.errors import EvaluationError, ref

__all__ = ["MissingExtra", "NEEDS", "require"]

#: feature -> (how the user asked for it, extra, modules it imports)
NEEDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "nc": ("-o FILE.nc", "data", ("xarray", "h5netcdf")),
    "zarr": ("-o FILE.zarr", "data", ("zarr", "fsspec")),
    "parquet": ("-o FILE.parquet", "data", ("pyarrow",)),
    "xarray": ("gradcli.to_xarray", "data", ("xarray",)),
    "pandas": ("to_pandas()", "data", ("pandas",)),
    "dask": (ref("scheduler"), "dask", ("dask.array", "distributed")),
}


class MissingExtra(EvaluationError):
    """A feature's optional dependencies are not installed (exit status 2)."""


def require(feature: str) -> None:
    """Import the modules ``feature`` needs, or raise MissingExtra naming the extra."""
    asked, extra, modules = NEEDS[feature]
    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module.split(".")[0])
    if missing:
        raise MissingExtra(f"{asked} needs {' and '.join(missing)}, which "
                           f"{'is' if len(missing) == 1 else 'are'} not installed: "
                           f"pip install 'gradcli[{extra}]'")
