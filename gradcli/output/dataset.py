"""A result as an ``xarray.Dataset`` (``gradcli.to_xarray``, and the ``.nc`` writer).

The dataset follows the plan of ``cf.py``, which the ``.zarr`` writer follows too, so
``to_xarray(gradcli.evaluate(...))``, ``xarray.open_dataset("f.nc")`` and
``xarray.open_zarr("f.zarr")`` have the same dimensions, coordinates, names and
attributes. Results that are Dask arrays (``evaluate(..., scheduler=...)``) stay lazy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gradcli.evaluation.extras import require
from gradcli.evaluation.origin import Origin
from gradcli.output.cf import gather, plan_dataset
from gradcli.plan.blocks import RESULT, Layout, Result, as_result

__all__ = ["split_result", "to_dataset", "to_xarray"]


def split_result(result: Result) -> tuple[Result, Layout, Callable[[int], Any]]:
    """(the inputs: carried text and the variables' blocks; the layout of the computed
    blocks; ``column(i)``, scalar column i of that layout, without computing lazy arrays)."""
    names = [b.name for b in result.blocks]
    computed = [b.name for b in result.blocks if b.kind == RESULT]
    layout = result.layout.subset(computed)
    inputs = Result(result.layout.subset([n for n in names if n not in computed]),
                    result.arrays, result.batch_shape)
    order = layout.scalar_order()

    def column(i: int) -> Any:
        block_index, component = order[i]
        block = layout.blocks[block_index]
        arr = result.arrays[block.name]
        if not block.shape:
            return arr
        return arr[(..., *np.unravel_index(component, block.shape))]

    return inputs, layout, column


def _stack_for(values: list[Any]) -> Callable[..., Any]:
    """``numpy.stack``, or ``dask.array.stack`` when some column is lazy."""
    if any(not isinstance(v, np.ndarray) and hasattr(v, "dask") for v in values):
        import dask.array as da

        return da.stack
    return np.stack


def to_dataset(result: Mapping[str, Any], origin: Origin | None = None,
               history: str = "") -> Any:
    """The ``xarray.Dataset`` of a result (a Result, or any mapping of columns)."""
    require("xarray")
    import xarray as xr

    res = as_result(result)
    inputs, layout, column = split_result(res)
    plan = plan_dataset(layout, inputs, origin, history)
    batch = tuple(res.batch_shape)
    stack = _stack_for(list(res.arrays.values()))
    dtypes = [getattr(res.arrays[b.name], "dtype", np.float64) for b in layout.blocks]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    coords = {c.name: (c.dims, c.values, c.attrs) for c in plan.coords}
    data = {v.name: (v.dims, gather(v, column, batch, dtype, stack), v.attrs)
            for v in plan.variables}
    ds = xr.Dataset(data, coords=coords, attrs=plan.attrs)
    for name in ds.variables:
        # nan and inf are results, not missing values: no _FillValue, raw IEEE values
        ds.variables[name].encoding["_FillValue"] = None
        if ds.variables[name].dtype == object:  # text: variable-length strings, said outright
            ds.variables[name].encoding["dtype"] = str
    return ds


def to_xarray(result: Mapping[str, Any], history: str | None = None) -> Any:
    """``gradcli.evaluate(...)``'s result as an ``xarray.Dataset``.

    Dimensions are the grid's sampled variables (first grid variable first) or ``point``;
    held variables are scalar coordinates; a vector f has a ``component`` dimension, a
    Jacobian is one ``jacobian`` variable over (``component``, ``wrt``), a Hessian one
    ``hessian`` over (``wrt``, ``wrt2``); names are CF names with the original in
    ``long_name``; global attributes ``Conventions``, ``title`` (the expression),
    ``source`` and ``history`` (default: the ``gradcli.evaluate`` call). Writing it with
    ``to_netcdf`` gives what ``-o FILE.nc`` writes. Needs ``pip install 'gradcli[data]'``.
    """
    origin = getattr(result, "origin", None)
    inner = getattr(result, "result", None)
    source = inner if inner is not None else result
    return to_dataset(source, origin, history if history is not None else "")
