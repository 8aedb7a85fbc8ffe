"""Results that show themselves: an HTML table in Jupyter, a short ``repr``, ``to_pandas``.

Why here: what a result looks like is output, and the evaluation layer must not import the
output layer. So the evaluation keeps returning its plain types (``Evaluated``, a dict of
block arrays; ``Propagated`` and the field commands' row tables, mappings of columns) and
the public functions of ``gradcli.api`` wrap them in the subclasses below, which add only
presentation: every index, attribute and array stays what it was.

One implementation for every result: :class:`Shown` renders the scalar columns the
terminal table shows (``table.table_cells``: ``%.6g`` cells, the first and last rows of a
long table), the batch's shape, and the notes the command line would print, as an HTML
``<table>`` (``_repr_html_``) and as a few lines of text (``__repr__``: what was computed,
how many points, the columns). Bounds a user can see: at most :data:`MAX_ROWS` rows
(head and tail) and :data:`MAX_COLUMNS` columns are shown, and the table says how many it
leaves out; a lazy (Dask) result is described, never computed, by its display.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.evaluation.extras import require
from gradcli.evaluation.origin import Evaluated
from gradcli.output._columns import take_rows
from gradcli.output.table import format_number
from gradcli.plan.blocks import Result, as_result
from gradcli.uncertainty.propagation import Propagated

__all__ = ["Shown", "EvaluatedView", "RowTable", "PropagatedView", "html_table",
           "MAX_ROWS", "MAX_COLUMNS"]

#: rows an HTML table shows: the first and last half of these, as the terminal's 40
MAX_ROWS = 20
#: columns an HTML table or a repr shows (a 10⁶-vector's derivative has 10⁶ columns)
MAX_COLUMNS = 200
#: column names a repr lists before "and N more"
REPR_COLUMNS = 12


def _lazy(result: Result) -> bool:
    """Whether some block is a Dask array (showing values would compute it)."""
    return any(not isinstance(a, np.ndarray) and hasattr(a, "dask")
               for a in result.arrays.values())


def _shown_part(result: Result, max_columns: int) -> tuple[Result, int]:
    """The blocks holding the first ``max_columns`` scalar columns (so a huge block's
    names are never all made), and how many columns the whole result has."""
    total = result.layout.size()
    if total <= max_columns:
        return result, total
    names: list[str] = []
    count = 0
    for block in result.blocks:
        if count >= max_columns:
            break
        names.append(block.name)
        count += block.size
    layout = result.layout.subset(names)
    return Result(layout, result.arrays, result.batch_shape), total


def _head_tail(total: int, max_rows: int) -> tuple[np.ndarray, int, int]:
    """Flat row indices shown (the first and the last ``max_rows // 2``), the head's
    length and how many rows lie hidden between them."""
    if total <= max_rows:
        return np.arange(total), total, 0
    head = max(1, max_rows // 2)
    return (np.concatenate([np.arange(head), np.arange(total - head, total)]), head,
            total - 2 * head)


def shape_text(batch_shape: Sequence[int], kind: str = "") -> str:
    """``a grid of 100 × 50 (5,000 points)``, ``3 points``, ``1 point``, ``4 rows``."""
    total = int(np.prod(batch_shape, dtype=np.int64)) if batch_shape else 1
    if kind == "grid":
        dims = " × ".join(f"{n:,}" for n in batch_shape)
        return f"a grid of {dims} ({total:,} point{'s' if total != 1 else ''})"
    unit = "row" if kind == "rows" else "point"
    return f"{total:,} {unit}{'s' if total != 1 else ''}"


def column_summary(result: Result, most: int = REPR_COLUMNS) -> str:
    """The columns in a line: a block's components as a range (``df/dv[0]…df/dv[19]``),
    at most ``most`` blocks, then how many columns are left."""
    parts, listed = [], 0
    for block in result.blocks[:most]:
        names = [block.name] if not block.shape else \
            [block.column(0)] if block.size == 1 else \
            [f"{block.column(0)}…{block.column(block.size - 1)}"]
        parts += names
        listed += block.size
    text = ", ".join(parts)
    total = result.layout.size()
    if total > listed:
        text += f", … ({total - listed:,} more)"
    return text


def html_table(columns: Mapping[str, Any], *, title: str = "", shape: str = "",
               notes: Sequence[str] = (), precision: int = 6, max_rows: int = MAX_ROWS,
               max_columns: int = MAX_COLUMNS) -> str:
    """The HTML of a result: a caption (what and the shape), a ``<table>`` of the first
    and last rows of every column (up to ``max_columns``), then the notes."""
    result = as_result(columns)
    shown, total_columns = _shown_part(result, max_columns)
    caption = " · ".join(html.escape(t) for t in (title, shape) if t)
    parts = ['<div class="gradcli-result">']
    after: list[str] = []
    if _lazy(result):
        names = list(shown)[:max_columns]
        parts.append(f"<p>{caption}</p>" if caption else "")
        parts.append("<p>lazy Dask arrays (not computed here): "
                     + html.escape(", ".join(names)) + "</p>")
    else:
        total = int(np.prod(result.batch_shape, dtype=np.int64))
        rows, head, hidden = _head_tail(total, max_rows)
        values = take_rows(shown, rows)
        names = list(values)[:max_columns]
        cells = [[format_number(v, precision) for v in values[n].tolist()] for n in names]
        parts.append("<table>")
        if caption:
            parts.append(f"<caption>{caption}</caption>")
        parts.append("<thead><tr>" + "".join(f"<th>{html.escape(n)}</th>" for n in names)
                     + "</tr></thead><tbody>")
        for i in range(len(rows)):
            if hidden and i == head:
                parts.append(f'<tr><td colspan="{len(names)}" style="text-align:center">'
                             f"⋮ {hidden:,} rows hidden ⋮</td></tr>")
            parts.append("<tr>" + "".join(f'<td style="text-align:right">'
                                          f"{html.escape(c[i])}</td>" for c in cells)
                         + "</tr>")
        parts.append("</tbody></table>")
        if hidden:
            after.append(f"{hidden:,} of {total:,} rows not shown (all of them: "
                         ".to_pandas(), or write a file)")
    if total_columns > len(names):
        after.append(f"{total_columns - len(names):,} of {total_columns:,} columns not shown")
    parts.extend(f"<p>{html.escape(line)}</p>" for line in [*after, *notes])
    parts.append("</div>")
    return "".join(parts)


class Shown:
    """Presentation of a result, mixed into a mapping type: ``_repr_html_`` (Jupyter's
    table), ``__repr__`` (a few lines) and ``to_pandas()``. A subclass says what to show
    through ``_display()``: (the columns as a Result, a title, the kind of batch for the
    shape text, the notes)."""

    def _display(self) -> tuple[Result, str, str, list[str]]:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        result, title, kind, notes = self._display()
        return html_table(result, title=title, shape=shape_text(result.batch_shape, kind),
                          notes=notes)

    def __repr__(self) -> str:
        result, title, kind, notes = self._display()
        lines = [f"<{title}: {shape_text(result.batch_shape, kind)}>",
                 f"columns: {column_summary(result)}"]
        lines += list(notes)
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's plain-text view would print a dict subclass as a dict: use the repr
        printer.text(repr(self))

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame``: one column per scalar column of the table
        (``df/dx[0]``...), one row per point (a grid's points in C order, first variable
        slowest). Needs pandas (``pip install 'gradcli[data]'``)."""
        require("pandas")
        import pandas as pd

        result = self._display()[0]
        total = int(np.prod(result.batch_shape, dtype=np.int64))
        values = take_rows(result, np.arange(total))
        frame = pd.DataFrame(values, columns=list(values))
        from gradcli.output._columns import column_units

        units = {c: u for b, u in column_units(result).items()
                 for c in next(x for x in result.blocks if x.name == b).column_names()}
        if units:  # column -> unit (pandas keeps attrs through most operations)
            frame.attrs["units"] = units
        return frame


def _evaluated_title(origin: Any) -> str:
    if origin is None:
        return "gradcli result"
    return f"{origin.what} of {origin.expression}"


class EvaluatedView(Shown, Evaluated):
    """``gradcli.evaluate``'s result (``{block name: array}``, with its Result and Origin),
    shown as the terminal shows it: the same columns and rows, the grid's shape and the
    command line's notes."""

    def __init__(self, evaluated: Evaluated, warnings: Sequence[str] = ()) -> None:
        super().__init__(evaluated, getattr(evaluated, "result", None),
                         getattr(evaluated, "origin", None))
        # shown as the terminal shows it: a taylor result as its long table; the notes in
        # the order a JSON output holds them (its own, the warnings, the non-finite count)
        self.notes = [*getattr(evaluated, "notes", ()), *warnings]
        self.rows = getattr(evaluated, "rows", None)
        result = getattr(evaluated, "result", None)
        if result is not None and not _lazy(result):  # a lazy one is not computed here
            from gradcli.evaluation.origin import nonfinite_notes
            from gradcli.output._columns import count_nonfinite

            # the warning the command line says after the same output
            self.notes += nonfinite_notes(count_nonfinite(result, results_only=True))

    def _display(self) -> tuple[Result, str, str, list[str]]:
        title = _evaluated_title(self.origin)
        if self.rows is not None:  # taylor: one row per point and multi-index
            return self.rows(), title, "rows", self.notes
        result = self.result if self.result is not None else as_result(dict(self))
        kind = self.origin.kind if self.origin is not None else ""
        return result, title, kind, self.notes


class RowTable(Shown, Result):
    """A table of rows (``critical``, ``descend``, ``flow``): ``{column: array}`` with one
    row per point, path step or time, the columns the command writes; ``notes`` are what
    the run says beside them (why runs stopped)."""

    def __init__(self, columns: Mapping[str, Any], title: str,
                 notes: Sequence[str] = ()) -> None:
        result = as_result(columns)
        super().__init__(result.layout, result.arrays, result.batch_shape)
        self.title = title
        self.notes = list(notes)

    def _display(self) -> tuple[Result, str, str, list[str]]:
        return self, self.title, "rows", self.notes


class PropagatedView(Shown, Propagated):
    """``gradcli.propagate``'s table, shown like every other result."""

    def __init__(self, propagated: Propagated, title: str = "propagate") -> None:
        super().__init__(propagated, propagated.notes)
        self.title = title

    def _display(self) -> tuple[Result, str, str, list[str]]:
        return self, self.title, "rows", self.notes
