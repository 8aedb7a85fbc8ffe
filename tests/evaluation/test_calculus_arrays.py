"""Vector calculus and higher order with vector and matrix variables:
the calculus commands against closed forms, and the Taylor-mode rules of the array
primitives (linear ones through ``linear``'s jet, the nonlinear ones' own rules, and the
error for a primitive without one)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli
from gradcli.engine import rules as R
from gradcli.engine.taylor import jet
from gradcli.errors import EvaluationError

ev = gradcli.evaluate


# --- the calculus commands with a vector variable ------------------------------------------

def test_laplacian_of_a_squared_norm_is_twice_the_dimension(cli) -> None:
    """∇²|x|² = 2n: 6 for n = 3, whatever the point."""
    r = ev("sum(x^2)", "laplacian", at=[{"x": [1, 2, 3]}, {"x": [-4, 0.5, 7]}])
    assert r["laplacian"].tolist() == [6.0, 6.0]
    status, out, _ = cli("laplacian", "sum(x^2)", "--at", "x=[1,2,3]")
    assert status == 0
    assert out.splitlines() == ["x[0],x[1],x[2],f,laplacian", "1.0,2.0,3.0,14.0,6.0"]


def test_laplacian_of_an_array_valued_expression_is_one_block() -> None:
    """x³ componentwise: ∇²(x_i³) = 6 x_i; the block is shaped like f."""
    r = ev("x^3", "laplacian", at={"x": [1.0, -2.0, 0.5]})
    assert r["laplacian"].shape == (1, 3)
    assert np.allclose(r["laplacian"][0], [6.0, -12.0, 3.0], rtol=1e-15)


def test_div_of_the_identity_field_is_the_dimension(cli) -> None:
    status, out, _ = cli("div", "x", "--at", "x=[1,2,3]")
    assert status == 0
    assert out.splitlines() == ["x[0],x[1],x[2],f[0],f[1],f[2],div", "1.0,2.0,3.0,1.0,2.0,3.0,3.0"]


def test_div_pairs_a_vector_variable_component_by_component() -> None:
    """div [x0·x1, x1², A00·x0] over x[0], x[1], A[0][0] (--wrt) = x1 + 2x1 + x0."""
    r = ev("[x[0]*x[1], x[1]^2, A[0][0]*x[0]]", "div",
           at={"x": [2.0, 3.0], "A": [[5.0, 1.0], [1.0, 1.0]]}, wrt="x,A[0][0]")
    assert r["div"].tolist() == [3.0 + 6.0 + 2.0]


def test_curl_of_a_rotation_with_a_vector_variable() -> None:
    """curl [-x1, x0] = 2; curl of the rotation ω × x in 3-D is 2ω."""
    assert ev("[-x[1], x[0]]", "curl", at={"x": [1.0, 2.0]})["curl"].tolist() == [2.0]
    r = ev("[w[1]*x[2] - w[2]*x[1], w[2]*x[0] - w[0]*x[2], w[0]*x[1] - w[1]*x[0]]", "curl",
           at={"x": [0.3, -1.0, 2.0]}, fixed={"w": [1.0, 2.0, 3.0]}, wrt="x")
    assert [r[f"curl[{i}]"].tolist() for i in range(3)] == [[2.0], [4.0], [6.0]]


def test_hvp_with_a_vector_variable_is_the_hessian_block_times_u() -> None:
    f = "logsumexp(x) * y + sum(sin(x))*y^2"
    point = {"x": [0.3, -1.2, 2.0], "y": 0.7}
    u = {"x": [1.0, -2.0, 0.5], "y": 3.0}
    h = ev(f, "hessian", at=point)
    r = ev(f, "hvp", at=point, direction=u)
    ux, uy = np.array(u["x"]), u["y"]
    want_x = h["d2f/dxdx"][0] @ ux + h["d2f/dxdy"][0] * uy
    want_y = h["d2f/dydx"][0] @ ux + h["d2f/dydy"][0] * uy
    assert r["hvp/dx"].shape == (1, 3)
    assert np.allclose(r["hvp/dx"][0], want_x, rtol=1e-13, atol=1e-14)
    assert np.allclose(r["hvp/dy"][0], want_y, rtol=1e-13)


def test_hvp_unit_normalises_over_every_component() -> None:
    """f = |x|²/2 has H = I, so H·u for the unit u is u / |u|: [3, 4] → [0.6, 0.8]."""
    r = ev("sum(x^2)/2", "hvp", at={"x": [1.0, 1.0]}, direction={"x": [3.0, 4.0]}, unit=True)
    assert np.allclose(r["hvp/dx"][0], [0.6, 0.8], rtol=1e-15)


def test_taylor_of_exp_of_a_sum_against_its_series(cli) -> None:
    """exp(x0 + x1) at a: every ∂^α f = e^(a0+a1), so coefficient = e^(a0+a1) / α!."""
    a = [0.1, 0.2]
    r = ev("exp(sum(x))", "taylor", at={"x": a}, order=3)
    indices = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3)]
    e = math.exp(0.3)
    want = [e / (math.factorial(i) * math.factorial(j)) for i, j in indices]
    assert np.allclose(r["coefficient"][0], want, rtol=1e-13)
    assert np.allclose(r["derivative"][0], e, rtol=1e-13)
    status, out, _ = cli("taylor", "exp(sum(x))", "--at", "x=[0,0]", "--order", "2")
    assert status == 0
    assert out.splitlines()[0] == "x[0],x[1],order,deg(x[0]),deg(x[1]),coefficient,derivative"


def test_diff_by_a_component_and_of_an_array_value(cli) -> None:
    """∂³(x0²·x1)/∂x0²∂x1 = 2; x³ componentwise: ∂²/∂x0² is [6 x0, 0]."""
    r = ev("x[0]^2*x[1]", "diff", at={"x": [1.5, 2.0]}, wrt="x[0],x[0],x[1]")
    assert r["d3f/dx[0]2dx[1]"].tolist() == [2.0]
    status, out, _ = cli("diff", "x^3", "--at", "x=[1,2]", "--wrt", "x[0]", "--order", "2")
    assert out.splitlines() == ["x[0],x[1],f[0],f[1],d2f[0]/dx[0]2,d2f[1]/dx[0]2",
                                "1.0,2.0,1.0,8.0,6.0,0.0"]


def test_grad_norm_over_a_vector_variable() -> None:
    """|∇ Σx²| at [1, 2, 2] is 2·3 = 6; with a scalar variable beside it, √(36 + 8²)."""
    assert ev("sum(x^2)", "grad", at={"x": [1, 2, 2]}, norm=True)["|grad f|"].tolist() == [6.0]
    r = ev("sum(x^2) + y^2", "grad", at={"x": [1, 2, 2], "y": 4}, norm=True)
    assert r["|grad f|"].tolist() == [10.0]


def test_a_vector_is_named_by_its_components_in_wrt_errors() -> None:
    with pytest.raises(EvaluationError, match=r"x is a vector; name one component "
                                              r"\(x\[0\], x\[1\]\)"):
        ev("sum(x^3)", "diff", at={"x": [1, 2]}, wrt="x", order=2)
    with pytest.raises(EvaluationError, match="the field has 2 components but the command "
                                              "line binds 3 variables"):
        ev("[x[0], x[1]]", "div", at={"x": [1, 2, 3]})


# --- fields on vector variables ------------------------------------------------------------

def test_critical_point_of_a_vector_variable_quadratic(cli, tmp_path) -> None:
    """(v0-1)² + (v1-2)² + v0·v1: ∇ = 0 at (0, 2), f = 1, Hessian [[2, 1], [1, 2]]: 1, 3."""
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("v[0],v[1]\n0,0\n3,-1\n")
    status, out, _ = cli("critical", "sum((v-[1,2])^2) + v[0]*v[1]", "--points", str(seeds))
    assert status == 0
    header, *rows = out.splitlines()
    assert header == ("v[0],v[1],f,|grad f|,eig[0],eig[1],vec[0][0],vec[0][1],vec[1][0],"
                      "vec[1][1],type")
    v0, v1, f, _, e0, e1, *_, kind = rows[0].split(",")
    assert abs(float(v0)) < 1e-12 and float(v1) == pytest.approx(2.0, abs=1e-12)
    assert float(f) == pytest.approx(1.0, abs=1e-12)
    assert (float(e0), float(e1), kind) == (pytest.approx(1.0), pytest.approx(3.0), "minimum")


def test_descend_on_a_vector_variable_halves_the_distance(cli) -> None:
    """SGD with lr 1/4 on |v - c|²: v ← v - (v - c)/2, so v_k = c·(1 - 2^-k)."""
    status, out, _ = cli("descend", "sum((v-[1,2])^2)", "--from", "v=[0,0]", "--steps", "3",
                         "--lr", "0.25")
    lines = [ln for ln in out.splitlines() if ln and ln[0].isdigit()]
    last = [float(t) for t in lines[-1].split(",")[:3]]
    assert last == [3.0, 0.875, 1.75]


def test_flow_of_a_vector_variable_is_rk4s_factor_per_step(cli) -> None:
    """v' = -v with RK4 step h multiplies v by 1 - h + h²/2 - h³/6 + h⁴/24 per step."""
    status, out, _ = cli("flow", "-v", "--from", "v=[1,2]", "--t", "0:1:3")
    assert status == 0
    header, *rows = out.splitlines()
    assert header == "t,v[0],v[1],|F|"
    g = 1 - 0.5 + 0.5**2 / 2 - 0.5**3 / 6 + 0.5**4 / 24
    for k, row in enumerate(rows):
        t, v0, v1, _ = (float(c) for c in row.split(","))
        assert (t, v0, v1) == (pytest.approx(0.5 * k), pytest.approx(g**k, rel=1e-15),
                               pytest.approx(2 * g**k, rel=1e-15))


