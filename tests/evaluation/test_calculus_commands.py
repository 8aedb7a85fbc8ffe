"""div, curl, laplacian, hvp, diff, taylor, grad --norm and jvp --unit: columns,
closed forms, pairing, and agreement with the commands they overlap.

Truths are hand derivations and closed forms written here; the identities are computed
two independent ways (Taylor mode against nested reverse mode).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from cli_rows import ok

import gradcli

ev = gradcli.evaluate
RNG = np.random.default_rng(15)


def refused(cli, *argv: str) -> str:
    status, out, err = cli(*argv)
    assert status == 2 and out == "" and "Traceback" not in err, (status, out, err)
    return err


def points3(n: int = 40, lo: float = -1.5, hi: float = 1.5) -> dict[str, np.ndarray]:
    return {v: RNG.uniform(lo, hi, n) for v in "xyz"}


# --- columns --------------------------------------------------------------------------------

def test_columns_of_every_new_command(cli) -> None:
    cases = [
        (("div", "[x*y, x-y, z^2]", "--at", "x=1,y=2,z=3"),
         ["x", "y", "z", "f[0]", "f[1]", "f[2]", "div"], [1, 2, 3, 2, -1, 9, 7]),
        (("curl", "[-y, x]", "--at", "x=1,y=2"), ["x", "y", "f[0]", "f[1]", "curl"],
         [1, 2, -2, 1, 2]),
        (("curl", "[x*y, x-y, z^2]", "--at", "x=3,y=2,z=1"),
         ["x", "y", "z", "f[0]", "f[1]", "f[2]", "curl[0]", "curl[1]", "curl[2]"],
         [3, 2, 1, 6, 1, 1, 0, 0, -2]),
        (("laplacian", "x^2*y + y^3", "--at", "x=1,y=2"), ["x", "y", "f", "laplacian"],
         [1, 2, 10, 16]),
        (("laplacian", "[x^2*y, x*y]", "--at", "x=1,y=2"),
         ["x", "y", "f[0]", "f[1]", "laplacian[0]", "laplacian[1]"], [1, 2, 2, 2, 4, 0]),
        (("grad", "x^2 + y^2", "--at", "x=3,y=4", "--norm"),
         ["x", "y", "f", "df/dx", "df/dy", "|grad f|"], [3, 4, 25, 6, 8, 10]),
        (("jvp", "x*y", "--direction", "x=3,y=4", "--unit-vector", "--at", "x=1,y=2"),
         ["x", "y", "f", "jvp"], [1, 2, 2, 2]),
        (("hvp", "x^2*y + y^3", "--direction", "x=1,y=0", "--at", "x=1,y=2"),
         ["x", "y", "f", "hvp/dx", "hvp/dy"], [1, 2, 10, 4, 2]),
        (("diff", "x^4*y", "--wrt", "x", "--order", "3", "--at", "x=1,y=2"),
         ["x", "y", "f", "d3f/dx3"], [1, 2, 2, 48]),
        (("diff", "x^3", "--at", "x=2"), ["x", "f", "df/dx"], [2, 8, 12]),
        (("diff", "x^4*y^2", "--wrt", "x,y", "--at", "x=1,y=2"), ["x", "y", "f", "d2f/dxdy"],
         [1, 2, 4, 16]),
        (("diff", "[x^3, x*y]", "--wrt", "x,y", "--at", "x=2,y=1"),
         ["x", "y", "f[0]", "f[1]", "d2f[0]/dxdy", "d2f[1]/dxdy"], [2, 1, 8, 2, 0, 1]),
    ]
    for argv, header, row in cases:
        got_header, rows = ok(cli, *argv)
        assert got_header == header, argv
        assert rows == [[float(v) for v in row]], argv


def test_taylor_rows_in_graded_lexicographic_order(cli) -> None:
    header, rows = ok(cli, "taylor", "exp(x)*sin(y)", "--at", "x=0,y=0", "--order", "3")
    assert header == ["x", "y", "order", "deg(x)", "deg(y)", "coefficient", "derivative"]
    degrees = [(r[3], r[4]) for r in rows]
    assert degrees == [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1),
                       (1, 2), (0, 3)]
    assert [r[2] for r in rows] == [a + b for a, b in degrees]
    # e^x sin y = y + xy + x²y/2 - y³/6 + ...
    want = {(0, 1): 1.0, (1, 1): 1.0, (2, 1): 0.5, (0, 3): -1 / 6}
    for r in rows:
        c = want.get((r[3], r[4]), 0.0)
        assert r[5] == pytest.approx(c, abs=1e-15)
        assert r[6] == pytest.approx(c * math.factorial(int(r[3])) * math.factorial(int(r[4])),
                                     abs=1e-15)


def test_taylor_of_several_points_repeats_each_point_per_row(cli) -> None:
    header, rows = ok(cli, "taylor", "x^2", "--at", "x=1", "--at", "x=3", "--order", "2")
    assert header == ["x", "order", "deg(x)", "coefficient", "derivative"]
    assert rows == [[1, 0, 0, 1, 1], [1, 1, 1, 2, 2], [1, 2, 2, 1, 2],
                    [3, 0, 0, 9, 9], [3, 1, 1, 6, 6], [3, 2, 2, 1, 2]]


# --- closed forms -------------------------------------------------------------------------

def test_div_and_curl_closed_forms() -> None:
    p = points3()
    r = ev("[x*y, x-y, z^2]", "div", points=p)
    assert np.allclose(r["div"], p["y"] - 1 + 2 * p["z"], rtol=1e-15, atol=1e-15)
    r = ev("[x*y, x-y, z^2]", "curl", points=p)
    assert np.all(r["curl[0]"] == 0) and np.all(r["curl[1]"] == 0)
    assert np.allclose(r["curl[2]"], 1 - p["x"], rtol=1e-15, atol=1e-15)
    r = ev("[y^2*z, -x*z^3, sin(x*y)]", "curl", points=p)
    x, y, z = p["x"], p["y"], p["z"]
    assert np.allclose(r["curl[0]"], x * np.cos(x * y) + 3 * x * z**2, rtol=1e-14)
    assert np.allclose(r["curl[1]"], y**2 - y * np.cos(x * y), rtol=1e-14, atol=1e-15)
    assert np.allclose(r["curl[2]"], -z**3 - 2 * y * z, rtol=1e-14, atol=1e-15)
    g = {"x": (-2, 2, 9), "y": (-2, 2, 9)}
    assert np.all(ev("[-y, x]", "curl", grid=g)["curl"] == 2.0)
    assert np.all(ev("[x, y]", "div", grid=g)["div"] == 2.0)
    assert np.all(ev("[x*y^2, x^2*y]", "curl", grid=g)["curl"] == 0.0)


def test_laplacian_closed_forms() -> None:
    g = {"x": (-2, 2, 21), "y": (-1.5, 1.5, 17)}
    r = ev("exp(-(x^2+y^2))", "laplacian", grid=g)
    r2 = r["x"] ** 2 + r["y"] ** 2
    assert np.allclose(r["laplacian"], (4 * r2 - 4) * np.exp(-r2), rtol=1e-13, atol=1e-16)
    assert np.all(ev("x^2 - y^2", "laplacian", grid=g)["laplacian"] == 0.0)  # harmonic
    assert np.all(ev("exp(x)*cos(y)", "laplacian", grid=g)["laplacian"]
                  == pytest.approx(0.0, abs=1e-14))
    p = points3(lo=0.5, hi=2.0)  # 1/r in 3-D, off the origin: harmonic
    r = ev("1/sqrt(x^2 + y^2 + z^2)", "laplacian", points=p)
    radius = np.sqrt(p["x"] ** 2 + p["y"] ** 2 + p["z"] ** 2)
    assert np.all(np.abs(r["laplacian"]) <= 1e-13 * 2 / radius**3)  # |∂²(1/r)/∂x²| ≤ 2/r³
    r = ev("x^2 + y^2 + z^2", "laplacian", points=p, wrt="x,y")
    assert np.all(r["laplacian"] == 4.0)


def test_hvp_is_the_hessian_times_u() -> None:
    p = points3()
    f = "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)"
    h = ev(f, "hessian", points=p)
    u = {"x": 0.3, "y": -1.2, "z": 2.0}
    r = ev(f, "hvp", points=p, direction=u)
    for a in "xyz":
        want = sum(h[f"d2f/d{a}d{b}"] * u[b] for b in "xyz")
        assert np.allclose(r[f"hvp/d{a}"], want, rtol=1e-13, atol=1e-15)
    unit = ev(f, "hvp", points=p, direction=u, unit=True)
    length = math.sqrt(sum(v * v for v in u.values()))
    assert np.allclose(unit["hvp/dx"], r["hvp/dx"] / length, rtol=1e-14)


def test_diff_closed_forms() -> None:
    p = points3()
    x, y, z = p["x"], p["y"], p["z"]
    cases = [
        ("sin(x)*exp(y)", {"wrt": "x", "order": 3}, -np.cos(x) * np.exp(y)),
        ("sin(x)*exp(y)", {"wrt": "x,x,y"}, -np.sin(x) * np.exp(y)),
        ("exp(-x^2)", {"wrt": "x", "order": 4}, (16 * x**4 - 48 * x**2 + 12) * np.exp(-x**2)),
        ("exp(x*y)", {"wrt": "x,x,y,y"}, (2 + 4 * x * y + x**2 * y**2) * np.exp(x * y)),
        ("sin(x*y*z)", {"wrt": "x,y,z"}, np.cos(x * y * z) * (1 - (x * y * z) ** 2)
         - 3 * x * y * z * np.sin(x * y * z)),
        ("x^5*y^3", {"wrt": "y,x,x"}, 60 * x**3 * y**2),
    ]
    for f, kw, want in cases:
        r = ev(f, "diff", points=p, **kw)
        got = r[next(k for k in r if k.startswith("d"))]
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max()), (f, kw)


def test_diff_agrees_with_grad_and_hessian() -> None:
    p = points3()
    f = "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)"
    g, h = ev(f, "grad", points=p), ev(f, "hessian", points=p)
    for a in "xyz":
        assert np.allclose(ev(f, "diff", points=p, wrt=a)[f"df/d{a}"], g[f"df/d{a}"],
                           rtol=1e-15, atol=1e-16)
        for b in "xyz":
            name = f"d2f/d{a}2" if a == b else f"d2f/d{a}d{b}"
            got = ev(f, "diff", points=p, wrt=f"{a},{b}")[name]
            assert np.allclose(got, h[f"d2f/d{a}d{b}"], rtol=1e-12, atol=1e-14), (a, b)


def test_diff_order_k_against_central_differences_of_order_k_minus_1() -> None:
    """f = e^x sin x has f^(n)(x) = 2^(n/2) e^x sin(x + nπ/4), so |f^(n)| ≤ 2^(n/2) e^(x+h)
    near x. A central difference of the order-(k-1) result with step h differs from the
    order-k derivative by at most h²/6·max|f^(k+2)| (truncation) plus 2ε·max|f^(k-1)|/h
    (rounding of the two values, each within ε of themselves)."""
    xs = np.linspace(-2, 2, 9)
    h = 1e-3
    for k in range(2, 9):
        exact = ev("exp(x)*sin(x)", "diff", points={"x": xs}, order=k)
        name = f"d{k}f/dx{k}"
        lo = ev("exp(x)*sin(x)", "diff", points={"x": xs - h}, order=k - 1)
        hi = ev("exp(x)*sin(x)", "diff", points={"x": xs + h}, order=k - 1)
        lower = "df/dx" if k == 2 else f"d{k - 1}f/dx{k - 1}"
        central = (hi[lower] - lo[lower]) / (2 * h)
        bound = (h * h / 6 * 2 ** ((k + 2) / 2) + 2 * 2.3e-16 * 2 ** ((k - 1) / 2) / h) \
            * np.exp(xs + h)
        assert np.all(np.abs(exact[name] - central) <= bound), k
        want = 2 ** (k / 2) * np.exp(xs) * np.sin(xs + k * np.pi / 4)  # and the closed form
        assert np.allclose(exact[name], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_taylor_known_multivariate_series() -> None:
    got = ev("exp(x)*sin(y)", "taylor", at={"x": 0, "y": 0}, order=8)["coefficient"][0]
    from gradcli.engine.interpolate import graded

    def check(got: np.ndarray, want: list[float], indices: list[tuple]) -> None:
        want_ = np.array(want)
        for p in set(map(sum, indices)):  # a zero: relative to its order's largest
            sel = np.array([sum(a) == p for a in indices])
            scale = np.abs(want_[sel]).max() or 1.0
            tol = 1e-12 * np.where(want_[sel] != 0, np.abs(want_[sel]), scale)
            assert np.all(np.abs(got[sel] - want_[sel]) <= tol), p

    idx = graded(2, 8)
    check(got, [[0, 1, 0, -1][b % 4] / (math.factorial(a) * math.factorial(b))
                for a, b in idx], idx)
    got = ev("(1 + x + y)^(1/2)", "taylor", at={"x": 0, "y": 0}, order=6)["coefficient"][0]
    idx = graded(2, 6)
    check(got, [math.prod(0.5 - r for r in range(a + b)) / (math.factorial(a) * math.factorial(b))
                for a, b in idx], idx)
    got = ev("exp(x + 2*y - z)", "taylor", at={"x": 0, "y": 0, "z": 0}, order=6)
    idx = graded(3, 6)
    check(got["coefficient"][0], [2.0**b * (-1.0) ** c / (math.factorial(a) * math.factorial(b)
                                                         * math.factorial(c))
                                  for a, b, c in idx], idx)
    assert len(idx) == math.comb(9, 6) == got["derivative"].shape[1]


def test_taylor_order_12_in_one_variable_from_the_command_line(cli) -> None:
    header, rows = ok(cli, "taylor", "1/(1 - x)", "--at", "x=0", "--order", "12")
    assert [r[header.index("coefficient")] for r in rows] == [1.0] * 13
    assert [r[header.index("derivative")] for r in rows] == [
        float(math.factorial(k)) for k in range(13)]


def test_taylor_matches_hessian_at_order_2() -> None:
    p = points3(12)
    f = "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)"
    h, g = ev(f, "hessian", points=p), ev(f, "grad", points=p)
    t = ev(f, "taylor", points=p, order=2)
    from gradcli.engine.interpolate import graded

    value = ev(f, "eval", points=p)["f"]
    for i, alpha in enumerate(graded(3, 2)):
        vs = [v for v, a in zip("xyz", alpha, strict=True) for _ in range(a)]
        want = value if not vs else g[f"df/d{vs[0]}"] if len(vs) == 1 else \
            h[f"d2f/d{vs[0]}d{vs[-1]}"]
        assert np.allclose(t["derivative"][:, i], want, rtol=1e-12, atol=1e-13), alpha


def test_polynomial_reads_back(cli) -> None:
    status, out, _ = cli("taylor", "exp(x)*sin(y)", "--at", "x=1,y=-2", "--order", "4",
                         "--polynomial")
    assert status == 0 and out.count("\n") == 1
    text = out.strip()
    assert "(x - 1)" in text and "(y + 2)" in text
    coef = ev("exp(x)*sin(y)", "taylor", at={"x": 1, "y": -2}, order=4)["coefficient"][0]
    from gradcli.engine.interpolate import graded

    pts = {"x": np.array([1.1, 0.7]), "y": np.array([-2.05, -1.7])}
    want = sum(c * (pts["x"] - 1) ** a * (pts["y"] + 2) ** b
               for c, (a, b) in zip(coef, graded(2, 4), strict=True))
    assert np.allclose(ev(text, "eval", points=pts)["f"], want, rtol=1e-14)
    again = ev(text, "taylor", at={"x": 1, "y": -2}, order=4)["coefficient"][0]
    assert np.allclose(again, coef, rtol=1e-12, atol=1e-14)
    status, out, _ = cli("taylor", "cos(x)", "--at", "x=0", "--order", "4",
                         "--polynomial")
    assert out == "1 - 0.5 * x ^ 2 + 0.041666666666666664 * x ^ 4\n"
    status, out, _ = cli("taylor", "x*y - 3", "--at", "x=0,y=0", "--at", "x=2,y=1",
                         "--polynomial")
    assert out.splitlines() == ["-3 + x * y", "-1 + (x - 2) + 2 * (y - 1) + (x - 2) * (y - 1)"]


def test_polynomial_to_a_file(cli, tmp_path) -> None:
    target = tmp_path / "p.txt"
    status, out, _ = cli("taylor", "exp(x)", "--at", "x=0", "--order", "2",
                         "--polynomial", "-o", str(target))
    assert status == 0 and out == ""
    assert target.read_text() == "1 + x + 0.5 * x ^ 2\n"


# --- identities, two ways -------------------------------------------------------------------

def _recorded(expression: str, p: dict[str, np.ndarray]):
    """The expression recorded on Tensor leaves (one per variable) over the points."""
    from gradcli.engine.core import Tensor
    from gradcli.engine.grad_mode import enable_grad
    from gradcli.evaluation import prepare

    program = prepare(expression, "eval", points=p).program
    leaves = [Tensor._make(p[v].copy()).requires_grad_() for v in "xyz"]
    with enable_grad():
        outs = program.flat(program.run(dict(zip("xyz", leaves, strict=True))))
    return leaves, outs


def _grad(leaves, f):
    from gradcli.engine.vector import partials

    return partials(f, leaves, create_graph=True)


SCALARS = ["exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)",
           "x^3*y*z - cos(x*z) + sqrt(1 + y^2)", "1/sqrt(x^2 + y^2 + z^2)"]
FIELDS = ["[x*y*z, sin(x) + cos(y), exp(z)*x]", "[y^2*z, -x*z^3, atan(x*y)]"]


@pytest.mark.parametrize("f", SCALARS)
def test_curl_of_a_gradient_is_zero(f: str) -> None:
    from gradcli.engine.vector import curl

    p = points3(lo=0.3, hi=1.5)
    leaves, (out,) = _recorded(f, p)
    grad = _grad(leaves, out)
    seconds = [np.abs(np.asarray(g.arr if hasattr(g, "arr") else g)) for g in
               [c for gi in grad for c in _grad(leaves, gi)]]
    scale = np.max(seconds, axis=0)  # the second partials a curl of ∇f subtracts
    for c in curl(grad, leaves):
        assert np.all(np.abs(np.asarray(c)) <= 1e-12 * scale)


@pytest.mark.parametrize("field", FIELDS)
def test_divergence_of_a_curl_is_zero(field: str) -> None:
    from gradcli.engine.vector import curl, divergence

    p = points3()
    leaves, outs = _recorded(field, p)
    rotation = curl(outs, leaves, create_graph=True)
    div = np.asarray(divergence(rotation, leaves))
    scale = np.max([np.abs(np.asarray(d.arr)) for r in rotation for d in _grad(leaves, r)
                    if d is not None], axis=0)
    assert np.all(np.abs(div) <= 1e-12 * np.maximum(scale, 1e-300))


@pytest.mark.parametrize("f", SCALARS)
def test_laplacian_is_div_grad_two_ways(f: str) -> None:
    """Taylor mode (the laplacian command) against nested reverse mode (the divergence of
    the recorded gradient) and against the hessian command's trace."""
    from gradcli.engine.vector import divergence

    p = points3(lo=0.3, hi=1.5)
    lap = ev(f, "laplacian", points=p)["laplacian"]
    leaves, (out,) = _recorded(f, p)
    nested = np.asarray(divergence(_grad(leaves, out), leaves))
    h = ev(f, "hessian", points=p)
    diagonal = [h[f"d2f/d{v}d{v}"] for v in "xyz"]
    scale = np.max(np.abs(diagonal), axis=0)
    assert np.all(np.abs(lap - nested) <= 1e-12 * scale)
    assert np.all(np.abs(lap - sum(diagonal)) <= 1e-12 * scale)


