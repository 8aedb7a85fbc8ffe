"""``gradcli.evaluate``: column names, shapes, dtypes, errors, and values against closed forms
and central differences on grids and point sets."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.lang import ExpressionError

evaluate = gradcli.evaluate

GX = np.linspace(-1.0, 2.0, 7)
GY = np.linspace(0.5, 3.0, 5)
X, Y = np.meshgrid(GX, GY, indexing="ij")
GRID = {"x": (-1.0, 2.0, 7), "y": (0.5, 3.0, 5)}
RNG = np.random.default_rng(1234)
PX, PY = RNG.uniform(-2, 2, 11), RNG.uniform(0.5, 2, 11)


def full(a, shape=(7, 5)):
    return np.broadcast_to(a, shape)


# --- names, shapes, dtypes -------------------------------------------------------------------

def test_seed_square_on_grid():
    r = evaluate("x^2", "grad", grid={"x": (-2, 2, 5)})
    assert list(r) == ["x", "f", "df/dx"]
    assert r["df/dx"].tolist() == [-4.0, -2.0, 0.0, 2.0, 4.0]
    assert r["x"].tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0]


def test_seed_quadratic_at_point():
    r = evaluate("x^2 + 3x + 1", "grad", at=[{"x": 4.0}])
    assert {k: v.tolist() for k, v in r.items()} == {"x": [4.0], "f": [29.0], "df/dx": [11.0]}


def test_grid_shapes_and_broadcast_axes():
    r = evaluate("sin(x)*cos(y)", "grad", grid=GRID)
    assert list(r) == ["x", "y", "f", "df/dx", "df/dy"]
    assert r["f"].shape == r["df/dx"].shape == r["df/dy"].shape == (7, 5)
    assert np.broadcast_shapes(r["x"].shape, (7, 5)) == (7, 5)
    assert np.broadcast_shapes(r["y"].shape, (7, 5)) == (7, 5)
    assert np.array_equal(full(r["x"]), X) and np.array_equal(full(r["y"]), Y)
    np.testing.assert_allclose(r["f"], np.sin(X) * np.cos(Y), rtol=0, atol=1e-14)
    np.testing.assert_allclose(r["df/dx"], np.cos(X) * np.cos(Y), rtol=0, atol=1e-14)
    np.testing.assert_allclose(r["df/dy"], -np.sin(X) * np.sin(Y), rtol=0, atol=1e-14)


def test_first_grid_variable_is_axis_0_and_fixed_values():
    r = evaluate("x - 10*y + z", "eval", grid={"y": (0, 1, 2), "x": (0, 1, 3), "z": 0.25})
    assert list(r) == ["y", "x", "z", "f"]
    assert r["f"].shape == (2, 3)
    expect = np.array([[0.0, 0.5, 1.0], [-10.0, -9.5, -9.0]]) + 0.25
    assert np.array_equal(r["f"], expect)
    assert float(np.asarray(r["z"]).ravel()[0]) == 0.25


def test_jacobian_names_with_matrix_output_and_vector_variable():
    r = evaluate("[[x[0]*x[1], x[0]], [1, x[1]^2]]", "jacobian", at=[{"x": [2.0, 3.0]}])
    outs = ["f[0][0]", "f[0][1]", "f[1][0]", "f[1][1]"]
    assert list(r) == ["x", *outs, *[f"d{o}/dx" for o in outs]]
    assert r["x"].shape == (1, 2) and r["f[0][1]"].shape == (1,)
    assert all(r[f"d{o}/dx"].shape == (1, 2) for o in outs)  # (..., n): one array per output
    got = [float(r[f"d{o}/dx"][0, k]) for o in outs for k in range(2)]
    assert got == [3.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 6.0]


@pytest.mark.parametrize("what, kw", [
    ("eval", {}), ("grad", {}), ("jacobian", {}), ("hessian", {}),
    ("vjp", {"vector": 2.0}), ("jvp", {"direction": {"x": 1.0, "y": -1.0}}),
])
def test_float32(what, kw):
    r32 = evaluate("sin(x)*y^2", what, grid=GRID, dtype="float32", **kw)
    r64 = evaluate("sin(x)*y^2", what, grid=GRID, **kw)
    assert list(r32) == list(r64)
    for name in r32:
        assert r32[name].dtype == np.float32, name
        assert r64[name].dtype == np.float64, name
        np.testing.assert_allclose(full(r32[name]), full(r64[name]), rtol=1e-5, atol=1e-5)
    p = evaluate("sin(x)*y^2", what, points={"x": PX, "y": PY}, dtype=np.float32, **kw)
    assert all(v.dtype == np.float32 for v in p.values())


# --- values against closed forms -------------------------------------------------------------

def test_hessian_on_grid_closed_form():
    r = evaluate("sin(x)*y^3 + x^2*y", "hessian", grid=GRID)
    assert list(r)[2:] == ["f", "d2f/dxdx", "d2f/dxdy", "d2f/dydx", "d2f/dydy"]
    expect = {"d2f/dxdx": -np.sin(X) * Y**3 + 2 * Y,
              "d2f/dxdy": 3 * np.cos(X) * Y**2 + 2 * X,
              "d2f/dydx": 3 * np.cos(X) * Y**2 + 2 * X,
              "d2f/dydy": 6 * np.sin(X) * Y}
    for name, value in expect.items():
        np.testing.assert_allclose(full(r[name]), value, rtol=1e-13, atol=1e-13)


def test_hessian_on_points_closed_form():
    r = evaluate("exp(x*y)", "hessian", points={"x": PX, "y": PY})
    e = np.exp(PX * PY)
    np.testing.assert_allclose(r["d2f/dxdx"], PY**2 * e, rtol=1e-13)
    np.testing.assert_allclose(r["d2f/dxdy"], (1 + PX * PY) * e, rtol=1e-13)
    np.testing.assert_allclose(r["d2f/dydx"], (1 + PX * PY) * e, rtol=1e-13)
    np.testing.assert_allclose(r["d2f/dydy"], PX**2 * e, rtol=1e-13)


def test_vjp_on_grid_and_points():
    # f = (x*y, sin(x) - y), v = (2, -3): vJ = (2y - 3cos x, 2x + 3)
    for r, x, y in ((evaluate("[x*y, sin(x)-y]", "vjp", grid=GRID, vector=[2, -3]), X, Y),
                    (evaluate("[x*y, sin(x)-y]", "vjp", points={"x": PX, "y": PY},
                              vector=[2, -3]), PX, PY)):
        assert list(r) == ["x", "y", "f[0]", "f[1]", "vjp/dx", "vjp/dy"]
        shape = np.shape(x)
        np.testing.assert_allclose(full(r["vjp/dx"], shape), 2 * y - 3 * np.cos(x),
                                   rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(full(r["vjp/dy"], shape), 2 * x + 3, rtol=1e-14,
                                   atol=1e-14)


def test_jvp_on_grid_and_points():
    # f = (x*y, x - y), u = (0.5, 2): Ju = (0.5y + 2x, 0.5 - 2)
    for r, x, y in ((evaluate("[x*y, x-y]", "jvp", grid=GRID,
                              direction={"x": 0.5, "y": 2}), X, Y),
                    (evaluate("[x*y, x-y]", "jvp", at=[{"x": a, "y": b} for a, b in
                                                      zip(PX, PY, strict=True)],
                              direction={"x": 0.5, "y": 2}), PX, PY)):
        assert list(r) == ["x", "y", "f[0]", "f[1]", "jvp[0]", "jvp[1]"]
        shape = np.shape(x)
        np.testing.assert_allclose(full(r["jvp[0]"], shape), 0.5 * y + 2 * x, rtol=1e-14)
        np.testing.assert_allclose(full(r["jvp[1]"], shape), np.full(shape, -1.5))


def test_jvp_scalar_direction_defaults_to_zero():
    r = evaluate("sin(x)*cos(y)", "jvp", at=[{"x": 1.0, "y": 2.0}], direction={"x": 1})
    assert list(r)[-1] == "jvp"
    assert r["jvp"][0] == pytest.approx(np.cos(1.0) * np.cos(2.0), abs=1e-15)


def test_vector_variable_points_table():
    xs = RNG.uniform(-1, 1, (6, 3))
    r = evaluate("sum(x^2) + x[0]*x[2]", "grad", points={"x": xs})
    assert list(r) == ["x", "f", "df/dx"]
    np.testing.assert_array_equal(r["x"], xs)
    assert r["f"].shape == (6,) and r["df/dx"].shape == (6, 3)
    np.testing.assert_allclose(r["df/dx"][:, 0], 2 * xs[:, 0] + xs[:, 2], rtol=1e-15)
    np.testing.assert_allclose(r["df/dx"][:, 1], 2 * xs[:, 1], rtol=1e-15)
    np.testing.assert_allclose(r["df/dx"][:, 2], 2 * xs[:, 2] + xs[:, 0], rtol=1e-15)


def test_staged_computation_seed():
    r = evaluate("[4*(x^2+x), 2*(x^2+x)]", "jacobian", at=[{"x": 3}])
    assert (r["f[0]"][0], r["f[1]"][0], r["df[0]/dx"][0], r["df[1]/dx"][0]) == (
        48.0, 24.0, 28.0, 14.0)
    r = evaluate("[-x^3, 5x]", "jacobian", at=[{"x": v} for v in (0, 1, 2)])
    assert r["df[0]/dx"].tolist() == [0.0, -3.0, -12.0]
    assert r["df[1]/dx"].tolist() == [5.0, 5.0, 5.0]


def test_unused_variable_zero_derivatives_full_shape():
    r = evaluate("x^2", "hessian", grid=GRID)
    assert np.array_equal(full(r["d2f/dxdx"]), np.full((7, 5), 2.0))
    for name in ("d2f/dxdy", "d2f/dydx", "d2f/dydy"):
        assert np.array_equal(full(r[name]), np.zeros((7, 5)))
    r = evaluate("x^2", "grad", at=[{"x": 1.0, "z": 2.0}])
    assert r["df/dz"].tolist() == [0.0]


@pytest.mark.parametrize("expr", [
    "atan2(y, x) + hypot(x, y)*log1p(x^2)",
    "[sqrt(x^2 + y^2), tanh(x - y)*cbrt(y), sigmoid(x*y)]",
])
def test_jacobian_against_central_differences(expr):
    r = evaluate(expr, "jacobian", points={"x": PX, "y": PY})
    outs = [k[1:].split("/")[0] for k in r if k.startswith("d") and k.endswith("/dx")]
    assert outs
    h = 1e-6
    for var in ("x", "y"):
        up = {"x": PX + h * (var == "x"), "y": PY + h * (var == "y")}
        dn = {"x": PX - h * (var == "x"), "y": PY - h * (var == "y")}
        fu, fd = evaluate(expr, "eval", points=up), evaluate(expr, "eval", points=dn)
        for o in outs:
            fdq = (fu[o] - fd[o]) / (2 * h)
            np.testing.assert_allclose(r[f"d{o}/d{var}"], fdq, rtol=1e-6, atol=1e-7)


def test_many_blocks_and_threads_match_closed_form():
    gx, gy = (0.0, 3.0, 41), (-1.0, 1.0, 13)
    r = evaluate("exp(y)*sin(x) + y^2", "hessian", grid={"x": gx, "y": gy},
                 block_size=20, threads=2)
    x, y = np.meshgrid(np.linspace(*gx), np.linspace(*gy), indexing="ij")
    np.testing.assert_allclose(r["f"], np.exp(y) * np.sin(x) + y**2, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(r["d2f/dxdy"], np.exp(y) * np.cos(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(r["d2f/dydy"], np.exp(y) * np.sin(x) + 2, rtol=1e-14,
                               atol=1e-14)


def test_non_finite_results_are_kept():
    r = evaluate("log(x)", "grad", at=[{"x": -1.0}, {"x": 0.0}, {"x": 1.0}])
    assert np.isnan(r["f"][0]) and r["f"][1] == -np.inf and r["f"][2] == 0.0
    assert r["df/dx"][1] == np.inf and r["df/dx"][2] == 1.0


# --- errors ----------------------------------------------------------------------------------

def test_unbound_variable_raises():
    with pytest.raises((ExpressionError, EvaluationError), match="'y'"):
        evaluate("x*y", "grad", at=[{"x": 1.0}])
    with pytest.raises((ExpressionError, EvaluationError), match="'y'"):
        evaluate("x*y", "grad", grid={"x": (0, 1, 3)})


@pytest.mark.parametrize("kwargs, words", [
    ({"what": "grad", "at": [{"x": 1.0}], "expression": "[x, x]"}, "(2,)"),
    ({"what": "hessian", "at": [{"x": 1.0}], "expression": "[x, x]"}, "(2,)"),
    ({"what": "curl", "at": [{"x": 1.0}]}, "curl"),
    ({"what": "eval", "at": [{"x": 1.0}], "grid": {"x": (0, 1, 2)}}, "one of"),
    ({"what": "eval"}, "one of"),
    ({"what": "vjp", "at": [{"x": 1.0}]}, "vector"),
    ({"what": "vjp", "at": [{"x": 1.0}], "vector": [1, 0]}, "shape"),
    ({"what": "jvp", "at": [{"x": 1.0}]}, "direction"),
    ({"what": "jvp", "at": [{"x": 1.0}], "direction": {"q": 1}}, "'q'"),
    ({"what": "eval", "grid": {"x": (0, 1, 10**7)}, "max_points": 1000}, "limit"),
    ({"what": "eval", "grid": {"x": (0, 1, 10**6), "y": (0, 1, 10**6)}}, "limit"),
    ({"what": "eval", "points": {"x": np.zeros(5)}, "max_points": 4}, "limit"),
    ({"what": "eval", "at": [{"x": 1.0}], "dtype": "int32"}, "dtype"),
    ({"what": "eval", "grid": {"x": (0, 1, 2.5)}}, "count"),
])
def test_bad_requests_raise_evaluation_error(kwargs, words):
    kwargs = {"expression": "x", **kwargs}
    with pytest.raises(EvaluationError) as info:
        evaluate(**kwargs)
    assert words in str(info.value)


def test_hostile_expressions_raise_expression_error(tmp_path):
    pwned = tmp_path / "pwned"
    for expr in (f"__import__('os').system('touch {pwned}')", "().__class__", "lambda: 1",
                 "[i for i in x]", "(" * 3000 + "x" + ")" * 3000):
        with pytest.raises(ExpressionError):
            evaluate(expr, "grad", at=[{"x": 1.0}])
    assert not pwned.exists()
