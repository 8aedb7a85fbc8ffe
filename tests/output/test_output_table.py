"""Table rendering: precision, alignment, head/tail elision, notes."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from gradcli.output.table import format_number, print_table, table_cells


def _render(columns, **kwargs) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    print_table(console, columns, **kwargs)
    return console.file.getvalue()


def test_format_number_precision() -> None:
    assert format_number(np.pi, 3) == "3.14"
    assert format_number(1 / 3) == "0.333333"
    assert format_number(1.5e-12, 4) == "1.5e-12"
    assert [format_number(v) for v in (np.nan, np.inf, -np.inf)] == ["nan", "inf", "-inf"]


def test_head_tail_hiding() -> None:
    x = np.arange(10_000, dtype=float)
    cells, head, hidden = table_cells({"x": x, "f": x * 2}, max_rows=40)
    assert head == 20 and hidden == 9_960 and len(cells) == 40
    assert cells[0] == ["0", "0"] and cells[19] == ["19", "38"]
    assert cells[20] == ["9980", "19960"] and cells[-1] == ["9999", "19998"]
    text = _render({"x": x, "f": x * 2}, max_rows=40)
    assert "… 9,960 rows hidden …" in text
    assert "9999" in text and " 19 " in text and "5000" not in text


def test_precision_alignment_title_and_notes() -> None:
    text = _render({"x": np.array([1.0, 10.0]), "f": np.array([np.pi, -np.e])}, precision=3,
                   title="f = x", notes=["v: shape (2,)", "J: shape (2, 1)"])
    assert "3.14" in text and "-2.72" in text and "3.1415" not in text
    assert "f = x" in text
    lines = text.splitlines()
    assert lines[-2:] == ["v: shape (2,)", "J: shape (2, 1)"]
    row1 = next(line for line in lines if "3.14" in line)
    row2 = next(line for line in lines if "-2.72" in line)
    assert row1.index("3.14") + 4 == row2.index("-2.72") + 5  # right-aligned


def test_grid_columns_broadcast_in_table() -> None:
    cells, _, hidden = table_cells({"x": np.array([[1.0], [2.0]]), "y": np.array([[5.0, 6.0]])})
    assert hidden == 0
    assert cells == [["1", "5"], ["1", "6"], ["2", "5"], ["2", "6"]]


def test_short_table_no_hidden_row() -> None:
    text = _render({"x": np.arange(3.0)}, max_rows=40)
    assert "hidden" not in text


def _render_at(columns, width: int) -> tuple[str, int]:
    from gradcli.output.table import render_table

    renderable, hidden = render_table(columns, width=width)
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue(), hidden


def test_too_wide_with_few_points_is_transposed_whole() -> None:
    cols = {f"long column name {i}": np.array([float(i), i + 0.5]) for i in range(6)}
    text, hidden = _render_at(cols, 50)
    assert hidden == 0 and "…" not in text
    assert max(map(len, text.splitlines())) <= 50
    for i in range(6):  # one line per column: its name, then its value at each point
        line = next(ln for ln in text.splitlines() if f"long column name {i} " in ln)
        assert line.split("│")[2:4] == [f" {i:>7} ", f" {i + 0.5:>7g} "]


def test_too_wide_with_many_points_keeps_the_leading_columns() -> None:
    x = np.arange(100.0)
    cols = {f"c{i:02d}": x * i for i in range(20)}
    text, hidden = _render_at(cols, 60)
    header = [c.strip() for c in text.splitlines()[1].split("┃")[1:-1]]
    assert header == [f"c{i:02d}" for i in range(len(header))]
    assert hidden == 20 - len(header) > 0
    assert max(map(len, text.splitlines())) <= 60 and "…" not in text.replace("… ", "")
