"""Vectors and matrices in the language: one array per variable (component axes
after the batch axes), slices and indices, ``@`` and the matrix functions, the stable
reductions through the command line, ``df/dA[i][j]`` columns and block arrays, vectors
and matrices from files; and a vector variable costs linear work.

Truth: closed forms, numpy's values, and central differences through ``--check`` (the
engine's first derivatives against differences of its values; its second against
differences of its first), at points, on grids and with values held fixed.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.lang import ExpressionError


def row(out: str) -> dict[str, float]:
    rows = list(csv.reader(io.StringIO(out)))
    return {name: float(rows[1][i]) for i, name in enumerate(rows[0])}


X = {"x": [1.0, -2.0, 3.0, 0.5]}


# --- indices and slices ------------------------------------------------------------------

@pytest.mark.parametrize("expr,value,grad", [
    ("sum(x[1:3])", -2.0 + 3.0, [0, 1, 1, 0]),
    ("sum(x[::2])", 1.0 + 3.0, [1, 0, 1, 0]),
    ("x[-1]", 0.5, [0, 0, 0, 1]),
    ("sum(x[-3:-1] * [2, 3])", -4.0 + 9.0, [0, 2, 3, 0]),
    ("sum(x[::-1] * [1, 2, 3, 4])", 0.5 + 6.0 - 6.0 + 4.0, [4, 3, 2, 1]),
    ("dot(x[1:], x[:3])", -2.0 - 6.0 + 1.5, [-2, 4, -1.5, 3]),
])
def test_slices_and_negative_indices(expr, value, grad):
    r = gradcli.evaluate(expr, "grad", at=X)
    assert r["f"].tolist() == [value]
    assert r["df/dx"].tolist() == [grad]


def test_rows_columns_and_entries_of_a_matrix():
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert gradcli.evaluate("A[1]", "eval", at={"A": a})["f"].tolist() == [[4.0, 5.0, 6.0]]
    assert gradcli.evaluate("A[:, 2]", "eval", at={"A": a})["f"].tolist() == [[3.0, 6.0]]
    assert gradcli.evaluate("A[1, -1] + A[0][1]", "eval", at={"A": a})["f"].tolist() == [8.0]
    g = gradcli.evaluate("sum(A[:, 1:])", "grad", at={"A": a})["df/dA"]
    assert g.tolist() == [[[0, 1, 1], [0, 1, 1]]]


@pytest.mark.parametrize("expr,message,position", [
    ("x[4]", "index 4 is out of range for length 4", 1),
    ("x[-5]", "index -5 is out of range for length 4", 1),
    ("x[3:1]", "the slice [3:1] of length 4 is empty", 1),
    ("x[0, 0]", "2 indices for a value of shape (4,)", 1),
    ("x[0][0]", "cannot index a scalar", 4),
])
def test_index_errors_have_a_caret(expr, message, position):
    with pytest.raises(ExpressionError) as info:
        gradcli.evaluate(expr, "eval", at=X)
    assert info.value.reason == message and info.value.position == position


# --- @ and the matrix functions ----------------------------------------------------------

A2 = np.array([[2.0, 1.0], [1.0, 3.0]])


def test_matmul_every_way_with_its_jacobians():
    at = {"A": A2.tolist(), "x": [1.0, -1.0], "B": [[0.0, 1.0], [1.0, 0.0]]}
    j = gradcli.evaluate("A @ x", "jacobian", at=at)
    assert j["f"].tolist() == [(A2 @ [1, -1]).tolist()]
    assert j["df/dx"][0].tolist() == A2.tolist()  # d(Ax)/dx = A
    # d(Ax)_i/dA_kl = δ_ik x_l
    np.testing.assert_array_equal(j["df/dA"][0], np.einsum("ik,l->ikl", np.eye(2), [1, -1]))
    v = gradcli.evaluate("x @ A", "jacobian", at=at)
    assert v["df/dx"][0].tolist() == A2.T.tolist()
    m = gradcli.evaluate("A @ B", "eval", at=at)["f"][0]
    assert m.tolist() == (A2 @ [[0, 1], [1, 0]]).tolist()
    d = gradcli.evaluate("x @ x", "grad", at=at)
    assert (d["f"].tolist(), d["df/dx"].tolist()) == ([2.0], [[2.0, -2.0]])


def test_matrix_functions_against_closed_forms(cli):
    at = "A=[[2,1],[1,3]],u=[1,2],v=[3,-1],b=[1,1]"
    status, out, _ = cli("grad", "det(A) + trace(A) + sum(inv(A)) + sum(solve(A, b))"
                         " + sum(outer(u, v)) + sum(transpose(A) * [[1, 0], [0, 0]])",
                         "--at", at)
    got = row(out)
    ai = np.linalg.inv(A2)
    want = (np.linalg.det(A2) + 5 + ai.sum() + np.linalg.solve(A2, [1, 1]).sum()
            + np.outer([1, 2], [3, -1]).sum() + 2.0)
    assert status == 0 and got["f"] == pytest.approx(want, rel=1e-14)
    # d/dA: cofactor + I - A⁻ᵀ11ᵀA⁻ᵀ - (A⁻ᵀ1) xᵀ + e00
    ones = np.ones((2, 2))
    x = np.linalg.solve(A2, [1, 1])
    grad = (np.linalg.det(A2) * ai.T + np.eye(2) - ai.T @ ones @ ai.T
            - np.outer(np.linalg.solve(A2.T, [1, 1]), x) + np.array([[1, 0], [0, 0]]))
    for i in range(2):
        for j in range(2):
            assert got[f"df/dA[{i}][{j}]"] == pytest.approx(grad[i, j], rel=1e-13)
    assert [got["df/du[0]"], got["df/du[1]"]] == [2.0, 2.0]  # Σ_j v_j
    assert [got["df/db[0]"], got["df/db[1]"]] == pytest.approx(
        np.linalg.solve(A2.T, [1, 1]).tolist(), rel=1e-14)


def test_singular_inverse_is_nan_with_the_usual_warning(cli):
    status, out, err = cli("eval", "inv(A)", "--at", "A=[[1,2],[2,4]]")
    assert status == 0 and "nan" in out
    assert err.strip() == "warning: 4 non-finite result values (nan or inf) in the output"
    status, _, err = cli("grad", "sum(solve(A, b))", "--at", "A=[[1,2],[2,4]],b=[1,1]",
                         "--strict")
    assert status == 1 and "non-finite" in err and "Traceback" not in err


@pytest.mark.parametrize("expr,message", [
    ("A @ x3", "cannot multiply shapes (2, 2) @ (3,)"),
    ("det(x3)", "det needs a square matrix, got shape (3,)"),
    ("inv(B)", "inv needs a square matrix, got shape (2, 3)"),
    ("transpose(x3)", "transpose needs a matrix (a vector is neither a row nor a column: "
     "x @ A and A @ x both work), got shape (3,)"),
    ("solve(A, x3)", "solve(A, b) needs b of length 2 (a vector, or a matrix with 2 rows), "
     "got shape (3,)"),
    ("logsumexp(A)", "logsumexp needs a vector, got shape (2, 2)"),
    ("cross_entropy(x3, 3)", "cross_entropy's class must be a whole number from 0 to 2, got 3"),
    ("norm(x3, 0.5)", "norm(v, p) needs a constant p >= 1 (or inf)"),
    ("A + x3", "operands have different shapes (2, 2) and (3,)"),
    ("sum(2)", "sum needs a vector argument, got a scalar"),
    ("max(2)", "max needs a vector or matrix, got a scalar"),
])
def test_shape_errors_name_both_shapes(expr, message):
    at = {"A": A2.tolist(), "x3": [1.0, 2.0, 3.0], "B": [[1, 2, 3], [4, 5, 6]]}
    with pytest.raises(ExpressionError) as info:
        gradcli.evaluate(expr, "eval", at=at)
    assert info.value.reason == message


# --- the stable reductions through the command line --------------------------------------

def test_logsumexp_at_a_thousand_through_the_cli(cli):
    status, out, _ = cli("grad", "logsumexp(x)", "--at", "x=[1000,1000]")
    assert status == 0 and out.splitlines() == [
        "x[0],x[1],f,df/dx[0],df/dx[1]", f"1000.0,1000.0,{1000 + math.log(2)!r},0.5,0.5"]
    status, out, _ = cli("grad", "log(sum(exp(x)))", "--at", "x=[1000,1000]")
    assert "inf" in out  # the naive formula overflows, as the issue says


def test_softmax_and_cross_entropy_at_mixed_extremes(cli):
    status, out, _ = cli("jacobian", "softmax(x)", "--at", "x=[1000,-1000,999]")
    got = row(out)
    s = np.array([1.0, 0.0, math.exp(-1)]) / (1 + math.exp(-1))
    assert status == 0
    assert [got["f[0]"], got["f[1]"], got["f[2]"]] == pytest.approx(s.tolist(), rel=1e-15)
    jac = np.diag(s) - np.outer(s, s)
    for i in range(3):
        for j in range(3):
            assert got[f"df[{i}]/dx[{j}]"] == pytest.approx(jac[i, j], rel=1e-14, abs=1e-300)
    status, out, _ = cli("grad", "cross_entropy(x, k)", "--at",
                         "x=[1000,-1000,999],k=1")
    got = row(out)
    # -log softmax(x)_1 = lse(x) - x_1 = 1000 + log(1 + e^-1) + 1000
    assert got["f"] == pytest.approx(2000 + math.log1p(math.exp(-1)), rel=1e-15)
    assert [got["df/dx[0]"], got["df/dx[1]"], got["df/dx[2]"]] == pytest.approx(
        [s[0], s[1] - 1, s[2]], rel=1e-15)
    assert got["df/dk"] == 0.0


def test_cross_entropy_class_per_point_from_a_points_file(cli, tmp_path):
    path = tmp_path / "logits.csv"
    path.write_text("z[0],z[1],k\n2,0,0\n2,0,1\n0,0,0\n")
    status, out, _ = cli("grad", "cross_entropy(z, k)", "-p", str(path))
    rows = list(csv.DictReader(io.StringIO(out)))
    lse = math.log(math.exp(2) + 1)
    assert status == 0
    assert [float(r["f"]) for r in rows] == pytest.approx([lse - 2, lse, math.log(2)],
                                                          rel=1e-15)
    assert float(rows[1]["df/dz[1]"]) == pytest.approx(1 / (math.exp(2) + 1) - 1, rel=1e-15)


def test_max_min_norms_cumsum_of_one_vector(cli):
    at = {"x": [3.0, -5.0, 3.0, 1.0]}
    r = gradcli.evaluate("max(x)", "grad", at=at)
    assert (r["f"].tolist(), r["df/dx"].tolist()) == ([3.0], [[0.5, 0, 0.5, 0]])
    assert gradcli.evaluate("min(x)", "grad", at=at)["df/dx"].tolist() == [[0, 1.0, 0, 0]]
    assert gradcli.evaluate("max(x, 2)", "eval", at={"x": 1.0})["f"].tolist() == [2.0]
    r = gradcli.evaluate("norm(x, 1)", "grad", at=at)
    assert (r["f"].tolist(), r["df/dx"].tolist()) == ([12.0], [[1, -1, 1, 1]])
    r = gradcli.evaluate("norm(x, inf)", "grad", at=at)
    assert (r["f"].tolist(), r["df/dx"].tolist()) == ([5.0], [[0, -1.0, 0, 0]])
    r = gradcli.evaluate("norm(x, 3)", "grad", at=at)
    n = (27 + 125 + 27 + 1) ** (1 / 3)
    assert r["f"][0] == pytest.approx(n, rel=1e-15)
    np.testing.assert_allclose(r["df/dx"][0], np.sign(at["x"]) * np.abs(at["x"]) ** 2 / n ** 2,
                               rtol=1e-14)
    assert gradcli.evaluate("norm(x, 2)", "eval", at=at)["f"][0] == pytest.approx(
        math.sqrt(44), rel=1e-15)
    j = gradcli.evaluate("cumsum(x)", "jacobian", at=at)
    assert j["f"].tolist() == [[3.0, -2.0, 1.0, 2.0]]
    assert j["df/dx"][0].tolist() == np.tril(np.ones((4, 4))).tolist()


# --- blocks: shapes of matrix-shaped results ------------------------------------------------

def test_matrix_variable_blocks_and_columns(cli, tmp_path):
    pts = {"A": np.stack([A2, 2 * A2, np.eye(2)]), "x": np.ones((3, 2))}
    r = gradcli.evaluate("x @ A @ x", "grad", points=pts)
    assert {k: v.shape for k, v in r.items()} == {"A": (3, 2, 2), "x": (3, 2), "f": (3,),
                                                 "df/dA": (3, 2, 2), "df/dx": (3, 2)}
    np.testing.assert_array_equal(r["df/dA"], np.ones((3, 2, 2)))  # d(xᵀAx)/dA = xxᵀ
    h = gradcli.evaluate("x @ A @ x", "hessian", points=pts)
    assert h["d2f/dAdx"].shape == (3, 2, 2, 2) and h["d2f/dxdx"].shape == (3, 2, 2)
    np.testing.assert_array_equal(h["d2f/dxdx"], pts["A"] + pts["A"].transpose(0, 2, 1))
    status, out, _ = cli("grad", "x @ A @ x", "--at", "A=[[2,1],[1,3]],x=[1,1]")
    assert out.splitlines()[0] == ("A[0][0],A[0][1],A[1][0],A[1][1],x[0],x[1],f,df/dA[0][0],"
                                   "df/dA[0][1],df/dA[1][0],df/dA[1][1],df/dx[0],df/dx[1]")
    status, _, _ = cli("jacobian", "A @ x", "--at", "A=[[2,1],[1,3]],x=[1,1]", "-o",
                       str(tmp_path / "j.npz"))
    data = np.load(tmp_path / "j.npz")
    assert status == 0 and data["df/dA"].shape == (1, 2, 2, 2) and data["f"].shape == (1, 2)


def test_points_file_components_in_any_column_order(cli, tmp_path):
    """Each A[i][j] column is that entry wherever it stands in the header: A = [[1, 2],
    [3, 4]] written as A[1][0], A[0][0], A[0][1], A[1][1] has det -2 and the gradient
    (its cofactor matrix) [[4, -3], [-2, 1]]; with and without a quoted cell (the two
    parsing paths)."""
    for row in ("3,1,2,4", '"3",1,2,4'):
        path = tmp_path / "a.csv"
        path.write_text(f"A[1][0],A[0][0],A[0][1],A[1][1]\n{row}\n")
        status, out, _ = cli("grad", "det(A)", "-p", str(path))
        values = [float(v) for v in out.splitlines()[1].split(",")]
        assert status == 0 and values[:4] == [1, 2, 3, 4]
        assert values[4] == pytest.approx(-2, rel=1e-14)
        assert values[5:] == pytest.approx([4, -3, -2, 1], rel=1e-14)
    path.write_text("x[1],x[0]\n1,2\n")
    status, out, _ = cli("eval", "x[0] - x[1]", "-p", str(path))
    assert status == 0 and out.splitlines() == ["x[0],x[1],f", "2.0,1.0,1.0"]


def test_literals_and_arrays_meet():
    r = gradcli.evaluate("[1, 2] * x + [x[1], y]", "jacobian", at={"x": [3.0, 4.0], "y": 5.0})
    assert r["f"].tolist() == [[3 + 4, 8 + 5]]
    assert r["df/dx"][0].tolist() == [[1, 1], [0, 2]] and r["df/dy"][0].tolist() == [0, 1]
    m = gradcli.evaluate("[x, 2*x]", "eval", at={"x": [1.0, 2.0]})["f"]
    assert m.tolist() == [[[1, 2], [2, 4]]]
    lit = gradcli.evaluate("[x, y]", "eval", at={"x": 1.0, "y": 2.0})
    assert set(lit) == {"x", "y", "f[0]", "f[1]"}  # a literal of scalars: one array each


def test_held_arrays_on_points_and_grids_get_per_point_derivatives():
    """w held fixed (one value) still gets its derivative at every point."""
    r = gradcli.evaluate("y * sum(w * w)", "grad", points={"y": np.array([1.0, 2.0, 3.0])},
                         fixed={"w": [1.0, -2.0]})
    assert r["df/dw"].tolist() == [[2, -4], [4, -8], [6, -12]]
    g = gradcli.evaluate("x * (A @ [1, y])[0]", "grad",
                         grid={"x": (1, 2, 2), "y": (0, 1, 3)}, fixed={"A": [[1, 2], [3, 4]]})
    assert g["df/dA"].shape == (2, 3, 2, 2)
    np.testing.assert_array_equal(g["df/dA"][1, 2], [[2, 2], [0, 0]])  # x·[1, y] at x=2, y=1


# --- central differences through --check: every function, at points, grids, held ------------

CHECKED = [
    ("grad", "logsumexp(x*y)"), ("grad", "sum(softmax(x) * [1, 2, 3])"),
    ("grad", "sum(log_softmax(x) * [1, -2, 0.5])"), ("grad", "cross_entropy(x, 2) * y"),
    ("grad", "max(x) + min(x + y)"), ("grad", "norm(x, 3) + norm(x, 1.5) + norm(x)"),
    ("grad", "sum(cumsum(x)^2)"), ("grad", "det(A) * y"), ("grad", "trace(inv(A)) + y"),
    ("grad", "sum(solve(A, x)) * y"), ("grad", "x @ A @ x"), ("grad", "sum(outer(x, x)^2)"),
    ("grad", "sum(transpose(A) @ x)"), ("grad", "sum(x[1:] * x[:2]) + A[1, 0]*x[-1]"),
    ("jacobian", "softmax(x*y)"), ("jacobian", "A @ x"), ("jacobian", "cumsum(x) * y"),
    ("hessian", "logsumexp(x*y)"), ("hessian", "sum(softmax(x)^2)"),
    ("hessian", "cross_entropy(x, 1)"), ("hessian", "det(A)*y"), ("hessian", "x @ inv(A) @ x"),
    ("hessian", "sum(solve(A, x))"), ("hessian", "norm(x, 3)"), ("hessian", "sum(outer(x, x))"),
]


@pytest.mark.parametrize("what,expr", CHECKED, ids=[f"{w} {e}" for w, e in CHECKED])
def test_every_function_against_central_differences(cli, tmp_path, what, expr):
    """At three points from a file (x spaced, so no ties), with A held fixed; and on a grid
    of y with x and A held."""
    path = tmp_path / "p.csv"
    path.write_text("x[0],x[1],x[2],y\n0.3,-0.9,1.7,0.8\n-1.1,0.4,0.1,1.3\n2.0,0.6,-0.5,-0.7\n")
    a = "A=[[2.5,0.4,-0.3],[0.2,1.8,0.5],[-0.6,0.1,3.1]]"
    status, _, err = cli(what, expr, "-p", str(path), "--at", a, "--check")
    assert status == 0, err
    status, _, err = cli(what, expr, "--grid", "y=-1:1:3", "--at",
                         f"{a},x=[0.3,-0.9,1.7]", "--check")
    assert status == 0, err


# --- vectors and matrices from files -------------------------------------------------------

def test_vector_files_npy_and_csv_give_the_same_result(cli, tmp_path):
    v = np.random.default_rng(0).normal(size=1000)
    np.save(tmp_path / "v.npy", v)
    (tmp_path / "v.csv").write_text("\n".join(map(repr, v.tolist())) + "\n")
    (tmp_path / "row.csv").write_text(",".join(map(repr, v.tolist())) + "\n")
    results = []
    for name in ("v.npy", "v.csv", "row.csv"):
        status, _, err = cli("grad", "logsumexp(x)", "--at", f"x=@{tmp_path / name}",
                             "-o", str(tmp_path / f"{name}.npz"))
        assert status == 0, err
        results.append(np.load(tmp_path / f"{name}.npz"))
    for r in results:
        np.testing.assert_array_equal(r["x"][0], v)
        np.testing.assert_array_equal(r["df/dx"], results[0]["df/dx"])
    s = np.exp(v - v.max())
    np.testing.assert_allclose(results[0]["df/dx"][0], s / s.sum(), rtol=1e-13)


def test_matrix_from_a_csv_file_and_held_beside_points(cli, tmp_path):
    (tmp_path / "A.csv").write_text("2,1\n1,3\n")
    (tmp_path / "x.csv").write_text("x[0],x[1]\n1,0\n0,1\n")
    status, out, _ = cli("eval", "x @ A @ x", "-p", str(tmp_path / "x.csv"), "--at",
                         f"A=@{tmp_path / 'A.csv'}")
    assert status == 0 and [r.split(",")[-1] for r in out.splitlines()[1:]] == ["2.0", "3.0"]


@pytest.mark.parametrize("name,content,message", [
    ("bad.csv", "1\n2\nabc\n", "line 3: the line's only value is not a number"),
    ("badrow.csv", "1,2\n3,abc\n", "line 2: 'abc' is not a number"),
    ("ragged.csv", "1,2\n3\n", "line 2 has 1 values, line 1 has 2"),
    ("empty.csv", "\n\n", "the file holds no values"),
    ("v.json", "[1, 2]", "a vector file is .npy, .csv or .txt, not '.json'"),
    ("bin.csv", b"1\n\x00\x01\n", "is not text"),
    ("cube.npy", np.zeros((2, 2, 2)), "holds an array of shape (2, 2, 2)"),
    ("objects.npy", np.array([1, "a"], dtype=object), "not numbers"),
    ("missing.npy", None, "no such file"),
])
def test_bad_vector_files_are_clear_errors(cli, tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        np.save(path, content, allow_pickle=True)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    status, out, err = cli("eval", "sum(x)", "--at", f"x=@{path}")
    assert status == 2 and out == "" and message in err, err
    assert err.startswith(f"gradcli: error: --at x=@{path}")


def test_vector_file_over_the_limit_is_refused(cli, tmp_path, monkeypatch):
    from gradcli.cli import inputs

    monkeypatch.setattr(inputs, "MAX_ARRAY_BYTES", 1000)
    np.save(tmp_path / "v.npy", np.ones(200))
    (tmp_path / "v.csv").write_text("1.5\n" * 400)
    for name in ("v.npy", "v.csv"):
        status, _, err = cli("eval", "sum(x)", "--at", f"x=@{tmp_path / name}")
        assert status == 2 and ("over the limit of 1,000 bytes" in err
                                or "longer than 1,000 bytes" in err), err


def test_files_are_accepted_for_direction_and_vector(cli, tmp_path):
    np.save(tmp_path / "u.npy", np.array([1.0, 0.0, 0.0]))
    status, out, _ = cli("jvp", "sum(x^2)", "--at", "x=[1,2,3]", "--direction",
                         f"x=@{tmp_path / 'u.npy'}")
    assert status == 0 and row(out)["jvp"] == 2.0
    status, out, _ = cli("vjp", "x^2", "--at", "x=[1,2,3]", "--vector",
                         f"@{tmp_path / 'u.npy'}")
    assert status == 0 and row(out)["vjp/dx[0]"] == 2.0


# --- linear in the vector's length ----------------------------------------------

def test_a_long_vector_is_one_block_and_one_sweep():
    """A 10⁶-vector is one leaf: its gradient block comes from one reverse sweep of three
    operations (no per-element engine work, no per-element columns)."""
    from gradcli.evaluation import prepare

    x = np.linspace(-1, 1, 10**6)
    prepared = prepare("logsumexp(x) + sum(x^2)", "grad", at={"x": x})
    assert prepared.program.op_count == 4 and prepared.plan.sweeps() == 1
    assert [(b.name, b.shape) for b in prepared.layout.blocks] == [("f", ()),
                                                                   ("df/dx", (10**6,))]
    r = prepared.run()
    s = np.exp(x - x.max())
    np.testing.assert_allclose(r.arrays["df/dx"][0], s / s.sum() + 2 * x, rtol=1e-12)


def test_hessian_of_a_vector_is_one_sweep_per_component():
    x = np.linspace(-1, 1, 30)
    r = gradcli.evaluate("sum(x^2)*sum(x)", "hessian", at={"x": x})
    want = 2 * np.eye(30) * x.sum() + 2 * x[:, None] + 2 * x[None, :]
    np.testing.assert_allclose(r["d2f/dxdx"][0], want, rtol=1e-13, atol=1e-13)
    with pytest.raises(EvaluationError, match="values per point"):
        gradcli.evaluate("sum(x^2)", "hessian", at={"x": np.ones(20_000)})
