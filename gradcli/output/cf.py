"""A result as a CF-style dataset: dimensions, coordinates, variables and attributes.

One description serves the ``.nc`` file, the ``.zarr`` store and ``gradcli.to_xarray``,
so the three agree by construction. Nothing here imports xarray or zarr.

- Dimensions: one per sampled grid variable, named after it, in grid order; a point set
  has one ``point`` dimension. Held grid variables are scalar coordinates; a point set's
  variables (and the text columns carried from a points file) are coordinates along
  ``point``.
- Names follow CF (letters, digits, underscores, a letter first: ``df/dx`` -> ``df_dx``),
  with the original in ``long_name``.
- A vector-valued f has a ``component`` dimension (string labels ``f[0]``, ``f[1]``...);
  a Jacobian is one variable ``jacobian`` over (``component``, ``wrt``) and a Hessian one
  ``hessian`` over (``wrt``, ``wrt2``), ``wrt`` labelling the input components (``x``,
  ``x[1]``): the CSV column ``df[i]/dy`` is ``jacobian.sel(component="f[i]", wrt="y")``.
  Any other block (``df/dx``, ``vjp/dx``, a future command's column) is a variable of
  its own; a vector variable's axis is ``<name>_index``.
- A variable is a set of the layout's scalar columns arranged on its extra dimensions
  (``columns``), so the same plan writes from whole arrays or from rows as they arrive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.evaluation.origin import Origin
from gradcli.plan.blocks import INPUT, TEXT, Layout, Result

__all__ = ["Coord", "DataVar", "DatasetPlan", "cf_name", "unique_name", "plan_dataset",
           "gather", "global_attrs"]

CONVENTIONS = "CF-1.11"
POINT, COMPONENT, WRT, WRT2 = "point", "component", "wrt", "wrt2"


def cf_name(text: str) -> str:
    """``text`` as a CF name: every other character becomes ``_``; a letter first."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name[:1].isalpha() else "v" + name


@dataclass
class Coord:
    """A coordinate variable: its dimensions, values and attributes."""

    name: str
    dims: tuple[str, ...]
    values: np.ndarray
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class DataVar:
    """A data variable over the batch dimensions and ``extra`` ones: element ``k`` of its
    extra axes is the layout's scalar column ``columns[k]``."""

    name: str
    dims: tuple[str, ...]
    columns: np.ndarray  # intp, shaped like the extra axes
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def extra(self) -> tuple[int, ...]:
        return tuple(self.columns.shape)


@dataclass
class DatasetPlan:
    """Everything a gridded-data writer needs besides the result values."""

    dims: tuple[str, ...]
    batch_shape: tuple[int, ...]
    coords: list[Coord]
    variables: list[DataVar]
    attrs: dict[str, str]

    def coordinates_of(self, var: DataVar) -> list[str]:
        """The non-dimension coordinates that belong to ``var`` (CF ``coordinates``)."""
        dims = set(var.dims)
        return [c.name for c in self.coords
                if c.dims != (c.name,) and set(c.dims) <= dims]


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... : the first not in ``taken`` when case is
    ignored (``taken`` holds lower-case names). CF 1.11 §2.3: no two variables should
    have names identical when case is ignored, so propagate's ``u(f)`` and ``U(f)`` are
    ``u_f_`` and ``U_f__2`` (their ``long_name`` keeps the column's own name)."""
    name, n = base, 1
    while name.lower() in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name.lower())
    return name


class _Names:
    """Unique CF names (ignoring case); the shared dimension names are taken first."""

    def __init__(self) -> None:
        self.taken = {POINT, COMPONENT, WRT, WRT2}

    def new(self, original: str) -> str:
        return unique_name(cf_name(original), self.taken)


def global_attrs(title: str, history: str) -> dict[str, str]:
    """The file's global attributes: no timestamps, so the same command gives the same
    bytes."""
    from gradcli._version import __version__

    return {"Conventions": CONVENTIONS, "title": title, "source": f"gradcli {__version__}",
            "history": history}


def _labels(values: Sequence[str]) -> np.ndarray:
    return np.array(list(values), dtype=object)


#: the most carried text columns a dataset (.nc, .zarr) holds: each is a variable of its
#: own there (20,000 made an 80,000-file store from a 170 KB file; CSV, JSON and .npz
#: carry any number, their size following the input's)
MAX_CARRIED = 256
#: the formats whose files are such datasets (``plan_dataset``), by the format table's name
DATASET_FORMATS = ("nc", "zarr")