# --- higher-order rules of the array primitives ---------------------------------------------

def test_linear_array_primitives_carry_every_coefficient() -> None:
    """cumsum is linear: along x(t) = x0 + v·t its series is cumsum(x0) + cumsum(v)·t, no
    higher coefficient; take and transpose likewise."""
    x0, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    value, coeffs = jet(lambda x: R.cumsum(x, dim=-1), [x0], [[v]], order=3)
    assert value.tolist() == [1.0, 3.0, 6.0]
    assert [c.tolist() for c in coeffs] == [[0.5, -0.5, 1.5], [0.0] * 3, [0.0] * 3]
    a0, da = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    value, coeffs = jet(lambda a: R.matrix_transpose(a) * a, [a0], [[da]], order=2)
    # (Aᵀ∘A)(t): entry (0,1) is (2 + t)·3, entry (1,0) is 3·(2 + t): coefficient 1 is 3 there
    assert coeffs[0].tolist() == [[0.0, 3.0], [3.0, 0.0]] and not coeffs[1].any()


def test_laplacian_through_cumsum_trace_and_matmul_against_closed_forms() -> None:
    """Σ cumsum(x)²: ∂²/∂x_i² = 2(n - i) → 6 + 4 + 2; exp(trace(A)): each diagonal
    entry gives exp(tr A); b·(M b) with M constant: 2·tr(M)."""
    assert ev("sum(cumsum(x)^2)", "laplacian", at={"x": [0.3, 1, 2]})["laplacian"].tolist() \
        == [12.0]
    r = ev("exp(trace(A))", "diff", at={"A": [[0.5, 9.0], [7.0, 0.25]]}, wrt="A[1][1]", order=4)
    assert r["d4f/dA[1][1]4"][0] == pytest.approx(math.exp(0.75), rel=1e-14)
    r = ev("b @ ([[1, 2], [3, 4]] @ b)", "laplacian", at={"b": [0.3, -2.0]})
    assert r["laplacian"][0] == pytest.approx(10.0, rel=1e-14)