# --- pairing ----------------------------------------------------------------------------------

def test_components_pair_with_variables_in_binding_order(cli, tmp_path) -> None:
    # [x, 2y, 3z]: div is 6 when x, y, z pair with the components in that order
    assert ev("[x, 2*y, 3*z]", "div", at={"x": 1, "y": 2, "z": 3})["div"][0] == 6.0
    # --at z,x,y pairs component 0 (x) with z, 1 (2y) with x, 2 (3z) with y: all 0
    assert ev("[x, 2*y, 3*z]", "div", at={"z": 3, "x": 1, "y": 2})["div"][0] == 0.0
    assert ev("[x, 2*y, 3*z]", "div", at={"z": 3, "x": 1, "y": 2}, wrt="x,y,z")["div"][0] == 6
    header, rows = ok(cli, "div", "[y, 2*x]", "--grid", "y=0:1:2", "--grid", "x=0:1:2")
    assert header[:2] == ["y", "x"] and all(r[-1] == 3.0 for r in rows)  # ∂y/∂y + ∂(2x)/∂x
    pts = tmp_path / "p.csv"
    pts.write_text("y,x\n1,2\n")
    header, rows = ok(cli, "curl", "[x, y^2*x]", "-p", str(pts))
    assert rows[0][-1] == 3.0  # (P, Q) pair with (y, x): ∂(y²x)/∂y - ∂x/∂x = 2yx - 1
    header, rows = ok(cli, "curl", "[x, y^2*x]", "-p", str(pts), "--wrt", "x,y")
    assert rows[0][-1] == 1.0  # ∂(y²x)/∂x - ∂x/∂y = y² = 1
    header, rows = ok(cli, "div", "[a*x, a*y]", "--at", "x=1,y=2,a=3", "--wrt", "x,y")
    assert rows == [[1, 2, 3, 3, 6, 6]]