def check_carried(count: int) -> None:
    """Refuse ``count`` carried text columns in a dataset over :data:`MAX_CARRIED` (an
    ``EvaluationError``): said from a points file's header, before its rows are read."""
    if count > MAX_CARRIED:
        from gradcli.errors import EvaluationError

        raise EvaluationError(f"{count:,} carried text columns: a .nc or .zarr dataset "
                              f"holds at most {MAX_CARRIED} (each is a variable of its own); "
                              "write CSV, JSON or .npz, or drop the columns you do not need "
                              "from the points file")


def plan_dataset(layout: Layout, inputs: Result, origin: Origin | None,
                 history: str = "") -> DatasetPlan:
    """The dataset of a result: ``layout`` its computed blocks, ``inputs`` the carried
    text and the variables' own blocks, ``origin`` how it was asked for (None: a plain
    table, every block a variable over ``point`` or ``dim_0``, ``dim_1``...)."""
    carried = [b.name for b in inputs.blocks if b.kind == TEXT]
    check_carried(len(carried))
    names = _Names()
    batch = tuple(inputs.batch_shape)
    axes = list(origin.axes) if origin is not None and origin.kind == "grid" else []
    if axes:
        dims = tuple(names.new(a) for a in axes)
    elif len(batch) == 1:
        dims = (POINT,)
    else:
        dims = tuple(names.new(f"dim_{i}") for i in range(len(batch)))
    vectors = {n: s for n, s in origin.variables if s} if origin is not None else {}
    held = set(origin.held) if origin is not None else set()
    # the axes of vector blocks (x_index ...) are dimensions too: a carried column or a
    # block must not take one of their names (a variable x_index beside the dimension
    # x_index makes a file whose .sel(x_index=0) fails)
    for block in inputs.blocks:
        names.taken.update(f"{cf_name(block.name)}_index{'' if k == 0 else k}".lower()
                           for k in range(len(block.shape)))
    for block in layout.blocks:
        names.taken.update(_block_dim(block.name, block.shape, k, vectors).lower()
                           for k in range(len(block.shape)))
    coords = _input_coords(inputs, axes, held, dims, names)
    variables, extra_coords = _result_vars(layout, origin, dims, vectors, names)
    units = {b.name: b.unit for b in [*inputs.blocks, *layout.blocks] if b.unit}
    if units:  # CF's units attribute (UDUNITS-2 syntax), read by pint-xarray's quantify
        from gradcli.lang.units import cf_text

        for item in [*coords, *extra_coords]:
            unit = units.get(item.attrs.get("long_name", ""))
            if unit:
                item.attrs["units"] = cf_text(unit)
        # a variable's columns (a Jacobian's blocks gathered along component/wrt axes)
        # have one unit, or the variable has none: CF gives a variable one unit
        column_units = [layout.blocks[i].unit for i, _, count in layout.runs()
                        for _ in range(count)]
        for var in variables:
            found = {column_units[int(c)] for c in var.columns.reshape(-1)}
            if len(found) == 1 and "" not in found:
                var.attrs["units"] = cf_text(found.pop())
    title = origin.expression if origin is not None else ""
    history = history or (origin.call if origin is not None else "")
    return DatasetPlan(dims, batch, coords + extra_coords, variables,
                       global_attrs(title, history))


def _input_coords(inputs: Result, axes: list[str], held: set[str], dims: tuple[str, ...],
                  names: _Names) -> list[Coord]:
    coords = []
    batch = inputs.batch_shape
    for block in inputs.blocks:
        arr = np.asarray(inputs.arrays[block.name])
        attrs = {"long_name": block.name}
        if block.name in axes:
            dim = dims[axes.index(block.name)]
            coords.append(Coord(dim, (dim,), arr.reshape(-1), attrs))
            continue
        name = names.new(block.name)
        own = tuple(f"{cf_name(block.name)}_index{'' if k == 0 else k}"
                    for k in range(len(block.shape)))
        if block.kind == INPUT and (block.name in held or axes):  # one value everywhere
            one = np.broadcast_to(arr, batch + block.shape)[(0,) * len(batch)]
            coords.append(Coord(name, own, np.array(one), attrs))
            continue
        values = np.broadcast_to(arr, batch + block.shape)
        if block.kind == TEXT:
            values = np.asarray(values, dtype=object)
        coords.append(Coord(name, dims + own, values, attrs))
    return coords


