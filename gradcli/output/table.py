"""Terminal tables of results (rich), with head/tail elision for long outputs.

Why: the default output of ``gradcli`` is a human-readable table.  Numbers use
``%.{precision}g`` (significant digits) and are right-aligned; a table longer
than ``max_rows`` shows its first and last ``max_rows // 2`` rows around a row
``… 9,960 rows hidden …``; notes (e.g. shapes of v, J, vᵀJ) follow as plain
lines.  rich is imported inside the functions so importing gradcli.output
stays cheap; colour follows rich's Console (NO_COLOR is honoured by rich).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._columns import as_arrays, row_count, take_rows

__all__ = ["format_number", "table_cells", "render_table", "print_table"]


def format_number(value: float, precision: int = 6) -> str:
    """``%.{precision}g`` text of one value; NaN/inf as ``nan``, ``inf``, ``-inf``; text
    (a column carried from a points file) as it is."""
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{max(1, int(precision))}g}"


def table_cells(
    columns: Mapping[str, np.ndarray], *, precision: int = 6, max_rows: int = 40
) -> tuple[list[list[str]], int, int]:
    """Formatted cells (head rows then tail rows), the head length and hidden count.

    Rows ``[0, head)`` come first; if ``hidden > 0`` the remaining rows are the
    last rows of the table and ``hidden`` rows between them are omitted.
    """
    total = row_count(columns)
    if total <= max_rows:
        rows = np.arange(total)
        head, hidden = total, 0
    else:
        head = max(1, max_rows // 2)
        rows = np.concatenate([np.arange(head), np.arange(total - head, total)])
        hidden = total - 2 * head
    values = take_rows(columns, rows)
    cols = [[format_number(v, precision) for v in vals.tolist()] for vals in values.values()]
    return [list(r) for r in zip(*cols, strict=True)], head, hidden


def render_table(
    columns: Mapping[str, np.ndarray],
    *,
    precision: int = 6,
    max_rows: int = 40,
    title: str | None = None,
    notes: Sequence[str] | None = None,
) -> Any:
    """A rich renderable: the table followed by one line per note."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    arrays = as_arrays(columns)
    cells, head, hidden = table_cells(arrays, precision=precision, max_rows=max_rows)
    table = Table(title=title)
    for name in arrays:
        table.add_column(name, justify="right", no_wrap=True)
    for i, row in enumerate(cells):
        if hidden and i == head:
            table.add_row(*[Text("⋮", style="dim")] * len(row))
        table.add_row(*row)
    parts: list[Any] = [table]
    if hidden:  # said under the table, so no column is widened by it
        parts.append(Text(f"… {hidden:,} rows hidden … (all {len(cells) + hidden:,} rows: "
                          "-f csv or -o FILE)", style="dim"))
    parts.extend(Text(str(note)) for note in notes or ())
    return Group(*parts)


def print_table(console: Any, columns: Mapping[str, np.ndarray], **kwargs: Any) -> None:
    """Render the table (see render_table for keyword arguments) on a rich Console."""
    console.print(render_table(columns, **kwargs))