def test_count_mismatch_and_bad_fields_are_clear_errors(cli) -> None:
    err = refused(cli, "div", "[x, y]", "--at", "x=1,y=2,z=3")
    assert "2 components" in err and "3 variables" in err and "--wrt" in err
    err = refused(cli, "div", "[x, y]", "--at", "x=1,y=2", "--wrt", "x")
    assert "2 components" in err and "1 variables" in err
    assert "2 or 3 components" in refused(cli, "curl", "[x, y, z, x]", "--at",
                                          "x=1,y=2,z=3")
    assert "vector field" in refused(cli, "div", "x*y", "--at", "x=1,y=2")
    assert "not a bound variable" in refused(cli, "laplacian", "x*y", "--at", "x=1,y=2",
                                             "--wrt", "z")
    assert "--wrt" in refused(cli, "diff", "x*y", "--at", "x=1,y=2")
    # a Laplacian sums each ∂²f/∂x_i² once: a variable named twice is refused, as in
    # div and taylor, not counted twice (x^2*y would give 8, not 4)
    assert "twice" in refused(cli, "laplacian", "x^2*y", "--at", "x=1,y=2", "--wrt", "x,x")
    assert "twice" in refused(cli, "laplacian", "sum(v^2)", "--at", "v=[1,2]",
                              "--wrt", "v,v[0]")
    assert "--wrt x --order 3" in refused(cli, "diff", "x*y", "--at", "x=1,y=2",
                                          "--wrt", "x,y", "--order", "3")
    assert "scalar-valued" in refused(cli, "taylor", "[x, y]", "--at", "x=1,y=2")
    assert "scalar-valued" in refused(cli, "hvp", "[x, y]", "--at", "x=1,y=2",
                                      "--direction", "x=1")
    assert "direction" in refused(cli, "jvp", "x*y", "--at", "x=1,y=2", "--direction",
                                  "x=0", "--unit-vector")
    assert "--order" in refused(cli, "diff", "x", "--at", "x=1", "--order", "101")
    assert ".csv, .json, .jsonl, .npz, .npy, .nc, .zarr, .parquet, .txt" in refused(
        cli, "taylor", "x", "--at", "x=1", "-o", "t.npx")
    assert "--polynomial" in refused(cli, "taylor", "x", "--at", "x=1", "--polynomial",
                                     "-f", "csv")
    assert "--polynomial" in refused(cli, "taylor", "x", "--at", "x=1", "-o", "t.txt")
    assert "x[0], x[1]" in refused(cli, "diff", "sum(x^2)", "--at", "x=[1,2]",
                                   "--wrt", "x")
    assert "too many to combine" in refused(cli, "taylor", "x*y*z*w*v", "--at",
                                            "x=0,y=0,z=0,w=0,v=0", "--order", "20")
    assert "100 rows" in refused(cli, "taylor", "x*y", "--grid", "x=0:1:5", "--grid",
                                 "y=0:1:2", "--order", "3", "--max-points", "99")


