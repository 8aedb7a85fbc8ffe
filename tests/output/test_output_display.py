"""Results shown in Jupyter: the HTML table, the short repr and to_pandas of
gradcli.evaluate, propagate, critical, descend and flow, with the engine's numbers checked
against closed forms and the field tables against the commands' own CSV."""

from __future__ import annotations

import csv
import html
import importlib
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError

ROOT = Path(__file__).resolve().parents[2]


def cells(page: str) -> tuple[list[str], list[list[str]]]:
    """The header and the body rows of the first <table> of an HTML page (text cells)."""
    head = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", page)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>", 1)[1]):
        tds = re.findall(r"<td[^>]*>(.*?)</td>", row)
        if len(tds) == len(head):
            rows.append([html.unescape(t) for t in tds])
    return head, rows


def cli_csv(*args: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows the command line writes with -f csv."""
    done = subprocess.run([sys.executable, "-m", "gradcli", *args, "-f", "csv", "-q"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    table = list(csv.reader(io.StringIO(done.stdout)))
    return table[0], table[1:]


def test_a_grid_shows_its_head_and_tail_rows_with_the_engine_numbers() -> None:
    """x²y on a 30 × 2 grid: 60 rows, the first and last 10 shown around '40 rows
    hidden', each cell %.6g of x, y, x²y, 2xy, x² at that row (C order, x slowest)."""
    r = gradcli.evaluate("x^2*y", "grad", grid={"x": (0, 29, 30), "y": (1, 2, 2)})
    page = r._repr_html_()
    head, rows = cells(page)
    assert head == ["x", "y", "f", "df/dx", "df/dy"]
    assert "⋮ 40 rows hidden ⋮" in page
    assert "a grid of 30 × 2 (60 points)" in page and "grad of x^2*y" in page
    shown = [*range(10), *range(50, 60)]
    assert len(rows) == 20
    for row, k in zip(rows, shown, strict=True):
        x, y = k // 2, 1 + k % 2
        assert row == [f"{v:.6g}" for v in (x, y, x * x * y, 2 * x * y, x * x)]


def test_the_result_is_still_the_dict_of_block_arrays() -> None:
    """Indexing, keys, shapes and to_xarray are what they were: the display adds only
    presentation."""
    r = gradcli.evaluate("sin(x)*cos(y)", "grad", grid={"x": (0, 1, 4), "y": (0, 1, 3)})
    assert isinstance(r, dict)
    assert list(r) == ["x", "y", "f", "df/dx", "df/dy"]
    x, y = np.linspace(0, 1, 4)[:, None], np.linspace(0, 1, 3)[None, :]
    np.testing.assert_allclose(r["df/dx"], np.cos(x) * np.cos(y), rtol=1e-15)
    assert r["x"].shape == (4, 1)
    importlib.import_module("xarray")
    ds = gradcli.to_xarray(r)
    assert ds.sizes["x"] == 4 and ds.sizes["y"] == 3


def test_repr_is_a_few_lines_saying_what_how_many_and_the_columns() -> None:
    """What was computed, the number of points, the columns; a vjp's shape note."""
    r = gradcli.evaluate("x^2", "grad", at=[{"x": 1}, {"x": 2}, {"x": 3}])
    assert repr(r) == "<grad of x^2: 3 points>\ncolumns: x, f, df/dx"
    v = gradcli.evaluate("[x*y, x-y]", "vjp", at={"x": 1, "y": 2}, vector=[1, 0])
    assert repr(v).splitlines() == [
        "<vjp of [x*y, x-y]: 1 point>", "columns: x, y, f[0], f[1], vjp/dx, vjp/dy",
        "shapes per point: v (2,) (like f), J (2, 2) = outputs × inputs, vᵀJ (2,): one "
        "vjp/d column per input"]
    assert "J (2, 2) = outputs × inputs" in v._repr_html_()
    head, rows = cells(v._repr_html_())
    assert rows == [["1", "2", "2", "-1", "2", "1"]]  # vᵀJ = (y, x) for v = (1, 0)


def test_a_repr_names_a_vector_block_by_its_first_and_last_columns() -> None:
    """A 20-vector's gradient: 41 columns in one short line."""
    r = gradcli.evaluate("sum(v^2)", "grad", at={"v": list(range(20))})
    assert repr(r).splitlines()[1] == "columns: v[0]…v[19], f, df/dv[0]…df/dv[19]"


def test_a_wide_result_shows_at_most_200_columns_and_says_how_many_are_left() -> None:
    """sum(v²) of a 300-vector: 601 columns (v, f, df/dv), 200 shown with 2v's values."""
    from gradcli.output.display import MAX_COLUMNS

    v = np.arange(300.0)
    r = gradcli.evaluate("sum(v^2)", "grad", at={"v": v.tolist()})
    page = r._repr_html_()
    head, rows = cells(page)
    assert len(head) == MAX_COLUMNS == 200
    assert "401 of 601 columns not shown" in page
    assert rows[0][:3] == ["0", "1", "2"]


def test_to_pandas_has_one_row_per_point_in_c_order() -> None:
    """The DataFrame's columns and values are the table's: x slowest, every value exact."""
    pd = importlib.import_module("pandas")
    r = gradcli.evaluate("x*y^2", "grad", grid={"x": (1, 3, 3), "y": (0, 1, 2)})
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["x", "y", "f", "df/dx", "df/dy"]
    x = np.repeat([1.0, 2.0, 3.0], 2)
    y = np.tile([0.0, 1.0], 3)
    np.testing.assert_array_equal(df["df/dx"], y * y)
    np.testing.assert_array_equal(df["df/dy"], 2 * x * y)


def test_to_pandas_without_pandas_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clear error naming pandas and the extra that brings it."""
    monkeypatch.setitem(sys.modules, "pandas", None)
    r = gradcli.evaluate("x", "eval", at={"x": 1})
    with pytest.raises(EvaluationError, match=r"to_pandas\(\) needs pandas, which is not "
                       r"installed: pip install 'gradcli\[data\]'"):
        r.to_pandas()


def test_propagate_shows_the_same_table() -> None:
    """V/I with u(V), u(I): f and u(f) by the GUM's first-order law, hand-derived."""
    V, uV, I, uI = 4.999, 0.0032, 0.019661, 0.0000095
    p = gradcli.propagate("V/I", at={"V": f"{V}+-{uV}", "I": f"{I}+-{uI}"})
    head, rows = cells(p._repr_html_())
    assert head == ["V", "I", "f", "u(f)", "U(f)", "k"]
    u = math.hypot(uV / I, V * uI / I**2)
    assert rows == [[f"{V:.6g}", f"{I:.6g}", f"{V / I:.6g}", f"{u:.6g}", f"{2 * u:.6g}",
                     "2"]]
    assert repr(p).startswith("<propagate V/I: 1 row>")


def test_critical_rows_are_the_commands_rows() -> None:
    """x³ − 3x + y³ − 3y: (±1, ±1), f = ±4 or 0, Hessian eigenvalues ±6; the columns and
    values equal gradcli critical's CSV."""
    c = gradcli.critical("x^3 - 3x + y^3 - 3y", grid={"x": (-3, 3, 13), "y": (-3, 3, 13)})
    np.testing.assert_allclose(np.c_[c["x"], c["y"]], [[-1, -1], [-1, 1], [1, -1], [1, 1]],
                               atol=1e-12)
    np.testing.assert_allclose(c["f"], [4, 0, 0, -4], atol=1e-12)
    assert c["type"].tolist() == ["maximum", "saddle", "saddle", "minimum"]
    np.testing.assert_allclose(np.c_[c["eig[0]"], c["eig[1]"]],
                               [[-6, -6], [-6, 6], [-6, 6], [6, 6]], atol=1e-9)
    header, rows = cli_csv("critical", "x^3 - 3x + y^3 - 3y", "--grid", "x=-3:3:13",
                           "--grid", "y=-3:3:13")
    assert list(c) == header
    frame = c.to_pandas()
    for i, row in enumerate(rows):
        for name, text in zip(header, row, strict=True):
            value = frame[name][i]
            assert value == text if name == "type" else float(text) == value
    assert "saddle" in c._repr_html_()


def test_descend_follows_gradient_descent_in_closed_form() -> None:
    """gd with lr on x² + 10y²: x_k = (1 − 2lr)^k x₀, y_k = (1 − 20lr)^k y₀; the columns
    are the command's, and the note says why the run stopped."""
    d = gradcli.descend("x^2 + 10y^2", {"x": 1, "y": 1}, lr=0.01, steps=5)
    k = np.arange(6)
    assert list(d) == ["step", "x", "y", "f", "|grad f|"]
    np.testing.assert_array_equal(d["step"], k)
    np.testing.assert_allclose(d["x"], 0.98**k, rtol=1e-14)
    np.testing.assert_allclose(d["y"], 0.8**k, rtol=1e-14)
    # the command's stop line, in the library's names (steps=5, not --steps 5)
    assert d.notes == [f"stopped at step 5: steps=5 reached (|grad f| = "
                       f"{np.hypot(2 * 0.98**5, 20 * 0.8**5):.3g})"]
    header, _ = cli_csv("descend", "x^2 + 10y^2", "--from", "x=1,y=1", "--lr", "0.01",
                        "--steps", "5")
    assert list(d) == header
    two = gradcli.descend("x^2 + 10y^2", [{"x": 1, "y": 1}, {"x": -1, "y": 2}], lr=0.01,
                          steps=3)
    assert list(two)[0] == "run" and len(two["run"]) == 8


def test_flow_rows_follow_rk4_on_a_linear_field() -> None:
    """[-y, x] by RK4 with step h: each step multiplies the state by
    I + hA + (hA)²/2 + (hA)³/6 + (hA)⁴/24 (the method on a linear system, by hand)."""
    h = np.pi / 4
    f = gradcli.flow("[-y, x]", {"x": 1, "y": 0}, t=(0, np.pi, 5))
    A = np.array([[0.0, -1.0], [1.0, 0.0]])
    M = sum(np.linalg.matrix_power(h * A, j) / math.factorial(j) for j in range(5))
    states = [np.linalg.matrix_power(M, k) @ [1.0, 0.0] for k in range(5)]
    assert list(f) == ["t", "x", "y", "|F|"]
    np.testing.assert_allclose(np.c_[f["x"], f["y"]], states, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(f["t"], np.linspace(0, np.pi, 5), rtol=1e-15)
    assert f.notes == []
    assert repr(f) == "<flow (rk4) of [-y, x]: 5 rows>\ncolumns: t, x, y, |F|"


def test_bad_requests_name_the_parameter() -> None:
    """Neither seeds nor starts, or both: a one-line error in the library's words."""
    with pytest.raises(EvaluationError, match=r"give one of grid .* or points"):
        gradcli.critical("x^2")
    with pytest.raises(EvaluationError, match=r"give one of start=\{'x': 1, 'y': 1\}"):
        gradcli.descend("x^2")
    with pytest.raises(EvaluationError, match="over the limit of 10"):
        gradcli.flow("[-y, x]", {"x": 1, "y": 0}, t=(0, 1, 100), max_points=10)
    with pytest.raises(EvaluationError, match="every must be a whole number >= 1, got 0"):
        gradcli.descend("x^2", {"x": 1}, every=0)
    with pytest.raises(EvaluationError, match="steps must be a whole number >= 0, got 2.5"):
        gradcli.descend("x^2", {"x": 1}, steps=2.5)
    with pytest.raises(EvaluationError, match=r"t=.0:1:1.: expected start:stop:count"):
        gradcli.flow("[-y, x]", {"x": 1, "y": 0}, t=(0, 1, 1))
    with pytest.raises(EvaluationError, match="'a' is given twice"):
        gradcli.descend("a*x^2", {"x": 1, "a": 2}, at={"a": 1})


def test_names_and_text_cells_are_escaped() -> None:
    """A column name or a text cell is shown as text, never as markup."""
    from gradcli.output.display import RowTable

    table = RowTable({"<b>x</b>": np.array([1.0]),
                      "note": np.array(["<script>alert(1)</script>"], dtype=object)}, "t<i>")
    page = table._repr_html_()
    assert "<script>" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert cells(page) == (["<b>x</b>", "note"], [["1", "<script>alert(1)</script>"]])


def test_a_lazy_result_is_described_not_computed() -> None:
    """Dask arrays: the display names the columns and computes nothing."""
    da = importlib.import_module("dask.array")
    from gradcli.output.display import html_table
    from gradcli.plan.blocks import Block, Layout, Result

    def boom(block: np.ndarray) -> np.ndarray:
        raise AssertionError("computed")

    lazy = da.ones(5, chunks=5).map_blocks(boom, dtype=float)
    page = html_table(Result(Layout([Block("f")]), {"f": lazy}, (5,)), title="eval of 1")
    assert "lazy Dask arrays (not computed here): f" in page


def test_taylor_shows_the_commands_long_table() -> None:
    """exp(x)·sin(y) to order 2 at (0, 0) and (1, 0): one row per point and multi-index,
    coefficient ∂^α f/α! (e^x at α = (0, 1) and (1, 1), else 0), equal to the command's
    CSV; the result still pickles."""
    import pickle

    t = gradcli.evaluate("exp(x)*sin(y)", "taylor", at=[{"x": 0, "y": 0}, {"x": 1, "y": 0}],
                         order=2)
    assert repr(t) == ("<taylor of exp(x)*sin(y): 12 rows>\n"
                       "columns: x, y, order, deg(x), deg(y), coefficient, derivative")
    df = t.to_pandas()
    e = math.e
    np.testing.assert_allclose(df["coefficient"], [0, 0, 1, 0, 1, 0, 0, 0, e, 0, e, 0],
                               rtol=1e-15, atol=1e-300)
    header, rows = cli_csv("taylor", "exp(x)*sin(y)", "--at", "x=1,y=0", "--order", "2")
    assert list(df.columns) == header
    assert [[float(v) for v in row] for row in rows] == df.iloc[6:].to_numpy().tolist()
    assert t["coefficient"].shape == (2, 6)  # the dict of blocks is unchanged
    assert pickle.loads(pickle.dumps(t)).to_pandas().equals(df)