def test_nonlinear_array_primitives_have_higher_order_rules() -> None:
    """logsumexp at 0: log 2 + (x0+x1)/2 + (x0-x1)²/8 (log cosh is even: no cubic term);
    (A⁻¹)₀₀ = a₁₁/det: ∂²/∂a₀₀² at [[2,1],[1,3]] = 2·3·3²/5³; cross_entropy's Laplacian
    is Σ p_i(1 - p_i); solve's against the Hessian's trace (reverse over reverse)."""
    c = ev("logsumexp(x)", "taylor", at={"x": [0.0, 0.0]}, order=3)["coefficient"][0]
    assert np.allclose(c, [math.log(2), 0.5, 0.5, 0.125, -0.25, 0.125, 0, 0, 0, 0],
                       rtol=1e-15, atol=1e-16)
    r = ev("inv(A)[0][0]", "diff", at={"A": [[2.0, 1.0], [1.0, 3.0]]}, wrt="A[0][0]", order=2)
    assert r["d2f/dA[0][0]2"][0] == pytest.approx(54 / 125, rel=1e-14)
    x = np.array([0.3, -0.2, 1.0])
    p = np.exp(x) / np.exp(x).sum()
    r = ev("cross_entropy(x, 1)", "laplacian", at={"x": x.tolist()})
    assert r["laplacian"][0] == pytest.approx(float(np.sum(p * (1 - p))), rel=1e-14)
    r = ev("log_softmax(x)[0] + softmax(x)[2]", "laplacian", at={"x": x.tolist()})
    h = ev("log_softmax(x)[0] + softmax(x)[2]", "hessian", at={"x": x.tolist()})
    assert r["laplacian"][0] == pytest.approx(np.trace(h["d2f/dxdx"][0]), rel=1e-13)
    point = {"A": [[2.0, 1.0], [0.5, 3.0]], "b": [1.0, 2.0]}
    f = "sum(solve(A, b)^2)"
    h = ev(f, "hessian", at=point)
    want = np.trace(h["d2f/dAdA"][0].reshape(4, 4)) + np.trace(h["d2f/dbdb"][0])
    assert ev(f, "laplacian", at=point)["laplacian"][0] == pytest.approx(want, rel=1e-13)