def _result_vars(layout: Layout, origin: Origin | None, dims: tuple[str, ...],
                 vectors: dict[str, tuple[int, ...]], names: _Names
                 ) -> tuple[list[DataVar], list[Coord]]:
    position = {name: i for i, name in enumerate(layout.column_names())}
    used: set[int] = set()
    variables: list[DataVar] = []
    labels: dict[str, list[str]] = {}

    def group(name: str, long_name: str, axes: list[tuple[str, list[str]]],
              column: Callable[..., str]) -> None:
        """A variable over ``axes`` (dimension, labels) if every column it needs exists."""
        cells = np.empty(tuple(len(lab) for _, lab in axes), dtype=np.intp)
        for idx in np.ndindex(*cells.shape):
            col = column(*(lab[i] for (_, lab), i in zip(axes, idx, strict=True)))
            if col not in position:
                return
            cells[idx] = position[col]
        used.update(int(c) for c in cells.reshape(-1))
        for dim, lab in axes:
            labels[dim] = lab
        variables.append(DataVar(names.new(name), dims + tuple(d for d, _ in axes), cells,
                                 {"long_name": long_name}))

    if origin is not None:
        outs, ins = list(origin.outputs), list(origin.inputs)
        comp = [(COMPONENT, outs)] if outs != ["f"] else []
        group("f", "f", comp, lambda o="f": o)
        from gradcli.plan.computations import TABLE

        record = TABLE.get(origin.what)
        labels_of = {COMPONENT: outs, WRT: ins, WRT2: ins}
        for axes in record.axes if record is not None else ():
            # what the computation's record says its blocks' component axes mean
            kept = [d for d in axes.dims if d != COMPONENT or comp]
            group(axes.name, axes.long_name[bool(comp)], [(d, labels_of[d]) for d in kept],
                  lambda *labels, kept=kept, column=axes.column: column(
                      **dict(zip(kept, labels, strict=True))))
    for block, cols in zip(layout.blocks, layout.sources(), strict=True):
        if any(int(c) in used for c in cols):
            continue
        own = tuple(_block_dim(block.name, block.shape, k, vectors)
                    for k in range(len(block.shape)))
        variables.append(DataVar(names.new(block.name), dims + own,
                                 np.asarray(cols, dtype=np.intp).reshape(block.shape),
                                 {"long_name": block.name}))
    extra = [Coord(dim, (dim,), _labels(lab), {"long_name": _LABEL_NAMES[dim]})
             for dim, lab in labels.items()]
    return variables, extra


_LABEL_NAMES = {COMPONENT: "component of f", WRT: "differentiated by",
                WRT2: "then differentiated by"}


def _block_dim(block: str, shape: tuple[int, ...], k: int,
               vectors: dict[str, tuple[int, ...]]) -> str:
    """The dimension of axis ``k`` of a per-variable block (``df/dx`` of a vector x:
    ``x_index``), else one of its own."""
    if len(shape) == 1:
        for var, vshape in sorted(vectors.items(), key=lambda kv: -len(kv[0])):
            if block.endswith(var) and vshape == shape:
                return f"{cf_name(var)}_index"
    return f"{cf_name(block)}_index{'' if k == 0 else k}"


def gather(var: DataVar, column: Callable[[int], Any], batch: tuple[int, ...],
           dtype: Any, stack: Callable[..., Any] = np.stack) -> Any:
    """The values of ``var`` over ``batch``: ``column(i)`` gives scalar column i (an array
    broadcastable to ``batch``, or None for zeros). ``stack`` is ``numpy.stack`` (or
    ``dask.array.stack`` for lazy columns)."""
    def one(i: int) -> Any:
        v = column(i)
        if v is None:
            return np.zeros(batch, dtype=dtype)
        if isinstance(v, np.ndarray) or np.isscalar(v):
            v = np.asarray(v, dtype=dtype)
            return v if v.shape == batch else np.broadcast_to(v, batch)
        return v  # a lazy (dask) column: already batch-shaped
    if not var.extra:
        return one(int(var.columns))
    flat = [one(int(i)) for i in var.columns.reshape(-1)]
    return stack(flat, axis=-1).reshape(batch + var.extra)