def test_vector_variables(cli) -> None:
    header, rows = ok(cli, "div", "[x[1], x[0]^2]", "--at", "x=[3,2]")
    assert header[-1] == "div" and rows[0][-1] == 0.0
    header, rows = ok(cli, "hvp", "sum(x^3)", "--at", "x=[1,2]", "--direction", "x=[1,1]")
    assert header == ["x[0]", "x[1]", "f", "hvp/dx[0]", "hvp/dx[1]"]
    assert rows == [[1, 2, 9, 6, 12]]
    header, rows = ok(cli, "diff", "x[0]^2*x[1]^3", "--at", "x=[1,2]", "--wrt",
                      "x[0],x[1],x[1]")
    assert header[-1] == "d3f/dx[0]dx[1]2" and rows[0][-1] == pytest.approx(24.0, rel=1e-15)
    header, rows = ok(cli, "laplacian", "sum(x^2)", "--at", "x=[1,2,3]")
    assert rows[0][-1] == 6.0
    assert ev("sum(x^3)", "hvp", at={"x": [1, 2]}, direction={"x": [1, 1]})["hvp/dx"].shape \
        == (1, 2)


# --- --norm and --unit -----------------------------------------------------------------------

def test_grad_norm_does_not_overflow_and_keeps_nan() -> None:
    r = ev("1e200*x + 1e200*y", "grad", at=[{"x": 0, "y": 0}], norm=True)
    assert r["|grad f|"][0] == pytest.approx(math.sqrt(2) * 1e200, rel=1e-15)
    r = ev("x*y", "grad", at=[{"x": float("nan"), "y": 1.0}], norm=True)
    assert math.isnan(r["|grad f|"][0])
    r = ev("sum(x^2)", "grad", at={"x": [3, 4]}, norm=True)
    assert r["|grad f|"][0] == 10.0