def _adjugate(m: np.ndarray) -> np.ndarray:
    """adj(M) of a 3×3 matrix from its 2×2 minors (no inverse: singular ones too)."""
    adj = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            minor = np.delete(np.delete(m, i, 0), j, 1)
            adj[j, i] = (-1) ** (i + j) * (minor[0, 0] * minor[1, 1] - minor[0, 1] * minor[1, 0])
    return adj


@pytest.mark.parametrize("a0", [
    [[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.5, -0.7, 4.0]],
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],   # singular (rank 2)
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]],   # rank 1
])
def test_det_jet_is_the_characteristic_expansion(a0) -> None:
    """det(A + tB) = det A + t·tr(adj(A)B) + t²·tr(A·adj(B)) + t³·det B for 3×3 matrices,
    at regular and singular A alike."""
    from gradcli.engine import rules as R
    from gradcli.engine.taylor import jet

    a0 = np.array(a0)
    b = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, 0.0], [-0.5, 1.5, 1.0]])
    zero = np.zeros((3, 3))
    value, coeffs = jet(R.det, [a0], [[b, zero, zero, zero]], order=4)
    want = [np.trace(_adjugate(a0) @ b), np.trace(a0 @ _adjugate(b)), np.linalg.det(b), 0.0]
    scale = np.abs(a0).max() ** 2 * np.abs(b).max() + np.abs(b).max() ** 3
    assert float(value) == pytest.approx(np.linalg.det(a0), abs=1e-13 * scale)
    got = [0.0 if c is None else float(c) for c in coeffs]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * scale)


def test_det_second_derivatives_through_the_commands() -> None:
    """det is linear in each entry, so its laplacian is 0; ∂²det/∂A₀₀∂A₁₁ of a 3×3 is A₂₂;
    hessian and diff agree on a product with det."""
    a = [[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.5, -0.7, 4.0]]
    assert ev("det(A)", "laplacian", at={"A": a})["laplacian"].tolist() == [0.0]
    mixed = ev("det(A)", "diff", at={"A": a}, wrt="A[0][0],A[1][1]")
    assert mixed["d2f/dA[0][0]dA[1][1]"][0] == pytest.approx(4.0, rel=1e-15)
    f = "det(A) * sum(A^2)"
    h = ev(f, "hessian", at={"A": a})["d2f/dAdA"][0].reshape(9, 9)
    lap = ev(f, "laplacian", at={"A": a})["laplacian"][0]
    assert lap == pytest.approx(np.trace(h), rel=1e-12)


