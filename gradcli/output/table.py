"""Terminal tables of results (rich), with head/tail elision for long outputs.

Why: the default output of ``gradcli`` is a human-readable table.  Numbers use
``%.{precision}g`` (significant digits) and are right-aligned; a table longer
than ``max_rows`` shows its first and last ``max_rows // 2`` rows around a row
``… 9,960 rows hidden …``; notes (e.g. shapes of v, J, vᵀJ) follow as plain
lines.  A table never blanks or cuts a value to fit the terminal: one too wide
is shown transposed (one line per column) when its points fit side by side,
else with the leading columns that fit, and the caller is told how many were
left out.  rich is imported inside the functions so importing gradcli.output
stays cheap; colour follows rich's Console (NO_COLOR is honoured by rich).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.output._columns import as_arrays, row_count, take_rows

__all__ = ["format_number", "table_cells", "render_table", "print_table", "hidden_columns_note"]

#: a transposed table has one line per column; past this many it is not offered
MAX_TRANSPOSED_LINES = 200


def format_number(value: float, precision: int = 6) -> str:
    """``%.{precision}g`` text of one value; NaN/inf as ``nan``, ``inf``, ``-inf``; text
    (a column carried from a points file) as it is."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return str(int(value))  # a step, a run, an order: an integer, never 1e+06
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


def _width(widths: Sequence[int]) -> int:
    """Characters a rich table with these column widths takes: one space of padding on
    each side of every column, and a border line before, between and after them."""
    return sum(widths) + 3 * len(widths) + 1


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None,
           first_left: bool = False) -> Any:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for j, name in enumerate(headers):  # escaped: "x [m]" is a unit, not rich markup
        table.add_column(escape(name), justify="left" if first_left and j == 0 else "right",
                         no_wrap=True)
    for row in rows:  # a transposed table's first cells are headers: "x [m]" is no markup
        table.add_row(*(escape(c) if isinstance(c, str) else c for c in row))
    return table


def render_table(
    columns: Mapping[str, np.ndarray],
    *,
    precision: int = 6,
    max_rows: int = 40,
    title: str | None = None,
    notes: Sequence[str] | None = None,
    width: int | None = None,
) -> tuple[Any, int]:
    """A rich renderable (the table, then one line per note) no wider than ``width``,
    and how many columns it leaves out (0 unless even the transposed view is too wide).
    """
    from rich.cells import cell_len
    from rich.console import Group
    from rich.text import Text

    from gradcli.output._columns import column_headers

    arrays = as_arrays(columns)
    cells, head, hidden = table_cells(arrays, precision=precision, max_rows=max_rows)
    names = column_headers(columns, list(arrays))
    widths = [max([cell_len(name), *(len(row[j]) for row in cells)])
              for j, name in enumerate(names)]
    shown = len(names)
    if width is not None and _width(widths) > width:
        points = [f"point {i + 1}" for i in range(len(cells))]
        across = [max(map(cell_len, ["column", *names])),
                  *(max(len(p), *map(len, row)) for p, row in zip(points, cells, strict=True))]
        if not hidden and len(names) <= MAX_TRANSPOSED_LINES and _width(across) <= width:
            rows = [[name, *(row[j] for row in cells)] for j, name in enumerate(names)]
            parts: list[Any] = [_table(["column", *points], rows, title, first_left=True)]
            parts.extend(Text(str(note)) for note in notes or ())
            return Group(*parts), 0
        shown = 1
        while shown < len(names) and _width(widths[:shown + 1]) <= width:
            shown += 1
    rows = [row[:shown] for row in cells]
    if hidden:
        rows.insert(head, [Text("⋮", style="dim")] * shown)
    parts = [_table(names[:shown], rows, title)]
    if hidden:  # said under the table, so no column is widened by it
        parts.append(Text(f"… {hidden:,} rows hidden … (all {len(cells) + hidden:,} rows: "
                          "-f csv or -o FILE)", style="dim"))
    parts.extend(Text(str(note)) for note in notes or ())
    return Group(*parts), len(names) - shown


def hidden_columns_note(count: int) -> str:
    """What to say on stderr when a table leaves ``count`` columns out."""
    return f"{count:,} columns not shown (all columns: -f csv or -o FILE)"


def print_table(console: Any, columns: Mapping[str, np.ndarray], **kwargs: Any) -> int:
    """Print the table on a rich Console, fitted to its width (see render_table for keyword
    arguments); return how many columns did not fit."""
    renderable, hidden = render_table(columns, width=console.width, **kwargs)
    console.print(renderable)
    return hidden
