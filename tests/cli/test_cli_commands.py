"""Every numeric command's exact columns and values, in process through ``main(argv)``.

Truths are the seeds' printed values (/work/shared/seeds 001, 004), hand derivations and
closed forms. stdout is captured (not a terminal), so the automatic format is CSV.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from cli_rows import ok, table


def column(text: str, name: str) -> list[float]:
    header, rows = table(text)
    j = header.index(name)
    return [r[j] for r in rows]


# --- seeds ---------------------------------------------------------------------------------

def test_grad_x2_plus_3x_plus_1_at_4(cli):
    header, rows = ok(cli, "grad", "x^2 + 3x + 1", "--at", "x=4")
    assert header == ["x", "f", "df/dx"]
    assert rows == [[4.0, 29.0, 11.0]]


def test_eval_columns_and_values(cli):
    header, rows = ok(cli, "eval", "x^2 + 3x + 1", "--at", "x=4", "--at", "x=-1")
    assert header == ["x", "f"]
    assert rows == [[4.0, 29.0], [-1.0, -1.0]]


def test_grad_square_on_grid_seed(cli):
    header, rows = ok(cli, "grad", "x^2", "--grid", "x=-2:2:5")
    assert header == ["x", "f", "df/dx"]
    assert [r[0] for r in rows] == [-2.0, -1.0, 0.0, 1.0, 2.0]
    assert [r[2] for r in rows] == [-4.0, -2.0, 0.0, 2.0, 4.0]
    assert [r[1] for r in rows] == [4.0, 1.0, 0.0, 1.0, 4.0]


def test_jacobian_vector_valued_seed(cli):
    header, rows = ok(cli, "jacobian", "[-x^3, 5x]", "--at", "x=0", "--at", "x=1",
                      "--at", "x=2")
    assert header == ["x", "f[0]", "f[1]", "df[0]/dx", "df[1]/dx"]
    cols = list(zip(*rows, strict=True))
    assert list(cols[1]) == [0.0, -1.0, -8.0]
    assert list(cols[2]) == [0.0, 5.0, 10.0]
    assert list(cols[3]) == [0.0, -3.0, -12.0]
    assert list(cols[4]) == [5.0, 5.0, 5.0]


def test_jacobian_matrix_valued_seed(cli):
    header, rows = ok(cli, "jacobian", "[[1,x],[x^2,x^3],[x^4,x^5]]", "--at", "x=1")
    names = [f"f[{i}][{j}]" for i in range(3) for j in range(2)]
    assert header == ["x", *names, *[f"d{n}/dx" for n in names]]
    assert rows[0][1:7] == [1.0] * 6
    assert rows[0][7:] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_eval_matrix_valued_columns(cli):
    header, rows = ok(cli, "eval", "[[1,x],[x^2,x^3]]", "--at", "x=2")
    assert header == ["x", "f[0][0]", "f[0][1]", "f[1][0]", "f[1][1]"]
    assert rows == [[2.0, 1.0, 2.0, 4.0, 8.0]]


def test_jacobian_staged_computation_seed(cli):
    # y = x^2 + x, p = 4y, q = 2y: dp/dx = 4(2x+1) = 28, dq/dx = 14 at x = 3
    header, rows = ok(cli, "jacobian", "[4*(x^2+x), 2*(x^2+x)]", "--at", "x=3")
    assert header == ["x", "f[0]", "f[1]", "df[0]/dx", "df[1]/dx"]
    assert rows == [[3.0, 48.0, 24.0, 28.0, 14.0]]


def test_jacobian_vector_variable_seed(cli):
    header, rows = ok(cli, "jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]")
    xs = [f"x[{k}]" for k in range(4)]
    assert header == [*xs, "f[0]", "f[1]", *[f"df[{i}]/d{x}" for i in range(2) for x in xs]]
    row = rows[0]
    assert row[:4] == [0.0, 1.0, 2.0, 3.0]
    assert row[4:6] == [6.0, 14.0]
    assert row[6:10] == [1.0, 1.0, 1.0, 1.0]
    assert row[10:14] == [0.0, 2.0, 4.0, 6.0]


def test_graph_staged_computation_json(cli):
    status, out, err = cli("graph", "4*(x^2+x)", "--at", "x=3", "-f", "json")
    assert status == 0, err
    doc = json.loads(out)
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert nodes["x"]["value"] == 3.0 and nodes["x"]["adjoint"] == 28.0  # dp/dx
    values = sorted(n["value"] for n in doc["nodes"] if n["id"] != "x")
    assert values == [9.0, 12.0, 48.0]
    by_value = {n["value"]: n for n in doc["nodes"]}
    assert by_value[12.0]["adjoint"] == 4.0  # dp/dy, y = x^2 + x
    assert by_value[9.0]["adjoint"] == 4.0   # dp/dm, m = x^2
    assert nodes[doc["output"]]["value"] == 48.0
    assert nodes[doc["output"]]["adjoint"] == 1.0


def test_graph_table_and_dot(cli):
    status, out, _ = cli("graph", "4*(x^2+x)", "--at", "x=3")
    assert status == 0
    for text in ("48", "12", "28", "9"):
        assert text in out
    status, out, _ = cli("graph", "4*(x^2+x)", "--at", "x=3", "-f", "dot")
    assert status == 0
    assert out.lstrip().startswith("digraph") and "48" in out and "28" in out
    # brackets in the expression are text, not the terminal's markup: the title keeps
    # them, and sum's node adds x and y (1 + 2 = 3, ∂f/∂x = 1)
    status, out, _ = cli("graph", "sum([x, y])", "--at", "x=1,y=2", "-f", "table")
    assert status == 0
    assert out.splitlines()[0].rstrip() == "computation graph of sum([x, y])"


# --- each command's contract -----------------------------------------------------------------

def test_grad_two_variables_closed_form(cli):
    header, rows = ok(cli, "grad", "sin(x)*cos(y)", "--at", "x=1,y=pi/2", "--at", "x=0,y=0")
    assert header == ["x", "y", "f", "df/dx", "df/dy"]
    x, y = 1.0, math.pi / 2
    expect = [x, y, math.sin(x) * math.cos(y), math.cos(x) * math.cos(y),
              -math.sin(x) * math.sin(y)]
    assert rows[0] == pytest.approx(expect, abs=1e-15)
    assert rows[1] == [0.0, 0.0, 0.0, 1.0, 0.0]


def test_grad_on_vector_valued_is_usage_error(cli):
    status, out, err = cli("grad", "[x, x^2]", "--at", "x=1")
    assert status == 2
    assert out == ""
    assert "(2,)" in err and "jacobian" in err and "vjp" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_vjp_columns_values_and_shape_notes(cli):
    # f = (x*y, x - y), v = (1, 2): vJ = (y + 2, x - 2)
    header, rows = ok(cli, "vjp", "[x*y, x-y]", "--vector", "1,2", "--at", "x=3,y=5")
    assert header == ["x", "y", "f[0]", "f[1]", "vjp/dx", "vjp/dy"]
    assert rows == [[3.0, 5.0, 15.0, -2.0, 7.0, 1.0]]
    status, out, _ = cli("vjp", "[-x^3, 5x]", "--vector", "1,0", "--at", "x=1",
                         "-f", "table")
    assert status == 0
    assert "-3" in out
    notes = out.split("┘")[-1]  # the lines under the table
    assert "v" in notes and "J" in notes and "vᵀJ" in notes
    assert "(2,)" in notes and "(2, 1)" in notes and "(1,)" in notes


def test_vjp_matrix_vector(cli):
    header, rows = ok(cli, "vjp", "[[x,y],[x*y,1]]", "--vector", "[[1,0],[0,1]]",
                      "--at", "x=2,y=3")
    assert header[-2:] == ["vjp/dx", "vjp/dy"]
    assert rows[0][-2:] == [1.0, 0.0]


def test_jvp_scalar_and_vector(cli):
    header, rows = ok(cli, "jvp", "sin(x)*cos(y)", "--direction", "x=1,y=0",
                      "--at", "x=1,y=2")
    assert header == ["x", "y", "f", "jvp"]
    assert rows[0][3] == pytest.approx(math.cos(1) * math.cos(2), abs=1e-15)
    header, rows = ok(cli, "jvp", "[x*y, x-y]", "--direction", "x=1,y=2",
                      "--at", "x=1,y=2")
    assert header == ["x", "y", "f[0]", "f[1]", "jvp[0]", "jvp[1]"]
    # J u = (y*1 + x*2, 1 - 2)
    assert rows == [[1.0, 2.0, 2.0, -1.0, 4.0, -1.0]]


def test_hessian_columns_and_values(cli):
    header, rows = ok(cli, "hessian", "x^2*y + y^3", "--at", "x=1,y=2")
    assert header == ["x", "y", "f", "d2f/dxdx", "d2f/dxdy", "d2f/dydx", "d2f/dydy"]
    # f_xx = 2y, f_xy = 2x, f_yy = 6y
    assert rows == [[1.0, 2.0, 10.0, 4.0, 2.0, 2.0, 12.0]]


def test_hessian_vector_variable(cli):
    header, rows = ok(cli, "hessian", "x[0]^2*x[1]", "--at", "x=[1,2]")
    assert header == ["x[0]", "x[1]", "f", "d2f/dx[0]dx[0]", "d2f/dx[0]dx[1]",
                      "d2f/dx[1]dx[0]", "d2f/dx[1]dx[1]"]
    assert rows == [[1.0, 2.0, 2.0, 4.0, 2.0, 2.0, 0.0]]


def test_sin_cos_grid_100x100_closed_form(cli):
    header, rows = ok(cli, "grad", "sin(x)*cos(y)", "--grid", "x=0:2pi:100",
                      "--grid", "y=0:2pi:100")
    assert header == ["x", "y", "f", "df/dx", "df/dy"]
    a = np.array(rows)
    assert a.shape == (10_000, 5)
    axis = np.linspace(0, 2 * np.pi, 100)
    X, Y = np.meshgrid(axis, axis, indexing="ij")  # first grid variable slowest
    assert np.array_equal(a[:, 0], X.ravel()) and np.array_equal(a[:, 1], Y.ravel())
    assert a[-1, 0] == 2 * np.pi  # inclusive stop
    np.testing.assert_allclose(a[:, 2], (np.sin(X) * np.cos(Y)).ravel(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[:, 3], (np.cos(X) * np.cos(Y)).ravel(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[:, 4], (-np.sin(X) * np.sin(Y)).ravel(), rtol=0, atol=1e-12)


def test_grid_order_follows_options_and_fixed_value(cli):
    header, rows = ok(cli, "grad", "x*y + z", "--grid", "y=0:1:2", "--grid", "x=5:6:3",
                      "--grid", "z=0.5")
    assert header == ["y", "x", "z", "f", "df/dy", "df/dx", "df/dz"]
    assert [(r[0], r[1]) for r in rows] == [(0.0, 5.0), (0.0, 5.5), (0.0, 6.0),
                                            (1.0, 5.0), (1.0, 5.5), (1.0, 6.0)]
    for y, x, z, f, fy, fx, fz in rows:
        assert (z, f, fy, fx, fz) == (0.5, x * y + 0.5, x, y, 1.0)


def test_bound_unused_variable_gets_zero_derivative(cli):
    header, rows = ok(cli, "grad", "x^2", "--at", "x=1,y=2")
    assert header == ["x", "y", "f", "df/dx", "df/dy"]
    assert rows == [[1.0, 2.0, 1.0, 2.0, 0.0]]
    header, rows = ok(cli, "jacobian", "[x, 3]", "--grid", "x=0:1:2", "--grid", "y=0:1:2")
    assert header[-4:] == ["df[0]/dx", "df[0]/dy", "df[1]/dx", "df[1]/dy"]
    assert [r[-4:] for r in rows] == [[1.0, 0.0, 0.0, 0.0]] * 4


def test_columns_follow_order_of_at(cli):
    header, rows = ok(cli, "grad", "x*y^2", "--at", "y=3,x=2")
    assert header == ["y", "x", "f", "df/dy", "df/dx"]
    assert rows == [[3.0, 2.0, 18.0, 12.0, 9.0]]


def test_points_csv_with_vector_columns(cli, tmp_path):
    src = tmp_path / "pts.csv"
    src.write_text("x[0],x[1],y\n1,2,3\n4,5,6\n")
    header, rows = ok(cli, "grad", "x[0]*x[1] + y^2", "--points", str(src))
    assert header == ["x[0]", "x[1]", "y", "f", "df/dx[0]", "df/dx[1]", "df/dy"]
    assert rows == [[1.0, 2.0, 3.0, 11.0, 2.0, 1.0, 6.0],
                    [4.0, 5.0, 6.0, 56.0, 5.0, 4.0, 12.0]]


def test_points_from_stdin(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("y,x\n1,2\n0.5,-1\n"))
    header, rows = ok(cli, "grad", "x*y", "--points", "-")
    assert header == ["y", "x", "f", "df/dy", "df/dx"]
    assert rows == [[1.0, 2.0, 2.0, 2.0, 1.0], [0.5, -1.0, -0.5, -1.0, 0.5]]