def test_jvp_unit_is_the_directional_derivative() -> None:
    r = ev("x^2 + y^2", "jvp", at={"x": 1, "y": 1}, direction={"x": 1, "y": 1}, unit=True)
    assert r["jvp"][0] == pytest.approx(2 * math.sqrt(2), rel=1e-15)


# --- one point, one answer --------------------------------------------------------------------

@pytest.mark.parametrize(("what", "expr", "kw"), [
    ("div", "[x*y, sin(x)*y]", {}), ("curl", "[x*y, sin(x)*y]", {}),
    ("laplacian", "exp(x)*sin(y) + x^3*y", {}), ("hvp", "exp(x)*sin(y)", {"direction": {"x": 1}}),
    ("diff", "exp(x)*sin(y)", {"wrt": "x,y,y"}), ("taylor", "exp(x)*sin(y)", {"order": 3}),
])
def test_same_values_however_the_points_are_given(what: str, expr: str, kw: dict) -> None:
    grid = {"x": (-1, 1, 7), "y": (-2, 2, 5)}
    whole = ev(expr, what, grid=grid, **kw)
    blocked = ev(expr, what, grid=grid, block_size=5, threads=2, **kw)
    xs, ys = (np.broadcast_to(whole[v], (7, 5)).ravel() for v in "xy")
    pts = ev(expr, what, points={"x": xs, "y": ys}, **kw)
    one = ev(expr, what, at={"x": float(xs[9]), "y": float(ys[9])}, **kw)
    for name, value in pts.items():
        if name in "xy":
            continue
        grid_values = np.broadcast_to(whole[name], (7, 5) + np.shape(value)[1:])
        flat = grid_values.reshape((35,) + np.shape(value)[1:])
        assert np.array_equal(flat, np.broadcast_to(value, flat.shape)), name
        assert np.array_equal(np.broadcast_to(blocked[name], grid_values.shape), grid_values)
        assert np.array_equal(np.broadcast_to(one[name], (1,) + flat.shape[1:])[0], flat[9])