def test_det_jet_refuses_large_matrices_by_name() -> None:
    from gradcli.engine.rules_linalg import DET_JET_MAX

    n = DET_JET_MAX + 1
    big = (np.eye(n) * 2).tolist()
    with pytest.raises(EvaluationError, match=f"the primitive 'det' has a Taylor-mode rule "
                                              f"for matrices up to {n - 1}×{n - 1} only"):
        ev("det(A)", "laplacian", at={"A": big})


def test_a_primitive_beyond_its_jet_rule_is_an_error_naming_it(cli) -> None:
    """Every primitive of the language has a jet rule now (a primitive without one is the
    engine-level test in test_taylor_mode.py); det's stops at 10×10, and the
    command says so in one line, exit 2, before any output."""
    big = "[" + ",".join("[" + ",".join("2" if i == j else "0" for j in range(11)) + "]"
                         for i in range(11)) + "]"
    status, out, err = cli("diff", "det(A)", "--at", f"A={big}", "--wrt",
                           "A[0][0],A[1][1]")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "the primitive 'det' has a Taylor-mode rule for matrices up to 10×10 only" in err
    # first order is forward mode, which every primitive has
    assert ev("det(A)", "diff", at={"A": [[1, 2], [3, 4]]}, wrt="A[0][0]")[
        "df/dA[0][0]"].tolist() == [4.0]


def _cube_root_series(g: list[float], order: int) -> list[float]:
    """y with y³ = g as truncated series, solved order by order (3y₀²·y_k = g_k - the
    rest of (y³)_k): a hand derivation independent of the engine's power recurrence."""
    y = [g[0] ** (1 / 3)] + [0.0] * order
    for k in range(1, order + 1):
        cube = np.convolve(np.convolve(y, y), y)
        y[k] = (g[k] - cube[k]) / (3 * y[0] ** 2)
    return y


def test_vector_norm_jet_along_a_line() -> None:
    """‖x₀ + t·s‖₃ at x₀ = [1, 2], s = [1, 1] is ((1+t)³ + (2+t)³)^(1/3) = (9 + 15t + 9t² +
    2t³)^(1/3); a zero component under an even p is smooth ((t⁴ + 1)^(1/4) = 1 + t⁴/4 ...);
    under an odd p it has no coefficient from order p on (nan), and the 1- and inf-norms are
    piecewise linear."""
    from gradcli import engine as gc
    from gradcli.engine.taylor import jet

    zero = np.zeros(2)
    value, got = jet(lambda v: gc.vector_norm(v, 3), [np.array([1.0, 2.0])],
                     [[np.array([1.0, 1.0]), zero, zero, zero]], order=4)
    want = _cube_root_series([9.0, 15.0, 9.0, 2.0, 0.0], 4)
    np.testing.assert_allclose([float(value)] + [float(c) for c in got], want, rtol=1e-13)
    _, got = jet(lambda v: gc.vector_norm(v, 4), [np.array([0.0, 1.0])],
                 [[np.array([1.0, 0.0]), zero, zero, zero, zero]], order=5)
    np.testing.assert_allclose([float(c) for c in got], [0, 0, 0, 0.25, 0], atol=1e-15)
    _, got = jet(lambda v: gc.vector_norm(v, 3), [np.array([0.0, 1.0])],
                 [[np.array([1.0, 0.0]), zero, zero]], order=3)
    assert [float(c) for c in got[:2]] == [0.0, 0.0] and np.isnan(got[2])
    for p, want1 in ((1, 2.0), (np.inf, 1.0)):  # |1 + t| + |-2 + t|·(p=1); max(...)
        _, got = jet(lambda v, p=p: gc.vector_norm(v, p), [np.array([1.0, -2.0])],
                     [[np.array([1.0, -1.0]), zero]], order=2)
        assert [float(c) for c in got] == [want1, 0.0]


def test_norm_p_through_the_commands_agrees_with_the_hessian() -> None:
    at = {"x": [1.0, -2.0, 0.5]}
    for f in ("norm(x, 3)", "norm(x, 2.5) * sum(x)", "norm(x, 1) + norm(x, inf)^2"):
        h = ev(f, "hessian", at=at)["d2f/dxdx"][0]
        assert ev(f, "laplacian", at=at)["laplacian"][0] == pytest.approx(np.trace(h),
                                                                         rel=1e-12)
