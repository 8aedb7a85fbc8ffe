"""Derivative blocks: one array per block in ``.npz`` and
``gradcli.evaluate``, the same scalar columns as before in CSV, JSON and tables.

Truth: closed forms. f = sum(x^2)·sum(x)·y with S1 = sum(x), S2 = sum(x^2):
df/dx_i = (2 x_i S1 + S2) y, df/dy = S2 S1, d2f/dx_i dx_j = (2 δ_ij S1 + 2 x_i + 2 x_j) y,
d2f/dx_i dy = 2 x_i S1 + S2, d2f/dy dy = 0.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

import gradcli
from gradcli.cli.main import main
from gradcli.output.csv_writer import write_csv
from gradcli.output.json_writer import dumps_json
from gradcli.plan.blocks import INPUT, TEXT, Block, Layout, Result, as_result

EXPR = "sum(x^2)*sum(x)*y"


def closed_form(x: np.ndarray, y: float) -> dict[str, np.ndarray]:
    s1, s2 = x.sum(), (x * x).sum()
    n = x.size
    return {"f": s2 * s1 * y, "df/dx": (2 * x * s1 + s2) * y, "df/dy": s2 * s1,
            "d2f/dxdx": (2 * np.eye(n) * s1 + 2 * x[:, None] + 2 * x[None, :]) * y,
            "d2f/dxdy": 2 * x * s1 + s2, "d2f/dydx": 2 * x * s1 + s2, "d2f/dydy": 0.0}


POINTS = [{"x": [1.0, 2.0, 3.0], "y": 2.0}, {"x": [-1.0, 0.5, 4.0], "y": -0.5}]


def test_evaluate_gives_one_array_per_block() -> None:
    r = gradcli.evaluate(EXPR, "hessian", at=POINTS)
    assert list(r) == ["x", "y", "f", "d2f/dxdx", "d2f/dxdy", "d2f/dydx", "d2f/dydy"]
    shapes = {k: v.shape for k, v in r.items()}
    assert shapes == {"x": (2, 3), "y": (2,), "f": (2,), "d2f/dxdx": (2, 3, 3),
                      "d2f/dxdy": (2, 3), "d2f/dydx": (2, 3), "d2f/dydy": (2,)}
    for i, p in enumerate(POINTS):
        truth = closed_form(np.array(p["x"]), p["y"])
        for name in ("f", "d2f/dxdx", "d2f/dxdy", "d2f/dydx", "d2f/dydy"):
            np.testing.assert_allclose(r[name][i], truth[name], rtol=1e-14, atol=1e-14)
    g = gradcli.evaluate(EXPR, "grad", at=POINTS)
    assert {k: v.shape for k, v in g.items()} == {"x": (2, 3), "y": (2,), "f": (2,),
                                                 "df/dx": (2, 3), "df/dy": (2,)}
    np.testing.assert_allclose(g["df/dx"][1], closed_form(np.array(POINTS[1]["x"]), -0.5)
                               ["df/dx"], rtol=1e-14)


def test_jacobian_and_vjp_blocks_per_output_component() -> None:
    pts = {"x": np.array([[0.0, 1, 2, 3], [1, 1, 1, 1]]), "y": np.array([2.0, 3.0])}
    j = gradcli.evaluate("[sum(x), sum(x^2)*y]", "jacobian", points=pts)
    assert list(j) == ["x", "y", "f[0]", "f[1]", "df[0]/dx", "df[0]/dy", "df[1]/dx", "df[1]/dy"]
    np.testing.assert_array_equal(j["df[0]/dx"], np.ones((2, 4)))
    np.testing.assert_array_equal(j["df[1]/dx"], 2 * pts["x"] * pts["y"][:, None])
    np.testing.assert_array_equal(j["df[1]/dy"], (pts["x"] ** 2).sum(axis=1))
    v = gradcli.evaluate("[sum(x), sum(x^2)*y]", "vjp", points=pts, vector=[1.0, 2.0])
    np.testing.assert_array_equal(v["vjp/dx"], 1 + 4 * pts["x"] * pts["y"][:, None])


def test_csv_keeps_todays_scalar_columns(capsys) -> None:
    status = main(["hessian", EXPR, "--at", "x=[1,2,3],y=2"])
    out = capsys.readouterr().out
    assert status == 0
    header, row = list(csv.reader(io.StringIO(out)))
    ins = ["x[0]", "x[1]", "x[2]", "y"]
    assert header == [*ins, "f", *[f"d2f/d{a}d{b}" for a in ins for b in ins]]
    truth = closed_form(np.array([1.0, 2.0, 3.0]), 2.0)
    values = dict(zip(header, map(float, row), strict=True))
    for i in range(3):
        assert values[f"d2f/dx[{i}]dy"] == truth["d2f/dxdy"][i]
        for k in range(3):
            assert values[f"d2f/dx[{i}]dx[{k}]"] == truth["d2f/dxdx"][i, k]
    assert values["d2f/dydy"] == 0.0


@pytest.mark.parametrize("n", [40, pytest.param(300, marks=pytest.mark.slow)])
def test_npz_of_a_vector_hessian_is_one_square_array(capsys, tmp_path, n) -> None:
    """A 300-vector's Hessian is one n x n array, not 90,000 scattered columns."""
    x = np.linspace(-1, 1, n)
    target = tmp_path / "h.npz"
    at = "x=[" + ",".join(map(repr, x.tolist())) + "]"
    status = main(["hessian", "sum(x^2)*sum(x)", "--at", at, "-o", str(target)])
    assert status == 0, capsys.readouterr().err
    with np.load(target) as data:
        assert list(data) == ["x", "f", "d2f/dxdx"]
        assert data["x"].shape == (1, n) and data["d2f/dxdx"].shape == (1, n, n)
        truth = 2 * np.eye(n) * x.sum() + 2 * x[:, None] + 2 * x[None, :]
        np.testing.assert_allclose(data["d2f/dxdx"][0], truth, rtol=1e-13, atol=1e-13)


