"""Where a result came from: what the gridded-data writers need beyond the arrays.

A ``.nc``/``.zarr`` file or an ``xarray.Dataset`` names its dimensions after the grid's
sampled variables (or one ``point`` dimension), keeps held variables as scalar
coordinates, labels Jacobian rows by output component and columns by input, and records
the expression and how it was asked for. The arrays alone cannot tell a 1-D grid from a
point set, or which variables were sampled; ``Origin`` says so. ``Evaluated`` is what
``gradcli.evaluate`` returns: the plain ``{block name: array}`` dict it always was, which
also carries its Result and Origin so ``gradcli.to_xarray`` can label it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.plan.blocks import Result
from gradcli.request import describe_call  # noqa: F401 - a result says where it came from

__all__ = ["Origin", "Evaluated", "describe_call", "shape_notes", "shown_rows", "LongRows"]


@dataclass(frozen=True)
class Origin:
    """How a result was asked for.

    ``kind`` is ``"grid"`` or ``"points"``; ``axes`` the sampled grid variables in axis
    order (the others of a grid are held); ``variables`` each variable's name and shape
    (``()`` scalar, ``(n,)`` vector); ``outputs`` the output components (``f``, ``f[0]``,
    ...); ``inputs`` the input components (``x``, ``x[0]``, ...); ``call`` a one-line
    description of the request, the default ``history`` of a file.
    """

    expression: str
    what: str
    kind: str
    axes: tuple[str, ...]
    variables: tuple[tuple[str, tuple[int, ...]], ...]
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    call: str = ""
    held: tuple[str, ...] = ()


class Evaluated(dict):  # type: ignore[type-arg]
    """``{block name: array}`` (a dict, as ``gradcli.evaluate`` has always returned) that
    also keeps the Result it was made from, its Origin, the notes a table of it shows
    (``shape_notes``) and, when the command line shows other rows than the result's own
    columns, what makes them (``rows``, see ``shown_rows``)."""

    def __init__(self, arrays: Any, result: Result | None = None,
                 origin: Origin | None = None, notes: Any = (), rows: Any = None) -> None:
        super().__init__(arrays)
        self.result = result
        self.origin = origin
        self.notes = list(notes)
        self.rows = rows

    @property
    def units(self) -> dict[str, str]:
        """Each column (block) with a physical unit -> its unit as shown (``V/mA``)."""
        blocks = self.result.blocks if self.result is not None else []
        return {b.name: b.unit for b in blocks if b.unit}


@dataclass(frozen=True)
class LongRows:
    """The rows a computation's command writes instead of its blocks' columns (its
    record's ``shown``: taylor's long table, one row per point and multi-index), made when
    asked for; it keeps only the result, the plan's spec and the record's function (a
    module-level one), so a result that holds it still pickles."""

    result: Result
    spec: Any
    shown: Any

    def __call__(self) -> Result:
        from types import SimpleNamespace

        return self.shown(self.result, SimpleNamespace(spec=self.spec))


def shown_rows(prepared: Any, result: Result) -> LongRows | None:
    """What makes the rows the command line shows for this result, when they are not its
    own columns (taylor's long table); None otherwise, and for lazy (Dask) arrays."""
    if prepared.plan.computation.shown is None:
        return None
    if any(not isinstance(a, np.ndarray) and hasattr(a, "dask")
           for a in result.arrays.values()):
        return None
    return LongRows(result, prepared.plan.spec, prepared.plan.computation.shown)


def shape_notes(prepared: Any) -> list[str]:
    """What a table of the result says under it (a vjp's shapes: v, J and vᵀJ per point);
    the command line prints the same lines."""
    notes = prepared.plan.computation.notes
    return [] if notes is None else notes(prepared)


def nonfinite_notes(count: int) -> list[str]:
    """The warning a result with ``count`` nan or inf values carries (SECURITY.md §5): the
    command line says it after the output, a JSON output and a library result hold it in
    their notes."""
    if not count:
        return []
    return [f"warning: {count:,} non-finite result value{'s' if count != 1 else ''} (nan "
            "or inf) in the output"]