def test_direction_may_leave_out_a_vector_variable() -> None:
    r = ev("x^2*sum(v^2)", "hvp", at={"x": 1, "v": [1, 2]}, direction={"x": 1})
    assert r["hvp/dx"][0] == 10.0 and r["hvp/dv"].tolist() == [[4.0, 8.0]]
    assert ev("x^2*sum(v^2)", "jvp", at={"x": 1, "v": [1, 2]}, direction={"x": 1})["jvp"][0] \
        == 10.0


def test_gridded_file_of_a_new_command(cli, tmp_path) -> None:
    xr = importlib.import_module("xarray")
    target = tmp_path / "d.nc"
    status, _, err = cli("div", "[x*y, x-y]", "--grid", "x=0:1:3", "--grid", "y=0:2:3",
                         "-o", str(target))
    assert status == 0, err
    ds = xr.open_dataset(target)
    assert np.array_equal(ds["div"].values, np.broadcast_to(np.linspace(0, 2, 3) - 1, (3, 3)))


def test_new_commands_on_a_cluster_give_the_local_values() -> None:
    importlib.import_module("distributed")
    from gradcli.evaluation import cluster, prepare

    client, close = cluster.connect("local:2")
    grid = {"x": (-1, 1, 9), "y": (0, 2, 7)}
    try:
        for what, kw in (("laplacian", {}), ("diff", {"wrt": "x,y,y"}),
                         ("taylor", {"order": 3}), ("hvp", {"direction": {"x": 1}}),
                         ("curl", {})):
            expr = "[x*y^2, sin(x)*y]" if what == "curl" else "exp(x)*sin(y) + x^3*y"
            remote = prepare(expr, what, grid=grid, **kw).run(client=client)
            local = prepare(expr, what, grid=grid, **kw).run()
            for name, value in local.arrays.items():
                assert np.array_equal(np.broadcast_to(remote.arrays[name], np.shape(value)),
                                      value), (what, name)
    finally:
        close()