def test_npz_with_check_and_record_npy_use_blocks(capsys, tmp_path) -> None:
    """The in-memory writer (--check) and the .npy record stream store blocks too."""
    at = ["--at", "x=[1,2,3],y=2", "--at", "x=[-1,0.5,4],y=-0.5"]
    main(["grad", EXPR, *at, "--check", "-o", str(tmp_path / "g.npz")])
    main(["grad", EXPR, *at, "-o", str(tmp_path / "g.npy")])
    capsys.readouterr()
    record = np.load(tmp_path / "g.npy")
    with np.load(tmp_path / "g.npz") as data:
        assert data["df/dx"].shape == record["df/dx"].shape == (2, 3)
        np.testing.assert_array_equal(data["df/dx"], record["df/dx"])
        truth = closed_form(np.array([-1.0, 0.5, 4.0]), -0.5)
        np.testing.assert_allclose(record["df/dx"][1], truth["df/dx"], rtol=1e-14)
        np.testing.assert_array_equal(record["x"], data["x"])


# --- the block layer itself ------------------------------------------------------------------

def test_block_templates_name_their_columns() -> None:
    b = Block.template(["d2f/d", "x", (2,), "d", "y", (3,)])
    assert (b.name, b.shape, b.size) == ("d2f/dxdy", (2, 3), 6)
    assert b.column_names() == [f"d2f/dx[{i}]dy[{j}]" for i in range(2) for j in range(3)]
    assert Block.template(["df/d", "x", ()]).column_names() == ["df/dx"]
    matrix = Block.template(["df/d", "A", (2, 2)])  # a later matrix variable
    assert matrix.column_names() == ["df/dA[0][0]", "df/dA[0][1]", "df/dA[1][0]",
                                     "df/dA[1][1]"]
    assert Block.template(["x", (2,)], INPUT).column(1) == "x[1]"


def test_result_reads_as_scalar_columns_in_layout_order() -> None:
    a = Block.template(["d2f/d", "x", (2,), "d", "x", (2,)])
    b = Block.template(["d2f/d", "x", (2,), "d", "y", ()])
    order = [(0, 0), (0, 1), (1, 0), (0, 2), (0, 3), (1, 1)]  # a Hessian's interleaving
    arrays = {"d2f/dxdx": np.arange(12.0).reshape(3, 2, 2), "d2f/dxdy": -np.arange(6.0)
              .reshape(3, 2)}
    r = Result(Layout([a, b], order), arrays, (3,))
    assert list(r) == ["d2f/dx[0]dx[0]", "d2f/dx[0]dx[1]", "d2f/dx[0]dy", "d2f/dx[1]dx[0]",
                       "d2f/dx[1]dx[1]", "d2f/dx[1]dy"]
    np.testing.assert_array_equal(r["d2f/dx[1]dx[0]"], [2.0, 6.0, 10.0])
    np.testing.assert_array_equal(r["d2f/dx[1]dy"], [-1.0, -3.0, -5.0])
    lines = io.StringIO()
    write_csv(lines, r)
    rows = list(csv.reader(io.StringIO(lines.getvalue())))
    assert rows[0] == list(r) and rows[2] == ["4.0", "5.0", "-2.0", "6.0", "7.0", "-3.0"]
    doc = json.loads(dumps_json(r))
    assert doc["columns"] == list(r) and doc["rows"][2] == [8.0, 9.0, -4.0, 10.0, 11.0, -5.0]


def test_plain_mappings_become_scalar_and_text_blocks() -> None:
    r = as_result({"id": np.array(["a", "b"], dtype=object), "v": np.array([1.0, 2.0])})
    assert [(b.name, b.kind) for b in r.blocks] == [("id", TEXT), ("v", "result")]
    with pytest.raises(ValueError, match="two blocks"):
        Layout([Block("f"), Block("f")])


@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_csv_and_json_are_byte_identical(threads) -> None:
    """Chunks formatted on threads come out in order; grid axes formatted once."""
    r = gradcli.evaluate("sin(x)*cos(y)", "grad", grid={"x": (0, 1, 300), "y": (-1, 1, 250)})
    one, many = io.BytesIO(), io.BytesIO()
    write_csv(one, r, chunk_rows=65536, threads=1)
    write_csv(many, r, chunk_rows=7000, threads=threads)
    assert one.getvalue() == many.getvalue()
    rows = one.getvalue().decode().splitlines()
    assert len(rows) == 1 + 300 * 250
    x, y = np.linspace(0, 1, 300), np.linspace(-1, 1, 250)
    assert rows[1 + 250 * 7 + 3].split(",")[:2] == [repr(x[7].item()), repr(y[3].item())]
    assert dumps_json(r, chunk_rows=5000, threads=threads) == dumps_json(r, threads=1)
